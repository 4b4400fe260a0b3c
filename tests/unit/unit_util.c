// SPDX-License-Identifier: GPL-2.0-only
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "unit_util.h"
#include "vmx_controls_bits.h"

const struct vmx_caps *unit_model_caps(const char *model)
{
	unsigned int i;

	for (i = 0; i < vmx_caps_n_models; i++)
		if (!strcmp(vmx_caps_models[i].model, model))
			return &vmx_caps_models[i].caps;
	fail_msg("no recorded capabilities for CPU model %s", model);
	return NULL;
}

uint64_t unit_true_controls_bit(const struct vmx_caps *caps)
{
	struct vmx_caps probe = *caps;
	uint64_t found = 0;
	unsigned int b;

	assert_true(vmx_feature_supported(caps, VMX_FEATURE_TRUE_CONTROLS));
	for (b = 0; b < 64; b++) {
		if (!(caps->basic & (1ull << b)))
			continue;
		probe.basic = caps->basic & ~(1ull << b);
		if (!vmx_feature_supported(&probe, VMX_FEATURE_TRUE_CONTROLS)) {
			/* Exactly one bit of IA32_VMX_BASIC says so (A.1). */
			assert_int_equal(found, 0);
			found = 1ull << b;
		}
	}
	assert_int_not_equal(found, 0);
	return found;
}

void unit_allowed_settings(const struct vmx_caps *caps,
			   uint32_t allowed0[VMX_CTL_FIELDS],
			   uint32_t allowed1[VMX_CTL_FIELDS])
{
	/* A.2: with IA32_VMX_BASIC[55] the TRUE_* MSRs are authoritative. */
	bool use_true = vmx_feature_supported(caps, VMX_FEATURE_TRUE_CONTROLS);
	const uint64_t pin = use_true ? caps->true_pinbased : caps->pinbased;
	const uint64_t proc = use_true ? caps->true_procbased : caps->procbased;
	const uint64_t exit = use_true ? caps->true_exit : caps->exit;
	const uint64_t entry = use_true ? caps->true_entry : caps->entry;
	/* A.3.3: IA32_VMX_PROCBASED_CTLS2 exists only if bit 63 of PROCBASED_CTLS is 1. */
	const bool has2 = (proc >> 32) & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS;
	const uint64_t proc2 = has2 ? caps->procbased2 : 0;

	allowed0[VMX_PIN_BASED] = (uint32_t)pin;
	allowed1[VMX_PIN_BASED] = (uint32_t)(pin >> 32);
	allowed0[VMX_PROC_BASED] = (uint32_t)proc;
	allowed1[VMX_PROC_BASED] = (uint32_t)(proc >> 32);
	allowed0[VMX_PROC_BASED2] = (uint32_t)proc2;
	allowed1[VMX_PROC_BASED2] = (uint32_t)(proc2 >> 32);
	allowed0[VMX_EXIT] = (uint32_t)exit;
	allowed1[VMX_EXIT] = (uint32_t)(exit >> 32);
	allowed0[VMX_ENTRY] = (uint32_t)entry;
	allowed1[VMX_ENTRY] = (uint32_t)(entry >> 32);
}

static const char *const field_name[VMX_CTL_FIELDS] = {
	"pin_based", "proc_based", "proc_based2", "vm_exit", "vm_entry",
};

void unit_assert_controls_valid(const struct vmx_profile_setup *setup,
				const struct vmx_caps *caps,
				const struct vmx_controls *ctl, const char *model)
{
	uint32_t a0[VMX_CTL_FIELDS], a1[VMX_CTL_FIELDS];
	const uint32_t *f = ctl->field;
	bool secondary = f[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS;
	unsigned int i, g;

	unit_allowed_settings(caps, a0, a1);
	if (ctl->status != VMX_CONTROLS_OK)
		fail_msg("%s on %s: status %d, expected OK", setup->profile, model,
			 ctl->status);

	for (i = 0; i < VMX_CTL_FIELDS; i++) {
		if (i == VMX_PROC_BASED2 && !secondary) {
			/* Ignored by the CPU, and must not pretend to be in use. */
			if (f[i])
				fail_msg("%s on %s: proc_based2 %#x without activate-secondary",
					 setup->profile, model, f[i]);
			continue;
		}
		if (f[i] & ~a1[i])
			fail_msg("%s on %s: %s %#x sets bits %#x outside allowed-1 %#x",
				 setup->profile, model, field_name[i], f[i],
				 f[i] & ~a1[i], a1[i]);
		if ((f[i] & a0[i]) != a0[i])
			fail_msg("%s on %s: %s %#x lacks must-be-1 bits %#x",
				 setup->profile, model, field_name[i], f[i],
				 a0[i] & ~f[i]);
		if ((f[i] & setup->required[i]) != setup->required[i])
			fail_msg("%s on %s: %s %#x lacks required bits %#x",
				 setup->profile, model, field_name[i], f[i],
				 setup->required[i] & ~f[i]);
		if ((f[i] & setup->optional[i] & a1[i]) != (setup->optional[i] & a1[i]))
			fail_msg("%s on %s: %s %#x dropped allowed optional bits %#x",
				 setup->profile, model, field_name[i], f[i],
				 setup->optional[i] & a1[i] & ~f[i]);
	}
	/* Secondary controls in use need "activate secondary controls" (25.6.2). */
	if (setup->required[VMX_PROC_BASED2] || (setup->optional[VMX_PROC_BASED2] & a1[VMX_PROC_BASED2]))
		assert_true(secondary);

	for (g = 0; g < setup->n_gates; g++) {
		const struct vmx_gate *gate = &setup->gates[g];
		const struct vmx_gate_choice *ch;

		assert_true(ctl->gate_choice[g] < gate->n_choices);
		ch = &gate->choices[ctl->gate_choice[g]];
		assert_int_equal(ctl->gate_fell_back[g], ctl->gate_choice[g] > 0);
		for (i = 0; i < VMX_CTL_FIELDS; i++)
			if ((f[i] & ch->set[i]) != ch->set[i])
				fail_msg("%s on %s: gate %s choice %s: %s lacks %#x",
					 setup->profile, model, gate->name, ch->name,
					 field_name[i], ch->set[i] & ~f[i]);
		/* Every better choice really was unusable on this CPU. */
		for (i = 0; i < ctl->gate_choice[g]; i++)
			assert_false(vmx_features_present(caps, gate->choices[i].needs,
							  gate->choices[i].n_needs, NULL));
		assert_true(vmx_features_present(caps, ch->needs, ch->n_needs, NULL));
	}

	/* Entry/exit pairs the SDM documents as "load on entry, restore on exit". */
	assert_int_equal(!!(f[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER),
			 !!(f[VMX_EXIT] & VM_EXIT_LOAD_IA32_EFER));
	assert_int_equal(!!(f[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_PAT),
			 !!(f[VMX_EXIT] & VM_EXIT_LOAD_IA32_PAT));
	assert_int_equal(!!(f[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL),
			 !!(f[VMX_EXIT] & VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL));
}

bool unit_starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}
