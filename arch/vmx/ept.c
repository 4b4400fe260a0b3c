// SPDX-License-Identifier: GPL-2.0-only
/*
 * The EPT identity map (SDM Vol. 3C 29.3.2, "EPT Translation Mechanism").
 * Four levels: PML4 -> PDPT -> PD -> PT.  A range is mapped with 1-GiB
 * pages where the CPU supports them and the range covers an aligned
 * gigabyte, then 2-MiB pages, then 4-KiB pages around the edges.
 */
#include <stddef.h>

#include "arch_bits.h"		/* generated: EPT_* entry bits, memory types */
#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "arch/vmx/ept.h"
#include "runtime/loader/guest_ram.h"
#include "runtime/host/layout.h"
#include "runtime/host/page_alloc.h"		/* the tables: zeroed pages */
#include "runtime/devices/platform.h"

#define EPT_ENTRIES		512
#define EPT_RWX			(EPT_READ | EPT_WRITE | EPT_EXECUTE)

/* Level 0 maps 4 KiB, 1 maps 2 MiB (PD), 2 maps 1 GiB (PDPT), 3 is the PML4. */
static inline unsigned int ept_shift(unsigned int level)
{
	return 12 + 9 * level;
}

static inline unsigned int ept_index(uint64_t gpa, unsigned int level)
{
	return (gpa >> ept_shift(level)) & (EPT_ENTRIES - 1);
}

static uint64_t *ept_table_of(uint64_t entry)
{
	return (uint64_t *)(uintptr_t)(entry & EPT_ADDR_MASK);
}

/* Map one page of level @level (0..2) at @gpa with leaf flags @flags. */
static bool ept_map_page(struct ept *ept, uint64_t gpa, unsigned int level, uint64_t flags)
{
	uint64_t *table = ept->pml4;

	for (unsigned int l = 3; l > level; l--) {
		uint64_t *e = &table[ept_index(gpa, l)];

		if (!(*e & EPT_RWX)) {
			uint64_t *next = page_alloc();

			if (!next)
				return false;
			ept->pages++;
			*e = (uint64_t)(uintptr_t)next | EPT_RWX;
		} else if (*e & EPT_LARGE_PAGE) {
			/* Ranges are mapped once each, in order: never a split. */
			return false;
		}
		table = ept_table_of(*e);
	}
	table[ept_index(gpa, level)] = gpa | flags | (level ? EPT_LARGE_PAGE : 0);
	ept->mapped[level] += 1ull << ept_shift(level);
	return true;
}

static bool ept_map_range(struct ept *ept, uint64_t start, uint64_t end, uint64_t flags)
{
	uint64_t gpa = start;

	while (gpa < end) {
		unsigned int level = 0;

		if (ept->use_1g && IS_ALIGNED(gpa, 1ull << ept_shift(2)) &&
		    end - gpa >= 1ull << ept_shift(2))
			level = 2;
		else if (ept->use_2m && IS_ALIGNED(gpa, 1ull << ept_shift(1)) &&
			 end - gpa >= 1ull << ept_shift(1))
			level = 1;
		if (!ept_map_page(ept, gpa, level, flags))
			return false;
		gpa += 1ull << ept_shift(level);
	}
	return true;
}

bool ept_build(struct ept *ept, const struct ept_range *ranges, unsigned int n)
{
	ept->pml4 = page_alloc();
	if (!ept->pml4)
		return false;
	ept->pages = 1;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t flags;

		switch (ranges[i].kind) {
		case EPT_RANGE_RAM:
			flags = EPT_RWX | EPT_MEMTYPE_WB;
			break;
		case EPT_RANGE_MMIO:
			/* No execute: code is never fetched from a device (issue 7, item 9). */
			flags = EPT_READ | EPT_WRITE | EPT_MEMTYPE_UC;
			break;
		case EPT_RANGE_FIRMWARE:
			/* Memory, but tables and data, not code. */
			flags = EPT_READ | EPT_WRITE | EPT_MEMTYPE_WB;
			break;
		case EPT_RANGE_ROM:
			flags = EPT_RWX | EPT_MEMTYPE_UC;
			break;
		default:
			continue;	/* a hole stays not present */
		}
		if (!ept_map_range(ept, ranges[i].start, ranges[i].end, flags))
			return false;
	}
	return true;
}

uint64_t ept_lookup(const struct ept *ept, uint64_t gpa, unsigned int *level)
{
	const uint64_t *table = ept->pml4;

	for (unsigned int l = 3;; l--) {
		uint64_t e = table[ept_index(gpa, l)];

		if (!(e & EPT_RWX))
			return 0;
		if (l == 0 || (l < 3 && (e & EPT_LARGE_PAGE))) {
			if (level)
				*level = l;
			return e;
		}
		table = ept_table_of(e);
	}
}

