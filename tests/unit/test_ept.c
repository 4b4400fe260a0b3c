// SPDX-License-Identifier: GPL-2.0-only
/*
 * arch/vmx/ept.c: the EPT identity map built from boot memory maps.
 *
 * The identity ranges handed to ept_build() come from the real
 * ept_identity_ranges() (and through it the real guest_ram_ranges() of
 * runtime/loader/guest_ram.c), exactly as vmx.c builds the guest's EPT: RAM
 * write-back, the firmware ROMs executable, the firmware's data (ACPI
 * entries, reserved entries below 1 MiB) write-back, the granted device
 * pages (the local APIC's, as vmx.c grants it) uncached, and nothing else
 * present (default deny).  The ranges' shape is checked, and the
 * resulting tables against an oracle that reads the raw boot memory map
 * itself (its own end of RAM, too):
 * every boundary address of every entry and hole, every 4-KiB page of the
 * address space, the page size of every leaf (the largest that alignment,
 * the range and the capabilities allow) and the accounting.
 *
 * page_alloc(), which ept.c takes its tables from, is faked with
 * page-aligned host memory: ept.c keeps table addresses in the entries
 * and dereferences them as pointers (physical == virtual in the
 * hypervisor), which host pointers satisfy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "runtime/host/boot_info.h"
#include "runtime/host/compiler.h"
#include "arch/vmx/ept.h"
#include "fake_runtime.h"
#include "runtime/loader/guest_ram.h"
#include "runtime/host/layout.h"
#include "runtime/devices/platform.h"
#include "test_layout.h"

#define KiB		(1ull << 10)
#define MiB		(1ull << 20)
#define GiB		(1ull << 30)
#define EPT_RWX		(EPT_READ | EPT_WRITE | EPT_EXECUTE)

/* --- the fake table allocator --------------------------------------------- */

#define MAX_TABLES	8192
static void *tables[MAX_TABLES];
static unsigned int n_tables;
static unsigned int table_limit;	/* allocations allowed before "out of memory" */

void *page_alloc(void)
{
	void *p;

	if (n_tables >= table_limit || n_tables >= MAX_TABLES)
		return NULL;
	p = aligned_alloc(4096, 4096);
	assert_non_null(p);
	memset(p, 0, 4096);
	/* The entry format has room for bits 51:12 only. */
	assert_int_equal((uintptr_t)p & ~EPT_ADDR_MASK, 0);
	tables[n_tables++] = p;
	return p;
}

static void free_tables(void)
{
	while (n_tables)
		free(tables[--n_tables]);
}

static int teardown(void **state)
{
	(void)state;
	free_tables();
	return 0;
}

/* --- memory maps ---------------------------------------------------------- */

struct mm {
	uint64_t addr, len;
	uint32_t type;
};

static struct boot_info bi;

static void set_map(const struct mm *m, unsigned int n)
{
	memset(&bi, 0, sizeof(bi));
	for (unsigned int i = 0; i < n; i++)
		bi.mmap[i] = (struct boot_mmap_entry){ m[i].addr, m[i].len, m[i].type };
	bi.mmap_count = n;
	/* Where boot_info_init() puts the region: guest_ram_ranges() follows it. */
	bi.hv_start = TEST_HV_START;
	bi.hv_end = TEST_HV_END;
}

/* The device pages granted, as vmx.c grants the xAPIC page; one more in the PCI hole. */
static const struct ept_range grants[] = {
	{ 0xfee00000, 0xfee01000, EPT_RANGE_MMIO },
	{ 0xe0000000, 0xe0400000, EPT_RANGE_MMIO },
};

