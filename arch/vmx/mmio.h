/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Emulated MMIO pages: the decode of the instruction that touched one
 * (mmio.c) and the pages the hypervisor keeps from the guest and
 * answers itself (ioapic_exits.c: the I/O APIC, the HPET).
 */
#ifndef EXITPLAN_VMX_MMIO_H
#define EXITPLAN_VMX_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "exit.h"

struct vcpu;
struct ept;
struct vm;

/* A MOV load or store, as vmx_mmio_decode() finds it at the guest's RIP. */
struct mmio_access {
	bool store;
	unsigned int size;	/* 1, 2, 4 or 8 bytes */
	unsigned int reg;	/* load: the destination GPR (0 RAX .. 15 R15) ... */
	bool high_byte;		/* ... or its bits 15:8 (AH, CH, DH, BH) */
	uint64_t value;		/* store: the value */
	unsigned int len;	/* of the instruction */
	uint8_t bytes[4];	/* its first bytes, for reports */
};

/*
 * Decode the instruction at the guest's RIP as a MOV load (8A, 8B, A0,
 * A1) or store (88, 89, C6, C7, A2, A3) with any prefixes, in 16-, 32-
 * or 64-bit code; false for anything else.  The address comes from the
 * exit, not from the decode.
 */
bool vmx_mmio_decode(struct vcpu *vcpu, struct mmio_access *a);
/* The guest-linear address of the instruction at GUEST_RIP, which a decode fetches. */
uint64_t vmx_guest_rip_linear(void);
/*
 * Complete @a: a load's destination gets @value (8- and 16-bit loads
 * merge, 32-bit ones zero-extend); RIP moves past the instruction, out of
 * any STI or MOV-SS shadow; an event the exit interrupted is re-injected.
 */
void vmx_mmio_complete(struct vcpu *vcpu, const struct mmio_access *a, uint64_t value);

/* Is @gpa in a device page the guest does not get (the I/O APIC, the HPET)? */
bool vmx_device_page(uint64_t gpa);
/* An EPT violation there: emulated, or the guest stopped with a report. */
enum vmx_exit_action vmx_device_page_access(struct vcpu *vcpu, uint64_t gpa, uint64_t q);
/* Leave those pages out of @ept (vmx.c, once, before any guest runs). */
bool vmx_hide_device_pages(struct ept *ept);
/*
 * apic: virtual: a host device's interrupt, taken on @vcpu's CPU as
 * @vector (the hardware entry's IOAPIC_HOST_VECTOR()), to the vCPUs the
 * guest's entry names, with the guest's vector; any other vector is
 * raised in @vcpu's own virtual APIC.
 */
enum vmx_exit_action vmx_ioapic_deliver(struct vcpu *vcpu, uint8_t vector);
/* At boot, before any vCPU runs: the I/O APIC's root-operation handlers (apic: virtual). */
void vmx_ioapic_root_init(struct vm *vm);
/*
 * The guest's I/O APIC entry of the pin its 8254 drives (emulated: the
 * hardware's stays masked), when it delivers; the VM's platform_lock
 * held.  False before the guest first touches its I/O APIC, or while the
 * entry is masked.
 */
bool vmx_ioapic_pit_route(uint32_t *low, uint32_t *high);
/*
 * apic: virtual, a CPU with no vCPU runnable (vmx_run.c): take the
 * interrupts the hardware has for it in root operation, each posted
 * to its targets.  Only CPU 0 gets them (the hardware's entries name
 * it), and only once the guest set up its I/O APIC
 * (vmx_ioapic_idle_polls()): then that CPU halts with interrupts on
 * (ap_park.c vmx_idle_halt_until()), or, without the idle timer, polls
 * with vmx_ioapic_idle(), instead of halting until a kick.
 */
bool vmx_ioapic_idle_polls(unsigned int cpu);
void vmx_ioapic_idle(unsigned int cpu);

#endif /* EXITPLAN_VMX_MMIO_H */
