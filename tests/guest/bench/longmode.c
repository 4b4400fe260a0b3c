// SPDX-License-Identifier: GPL-2.0-only
/*
 * IA-32e mode for the CR8 benchmark: identity-map the first 4 GiB with
 * 2-MiB pages, set CR4.PAE, EFER.LME and CR0.PG.  The guest's 32-bit code
 * then runs on in compatibility mode and far-calls the 64-bit loops in
 * cr8.S.  There is no way back and no usable IDT (its gates are 32-bit),
 * so the benchmark does this last, with interrupts off.
 */
#include "longmode.h"
#include "x86.h"

#define GUEST_CS64	0x18	/* lib/entry.S */
#define PD_ENTRIES	512
#define HUGE_PAGE	0x200000ull

static uint64_t pml4[512] __attribute__((aligned(4096)));
static uint64_t pdpt[512] __attribute__((aligned(4096)));
static uint64_t pd[4][PD_ENTRIES] __attribute__((aligned(4096)));

bool long_mode_supported(void)
{
	return cpuid(CPUID_LEAF_EXT_BASE).eax >= CPUID_LEAF_EXT_FEATURES &&
	       (cpuid(CPUID_LEAF_EXT_FEATURES).edx & CPUID_80000001_EDX_LM);
}

bool long_mode_enter(void)
{
	const uint64_t table = PT64_PRESENT | PT64_RW;

	for (unsigned int g = 0; g < 4; g++) {
		for (unsigned int i = 0; i < PD_ENTRIES; i++)
			pd[g][i] = ((uint64_t)g << 30) + i * HUGE_PAGE +
				   (table | PT64_PS);
		pdpt[g] = (uintptr_t)pd[g] | table;
	}
	pml4[0] = (uintptr_t)pdpt | table;

	cli();
	write_cr4(read_cr4() | X86_CR4_PAE);
	write_cr3((uintptr_t)pml4);
	wrmsr(MSR_IA32_EFER, rdmsr(MSR_IA32_EFER) | EFER_LME);
	write_cr0(read_cr0() | X86_CR0_PG);	/* activates IA-32e mode */
	return rdmsr(MSR_IA32_EFER) & EFER_LMA;
}

uint64_t long_mode_call(void (*loop)(void), uint32_t iters)
{
	struct cr8_loop args = { .iters = iters };
	struct {
		uint32_t offset;
		uint16_t selector;
	} __attribute__((packed)) target = { (uintptr_t)loop, GUEST_CS64 };

	asm volatile("lcall *%1"
		     : : "D"(&args), "m"(target)
		     : "eax", "ecx", "edx", "esi", "memory");
	return args.total;
}

void long_mode_checks(struct lm64_result *r)
{
	struct {
		uint32_t offset;
		uint16_t selector;
	} __attribute__((packed)) target = { (uintptr_t)lm64_checks, GUEST_CS64 };

	asm volatile("lcall *%1"
		     : : "D"(r), "m"(target)
		     : "eax", "ecx", "edx", "esi", "memory");
}
