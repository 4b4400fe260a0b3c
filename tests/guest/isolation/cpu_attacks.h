/* SPDX-License-Identifier: GPL-2.0-only */
/* The isolation guest's CPU attacks (cpu_attacks.c), for main.c's table. */
#ifndef GUEST_ISOLATION_CPU_ATTACKS_H
#define GUEST_ISOLATION_CPU_ATTACKS_H

void attack_reserved_xcr0(void);
void attack_interrupt_storm(void);
void attack_nmi_root(void);
void attack_mmio_exec_vga(void);
void attack_mmio_exec_ioapic(void);

#endif