/* The oracle: what @a is, read from the raw boot memory map. */
static enum ept_range_kind expected_kind(uint64_t a)
{
	if ((a >= TEST_HV_START && a < TEST_HV_END) || platform_mmio_test_page(a))
		return EPT_RANGE_HOLE;
	for (unsigned int i = 0; i < bi.mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi.mmap[i];
		/* Only whole pages of an available entry are RAM. */
		uint64_t lo = (e->addr + 4095) & ~4095ull, hi = (e->addr + e->len) & ~4095ull;

		if (e->type == BOOT_MEM_AVAILABLE && a >= lo && a < hi)
			return EPT_RANGE_RAM;
	}
	if ((a >= 0xc0000 && a < 0x100000) || (a >= 0xfff00000 && a < 0x100000000ull))
		return EPT_RANGE_ROM;
	for (unsigned int i = 0; i < bi.mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi.mmap[i];
		/* The firmware's data: whole pages around the entry, below 4 GiB. */
		uint64_t lo = e->addr & ~4095ull, hi = (e->addr + e->len + 4095) & ~4095ull;
		bool acpi = e->type == BOOT_MEM_ACPI_RECLAIMABLE || e->type == BOOT_MEM_ACPI_NVS;

		if (e->type == BOOT_MEM_RESERVED && hi > 0x100000)
			hi = 0x100000;
		if ((acpi || (e->type == BOOT_MEM_RESERVED && e->addr < 0x100000)) && e->len &&
		    a >= lo && a < hi && a < HV_IDENTITY_MAP_END)
			return EPT_RANGE_FIRMWARE;
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(grants); i++) {
		if (a >= grants[i].start && a < grants[i].end)
			return EPT_RANGE_MMIO;
	}
	/* Default deny: VGA, the rest of the PCI hole, the I/O APIC, the HPET. */
	return EPT_RANGE_HOLE;
}

/* --- the identity ranges, from ept.c ------------------------------------- */

static struct phys_range ram[GUEST_MAX_RANGES];
static unsigned int n_ram;
static struct ept_range ranges[EPT_IDENTITY_MAX_RANGES];
static unsigned int n_ranges;
static uint64_t limit;		/* the oracle's end of the map */

/*
 * The oracle's end of the identity map: 4 GiB, or the end of the highest
 * whole page of any available entry above it (the hypervisor region lies
 * below 4 GiB, so it cannot cut such an end).
 */
static uint64_t expected_limit(void)
{
	uint64_t l = HV_IDENTITY_MAP_END;

	for (unsigned int i = 0; i < bi.mmap_count; i++) {
		const struct boot_mmap_entry *e = &bi.mmap[i];
		uint64_t lo = (e->addr + 4095) & ~4095ull, hi = (e->addr + e->len) & ~4095ull;

		if (e->type == BOOT_MEM_AVAILABLE && lo < hi && hi > l)
			l = hi;
	}
	return l;
}

/* ept_identity_ranges() for the current map, and the shape it promises. */
static void compose_ranges(void)
{
	n_ram = guest_ram_ranges(&bi, ram, ARRAY_SIZE(ram));
	for (unsigned int i = 0; i < n_ram; i++) {
		/* guest_ram_ranges() promises sorted, page-aligned, disjoint ranges... */
		assert_true(ram[i].start < ram[i].end);
		assert_int_equal(ram[i].start & 4095, 0);
		assert_int_equal(ram[i].end & 4095, 0);
		if (i)
			assert_true(ram[i - 1].end < ram[i].start);
		/* ...and none of them touches the hypervisor region. */
		assert_true(ram[i].end <= TEST_HV_START || ram[i].start >= TEST_HV_END);
	}
	limit = expected_limit();

	n_ranges = ept_identity_ranges(&bi, grants, ARRAY_SIZE(grants), ranges, ARRAY_SIZE(ranges));
	assert_true(n_ranges > 0);
	/* From 0 to the end of RAM without gaps, each kind change a new range. */
	assert_int_equal(ranges[0].start, 0);
	for (unsigned int i = 0; i < n_ranges; i++) {
		assert_true(ranges[i].start < ranges[i].end);
		assert_int_equal(ranges[i].start & 4095, 0);
		assert_int_equal(ranges[i].end & 4095, 0);
		if (i) {
			assert_int_equal(ranges[i - 1].end, ranges[i].start);
			assert_int_not_equal(ranges[i - 1].kind, ranges[i].kind);
		}
	}
	if (ranges[n_ranges - 1].end != limit)
		fail_msg("the identity ranges end at %#llx, the map's RAM at %#llx",
			 (unsigned long long)ranges[n_ranges - 1].end, (unsigned long long)limit);
}

/* The range containing @a (they cover [0, limit) without gaps). */
static const struct ept_range *range_of(uint64_t a)
{
	for (unsigned int i = 0; i < n_ranges; i++)
		if (a >= ranges[i].start && a < ranges[i].end)
			return &ranges[i];
	return NULL;
}

/* --- checks --------------------------------------------------------------- */

