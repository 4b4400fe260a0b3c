// SPDX-License-Identifier: GPL-2.0-only
/*
 * Architectural checks: what the guest gets where the hypervisor performs
 * or emulates an instruction, judged by what the CPU itself does, so each
 * passes on bare Bochs (tests/guest/bochs-bare.sh) as it does under
 * exitplan (issue 7, "the guest gets a different answer than hardware
 * would"; issue 9, item 3).  Each check saves and restores what it
 * changes.
 */
#include "apic.h"
#include "arch_checks.h"
#include "console.h"
#include "idt.h"
#include "string.h"
#include "test.h"
#include "exitplan.h"
#include "x86.h"

/*
 * QEMU's TCG, where the guests also run (tests/guest/qemu-check.sh),
 * models none of these faults or the TSC write: such a check SKIPs there,
 * unless notcgskip asks to see it fail.  Returns true when it skipped.
 */
static bool tcg_lacks(const char *name)
{
	if (!qemu_tcg_detected() || cmdline_has("notcgskip"))
		return false;
	skip(name, "QEMU TCG does not model it");
	return true;
}

/* ---- XSETBV: the XCR0 pairs ---- */

static void check_xcr0_pairs(void)
{
	static const uint64_t bad[] = {
		XCR0_X87 | XCR0_SSE | XCR0_BNDREGS,
		XCR0_X87 | XCR0_SSE | XCR0_BNDCSR,
		XCR0_X87 | XCR0_SSE | XCR0_TILECFG,
		XCR0_X87 | XCR0_SSE | XCR0_TILEDATA,
		XCR0_X87 | XCR0_AVX,
		XCR0_SSE,
	};
	unsigned int gp = 0;

	if (!(cpuid(1).ecx & CPUID_1_ECX_XSAVE)) {
		skip("arch-xcr0-pairs", "no XSAVE");
		return;
	}
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		gp += xsetbv_safe(0, bad[i]) == X86_EXC_GP;
	gp += xsetbv_safe(1, XCR0_X87 | XCR0_SSE) == X86_EXC_GP;	/* ECX != 0 */
	check("arch-xcr0-pairs", gp == sizeof(bad) / sizeof(bad[0]) + 1 &&
	      xsetbv_safe(0, XCR0_X87 | XCR0_SSE) == NO_FAULT,
	      "%u of %u reserved XCR0 writes were #GP", gp,
	      (unsigned int)(sizeof(bad) / sizeof(bad[0]) + 1));
}

/* ---- IA32_PAT ---- */

static void check_pat(void)
{
	uint64_t pat, v = 0;
	/* WB, WC, UC-, UC, then the same: every entry a valid type. */
	const uint64_t mine = 0x0007010600070106ull;
	int wr, rd, bad;

	if (rdmsr_safe(MSR_IA32_PAT, &pat) != NO_FAULT) {
		check("arch-pat", false, "RDMSR IA32_PAT faulted");
		return;
	}
	wr = wrmsr_safe(MSR_IA32_PAT, mine);
	rd = rdmsr_safe(MSR_IA32_PAT, &v);
	/* Type 2 is reserved (SDM Vol. 3A 12.12.2). */
	bad = wrmsr_safe(MSR_IA32_PAT, (mine & ~0xffull) | 2);
	wrmsr_safe(MSR_IA32_PAT, pat);
	check("arch-pat", wr == NO_FAULT && rd == NO_FAULT && v == mine,
	      "WRMSR %s, read back 0x%llx", vector_name(wr), (unsigned long long)v);
	if (!tcg_lacks("arch-pat-reserved"))
		check("arch-pat-reserved", bad == X86_EXC_GP, "PAT entry type 2: %s",
		      vector_name(bad));
}

/* ---- the TSC: IA32_TIME_STAMP_COUNTER, IA32_TSC_ADJUST ---- */

/* Far beyond anything the few instructions between two reads can add. */
#define TSC_JUMP	(1ull << 40)
#define TSC_SLACK	(1ull << 32)

static bool near(uint64_t a, uint64_t b)
{
	return a - b < TSC_SLACK;
}

