/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The capability MSRs of every Bochs CPU model, as recorded in
 * tests/data/vmx-caps and turned into C by caps2c.py at build time.
 * The recordings hold no CPUID values: cpuid_1_ecx has VMX for every
 * model and x2APIC/TSC deadline only where PLATFORM.md verified them
 * (see caps2c.py); cpuid_1_edx is 0.
 */
#ifndef EXITPLAN_TEST_VMX_CAPS_DATA_H
#define EXITPLAN_TEST_VMX_CAPS_DATA_H

#include "arch/vmx/vmx_controls.h"

struct vmx_caps_model {
	const char *model;
	struct vmx_caps caps;
};

extern const struct vmx_caps_model vmx_caps_models[];
extern const unsigned int vmx_caps_n_models;

#endif /* EXITPLAN_TEST_VMX_CAPS_DATA_H */
