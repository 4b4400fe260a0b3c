// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipe ping-pong between two vCPUs, the guest-kernel shape of two
 * processes on two CPUs passing a token through a pipe: the BSP and one
 * AP bounce a token through shared memory; each side, after handing it
 * over, sends the other a fixed IPI and halts (STI; HLT) until the
 * other's IPI wakes it.  The BSP times each round trip with RDTSC (Bochs
 * ticks: instructions) and prints the mean, min, p50, p99 and max, then
 * the sender's mean cost of one IPI (the ICR write) and the exit counts
 * of both vCPUs under exitplan (STATS_READ).
 *
 * Options: n=N round trips (default 1000, at most 4096), warmup=N
 * (default 20, not timed), spin (wait spinning on the token instead of
 * HLT: no IPIs at all), shape=physical|self-shorthand|all-but-self|logical
 * (how the IPI is addressed; default physical), x2apic (the ICR is MSR
 * 0x830; skipped without CPUID x2APIC).
 */
#include "apic.h"
#include "console.h"
#include "exitplan.h"
#include "hypercall.h"
#include "idt.h"
#include "smp.h"
#include "string.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "pingpong";

#define IPI_VECTOR		0x51
#define MAX_ROUNDS		4096
#define WAIT_TICKS		100000000ull

enum shape { SHAPE_PHYSICAL, SHAPE_ALL_BUT_SELF, SHAPE_LOGICAL };

static volatile uint32_t token;		/* 0: the BSP's turn, 1: the AP's */
static volatile uint32_t ap_ready, ap_rounds, stop;
static uint32_t bsp_id, ap_id;
static bool spin;
static enum shape shape;
static uint32_t rtt[MAX_ROUNDS];

static void ipi_irq(struct trap_frame *f)
{
	(void)f;
	if (smp_x2apic)
		wrmsr(0x80b, 0);		/* x2APIC EOI */
	else
		apic_eoi();
}

static void kick(uint32_t to)
{
	if (spin)
		return;
	switch (shape) {
	case SHAPE_ALL_BUT_SELF:
		/* Two CPUs: all but self is the other one. */
		smp_send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		break;
	case SHAPE_LOGICAL:
		smp_send_ipi(smp_x2apic ? ((to >> 4) << 16) | (1u << (to & 0xf)) : 1u << (to & 7),
			     IPI_VECTOR | APIC_ICR_DEST_LOGICAL);
		break;
	default:
		smp_send_ipi(to, IPI_VECTOR);
		break;
	}
}

/* Wait, interrupts on, until the token is @want: halted, or spinning. */
static void wait_for(uint32_t want)
{
	if (spin) {
		while (token != want)
			pause();
		return;
	}
	cli();
	while (token != want)
		sti_hlt();		/* STI; HLT, then interrupts off again */
	sti();
}