static void check_tsc(void)
{
	bool has_adjust = cpuid_count(7, 0).ebx & CPUID_7_EBX_TSC_ADJUST;
	uint64_t adj0 = 0, adj1 = 0, t0, t1;
	int wr;

	t0 = rdtsc();
	wr = wrmsr_safe(MSR_IA32_TSC, t0 + TSC_JUMP);
	t1 = rdtsc();
	if (tcg_lacks("arch-tsc-write"))
		return;
	if (!check("arch-tsc-write", wr == NO_FAULT && near(t1, t0 + TSC_JUMP),
		   "WRMSR TSC: %s; TSC 0x%llx after writing 0x%llx", vector_name(wr),
		   (unsigned long long)t1, (unsigned long long)(t0 + TSC_JUMP)))
		return;
	if (!has_adjust) {
		/* Put it back as well as a write can. */
		wrmsr_safe(MSR_IA32_TSC, rdtsc() - TSC_JUMP);
		skip("arch-tsc-adjust", "no IA32_TSC_ADJUST (CPUID.7:EBX[1])");
		return;
	}
	/* The TSC write moved TSC_ADJUST by the same amount (SDM Vol. 3B 17.17.3)... */
	rdmsr_safe(MSR_IA32_TSC_ADJUST, &adj1);
	wrmsr_safe(MSR_IA32_TSC_ADJUST, adj1 - TSC_JUMP);
	/* ...and writing TSC_ADJUST moves the TSC: both back where they were. */
	t1 = rdtsc();
	rdmsr_safe(MSR_IA32_TSC_ADJUST, &adj0);
	check("arch-tsc-adjust", near(adj1 - adj0, TSC_JUMP) && t1 - t0 < TSC_SLACK,
	      "TSC_ADJUST 0x%llx after the TSC write, 0x%llx after its own; TSC 0x%llx from 0x%llx",
	      (unsigned long long)adj1, (unsigned long long)adj0, (unsigned long long)t1,
	      (unsigned long long)t0);
}

/* ---- the MTRRs ---- */

static void check_mtrrs(void)
{
	uint64_t cap, def, v = 0, base = 0, mask = 0;
	int wr, bad, bad_type, rd;

	if (rdmsr_safe(MSR_IA32_MTRRCAP, &cap) != NO_FAULT || !cap) {
		skip("arch-mtrr", "no MTRRs (IA32_MTRRCAP)");
		return;
	}
	rdmsr_safe(MSR_IA32_MTRR_DEF_TYPE, &def);
	/* The firmware's value back, and the same with WB as the default type. */
	wr = wrmsr_safe(MSR_IA32_MTRR_DEF_TYPE, (def & ~MTRR_DEF_TYPE_TYPE_MASK) | X86_MEMTYPE_WB);
	rd = rdmsr_safe(MSR_IA32_MTRR_DEF_TYPE, &v);
	bad = wrmsr_safe(MSR_IA32_MTRR_DEF_TYPE, def | (1ull << 9));	/* reserved */
	bad_type = wrmsr_safe(MSR_IA32_MTRR_DEF_TYPE, (def & ~MTRR_DEF_TYPE_TYPE_MASK) | 2);
	wrmsr_safe(MSR_IA32_MTRR_DEF_TYPE, def);
	check("arch-mtrr-def-type", wr == NO_FAULT && rd == NO_FAULT &&
	      v == ((def & ~MTRR_DEF_TYPE_TYPE_MASK) | X86_MEMTYPE_WB),
	      "WRMSR %s, read back 0x%llx (was 0x%llx)", vector_name(wr),
	      (unsigned long long)v, (unsigned long long)def);
	if (!tcg_lacks("arch-mtrr-def-type-reserved"))
		check("arch-mtrr-def-type-reserved", bad == X86_EXC_GP && bad_type == X86_EXC_GP,
		      "bit 9: %s, type 2: %s", vector_name(bad), vector_name(bad_type));
	if (!(cap & MTRRCAP_VCNT_MASK)) {
		skip("arch-mtrr-var", "no variable-range MTRRs");
		return;
	}
	rdmsr_safe(MSR_IA32_MTRR_PHYS_FIRST, &base);
	rdmsr_safe(MSR_IA32_MTRR_PHYS_FIRST + 1, &mask);
	wr = wrmsr_safe(MSR_IA32_MTRR_PHYS_FIRST, base);
	bad = wrmsr_safe(MSR_IA32_MTRR_PHYS_FIRST + 1, mask | 1);	/* bits 10:0 reserved */
	if (!tcg_lacks("arch-mtrr-var"))
		check("arch-mtrr-var", wr == NO_FAULT && bad == X86_EXC_GP,
		      "PHYSBASE0 write-back: %s; PHYSMASK0 bit 0: %s", vector_name(wr), vector_name(bad));
}

/* ---- IA32_MISC_ENABLE, IA32_MC0_CTL, IA32_SYSENTER_EIP ---- */

