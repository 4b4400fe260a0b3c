// SPDX-License-Identifier: GPL-2.0-only
/*
 * VMX control computation (see vmx_controls.h).
 *
 * The idea is KVM's adjust_vmx_controls(): a capability MSR holds the
 * allowed-0 settings of a control field in bits 31:0 (a 1 there means the
 * control must be 1) and the allowed-1 settings in bits 63:32 (a 0 there
 * means the control must be 0), SDM Vol. 3D A.3-A.5.  On top of that come
 * the profile's gates: alternatives in order of preference, the first
 * whose features the CPU has is taken, and the decision is recorded so
 * that the boot log and the generated MSR switch code can follow it.
 *
 * Pure and freestanding: it runs inside the hypervisor and in host unit
 * tests.  No libc beyond <stddef.h>, <stdint.h>, <stdbool.h>; the messages
 * are built with the small string builder at the end of this file.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/host/compiler.h"		/* ARRAY_SIZE */
#include "arch/vmx/vmx_controls.h"
#include "vmx_controls_bits.h"	/* generated: CPU_BASED_*, VM_ENTRY_*, ... */
#include "vmx_features.h"	/* generated: vmx_feature_supported(), names */

/* The spec's key of each field (spec/vmx_controls.yaml), used in messages. */
static const char *const vmx_ctl_field_names[VMX_CTL_FIELDS] = {
	[VMX_PIN_BASED]   = "pin_based",
	[VMX_PROC_BASED]  = "proc_based",
	[VMX_PROC_BASED2] = "proc_based2",
	[VMX_EXIT]        = "vm_exit",
	[VMX_ENTRY]       = "vm_entry",
};

/*
 * Controls that make the CPU load a guest MSR or state on VM entry, and
 * the matching one that loads (or clears) the host's on VM exit.  One
 * without the other leaves the host running on the guest's value, or the
 * guest on the host's: refuse it, as KVM's vmcs_entry_exit_pairs[] does.
 */
static const struct {
	uint32_t entry;
	uint32_t exit;
} vmx_entry_exit_pairs[] = {
	{ VM_ENTRY_LOAD_IA32_PERF_GLOBAL_CTRL, VM_EXIT_LOAD_IA32_PERF_GLOBAL_CTRL },
	{ VM_ENTRY_LOAD_IA32_PAT,             VM_EXIT_LOAD_IA32_PAT },
	{ VM_ENTRY_LOAD_IA32_EFER,            VM_EXIT_LOAD_IA32_EFER },
	{ VM_ENTRY_LOAD_BNDCFGS,              VM_EXIT_CLEAR_BNDCFGS },
	{ VM_ENTRY_LOAD_IA32_RTIT_CTL,        VM_EXIT_CLEAR_IA32_RTIT_CTL },
	{ VM_ENTRY_LOAD_IA32_LBR_CTL,         VM_EXIT_CLEAR_IA32_LBR_CTL },
	{ VM_ENTRY_LOAD_CET_STATE,            VM_EXIT_LOAD_CET_STATE },
	{ VM_ENTRY_LOAD_IA32_PKRS,            VM_EXIT_LOAD_IA32_PKRS },
};

#define VMX_GATE_UNDECIDED (~0u)

static const char *feature_name(enum vmx_feature f)
{
	if ((unsigned int)f >= VMX_FEATURE_COUNT || !vmx_feature_names[f])
		return "unknown feature";
	return vmx_feature_names[f];
}

bool vmx_features_present(const struct vmx_caps *caps,
			  const enum vmx_feature *needs, unsigned int n,
			  enum vmx_feature *first_missing)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (!vmx_feature_supported(caps, needs[i])) {
			if (first_missing)
				*first_missing = needs[i];
			return false;
		}
	}
	return true;
}

/*
 * The allowed-0 (must-be-1) and allowed-1 (may-be-1) settings of every
 * field on this CPU.  When IA32_VMX_BASIC[55] is set, the TRUE_* MSRs
 * report the real allowed-0 settings of the pin-based, primary
 * processor-based, exit and entry controls (some "default1" controls
 * such as CR3-load exiting may then be 0), SDM Vol. 3D A.2.  The
 * secondary controls exist only when "activate secondary controls" may
 * be 1; otherwise none of them can be used (A.3.3).
 */
