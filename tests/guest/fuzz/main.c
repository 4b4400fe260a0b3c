// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fuzz guest: random exiting instructions with random operands, to
 * show that nothing a guest does crashes or hangs the hypervisor.
 *
 *	seed=N		the seed (default 1); printed, and with it the run
 *			is repeated exactly: same instructions, same operands
 *	iterations=N	how many instructions (default 2000)
 *	trace		print every instruction before it runs (flushed, so
 *			the last line names the one that ended a run)
 *	stops		also do what ends a guest by design (reset and
 *			power-off ports, isa-debug-exit, SHUTDOWN, HLT with
 *			IF=0, the hypervisor's memory, a MOVZX from the MMIO
 *			test page): the run then ends early (about one
 *			instruction in a hundred), and exitplan must say how
 *	smp		on every CPU the MADT lists at once: each AP runs
 *			its own stream (seeded from seed and its number),
 *			concurrently with the others, and half its WRMSRs
 *			are bursts of 8 to 31 faulting ones (non-canonical
 *			IA32_LSTAR, KERNEL_GS_BASE, CSTAR), so that CPUs
 *			fault in the hypervisor at the same time
 *	bugs=K,K	without exitplan, also do what the filters below
 *			leave out because it is fatal to an unprotected
 *			machine (each was a hypervisor bug of issue 7,
 *			fixed: under exitplan all of it runs), for each
 *			key K given (bug("K") below), or all with bugs=all
 *
 * Every instruction runs inside ASM_TRY with any exception caught, so a
 * #GP, #UD or #PF the hypervisor injects is an answer, not a failure.
 * External interrupts (vectors 32-255) are counted.
 *
 * What it leaves out, each with its reason beside the filter below: what
 * ends a guest by design (but with stops), what only a hypervisor keeps
 * from wrecking the machine (done under exitplan; bare, with bugs=), and,
 * always, what would wreck the guest's
 * own machine: its console (COM1, port 0xE9), the 8259s that keep timer
 * interrupts away, A20, CR0.PE/PG, breakpoints on its own code.
 *
 * The last lines, when every instruction ran:
 *	fuzz: seed N: M instructions done
 *	fuzz: <per-kind counts and the exceptions raised>
 *	PASS: fuzz-seed-N
 * and with smp, for each CPU (the BSP's first), its counts, then
 *	PASS: fuzz-seed-N-cpus-C
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

const char guest_name[] = "fuzz";

#define DEFAULT_ITERATIONS	2000
#define PROGRESS_EVERY		500

/* --- the random numbers: splitmix64, 64-bit state, no division ----------- */

/*
 * Each CPU's own stream and counts, by smp_cpu_slot() (its stack): the
 * BSP's is slot 0, an AP's 1 + its stack's number.
 */
enum op {
	OP_CPUID, OP_RDMSR, OP_WRMSR, OP_IN, OP_OUT, OP_INS, OP_OUTS, OP_VMCALL,
	OP_MOV_CR, OP_MOV_DR, OP_XSETBV, OP_INVLPG, OP_CACHE, OP_TSC, OP_VMX,
	OP_MISC, OP_MMIO, OP_INT, OP_STOP, OP_COUNT
};

static struct fuzz_cpu {
	uint64_t rng;
	uint32_t iteration;
	uint32_t done_by_op[OP_COUNT];
	uint32_t faults_by_vector[32];
	uint32_t interrupts;
	uint32_t apic_id;
	volatile bool started, finished;
} cpus[SMP_CPU_SLOTS];

static struct fuzz_cpu *me(void)
{
	return &cpus[smp_cpu_slot()];
}

static uint64_t rand64(void)
{
	uint64_t z = (me()->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rand32(void)
{
	return (uint32_t)(rand64() >> 32);
}

/* 0 .. n-1 (n > 0); the bias of a 32-bit modulo does not matter here. */
static uint32_t below(uint32_t n)
{
	return rand32() % n;
}

static bool one_in(uint32_t n)
{
	return below(n) == 0;
}

/* A number that is interesting as often as random: 0, ~0, a power of two
 * (or one less), a small number, or anything. */
static uint64_t rand_operand(void)
{
	switch (below(6)) {
	case 0:
		return one_in(2) ? 0 : ~0ull;
	case 1:
		return 1ull << below(64);
	case 2:
		return (1ull << below(64)) - 1;
	case 3:
		return below(256);
	case 4:
		return rand32();
	default:
		return rand64();
	}
}

/* --- bookkeeping ----------------------------------------------------------- */

static const char *const op_names[OP_COUNT] = {
	[OP_CPUID] = "cpuid", [OP_RDMSR] = "rdmsr", [OP_WRMSR] = "wrmsr",
	[OP_IN] = "in", [OP_OUT] = "out", [OP_INS] = "ins", [OP_OUTS] = "outs",
	[OP_VMCALL] = "vmcall", [OP_MOV_CR] = "mov-cr", [OP_MOV_DR] = "mov-dr",
	[OP_XSETBV] = "xsetbv", [OP_INVLPG] = "invlpg", [OP_CACHE] = "invd/wbinvd",
	[OP_TSC] = "rdtsc/rdpmc", [OP_VMX] = "vmx", [OP_MISC] = "misc",
	[OP_MMIO] = "mmio", [OP_INT] = "int", [OP_STOP] = "stop",
};

/* How often each kind is drawn, out of the sum. */
static const uint8_t op_weight[OP_COUNT] = {
	[OP_CPUID] = 10, [OP_RDMSR] = 12, [OP_WRMSR] = 12, [OP_IN] = 8,
	[OP_OUT] = 8, [OP_INS] = 2, [OP_OUTS] = 2, [OP_VMCALL] = 8,
	[OP_MOV_CR] = 6, [OP_MOV_DR] = 4, [OP_XSETBV] = 4, [OP_INVLPG] = 2,
	[OP_CACHE] = 1, [OP_TSC] = 3, [OP_VMX] = 6, [OP_MISC] = 4,
	[OP_MMIO] = 4, [OP_INT] = 2,		/* OP_STOP: weight() */
};

static bool trace, stops, smp;
static char bugs[128];		/* bugs=KEY,KEY or bugs=all */

/* The scratch memory hypercalls and memory operands point at. */
static uint8_t scratch[4096] __attribute__((aligned(4096)));

#define TRACE(fmt, ...)							\
	do {								\
		if (trace && !smp_cpu_slot()) {			\
			printf("fuzz: %u: " fmt "\n", me()->iteration, ##__VA_ARGS__); \
			console_flush();				\
		}							\
	} while (0)

/*
 * Under exitplan, every case a filter below names by its key was fatal
 * through a hypervisor bug of issue 7, since fixed: all of them run.
 * Without exitplan (tests/guest/bochs-bare.sh) they would wreck or end
 * the unprotected machine (SMIs, DMA over memory, Bochs's panic ports):
 * left out then, unless bugs=KEY,... or bugs=all asks for them.
 */
static bool under_exitplan;

/* Is the case KEY to be done (under exitplan, bugs=all, or KEY in bugs=...)? */
static bool bug(const char *key)
{
	size_t n = strlen(key);

	if (under_exitplan || !strcmp(bugs, "all"))
		return true;
	for (const char *p = bugs; *p; p++)
		if ((p == bugs || p[-1] == ',') && !strncmp(p, key, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

static void count_fault(void)
{
	int v = last_fault_vector();

	if (v >= 0 && v < 32)
		me()->faults_by_vector[v]++;
}

static void count_interrupt(struct trap_frame *f)
{
	(void)f;
	me()->interrupts++;
}

/* --- CPUID ------------------------------------------------------------------ */

static uint32_t rand_leaf(void)
{
	switch (below(5)) {
	case 0:
		return below(0x20);
	case 1:
		return 0x80000000u + below(0x20);
	case 2:
		return CPUID_HYPERVISOR_BASE + below(0x100);
	case 3:
		return 0x40000000u + (rand32() & 0x0fffffffu);
	default:
		return rand32();
	}
}

static void op_cpuid(void)
{
	uint32_t leaf = rand_leaf(), sub = one_in(2) ? below(64) : rand32();

	TRACE("cpuid leaf 0x%x subleaf 0x%x", leaf, sub);
	cpuid_count(leaf, sub);
}

/* --- MSRs ------------------------------------------------------------------- */

/* The MSRs spec/msrs.yaml names, which the hypervisor handles itself. */
static const uint32_t known_msrs[] = {
	MSR_IA32_TSC, MSR_IA32_APIC_BASE, MSR_IA32_FEATURE_CONTROL, MSR_IA32_TSC_ADJUST,
	MSR_IA32_SPEC_CTRL, MSR_IA32_PRED_CMD, MSR_IA32_MTRRCAP, MSR_IA32_FLUSH_CMD,
	MSR_IA32_SYSENTER_CS, MSR_IA32_SYSENTER_ESP, MSR_IA32_SYSENTER_EIP,
	MSR_IA32_MISC_ENABLE, MSR_IA32_DEBUGCTL, MSR_IA32_PAT, MSR_IA32_MTRR_DEF_TYPE,
	MSR_IA32_PERF_GLOBAL_CTRL, MSR_IA32_VMX_BASIC, MSR_IA32_VMX_PROCBASED_CTLS2,
	MSR_IA32_VMX_CAPS_LAST, MSR_IA32_TSC_DEADLINE, MSR_IA32_X2APIC_TPR,
	MSR_IA32_X2APIC_ICR, MSR_IA32_X2APIC_SELF_IPI, MSR_IA32_EFER, MSR_IA32_STAR,
	MSR_IA32_LSTAR, MSR_IA32_CSTAR, MSR_IA32_FMASK, MSR_IA32_FS_BASE, MSR_IA32_GS_BASE,
	MSR_IA32_KERNEL_GS_BASE, MSR_IA32_TSC_AUX,
};

static uint32_t rand_msr(void)
{
	switch (below(9)) {
	case 7:
	case 8:
		return known_msrs[below(sizeof(known_msrs) / sizeof(known_msrs[0]))];
	case 0:
		return below(0x1000);			/* architectural, low */
	case 1:
		return below(0x2000);
	case 2:
		return 0xc0000000u + below(0x120);	/* EFER, STAR, FS/GS bases ... */
	case 3:
		return 0xc0010000u + below(0x200);	/* AMD's, absent here */
	case 4:
		return 0x40000000u + below(0x200);	/* hypervisor range */
	case 5:
		return MSR_IA32_VMX_BASIC + below(0x20);
	default:
		return rand32();
	}
}

static bool canonical(uint64_t v)
{
	uint64_t top = v >> 47;

	return top == 0 || top == 0x1ffff;
}

/*
 * MSR writes the fuzzer leaves alone, and why.  Any other index, with any
 * value, must get the hardware's answer (done, or #GP).
 */
static bool wrmsr_allowed(uint32_t msr, uint64_t value)
{
	/* Moves the local APIC window, possibly over hypervisor memory
	 * (issue 7, item 3), or turns the APIC off under the guest. */
	if (msr == MSR_IA32_APIC_BASE)
		return bug("apic-base");
	/* x2APIC registers: the ICR sends INIT, NMI or SMI to self (issue 7,
	 * items 8, 6 and 1), the timer can storm (item 10). */
	if (msr >= MSR_IA32_X2APIC_FIRST && msr <= MSR_IA32_X2APIC_LAST)
		return bug("x2apic");
	/* The emulated TSC deadline ignores the LVT's mask and vector and
	 * would deliver vector 0 (issue 7, "the emulated TSC deadline
	 * ignores the LVT timer mode and illegal vectors"). */
	if (msr == MSR_IA32_TSC_DEADLINE)
		return bug("tsc-deadline");
	/* A non-canonical SYSENTER_ESP/EIP fails the next VM entry instead
	 * of raising #GP (issue 7, "WRMSR of a non-canonical value to
	 * IA32_SYSENTER_EIP/ESP fails VM entry"). */
	if ((msr == MSR_IA32_SYSENTER_ESP || msr == MSR_IA32_SYSENTER_EIP) && !canonical(value))
		return bug("sysenter");
	/*
	 * Found by this fuzzer (seeds 30-33 under PROFILE=table-only and
	 * pipe-pingpong, which trap them): a trapped IA32_FS_BASE or
	 * IA32_GS_BASE is written into the VMCS guest-state area without the
	 * canonical check WRMSR makes (arch/vmx/msr.c, MSR_VIA_VMCS), so
	 * the next VM entry fails ("VM entry failed: INVALID_STATE", Bochs:
	 * "guest FS.BASE non canonical") where the CPU raises #GP.  Where a
	 * profile passes them through, the CPU's own check answers.
	 */
	if ((msr == MSR_IA32_FS_BASE || msr == MSR_IA32_GS_BASE) && !canonical(value))
		return bug("vmcs-msr");
	return true;
}

static void op_rdmsr(void)
{
	uint32_t msr = rand_msr();
	uint64_t v;

	TRACE("rdmsr 0x%x", msr);
	rdmsr_safe(msr, &v);
	count_fault();
}

/*
 * MSRs the hypervisor writes itself for the guest (not in the VMCS, not
 * passed through by every profile), whose non-canonical values the CPU
 * refuses with #GP: with smp, CPUs hit that in the hypervisor at once.
 */
static const uint32_t faulting_msrs[] = {
	MSR_IA32_LSTAR, MSR_IA32_KERNEL_GS_BASE, MSR_IA32_CSTAR,
};

static void op_wrmsr(void)
{
	uint32_t msr;
	uint64_t v;
	int tries = 0;

	/* A burst, so that the CPUs' faults in the hypervisor overlap. */
	if (smp && one_in(2)) {
		uint32_t n = 8 + below(24);

		msr = faulting_msrs[below(sizeof(faulting_msrs) / sizeof(faulting_msrs[0]))];
		v = 0x8000000000000000ull | rand32();
		TRACE("wrmsr 0x%x value 0x%llx (non-canonical) %u times", msr, (unsigned long long)v, n);
		for (uint32_t i = 0; i < n; i++) {
			if (wrmsr_safe(msr, v) == NO_FAULT)
				printf("FAIL: fuzz-wrmsr-canonical: WRMSR 0x%x of 0x%llx did not raise #GP\n",
				       msr, (unsigned long long)v);
			count_fault();
		}
		return;
	}

	do {
		msr = rand_msr();
		v = rand_operand();
		/* Half the time a value near the MSR's own: a bit flipped. */
		if (one_in(2)) {
			uint64_t old;

			if (rdmsr_safe(msr, &old) == NO_FAULT)
				v = old ^ (1ull << below(64));
		}
	} while (!wrmsr_allowed(msr, v) && ++tries < 8);
	if (!wrmsr_allowed(msr, v))
		return;
	TRACE("wrmsr 0x%x value 0x%llx", msr, (unsigned long long)v);
	wrmsr_safe(msr, v);
	count_fault();
}

/* --- port I/O --------------------------------------------------------------- */

/* The PIIX IDE bus-master block (BAR4 of 00:01.1), found at start. */
static uint16_t ide_bm_base;

static uint32_t pci_config_read(uint32_t bdf, uint32_t offset)
{
	outl(0xcf8, 0x80000000u | bdf << 8 | (offset & 0xfc));
	return inl(0xcfc);
}

static bool in_range(uint32_t port, uint32_t first, uint32_t last)
{
	return port >= first && port <= last;
}

/* Ports whose writes end the guest by design: stops only. */
static bool port_stops_guest(uint32_t port)
{
	return in_range(port, 0xf4, 0xf7) ||		/* isa-debug-exit */
	       port == 0x60 || port == 0x64 ||		/* 8042: pulse reset */
	       port == 0x92 ||				/* fast reset (and A20) */
	       port == 0xcf9 ||				/* reset control */
	       in_range(port, 0xb000, 0xb03f) ||	/* PIIX4 PM: SLP_EN */
	       port == 0x8900;				/* Bochs's "Shutdown" */
}

/* Port writes that known bugs make fatal (issue 7). */
static bool port_known_fatal(uint32_t p)
{
	/* Bochs's BIOS panic and debugger ports end the emulator
	 * with no report (issue 7, item 5). */
	if (in_range(p, 0x400, 0x403) || p == 0x8a00)
		return !bug("bochs-ports");
	/* APM control raises an SMI (issue 7, item 1). */
	if (in_range(p, 0xb2, 0xb3))
		return !bug("smi");
	/* PCI configuration: SMRAM, bus masters and the PM base are
	 * reached through it (issue 7, items 1, 2 and 4). */
	if (in_range(p, 0xcf8, 0xcff))
		return !bug("pci-config");
	/* Devices that can master the bus, with no IOMMU (item 2):
	 * IDE and its bus-master block, the floppy and ISA DMA.  (Bochs's
	 * IDE model also panics on a write to 0x377, found with seed=53
	 * on corei7_icelake_u: the emulator ends with no report.) */
	if (in_range(p, 0x1f0, 0x1f7) || in_range(p, 0x170, 0x177) ||
	    in_range(p, 0x3f6, 0x3f7) || in_range(p, 0x376, 0x377) ||
	    (ide_bm_base && in_range(p, ide_bm_base, ide_bm_base + 15)) ||
	    in_range(p, 0x3f0, 0x3f7) || in_range(p, 0x00, 0x1f) ||
	    in_range(p, 0x80, 0x8f) || in_range(p, 0xc0, 0xdf))
		return !bug("dma");
	return false;
}

/*
 * Ports the fuzzer never writes, and why.  Reads of every port are fine.
 */
static bool out_allowed(uint32_t port, unsigned int size)
{
	uint32_t last = port + size - 1;

	for (uint32_t p = port; p <= last; p++) {
		if (!stops && port_stops_guest(p))
			return false;
		if (port_known_fatal(p))
			return false;
		/* The guest's own: the 8259s and ELCR (unmasked, the PIT's
		 * IRQ 0 arrives as vector 8), its consoles. */
		if (in_range(p, 0x20, 0x21) || in_range(p, 0xa0, 0xa1) ||
		    in_range(p, 0x4d0, 0x4d1) || in_range(p, 0x3f8, 0x3ff) || p == 0xe9)
			return false;
	}
	return last <= 0xffff;
}

static uint32_t rand_port(void)
{
	static const uint16_t interesting[] = {
		0x510, 0x511, 0x514, 0xf4, 0x60, 0x64, 0x92, 0xcf9, 0x70, 0x71,
		0x40, 0x43, 0x61, 0x3c0, 0x3d4, 0xb000, 0xb008, 0xb004, 0x8900,
		0x402, 0xe9, 0xcf8, 0xcfc, 0x3f8, 0x80, 0xed, 0xffff,
	};

	switch (below(3)) {
	case 0:
		return interesting[below(sizeof(interesting) / sizeof(interesting[0]))];
	case 1:
		return below(0x400);
	default:
		return below(0x10000);
	}
}

static unsigned int rand_size(void)
{
	return 1u << below(3);
}

static void op_in(void)
{
	uint32_t port = rand_port();
	unsigned int size = rand_size();

	if (port + size - 1 > 0xffff)
		size = 1;
	TRACE("in%c port 0x%x", "bwl"[size >> 1], port);
	expect_fault(ANY_VECTOR);
	switch (size) {
	case 1:
		asm volatile(ASM_TRY("1f") "inb %w0, %%al\n\t1:" : : "d"(port) : "eax", "memory");
		break;
	case 2:
		asm volatile(ASM_TRY("1f") "inw %w0, %%ax\n\t1:" : : "d"(port) : "eax", "memory");
		break;
	default:
		asm volatile(ASM_TRY("1f") "inl %w0, %%eax\n\t1:" : : "d"(port) : "eax", "memory");
		break;
	}
	fault_happened();
	count_fault();
}

/* A port and size the fuzzer may write, or false after a few tries. */
static bool pick_out_port(uint32_t *port, unsigned int *size)
{
	for (int tries = 0; tries < 16; tries++) {
		*port = rand_port();
		*size = rand_size();
		if (out_allowed(*port, *size))
			return true;
	}
	return false;
}

static void op_out(void)
{
	uint32_t port, v = (uint32_t)rand_operand();
	unsigned int size;

	if (!pick_out_port(&port, &size))
		return;
	if (port == 0x92)
		v |= 0x03;	/* stops: reset with A20 left on */
	TRACE("out%c port 0x%x value 0x%x", "bwl"[size >> 1], port, v);
	expect_fault(ANY_VECTOR);
	switch (size) {
	case 1:
		asm volatile(ASM_TRY("1f") "outb %%al, %w0\n\t1:" : : "d"(port), "a"(v) : "memory");
		break;
	case 2:
		asm volatile(ASM_TRY("1f") "outw %%ax, %w0\n\t1:" : : "d"(port), "a"(v) : "memory");
		break;
	default:
		asm volatile(ASM_TRY("1f") "outl %%eax, %w0\n\t1:" : : "d"(port), "a"(v) : "memory");
		break;
	}
	fault_happened();
	count_fault();
}

/*
 * INS or OUTS, built as bytes in a stub and called: every size, with or
 * without REP, a 16-bit address size (67h: SI, DI and CX, not ESI, EDI and
 * ECX) and DF set or clear.  32-bit addresses point into the scratch page.
 * 16-bit ones are DS:SI/ES:DI in free low memory (0x7000-0x77ff), the
 * upper halves of ESI/EDI pointing into the hypervisor's region and that
 * of ECX holding 1: an emulation that used the 32-bit registers would be
 * refused at once instead of writing over the guest.
 */
static uint8_t io_stub[8] __attribute__((aligned(8)));
static void *volatile io_stub_addr;
static volatile uint32_t io_down;

static void op_string_io(bool out)
{
	uint32_t port, count = below(17), ptr, ecx, src, dst;
	unsigned int size, n = 0;
	bool addr16 = one_in(4), rep = !one_in(4), down = one_in(4);

	if (out) {
		if (!pick_out_port(&port, &size))
			return;
		if (port == 0x92)
			return;		/* random bytes could turn A20 off */
	} else {
		port = rand_port();
		size = rand_size();
		if (port + size - 1 > 0xffff)
			size = 1;
	}
	if (addr16) {
		ptr = 0x05000000u | (0x7000 + below(0x800));
		ecx = 0x00010000u | count;
	} else {
		ptr = (uint32_t)(uintptr_t)scratch + 1024 + below(2048);
		ecx = count;
	}
	src = dst = ptr;
	for (unsigned int i = 0; i < 64; i++)
		scratch[1024 + 2048 + i] = (uint8_t)rand32();
	if (size == 2)
		io_stub[n++] = 0x66;	/* operand size: 16 bits */
	if (addr16)
		io_stub[n++] = 0x67;	/* address size: 16 bits */
	if (rep)
		io_stub[n++] = 0xf3;	/* REP */
	io_stub[n++] = (out ? 0x6e : 0x6c) + (size != 1);	/* INS/OUTS m8, m16/32 */
	io_stub[n] = 0xc3;		/* RET */
	TRACE("%s%s%s%c port 0x%x count 0x%x %s 0x%x%s", addr16 ? "addr16 " : "", rep ? "rep " : "",
	      out ? "outs" : "ins", "bwl"[size >> 1], port, ecx, out ? "from" : "to", ptr,
	      down ? " (DF=1)" : "");
	expect_fault(ANY_VECTOR);
	/* EBX keeps ESP across a fault in the stub (see op_int). */
	io_stub_addr = io_stub;
	io_down = down;
	asm volatile("movl %%esp, %%ebx\n\t"
		     "cmpl $0, %4\n\t"
		     "je 2f\n\t"
		     "std\n"
		     "2:\t"
		     ASM_TRY("1f")
		     "call *%3\n\t"
		     "1: cld\n\t"
		     "movl %%ebx, %%esp"
		     : "+S"(src), "+D"(dst), "+c"(ecx)
		     : "m"(io_stub_addr), "m"(io_down), "d"(port)
		     : "ebx", "eax", "memory", "cc");
	fault_happened();
	count_fault();
}

/* --- hypercalls ------------------------------------------------------------- */

/* A guest address for a hypercall argument: the scratch page, the
 * hypervisor's region, an MMIO window, the top of memory, or anything. */
static uint32_t rand_guest_address(void)
{
	switch (below(6)) {
	case 0:
	case 1:
		return (uint32_t)(uintptr_t)scratch + below(sizeof(scratch));
	case 2:
		return exitplan_hv_start() + rand32() % (exitplan_hv_end() - exitplan_hv_start());
	case 3:
		/*
		 * The local APIC page or the MMIO test page: the hypervisor
		 * reads a hypercall's buffer from guest RAM only (found by
		 * seed=1: a PUTS of 0xfee00c8c once had the host read the
		 * APIC, which ended Bochs; guest_phys_ok(), arch/vmx/guest_mem.c).
		 */
		return one_in(2) ? 0xfee00000u + below(0x1000) : EXITPLAN_TEST_PAGE + below(0x1000);
	case 4:
		return 0xffffffffu - below(0x100);
	default:
		return rand32();
	}
}

static void op_vmcall(void)
{
	uint32_t nr, a[4];

	do {
		nr = one_in(4) ? rand32() : below(8);
	} while (nr == HYPERCALL_SHUTDOWN && !stops);
	for (int i = 0; i < 4; i++)
		a[i] = one_in(2) ? rand_guest_address() : (uint32_t)rand_operand();
	/* Lengths: mostly small, sometimes past the end of anything. */
	if (one_in(2))
		a[1] = below(64);
	TRACE("vmcall nr 0x%x args 0x%x 0x%x 0x%x 0x%x", nr, a[0], a[1], a[2], a[3]);
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f") "vmcall\n\t1:"
		     : "+a"(nr) : "b"(a[0]), "c"(a[1]), "d"(a[2]), "S"(a[3]) : "memory");
	fault_happened();
	count_fault();
}

/* --- control and debug registers -------------------------------------------- */

/* CR0 bits the guest may flip: MP, EM, TS, ET, NE, WP, AM, NW, CD.  PE
 * and PG stay as they are (paging is off and has no tables), and so do
 * the reserved bits but rarely. */
#define CR0_FLIPPABLE	(X86_CR0_MP | X86_CR0_EM | X86_CR0_TS | X86_CR0_ET | \
			 X86_CR0_NE | X86_CR0_WP | X86_CR0_AM | X86_CR0_NW | X86_CR0_CD)
#define CR0_RESERVED_32	0x1ffaffc0u	/* bits 6-15, 17, 19-28 */

static void op_mov_cr(void)
{
	uint32_t v;

	switch (below(6)) {
	case 0:
		v = read_cr0() ^ (rand32() & CR0_FLIPPABLE);
		if (one_in(8))
			v |= 1u << (6 + below(23)) & CR0_RESERVED_32;
		TRACE("mov cr0, 0x%x", v);
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "mov %0, %%cr0\n\t1:" : : "r"(v) : "memory");
		break;
	case 1:
		/* Paging is off: CR3 is only stored. */
		v = (uint32_t)rand_operand();
		TRACE("mov cr3, 0x%x", v);
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "mov %0, %%cr3\n\t1:" : : "r"(v) : "memory");
		break;
	case 2:
		/* Any CR4 bit: with paging off the paging ones only change
		 * what the next MOV to CR0 may do, and reserved ones #GP. */
		v = read_cr4() ^ (1u << below(32));
		if (one_in(4))
			v = rand32();
		TRACE("mov cr4, 0x%x", v);
		write_cr4_safe(v);
		break;
	case 4:
		/* LMSW loads CR0[3:0] (and can set PE, never clear it). */
		v = rand32() & 0xffff;
		TRACE("lmsw 0x%x", v);
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "lmsw %w0\n\t1:" : : "r"(v) : "memory");
		break;
	case 5:
		TRACE("clts");
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "clts\n\t1:" : : : "memory");
		break;
	default:
		TRACE("mov from cr0/cr2/cr3/cr4");
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "mov %%cr0, %%eax\n\tmov %%cr2, %%eax\n\t"
			     "mov %%cr3, %%eax\n\tmov %%cr4, %%eax\n\t1:" : : : "eax", "memory");
		break;
	}
	fault_happened();
	count_fault();
}

