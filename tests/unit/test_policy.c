// SPDX-License-Identifier: GPL-2.0-only
/*
 * MSR bitmap (SDM Vol. 3C 25.6.9) and I/O bitmaps (25.6.4) built from rule
 * lists: defaults, range boundaries, rule order, and the byte layout the
 * CPU reads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "arch/vmx/policy.h"

/*
 * The layout as the SDM states it, written out here on purpose: these
 * tests check policy.c against the SDM, not against itself.
 */
#define LOW_LAST	0x00001fffu
#define HIGH_FIRST	0xc0000000u
#define HIGH_LAST	0xc0001fffu
#define READ_LOW_OFF	0
#define READ_HIGH_OFF	1024
#define WRITE_LOW_OFF	2048
#define WRITE_HIGH_OFF	3072

static uint8_t msr_bm[MSR_BITMAP_SIZE];
static uint8_t io_a[IO_BITMAP_SIZE], io_b[IO_BITMAP_SIZE];

static bool raw_bit(unsigned int off, uint32_t n)
{
	return msr_bm[off + n / 8] & (1u << (n % 8));
}

static void test_msr_default_intercepts_everything(void **state)
{
	unsigned int i;

	(void)state;
	memset(msr_bm, 0, sizeof(msr_bm));
	msr_bitmap_build(msr_bm, NULL, 0);
	for (i = 0; i < MSR_BITMAP_SIZE; i++)
		assert_int_equal(msr_bm[i], 0xff);
	assert_true(msr_bitmap_intercepts(msr_bm, 0x10, false));
	assert_true(msr_bitmap_intercepts(msr_bm, HIGH_FIRST + 0x80, true));
}

static void test_msr_layout_matches_sdm(void **state)
{
	/* One MSR in each range, one kind of access each. */
	const struct msr_bitmap_rule rules[] = {
		{ 0x10, 0x10, MSR_INTERCEPT_WRITE },		/* reads pass */
		{ HIGH_FIRST + 0x100, HIGH_FIRST + 0x100, MSR_INTERCEPT_READ },	/* writes pass */
	};

	(void)state;
	msr_bitmap_build(msr_bm, rules, ARRAY_SIZE(rules));
	assert_false(raw_bit(READ_LOW_OFF, 0x10));
	assert_true(raw_bit(WRITE_LOW_OFF, 0x10));
	assert_true(raw_bit(READ_HIGH_OFF, 0x100));
	assert_false(raw_bit(WRITE_HIGH_OFF, 0x100));
	/* Neighbours untouched. */
	assert_true(raw_bit(READ_LOW_OFF, 0x0f));
	assert_true(raw_bit(READ_LOW_OFF, 0x11));
	assert_true(raw_bit(WRITE_HIGH_OFF, 0xff));
	assert_true(raw_bit(WRITE_HIGH_OFF, 0x101));
	/* The same through the query function. */
	assert_false(msr_bitmap_intercepts(msr_bm, 0x10, false));
	assert_true(msr_bitmap_intercepts(msr_bm, 0x10, true));
	assert_true(msr_bitmap_intercepts(msr_bm, HIGH_FIRST + 0x100, false));
	assert_false(msr_bitmap_intercepts(msr_bm, HIGH_FIRST + 0x100, true));
	/* Only one byte of each quarter changed. */
	assert_int_equal(msr_bm[READ_LOW_OFF + 2], 0xfe);
	assert_int_equal(msr_bm[WRITE_HIGH_OFF + 0x20], 0xfe);
}

/* A rule applied after the build (the x2APIC MSRs trapped at run time, apic.c). */
static void test_msr_rule_set_after_build(void **state)
{
	const struct msr_bitmap_rule passthrough[] = { { 0x800, 0x8ff, MSR_INTERCEPT_NONE } };
	const struct msr_bitmap_rule trap = { 0x800, 0x8ff, MSR_INTERCEPT_RW };

	(void)state;
	msr_bitmap_build(msr_bm, passthrough, ARRAY_SIZE(passthrough));
	assert_false(msr_bitmap_intercepts(msr_bm, 0x80b, true));
	msr_bitmap_set(msr_bm, &trap);
	for (uint32_t msr = 0x800; msr <= 0x8ff; msr++) {
		assert_true(msr_bitmap_intercepts(msr_bm, msr, false));
		assert_true(msr_bitmap_intercepts(msr_bm, msr, true));
	}
	/* Rebuilt from the rules: as before. */
	msr_bitmap_build(msr_bm, passthrough, ARRAY_SIZE(passthrough));
	assert_false(msr_bitmap_intercepts(msr_bm, 0x830, false));
	assert_true(msr_bitmap_intercepts(msr_bm, 0x7ff, false));
	assert_true(msr_bitmap_intercepts(msr_bm, 0x900, true));
}

