/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The boot CPU's first page tables and its main stack, which the
 * multiboot entry (runtime/init/boot.S) loads, relocation (reloc.c)
 * points at themselves, and paging.c, percpu.c and smp.c go on using:
 * the host's, below the entry that starts them.
 */
#include "runtime/host/layout.h"
#include "runtime/host/paging.h"

	.section .bss
	.balign PAGE_SIZE
	.globl boot_pml4, boot_pdpt, boot_pd
boot_pml4:
	.skip PAGE_SIZE
boot_pdpt:
	.skip PAGE_SIZE
boot_pd:				/* 4 page directories: [0, 4 GiB) */
	.skip 4 * PAGE_SIZE

	/*
	 * The boot CPU's main stack, which struct percpu records, below it a
	 * guard page that paging_protect_image() unmaps.
	 */
	.balign PAGE_SIZE
	.globl boot_stack_guard, boot_stack_bottom, boot_stack_top
boot_stack_guard:
	.skip PAGE_SIZE
boot_stack_bottom:
	.skip HV_STACK_SIZE
boot_stack_top:
