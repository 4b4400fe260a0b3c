/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Switching MSRs by hand (the `manual` MSR mechanism): the code every
 * profile shares.  The generated msr_switch.h says which MSRs a profile
 * switches this way and gets this header through the interface header
 * (arch/vmx/generated_api.h) after defining PROFILE_MANUAL_MSRS(X), one
 * X(NAME, INDEX, SWITCHED, GATE, MANUAL, SAVE) per MSR:
 *   NAME      its spec/msrs.yaml name; its slot in struct profile_msr_state
 *             is PROFILE_MANUAL_MSR_<NAME> (msr_policy.h)
 *   INDEX     its MSR_* index
 *   SWITCHED  the bits this code switches (PROFILE_SWITCHED_<NAME>)
 *   GATE      the gate whose fallback switches it by hand (PROFILE_GATE_*),
 *             or -1 when the profile always switches it by hand
 *   MANUAL    the gate_choice[] value of that fallback (0 when GATE is -1)
 *   SAVE      1 when the guest writes it without exiting (passthrough), so
 *             its value is read back after every exit; 0 when writes exit
 *             and the WRMSR handler keeps the guest's value
 *
 * profile_msrs_on_exit() runs right after the VM exit, before anything in
 * the host may depend on these MSRs, and profile_msrs_before_entry() right
 * before VMRESUME/VMLAUNCH.  Every argument is a constant, so each X()
 * compiles to the code one would write by hand for that MSR, and a profile
 * that switches nothing by hand gets empty functions.
 */
#ifndef EXITPLAN_MANUAL_MSRS_H
#define EXITPLAN_MANUAL_MSRS_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/cpu.h"
#include "msr_policy.h"
#include "arch/vmx/vcpu.h"
#include "arch/vmx/vmx_controls.h"

#ifndef PROFILE_MANUAL_MSRS
#error "manual_msrs.h needs PROFILE_MANUAL_MSRS: include the generated msr_switch.h"
#endif

/* Is the MSR switched by hand on this CPU: always, or its gate fell back? */
static inline bool profile_msr_is_manual(const struct vcpu *vcpu, int gate, unsigned int manual)
{
	return gate < 0 || vcpu->controls->gate_choice[gate] == manual;
}

/*
 * A WRMSR is skipped when guest and host agree on the switched bits, as
 * KVM does for EFER: WRMSR to EFER flushes the TLB, and any WRMSR
 * serialises.
 */
static inline void profile_msr_load_host(struct profile_msr_state *s, unsigned int slot,
					 uint32_t msr, uint64_t switched)
{
	if ((s->guest[slot] ^ s->host[slot]) & switched)
		wrmsr(msr, s->host[slot]);
}

static inline void profile_msr_load_guest(struct profile_msr_state *s, unsigned int slot,
					  uint32_t msr, uint64_t switched)
{
	if ((s->guest[slot] ^ s->host[slot]) & switched)
		wrmsr(msr, (s->guest[slot] & switched) | (s->host[slot] & ~switched));
}

/* The host's values, read once per vCPU before its first entry. */
static inline void profile_msrs_save_host(struct vcpu *vcpu)
{
#define X(name, index, switched, gate, manual, save)				\
	vcpu->msrs.host[PROFILE_MANUAL_MSR_##name] = rdmsr(index);
	PROFILE_MANUAL_MSRS(X)
#undef X
	(void)vcpu;
}

/*
 * After a VM exit: save what the guest may have written without exiting,
 * then give the host its values back.
 */
static inline void profile_msrs_on_exit(struct vcpu *vcpu)
{
#define X(name, index, switched, gate, manual, save)				\
	if (profile_msr_is_manual(vcpu, gate, manual)) {			\
		if (save)							\
			vcpu->msrs.guest[PROFILE_MANUAL_MSR_##name] = rdmsr(index); \
		profile_msr_load_host(&vcpu->msrs, PROFILE_MANUAL_MSR_##name,	\
				      index, switched);				\
	}
	PROFILE_MANUAL_MSRS(X)
#undef X
	(void)vcpu;
}

/* Before VM entry: load the guest's values. */
static inline void profile_msrs_before_entry(struct vcpu *vcpu)
{
#define X(name, index, switched, gate, manual, save)				\
	if (profile_msr_is_manual(vcpu, gate, manual))				\
		profile_msr_load_guest(&vcpu->msrs, PROFILE_MANUAL_MSR_##name,	\
				       index, switched);
	PROFILE_MANUAL_MSRS(X)
#undef X
	(void)vcpu;
}

/*
 * The slot in vcpu->msrs that holds the guest's value of @msr when this
 * profile switches it by hand on this CPU, for the RDMSR/WRMSR handlers;
 * -1 when the guest's value is elsewhere (VMCS, hardware, load list).
 */
static inline int profile_msr_manual_slot(const struct vcpu *vcpu, uint32_t msr)
{
#define X(name, index, switched, gate, manual, save)				\
	if (msr == (index))							\
		return profile_msr_is_manual(vcpu, gate, manual) ?		\
		       PROFILE_MANUAL_MSR_##name : -1;
	PROFILE_MANUAL_MSRS(X)
#undef X
	(void)vcpu;
	(void)msr;
	return -1;
}

#endif /* EXITPLAN_MANUAL_MSRS_H */
