// SPDX-License-Identifier: GPL-2.0-only
/*
 * Event injection (SDM Vol. 3C 27.6): exceptions, external interrupts, the
 * interrupt window, NMIs.  Below the device models, which inject through
 * it; the exits that call the models (the external-interrupt and
 * interrupt-window exits, NMIs in root) are intr_exits.c's.
 *
 * Two rules from the SDM and from Bochs (docs/PLATFORM.md):
 * an external interrupt is injected only when the guest could take it
 * (RFLAGS.IF = 1, no STI or MOV-SS blocking), otherwise the entry fails;
 * such an interrupt waits in vcpu->arch with interrupt-window exiting on.
 *
 * Interrupts that arrive while one is queued coalesce in the virtual IRR
 * (one bit per vector), as in the APIC's own IRR.  And an interrupt storm
 * cannot starve the guest (vmx_storm_defer()).  A storm's source is a
 * periodic timer: the local APIC's (passthrough, or the virtual one of
 * apic: virtual) or the 8254 through the 8259 -- the sources that
 * interrupt again by themselves however little the guest ran (a one-shot
 * or a deadline is re-armed by the guest, an instruction of its own).
 * Each of its interrupts costs the guest a round of exits (the external-
 * interrupt exit, the injection, the handler, its EOI): about 1100 TSC
 * ticks under the default profile on Bochs, where bare hardware spends
 * only the handler.  When the source's period is shorter than
 * VMX_STORM_ROUNDS rounds, its interrupts go in at most once in that many
 * rounds: the ones due meanwhile coalesce in the IRR (the timer's vector
 * stays in service in the physical APIC, or requested in the virtual
 * APIC's or the 8259's IRR, and makes no exit), held back on the
 * VMX-preemption timer, so that a storm costs the guest at most half of
 * its progress, however dear an exit is.  The round is measured where
 * the vector is to go in where it went in last (the guest ran nothing
 * but its handler since).  A slower timer is never held: it fires on
 * time.  Without the preemption timer to end a hold, or for a slow timer
 * landing where it did last (a `jmp .` loop), the guest gets one
 * instruction first: an entry in the STI shadow with interrupt-window
 * exiting, the same delay STI itself gives.  A timer's moment is the
 * source's to choose: hardware could have delivered it later too.  Only
 * the timer's: any other vector (a self-IPI sent with IF=0, a second one
 * pending behind the first, an IPI, a device's) is taken at the first
 * instruction boundary where the guest can take it, as hardware takes it
 * (SDM Vol. 3A 6.8.3, 11.8.4): a loop that sends itself an IPI and takes
 * it in `sti; nop` comes back to the same RIP every time, and delaying it
 * past the next instruction (a CLI) would hold it back until the guest
 * sets IF again.
 */
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "arch/vmx/events.h"
#include "exit_handlers.h"
#include "arch/vmx/mmio.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "arch/vmx/vcpu_asm.h"
#include "vmcs_fields.h"
#include "runtime/vm/vmm.h"
#include "arch/vmx/vcpu_arch.h"
#include "profile.h"		/* generated per profile */
#include "arch/vmx/vcpu_stop.h"
#include "runtime/host/phys_apic.h"
#include "arch/vmx/vmx_ctls.h"
#include "vmx_controls_bits.h"
#include "arch/vmx/preemption_timer.h"

/*
 * A round of an interrupt storm (the exits, the injection, the guest's
 * handler and EOI) takes about 1100 ticks under the default profile on
 * Bochs.  A round is measured whenever the timer's vector is to go in
 * where it went in last (the guest ran nothing but its handler since);
 * until one is, VMX_STORM_ROUND_TICKS stands for it.  A longer "round"
 * than VMX_STORM_ROUND_MAX_TICKS is no round (a timer interrupting a
 * `jmp .` loop also lands where the last one did) and is not taken as one.
 */
#define VMX_STORM_ROUND_TICKS		1200
#define VMX_STORM_ROUND_MAX_TICKS	5000
/*
 * A storm's interrupts go in at most once in VMX_STORM_ROUNDS rounds: the
 * guest keeps two rounds in three (less the exit that ends a hold), at
 * least half of what it makes on bare hardware, where each interrupt
 * costs it only its handler.  A periodic timer slower than that is no
 * storm and is never held.
 */
#define VMX_STORM_ROUNDS		4

