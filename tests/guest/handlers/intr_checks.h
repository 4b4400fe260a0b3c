/* SPDX-License-Identifier: GPL-2.0-only */
/* The handlers guest's interrupt-delivery checks (intr_checks.c). */
#ifndef GUEST_HANDLERS_INTR_CHECKS_H
#define GUEST_HANDLERS_INTR_CHECKS_H

#include <stdbool.h>

/* @x2apic_too: then the self-IPI checks in x2APIC mode too, which Bochs cannot leave. */
void check_interrupt_delivery(bool x2apic_too);

/*
 * With `firmware-pic` (the library leaves the 8259s as the firmware did):
 * the firmware's 8254 wakes `sti; hlt` through IRQ 0 at vector 8.
 */
void check_firmware_timer(void);

#endif
