/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef GUEST_BENCH_LONGMODE_H
#define GUEST_BENCH_LONGMODE_H

#include <stdbool.h>
#include <stdint.h>

struct cr8_loop {
	uint32_t iters;
	uint32_t pad;
	uint64_t total;
};

/* 64-bit timing loops in cr8.S, far-called from compatibility mode. */
void cr8_loop_none(void);
void cr8_loop_write(void);
void cr8_loop_read(void);

/* What lm64.S found (see there). */
struct lm64_result {
	uint32_t cr8_gp, cr8_left, cr0_gp, cr0_ne;
	uint32_t tpr, or_flags, q_lo, q_hi, qor_flags;
};

void lm64_checks(void);

bool long_mode_supported(void);
/* One way: interrupts off for good.  True when EFER.LMA came on. */
bool long_mode_enter(void);
/* Far-call a loop of cr8.S; returns its total ticks. */
uint64_t long_mode_call(void (*loop)(void), uint32_t iters);
/* Far-call lm64_checks(). */
void long_mode_checks(struct lm64_result *r);

#endif /* GUEST_BENCH_LONGMODE_H */
