/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The isolation guest's attacks through the platform (platform_attacks.c):
 * SMM, bus-master DMA, PCI configuration, Bochs's own ports, the UART the
 * hypervisor prints on, and a forged verdict.  main.c lists them in its
 * attack table; docs/GUESTS.md says what each one does.
 */
#ifndef ISOLATION_PLATFORM_ATTACKS_H
#define ISOLATION_PLATFORM_ATTACKS_H

/* Non-fatal: contained means the guest runs on and its checks pass. */
void attack_smm(void);
void attack_dma(void);
void attack_pci_config(void);
void attack_bochs_ports(void);

/* Fatal: they end the guest; the boot test reads the hypervisor's verdict. */
void attack_uart_garble(void);
void attack_forged_status(void);

#endif /* ISOLATION_PLATFORM_ATTACKS_H */