static void test_msr_range_boundaries(void **state)
{
	/* Pass through everything the bitmap can describe, and beyond it. */
	const struct msr_bitmap_rule rules[] = {
		{ 0, 0xffffffffu, MSR_INTERCEPT_NONE },
	};
	const uint32_t covered[] = { 0, 1, LOW_LAST, HIGH_FIRST, HIGH_LAST };
	/* Outside both ranges: RDMSR/WRMSR always exit (25.1.3). */
	const uint32_t outside[] = {
		LOW_LAST + 1, 0x4000, 0x40000000, HIGH_FIRST - 1, HIGH_LAST + 1,
		0xc0010000, 0xffffffffu,
	};
	unsigned int i;

	(void)state;
	msr_bitmap_build(msr_bm, rules, ARRAY_SIZE(rules));
	for (i = 0; i < MSR_BITMAP_SIZE; i++)
		assert_int_equal(msr_bm[i], 0);
	for (i = 0; i < ARRAY_SIZE(covered); i++) {
		assert_false(msr_bitmap_intercepts(msr_bm, covered[i], false));
		assert_false(msr_bitmap_intercepts(msr_bm, covered[i], true));
	}
	for (i = 0; i < ARRAY_SIZE(outside); i++) {
		assert_true(msr_bitmap_intercepts(msr_bm, outside[i], false));
		assert_true(msr_bitmap_intercepts(msr_bm, outside[i], true));
	}
}

static void test_msr_rule_straddling_range_end(void **state)
{
	/* 0x1ffe..0x2001: only 0x1ffe and 0x1fff have bits; no overflow into 0x2000. */
	const struct msr_bitmap_rule rules[] = {
		{ LOW_LAST - 1, LOW_LAST + 2, MSR_INTERCEPT_NONE },
		{ HIGH_LAST, HIGH_LAST + 5, MSR_INTERCEPT_NONE },
	};

	(void)state;
	msr_bitmap_build(msr_bm, rules, ARRAY_SIZE(rules));
	assert_false(msr_bitmap_intercepts(msr_bm, LOW_LAST - 1, false));
	assert_false(msr_bitmap_intercepts(msr_bm, LOW_LAST, true));
	assert_true(msr_bitmap_intercepts(msr_bm, LOW_LAST - 2, false));
	assert_true(msr_bitmap_intercepts(msr_bm, LOW_LAST + 1, false));
	assert_false(msr_bitmap_intercepts(msr_bm, HIGH_LAST, false));
	assert_true(msr_bitmap_intercepts(msr_bm, HIGH_LAST - 1, false));
	/* The high read bitmap ends where the low write bitmap starts. */
	assert_int_equal(msr_bm[WRITE_LOW_OFF], 0xff);
	assert_int_equal(msr_bm[READ_HIGH_OFF + 1023], 0x7f);
	assert_int_equal(msr_bm[WRITE_HIGH_OFF + 1023], 0x7f);
}

static void test_msr_rules_apply_in_order(void **state)
{
	/* Pass a block through, then trap writes to one MSR inside it. */
	const struct msr_bitmap_rule rules[] = {
		{ 0x800, 0x8ff, MSR_INTERCEPT_NONE },
		{ 0x830, 0x830, MSR_INTERCEPT_WRITE },
		{ 0x8ff, 0x8ff, MSR_INTERCEPT_RW },
		{ 0x8ff, 0x8ff, MSR_INTERCEPT_READ },	/* the last word wins */
	};
	const struct msr_bitmap_rule reversed[] = {
		{ 0x830, 0x830, MSR_INTERCEPT_WRITE },
		{ 0x800, 0x8ff, MSR_INTERCEPT_NONE },
	};

	(void)state;
	msr_bitmap_build(msr_bm, rules, ARRAY_SIZE(rules));
	assert_false(msr_bitmap_intercepts(msr_bm, 0x800, true));
	assert_false(msr_bitmap_intercepts(msr_bm, 0x830, false));
	assert_true(msr_bitmap_intercepts(msr_bm, 0x830, true));
	assert_true(msr_bitmap_intercepts(msr_bm, 0x8ff, false));
	assert_false(msr_bitmap_intercepts(msr_bm, 0x8ff, true));
	assert_true(msr_bitmap_intercepts(msr_bm, 0x900, false));

	msr_bitmap_build(msr_bm, reversed, ARRAY_SIZE(reversed));
	assert_false(msr_bitmap_intercepts(msr_bm, 0x830, true));
}

