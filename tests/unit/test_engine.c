// SPDX-License-Identifier: GPL-2.0-only
/*
 * vmx_compute_controls() and the boot-line formatting on hand-made setups,
 * against the capability MSRs recorded from every Bochs CPU model and
 * against hand-made capabilities for the corners no model shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "arch/vmx/vmx_controls.h"
#include "vmx_controls_bits.h"
#include "vmx_features.h"
#include "unit_util.h"

/* ---- hand-made gates, shaped like the generator's ---- */

static const enum vmx_feature needs_load_efer[] = { VMX_FEATURE_LOAD_IA32_EFER };
static const struct vmx_gate_choice efer_choices[] = {
	{
		.name = "atomic", .description = "atomic",
		.needs = needs_load_efer, .n_needs = ARRAY_SIZE(needs_load_efer),
		.set = {
			[VMX_EXIT] = VM_EXIT_LOAD_IA32_EFER | VM_EXIT_SAVE_IA32_EFER,
			[VMX_ENTRY] = VM_ENTRY_LOAD_IA32_EFER,
		},
	},
	{ .name = "manual", .description = "manual WRMSR" },
};

static const enum vmx_feature needs_ple[] = { VMX_FEATURE_PAUSE_LOOP_EXITING };
static const struct vmx_gate_choice pause_choices[] = {
	{
		.name = "loop", .description = "PAUSE-loop exiting",
		.needs = needs_ple, .n_needs = ARRAY_SIZE(needs_ple),
		.set = { [VMX_PROC_BASED2] = SECONDARY_EXEC_PAUSE_LOOP_EXITING },
	},
	{
		.name = "exit", .description = "plain PAUSE exiting",
		.set = { [VMX_PROC_BASED] = CPU_BASED_PAUSE_EXITING },
	},
	{ .name = "none", .description = "no PAUSE exiting" },
};

static const struct vmx_gate gate_efer = {
	.name = "efer", .choices = efer_choices, .n_choices = ARRAY_SIZE(efer_choices),
};
static const struct vmx_gate gate_pause = {
	.name = "pause", .choices = pause_choices, .n_choices = ARRAY_SIZE(pause_choices),
};
/* PLE or nothing: a gate without a usable last resort on older CPUs. */
static const struct vmx_gate gate_ple_only = {
	.name = "pause", .choices = pause_choices, .n_choices = 1,
};

static const struct vmx_gate gates_efer_pause[] = { gate_efer, gate_pause };

/* A 64-bit guest with EPT, VPID and unrestricted guest, like the runtime's. */
static const enum vmx_feature needs_ept_vpid_ug[] = {
	VMX_FEATURE_EPT, VMX_FEATURE_VPID, VMX_FEATURE_UNRESTRICTED_GUEST,
};