static void check_misc_msrs(void)
{
	uint64_t misc = 0, back = 0, mcg = 0, mc0 = 0;
	int rd, wr, mcg_rd, mc0_rd, bad;

	/* Whatever the CPU gives on read, it takes back unchanged. */
	rd = rdmsr_safe(MSR_IA32_MISC_ENABLE, &misc);
	wr = rd == NO_FAULT ? wrmsr_safe(MSR_IA32_MISC_ENABLE, misc) : NO_FAULT;
	if (rd == NO_FAULT)
		rdmsr_safe(MSR_IA32_MISC_ENABLE, &back);
	check("arch-misc-enable", wr == NO_FAULT && back == misc,
	      "read %s 0x%llx, write back %s, then 0x%llx", vector_name(rd),
	      (unsigned long long)misc, vector_name(wr), (unsigned long long)back);

	/*
	 * What a kernel writes (kvm-unit-tests' msr: fast strings, TCC,
	 * SpeedStep, ENABLE MONITOR FSM, the CPUID limit, xTPR disable, XD
	 * disable; Vol. 4 Table 2-2 makes them R/W where SSE3 is there) is
	 * kept; the read-only bits 7, 11 and 12 keep the CPU's value.
	 */
	if (rd == NO_FAULT && (cpuid(1).ecx & 1)) {
		uint64_t ro = (1ull << 7) | (1ull << 11) | (1ull << 12);
		uint64_t want = (0x400c50009ull & ~ro) | (misc & ro);

		back = 0;
		wr = wrmsr_safe(MSR_IA32_MISC_ENABLE, want);
		rdmsr_safe(MSR_IA32_MISC_ENABLE, &back);
		wrmsr_safe(MSR_IA32_MISC_ENABLE, misc);
		/* Bochs, bare, ignores the MSR: the write is taken, the read is 0. */
		check("arch-misc-enable-kernel-bits", wr == NO_FAULT && (back == want || back == 0),
		      "write 0x%llx: %s, then 0x%llx", (unsigned long long)want, vector_name(wr),
		      (unsigned long long)back);
		/* A reserved bit (1) is #GP where the CPU models the MSR (not bare Bochs). */
		if (back == want && !tcg_lacks("arch-misc-enable-reserved")) {
			bad = wrmsr_safe(MSR_IA32_MISC_ENABLE, misc | (1ull << 1));
			check("arch-misc-enable-reserved", bad == X86_EXC_GP, "bit 1: %s",
			      vector_name(bad));
		}
	}

	/*
	 * IA32_MC0_CTL exists when IA32_MCG_CAP counts a bank (Vol. 3B 16.3);
	 * without one it is #GP, or 0 where the CPU ignores unknown MSRs
	 * (Bochs's ignore_bad_msrs).  Where it exists, software writes all
	 * ones to it to enable every error report (16.3.2.1), and reads it
	 * back; IA32_MC0_STATUS is cleared by writing 0 (16.3.2.2).
	 */
	mcg_rd = rdmsr_safe(MSR_IA32_MCG_CAP, &mcg);
	mc0_rd = rdmsr_safe(MSR_IA32_MC_BANKS_FIRST, &mc0);
	printf("handlers: IA32_MCG_CAP %s 0x%llx, IA32_MC0_CTL %s 0x%llx\n", vector_name(mcg_rd),
	       (unsigned long long)mcg, vector_name(mc0_rd), (unsigned long long)mc0);
	check("arch-mc0-ctl", mcg_rd == NO_FAULT &&
	      ((mcg & 0xff) ? mc0_rd == NO_FAULT : mc0_rd == X86_EXC_GP || mc0 == 0),
	      "MCG_CAP %s 0x%llx, MC0_CTL %s", vector_name(mcg_rd), (unsigned long long)mcg,
	      vector_name(mc0_rd));
	/*
	 * A CPU with MCA (CPUID.01H:EDX[14]) has reporting banks: exitplan
	 * counts at least one where the host says 0 (Bochs; bare, SKIP).
	 */
	if (!exitplan_detected())
		skip("arch-mcg-cap-banks", "not under exitplan (Bochs shows MCA with 0 banks)");
	else if (cpuid(1).edx & (1u << 14))
		check("arch-mcg-cap-banks", mcg_rd == NO_FAULT && (mcg & 0xff),
		      "MCG_CAP %s 0x%llx with CPUID.01H:EDX.MCA set", vector_name(mcg_rd),
		      (unsigned long long)mcg);
	if (mcg_rd == NO_FAULT && (mcg & 0xff)) {
		uint64_t ctl = 0, st = 1;
		int w_ctl, w_st;

		w_ctl = wrmsr_safe(MSR_IA32_MC_BANKS_FIRST, ~0ull);
		rdmsr_safe(MSR_IA32_MC_BANKS_FIRST, &ctl);
		w_st = wrmsr_safe(MSR_IA32_MC_BANKS_FIRST + 1, 0);
		rdmsr_safe(MSR_IA32_MC_BANKS_FIRST + 1, &st);
		check("arch-mc0-ctl-write", w_ctl == NO_FAULT && ctl == ~0ull && w_st == NO_FAULT &&
		      st == 0, "MC0_CTL all ones: %s, reads 0x%llx; MC0_STATUS 0: %s, reads 0x%llx",
		      vector_name(w_ctl), (unsigned long long)ctl, vector_name(w_st),
		      (unsigned long long)st);
		/* Only software's 0 clears a status: 1s are #GP (16.3.2.2). */
		if (!tcg_lacks("arch-mc0-status-ones")) {
			bad = wrmsr_safe(MSR_IA32_MC_BANKS_FIRST + 1, 1);
			check("arch-mc0-status-ones", bad == X86_EXC_GP, "MC0_STATUS 1: %s",
			      vector_name(bad));
		}
	}

	/* A non-canonical SYSENTER_EIP is the WRMSR's #GP (never a failed VM entry). */
	bad = wrmsr_safe(MSR_IA32_SYSENTER_EIP, 0x0000800000000000ull);
	if (!tcg_lacks("arch-sysenter-eip-canonical"))
		check("arch-sysenter-eip-canonical", bad == X86_EXC_GP, "WRMSR 0x800000000000: %s",
		      vector_name(bad));
}

