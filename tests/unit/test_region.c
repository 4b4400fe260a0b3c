// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/host/region.c: where the hypervisor region goes (issue 9 item 2):
 * at the top of the highest available RAM below 4 GiB, ending where that
 * RAM ends, so the guest keeps [1 MiB, region) in one piece.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "runtime/host/layout.h"
#include "runtime/host/region.h"

#define MiB	0x100000ull
#define GiB	0x40000000ull
#define AVAIL	BOOT_MEM_AVAILABLE

/* Bochs's map with 256 MiB: the ACPI tables in the last 64 KiB. */
static const struct boot_mmap_entry bochs_256m[] = {
	{ 0, 0x9f000, AVAIL }, { 0x9f000, 0x1000, BOOT_MEM_RESERVED },
	{ 0xe8000, 0x18000, BOOT_MEM_RESERVED }, { MiB, 0xfff0000 - MiB, AVAIL },
	{ 0xfff0000, 0x10000, BOOT_MEM_ACPI_RECLAIMABLE },
	{ 0xfffc0000, 0x40000, BOOT_MEM_RESERVED },
};

static void test_top_of_ram_up_to_its_end(void **state)
{
	struct phys_range r;

	(void)state;
	assert_true(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), NULL, 0, 10 * MiB, &r));
	/* 2-MiB aligned start, no RAM left above: [1 MiB, r.start) is the guest's. */
	assert_int_equal(r.start, 0xf400000);
	assert_int_equal(r.end, 0xfff0000);
	assert_true(r.end - r.start >= 10 * MiB);
}

static void test_two_gib_and_above_4g(void **state)
{
	static const struct boot_mmap_entry two_g[] = {
		{ 0, 0x9f000, AVAIL }, { MiB, 0x7fff0000 - MiB, AVAIL },
		{ 0x7fff0000, 0x10000, BOOT_MEM_ACPI_RECLAIMABLE },
	};
	/* RAM above 4 GiB is not in the hypervisor's identity map: not chosen. */
	static const struct boot_mmap_entry eight_g[] = {
		{ 0, 0x9f000, AVAIL }, { MiB, 3 * GiB - MiB, AVAIL },
		{ 4 * GiB, 5 * GiB, AVAIL },
	};
	/* One range across 4 GiB: cut at 4 GiB. */
	static const struct boot_mmap_entry across[] = {
		{ MiB, 5 * GiB, AVAIL },
	};
	struct phys_range r;

	(void)state;
	assert_true(region_choose(two_g, ARRAY_SIZE(two_g), NULL, 0, 16 * MiB, &r));
	assert_int_equal(r.start, 0x7ee00000);
	assert_int_equal(r.end, 0x7fff0000);
	assert_true(region_choose(eight_g, ARRAY_SIZE(eight_g), NULL, 0, 16 * MiB, &r));
	assert_int_equal(r.start, 3 * GiB - 16 * MiB);
	assert_int_equal(r.end, 3 * GiB);
	assert_true(region_choose(across, ARRAY_SIZE(across), NULL, 0, 16 * MiB, &r));
	assert_int_equal(r.end, HV_IDENTITY_MAP_END);
	assert_int_equal(r.start, HV_IDENTITY_MAP_END - 16 * MiB);
}

static void test_avoids_the_boot_loaders_data(void **state)
{
	/* A module near the top, the image being copied just below it. */
	static const struct phys_range avoid[] = {
		{ 0xff00000, 0xff80000 },		/* a module */
		{ 0xf800000, 0xf8a5000 },		/* the running image */
	};
	struct phys_range r;

	(void)state;
	assert_true(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), avoid, ARRAY_SIZE(avoid), 8 * MiB, &r));
	for (unsigned int i = 0; i < ARRAY_SIZE(avoid); i++)
		assert_false(avoid[i].start < r.end && r.start < avoid[i].end);
	/* Below both: up to the image, from the 2-MiB boundary 8 MiB under it. */
	assert_int_equal(r.end, 0xf800000);
	assert_int_equal(r.start, 0xf000000);
	/* Only the module in the way: up to it. */
	assert_true(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), avoid, 1, 8 * MiB, &r));
	assert_int_equal(r.end, 0xff00000);
	assert_int_equal(r.start, 0xf600000);
}

static bool overlaps_any(const struct phys_range *r, const struct phys_range *avoid,
			 unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (avoid[i].start < r->end && r->start < avoid[i].end)
			return true;
	return false;
}

