// SPDX-License-Identifier: GPL-2.0-only
/*
 * The VMX-preemption timer's next value: the earliest of the deadlines
 * that share it (the guest's emulated IA32_TSC_DEADLINE, msr.c; the
 * 8254's, legacy_irq.c; the scheduler's, vcpu_switch.c; the virtual
 * APIC's timer, vlapic_exits.c) and the profile's own period.  Its own
 * file, below all of them: each arms it, and none calls the others.
 */
#include "compiler.h"
#include "cpu.h"
#include "profile.h"
#include "vmcs_fields.h"
#include "vcpu_arch.h"
#include "preemption_timer.h"
#include "vmx_ctls.h"
#include "vmx_controls_bits.h"

/*
 * Program the preemption timer for the earliest of the guest's deadline
 * and the profile's own period (SDM Vol. 3C 26.5.1: it counts down at
 * the TSC rate divided by 2^rate).
 */
void vmx_program_preemption_timer(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t ticks = PROFILE_PREEMPTION_TIMER_VALUE ? PROFILE_PREEMPTION_TIMER_VALUE
							 : UINT32_MAX;

	if (!a->preemption_timer_on) {
		if (!a->preemption_timer_borrowable)
			return;
		/* Borrowed for the 8254 alone: on exactly while it has a deadline. */
		if (!a->pit_deadline) {
			vcpu_ctls_clearbit(vcpu, VMX_PIN_BASED, PIN_BASED_VMX_PREEMPTION_TIMER);
			vcpu_ctls_clearbit(vcpu, VMX_EXIT, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
			return;
		}
		vcpu_ctls_setbit(vcpu, VMX_PIN_BASED, PIN_BASED_VMX_PREEMPTION_TIMER);
		vcpu_ctls_setbit(vcpu, VMX_EXIT, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
		ticks = UINT32_MAX;
	}
	if (a->tsc_deadline) {
		uint64_t now = rdtsc();
		uint64_t left = a->tsc_deadline > now ? (a->tsc_deadline - now) >> a->preemption_rate : 0;

		if (left < ticks)
			ticks = left;
	}
	if (a->pit_deadline) {
		uint64_t now = rdtsc();
		uint64_t left = a->pit_deadline > now ? (a->pit_deadline - now) >> a->preemption_rate : 0;

		if (left < ticks)
			ticks = left;
	}
	/* The scheduler's next decision on a shared CPU (vcpu_switch.c); apic: virtual only. */
	if (PROFILE_APIC_VIRTUAL && a->sched_deadline) {
		uint64_t now = rdtsc();
		uint64_t left = a->sched_deadline > now ? (a->sched_deadline - now) >> a->preemption_rate : 0;

		if (left < ticks)
			ticks = left;
	}
	if (ticks > UINT32_MAX)
		ticks = UINT32_MAX;
	vmcs_write(VMX_PREEMPTION_TIMER_VALUE, ticks);
}