static void cpu_setup(uint32_t id)
{
	if (smp_x2apic)
		wrmsr(0x1b, rdmsr(0x1b) | (1u << 10));
	if (smp_x2apic) {
		wrmsr(0x80f, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
	} else {
		apic_write(XAPIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
		apic_write(XAPIC_REG_DFR, 0xffffffffu);
		apic_write(XAPIC_REG_LDR, (1u << (id & 7)) << 24);
	}
}

static void ap_main(void)
{
	idt_init();
	cpu_setup(cpuid(1).ebx >> 24);
	sti();
	ap_ready = 1;
	for (;;) {
		wait_for(1);
		if (stop)
			break;
		token = 0;
		ap_rounds++;
		kick(bsp_id);
	}
	for (;;)
		asm volatile("cli; hlt");
}

static void sort(uint32_t *a, unsigned int n)
{
	/* Shell sort: n is at most MAX_ROUNDS. */
	for (unsigned int gap = n / 2; gap; gap /= 2)
		for (unsigned int i = gap; i < n; i++) {
			uint32_t v = a[i];
			unsigned int j = i;

			for (; j >= gap && a[j - gap] > v; j -= gap)
				a[j] = a[j - gap];
			a[j] = v;
		}
}

static void print_exit_counts(void)
{
	static const struct { unsigned int reason; const char *name; } r[] = {
		{ 1, "EXTERNAL_INTERRUPT" }, { 12, "HLT" }, { 32, "MSR_WRITE" },
		{ 48, "EPT_VIOLATION" }, { 7, "INTERRUPT_WINDOW" },
	};

	if (!exitplan_detected())
		return;
	printf("pingpong: vCPU 0 exits:");
	for (unsigned int i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		printf(" %s %lld", r[i].name,
		       (long long)hypercall4(HYPERCALL_STATS_READ, r[i].reason, 0, 0, 0));
	printf(" (vCPU 1's are in the hypervisor's statistics)\n");
}

void guest_main(void)
{
	uint32_t ids[SMP_MAX_CPUS];
	char buf[32];
	unsigned int n = cmdline_u32("n", 1000), warmup = cmdline_u32("warmup", 20), ncpus;
	const char *sh = cmdline_value("shape", buf, sizeof(buf));
	uint64_t sum = 0, send_sum = 0, t;

	if (n > MAX_ROUNDS)
		n = MAX_ROUNDS;
	if (!n)
		n = 1;
	spin = cmdline_has("spin");
	shape = !sh || !strcmp(sh, "physical") ? SHAPE_PHYSICAL :
		!strcmp(sh, "all-but-self") ? SHAPE_ALL_BUT_SELF :
		!strcmp(sh, "logical") ? SHAPE_LOGICAL : SHAPE_PHYSICAL;
	if (sh && shape == SHAPE_PHYSICAL && strcmp(sh, "physical")) {
		check("shape-option", false, "unknown shape \"%s\"", sh);
		return;
	}
	smp_x2apic = cmdline_has("x2apic") && (cpuid(1).ecx & (1u << 21));
	ncpus = smp_madt_apic_ids(ids, SMP_MAX_CPUS);
	if (ncpus < 2) {
		check("pingpong-two-cpus", false, "the MADT lists %u CPU(s); ping-pong needs 2", ncpus);
		return;
	}
	apic_init();
	irq_register(IPI_VECTOR, ipi_irq);
	bsp_id = apic_read(XAPIC_REG_ID) >> 24;
	ap_id = ids[0] == bsp_id ? ids[1] : ids[0];
	cpu_setup(bsp_id);
	smp_install_trampoline(ap_main);
	sti();
	smp_start_aps(&ap_id, 1, true);
	t = rdtsc();
	while (!ap_ready && rdtsc() - t < WAIT_TICKS)
		pause();
	if (!check("pingpong-ap-started", ap_ready, "APIC ID %u never came up", ap_id))
		return;
	printf("pingpong: %u round trips (+%u warm-up) between APIC IDs %u and %u, %s, "
	       "IPI shape %s, %s\n", n, warmup, bsp_id, ap_id, spin ? "spinning" : "HLT until the IPI",
	       shape == SHAPE_ALL_BUT_SELF ? "all-but-self" : shape == SHAPE_LOGICAL ? "logical" :
	       "physical", smp_x2apic ? "x2APIC" : "xAPIC");

	for (unsigned int i = 0; i < warmup + n; i++) {
		uint64_t t0 = rdtsc(), t1, dt;

		token = 1;
		kick(ap_id);
		t1 = rdtsc();
		wait_for(0);
		dt = rdtsc() - t0;
		if (i >= warmup) {
			rtt[i - warmup] = dt > 0xffffffffu ? 0xffffffffu : (uint32_t)dt;
			sum += dt;
			send_sum += t1 - t0;
		}
	}
	check("pingpong-rounds", ap_rounds == warmup + n, "the AP counted %u of %u", ap_rounds,
	      warmup + n);
	sort(rtt, n);
	printf("pingpong: round trip ticks: mean %llu min %u p50 %u p99 %u max %u\n",
	       (unsigned long long)div_u64_u32(sum, n), rtt[0], rtt[n / 2], rtt[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1],
	       rtt[n - 1]);
	/* The sender's part of one hop: the ICR write (an exit, or none), with one RDTSC pair. */
	if (!spin)
		printf("pingpong: IPI send ticks: mean %llu (with one RDTSC pair)\n",
		       (unsigned long long)div_u64_u32(send_sum, n));
	print_exit_counts();
	stop = 1;
	token = 1;
	kick(ap_id);
}
