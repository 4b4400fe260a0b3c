/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cpuid.c: the CPUID exit's answers.
 */
#ifndef EXITPLAN_VMX_CPUID_H
#define EXITPLAN_VMX_CPUID_H

#include <stdint.h>

/* CPUID leaves 15H/16H follow the TSC rate measured at boot. */
void cpuid_set_tsc_hz(uint64_t hz);

#endif /* EXITPLAN_VMX_CPUID_H */