/*
 * Modules a boot loader put at the very top of RAM below 4 GiB (as one
 * that allocates from the top would), with their command lines: the
 * region, sized for the image, their copies and the pool (reloc.c), goes
 * just below the lowest one in the way, whole, 2-MiB aligned.  After the
 * copy their old pages are the guest's again, above the region
 * (guest_ram_ranges(); test_guest_loader.c).
 */
static void test_modules_near_the_top_of_ram(void **state)
{
	static const struct phys_range avoid[] = {
		{ 0x4000000, 0x40a5000 },	/* the image where the loader put it */
		{ 0x9000, 0x9100 },		/* multiboot information, memory map */
		{ 0xfc00000, 0xfe80000 },	/* module 0: 2.5 MiB */
		{ 0xfe80000, 0xff80000 },	/* module 1: 1 MiB, right after it */
		{ 0xff80000, 0xff80020 },	/* their command lines */
	};
	uint64_t modules = 0x280000 + 0x100000;
	uint64_t size = region_size(0xa5000, modules, region_ram_bytes(bochs_256m, ARRAY_SIZE(bochs_256m)));
	struct phys_range r;

	(void)state;
	assert_true(size >= 0xa5000 + modules);
	assert_true(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), avoid, ARRAY_SIZE(avoid), size, &r));
	assert_false(overlaps_any(&r, avoid, ARRAY_SIZE(avoid)));
	assert_int_equal(r.end, 0xfc00000);
	assert_int_equal(r.start % (2 * MiB), 0);
	assert_true(r.end - r.start >= size);
	assert_true(r.end - r.start < size + 2 * MiB);

	/* One module at the top ending with RAM: the same, below it. */
	{
		static const struct phys_range top[] = { { 0xffe0000, 0xfff0000 } };

		assert_true(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), top, ARRAY_SIZE(top), 8 * MiB, &r));
		assert_int_equal(r.end, 0xffe0000);
		assert_int_equal(r.start, 0xf600000);
	}
	/*
	 * A module filling most of RAM: the region, which holds its copy,
	 * fits neither below nor above it -- refused (reloc.c says "no
	 * available RAM below 4 GiB holds it"), never placed over it.
	 */
	{
		static const struct phys_range big[] = { { 0x2000000, 0xf000000 } };

		size = region_size(0xa5000, 0xd000000, region_ram_bytes(bochs_256m, ARRAY_SIZE(bochs_256m)));
		assert_true(size > 0xd000000);
		assert_false(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), big, ARRAY_SIZE(big), size, &r));
	}
}

static void test_nothing_fits(void **state)
{
	static const struct boot_mmap_entry small[] = {
		{ 0, 0x9f000, AVAIL }, { MiB, 6 * MiB, AVAIL },
		{ 4 * GiB, GiB, AVAIL },
	};
	static const struct boot_mmap_entry low_only[] = {
		{ 0, 0x9f000, AVAIL }, { 0x9f000, 0x61000, BOOT_MEM_RESERVED },
	};
	struct phys_range r;

	(void)state;
	assert_false(region_choose(small, ARRAY_SIZE(small), NULL, 0, 8 * MiB, &r));
	assert_false(region_choose(low_only, ARRAY_SIZE(low_only), NULL, 0, 64 * 1024, &r));
	assert_false(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), NULL, 0, 0, &r));
	assert_false(region_choose(bochs_256m, ARRAY_SIZE(bochs_256m), NULL, 0, GiB, &r));
}

static void test_size(void **state)
{
	(void)state;
	assert_int_equal(region_ram_bytes(bochs_256m, ARRAY_SIZE(bochs_256m)), 0x9f000 + 0xfff0000 - MiB);
	/* The pool: HV_POOL_MIN + RAM / 256, at most HV_POOL_MAX; pages rounded up. */
	assert_int_equal(region_size(0x1000, 0, 0), PAGE_SIZE + HV_POOL_MIN);
	assert_int_equal(region_size(0x1234, 0x10, 2 * GiB),
			 2 * PAGE_SIZE + PAGE_SIZE + HV_POOL_MIN + 8 * MiB);
	assert_int_equal(region_size(0, 0, 64 * GiB), (uint64_t)HV_POOL_MAX);
	assert_int_equal(region_size(0, HV_REGION_MAX, 0), 0);
	assert_int_equal(region_size(HV_REGION_MAX + 1ull, 0, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_of_ram_up_to_its_end),
		cmocka_unit_test(test_two_gib_and_above_4g),
		cmocka_unit_test(test_avoids_the_boot_loaders_data),
		cmocka_unit_test(test_modules_near_the_top_of_ram),
		cmocka_unit_test(test_nothing_fits),
		cmocka_unit_test(test_size),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
