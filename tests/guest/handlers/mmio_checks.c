// SPDX-License-Identifier: GPL-2.0-only
/*
 * The instructions kernels use on device memory, each executed against
 * the local APIC's TPR, the I/O APIC's IOREGSEL, and addresses no device
 * claims (a hole in the PCI range, the VGA window), and judged by what
 * the CPU and the machine give: each passes on bare Bochs
 * (tests/guest/bochs-bare.sh) as under exitplan, which emulates every
 * one of them (arch/vmx/mmio.c, x86_decode.c; issue 24, part 3).  Then
 * string I/O whose offset wraps at its address size (16 and 32 bits).
 * Each check restores what it changes.
 */
#include "console.h"
#include "exitplan.h"
#include "idt.h"
#include "mmio_checks.h"
#include "string.h"
#include "test.h"
#include "x86.h"

#define APIC_TPR	0xfee00080u
#define IOAPIC_IOREGSEL	0xfec00000u
#define IOAPIC_IOWIN	0xfec00010u
#define IOAPIC_REG_VER	0x01
/* A hole in Bochs's PCI range: nothing decodes it, reads all ones (mmio_attacks.c). */
#define UNCLAIMED	0xd0000100u
#define VGA_WINDOW	0x000a0000u

#define FL_CF	0x001u
#define FL_PF	0x004u
#define FL_ZF	0x040u
#define FL_SF	0x080u
#define FL_OF	0x800u
#define FL_ALU	(FL_CF | FL_PF | FL_ZF | FL_SF | FL_OF)

static volatile uint32_t *const tpr = (volatile uint32_t *)APIC_TPR;

static uint32_t tpr_get(void)
{
	return *tpr & 0xff;
}

/*
 * QEMU's TCG, where the guests also run (tests/guest/qemu-check.sh), is
 * not the reference for these: its APIC answers byte and word reads with
 * 0, and it checks no segment limit.  Such a check SKIPs there.
 */
static bool tcg_lacks(const char *name)
{
	if (!qemu_tcg_detected())
		return false;
	skip(name, "QEMU TCG does not model it");
	return true;
}

static void tpr_set(uint32_t v)
{
	*tpr = v;
}

/* RMW forms on the TPR (bits 7:0 writable; the rest reads 0). */
#define RMW(insn, value, out_flags)						\
	asm volatile(insn "\n\tpushf\n\tpop %0" : "=r"(out_flags) : "r"(value), "r"(APIC_TPR) \
		     : "memory", "cc")

static void check_apic_rmw(void)
{
	uint32_t f, a, c, t;

	tpr_set(0x10);
	RMW("lock orl $0x20, (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-lock-or", t == 0x30 && (f & FL_ALU) == FL_PF,
	      "TPR 0x%x, flags 0x%x (expected 0x30, PF)", t, f & FL_ALU);
	/* The form of `or %eax,0x1000(%r12)`: OR r/m32, r32 with a displacement. */
	asm volatile("orl %1, 0x80(%2)\n\tpushf\n\tpop %0"
		     : "=r"(f) : "r"(1), "r"(APIC_TPR - 0x80) : "memory", "cc");
	t = tpr_get();
	check("mmio-apic-or-reg", t == 0x31 && (f & FL_ALU) == 0,
	      "TPR 0x%x, flags 0x%x (expected 0x31, none)", t, f & FL_ALU);
	tpr_set(0x30);
	RMW("lock andl $0xf0, (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-lock-and", t == 0x30 && (f & FL_ALU) == FL_PF, "TPR 0x%x, flags 0x%x", t,
	      f & FL_ALU);
	RMW("lock xorl $0xff, (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-lock-xor", t == 0xcf && (f & FL_ALU) == FL_PF, "TPR 0x%x, flags 0x%x", t,
	      f & FL_ALU);
	RMW("lock addl $1, (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-lock-add", t == 0xd0 && (f & FL_ALU) == 0, "TPR 0x%x, flags 0x%x", t,
	      f & FL_ALU);
	RMW("lock subl $0xd0, (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-lock-sub-zero", t == 0 && (f & FL_ALU) == (FL_ZF | FL_PF),
	      "TPR 0x%x, flags 0x%x", t, f & FL_ALU);
	/* 0 - 1 borrows: CF and SF; the register keeps its low byte, 0xff. */
	RMW("lock subl $1, (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-lock-sub-borrow", t == 0xff && (f & FL_ALU) == (FL_CF | FL_SF | FL_PF),
	      "TPR 0x%x, flags 0x%x", t, f & FL_ALU);
	tpr_set(0x40);
	RMW("lock incl (%2)", 0, f);
	RMW("lock incl (%2)", 0, f);
	RMW("lock decl (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-inc-dec", t == 0x41 && (f & (FL_ZF | FL_SF)) == 0, "TPR 0x%x", t);
	RMW("lock notl (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-not", t == 0xbe, "TPR 0x%x (expected 0xbe)", t);
	/* TPR 0xbe reads 0x000000be: NEG gives 0xffffff42, CF set. */
	RMW("lock negl (%2)", 0, f);
	t = tpr_get();
	check("mmio-apic-neg", t == 0x42 && (f & (FL_CF | FL_SF | FL_ZF)) == (FL_CF | FL_SF),
	      "TPR 0x%x, flags 0x%x", t, f & FL_ALU);

	tpr_set(0x50);
	a = 0x60;
	asm volatile("xchg %0, (%1)" : "+r"(a) : "r"(APIC_TPR) : "memory");
	t = tpr_get();
	check("mmio-apic-xchg", a == 0x50 && t == 0x60, "register 0x%x, TPR 0x%x", a, t);

	a = 0x60;
	c = 0x70;
	asm volatile("lock cmpxchg %2, (%3)\n\tpushf\n\tpop %1"
		     : "+a"(a), "=r"(f) : "r"(c), "r"(APIC_TPR) : "memory", "cc");
	t = tpr_get();
	check("mmio-apic-cmpxchg-match", (f & FL_ZF) && a == 0x60 && t == 0x70,
	      "ZF %u, EAX 0x%x, TPR 0x%x", !!(f & FL_ZF), a, t);
	a = 0x60;
	asm volatile("lock cmpxchg %2, (%3)\n\tpushf\n\tpop %1"
		     : "+a"(a), "=r"(f) : "r"(0x33u), "r"(APIC_TPR) : "memory", "cc");
	t = tpr_get();
	check("mmio-apic-cmpxchg-mismatch", !(f & FL_ZF) && a == 0x70 && t == 0x70,
	      "ZF %u, EAX 0x%x, TPR 0x%x", !!(f & FL_ZF), a, t);

	a = 0x10;
	asm volatile("lock xadd %0, (%1)" : "+r"(a) : "r"(APIC_TPR) : "memory", "cc");
	t = tpr_get();
	check("mmio-apic-xadd", a == 0x70 && t == 0x80, "register 0x%x, TPR 0x%x", a, t);
	tpr_set(0);
}