static void vmx_allowed_settings(const struct vmx_caps *caps,
				 uint32_t allowed0[VMX_CTL_FIELDS],
				 uint32_t allowed1[VMX_CTL_FIELDS])
{
	bool true_ctls = vmx_feature_supported(caps, VMX_FEATURE_TRUE_CONTROLS);
	uint64_t msr[VMX_CTL_FIELDS] = {
		[VMX_PIN_BASED]   = true_ctls ? caps->true_pinbased : caps->pinbased,
		[VMX_PROC_BASED]  = true_ctls ? caps->true_procbased : caps->procbased,
		[VMX_PROC_BASED2] = caps->procbased2,
		[VMX_EXIT]        = true_ctls ? caps->true_exit : caps->exit,
		[VMX_ENTRY]       = true_ctls ? caps->true_entry : caps->entry,
	};
	unsigned int f;

	if (!((uint32_t)(msr[VMX_PROC_BASED] >> 32) &
	      CPU_BASED_ACTIVATE_SECONDARY_CONTROLS))
		msr[VMX_PROC_BASED2] = 0;

	for (f = 0; f < VMX_CTL_FIELDS; f++) {
		allowed0[f] = (uint32_t)msr[f];
		allowed1[f] = (uint32_t)(msr[f] >> 32);
	}
}

/* Lowest bit of @bits not in @allowed1, or 32 when all may be 1. */
static unsigned int first_disallowed_bit(uint32_t bits, uint32_t allowed1)
{
	uint32_t bad = bits & ~allowed1;

	return bad ? (unsigned int)__builtin_ctz(bad) : 32;
}

/* First field/bit of @bits[] the CPU cannot set; false when there is none. */
static bool find_disallowed(const uint32_t bits[VMX_CTL_FIELDS],
			    const uint32_t allowed1[VMX_CTL_FIELDS],
			    struct vmx_controls *out)
{
	unsigned int f, bit;

	for (f = 0; f < VMX_CTL_FIELDS; f++) {
		bit = first_disallowed_bit(bits[f], allowed1[f]);
		if (bit < 32) {
			out->missing_field = (enum vmx_ctl_field)f;
			out->missing_bit = bit;
			return true;
		}
	}
	return false;
}

static bool feature_list_valid(const enum vmx_feature *list, unsigned int n)
{
	unsigned int i;

	if (n && !list)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned int)list[i] >= VMX_FEATURE_COUNT)
			return false;
	return true;
}

/* Reject a setup the generator should never have produced. */
static bool setup_valid(const struct vmx_profile_setup *setup)
{
	unsigned int g, c;

	if (!setup->profile)
		return false;
	if (!feature_list_valid(setup->required_features,
				setup->n_required_features))
		return false;
	if (setup->n_gates > VMX_MAX_GATES || (setup->n_gates && !setup->gates))
		return false;
	for (g = 0; g < setup->n_gates; g++) {
		const struct vmx_gate *gate = &setup->gates[g];

		if (!gate->name || !gate->n_choices || !gate->choices)
			return false;
		for (c = 0; c < gate->n_choices; c++) {
			const struct vmx_gate_choice *ch = &gate->choices[c];

			if (!ch->description ||
			    !feature_list_valid(ch->needs, ch->n_needs))
				return false;
		}
	}
	return true;
}

static enum vmx_controls_status fail(struct vmx_controls *out,
				     enum vmx_controls_status status)
{
	unsigned int f;

	/* Never leave half-computed fields behind for a caller to VMWRITE. */
	for (f = 0; f < VMX_CTL_FIELDS; f++)
		out->field[f] = 0;
	out->status = status;
	return status;
}

enum vmx_controls_status vmx_compute_controls(const struct vmx_profile_setup *setup,
					      const struct vmx_caps *caps,
					      struct vmx_controls *out)
{
	uint32_t allowed0[VMX_CTL_FIELDS], allowed1[VMX_CTL_FIELDS];
	uint32_t *field = out->field;
	unsigned int f, g, c, i;

	*out = (struct vmx_controls){ .status = VMX_CONTROLS_OK };
	/*
	 * Until a gate is decided its choice index is out of range, which is
	 * how vmx_format_gate_decision() tells an undecided gate after a
	 * refusal.
	 */
	for (g = 0; g < VMX_MAX_GATES; g++)
		out->gate_choice[g] = VMX_GATE_UNDECIDED;

	if (!setup || !caps || !setup_valid(setup))
		return fail(out, VMX_CONTROLS_BAD_SETUP);
	out->failed_gate = setup->n_gates;	/* no gate failed (yet) */

