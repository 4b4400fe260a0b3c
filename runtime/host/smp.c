// SPDX-License-Identifier: GPL-2.0-only
/*
 * Starting the APs (SDM Vol. 3A 9.4.4.1, "Typical BSP Initialization
 * Sequence"): INIT, 10 ms, STARTUP, 200 us, STARTUP, to each CPU the
 * ACPI MADT lists as enabled (or, without a MADT, to all but this one).
 * Every AP that answers takes the next CPU id.
 */
#include "runtime/host/acpi.h"
#include "runtime/host/boot_data.h"
#include "runtime/host/boot_info.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "runtime/host/lapic.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/layout.h"
#include "runtime/host/panic.h"
#include "runtime/host/percpu.h"
#include "runtime/host/smp.h"
#include "lib/string.h"
#include "runtime/host/timer.h"
#include "runtime/host/traps.h"
#include "runtime/host/x86_arch.h"

extern const char trampoline_start[], trampoline_end[], trampoline_arrived[];
extern const char trampoline_cr3[], trampoline_entry64[];
extern const char ap_start64[];
extern uint32_t ap_parked;

#define INIT_DEASSERT_DELAY_US	10000	/* INIT to STARTUP */
#define SIPI_DELAY_US		200
/* The APs are counted once no new one has come for this long. */
#define AP_QUIET_US		10000
#define AP_WAIT_MAX_US		1000000

void ap_main(unsigned int id);

/* CPUs smp_start_aps() knows of that are not online (smp_cpus_left_out()). */
static unsigned int cpus_left_out;

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

/* More CPUs than this in the MADT: the rest are not started. */
#define MADT_MAX_CPUS		256

/*
 * Send one IPI to every AP: to each APIC ID listed (but our own), or
 * with the all-excluding-self shorthand when there is no list.
 */
static void send_to_aps(const uint32_t *ids, unsigned int n, uint32_t self, uint64_t icr,
			const char *what)
{
	bool ok = true;

	if (!ids) {
		ok = lapic_send_ipi(0, icr | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
	} else {
		for (unsigned int i = 0; i < n; i++)
			if (ids[i] != self)
				ok = lapic_send_ipi(ids[i], icr | APIC_ICR_SHORTHAND_NONE) && ok;
	}
	if (!ok)
		panic("smp: the local APIC did not accept the %s IPI", what);
}

unsigned int smp_start_aps(void)
{
	static uint8_t saved[PAGE_SIZE];
	static uint32_t ids[MADT_MAX_CPUS];
	size_t len = trampoline_end - trampoline_start;
	void *page = (void *)(uintptr_t)SMP_TRAMPOLINE_PA;
	uint32_t seen = 0, arrived, left, self;
	unsigned int quiet = 0, waited = 0, n, expected = 0;
	const uint32_t *targets = NULL;

	BUILD_BUG_ON(SMP_TRAMPOLINE_PA % PAGE_SIZE || SMP_TRAMPOLINE_PA >= 0x100000);
	if (len > PAGE_SIZE)
		panic("smp: trampoline of %zu bytes does not fit a page", len);
	if (percpu_online_count() != 1 || this_cpu_id() != 0)
		panic("smp_start_aps: call once, on the boot CPU");
	if (!lapic_init()) {
		printk("exitplan: no local APIC: not starting other CPUs\n");
		return 1;
	}
	self = lapic_id();

	/*
	 * The CPUs the firmware lists as enabled, one by one; without a
	 * MADT, a broadcast (which on hardware also wakes CPUs the firmware
	 * disabled) and a wait until no more arrive.
	 */
	n = cmdline_option(boot_info()->cmdline, "smp_broadcast", NULL, 0) ? 0 :
	    acpi_madt_apic_ids(ids, MADT_MAX_CPUS);
	if (n > MADT_MAX_CPUS) {
		printk("exitplan: the MADT lists %u CPUs; starting the first %u\n", n,
		       MADT_MAX_CPUS);
		n = MADT_MAX_CPUS;
	}
	if (n) {
		targets = ids;
		for (unsigned int i = 0; i < n; i++) {
			if (ids[i] == self)
				continue;
			if (ids[i] > 0xff && !lapic_x2apic_mode()) {
				printk("exitplan: APIC ID %u needs x2APIC mode: not started\n", ids[i]);
				ids[i] = self;		/* skipped by send_to_aps() */
				continue;
			}
			expected++;
		}
		printk("exitplan: the MADT lists %u CPU%s\n", n, n == 1 ? "" : "s");
	} else {
		printk("exitplan: no MADT (or smp_broadcast): starting the other CPUs by broadcast\n");
	}

	memcpy(saved, page, PAGE_SIZE);
	memcpy(page, trampoline_start, len);
	/* Where the image is now (runtime/host/reloc.c): below 4 GiB, a 32-bit far jump away. */
	*(uint32_t *)((uint8_t *)page + (trampoline_cr3 - trampoline_start)) =
		(uint32_t)virt_to_phys(boot_pml4);
	*(uint32_t *)((uint8_t *)page + (trampoline_entry64 - trampoline_start)) =
		(uint32_t)(uintptr_t)ap_start64;

	send_to_aps(targets, n, self, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT |
		    APIC_ICR_TRIGGER_LEVEL, "INIT");
	pit_delay_us(INIT_DEASSERT_DELAY_US);
	for (int i = 0; i < 2; i++) {
		send_to_aps(targets, n, self, APIC_ICR_DELIVERY_MODE_STARTUP |
			    (SMP_TRAMPOLINE_PA >> PAGE_SHIFT), "STARTUP");
		pit_delay_us(SIPI_DELAY_US);
	}

	/*
	 * Wait until every AP that entered the trampoline has left it
	 * (online or parked), and all expected ones (with a MADT) or no new
	 * one for a while (without) have come; only then may the page go
	 * back to what it was.
	 */
	for (;;) {
		arrived = *trampoline_arrivals();
		left = percpu_online_count() - 1 + READ_ONCE(ap_parked);
		if (arrived != seen) {
			seen = arrived;
			quiet = 0;
		}
		if (arrived == left && (targets ? left >= expected : quiet >= AP_QUIET_US))
			break;
		if (waited >= AP_WAIT_MAX_US) {
			if (arrived != left)
				panic("smp: %u APs entered the trampoline, only %u came out",
				      arrived, left);
			printk("exitplan: only %u of the %u other CPUs the MADT lists came up\n",
			       left, expected);
			if (expected > left)
				cpus_left_out += expected - left;
			break;
		}
		pit_delay_us(1000);
		quiet += 1000;
		waited += 1000;
	}
	memcpy(page, saved, PAGE_SIZE);

	if (READ_ONCE(ap_parked))
		printk("exitplan: %u CPUs beyond HV_MAX_CPUS (%u) left halted\n",
		       READ_ONCE(ap_parked), HV_MAX_CPUS);
	cpus_left_out += READ_ONCE(ap_parked);
	printk("exitplan: %u CPU%s online\n", percpu_online_count(),
	       percpu_online_count() == 1 ? "" : "s");
	return percpu_online_count();
}

unsigned int smp_cpus_left_out(void)
{
	return cpus_left_out;
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
