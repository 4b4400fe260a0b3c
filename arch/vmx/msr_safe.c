// SPDX-License-Identifier: GPL-2.0-only
/*
 * RDMSR and WRMSR that may fault: a #GP at the instruction is caught and
 * reported as false instead of panicking.  msr.c uses it for the MSRs it
 * performs for the guest, apic.c for the x2APIC registers behind the
 * guest's xAPIC page.
 */
#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"
#include "compiler.h"
#include "msr_safe.h"
#include "panic.h"
#include "traps.h"

extern const char msr_safe_rdmsr[], msr_safe_rdmsr_end[];
extern const char msr_safe_wrmsr[], msr_safe_wrmsr_end[];

/*
 * A #GP at one of the two instructions below resumes after it with RSI
 * = 1 ("faulted"); any other #GP is a host bug and panics like every
 * unhandled exception.  Installed only around the access.
 */
static void msr_gp_fixup(struct interrupt_frame *f)
{
	if (f->rip == (uintptr_t)msr_safe_rdmsr) {
		f->rip = (uintptr_t)msr_safe_rdmsr_end;
		f->rsi = 1;
		return;
	}
	if (f->rip == (uintptr_t)msr_safe_wrmsr) {
		f->rip = (uintptr_t)msr_safe_wrmsr_end;
		f->rsi = 1;
		return;
	}
	interrupt_frame_dump(f);
	panic("#GP in the hypervisor at %#llx", (unsigned long long)f->rip);
}

/* Perform the access; false when the CPU raised #GP.  noinline: the labels are unique. */
noinline bool vmx_msr_access_safe(uint32_t msr, uint64_t *value, bool write)
{
	uint32_t lo = (uint32_t)*value, hi = (uint32_t)(*value >> 32);
	uint64_t faulted = 0;

	idt_set_handler(X86_EXC_GP, msr_gp_fixup);
	if (write)
		asm volatile(".globl msr_safe_wrmsr, msr_safe_wrmsr_end\n"
			     "msr_safe_wrmsr: wrmsr\n"
			     "msr_safe_wrmsr_end:"
			     : "+S"(faulted) : "c"(msr), "a"(lo), "d"(hi) : "memory");
	else
		asm volatile(".globl msr_safe_rdmsr, msr_safe_rdmsr_end\n"
			     "msr_safe_rdmsr: rdmsr\n"
			     "msr_safe_rdmsr_end:"
			     : "=a"(lo), "=d"(hi), "+S"(faulted) : "c"(msr) : "memory");
	idt_set_handler(X86_EXC_GP, NULL);
	if (faulted)
		return false;
	if (!write)
		*value = ((uint64_t)hi << 32) | lo;
	return true;
}