static const char *kind_name(enum ept_range_kind k)
{
	return k == EPT_RANGE_RAM ? "RAM (WB)" : k == EPT_RANGE_MMIO ? "MMIO (UC, RW)" :
	       k == EPT_RANGE_ROM ? "ROM (UC)" : k == EPT_RANGE_FIRMWARE ? "firmware data (WB, RW)" :
	       "not present";
}

static uint64_t page_size(unsigned int level)
{
	return 1ull << (12 + 9 * level);
}

/* One address: present exactly when it should be, identity, RWX, memory type. */
static void check_addr(const struct ept *ept, uint64_t a)
{
	enum ept_range_kind want = expected_kind(a);
	unsigned int level = 99;
	uint64_t e = ept_lookup(ept, a, &level);
	uint64_t size, base;

	if (want == EPT_RANGE_HOLE) {
		if (e)
			fail_msg("%#llx must not be mapped, leaf %#llx", (unsigned long long)a,
				 (unsigned long long)e);
		return;
	}
	if (!e)
		fail_msg("%#llx (%s) is not mapped", (unsigned long long)a, kind_name(want));
	assert_true(level <= 2);
	size = page_size(level);
	base = e & EPT_ADDR_MASK & ~(size - 1);
	/* Devices and firmware data are never executable; RAM and the firmware ROMs are. */
	if ((e & EPT_RWX) != (want == EPT_RANGE_MMIO || want == EPT_RANGE_FIRMWARE ?
			      (EPT_READ | EPT_WRITE) : EPT_RWX) ||
	    base + (a & (size - 1)) != a ||
	    (e & EPT_MEMTYPE_MASK) != (want == EPT_RANGE_RAM || want == EPT_RANGE_FIRMWARE ?
				       EPT_MEMTYPE_WB : EPT_MEMTYPE_UC) ||
	    !!(e & EPT_LARGE_PAGE) != (level > 0) ||
	    (e & EPT_ADDR_MASK & (size - 1)))
		fail_msg("%#llx (%s): leaf %#llx at level %u is wrong", (unsigned long long)a,
			 kind_name(want), (unsigned long long)e, level);
}

/* Page size: a leaf lies in one range; a larger page was not possible. */
static void check_page_size(const struct ept *ept, uint64_t a, unsigned int level)
{
	uint64_t size = page_size(level), base = a & ~(size - 1);
	const struct ept_range *r = range_of(a);

	assert_non_null(r);
	if (base < r->start || base + size > r->end)
		fail_msg("%#llx: a %llu-KiB page crosses the edge of [%#llx, %#llx)",
			 (unsigned long long)a, (unsigned long long)(size >> 10),
			 (unsigned long long)r->start, (unsigned long long)r->end);
	for (unsigned int bigger = level + 1; bigger <= 2; bigger++) {
		uint64_t bs = page_size(bigger), bb = a & ~(bs - 1);
		bool allowed = bigger == 2 ? ept->use_1g : ept->use_2m;

		if (allowed && bb >= r->start && bb + bs <= r->end)
			fail_msg("%#llx: mapped with a %llu-KiB page where a %llu-KiB page fits in [%#llx, %#llx)",
				 (unsigned long long)a, (unsigned long long)(size >> 10),
				 (unsigned long long)(bs >> 10), (unsigned long long)r->start,
				 (unsigned long long)r->end);
	}
}

