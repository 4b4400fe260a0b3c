/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The boot CPU's page tables and stack: data only, no code.
 *
 * boot.S fills the tables and runs on the stack, reloc.c points the
 * moved copy's tables at themselves, paging.c splits and protects them,
 * smp.c hands boot_pml4 to the APs, percpu.c records the stack.  They
 * live apart from boot.S's code so that those files do not reach boot.S,
 * which calls hv_main(), and through it everything (tests/make/
 * test_call_graph.py).  The build links this object right after boot.o,
 * so .bss is laid out as when they were in boot.S.
 */
#include "runtime/host/layout.h"

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