/* DR7 with no breakpoint enabled (L0-3/G0-3 clear: a breakpoint on the
 * guest's own code or data would #DB outside any ASM_TRY) and GD clear
 * (the next debug-register access would #DB). */
#define DR7_ENABLES	0x000000ffu
#define DR7_GD		(1u << 13)

static void op_mov_dr(void)
{
	uint32_t v = (uint32_t)rand_operand(), reg = below(8);
	bool write = one_in(2);

	if (reg == 7 || reg == 5)
		v &= ~(DR7_ENABLES | DR7_GD);
	TRACE("mov %s dr%u%s0x%x", write ? "to" : "from", reg, write ? ", " : "", write ? v : 0);
	expect_fault(ANY_VECTOR);
#define DR_CASE(n)								\
	case n:									\
		if (write)							\
			asm volatile(ASM_TRY("1f") "mov %0, %%dr" #n "\n\t1:"	\
				     : : "r"(v) : "memory");			\
		else								\
			asm volatile(ASM_TRY("1f") "mov %%dr" #n ", %0\n\t1:"	\
				     : "=r"(v) : : "memory");			\
		break;
	switch (reg) {
	DR_CASE(0) DR_CASE(1) DR_CASE(2) DR_CASE(3)
	DR_CASE(4) DR_CASE(5) DR_CASE(6) DR_CASE(7)
	}
#undef DR_CASE
	fault_happened();
	count_fault();
}

