/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * VMX control computation: from what a profile asks for (generated
 * vmcs_setup.c) and what the CPU allows (the capability MSRs), the values
 * of the five VM-execution, VM-exit and VM-entry control fields, and a
 * record of every gate decision.
 *
 * Pure code: no VMREAD, no RDMSR.  The caller fills struct vmx_caps (the
 * runtime from RDMSR/CPUID, unit tests from tests/data/vmx-caps), so the
 * same function is tested on the host against every emulated CPU model.
 */
#ifndef EXITPLAN_VMX_CONTROLS_H
#define EXITPLAN_VMX_CONTROLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmx_features.h"	/* generated: enum vmx_feature */

/* The five control fields, in the order the SDM lists them (Vol. 3C 25.6-25.8). */
enum vmx_ctl_field {
	VMX_PIN_BASED,		/* Pin-based VM-execution controls */
	VMX_PROC_BASED,		/* Primary processor-based VM-execution controls */
	VMX_PROC_BASED2,	/* Secondary processor-based VM-execution controls */
	VMX_EXIT,		/* VM-exit controls */
	VMX_ENTRY,		/* VM-entry controls */
	VMX_CTL_FIELDS
};

/*
 * The capability MSRs (SDM Vol. 3D Appendix A) and CPUID bits the
 * computation needs.  A field is 0 when the MSR does not exist on this CPU
 * (procbased2 when "activate secondary controls" cannot be 1, ept_vpid_cap
 * when neither EPT nor VPID can be enabled, the true_* MSRs when
 * IA32_VMX_BASIC[55] is 0).
 */
struct vmx_caps {
	uint64_t basic;			/* IA32_VMX_BASIC */
	uint64_t pinbased;		/* IA32_VMX_PINBASED_CTLS */
	uint64_t procbased;		/* IA32_VMX_PROCBASED_CTLS */
	uint64_t exit;			/* IA32_VMX_EXIT_CTLS */
	uint64_t entry;			/* IA32_VMX_ENTRY_CTLS */
	uint64_t misc;			/* IA32_VMX_MISC */
	uint64_t cr0_fixed0, cr0_fixed1;	/* IA32_VMX_CR0_FIXED0/1 */
	uint64_t cr4_fixed0, cr4_fixed1;	/* IA32_VMX_CR4_FIXED0/1 */
	uint64_t vmcs_enum;		/* IA32_VMX_VMCS_ENUM */
	uint64_t procbased2;		/* IA32_VMX_PROCBASED_CTLS2 */
	uint64_t ept_vpid_cap;		/* IA32_VMX_EPT_VPID_CAP */
	uint64_t true_pinbased;		/* IA32_VMX_TRUE_PINBASED_CTLS */
	uint64_t true_procbased;	/* IA32_VMX_TRUE_PROCBASED_CTLS */
	uint64_t true_exit;		/* IA32_VMX_TRUE_EXIT_CTLS */
	uint64_t true_entry;		/* IA32_VMX_TRUE_ENTRY_CTLS */
	uint64_t vmfunc;		/* IA32_VMX_VMFUNC */
	uint32_t cpuid_1_ecx;		/* CPUID.01H:ECX (VMX, x2APIC, TSC deadline) */
	uint32_t cpuid_1_edx;		/* CPUID.01H:EDX */
};

/* One alternative of a gate, in the profile's order of preference. */
struct vmx_gate_choice {
	const char *name;		/* short name: "atomic", "manual", "ple" */
	const char *description;	/* printed: "plain PAUSE exiting" */
	const enum vmx_feature *needs;	/* features this choice needs */
	unsigned int n_needs;
	uint32_t set[VMX_CTL_FIELDS];	/* control bits this choice adds */
	bool manual_msr_switch;		/* it switches the gate's MSR with WRMSR */
};

/*
 * A gate: a feature the profile prefers, with declared fallbacks.  The
 * first choice whose features are all present is taken; when none is, the
 * profile is refused naming the first missing feature of the last choice.
 */
