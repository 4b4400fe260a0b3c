// SPDX-License-Identifier: GPL-2.0-only
/*
 * The exit-cost benchmark.  For each kind of exit: a warm-up, then a
 * fixed number of round trips, each timed with a pair of RDTSCs; the cost
 * of the pair alone (measured the same way) is subtracted.  Under Bochs
 * the TSC counts retired instructions, so the numbers are the instruction
 * counts of exitplan's exit paths, not cycles.
 *
 * Output, one line per kind:  bench: <kind> <ticks-per-round-trip> <iterations>
 * Under exitplan with exit statistics, each kind is also checked to cost
 * exactly one exit of the expected reason per round trip (STATS_READ).
 *
 * Options: iters=N (default 2000), warmup=N (default 100), cr8 (at the
 * end, switch to IA-32e mode and time MOV to/from CR8, which exists only
 * in 64-bit mode; a one-way trip, and one that needs the hypervisor to
 * follow the guest into IA-32e mode, so it is asked for explicitly),
 * ipi-other (two CPUs: only the IPI to the other CPU, intr.c), nointr
 * (no interrupt paths), trace=KIND (bench.h: bench_trace_mark()).  The interrupt paths (intr.c) come after the
 * exit kinds, before CR8; they leave the APIC in x2APIC mode where the
 * CPU has it, which only a disable could undo (and that kills Bochs
 * 2.7's APIC), so lm64-mmio-or, an OR into the xAPIC page, skips after
 * them: the boot tests that check it pass nointr.
 */
#include "apic.h"
#include "bench.h"
#include "console.h"
#include "exitplan.h"
#include "fw_cfg.h"
#include "hypercall.h"
#include "idt.h"
#include "string.h"
#include "longmode.h"
#include "test.h"
#include "vmx_exit_reasons.h"	/* generated from spec/exit_reasons.yaml */
#include "x86.h"

const char guest_name[] = "bench";

/* An APIC timer one-shot count short enough to keep the HLT runs quick. */
#define HLT_TIMER_COUNT		2000
/*
 * Without exit statistics, an instruction whose round trip costs less than
 * this many ticks above the RDTSC pair did not exit (a VM exit and entry
 * cost some 50 instructions of handler at the very least, PLATFORM.md).
 */
#define NO_EXIT_TICKS		20

uint32_t iters, warmup;
bool under_exitplan, stats_on;

typedef void (*op_fn)(void);

/* Total ticks of n timed round trips of op (without subtracting anything). */
static uint64_t time_op(op_fn op, uint32_t n)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0 = tsc_ordered();

		op();
		total += tsc_ordered() - t0;
	}
	return total;
}

static void op_none(void)
{
}

uint64_t baseline;

int32_t bench_stats_read(uint32_t reason)
{
	return hypercall4(HYPERCALL_STATS_READ, reason, 0, 0, 0);
}

static int32_t stats_read(uint32_t reason)
{
	return bench_stats_read(reason);
}

/* Exits of the given reasons so far (a second reason may be -1). */
static uint32_t exits_of(int reason, int reason2)
{
	uint32_t n = (uint32_t)stats_read((uint32_t)reason);

	if (reason2 >= 0)
		n += (uint32_t)stats_read((uint32_t)reason2);
	return n;
}

enum exit_expectation {
	MUST_EXIT,	/* every profile traps it: check one exit per round trip */
	MAY_EXIT,	/* the profile decides: SKIP the kind when it does not exit */
	REPORT_ONLY,	/* print the cost whatever it is */
};

/*
 * Run a timer (warm-up, then the measured round trips) and print the
 * kind's line.  base: the ticks of an empty round trip, subtracted.
 * reason/reason2: the exit(s) the operation causes when it exits (-1:
 * none in particular).
 */
static void bench_with(const char *kind, uint64_t (*timer)(uint32_t n),
		       uint64_t base, int reason, int reason2,
		       enum exit_expectation expect)
{
	bool counted = stats_on && reason >= 0;
	uint32_t before = 0, exits = 0;
	uint64_t total, per;
	char name[48];
	bool exited;

	timer(warmup);
	if (counted)
		before = exits_of(reason, reason2);
	bench_trace_mark(kind);
	total = timer(iters);
	if (counted) {
		exits = exits_of(reason, reason2) - before;
		/* The STATS_READ hypercalls that frame the run are VMCALLs too. */
		if (reason == EXIT_REASON_VMCALL)
			exits -= reason2 >= 0 ? 2 : 1;
	}
	per = div_u64_u32(total, iters);
	per = per > base ? per - base : 0;
	exited = counted ? exits >= iters : per >= NO_EXIT_TICKS;

