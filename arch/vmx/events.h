/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * events.c: event injection (SDM Vol. 3C 27.6 "Event Injection"): exceptions,
 * external interrupts, NMIs, and the interrupt window.
 */
#ifndef EXITPLAN_VMX_EVENTS_H
#define EXITPLAN_VMX_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

void vmx_inject_gp(struct vcpu *vcpu);
void vmx_inject_ud(struct vcpu *vcpu);
void vmx_inject_exception(struct vcpu *vcpu, unsigned int vector, bool has_error,
			  uint32_t error_code);
/* Queue @vector; inject the highest queued one now if the guest can take it, else open a window. */
void vmx_deliver_irq(struct vcpu *vcpu, uint8_t vector);
/* Inject the highest queued interrupt if possible (after HLT, interrupt window). */
bool vmx_try_inject_pending(struct vcpu *vcpu);
bool vmx_guest_interruptible(void);
/* Re-inject the event an exit interrupted the delivery of (IDT-vectoring information). */
void vmx_reinject_idt_vectoring(void);
/* An NMI for the guest (NMI exit): injected before the next VMRESUME when it can be. */
void vmx_queue_nmi(struct vcpu *vcpu);
/* The exit stub's call when vcpu->nmi_pending is set. */
void vmx_deliver_pending_nmi(struct vcpu *vcpu);
/* Interrupt-window exiting on or off. */
void vmx_set_intr_window(struct vcpu *vcpu, bool on);

#endif /* EXITPLAN_VMX_EVENTS_H */
