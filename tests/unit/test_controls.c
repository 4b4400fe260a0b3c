// SPDX-License-Identifier: GPL-2.0-only
/*
 * One profile's generated setup (generated/PROFILE/vmcs_setup.c) through
 * vmx_compute_controls() on every recorded CPU model.  Built once per
 * profile; the outcome on each model is predicted here from the SDM rules
 * (unit_util.c) and compared with what the engine decided.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "profile.h"
#include "arch/vmx/vmx_controls.h"
#include "vmx_controls_bits.h"
#include "vmx_features.h"
#include "unit_util.h"

static const struct vmx_profile_setup *const setup = &profile_vmx_setup;
static char line[256], want[256];

/* The feature @name's enum value, looked up by the name profiles use. */
static enum vmx_feature feature_by_name(const char *name)
{
	unsigned int f;

	for (f = 0; f < VMX_FEATURE_COUNT; f++)
		if (!strcmp(vmx_feature_names[f], name))
			return (enum vmx_feature)f;
	fail_msg("no feature named %s in vmx_features.h", name);
	return VMX_FEATURE_COUNT;
}

static bool setup_requires(enum vmx_feature f)
{
	unsigned int i;

	for (i = 0; i < setup->n_required_features; i++)
		if (setup->required_features[i] == f)
			return true;
	return false;
}

static const struct vmx_gate *gate_by_name(const char *name)
{
	unsigned int g;

	for (g = 0; g < setup->n_gates; g++)
		if (!strcmp(setup->gates[g].name, name))
			return &setup->gates[g];
	return NULL;
}

/*
 * Predict the outcome on @caps in the documented order (vmx_controls.h):
 * required features, required bits, gates; then compare.
 */
static void check_model(const char *model, const struct vmx_caps *caps)
{
	uint32_t a0[VMX_CTL_FIELDS], a1[VMX_CTL_FIELDS];
	struct vmx_controls ctl;
	enum vmx_feature missing;
	unsigned int f, g, c;

	vmx_compute_controls(setup, caps, &ctl);
	vmx_format_refusal(line, sizeof(line), setup, &ctl);
	print_message("%-28s %s\n", model, line);

	if (!vmx_features_present(caps, setup->required_features,
				  setup->n_required_features, &missing)) {
		assert_int_equal(ctl.status, VMX_CONTROLS_MISSING_FEATURE);
		assert_int_equal(ctl.missing_feature, missing);
		snprintf(want, sizeof(want), "profile '%s' refused: this CPU lacks %s",
			 PROFILE_NAME, vmx_feature_names[missing]);
		assert_string_equal(line, want);
		return;
	}

	unit_allowed_settings(caps, a0, a1);
	for (f = 0; f < VMX_CTL_FIELDS; f++) {
		uint32_t bad = setup->required[f] & ~a1[f];

		if (bad) {
			assert_int_equal(ctl.status, VMX_CONTROLS_MISSING_CONTROL);
			assert_int_equal(ctl.missing_field, f);
			assert_int_equal(1u << ctl.missing_bit, bad & -bad);
			return;
		}
	}

	for (g = 0; g < setup->n_gates; g++) {
		const struct vmx_gate *gate = &setup->gates[g];

		for (c = 0; c < gate->n_choices; c++)
			if (vmx_features_present(caps, gate->choices[c].needs,
						 gate->choices[c].n_needs, NULL))
				break;
		if (c == gate->n_choices) {
			assert_int_equal(ctl.status, VMX_CONTROLS_NO_GATE_CHOICE);
			assert_int_equal(ctl.failed_gate, g);
			return;
		}
		assert_int_equal(ctl.gate_choice[g], c);
	}

	/* Accepted: the fields must be a valid VMCS configuration. */
	unit_assert_controls_valid(setup, caps, &ctl, model);
	for (g = 0; g < setup->n_gates; g++) {
		vmx_format_gate_decision(line, sizeof(line), setup, &ctl, g);
		print_message("%-28s   %s\n", "", line);
		assert_null(strstr(line, "undecided"));
	}
}

static void test_every_model(void **state)
{
	unsigned int m;

	(void)state;
	assert_true(vmx_caps_n_models > 0);
	for (m = 0; m < vmx_caps_n_models; m++)
		check_model(vmx_caps_models[m].model, &vmx_caps_models[m].caps);
}

static void test_setup_is_well_formed(void **state)
{
	unsigned int g, c, f, i;

	(void)state;
	assert_string_equal(setup->profile, PROFILE_NAME);
	assert_int_equal(setup->n_gates, PROFILE_GATE_COUNT);
	for (g = 0; g < setup->n_gates; g++) {
		const struct vmx_gate *gate = &setup->gates[g];

		assert_true(gate->n_choices >= 1);
		for (c = 0; c < gate->n_choices; c++) {
			const struct vmx_gate_choice *ch = &gate->choices[c];

			assert_non_null(ch->name);
			assert_non_null(ch->description);
			for (i = 0; i < ch->n_needs; i++)
				assert_true((unsigned int)ch->needs[i] < VMX_FEATURE_COUNT);
			/* A gate's bits are decided by the gate, not also required. */
			for (f = 0; f < VMX_CTL_FIELDS; f++)
				assert_int_equal(ch->set[f] & setup->required[f], 0);
		}
	}
	for (f = 0; f < VMX_CTL_FIELDS; f++)
		assert_int_equal(setup->required[f] & setup->optional[f], 0);
}

