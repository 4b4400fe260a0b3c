// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt paths, timed from the guest (Bochs ticks = retired
 * instructions), each on bare Bochs as under exitplan:
 *
 *   intr-self-ipi-{xapic,x2apic}-sti-{nop,hlt}
 *	with IF=0, a fixed self-IPI through the ICR (xAPIC page, or MSR
 *	0x830), then `sti; nop` (or `sti; hlt`): the round trip to the
 *	instruction after it, the handler (its EOI included) taken in the
 *	STI window as hardware takes it (vmexit.flat's self_ipi_sti_nop);
 *   intr-eoi-{xapic,x2apic}
 *	an EOI with nothing in service (vmexit.flat's eoi);
 *   intr-tsc-deadline-arm
 *	WRMSR IA32_TSC_DEADLINE far ahead (the timer armed, not firing);
 *   intr-tsc-deadline-immediate
 *	WRMSR IA32_TSC_DEADLINE already passed, with IF=1, until the
 *	handler has run (vmexit.flat's tscdeadline_immed);
 *   intr-tsc-deadline-fire, intr-pit-fire
 *	the gap the interrupt leaves in a loop that reads the TSC: from the
 *	loop's last RDTSC to the handler's first, for the TSC deadline and
 *	for the 8254's IRQ 0 through the 8259s (the BIOS's virtual wire,
 *	LINT0 in ExtINT mode), the device interrupt; arming it is outside;
 *   intr-ipi-other-hlt (its own run: the `ipi-other` option, 2 CPUs)
 *	a fixed IPI to another CPU halted in `sti; hlt`, until its handler's
 *	store is seen.
 *
 * Under exitplan with exit statistics, each kind's exits by reason follow
 * its line:  bench-exits: <kind> in <n> round trips: REASON=count ...
 * so that make bench can split the round trip into the parts of the exit
 * path; a gap's (`in <n> gaps with their arming and EOI:`) include those
 * outside it.
 */
#include "apic.h"
#include "bench.h"
#include "console.h"
#include "idt.h"
#include "smp.h"
#include "test.h"
#include "vmx_exit_reasons.h"
#include "x86.h"

#define PATH_VECTOR		0x52	/* the self-IPIs and the IPI to another CPU */
#define PIT_VECTOR		0x20	/* IRQ 0: ICW2 of the master 8259 below */
#define PIT_COUNT		20	/* 8254 input clocks to IRQ 0, mode 0 */
#define DEADLINE_AHEAD		3000	/* ticks from arming to the deadline (fire) */
#define WAIT_TICKS		20000000ull
/* STATS_READ reasons 0..SCANNED-1: every reason an interrupt path can take. */
#define SCANNED			70

static volatile uint32_t irqs;		/* interrupts taken by the handlers below */
static volatile uint64_t irq_tsc;	/* the TSC at the last one's handler */
static bool x2;				/* the APIC in x2APIC mode: EOI by MSR */

static void path_eoi(void)
{
	if (x2)
		wrmsr(MSR_IA32_X2APIC_EOI, 0);
	else
		apic_eoi();
}

static void path_irq(struct trap_frame *f)
{
	(void)f;
	irq_tsc = rdtsc();
	irqs++;
	path_eoi();
}

static void pit_irq(struct trap_frame *f)
{
	(void)f;
	irq_tsc = rdtsc();
	irqs++;
	outb(0x20, 0x20);		/* non-specific EOI to the master 8259 */
}

/* With IF=1 until the count passes @before or WAIT_TICKS pass; IF=0 after. */
static bool wait_irq(uint32_t before)
{
	uint64_t t = rdtsc();

	sti();
	while (irqs == before && rdtsc() - t < WAIT_TICKS)
		pause();
	cli();
	return irqs != before;
}

/*
 * With IF=1, read the TSC until the handler has run; the last value read
 * before it.  The gap to irq_tsc is the interrupt's delivery as the guest
 * sees it, plus at most the loop's few instructions.
 */
static uint64_t spin_until_irq(uint32_t before)
{
	uint64_t t = rdtsc();
	volatile uint64_t last = t;

	sti();
	for (;;) {
		uint64_t now = rdtsc();

		/* Read before the test that saw no interrupt: never after it came. */
		if (irqs != before || now - t >= WAIT_TICKS)
			break;
		last = now;
	}
	cli();
	return last;
}

/* ---- exit counts and the kinds' lines ---- */

static uint32_t exits_before[SCANNED];

static void exits_snapshot(uint32_t *c)
{
	for (uint32_t r = 0; r < SCANNED; r++) {
		int32_t v = stats_on ? bench_stats_read(r) : -1;

		c[r] = v < 0 ? 0 : (uint32_t)v;
	}
}

/*
 * The kind's line: the mean of @total over @n, less the empty round trip
 * unless @gap (a gap between RDTSCs in two places has no pair to take
 * off); then its exits since exits_before (the STATS_READ VMCALLs left
 * out).  A round trip's exits are all inside the timed part; a gap's are
 * counted with those of its arming and EOI, outside it, and say so.
 */
static void report(const char *kind, uint64_t total, uint32_t n, bool gap)
{
	uint32_t after[SCANNED];
	uint64_t per = div_u64_u32(total, n);
	bool any = false;

	if (!gap)
		per = per > baseline ? per - baseline : 0;
	printf("bench: %s %llu %u\n", kind, per, n);
	if (!stats_on)
		return;
	exits_snapshot(after);
	printf("bench-exits: %s in %u %s:", kind, n,
	       gap ? "gaps with their arming and EOI" : "round trips");
	for (uint32_t r = 0; r < SCANNED; r++) {
		if (r == EXIT_REASON_VMCALL || after[r] == exits_before[r])
			continue;
		printf(" %s=%u", vmx_exit_reason_name(r), after[r] - exits_before[r]);
		any = true;
	}
	printf("%s\n", any ? "" : " none");
}

typedef uint64_t (*path_timer)(uint32_t n);

/* Warm-up, counts, the timed run, the line. */
static void bench_path(const char *kind, path_timer timer, bool gap)
{
	uint64_t total;

	timer(warmup);
	exits_snapshot(exits_before);
	bench_trace_mark(kind);
	total = timer(iters);
	report(kind, total, iters, gap);
}

/* ---- self-IPIs in the STI window ---- */

static uint32_t late;	/* self-IPIs not taken in the STI window */

static void self_ipi(void)
{
	if (x2)
		wrmsr(MSR_IA32_X2APIC_ICR, (uint32_t)APIC_ICR_SHORTHAND_SELF | PATH_VECTOR);
	else
		apic_write(XAPIC_REG_ICR_LOW, (uint32_t)APIC_ICR_SHORTHAND_SELF | PATH_VECTOR);
}

static uint64_t time_self_ipi(uint32_t n, bool hlt)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t before = irqs;
		uint64_t t0 = tsc_ordered();

		self_ipi();
		if (hlt)
			asm volatile("sti; hlt; cli" : : : "memory");
		else
			asm volatile("sti; nop; cli" : : : "memory");
		total += tsc_ordered() - t0;
		if (irqs == before) {
			late++;
			wait_irq(before);
		}
	}
	return total;
}