static const struct vmx_profile_setup setup_full = {
	.profile = "handmade",
	.required_features = needs_ept_vpid_ug,
	.n_required_features = ARRAY_SIZE(needs_ept_vpid_ug),
	.required = {
		[VMX_PIN_BASED] = PIN_BASED_EXTERNAL_INTERRUPT_EXITING,
		[VMX_PROC_BASED] = CPU_BASED_HLT_EXITING | CPU_BASED_USE_MSR_BITMAPS |
				   CPU_BASED_USE_IO_BITMAPS,
		[VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_ENABLE_VPID |
				    SECONDARY_EXEC_UNRESTRICTED_GUEST,
		[VMX_EXIT] = VM_EXIT_HOST_ADDR_SPACE_SIZE | VM_EXIT_ACK_INTR_ON_EXIT,
	},
	.optional = {
		[VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_PML,
	},
	.gates = gates_efer_pause,
	.n_gates = ARRAY_SIZE(gates_efer_pause),
};

/* Only the EFER gate: isolates the gate from required features. */
static const struct vmx_profile_setup setup_efer_only = {
	.profile = "efer-only",
	.gates = &gate_efer,
	.n_gates = 1,
};

static char line[256];

/* ---- vmx_features_present ---- */

static void test_features_present_names_first_missing(void **state)
{
	const struct vmx_caps *core2 = unit_model_caps("core2_penryn_t9600");
	const struct vmx_caps *sky = unit_model_caps("corei7_skylake_x");
	const enum vmx_feature want[] = {
		VMX_FEATURE_VPID, VMX_FEATURE_EPT, VMX_FEATURE_LOAD_IA32_EFER,
	};
	enum vmx_feature missing = VMX_FEATURE_COUNT;

	(void)state;
	assert_true(vmx_features_present(sky, want, ARRAY_SIZE(want), &missing));
	assert_int_equal(missing, VMX_FEATURE_COUNT);	/* untouched on success */
	assert_false(vmx_features_present(core2, want, ARRAY_SIZE(want), &missing));
	assert_int_equal(missing, VMX_FEATURE_VPID);	/* in the caller's order */
	assert_false(vmx_features_present(core2, want + 1, 2, &missing));
	assert_int_equal(missing, VMX_FEATURE_EPT);
	/* Nothing needed: always present; NULL first_missing is allowed. */
	assert_true(vmx_features_present(core2, NULL, 0, NULL));
	assert_false(vmx_features_present(core2, want, 1, NULL));
}

/* ---- the whole computation on real recordings ---- */

static void test_full_setup_on_skylake(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_skylake_x");
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup_full, caps, &ctl), VMX_CONTROLS_OK);
	unit_assert_controls_valid(&setup_full, caps, &ctl, "corei7_skylake_x");
	/* Skylake has everything: both gates take their first choice. */
	assert_int_equal(ctl.gate_choice[0], 0);
	assert_int_equal(ctl.gate_choice[1], 0);
	assert_true(ctl.field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER);
	assert_true(ctl.field[VMX_PROC_BASED2] & SECONDARY_EXEC_PAUSE_LOOP_EXITING);
	assert_false(ctl.field[VMX_PROC_BASED] & CPU_BASED_PAUSE_EXITING);
	/* Optional PML is there on Skylake. */
	assert_true(ctl.field[VMX_PROC_BASED2] & SECONDARY_EXEC_ENABLE_PML);

	vmx_format_gate_decision(line, sizeof(line), &setup_full, &ctl, 0);
	assert_string_equal(line, "gate efer: atomic (load_ia32_efer)");
	vmx_format_gate_decision(line, sizeof(line), &setup_full, &ctl, 1);
	assert_string_equal(line, "gate pause: PAUSE-loop exiting (pause_loop_exiting)");
	vmx_format_refusal(line, sizeof(line), &setup_full, &ctl);
	assert_string_equal(line, "profile 'handmade' accepted");
}

static void test_optional_dropped_where_not_allowed(void **state)
{
	/* Haswell: no PML (PLATFORM.md); the optional bit goes, silently. */
	const struct vmx_caps *caps = unit_model_caps("corei7_haswell_4770");
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup_full, caps, &ctl), VMX_CONTROLS_OK);
	unit_assert_controls_valid(&setup_full, caps, &ctl, "corei7_haswell_4770");
	assert_false(ctl.field[VMX_PROC_BASED2] & SECONDARY_EXEC_ENABLE_PML);
}

static void test_pause_gate_falls_back_on_sandy_bridge(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_sandy_bridge_2600k");
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup_full, caps, &ctl), VMX_CONTROLS_OK);
	unit_assert_controls_valid(&setup_full, caps, &ctl, "corei7_sandy_bridge_2600k");
	assert_int_equal(ctl.gate_choice[0], 0);	/* load EFER is there */
	assert_int_equal(ctl.gate_choice[1], 1);
	assert_true(ctl.gate_fell_back[1]);
	assert_int_equal(ctl.gate_missing[1], VMX_FEATURE_PAUSE_LOOP_EXITING);
	assert_true(ctl.field[VMX_PROC_BASED] & CPU_BASED_PAUSE_EXITING);
	assert_false(ctl.field[VMX_PROC_BASED2] & SECONDARY_EXEC_PAUSE_LOOP_EXITING);
	vmx_format_gate_decision(line, sizeof(line), &setup_full, &ctl, 1);
	assert_string_equal(line, "gate pause: plain PAUSE exiting (no pause_loop_exiting)");
}

