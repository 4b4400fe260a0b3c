// SPDX-License-Identifier: GPL-2.0-only
/*
 * The report at the end of a run: the statistics document (docs/STATS.md),
 * the exit table and event counters, each vCPU's end and the scheduler's
 * record.
 */

#include <stdbool.h>
#include <stddef.h>

#include "runtime/host/spinlock.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/profile_values.h"
#include "arch/vmx/vcpu_switch.h"
#include "arch/vmx/vmx_setup.h"
#include "runtime/host/console.h"
#include "arch/vmx/exit_stats.h"

/* --- the statistics document's breakdown maps (docs/STATS.md) ------------- */

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

static void exit_stats_print_breakdowns(const struct exit_stats *st)
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

/* --- the exit summary -------------------------------------------------- */

/* A YAML double-quoted scalar's content: backslash and quote escaped. */
static void print_yaml_quoted(const char *s)
{
	printk("\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printk("\\%c", *s);
		else if (*s >= 0x20 && *s < 0x7f)
			printk("%c", *s);
	}
	printk("\"");
}

/*
 * The statistics document (docs/STATS.md): YAML between two marker
 * comment lines, which gen/exitplan-gen from-stats turns into a profile.
 * One section per vCPU in `vcpus:`.
 */
static void vmx_print_stats_document(struct vcpu *const *vcpus, unsigned int n,
				     uint64_t tsc_overhead)
{
	const struct vcpu_arch_state *a = vcpus[0]->arch;
	uint32_t brand[13] = { 0 }, max_ext, unused;
	const char *cpu = "unknown";

	cpuid_count(CPUID_LEAF_EXT_BASE, 0, &max_ext, &unused, &unused, &unused);
	if (max_ext >= CPUID_LEAF_BRAND_LAST) {
		for (uint32_t l = CPUID_LEAF_BRAND_FIRST, i = 0; l <= CPUID_LEAF_BRAND_LAST; l++, i += 4)
			cpuid_count(l, 0, &brand[i], &brand[i + 1], &brand[i + 2], &brand[i + 3]);
		cpu = (const char *)brand;
		while (*cpu == ' ')
			cpu++;
	}

	printk("# exitplan-stats-begin\n");
	printk("exitplan_stats:\n  version: 1\n  profile: %s\n  level: %s\n", exitplan_profile.name,
	       exitplan_profile.stats_level == STATS_TIMING ? "timing" : "counts");
	printk("  cpu: ");
	print_yaml_quoted(cpu);
	printk("\n  guest: ");
	print_yaml_quoted(a->guest_name);
	printk("\n  guest_args: ");
	print_yaml_quoted(a->guest_args ? a->guest_args : "");
	printk("\n");
	if (exitplan_profile.stats_level == STATS_TIMING)
		printk("  tsc_overhead: %llu\n", (unsigned long long)tsc_overhead);
	printk("  vcpus:\n");
	for (unsigned int v = 0; v < n; v++) {
		const struct exit_stats *st = &vcpus[v]->stats;
		uint64_t exits = 0;

		for (unsigned int i = 0; i < EXIT_STATS_SLOTS; i++)
			exits += st->count[i];
		printk("    - id: %u\n      exits: %llu\n      reasons:\n", vcpus[v]->id,
		       (unsigned long long)exits);
		for (unsigned int i = 0; i < EXIT_STATS_SLOTS; i++) {
			if (!st->count[i])
				continue;
			printk("        %s: {count: %llu", i == EXIT_STATS_OTHER ? "OTHER" :
			       vmx_exit_reason_name(i), (unsigned long long)st->count[i]);
			if (exitplan_profile.stats_level == STATS_TIMING)
				printk(", ticks: %llu", (unsigned long long)st->ticks[i]);
			printk("}\n");
		}
		exit_stats_print_breakdowns(st);
		printk("      events: {nmis_in_root: %llu, kicks_in_root: %llu, storm_steps: %llu}\n",
		       (unsigned long long)vcpus[v]->arch->nmis_in_root,
		       (unsigned long long)vcpus[v]->arch->kicks_in_root,
		       (unsigned long long)vcpus[v]->arch->storm_steps);
	}
	printk("# exitplan-stats-end\n");
}

static void vmx_print_exit_table(const struct vcpu *vcpu, unsigned int n)
{
	uint64_t total = 0;

	if (n == 1)
		printk("exitplan: exits by reason (profile '%s'):\n", exitplan_profile.name);
	else
		printk("exitplan: exits by reason (profile '%s', vCPU %u):\n",
		       exitplan_profile.name, vcpu->id);
	for (unsigned int i = 0; i < EXIT_STATS_SLOTS; i++) {
		uint64_t c = vcpu->stats.count[i];

		if (!c)
			continue;
		total += c;
		if (exitplan_profile.stats_level == STATS_TIMING)
			printk("  %3u %-28s %10llu  %12llu ticks  %8llu ticks/exit\n", i,
			       i == EXIT_STATS_OTHER ? "(above the SDM's range)" :
			       vmx_exit_reason_name(i), (unsigned long long)c,
			       (unsigned long long)vcpu->stats.ticks[i],
			       (unsigned long long)(vcpu->stats.ticks[i] / c));
		else
			printk("  %3u %-28s %10llu\n", i,
			       i == EXIT_STATS_OTHER ? "(above the SDM's range)" :
			       vmx_exit_reason_name(i), (unsigned long long)c);
	}
	printk("      %-28s %10llu\n", "total", (unsigned long long)total);
}

