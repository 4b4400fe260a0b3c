// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's RAM (guest_ram.h), decided in one place from the boot
 * memory map: the EPT map (arch/vmx/ept.c), the multiboot map and the
 * Linux e820 table (guest_loader.c, linux_loader.c) are all built from it.
 */
#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "runtime/loader/guest_ram.h"
#include "runtime/host/layout.h"
#include "lib/string.h"

/*
 * Add [start, end) to the sorted, disjoint ranges r[0..n), merging it with
 * every range it overlaps or touches, so that the result stays sorted and
 * disjoint.  Firmware maps can list the same RAM twice (overlapping
 * available entries): the guest's map and ram_bytes must count it once,
 * and the EPT must cover the union.  Returns the new count; when the range
 * needs a slot of its own and none is left, it is dropped (the EPT and the
 * guest's map are built from this one function, so they still agree).
 */
static unsigned int ram_add(struct phys_range *r, unsigned int n, unsigned int max,
			    uint64_t start, uint64_t end)
{
	unsigned int i = 0, j;

	/* Ranges wholly below, not even touching, stay as they are. */
	while (i < n && r[i].end < start)
		i++;
	/* r[i..j) overlap or touch [start, end): they become one range. */
	for (j = i; j < n && r[j].start <= end; j++) {
		if (r[j].start < start)
			start = r[j].start;
		if (r[j].end > end)
			end = r[j].end;
	}
	if (j == i) {
		if (n == max)
			return n;
		memmove(&r[i + 1], &r[i], (n - i) * sizeof(*r));
		r[i] = (struct phys_range){ start, end };
		return n + 1;
	}
	r[i] = (struct phys_range){ start, end };
	memmove(&r[i + 1], &r[j], (n - j) * sizeof(*r));
	return n - (j - i - 1);
}

unsigned int guest_ram_ranges(const struct boot_info *bi, struct phys_range *r,
			      unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < bi->mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi->mmap[i];
		uint64_t lo, hi;

		if (e->type != BOOT_MEM_AVAILABLE)
			continue;
		/*
		 * Whole pages only.  An entry past the top of the address
		 * space is malformed: skipped, not wrapped to a small end.
		 */
		lo = ALIGN_UP(e->addr, (uint64_t)PAGE_SIZE);
		hi = ALIGN_DOWN(e->addr + e->len, (uint64_t)PAGE_SIZE);
		if (e->addr + e->len < e->addr || lo < e->addr || hi <= lo)
			continue;
		/*
		 * The pieces of [lo, hi) on either side of the hypervisor
		 * region, wherever boot_info says it lies: at the top of RAM
		 * there is no piece above it, and RAM from 1 MiB up is one
		 * range.  This is the one place the guest's RAM is decided:
		 * the EPT map, the multiboot map and the Linux e820 table are
		 * all built from its output.
		 */
		if (lo < bi->hv_start)
			n = ram_add(r, n, max, lo, hi < bi->hv_start ? hi : bi->hv_start);
		if (hi > bi->hv_end)
			n = ram_add(r, n, max, lo > bi->hv_end ? lo : bi->hv_end, hi);
	}
	return n;
}
