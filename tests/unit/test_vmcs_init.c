// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/vmx/vmcs_init.c: every failure of the VMCS setup's VMWRITEs and
 * allocations is reported where it happens -- which vCPU, which field
 * (its encoding) or what for, the VM-instruction error -- and the writes
 * stop at the first that fails.  On the fake VMCS (fakes/arch/vmx/vmx_ops.h),
 * whose `missing` field is one the CPU lacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"		/* ARRAY_SIZE */
#include "fake_runtime.h"
#include "arch/vmx/vmcs_init.h"
#include "arch/vmx/vmx_ops.h"

/* SDM Vol. 3C 31.4: VMREAD/VMWRITE from/to unsupported VMCS component. */
#define VMXERR_UNSUPPORTED_COMPONENT	12

/* --- the fake page allocator ------------------------------------------- */

static bool pool_empty;
static unsigned int contig_pages;

void *page_alloc(void)
{
	static _Alignas(4096) unsigned char page[4096];

	return pool_empty ? NULL : page;
}

void *page_alloc_contig(unsigned int npages)
{
	static _Alignas(4096) unsigned char pages[4][4096];

	contig_pages = npages;
	return pool_empty || npages > 4 ? NULL : pages;
}

static int setup(void **state)
{
	(void)state;
	fake_vmcs_reset();
	fake_printk_reset();
	pool_empty = false;
	contig_pages = 0;
	return 0;
}

static void test_write_all_writes_in_order(void **state)
{
	VMCS_WRITES(w, { GUEST_RIP, 0x1000 }, { GUEST_RSP, 0x2000 }, { TSC_OFFSET, 7 });

	(void)state;
	assert_true(vmcs_setup_write_all(0, w, ARRAY_SIZE(w)));
	assert_int_equal(fake_vmcs.vmwrites, 3);
	assert_int_equal(fake_vmcs_get(GUEST_RIP), 0x1000);
	assert_int_equal(fake_vmcs_get(GUEST_RSP), 0x2000);
	assert_int_equal(fake_vmcs_get(TSC_OFFSET), 7);
	assert_int_equal(fake_printk_calls, 0);
}

/* The CPU lacks the second field: reported with the vCPU and the field; the third is not written. */
static void test_write_all_reports_the_field_and_vcpu(void **state)
{
	VMCS_WRITES(w, { GUEST_RIP, 0x1000 }, { XSS_EXIT_BITMAP, 0 }, { TSC_OFFSET, 7 });
	char field[32];

	(void)state;
	fake_vmcs.missing = XSS_EXIT_BITMAP;
	fake_vmcs_set(VM_INSTRUCTION_ERROR, VMXERR_UNSUPPORTED_COMPONENT);
	assert_false(vmcs_setup_write_all(3, w, ARRAY_SIZE(w)));
	assert_int_equal(fake_vmcs.vmwrites, 1);
	assert_int_equal(fake_vmcs_get(TSC_OFFSET), 0);
	snprintf(field, sizeof(field), "field %#x", (unsigned int)XSS_EXIT_BITMAP);
	assert_true(fake_printk_contains("vCPU 3:"));
	assert_true(fake_printk_contains(field));
	assert_true(fake_printk_contains("VM-instruction error 12"));
}

/* A single write (the conditional fields: EFER, PAT, VPID, ...) is reported the same way. */
static void test_single_write_reported(void **state)
{
	char field[32];

	(void)state;
	assert_true(vmcs_setup_write(1, GUEST_IA32_EFER, 0));
	assert_int_equal(fake_printk_calls, 0);
	fake_vmcs.missing = GUEST_IA32_PAT;
	assert_false(vmcs_setup_write(1, GUEST_IA32_PAT, 0x0007040600070406ull));
	snprintf(field, sizeof(field), "field %#x", (unsigned int)GUEST_IA32_PAT);
	assert_true(fake_printk_contains("vCPU 1:"));
	assert_true(fake_printk_contains(field));
	assert_int_equal(fake_printk_calls, 1);
}

static void test_failed_is_false_and_reported(void **state)
{
	(void)state;
	assert_false(vmcs_setup_failed(2, PIN_BASED_VM_EXEC_CONTROL));
	assert_true(fake_printk_contains("vCPU 2:"));
}

static void test_alloc_reports_what_for(void **state)
{
	(void)state;
	assert_non_null(vmcs_setup_alloc(0, "MSR bitmap", 1));
	assert_non_null(vmcs_setup_alloc(0, "exit stack", 3));
	assert_int_equal(contig_pages, 3);
	assert_int_equal(fake_printk_calls, 0);
	pool_empty = true;
	assert_null(vmcs_setup_alloc(5, "I/O bitmap A", 1));
	assert_true(fake_printk_contains("vCPU 5: out of memory for its I/O bitmap A"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_write_all_writes_in_order, setup),
		cmocka_unit_test_setup(test_write_all_reports_the_field_and_vcpu, setup),
		cmocka_unit_test_setup(test_single_write_reported, setup),
		cmocka_unit_test_setup(test_failed_is_false_and_reported, setup),
		cmocka_unit_test_setup(test_alloc_reports_what_for, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
