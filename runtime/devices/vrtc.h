/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's real-time clock and CMOS RAM (ports 0x70/0x71), a minimal
 * model of the Motorola MC146818A the PC/AT has.  The real one stays the
 * hypervisor's: bit 7 of port 0x70 masks NMI for the whole machine, and
 * its RAM holds the BIOS's configuration (docs/THREAT-MODEL.md).
 *
 *   - Port 0x70 selects one of 128 bytes (bits 6-0); bit 7, the guest's
 *     NMI disable, is kept as the guest's own and never forwarded.
 *   - The time (registers 0, 2, 4, 6-9 and the PC/AT century byte 0x32)
 *     is a snapshot of the host's clock taken at boot, advanced by the
 *     TSC, in the format register B asks for (BCD or binary, 24- or
 *     12-hour: the guest may change DM and 24/12 and the bytes follow).
 *     A guest write to a time byte sets the clock from then on.
 *   - Register A: the divider and rate bits as written (the BIOS leaves
 *     0x26); UIP always reads 0, so that a guest waiting for an update
 *     to end never waits.  Reads are consistent anyway: every read
 *     computes the time anew, and the seconds move only between reads.
 *   - Register B is kept as written (0x02 at reset), but no interrupt is
 *     ever raised: PIE, AIE and UIE enable nothing (no IRQ8), SET does
 *     not stop the clock, SQWE drives nothing.  Register C reads 0 (no
 *     flag is ever set), register D 0x80 (VRT: the battery is good).
 *   - Every other byte, the alarms among them, is the guest's shadow:
 *     written and read back, never reaching the host's CMOS.
 *
 * Time is the caller's: `now` is in TSC ticks and `tsc_hz` their rate,
 * so the model has no clock of its own and its tests are exact.
 */
#ifndef EXITPLAN_VRTC_H
#define EXITPLAN_VRTC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"

#define VRTC_RESET_A	0x26	/* DV = 010 (32.768 kHz), RS = 0110 (1024 Hz): the BIOS's */
#define VRTC_RESET_B	RTC_B_H24	/* BCD, 24-hour, no interrupts */

/* A calendar time, in binary: hour 0-23, month 1-12, the full year. */
struct vrtc_time {
	uint8_t sec, min, hour, mday, mon;
	uint16_t year;
};

struct vrtc {
	uint8_t cmos[RTC_CMOS_SIZE];	/* the shadow, registers A and B included */
	uint8_t index;			/* port 0x70 bits 6-0 */
	uint8_t nmi_disable;		/* port 0x70 bit 7 as the guest wrote it */
	uint64_t base_secs;		/* seconds since 1970-01-01 00:00:00 at base_tsc */
	uint64_t base_tsc;
	uint64_t tsc_hz;
};

/*
 * Reset at `now` to the time `t` (NULL: 2000-01-01 00:00:00).  `host`,
 * if not NULL, is the host's CMOS, of which only the BIOS's harmless
 * configuration bytes are copied (the equipment byte and the memory
 * sizes) and register A's divider; every other shadow byte is 0.
 */
void vrtc_reset(struct vrtc *rtc, const struct vrtc_time *t, const uint8_t *host,
		uint64_t tsc_hz, uint64_t now);

/*
 * A byte access to port 0x70 or 0x71 at `now`.  Returns false when
 * `port` is neither; `*val` is the byte written, or receives the byte
 * read (port 0x70 is write-only: it reads 0xff, as on the PC/AT).
 */
bool vrtc_io(struct vrtc *rtc, uint16_t port, bool in, uint8_t *val, uint64_t now);

/* The clock at `now`. */
void vrtc_now(const struct vrtc *rtc, uint64_t now, struct vrtc_time *t);

/* A byte in the encoding register B `reg_b` gives (BCD unless DM). */
uint8_t vrtc_encode(uint8_t reg_b, unsigned int v);
/* The inverse: a byte as register B `reg_b` reads it, in binary. */
unsigned int vrtc_decode(uint8_t reg_b, uint8_t v);

#endif /* EXITPLAN_VRTC_H */
