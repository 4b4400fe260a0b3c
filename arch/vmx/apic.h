/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * apic.c: the guest's local APIC under `apic: passthrough` and
 * `intercept-icr`, its interprocessor interrupts, and the host's kicks.
 */
#ifndef EXITPLAN_VMX_APIC_H
#define EXITPLAN_VMX_APIC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/exit.h"

struct vcpu;

/*
 * apic.c: the guest's interprocessor interrupts.  Under apic: virtual,
 * where the physical APIC is the host's alone, the kick (vmm_kick())
 * that makes a vCPU take its posted events is a fixed IPI with this
 * vector, and an external-interrupt exit with it comes here; the idle
 * CPUs' TSC-deadline timer uses it too (ap_park.c).  Every other APIC
 * model leaves all the physical vectors to the guest: kicks are NMIs.
 */
#define VMX_KICK_VECTOR		0xf2
enum vmx_exit_action vmx_kicked(struct vcpu *vcpu);
/* Take and act on this vCPU's posted events (runtime/vm/vm.h). */
enum vmx_exit_action vmx_take_events(struct vcpu *vcpu);
/* A guest write of the ICR: x2APIC MSR 0x830 (@x2apic) or the xAPIC page. */
enum vmx_exit_action vmx_icr_write(struct vcpu *vcpu, uint64_t icr, bool x2apic);
/*
 * The value a guest's write of @value to the physical APIC register at
 * xAPIC offset @reg may take: an LVT entry with SMI, INIT or a reserved
 * delivery mode masked (apic_lvt_delivery_allowed()), the first reported.
 */
uint32_t vmx_apic_lvt_checked(unsigned int reg, uint32_t value);
/* A guest write to the xAPIC page at @offset that exited (ept_exits.c): emulate it. */
enum vmx_exit_action vmx_xapic_write(struct vcpu *vcpu, unsigned int offset, uint32_t value,
				     unsigned int size);
/*
 * A load from the xAPIC page that exited (not mapped, or the read of an
 * emulated read-modify-write): its value.  Bytes 4-15 of a register's
 * 16-byte slot read 0, and so does any access that reaches them.
 */
void vmx_xapic_read(struct vcpu *vcpu, unsigned int offset, unsigned int size, uint64_t *value);
/* The guest's IA32_APIC_BASE changed modes: the page's mapping and the x2APIC MSRs' intercepts follow. */
void vmx_apic_mode_changed(struct vcpu *vcpu);
/* The guest-physical page of the xAPIC window (fixed: apic_base_write() refuses a move). */
uint64_t vmx_xapic_page(void);
/*
 * Interrupt the CPU @cpu: a vCPU in the guest with a flagged NMI (the
 * kick vector under apic: virtual), one halted in root with a flagged
 * NMI.  Neither sends while an NMI of the host's to @cpu is in flight:
 * that one does it.
 */
void vmx_kick_ipi(unsigned int cpu);
void vmx_kick_nmi(unsigned int cpu);
/*
 * True once per NMI the host sent to @cpu (vmx_kick_ipi(), vmx_kick_nmi()):
 * called for every NMI @cpu takes, in root or as an NMI exit, which is the
 * host's when it returns true and the guest's otherwise.
 */
bool vmx_kick_nmi_claim(unsigned int cpu);
/* After an NMI exit: unblock NMIs in root operation (an IRET). */
void vmx_nmi_unblock(void);
/* A fixed interrupt from the hypervisor for the guest's APIC: a self IPI or an injection. */
void vmx_deliver_apic_irq(struct vcpu *vcpu, uint8_t vector);
/* The same for the emulated TSC deadline's vector: a one-shot, never a storm's (events.c). */
void vmx_deliver_apic_oneshot_irq(struct vcpu *vcpu, uint8_t vector);
/* A vCPU deaf to its stop: a physical INIT to its CPU (the watchdog's last resort). */
void vmx_kick_init(unsigned int cpu);
/* The emulated TSC deadline fired with an illegal vector: flag it in the guest's APIC's ESR. */
void vmx_apic_flag_illegal_vector(uint8_t vector);
/* The physical local APIC: an EOI for the interrupt in service. */
void vmx_apic_eoi(void);
/* Once, on the boot CPU: where the xAPIC window is (IA32_APIC_BASE as firmware left it). */
void vmx_apic_init(uint64_t apic_base);

#endif /* EXITPLAN_VMX_APIC_H */
