/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Emulated MMIO pages: the emulation of the instruction that touched one
 * (mmio.c, decoded by x86_decode.c) and the pages the hypervisor keeps from the guest and
 * answers itself (ioapic_exits.c: the I/O APIC, the HPET).
 */
#ifndef EXITPLAN_VMX_MMIO_H
#define EXITPLAN_VMX_MMIO_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/exit.h"

struct vcpu;
struct ept;
struct vm;

/*
 * The instruction at the guest's RIP touched @gpa (an EPT violation with
 * qualification @q, in @what: "the local APIC page", ...): decode it
 * (x86_decode.c) and execute it against the guest-physical address space
 * (vmx_phys_read(), vmx_phys_write()), its flags and registers updated
 * and RIP moved past it as the CPU does.  Where hardware would fault, the
 * guest gets the fault (#UD, #GP, #SS, #PF); an instruction not emulated
 * stops the guest with a report naming its bytes.
 */
/*
 * A write to the xAPIC page (not a fetch, no event being delivered:
 * the caller checks) by the form nearly all of them take, a 32-bit MOV
 * from a register or an immediate in 32- or 64-bit code, emulated
 * without the general decoder: true with the exit's action in @act.
 * False, having changed nothing, for anything else: vmx_mmio_emulate()
 * then decides, and reports what it refuses.
 */
bool vmx_xapic_store_fast(struct vcpu *vcpu, uint64_t gpa, enum vmx_exit_action *act);

enum vmx_exit_action vmx_mmio_emulate(struct vcpu *vcpu, uint64_t gpa, uint64_t q,
				      const char *what);
/* The guest-linear address of the instruction at GUEST_RIP, which a decode fetches. */
uint64_t vmx_guest_rip_linear(void);

/*
 * One access of @size bytes (within one page) at @gpa as the guest's
 * machine answers it: guest RAM and what EPT maps for it, the local
 * APIC page, the I/O APIC and HPET pages, the MMIO test page; an address
 * nothing claims reads all ones and drops writes (the first reported);
 * the hypervisor's region stops the guest.  VMX_EXIT_RESUME, or the
 * action a device's answer asks for.
 */
enum vmx_exit_action vmx_phys_read(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
				   uint64_t *v);
enum vmx_exit_action vmx_phys_write(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
				    uint64_t v);

/* One element of a string instruction: its bytes in one page, or across two. */
struct vmx_element {
	uint64_t gpa[2];
	unsigned int first;	/* bytes in the first page */
	unsigned int size;
};
enum vmx_elem_result {
	VMX_ELEM_OK,
	VMX_ELEM_FAULT,		/* the guest's #GP, #SS or #PF is injected */
	VMX_ELEM_STOP,		/* the guest is stopped (paging structures outside its RAM) */
};
/* A string instruction's segment, read once per instruction (vmx_string_seg_init()). */
struct vmx_string_seg {
	uint64_t base;
	uint32_t limit, ar;
	unsigned int seg;	/* enum x86_seg */
	bool long_mode, pe, user;
};
void vmx_string_seg_init(struct vcpu *vcpu, struct vmx_string_seg *sg, unsigned int seg);
/*
 * The element of @size bytes at @sg:@offset (@offset already cut to
 * the address size) for a read or @write: the segment checked as the CPU
 * checks it (type, limit; canonical in 64-bit mode), the linear address
 * wrapped at 4 GiB outside 64-bit mode, and translated through the
 * guest's paging.  A fault is injected as the CPU raises it.
 */
enum vmx_elem_result vmx_string_element(struct vcpu *vcpu, const struct vmx_string_seg *sg,
					uint64_t offset, unsigned int size, bool write,
					struct vmx_element *el);
enum vmx_exit_action vmx_element_read(struct vcpu *vcpu, const struct vmx_element *el,
				      uint64_t *v);
enum vmx_exit_action vmx_element_write(struct vcpu *vcpu, const struct vmx_element *el,
				       uint64_t v);

/* Is @gpa in a device page the guest does not get (the I/O APIC, the HPET)? */
bool vmx_device_page(uint64_t gpa);
/* An access there (vmx_phys_read(), vmx_phys_write()): the I/O APIC's or the absent HPET's answer. */
enum vmx_exit_action vmx_device_page_read(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					  uint64_t *v);
enum vmx_exit_action vmx_device_page_write(struct vcpu *vcpu, uint64_t gpa, unsigned int size,
					   uint64_t v);
/* The name of the device page @gpa is in, for reports. */
const char *vmx_device_page_name(uint64_t gpa);
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
