// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exit statistics' breakdown maps, printed in the statistics document
 * (docs/STATS.md) at the end of a run.  The counting is inline
 * (exit_stats.h, the generated dispatch and the handlers).
 */
#include <stdbool.h>
#include <stddef.h>

#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "arch/vmx/exit_stats.h"

/* One direct-indexed range of a breakdown: count[i] is key base + i. */
struct stats_range {
	uint64_t base;
	const uint64_t *count;
	unsigned int n;
};

/*
 * One breakdown map of the statistics document (docs/STATS.md): the
 * direct ranges, then the table, then `other`.  Keys in hex, or decimal.
 */
static void print_breakdown(const char *name, bool hex, const struct stats_range *ranges,
			    unsigned int n_ranges, const struct exit_stats_table *t)
{
	const char *sep = "";

	printk("      %s: {", name);
	for (unsigned int r = 0; r < n_ranges; r++) {
		for (unsigned int i = 0; i < ranges[r].n; i++) {
			if (!ranges[r].count[i])
				continue;
			printk(hex ? "%s0x%llx: %llu" : "%s%llu: %llu", sep,
			       (unsigned long long)(ranges[r].base + i),
			       (unsigned long long)ranges[r].count[i]);
			sep = ", ";
		}
	}
	for (unsigned int i = 0; i < EXIT_STATS_KEYS; i++) {
		/* A slot claimed for a fast handler's key (profile.h) may be unused. */
		if (!t->key[i] || !t->count[i])
			continue;
		printk(hex ? "%s0x%llx: %llu" : "%s%llu: %llu", sep,
		       (unsigned long long)(t->key[i] - 1), (unsigned long long)t->count[i]);
		sep = ", ";
	}
	if (t->other)
		printk("%sother: %llu", sep, (unsigned long long)t->other);
	printk("}\n");
}

void exit_stats_print_breakdowns(const struct exit_stats *st)
{
	const struct stats_range msr_read[] = {
		{ MSR_IA32_X2APIC_FIRST, st->msr_read_x2apic, EXIT_STATS_X2APIC },
	};
	const struct stats_range msr_write[] = {
		{ MSR_IA32_X2APIC_FIRST, st->msr_write_x2apic, EXIT_STATS_X2APIC },
	};
	const struct stats_range cpuid[] = {
		{ 0, st->cpuid_basic, EXIT_STATS_CPUID_BASIC },
		{ CPUID_HYPERVISOR_BASE, st->cpuid_hv, EXIT_STATS_CPUID_HV },
		{ CPUID_LEAF_EXT_BASE, st->cpuid_ext, EXIT_STATS_CPUID_EXT },
	};
	const struct stats_range hypercall[] = {
		{ 0, st->hypercall_low, EXIT_STATS_HYPERCALLS },
	};

	print_breakdown("msr_read", true, msr_read, ARRAY_SIZE(msr_read), &st->msr_read);
	print_breakdown("msr_write", true, msr_write, ARRAY_SIZE(msr_write), &st->msr_write);
	print_breakdown("io", true, NULL, 0, &st->io);
	print_breakdown("cpuid", true, cpuid, ARRAY_SIZE(cpuid), &st->cpuid);
	print_breakdown("hypercall", false, hypercall, ARRAY_SIZE(hypercall), &st->hypercall);
}
