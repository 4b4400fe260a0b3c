// SPDX-License-Identifier: GPL-2.0-only
/*
 * The MSR and I/O fast handlers (generated/vmexit-bench/msr_io_fast.c)
 * against the general ones (arch/vmx/msr.c, io.c, runtime/devices/platform.c) on
 * the fake VMCS and the fake CPU (fakes/arch/vmx/vmx_ops.h, fakes/runtime/host/cpu.h): the same
 * guest registers, VMCS and vCPU state go into both, and both must leave
 * the same architectural result: RAX, RDX, the MSR written to the CPU,
 * the fw_cfg state, RIP advanced, STI/MOV-SS blocking cleared, resumed.
 * Cases the fast answer declines (no TSC-deadline mode, the emulated
 * deadline, an unlisted MSR or port) must reach the general handler.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/vmx/vmx_ops.h"

#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "exit_handlers.h"
#include "msr_index.h"
#include "runtime/devices/platform.h"
#include "arch/vmx/vcpu.h"
#include "runtime/vm/vm.h"
#include "arch/vmx/msr.h"
#include "arch/vmx/vcpu_arch.h"

#define GUEST_RIP_START	0x7c00ull

static struct vcpu vcpu;
static struct vcpu_arch_state arch;
static struct vm vm;
static struct platform_state platform;

struct result {
	uint64_t rax, rdx, rip, intr, deadline;
	bool deadline_written;
	const struct platform_fw_cfg_item *sel;	/* the fw_cfg item selected */
	uint32_t offset;
	enum vmx_exit_action action;
};

static void boot(bool has_deadline, bool emulated, uint64_t tsc_offset)
{
	memset(&vcpu, 0, sizeof(vcpu));
	memset(&arch, 0, sizeof(arch));
	memset(&vm, 0, sizeof(vm));
	arch.apic_base = 0xfee00000ull | APIC_BASE_EN | APIC_BASE_BSP;
	arch.has_tsc_deadline = has_deadline;
	arch.tsc_deadline_emulated = emulated;
	vcpu.tsc_deadline_to_cpu = has_deadline && !emulated;	/* as vcpu_setup_msrs() */
	arch.tsc.offset = tsc_offset;
	platform_init(&platform, 64ull << 20, 2, 0);
	arch.platform = &platform;
	vcpu.arch = &arch;
	vcpu.vm = &vm;
	fake_vmcs_reset();
	fake_cpu_reset();
	fake_msr_set(MSR_IA32_TSC_DEADLINE, 0xdeadull);	/* the CPU has the MSR */
}

static struct result run(enum vmx_exit_action (*h)(struct vcpu *), uint64_t rax, uint64_t rcx,
			 uint64_t rdx, uint64_t qual, uint64_t len, uint64_t intr)
{
	struct result s;

	vcpu.regs.rax = rax;
	vcpu.regs.rcx = rcx;
	vcpu.regs.rdx = rdx;
	fake_vmcs_set(GUEST_RIP, GUEST_RIP_START);
	fake_vmcs_set(VM_EXIT_INSTRUCTION_LEN, len);
	fake_vmcs_set(GUEST_INTERRUPTIBILITY_INFO, intr);
	fake_vmcs_set(EXIT_QUALIFICATION, qual);
	s.action = h(&vcpu);
	s.rax = vcpu.regs.rax;
	s.rdx = vcpu.regs.rdx;
	s.rip = fake_vmcs_get(GUEST_RIP);
	s.intr = fake_vmcs_get(GUEST_INTERRUPTIBILITY_INFO);
	s.deadline = 0;
	fake_msr_get(MSR_IA32_TSC_DEADLINE, &s.deadline);
	s.deadline_written = fake_msr_count(FAKE_WRMSR, MSR_IA32_TSC_DEADLINE) != 0;
	s.sel = platform.fw_cfg_sel;
	s.offset = platform.fw_cfg_offset;
	return s;
}