static uint64_t time_self_ipi_nop(uint32_t n)
{
	return time_self_ipi(n, false);
}

static uint64_t time_self_ipi_hlt(uint32_t n)
{
	return time_self_ipi(n, true);
}

/*
 * Every self-IPI handled, and how many after the window (the boot tests
 * of the window itself are the handlers guest's: this is the figure).
 */
static void report_late(const char *kind, uint32_t before)
{
	char name[64];

	snprintf(name, sizeof(name), "bench-%s-irqs", kind);
	check(name, irqs - before == warmup + iters, "%u self-IPIs handled for %u sent",
	      irqs - before, warmup + iters);
	if (late)
		printf("bench-info: %s: %u of %u self-IPIs taken after the STI window\n", kind,
		       late, warmup + iters);
}

static void bench_self_ipis(const char *mode)
{
	char kind[48], name[64];
	uint32_t before = irqs;

	snprintf(kind, sizeof(kind), "intr-self-ipi-%s-sti-nop", mode);
	late = 0;
	bench_path(kind, time_self_ipi_nop, false);
	report_late(kind, before);
	snprintf(kind, sizeof(kind), "intr-self-ipi-%s-sti-hlt", mode);
	if (late) {
		/* Taken later, a HLT after STI would wait for whatever comes next. */
		snprintf(name, sizeof(name), "bench-%s", kind);
		skip(name, "self-IPIs not taken after sti; nop: sti; hlt would wait");
		return;
	}
	before = irqs;
	bench_path(kind, time_self_ipi_hlt, false);
	report_late(kind, before);
}

