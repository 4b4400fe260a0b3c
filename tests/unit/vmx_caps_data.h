/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The capability MSRs of every Bochs CPU model, as recorded in
 * shared/data/vmx-caps and turned into C by caps2c.py at build time.
 * cpuid_1_ecx/edx are 0: the recordings hold no CPUID values.
 */
#ifndef EXITPLAN_TEST_VMX_CAPS_DATA_H
#define EXITPLAN_TEST_VMX_CAPS_DATA_H

#include "vmx_controls.h"

struct vmx_caps_model {
	const char *model;
	struct vmx_caps caps;
};

extern const struct vmx_caps_model vmx_caps_models[];
extern const unsigned int vmx_caps_n_models;

#endif /* EXITPLAN_TEST_VMX_CAPS_DATA_H */