/*
 * The event counters of nmi_root.c (NMIs and kicks in root) and
 * events.c (storm steps), which no exit reason shows: NMIs that
 * arrived in root operation and went to the guest, interrupts: direct's
 * kick NMIs taken in root operation, and the single steps that let an
 * interrupt-stormed guest retire an instruction.  Counted at every
 * statistics level (and not cleared by STATS_RESET), so printed at every
 * level too, zeros included: one line per vCPU the boot tests can always
 * find, and a zero says the event did not happen.
 */
static void vmx_print_events(const struct vcpu *vcpu, unsigned int n)
{
	const struct vcpu_arch_state *a = vcpu->arch;

	if (n == 1)
		printk("exitplan: events: ");
	else
		printk("exitplan: events (vCPU %u): ", vcpu->id);
	printk("%llu NMIs in root operation given to the guest, %llu kicks taken in root "
	       "operation, %llu interrupt-storm steps\n", (unsigned long long)a->nmis_in_root,
	       (unsigned long long)a->kicks_in_root, (unsigned long long)a->storm_steps);
}

/* How one vCPU ended, in words. */
static void vmx_print_vcpu_end(const struct vcpu *vcpu, int stopped_by)
{
	const struct vcpu_arch_state *a = vcpu->arch;
	enum vcpu_run_state s = vm_vcpu_state(vcpu->vv);

	if (s != VCPU_RUN_STOPPED) {
		/* vmx_wait_for_vcpus() said so: its statistics are as they were. */
		printk("exitplan: vCPU %u: hung, still %s; it never stopped\n", vcpu->id,
		       vm_vcpu_state_name(s));
		return;
	}
	s = vcpu->vv->state_at_stop;
	printk("exitplan: vCPU %u: %s%s when it stopped; ", vcpu->id, vm_vcpu_state_name(s),
	       a->halted_at_stop && s == VCPU_RUN_RUNNING ? " (in HLT)" : "");
	switch (a->stop) {
	case VCPU_STOP_STATUS:
	case VCPU_STOP_SHUTDOWN:
		printk("guest exit status %d\n", a->exit_status);
		break;
	case VCPU_STOP_VM:
		printk("stopped with the machine (vCPU %d stopped it)\n", stopped_by);
		break;
	default:
		printk("stopped: %s\n", a->stop_reason[0] ? a->stop_reason : "no reason recorded");
		break;
	}
}

/*
 * What the scheduler did, when CPUs were shared: per vCPU its turns on
 * its CPU and how they ended; per CPU its VMCS switches and spin yields
 * (each CPU's yields are the sum of its vCPUs').
 */
static void vmx_print_sched(const struct sched *s)
{
	for (unsigned int v = 0; v < s->nr_vcpus; v++) {
		const struct sched_vcpu *sv = &s->vcpu[v];

		printk("exitplan: scheduler: vCPU %u on CPU %u: %llu turns, %llu preemptions, "
		       "%llu blocks, %llu spin yields\n", v, sv->cpu,
		       (unsigned long long)sv->switched_in, (unsigned long long)sv->preemptions,
		       (unsigned long long)sv->blocks, (unsigned long long)sv->spin_yields);
	}
	for (unsigned int c = 0; c < s->nr_cpus; c++) {
		const struct sched_cpu *sc = &s->cpu[c];

		printk("exitplan: scheduler: CPU %u: %llu VMCS switches, %llu PAUSE-loop yields, "
		       "%llu plain-PAUSE yields\n", c, (unsigned long long)sc->switches,
		       (unsigned long long)sc->ple_yields, (unsigned long long)sc->pause_yields);
		printk("exitplan: scheduler: CPU %u: %llu wakeup preemptions\n", c,
		       (unsigned long long)sc->wake_preemptions);
		printk("exitplan: scheduler: CPU %u idle: %llu halts until a kick, %llu halts until a "
		       "blocked vCPU's timer, %llu polls\n", c, (unsigned long long)sc->idle_halts,
		       (unsigned long long)sc->idle_timer_halts, (unsigned long long)sc->idle_polls);
	}
}

/*
 * Every vCPU's statistics and end, then the machine's: the vCPU that
 * stopped it decides the exit status.  One vCPU prints what it always
 * did (the boot tests match those lines).
 */
void vmx_print_summary(struct vcpu *const *vcpus, unsigned int n, int stopped_by,
		       uint64_t tsc_overhead)
{
	const struct vcpu *cause = vcpus[stopped_by >= 0 ? stopped_by : 0];
	const struct vcpu_arch_state *a = cause->arch;

	if (exitplan_profile.stats_level == STATS_OFF) {
		printk("exitplan: exit statistics are off in profile '%s'\n",
		       exitplan_profile.name);
		for (unsigned int v = 0; v < n; v++)
			vmx_print_events(vcpus[v], n);
	} else {
		for (unsigned int v = 0; v < n; v++) {
			vmx_print_exit_table(vcpus[v], n);
			vmx_print_events(vcpus[v], n);
		}
		vmx_print_stats_document(vcpus, n, tsc_overhead);
	}
	if (n > 1) {
		for (unsigned int v = 0; v < n; v++)
			vmx_print_vcpu_end(vcpus[v], stopped_by);
	}
	if (n > vmx_sched.nr_cpus)
		vmx_print_sched(&vmx_sched);
	switch (a->stop) {
	case VCPU_STOP_STATUS:
	case VCPU_STOP_SHUTDOWN:
		if (n > 1)
			printk("exitplan: vCPU %u ended the run\n", cause->id);
		printk("exitplan: guest exit status %d\n", a->exit_status);
		break;
	default:
		if (n > 1)
			printk("exitplan: guest stopped: %s (vCPU %u)\n",
			       a->stop_reason[0] ? a->stop_reason : "no reason recorded", cause->id);
		else
			printk("exitplan: guest stopped: %s\n",
			       a->stop_reason[0] ? a->stop_reason : "no reason recorded");
		break;
	}
}