/* ---- EOI with nothing in service ---- */

static uint64_t time_eoi(uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0 = tsc_ordered();

		path_eoi();
		total += tsc_ordered() - t0;
	}
	return total;
}

/* ---- the TSC deadline ---- */

static uint64_t time_deadline_arm(uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0 = tsc_ordered();

		/* Rewriting an armed deadline replaces it: one WRMSR a trip. */
		wrmsr(MSR_IA32_TSC_DEADLINE, t0 + (1ull << 40));
		total += tsc_ordered() - t0;
	}
	return total;
}

static uint32_t lost;	/* interrupts that never came */

static uint64_t time_deadline_immediate(uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t before = irqs;
		uint64_t t0, t;

		sti();
		t0 = tsc_ordered();
		wrmsr(MSR_IA32_TSC_DEADLINE, t0);	/* passed when it is written */
		t = rdtsc();
		while (irqs == before && rdtsc() - t < WAIT_TICKS)
			;
		total += tsc_ordered() - t0;
		cli();
		lost += irqs == before;
	}
	return total;
}

/*
 * @n times: @arm a one-shot source, then spin until its interrupt; the
 * sum of the gaps it left in the spin (the arming is before the spin, so
 * not in the gap).
 */
static uint64_t fire_gaps(uint32_t n, void (*arm)(void))
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t before = irqs;
		uint64_t last;

		arm();
		last = spin_until_irq(before);
		if (irqs == before)
			lost++;
		else
			total += irq_tsc - last;
	}
	return total;
}

static void arm_deadline(void)
{
	wrmsr(MSR_IA32_TSC_DEADLINE, rdtsc() + DEADLINE_AHEAD);
}

static uint64_t time_deadline_fire(uint32_t n)
{
	return fire_gaps(n, arm_deadline);
}

static void bench_tsc_deadline(void)
{
	uint32_t before;

	if (!cpu_has_tsc_deadline()) {
		skip("bench-intr-tsc-deadline", "no TSC-deadline mode (CPUID.1:ECX[24])");
		return;
	}
	irq_register(APIC_TIMER_VECTOR, path_irq);
	apic_timer_tsc_deadline_mode();
	bench_path("intr-tsc-deadline-arm", time_deadline_arm, false);
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);	/* disarmed, after the counts */
	before = irqs;
	lost = 0;
	bench_path("intr-tsc-deadline-immediate", time_deadline_immediate, false);
	bench_path("intr-tsc-deadline-fire", time_deadline_fire, true);
	check("bench-intr-tsc-deadline-irqs", lost == 0 && irqs - before == 2 * (warmup + iters),
	      "%u deadlines never fired, %u interrupts for %u deadlines", lost, irqs - before,
	      2 * (warmup + iters));
	apic_timer_stop();
}

/* ---- a device interrupt: the 8254's IRQ 0 through the 8259s ---- */

static void arm_pit(void)
{
	outb(0x43, 0x30);		/* channel 0, LSB then MSB, mode 0 */
	outb(0x40, PIT_COUNT & 0xff);
	outb(0x40, PIT_COUNT >> 8);
}

static uint64_t time_pit_fire(uint32_t n)
{
	return fire_gaps(n, arm_pit);
}