/* Skylake-X has every feature in PLATFORM.md's table: any profile runs. */
static void test_accepted_on_skylake(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_skylake_x");
	struct vmx_controls ctl;
	unsigned int f;

	(void)state;
	assert_int_equal(vmx_compute_controls(setup, caps, &ctl), VMX_CONTROLS_OK);
	unit_assert_controls_valid(setup, caps, &ctl, "corei7_skylake_x");
	for (f = 0; f < VMX_CTL_FIELDS; f++)
		assert_int_equal(ctl.field[f] & setup->required[f], setup->required[f]);
}

/* Penryn has VMX without EPT: a profile that needs EPT is refused for it. */
static void test_penryn_refused_for_ept(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("core2_penryn_t9600");
	enum vmx_feature ept = feature_by_name("ept");
	struct vmx_controls ctl;

	(void)state;
	if (!setup_requires(ept))
		skip();
	assert_false(vmx_feature_supported(caps, ept));
	assert_int_equal(vmx_compute_controls(setup, caps, &ctl), VMX_CONTROLS_MISSING_FEATURE);
	assert_int_equal(ctl.missing_feature, ept);
	vmx_format_refusal(line, sizeof(line), setup, &ctl);
	snprintf(want, sizeof(want), "profile '%s' refused: this CPU lacks ept", PROFILE_NAME);
	assert_string_equal(line, want);
}

/* overcommit requires PAUSE-loop exiting, which Sandy Bridge lacks. */
static void test_overcommit_refused_on_sandy_bridge(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_sandy_bridge_2600k");
	struct vmx_controls ctl;

	(void)state;
	if (strcmp(PROFILE_NAME, "overcommit"))
		skip();
	assert_true(setup_requires(VMX_FEATURE_PAUSE_LOOP_EXITING));
	assert_int_equal(vmx_compute_controls(setup, caps, &ctl), VMX_CONTROLS_MISSING_FEATURE);
	assert_int_equal(ctl.missing_feature, VMX_FEATURE_PAUSE_LOOP_EXITING);
	vmx_format_refusal(line, sizeof(line), setup, &ctl);
	assert_string_equal(line, "profile 'overcommit' refused: this CPU lacks pause_loop_exiting");
}

/*
 * The EFER gate on its own: Penryn lacks "load IA32_EFER", so the gate
 * takes its fallback (a whole profile is refused there earlier, for EPT).
 */
static void test_efer_gate_alone(void **state)
{
	const struct vmx_gate *efer = gate_by_name("efer");
	struct vmx_profile_setup only_efer = { .profile = PROFILE_NAME, .n_gates = 1 };
	struct vmx_controls ctl;
	const struct vmx_gate_choice *fallback;

	(void)state;
	if (!efer)
		skip();
	only_efer.gates = efer;

	assert_int_equal(vmx_compute_controls(&only_efer, unit_model_caps("corei7_skylake_x"), &ctl),
			 VMX_CONTROLS_OK);
	assert_int_equal(ctl.gate_choice[0], 0);
	assert_false(ctl.gate_fell_back[0]);
	assert_true(ctl.field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER);
	assert_true(ctl.field[VMX_EXIT] & VM_EXIT_LOAD_IA32_EFER);
	vmx_format_gate_decision(line, sizeof(line), &only_efer, &ctl, 0);
	snprintf(want, sizeof(want), "gate efer: %s (load_ia32_efer)", efer->choices[0].description);
	assert_string_equal(line, want);

	assert_int_equal(vmx_compute_controls(&only_efer, unit_model_caps("core2_penryn_t9600"), &ctl),
			 VMX_CONTROLS_OK);
	assert_true(ctl.gate_choice[0] > 0);
	assert_true(ctl.gate_fell_back[0]);
	assert_int_equal(ctl.gate_missing[0], VMX_FEATURE_LOAD_IA32_EFER);
	assert_false(ctl.field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER);
	assert_false(ctl.field[VMX_EXIT] & VM_EXIT_LOAD_IA32_EFER);
	fallback = &efer->choices[ctl.gate_choice[0]];
	vmx_format_gate_decision(line, sizeof(line), &only_efer, &ctl, 0);
	snprintf(want, sizeof(want), "gate efer: %s (no load_ia32_efer)", fallback->description);
	assert_string_equal(line, want);
	/* The line INTERFACES.md promises the boot tests, for the manual fallback. */
	if (!strcmp(fallback->name, "manual"))
		assert_string_equal(line, "gate efer: manual WRMSR (no load_ia32_efer)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setup_is_well_formed),
		cmocka_unit_test(test_every_model),
		cmocka_unit_test(test_accepted_on_skylake),
		cmocka_unit_test(test_penryn_refused_for_ept),
		cmocka_unit_test(test_overcommit_refused_on_sandy_bridge),
		cmocka_unit_test(test_efer_gate_alone),
	};

	return cmocka_run_group_tests_name("controls of profile " PROFILE_NAME, tests, NULL, NULL);
}
