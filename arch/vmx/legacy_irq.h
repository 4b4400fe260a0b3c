/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * legacy_irq.c: the guest's 8259s and 8254 as interrupt sources.
 */
#ifndef EXITPLAN_VMX_LEGACY_IRQ_H
#define EXITPLAN_VMX_LEGACY_IRQ_H

struct vcpu;

/*
 * Bring the guest's 8259s and 8254 up to date on @vcpu (its VMCS
 * current) and deliver what they raised where the guest routed it: the
 * 8259s' INT to the vCPU whose LINT0 takes ExtINT, the 8254's IRQ 0
 * through the I/O APIC entry of its pin.  After an access to their
 * ports or the I/O APIC's, at the 8254's deadline (vCPU 0 keeps it), at
 * an interrupt window the INT waits for, and when posted vm_events.legacy.
 */
void vmx_legacy_irq_update(struct vcpu *vcpu);

#endif /* EXITPLAN_VMX_LEGACY_IRQ_H */
