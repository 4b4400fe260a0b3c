/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's 8254 programmable interval timer (ports 0x40-0x43) and the
 * PC's port 0x61 (channel 2's gate, the speaker enable, OUT2 and the
 * refresh toggle), as a model of the 8254 datasheet.  Channel 0's OUT is
 * IRQ0; channel 1 (DRAM refresh on the PC) counts but drives nothing;
 * channel 2's gate and OUT are port 0x61's bits 0 and 5.
 *
 * Time is the caller's: every call takes `now` in ticks of the 8254's
 * input clock (VPIT_HZ on a PC), so the model has no clock of its own
 * and its tests are exact.  Modes 0 (interrupt on terminal count), 2
 * (rate generator) and 3 (square wave) are modelled fully, with the gate;
 * modes 1, 4 and 5 count down from the reload but their OUT stays high
 * (a PC's channel 0 never uses them, and the gate triggers of 1 and 5
 * exist only on channel 2).  BCD counting (control word bit 0) is not
 * modelled: the count is binary.
 */
#ifndef EXITPLAN_VPIT_H
#define EXITPLAN_VPIT_H

#include <stdbool.h>
#include <stdint.h>

#define VPIT_HZ			1193182u	/* 14.31818 MHz / 12 */
#define VPIT_PORT_COUNTER0	0x40
#define VPIT_PORT_CONTROL	0x43
#define VPIT_PORT_SYSTEM_B	0x61	/* the PC's "port B" */

struct vpit_channel {
	uint64_t start;		/* when counting from `reload` began */
	uint64_t frozen;	/* the elapsed ticks kept while the gate is low */
	uint32_t reload;	/* the count written, 0 taken as 65536 */
	uint8_t mode;		/* 0-5 */
	uint8_t access;		/* control word RW1-RW0: 1 LSB, 2 MSB, 3 both */
	uint8_t write_lsb;	/* the LSB of a two-byte count being written */
	uint8_t status;		/* the latched status byte */
	uint16_t latch;		/* the latched count */
	bool counting;		/* a count was written (and loaded) */
	bool gate;
	bool write_msb_next;	/* access 3: the next write is the MSB */
	bool read_msb_next;	/* access 3: the next read is the MSB */
	bool latched;		/* a counter-latch command holds `latch` */
	bool latch_msb_next;	/* which byte of the latch is read next */
	bool status_latched;	/* a read-back command holds `status` */
	bool null_count;	/* status bit 6: the count is not loaded yet */
	bool bcd;		/* control word bit 0, kept for the status */
};

struct vpit {
	struct vpit_channel ch[3];
	uint64_t irq0_seen;	/* channel 0's edges counted up to here */
	unsigned int irq0_pending;	/* edges before a reprogramming */
	uint8_t system_b;	/* port 0x61 bits 3-0 as written */
};

/*
 * The state a PC BIOS leaves (and a guest booted from it may assume):
 * channel 0 in mode 3 with count 65536 (18.2 Hz), channel 1 in mode 2
 * with count 18 (the 15-us refresh), channel 2 idle in mode 3 with its gate low.
 */
void vpit_reset(struct vpit *pit, uint64_t now);

/*
 * A port access at `now`.  Returns false when `port` is not the PIT's
 * or port 0x61; `*val` is the byte written, or receives the byte read.
 */
bool vpit_io(struct vpit *pit, uint16_t port, bool in, uint8_t *val, uint64_t now);

/* The level of channel `n`'s OUT at `now`. */
bool vpit_out(const struct vpit *pit, unsigned int n, uint64_t now);

/*
 * Channel 0's rising OUT edges (IRQ0 requests) since the last call, up
 * to `now`.  The caller raises IRQ0 once when this is non-zero: requests
 * the guest had no time to take coalesce, as on hardware when the
 * 8259's IRR is already set.
 */
unsigned int vpit_irq0_edges(struct vpit *pit, uint64_t now);

/*
 * The time of channel 0's next rising OUT edge after `now`, or
 * UINT64_MAX when there is none (not counting, or mode 0 past its
 * terminal count): what a halted vCPU waits for.
 */
uint64_t vpit_next_irq0(const struct vpit *pit, uint64_t now);

#endif /* EXITPLAN_VPIT_H */
