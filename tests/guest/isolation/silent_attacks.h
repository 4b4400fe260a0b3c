/* SPDX-License-Identifier: GPL-2.0-only */
/* The isolation guest's silent attacks (silent_attacks.c), for main.c's table. */
#ifndef GUEST_ISOLATION_SILENT_ATTACKS_H
#define GUEST_ISOLATION_SILENT_ATTACKS_H

void attack_silent_hlt(void) __attribute__((noreturn));
void attack_silent_idle(void) __attribute__((noreturn));
void attack_silent_spin(void) __attribute__((noreturn));
void attack_silent_pit(void) __attribute__((noreturn));
void attack_silent_apic_storm(void) __attribute__((noreturn));

#endif