	/* 1. Features the profile cannot run without, in the setup's order. */
	if (!vmx_features_present(caps, setup->required_features,
				  setup->n_required_features,
				  &out->missing_feature))
		return fail(out, VMX_CONTROLS_MISSING_FEATURE);

	vmx_allowed_settings(caps, allowed0, allowed1);

	/* 2. Required bits: each must be allowed to be 1. */
	if (find_disallowed(setup->required, allowed1, out))
		return fail(out, VMX_CONTROLS_MISSING_CONTROL);
	for (f = 0; f < VMX_CTL_FIELDS; f++)
		field[f] = setup->required[f];

	/* 3. Gates, in order: the first choice whose features are present. */
	for (g = 0; g < setup->n_gates; g++) {
		const struct vmx_gate *gate = &setup->gates[g];
		enum vmx_feature missing = VMX_FEATURE_COUNT;

		for (c = 0; c < gate->n_choices; c++) {
			const struct vmx_gate_choice *ch = &gate->choices[c];

			if (vmx_features_present(caps, ch->needs, ch->n_needs,
						 &missing))
				break;
			/* What kept the preferred choice out is what is reported. */
			if (c == 0)
				out->gate_missing[g] = missing;
		}
		if (c == gate->n_choices) {
			/* Name what the last resort lacks: nothing simpler is declared. */
			out->missing_feature = missing;
			out->failed_gate = g;
			return fail(out, VMX_CONTROLS_NO_GATE_CHOICE);
		}
		/*
		 * A choice whose features are present but whose controls the
		 * CPU does not allow means the gate's `needs` do not describe
		 * its controls: say so loudly rather than fall back quietly.
		 */
		if (find_disallowed(gate->choices[c].set, allowed1, out)) {
			out->failed_gate = g;
			return fail(out, VMX_CONTROLS_MISSING_CONTROL);
		}
		for (f = 0; f < VMX_CTL_FIELDS; f++)
			field[f] |= gate->choices[c].set[f];
		out->gate_choice[g] = c;
		out->gate_fell_back[g] = c > 0;
	}

	/* 4. Optional bits, only where this CPU allows them. */
	for (f = 0; f < VMX_CTL_FIELDS; f++)
		field[f] |= setup->optional[f] & allowed1[f];

	/*
	 * 5. Secondary controls take effect only with "activate secondary
	 * controls" set (SDM Vol. 3C 25.6.2); set it when any is used.  It
	 * is allowed here: allowed1[VMX_PROC_BASED2] is 0 otherwise.
	 */
	if (field[VMX_PROC_BASED2])
		field[VMX_PROC_BASED] |= CPU_BASED_ACTIVATE_SECONDARY_CONTROLS;

	/* 6. Bits this CPU requires to be 1. */
	for (f = 0; f < VMX_CTL_FIELDS; f++)
		field[f] |= allowed0[f];
	if (!(field[VMX_PROC_BASED] & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS))
		field[VMX_PROC_BASED2] = 0;	/* ignored by the CPU: keep it clean */

	/* 7. Every MSR loaded on entry must be restored on exit, and back. */
	for (i = 0; i < ARRAY_SIZE(vmx_entry_exit_pairs); i++) {
		bool entry = field[VMX_ENTRY] & vmx_entry_exit_pairs[i].entry;
		bool exit = field[VMX_EXIT] & vmx_entry_exit_pairs[i].exit;

		if (entry == exit)
			continue;
		/* Name the half that is missing. */
		if (entry) {
			out->missing_field = VMX_EXIT;
			out->missing_bit = (unsigned int)__builtin_ctz(vmx_entry_exit_pairs[i].exit);
		} else {
			out->missing_field = VMX_ENTRY;
			out->missing_bit = (unsigned int)__builtin_ctz(vmx_entry_exit_pairs[i].entry);
		}
		return fail(out, VMX_CONTROLS_UNPAIRED);
	}

	return out->status;
}

/*
 * A snprintf-like string builder: writes what fits, always terminates
 * when size > 0, and counts the full length so callers get snprintf's
 * return value.
 */
struct strbuf {
	char *buf;
	size_t size;
	size_t len;
};

static void sb_putc(struct strbuf *sb, char c)
{
	if (sb->len + 1 < sb->size)
		sb->buf[sb->len] = c;
	sb->len++;
}

static void sb_puts(struct strbuf *sb, const char *s)
{
	while (*s)
		sb_putc(sb, *s++);
}