static void test_efer_gate_falls_back_on_penryn(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("core2_penryn_t9600");
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup_efer_only, caps, &ctl), VMX_CONTROLS_OK);
	unit_assert_controls_valid(&setup_efer_only, caps, &ctl, "core2_penryn_t9600");
	assert_int_equal(ctl.gate_choice[0], 1);
	assert_true(ctl.gate_fell_back[0]);
	assert_int_equal(ctl.gate_missing[0], VMX_FEATURE_LOAD_IA32_EFER);
	assert_false(ctl.field[VMX_ENTRY] & VM_ENTRY_LOAD_IA32_EFER);
	assert_false(ctl.field[VMX_EXIT] & VM_EXIT_LOAD_IA32_EFER);
	vmx_format_gate_decision(line, sizeof(line), &setup_efer_only, &ctl, 0);
	assert_string_equal(line, "gate efer: manual WRMSR (no load_ia32_efer)");
}

static void test_required_feature_refused_in_setup_order(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("core2_penryn_t9600");
	struct vmx_controls ctl;
	unsigned int i;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup_full, caps, &ctl),
			 VMX_CONTROLS_MISSING_FEATURE);
	assert_int_equal(ctl.missing_feature, VMX_FEATURE_EPT);
	for (i = 0; i < VMX_CTL_FIELDS; i++)
		assert_int_equal(ctl.field[i], 0);	/* nothing to VMWRITE by mistake */
	vmx_format_refusal(line, sizeof(line), &setup_full, &ctl);
	assert_string_equal(line, "profile 'handmade' refused: this CPU lacks ept");
	/* Refused before any gate was decided. */
	vmx_format_gate_decision(line, sizeof(line), &setup_full, &ctl, 0);
	assert_string_equal(line, "gate efer: undecided (profile refused)");
}

static void test_unrestricted_guest_refused_on_lynnfield(void **state)
{
	/* Lynnfield has EPT and VPID but no unrestricted guest (PLATFORM.md). */
	const struct vmx_caps *caps = unit_model_caps("corei5_lynnfield_750");
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup_full, caps, &ctl),
			 VMX_CONTROLS_MISSING_FEATURE);
	assert_int_equal(ctl.missing_feature, VMX_FEATURE_UNRESTRICTED_GUEST);
}

static void test_required_bit_refused_naming_field_and_bit(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_sandy_bridge_2600k");
	const struct vmx_profile_setup setup = {
		.profile = "ple-bit",
		.required = { [VMX_PROC_BASED2] = SECONDARY_EXEC_PAUSE_LOOP_EXITING },
	};
	struct vmx_controls ctl;
	char want[128];

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup, caps, &ctl), VMX_CONTROLS_MISSING_CONTROL);
	assert_int_equal(ctl.missing_field, VMX_PROC_BASED2);
	assert_int_equal(1u << ctl.missing_bit, SECONDARY_EXEC_PAUSE_LOOP_EXITING);
	vmx_format_refusal(line, sizeof(line), &setup, &ctl);
	snprintf(want, sizeof(want), "profile 'ple-bit' refused: this CPU cannot set proc_based2 control bit %u",
		 (unsigned int)__builtin_ctz(SECONDARY_EXEC_PAUSE_LOOP_EXITING));
	assert_string_equal(line, want);
}