void vmx_inject_exception(struct vcpu *vcpu, unsigned int vector, bool has_error,
			  uint32_t error_code)
{
	uint32_t info = INTR_INFO_VALID | INTR_INFO_TYPE_HW_EXCEPTION | vector;

	(void)vcpu;
	if (has_error) {
		info |= INTR_INFO_DELIVER_CODE;
		vmcs_write(VM_ENTRY_EXCEPTION_ERROR_CODE, error_code);
	}
	/*
	 * A fault is delivered with RIP at the faulting instruction: the
	 * handler does not advance RIP.  An exception may be injected in an
	 * STI shadow (only external interrupts and NMIs are blocked by it,
	 * SDM 26.3.1.5), so the interruptibility state stays as it is.
	 */
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, info);
}

void vmx_inject_gp(struct vcpu *vcpu)
{
	vmx_inject_exception(vcpu, X86_EXC_GP, true, 0);
}

void vmx_inject_ud(struct vcpu *vcpu)
{
	vmx_inject_exception(vcpu, X86_EXC_UD, false, 0);
}

bool vmx_guest_interruptible(void)
{
	return (vmcs_read(GUEST_RFLAGS) & X86_RFLAGS_IF) &&
	       !(vmcs_read32(GUEST_INTERRUPTIBILITY_INFO) &
		 (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

/* The highest queued vector, or -1 (the APIC, too, delivers the highest first). */
static int irr_highest(const struct vcpu_arch_state *a)
{
	for (int w = 3; w >= 0; w--) {
		if (a->irr[w])
			return w * 64 + 63 - __builtin_clzll(a->irr[w]);
	}
	return -1;
}

/*
 * The period in TSC ticks of the local APIC timer if @vector is its
 * vector and it is periodic, else 0: the one source that interrupts again
 * by itself however little the guest ran (a one-shot or a deadline is
 * re-armed by the guest, an instruction of its own).  Not the timer's
 * vector alone: a guest may share it with its IPIs (kvm-unit-tests'
 * vmexit does).  The timer counts at the TSC's rate (cpuid.c's leaf 15H)
 * divided by its divide configuration (SDM Vol. 3A 11.5.4).  The virtual
 * APIC injects on its own (vlapic_exits.c): this path has only the
 * 8259s' vectors there.
 */
static uint64_t storm_period(int vector)
{
	uint32_t lvt, dcr, x;

	if (PROFILE_APIC_VIRTUAL)
		return 0;
	lvt = phys_apic_read(XAPIC_REG_LVT_TIMER);
	if ((lvt & (APIC_LVT_MASKED | APIC_LVT_TIMER_MODE_MASK)) != APIC_LVT_TIMER_MODE_PERIODIC ||
	    vector != (int)(lvt & APIC_LVT_VECTOR_MASK))
		return 0;
	dcr = phys_apic_read(XAPIC_REG_TIMER_DIV_CONF);
	x = ((dcr >> 1) & 4) | (dcr & 3);	/* divide by 2^(x+1); 7: by 1 */
	return (uint64_t)phys_apic_read(XAPIC_REG_TIMER_INIT_COUNT) << ((x + 1) & 7);
}

/*
 * Hold the storm's @vector back (the file comment) until the round's
 * share of the guest's time is over; false when the VMX-preemption timer,
 * which ends the hold, is not there to borrow.
 */
static bool vmx_storm_hold(struct vcpu *vcpu, uint64_t until)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (!a->preemption_timer_on && !a->preemption_timer_borrowable)
		return false;
	a->storm_hold_until = until;
	a->storm_steps++;
	vmx_set_intr_window(vcpu, false);
	vmx_program_preemption_timer(vcpu);
	return true;
}

/* vmx_storm_defer(), inline where events.c injects. */
static __always_inline bool storm_defer(struct vcpu *vcpu, uint64_t period)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t rip = vmcs_read(GUEST_RIP), now = rdtsc();

	/* Held: the preemption timer's exit at the hold's end injects it (handle_preemption_timer()). */
	if (a->storm_hold_until) {
		if (now < a->storm_hold_until)
			return true;
		a->storm_hold_until = 0;
	}
	if (period) {
		uint64_t round = a->storm_round ? a->storm_round : VMX_STORM_ROUND_TICKS;
		bool same_rip = a->last_inject_valid && rip == a->last_inject_rip && !a->inject_stepped &&
				vmcs_read32(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_ACTIVE;

		/* The guest ran only its handler since: what a round costs. */
		if (same_rip && a->storm_last_tsc && now - a->storm_last_tsc <= VMX_STORM_ROUND_MAX_TICKS)
			round = a->storm_round = now - a->storm_last_tsc;
		if (period < VMX_STORM_ROUNDS * round && a->storm_last_tsc &&
		    now - a->storm_last_tsc < VMX_STORM_ROUNDS * round) {
			a->inject_stepped = true;
			if (vmx_storm_hold(vcpu, a->storm_last_tsc + VMX_STORM_ROUNDS * round))
				return true;
		}
		if (same_rip) {
			/* No hold: one instruction first (the STI shadow needs RFLAGS.IF, which is set). */
			a->inject_stepped = true;
			a->storm_steps++;
			vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
				   vmcs_read32(GUEST_INTERRUPTIBILITY_INFO) | GUEST_INTR_STATE_STI);
			vmx_set_intr_window(vcpu, true);
			return true;
		}
		a->storm_last_tsc = now;
	}
	a->inject_stepped = false;
	a->last_inject_rip = rip;
	a->last_inject_tsc = now;
	a->last_inject_valid = true;
	return false;
}

/* events.h says what; the storm rule is the file comment's. */
bool vmx_storm_defer(struct vcpu *vcpu, uint64_t period)
{
	return storm_defer(vcpu, period);
}

/*
 * vmx_inject_pending(), and with @alone vmx_inject_alone(): @fresh is to
 * go in where none is queued, so it is the highest; it is queued in the
 * IRR only when it cannot go in now.
 */
static __always_inline bool inject_pending(struct vcpu *vcpu, int fresh, bool alone, bool oneshot)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t period;
	int vector;

	if (!alone && !a->irq_pending)
		return false;
	if (a->storm_hold_until && rdtsc() < a->storm_hold_until)
		goto held;
	if (!vmx_guest_interruptible() ||
	    (vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID)) {
		vmx_set_intr_window(vcpu, true);
		goto held;
	}
	vector = alone ? fresh : irr_highest(a);
	if (vector == a->pit_storm_vector && a->pit_storm_period)
		period = a->pit_storm_period;
	else
		period = oneshot ? 0 : storm_period(vector);
	if (storm_defer(vcpu, period))
		goto held;
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD,
		   INTR_INFO_VALID | INTR_INFO_TYPE_EXT_INTR | (uint32_t)vector);
	/* An interrupt wakes a halted guest (Bochs may have left it in HLT). */
	vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	if (!alone) {
		a->irr[vector / 64] &= ~(1ull << (vector % 64));
		a->irq_pending = a->irr[0] | a->irr[1] | a->irr[2] | a->irr[3];
	}
	/*
	 * Acknowledge-on-exit moved the vector to the APIC's ISR when it
	 * arrived, so its IRR could latch it again meanwhile; on the CPU the
	 * guest thinks it is, the interrupt stayed in the IRR until now and
	 * the second request coalesced with it.  The one the APIC latched is
	 * dropped when it arrives (an edge: a level-triggered one is its
	 * source's to re-assert).  Not for an interrupt injected at its own
	 * exit: it was not held back, and one arriving now would come after
	 * it on hardware too.
	 */
	if (!PROFILE_INTERRUPTS_DIRECT && vector != fresh &&
	    vmx_apic_irr_pending_edge((uint8_t)vector))
		a->coalesce[vector / 64] |= 1ull << (vector % 64);
	/* More queued: the window exit after this one's delivery injects the next. */
	vmx_set_intr_window(vcpu, a->irq_pending);
	return true;
