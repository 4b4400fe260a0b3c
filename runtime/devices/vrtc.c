// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's MC146818A RTC and CMOS RAM (vrtc.h).
 */
#include "runtime/host/compiler.h"
#include "runtime/devices/vrtc.h"

#define SECS_PER_DAY	86400u

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned int m, unsigned int d)
{
	int64_t era;
	unsigned int yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned int)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, struct vrtc_time *t)
{
	int64_t era, y;
	unsigned int doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned int)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = (int64_t)yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	t->mday = (uint8_t)(doy - (153 * mp + 2) / 5 + 1);
	t->mon = (uint8_t)(mp < 10 ? mp + 3 : mp - 9);
	t->year = (uint16_t)(y + (t->mon <= 2));
}

static uint64_t secs_from_time(const struct vrtc_time *t)
{
	return (uint64_t)days_from_civil(t->year, t->mon, t->mday) * SECS_PER_DAY +
	       t->hour * 3600u + t->min * 60u + t->sec;
}

uint8_t vrtc_encode(uint8_t reg_b, unsigned int v)
{
	v %= 100;
	return (uint8_t)(reg_b & RTC_B_DM ? v : (v / 10) << 4 | v % 10);
}

unsigned int vrtc_decode(uint8_t reg_b, uint8_t v)
{
	return reg_b & RTC_B_DM ? v : (v >> 4) * 10u + (v & 0xfu);
}

void vrtc_now(const struct vrtc *rtc, uint64_t now, struct vrtc_time *t)
{
	uint64_t secs = rtc->base_secs;

	if (now > rtc->base_tsc)
		secs += (now - rtc->base_tsc) / rtc->tsc_hz;
	t->sec = (uint8_t)(secs % 60);
	t->min = (uint8_t)(secs / 60 % 60);
	t->hour = (uint8_t)(secs / 3600 % 24);
	civil_from_days((int64_t)(secs / SECS_PER_DAY), t);
}

static void set_time(struct vrtc *rtc, const struct vrtc_time *t, uint64_t now)
{
	rtc->base_secs = secs_from_time(t);
	rtc->base_tsc = now;	/* the new second starts now, as after a divider reset */
}

void vrtc_reset(struct vrtc *rtc, const struct vrtc_time *t, const uint8_t *host,
		uint64_t tsc_hz, uint64_t now)
{
	static const struct vrtc_time y2k = { .mday = 1, .mon = 1, .year = 2000 };
	/* The BIOS's configuration bytes a guest may read (vrtc.h). */
	static const struct { uint8_t first, last; } copied[] = {
		{ RTC_CMOS_EQUIPMENT, RTC_CMOS_EQUIPMENT },
		{ RTC_CMOS_BASE_MEM_LO, RTC_CMOS_EXT_MEM_LO + 1 },
		{ RTC_CMOS_EXT_MEM2_LO, RTC_CMOS_EXT_MEM2_LO + 1 },
		{ RTC_CMOS_MEM_16M_LO, RTC_CMOS_MEM_16M_LO + 1 },
		{ RTC_CMOS_MEM_4G_LO, RTC_CMOS_MEM_4G_LO + 2 },
	};

	*rtc = (struct vrtc){ .tsc_hz = tsc_hz ? tsc_hz : 1 };
	rtc->cmos[RTC_REG_A] = VRTC_RESET_A;
	rtc->cmos[RTC_REG_B] = VRTC_RESET_B;
	if (host) {
		for (unsigned int i = 0; i < ARRAY_SIZE(copied); i++)
			for (unsigned int j = copied[i].first; j <= copied[i].last; j++)
				rtc->cmos[j] = host[j];
		/* The divider as the BIOS left it, if it left a running one. */
		if ((host[RTC_REG_A] & RTC_A_DV_MASK) == (VRTC_RESET_A & RTC_A_DV_MASK))
			rtc->cmos[RTC_REG_A] = host[RTC_REG_A] & (uint8_t)~RTC_A_UIP;
	}
	set_time(rtc, t ? t : &y2k, now);
}

static uint8_t read_hours(uint8_t b, unsigned int hour)
{
	unsigned int h12;

	if (b & RTC_B_H24)
		return vrtc_encode(b, hour);
	h12 = hour % 12 ? hour % 12 : 12;
	return (uint8_t)(vrtc_encode(b, h12) | (hour >= 12 ? RTC_HOURS_PM : 0));
}