static void test_no_gate_choice(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_ivy_bridge_3770k");
	const struct vmx_gate gates[] = { gate_efer, gate_ple_only };
	const struct vmx_profile_setup setup = {
		.profile = "ple-or-nothing", .gates = gates, .n_gates = ARRAY_SIZE(gates),
	};
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup, caps, &ctl), VMX_CONTROLS_NO_GATE_CHOICE);
	assert_int_equal(ctl.failed_gate, 1);
	assert_int_equal(ctl.missing_feature, VMX_FEATURE_PAUSE_LOOP_EXITING);
	vmx_format_refusal(line, sizeof(line), &setup, &ctl);
	assert_string_equal(line, "profile 'ple-or-nothing' refused: this CPU lacks "
			    "pause_loop_exiting (gate pause has no usable choice)");
	/* The gate before the failing one keeps its decision for the log. */
	vmx_format_gate_decision(line, sizeof(line), &setup, &ctl, 0);
	assert_string_equal(line, "gate efer: atomic (load_ia32_efer)");
	vmx_format_gate_decision(line, sizeof(line), &setup, &ctl, 1);
	assert_string_equal(line, "gate pause: undecided (profile refused)");
}

static void test_gate_choice_with_disallowed_control(void **state)
{
	/* Its needs are met but its control is not: the setup lies, say so. */
	const struct vmx_caps *caps = unit_model_caps("corei7_sandy_bridge_2600k");
	const struct vmx_gate_choice bad[] = {
		{ .name = "bad", .description = "needs nothing, sets PLE",
		  .set = { [VMX_PROC_BASED2] = SECONDARY_EXEC_PAUSE_LOOP_EXITING } },
	};
	const struct vmx_gate gate = { .name = "liar", .choices = bad, .n_choices = 1 };
	const struct vmx_profile_setup setup = { .profile = "liar", .gates = &gate, .n_gates = 1 };
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&setup, caps, &ctl), VMX_CONTROLS_MISSING_CONTROL);
	assert_int_equal(ctl.failed_gate, 0);
	assert_int_equal(ctl.missing_field, VMX_PROC_BASED2);
	vmx_format_refusal(line, sizeof(line), &setup, &ctl);
	assert_true(unit_starts_with(line, "profile 'liar' refused: this CPU cannot set proc_based2 control bit "));
	assert_non_null(strstr(line, "(gate liar)"));
}

/* ---- secondary controls ---- */