static void assert_same(const struct result *a, const struct result *b)
{
	assert_int_equal(a->action, b->action);
	assert_int_equal(a->rax, b->rax);
	assert_int_equal(a->rdx, b->rdx);
	assert_int_equal(a->rip, b->rip);
	assert_int_equal(a->intr, b->intr);
	assert_int_equal(a->deadline_written, b->deadline_written);
	assert_int_equal(a->deadline, b->deadline);
	assert_ptr_equal(a->sel, b->sel);
	assert_int_equal(a->offset, b->offset);
}

static const uint64_t intr_cases[] = { 0, GUEST_INTR_STATE_STI, GUEST_INTR_STATE_MOV_SS };

static void test_rdmsr_apic_base(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < 3; i++) {
		struct result f, g;

		boot(true, false, 0);
		f = run(handle_msr_read_fast, 0x1111111111111111ull, MSR_IA32_APIC_BASE,
			0x2222222222222222ull, 0, 2 + i, intr_cases[i]);
		boot(true, false, 0);
		g = run(handle_msr_read, 0x1111111111111111ull, MSR_IA32_APIC_BASE,
			0x2222222222222222ull, 0, 2 + i, intr_cases[i]);
		assert_same(&f, &g);
		assert_int_equal(f.rax, (uint32_t)arch.apic_base);
		assert_int_equal(f.rdx, 0);
		assert_int_equal(f.rip, GUEST_RIP_START + 2 + i);
		assert_int_equal(f.intr, 0);
	}
}

static void test_wrmsr_tsc_deadline(void **state)
{
	static const uint64_t values[][2] = {	/* EDX:EAX as the guest leaves them */
		{ 0, 0 }, { 0xffffffff00000123ull, 0xaaaaaaaa00000004ull }, { 0x80000000, 0 },
		/* Halves zero under dirty upper bits: 0, the disarm, as WRMSR reads it. */
		{ 0xffffffff00000000ull, 0x1234567800000000ull },
		/* Below the offset: wraps in host terms, as msr.c computes it. */
		{ 0x10, 0 }, { 0, 1 },
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(values); i++) {
		for (unsigned int j = 0; j < 3; j++) {
			struct result f, g;

			boot(true, false, 0x1000);
			f = run(handle_msr_write_fast, values[i][0], MSR_IA32_TSC_DEADLINE,
				values[i][1], 0, 2, intr_cases[j]);
			boot(true, false, 0x1000);
			g = run(handle_msr_write, values[i][0], MSR_IA32_TSC_DEADLINE,
				values[i][1], 0, 2, intr_cases[j]);
			assert_same(&f, &g);
			assert_true(f.deadline_written);
			/* In host TSC terms: the guest's value less the TSC offset (0 disarms). */
			{
				uint64_t v = (values[i][1] << 32) | (uint32_t)values[i][0];

				assert_int_equal(f.deadline, v ? v - 0x1000 : 0);
			}
			assert_int_equal(f.rip, GUEST_RIP_START + 2);
		}
	}
}

/* Without TSC-deadline mode the MSR does not exist: both inject #GP, RIP stays. */
static void test_wrmsr_tsc_deadline_declined(void **state)
{
	struct result f, g;

	(void)state;
	boot(false, false, 0);
	f = run(handle_msr_write_fast, 5, MSR_IA32_TSC_DEADLINE, 0, 0, 2, 0);
	boot(false, false, 0);
	g = run(handle_msr_write, 5, MSR_IA32_TSC_DEADLINE, 0, 0, 2, 0);
	assert_same(&f, &g);
	assert_false(f.deadline_written);
	assert_int_equal(f.rip, GUEST_RIP_START);
	assert_int_equal(fake_vmcs_get(VM_ENTRY_INTR_INFO_FIELD) & 0xff, X86_EXC_GP);
}

