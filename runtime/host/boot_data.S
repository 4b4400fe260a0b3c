/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The boot page tables and the CPUs' stacks: data only, no code.
 *
 * runtime/init/boot.S fills the tables and runs on the boot CPU's
 * stack, reloc.c points the moved copy's tables at themselves, paging.c
 * splits them and unmaps the stacks' guard pages, smp.c hands boot_pml4
 * and a stack to each AP, percpu.c records the stacks.  They live apart
 * from the code that runs on them (boot.S calls hv_main(), trampoline.S
 * ap_main(), and through them everything) so that the files using them
 * do not reach that code (tests/make/test_call_graph.py).  Where they
 * land in .bss is the link order's: nothing depends on it.
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

	/* The APs' stacks (trampoline.S's ap_start64 takes one each). */
	.balign PAGE_SIZE
	.globl ap_stacks
ap_stacks:		/* [HV_MAX_CPUS][HV_STACK_SLOT]: guard page, stack; [0] unused */
	.skip HV_MAX_CPUS * HV_STACK_SLOT
