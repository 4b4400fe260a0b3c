/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * legacy_irq.c: the guest's 8259s and 8254 as interrupt sources.
 */
#ifndef EXITPLAN_VMX_LEGACY_IRQ_H
#define EXITPLAN_VMX_LEGACY_IRQ_H

struct vcpu;

/*
 * legacy_irq.c: the guest's 8259s' INT as an external interrupt of vCPU 0,
 * after an access to their ports or the 8254's, or the 8254's deadline.
 */
void vmx_legacy_irq_update(struct vcpu *vcpu);

#endif /* EXITPLAN_VMX_LEGACY_IRQ_H */
