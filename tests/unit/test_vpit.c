// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/vpit.c: the guest's 8254 and port 0x61, programmed as a PC
 * BIOS, Linux (the periodic tick, pit_calibrate_tsc() on channel 2) and
 * a one-shot kernel do.  Time is in input-clock ticks, so every
 * expectation is exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/devices/vpit.h"

static void out(struct vpit *pit, uint16_t port, uint8_t v, uint64_t now)
{
	assert_true(vpit_io(pit, port, false, &v, now));
}

static uint8_t in(struct vpit *pit, uint16_t port, uint64_t now)
{
	uint8_t v = 0xee;

	assert_true(vpit_io(pit, port, true, &v, now));
	return v;
}

static void test_bios_state(void **state)
{
	struct vpit pit;

	(void)state;
	vpit_reset(&pit, 1000);
	assert_int_equal(vpit_next_irq0(&pit, 1000), 1000 + 65536);
	assert_int_equal(vpit_irq0_edges(&pit, 1000 + 65535), 0);
	assert_int_equal(vpit_irq0_edges(&pit, 1000 + 65536), 1);
	assert_int_equal(vpit_irq0_edges(&pit, 1000 + 65536), 0);
	/* Mode 3: OUT high for the first half of a period, low for the rest. */
	assert_true(vpit_out(&pit, 0, 1000 + 65536 + 32767));
	assert_false(vpit_out(&pit, 0, 1000 + 65536 + 32768));
	/* Coalesced: three periods without a look are three edges. */
	assert_int_equal(vpit_irq0_edges(&pit, 1000 + 4 * 65536 + 5), 3);
}

/* Linux's setup_pit_timer(): mode 2, LATCH = (1193182 + 50) / 100. */
static void test_periodic_rate_generator(void **state)
{
	const unsigned int latch = (VPIT_HZ + 50) / 100;
	struct vpit pit;

	(void)state;
	vpit_reset(&pit, 0);
	out(&pit, 0x43, 0x34, 10);	/* channel 0, LSB then MSB, mode 2 */
	assert_int_equal(vpit_next_irq0(&pit, 10), UINT64_MAX);	/* no count yet */
	out(&pit, 0x40, latch & 0xff, 11);
	out(&pit, 0x40, latch >> 8, 12);
	assert_int_equal(vpit_next_irq0(&pit, 12), 12 + latch);
	assert_int_equal(vpit_irq0_edges(&pit, 12 + 10 * latch - 1), 9);
	assert_int_equal(vpit_irq0_edges(&pit, 12 + 10 * latch), 1);
	/* OUT low for the one tick at count 1, then the reload. */
	assert_false(vpit_out(&pit, 0, 12 + latch - 1));
	assert_true(vpit_out(&pit, 0, 12 + latch));
	/* The count, read LSB then MSB, runs down from the latch value. */
	assert_int_equal(in(&pit, 0x40, 12 + 100), (latch - 100) & 0xff);
	assert_int_equal(in(&pit, 0x40, 12 + 100), (latch - 100) >> 8);
}

static void test_one_shot(void **state)
{
	struct vpit pit;

	(void)state;
	vpit_reset(&pit, 0);
	assert_int_equal(vpit_irq0_edges(&pit, 100), 0);
	out(&pit, 0x43, 0x30, 100);	/* channel 0, LSB then MSB, mode 0 */
	assert_false(vpit_out(&pit, 0, 100));
	out(&pit, 0x40, 0xe8, 100);
	out(&pit, 0x40, 0x03, 100);	/* 1000 */
	assert_int_equal(vpit_next_irq0(&pit, 100), 1100);
	assert_false(vpit_out(&pit, 0, 1099));
	assert_true(vpit_out(&pit, 0, 1100));
	assert_int_equal(vpit_irq0_edges(&pit, 5000), 1);
	assert_int_equal(vpit_next_irq0(&pit, 5000), UINT64_MAX);
	assert_int_equal(vpit_irq0_edges(&pit, 500000), 0);
	/* After the terminal count the counter wraps on and OUT stays high. */
	assert_true(vpit_out(&pit, 0, 500000));
	/* Rewriting the count arms it again. */
	out(&pit, 0x40, 0x10, 600000);
	assert_false(vpit_out(&pit, 0, 600000));
	out(&pit, 0x40, 0x00, 600000);
	assert_int_equal(vpit_irq0_edges(&pit, 600016), 1);
}

static void test_edges_survive_reprogramming(void **state)
{
	struct vpit pit;

	(void)state;
	vpit_reset(&pit, 0);
	out(&pit, 0x43, 0x34, 70000);	/* one BIOS period went by */
	out(&pit, 0x40, 0x00, 70000);
	out(&pit, 0x40, 0x01, 70000);	/* 256 */
	assert_int_equal(vpit_irq0_edges(&pit, 70000 + 512), 3);
}

