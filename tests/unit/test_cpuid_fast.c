// SPDX-License-Identifier: GPL-2.0-only
/*
 * The CPUID fast handler (generated/vmexit-bench/cpuid_fast.c) against the
 * general one (arch/vmx/cpuid.c) on the fake VMCS (fakes/arch/vmx/vmx_ops.h): the
 * same guest registers, VMCS and controls go into both, and both must
 * leave the same architectural result: RAX, RBX, RCX, RDX, RIP advanced
 * by the exit's instruction length, the STI/MOV-SS blocking cleared, the
 * guest resumed.  CPUID itself runs on the host: both handlers execute
 * it (the fast one once, at boot), so the answers are this host's.
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

#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "exit_handlers.h"
#include "msr_index.h"	/* CPUID_HIDE_*: what spec/msrs.yaml hides */
#include "arch/vmx/vcpu.h"
#include "runtime/vm/vm.h"
#include "arch/vmx/cpuid.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_regs.h"
#include "vmx_controls_bits.h"

#define GUEST_RIP_START	0x7c00ull

static struct vcpu vcpu;
/* CPUID.01H:EDX.APIC follows the guest's IA32_APIC_BASE, kept here. */
static struct vcpu_arch_state arch;
/* CPUID.01H:EBX[31:24] is the vCPU's APIC ID (the VM's), not the CPU's. */
static struct vm_vcpu vv;

struct guest_state {
	uint64_t rax, rbx, rcx, rdx;
	uint64_t rip, interruptibility;
	enum vmx_exit_action action;
};

/* The vCPU as at boot: controls in the cache, the table filled. */
static void boot_vcpu(uint32_t proc2, uint64_t cr4)
{
	memset(&vcpu, 0, sizeof(vcpu));
	memset(&arch, 0, sizeof(arch));
	arch.apic_base = 0xfee00000ull | APIC_BASE_EN | APIC_BASE_BSP;
	vcpu.arch = &arch;
	memset(&vv, 0, sizeof(vv));
	vv.apic_id = 5;
	vcpu.vv = &vv;
	fake_vmcs_reset();
	vcpu.ctls[VMX_PROC_BASED2] = proc2;
	fake_vmcs_set(GUEST_CR4, cr4);
	cpuid_fast_init(&vcpu);
}

/* One CPUID exit: the guest's registers and VMCS as given, then handler. */
static struct guest_state run(enum vmx_exit_action (*handler)(struct vcpu *),
			      uint64_t rax, uint64_t rcx, uint64_t len, uint64_t intr)
{
	struct guest_state s;

	vcpu.regs.rax = rax;
	vcpu.regs.rbx = 0xdeadbeefcafef00dull;	/* CPUID writes all four */
	vcpu.regs.rcx = rcx;
	vcpu.regs.rdx = 0x0123456789abcdefull;
	fake_vmcs_set(GUEST_RIP, GUEST_RIP_START);
	fake_vmcs_set(VM_EXIT_INSTRUCTION_LEN, len);
	fake_vmcs_set(GUEST_INTERRUPTIBILITY_INFO, intr);
	s.action = handler(&vcpu);
	s.rax = vcpu.regs.rax;
	s.rbx = vcpu.regs.rbx;
	s.rcx = vcpu.regs.rcx;
	s.rdx = vcpu.regs.rdx;
	s.rip = fake_vmcs_get(GUEST_RIP);
	s.interruptibility = fake_vmcs_get(GUEST_INTERRUPTIBILITY_INFO);
	return s;
}