static void check_apic_loads(void)
{
	uint32_t zb, sb, zw, sw, f1, f2, f3, f4, ah = 0x12345678, r = 0x90;

	tpr_set(0x80);
	asm volatile("movzbl (%1), %0" : "=r"(zb) : "r"(APIC_TPR) : "memory");
	asm volatile("movsbl (%1), %0" : "=r"(sb) : "r"(APIC_TPR) : "memory");
	asm volatile("movzwl (%1), %0" : "=r"(zw) : "r"(APIC_TPR) : "memory");
	asm volatile("movswl (%1), %0" : "=r"(sw) : "r"(APIC_TPR) : "memory");
	asm volatile("movb (%1), %%ah" : "+a"(ah) : "r"(APIC_TPR) : "memory");
	if (!tcg_lacks("mmio-apic-movzx-movsx"))
		check("mmio-apic-movzx-movsx", zb == 0x80 && sb == 0xffffff80 && zw == 0x80 &&
		      sw == 0x80 && ah == 0x12348078,
		      "movzbl 0x%x movsbl 0x%x movzwl 0x%x movswl 0x%x, movb to AH 0x%x",
		      zb, sb, zw, sw, ah);

	asm volatile("testl $0x80, (%1)\n\tpushf\n\tpop %0" : "=r"(f1) : "r"(APIC_TPR) : "memory", "cc");
	asm volatile("testb $0x40, (%1)\n\tpushf\n\tpop %0" : "=r"(f2) : "r"(APIC_TPR) : "memory", "cc");
	asm volatile("cmpl $0x80, (%1)\n\tpushf\n\tpop %0" : "=r"(f3) : "r"(APIC_TPR) : "memory", "cc");
	asm volatile("cmpl $0x81, (%1)\n\tpushf\n\tpop %0" : "=r"(f4) : "r"(APIC_TPR) : "memory", "cc");
	check("mmio-apic-test-cmp", (f1 & FL_ALU) == 0 && (f2 & FL_ALU) == (FL_ZF | FL_PF) &&
	      (f3 & FL_ALU) == (FL_ZF | FL_PF) && (f4 & FL_ALU) == (FL_CF | FL_SF | FL_PF),
	      "flags: test 0x%x, test 0x%x, cmp 0x%x, cmp 0x%x", f1 & FL_ALU, f2 & FL_ALU,
	      f3 & FL_ALU, f4 & FL_ALU);
	/* CMP r32, r/m32 and ADD r32, r/m32: the register is the destination. */
	asm volatile("cmpl (%2), %1\n\tpushf\n\tpop %0" : "=r"(f1) : "r"(r), "r"(APIC_TPR) : "memory", "cc");
	asm volatile("addl (%1), %0" : "+r"(r) : "r"(APIC_TPR) : "memory", "cc");
	check("mmio-apic-reg-dest", (f1 & FL_ALU) == 0 && r == 0x110, "cmp flags 0x%x, add 0x%x",
	      f1 & FL_ALU, r);
	tpr_set(0);
}