/* An MSR the profile does not list goes to the general handler: MISC_ENABLE. */
static void test_unlisted_msr(void **state)
{
	struct result f, g;

	(void)state;
	boot(true, false, 0);
	arch.misc_enable = 0x850089;
	f = run(handle_msr_read_fast, 0, MSR_IA32_MISC_ENABLE, 0, 0, 2, 0);
	boot(true, false, 0);
	arch.misc_enable = 0x850089;
	g = run(handle_msr_read, 0, MSR_IA32_MISC_ENABLE, 0, 0, 2, 0);
	assert_same(&f, &g);
	assert_int_equal(f.rax, 0x850089);
}

#define QUAL(port, in, size, extra) \
	((uint64_t)(port) << EXIT_QUAL_IO_PORT_SHIFT | ((in) ? EXIT_QUAL_IO_IN : 0) | ((size) - 1) | (extra))

/* Select, then read the item byte by byte past its end, with both handlers. */
static void test_fw_cfg(void **state)
{
	static const uint16_t keys[] = { FW_CFG_SIGNATURE, FW_CFG_ID, FW_CFG_RAM_SIZE, FW_CFG_NB_CPUS,
					 FW_CFG_MAX_CPUS, FW_CFG_NOGRAPHIC, 0x1234 };

	(void)state;
	for (unsigned int k = 0; k < ARRAY_SIZE(keys); k++) {
		struct result f, g;

		boot(true, false, 0);
		/* OUT DX, AX and OUT imm8, AX: the operand encoding is not switched on. */
		f = run(handle_io_instruction_fast, 0xabcd0000u | keys[k], 0, 0,
			QUAL(0x510, 0, 2, k & 1 ? EXIT_QUAL_IO_IMM : 0), 1, GUEST_INTR_STATE_STI);
		boot(true, false, 0);
		g = run(handle_io_instruction, 0xabcd0000u | keys[k], 0, 0,
			QUAL(0x510, 0, 2, k & 1 ? EXIT_QUAL_IO_IMM : 0), 1, GUEST_INTR_STATE_STI);
		assert_same(&f, &g);
		assert_ptr_equal(f.sel, &platform.fw_cfg_items[keys[k] < PLATFORM_FW_CFG_KEYS ?
								   keys[k] : PLATFORM_FW_CFG_KEYS]);
		for (unsigned int i = 0; i < 10; i++) {
			struct platform_state saved = platform;

			f = run(handle_io_instruction_fast, 0xffffffffffff55aaull, 0, 0,
				QUAL(0x511, 1, 1, 0), 1, 0);
			platform = saved;
			g = run(handle_io_instruction, 0xffffffffffff55aaull, 0, 0,
				QUAL(0x511, 1, 1, 0), 1, 0);
			assert_same(&f, &g);
			assert_int_equal(f.rax >> 8, 0xffffffffffff55ull);
		}
	}
}

/* Accesses the fast switch does not list: a word IN of the data port, string IN, a byte selector write. */
static void test_io_unlisted(void **state)
{
	static const uint64_t quals[] = {
		QUAL(0x511, 1, 2, 0), QUAL(0x510, 0, 1, 0), QUAL(0x511, 1, 4, 0), QUAL(0x80, 1, 1, 0),
		QUAL(0x3f9, 0, 1, 0),
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(quals); i++) {
		struct result f, g;

		boot(true, false, 0);
		f = run(handle_io_instruction_fast, 0x12345678, 0, 0, quals[i], 1, 0);
		boot(true, false, 0);
		g = run(handle_io_instruction, 0x12345678, 0, 0, quals[i], 1, 0);
		assert_same(&f, &g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rdmsr_apic_base),
		cmocka_unit_test(test_wrmsr_tsc_deadline),
		cmocka_unit_test(test_wrmsr_tsc_deadline_declined),
		cmocka_unit_test(test_unlisted_msr),
		cmocka_unit_test(test_fw_cfg),
		cmocka_unit_test(test_io_unlisted),
	};

	return cmocka_run_group_tests_name("msr_io_fast.c against msr.c, io.c (vmexit-bench)",
					   tests, NULL, NULL);
}
