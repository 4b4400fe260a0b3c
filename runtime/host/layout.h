/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The physical memory layout of the hypervisor.
 *
 *   0 .. 1 MiB            BIOS, real-mode IVT, option ROMs (the guest's);
 *                         the page at SMP_TRAMPOLINE_PA is borrowed while
 *                         the other CPUs start, and restored afterwards
 *   1 MiB .. the region   the guest's RAM, in one piece (GRUB may keep its
 *                         multiboot information and the modules here; we
 *                         copy them out at boot before anything else runs)
 *   the region            the hypervisor's, at the top of the highest
 *                         available RAM below 4 GiB (runtime/host/region.c),
 *                         boot_info's hv_start .. hv_end:
 *                           the image (.text .rodata .data .bss), linked
 *                           position-independent at HV_LOAD_ADDR, where
 *                           GRUB loads it, and copied here by
 *                           runtime/host/reloc.c, with the boot page tables, the
 *                           per-CPU areas and their stacks in .bss;
 *                           the boot modules, copied in after the image;
 *                           the page-allocator pool: HV_POOL_MIN plus
 *                           RAM >> HV_POOL_RAM_SHIFT, at most HV_POOL_MAX,
 *                           up to the end of the region.
 *   above it              firmware (ACPI tables), then the PCI hole
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

/* Where GRUB loads the image (its link address); not where it runs. */
#define HV_LOAD_ADDR		0x4000000	/* 64 MiB */
/* The image's size limit (paging.c keeps a page table per 2 MiB of it). */
#define HV_IMAGE_MAX		0x400000	/* 4 MiB */
/* The region's size limit (page_alloc.c's bitmap covers it). */
#define HV_REGION_MAX		0x10000000	/* 256 MiB */
#define HV_POOL_MIN		0x800000	/* 8 MiB */
#define HV_POOL_RAM_SHIFT	8		/* + RAM / 256 */
#define HV_POOL_MAX		0x4000000	/* 64 MiB */

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