static void check_apic_strings(void)
{
	uint32_t edi = APIC_TPR, ecx = 1, esi, t, eax;
	static uint32_t src = 0xa0, dst;

	asm volatile("cld\n\trep stosl" : "+D"(edi), "+c"(ecx) : "a"(0x90) : "memory");
	t = tpr_get();
	check("mmio-apic-rep-stos", t == 0x90 && edi == APIC_TPR + 4 && ecx == 0,
	      "TPR 0x%x, EDI 0x%x, ECX %u", t, edi, ecx);
	esi = (uint32_t)(uintptr_t)&src;
	edi = APIC_TPR;
	ecx = 1;
	asm volatile("cld\n\trep movsl" : "+S"(esi), "+D"(edi), "+c"(ecx) : : "memory");
	t = tpr_get();
	check("mmio-apic-rep-movs-to", t == 0xa0 && ecx == 0 && edi == APIC_TPR + 4,
	      "TPR 0x%x, ECX %u", t, ecx);
	esi = APIC_TPR;
	edi = (uint32_t)(uintptr_t)&dst;
	asm volatile("cld\n\tmovsl" : "+S"(esi), "+D"(edi) : : "memory");
	esi = APIC_TPR;
	asm volatile("lodsl" : "=a"(eax), "+S"(esi) : : "memory");
	check("mmio-apic-movs-lods-from", dst == 0xa0 && eax == 0xa0, "MOVS 0x%x, LODS 0x%x", dst,
	      eax);
	tpr_set(0);
}

/* IOREGSEL is a latch: XCHG and MOVS select the version register as MOV does. */
static void check_ioapic(void)
{
	uint32_t sel = 0x10, ver, ver2, esi, edi, idx = IOAPIC_REG_VER;

	*(volatile uint32_t *)IOAPIC_IOREGSEL = IOAPIC_REG_VER;
	ver = *(volatile uint32_t *)IOAPIC_IOWIN;
	asm volatile("xchg %0, (%1)" : "+r"(sel) : "r"(IOAPIC_IOREGSEL) : "memory");
	esi = (uint32_t)(uintptr_t)&idx;
	edi = IOAPIC_IOREGSEL;
	asm volatile("cld\n\tmovsl" : "+S"(esi), "+D"(edi) : : "memory");
	ver2 = *(volatile uint32_t *)IOAPIC_IOWIN;
	check("mmio-ioapic-xchg-movs", sel == IOAPIC_REG_VER && ver2 == ver && (ver & 0xff) != 0xff,
	      "XCHG read IOREGSEL 0x%x, version 0x%x then 0x%x", sel, ver, ver2);
}

/* Where no device answers: all ones read, writes go nowhere. */
static void check_unclaimed(void)
{
	static uint32_t buf[16];
	uint32_t edi = UNCLAIMED, ecx = 16, esi, f1, f2, f3, v;
	bool ones = true;

	if (qemu_tcg_detected()) {
		skip("mmio-unclaimed-strings", "QEMU reads unassigned memory as 0");
		skip("mmio-unclaimed-test-cmp", "QEMU reads unassigned memory as 0");
		skip("mmio-unclaimed-cmps-scas", "QEMU reads unassigned memory as 0");
		return;
	}
	asm volatile("cld\n\trep stosl" : "+D"(edi), "+c"(ecx) : "a"(0x5a5a5a5a) : "memory");
	v = *(volatile uint32_t *)UNCLAIMED;
	memset(buf, 0, sizeof(buf));
	esi = UNCLAIMED;
	edi = (uint32_t)(uintptr_t)buf;
	ecx = 16;
	asm volatile("cld\n\trep movsl" : "+S"(esi), "+D"(edi), "+c"(ecx) : : "memory");
	for (unsigned int i = 0; i < 16; i++)
		ones = ones && buf[i] == 0xffffffffu;
	/* DF set: the index goes down. */
	edi = UNCLAIMED + 3;
	ecx = 4;
	asm volatile("std\n\trep stosb\n\tcld" : "+D"(edi), "+c"(ecx) : "a"(0) : "memory", "cc");
	check("mmio-unclaimed-strings", v == 0xffffffffu && ones && esi == UNCLAIMED + 64 &&
	      edi == UNCLAIMED - 1 && ecx == 0, "read 0x%x, copied all ones %d, ESI 0x%x, EDI 0x%x",
	      v, ones, esi, edi);

	/* REPE CMPSB against all ones stops at the first byte that differs; REPNE SCASD at a match. */
	{
		static uint8_t cmp[8];
		uint32_t fc, fs1, fs2, ecx2, ecx3;

		memset(cmp, 0xff, sizeof(cmp));
		cmp[5] = 0;
		esi = (uint32_t)(uintptr_t)cmp;
		edi = UNCLAIMED;
		ecx = 8;
		asm volatile("cld\n\trepe cmpsb\n\tpushf\n\tpop %0"
			     : "=r"(fc), "+S"(esi), "+D"(edi), "+c"(ecx) : : "memory", "cc");
		edi = UNCLAIMED;
		ecx2 = 4;
		asm volatile("cld\n\trepne scasl\n\tpushf\n\tpop %0"
			     : "=r"(fs1), "+D"(edi), "+c"(ecx2) : "a"(0) : "memory", "cc");
		edi = UNCLAIMED;
		ecx3 = 4;
		asm volatile("cld\n\trepne scasl\n\tpushf\n\tpop %0"
			     : "=r"(fs2), "+D"(edi), "+c"(ecx3) : "a"(0xffffffffu) : "memory", "cc");
		check("mmio-unclaimed-cmps-scas", ecx == 2 && esi == (uint32_t)(uintptr_t)cmp + 6 &&
		      (fc & (FL_ZF | FL_CF)) == FL_CF && ecx2 == 0 && !(fs1 & FL_ZF) && ecx3 == 3 &&
		      edi == UNCLAIMED + 4 && (fs2 & FL_ZF),
		      "REPE CMPSB left ECX %u, flags 0x%x; REPNE SCASD of 0: ECX %u, flags 0x%x; "
		      "of all ones: ECX %u, flags 0x%x", ecx, fc & FL_ALU, ecx2, fs1 & FL_ALU, ecx3,
		      fs2 & FL_ALU);
	}

	asm volatile("testb $1, (%1)\n\tpushf\n\tpop %0" : "=r"(f1) : "r"(UNCLAIMED) : "memory", "cc");
	asm volatile("cmpw $-1, (%1)\n\tpushf\n\tpop %0" : "=r"(f2) : "r"(UNCLAIMED) : "memory", "cc");
	asm volatile("lock orb $1, (%1)\n\tpushf\n\tpop %0" : "=r"(f3) : "r"(UNCLAIMED) : "memory", "cc");
	check("mmio-unclaimed-test-cmp", (f1 & FL_ALU) == 0 && (f2 & FL_ALU) == (FL_ZF | FL_PF) &&
	      (f3 & FL_ALU) == (FL_SF | FL_PF), "flags: test 0x%x, cmp 0x%x, or 0x%x", f1 & FL_ALU,
	      f2 & FL_ALU, f3 & FL_ALU);
}

