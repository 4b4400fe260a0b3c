/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The local APIC in xAPIC mode (MMIO), its timer in one-shot and
 * TSC-deadline mode, and the legacy 8259 PIC (masked).
 *
 * The APIC is enabled and disabled only through the spurious-interrupt
 * vector register (SVR bit 8).  IA32_APIC_BASE bit 11 is left alone except
 * by the handlers guest's dedicated check: under Bochs, clearing it kills
 * the APIC for good (docs/GUESTS.md).
 */
#ifndef GUEST_APIC_H
#define GUEST_APIC_H

#include <stdbool.h>
#include <stdint.h>

#include "x86.h"

/*
 * Register offsets (XAPIC_REG_*) and LVT/SVR bits come from x86.h (the
 * generated arch_bits.h).  The vectors are the guests' own choice.
 */
#define APIC_TIMER_VECTOR	0x40
#define APIC_SPURIOUS_VECTOR	0xff

void pic_mask_all(void);

/* Software-enable the APIC (SVR), TPR 0, timer masked; registers handlers. */
void apic_init(void);
uint32_t apic_read(uint32_t reg);
void apic_write(uint32_t reg, uint32_t value);
void apic_eoi(void);

/* Timer interrupts taken so far (the handler EOIs each). */
extern volatile uint32_t apic_timer_irqs;

void apic_timer_oneshot(uint32_t initial_count);
/* Needs CPUID.1:ECX[24]; deadline is an absolute TSC value. */
void apic_timer_tsc_deadline(uint64_t deadline);
/* The same in two steps, as a tickless kernel does: the LVT once... */
void apic_timer_tsc_deadline_mode(void);
/* ...then only the deadline (one WRMSR) per event; 0 disarms. */
void apic_timer_set_deadline(uint64_t deadline);
void apic_timer_stop(void);

bool cpu_has_tsc_deadline(void);

/*
 * Wait for the next timer interrupt with interrupts enabled, without HLT,
 * for at most max_ticks TSC ticks.  True if it came.  Proves delivery
 * before any check relies on HLT being woken (a lost wake-up would hang).
 */
bool apic_timer_wait_spinning(uint32_t irqs_before, uint64_t max_ticks);
/* HLT (STI; HLT, interrupts off again after) until the count passes irqs_before. */
void apic_timer_wait_halted(uint32_t irqs_before);

#endif /* GUEST_APIC_H */