/* --- XSETBV ------------------------------------------------------------------ */

static void op_xsetbv(void)
{
	uint32_t xcr = one_in(8) ? (uint32_t)rand_operand() : 0;
	uint64_t v = one_in(4) ? rand_operand() : (rand64() & 0x607ffull);

	TRACE("xsetbv xcr 0x%x value 0x%llx", xcr, (unsigned long long)v);
	xsetbv_safe(xcr, v);
	count_fault();
}

/* --- INVLPG, INVD/WBINVD, TSC and PMCs ---------------------------------------- */

static void op_invlpg(void)
{
	uint32_t addr = rand32();

	TRACE("invlpg 0x%x", addr);
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f") "invlpg (%0)\n\t1:" : : "r"(addr) : "memory");
	fault_happened();
	count_fault();
}

static void op_cache(void)
{
	bool invd = one_in(2);

	TRACE("%s", invd ? "invd" : "wbinvd");
	expect_fault(ANY_VECTOR);
	if (invd)
		asm volatile(ASM_TRY("1f") "invd\n\t1:" : : : "memory");
	else
		asm volatile(ASM_TRY("1f") "wbinvd\n\t1:" : : : "memory");
	fault_happened();
	count_fault();
}

static void op_tsc(void)
{
	uint32_t which = below(3), ecx = one_in(2) ? below(8) | (one_in(2) << 30) : rand32();

	TRACE("%s ecx 0x%x", which == 0 ? "rdtsc" : which == 1 ? "rdtscp" : "rdpmc", ecx);
	expect_fault(ANY_VECTOR);
	if (which == 0)
		asm volatile(ASM_TRY("1f") "rdtsc\n\t1:" : : "c"(ecx) : "eax", "edx", "memory");
	else if (which == 1)
		asm volatile(ASM_TRY("1f") "rdtscp\n\t1:" : "+c"(ecx) : : "eax", "edx", "memory");
	else
		asm volatile(ASM_TRY("1f") "rdpmc\n\t1:" : : "c"(ecx) : "eax", "edx", "memory");
	fault_happened();
	count_fault();
}