/*
 * The VGA window: what a kernel's early console does (REP MOVSD of a
 * screen, TESTB walking the window).  Bare Bochs has VGA memory there;
 * exitplan grants none (reads all ones): only that it runs is compared.
 */
static void check_vga_window(void)
{
	static uint32_t line[40];
	uint32_t esi = (uint32_t)(uintptr_t)line, edi = VGA_WINDOW, ecx = 40;
	unsigned int walked = 0;

	asm volatile("cld\n\trep movsl" : "+S"(esi), "+D"(edi), "+c"(ecx) : : "memory");
	for (uint32_t a = VGA_WINDOW; a < VGA_WINDOW + 0x20000; a += 0x1000) {
		asm volatile("testb $0x80, (%0)" : : "r"(a) : "memory", "cc");
		walked++;
	}
	check("mmio-vga-rep-movs-testb", ecx == 0 && edi == VGA_WINDOW + 160 && walked == 32,
	      "ECX %u, EDI 0x%x, %u pages walked", ecx, edi, walked);
}

/* A REP STOS stops at the segment's limit with #GP, the elements before it done. */
static void check_string_segment_limit(void)
{
	struct { uint16_t limit; uint32_t base; } __attribute__((packed)) old, mine;
	static uint64_t gdt[6] __attribute__((aligned(8)));
	uint32_t edi = 0, ecx = 8, base = UNCLAIMED;
	int vector;

	asm volatile("sgdt %0" : "=m"(old));
	memcpy(gdt, (const void *)old.base, 5 * 8 < old.limit + 1 ? 5 * 8 : old.limit + 1);
	/* Read/write data at UNCLAIMED, limit 0xf, byte granular (flags B). */
	gdt[5] = (0xfull) | ((uint64_t)(base & 0xffffff) << 16) | (0x93ull << 40) |
		 (0x4ull << 52) | ((uint64_t)(base >> 24) << 56);
	mine.limit = sizeof(gdt) - 1;
	mine.base = (uint32_t)(uintptr_t)gdt;
	asm volatile("lgdt %0" : : "m"(mine));
	expect_fault(X86_EXC_GP);
	asm volatile("push %%es\n\t"
		     "mov %w[es], %%es\n\t"
		     ASM_TRY("1f")
		     "cld\n\t"
		     "rep stosl\n\t"
		     "1:\n\t"
		     "pop %%es"
		     : "+D"(edi), "+c"(ecx)
		     : [es] "r"(5 * 8), "a"(0)
		     : "memory");
	fault_happened();
	vector = last_fault_vector();
	asm volatile("lgdt %0" : : "m"(old));
	if (!tcg_lacks("mmio-rep-stos-es-limit"))
		check("mmio-rep-stos-es-limit", vector == X86_EXC_GP && edi == 0x10 && ecx == 4,
		      "%s, EDI 0x%x, ECX %u (expected #GP at 0x10 with 4 left)",
		      vector_name(vector), edi, ecx);
}