static void bench_pit(void)
{
	static const uint8_t init[][2] = {
		{ 0x20, 0x11 }, { 0x21, PIT_VECTOR }, { 0x21, 0x04 }, { 0x21, 0x01 },
		{ 0xa0, 0x11 }, { 0xa1, PIT_VECTOR + 8 }, { 0xa1, 0x02 }, { 0xa1, 0x01 },
		{ 0x21, 0xfe }, { 0xa1, 0xff },
	};
	uint32_t before = irqs;

	irq_register(PIT_VECTOR, pit_irq);
	for (unsigned int i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		outb(init[i][0], init[i][1]);
	lost = 0;
	bench_path("intr-pit-fire", time_pit_fire, true);
	check("bench-intr-pit-irqs", lost == 0 && irqs - before == warmup + iters,
	      "%u IRQ 0s never came, %u for %u one-shots", lost, irqs - before, warmup + iters);
	pic_mask_all();
}

void bench_interrupt_paths(void)
{
	uint64_t base;

	cli();
	irq_register(PATH_VECTOR, path_irq);
	x2 = false;
	bench_path("intr-eoi-xapic", time_eoi, false);
	bench_self_ipis("xapic");
	bench_tsc_deadline();
	bench_pit();

	if (!(cpuid(1).ecx & CPUID_1_ECX_X2APIC)) {
		skip("bench-intr-self-ipi-x2apic", "no x2APIC (CPUID.1:ECX[21])");
		return;
	}
	/* One way on Bochs: leaving x2APIC mode kills its APIC (PLATFORM.md). */
	base = rdmsr(MSR_IA32_APIC_BASE);
	wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD);
	x2 = true;
	bench_path("intr-eoi-x2apic", time_eoi, false);
	bench_self_ipis("x2apic");
}

/* ---- an IPI to another CPU ---- */

static volatile uint32_t ap_ready, ap_acks;

static void ap_irq(struct trap_frame *f)
{
	(void)f;
	ap_acks++;
	apic_eoi();
}

static void ap_main(void)
{
	idt_init();
	apic_write(XAPIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
	ap_ready = 1;
	for (;;) {
		sti_hlt();
		cli();
	}
}

static uint32_t ap_id;

static uint64_t time_ipi_other(uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t before = ap_acks;
		uint64_t t0 = tsc_ordered(), t = t0;

		smp_send_ipi(ap_id, PATH_VECTOR);
		while (ap_acks == before && rdtsc() - t < WAIT_TICKS)
			pause();
		total += tsc_ordered() - t0;
		lost += ap_acks == before;
	}
	return total;
}

void bench_ipi_other(void)
{
	uint32_t ids[SMP_MAX_CPUS], bsp_id, before;
	unsigned int ncpus = smp_madt_apic_ids(ids, SMP_MAX_CPUS);
	uint64_t t;

	if (!check("bench-intr-ipi-other-cpus", ncpus >= 2,
		   "the MADT lists %u CPU(s); the IPI to another needs 2", ncpus))
		return;
	stats_on = false;	/* the other CPU's exits are not this vCPU's to read */
	apic_init();
	irq_register(PATH_VECTOR, ap_irq);
	bsp_id = apic_read(XAPIC_REG_ID) >> 24;
	ap_id = ids[0] == bsp_id ? ids[1] : ids[0];
	smp_x2apic = false;
	smp_install_trampoline(ap_main);
	smp_start_aps(&ap_id, 1, true);
	t = rdtsc();
	while (!ap_ready && rdtsc() - t < 10 * WAIT_TICKS)
		pause();
	if (!check("bench-intr-ipi-other-ap", ap_ready, "APIC ID %u never came up", ap_id))
		return;
	/* Let it reach its HLT before the first IPI. */
	smp_delay(100000);
	before = ap_acks;
	lost = 0;
	baseline = 0;
	{
		uint64_t b = 0;

		for (uint32_t i = 0; i < iters; i++) {
			uint64_t t0 = tsc_ordered();

			b += tsc_ordered() - t0;
		}
		baseline = div_u64_u32(b, iters);
	}
	bench_path("intr-ipi-other-hlt", time_ipi_other, false);
	check("bench-intr-ipi-other-irqs", lost == 0 && ap_acks - before == warmup + iters,
	      "%u IPIs never acknowledged, %u for %u", lost, ap_acks - before, warmup + iters);
}
