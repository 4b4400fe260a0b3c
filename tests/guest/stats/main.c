// SPDX-License-Identifier: GPL-2.0-only
/*
 * The statistics guest: after STATS_RESET it causes exits whose numbers
 * it knows exactly, reads the per-reason counts back with STATS_READ and
 * checks them, then ends through isa-debug-exit so that exitplan prints
 * its statistics document, which tests/boot/test_vmx_stats.py checks
 * against the same numbers (docs/STATS.md, docs/GUESTS.md).
 *
 * The workload, each count times n (option n=N, default 1):
 *	CPUID leaf 0			37	CPUID, cpuid {0x0}
 *	CPUID leaf 0x40000000		13	CPUID, cpuid {0x40000000}
 *	VMCALL NOP			23	VMCALL, hypercall {NOP}
 *	OUTW key 0 to 0x510		11	IO_INSTRUCTION, io {0x510}
 *	INB from 0x511			 7	IO_INSTRUCTION, io {0x511}
 *	RDMSR IA32_APIC_BASE		 5	MSR_READ, msr_read {0x1b}
 *	WRMSR IA32_APIC_BASE		 3	MSR_WRITE, msr_write {0x1b}
 * then STATS_READ_CALLS STATS_READ hypercalls (VMCALL, hypercall
 * {STATS_READ}) and one OUT to port 0xf4 (IO_INSTRUCTION, io {0xf4}).
 *
 * IA32_APIC_BASE is trapped in every profile (exitplan virtualizes it) and
 * the write stores the value just read, so it changes nothing.  Leaf
 * 0x40000000 and the fw_cfg ports are trapped in every profile too, and
 * CPUID and VMCALL always exit.  The console (COM1 and port 0xE9) is passed
 * through: printing adds no exits.
 *
 * Under statistics off STATS_RESET returns ENOSYS: the count checks SKIP,
 * the workload still runs.  Outside exitplan (QEMU) there are no
 * hypercalls: the NOPs and the count checks SKIP.
 */
#include "console.h"
#include "exitplan.h"
#include "fw_cfg.h"
#include "hypercall.h"
#include "string.h"
#include "test.h"
#include "vmx_exit_reasons.h"	/* generated from spec/exit_reasons.yaml */
#include "x86.h"

const char guest_name[] = "stats";

/* The workload's counts per unit of n (the boot test uses the same). */
#define N_CPUID_BASIC	37u
#define N_CPUID_HV	13u
#define N_VMCALL_NOP	23u
#define N_OUT_SEL	11u
#define N_IN_DATA	7u
#define N_RDMSR		5u
#define N_WRMSR		3u

/* The largest n: keeps every count well inside 32 bits. */
#define N_MAX		100000u

static uint32_t stats_read_calls;

/*
 * STATS_READ of one reason.  The call is itself a VMCALL exit, counted
 * before the handler reads the count (docs/HYPERCALLS.md): callers that
 * read VMCALL subtract the calls made so far, this one included.
 */
static int32_t stats_read(uint32_t reason)
{
	stats_read_calls++;
	return hypercall4(HYPERCALL_STATS_READ, reason, 0, 0, 0);
}

/* CPUID with the leaf in EAX and ECX = 0; every register is an output. */
static void cpuid_exit(uint32_t leaf)
{
	uint32_t a = leaf, b, c = 0, d;

	asm volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d) : : "memory");
}

static void check_count(const char *name, uint32_t reason, uint32_t expected)
{
	int32_t got = stats_read(reason);

	/* Reading VMCALL counts this very call: expected covers it. */
	if (reason == EXIT_REASON_VMCALL)
		expected += stats_read_calls;
	check(name, got == (int32_t)expected, "STATS_READ(%s) = %d, expected %u",
	      vmx_exit_reason_name(reason), got, expected);
}

