// SPDX-License-Identifier: GPL-2.0-only
/*
 * The VMX-preemption timer's next value: the earliest of the deadlines
 * that share it (the guest's emulated IA32_TSC_DEADLINE, msr.c; the
 * 8254's, legacy_irq.c; the scheduler's, vcpu_switch.c; the virtual
 * APIC's timer, vlapic_exits.c), the end of a storm's hold (events.c),
 * the hypervisor's own deadline
 * (vmx_hv_deadline) and the profile's own period.  Its own
 * file, below all of them: each arms it, and none calls the others.
 */
#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "profile.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/preemption_timer.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/vmx_ctls.h"
#include "vmx_controls_bits.h"

uint64_t vmx_hv_deadline;
uint64_t vmx_hv_deadline_ticks;

enum vmx_exit_action vmx_hv_deadline_stop(struct vcpu *vcpu)
{
	return vcpu_stop(vcpu, "the hypervisor's deadline passed: deadline=%llu TSC ticks after the "
			 "launch, and the guest had not ended", (unsigned long long)vmx_hv_deadline_ticks);
}

/* Ticks of the preemption timer from @now to the TSC value @deadline. */
static inline uint64_t ticks_to(const struct vcpu_arch_state *a, uint64_t now, uint64_t deadline)
{
	return deadline > now ? (deadline - now) >> a->preemption_rate : 0;
}

/*
 * Program the preemption timer for the earliest of the guest's deadline
 * and the profile's own period (SDM Vol. 3C 26.5.1: it counts down at
 * the TSC rate divided by 2^rate).  One TSC read for all of them.
 */
void vmx_program_preemption_timer(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t ticks = PROFILE_PREEMPTION_TIMER_VALUE ? PROFILE_PREEMPTION_TIMER_VALUE
							 : UINT32_MAX;
	uint64_t now;

	if (!a->preemption_timer_on) {
		if (!a->preemption_timer_borrowable)
			return;
		/* Borrowed for the 8254, a storm's hold and the hypervisor's deadline: on while one is set. */
		if (!a->pit_deadline && !a->storm_hold_until && !vmx_hv_deadline) {
			vcpu_ctls_clearbit(vcpu, VMX_PIN_BASED, PIN_BASED_VMX_PREEMPTION_TIMER);
			vcpu_ctls_clearbit(vcpu, VMX_EXIT, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
			return;
		}
		vcpu_ctls_setbit(vcpu, VMX_PIN_BASED, PIN_BASED_VMX_PREEMPTION_TIMER);
		vcpu_ctls_setbit(vcpu, VMX_EXIT, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
		ticks = UINT32_MAX;
	}
	now = rdtsc();
	if (a->tsc_deadline && ticks_to(a, now, a->tsc_deadline) < ticks)
		ticks = ticks_to(a, now, a->tsc_deadline);
	if (a->pit_deadline && ticks_to(a, now, a->pit_deadline) < ticks)
		ticks = ticks_to(a, now, a->pit_deadline);
	/* The scheduler's next decision on a shared CPU (vcpu_switch.c); apic: virtual only. */
	if (PROFILE_APIC_VIRTUAL && a->sched_deadline && ticks_to(a, now, a->sched_deadline) < ticks)
		ticks = ticks_to(a, now, a->sched_deadline);
	/* Queued interrupts held back under a storm (events.c). */
	if (a->storm_hold_until && ticks_to(a, now, a->storm_hold_until) < ticks)
		ticks = ticks_to(a, now, a->storm_hold_until);
	if (vmx_hv_deadline && ticks_to(a, now, vmx_hv_deadline) < ticks)
		ticks = ticks_to(a, now, vmx_hv_deadline);
	if (ticks > UINT32_MAX)
		ticks = UINT32_MAX;
	vmcs_write(VMX_PREEMPTION_TIMER_VALUE, ticks);
}