/*
 * String I/O whose offset wraps at its address size (SDM Vol. 1 3.3.6,
 * 7.3.9): REP INSB from port 0x92 (reads 0x02) with EDI 0xffffffff
 * writes the byte at 4 GiB - 1 (the BIOS ROM: dropped) and then at 0;
 * with a 16-bit address size DI 0xffff goes on at 0, EDI's and ECX's
 * upper halves untouched.
 */
static void check_string_io_wrap(void)
{
	uintptr_t zero;
	volatile uint8_t *low, *top16 = (volatile uint8_t *)0xffff;
	uint8_t save0, save1, save16 = *top16;
	uint32_t edi = 0xffffffffu, ecx = 2, esi;

	/* Address 0 through a register: a constant null pointer would be undefined behaviour in C. */
	asm("" : "=r"(zero) : "0"((uintptr_t)0));
	low = (volatile uint8_t *)zero;
	save0 = low[0];
	save1 = low[1];

	low[0] = 0xee;
	asm volatile("cld\n\trep insb" : "+D"(edi), "+c"(ecx) : "d"(0x92) : "memory");
	check("io-insb-wrap-32", edi == 1 && ecx == 0 && low[0] == 0x02,
	      "EDI 0x%x, ECX %u, byte at 0: 0x%x", edi, ecx, low[0]);
	low[0] = 0xee;
	*top16 = 0xee;
	edi = 0x1234ffffu;
	ecx = 0xabcd0002u;
	asm volatile("cld\n\taddr16 rep insb" : "+D"(edi), "+c"(ecx) : "d"(0x92) : "memory");
	check("io-insb-wrap-16", edi == 0x12340001u && ecx == 0xabcd0000u && low[0] == 0x02 &&
	      *top16 == 0x02, "EDI 0x%x, ECX 0x%x, bytes 0x%x 0x%x", edi, ecx, *top16, low[0]);
	/*
	 * INSW at EDI 0xffffffff: the word crosses the top of the flat 4-GiB
	 * ES, which Bochs lets wrap (SDM Vol. 3A 5.3 leaves it to the
	 * implementation): its high byte lands at 0.
	 */
	{
		uint16_t word;

		asm volatile("inw %%dx, %0" : "=a"(word) : "d"(0x92));
		low[0] = (uint8_t)~(word >> 8);
		edi = 0xffffffffu;
		ecx = 1;
		expect_fault(ANY_VECTOR);
		asm volatile(ASM_TRY("1f") "cld\n\trep insw\n\t1:"
			     : "+D"(edi), "+c"(ecx) : "d"(0x92) : "memory");
		fault_happened();
		check("io-insw-wrap-4g", last_fault_vector() == NO_FAULT && edi == 1 && ecx == 0 &&
		      low[0] == (uint8_t)(word >> 8), "%s, EDI 0x%x, ECX %u, byte at 0: 0x%x (want 0x%x)",
		      vector_name(last_fault_vector()), edi, ecx, low[0], word >> 8);
	}
	/* OUTSB from the top of the address space on into 0: port 0x80 (POST codes). */
	esi = 0xffffffffu;
	ecx = 2;
	asm volatile("cld\n\trep outsb" : "+S"(esi), "+c"(ecx) : "d"(0x80) : "memory");
	check("io-outsb-wrap-32", esi == 1 && ecx == 0, "ESI 0x%x, ECX %u", esi, ecx);
	low[0] = save0;
	low[1] = save1;
	*top16 = save16;
}

/*
 * The forms beyond MOV and the ALU ones (issue 25), on the TPR (32-bit
 * accesses, bits 7:0 writable) and where no device answers (all ones):
 * BT/BTS/BTR/BTC, shifts and rotates, SHLD/SHRD, MUL/DIV/IMUL, BSF/BSR,
 * CMOVcc, SETcc, SMSW, PUSH/POP m, CMPXCHG8B, MOVBE.  The values and the
 * flags the SDM defines, as bare Bochs gives them.
 */