static void check_map(const struct ept *ept)
{
	uint64_t present = 0, mapped = 0, seen[3] = { 0, 0, 0 };

	/* Boundaries of every entry of the boot map and of every hole. */
	for (unsigned int i = 0; i < bi.mmap_count; i++) {
		uint64_t s = bi.mmap[i].addr, e = s + bi.mmap[i].len;
		const uint64_t pts[] = { s - 1, s, e - 1, e, (s + 4095) & ~4095ull,
					 ((s + 4095) & ~4095ull) - 1, e & ~4095ull, (e & ~4095ull) - 1 };

		for (unsigned int k = 0; k < ARRAY_SIZE(pts); k++)
			if (pts[k] < limit + GiB)
				check_addr(ept, pts[k]);
	}
	{
		const uint64_t pts[] = {
			TEST_HV_START - 1, TEST_HV_START, TEST_HV_END - 1, TEST_HV_END,
			PLATFORM_MMIO_TEST_PAGE - 1, PLATFORM_MMIO_TEST_PAGE,
			PLATFORM_MMIO_TEST_PAGE + 4095, PLATFORM_MMIO_TEST_PAGE + 4096,
			HV_IDENTITY_MAP_END - 1, HV_IDENTITY_MAP_END, limit - 1, limit, 0,
		};

		for (unsigned int k = 0; k < ARRAY_SIZE(pts); k++)
			check_addr(ept, pts[k]);
	}
	/* Every page, page by page, against the ranges; leaf by leaf for sizes. */
	for (uint64_t a = 0; a < limit;) {
		const struct ept_range *r = range_of(a);
		unsigned int level;
		uint64_t e = ept_lookup(ept, a, &level), size;

		assert_non_null(r);
		if (r->kind == EPT_RANGE_HOLE) {
			if (e)
				fail_msg("%#llx in a hole is mapped", (unsigned long long)a);
			a += 4096;
			continue;
		}
		present += 4096;
		if (!e)
			fail_msg("%#llx (%s) is not mapped", (unsigned long long)a, kind_name(r->kind));
		size = page_size(level);
		if (!(a & (size - 1))) {
			/* First page of a leaf: check the leaf once. */
			check_addr(ept, a);
			check_page_size(ept, a, level);
			seen[level] += size;
			mapped += size;
		}
		a += 4096;
	}
	/* Nothing mapped beyond the limit (in the same PML4 slot, at least). */
	check_addr(ept, limit + 2 * MiB);
	check_addr(ept, limit + GiB);
	assert_int_equal(present, mapped);
	assert_int_equal(ept->mapped[0], seen[0]);
	assert_int_equal(ept->mapped[1], seen[1]);
	assert_int_equal(ept->mapped[2], seen[2]);
	if (!ept->use_2m)
		assert_int_equal(ept->mapped[1], 0);
	if (!ept->use_1g)
		assert_int_equal(ept->mapped[2], 0);
	/* Every table ept.c allocated is counted, and the EPTP names the PML4. */
	assert_int_equal(ept->pages, n_tables);
	assert_int_equal(ept_pointer(ept) & EPT_ADDR_MASK, (uintptr_t)ept->pml4);
	assert_int_equal(ept_pointer(ept) & EPTP_MEMTYPE_MASK, EPTP_MEMTYPE_WB);
	assert_int_equal(ept_pointer(ept) & EPTP_PWL_MASK, EPTP_PWL_LEVEL4);
}

/* Build for the current map with each combination of page-size caps, and check. */
static void build_and_check_all_caps(void)
{
	compose_ranges();
	for (unsigned int caps = 0; caps < 4; caps++) {
		struct ept ept = { .use_2m = caps & 1, .use_1g = caps & 2 };

		table_limit = MAX_TABLES;
		assert_true(ept_build(&ept, ranges, n_ranges));
		check_map(&ept);
		free_tables();
	}
}

/* --- memory maps ------------------------------------------------------------ */

#define AVAIL	BOOT_MEM_AVAILABLE
#define RESV	BOOT_MEM_RESERVED

/* QEMU's pc machine with 128 MiB (e820 as SeaBIOS reports it). */
static const struct mm qemu_128m[] = {
	{ 0x0, 0x9fc00, AVAIL },
	{ 0x9fc00, 0x400, RESV },
	{ 0xf0000, 0x10000, RESV },
	{ 0x100000, 0x7ee0000, AVAIL },
	{ 0x7fe0000, 0x20000, RESV },
	{ 0xfffc0000, 0x40000, RESV },
};

static void test_qemu_128m(void **state)
{
	(void)state;
	set_map(qemu_128m, ARRAY_SIZE(qemu_128m));
	build_and_check_all_caps();
}