static unsigned int write_hours(uint8_t b, uint8_t v)
{
	unsigned int h;

	if (b & RTC_B_H24)
		return vrtc_decode(b, v);
	h = vrtc_decode(b, v & (uint8_t)~RTC_HOURS_PM) % 12;
	return v & RTC_HOURS_PM ? h + 12 : h;
}

static uint8_t data_read(const struct vrtc *rtc, uint64_t now)
{
	uint8_t b = rtc->cmos[RTC_REG_B];
	struct vrtc_time t;

	switch (rtc->index) {
	case RTC_SECONDS:
	case RTC_MINUTES:
	case RTC_HOURS:
	case RTC_DAY_OF_WEEK:
	case RTC_DAY_OF_MONTH:
	case RTC_MONTH:
	case RTC_YEAR:
	case RTC_CENTURY:
		break;
	case RTC_REG_A:
		return rtc->cmos[RTC_REG_A] & (uint8_t)~RTC_A_UIP;	/* never updating */
	case RTC_REG_C:
		return 0;		/* no interrupt flag is ever set */
	case RTC_REG_D:
		return RTC_D_VRT;
	default:
		return rtc->cmos[rtc->index];
	}
	vrtc_now(rtc, now, &t);
	switch (rtc->index) {
	case RTC_SECONDS:
		return vrtc_encode(b, t.sec);
	case RTC_MINUTES:
		return vrtc_encode(b, t.min);
	case RTC_HOURS:
		return read_hours(b, t.hour);
	case RTC_DAY_OF_WEEK:
		/* 1970-01-01 was a Thursday, day 5 (Sunday is 1). */
		return vrtc_encode(b, (unsigned int)((days_from_civil(t.year, t.mon, t.mday) + 4) % 7) + 1);
	case RTC_DAY_OF_MONTH:
		return vrtc_encode(b, t.mday);
	case RTC_MONTH:
		return vrtc_encode(b, t.mon);
	case RTC_YEAR:
		return vrtc_encode(b, t.year % 100);
	default:	/* RTC_CENTURY */
		return vrtc_encode(b, t.year / 100);
	}
}

static void data_write(struct vrtc *rtc, uint8_t v, uint64_t now)
{
	uint8_t b = rtc->cmos[RTC_REG_B];
	struct vrtc_time t;
	unsigned int x = vrtc_decode(b, v);

	vrtc_now(rtc, now, &t);
	switch (rtc->index) {
	case RTC_SECONDS:
		t.sec = (uint8_t)(x < 60 ? x : 0);
		break;
	case RTC_MINUTES:
		t.min = (uint8_t)(x < 60 ? x : 0);
		break;
	case RTC_HOURS:
		x = write_hours(b, v);
		t.hour = (uint8_t)(x < 24 ? x : 0);
		break;
	case RTC_DAY_OF_WEEK:
		return;		/* follows from the date */
	case RTC_DAY_OF_MONTH:
		if (x < 1 || x > 31)
			return;
		t.mday = (uint8_t)x;	/* past the month's end: the next month's days */
		break;
	case RTC_MONTH:
		if (x < 1 || x > 12)
			return;
		t.mon = (uint8_t)x;
		break;
	case RTC_YEAR:
		t.year = (uint16_t)(t.year / 100 * 100 + x % 100);
		break;
	case RTC_CENTURY:
		t.year = (uint16_t)(x % 100 * 100 + t.year % 100);
		break;
	case RTC_REG_A:
		rtc->cmos[RTC_REG_A] = v & (uint8_t)~RTC_A_UIP;	/* UIP is read-only */
		return;
	case RTC_REG_C:
	case RTC_REG_D:
		return;		/* read-only */
	default:
		rtc->cmos[rtc->index] = v;	/* B and the RAM: the shadow */
		return;
	}
	set_time(rtc, &t, now);
}

bool vrtc_io(struct vrtc *rtc, uint16_t port, bool in, uint8_t *val, uint64_t now)
{
	switch (port) {
	case RTC_PORT_INDEX:
		if (in) {
			*val = 0xff;		/* write-only */
		} else {
			rtc->index = *val & RTC_INDEX_ADDR_MASK;
			rtc->nmi_disable = *val & RTC_INDEX_NMI_DISABLE;
		}
		return true;
	case RTC_PORT_DATA:
		if (in)
			*val = data_read(rtc, now);
		else
			data_write(rtc, *val, now);
		return true;
	default:
		return false;
	}
}
