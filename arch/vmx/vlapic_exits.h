/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vlapic_exits.c: the exits of the virtual local APIC (`apic: virtual`).
 */
#ifndef EXITPLAN_VLAPIC_EXITS_H
#define EXITPLAN_VLAPIC_EXITS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/exit.h"

struct vcpu;

/*
 * vlapic_exits.c (apic: virtual): the virtual local APIC's accesses and
 * injection.  vmx_vlapic_sync() injects its highest deliverable vector or
 * opens the interrupt window, and arms the preemption timer for its timer.
 */
void vmx_vlapic_setup(struct vcpu *vcpu);
bool vmx_vlapic_msr(uint32_t msr);
enum vmx_exit_action vmx_vlapic_rdmsr(struct vcpu *vcpu, uint32_t msr);
enum vmx_exit_action vmx_vlapic_wrmsr(struct vcpu *vcpu, uint32_t msr, uint64_t v);
/* An access to the xAPIC page at @offset (mmio.c's vmx_phys_read(), vmx_phys_write()). */
enum vmx_exit_action vmx_vlapic_mmio_read(struct vcpu *vcpu, unsigned int offset, unsigned int size,
					  uint64_t *v);
enum vmx_exit_action vmx_vlapic_mmio_write(struct vcpu *vcpu, unsigned int offset,
					   unsigned int size, uint32_t v);
void vmx_vlapic_post(struct vcpu *vcpu, uint8_t vector);
void vmx_vlapic_sync(struct vcpu *vcpu);
enum vmx_exit_action vmx_vlapic_preemption_timer(struct vcpu *vcpu);
enum vmx_exit_action vmx_vlapic_interrupt_window(struct vcpu *vcpu);
enum vmx_exit_action vmx_vlapic_hlt(struct vcpu *vcpu);
bool vmx_vlapic_has_interrupt(struct vcpu *vcpu);

#endif /* EXITPLAN_VLAPIC_EXITS_H */