static void check_apic_bit_shift(void)
{
	uint32_t f1, f2, f3, t1, t2, t3, t4;

	tpr_set(0);
	asm volatile("btsl $4, (%1)\n\tpushf\n\tpop %0" : "=r"(f1) : "r"(APIC_TPR) : "memory", "cc");
	t1 = tpr_get();
	asm volatile("btl %2, (%1)\n\tpushf\n\tpop %0" : "=r"(f2) : "r"(APIC_TPR), "r"(4) : "memory", "cc");
	/* An immediate offset is taken modulo 32 (a register's would address the next dword). */
	asm volatile("lock btcl $0x21, (%1)\n\tpushf\n\tpop %0" : "=r"(f3) : "r"(APIC_TPR) : "memory", "cc");
	t2 = tpr_get();
	asm volatile("btrl $4, (%0)" : : "r"(APIC_TPR) : "memory", "cc");
	t3 = tpr_get();
	check("mmio-apic-bt", t1 == 0x10 && !(f1 & FL_CF) && (f2 & FL_CF) && !(f3 & FL_CF) &&
	      t2 == 0x12 && t3 == 0x02, "TPR 0x%x 0x%x 0x%x, CF %u %u %u", t1, t2, t3,
	      f1 & FL_CF, f2 & FL_CF, f3 & FL_CF);

	tpr_set(0x21);
	asm volatile("shll $2, (%1)\n\tpushf\n\tpop %0" : "=r"(f1) : "r"(APIC_TPR) : "memory", "cc");
	t1 = tpr_get();
	asm volatile("shrl (%1)\n\tpushf\n\tpop %0" : "=r"(f2) : "r"(APIC_TPR) : "memory", "cc");
	t2 = tpr_get();
	/* 0x42 by CL = 7: bit 6 leaves last (CF), 0 stays. */
	asm volatile("shrl %%cl, (%1)\n\tpushf\n\tpop %0" : "=r"(f3) : "r"(APIC_TPR), "c"(7) : "memory", "cc");
	t3 = tpr_get();
	tpr_set(0x81);
	asm volatile("rorl $1, (%0)" : : "r"(APIC_TPR) : "memory", "cc");	/* 0x80000040: TPR 0x40 */
	t4 = tpr_get();
	check("mmio-apic-shift-rotate", t1 == 0x84 && (f1 & FL_ALU) == FL_PF && t2 == 0x42 &&
	      (f2 & FL_ALU) == FL_PF && t3 == 0 && (f3 & (FL_CF | FL_ZF)) == (FL_CF | FL_ZF) &&
	      t4 == 0x40, "TPR 0x%x 0x%x 0x%x 0x%x, flags 0x%x 0x%x 0x%x", t1, t2, t3, t4,
	      f1 & FL_ALU, f2 & FL_ALU, f3 & FL_ALU);

	tpr_set(0x0f);
	asm volatile("shldl $4, %1, (%0)" : : "r"(APIC_TPR), "r"(0xa0000000u) : "memory", "cc");
	t1 = tpr_get();
	asm volatile("shrdl %%cl, %1, (%0)" : : "r"(APIC_TPR), "r"(0x3u), "c"(4) : "memory", "cc");
	t2 = tpr_get();
	check("mmio-apic-shld-shrd", t1 == 0xfa && t2 == 0x0f, "TPR 0x%x then 0x%x", t1, t2);
	tpr_set(0);
}

static void check_apic_mul_div(void)
{
	uint32_t a, d, c, f1, f2, i1, i2, i3;
	bool z;

	tpr_set(0x42);
	a = 3;
	asm volatile("mull (%3)\n\tpushf\n\tpop %1" : "+a"(a), "=r"(f1), "=d"(d) : "r"(APIC_TPR) : "memory", "cc");
	c = 0x10000;
	asm volatile("imull (%2), %0\n\tpushf\n\tpop %1" : "+r"(c), "=r"(f2) : "r"(APIC_TPR) : "memory", "cc");
	check("mmio-apic-mul", a == 0xc6 && d == 0 && !(f1 & (FL_CF | FL_OF)) && c == 0x420000 &&
	      !(f2 & (FL_CF | FL_OF)), "MUL EDX:EAX %x:%x, IMUL 0x%x, flags 0x%x 0x%x", d, a, c, f1, f2);
	a = 1000;
	d = 0;
	asm volatile("divl (%2)" : "+a"(a), "+d"(d) : "r"(APIC_TPR) : "memory", "cc");
	c = 0;
	asm volatile("imull $-2, (%1), %0" : "=r"(c) : "r"(APIC_TPR) : "memory", "cc");
	check("mmio-apic-div", a == 1000 / 0x42 && d == 1000 % 0x42 && c == (uint32_t)-0x84,
	      "DIV: quotient %u remainder %u, IMUL imm 0x%x", a, d, c);

	/* A zero divisor: #DE, EAX and EDX unchanged. */
	tpr_set(0);
	a = 5;
	d = 0;
	expect_fault(X86_EXC_DE);
	asm volatile(ASM_TRY("1f") "divl (%2)\n\t1:" : "+a"(a), "+d"(d) : "r"(APIC_TPR) : "memory", "cc");
	fault_happened();
	check("mmio-apic-div-zero", last_fault_vector() == X86_EXC_DE && a == 5 && d == 0,
	      "%s, EDX:EAX %x:%x", vector_name(last_fault_vector()), d, a);

	tpr_set(0x28);
	i1 = i2 = 0x77;
	asm volatile("bsfl (%1), %0" : "+r"(i1) : "r"(APIC_TPR) : "memory", "cc");
	asm volatile("bsrl (%1), %0" : "+r"(i2) : "r"(APIC_TPR) : "memory", "cc");
	tpr_set(0);
	i3 = 0x77;
	asm volatile("bsfl (%2), %0\n\tsetz %1" : "+r"(i3), "=q"(z) : "r"(APIC_TPR) : "memory", "cc");
	check("mmio-apic-bsf-bsr", i1 == 3 && i2 == 5 && z, "BSF %u, BSR %u, ZF on 0 %d", i1, i2, z);
}

