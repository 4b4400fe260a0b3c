// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/loader/linux_loader.c: linux_plan() on bzImage headers built here
 * (Documentation/arch/x86/boot.rst offsets): where the kernel, initrd,
 * zero page and command line go, the zero page's fields and its e820 map
 * (guest RAM without the hypervisor region, the firmware's reserved
 * entries as they were).  Hostile images -- truncated, too old, zImage,
 * an inconsistent header length, a kernel or initrd that does not fit,
 * a command line too long -- are refused with the loader's message; under
 * ASan nothing is read past the image.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "fake_runtime.h"
#include "runtime/host/layout.h"
#include "runtime/loader/linux_loader.h"
#include "test_layout.h"

#define MiB		0x100000ull
#define SETUP_SECTS	4
#define KERNEL_BYTES	(64 * 1024)
#define IMAGE_BYTES	((SETUP_SECTS + 1) * 512 + KERNEL_BYTES)
#define HDR_END		0x268		/* protocol 2.15: the header ends at 0x268 */

static void put16(uint8_t *p, unsigned int off, uint16_t v) { memcpy(p + off, &v, 2); }
static void put32(uint8_t *p, unsigned int off, uint32_t v) { memcpy(p + off, &v, 4); }
static void put64(uint8_t *p, unsigned int off, uint64_t v) { memcpy(p + off, &v, 8); }
static uint16_t get16(const uint8_t *p, unsigned int off) { uint16_t v; memcpy(&v, p + off, 2); return v; }
static uint32_t get32(const uint8_t *p, unsigned int off) { uint32_t v; memcpy(&v, p + off, 4); return v; }
static uint64_t get64(const uint8_t *p, unsigned int off) { uint64_t v; memcpy(&v, p + off, 8); return v; }

/* A relocatable 2.15 bzImage as Debian's 6.1 kernels have it, made up. */
static uint8_t *make_image(size_t len)
{
	uint8_t *img = calloc(1, len);

	assert_non_null(img);
	img[0x1f1] = SETUP_SECTS;
	put32(img, 0x1f4, KERNEL_BYTES / 16);		/* syssize */
	put16(img, 0x1fe, 0xaa55);			/* boot_flag */
	img[0x200] = 0xeb;				/* jmp short */
	img[0x201] = HDR_END - 0x202;
	memcpy(img + 0x202, "HdrS", 4);
	put16(img, 0x206, 0x020f);			/* version 2.15 */
	img[0x211] = 0x01;				/* loadflags: LOADED_HIGH */
	put32(img, 0x214, 0x100000);			/* code32_start */
	put32(img, 0x22c, 0x7fffffff);			/* initrd_addr_max */
	put32(img, 0x230, 0x200000);			/* kernel_alignment */
	img[0x234] = 1;					/* relocatable_kernel */
	put32(img, 0x238, 2047);			/* cmdline_size */
	put64(img, 0x258, 0x1000000);			/* pref_address */
	put32(img, 0x260, 8 * MiB);			/* init_size */
	return img;
}

/* 256 MiB of Bochs RAM as guest_ram_ranges() gives it: the hypervisor's hole cut out. */
static const struct phys_range ram[] = {
	{ 0, 0x9f000 }, { MiB, TEST_HV_START }, { TEST_HV_END, 0xfff0000 },
};
static const struct linux_e820_in reserved[] = {
	{ 0x9fc00, 0x400, 2 }, { 0xf0000, 0x10000, 2 },
	{ TEST_HV_START + MiB, MiB, 2 },		/* over the hypervisor: hidden */
	{ 0xfff0000, 0x10000, 3 },			/* ACPI tables */
};

static struct linux_plan plan;

static bool plan_for(const uint8_t *img, size_t len, const char *cmd, bool initrd,
		     uint64_t initrd_len, const struct phys_range *r, unsigned int n)
{
	fake_printk_reset();
	return linux_plan(img, len, cmd, initrd, initrd_len, r, n, reserved,
			  ARRAY_SIZE(reserved),
			  &(struct phys_range){ TEST_HV_START, TEST_HV_END }, &plan);
}

static bool overlap(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

static bool inside_ram(uint64_t a, uint64_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(ram); i++)
		if (a >= ram[i].start && a + len <= ram[i].end)
			return true;
	return false;
}