/* --- VMX instructions: a guest without VMX gets #UD for each ----------------- */

static void op_vmx(void)
{
	uint32_t which = below(13), reg = (uint32_t)rand_operand();
	void *mem = scratch + (below(sizeof(scratch) - 16) & ~7u);
	static const char *const names[13] = {
		"vmxon", "vmclear", "vmptrld", "vmptrst", "vmread", "vmwrite",
		"vmlaunch", "vmresume", "vmxoff", "invept", "invvpid", "vmfunc", "getsec",
	};

	for (int i = 0; i < 16; i++)
		((uint8_t *)mem)[i] = (uint8_t)rand32();
	TRACE("%s reg 0x%x", names[which], reg);
	expect_fault(ANY_VECTOR);
	switch (which) {
	case 0:
		asm volatile(ASM_TRY("1f") "vmxon (%0)\n\t1:" : : "r"(mem) : "memory", "cc");
		break;
	case 1:
		asm volatile(ASM_TRY("1f") "vmclear (%0)\n\t1:" : : "r"(mem) : "memory", "cc");
		break;
	case 2:
		asm volatile(ASM_TRY("1f") "vmptrld (%0)\n\t1:" : : "r"(mem) : "memory", "cc");
		break;
	case 3:
		asm volatile(ASM_TRY("1f") "vmptrst (%0)\n\t1:" : : "r"(mem) : "memory", "cc");
		break;
	case 4:
		asm volatile(ASM_TRY("1f") "vmread %0, %0\n\t1:" : "+r"(reg) : : "memory", "cc");
		break;
	case 5:
		asm volatile(ASM_TRY("1f") "vmwrite %0, %0\n\t1:" : : "r"(reg) : "memory", "cc");
		break;
	case 6:
		asm volatile(ASM_TRY("1f") "vmlaunch\n\t1:" : : : "memory", "cc");
		break;
	case 7:
		asm volatile(ASM_TRY("1f") "vmresume\n\t1:" : : : "memory", "cc");
		break;
	case 8:
		asm volatile(ASM_TRY("1f") "vmxoff\n\t1:" : : : "memory", "cc");
		break;
	case 9:
		asm volatile(ASM_TRY("1f") "invept (%1), %0\n\t1:" : : "r"(reg), "r"(mem) : "memory", "cc");
		break;
	case 10:
		asm volatile(ASM_TRY("1f") "invvpid (%1), %0\n\t1:" : : "r"(reg), "r"(mem) : "memory", "cc");
		break;
	case 11:
		/* VMFUNC (0f 01 d4), EAX the function, ECX its argument */
		asm volatile(ASM_TRY("1f") ".byte 0x0f, 0x01, 0xd4\n\t1:"
			     : : "a"(reg & 0xff), "c"(rand32()) : "memory", "cc");
		break;
	default:
		/* GETSEC (0f 37), EAX the leaf; #UD while CR4.SMXE is clear */
		asm volatile(ASM_TRY("1f") ".byte 0x0f, 0x37\n\t1:"
			     : "+a"(reg) : : "ebx", "ecx", "edx", "memory", "cc");
		break;
	}
	fault_happened();
	count_fault();
}