/* 6 GiB: RAM to 3 GiB, the PCI hole, RAM from 4 GiB to 6 GiB (1-GiB pages). */
static void test_ram_above_4g(void **state)
{
	static const struct mm m[] = {
		{ 0x0, 0x9f000, AVAIL },
		{ 0x9f000, 0x1000, RESV },
		{ 0xe8000, 0x18000, RESV },
		{ 0x100000, 0xbff00000, AVAIL },
		{ 0xfec00000, 0x1000, RESV },
		{ 0xfee00000, 0x1000, RESV },
		{ 0xfffc0000, 0x40000, RESV },
		{ 0x100000000ull, 0x80000000ull, AVAIL },
	};
	struct ept ept = { .use_2m = true, .use_1g = true };

	(void)state;
	set_map(m, ARRAY_SIZE(m));
	build_and_check_all_caps();

	/* The sizes the caps allow, exactly: 1 GiB pages above 4 GiB and at 1-3 GiB. */
	compose_ranges();
	table_limit = MAX_TABLES;
	assert_true(ept_build(&ept, ranges, n_ranges));
	{
		unsigned int level;

		assert_int_not_equal(ept_lookup(&ept, 4 * GiB, &level), 0);
		assert_int_equal(level, 2);
		assert_int_not_equal(ept_lookup(&ept, 5 * GiB + 12345, &level), 0);
		assert_int_equal(level, 2);
		assert_int_not_equal(ept_lookup(&ept, GiB, &level), 0);
		assert_int_equal(level, 2);
		/* The PCI hole's gigabyte: the granted pages only, nothing around them. */
		assert_int_equal(ept_lookup(&ept, PLATFORM_MMIO_TEST_PAGE - 4096, &level), 0);
		assert_int_equal(ept_lookup(&ept, PLATFORM_MMIO_TEST_PAGE, &level), 0);
		assert_int_equal(ept_lookup(&ept, 0xfec00000, &level), 0);
		assert_int_not_equal(ept_lookup(&ept, 0xe0000000, &level), 0);
		assert_int_equal(level, 1);
		assert_int_not_equal(ept_lookup(&ept, 0xfee00000, &level), 0);
		assert_int_equal(level, 0);
		/* The hypervisor's 32 MiB: 2-MiB aligned, so 2 MiB pages up to it. */
		assert_int_not_equal(ept_lookup(&ept, TEST_HV_START - 1, &level), 0);
		assert_int_equal(level, 1);
		assert_int_equal(ept_lookup(&ept, TEST_HV_START, &level), 0);
		/* The first MiB: 4-KiB pages (the EBDA at 0x9f000 is firmware data). */
		assert_int_not_equal(ept_lookup(&ept, 0x9f000, &level), 0);
		assert_int_equal(level, 0);
	}
	free_tables();
}

/*
 * Firmware maps as they come: unsorted, overlapping available entries,
 * edges not page-aligned, an empty entry, an entry inside the hypervisor
 * region, one across it, one over the MMIO test page.
 */
static void test_odd_maps(void **state)
{
	static const struct mm unsorted[] = {
		{ 0x100000, 0x3f00000, AVAIL },
		{ 0xfffc0000, 0x40000, RESV },
		{ 0x0, 0x9fc00, AVAIL },
		{ 0x6000000, 0x2000000, AVAIL },
		{ 0xf0000, 0x10000, RESV },
	};
	static const struct mm overlapping[] = {
		{ 0x0, 0xa0000, AVAIL },
		{ 0x80000, 0x30000, AVAIL },		/* overlaps and runs past the first */
		{ 0x100000, 0x10000000, AVAIL },
		{ 0x200000, 0x100000, AVAIL },		/* inside another */
		{ 0x8000000, 0x100000, RESV },		/* reserved inside available */
	};
	static const struct mm unaligned[] = {
		{ 0x0, 0x9fc01, AVAIL },
		{ 0x100123, 0x1234567, AVAIL },		/* both edges inside pages */
		{ 0x1400000, 0x0, AVAIL },		/* empty */
		{ 0x1500000, 0x800, AVAIL },		/* less than a page */
		{ 0x1600800, 0x1000, AVAIL },		/* a page, but straddling two */
		{ 0x2000fff, 0x2001, AVAIL },		/* exactly one whole page inside */
		{ 0x4100000, 0x100000, AVAIL },		/* inside the hypervisor region */
		{ 0x5f00000, 0x4000000, AVAIL },	/* across its end */
		{ 0xfea00000, 0x300000, AVAIL },	/* over the MMIO test page */
	};
	static const struct mm across[] = {
		{ 0x0, 0x9fc00, AVAIL },
		{ 0x100000, 0x1ff00000, AVAIL },	/* 1 MiB .. 512 MiB, over the hypervisor */
		{ 0x40000000, 0x40000000, AVAIL },	/* exactly the second gigabyte */
		{ 0xfffc0000, 0x40000, RESV },
	};
	static const struct mm none[] = {
		{ 0xfffc0000, 0x40000, RESV },
	};

	(void)state;
	set_map(unsorted, ARRAY_SIZE(unsorted));
	build_and_check_all_caps();
	set_map(overlapping, ARRAY_SIZE(overlapping));
	build_and_check_all_caps();
	set_map(unaligned, ARRAY_SIZE(unaligned));
	build_and_check_all_caps();
	set_map(across, ARRAY_SIZE(across));
	build_and_check_all_caps();
	set_map(none, ARRAY_SIZE(none));
	build_and_check_all_caps();
}

