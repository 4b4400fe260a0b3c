/* SPDX-License-Identifier: GPL-2.0-only */
/* The handlers guest's checks that CPUID and the MSRs agree (cpuid_msr_checks.c). */
#ifndef GUEST_HANDLERS_CPUID_MSR_CHECKS_H
#define GUEST_HANDLERS_CPUID_MSR_CHECKS_H

void check_cpuid_msrs(void);

#endif
