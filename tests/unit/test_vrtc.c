// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/vrtc.c: the guest's MC146818A RTC and CMOS, read and written
 * as a BIOS and Linux (mc146818_get_time(), the UIP wait) do.  Time is
 * in TSC ticks of a made-up rate, so every expectation is exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/devices/vrtc.h"

#define HZ	1000u	/* TSC ticks per second in these tests */

static void out(struct vrtc *rtc, uint16_t port, uint8_t v, uint64_t now)
{
	assert_true(vrtc_io(rtc, port, false, &v, now));
}

static uint8_t in(struct vrtc *rtc, uint16_t port, uint64_t now)
{
	uint8_t v = 0xee;

	assert_true(vrtc_io(rtc, port, true, &v, now));
	return v;
}

static uint8_t rd(struct vrtc *rtc, uint8_t index, uint64_t now)
{
	out(rtc, 0x70, index, now);
	return in(rtc, 0x71, now);
}

static void wr(struct vrtc *rtc, uint8_t index, uint8_t v, uint64_t now)
{
	out(rtc, 0x70, index, now);
	out(rtc, 0x71, v, now);
}

/* 2026-12-02 13:59:58, a Wednesday. */
static const struct vrtc_time when = { .sec = 58, .min = 59, .hour = 13, .mday = 2, .mon = 12,
				       .year = 2026 };

static void test_reset_state(void **state)
{
	struct vrtc rtc;
	uint8_t host[128];

	(void)state;
	memset(host, 0xa5, sizeof(host));
	host[0x0a] = 0xa6;		/* UIP set in the host's: not the guest's */
	vrtc_reset(&rtc, &when, host, HZ, 5000);
	assert_int_equal(rd(&rtc, 0x0a, 5000), 0x26);
	assert_int_equal(rd(&rtc, 0x0b, 5000), 0x02);
	assert_int_equal(rd(&rtc, 0x0c, 5000), 0x00);
	assert_int_equal(rd(&rtc, 0x0d, 5000), 0x80);
	/* The BIOS's memory sizes and equipment byte are the host's ... */
	for (unsigned int i = 0x14; i <= 0x18; i++)
		assert_int_equal(rd(&rtc, (uint8_t)i, 0), 0xa5);
	assert_int_equal(rd(&rtc, 0x30, 0), 0xa5);
	assert_int_equal(rd(&rtc, 0x31, 0), 0xa5);
	assert_int_equal(rd(&rtc, 0x34, 0), 0xa5);
	assert_int_equal(rd(&rtc, 0x35, 0), 0xa5);
	assert_int_equal(rd(&rtc, 0x5b, 0), 0xa5);
	assert_int_equal(rd(&rtc, 0x5d, 0), 0xa5);
	/* ... every other byte is zero (the boot order, the checksum, the alarms). */
	assert_int_equal(rd(&rtc, 0x01, 0), 0);
	assert_int_equal(rd(&rtc, 0x0e, 0), 0);
	assert_int_equal(rd(&rtc, 0x0f, 0), 0);
	assert_int_equal(rd(&rtc, 0x10, 0), 0);
	assert_int_equal(rd(&rtc, 0x2e, 0), 0);
	assert_int_equal(rd(&rtc, 0x3d, 0), 0);
	assert_int_equal(rd(&rtc, 0x5e, 0), 0);
	assert_int_equal(rd(&rtc, 0x7f, 0), 0);
	/* A host divider that is not running is not copied. */
	host[0x0a] = 0x70;
	vrtc_reset(&rtc, &when, host, HZ, 0);
	assert_int_equal(rd(&rtc, 0x0a, 0), 0x26);
	/* Without a host: 2000-01-01 00:00:00, a Saturday. */
	vrtc_reset(&rtc, NULL, NULL, HZ, 0);
	assert_int_equal(rd(&rtc, 0x09, 0), 0x00);
	assert_int_equal(rd(&rtc, 0x32, 0), 0x20);
	assert_int_equal(rd(&rtc, 0x08, 0), 0x01);
	assert_int_equal(rd(&rtc, 0x07, 0), 0x01);
	assert_int_equal(rd(&rtc, 0x06, 0), 7);
	assert_int_equal(rd(&rtc, 0x14, 0), 0);
}

