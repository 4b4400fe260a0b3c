// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's 8254 and port 0x61 (vpit.h).  A channel's state is a count
 * of elapsed input-clock ticks since its count was loaded (`start`); the
 * count, OUT and the edges follow from it by the mode's arithmetic, so
 * nothing has to tick.  A new count takes effect at once in every mode
 * (on the 8254 modes 2 and 3 finish the current period first); no guest
 * of a PC measures that difference.
 */
#include "runtime/devices/vpit.h"

#define CW_SC(v)	(((v) >> 6) & 3)
#define CW_RW(v)	(((v) >> 4) & 3)
#define CW_MODE(v)	(((v) >> 1) & 7)
#define CW_BCD		0x01
#define SC_READ_BACK	3
#define RW_LATCH	0
#define RW_LSB		1
#define RW_MSB		2
#define RB_NO_COUNT	0x20	/* read-back: do not latch the count */
#define RB_NO_STATUS	0x10	/* read-back: do not latch the status */
#define STATUS_OUT	0x80
#define STATUS_NULL	0x40

#define SYSB_GATE2	0x01
#define SYSB_WRITABLE	0x0f	/* gate 2, speaker, parity/IOCHK enables */
#define SYSB_REFRESH	0x10
#define SYSB_OUT2	0x20
/* The refresh request toggles with channel 1's OUT: every 18 ticks. */
#define REFRESH_TICKS	18

static uint64_t elapsed(const struct vpit_channel *c, uint64_t now)
{
	if (!c->gate)
		return c->frozen;
	return now > c->start ? now - c->start : 0;
}

static uint16_t count(const struct vpit_channel *c, uint64_t now)
{
	uint64_t e = elapsed(c, now), n = c->reload;

	if (!c->counting)
		return c->reload & 0xffff;
	switch (c->mode) {
	case 2:
		return (n - e % n) & 0xffff;
	case 3:
		/* Down by two, twice per period (an odd count loses one). */
		return (n - (2 * e) % n) & 0xfffe;
	default:
		return (n - e) & 0xffff;
	}
}

bool vpit_out(const struct vpit *pit, unsigned int n, uint64_t now)
{
	const struct vpit_channel *c = &pit->ch[n];
	uint64_t e = elapsed(c, now), r = c->reload;

	if (!c->counting)
		return c->mode != 0;	/* mode 0's OUT goes low on the CW */
	switch (c->mode) {
	case 0:
		return e >= r;
	case 2:
		return !c->gate || e % r != r - 1;	/* low for one tick at 1 */
	case 3:
		return !c->gate || e % r < (r + 1) / 2;
	default:
		return true;
	}
}

/* Rising OUT edges of channel 0 in (from, to]; channel 0's gate is high. */
static unsigned int edges(const struct vpit_channel *c, uint64_t from, uint64_t to)
{
	uint64_t a = from > c->start ? from - c->start : 0;
	uint64_t b = to > c->start ? to - c->start : 0;

	if (!c->counting || b <= a)
		return 0;
	switch (c->mode) {
	case 0:
		return a < c->reload && b >= c->reload;
	case 2:
	case 3:
		return b / c->reload - a / c->reload;
	default:
		return 0;
	}
}

unsigned int vpit_irq0_edges(struct vpit *pit, uint64_t now)
{
	unsigned int n = pit->irq0_pending + edges(&pit->ch[0], pit->irq0_seen, now);

	pit->irq0_pending = 0;
	if (now > pit->irq0_seen)
		pit->irq0_seen = now;
	return n;
}

uint64_t vpit_next_irq0(const struct vpit *pit, uint64_t now)
{
	const struct vpit_channel *c = &pit->ch[0];
	uint64_t e = elapsed(c, now);

	if (!c->counting)
		return UINT64_MAX;
	switch (c->mode) {
	case 0:
		return e < c->reload ? c->start + c->reload : UINT64_MAX;
	case 2:
	case 3:
		return c->start + (e / c->reload + 1) * c->reload;
	default:
		return UINT64_MAX;
	}
}

static void load(struct vpit_channel *c, uint32_t value, uint64_t now)
{
	c->reload = value ? value : 0x10000;
	c->counting = true;
	c->null_count = false;
	c->start = now;
	c->frozen = 0;
}

static void set_gate(struct vpit_channel *c, bool gate, uint64_t now)
{
	if (gate == c->gate)
		return;
	if (!gate) {
		c->frozen = elapsed(c, now);
	} else if (c->mode == 0 || c->mode == 4) {
		c->start = now - c->frozen;	/* counting resumes */
	} else {
		c->start = now;			/* a rising gate retriggers */
		c->frozen = 0;
	}
	c->gate = gate;
}