/* --- the rest: PAUSE, MONITOR, descriptor tables, RDRAND, XGETBV ------------- */

static void op_misc(void)
{
	uint32_t which = below(6), v = rand32();
	struct {
		uint16_t limit;
		uint32_t base;
	} __attribute__((packed)) dt;

	TRACE("misc %u operand 0x%x", which, v);
	expect_fault(ANY_VECTOR);
	switch (which) {
	case 0:
		asm volatile(ASM_TRY("1f") "pause\n\t1:" : : : "memory");
		break;
	case 1:
		/* MONITOR only: MWAIT could wait for ever, which is the
		 * guest's own doing, not a question for the hypervisor. */
		asm volatile(ASM_TRY("1f") "monitor\n\t1:"
			     : : "a"(scratch), "c"(0), "d"(0) : "memory");
		break;
	case 2:
		/* Stores only: loading a random GDT or IDT kills the guest. */
		asm volatile(ASM_TRY("1f") "sgdt %0\n\tsidt %0\n\t1:" : "=m"(dt) : : "memory");
		break;
	case 3:
		asm volatile(ASM_TRY("1f") "sldt %%ax\n\tstr %%ax\n\t1:" : : : "eax", "memory");
		break;
	case 4:
		asm volatile(ASM_TRY("1f") "rdrand %%eax\n\trdseed %%eax\n\t1:" : : : "eax", "memory", "cc");
		break;
	default:
		asm volatile(ASM_TRY("1f") "xgetbv\n\t1:" : : "c"(v & 3) : "eax", "edx", "memory");
		break;
	}
	fault_happened();
	count_fault();
}

