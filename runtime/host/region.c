// SPDX-License-Identifier: GPL-2.0-only
#include "runtime/host/region.h"

#include "runtime/host/compiler.h"
#include "runtime/host/layout.h"

#define REGION_LOWEST	0x100000	/* below 1 MiB is the BIOS's and the guest's */

uint64_t region_ram_bytes(const struct boot_mmap_entry *map, unsigned int n)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < n; i++)
		if (map[i].type == BOOT_MEM_AVAILABLE)
			sum += map[i].len;
	return sum;
}

uint64_t region_size(uint64_t image_bytes, uint64_t module_bytes, uint64_t ram_bytes)
{
	uint64_t pool = HV_POOL_MIN + (ram_bytes >> HV_POOL_RAM_SHIFT);
	uint64_t size;

	if (pool > HV_POOL_MAX)
		pool = HV_POOL_MAX;
	if (image_bytes > HV_REGION_MAX || module_bytes > HV_REGION_MAX)
		return 0;
	size = ALIGN_UP(image_bytes, (uint64_t)PAGE_SIZE) +
	       ALIGN_UP(module_bytes, (uint64_t)PAGE_SIZE) + pool;
	return size > HV_REGION_MAX ? 0 : size;
}

/*
 * The highest fit in [lo, hi), up to hi, which moves down below every
 * range of `avoid` the region [s, hi) would overlap.
 */
static bool fit_in(uint64_t lo, uint64_t hi, const struct phys_range *avoid,
		   unsigned int n_avoid, uint64_t size, struct phys_range *r)
{
	for (;;) {
		uint64_t s, lowest = hi;

		if (hi < lo || hi - lo < size)
			return false;
		s = ALIGN_DOWN(hi - size, (uint64_t)LARGE_PAGE_SIZE);
		if (s < lo)
			return false;
		for (unsigned int i = 0; i < n_avoid; i++)
			if (avoid[i].start < hi && s < avoid[i].end &&
			    avoid[i].start < lowest)
				lowest = avoid[i].start;
		if (lowest == hi) {
			/* Up to hi: no sliver of RAM left above the region. */
			*r = (struct phys_range){ s, hi };
			return true;
		}
		hi = ALIGN_DOWN(lowest, (uint64_t)PAGE_SIZE);
	}
}

bool region_choose(const struct boot_mmap_entry *map, unsigned int n,
		   const struct phys_range *avoid, unsigned int n_avoid,
		   uint64_t size, struct phys_range *region)
{
	bool found = false;

	if (!size)
		return false;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t lo = map[i].addr, hi = map[i].addr + map[i].len;
		struct phys_range r;

		if (map[i].type != BOOT_MEM_AVAILABLE || hi <= lo || lo >= HV_IDENTITY_MAP_END)
			continue;
		if (hi > HV_IDENTITY_MAP_END)
			hi = HV_IDENTITY_MAP_END;
		if (lo < REGION_LOWEST)
			lo = REGION_LOWEST;
		lo = ALIGN_UP(lo, (uint64_t)PAGE_SIZE);
		hi = ALIGN_DOWN(hi, (uint64_t)PAGE_SIZE);
		if (fit_in(lo, hi, avoid, n_avoid, size, &r) && (!found || r.start > region->start)) {
			*region = r;
			found = true;
		}
	}
	return found;
}