/* The hypervisor region is hidden whatever the map says; RAM around it is WB. */
static void test_hypervisor_region_and_test_page_hidden(void **state)
{
	struct ept ept = { .use_2m = true, .use_1g = true };
	unsigned int level;

	(void)state;
	set_map(qemu_128m, ARRAY_SIZE(qemu_128m));
	compose_ranges();
	table_limit = MAX_TABLES;
	assert_true(ept_build(&ept, ranges, n_ranges));
	for (uint64_t a = TEST_HV_START; a < TEST_HV_END; a += 4096)
		assert_int_equal(ept_lookup(&ept, a, NULL), 0);
	assert_int_equal(ept_lookup(&ept, PLATFORM_MMIO_TEST_PAGE + 0x10, NULL), 0);
	assert_int_equal(ept_lookup(&ept, TEST_HV_START - 4096, &level) & EPT_MEMTYPE_MASK,
			 EPT_MEMTYPE_WB);
	assert_int_equal(ept_lookup(&ept, TEST_HV_END, &level) & EPT_MEMTYPE_MASK,
			 EPT_MEMTYPE_WB);
	/* The granted local APIC page: uncached, present, not executable. */
	assert_int_equal(ept_lookup(&ept, 0xfee00000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_UC | EPT_READ | EPT_WRITE);
	/* Default deny: the I/O APIC, the HPET, the pages around the APIC, the VGA window. */
	assert_int_equal(ept_lookup(&ept, 0xfec00000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0xfed00000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0xfedff000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0xfee01000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0xa0000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0xb8000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0xd0000000, NULL), 0);
	/* The EBDA SeaBIOS reserves: the guest reads it (the RSDP may be there). */
	assert_int_equal(ept_lookup(&ept, 0x9fc00, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_WB | EPT_READ | EPT_WRITE);
	/* The ACPI tables at the top of RAM that SeaBIOS reserves: not mapped (RESV above 1 MiB). */
	assert_int_equal(ept_lookup(&ept, 0x7fe0000, NULL), 0);
	/* The BIOS and option ROMs, and the BIOS flash: executable. */
	assert_int_equal(ept_lookup(&ept, 0xc0000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_UC | EPT_RWX);
	assert_int_equal(ept_lookup(&ept, 0xfffff, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_UC | EPT_RWX);
	assert_int_equal(ept_lookup(&ept, 0xfffff000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_UC | EPT_RWX);
	assert_int_equal(ept_lookup(&ept, 0xffeff000, NULL), 0);
	free_tables();
}

/*
 * ept_set_4k() with no permissions on a granted device range: the page
 * goes, its neighbours in the split 2-MiB page keep their flags, and a
 * second call leaves it out.  On a page no grant maps (the I/O APIC and
 * HPET, which ioapic_exits.c keeps out) there is nothing to change.
 */
static void test_device_page_unmapped(void **state)
{
	static const uint64_t pages[] = { 0xe0001000, 0xe0200000 };
	struct ept ept = { .use_2m = true, .use_1g = true };
	const uint64_t mmio = EPT_MEMTYPE_UC | EPT_READ | EPT_WRITE;
	unsigned int level;

	(void)state;
	set_map(qemu_128m, ARRAY_SIZE(qemu_128m));
	compose_ranges();
	table_limit = MAX_TABLES;
	assert_true(ept_build(&ept, ranges, n_ranges));
	for (unsigned int i = 0; i < ARRAY_SIZE(pages); i++) {
		assert_true(ept_set_4k(&ept, pages[i], 0));
		assert_int_equal(ept_lookup(&ept, pages[i], NULL), 0);
		assert_int_equal(ept_lookup(&ept, pages[i] + 0x3ff, NULL), 0);
		assert_int_equal(ept_lookup(&ept, pages[i] - 4096, &level) &
				 (EPT_MEMTYPE_MASK | EPT_RWX), mmio);
		assert_int_equal(level, 0);
		assert_int_equal(ept_lookup(&ept, pages[i] + 4096, NULL) &
				 (EPT_MEMTYPE_MASK | EPT_RWX), mmio);
		/* Again: nothing to split, the page stays out. */
		assert_true(ept_set_4k(&ept, pages[i], 0));
		assert_int_equal(ept_lookup(&ept, pages[i], NULL), 0);
	}
	assert_false(ept_set_4k(&ept, 0xfec00000, 0));
	assert_int_equal(ept_lookup(&ept, 0xfec00000, NULL), 0);
	/* The local APIC's page, in another 2 MiB, untouched. */
	assert_int_equal(ept_lookup(&ept, 0xfee00000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX), mmio);
	free_tables();
}

/*
 * Bochs's BIOS: the ACPI tables in an ACPI entry at the top of RAM, the
 * EBDA and the BIOS area reserved below 1 MiB, the BIOS flash reserved.
 * The tables are mapped (the guest reads them), the flash is the ROM,
 * nothing else of the reserved entries above 1 MiB.
 */
static void test_firmware_data(void **state)
{
	static const struct mm m[] = {
		{ 0x0, 0x9f000, AVAIL },
		{ 0x9f000, 0x1000, RESV },
		{ 0xe8000, 0x18000, RESV },
		{ 0x100000, 0xfef0000, AVAIL },
		{ 0xfff0000, 0x10000, BOOT_MEM_ACPI_RECLAIMABLE },
		{ 0x20000000, 0x800, BOOT_MEM_ACPI_NVS },	/* not whole pages */
		{ 0xfec00000, 0x1000, RESV },
		{ 0xfffc0000, 0x40000, RESV },
		{ 0x100000000ull, 0x1000, BOOT_MEM_ACPI_NVS },	/* above 4 GiB: not mapped */
	};
	struct ept ept = { .use_2m = true, .use_1g = true };
	const uint64_t data = EPT_MEMTYPE_WB | EPT_READ | EPT_WRITE;

	(void)state;
	set_map(m, ARRAY_SIZE(m));
	build_and_check_all_caps();
	compose_ranges();
	table_limit = MAX_TABLES;
	assert_true(ept_build(&ept, ranges, n_ranges));
	assert_int_equal(ept_lookup(&ept, 0xfff0000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX), data);
	assert_int_equal(ept_lookup(&ept, 0xfffffff, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX), data);
	assert_int_equal(ept_lookup(&ept, 0x20000000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX), data);
	assert_int_equal(ept_lookup(&ept, 0x20001000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0x9f000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX), data);
	/* The BIOS area below 1 MiB stays the executable ROM, reserved or not. */
	assert_int_equal(ept_lookup(&ept, 0xe8000, NULL) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_UC | EPT_RWX);
	assert_int_equal(ept_lookup(&ept, 0xfec00000, NULL), 0);
	assert_int_equal(ept_lookup(&ept, 0x100000000ull, NULL), 0);
	free_tables();
}

/* A grant that is not whole pages below 4 GiB is the caller's bug: no map at all. */
static void test_bad_grants(void **state)
{
	static const struct ept_range bad[][1] = {
		{ { 0xfee00800, 0xfee01000, EPT_RANGE_MMIO } },
		{ { 0xfee00000, 0xfee00800, EPT_RANGE_MMIO } },
		{ { 0xfee01000, 0xfee00000, EPT_RANGE_MMIO } },
		{ { 0xfffff000, 0x100001000ull, EPT_RANGE_MMIO } },
	};

	(void)state;
	set_map(qemu_128m, ARRAY_SIZE(qemu_128m));
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++)
		assert_int_equal(ept_identity_ranges(&bi, bad[i], 1, ranges, ARRAY_SIZE(ranges)), 0);
	/* No grant at all: the local APIC page is not mapped either. */
	n_ranges = ept_identity_ranges(&bi, NULL, 0, ranges, ARRAY_SIZE(ranges));
	assert_true(n_ranges > 0);
	for (unsigned int i = 0; i < n_ranges; i++)
		assert_int_not_equal(ranges[i].kind, EPT_RANGE_MMIO);
}

/*
 * Regression: the identity map ended at the end of the RAM range with the
 * highest start, not the highest end.  Available entries [4 GiB, 8 GiB)
 * and [6 GiB, 6.25 GiB): RAM in [6.25 GiB, 8 GiB) was in the guest's
 * memory map but not in the EPT.  Also with the nested entry first, and
 * with two ranges that end above 4 GiB apart.
 */
static void test_nested_ram_above_4g(void **state)
{
	static const struct mm nested[] = {
		{ 0x0, 0x9fc00, AVAIL },
		{ 0x100000, 0x7ff00000, AVAIL },
		{ 4 * GiB, 4 * GiB, AVAIL },			/* 4 .. 8 GiB */
		{ 6 * GiB, GiB / 4, AVAIL },			/* 6 .. 6.25 GiB */
	};
	static const struct mm nested_first[] = {
		{ 6 * GiB, GiB / 4, AVAIL },
		{ 0x100000, 0x7ff00000, AVAIL },
		{ 4 * GiB, 4 * GiB, AVAIL },
	};
	static const struct mm apart[] = {
		{ 0x100000, 0x7ff00000, AVAIL },
		{ 5 * GiB, 2 * MiB, AVAIL },			/* 5 GiB .. 5 GiB + 2 MiB */
		{ 4 * GiB + 4096, 3 * GiB, AVAIL },		/* 4 GiB + 4 KiB .. 7 GiB + 4 KiB */
	};
	struct ept ept = { .use_2m = true, .use_1g = true };
	unsigned int level;

	(void)state;
	set_map(nested, ARRAY_SIZE(nested));
	build_and_check_all_caps();
	compose_ranges();
	assert_int_equal(limit, 8 * GiB);
	table_limit = MAX_TABLES;
	assert_true(ept_build(&ept, ranges, n_ranges));
	/* The top of RAM: a 1-GiB write-back page; nothing after it. */
	assert_int_equal(ept_lookup(&ept, 8 * GiB - 4096, &level) & (EPT_MEMTYPE_MASK | EPT_RWX),
			 EPT_MEMTYPE_WB | EPT_RWX);
	assert_int_equal(level, 2);
	assert_int_equal(ept_lookup(&ept, 8 * GiB, NULL), 0);
	free_tables();

	set_map(nested_first, ARRAY_SIZE(nested_first));
	build_and_check_all_caps();
	set_map(apart, ARRAY_SIZE(apart));
	build_and_check_all_caps();
}

/* More ranges than the caller has room for: 0, not a partial map. */
static void test_ranges_overflow(void **state)
{
	struct ept_range few[3];

	(void)state;
	set_map(qemu_128m, ARRAY_SIZE(qemu_128m));
	compose_ranges();
	assert_true(n_ranges > ARRAY_SIZE(few));
	assert_int_equal(ept_identity_ranges(&bi, grants, ARRAY_SIZE(grants), few, ARRAY_SIZE(few)),
			 0);
	assert_int_equal(ept_identity_ranges(&bi, grants, ARRAY_SIZE(grants), few, 0), 0);
	/* Exactly enough room is enough. */
	assert_int_equal(ept_identity_ranges(&bi, grants, ARRAY_SIZE(grants), ranges, n_ranges),
			 n_ranges);
}

/* Running out of table pages at any point fails cleanly. */
static void test_out_of_memory(void **state)
{
	struct ept ept = { .use_2m = true, .use_1g = false };
	unsigned int needed;

	(void)state;
	set_map(qemu_128m, ARRAY_SIZE(qemu_128m));
	compose_ranges();
	table_limit = MAX_TABLES;
	assert_true(ept_build(&ept, ranges, n_ranges));
	needed = n_tables;
	free_tables();
	for (unsigned int lim = 0; lim < needed; lim++) {
		ept = (struct ept){ .use_2m = true };
		table_limit = lim;
		assert_false(ept_build(&ept, ranges, n_ranges));
		free_tables();
	}
	table_limit = needed;
	ept = (struct ept){ .use_2m = true };
	assert_true(ept_build(&ept, ranges, n_ranges));
	check_map(&ept);
	free_tables();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_qemu_128m, teardown),
		cmocka_unit_test_teardown(test_ram_above_4g, teardown),
		cmocka_unit_test_teardown(test_odd_maps, teardown),
		cmocka_unit_test_teardown(test_hypervisor_region_and_test_page_hidden, teardown),
		cmocka_unit_test_teardown(test_device_page_unmapped, teardown),
		cmocka_unit_test_teardown(test_firmware_data, teardown),
		cmocka_unit_test_teardown(test_bad_grants, teardown),
		cmocka_unit_test_teardown(test_out_of_memory, teardown),
		cmocka_unit_test_teardown(test_nested_ram_above_4g, teardown),
		cmocka_unit_test_teardown(test_ranges_overflow, teardown),
	};

	return cmocka_run_group_tests_name("arch/vmx/ept.c: the identity map", tests, NULL, NULL);
}