/* --- MMIO: the emulated test page, the local APIC (reads) -------------------- */

/*
 * The forms exitplan emulates on MMIO, with random operands, where any
 * value is safe: aligned dwords of the MMIO test page (reads "EXIT",
 * writes ignored) and any width where no device answers (the PCI hole).
 */
#define FUZZ_UNCLAIMED	0xd0000000u

static void op_mmio_forms(void)
{
	bool test_page = one_in(2);
	uint32_t base = test_page ? EXITPLAN_TEST_PAGE : FUZZ_UNCLAIMED;
	uint32_t addr = base + (below(0x1000 - 16) & (test_page ? ~3u : ~0u));
	uint32_t v = (uint32_t)rand_operand(), w = (uint32_t)rand_operand(), n = 1 + below(4);
	uint32_t edi = addr, esi = (uint32_t)(uintptr_t)scratch, form = below(test_page ? 8 : 11);

	TRACE("mmio form %u at 0x%x, operands 0x%x 0x%x", form, addr, v, w);
	expect_fault(ANY_VECTOR);
	switch (form) {
	case 0: asm volatile(ASM_TRY("1f") "lock orl %1, (%2)\n\t1:" : "+r"(v) : "r"(w), "r"(addr) : "memory", "cc"); break;
	case 1: asm volatile(ASM_TRY("1f") "xchgl %0, (%1)\n\t1:" : "+r"(v) : "r"(addr) : "memory"); break;
	case 2: asm volatile(ASM_TRY("1f") "lock cmpxchgl %1, (%2)\n\t1:" : "+a"(v) : "r"(w), "r"(addr) : "memory", "cc"); break;
	case 3: asm volatile(ASM_TRY("1f") "lock xaddl %0, (%1)\n\t1:" : "+r"(v) : "r"(addr) : "memory", "cc"); break;
	case 4: asm volatile(ASM_TRY("1f") "testl %1, (%2)\n\t1:" : "+r"(v) : "r"(w), "r"(addr) : "memory", "cc"); break;
	case 5: asm volatile(ASM_TRY("1f") "lock subl %1, (%2)\n\t1:" : "+r"(v) : "r"(w), "r"(addr) : "memory", "cc"); break;
	case 6: asm volatile(ASM_TRY("1f") "cld\n\trep stosl\n\t1:" : "+D"(edi), "+c"(n) : "a"(v) : "memory"); break;
	case 7: asm volatile(ASM_TRY("1f") "cld\n\trep movsl\n\t1:" : "+S"(edi), "+D"(esi), "+c"(n) : : "memory"); break;
	case 8: asm volatile(ASM_TRY("1f") "lock orb %b1, (%2)\n\t1:" : "+r"(v) : "q"(w), "r"(addr) : "memory", "cc"); break;
	case 9: asm volatile(ASM_TRY("1f") "movswl (%1), %0\n\t1:" : "=r"(v) : "r"(addr) : "memory"); break;
	default:
		/* Downwards from 8 bytes in, and DF cleared whatever happens. */
		edi += 8;
		asm volatile(ASM_TRY("1f") "std\n\trep stosb\n\t1: cld" : "+D"(edi), "+c"(n) : "a"(v) : "memory", "cc");
		break;
	}
	fault_happened();
	count_fault();
}

