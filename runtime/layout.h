/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The fixed physical memory layout of the hypervisor.
 *
 *   0 .. 1 MiB            BIOS, real-mode IVT, option ROMs (the guest's);
 *                         the page at SMP_TRAMPOLINE_PA is borrowed while
 *                         the other CPUs start, and restored afterwards
 *   1 MiB .. 64 MiB       free for the guest (GRUB may keep its
 *                         multiboot information structures here; we copy
 *                         them out at boot before anything else runs)
 *   64 MiB .. 96 MiB      the hypervisor region, HV_REGION_START..END:
 *                           the image (.text .rodata .data .bss, linked
 *                           and loaded at HV_LOAD_ADDR = HV_REGION_START),
 *                           with the boot page tables, the per-CPU areas
 *                           and their stacks in .bss;
 *                           GRUB's modules, which GRUB places right after
 *                           the image (checked at boot: a module outside
 *                           the region is a panic);
 *                           the page-allocator pool: everything from the
 *                           end of the image and the last module to
 *                           HV_REGION_END.
 *   96 MiB ..             free for the guest
 *   0xFEC00000            IO-APIC, 0xFEE00000 local APIC (identity-mapped
 *                         uncached by the boot page tables)
 *
 * The hypervisor runs with physical == virtual: the boot page tables
 * identity-map the first 4 GiB with 2-MiB pages.  The whole region is
 * hidden from the guest by EPT, so nothing the guest does can reach the
 * hypervisor's memory.
 *
 * This file is included from assembly and the linker script too: keep
 * it to plain #defines.
 */
#ifndef EXITPLAN_LAYOUT_H
#define EXITPLAN_LAYOUT_H

#define HV_REGION_START		0x4000000	/* 64 MiB */
#define HV_REGION_END		0x6000000	/* 96 MiB, exclusive */
#define HV_REGION_SIZE		(HV_REGION_END - HV_REGION_START)
#define HV_LOAD_ADDR		HV_REGION_START

/* The boot page tables identity-map [0, HV_IDENTITY_MAP_END). */
#define HV_IDENTITY_MAP_END	0x100000000	/* 4 GiB */

#define PAGE_SHIFT		12
#define PAGE_SIZE		(1 << PAGE_SHIFT)
#define LARGE_PAGE_SHIFT	21		/* 2 MiB */
#define LARGE_PAGE_SIZE		(1 << LARGE_PAGE_SHIFT)

/*
 * Stacks: the main stack of each CPU, and IST stacks for #DF, NMI, #MC.
 * A main stack sits in a slot whose first page is an unmapped guard
 * (paging.c), so an overflow faults instead of corrupting what lies below.
 */
#define HV_STACK_SIZE		(16 * 1024)
#define HV_STACK_SLOT		(PAGE_SIZE + HV_STACK_SIZE)
#define HV_IST_STACK_SIZE	(8 * 1024)

/*
 * Where the other CPUs start, in real mode: a page below 1 MiB (the
 * STARTUP IPI's vector is its page number).
 */
#define SMP_TRAMPOLINE_PA	0x8000

/* Per-CPU areas are static; CPUs beyond this are not started. */
#define HV_MAX_CPUS		8

#endif /* EXITPLAN_LAYOUT_H */
