/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IA-32e paging-structure entry bits (SDM Vol. 3A 4.5, tables 4-15 to
 * 4-20) under short names.  The numbers come from spec/arch.yaml (PT64_*);
 * assembly gets them through asm-offsets.h (BOOT_PTE_*).
 */
#ifndef EXITPLAN_PAGING_H
#define EXITPLAN_PAGING_H

#ifndef __ASSEMBLER__
#include "runtime/host/x86_arch.h"

#define PTE_PRESENT		PT64_PRESENT
#define PTE_WRITE		PT64_RW
#define PTE_USER		PT64_USER
#define PTE_PWT			PT64_PWT	/* with PCD: UC under the default PAT */
#define PTE_PCD			PT64_PCD
#define PTE_ACCESSED		PT64_ACCESSED
#define PTE_DIRTY		PT64_DIRTY
#define PTE_PS			PT64_PS		/* a 2-MiB (PDE) or 1-GiB (PDPTE) page */
#endif

#define PT_ENTRIES		512		/* entries per paging structure */

/*
 * The boot page tables map the top 32 MiB below 4 GiB (IO-APIC at
 * 0xFEC00000, local APIC at 0xFEE00000, HPET, firmware) uncached; the
 * rest of the first 4 GiB write-back.
 */
#define BOOT_UC_START		0xFE000000

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

/*
 * Remap the hypervisor region with 4-KiB pages: code and read-only data
 * read-only, the stack guard pages not present; the rest as before.
 * Every CPU shares the boot page tables, so this covers the APs too.
 */
void paging_protect_image(void);

/* True if addr lies in a stack guard page: a fault there is an overflow. */
bool paging_is_stack_guard(uint64_t addr);
#endif

#endif /* EXITPLAN_PAGING_H */