static void test_latch_and_read_back(void **state)
{
	struct vpit pit;

	(void)state;
	vpit_reset(&pit, 0);
	out(&pit, 0x43, 0x34, 0);
	out(&pit, 0x40, 0x00, 0);
	out(&pit, 0x40, 0x10, 0);	/* 4096 */
	out(&pit, 0x43, 0x00, 96);	/* counter latch, channel 0 */
	out(&pit, 0x43, 0x00, 500);	/* ignored: the first latch stands */
	assert_int_equal(in(&pit, 0x40, 1000), 0xa0);	/* 4000 = 0x0fa0 */
	assert_int_equal(in(&pit, 0x40, 2000), 0x0f);
	assert_int_equal(in(&pit, 0x40, 3000), (4096 - 3000) & 0xff);	/* live again */
	assert_int_equal(in(&pit, 0x40, 3000), (4096 - 3000) >> 8);

	/* Read-back of channel 0's status: OUT, RW = 3, mode 2. */
	out(&pit, 0x43, 0xe2, 3000);
	assert_int_equal(in(&pit, 0x40, 3000), 0x80 | 0x30 | 0x04);
	/* Status and count latched together: the status comes first. */
	out(&pit, 0x43, 0xc2, 4000);
	assert_int_equal(in(&pit, 0x40, 4001), 0x80 | 0x30 | 0x04);
	assert_int_equal(in(&pit, 0x40, 4002), 96);	/* 4096 - 4000 */
	assert_int_equal(in(&pit, 0x40, 4003), 0);
	/* A control word: null count until the count is written. */
	out(&pit, 0x43, 0x10, 5000);	/* channel 0, LSB only, mode 0 */
	out(&pit, 0x43, 0xe2, 5000);
	assert_int_equal(in(&pit, 0x40, 5000), 0x40 | 0x10);
	assert_int_equal(in(&pit, 0x43, 5000), 0xff);
	assert_false(vpit_io(&pit, 0x44, true, &(uint8_t){ 0 }, 0));
}

/* Linux's pit_calibrate_tsc() and pit_hpet_ptimer_calibrate_cpu(). */
static void test_channel2_gate_and_port61(void **state)
{
	struct vpit pit;

	(void)state;
	vpit_reset(&pit, 0);
	assert_int_equal(in(&pit, 0x61, 0) & 0x21, 0x20);	/* idle: OUT2 high */
	out(&pit, 0x61, (in(&pit, 0x61, 0) & ~0x02) | 0x01, 0);	/* gate on, speaker off */
	assert_int_equal(in(&pit, 0x61, 0) & 0x0f, 0x01);
	out(&pit, 0x43, 0xb0, 10);	/* channel 2, LSB then MSB, mode 0 */
	out(&pit, 0x42, 0x9c, 10);
	out(&pit, 0x42, 0x2e, 10);	/* 11932 */
	assert_int_equal(in(&pit, 0x61, 10 + 11931) & 0x20, 0);
	assert_int_equal(in(&pit, 0x61, 10 + 11932) & 0x20, 0x20);

	/* A low gate holds a mode-0 count; a high one resumes it. */
	out(&pit, 0x43, 0xb0, 20000);
	out(&pit, 0x42, 0x00, 20000);
	out(&pit, 0x42, 0x01, 20000);	/* 256 */
	out(&pit, 0x61, 0x00, 20100);
	assert_int_equal(in(&pit, 0x42, 90000), 156);
	out(&pit, 0x61, 0x01, 90000);
	assert_int_equal(in(&pit, 0x61, 90155) & 0x20, 0);
	assert_int_equal(in(&pit, 0x61, 90156) & 0x20, 0x20);

	/* In mode 2 the rising gate restarts the count. */
	out(&pit, 0x43, 0xb4, 100000);
	out(&pit, 0x42, 0x00, 100000);
	out(&pit, 0x42, 0x01, 100000);
	out(&pit, 0x61, 0x00, 100050);
	assert_int_equal(in(&pit, 0x61, 100060) & 0x20, 0x20);	/* forced high */
	out(&pit, 0x61, 0x01, 100060);
	assert_int_equal(in(&pit, 0x42, 100070), 246);
	/* The refresh bit toggles as time passes. */
	assert_int_not_equal(in(&pit, 0x61, 0) & 0x10, in(&pit, 0x61, 18) & 0x10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bios_state),
		cmocka_unit_test(test_periodic_rate_generator),
		cmocka_unit_test(test_one_shot),
		cmocka_unit_test(test_edges_survive_reprogramming),
		cmocka_unit_test(test_latch_and_read_back),
		cmocka_unit_test(test_channel2_gate_and_port61),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
