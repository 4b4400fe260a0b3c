// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hrtimer workload (one vCPU): arm the local APIC timer in TSC-deadline
 * mode, HLT until it fires, again and again: the exit mix of a tickless
 * kernel's high-resolution timers (WRMSR IA32_TSC_DEADLINE, HLT, external
 * interrupt, perhaps interrupt window and preemption timer).
 *
 * Options: count=N (default 2000), delta=N TSC ticks (default 20000).
 * Without TSC-deadline mode (QEMU TCG) it falls back to the one-shot
 * timer with delta as the initial count, and says so.
 */
#include "apic.h"
#include "console.h"
#include "idt.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "hrtimer";

void guest_main(void)
{
	uint32_t count = cmdline_u32("count", 2000);
	uint32_t delta = cmdline_u32("delta", 20000);
	bool deadline_mode = cpu_has_tsc_deadline();
	uint64_t early = 0, lat_sum = 0, lat_max = 0, lat_min = ~0ull, start;
	uint32_t fired = 0;

	printf("hrtimer: %u timers, %u ticks apart, %s\n", count, delta,
	       deadline_mode ? "TSC-deadline mode" :
	       "one-shot mode (no TSC-deadline mode)");
	apic_init();
	if (deadline_mode)
		apic_timer_tsc_deadline_mode();
	start = rdtsc();
	for (uint32_t i = 0; i < count; i++) {
		uint32_t before = apic_timer_irqs;
		uint64_t armed = rdtsc(), deadline = armed + delta, woke;

		if (deadline_mode)
			apic_timer_set_deadline(deadline);
		else
			apic_timer_oneshot(delta);
		apic_timer_wait_halted(before);
		woke = rdtsc();
		fired += apic_timer_irqs - before;
		/*
		 * Latency from the deadline to the guest running again.  In
		 * one-shot mode the APIC clock need not be the TSC: skip it.
		 */
		if (!deadline_mode)
			continue;
		if (woke < deadline) {
			early++;
			continue;
		}
		lat_sum += woke - deadline;
		if (woke - deadline > lat_max)
			lat_max = woke - deadline;
		if (woke - deadline < lat_min)
			lat_min = woke - deadline;
	}
	apic_timer_stop();

	printf("hrtimer: %u timers fired\n", fired);
	printf("hrtimer: %llu ticks in all\n", rdtsc() - start);
	check("hrtimer-all-fired", fired == count, "%u of %u timers fired", fired,
	      count);
	if (deadline_mode && count > early) {
		printf("hrtimer: wake-up latency after the deadline: min %llu, "
		       "mean %llu, max %llu ticks\n", lat_min,
		       div_u64_u32(lat_sum, count - (uint32_t)early), lat_max);
		check("hrtimer-none-early", early == 0,
		      "%llu wake-ups before the deadline", early);
	}
}
