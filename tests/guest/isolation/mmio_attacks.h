/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The isolation guest's attacks through device MMIO (mmio_attacks.c):
 * the I/O APIC's redirection table, the HPET's FSB delivery, addresses
 * nothing claims.  main.c
 * lists them in its attack table; docs/GUESTS.md says what each does.
 */
#ifndef ISOLATION_MMIO_ATTACKS_H
#define ISOLATION_MMIO_ATTACKS_H

/* Non-fatal: contained means the guest runs on and its checks pass. */
void attack_ioapic(void);
void attack_lvt(void);
void attack_hpet(void);
void attack_unclaimed(void);
/* XADD loads of xAPIC page bytes no register holds: they read 0 (exitplan only). */
void attack_apic_unaligned(void);

/* Fatal: a byte write to IOREGSEL, which the 82093AA leaves undefined. */
void attack_mmio_unemulated(void);
void attack_ioapic_byte(void);
/* Fatal: an exception delivered onto a stack in the local APIC page. */
void attack_apic_stack(void);

#endif /* ISOLATION_MMIO_ATTACKS_H */
