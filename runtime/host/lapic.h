/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host's use of the local APIC: its ID and the interprocessor
 * interrupts that start the other CPUs.  xAPIC (MMIO) or x2APIC (MSRs),
 * whichever mode the firmware left it in.
 */
#ifndef EXITPLAN_LAPIC_H
#define EXITPLAN_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

/* Find this CPU's APIC and its mode.  False when there is none. */
bool lapic_init(void);
bool lapic_x2apic_mode(void);
/*
 * The xAPIC's registers, found by lapic_init() on the boot CPU: the same
 * page on every CPU, and it never moves (no guest can relocate it,
 * arch/vmx/msr.c apic_base_write()), so it is set once, before any CPU
 * runs a guest.
 */
extern volatile uint32_t *lapic_xapic_regs;
uint32_t lapic_id(void);

/*
 * Send an IPI: `icr` is the ICR value without the destination (delivery
 * mode, level, trigger, shorthand, vector, as APIC_ICR_*).  Waits for the
 * previous IPI to be accepted first.  Returns false if it never was.
 */
bool lapic_send_ipi(uint32_t dest_apic_id, uint64_t icr);

#endif /* EXITPLAN_LAPIC_H */