static void check_apic_cmov_stack(void)
{
	uint32_t r1 = 1, r2 = 2, t, pushed;

	tpr_set(0x33);
	asm volatile("cmpl %2, %2\n\tcmovel (%3), %0\n\tcmovnel (%3), %1"
		     : "+r"(r1), "+r"(r2) : "r"(0), "r"(APIC_TPR) : "memory", "cc");
	asm volatile("pushl (%1)\n\tpopl %0" : "=r"(pushed) : "r"(APIC_TPR) : "memory");
	asm volatile("pushl %0\n\tpopl (%1)" : : "r"(0x44), "r"(APIC_TPR) : "memory");
	t = tpr_get();
	check("mmio-apic-cmov-push-pop", r1 == 0x33 && r2 == 2 && pushed == 0x33 && t == 0x44,
	      "CMOVE 0x%x, CMOVNE 0x%x, PUSH 0x%x, POP -> TPR 0x%x", r1, r2, pushed, t);

	if (cpuid(1).ecx & (1u << 22)) {
		uint32_t v;

		tpr_set(0x12);
		asm volatile("movbe (%1), %0" : "=r"(v) : "r"(APIC_TPR) : "memory");
		asm volatile("movbe %0, (%1)" : : "r"(0x56000000u), "r"(APIC_TPR) : "memory");
		t = tpr_get();
		check("mmio-apic-movbe", v == 0x12000000u && t == 0x56, "load 0x%x, TPR 0x%x", v, t);
	} else {
		skip("mmio-apic-movbe", "no MOVBE (CPUID.01H:ECX.MOVBE[bit 22] = 0)");
	}
	tpr_set(0);
}

static void check_unclaimed_more(void)
{
	volatile uint8_t *u = (volatile uint8_t *)UNCLAIMED;
	uint32_t a, d, b, c, f, i, cr0;
	uint16_t msw;

	if (qemu_tcg_detected()) {
		skip("mmio-unclaimed-more", "QEMU reads unassigned memory as 0");
		return;
	}
	/* SETcc and SMSW write nowhere; CMPXCHG8B against all ones matches, then not. */
	asm volatile("cmpl %0, %0\n\tsete (%1)" : : "r"(0), "r"(UNCLAIMED) : "memory", "cc");
	asm volatile("smsw (%0)" : : "r"(UNCLAIMED) : "memory");
	asm volatile("smsw %0" : "=r"(msw));
	asm volatile("mov %%cr0, %0" : "=r"(cr0));
	a = d = 0xffffffffu;
	b = 1;
	c = 2;
	asm volatile("lock cmpxchg8b (%4)\n\tpushf\n\tpop %2"
		     : "+a"(a), "+d"(d), "=r"(f) : "b"(b), "r"(UNCLAIMED), "c"(c) : "memory", "cc");
	i = (f & FL_ZF) ? 1 : 0;
	a = d = 0;
	asm volatile("lock cmpxchg8b (%4)\n\tpushf\n\tpop %2"
		     : "+a"(a), "+d"(d), "=r"(f) : "b"(b), "r"(UNCLAIMED), "c"(c) : "memory", "cc");
	check("mmio-unclaimed-more", u[0] == 0xff && msw == (uint16_t)cr0 && i == 1 && !(f & FL_ZF) &&
	      a == 0xffffffffu && d == 0xffffffffu, "byte 0x%x, SMSW 0x%x (CR0 0x%x), "
	      "CMPXCHG8B ZF %u then %u, EDX:EAX %x:%x", u[0], msw, cr0, i, !!(f & FL_ZF), d, a);
	/* MULB of all ones; ROLW, SARB, RCLB leave it all ones and set CF. */
	a = 2;
	asm volatile("mulb (%1)" : "+a"(a) : "r"(UNCLAIMED) : "memory", "cc");
	asm volatile("rolw $3, (%1)\n\tsarb %%cl, (%1)\n\tstc\n\trclb (%1)\n\tpushf\n\tpop %0"
		     : "=r"(f) : "r"(UNCLAIMED), "c"(3) : "memory", "cc");
	check("mmio-unclaimed-mul-shift", (a & 0xffff) == 0x1fe && (f & FL_CF),
	      "MULB AX 0x%x, CF after RCL %u", a & 0xffff, f & FL_CF);
}

/*
 * An operand that crosses from one page no device claims into the next:
 * hardware splits the access, each piece reading all ones and its write
 * going nowhere: a load, a store, a LOCK OR (a split lock, which
 * hardware allows).
 */