uint64_t ept_pointer(const struct ept *ept)
{
	return (uint64_t)(uintptr_t)ept->pml4 | EPTP_PWL_LEVEL4 | EPTP_MEMTYPE_WB;
}

/* --- the identity ranges from the boot memory map ------------------------- */

/*
 * Guest-physical ranges the EPT leaves out: the MMIO test page, and the
 * hypervisor region, wherever boot_info says it is (ept_classify()).
 */
static const struct ept_range ept_holes[] = {
	{ PLATFORM_MMIO_TEST_PAGE, PLATFORM_MMIO_TEST_PAGE + PAGE_SIZE, EPT_RANGE_HOLE },
};

/* Firmware the guest may execute (ept.h). */
static const struct ept_range ept_roms[] = {
	{ EPT_LEGACY_ROM_START, EPT_LEGACY_ROM_END, EPT_RANGE_ROM },
	{ EPT_BIOS_FLASH_START, EPT_BIOS_FLASH_END, EPT_RANGE_ROM },
};

/*
 * The firmware's data in memory, as the boot memory map lists it: the
 * ACPI tables and NVS, and what it reserves below 1 MiB (the EBDA, where
 * a guest looks for the RSDP).  Whole pages around the entry, below 4 GiB.
 * A reserved entry above 1 MiB is a device or firmware window: only the
 * ROMs and the grants of those are mapped.
 */
static bool firmware_entry(const struct boot_mmap_entry *e, uint64_t *lo, uint64_t *hi)
{
	uint64_t end = e->addr + e->len;

	if (e->type != BOOT_MEM_ACPI_RECLAIMABLE && e->type != BOOT_MEM_ACPI_NVS &&
	    !(e->type == BOOT_MEM_RESERVED && e->addr < EPT_LEGACY_ROM_END))
		return false;
	if (end <= e->addr || e->addr >= HV_IDENTITY_MAP_END)
		return false;		/* empty, wrapping, or above the 4-GiB map */
	if (end > HV_IDENTITY_MAP_END)
		end = HV_IDENTITY_MAP_END;
	if (e->type == BOOT_MEM_RESERVED && end > EPT_LEGACY_ROM_END)
		end = EPT_LEGACY_ROM_END;
	*lo = ALIGN_DOWN(e->addr, (uint64_t)PAGE_SIZE);
	*hi = ALIGN_UP(end, (uint64_t)PAGE_SIZE);
	return true;
}

/* What the boot memory map, the grants and the fixed tables make of @a, in priority order. */
struct ept_sources {
	const struct boot_info *bi;
	const struct phys_range *ram;
	unsigned int n_ram;
	const struct ept_range *grants;
	unsigned int n_grants;
};

static enum ept_range_kind ept_classify(uint64_t a, const struct ept_sources *src)
{
	uint64_t lo, hi;

	if (a >= src->bi->hv_start && a < src->bi->hv_end)
		return EPT_RANGE_HOLE;
	for (unsigned int i = 0; i < ARRAY_SIZE(ept_holes); i++) {
		if (a >= ept_holes[i].start && a < ept_holes[i].end)
			return EPT_RANGE_HOLE;
	}
	for (unsigned int i = 0; i < src->n_ram; i++) {
		if (a >= src->ram[i].start && a < src->ram[i].end)
			return EPT_RANGE_RAM;
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(ept_roms); i++) {
		if (a >= ept_roms[i].start && a < ept_roms[i].end)
			return EPT_RANGE_ROM;
	}
	for (unsigned int i = 0; i < src->bi->mmap_count; i++) {
		if (firmware_entry(&src->bi->mmap[i], &lo, &hi) && a >= lo && a < hi)
			return EPT_RANGE_FIRMWARE;
	}
	for (unsigned int i = 0; i < src->n_grants; i++) {
		if (a >= src->grants[i].start && a < src->grants[i].end)
			return EPT_RANGE_MMIO;
	}
	/* Default deny: what nothing grants is not mapped (ept_exits.c answers it). */
	return EPT_RANGE_HOLE;
}