static void test_msr_empty_and_inverted_rules(void **state)
{
	const struct msr_bitmap_rule rules[] = {
		{ 0x20, 0x10, MSR_INTERCEPT_NONE },	/* first > last: nothing */
		{ 0x5000, 0x6000, MSR_INTERCEPT_NONE },	/* outside: ignored */
	};
	unsigned int i;

	(void)state;
	msr_bitmap_build(msr_bm, rules, ARRAY_SIZE(rules));
	for (i = 0; i < MSR_BITMAP_SIZE; i++)
		assert_int_equal(msr_bm[i], 0xff);
}

static void test_msr_build_overwrites_old_page(void **state)
{
	const struct msr_bitmap_rule pass[] = { { 0, LOW_LAST, MSR_INTERCEPT_NONE } };

	(void)state;
	msr_bitmap_build(msr_bm, pass, 1);
	msr_bitmap_build(msr_bm, NULL, 0);
	assert_true(msr_bitmap_intercepts(msr_bm, 0x10, false));
}

/* Default deny: with no grant, every port of both bitmaps exits. */
static void test_io_default_denies_everything(void **state)
{
	unsigned int i;

	(void)state;
	memset(io_a, 0, sizeof(io_a));
	memset(io_b, 0, sizeof(io_b));
	io_bitmap_build(io_a, io_b, NULL, 0);
	for (i = 0; i < IO_BITMAP_SIZE; i++) {
		assert_int_equal(io_a[i], 0xff);
		assert_int_equal(io_b[i], 0xff);
	}
}

static void test_io_boundaries(void **state)
{
	const struct io_port_range grants[] = {
		{ 0x7fff, 0x8000 },	/* straddles A and B */
		{ 0xffff, 0xffff },	/* the last port: the loop must not wrap */
		{ 0x0000, 0x0000 },
		{ 0x80, 0x80 },
		{ 0x3f8, 0x3ff },
	};
	unsigned int port, passed = 0;

	(void)state;
	io_bitmap_build(io_a, io_b, grants, ARRAY_SIZE(grants));
	/* Bit n of A is port n; bit n of B is port 0x8000 + n (25.6.4). */
	assert_int_equal(io_a[0x7fff / 8], 0x7f);
	assert_int_equal(io_b[0], 0xfe);
	assert_int_equal(io_b[IO_BITMAP_SIZE - 1], 0x7f);
	assert_int_equal(io_a[0], 0xfe);
	assert_int_equal(io_a[0x80 / 8], 0xfe);
	assert_int_equal(io_a[0x3f8 / 8], 0x00);
	for (port = 0; port <= 0xffff; port++) {
		bool granted = port == 0 || port == 0x80 || (port >= 0x3f8 && port <= 0x3ff) ||
			       port == 0x7fff || port == 0x8000 || port == 0xffff;

		assert_int_equal(io_bitmap_intercepts(io_a, io_b, (uint16_t)port), !granted);
		passed += granted;
	}
	assert_int_equal(passed, 13);
}

static void test_io_full_range(void **state)
{
	const struct io_port_range all[] = { { 0, 0xffff } };
	const struct io_port_range inverted[] = { { 0x10, 0x0f } };
	unsigned int i;

	(void)state;
	io_bitmap_build(io_a, io_b, all, 1);
	for (i = 0; i < IO_BITMAP_SIZE; i++) {
		assert_int_equal(io_a[i], 0);
		assert_int_equal(io_b[i], 0);
	}
	/* A reversed range grants nothing. */
	io_bitmap_build(io_a, io_b, inverted, 1);
	for (i = 0; i < IO_BITMAP_SIZE; i++)
		assert_int_equal(io_a[i] & io_b[i], 0xff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msr_default_intercepts_everything),
		cmocka_unit_test(test_msr_layout_matches_sdm),
		cmocka_unit_test(test_msr_range_boundaries),
		cmocka_unit_test(test_msr_rule_set_after_build),
		cmocka_unit_test(test_msr_rule_straddling_range_end),
		cmocka_unit_test(test_msr_rules_apply_in_order),
		cmocka_unit_test(test_msr_empty_and_inverted_rules),
		cmocka_unit_test(test_msr_build_overwrites_old_page),
		cmocka_unit_test(test_io_default_denies_everything),
		cmocka_unit_test(test_io_boundaries),
		cmocka_unit_test(test_io_full_range),
	};

	return cmocka_run_group_tests_name("MSR and I/O bitmaps", tests, NULL, NULL);
}