static void test_activate_secondary_only_when_used(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup none = { .profile = "primary-only" };
	const struct vmx_profile_setup ept = {
		.profile = "ept",
		.required = { [VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_EPT },
	};
	struct vmx_controls ctl;

	(void)state;
	assert_int_equal(vmx_compute_controls(&none, caps, &ctl), VMX_CONTROLS_OK);
	assert_false(ctl.field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS);
	assert_int_equal(ctl.field[VMX_PROC_BASED2], 0);
	unit_assert_controls_valid(&none, caps, &ctl, "corei7_skylake_x");

	assert_int_equal(vmx_compute_controls(&ept, caps, &ctl), VMX_CONTROLS_OK);
	assert_true(ctl.field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS);
	assert_true(ctl.field[VMX_PROC_BASED2] & SECONDARY_EXEC_ENABLE_EPT);
	unit_assert_controls_valid(&ept, caps, &ctl, "corei7_skylake_x");
}

static void test_no_secondary_controls_without_activate(void **state)
{
	/*
	 * A CPU whose PROCBASED_CTLS cannot set "activate secondary
	 * controls": a stale PROCBASED_CTLS2 value must not make EPT usable.
	 */
	struct vmx_caps caps = *unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup ept = {
		.profile = "ept",
		.required = { [VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_EPT },
	};
	const struct vmx_profile_setup opt = {
		.profile = "opt",
		.optional = { [VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_EPT },
	};
	struct vmx_controls ctl;

	(void)state;
	caps.procbased &= ~((uint64_t)CPU_BASED_ACTIVATE_SECONDARY_CONTROLS << 32);
	caps.true_procbased &= ~((uint64_t)CPU_BASED_ACTIVATE_SECONDARY_CONTROLS << 32);
	assert_int_equal(vmx_compute_controls(&ept, &caps, &ctl), VMX_CONTROLS_MISSING_CONTROL);
	assert_int_equal(ctl.missing_field, VMX_PROC_BASED2);
	assert_int_equal(1u << ctl.missing_bit, SECONDARY_EXEC_ENABLE_EPT);

	assert_int_equal(vmx_compute_controls(&opt, &caps, &ctl), VMX_CONTROLS_OK);
	assert_int_equal(ctl.field[VMX_PROC_BASED2], 0);
	assert_false(ctl.field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS);
}

static void test_secondary_must_be_1_only_when_active(void **state)
{
	/*
	 * Hand-made: a CPU that insists on descriptor-table exiting whenever
	 * secondary controls are active.  Unused, the field is ignored
	 * (SDM 25.6.2) and must stay 0; used, the bit must be set.
	 */
	struct vmx_caps caps = *unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup none = { .profile = "primary-only" };
	const struct vmx_profile_setup ept = {
		.profile = "ept",
		.required = { [VMX_PROC_BASED2] = SECONDARY_EXEC_ENABLE_EPT },
	};
	struct vmx_controls ctl;

	(void)state;
	caps.procbased2 |= SECONDARY_EXEC_DESC;
	assert_int_equal(vmx_compute_controls(&none, &caps, &ctl), VMX_CONTROLS_OK);
	assert_false(ctl.field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS);
	assert_int_equal(ctl.field[VMX_PROC_BASED2], 0);

	assert_int_equal(vmx_compute_controls(&ept, &caps, &ctl), VMX_CONTROLS_OK);
	assert_int_equal(ctl.field[VMX_PROC_BASED2],
			 SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_DESC);
	unit_assert_controls_valid(&ept, &caps, &ctl, "skylake+desc1");
}

/* ---- TRUE_* capability MSRs ---- */

static void test_true_msrs_used_when_basic_55_set(void **state)
{
	/*
	 * Recorded on every model: the plain PROCBASED_CTLS forces CR3-load
	 * and CR3-store exiting to 1, the TRUE one allows 0 (A.3.2).
	 */
	struct vmx_caps caps = *unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup none = { .profile = "none" };
	struct vmx_controls ctl;

	(void)state;
	assert_true(vmx_feature_supported(&caps, VMX_FEATURE_TRUE_CONTROLS));
	assert_true((uint32_t)caps.procbased & CPU_BASED_CR3_LOAD_EXITING);
	assert_false((uint32_t)caps.true_procbased & CPU_BASED_CR3_LOAD_EXITING);

	assert_int_equal(vmx_compute_controls(&none, &caps, &ctl), VMX_CONTROLS_OK);
	assert_false(ctl.field[VMX_PROC_BASED] & CPU_BASED_CR3_LOAD_EXITING);
	assert_false(ctl.field[VMX_PROC_BASED] & CPU_BASED_CR3_STORE_EXITING);
	/* Likewise "save/load debug controls" are default1 only in the plain MSRs. */
	assert_false(ctl.field[VMX_EXIT] & VM_EXIT_SAVE_DEBUG_CONTROLS);
	assert_false(ctl.field[VMX_ENTRY] & VM_ENTRY_LOAD_DEBUG_CONTROLS);

	caps.basic &= ~unit_true_controls_bit(&caps);
	assert_int_equal(vmx_compute_controls(&none, &caps, &ctl), VMX_CONTROLS_OK);
	assert_true(ctl.field[VMX_PROC_BASED] & CPU_BASED_CR3_LOAD_EXITING);
	assert_true(ctl.field[VMX_PROC_BASED] & CPU_BASED_CR3_STORE_EXITING);
	assert_true(ctl.field[VMX_EXIT] & VM_EXIT_SAVE_DEBUG_CONTROLS);
	assert_true(ctl.field[VMX_ENTRY] & VM_ENTRY_LOAD_DEBUG_CONTROLS);
}

static void test_true_msrs_allowed1_decides(void **state)
{
	/*
	 * Hand-made: the plain MSR allows HLT exiting, the TRUE one does not.
	 * Which one is read must follow IA32_VMX_BASIC[55], field by field.
	 */
	struct vmx_caps caps = *unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup hlt = {
		.profile = "hlt",
		.required = { [VMX_PROC_BASED] = CPU_BASED_HLT_EXITING },
	};
	const struct vmx_profile_setup pat = {
		.profile = "pat",
		.required = { [VMX_ENTRY] = VM_ENTRY_LOAD_IA32_PAT,
			      [VMX_EXIT] = VM_EXIT_LOAD_IA32_PAT },
	};
	struct vmx_controls ctl;

	(void)state;
	caps.true_procbased &= ~((uint64_t)CPU_BASED_HLT_EXITING << 32);
	caps.true_entry &= ~((uint64_t)VM_ENTRY_LOAD_IA32_PAT << 32);
	assert_int_equal(vmx_compute_controls(&hlt, &caps, &ctl), VMX_CONTROLS_MISSING_CONTROL);
	assert_int_equal(ctl.missing_field, VMX_PROC_BASED);
	assert_int_equal(vmx_compute_controls(&pat, &caps, &ctl), VMX_CONTROLS_MISSING_CONTROL);
	assert_int_equal(ctl.missing_field, VMX_ENTRY);

	caps.basic &= ~unit_true_controls_bit(&caps);
	assert_int_equal(vmx_compute_controls(&hlt, &caps, &ctl), VMX_CONTROLS_OK);
	assert_true(ctl.field[VMX_PROC_BASED] & CPU_BASED_HLT_EXITING);
	assert_int_equal(vmx_compute_controls(&pat, &caps, &ctl), VMX_CONTROLS_OK);
}

static void test_must_be_1_bits_always_set(void **state)
{
	/* Hand-made: a CPU that insists on HLT exiting gets it unasked. */
	struct vmx_caps caps = *unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup none = { .profile = "none" };
	struct vmx_controls ctl;

	(void)state;
	caps.true_procbased |= CPU_BASED_HLT_EXITING;
	assert_int_equal(vmx_compute_controls(&none, &caps, &ctl), VMX_CONTROLS_OK);
	assert_true(ctl.field[VMX_PROC_BASED] & CPU_BASED_HLT_EXITING);
	unit_assert_controls_valid(&none, &caps, &ctl, "skylake+hlt1");
}

/* ---- entry/exit pairs ---- */

static void test_unpaired_entry_efer(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_skylake_x");
	const struct vmx_profile_setup entry_only = {
		.profile = "entry-only",
		.required = { [VMX_ENTRY] = VM_ENTRY_LOAD_IA32_EFER },
	};
	const struct vmx_profile_setup exit_only = {
		.profile = "exit-only",
		.optional = { [VMX_EXIT] = VM_EXIT_LOAD_IA32_PAT },
	};
	const struct vmx_profile_setup both = {
		.profile = "both",
		.required = { [VMX_ENTRY] = VM_ENTRY_LOAD_IA32_EFER,
			      [VMX_EXIT] = VM_EXIT_LOAD_IA32_EFER },
	};
	struct vmx_controls ctl;
	char want[160];

	(void)state;
	assert_int_equal(vmx_compute_controls(&entry_only, caps, &ctl), VMX_CONTROLS_UNPAIRED);
	assert_int_equal(ctl.missing_field, VMX_EXIT);
	assert_int_equal(1u << ctl.missing_bit, VM_EXIT_LOAD_IA32_EFER);
	assert_int_equal(ctl.field[VMX_ENTRY], 0);
	vmx_format_refusal(line, sizeof(line), &entry_only, &ctl);
	snprintf(want, sizeof(want), "profile 'entry-only' refused: an MSR loaded on VM entry is "
		 "not restored on VM exit or the reverse: vm_exit control bit %u is not set",
		 (unsigned int)__builtin_ctz(VM_EXIT_LOAD_IA32_EFER));
	assert_string_equal(line, want);

	assert_int_equal(vmx_compute_controls(&exit_only, caps, &ctl), VMX_CONTROLS_UNPAIRED);
	assert_int_equal(ctl.missing_field, VMX_ENTRY);
	assert_int_equal(1u << ctl.missing_bit, VM_ENTRY_LOAD_IA32_PAT);

	assert_int_equal(vmx_compute_controls(&both, caps, &ctl), VMX_CONTROLS_OK);
}

/* ---- bad setups ---- */

static void test_bad_setups(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("corei7_skylake_x");
	const enum vmx_feature bogus[] = { VMX_FEATURE_COUNT };
	const struct vmx_gate empty = { .name = "empty", .choices = efer_choices, .n_choices = 0 };
	static struct vmx_gate many[VMX_MAX_GATES + 1];
	const struct vmx_profile_setup setups[] = {
		{ .profile = NULL },
		{ .profile = "bogus-feature", .required_features = bogus, .n_required_features = 1 },
		{ .profile = "null-features", .required_features = NULL, .n_required_features = 2 },
		{ .profile = "empty-gate", .gates = &empty, .n_gates = 1 },
		{ .profile = "null-gates", .gates = NULL, .n_gates = 1 },
		{ .profile = "too-many-gates", .gates = many, .n_gates = VMX_MAX_GATES + 1 },
	};
	struct vmx_controls ctl;
	unsigned int i, f;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(many); i++)
		many[i] = gate_efer;
	for (i = 0; i < ARRAY_SIZE(setups); i++) {
		memset(&ctl, 0xa5, sizeof(ctl));
		assert_int_equal(vmx_compute_controls(&setups[i], caps, &ctl),
				 VMX_CONTROLS_BAD_SETUP);
		assert_int_equal(ctl.status, VMX_CONTROLS_BAD_SETUP);
		for (f = 0; f < VMX_CTL_FIELDS; f++)
			assert_int_equal(ctl.field[f], 0);
	}
	assert_int_equal(vmx_compute_controls(&setup_full, NULL, &ctl), VMX_CONTROLS_BAD_SETUP);
	assert_int_equal(vmx_compute_controls(NULL, caps, &ctl), VMX_CONTROLS_BAD_SETUP);
	vmx_format_refusal(line, sizeof(line), &setups[1], &ctl);
	assert_string_equal(line, "profile 'bogus-feature' refused: its generated setup is inconsistent");
}

/* ---- formatting: snprintf semantics ---- */

static void test_format_truncates_like_snprintf(void **state)
{
	const struct vmx_caps *caps = unit_model_caps("core2_penryn_t9600");
	const char *full = "gate efer: manual WRMSR (no load_ia32_efer)";
	struct vmx_controls ctl;
	char small[11];
	int n;

	(void)state;
	vmx_compute_controls(&setup_efer_only, caps, &ctl);
	memset(small, 'X', sizeof(small));
	n = vmx_format_gate_decision(small, sizeof(small), &setup_efer_only, &ctl, 0);
	assert_int_equal(n, strlen(full));
	assert_string_equal(small, "gate efer:");	/* 10 chars and the NUL */

	small[0] = 'X';
	n = vmx_format_gate_decision(small, 0, &setup_efer_only, &ctl, 0);
	assert_int_equal(n, strlen(full));
	assert_int_equal(small[0], 'X');		/* size 0 writes nothing */

	n = vmx_format_gate_decision(line, sizeof(line), &setup_efer_only, &ctl, 7);
	assert_string_equal(line, "gate 7: no such gate");
	assert_int_equal(n, strlen(line));
}

/* ---- every recorded model ---- */

static void test_every_model_consistent(void **state)
{
	const struct vmx_profile_setup *setups[] = { &setup_full, &setup_efer_only };
	unsigned int m, s, accepted = 0;

	(void)state;
	assert_true(vmx_caps_n_models >= 10);
	for (m = 0; m < vmx_caps_n_models; m++) {
		const struct vmx_caps *caps = &vmx_caps_models[m].caps;
		const char *model = vmx_caps_models[m].model;

		for (s = 0; s < ARRAY_SIZE(setups); s++) {
			struct vmx_controls ctl;
			enum vmx_feature missing;
			bool have = vmx_features_present(caps, setups[s]->required_features,
							 setups[s]->n_required_features,
							 &missing);

			vmx_compute_controls(setups[s], caps, &ctl);
			if (!have) {
				assert_int_equal(ctl.status, VMX_CONTROLS_MISSING_FEATURE);
				assert_int_equal(ctl.missing_feature, missing);
				continue;
			}
			unit_assert_controls_valid(setups[s], caps, &ctl, model);
			accepted++;
		}
	}
	/* The EFER-only setup works everywhere; the full one on most models. */
	assert_true(accepted > vmx_caps_n_models);
}

static void test_platform_table_features(void **state)
{
	/* PLATFORM.md's feature table, read from the recordings. */
	static const struct {
		const char *model;
		bool ept, ple, load_efer, ug;
	} table[] = {
		{ "corei7_skylake_x",          true,  true,  true,  true },
		{ "corei7_haswell_4770",       true,  true,  true,  true },
		{ "corei7_sandy_bridge_2600k", true,  false, true,  true },
		{ "corei7_ivy_bridge_3770k",   true,  false, true,  true },
		{ "corei5_lynnfield_750",      true,  false, true,  false },
		{ "core2_penryn_t9600",        false, false, false, false },
		{ "bx_generic",                false, false, false, false },
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(table); i++) {
		const struct vmx_caps *caps = unit_model_caps(table[i].model);

		assert_int_equal(vmx_feature_supported(caps, VMX_FEATURE_EPT), table[i].ept);
		assert_int_equal(vmx_feature_supported(caps, VMX_FEATURE_PAUSE_LOOP_EXITING),
				 table[i].ple);
		assert_int_equal(vmx_feature_supported(caps, VMX_FEATURE_LOAD_IA32_EFER),
				 table[i].load_efer);
		assert_int_equal(vmx_feature_supported(caps, VMX_FEATURE_UNRESTRICTED_GUEST),
				 table[i].ug);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_features_present_names_first_missing),
		cmocka_unit_test(test_full_setup_on_skylake),
		cmocka_unit_test(test_optional_dropped_where_not_allowed),
		cmocka_unit_test(test_pause_gate_falls_back_on_sandy_bridge),
		cmocka_unit_test(test_efer_gate_falls_back_on_penryn),
		cmocka_unit_test(test_required_feature_refused_in_setup_order),
		cmocka_unit_test(test_unrestricted_guest_refused_on_lynnfield),
		cmocka_unit_test(test_required_bit_refused_naming_field_and_bit),
		cmocka_unit_test(test_no_gate_choice),
		cmocka_unit_test(test_gate_choice_with_disallowed_control),
		cmocka_unit_test(test_activate_secondary_only_when_used),
		cmocka_unit_test(test_no_secondary_controls_without_activate),
		cmocka_unit_test(test_secondary_must_be_1_only_when_active),
		cmocka_unit_test(test_true_msrs_used_when_basic_55_set),
		cmocka_unit_test(test_true_msrs_allowed1_decides),
		cmocka_unit_test(test_must_be_1_bits_always_set),
		cmocka_unit_test(test_unpaired_entry_efer),
		cmocka_unit_test(test_bad_setups),
		cmocka_unit_test(test_format_truncates_like_snprintf),
		cmocka_unit_test(test_every_model_consistent),
		cmocka_unit_test(test_platform_table_features),
	};

	return cmocka_run_group_tests_name("vmx_controls engine", tests, NULL, NULL);
}