	snprintf(name, sizeof(name), "bench-%s", kind);
	if (expect == MAY_EXIT && under_exitplan && !exited) {
		skip(name, "does not exit in this profile: %llu ticks%s", per,
		     counted ? ", no exit counted" : "");
		return;
	}
	printf("bench: %s %llu %u\n", kind, per, iters);
	if (counted && expect != MUST_EXIT)
		printf("bench-info: %s caused %u %s exits in %u round trips\n",
		       kind, exits, vmx_exit_reason_name((uint32_t)reason), iters);
	if (expect != MUST_EXIT || !under_exitplan)
		return;
	if (counted)
		check(name, exits == iters, "%u %s exits for %u round trips",
		      exits, vmx_exit_reason_name((uint32_t)reason), iters);
	else
		check(name, exited, "%llu ticks per round trip: no exit", per);
}

void bench_trace_mark(const char *kind)
{
	char want[48];

	if (cmdline_value("trace", want, sizeof(want)) && !strcmp(want, kind))
		asm volatile("xchg %%bx, %%bx" : : : "memory");
}

static op_fn current_op;

static uint64_t time_current_op(uint32_t n)
{
	return time_op(current_op, n);
}

/* Time a C operation: bench_with() for op. */
static void bench(const char *kind, op_fn op, int reason, int reason2,
		  enum exit_expectation expect)
{
	current_op = op;
	bench_with(kind, time_current_op, baseline, reason, reason2, expect);
}

/* ---- the operations ---- */

static void op_cpuid(void)
{
	uint32_t a = 0, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
}

static void op_vmcall_nop(void)
{
	hypercall0(HYPERCALL_NOP);
}

static void op_rdmsr_apic_base(void)
{
	rdmsr(MSR_IA32_APIC_BASE);
}

static void op_wrmsr_tsc_deadline(void)
{
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);	/* 0 disarms: nothing fires */
}

static void op_in_fw_cfg(void)
{
	inb(FW_CFG_PORT_DATA);
}

