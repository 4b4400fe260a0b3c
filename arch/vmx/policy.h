/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MSR-bitmap and I/O-bitmap policy: the generated per-profile rules, and
 * the pure functions that turn them into the 4-KiB bitmaps the VMCS
 * points at (SDM Vol. 3C 25.6.4 and 25.6.9).
 */
#ifndef EXITPLAN_POLICY_H
#define EXITPLAN_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#define MSR_INTERCEPT_NONE	0
#define MSR_INTERCEPT_READ	1
#define MSR_INTERCEPT_WRITE	2
#define MSR_INTERCEPT_RW	(MSR_INTERCEPT_READ | MSR_INTERCEPT_WRITE)

/*
 * MSRs first..last get exactly @intercept.  Rules apply in order; MSRs
 * named by no rule are intercepted for read and write.
 */
struct msr_bitmap_rule {
	uint32_t first, last;
	uint8_t intercept;
};

/*
 * Ports first..last, granted to the guest: they pass through.  Every port
 * no range names exits (default deny).
 */
struct io_port_range {
	uint16_t first, last;
};

#define MSR_BITMAP_SIZE 4096
#define IO_BITMAP_SIZE  4096	/* each of bitmap A and bitmap B */

/* Build the MSR bitmap page; MSRs outside the two ranges always exit. */
void msr_bitmap_build(uint8_t bitmap[MSR_BITMAP_SIZE],
		      const struct msr_bitmap_rule *rules, unsigned int n);

/* Apply one more rule to a built bitmap (a vCPU's intercepts changing at run time). */
void msr_bitmap_set(uint8_t bitmap[MSR_BITMAP_SIZE], const struct msr_bitmap_rule *rule);

/* Would a guest RDMSR (write = false) or WRMSR of @msr exit with @bitmap? */
bool msr_bitmap_intercepts(const uint8_t bitmap[MSR_BITMAP_SIZE], uint32_t msr,
			   bool write);

/*
 * Build I/O bitmaps A (ports 0-0x7fff) and B (0x8000-0xffff): every port
 * exits but those in @grants.
 */
void io_bitmap_build(uint8_t a[IO_BITMAP_SIZE], uint8_t b[IO_BITMAP_SIZE],
		     const struct io_port_range *grants, unsigned int n);

bool io_bitmap_intercepts(const uint8_t a[IO_BITMAP_SIZE],
			  const uint8_t b[IO_BITMAP_SIZE], uint16_t port);

#endif /* EXITPLAN_POLICY_H */