static void check_crossing(void)
{
	uint32_t v = 0, f;
	uint16_t w = 0;
	uint32_t addr = UNCLAIMED - 0x100 + 0xffe;	/* 0xd0000ffe: 2 bytes, then 2 in the next page */

	if (qemu_tcg_detected()) {
		skip("mmio-unclaimed-crossing", "QEMU reads unassigned memory as 0");
		return;
	}
	asm volatile("movl (%1), %0" : "=r"(v) : "r"(addr) : "memory");
	asm volatile("movw %1, (%0)" : : "r"(addr + 1), "r"((uint16_t)0x1234) : "memory");
	asm volatile("movw (%1), %0" : "=r"(w) : "r"(addr + 1) : "memory");
	asm volatile("lock orl $1, (%1)\n\tpushf\n\tpop %0" : "=r"(f) : "r"(addr) : "memory", "cc");
	check("mmio-unclaimed-crossing", v == 0xffffffffu && w == 0xffff && (f & FL_SF),
	      "dword 0x%x, word after a write 0x%x, LOCK OR flags 0x%x", v, w, f & FL_ALU);
}

/*
 * The SSE moves: MOVUPS and MOVSS loads where no device answers (all
 * ones; MOVSS clears the rest of the register), a MOVUPS store there
 * (dropped), MOVD from and to the TPR.  OSFXSR set, EM and TS clear, for
 * the check alone.
 */
static void check_sse(void)
{
	static uint32_t out[3][4] __attribute__((aligned(16)));
	static const uint32_t pattern[4] = { 0x11111111, 0x22222222, 0x33333333, 0x44444444 };
	uint32_t cr0, cr4, t, d = 0;
	bool ok;

	if (!(cpuid(1).edx & (1u << 25))) {
		skip("mmio-sse-moves", "no SSE");
		return;
	}
	if (qemu_tcg_detected()) {
		skip("mmio-sse-moves", "QEMU reads unassigned memory as 0");
		return;
	}
	asm volatile("mov %%cr0, %0; mov %%cr4, %1" : "=r"(cr0), "=r"(cr4));
	asm volatile("mov %0, %%cr4" : : "r"(cr4 | (1u << 9)));
	asm volatile("mov %0, %%cr0" : : "r"(cr0 & ~0xcu));
	tpr_set(0x27);
	asm volatile("movups (%0), %%xmm0\n\t"
		     "movss (%0), %%xmm1\n\t"
		     "movups (%1), %%xmm2\n\t"
		     "movups %%xmm2, (%0)\n\t"
		     "movups (%0), %%xmm3\n\t"
		     "movups %%xmm0, (%2)\n\t"
		     "movups %%xmm1, 16(%2)\n\t"
		     "movups %%xmm3, 32(%2)\n\t"
		     "movd (%3), %%xmm4\n\t"
		     "movd %%xmm4, %4\n\t"
		     "movd %5, %%xmm5\n\t"
		     "movd %%xmm5, (%3)"
		     : : "r"(UNCLAIMED), "r"(pattern), "r"(out), "r"(APIC_TPR), "m"(d), "r"(0x35)
		     : "memory");
	t = tpr_get();
	asm volatile("mov %0, %%cr0; mov %1, %%cr4" : : "r"(cr0), "r"(cr4));
	ok = d == 0x27 && t == 0x35;
	for (unsigned int k = 0; k < 4; k++)
		ok = ok && out[0][k] == 0xffffffffu && out[1][k] == (k ? 0 : 0xffffffffu) &&
		     out[2][k] == 0xffffffffu;
	check("mmio-sse-moves", ok, "MOVUPS %08x.., MOVSS %08x %08x.., after a store %08x.., "
	      "MOVD from TPR 0x%x, to it -> 0x%x", out[0][0], out[1][0], out[1][1], out[2][0], d, t);
	tpr_set(0);
}

/*
 * LTR and LLDT with their selector where no device answers: 0xffff, an
 * LDT selector, so #GP with the selector (0xfffc) as the error code.
 */
static void check_ltr_lldt(void)
{
	int v1, v2;
	uint32_t e1, e2;

	if (qemu_tcg_detected()) {
		skip("mmio-unclaimed-ltr-lldt", "QEMU reads unassigned memory as 0");
		return;
	}
	expect_fault(X86_EXC_GP);
	asm volatile(ASM_TRY("1f") "ltr (%0)\n\t1:" : : "r"(UNCLAIMED) : "memory");
	fault_happened();
	v1 = last_fault_vector();
	e1 = last_fault_error_code();
	expect_fault(X86_EXC_GP);
	asm volatile(ASM_TRY("1f") "lldt (%0)\n\t1:" : : "r"(UNCLAIMED) : "memory");
	fault_happened();
	v2 = last_fault_vector();
	e2 = last_fault_error_code();
	check("mmio-unclaimed-ltr-lldt", v1 == X86_EXC_GP && e1 == 0xfffc && v2 == X86_EXC_GP &&
	      e2 == 0xfffc, "LTR: %s (0x%x), LLDT: %s (0x%x)", vector_name(v1), e1,
	      vector_name(v2), e2);
}

void check_mmio_forms(void)
{
	check_crossing();
	check_ltr_lldt();
	check_sse();
	check_apic_bit_shift();
	check_apic_mul_div();
	check_apic_cmov_stack();
	check_unclaimed_more();
	check_apic_rmw();
	check_apic_loads();
	check_apic_strings();
	check_ioapic();
	check_unclaimed();
	check_vga_window();
	check_string_segment_limit();
	check_string_io_wrap();
}