held:
	/* Not now: it waits in the IRR for the window, or the hold's end. */
	if (alone) {
		a->irr[fresh / 64] |= 1ull << (fresh % 64);
		a->irq_pending = true;
	}
	return false;
}

bool vmx_inject_pending(struct vcpu *vcpu, int fresh)
{
	return inject_pending(vcpu, fresh, false, false);
}

bool vmx_inject_alone(struct vcpu *vcpu, uint8_t vector, bool oneshot)
{
	return oneshot ? inject_pending(vcpu, vector, true, true) :
			 inject_pending(vcpu, vector, true, false);
}

/* --- NMIs ---------------------------------------------------------------- */

/*
 * An NMI that reaches the hypervisor (an NMI arriving in VMX root
 * operation, or an NMI exit) and is not the host's flagged kick
 * (apic.c) is the guest's: the local APIC and LINT1 belong to it.  It is
 * delivered to the guest as a virtual NMI on the next VM entry, or as
 * soon as the guest can take one (SDM Vol. 3C 27.6.1.2 and the VM-entry
 * checks of 27.3.1.5: not while "blocking by NMI", STI or MOV-SS blocking
 * is in force, nor together with another injected event).  Like the
 * CPU's own NMI latch it holds one: more NMIs meanwhile coalesce into it.
 */