/* The first boundary above @a (a range or hole edge, 4 GiB), or @limit. */
static uint64_t ept_next_boundary(uint64_t a, uint64_t limit, const struct ept_sources *src)
{
	uint64_t next = limit, lo, hi;

#define CONSIDER(x) do { if ((x) > a && (x) < next) next = (x); } while (0)
	CONSIDER(src->bi->hv_start);
	CONSIDER(src->bi->hv_end);
	for (unsigned int i = 0; i < ARRAY_SIZE(ept_holes); i++) {
		CONSIDER(ept_holes[i].start);
		CONSIDER(ept_holes[i].end);
	}
	for (unsigned int i = 0; i < src->n_ram; i++) {
		CONSIDER(src->ram[i].start);
		CONSIDER(src->ram[i].end);
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(ept_roms); i++) {
		CONSIDER(ept_roms[i].start);
		CONSIDER(ept_roms[i].end);
	}
	for (unsigned int i = 0; i < src->bi->mmap_count; i++) {
		if (firmware_entry(&src->bi->mmap[i], &lo, &hi)) {
			CONSIDER(lo);
			CONSIDER(hi);
		}
	}
	for (unsigned int i = 0; i < src->n_grants; i++) {
		CONSIDER(src->grants[i].start);
		CONSIDER(src->grants[i].end);
	}
	CONSIDER((uint64_t)HV_IDENTITY_MAP_END);
#undef CONSIDER
	return next;
}

unsigned int ept_identity_ranges(const struct boot_info *bi, const struct ept_range *grants,
				 unsigned int n_grants, struct ept_range *out, unsigned int max)
{
	/* Static: too large for the boot stack; built once, on the boot CPU. */
	static struct phys_range ram[GUEST_MAX_RANGES];
	struct ept_sources src = { bi, ram, 0, grants, n_grants };
	uint64_t limit = HV_IDENTITY_MAP_END, a = 0;
	unsigned int n = 0;

	src.n_ram = guest_ram_ranges(bi, ram, ARRAY_SIZE(ram));
	for (unsigned int i = 0; i < n_grants; i++) {
		/* A grant is whole pages below 4 GiB, or a bug in its caller. */
		if ((grants[i].start | grants[i].end) & (PAGE_SIZE - 1) ||
		    grants[i].start >= grants[i].end || grants[i].end > HV_IDENTITY_MAP_END)
			return 0;
	}
	/*
	 * Up to the highest end of any RAM range -- not the end of the one
	 * that starts last: with nested ranges that one need not end last, and
	 * RAM the guest's memory map lists would be missing from the EPT.
	 */
	for (unsigned int i = 0; i < src.n_ram; i++) {
		if (ram[i].end > limit)
			limit = ram[i].end;
	}
	while (a < limit) {
		enum ept_range_kind kind = ept_classify(a, &src);
		uint64_t end = ept_next_boundary(a, limit, &src);

		if (n && out[n - 1].kind == kind && out[n - 1].end == a) {
			out[n - 1].end = end;
		} else {
			if (n == max)
				return 0;
			out[n++] = (struct ept_range){ a, end, kind };
		}
		a = end;
	}
	return n;
}

/*
 * Give the 4-KiB page at @gpa (identity-mapped) the leaf flags @flags,
 * splitting the 2-MiB or 1-GiB page that covers it into smaller ones with
 * the same flags.  For the few pages the runtime treats apart after the
 * map is built (the xAPIC window: read-only, so that writes exit).  The
 * caller invalidates the EPT-derived translations (INVEPT) if the map is
 * already in use.
 */
bool ept_set_4k(struct ept *ept, uint64_t gpa, uint64_t flags)
{
	uint64_t *table = ept->pml4;

	gpa &= ~(uint64_t)(PAGE_SIZE - 1);
	for (unsigned int l = 3; l > 0; l--) {
		uint64_t *e = &table[ept_index(gpa, l)];

		if (!(*e & EPT_RWX))
			return false;		/* a hole: nothing to change */
		if (l < 3 && (*e & EPT_LARGE_PAGE)) {
			/* Split: 512 entries of the next level down, same flags. */
			uint64_t *next = page_alloc();
			uint64_t leaf = *e & ~(uint64_t)EPT_ADDR_MASK & ~(uint64_t)EPT_LARGE_PAGE;
			uint64_t base = *e & EPT_ADDR_MASK & ~((1ull << ept_shift(l)) - 1);

			if (!next)
				return false;
			ept->pages++;
			for (unsigned int i = 0; i < EPT_ENTRIES; i++)
				next[i] = (base + ((uint64_t)i << ept_shift(l - 1))) | leaf |
					  (l - 1 ? EPT_LARGE_PAGE : 0);
			ept->mapped[l] -= 1ull << ept_shift(l);
			ept->mapped[l - 1] += 1ull << ept_shift(l);
			*e = (uint64_t)(uintptr_t)next | EPT_RWX;
		}
		table = ept_table_of(*e);
	}
	table[ept_index(gpa, 0)] = gpa | flags;
	return true;
}