/* ---- the emulated TSC deadline follows the LVT timer mode ---- */

static void check_tsc_deadline_mode(void)
{
	uint64_t v = 1;

	if (!cpu_has_tsc_deadline()) {
		skip("arch-tsc-deadline-oneshot", "no TSC-deadline mode");
		return;
	}
	apic_init();
	/* One-shot mode, masked: a deadline write is ignored, and reads 0 (SDM 11.5.4.1). */
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_MASKED | APIC_LVT_TIMER_MODE_ONESHOT | 0x40);
	wrmsr_safe(MSR_IA32_TSC_DEADLINE, rdtsc() + (1ull << 30));
	rdmsr_safe(MSR_IA32_TSC_DEADLINE, &v);
	wrmsr_safe(MSR_IA32_TSC_DEADLINE, 0);
	apic_timer_stop();
	check("arch-tsc-deadline-oneshot", v == 0,
	      "IA32_TSC_DEADLINE reads 0x%llx outside TSC-deadline mode", (unsigned long long)v);
}

/*
 * ---- a TSC deadline with an illegal vector (0-15) ----
 * The timer fires, but the APIC delivers nothing and flags Received
 * Illegal Vector in its ESR (SDM 11.5.3).  An interrupt of vector 5 would
 * arrive as an unexpected #BR.
 */
static void check_tsc_deadline_illegal_vector(void)
{
	uint64_t deadline, t;
	uint32_t esr;

	if (!cpu_has_tsc_deadline()) {
		skip("arch-tsc-deadline-illegal-vector", "no TSC-deadline mode");
		return;
	}
	if (tcg_lacks("arch-tsc-deadline-illegal-vector"))
		return;
	apic_init();
	apic_write(XAPIC_REG_ESR, 0);
	apic_write(XAPIC_REG_ESR, 0);
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_TSC_DEADLINE | 0x05);
	deadline = rdtsc() + 100000;
	wrmsr_safe(MSR_IA32_TSC_DEADLINE, deadline);
	sti();
	for (t = rdtsc(); rdtsc() - t < 2000000ull;)
		pause();
	cli();
	apic_write(XAPIC_REG_ESR, 0);
	esr = apic_read(XAPIC_REG_ESR);
	apic_write(XAPIC_REG_ESR, 0);
	apic_timer_stop();
	check("arch-tsc-deadline-illegal-vector", esr & APIC_ESR_RECEIVE_ILLEGAL_VECTOR,
	      "ESR 0x%x after a TSC deadline with LVT timer vector 5", esr);
}

/* ---- string I/O: the segment's type and limit ---- */

/*
 * A GDT of the guest's three descriptors (entry.S) and two for ES: a
 * read-only data segment, and a writable one with a byte-granular limit
 * of 0xfff based at io_buf.
 */
#define SEL_ES_RO	(5 * 8)
#define SEL_ES_4K	(6 * 8)

static uint64_t gdt[7] __attribute__((aligned(8)));
static uint8_t io_buf[8192] __attribute__((aligned(4096)));

