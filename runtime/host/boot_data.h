/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The boot page tables and the CPUs' stacks (boot_data.S): the tables
 * filled by boot.S, moved with the image by reloc.c, refined by paging.c.
 */
#ifndef EXITPLAN_BOOT_DATA_H
#define EXITPLAN_BOOT_DATA_H

#include <stdint.h>

#include "runtime/host/layout.h"
#include "runtime/host/paging.h"

/* PML4 -> one PDPT -> four page directories of 2-MiB pages: [0, 4 GiB). */
extern uint64_t boot_pml4[PT_ENTRIES], boot_pdpt[PT_ENTRIES];
extern uint64_t boot_pd[4 * PT_ENTRIES];

/* The boot CPU's main stack, [bottom, top), and the guard page below it. */
extern char boot_stack_guard[], boot_stack_bottom[], boot_stack_top[];

/* The APs' stacks: each slot a guard page, then the stack; [0] unused. */
extern uint8_t ap_stacks[HV_MAX_CPUS][HV_STACK_SLOT];

#endif /* EXITPLAN_BOOT_DATA_H */
