/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IA-32e paging-structure entry bits (SDM Vol. 3A 4.5, tables 4-15 to
 * 4-20).  Usable from assembly.
 */
#ifndef EXITPLAN_PAGING_H
#define EXITPLAN_PAGING_H

#define PTE_PRESENT		(1 << 0)
#define PTE_WRITE		(1 << 1)
#define PTE_USER		(1 << 2)
#define PTE_PWT			(1 << 3)	/* with PCD: UC under the default PAT */
#define PTE_PCD			(1 << 4)
#define PTE_ACCESSED		(1 << 5)
#define PTE_DIRTY		(1 << 6)
#define PTE_PS			(1 << 7)	/* a 2-MiB (PDE) or 1-GiB (PDPTE) page */

#define PT_ENTRIES		512		/* entries per paging structure */

/*
 * The boot page tables map the top 32 MiB below 4 GiB (IO-APIC at
 * 0xFEC00000, local APIC at 0xFEE00000, HPET, firmware) uncached; the
 * rest of the first 4 GiB write-back.
 */
#define BOOT_UC_START		0xFE000000

#endif /* EXITPLAN_PAGING_H */
