/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-vCPU exit statistics.  The generated dispatch counts an exit only
 * when the profile's statistics level is "counts" or "timing"; at "off"
 * it contains no reference to this file.
 */
#ifndef EXITPLAN_EXIT_STATS_H
#define EXITPLAN_EXIT_STATS_H

#include <stdint.h>

#include "arch_bits.h"		/* generated: CPUID_HYPERVISOR_BASE, CPUID_LEAF_EXT_BASE */
#include "msr_index.h"		/* generated: MSR_IA32_X2APIC_FIRST/LAST */
#include "vmx_exit_reasons.h"	/* generated: VMX_EXIT_REASON_MAX */

/* One slot per reason the SDM defines, and one for anything above. */
#define EXIT_STATS_OTHER	(VMX_EXIT_REASON_MAX + 1)
#define EXIT_STATS_SLOTS	(VMX_EXIT_REASON_MAX + 2)

/*
 * A bounded count-by-key table: exits by MSR index, port, CPUID leaf or
 * hypercall number (docs/STATS.md), for the keys the direct arrays below
 * do not cover.  Open addressing with linear probing, the home slot being
 * the key's low bits: ports and MSR indices that a workload uses together
 * are mostly consecutive, so they rarely collide and the common case is
 * one comparison.  key[] holds key + 1 (keys are at most 32 bits wide), so
 * that a zeroed table is empty.  Keys beyond its capacity are counted in
 * `other`.
 */
#define EXIT_STATS_KEYS		32	/* a power of two */

struct exit_stats_table {
	uint64_t key[EXIT_STATS_KEYS];		/* key + 1; 0 = free */
	uint64_t count[EXIT_STATS_KEYS];
	uint64_t other;
};

/*
 * Direct-indexed counters for the ranges guests hit most, so that
 * counting costs a compare and an increment: the CPUID leaves 0..1FH,
 * 40000000H..4000000FH and 80000000H..8000001FH, the x2APIC MSRs
 * 800H..8FFH (the APIC timer and EOI of an x2APIC guest), hypercalls
 * 0..15.
 */
#define EXIT_STATS_CPUID_BASIC		32
#define EXIT_STATS_CPUID_HV		16
#define EXIT_STATS_CPUID_EXT		32
#define EXIT_STATS_X2APIC		(MSR_IA32_X2APIC_LAST - MSR_IA32_X2APIC_FIRST + 1)
#define EXIT_STATS_HYPERCALLS		16

struct exit_stats {
	uint64_t count[EXIT_STATS_SLOTS];
	uint64_t ticks[EXIT_STATS_SLOTS];	/* "timing" level only */
	uint64_t exit_tsc;			/* TSC at the exit stub's entry */
	/* Breakdowns, counted by the handlers at "counts" and "timing". */
	uint64_t cpuid_basic[EXIT_STATS_CPUID_BASIC];
	uint64_t cpuid_hv[EXIT_STATS_CPUID_HV];
	uint64_t cpuid_ext[EXIT_STATS_CPUID_EXT];
	uint64_t msr_read_x2apic[EXIT_STATS_X2APIC];
	uint64_t msr_write_x2apic[EXIT_STATS_X2APIC];
	uint64_t hypercall_low[EXIT_STATS_HYPERCALLS];
	struct exit_stats_table msr_read, msr_write, io, cpuid, hypercall;
};


/* A key not in its home slot: probe on, claim a free slot, or count it in `other`. */
static __attribute__((__noinline__, __cold__, __unused__)) void
exit_stats_table_count_slow(struct exit_stats_table *t, uint64_t key)
{
	unsigned int i = key & (EXIT_STATS_KEYS - 1);

	for (unsigned int probe = 0; probe < EXIT_STATS_KEYS; probe++) {
		if (t->key[i] == key + 1) {
			t->count[i]++;
			return;
		}
		if (!t->key[i]) {
			t->key[i] = key + 1;
			t->count[i] = 1;
			return;
		}
		i = (i + 1) & (EXIT_STATS_KEYS - 1);
	}
	t->other++;
}

static inline void exit_stats_table_count(struct exit_stats_table *t, uint64_t key)
{
	unsigned int i = key & (EXIT_STATS_KEYS - 1);

	if (__builtin_expect(t->key[i] == key + 1, 1))
		t->count[i]++;
	else
		exit_stats_table_count_slow(t, key);
}

/*
 * Give @key its home slot in @t before the first exit, when it is free
 * and @key has no slot yet: a hot key counted from then on with one
 * compare, whatever keys come first.  (IA32_EFER and IA32_TSC_DEADLINE
 * share a home slot; a kernel writes EFER once at boot, and without the
 * claim every later TSC-deadline write probed past it.)
 */
static inline void exit_stats_table_claim(struct exit_stats_table *t, uint64_t key)
{
	for (unsigned int i = 0; i < EXIT_STATS_KEYS; i++)
		if (t->key[i] == key + 1)
			return;
	if (!t->key[key & (EXIT_STATS_KEYS - 1)])
		t->key[key & (EXIT_STATS_KEYS - 1)] = key + 1;
}

static inline void exit_stats_count_cpuid(struct exit_stats *st, uint32_t leaf)
{
	if (leaf < EXIT_STATS_CPUID_BASIC)
		st->cpuid_basic[leaf]++;
	else if (leaf - CPUID_HYPERVISOR_BASE < EXIT_STATS_CPUID_HV)
		st->cpuid_hv[leaf - CPUID_HYPERVISOR_BASE]++;
	else if (leaf - CPUID_LEAF_EXT_BASE < EXIT_STATS_CPUID_EXT)
		st->cpuid_ext[leaf - CPUID_LEAF_EXT_BASE]++;
	else
		exit_stats_table_count(&st->cpuid, leaf);
}

static inline void exit_stats_count_msr(uint64_t *x2apic, struct exit_stats_table *t,
					uint32_t msr)
{
	if (msr - MSR_IA32_X2APIC_FIRST < EXIT_STATS_X2APIC)
		x2apic[msr - MSR_IA32_X2APIC_FIRST]++;
	else
		exit_stats_table_count(t, msr);
}

static inline void exit_stats_count_hypercall(struct exit_stats *st, uint64_t nr)
{
	if (nr < EXIT_STATS_HYPERCALLS)
		st->hypercall_low[nr]++;
	else
		exit_stats_table_count(&st->hypercall, nr);
}

static inline unsigned int exit_stats_slot(uint16_t basic_reason)
{
	return basic_reason <= VMX_EXIT_REASON_MAX ? basic_reason : EXIT_STATS_OTHER;
}

#endif /* EXITPLAN_EXIT_STATS_H */