static uint64_t data_desc(uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
	return (limit & 0xffffull) | ((uint64_t)(base & 0xffffff) << 16) |
	       ((uint64_t)access << 40) | ((uint64_t)((limit >> 16) & 0xf) << 48) |
	       ((uint64_t)flags << 52) | ((uint64_t)(base >> 24) << 56);
}

/* REP INSB of @count bytes from port 0x92 (trapped; reads 0x02) to ES:@edi. */
static int rep_insb(uint16_t es, uint32_t edi, uint32_t count)
{
	expect_fault(ANY_VECTOR);
	asm volatile("push %%es\n\t"
		     "mov %w[es], %%es\n\t"
		     ASM_TRY("1f")
		     "rep insb\n\t"
		     "1:\n\t"
		     "pop %%es"
		     : "+D"(edi), "+c"(count)
		     : [es] "r"(es), "d"(0x92)
		     : "memory");
	fault_happened();
	return last_fault_vector();
}

static void check_string_io_segments(void)
{
	struct { uint16_t limit; uint32_t base; } __attribute__((packed)) old, mine;
	int ro, past, within;

	asm volatile("sgdt %0" : "=m"(old));
	memcpy(gdt, (const void *)old.base, 5 * 8 < old.limit + 1 ? 5 * 8 : old.limit + 1);
	/* Read-only data, flat (access: P, S, type 1; flags G, B). */
	gdt[5] = data_desc(0, 0xfffff, 0x91, 0xc);
	/* Read/write data at io_buf, limit 0xfff, byte granular (flags B). */
	gdt[6] = data_desc((uint32_t)(uintptr_t)io_buf, 0xfff, 0x93, 0x4);
	mine.limit = sizeof(gdt) - 1;
	mine.base = (uint32_t)(uintptr_t)gdt;
	asm volatile("lgdt %0" : : "m"(mine));

	ro = rep_insb(SEL_ES_RO, (uint32_t)(uintptr_t)io_buf, 4);
	within = rep_insb(SEL_ES_4K, 0xffc, 4);
	past = rep_insb(SEL_ES_4K, 0xffe, 4);

	asm volatile("lgdt %0" : : "m"(old));
	if (!tcg_lacks("arch-insb-readonly-es"))
		check("arch-insb-readonly-es", ro == X86_EXC_GP, "REP INSB into read-only ES: %s",
		      vector_name(ro));
	if (!tcg_lacks("arch-insb-es-limit"))
		check("arch-insb-es-limit", within == NO_FAULT && past == X86_EXC_GP &&
		      io_buf[0xffc] == 0x02 && io_buf[0xfff] == 0x02,
		      "within the limit: %s, across it: %s", vector_name(within), vector_name(past));
}

/*
 * ---- string I/O: the guest's paging ----
 * With 32-bit paging (4-MiB pages identity-mapping guest RAM, CR4.PSE)
 * and one page table at PF_LINEAR: page 0 read-only, page 1 writable,
 * page 2 not present.  Each element goes through the paging like any
 * data access (SDM Vol. 3A 4.7): a #PF with the CPU's error code and CR2,
 * the elements before the fault done.
 */
#define PF_LINEAR	0x40000000u
#define PF_PORT_OUT	0xed	/* nothing behind it; trapped under exitplan */

static uint32_t pf_pd[1024] __attribute__((aligned(4096)));
static uint32_t pf_pt[1024] __attribute__((aligned(4096)));

struct pf_result {
	int vector;
	uint32_t error_code, cr2, left;
};

static struct pf_result pf_string_io(bool in, uint32_t addr, uint32_t count)
{
	struct pf_result r;

	write_cr2(0);
	expect_fault(ANY_VECTOR);
	if (in)
		asm volatile(ASM_TRY("1f") "rep insb\n\t" "1:"
			     : "+D"(addr), "+c"(count) : "d"(0x92) : "memory");
	else
		asm volatile(ASM_TRY("1f") "rep outsb\n\t" "1:"
			     : "+S"(addr), "+c"(count) : "d"(PF_PORT_OUT) : "memory");
	fault_happened();
	r.vector = last_fault_vector();
	r.error_code = r.vector == NO_FAULT ? 0 : last_fault_error_code();
	r.cr2 = read_cr2();
	r.left = count;
	return r;
}

