/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The boot CPU's page tables and stack (boot_data.S): filled by boot.S,
 * moved with the image by reloc.c, refined by paging.c.
 */
#ifndef EXITPLAN_BOOT_DATA_H
#define EXITPLAN_BOOT_DATA_H

#include <stdint.h>

#include "runtime/host/paging.h"

/* PML4 -> one PDPT -> four page directories of 2-MiB pages: [0, 4 GiB). */
extern uint64_t boot_pml4[PT_ENTRIES], boot_pdpt[PT_ENTRIES];
extern uint64_t boot_pd[4 * PT_ENTRIES];

/* The boot CPU's main stack, [bottom, top), and the guard page below it. */
extern char boot_stack_guard[], boot_stack_bottom[], boot_stack_top[];

#endif /* EXITPLAN_BOOT_DATA_H */
