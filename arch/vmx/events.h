/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * events.c: event injection (SDM Vol. 3C 27.6 "Event Injection"): exceptions,
 * external interrupts, NMIs, and the interrupt window.
 */
#ifndef EXITPLAN_VMX_EVENTS_H
#define EXITPLAN_VMX_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/vcpu_arch.h"
#include "vmcs_fields.h"
#include "vmx_controls_bits.h"
#include "arch/vmx/vmx_ctls.h"
#include "arch/vmx/vmx_ops.h"

void vmx_inject_gp(struct vcpu *vcpu);
void vmx_inject_ud(struct vcpu *vcpu);
void vmx_inject_exception(struct vcpu *vcpu, unsigned int vector, bool has_error,
			  uint32_t error_code);
/*
 * Inject the highest queued interrupt if the guest can take it now and no
 * other event is being injected, else keep the window open; true when one
 * was.  @fresh: the vector whose exit this is (injected as it arrives), or
 * -1.
 */
bool vmx_inject_pending(struct vcpu *vcpu, int fresh);
/*
 * The same for @vector where none is queued (irq_pending clear): it is
 * the highest without a look, and queued in the IRR only if it cannot go
 * in now.  @oneshot: its source interrupts only when re-armed (the TSC
 * deadline), never a storm's, so the LVT timer is not read for its
 * period.
 */
bool vmx_inject_alone(struct vcpu *vcpu, uint8_t vector, bool oneshot);
/*
 * The interrupt-storm rule (events.c) for an external interrupt about to
 * be injected, its source a periodic timer of @period TSC ticks (0: any
 * other source).  True: held back for now (the VMX-preemption timer or
 * the interrupt window brings it back); false: inject it now.
 */
bool vmx_storm_defer(struct vcpu *vcpu, uint64_t period);
bool vmx_guest_interruptible(void);

/* Inject the highest queued interrupt if possible (after HLT, interrupt window). */
static inline bool vmx_try_inject_pending(struct vcpu *vcpu)
{
	return vmx_inject_pending(vcpu, -1);
}

/* vmx_deliver_irq() and vmx_deliver_oneshot_irq(). */
static inline void vmx_queue_irq(struct vcpu *vcpu, uint8_t vector, bool oneshot)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t bit = 1ull << (vector % 64);
	bool queued;

	if (!a->irq_pending) {
		vmx_inject_alone(vcpu, vector, oneshot);
		return;
	}
	queued = a->irr[vector / 64] & bit;
	a->irr[vector / 64] |= bit;
	vmx_inject_pending(vcpu, queued ? -1 : vector);
}

/*
 * Queue @vector; inject the highest queued one now if the guest can take
 * it, else open a window.  Inline: the external-interrupt exit
 * (intr_exits.c) and the device models each get it without a call.
 */
static inline void vmx_deliver_irq(struct vcpu *vcpu, uint8_t vector)
{
	vmx_queue_irq(vcpu, vector, false);
}

/* The same for a one-shot source's @vector (vmx_inject_alone()). */
static inline void vmx_deliver_oneshot_irq(struct vcpu *vcpu, uint8_t vector)
{
	vmx_queue_irq(vcpu, vector, true);
}

/*
 * An exit that interrupted the delivery of an event through the guest's
 * IDT (SDM Vol. 3C 28.2.4): deliver it again on the next entry, or it is
 * lost (KVM's vmx_complete_interrupts).
 */
static inline void vmx_reinject_idt_vectoring(void)
{
	uint32_t idt = vmcs_read32(IDT_VECTORING_INFO_FIELD);
	uint32_t type = idt & INTR_INFO_TYPE_MASK;

	if (!(idt & INTR_INFO_VALID))
		return;
	if (idt & INTR_INFO_DELIVER_CODE)
		vmcs_write(VM_ENTRY_EXCEPTION_ERROR_CODE, vmcs_read32(IDT_VECTORING_ERROR_CODE));
	if (type == INTR_INFO_TYPE_SW_INT || type == INTR_INFO_TYPE_PRIV_SW_EXC ||
	    type == INTR_INFO_TYPE_SW_EXC)
		vmcs_write(VM_ENTRY_INSTRUCTION_LEN, vmcs_read32(VM_EXIT_INSTRUCTION_LEN));
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, idt & (INTR_INFO_VALID | INTR_INFO_TYPE_MASK |
						    INTR_INFO_VECTOR_MASK | INTR_INFO_DELIVER_CODE));
}

/* An NMI for the guest (NMI exit): injected before the next VMRESUME when it can be. */
void vmx_queue_nmi(struct vcpu *vcpu);
/* The exit stub's call when vcpu->nmi_pending is set. */
void vmx_deliver_pending_nmi(struct vcpu *vcpu);
/*
 * Interrupt-window exiting on or off (inline: the window exit and the
 * injection both set it); with it HLT exiting where the profile has none
 * (vcpu_arch.h: a HLT would wait past the window on Bochs).
 */
static inline void vmx_set_intr_window(struct vcpu *vcpu, bool on)
{
	if (on)
		vcpu_ctls_setbit(vcpu, VMX_PROC_BASED, vcpu->arch->intr_window_ctls);
	else
		vcpu_ctls_clearbit(vcpu, VMX_PROC_BASED, vcpu->arch->intr_window_ctls);
}

#endif /* EXITPLAN_VMX_EVENTS_H */