static void check_string_io_paging(void)
{
	uint32_t cr0 = read_cr0(), cr3 = read_cr3(), cr4 = read_cr4();
	uint8_t *page = &io_buf[0];	/* 8 KiB, page aligned: two pages */
	struct pf_result np, ro_wp, ro, out_np;

	if (!(cpuid(1).edx & CPUID_1_EDX_PSE)) {
		skip("arch-insb-page-fault", "no PSE");
		return;
	}
	for (unsigned int i = 0; i < 16; i++)	/* 64 MiB */
		pf_pd[i] = (i << 22) | PT32_PS | PT32_RW | PT32_PRESENT;
	pf_pd[PF_LINEAR >> 22] = (uint32_t)(uintptr_t)pf_pt | PT32_RW | PT32_PRESENT;
	pf_pt[0] = (uint32_t)(uintptr_t)page | PT32_PRESENT;
	pf_pt[1] = (uint32_t)(uintptr_t)(page + 4096) | PT32_RW | PT32_PRESENT;
	pf_pt[2] = 0;
	memset(page, 0, 8192);

	cli();
	write_cr3((uint32_t)(uintptr_t)pf_pd);
	write_cr4(cr4 | X86_CR4_PSE);
	write_cr0(cr0 | X86_CR0_PG | X86_CR0_WP);
	/* Four bytes across the end of the writable page: two land, the third faults. */
	np = pf_string_io(true, PF_LINEAR + 0x1ffe, 4);
	ro_wp = pf_string_io(true, PF_LINEAR + 0x10, 4);
	write_cr0((cr0 | X86_CR0_PG) & ~X86_CR0_WP);
	ro = pf_string_io(true, PF_LINEAR + 0x10, 4);
	write_cr0(cr0 | X86_CR0_PG | X86_CR0_WP);
	out_np = pf_string_io(false, PF_LINEAR + 0x2000, 4);
	write_cr0(cr0);
	write_cr4(cr4);
	write_cr3(cr3);

	if (tcg_lacks("arch-insb-page-fault"))
		return;
	check("arch-insb-page-fault",
	      np.vector == X86_EXC_PF && np.error_code == PF_ERROR_WRITE &&
	      np.cr2 == PF_LINEAR + 0x2000 && np.left == 2 &&
	      page[4096 + 0xffe] == 0x02 && page[4096 + 0xfff] == 0x02,
	      "REP INSB across into a page not present: %s error code 0x%x CR2 0x%x, "
	      "%u left, written 0x%x 0x%x", vector_name(np.vector), np.error_code, np.cr2,
	      np.left, page[4096 + 0xffe], page[4096 + 0xfff]);
	check("arch-insb-page-fault-wp",
	      ro_wp.vector == X86_EXC_PF && ro_wp.error_code == (PF_ERROR_WRITE | PF_ERROR_PRESENT) &&
	      ro_wp.cr2 == PF_LINEAR + 0x10 && ro_wp.left == 4 &&
	      ro.vector == NO_FAULT && page[0x10] == 0x02 && page[0x13] == 0x02,
	      "REP INSB into a read-only page with CR0.WP: %s error code 0x%x CR2 0x%x; "
	      "without CR0.WP: %s", vector_name(ro_wp.vector), ro_wp.error_code, ro_wp.cr2,
	      vector_name(ro.vector));
	check("arch-outsb-page-fault",
	      out_np.vector == X86_EXC_PF && out_np.error_code == 0 &&
	      out_np.cr2 == PF_LINEAR + 0x2000 && out_np.left == 4,
	      "REP OUTSB from a page not present: %s error code 0x%x CR2 0x%x",
	      vector_name(out_np.vector), out_np.error_code, out_np.cr2);
}

/* ---- a task switch to a TSS whose limit is too small (32-bit and 16-bit) ---- */

#define SEL_TSS		(6 * 8)

static void check_task_switch(void)
{
	struct { uint16_t limit; uint32_t base; } __attribute__((packed)) old, mine;
	struct { uint32_t off; uint16_t sel; } __attribute__((packed)) target = { 0, SEL_TSS };
	int v;

	asm volatile("sgdt %0" : "=m"(old));
	memcpy(gdt, (const void *)old.base, 5 * 8 < old.limit + 1 ? 5 * 8 : old.limit + 1);
	/* An available 32-bit TSS (type 9, P) with limit 0x20 < 0x67: #TS(selector). */
	gdt[6] = data_desc((uint32_t)(uintptr_t)io_buf, 0x20, 0x89, 0);
	mine.limit = sizeof(gdt) - 1;
	mine.base = (uint32_t)(uintptr_t)gdt;
	asm volatile("lgdt %0" : : "m"(mine));
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f") "ljmp *%0\n\t" "1:" : : "m"(target) : "memory");
	fault_happened();
	v = last_fault_vector();
	check("arch-task-switch-ts", v == X86_EXC_TS && last_fault_error_code() == SEL_TSS,
	      "JMP to a TSS with limit 0x20: %s, error code 0x%x", vector_name(v),
	      last_fault_error_code());
	/* An available 16-bit TSS (type 1, P) with limit 0x2a < 0x2b: #TS(selector) too. */
	gdt[6] = data_desc((uint32_t)(uintptr_t)io_buf, 0x2a, 0x81, 0);
	expect_fault(ANY_VECTOR);
	asm volatile(ASM_TRY("1f") "ljmp *%0\n\t" "1:" : : "m"(target) : "memory");
	fault_happened();
	v = last_fault_vector();
	asm volatile("lgdt %0" : : "m"(old));
	check("arch-task-switch-ts16", v == X86_EXC_TS && last_fault_error_code() == SEL_TSS,
	      "JMP to a 16-bit TSS with limit 0x2a: %s, error code 0x%x", vector_name(v),
	      last_fault_error_code());
}

