/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the unit tests: the recorded CPU models, and an
 * independent check that computed control fields obey a model's
 * capability MSRs.  Include after <cmocka.h>.
 */
#ifndef EXITPLAN_TEST_UNIT_UTIL_H
#define EXITPLAN_TEST_UNIT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/vmx_controls.h"
#include "vmx_caps_data.h"

/* The recorded capabilities of @model; fails the test when there is none. */
const struct vmx_caps *unit_model_caps(const char *model);

/*
 * The bit of IA32_VMX_BASIC that says the TRUE_* MSRs exist (bit 55),
 * found through the generated vmx_feature_supported() rather than typed
 * again: hand-made capabilities clear it to test the plain MSRs.
 */
uint64_t unit_true_controls_bit(const struct vmx_caps *caps);

/*
 * allowed-0 (must be 1) and allowed-1 (may be 1) settings of the five
 * fields, derived here from the SDM (Vol. 3D A.3-A.5) independently of
 * vmx_controls.c so that the tests check it rather than restate it.
 */
void unit_allowed_settings(const struct vmx_caps *caps,
			   uint32_t allowed0[VMX_CTL_FIELDS],
			   uint32_t allowed1[VMX_CTL_FIELDS]);

/*
 * Assert that an accepted @ctl is a valid VMCS configuration for @caps
 * and honours @setup: no bit outside allowed-1, every must-be-1 bit,
 * every required bit, every bit of each chosen gate choice, the optional
 * bits the CPU allows, "activate secondary controls" exactly when a
 * secondary control is used, and no half of an entry/exit pair alone.
 */
void unit_assert_controls_valid(const struct vmx_profile_setup *setup,
				const struct vmx_caps *caps,
				const struct vmx_controls *ctl, const char *model);

/* true if @s starts with @prefix. */
bool unit_starts_with(const char *s, const char *prefix);

#endif /* EXITPLAN_TEST_UNIT_UTIL_H */