static void test_index_and_nmi_bit(void **state)
{
	struct vrtc rtc;

	(void)state;
	vrtc_reset(&rtc, &when, NULL, HZ, 0);
	/* Bit 7 is the guest's NMI mask: kept, and not part of the index. */
	out(&rtc, 0x70, 0x80 | 0x0d, 0);
	assert_int_equal(rtc.nmi_disable, 0x80);
	assert_int_equal(in(&rtc, 0x71, 0), 0x80);
	out(&rtc, 0x70, 0x00, 0);
	assert_int_equal(rtc.nmi_disable, 0);
	assert_int_equal(in(&rtc, 0x71, 0), 0x58);
	/* Port 0x70 is write-only; the data port reads the selected byte again. */
	assert_int_equal(in(&rtc, 0x70, 0), 0xff);
	assert_int_equal(in(&rtc, 0x71, 0), 0x58);
	/* Not the RTC's ports. */
	{
		uint8_t v = 0;

		assert_false(vrtc_io(&rtc, 0x72, true, &v, 0));
		assert_false(vrtc_io(&rtc, 0x6f, false, &v, 0));
	}
}

static void test_bcd_24h_and_advance(void **state)
{
	struct vrtc rtc;
	const uint64_t t0 = 123456789;

	(void)state;
	vrtc_reset(&rtc, &when, NULL, HZ, t0);
	assert_int_equal(rd(&rtc, 0x00, t0), 0x58);
	assert_int_equal(rd(&rtc, 0x02, t0), 0x59);
	assert_int_equal(rd(&rtc, 0x04, t0), 0x13);
	assert_int_equal(rd(&rtc, 0x06, t0), 4);	/* Wednesday */
	assert_int_equal(rd(&rtc, 0x07, t0), 0x02);
	assert_int_equal(rd(&rtc, 0x08, t0), 0x12);
	assert_int_equal(rd(&rtc, 0x09, t0), 0x26);
	assert_int_equal(rd(&rtc, 0x32, t0), 0x20);
	/* Just under a second: the same second; a second: the next. */
	assert_int_equal(rd(&rtc, 0x00, t0 + HZ - 1), 0x58);
	assert_int_equal(rd(&rtc, 0x00, t0 + HZ), 0x59);
	/* Two seconds carry into the hour. */
	assert_int_equal(rd(&rtc, 0x00, t0 + 2 * HZ), 0x00);
	assert_int_equal(rd(&rtc, 0x02, t0 + 2 * HZ), 0x00);
	assert_int_equal(rd(&rtc, 0x04, t0 + 2 * HZ), 0x14);
	/* 29 days and 10 hours: into the next year (2027-01-01 00:00:00, a Friday). */
	{
		uint64_t t = t0 + (2 + 10 * 3600 + 29 * 86400ull) * HZ;

		assert_int_equal(rd(&rtc, 0x00, t), 0x00);
		assert_int_equal(rd(&rtc, 0x04, t), 0x00);
		assert_int_equal(rd(&rtc, 0x07, t), 0x01);
		assert_int_equal(rd(&rtc, 0x08, t), 0x01);
		assert_int_equal(rd(&rtc, 0x09, t), 0x27);
		assert_int_equal(rd(&rtc, 0x06, t), 6);
	}
	/* A leap day: 2028-02-28 + 1 day. */
	{
		const struct vrtc_time feb = { .sec = 0, .min = 0, .hour = 12, .mday = 28, .mon = 2,
					       .year = 2028 };

		vrtc_reset(&rtc, &feb, NULL, HZ, 0);
		assert_int_equal(rd(&rtc, 0x07, 86400ull * HZ), 0x29);
		assert_int_equal(rd(&rtc, 0x08, 86400ull * HZ), 0x02);
		assert_int_equal(rd(&rtc, 0x07, 2 * 86400ull * HZ), 0x01);
		assert_int_equal(rd(&rtc, 0x08, 2 * 86400ull * HZ), 0x03);
	}
}

