// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest MSRs that stay in the CPU (msr.h): which a vCPU has, at its
 * setup (vmx.c), and their save and load when vCPUs share a CPU
 * (vcpu_switch.c).  Its own file: the scheduler's switch needs them,
 * and msr.c, whose exits reach the scheduler, must not be needed back.
 *
 * Which MSRs: msr_resident[] (spec/msrs.yaml `resident`, which says why
 * these; generated/common/msr_table.c), in their save and load order.
 */
#include "msr_index.h"
#include "msr_table.h"
#include "msr_policy.h"
#include "runtime/host/msr_safe.h"
#include "msr_switch.h"
#include "runtime/host/cpu.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/msr.h"

/* Switched by the profile (the VM-entry load list, or by hand): its copy is per vCPU already. */
static bool msr_switched_by_profile(const struct vcpu *vcpu, uint32_t msr)
{
	for (unsigned int i = 0; i < profile_msr_load_list_count; i++)
		if (profile_msr_load_list[i] == msr)
			return true;
	return profile_msr_manual_slot(vcpu, msr) >= 0;
}

/*
 * Which of them this CPU has (a RDMSR that does not fault) and the guest
 * can reach, with their values now (the guest's start values: the CPU's
 * at setup, as a vCPU alone on its CPU sees them).  Once, when the vCPU
 * is set up: INIT leaves them as they are (SDM Vol. 3A Table 10-1), so
 * a STARTUP keeps the saved values.
 */
void vmx_resident_msrs_setup(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	a->resident_msrs = 0;
	for (unsigned int i = 0; i < MSR_RESIDENT_COUNT; i++) {
		uint32_t msr = msr_resident[i];

		if ((msr == MSR_IA32_XSS && !vcpu_xss_shown(vcpu)) || msr_switched_by_profile(vcpu, msr))
			continue;
		if (vmx_msr_access_safe(msr, &a->resident_msr[i], false))
			a->resident_msrs |= 1u << i;
	}
}

void vmx_resident_msrs_save(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	for (unsigned int i = 0; i < MSR_RESIDENT_COUNT; i++)
		if (a->resident_msrs & (1u << i))
			a->resident_msr[i] = rdmsr(msr_resident[i]);
}

void vmx_resident_msrs_load(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* Values the CPU took before (from the guest's WRMSR or at setup): no fault. */
	for (unsigned int i = 0; i < MSR_RESIDENT_COUNT; i++)
		if (a->resident_msrs & (1u << i))
			wrmsr(msr_resident[i], a->resident_msr[i]);
}
