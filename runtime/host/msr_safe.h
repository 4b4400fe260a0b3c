/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * msr_safe.c: RDMSR and WRMSR that may fault, for msr.c (the guest's
 * MSRs) and apic.c (the guest's xAPIC page on the physical x2APIC).
 * Its own file so that neither of the two needs the other for it; the
 * fault is caught by the exception fixup table (runtime/host/extable.h).
 */
#ifndef EXITPLAN_VMX_MSR_SAFE_H
#define EXITPLAN_VMX_MSR_SAFE_H

#include <stdbool.h>
#include <stdint.h>

/* RDMSR (into *@value) or WRMSR (of *@value) on this CPU; false when it raised #GP. */
bool vmx_msr_access_safe(uint32_t msr, uint64_t *value, bool write);

#endif /* EXITPLAN_VMX_MSR_SAFE_H */
