/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the hypervisor region goes (issue 9 item 2): at the top of the
 * highest available RAM below 4 GiB, as Jailhouse and ACRN reserve their
 * memory at the end of RAM, so the guest sees RAM from 1 MiB to the
 * region's start in one piece.  Pure functions, unit-tested on the host
 * (tests/unit/test_region.c); runtime/host/reloc.c moves the image there.
 */
#ifndef EXITPLAN_REGION_H
#define EXITPLAN_REGION_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/boot_info.h"
#include "runtime/host/phys_range.h"

/* The bytes of RAM the map lists as available (for the pool's size). */
uint64_t region_ram_bytes(const struct boot_mmap_entry *map, unsigned int n);

/*
 * The region's size: the image, the modules (boot_info copies them in)
 * and the page pool, HV_POOL_MIN plus RAM >> HV_POOL_RAM_SHIFT, at most
 * HV_POOL_MAX; page-aligned.  0 when the total exceeds HV_REGION_MAX.
 */
uint64_t region_size(uint64_t image_bytes, uint64_t module_bytes, uint64_t ram_bytes);

/*
 * The highest region of at least `size` bytes that lies in one available
 * range below HV_IDENTITY_MAP_END and above 1 MiB, overlaps none of
 * `avoid` (the boot loader's data, the image being copied), starts on a
 * 2-MiB boundary (the image's large pages, paging.c) and ends where its
 * range ends (or just below an `avoid` range in the way), so no sliver of
 * RAM is left above it.  False when nothing fits.
 */
bool region_choose(const struct boot_mmap_entry *map, unsigned int n,
		   const struct phys_range *avoid, unsigned int n_avoid,
		   uint64_t size, struct phys_range *region);

#endif /* EXITPLAN_REGION_H */