static uint8_t status(const struct vpit *pit, unsigned int n, uint64_t now)
{
	const struct vpit_channel *c = &pit->ch[n];

	return (vpit_out(pit, n, now) ? STATUS_OUT : 0) | (c->null_count ? STATUS_NULL : 0) |
	       c->access << 4 | c->mode << 1 | (c->bcd ? CW_BCD : 0);
}

static void latch_count(struct vpit_channel *c, uint64_t now)
{
	if (c->latched)
		return;			/* a second latch before the read is ignored */
	c->latch = count(c, now);
	c->latched = true;
	c->latch_msb_next = false;
}

static void write_control(struct vpit *pit, uint8_t v, uint64_t now)
{
	struct vpit_channel *c;

	if (CW_SC(v) == SC_READ_BACK) {
		for (unsigned int n = 0; n < 3; n++) {
			if (!(v & (2u << n)))
				continue;
			if (!(v & RB_NO_COUNT))
				latch_count(&pit->ch[n], now);
			if (!(v & RB_NO_STATUS) && !pit->ch[n].status_latched) {
				pit->ch[n].status = status(pit, n, now);
				pit->ch[n].status_latched = true;
			}
		}
		return;
	}
	c = &pit->ch[CW_SC(v)];
	if (CW_RW(v) == RW_LATCH) {
		latch_count(c, now);
		return;
	}
	c->access = CW_RW(v);
	c->mode = CW_MODE(v) > 5 ? CW_MODE(v) - 4 : CW_MODE(v);	/* 6, 7 are 2, 3 */
	c->bcd = v & CW_BCD;
	c->counting = false;
	c->null_count = true;
	c->latched = false;
	c->status_latched = false;
	c->write_msb_next = false;
	c->read_msb_next = false;
}

static void write_counter(struct vpit_channel *c, uint8_t v, uint64_t now)
{
	switch (c->access) {
	case RW_LSB:
		load(c, v, now);
		break;
	case RW_MSB:
		load(c, (uint32_t)v << 8, now);
		break;
	default:
		if (!c->write_msb_next) {
			c->write_lsb = v;
			c->write_msb_next = true;
			if (c->mode == 0)
				c->counting = false;	/* the first byte stops mode 0 */
		} else {
			c->write_msb_next = false;
			load(c, c->write_lsb | (uint32_t)v << 8, now);
		}
		break;
	}
}

static uint8_t read_counter(struct vpit_channel *c, uint64_t now)
{
	uint16_t value;
	bool msb;

	if (c->status_latched) {
		c->status_latched = false;
		return c->status;
	}
	if (c->latched) {
		value = c->latch;
		msb = c->access == RW_MSB || (c->access != RW_LSB && c->latch_msb_next);
		c->latch_msb_next = !c->latch_msb_next;
		if (c->access != 3 || !c->latch_msb_next)
			c->latched = false;
	} else {
		value = count(c, now);
		msb = c->access == RW_MSB || (c->access != RW_LSB && c->read_msb_next);
		if (c->access == 3)
			c->read_msb_next = !c->read_msb_next;
	}
	return msb ? value >> 8 : value & 0xff;
}

bool vpit_io(struct vpit *pit, uint16_t port, bool in, uint8_t *val, uint64_t now)
{
	unsigned int n = port - VPIT_PORT_COUNTER0;

	if (port == VPIT_PORT_SYSTEM_B) {
		if (in)
			*val = pit->system_b | ((now / REFRESH_TICKS) & 1 ? SYSB_REFRESH : 0) |
			       (vpit_out(pit, 2, now) ? SYSB_OUT2 : 0);
		else {
			pit->system_b = *val & SYSB_WRITABLE;
			set_gate(&pit->ch[2], *val & SYSB_GATE2, now);
		}
		return true;
	}
	if (port < VPIT_PORT_COUNTER0 || port > VPIT_PORT_CONTROL)
		return false;
	if (in) {
		/* The control register cannot be read (8254: no-operation). */
		*val = port == VPIT_PORT_CONTROL ? 0xff : read_counter(&pit->ch[n], now);
		return true;
	}
	/* Channel 0's edges so far stand, whatever the write changes. */
	pit->irq0_pending += edges(&pit->ch[0], pit->irq0_seen, now);
	if (now > pit->irq0_seen)
		pit->irq0_seen = now;
	if (port == VPIT_PORT_CONTROL)
		write_control(pit, *val, now);
	else
		write_counter(&pit->ch[n], *val, now);
	return true;
}

void vpit_reset(struct vpit *pit, uint64_t now)
{
	*pit = (struct vpit){ .irq0_seen = now };
	for (unsigned int n = 0; n < 3; n++) {
		pit->ch[n].access = 3;
		pit->ch[n].gate = n != 2;
	}
	pit->ch[0].mode = 3;
	pit->ch[2].mode = 3;	/* idle, OUT2 high */
	load(&pit->ch[0], 0, now);
	pit->ch[1].mode = 2;
	load(&pit->ch[1], REFRESH_TICKS, now);
}