void guest_main(void)
{
	uint32_t n = cmdline_u32("n", 1);
	bool under_exitplan = exitplan_detected();
	bool stats_on = false;
	uint64_t apic_base;
	uint32_t nop_errors = 0, bad_apic_base = 0;
	char sig[5] = { 0 };

	if (n == 0 || n > N_MAX) {
		check("stats-option-n", false, "n=%u: want 1 to %u", n, N_MAX);
		return;
	}
	/* Before the reset: the value the WRMSRs write back. */
	apic_base = rdmsr(MSR_IA32_APIC_BASE);

	if (under_exitplan) {
		int32_t r = hypercall0(HYPERCALL_STATS_RESET);

		/* From here on, every exit is one the workload below accounts for. */
		if (r == 0)
			stats_on = true;
		else if (r != HYPERCALL_ENOSYS)
			check("stats-reset", false, "STATS_RESET returned %d", r);
	}

	for (uint32_t i = 0; i < N_CPUID_BASIC * n; i++)
		cpuid_exit(0);
	for (uint32_t i = 0; i < N_CPUID_HV * n; i++)
		cpuid_exit(CPUID_HYPERVISOR_BASE);
	if (under_exitplan) {
		for (uint32_t i = 0; i < N_VMCALL_NOP * n; i++)
			if (hypercall0(HYPERCALL_NOP) != 0)
				nop_errors++;
	}
	/* Each selector write rewinds the item: the reads see "QEMU" first. */
	for (uint32_t i = 0; i < N_OUT_SEL * n; i++)
		outw(FW_CFG_PORT_SEL, FW_CFG_SIGNATURE);
	for (uint32_t i = 0; i < N_IN_DATA * n; i++) {
		uint8_t c = inb(FW_CFG_PORT_DATA);

		if (i < 4)
			sig[i] = (char)c;
	}
	for (uint32_t i = 0; i < N_RDMSR * n; i++)
		if (rdmsr(MSR_IA32_APIC_BASE) != apic_base)
			bad_apic_base++;
	for (uint32_t i = 0; i < N_WRMSR * n; i++)
		wrmsr(MSR_IA32_APIC_BASE, apic_base);

	/*
	 * Read the counts back before printing anything, so that nothing
	 * the checks do can add an exit in between.  VMCALL last: it counts
	 * every STATS_READ before it, and itself.
	 */
	if (stats_on) {
		check_count("stats-count-cpuid", EXIT_REASON_CPUID,
			    (N_CPUID_BASIC + N_CPUID_HV) * n);
		check_count("stats-count-io", EXIT_REASON_IO_INSTRUCTION,
			    (N_OUT_SEL + N_IN_DATA) * n);
		check_count("stats-count-msr-read", EXIT_REASON_MSR_READ, N_RDMSR * n);
		check_count("stats-count-msr-write", EXIT_REASON_MSR_WRITE, N_WRMSR * n);
		/* The slot for reasons above the SDM's range: nothing here. */
		check_count("stats-count-other", VMX_EXIT_REASON_MAX + 1, 0);
		check_count("stats-count-vmcall", EXIT_REASON_VMCALL, N_VMCALL_NOP * n);
	} else {
		skip("stats-count", "%s", under_exitplan ?
		     "exit statistics are off in this profile (STATS_RESET: ENOSYS)" :
		     "not running under exitplan: no STATS_READ");
	}

	printf("stats: n=%u: %u CPUID leaf 0x0, %u CPUID leaf 0x%x, %u VMCALL NOP, "
	       "%u OUT 0x%x, %u IN 0x%x, %u RDMSR 0x%x, %u WRMSR 0x%x\n",
	       n, N_CPUID_BASIC * n, N_CPUID_HV * n, CPUID_HYPERVISOR_BASE,
	       under_exitplan ? N_VMCALL_NOP * n : 0, N_OUT_SEL * n, FW_CFG_PORT_SEL,
	       N_IN_DATA * n, FW_CFG_PORT_DATA, N_RDMSR * n, MSR_IA32_APIC_BASE,
	       N_WRMSR * n, MSR_IA32_APIC_BASE);
	printf("stats: %u STATS_READ calls; the guest ends with one OUT to port 0xf4\n",
	       stats_read_calls);

	if (under_exitplan)
		check("stats-vmcall-nop", nop_errors == 0, "%u NOPs did not return 0",
		      nop_errors);
	else
		skip("stats-vmcall-nop", "not running under exitplan");
	check("stats-fw_cfg-signature", !memcmp(sig, "QEMU", 4),
	      "fw_cfg key 0 read \"%s\"", sig);
	check("stats-apic-base-stable", bad_apic_base == 0,
	      "%u of %u reads differ from 0x%llx", bad_apic_base, N_RDMSR * n,
	      (unsigned long long)apic_base);
}
