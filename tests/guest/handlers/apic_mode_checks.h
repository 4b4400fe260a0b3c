/* SPDX-License-Identifier: GPL-2.0-only */
/* The handlers guest's local APIC mode transitions (apic_mode_checks.c). */
#ifndef GUEST_HANDLERS_APIC_MODE_CHECKS_H
#define GUEST_HANDLERS_APIC_MODE_CHECKS_H

/* Last: it leaves the APIC in xAPIC mode, re-initialized, or (bare Bochs) dead. */
void check_apic_mode_cycle(void);

#endif
