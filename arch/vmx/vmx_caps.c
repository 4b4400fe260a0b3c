// SPDX-License-Identifier: GPL-2.0-only
/*
 * The capability MSRs, IA32_FEATURE_CONTROL, and the checks and gate
 * lines of the controls the profile computed from them.
 */

#include "runtime/host/spinlock.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vmx_setup.h"
#include "vmx_controls_bits.h"
#include "runtime/host/console.h"
#include "arch/vmx/profile_values.h"

/* --- capabilities ------------------------------------------------------ */

void vmx_read_caps(struct vmx_caps *c)
{
	uint32_t eax, ebx, ecx, edx;

	*c = (struct vmx_caps){ 0 };
	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	c->cpuid_1_ecx = ecx;
	c->cpuid_1_edx = edx;
	if (!(ecx & CPUID_1_ECX_VMX))
		return;

	c->basic = rdmsr(MSR_IA32_VMX_BASIC);
	c->pinbased = rdmsr(MSR_IA32_VMX_PINBASED_CTLS);
	c->procbased = rdmsr(MSR_IA32_VMX_PROCBASED_CTLS);
	c->exit = rdmsr(MSR_IA32_VMX_EXIT_CTLS);
	c->entry = rdmsr(MSR_IA32_VMX_ENTRY_CTLS);
	c->misc = rdmsr(MSR_IA32_VMX_MISC);
	c->cr0_fixed0 = rdmsr(MSR_IA32_VMX_CR0_FIXED0);
	c->cr0_fixed1 = rdmsr(MSR_IA32_VMX_CR0_FIXED1);
	c->cr4_fixed0 = rdmsr(MSR_IA32_VMX_CR4_FIXED0);
	c->cr4_fixed1 = rdmsr(MSR_IA32_VMX_CR4_FIXED1);
	c->vmcs_enum = rdmsr(MSR_IA32_VMX_VMCS_ENUM);
	/* SDM Vol. 3D A.1: the TRUE_* MSRs exist when IA32_VMX_BASIC[55] is 1. */
	if (c->basic & VMX_BASIC_TRUE_CTLS) {
		c->true_pinbased = rdmsr(MSR_IA32_VMX_TRUE_PINBASED_CTLS);
		c->true_procbased = rdmsr(MSR_IA32_VMX_TRUE_PROCBASED_CTLS);
		c->true_exit = rdmsr(MSR_IA32_VMX_TRUE_EXIT_CTLS);
		c->true_entry = rdmsr(MSR_IA32_VMX_TRUE_ENTRY_CTLS);
	}
	/* A.3.3: PROCBASED_CTLS2 exists only if secondary controls can be 1. */
	if ((c->procbased >> 32) & CPU_BASED_ACTIVATE_SECONDARY_CONTROLS) {
		c->procbased2 = rdmsr(MSR_IA32_VMX_PROCBASED_CTLS2);
		/* A.10: EPT_VPID_CAP exists if EPT or VPID can be enabled. */
		if ((c->procbased2 >> 32) & (SECONDARY_EXEC_ENABLE_EPT | SECONDARY_EXEC_ENABLE_VPID))
			c->ept_vpid_cap = rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
		/* A.11: VMFUNC exists if "enable VM functions" can be 1. */
		if ((c->procbased2 >> 32) & SECONDARY_EXEC_ENABLE_VMFUNC)
			c->vmfunc = rdmsr(MSR_IA32_VMX_VMFUNC);
	}
}

/*
 * IA32_FEATURE_CONTROL must be locked with "VMXON outside SMX" set, or
 * VMXON faults (SDM Vol. 3C 24.7).  Firmware normally locks it; if it did
 * not, lock it ourselves as Linux does.
 */
bool vmx_feature_control_ok(void)
{
	uint64_t fc = rdmsr(MSR_IA32_FEATURE_CONTROL);

	if (!(fc & FEAT_CTL_LOCKED)) {
		fc |= FEAT_CTL_LOCKED | FEAT_CTL_VMXON_OUTSIDE_SMX;
		wrmsr(MSR_IA32_FEATURE_CONTROL, fc);
		fc = rdmsr(MSR_IA32_FEATURE_CONTROL);
	}
	return (fc & FEAT_CTL_LOCKED) && (fc & FEAT_CTL_VMXON_OUTSIDE_SMX);
}

void vmx_print_gates(const struct vmx_controls *ctl)
{
	char line[160];

	for (unsigned int g = 0; g < profile_vmx_setup.n_gates; g++) {
		vmx_format_gate_decision(line, sizeof(line), &profile_vmx_setup, ctl, g);
		printk("%s\n", line);
	}
	/*
	 * Without a pause gate (no fallback: one mode, required or none) the
	 * boot still says which PAUSE handling it got: the scheduler's spin
	 * yield depends on it (runtime/vm/sched.h).
	 */
	if (exitplan_profile.gate_pause < 0)
		printk("exitplan: pause: %s (the profile's only choice)\n",
		       (ctl->field[VMX_PROC_BASED2] & SECONDARY_EXEC_PAUSE_LOOP_EXITING) ?
		       "PAUSE-loop exiting" :
		       (ctl->field[VMX_PROC_BASED] & CPU_BASED_PAUSE_EXITING) ?
		       "plain PAUSE exiting" : "no PAUSE exiting");
}

/*
 * The runtime's own rules on the controls (spec/runtime.yaml): bits it
 * needs whatever the profile says, and bits whose VMCS state or exits it
 * does not provide.  The generator refuses a profile breaking either; this
 * is the check at boot of what was generated, before a VM entry could fail.
 */
bool vmx_runtime_controls_ok(const struct vmx_controls *ctl)
{
	for (unsigned int i = 0; i < vmx_runtime_required_control_count; i++) {
		const struct vmx_runtime_control *c = &vmx_runtime_required_controls[i];

		if (c->unless_interrupts_direct && exitplan_profile.interrupts_direct)
			continue;
		if (!(ctl->field[c->field] & c->bit)) {
			printk("exitplan: profile '%s' does not set the '%s' control the runtime needs\n",
			       exitplan_profile.name, c->sdm);
			return false;
		}
	}
	for (unsigned int i = 0; i < vmx_runtime_unsupported_control_count; i++) {
		const struct vmx_runtime_control *c = &vmx_runtime_unsupported_controls[i];

		if (ctl->field[c->field] & c->bit) {
			printk("exitplan: profile '%s' sets the '%s' control, which this runtime does "
			       "not support\n", exitplan_profile.name, c->sdm);
			return false;
		}
	}
	return true;
}

