// SPDX-License-Identifier: GPL-2.0-only
/*
 * Starting the APs (SDM Vol. 3A 9.4.4.1, "Typical BSP Initialization
 * Sequence"): INIT, 10 ms, STARTUP, 200 us, STARTUP, to all CPUs but
 * this one.  Broadcasting needs no ACPI tables; every AP that answers
 * takes the next CPU id.  (On hardware whose firmware disabled some CPUs,
 * a broadcast wakes those too; starting the CPUs the MADT lists, one by
 * one, would not.  Not needed on Bochs or QEMU.)
 */
#include "console.h"
#include "cpu.h"
#include "lapic.h"
#include "layout.h"
#include "panic.h"
#include "percpu.h"
#include "smp.h"
#include "string.h"
#include "timer.h"
#include "traps.h"
#include "x86_arch.h"

extern const char trampoline_start[], trampoline_end[], trampoline_arrived[];
extern uint8_t ap_stacks[HV_MAX_CPUS][HV_STACK_SLOT];
extern uint32_t ap_parked;

#define INIT_DEASSERT_DELAY_US	10000	/* INIT to STARTUP */
#define SIPI_DELAY_US		200
/* The APs are counted once no new one has come for this long. */
#define AP_QUIET_US		10000
#define AP_WAIT_MAX_US		1000000

void ap_main(unsigned int id);

/* The copy of trampoline_arrived in the borrowed page. */
static volatile uint32_t *trampoline_arrivals(void)
{
	return (volatile uint32_t *)(uintptr_t)(SMP_TRAMPOLINE_PA +
						(trampoline_arrived - trampoline_start));
}

static void ap_idle(struct percpu *p)
{
	for (;;) {
		void (*fn)(void *);

		while (!(fn = __atomic_load_n(&p->call_fn, __ATOMIC_ACQUIRE)))
			cpu_relax();
		fn(p->call_arg);
		__atomic_store_n(&p->call_fn, NULL, __ATOMIC_RELEASE);
	}
}

/* Called by trampoline.S on the AP's own stack, interrupts off. */
void ap_main(unsigned int id)
{
	uint64_t bottom = (uintptr_t)ap_stacks[id] + PAGE_SIZE;	/* above the guard */

	percpu_init_ap(id, bottom, bottom + HV_STACK_SIZE);
	idt_load();
	printk("exitplan: CPU %u online (APIC ID %u)\n", id, this_cpu()->apic_id);
	ap_idle(this_cpu());
}

static void send_or_panic(uint64_t icr, const char *what)
{
	if (!lapic_send_ipi(0, icr | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF))
		panic("smp: the local APIC did not accept the %s IPI", what);
}

unsigned int smp_start_aps(void)
{
	static uint8_t saved[PAGE_SIZE];
	size_t len = trampoline_end - trampoline_start;
	void *page = (void *)(uintptr_t)SMP_TRAMPOLINE_PA;
	uint32_t seen = 0, arrived;
	unsigned int quiet = 0, waited = 0;

	BUILD_BUG_ON(SMP_TRAMPOLINE_PA % PAGE_SIZE || SMP_TRAMPOLINE_PA >= 0x100000);
	if (len > PAGE_SIZE)
		panic("smp: trampoline of %zu bytes does not fit a page", len);
	if (percpu_online_count() != 1 || this_cpu_id() != 0)
		panic("smp_start_aps: call once, on the boot CPU");
	if (!lapic_init()) {
		printk("exitplan: no local APIC: not starting other CPUs\n");
		return 1;
	}

	memcpy(saved, page, PAGE_SIZE);
	memcpy(page, trampoline_start, len);

	send_or_panic(APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT |
		      APIC_ICR_TRIGGER_LEVEL, "INIT");
	pit_delay_us(INIT_DEASSERT_DELAY_US);
	for (int i = 0; i < 2; i++) {
		send_or_panic(APIC_ICR_DELIVERY_MODE_STARTUP |
			      (SMP_TRAMPOLINE_PA >> PAGE_SHIFT), "STARTUP");
		pit_delay_us(SIPI_DELAY_US);
	}

	/*
	 * Wait until the APs that entered the trampoline have all left it
	 * (online or parked) and no new one has arrived for a while; only
	 * then may the page go back to what it was.
	 */
	for (;;) {
		arrived = *trampoline_arrivals();
		if (arrived != seen) {
			seen = arrived;
			quiet = 0;
		}
		if (arrived == percpu_online_count() - 1 + READ_ONCE(ap_parked) &&
		    quiet >= AP_QUIET_US)
			break;
		if (waited >= AP_WAIT_MAX_US)
			panic("smp: %u APs entered the trampoline, only %u came out",
			      arrived, percpu_online_count() - 1 + READ_ONCE(ap_parked));
		pit_delay_us(1000);
		quiet += 1000;
		waited += 1000;
	}
	memcpy(page, saved, PAGE_SIZE);

	if (READ_ONCE(ap_parked))
		printk("exitplan: %u CPUs beyond HV_MAX_CPUS (%u) left halted\n",
		       READ_ONCE(ap_parked), HV_MAX_CPUS);
	printk("exitplan: %u CPU%s online\n", percpu_online_count(),
	       percpu_online_count() == 1 ? "" : "s");
	return percpu_online_count();
}

bool smp_call_async(unsigned int cpu, void (*fn)(void *arg), void *arg)
{
	struct percpu *p = percpu_area(cpu);

	if (cpu >= percpu_online_count() || !fn)
		return false;
	if (cpu == this_cpu_id()) {
		fn(arg);
		return true;
	}
	if (__atomic_load_n(&p->call_fn, __ATOMIC_ACQUIRE))
		return false;
	p->call_arg = arg;
	__atomic_store_n(&p->call_fn, fn, __ATOMIC_RELEASE);
	return true;
}

void smp_call_wait(unsigned int cpu)
{
	struct percpu *p = percpu_area(cpu);

	if (!p || cpu == this_cpu_id())
		return;
	while (__atomic_load_n(&p->call_fn, __ATOMIC_ACQUIRE))
		cpu_relax();
}

bool smp_call(unsigned int cpu, void (*fn)(void *arg), void *arg)
{
	if (!smp_call_async(cpu, fn, arg))
		return false;
	smp_call_wait(cpu);
	return true;
}
