/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the initramfs workloads share: the TSC, pinning, and the result
 * line ("workload NAME: n=N mean=M p50=P p99=Q ticks"), the shape
 * tests/linux/parse_workloads.py reads.  Ticks are TSC ticks: on Bochs,
 * instructions (PLATFORM.md).
 */
#ifndef EP_WORKLOAD_H
#define EP_WORKLOAD_H


#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline uint64_t ep_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline int ep_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int ep_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts @v. */
static inline void ep_report(const char *name, uint64_t *v, unsigned int n)
{
	uint64_t sum = 0;

	if (!n)
		return;
	for (unsigned int i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), ep_cmp);
	printf("workload %s: n=%u mean=%llu p50=%llu p99=%llu ticks\n", name, n,
	       (unsigned long long)(sum / n), (unsigned long long)v[n / 2],
	       (unsigned long long)v[(uint64_t)n * 99 / 100]);
	fflush(stdout);
}

#endif