static void op_mmio(void)
{
	bool apic, write;
	uint32_t off, v;
	uintptr_t addr;

	if (one_in(2)) {
		op_mmio_forms();
		return;
	}
	apic = one_in(3);
	write = !apic && one_in(2);
	off = below(0x1000) & (apic ? ~15u : ~3u);
	v = (uint32_t)rand_operand();
	addr = (apic ? 0xfee00000u : EXITPLAN_TEST_PAGE) + off;

	/* The passed-through APIC page only with 32-bit reads of whole
	 * registers (16-byte aligned): a write there can send INIT, NMI or
	 * SMI to self (issue 7, items 8, 6, 1), and any other access kills
	 * Bochs (item 9: Bochs asserts on a read at 0xfee00804). */
	TRACE("mmio %s 0x%x%s0x%x", write ? "write" : "read", (uint32_t)addr, write ? " value " : "",
	      write ? v : 0);
	expect_fault(ANY_VECTOR);
	if (write)
		asm volatile(ASM_TRY("1f") "movl %0, (%1)\n\t1:" : : "r"(v), "r"(addr) : "memory");
	else
		asm volatile(ASM_TRY("1f") "movl (%1), %0\n\t1:" : "=r"(v) : "r"(addr) : "memory");
	fault_happened();
	count_fault();
}

/* --- software interrupts ------------------------------------------------------- */

/* INT imm8 with a run-time vector: "int $v; ret" written where it runs
 * (flat segments, paging off: the guest's memory is executable). */
/* Each CPU writes and runs its own. */
static uint8_t int_stubs[SMP_CPU_SLOTS][4] __attribute__((aligned(4), used));

static void op_int(void)
{
	uint8_t *int_stub = int_stubs[smp_cpu_slot()];
	/* INT3, INT1, or an external vector: never one the CPU pushes an
	 * error code for (entry.S would then pop one too many). */
	uint32_t vector = one_in(4) ? 3 : one_in(8) ? 1 : 32 + below(224);

	if (vector == 1) {
		int_stub[0] = 0xf1;	/* INT1 (ICEBP): #DB as a trap */
		int_stub[1] = 0xc3;	/* RET */
	} else {
		int_stub[0] = 0xcd;	/* INT imm8 */
		int_stub[1] = (uint8_t)vector;
		int_stub[2] = 0xc3;	/* RET */
	}
	TRACE("int 0x%x", vector);
	expect_fault(ANY_VECTOR);
	/* EBX keeps ESP: an exception in the stub resumes at 1: with the
	 * CALL's return address still pushed. */
	asm volatile("movl %%esp, %%ebx\n\t"
		     ASM_TRY("1f")
		     ASM_TRY_RANGE("int_stubs", "int_stubs + %c1", "1f")
		     "call *%0\n\t"
		     "1: movl %%ebx, %%esp"
		     : : "r"(int_stub), "i"(sizeof(int_stubs)) : "ebx", "memory");
	fault_happened();
	count_fault();
}

/* --- what ends a guest by design (stops only) ---------------------------------- */

static void op_stop(void)
{
	uint32_t which = below(6), port;

	switch (which) {
	case 0:
		TRACE("hlt with interrupts disabled");
		asm volatile("cli; hlt" : : : "memory");
		break;
	case 1:
		TRACE("vmcall SHUTDOWN(%u)", me()->iteration & 0x7f);
		hypercall4(HYPERCALL_SHUTDOWN, me()->iteration & 0x7f, 0, 0, 0);
		break;
	case 2: {
		uint32_t addr = exitplan_hv_start() +
				(rand32() % (exitplan_hv_end() - exitplan_hv_start() - 3) & ~3u);
		bool write = one_in(2);

		TRACE("%s of hypervisor memory at 0x%x", write ? "write" : "read", addr);
		expect_fault(ANY_VECTOR);
		if (write)
			asm volatile(ASM_TRY("1f") "movl %%eax, (%0)\n\t1:" : : "r"(addr), "a"(addr) : "memory");
		else
			asm volatile(ASM_TRY("1f") "movl (%0), %%eax\n\t1:" : : "r"(addr) : "eax", "memory");
		fault_happened();
		break;
	}
	case 3: {
		/* exitplan decodes only aligned 32-bit MOVs there, and stops
		 * a guest that uses anything else (docs/GUESTS.md). */
		uint32_t addr = EXITPLAN_TEST_PAGE + below(0x1000);

		TRACE("movzbl from the MMIO test page at 0x%x", addr);
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "movzbl (%0), %%eax\n\t1:" : : "r"(addr) : "eax", "memory");
		fault_happened();
		break;
	}
	default:
		do
			port = rand_port();
		while (!port_stops_guest(port));
		TRACE("out port 0x%x (ends the guest by design)", port);
		outb(port, port == 0x64 ? 0xfe : port == 0xcf9 ? 0x06 : port == 0x92 ? 0x03 : 0xff);
		if (port == 0x8900)
			outsb(port, "Shutdown", 8);
		if (port == 0xb004)
			outw(port, 0x2000 | 5 << 10);	/* SLP_EN, SLP_TYP 5 (S5 on PIIX4) */
		break;
	}
}

/* --- the loop -------------------------------------------------------------------- */

typedef void (*op_fn)(void);

static void op_ins(void) { op_string_io(false); }
static void op_outs(void) { op_string_io(true); }

static const op_fn op_fns[OP_COUNT] = {
	[OP_CPUID] = op_cpuid, [OP_RDMSR] = op_rdmsr, [OP_WRMSR] = op_wrmsr,
	[OP_IN] = op_in, [OP_OUT] = op_out, [OP_INS] = op_ins, [OP_OUTS] = op_outs,
	[OP_VMCALL] = op_vmcall, [OP_MOV_CR] = op_mov_cr, [OP_MOV_DR] = op_mov_dr,
	[OP_XSETBV] = op_xsetbv, [OP_INVLPG] = op_invlpg, [OP_CACHE] = op_cache,
	[OP_TSC] = op_tsc, [OP_VMX] = op_vmx, [OP_MISC] = op_misc,
	[OP_MMIO] = op_mmio, [OP_INT] = op_int, [OP_STOP] = op_stop,
};