struct vmx_gate {
	const char *name;		/* "efer", "pause" */
	const struct vmx_gate_choice *choices;
	unsigned int n_choices;
};

/* What a profile asks for; generated per profile as profile_vmx_setup. */
struct vmx_profile_setup {
	const char *profile;
	const enum vmx_feature *required_features;	/* refuse boot without */
	unsigned int n_required_features;
	uint32_t required[VMX_CTL_FIELDS];	/* bits that must be 1 */
	uint32_t optional[VMX_CTL_FIELDS];	/* bits set when allowed */
	const struct vmx_gate *gates;
	unsigned int n_gates;
};

#define VMX_MAX_GATES 16

/* A control bit the runtime needs, or cannot honour (spec/runtime.yaml). */
struct vmx_runtime_control {
	enum vmx_ctl_field field;
	uint32_t bit;
	const char *sdm;		/* the SDM's name of the control */
	bool unless_interrupts_direct;	/* required but under `interrupts: direct` */
};

/* generated/common/runtime_controls.c */
extern const struct vmx_runtime_control vmx_runtime_required_controls[];
extern const unsigned int vmx_runtime_required_control_count;
extern const struct vmx_runtime_control vmx_runtime_unsupported_controls[];
extern const unsigned int vmx_runtime_unsupported_control_count;

enum vmx_controls_status {
	VMX_CONTROLS_OK = 0,
	VMX_CONTROLS_MISSING_FEATURE,	/* a required feature is absent */
	VMX_CONTROLS_MISSING_CONTROL,	/* a required bit cannot be 1 */
	VMX_CONTROLS_NO_GATE_CHOICE,	/* no alternative of a gate works */
	VMX_CONTROLS_UNPAIRED,		/* an entry/exit pair is half set */
	VMX_CONTROLS_BAD_SETUP,		/* the setup itself is inconsistent */
};

/* The result: field values to VMWRITE, and why they are what they are. */
struct vmx_controls {
	enum vmx_controls_status status;
	uint32_t field[VMX_CTL_FIELDS];
	/* Index into gates[g].choices of the choice taken, per gate. */
	unsigned int gate_choice[VMX_MAX_GATES];
	/* Set when a gate fell back: the feature the better choice lacked. */
	bool gate_fell_back[VMX_MAX_GATES];
	enum vmx_feature gate_missing[VMX_MAX_GATES];
	/* On failure: what is missing (feature, or field and bit). */
	enum vmx_feature missing_feature;
	enum vmx_ctl_field missing_field;
	unsigned int missing_bit;
	unsigned int failed_gate;
};

/* true when every feature in @needs is present. */
bool vmx_features_present(const struct vmx_caps *caps,
			  const enum vmx_feature *needs, unsigned int n,
			  enum vmx_feature *first_missing);

/*
 * Compute the control fields.  Bits the CPU requires to be 1 (allowed-0
 * settings, from the TRUE_* MSRs when IA32_VMX_BASIC[55] says they
 * exist) are always set; a required bit outside the allowed-1 settings
 * refuses the profile; optional bits are dropped silently where not
 * allowed.  Returns out->status.
 */
enum vmx_controls_status vmx_compute_controls(const struct vmx_profile_setup *setup,
					      const struct vmx_caps *caps,
					      struct vmx_controls *out);

/*
 * One line per gate, as printed at boot and matched by the boot tests:
 *   "gate efer: atomic (load_ia32_efer)"
 *   "gate pause: plain PAUSE exiting (no pause_loop_exiting)"
 * Returns the length written (snprintf semantics).
 */
int vmx_format_gate_decision(char *buf, size_t size,
			     const struct vmx_profile_setup *setup,
			     const struct vmx_controls *ctl, unsigned int gate);

/* "profile 'overcommit' refused: this CPU lacks pause_loop_exiting" */
int vmx_format_refusal(char *buf, size_t size,
		       const struct vmx_profile_setup *setup,
		       const struct vmx_controls *ctl);

#endif /* EXITPLAN_VMX_CONTROLS_H */