static void test_good_image(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);
	const uint8_t *zp = plan.zero_page;
	const uint64_t initrd_len = 3 * MiB + 123;

	(void)state;
	assert_true(plan_for(img, IMAGE_BYTES, "console=ttyS0 quiet", true, initrd_len, ram, 3));
	assert_true(linux_is_bzimage(img, IMAGE_BYTES));
	/* The kernel at pref_address, from the end of the setup sectors. */
	assert_int_equal(plan.kernel_addr, 0x1000000);
	assert_int_equal(plan.kernel_file_off, (SETUP_SECTS + 1) * 512);
	assert_int_equal(plan.kernel_file_len, KERNEL_BYTES);
	assert_int_equal(plan.kernel_mem_len, 8 * MiB);
	assert_int_equal(plan.version, 0x020f);
	/* The initrd: page-aligned, in guest RAM, clear of the kernel's init_size. */
	assert_int_equal(plan.initrd_addr & 0xfff, 0);
	assert_true(inside_ram(plan.initrd_addr, initrd_len));
	assert_false(overlap(plan.initrd_addr, initrd_len, plan.kernel_addr, plan.kernel_mem_len));
	assert_true(plan.initrd_addr + initrd_len <= 0x80000000ull);
	assert_true(inside_ram(plan.zero_page_addr, 4096));
	assert_true(inside_ram(plan.cmdline_addr, 20));
	assert_false(overlap(plan.zero_page_addr, 4096, plan.kernel_addr, plan.kernel_mem_len));
	assert_false(overlap(plan.zero_page_addr, 4096, plan.initrd_addr, initrd_len));
	assert_false(overlap(plan.cmdline_addr, 4096, plan.zero_page_addr, 4096));
	assert_false(overlap(plan.cmdline_addr, 4096, plan.initrd_addr, initrd_len));

	/* The zero page: the header copied, the loader's fields set. */
	assert_memory_equal(zp + 0x202, "HdrS", 4);
	assert_int_equal(get32(zp, 0x260), 8 * MiB);
	assert_int_equal(zp[0x210], 0xff);			/* type_of_loader */
	assert_int_equal(get16(zp, 0x1fa), 0xffff);		/* vid_mode */
	assert_int_equal(get32(zp, 0x214), 0x1000000);		/* code32_start = load address */
	assert_int_equal(get32(zp, 0x228), plan.cmdline_addr);
	assert_int_equal(get32(zp, 0x218), plan.initrd_addr);
	assert_int_equal(get32(zp, 0x21c), initrd_len);
	/* Nothing of the image past the header is in the zero page. */
	for (unsigned int o = HDR_END; o < 0x2d0; o++)
		assert_int_equal(zp[o], 0);

	/* e820: RAM and the reserved entries, sorted; the hypervisor's one gone. */
	{
		static const struct { uint64_t a, l; uint32_t t; } want[] = {
			{ 0, 0x9f000, 1 }, { 0x9fc00, 0x400, 2 }, { 0xf0000, 0x10000, 2 },
			{ MiB, TEST_HV_START - MiB, 1 },
			{ TEST_HV_END, 0xfff0000 - TEST_HV_END, 1 }, { 0xfff0000, 0x10000, 3 },
		};
		uint64_t ram_bytes = 0;

		assert_int_equal(zp[0x1e8], 6);
		for (unsigned int i = 0; i < 6; i++) {
			assert_int_equal(get64(zp, 0x2d0 + 20 * i), want[i].a);
			assert_int_equal(get64(zp, 0x2d0 + 20 * i + 8), want[i].l);
			assert_int_equal(get32(zp, 0x2d0 + 20 * i + 16), want[i].t);
			if (want[i].t == 1)
				ram_bytes += want[i].l;
			assert_false(overlap(want[i].a, want[i].l, TEST_HV_START,
					     TEST_HV_END - TEST_HV_START));
		}
		assert_int_equal(plan.ram_bytes, ram_bytes);
	}
	free(img);
}

static void test_no_initrd_and_not_relocatable(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);

	(void)state;
	img[0x234] = 0;		/* not relocatable: loaded at 1 MiB */
	assert_true(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_int_equal(plan.kernel_addr, MiB);
	assert_int_equal(plan.initrd_addr, 0);
	assert_int_equal(get32(plan.zero_page, 0x218), 0);
	assert_int_equal(get32(plan.zero_page, 0x21c), 0);
	free(img);
}