static void sb_putu(struct strbuf *sb, unsigned int v)
{
	char digits[10];
	unsigned int n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		sb_putc(sb, digits[--n]);
}

static int sb_finish(struct strbuf *sb)
{
	if (sb->size)
		sb->buf[sb->len < sb->size ? sb->len : sb->size - 1] = '\0';
	return (int)sb->len;
}

int vmx_format_gate_decision(char *buf, size_t size,
			     const struct vmx_profile_setup *setup,
			     const struct vmx_controls *ctl, unsigned int gate)
{
	struct strbuf sb = { .buf = buf, .size = size };
	const struct vmx_gate *gt;
	const struct vmx_gate_choice *ch;
	unsigned int i;

	if (!setup || gate >= setup->n_gates) {
		sb_puts(&sb, "gate ");
		sb_putu(&sb, gate);
		sb_puts(&sb, ": no such gate");
		return sb_finish(&sb);
	}
	gt = &setup->gates[gate];
	sb_puts(&sb, "gate ");
	sb_puts(&sb, gt->name);
	sb_puts(&sb, ": ");
	if (ctl->gate_choice[gate] >= gt->n_choices) {
		sb_puts(&sb, "undecided (profile refused)");
		return sb_finish(&sb);
	}

	ch = &gt->choices[ctl->gate_choice[gate]];
	sb_puts(&sb, ch->description);
	if (ctl->gate_fell_back[gate]) {
		sb_puts(&sb, " (no ");
		sb_puts(&sb, feature_name(ctl->gate_missing[gate]));
		sb_putc(&sb, ')');
	} else if (ch->n_needs) {
		sb_puts(&sb, " (");
		for (i = 0; i < ch->n_needs; i++) {
			if (i)
				sb_puts(&sb, ", ");
			sb_puts(&sb, feature_name(ch->needs[i]));
		}
		sb_putc(&sb, ')');
	}
	return sb_finish(&sb);
}

/* " (gate NAME" and @tail when a gate caused the refusal. */
static void sb_put_failed_gate(struct strbuf *sb, const struct vmx_profile_setup *setup,
			       const struct vmx_controls *ctl, const char *tail)
{
	if (!setup || ctl->failed_gate >= setup->n_gates)
		return;
	sb_puts(sb, " (gate ");
	sb_puts(sb, setup->gates[ctl->failed_gate].name);
	sb_puts(sb, tail);
}

int vmx_format_refusal(char *buf, size_t size,
		       const struct vmx_profile_setup *setup,
		       const struct vmx_controls *ctl)
{
	struct strbuf sb = { .buf = buf, .size = size };

	sb_puts(&sb, "profile '");
	sb_puts(&sb, setup && setup->profile ? setup->profile : "?");
	sb_puts(&sb, "' ");

	switch (ctl->status) {
	case VMX_CONTROLS_OK:
		sb_puts(&sb, "accepted");
		break;
	case VMX_CONTROLS_MISSING_FEATURE:
		sb_puts(&sb, "refused: this CPU lacks ");
		sb_puts(&sb, feature_name(ctl->missing_feature));
		break;
	case VMX_CONTROLS_NO_GATE_CHOICE:
		sb_puts(&sb, "refused: this CPU lacks ");
		sb_puts(&sb, feature_name(ctl->missing_feature));
		sb_put_failed_gate(&sb, setup, ctl, " has no usable choice)");
		break;
	case VMX_CONTROLS_MISSING_CONTROL:
		sb_puts(&sb, "refused: this CPU cannot set ");
		sb_puts(&sb, vmx_ctl_field_names[ctl->missing_field]);
		sb_puts(&sb, " control bit ");
		sb_putu(&sb, ctl->missing_bit);
		sb_put_failed_gate(&sb, setup, ctl, ")");
		break;
	case VMX_CONTROLS_UNPAIRED:
		sb_puts(&sb, "refused: an MSR loaded on VM entry is not restored on VM exit or the reverse: ");
		sb_puts(&sb, vmx_ctl_field_names[ctl->missing_field]);
		sb_puts(&sb, " control bit ");
		sb_putu(&sb, ctl->missing_bit);
		sb_puts(&sb, " is not set");
		break;
	case VMX_CONTROLS_BAD_SETUP:
	default:
		sb_puts(&sb, "refused: its generated setup is inconsistent");
		break;
	}
	return sb_finish(&sb);
}
