// SPDX-License-Identifier: GPL-2.0-only
/*
 * RDMSR and WRMSR that may fault: a #GP at the instruction resumes after
 * it through the exception fixup table (runtime/host/extable.h) and is
 * reported as false instead of panicking, on any number of CPUs at once.
 * msr.c uses it for the MSRs it performs for the guest, apic.c for the
 * x2APIC registers behind the guest's xAPIC page.
 */
#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/extable.h"
#include "runtime/host/msr_safe.h"

bool vmx_msr_access_safe(uint32_t msr, uint64_t *value, bool write)
{
	uint32_t lo = (uint32_t)*value, hi = (uint32_t)(*value >> 32);
	uint32_t faulted = 0;

	if (write)
		asm volatile("1:\twrmsr\n"
			     "2:\n\t"
			     EXTABLE_FAULT("%[faulted]")
			     : [faulted] "+r"(faulted) : "c"(msr), "a"(lo), "d"(hi) : "memory");
	else
		asm volatile("1:\trdmsr\n"
			     "2:\n\t"
			     EXTABLE_FAULT("%[faulted]")
			     : "+a"(lo), "+d"(hi), [faulted] "+r"(faulted) : "c"(msr) : "memory");
	if (faulted)
		return false;
	if (!write)
		*value = ((uint64_t)hi << 32) | lo;
	return true;
}
