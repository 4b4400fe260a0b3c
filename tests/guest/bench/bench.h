/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the bench guest's files share: the options, the empty round trip,
 * the exit counts (STATS_READ) and the interrupt paths (intr.c).
 */
#ifndef GUEST_BENCH_BENCH_H
#define GUEST_BENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>

extern uint32_t iters, warmup;
extern bool under_exitplan, stats_on;
extern uint64_t baseline;	/* ticks of an empty timed round trip */

/* RDTSC after all earlier instructions have completed. */
static inline uint64_t tsc_ordered(void)
{
	uint32_t lo, hi;

	asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

int32_t bench_stats_read(uint32_t reason);

/*
 * `trace=KIND` (tests/bench/trace_path.py): Bochs's magic breakpoint,
 * `xchg %bx,%bx`, just before KIND's timed round trips, so that its
 * debugger traces the first of them instruction by instruction.  Only
 * an emulator with magic breaks on stops there; elsewhere it is an XCHG.
 */
void bench_trace_mark(const char *kind);

/*
 * The interrupt paths, after the exit kinds and the APIC timer's HLT:
 * self-IPIs, EOIs, the TSC deadline, a device interrupt (the 8254 through
 * the 8259s), x2APIC last (no way back to xAPIC mode on Bochs).
 */
void bench_interrupt_paths(void);
/* Only an IPI to another CPU and back (the `ipi-other` option, 2 CPUs). */
void bench_ipi_other(void);

#endif /* GUEST_BENCH_BENCH_H */