/* Fast and general handler give the same result for this exit. */
static void assert_same(uint64_t rax, uint64_t rcx, uint64_t len, uint64_t intr)
{
	struct guest_state fast = run(handle_cpuid_fast, rax, rcx, len, intr);
	struct guest_state general = run(handle_cpuid, rax, rcx, len, intr);

	assert_int_equal(fast.action, VMX_EXIT_RESUME);
	assert_int_equal(general.action, VMX_EXIT_RESUME);
	assert_int_equal(fast.rax, general.rax);
	assert_int_equal(fast.rbx, general.rbx);
	assert_int_equal(fast.rcx, general.rcx);
	assert_int_equal(fast.rdx, general.rdx);
	assert_int_equal(fast.rip, GUEST_RIP_START + len);
	assert_int_equal(general.rip, GUEST_RIP_START + len);
	assert_int_equal(fast.interruptibility, general.interruptibility);
	assert_int_equal(fast.interruptibility,
			 intr & ~(uint64_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
	/* CPUID zero-extends: nothing of the old upper halves is left. */
	assert_int_equal(fast.rax >> 32, 0);
	assert_int_equal(fast.rbx >> 32, 0);
	assert_int_equal(fast.rcx >> 32, 0);
	assert_int_equal(fast.rdx >> 32, 0);
}

/* Leaf 0, the profile's listed leaf: answered from the table. */
static void test_listed_leaf_same_result(void **state)
{
	(void)state;
	boot_vcpu(SECONDARY_EXEC_ENABLE_RDTSCP, 0);
	/* Upper bits of RAX and RCX are not part of the leaf and subleaf. */
	assert_same(0, 0, 2, 0);
	assert_same(0xffffffff00000000ull, 0x1234, 2, 0);
	/* A prefixed CPUID (3 bytes), and one in an STI or MOV-SS shadow. */
	assert_same(0, 0, 3, 0);
	assert_same(0, 0, 2, GUEST_INTR_STATE_STI);
	assert_same(0, 0, 2, GUEST_INTR_STATE_MOV_SS | 0x4);
}

/* The answer is the host's leaf 0: highest basic leaf and vendor string. */
static void test_listed_leaf_is_the_hosts(void **state)
{
	struct guest_state s;
	uint32_t a, b, c, d;

	(void)state;
	boot_vcpu(0, 0);
	s = run(handle_cpuid_fast, 0, 0, 2, 0);
	asm volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
	assert_int_equal(s.rax, a);
	assert_int_equal(s.rbx, b);
	assert_int_equal(s.rcx, c);
	assert_int_equal(s.rdx, d);
	/* The fast path issues no VMREAD beyond vmx_skip_instruction()'s three. */
	fake_vmcs.vmreads = 0;
	run(handle_cpuid_fast, 0, 0, 2, 0);
	assert_int_equal(fake_vmcs.vmreads, 3);
}

/*
 * Leaves the profile does not list go to handle_cpuid(), the guest-state
 * dependent ones included: the result follows CR4 and the controls as the
 * general handler's does, not what they were at boot.
 */
static void test_other_leaves_same_result(void **state)
{
	static const uint32_t leaves[] = {
		CPUID_LEAF_FEATURES, CPUID_LEAF_EXT_STRUCT_FEATURES, CPUID_LEAF_XSTATE,
		CPUID_HYPERVISOR_BASE, CPUID_HYPERVISOR_BASE + 1, CPUID_LEAF_EXT_BASE,
		CPUID_LEAF_EXT_FEATURES, CPUID_LEAF_BRAND_FIRST, CPUID_LEAF_ADDR_SIZES,
		CPUID_HIDDEN_LEAF_MONITOR_MWAIT, CPUID_LEAF_THERMAL_POWER,
		CPUID_LEAF_TSC_CRYSTAL, CPUID_LEAF_FREQUENCY,
	};

	(void)state;
	boot_vcpu(0, 0);
	/* After boot the guest turns on OSXSAVE and the controls change. */
	fake_vmcs_set(GUEST_CR4, X86_CR4_OSXSAVE);
	vcpu.ctls[VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_RDTSCP | SECONDARY_EXEC_ENABLE_INVPCID;
	for (size_t i = 0; i < ARRAY_SIZE(leaves); i++) {
		for (uint64_t subleaf = 0; subleaf < 3; subleaf++)
			assert_same(leaves[i], subleaf, 2, 0);
	}
}

/* Why leaf 1 is not listed: its answer follows the guest's CR4 and APIC base. */
static void test_leaf_1_depends_on_the_guest(void **state)
{
	struct guest_state off, on;

	(void)state;
	boot_vcpu(0, 0);
	off = run(handle_cpuid, CPUID_LEAF_FEATURES, 0, 2, 0);
	fake_vmcs_set(GUEST_CR4, X86_CR4_OSXSAVE);
	on = run(handle_cpuid, CPUID_LEAF_FEATURES, 0, 2, 0);
	assert_int_equal(off.rcx & CPUID_1_ECX_OSXSAVE, 0);
	assert_int_equal(on.rcx & CPUID_1_ECX_OSXSAVE, CPUID_1_ECX_OSXSAVE);
	assert_int_equal(on.rcx & CPUID_1_ECX_VMX, 0);
	assert_int_equal(on.rcx & CPUID_1_ECX_HYPERVISOR, CPUID_1_ECX_HYPERVISOR);
	/* And EDX.APIC the guest's IA32_APIC_BASE[11], through the fast handler too. */
	assert_int_equal(on.rdx & CPUID_1_EDX_APIC, CPUID_1_EDX_APIC);
	/* EBX[31:24] the vCPU's APIC ID, the rest of EBX the host's. */
	assert_int_equal((on.rbx & CPUID_1_EBX_INITIAL_APIC_ID_MASK) >> CPUID_1_EBX_INITIAL_APIC_ID_SHIFT, 5);
	vv.apic_id = 2;
	off = run(handle_cpuid, CPUID_LEAF_FEATURES, 0, 2, 0);
	assert_int_equal((off.rbx & CPUID_1_EBX_INITIAL_APIC_ID_MASK) >> CPUID_1_EBX_INITIAL_APIC_ID_SHIFT, 2);
	assert_int_equal(off.rbx & ~(uint64_t)CPUID_1_EBX_INITIAL_APIC_ID_MASK,
			 on.rbx & ~(uint64_t)CPUID_1_EBX_INITIAL_APIC_ID_MASK);
	arch.apic_base &= ~APIC_BASE_EN;
	off = run(handle_cpuid_fast, CPUID_LEAF_FEATURES, 0, 2, 0);
	assert_int_equal(off.rdx & CPUID_1_EDX_APIC, 0);
	assert_same(CPUID_LEAF_FEATURES, 0, 2, 0);
}

/*
 * Leaves 15H/16H say the TSC rate measured at boot, whatever the CPU's
 * own claim: crystal = TSC (ratio 1/1) while the rate fits ECX.  The rate
 * is set before any vCPU is (vmx_run.c), so the fast handler's table,
 * filled at the vCPU's setup, holds it.
 */
static void test_tsc_leaves_follow_the_measured_rate(void **state)
{
	struct guest_state s;

	(void)state;
	cpuid_set_tsc_hz(10000050);
	boot_vcpu(0, 0);
	s = run(handle_cpuid, CPUID_LEAF_TSC_CRYSTAL, 0, 2, 0);
	assert_int_equal(s.rax, 1);
	assert_int_equal(s.rbx, 1);
	assert_int_equal(s.rcx, 10000050);
	assert_int_equal(s.rdx, 0);
	s = run(handle_cpuid_fast, CPUID_LEAF_FREQUENCY, 0, 2, 0);
	assert_int_equal(s.rax, 10);
	assert_int_equal(s.rbx, 10);
	assert_int_equal(s.rcx, 10);
	/* 5 GHz does not fit ECX: a 2.5 GHz crystal times 2. */
	cpuid_set_tsc_hz(5000000000ull);
	s = run(handle_cpuid, CPUID_LEAF_TSC_CRYSTAL, 0, 2, 0);
	assert_int_equal(s.rax, 1);
	assert_int_equal(s.rbx, 2);
	assert_int_equal(s.rcx, 2500000000ull);
	s = run(handle_cpuid, CPUID_LEAF_FREQUENCY, 0, 2, 0);
	assert_int_equal(s.rax, 5000);
	cpuid_set_tsc_hz(0);
}

/*
 * MONITOR/MWAIT, thermal and power management are hidden (spec/msrs.yaml
 * cpuid_msrs): the bits in leaf 1 and 6 clear, leaf 5 all zero.
 */
static void test_monitor_and_power_hidden(void **state)
{
	struct guest_state s;

	(void)state;
	boot_vcpu(0, 0);
	s = run(handle_cpuid, CPUID_LEAF_FEATURES, 0, 2, 0);
	assert_int_equal(s.rcx & (CPUID_1_ECX_MONITOR | CPUID_HIDE_1_ECX), 0);
	assert_int_equal(s.rdx & CPUID_HIDE_1_EDX, 0);
	s = run(handle_cpuid, CPUID_HIDDEN_LEAF_MONITOR_MWAIT, 0, 2, 0);
	assert_int_equal(s.rax | s.rbx | s.rcx | s.rdx, 0);
	s = run(handle_cpuid, CPUID_LEAF_THERMAL_POWER, 0, 2, 0);
	assert_int_equal(s.rax & CPUID_HIDE_6_EAX, 0);
	assert_int_equal(s.rbx, 0);
	assert_int_equal(s.rcx & CPUID_HIDE_6_ECX, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listed_leaf_same_result),
		cmocka_unit_test(test_listed_leaf_is_the_hosts),
		cmocka_unit_test(test_other_leaves_same_result),
		cmocka_unit_test(test_tsc_leaves_follow_the_measured_rate),
		cmocka_unit_test(test_monitor_and_power_hidden),
		cmocka_unit_test(test_leaf_1_depends_on_the_guest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
