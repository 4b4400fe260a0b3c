// SPDX-License-Identifier: GPL-2.0-only
/*
 * MSR and I/O bitmaps from the generated per-profile rules (policy.h).
 *
 * Pure and freestanding: no libc, so the same code builds the bitmaps in
 * the hypervisor and in the host unit tests.
 */
#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/policy.h"

/*
 * The MSR-bitmap page (SDM Vol. 3C 25.6.9): four 1-KiB bitmaps, one bit per
 * MSR, a set bit makes the access exit.  Only MSRs 00000000H-00001FFFH
 * ("low") and C0000000H-C0001FFFH ("high") have bits; RDMSR/WRMSR of any
 * other MSR always exits.
 */
#define MSR_BITMAP_RANGE_MSRS	0x2000u		/* MSRs per range */
#define MSR_BITMAP_LOW_FIRST	0x00000000u
#define MSR_BITMAP_HIGH_FIRST	0xc0000000u
#define MSR_BITMAP_READ_LOW	0		/* byte offsets in the page */
#define MSR_BITMAP_READ_HIGH	1024
#define MSR_BITMAP_WRITE_LOW	2048
#define MSR_BITMAP_WRITE_HIGH	3072

/*
 * I/O bitmaps (SDM Vol. 3C 25.6.4): A holds ports 0000H-7FFFH, B holds
 * 8000H-FFFFH, one bit per port, a set bit makes the access exit.
 */
#define IO_BITMAP_PORTS		0x8000u		/* ports per bitmap */

static void bit_assign(uint8_t *bitmap, uint32_t bit, bool set)
{
	uint8_t mask = (uint8_t)(1u << (bit % 8));

	if (set)
		bitmap[bit / 8] |= mask;
	else
		bitmap[bit / 8] &= (uint8_t)~mask;
}

static bool bit_test(const uint8_t *bitmap, uint32_t bit)
{
	return bitmap[bit / 8] & (1u << (bit % 8));
}

/*
 * Offset of @msr within its range and the byte offsets of its read and
 * write bitmaps; false for an MSR no bitmap covers.
 */
static bool msr_bitmap_locate(uint32_t msr, uint32_t *bit,
			      unsigned int *read_off, unsigned int *write_off)
{
	if (msr - MSR_BITMAP_LOW_FIRST < MSR_BITMAP_RANGE_MSRS) {
		*bit = msr - MSR_BITMAP_LOW_FIRST;
		*read_off = MSR_BITMAP_READ_LOW;
		*write_off = MSR_BITMAP_WRITE_LOW;
		return true;
	}
	if (msr - MSR_BITMAP_HIGH_FIRST < MSR_BITMAP_RANGE_MSRS) {
		*bit = msr - MSR_BITMAP_HIGH_FIRST;
		*read_off = MSR_BITMAP_READ_HIGH;
		*write_off = MSR_BITMAP_WRITE_HIGH;
		return true;
	}
	return false;
}

/*
 * Apply @intercept to the part of first..last inside the range of MSRs
 * base..base + 1FFFH, whose bitmaps are at @read_off and @write_off.
 */
static void msr_bitmap_apply(uint8_t *bitmap, uint32_t base,
			     unsigned int read_off, unsigned int write_off,
			     const struct msr_bitmap_rule *rule)
{
	uint32_t range_last = base + (MSR_BITMAP_RANGE_MSRS - 1);
	uint32_t lo = rule->first > base ? rule->first : base;
	uint32_t hi = rule->last < range_last ? rule->last : range_last;
	uint32_t bit;

	/* Clamped to one range: hi - base < 0x2000, the loop cannot wrap. */
	if (lo > hi)
		return;
	for (bit = lo - base; bit <= hi - base; bit++) {
		bit_assign(bitmap + read_off, bit, rule->intercept & MSR_INTERCEPT_READ);
		bit_assign(bitmap + write_off, bit, rule->intercept & MSR_INTERCEPT_WRITE);
	}
}

void msr_bitmap_build(uint8_t bitmap[MSR_BITMAP_SIZE],
		      const struct msr_bitmap_rule *rules, unsigned int n)
{
	unsigned int i;

	/* Deny by default: an MSR no rule names is the hypervisor's business. */
	for (i = 0; i < MSR_BITMAP_SIZE; i++)
		bitmap[i] = 0xff;

	/* In order, so that a later rule overrides an earlier one. */
	for (i = 0; i < n; i++) {
		msr_bitmap_apply(bitmap, MSR_BITMAP_LOW_FIRST, MSR_BITMAP_READ_LOW,
				 MSR_BITMAP_WRITE_LOW, &rules[i]);
		msr_bitmap_apply(bitmap, MSR_BITMAP_HIGH_FIRST, MSR_BITMAP_READ_HIGH,
				 MSR_BITMAP_WRITE_HIGH, &rules[i]);
	}
}

void msr_bitmap_set(uint8_t bitmap[MSR_BITMAP_SIZE], const struct msr_bitmap_rule *rule)
{
	msr_bitmap_apply(bitmap, MSR_BITMAP_LOW_FIRST, MSR_BITMAP_READ_LOW, MSR_BITMAP_WRITE_LOW, rule);
	msr_bitmap_apply(bitmap, MSR_BITMAP_HIGH_FIRST, MSR_BITMAP_READ_HIGH, MSR_BITMAP_WRITE_HIGH,
			 rule);
}

bool msr_bitmap_intercepts(const uint8_t bitmap[MSR_BITMAP_SIZE], uint32_t msr,
			   bool write)
{
	uint32_t bit;
	unsigned int read_off, write_off;

	if (!msr_bitmap_locate(msr, &bit, &read_off, &write_off))
		return true;
	return bit_test(bitmap + (write ? write_off : read_off), bit);
}

void io_bitmap_build(uint8_t a[IO_BITMAP_SIZE], uint8_t b[IO_BITMAP_SIZE],
		     const struct io_port_range *grants, unsigned int n)
{
	unsigned int i;
	uint32_t port;

	/* Deny by default: a port no grant names is the hypervisor's business. */
	for (i = 0; i < IO_BITMAP_SIZE; i++) {
		a[i] = 0xff;
		b[i] = 0xff;
	}

	for (i = 0; i < n; i++) {
		/* uint32_t: a range ending at 0xffff must not wrap the loop. */
		for (port = grants[i].first; port <= grants[i].last; port++) {
			if (port < IO_BITMAP_PORTS)
				bit_assign(a, port, false);
			else
				bit_assign(b, port - IO_BITMAP_PORTS, false);
		}
	}
}

bool io_bitmap_intercepts(const uint8_t a[IO_BITMAP_SIZE],
			  const uint8_t b[IO_BITMAP_SIZE], uint16_t port)
{
	if (port < IO_BITMAP_PORTS)
		return bit_test(a, port);
	return bit_test(b, port - IO_BITMAP_PORTS);
}
