/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-vCPU exit statistics.  The generated dispatch counts an exit only
 * when the profile's statistics level is "counts" or "timing"; at "off"
 * it contains no reference to this file.
 */
#ifndef EXITPLAN_EXIT_STATS_H
#define EXITPLAN_EXIT_STATS_H

#include <stdint.h>

#include "vmx_exit_reasons.h"	/* generated: VMX_EXIT_REASON_MAX */

/* One slot per reason the SDM defines, and one for anything above. */
#define EXIT_STATS_OTHER	(VMX_EXIT_REASON_MAX + 1)
#define EXIT_STATS_SLOTS	(VMX_EXIT_REASON_MAX + 2)

/*
 * A bounded count-by-key table: exits by MSR index, port, CPUID leaf or
 * hypercall number (docs/STATS.md).  Keys beyond its capacity are counted
 * in `other`.  `last` remembers the slot of the previous hit: a workload
 * repeats the same key, so the common case is one comparison.
 */
#define EXIT_STATS_KEYS		16

struct exit_stats_table {
	unsigned int n, last;
	uint64_t key[EXIT_STATS_KEYS];
	uint64_t count[EXIT_STATS_KEYS];
	uint64_t other;
};

struct exit_stats {
	uint64_t count[EXIT_STATS_SLOTS];
	uint64_t ticks[EXIT_STATS_SLOTS];	/* "timing" level only */
	uint64_t exit_tsc;			/* TSC at the exit stub's entry */
	/* Breakdowns, counted by the handlers at "counts" and "timing". */
	struct exit_stats_table msr_read, msr_write, io, cpuid, hypercall;
};

static inline void exit_stats_table_count(struct exit_stats_table *t, uint64_t key)
{
	unsigned int i = t->last;

	if (i < t->n && t->key[i] == key) {
		t->count[i]++;
		return;
	}
	for (i = 0; i < t->n; i++) {
		if (t->key[i] == key)
			goto hit;
	}
	if (t->n == EXIT_STATS_KEYS) {
		t->other++;
		return;
	}
	i = t->n++;
	t->key[i] = key;
	t->count[i] = 0;
hit:
	t->count[i]++;
	t->last = i;
}

static inline unsigned int exit_stats_slot(uint16_t basic_reason)
{
	return basic_reason <= VMX_EXIT_REASON_MAX ? basic_reason : EXIT_STATS_OTHER;
}

#endif /* EXITPLAN_EXIT_STATS_H */