/* With stops, about one instruction in a hundred ends the guest. */
static uint32_t weight(int op)
{
	return op == OP_STOP ? (stops ? 1 : 0) : op_weight[op];
}

static enum op pick_op(uint32_t total)
{
	uint32_t r = below(total);

	for (int op = 0; op < OP_COUNT; op++) {
		if (r < weight(op))
			return (enum op)op;
		r -= weight(op);
	}
	return OP_CPUID;
}

static void print_summary(const struct fuzz_cpu *c)
{
	char line[512];
	int n = 0;

	for (int op = 0; op < OP_COUNT; op++)
		if (c->done_by_op[op])
			n += snprintf(line + n, sizeof(line) - n, "%s%s %u", n ? ", " : "",
				      op_names[op], c->done_by_op[op]);
	printf("fuzz: %s\n", line);
	n = 0;
	for (int v = 0; v < 32; v++)
		if (c->faults_by_vector[v])
			n += snprintf(line + n, sizeof(line) - n, "%s%s %u", n ? ", " : "",
				      vector_name(v), c->faults_by_vector[v]);
	printf("fuzz: exceptions raised: %s; interrupts %u\n", n ? line : "none", c->interrupts);
}

static uint32_t op_total;
static uint32_t iterations;

/* This CPU's stream: @iterations instructions. */
static void fuzz_loop(bool progress)
{
	struct fuzz_cpu *c = me();

	for (c->iteration = 0; c->iteration < iterations; c->iteration++) {
		enum op op = pick_op(op_total);

		op_fns[op]();
		c->done_by_op[op]++;
		if (progress && (c->iteration + 1) % PROGRESS_EVERY == 0 && !trace)
			printf("fuzz: %u of %u\n", c->iteration + 1, iterations);
	}
}

/* XSETBV needs CR4.OSXSAVE (else #UD without an exit): on each CPU. */
static void enable_xsave(void)
{
	if (cpuid(1).ecx & CPUID_1_ECX_XSAVE)
		write_cr4_safe(read_cr4() | X86_CR4_OSXSAVE);
}

static uint32_t fuzz_seed;

static void ap_main(void)
{
	struct fuzz_cpu *c = me();

	idt_init();		/* the same table: loads IDTR on this CPU */
	c->apic_id = smp_apic_id();
	/* Its own stream, repeatable for a seed: the slot's, not the arrival's. */
	c->rng = fuzz_seed ^ (0x632be59bd9b4e019ull * smp_cpu_slot());
	enable_xsave();
	c->started = true;
	fuzz_loop(false);
	c->finished = true;
	for (;;)
		asm volatile("cli; hlt");
}

/*
 * Start the APs the MADT lists, fuzzing from the moment each arrives;
 * how many there are.
 */
static unsigned int start_aps(void)
{
	uint32_t ids[SMP_MAX_CPUS];
	unsigned int n = smp_madt_apic_ids(ids, SMP_MAX_CPUS);

	if (n < 2) {
		printf("fuzz: smp: the MADT lists %u CPU%s: fuzzing on the BSP alone\n", n,
		       n == 1 ? "" : "s");
		return 0;
	}
	apic_init();		/* INIT and STARTUP go through it */
	smp_install_trampoline(ap_main);
	smp_start_aps(ids, n, false);
	return n - 1;
}

/* Wait for the APs to finish (their instructions are slower than the BSP's when they share a CPU). */
static unsigned int wait_for_aps(unsigned int aps)
{
	unsigned int started = 0, finished = 0;

	/* A few hundred million ticks (instructions, on Bochs): far more than a stream takes. */
	for (uint64_t t0 = rdtsc(), last = t0; rdtsc() - t0 < 2000000000ull;) {
		started = finished = 0;
		for (unsigned int i = 1; i < SMP_CPU_SLOTS; i++) {
			started += cpus[i].started;
			finished += cpus[i].finished;
		}
		if (started >= aps && finished == started)
			break;
		if (rdtsc() - last > 100000000ull) {
			last = rdtsc();
			for (unsigned int i = 1; i < SMP_CPU_SLOTS; i++)
				if (cpus[i].started && !cpus[i].finished)
					printf("fuzz: waiting for APIC ID %u at instruction %u\n",
					       cpus[i].apic_id, cpus[i].iteration);
		}
		asm volatile("pause");
	}
	for (unsigned int i = 1; i < SMP_CPU_SLOTS; i++) {
		if (!cpus[i].started)
			continue;
		printf("fuzz: CPU with APIC ID %u: %u instructions done\n", cpus[i].apic_id,
		       cpus[i].iteration);
		print_summary(&cpus[i]);
	}
	return finished;
}

void guest_main(void)
{
	uint32_t seed = cmdline_u32("seed", 1);
	unsigned int aps = 0, finished = 0;
	uint32_t bm;
	char name[48];

	iterations = cmdline_u32("iterations", DEFAULT_ITERATIONS);
	trace = cmdline_has("trace");
	stops = cmdline_has("stops");
	smp = cmdline_has("smp");
	cmdline_value("bugs", bugs, sizeof(bugs));
	fuzz_seed = seed;
	me()->rng = seed;
	printf("fuzz: seed %u, %u instructions%s%s%s%s%s\n", seed, iterations,
	       smp ? " on every CPU" : "", stops ? ", with the ones that end a guest" : "",
	       bugs[0] ? ", with known bugs: " : "", bugs, trace ? ", traced" : "");
	under_exitplan = exitplan_detected();
	if (!under_exitplan)
		printf("fuzz: not running under exitplan: exceptions are the CPU's own answers\n");

	for (int v = 32; v < 256; v++)
		irq_register((uint8_t)v, count_interrupt);
	/* Where the BIOS put the IDE bus-master block: never written. */
	bm = pci_config_read(1 << 3 | 1, 0x20);
	if (bm != 0xffffffffu && (bm & 1))
		ide_bm_base = (uint16_t)(bm & 0xfff0);
	enable_xsave();

	for (int op = 0; op < OP_COUNT; op++)
		op_total += weight(op);
	if (smp)
		aps = start_aps();
	fuzz_loop(true);
	printf("fuzz: seed %u: %u instructions done\n", seed, me()->iteration);
	print_summary(me());
	if (smp)
		finished = wait_for_aps(aps);
	snprintf(name, sizeof(name), "fuzz-seed-%u", seed);
	check(name, me()->iteration == iterations, "%u of %u instructions", me()->iteration, iterations);
	if (smp) {
		snprintf(name, sizeof(name), "fuzz-seed-%u-cpus-%u", seed, aps + 1);
		check(name, aps > 0 && finished == aps, "%u of %u APs finished %u instructions each",
		      finished, aps, iterations);
	}
}