static void op_out_fw_cfg(void)
{
	outw(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
}

static void op_dr7_write(void)
{
	write_dr7(X86_DR7_INIT);
}

static void op_dr7_read(void)
{
	read_dr7();
}

static void op_pause(void)
{
	pause();
}

static void op_mmio_read(void)
{
	mmio_read32(EXITPLAN_TEST_PAGE);
}

static void op_hlt_timer(void)
{
	uint32_t before = apic_timer_irqs;

	apic_timer_oneshot(HLT_TIMER_COUNT);
	apic_timer_wait_halted(before);
}

static uint64_t time_cr8_none(uint32_t n)
{
	return long_mode_call(cr8_loop_none, n);
}

static uint64_t time_cr8_write(uint32_t n)
{
	return long_mode_call(cr8_loop_write, n);
}

static uint64_t time_cr8_read(uint32_t n)
{
	return long_mode_call(cr8_loop_read, n);
}

/* Last: IA-32e mode is one way, and no interrupt may come after it. */
static void bench_cr8(void)
{
	uint64_t base64;
	/* Read in 32-bit mode: the long-mode code runs with interrupts off for good. */
	bool x2apic = rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD;

	if (!cmdline_has("cr8")) {
		skip("bench-mov-to-cr8", "CR8 exists only in 64-bit mode: pass cr8 "
		     "to switch to IA-32e mode at the end and time it");
		skip("bench-mov-from-cr8", "CR8 exists only in 64-bit mode");
		return;
	}
	if (!long_mode_supported()) {
		skip("bench-mov-to-cr8", "no IA-32e mode (CPUID.80000001H:EDX[29])");
		skip("bench-mov-from-cr8", "no IA-32e mode");
		return;
	}
	if (!check("bench-long-mode", long_mode_enter(), "EFER.LMA stayed clear"))
		return;
	time_cr8_none(warmup);
	base64 = div_u64_u32(time_cr8_none(iters), iters);
	printf("bench: rdtsc-pair-64 %llu %u\n", base64, iters);
	bench_with("mov-to-cr8", time_cr8_write, base64, EXIT_REASON_CR_ACCESS, -1,
		   MAY_EXIT);
	bench_with("mov-from-cr8", time_cr8_read, base64, EXIT_REASON_CR_ACCESS, -1,
		   MAY_EXIT);
	{
		struct lm64_result lm = { 0, 0, 0, 0, 0, 0, 0, 0, 0 };

		long_mode_checks(&lm);
		/* QEMU's TCG loads CR8 with reserved bits set instead of #GP. */
		if (qemu_tcg_detected())
			skip("lm64-cr8-reserved-gp", "QEMU's TCG raises no #GP for CR8 bits 63:4");
		else
			check("lm64-cr8-reserved-gp", lm.cr8_gp == 1 && lm.cr8_left == 0,
			      "MOV CR8 with 0x10: %u #GP, CR8 0x%x after", lm.cr8_gp, lm.cr8_left);
		check("lm64-compat-cr0-eax", lm.cr0_gp == 0 && lm.cr0_ne == 1,
		      "MOV CR0,EAX in compatibility mode, RAX[63:32] stale: %u #GP, CR0.NE flipped %u",
		      lm.cr0_gp, lm.cr0_ne);
		/* CF PF AF ZF SF OF: 0x30 has PF; all ones | 1 has SF and PF. */
		if (x2apic)
			skip("lm64-mmio-or", "the APIC is in x2APIC mode (the interrupt paths): "
			     "its xAPIC page decodes nothing; nointr keeps it in xAPIC mode");
		else
			check("lm64-mmio-or", lm.tpr == 0x30 && (lm.or_flags & 0x8d5) == 0x4,
			      "or %%eax,0x1000(%%r12) on the TPR: 0x%x, RFLAGS 0x%x", lm.tpr,
			      lm.or_flags);
		if (qemu_tcg_detected())
			skip("lm64-mmio-unclaimed", "QEMU reads unassigned memory as 0");
		else
			check("lm64-mmio-unclaimed", lm.q_lo == 0xffffffffu && lm.q_hi == 0xffffffffu &&
			      (lm.qor_flags & 0x8d5) == 0x84,
			      "orq $1 then movq where no device answers: 0x%08x%08x, RFLAGS 0x%x",
			      lm.q_hi, lm.q_lo, lm.qor_flags);
	}
}

void guest_main(void)
{
	uint32_t irqs;

	if (cmdline_has("ipi-other")) {
		/* A run of its own: two CPUs, the IPI between them and nothing else. */
		iters = cmdline_u32("iters", 500);
		warmup = cmdline_u32("warmup", 20);
		under_exitplan = exitplan_detected();
		printf("bench: ticks are Bochs instruction counts, not cycles\n");
		bench_ipi_other();
		return;
	}
	iters = cmdline_u32("iters", 2000);
	warmup = cmdline_u32("warmup", 100);
	if (!iters)
		iters = 1;
	under_exitplan = exitplan_detected();
	stats_on = under_exitplan && stats_read(EXIT_REASON_CPUID) != HYPERCALL_ENOSYS;

	printf("bench: ticks are Bochs instruction counts, not cycles\n");
	printf("bench-info: %s, exit statistics %s\n",
	       under_exitplan ? "under exitplan" : "not under exitplan",
	       stats_on ? "on (each kind's exits are counted)" : "off");

	time_op(op_none, warmup);
	baseline = div_u64_u32(time_op(op_none, iters), iters);
	printf("bench: rdtsc-pair %llu %u\n", baseline, iters);

	bench("cpuid", op_cpuid, EXIT_REASON_CPUID, -1, MUST_EXIT);
	if (under_exitplan)
		bench("vmcall-nop", op_vmcall_nop, EXIT_REASON_VMCALL, -1, MUST_EXIT);
	else
		skip("bench-vmcall-nop", "not running under exitplan");
	/* spec/runtime.yaml traps IA32_APIC_BASE and fw_cfg in every profile. */
	bench("rdmsr-apic-base", op_rdmsr_apic_base, EXIT_REASON_MSR_READ, -1,
	      MUST_EXIT);
	if (cpu_has_tsc_deadline())
		bench("wrmsr-tsc-deadline", op_wrmsr_tsc_deadline,
		      EXIT_REASON_MSR_WRITE, -1, MAY_EXIT);
	else
		skip("bench-wrmsr-tsc-deadline", "no TSC-deadline mode (CPUID.1:ECX[24])");
	bench("in-fw_cfg", op_in_fw_cfg, EXIT_REASON_IO_INSTRUCTION, -1, MUST_EXIT);
	bench("out-fw_cfg", op_out_fw_cfg, EXIT_REASON_IO_INSTRUCTION, -1, MUST_EXIT);
	bench("mov-to-dr7", op_dr7_write, EXIT_REASON_DR_ACCESS, -1, MAY_EXIT);
	bench("mov-from-dr7", op_dr7_read, EXIT_REASON_DR_ACCESS, -1, MAY_EXIT);
	/* PAUSE-loop exiting exits once per spin window, not per PAUSE. */
	bench("pause", op_pause, EXIT_REASON_PAUSE_INSTRUCTION, -1, REPORT_ONLY);
	if (under_exitplan)
		bench("mmio-read-test-page", op_mmio_read, EXIT_REASON_EPT_VIOLATION,
		      EXIT_REASON_EPT_MISCONFIG, MUST_EXIT);
	else
		skip("bench-mmio-read-test-page", "not running under exitplan");

	apic_init();
	irqs = apic_timer_irqs;
	apic_timer_oneshot(HLT_TIMER_COUNT);
	if (apic_timer_wait_spinning(irqs, 100000000ull)) {
		/* The total: HLT exit, timer interrupt exit, injection. */
		bench("hlt-apic-timer", op_hlt_timer, EXIT_REASON_HLT, -1, REPORT_ONLY);
		check("bench-hlt-apic-timer-irqs",
		      apic_timer_irqs - irqs == 1 + warmup + iters,
		      "%u timer interrupts for %u round trips",
		      apic_timer_irqs - irqs, 1 + warmup + iters);
	} else {
		check("bench-hlt-apic-timer", false, "the APIC timer never fired");
	}
	apic_timer_stop();

	if (cmdline_has("nointr"))
		printf("bench-info: no interrupt paths (nointr)\n");
	else
		bench_interrupt_paths();
	bench_cr8();
}
