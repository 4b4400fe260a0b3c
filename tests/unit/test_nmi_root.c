// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/vmx/nmi_root.h: what an NMI taken in VMX root operation on a
 * vCPU's CPU does to that vCPU (nmi_root.c's vmm_nmi_in_root(), the
 * HLT wait's wake-up test in vmx_run.c).  The guest's own NMI (unflagged)
 * that finds its vCPU halted in root with IF=0 is kept and ends the wait,
 * as an NMI ends HLT on hardware; one that finds it in wait-for-SIPI is
 * dropped, as that state blocks NMIs; the host's kick (flagged) is never
 * taken for the guest's.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/vmx/nmi_root.h"

/* Running or handling an exit: the guest's NMI is queued, a kick makes it exit again. */
static void test_not_waiting(void **state)
{
	(void)state;
	assert_int_equal(vmx_nmi_in_root_bit(false, VMX_WAIT_NONE), VCPU_NMI_ARRIVED);
	assert_int_equal(vmx_nmi_in_root_bit(true, VMX_WAIT_NONE), VCPU_NMI_KICK);
}

/* Halted in root with IF=0 (issue 24): the guest's NMI is kept and ends the wait. */
static void test_hlt_wait_keeps_guest_nmi(void **state)
{
	uint32_t pending;

	(void)state;
	pending = vmx_nmi_in_root_bit(false, VMX_WAIT_HLT);
	assert_int_equal(pending, VCPU_NMI_ARRIVED);
	assert_true(vmx_hlt_wait_over(false, pending));
}

/* A kick to a waiter only ends the CPU's HLT: no NMI for the guest, the wait goes on. */
static void test_hlt_wait_kick_is_not_the_guests(void **state)
{
	uint32_t pending;

	(void)state;
	pending = vmx_nmi_in_root_bit(true, VMX_WAIT_HLT);
	assert_int_equal(pending, 0);
	assert_false(vmx_hlt_wait_over(false, pending));
	/* What the kick posted ends it. */
	assert_true(vmx_hlt_wait_over(true, pending));
}

/* wait-for-SIPI blocks NMIs (SDM Vol. 3C, VM entries, "Activity State"): dropped. */
static void test_sipi_wait_drops_nmis(void **state)
{
	(void)state;
	assert_int_equal(vmx_nmi_in_root_bit(false, VMX_WAIT_SIPI), 0);
	assert_int_equal(vmx_nmi_in_root_bit(true, VMX_WAIT_SIPI), 0);
}

/* A queued (not yet injected) NMI alone does not end a wait: only a new one does. */
static void test_hlt_wait_other_bits(void **state)
{
	(void)state;
	assert_false(vmx_hlt_wait_over(false, VCPU_NMI_KICK));
	assert_false(vmx_hlt_wait_over(false, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_waiting),
		cmocka_unit_test(test_hlt_wait_keeps_guest_nmi),
		cmocka_unit_test(test_hlt_wait_kick_is_not_the_guests),
		cmocka_unit_test(test_sipi_wait_drops_nmis),
		cmocka_unit_test(test_hlt_wait_other_bits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