/* ---- CPUID and the instructions it advertises ---- */

static uint8_t xsave_area[4096] __attribute__((aligned(64)));

static void check_cpuid_advertised(void)
{
	struct cpuid_regs l7 = cpuid_count(7, 0);
	int v;

	if (l7.ebx & CPUID_7_EBX_INVPCID) {
		/* Type 2 (all contexts, globals too) with a zero descriptor. */
		static const uint64_t desc[2] __attribute__((aligned(16)));

		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "invpcid %0, %1\n\t" "1:"
			     : : "m"(desc), "r"(2) : "memory");
		fault_happened();
		v = last_fault_vector();
		check("arch-invpcid-advertised", v == NO_FAULT,
		      "CPUID says INVPCID, and it raised %s", vector_name(v));
	} else {
		skip("arch-invpcid-advertised", "CPUID does not advertise INVPCID");
	}
	if ((cpuid(1).ecx & CPUID_1_ECX_XSAVE) &&
	    (cpuid_count(0xd, 1).eax & CPUID_D_1_EAX_XSAVES) &&
	    cpuid_count(0xd, 1).ebx <= sizeof(xsave_area)) {
		write_cr4(read_cr4() | X86_CR4_OSXSAVE);
		memset(xsave_area, 0, sizeof(xsave_area));
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "xsaves %0\n\t" "1:"
			     : "=m"(xsave_area) : "a"((uint32_t)XCR0_X87), "d"(0) : "memory");
		fault_happened();
		v = last_fault_vector();
		check("arch-xsaves-advertised", v == NO_FAULT,
		      "CPUID says XSAVES, and it raised %s", vector_name(v));
	} else {
		skip("arch-xsaves-advertised", "CPUID does not advertise XSAVES");
	}
}

/* ---- self-IPIs while interrupts are off coalesce, as in the APIC's IRR ---- */

#define SELF_IPI_VECTOR		0x51
static volatile uint32_t self_ipis;

static void self_ipi_irq(struct trap_frame *frame)
{
	(void)frame;
	self_ipis++;
	apic_eoi();
}

static void send_self_ipi(uint8_t vector)
{
	apic_write(XAPIC_REG_ICR_HIGH, 0);
	apic_write(XAPIC_REG_ICR_LOW, (uint32_t)APIC_ICR_SHORTHAND_SELF | vector);
	for (unsigned int i = 0; i < 100000 && (apic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING); i++)
		pause();
}

static void check_self_ipi_coalesce(void)
{
	uint64_t t;

	apic_init();
	irq_register(SELF_IPI_VECTOR, self_ipi_irq);
	self_ipis = 0;
	cli();
	/* Three of the same vector before the CPU can take one: one IRR bit, one interrupt. */
	send_self_ipi(SELF_IPI_VECTOR);
	send_self_ipi(SELF_IPI_VECTOR);
	send_self_ipi(SELF_IPI_VECTOR);
	sti();
	for (t = rdtsc(); rdtsc() - t < 20000000ull;)
		pause();
	cli();
	check("arch-self-ipi-coalesce", self_ipis == 1,
	      "%u interrupts for three self-IPIs of vector 0x%x sent with IF=0",
	      (unsigned int)self_ipis, SELF_IPI_VECTOR);
}

/*
 * ---- priorities: a higher class nests, a lower one waits for the EOI ----
 * (SDM Vol. 3A 11.8.3, 11.8.4).  The outer handler sends itself a class-7
 * and a class-4 interrupt and enables interrupts: the class-7 one nests
 * (PPR 0x70, both in service), the class-4 one stays in the IRR until the
 * outer EOI.
 */
#define PRIO_OUTER_VECTOR	0x52
#define PRIO_INNER_VECTOR	0x72
#define PRIO_LOW_VECTOR		0x42

