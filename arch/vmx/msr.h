/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * msr.c: the guest's MSRs as the exits and the VMCS setup use them.
 */
#ifndef EXITPLAN_VMX_MSR_H
#define EXITPLAN_VMX_MSR_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/vmx_ctls.h"
#include "vmx_controls_bits.h"

struct vcpu;

/*
 * msr.c, vcpu_switch.c: IA32_XSS exists for the guest exactly when its CPUID shows XSAVES
 * (cpuid.c hides it without "enable XSAVES/XRSTORS").  Its value is the
 * CPU's own, which the guest's XSAVES uses; the host never executes XSAVES.
 */
static inline bool vcpu_xss_shown(const struct vcpu *vcpu)
{
	return vcpu_ctls(vcpu, VMX_PROC_BASED2) & SECONDARY_EXEC_ENABLE_XSAVES;
}

void vcpu_setup_msrs(struct vcpu *vcpu);
/*
 * The guest MSRs that live in the CPU while the guest runs (vcpu_switch.c):
 * which this vCPU has, at setup; saved when a shared vCPU is switched
 * out, loaded when it is switched in.
 */
void vmx_resident_msrs_setup(struct vcpu *vcpu);
void vmx_resident_msrs_save(struct vcpu *vcpu);
void vmx_resident_msrs_load(struct vcpu *vcpu);
/*
 * The guest's IA32_EFER wherever it lives: the VMCS guest field when VM
 * entry loads it, else the manual-switch slot (vcpu->msrs).
 */
uint64_t vcpu_guest_efer(struct vcpu *vcpu);
void vcpu_set_guest_efer(struct vcpu *vcpu, uint64_t efer);

#endif /* EXITPLAN_VMX_MSR_H */