static void vmx_set_nmi_window(struct vcpu *vcpu, bool on)
{
	/* NMI-window exiting exists only with virtual NMIs (SDM 26.2.1.1). */
	if (!on)
		vcpu_ctls_clearbit(vcpu, VMX_PROC_BASED, CPU_BASED_NMI_WINDOW_EXITING);
	else if (vcpu_ctls(vcpu, VMX_PIN_BASED) & PIN_BASED_VIRTUAL_NMIS)
		vcpu_ctls_setbit(vcpu, VMX_PROC_BASED, CPU_BASED_NMI_WINDOW_EXITING);
}

/* Inject the queued NMI if the guest can take it now; true when it was. */
static bool vmx_try_inject_nmi(struct vcpu *vcpu)
{
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);

	if ((vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID) ||
	    (intr & (GUEST_INTR_STATE_NMI | GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS))) {
		/*
		 * With virtual NMIs the NMI-window exit says when; without,
		 * the NMI is tried again at every exit until it goes in.
		 */
		vmx_set_nmi_window(vcpu, true);
		return false;
	}
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, INTR_INFO_VALID | INTR_INFO_TYPE_NMI | X86_EXC_NMI);
	/* An NMI ends HLT (SDM Vol. 3C 27.6.1.2 does not keep the activity state for it). */
	if (vmcs_read32(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
		vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	vmx_set_nmi_window(vcpu, false);
	return true;
}

/* Called by the exit stub just before VMRESUME when vcpu->nmi_pending is set. */
void vmx_deliver_pending_nmi(struct vcpu *vcpu)
{
	if (vcpu->nmi_pending & VCPU_NMI_KICK) {
		/*
		 * A kick taken in root (vmm_nmi_in_root()): a VMX-preemption
		 * timer of 0 exits before the guest's first instruction (SDM
		 * Vol. 3C, VM entries, "VMX-Preemption Timer"), and its handler
		 * takes the events (msr.c).  A profile without the timer
		 * borrows it for that exit, whose handler gives it back
		 * (vmx_program_preemption_timer()).
		 */
		__atomic_and_fetch(&vcpu->nmi_pending, ~(uint32_t)VCPU_NMI_KICK, __ATOMIC_RELAXED);
		if (!vcpu->arch->preemption_timer_on && vcpu->arch->preemption_timer_borrowable) {
			vcpu_ctls_setbit(vcpu, VMX_PIN_BASED, PIN_BASED_VMX_PREEMPTION_TIMER);
			vcpu_ctls_setbit(vcpu, VMX_EXIT, VM_EXIT_SAVE_VMX_PREEMPTION_TIMER);
		}
		if (vcpu->arch->preemption_timer_on || vcpu->arch->preemption_timer_borrowable)
			vmcs_write(VMX_PREEMPTION_TIMER_VALUE, 0);
		if (!(vcpu->nmi_pending & (VCPU_NMI_ARRIVED | VCPU_NMI_QUEUED)))
			return;
	}
	/* ARRIVED becomes QUEUED: one NMI, however many arrived. */
	__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_QUEUED, __ATOMIC_RELAXED);
	__atomic_and_fetch(&vcpu->nmi_pending, ~(uint32_t)VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
	if (vmx_try_inject_nmi(vcpu))
		__atomic_and_fetch(&vcpu->nmi_pending, ~(uint32_t)VCPU_NMI_QUEUED,
				   __ATOMIC_RELAXED);
}

/* NMI-window exit (virtual NMIs only): the guest can take its NMI now. */
enum vmx_exit_action handle_nmi_window(struct vcpu *vcpu)
{
	vmx_set_nmi_window(vcpu, false);
	/* The stub's test before VMRESUME injects it. */
	if (vcpu->nmi_pending & VCPU_NMI_QUEUED)
		__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
	return VMX_EXIT_RESUME;
}

/* An NMI exit (NMI exiting): queue it like one that arrived in root. */
void vmx_queue_nmi(struct vcpu *vcpu)
{
	__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
}