static volatile uint32_t prio_outer_ppr, prio_inner_ppr, prio_inner_isr_both;
static volatile uint32_t prio_low_irqs, prio_low_in_outer, prio_low_irr_in_outer, prio_inner_irqs;

static bool apic_vector_set(uint32_t reg, uint8_t vector)
{
	return apic_read(reg + (vector / 32) * 0x10) & (1u << (vector % 32));
}

static void prio_inner_irq(struct trap_frame *frame)
{
	(void)frame;
	prio_inner_ppr = apic_read(XAPIC_REG_PPR);
	prio_inner_isr_both = apic_vector_set(XAPIC_REG_ISR, PRIO_OUTER_VECTOR) &&
			      apic_vector_set(XAPIC_REG_ISR, PRIO_INNER_VECTOR);
	prio_inner_irqs++;
	apic_eoi();
}

static void prio_low_irq(struct trap_frame *frame)
{
	(void)frame;
	prio_low_irqs++;
	apic_eoi();
}

static void prio_outer_irq(struct trap_frame *frame)
{
	uint64_t t;

	(void)frame;
	prio_outer_ppr = apic_read(XAPIC_REG_PPR);
	send_self_ipi(PRIO_LOW_VECTOR);
	send_self_ipi(PRIO_INNER_VECTOR);
	sti();
	for (t = rdtsc(); rdtsc() - t < 2000000ull;)
		pause();
	cli();
	prio_low_in_outer = prio_low_irqs;
	prio_low_irr_in_outer = apic_vector_set(XAPIC_REG_IRR, PRIO_LOW_VECTOR);
	apic_eoi();
}

static void check_apic_priorities(void)
{
	uint64_t t;

	apic_init();
	irq_register(PRIO_OUTER_VECTOR, prio_outer_irq);
	irq_register(PRIO_INNER_VECTOR, prio_inner_irq);
	irq_register(PRIO_LOW_VECTOR, prio_low_irq);
	cli();
	send_self_ipi(PRIO_OUTER_VECTOR);
	sti();
	for (t = rdtsc(); rdtsc() - t < 20000000ull && !prio_low_irqs;)
		pause();
	cli();
	check("arch-apic-ppr-nested", prio_outer_ppr == 0x50 && prio_inner_irqs == 1 &&
	      prio_inner_ppr == 0x70 && prio_inner_isr_both,
	      "PPR 0x%x in the class-5 handler, %u class-7 interrupts, PPR 0x%x in it, both in "
	      "service: %s", (unsigned int)prio_outer_ppr, (unsigned int)prio_inner_irqs,
	      (unsigned int)prio_inner_ppr, prio_inner_isr_both ? "yes" : "no");
	check("arch-apic-lower-class-waits", !prio_low_in_outer && prio_low_irr_in_outer &&
	      prio_low_irqs == 1 && apic_read(XAPIC_REG_PPR) == 0,
	      "class-4 interrupt taken inside the class-5 handler %u times (in the IRR: %s), "
	      "%u after its EOI; PPR at the end 0x%x", (unsigned int)prio_low_in_outer,
	      prio_low_irr_in_outer ? "yes" : "no", (unsigned int)prio_low_irqs,
	      apic_read(XAPIC_REG_PPR));
}

/*
 * ---- an illegal vector (0-15) is not sent and is an error (SDM 11.5.3) ----
 * ESR reads what its last write latched: write, send, write, read.
 */
static void check_apic_esr_illegal_vector(void)
{
	uint32_t esr;

	/* QEMU's APIC sends the illegal vector: it would arrive as a #BR later. */
	if (tcg_lacks("arch-apic-esr-illegal-vector"))
		return;
	apic_init();
	cli();
	apic_write(XAPIC_REG_ESR, 0);
	send_self_ipi(0x05);
	apic_write(XAPIC_REG_ESR, 0);
	esr = apic_read(XAPIC_REG_ESR);
	apic_write(XAPIC_REG_ESR, 0);
	check("arch-apic-esr-illegal-vector",
	      esr & (APIC_ESR_SEND_ILLEGAL_VECTOR | APIC_ESR_RECEIVE_ILLEGAL_VECTOR),
	      "ESR 0x%x after a self-IPI of vector 5", esr);
}

void check_arch(void)
{
	check_xcr0_pairs();
	check_pat();
	check_tsc();
	check_mtrrs();
	check_misc_msrs();
	check_tsc_deadline_mode();
	check_tsc_deadline_illegal_vector();
	check_string_io_segments();
	check_string_io_paging();
	check_task_switch();
	check_cpuid_advertised();
	check_self_ipi_coalesce();
	check_apic_priorities();
	check_apic_esr_illegal_vector();
}