static void test_binary_and_12h(void **state)
{
	struct vrtc rtc;

	(void)state;
	vrtc_reset(&rtc, &when, NULL, HZ, 0);
	/* DM: binary. */
	wr(&rtc, 0x0b, 0x06, 0);
	assert_int_equal(rd(&rtc, 0x0b, 0), 0x06);
	assert_int_equal(rd(&rtc, 0x00, 0), 58);
	assert_int_equal(rd(&rtc, 0x04, 0), 13);
	assert_int_equal(rd(&rtc, 0x09, 0), 26);
	assert_int_equal(rd(&rtc, 0x32, 0), 20);
	/* 12-hour, binary: 1 PM. */
	wr(&rtc, 0x0b, 0x04, 0);
	assert_int_equal(rd(&rtc, 0x04, 0), 0x80 | 1);
	/* 12-hour, BCD: 12 AM is midnight, 12 PM noon. */
	wr(&rtc, 0x0b, 0x00, 0);
	wr(&rtc, 0x04, 0x12, 0);		/* midnight */
	assert_int_equal(rd(&rtc, 0x04, 0), 0x12);
	wr(&rtc, 0x0b, 0x02, 0);
	assert_int_equal(rd(&rtc, 0x04, 0), 0x00);
	wr(&rtc, 0x0b, 0x00, 0);
	wr(&rtc, 0x04, 0x80 | 0x12, 0);	/* noon */
	wr(&rtc, 0x0b, 0x02, 0);
	assert_int_equal(rd(&rtc, 0x04, 0), 0x12);
}

static void test_uip_never_stuck(void **state)
{
	struct vrtc rtc;

	(void)state;
	vrtc_reset(&rtc, &when, NULL, HZ, 0);
	/* Whenever read, and whatever written, UIP reads 0; the rest is kept. */
	for (uint64_t t = 0; t < 3 * HZ; t += HZ / 7)
		assert_int_equal(rd(&rtc, 0x0a, t) & 0x80, 0);
	wr(&rtc, 0x0a, 0xa3, 0);
	assert_int_equal(rd(&rtc, 0x0a, 0), 0x23);
}

static void test_writes_stay_in_the_shadow(void **state)
{
	struct vrtc rtc;

	(void)state;
	vrtc_reset(&rtc, &when, NULL, HZ, 0);
	/* RAM bytes and alarms: written, read back. */
	wr(&rtc, 0x0e, 0x5a, 0);
	wr(&rtc, 0x7f, 0x11, 0);
	wr(&rtc, 0x01, 0x30, 0);
	assert_int_equal(rd(&rtc, 0x0e, 0), 0x5a);
	assert_int_equal(rd(&rtc, 0x7f, 0), 0x11);
	assert_int_equal(rd(&rtc, 0x01, 0), 0x30);
	/* Interrupt enables are kept, but C never sets a flag: no IRQ8. */
	wr(&rtc, 0x0b, 0x72, 0);
	assert_int_equal(rd(&rtc, 0x0b, 0), 0x72);
	assert_int_equal(rd(&rtc, 0x0c, 10 * HZ), 0);
	/* C and D are read-only. */
	wr(&rtc, 0x0c, 0xf0, 0);
	wr(&rtc, 0x0d, 0x00, 0);
	assert_int_equal(rd(&rtc, 0x0c, 0), 0);
	assert_int_equal(rd(&rtc, 0x0d, 0), 0x80);
	/* Setting the time: it runs on from the value written. */
	wr(&rtc, 0x0b, 0x02, 0);
	wr(&rtc, 0x00, 0x10, 500);
	wr(&rtc, 0x02, 0x20, 500);
	wr(&rtc, 0x04, 0x08, 500);
	wr(&rtc, 0x07, 0x15, 500);
	wr(&rtc, 0x08, 0x06, 500);
	wr(&rtc, 0x09, 0x99, 500);
	wr(&rtc, 0x32, 0x19, 500);
	assert_int_equal(rd(&rtc, 0x00, 500), 0x10);
	assert_int_equal(rd(&rtc, 0x00, 500 + 3 * HZ), 0x13);
	assert_int_equal(rd(&rtc, 0x02, 500), 0x20);
	assert_int_equal(rd(&rtc, 0x04, 500), 0x08);
	assert_int_equal(rd(&rtc, 0x07, 500), 0x15);
	assert_int_equal(rd(&rtc, 0x08, 500), 0x06);
	assert_int_equal(rd(&rtc, 0x09, 500), 0x99);
	assert_int_equal(rd(&rtc, 0x32, 500), 0x19);
	assert_int_equal(rd(&rtc, 0x06, 500), 3);	/* 1999-06-15 was a Tuesday */
	/* A month out of range is dropped. */
	wr(&rtc, 0x08, 0x13, 500);
	assert_int_equal(rd(&rtc, 0x08, 500), 0x06);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_state),
		cmocka_unit_test(test_index_and_nmi_bit),
		cmocka_unit_test(test_bcd_24h_and_advance),
		cmocka_unit_test(test_binary_and_12h),
		cmocka_unit_test(test_uip_never_stuck),
		cmocka_unit_test(test_writes_stay_in_the_shadow),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