static void test_truncated(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);

	(void)state;
	/* Cut inside the protected-mode kernel: syssize says more. */
	assert_false(plan_for(img, IMAGE_BYTES - 16, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("image truncated"));
	/* Cut inside the setup sectors and inside the header itself. */
	assert_false(plan_for(img, 0x400, "", false, 0, ram, 3));
	assert_false(plan_for(img, 0x250, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("too short"));
	/* Too short even for the magic: not a bzImage at all. */
	assert_false(linux_is_bzimage(img, 0x205));
	free(img);
}

/* Every length cut from the front of a valid image is refused, never read past. */
static void test_every_short_length(void **state)
{
	(void)state;
	for (size_t len = 0x200; len < IMAGE_BYTES; len += 7) {
		uint8_t *img = make_image(IMAGE_BYTES), *cut = malloc(len);

		memcpy(cut, img, len);
		free(img);
		assert_false(plan_for(cut, len, "", false, 0, ram, 3));
		free(cut);
	}
}

static void test_old_protocol_and_zimage(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);

	(void)state;
	put16(img, 0x206, 0x0209);
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("boot protocol 2.09 is older than 2.10"));
	put16(img, 0x206, 0x020f);
	img[0x211] = 0;
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("zImage"));
	img[0x211] = 1;
	put16(img, 0x1fe, 0);
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("boot_flag"));
	free(img);
}

static void test_bad_header_length(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);

	(void)state;
	img[0x201] = 0x10;	/* ends before init_size */
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("setup header length"));
	img[0x201] = 0xff;	/* 0x301: past the zero page's header area, into e820 */
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	free(img);
}

static void test_kernel_not_in_ram(void **state)
{
	static const struct phys_range small[] = { { 0, 0x9f000 }, { MiB, 20 * MiB } };
	uint8_t *img = make_image(IMAGE_BYTES);

	(void)state;
	/* pref_address 16 MiB + 8 MiB init_size runs past 20 MiB. */
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, small, 2));
	assert_true(fake_printk_contains("not guest RAM"));
	/*
	 * A relocatable kernel whose pref_address would run into the
	 * hypervisor region goes to the first aligned place above it with
	 * room for init_size (Debian's: 16 MiB + 63 MiB); not relocatable,
	 * it is refused.
	 */
	put64(img, 0x258, TEST_HV_START - 2 * MiB);
	assert_true(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_int_equal(plan.kernel_addr, TEST_HV_END);
	put64(img, 0x258, 0x1000000);
	put32(img, 0x260, 63 * MiB);
	assert_true(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_int_equal(plan.kernel_addr, TEST_HV_END);
	assert_true(inside_ram(plan.kernel_addr, 63 * MiB));
	/* No room anywhere: refused. */
	put32(img, 0x260, 200 * MiB);
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	assert_true(fake_printk_contains("not guest RAM"));
	put32(img, 0x260, 8 * MiB);
	/* init_size that wraps the address space. */
	put64(img, 0x258, 0x1000000);
	put32(img, 0x260, 0xffffffff);
	assert_false(plan_for(img, IMAGE_BYTES, "", false, 0, ram, 3));
	free(img);
}

static void test_initrd_does_not_fit(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);

	(void)state;
	/* Larger than all of guest RAM. */
	assert_false(plan_for(img, IMAGE_BYTES, "", true, 300 * MiB, ram, 3));
	assert_true(fake_printk_contains("no room for the"));
	/* initrd_addr_max below where it could go (under 1 MiB). */
	put32(img, 0x22c, 0xfffff);
	assert_false(plan_for(img, IMAGE_BYTES, "", true, MiB, ram, 3));
	/* initrd_addr_max at 24 MiB: it must end there, not above. */
	put32(img, 0x22c, 24 * MiB - 1);
	assert_true(plan_for(img, IMAGE_BYTES, "", true, 2 * MiB, ram, 3));
	assert_true(plan.initrd_addr + 2 * MiB <= 24 * MiB);
	assert_false(overlap(plan.initrd_addr, 2 * MiB, plan.kernel_addr, plan.kernel_mem_len));
	free(img);
}

static void test_cmdline_too_long(void **state)
{
	uint8_t *img = make_image(IMAGE_BYTES);
	char cmd[64];

	(void)state;
	memset(cmd, 'x', sizeof(cmd) - 1);
	cmd[sizeof(cmd) - 1] = '\0';
	put32(img, 0x238, 62);
	assert_false(plan_for(img, IMAGE_BYTES, cmd, false, 0, ram, 3));
	assert_true(fake_printk_contains("command line of 63 bytes, the kernel takes 62"));
	put32(img, 0x238, 63);
	assert_true(plan_for(img, IMAGE_BYTES, cmd, false, 0, ram, 3));
	free(img);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_image),
		cmocka_unit_test(test_no_initrd_and_not_relocatable),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_every_short_length),
		cmocka_unit_test(test_old_protocol_and_zimage),
		cmocka_unit_test(test_bad_header_length),
		cmocka_unit_test(test_kernel_not_in_ram),
		cmocka_unit_test(test_initrd_does_not_fit),
		cmocka_unit_test(test_cmdline_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
