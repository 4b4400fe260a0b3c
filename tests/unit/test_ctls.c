// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/vmx/vmx_ctls.h, the controls cache, on the fake VMCS
 * (fakes/arch/vmx/vmx_ops.h): every write through it leaves the cache and the
 * VMCS equal, reading the cache issues no VMREAD, and a write that
 * changes nothing issues no VMWRITE.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

/*
 * First: the fake takes vmx_ops.h's include guard, so arch/vmx's headers,
 * which find the real one beside them, get the fake.
 */
#include "arch/vmx/vmx_ops.h"

#include "arch/vmx/vcpu.h"
#include "vmx_controls_bits.h"
#include "arch/vmx/vmx_ctls.h"

static struct vcpu vcpu;

static int setup(void **state)
{
	(void)state;
	memset(&vcpu, 0, sizeof(vcpu));
	fake_vmcs_reset();
	return 0;
}

/* The cache equals the VMCS, field by field. */
static void assert_coherent(void)
{
	for (int f = 0; f < VMX_CTL_FIELDS; f++)
		assert_int_equal(vcpu.ctls[f], fake_vmcs_get(vmx_ctl_encoding(f)));
}

static void test_encodings_are_the_sdm_fields(void **state)
{
	(void)state;
	assert_int_equal(vmx_ctl_encoding(VMX_PIN_BASED), 0x4000);
	assert_int_equal(vmx_ctl_encoding(VMX_PROC_BASED), 0x4002);
	assert_int_equal(vmx_ctl_encoding(VMX_EXIT), 0x400c);
	assert_int_equal(vmx_ctl_encoding(VMX_ENTRY), 0x4012);
	assert_int_equal(vmx_ctl_encoding(VMX_PROC_BASED2), 0x401e);
}

static void test_init_writes_both(void **state)
{
	(void)state;
	assert_true(vcpu_ctls_init(&vcpu, VMX_PIN_BASED, 0x16));
	assert_true(vcpu_ctls_init(&vcpu, VMX_PROC_BASED, 0x84006172));
	assert_true(vcpu_ctls_init(&vcpu, VMX_PROC_BASED2, SECONDARY_EXEC_ENABLE_EPT));
	assert_true(vcpu_ctls_init(&vcpu, VMX_EXIT, 0x36dff));
	assert_true(vcpu_ctls_init(&vcpu, VMX_ENTRY, 0x11ff));
	assert_int_equal(fake_vmcs.vmwrites, 5);
	assert_coherent();
	assert_int_equal(vcpu_ctls(&vcpu, VMX_PROC_BASED), 0x84006172);
	assert_int_equal(fake_vmcs.vmreads, 0);
}

/* A field the CPU lacks: the VMWRITE fails and the cache says 0, as the CPU does. */
static void test_init_failure_leaves_zero(void **state)
{
	(void)state;
	vcpu.ctls[VMX_PROC_BASED2] = 0xffffffff;
	fake_vmcs.missing = SECONDARY_VM_EXEC_CONTROL;
	assert_false(vcpu_ctls_init(&vcpu, VMX_PROC_BASED2, SECONDARY_EXEC_ENABLE_EPT));
	assert_int_equal(vcpu_ctls(&vcpu, VMX_PROC_BASED2), 0);
	assert_int_equal(fake_vmcs.vmwrites, 0);
}

static void test_setbit_clearbit(void **state)
{
	(void)state;
	assert_true(vcpu_ctls_init(&vcpu, VMX_PROC_BASED, 0x80000000));
	assert_true(vcpu_ctls_init(&vcpu, VMX_ENTRY, 0x11ff));
	fake_vmcs.vmwrites = 0;

	vcpu_ctls_setbit(&vcpu, VMX_PROC_BASED, CPU_BASED_INTR_WINDOW_EXITING);
	assert_int_equal(fake_vmcs_get(CPU_BASED_VM_EXEC_CONTROL),
			 0x80000000 | CPU_BASED_INTR_WINDOW_EXITING);
	assert_int_equal(fake_vmcs.vmwrites, 1);
	assert_coherent();

	/* Already set: nothing to write (the window is opened on every exit that wants it). */
	vcpu_ctls_setbit(&vcpu, VMX_PROC_BASED, CPU_BASED_INTR_WINDOW_EXITING);
	assert_int_equal(fake_vmcs.vmwrites, 1);

	vcpu_ctls_setbit(&vcpu, VMX_ENTRY, VM_ENTRY_IA32E_MODE);
	vcpu_ctls_clearbit(&vcpu, VMX_PROC_BASED, CPU_BASED_INTR_WINDOW_EXITING);
	assert_int_equal(fake_vmcs_get(CPU_BASED_VM_EXEC_CONTROL), 0x80000000);
	assert_int_equal(fake_vmcs_get(VM_ENTRY_CONTROLS), 0x11ff | VM_ENTRY_IA32E_MODE);
	assert_int_equal(fake_vmcs.vmwrites, 3);
	assert_coherent();

	vcpu_ctls_clearbit(&vcpu, VMX_ENTRY, VM_ENTRY_IA32E_MODE);
	vcpu_ctls_clearbit(&vcpu, VMX_ENTRY, VM_ENTRY_IA32E_MODE);
	assert_int_equal(fake_vmcs.vmwrites, 4);
	assert_coherent();
	assert_int_equal(fake_vmcs.vmreads, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_encodings_are_the_sdm_fields, setup),
		cmocka_unit_test_setup(test_init_writes_both, setup),
		cmocka_unit_test_setup(test_init_failure_leaves_zero, setup),
		cmocka_unit_test_setup(test_setbit_clearbit, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
