// SPDX-License-Identifier: GPL-2.0-only
/*
 * The handlers guest: one or more named checks for every exit handler
 * exitplan must have.  docs/GUESTS.md lists what the hypervisor must
 * provide for each.  Under QEMU (no exitplan) the checks that need
 * exitplan FAIL (the signature) or SKIP; all others pass.
 *
 * Options: quick (fewer iterations), expect_cmdline=W1,W2,... (the words
 * of the command line other than the image name and this option itself),
 * expect_modules=N (the number of multiboot modules the guest gets; each
 * is printed with its size, FNV-1a hash and command line),
 * apic-modes-only (only the local APIC mode transitions, apic_mode_checks.c),
 * mmio-forms-only (only the instructions on MMIO, mmio_checks.c),
 * interrupts-only (only the interrupt-delivery checks, intr_checks.c, in
 * xAPIC and then x2APIC mode; with firmware-pic, which leaves the 8259s
 * and the 8254 as the firmware did, first the firmware's timer).
 */
#include "acpi.h"
#include "apic.h"
#include "apic_mode_checks.h"
#include "arch_checks.h"
#include "mmio_checks.h"
#include "cpuid_msr_checks.h"
#include "console.h"
#include "exitplan.h"
#include "fw_cfg.h"
#include "hypercall.h"
#include "idt.h"
#include "intr_checks.h"
#include "boot.h"
#include "string.h"
#include "task_checks.h"
#include "test.h"
#include "vmx_exit_reasons.h"	/* generated from spec/exit_reasons.yaml */
#include "x86.h"

const char guest_name[] = "handlers";

extern const char __image_start[], __image_end[];	/* guest.ld */

/* COM1's scratch register: passed through, and it keeps the last byte. */
#define COM1_SCRATCH		0x3ff
/* An MSR index no CPU model implements; outside the MSR bitmap's ranges. */
#define MSR_NONEXISTENT		0x40001234u
#define HYPERCALL_UNKNOWN	0xdead
/*
 * DR7's LE and GE (bits 8, 9; SDM Vol. 3B 18.2.4): read back as written
 * and enable no breakpoint.  Not in spec/arch.yaml: only this check uses them.
 */
#define DR7_LE_GE		(3u << 8)

/* Ticks to wait for a timer interrupt before declaring it lost. */
#define IRQ_WAIT_TICKS		200000000ull
#define APIC_TIMER_COUNT	20000
#define TSC_DEADLINE_DELTA	20000

static bool quick;
static bool under_exitplan;
static bool under_tcg;		/* QEMU TCG: skip what it is known to lack */
static bool tcg_msr_skips;	/* ... unless notcgskip asks to see it fail */

static const char *need_exitplan = "not running under exitplan";

/* ---- multiboot ---- */

static bool is_image_name(const char *word, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (word[i] == '/')
			return true;
	return len > 4 && !memcmp(word + len - 4, ".elf", 4);
}

/*
 * The words of the command line, comma-joined, without the image name
 * (first word, when it looks like a path) and without expect_cmdline=.
 */
static void cmdline_words(char *out, size_t size)
{
	const char *p = cmdline();
	size_t n = 0;
	bool first = true;

	out[0] = '\0';
	while (*p) {
		const char *w;
		size_t len;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		w = p;
		while (*p && *p != ' ')
			p++;
		len = (size_t)(p - w);
		if (first && is_image_name(w, len)) {
			first = false;
			continue;
		}
		first = false;
		if (len >= 15 && !memcmp(w, "expect_cmdline=", 15))
			continue;
		if (n && n + 1 < size)
			out[n++] = ',';
		for (size_t i = 0; i < len && n + 1 < size; i++)
			out[n++] = w[i];
		out[n] = '\0';
	}
}

static void check_multiboot(void)
{
	const struct multiboot_info *mbi = multiboot_info;
	uint32_t want = MULTIBOOT_INFO_MEMORY | MULTIBOOT_INFO_CMDLINE |
			MULTIBOOT_INFO_MEM_MAP;
	uint64_t image_lo = (uintptr_t)__image_start, image_hi = (uintptr_t)__image_end;
	bool image_covered = false;
	unsigned int ram_ranges = 0;
	char words[1024], expect[1024];

	if (!check("multiboot-magic", multiboot_magic == MULTIBOOT_BOOTLOADER_MAGIC,
		   "EAX 0x%08x", multiboot_magic)) {
		skip("multiboot-info", "no multiboot information");
		return;
	}
	check("multiboot-flags", (mbi->flags & want) == want,
	      "flags 0x%x, want mem, cmdline and mmap (0x%x)", mbi->flags, want);
	if (mbi->flags & MULTIBOOT_INFO_MEMORY) {
		printf("multiboot: mem_lower %u KiB, mem_upper %u KiB\n",
		       mbi->mem_lower, mbi->mem_upper);
		check("multiboot-mem", mbi->mem_lower > 0 && mbi->mem_lower <= 640 &&
		      (uint64_t)mbi->mem_upper * 1024 + 0x100000 >= image_hi,
		      "mem_lower %u KiB, mem_upper %u KiB, image ends at 0x%llx",
		      mbi->mem_lower, mbi->mem_upper, image_hi);
	}
	if (mbi->flags & MULTIBOOT_INFO_MEM_MAP) {
		uintptr_t p = mbi->mmap_addr, end = mbi->mmap_addr + mbi->mmap_length;

		while (p + sizeof(struct multiboot_mmap_entry) <= end) {
			const struct multiboot_mmap_entry *e = phys_ptr(p);
			uint64_t lo = e->addr, hi = e->addr + e->len;

			printf("multiboot: mmap [0x%09llx, 0x%09llx) type %u\n",
			       lo, hi, e->type);
			if (e->type == MULTIBOOT_MEMORY_AVAILABLE) {
				if (lo <= image_lo && hi >= image_hi)
					image_covered = true;
				if (hi > 0x100000 && lo < 0x100000000ull)
					ram_ranges++;	/* RAM above 1 MiB, below 4 GiB */
			}
			p += e->size + sizeof(e->size);
		}
		check("multiboot-mmap-covers-image", image_covered,
		      "no available range holds [0x%llx, 0x%llx)", image_lo, image_hi);
		/* As on bare hardware: the hypervisor sits above the guest's RAM. */
		check("multiboot-mmap-one-ram-range", ram_ranges == 1,
		      "%u available ranges between 1 MiB and 4 GiB", ram_ranges);
	}
	cmdline_words(words, sizeof(words));
	if (cmdline_value("expect_cmdline", expect, sizeof(expect)))
		check("multiboot-cmdline", !strcmp(words, expect),
		      "words \"%s\", expected \"%s\"", words, expect);
	else
		skip("multiboot-cmdline", "no expect_cmdline= option; words \"%s\"",
		     words);
}

/* 32-bit FNV-1a: tests/boot compares it with the module file's. */
static uint32_t fnv1a(const uint8_t *p, uint32_t n)
{
	uint32_t h = 0x811c9dc5u;

	while (n--) {
		h ^= *p++;
		h *= 0x01000193u;
	}
	return h;
}

/*
 * The modules after the kernel, as a boot loader passes them: in order,
 * each with its command line (QEMU's -initrd, GRUB's module lines).
 */
static void check_modules(void)
{
	const struct multiboot_info *mbi = multiboot_info;
	const struct multiboot_module *mods = phys_ptr(mbi->mods_addr);
	uint32_t count = (mbi->flags & MULTIBOOT_INFO_MODS) ? mbi->mods_count : 0;
	bool sane = true;
	char want[16];

	if (multiboot_magic != MULTIBOOT_BOOTLOADER_MAGIC) {
		skip("multiboot-modules", "no multiboot information");
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		const struct multiboot_module *m = &mods[i];
		const char *line = m->cmdline ? phys_ptr(m->cmdline) : "";

		if (m->mod_end < m->mod_start) {
			sane = false;
			continue;
		}
		printf("multiboot: module %u: %u bytes, fnv1a 0x%08x, command line \"%s\"\n",
		       i, m->mod_end - m->mod_start,
		       fnv1a(phys_ptr(m->mod_start), m->mod_end - m->mod_start), line);
	}
	check("multiboot-modules-sane", sane, "a module ends before it starts");
	if (cmdline_value("expect_modules", want, sizeof(want)))
		check("multiboot-modules", count == cmdline_u32("expect_modules", 0),
		      "%u modules, expected %s", count, want);
	else
		skip("multiboot-modules", "no expect_modules= option; %u modules", count);
}

/* ---- exceptions (the guest's own IDT works at all) ---- */

static void check_exceptions(void)
{
	uint16_t bad_selector = 0x1238;	/* beyond the 3-entry GDT */

	expect_fault(X86_EXC_UD);
	asm volatile(ASM_TRY("1f") "ud2\n\t1:" : : : "memory");
	check("exception-ud2", fault_happened(), "got %s",
	      vector_name(last_fault_vector()));

	expect_fault(X86_EXC_BP);
	asm volatile(ASM_TRY("1f") "int3\n\t1:" : : : "memory");
	check("exception-int3", fault_happened(), "got %s",
	      vector_name(last_fault_vector()));

	/* #GP with the selector as the error code (SDM Vol. 3A, 6.13). */
	expect_fault(X86_EXC_GP);
	asm volatile(ASM_TRY("1f") "movw %0, %%fs\n\t1:" : : "r"(bad_selector) : "memory");
	check("exception-gp-error-code",
	      fault_happened() && last_fault_error_code() == (bad_selector & ~7u),
	      "got %s, error code 0x%x", vector_name(last_fault_vector()),
	      last_fault_error_code());
}

/* ---- CPUID ---- */

static bool printable(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

static void check_cpuid(void)
{
	struct cpuid_regs r0 = cpuid(0), r1 = cpuid(CPUID_LEAF_FEATURES);
	struct hv_signature sig = exitplan_signature();
	char vendor[13];
	char shown[13];

	memcpy(vendor + 0, &r0.ebx, 4);
	memcpy(vendor + 4, &r0.edx, 4);
	memcpy(vendor + 8, &r0.ecx, 4);
	vendor[12] = '\0';
	printf("cpuid: vendor \"%s\", max leaf 0x%x, leaf 1 eax 0x%08x ecx 0x%08x edx 0x%08x\n",
	       printable(vendor, 12) ? vendor : "?", r0.eax, r1.eax, r1.ecx, r1.edx);
	check("cpuid-vendor", r0.eax >= 1 && vendor[0] != '\0' && printable(vendor, 12),
	      "max leaf 0x%x, vendor bytes %08x %08x %08x", r0.eax, r0.ebx, r0.edx,
	      r0.ecx);
	/* Family, model, stepping: a sane leaf 1 has a non-zero family. */
	check("cpuid-leaf1", ((r1.eax >> 8) & 0xf) != 0 && (r1.edx & CPUID_1_EDX_APIC),
	      "leaf 1 eax 0x%08x edx 0x%08x", r1.eax, r1.edx);
	check("cpuid-hypervisor-bit", r1.ecx & CPUID_1_ECX_HYPERVISOR,
	      "leaf 1 ecx 0x%08x", r1.ecx);

	for (int i = 0; i < 12; i++)
		shown[i] = sig.text[i] >= 0x20 && sig.text[i] <= 0x7e ? sig.text[i] : '.';
	shown[12] = '\0';
	under_exitplan = exitplan_detected();
	under_tcg = qemu_tcg_detected();
	tcg_msr_skips = under_tcg && !cmdline_has("notcgskip");
	check("cpuid-signature", under_exitplan,
	      "leaf 0x40000000: eax 0x%08x, signature \"%s\"", sig.max_leaf, shown);
	if (under_exitplan)
		check("cpuid-vmx-hidden", !(r1.ecx & CPUID_1_ECX_VMX),
		      "leaf 1 ecx 0x%08x advertises VMX, which exitplan refuses",
		      r1.ecx);
	else
		skip("cpuid-vmx-hidden", "%s", need_exitplan);
}

/* ---- VMCALL ---- */

static void check_hypercall_puts(void)
{
	static const char msg[] = "guest handlers: this line came through PUTS\n";
	int32_t ret;

	ret = hypercall4(HYPERCALL_PUTS, (uintptr_t)msg, sizeof(msg) - 1, 0, 0);
	check("vmcall-puts", ret == (int32_t)(sizeof(msg) - 1),
	      "PUTS of %u bytes returned %d", (unsigned int)(sizeof(msg) - 1), ret);
	/* The hypervisor's own memory is no guest memory: EFAULT, no crash. */
	ret = hypercall4(HYPERCALL_PUTS, exitplan_hv_start(), 16, 0, 0);
	check("vmcall-puts-efault", ret == HYPERCALL_EFAULT,
	      "PUTS from GPA 0x%x (the hypervisor's image) returned %d, expected %d",
	      exitplan_hv_start(), ret, HYPERCALL_EFAULT);
}

static void check_hypercall_stats(void)
{
	int32_t before, after, beyond;

	before = hypercall4(HYPERCALL_STATS_READ, EXIT_REASON_CPUID, 0, 0, 0);
	if (before == HYPERCALL_ENOSYS) {
		skip("vmcall-stats-read", "this profile counts no exits");
		skip("vmcall-stats-read-einval", "this profile counts no exits");
		return;
	}
	cpuid(0);
	after = hypercall4(HYPERCALL_STATS_READ, EXIT_REASON_CPUID, 0, 0, 0);
	check("vmcall-stats-read", after - before == 1,
	      "CPUID count went from %d to %d over one CPUID", before, after);
	/* Slot VMX_EXIT_REASON_MAX + 1 is "above the highest"; beyond: EINVAL. */
	beyond = hypercall4(HYPERCALL_STATS_READ, VMX_EXIT_REASON_MAX + 2, 0, 0, 0);
	check("vmcall-stats-read-einval", beyond == HYPERCALL_EINVAL,
	      "STATS_READ(%d) returned %d, expected %d", VMX_EXIT_REASON_MAX + 2,
	      beyond, HYPERCALL_EINVAL);
}

static void check_hypercalls(void)
{
	uint32_t b = 0x11111111, c = 0x22222222, d = 0x33333333;
	uint32_t s = 0x44444444, di = 0x55555555, ret;
	int32_t version;

	if (!under_exitplan) {
		skip("vmcall-version", "%s", need_exitplan);
		skip("vmcall-nop", "%s", need_exitplan);
		skip("vmcall-unknown", "%s", need_exitplan);
		skip("vmcall-preserves-registers", "%s", need_exitplan);
		skip("vmcall-puts", "%s", need_exitplan);
		skip("vmcall-puts-efault", "%s", need_exitplan);
		skip("vmcall-stats-read", "%s", need_exitplan);
		skip("vmcall-stats-read-einval", "%s", need_exitplan);
		return;
	}
	version = hypercall0(HYPERCALL_VERSION);
	check("vmcall-version", version >= 1 && version == HYPERCALL_ABI_VERSION,
	      "VERSION returned %d, expected %d", version, HYPERCALL_ABI_VERSION);
	check("vmcall-nop", hypercall0(HYPERCALL_NOP) == 0, "NOP did not return 0");
	ret = (uint32_t)hypercall0(HYPERCALL_UNKNOWN);
	check("vmcall-unknown", (int32_t)ret == HYPERCALL_ENOSYS,
	      "hypercall 0x%x returned %d, expected %d", HYPERCALL_UNKNOWN,
	      (int32_t)ret, HYPERCALL_ENOSYS);

	/* Only EAX is the result: every other register must survive. */
	asm volatile("vmcall"
		     : "=a"(ret), "+b"(b), "+c"(c), "+d"(d), "+S"(s), "+D"(di)
		     : "a"(HYPERCALL_NOP)
		     : "memory");
	check("vmcall-preserves-registers",
	      b == 0x11111111 && c == 0x22222222 && d == 0x33333333 &&
	      s == 0x44444444 && di == 0x55555555,
	      "ebx %08x ecx %08x edx %08x esi %08x edi %08x", b, c, d, s, di);

	check_hypercall_puts();
	check_hypercall_stats();
}

/* ---- RDMSR / WRMSR ---- */

static void check_msrs(void)
{
	uint64_t v = 0;
	int vec;

	if (cpuid(CPUID_LEAF_EXT_BASE).eax >= CPUID_LEAF_EXT_FEATURES &&
	    (cpuid(CPUID_LEAF_EXT_FEATURES).edx & CPUID_80000001_EDX_RDTSCP)) {
		uint64_t saved = rdmsr(MSR_IA32_TSC_AUX);
		uint32_t aux_seen;

		wrmsr(MSR_IA32_TSC_AUX, 0x1234);
		v = rdmsr(MSR_IA32_TSC_AUX);
		asm volatile("rdtscp" : "=c"(aux_seen) : : "eax", "edx");
		wrmsr(MSR_IA32_TSC_AUX, saved);
		check("msr-tsc-aux-roundtrip", v == 0x1234 && aux_seen == 0x1234,
		      "RDMSR 0x%llx, RDTSCP ECX 0x%x after writing 0x1234", v, aux_seen);
	} else {
		skip("msr-tsc-aux-roundtrip", "no RDTSCP (CPUID 0x80000001 EDX[27])");
	}

	if (tcg_msr_skips) {
		/* QEMU 7.2's TCG silently ignores MSRs it does not know. */
		skip("msr-nonexistent-read-gp", "QEMU TCG raises no #GP for unknown MSRs");
		skip("msr-nonexistent-write-gp", "QEMU TCG raises no #GP for unknown MSRs");
		return;
	}
	vec = rdmsr_safe(MSR_NONEXISTENT, &v);
	check("msr-nonexistent-read-gp", vec == X86_EXC_GP,
	      "RDMSR 0x%x: %s, value 0x%llx", MSR_NONEXISTENT, vector_name(vec), v);
	vec = wrmsr_safe(MSR_NONEXISTENT, 0);
	check("msr-nonexistent-write-gp", vec == X86_EXC_GP,
	      "WRMSR 0x%x: %s", MSR_NONEXISTENT, vector_name(vec));
}

/* ---- I/O instructions ---- */

/* Room for a string IN across a page boundary, with guard bytes. */
static uint8_t io_pages[2 * 4096] __attribute__((aligned(4096)));

static void check_io(void)
{
	static const uint16_t keys[2] = { FW_CFG_NB_CPUS, FW_CFG_SIGNATURE };
	static const char scratch_bytes[4] = { 'w', 'x', 'y', 'z' };
	char sig[5] = { 0 };
	uint8_t *cross = io_pages + 4096 - 2;	/* 2 bytes each side */
	const void *src;
	void *dst;
	uint32_t count;
	uint8_t b[2];

	/* OUT (word, DX) to a trapped port, IN (byte, DX) from one. */
	fw_cfg_select(FW_CFG_SIGNATURE);
	fw_cfg_read(sig, 4);
	check("io-fw_cfg-inb", !memcmp(sig, "QEMU", 4),
	      "read %02x %02x %02x %02x", (uint8_t)sig[0], (uint8_t)sig[1],
	      (uint8_t)sig[2], (uint8_t)sig[3]);

	/*
	 * Word and dword IN from the data port: exitplan returns that many
	 * successive bytes of the item, little endian.  (QEMU's port
	 * fw_cfg accepts only byte reads of the data port.)
	 */
	if (under_exitplan) {
		uint16_t w0, w1;
		uint32_t l;

		fw_cfg_select(FW_CFG_SIGNATURE);
		w0 = inw(FW_CFG_PORT_DATA);
		w1 = inw(FW_CFG_PORT_DATA);
		fw_cfg_select(FW_CFG_SIGNATURE);
		l = inl(FW_CFG_PORT_DATA);
		check("io-fw_cfg-inw-inl", w0 == ('Q' | 'E' << 8) && w1 == ('M' | 'U' << 8) &&
		      l == ('Q' | 'E' << 8 | 'M' << 16 | (uint32_t)'U' << 24),
		      "INW 0x%04x 0x%04x, INL 0x%08x", w0, w1, l);

		memset(sig, 0, sizeof(sig));
		fw_cfg_select(FW_CFG_SIGNATURE);
		dst = sig;
		count = 2;
		asm volatile("rep insw" : "+D"(dst), "+c"(count) : "d"(FW_CFG_PORT_DATA)
			     : "memory");
		check("io-fw_cfg-rep-insw", !memcmp(sig, "QEMU", 4) && count == 0 &&
		      dst == sig + 4,
		      "read %02x %02x %02x %02x, ECX %u, EDI advanced by %d",
		      (uint8_t)sig[0], (uint8_t)sig[1], (uint8_t)sig[2],
		      (uint8_t)sig[3], count, (int)((char *)dst - sig));
	} else {
		skip("io-fw_cfg-inw-inl", "%s", need_exitplan);
		skip("io-fw_cfg-rep-insw", "%s", need_exitplan);
	}

	/* REP INSB from a trapped port: data, and EDI/ECX updated. */
	memset(sig, 0, sizeof(sig));
	fw_cfg_select(FW_CFG_SIGNATURE);
	dst = sig;
	count = 4;
	asm volatile("rep insb" : "+D"(dst), "+c"(count) : "d"(FW_CFG_PORT_DATA) : "memory");
	check("io-fw_cfg-rep-insb",
	      !memcmp(sig, "QEMU", 4) && count == 0 && dst == sig + 4,
	      "read %02x %02x %02x %02x, ECX %u, EDI advanced by %d",
	      (uint8_t)sig[0], (uint8_t)sig[1], (uint8_t)sig[2], (uint8_t)sig[3],
	      count, (int)((char *)dst - sig));

	/* With EFLAGS.DF set the string goes downwards: "QEMU" lands reversed. */
	memset(sig, 0, sizeof(sig));
	fw_cfg_select(FW_CFG_SIGNATURE);
	dst = sig + 3;
	count = 4;
	asm volatile("std\n\t"
		     "rep insb\n\t"
		     "cld"
		     : "+D"(dst), "+c"(count) : "d"(FW_CFG_PORT_DATA) : "memory", "cc");
	check("io-fw_cfg-rep-insb-backwards",
	      !memcmp(sig, "UMEQ", 4) && count == 0 &&
	      (uintptr_t)dst == (uintptr_t)sig - 1,
	      "read %02x %02x %02x %02x, ECX %u, EDI moved by %d",
	      (uint8_t)sig[0], (uint8_t)sig[1], (uint8_t)sig[2], (uint8_t)sig[3],
	      count, (int)((uintptr_t)dst - (uintptr_t)(sig + 3)));

	/* The same across a page boundary: each byte goes to its own page. */
	memset(io_pages, 0xaa, sizeof(io_pages));
	fw_cfg_select(FW_CFG_SIGNATURE);
	insb(FW_CFG_PORT_DATA, cross, 4);
	check("io-rep-insb-page-cross",
	      !memcmp(cross, "QEMU", 4) && cross[-1] == 0xaa && cross[4] == 0xaa,
	      "at %p: %02x [%02x %02x | %02x %02x] %02x", (void *)cross,
	      cross[-1], cross[0], cross[1], cross[2], cross[3], cross[4]);

	/* REP OUTSW to a trapped port: both keys written, the last selected. */
	src = keys;
	count = 2;
	asm volatile("rep outsw" : "+S"(src), "+c"(count) : "d"(FW_CFG_PORT_SEL) : "memory");
	memset(sig, 0, sizeof(sig));
	fw_cfg_read(sig, 4);
	check("io-fw_cfg-rep-outsw",
	      !memcmp(sig, "QEMU", 4) && count == 0 && src == keys + 2,
	      "read %02x %02x %02x %02x after selecting 0x%x then 0x%x, ECX %u, "
	      "ESI advanced by %d",
	      (uint8_t)sig[0], (uint8_t)sig[1], (uint8_t)sig[2], (uint8_t)sig[3],
	      keys[0], keys[1], count, (int)((const char *)src - (const char *)keys));

	/* Passthrough: byte OUT/IN and string OUT/IN to COM1's scratch register. */
	outb(COM1_SCRATCH, 0x5a);
	check("io-passthrough-outb-inb", inb(COM1_SCRATCH) == 0x5a,
	      "scratch register read 0x%02x, wrote 0x5a", inb(COM1_SCRATCH));
	outsb(COM1_SCRATCH, scratch_bytes, 1);
	check("io-passthrough-outsb", inb(COM1_SCRATCH) == 'w',
	      "scratch register read 0x%02x after OUTSB 'w'", inb(COM1_SCRATCH));
	outsb(COM1_SCRATCH, scratch_bytes, sizeof(scratch_bytes));
	check("io-passthrough-rep-outsb", inb(COM1_SCRATCH) == 'z',
	      "scratch register read 0x%02x after REP OUTSB \"wxyz\"",
	      inb(COM1_SCRATCH));
	b[0] = b[1] = 0;
	insb(COM1_SCRATCH, b, 2);
	check("io-passthrough-rep-insb", b[0] == 'z' && b[1] == 'z',
	      "read %02x %02x", b[0], b[1]);
}

/* ---- fw_cfg items ---- */

static void check_fw_cfg(void)
{
	uint64_t cpus = fw_cfg_read_le(FW_CFG_NB_CPUS, 2);
	uint64_t ram = fw_cfg_read_le(FW_CFG_RAM_SIZE, 8);
	uint64_t unknown;

	check("fw_cfg-nb-cpus", cpus >= 1 && cpus <= 255, "%llu CPUs", cpus);
	check("fw_cfg-ram-size", ram > 0, "RAM size %llu", ram);
	printf("fw_cfg: %llu CPU(s), RAM 0x%llx bytes\n", cpus, ram);
	if (under_exitplan) {
		unknown = fw_cfg_read_le(FW_CFG_KERNEL_DATA, 4);
		check("fw_cfg-unknown-key-reads-zero", unknown == 0,
		      "key 0x%x read 0x%llx", FW_CFG_KERNEL_DATA, unknown);
	} else {
		skip("fw_cfg-unknown-key-reads-zero",
		     "%s (QEMU serves key 0x%x: the -kernel image)", need_exitplan,
		     FW_CFG_KERNEL_DATA);
	}
}

/* ---- control registers ---- */

static void check_crs(void)
{
	uint32_t cr0 = read_cr0(), cr3 = read_cr3(), cr4 = read_cr4();
	uint32_t v, on, off;
	int vec;

	printf("cr: CR0 0x%08x CR3 0x%08x CR4 0x%08x\n", cr0, cr3, cr4);
	/* The multiboot state: protected mode, paging off. */
	check("cr0-read", (cr0 & X86_CR0_PE) && !(cr0 & X86_CR0_PG), "CR0 0x%08x", cr0);

	write_cr0(cr0 | X86_CR0_WP);
	on = read_cr0();
	write_cr0(cr0 & ~X86_CR0_WP);
	off = read_cr0();
	write_cr0(cr0);
	check("cr0-wp-toggle", (on & X86_CR0_WP) && !(off & X86_CR0_WP),
	      "CR0 with WP set 0x%08x, cleared 0x%08x", on, off);

	write_cr4(cr4 | X86_CR4_PGE);
	on = read_cr4();
	write_cr4(cr4 & ~X86_CR4_PGE);
	off = read_cr4();
	write_cr4(cr4);
	check("cr4-pge-toggle", (on & X86_CR4_PGE) && !(off & X86_CR4_PGE),
	      "CR4 with PGE set 0x%08x, cleared 0x%08x", on, off);

	write_cr4(cr4 | X86_CR4_OSFXSR);
	on = read_cr4();
	write_cr4(cr4 & ~X86_CR4_OSFXSR);
	off = read_cr4();
	write_cr4(cr4);
	check("cr4-osfxsr-toggle", (on & X86_CR4_OSFXSR) && !(off & X86_CR4_OSFXSR),
	      "CR4 with OSFXSR set 0x%08x, cleared 0x%08x", on, off);

	if (under_tcg) {
		/*
		 * QEMU 7.2's TCG answers a reserved CR4 bit with an SVM
		 * #VMEXIT(INVALID) outside any guest and then loops for good.
		 */
		skip("cr4-vmxe-gp", "QEMU TCG hangs on a reserved CR4 bit");
		skip("cr4-reads-without-vmxe", "QEMU TCG hangs on a reserved CR4 bit");
	} else {
		vec = write_cr4_safe(cr4 | X86_CR4_VMXE);
		v = read_cr4();
		write_cr4(cr4);	/* if it was let through */
		check("cr4-vmxe-gp", vec == X86_EXC_GP, "MOV to CR4 with VMXE: %s",
		      vector_name(vec));
		check("cr4-reads-without-vmxe", !(v & X86_CR4_VMXE) && v == cr4,
		      "CR4 0x%08x, was 0x%08x", v, cr4);
	}

	write_cr0(cr0 | X86_CR0_TS);
	on = read_cr0();
	asm volatile("clts" : : : "memory");
	off = read_cr0();
	write_cr0(cr0);
	check("clts", (on & X86_CR0_TS) && !(off & X86_CR0_TS),
	      "CR0 with TS set 0x%08x, after CLTS 0x%08x", on, off);

	/* LMSW loads CR0[3:0] (it can set PE but never clear it). */
	asm volatile("lmsw %0" : : "r"((uint16_t)((cr0 | X86_CR0_TS | X86_CR0_MP) & 0xffff))
		     : "memory");
	on = read_cr0();
	asm volatile("lmsw %0" : : "r"((uint16_t)((cr0 & ~(X86_CR0_TS | X86_CR0_MP)) & 0xffff))
		     : "memory");
	off = read_cr0();
	write_cr0(cr0);
	check("lmsw",
	      (on & (X86_CR0_TS | X86_CR0_MP)) == (X86_CR0_TS | X86_CR0_MP) &&
	      !(off & (X86_CR0_TS | X86_CR0_MP)) && (off & X86_CR0_PE) &&
	      (on & 0xffff0000u) == (cr0 & 0xffff0000u),
	      "CR0 after LMSW set TS|MP 0x%08x, after clearing 0x%08x (was 0x%08x)",
	      on, off, cr0);
}

/* ---- debug registers ---- */

static void check_drs(void)
{
	uint32_t dr7 = read_dr7(), dr0 = read_dr0(), v;

	write_dr0(0x00badc0du);
	v = read_dr0();
	write_dr0(dr0);
	check("dr0-roundtrip", v == 0x00badc0du, "DR0 read 0x%08x", v);

	/* LE|GE: harmless with no breakpoint enabled. */
	write_dr7(X86_DR7_INIT | DR7_LE_GE);
	v = read_dr7();
	write_dr7(dr7);
	check("dr7-roundtrip", v == (X86_DR7_INIT | DR7_LE_GE),
	      "DR7 read 0x%08x, wrote 0x%08x (was 0x%08x)", v,
	      X86_DR7_INIT | DR7_LE_GE, dr7);
}

/* ---- RDTSC, PAUSE, INVD, WBINVD ---- */

static void check_misc(void)
{
	unsigned int n = quick ? 100 : 1000, backwards = 0, i;
	uint64_t first = rdtsc(), prev = first, t = first;
	volatile uint32_t canary = 0;

	for (i = 0; i < n; i++) {
		t = rdtsc();
		if (t < prev)
			backwards++;
		prev = t;
	}
	check("rdtsc-monotonic", backwards == 0 && t > first,
	      "%u of %u reads went backwards; first 0x%llx last 0x%llx",
	      backwards, n, first, t);

	n = quick ? 1000 : 10000;
	t = rdtsc();
	for (i = 0; i < n; i++)
		pause();
	check("pause-loop", i == n && rdtsc() > t, "%u PAUSEs", i);

	/* Memory written before must survive: a hypervisor must not run a
	 * bare INVD for the guest (it would drop dirty lines). */
	canary = 0x600dcafe;
	asm volatile("wbinvd" : : : "memory");
	check("wbinvd", canary == 0x600dcafe, "canary 0x%08x", canary);
	canary = 0xc0ffee11;
	asm volatile("invd" : : : "memory");
	check("invd", canary == 0xc0ffee11, "canary 0x%08x", canary);
}

/* ---- XSETBV ---- */

static uint64_t xgetbv(uint32_t xcr)
{
	uint32_t lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(xcr));
	return ((uint64_t)hi << 32) | lo;
}

static void check_xsetbv(void)
{
	uint32_t cr4 = read_cr4();
	uint64_t xcr0;
	int vec;

	if (!(cpuid(CPUID_LEAF_FEATURES).ecx & CPUID_1_ECX_XSAVE)) {
		skip("xsetbv", "no XSAVE (CPUID.1:ECX[26])");
		return;
	}
	if ((cpuid_count(CPUID_LEAF_XSTATE, 0).eax & (XCR0_X87 | XCR0_SSE)) != (XCR0_X87 | XCR0_SSE)) {
		skip("xsetbv", "CPUID.0xD:EAX lacks x87|SSE");
		return;
	}

	vec = xsetbv_safe(0, XCR0_X87);
	check("xsetbv-without-osxsave-ud", vec == X86_EXC_UD,
	      "XSETBV with CR4.OSXSAVE clear: %s", vector_name(vec));

	vec = write_cr4_safe(cr4 | X86_CR4_OSXSAVE);
	if (!check("cr4-osxsave-set", vec == NO_FAULT && (read_cr4() & X86_CR4_OSXSAVE),
		   "%s, CR4 0x%08x", vector_name(vec), read_cr4()))
		return;
	/* CPUID.1:ECX[27] mirrors the guest's CR4.OSXSAVE (SDM Vol. 2A). */
	check("cpuid-osxsave-mirrors-cr4", cpuid(CPUID_LEAF_FEATURES).ecx & CPUID_1_ECX_OSXSAVE,
	      "CPUID.1:ECX 0x%08x with CR4.OSXSAVE set", cpuid(CPUID_LEAF_FEATURES).ecx);

	vec = xsetbv_safe(0, XCR0_X87 | XCR0_SSE);
	xcr0 = xgetbv(0);
	check("xsetbv-x87-sse", vec == NO_FAULT && xcr0 == (XCR0_X87 | XCR0_SSE),
	      "%s, XCR0 reads 0x%llx", vector_name(vec), xcr0);
	vec = xsetbv_safe(0, XCR0_SSE);
	check("xsetbv-no-x87-gp", vec == X86_EXC_GP,
	      "XCR0 = SSE only: %s", vector_name(vec));
	check("xsetbv-gp-keeps-xcr0", xgetbv(0) == (XCR0_X87 | XCR0_SSE),
	      "XCR0 reads 0x%llx", xgetbv(0));

	xsetbv_safe(0, XCR0_X87);
	write_cr4(cr4);
}

/* ---- VMX instructions ---- */

static uint64_t vmx_region_pa;
static struct { uint64_t eptp_or_vpid, gpa_or_linear; } inv_desc;

static void check_vmx_instructions(void)
{
	uint32_t field = 0, value = 0, type = 1;

	vmx_region_pa = (uintptr_t)io_pages;
	CHECK_UD("vmxon-ud", "vmxon %0", "m"(vmx_region_pa));
	CHECK_UD("vmptrld-ud", "vmptrld %0", "m"(vmx_region_pa));
	CHECK_UD("vmptrst-ud", "vmptrst %0", "m"(vmx_region_pa));
	CHECK_UD("vmclear-ud", "vmclear %0", "m"(vmx_region_pa));
	/* AT&T order: VMREAD field-reg, dest; VMWRITE value, field-reg. */
	CHECK_UD("vmread-ud", "vmread %0, %1", "r"(field), "r"(value));
	CHECK_UD("vmwrite-ud", "vmwrite %0, %1", "r"(value), "r"(field));
	CHECK_UD("vmlaunch-ud", "vmlaunch", "i"(0));
	CHECK_UD("vmresume-ud", "vmresume", "i"(0));
	CHECK_UD("vmxoff-ud", "vmxoff", "i"(0));
	CHECK_UD("invept-ud", "invept %0, %1", "m"(inv_desc), "r"(type));
	CHECK_UD("invvpid-ud", "invvpid %0, %1", "m"(inv_desc), "r"(type));
}

/* ---- the MMIO test page ---- */

static void check_mmio(void)
{
	uint32_t v, junk = 0xdeadbeef;
	uintptr_t page = EXITPLAN_TEST_PAGE;

	if (!under_exitplan) {
		skip("mmio-test-page-read", "%s", need_exitplan);
		skip("mmio-test-page-write-ignored", "%s", need_exitplan);
		return;
	}
	/* mmio_read32/mmio_write32: MOV r32, m32 (8B /r) and MOV m32, r32 (89 /r). */
	v = mmio_read32(page);
	check("mmio-test-page-read", v == EXITPLAN_TEST_PAGE_SIG,
	      "read 0x%08x at 0x%08x, expected 0x%08x", v, EXITPLAN_TEST_PAGE,
	      EXITPLAN_TEST_PAGE_SIG);
	mmio_write32(page, junk);
	v = mmio_read32(page);
	check("mmio-test-page-write-ignored", v == EXITPLAN_TEST_PAGE_SIG,
	      "read 0x%08x after writing 0x%08x", v, junk);
}

/* ---- local APIC timer, HLT ---- */

static bool check_timer_and_hlt(void)
{
	uint32_t before;
	bool delivered, oneshot_works;
	uint64_t t;

	apic_init();

	before = apic_timer_irqs;
	apic_timer_oneshot(APIC_TIMER_COUNT);
	delivered = apic_timer_wait_spinning(before, IRQ_WAIT_TICKS);
	check("apic-timer-oneshot-irq", delivered,
	      "no interrupt within %llu TSC ticks (current count %u)",
	      IRQ_WAIT_TICKS, apic_read(XAPIC_REG_TIMER_CUR_COUNT));
	oneshot_works = delivered;
	if (delivered) {
		before = apic_timer_irqs;
		apic_timer_oneshot(APIC_TIMER_COUNT);
		apic_timer_wait_halted(before);
		check("hlt-apic-timer", apic_timer_irqs == before + 1,
		      "%u interrupts while halted", apic_timer_irqs - before);
	} else {
		/* A lost wake-up would hang here for good. */
		skip("hlt-apic-timer", "the timer interrupt never came");
	}

	if (!cpu_has_tsc_deadline()) {
		skip("tsc-deadline-irq", "no TSC-deadline mode (CPUID.1:ECX[24])");
		skip("hlt-tsc-deadline", "no TSC-deadline mode (CPUID.1:ECX[24])");
		apic_timer_stop();
		return oneshot_works;
	}
	before = apic_timer_irqs;
	apic_timer_tsc_deadline(rdtsc() + TSC_DEADLINE_DELTA);
	delivered = apic_timer_wait_spinning(before, IRQ_WAIT_TICKS);
	check("tsc-deadline-irq", delivered, "no interrupt within %llu TSC ticks",
	      IRQ_WAIT_TICKS);
	if (delivered) {
		before = apic_timer_irqs;
		t = rdtsc();
		apic_timer_tsc_deadline(t + TSC_DEADLINE_DELTA);
		apic_timer_wait_halted(before);
		check("hlt-tsc-deadline",
		      apic_timer_irqs == before + 1 && rdtsc() >= t + TSC_DEADLINE_DELTA,
		      "%u interrupts, woke %lld ticks after arming",
		      apic_timer_irqs - before, (long long)(rdtsc() - t));
	} else {
		skip("hlt-tsc-deadline", "the TSC-deadline interrupt never came");
	}
	apic_timer_stop();
	return oneshot_works;
}

/* ---- IA32_APIC_BASE ---- */

static void check_apic_base(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE), v;
	uint32_t before;
	bool delivered;

	check("apic-base-read",
	      (base & APIC_BASE_BSP) && (base & APIC_BASE_EN) &&
	      (base & APIC_BASE_ADDR_MASK) == APIC_DEFAULT_PHYS_BASE,
	      "IA32_APIC_BASE 0x%llx", base);

	if (!under_exitplan) {
		/*
		 * Unvirtualized, a clear sticks: QEMU 7.2 TCG keeps the enable
		 * bit clear, and Bochs's APIC is dead until reset.
		 */
		const char *why = under_tcg ?
			"QEMU TCG cannot re-enable the APIC afterwards" :
			"not under exitplan: the APIC would stay disabled";

		skip("apic-base-disable", "%s", why);
		skip("cpuid-apic-off-when-disabled", "%s", why);
		skip("apic-base-enable", "%s", why);
		skip("cpuid-apic-on-when-enabled", "%s", why);
		skip("apic-timer-after-apic-base", "%s", why);
		return;
	}
	/*
	 * Only here is the global enable cleared: exitplan virtualizes the
	 * MSR (under Bochs a real clear would kill the APIC for good).
	 */
	wrmsr(MSR_IA32_APIC_BASE, base & ~(uint64_t)APIC_BASE_EN);
	v = rdmsr(MSR_IA32_APIC_BASE);
	check("apic-base-disable", v == (base & ~(uint64_t)APIC_BASE_EN),
	      "read 0x%llx after writing 0x%llx", v,
	      base & ~(uint64_t)APIC_BASE_EN);
	/* CPUID.01H:EDX.APIC follows the global enable (SDM Vol. 3A 11.4.3). */
	check("cpuid-apic-off-when-disabled", !(cpuid(1).edx & CPUID_1_EDX_APIC),
	      "CPUID.01H:EDX 0x%x with the APIC disabled", cpuid(1).edx);
	wrmsr(MSR_IA32_APIC_BASE, base);
	v = rdmsr(MSR_IA32_APIC_BASE);
	check("apic-base-enable", v == base, "read 0x%llx after writing 0x%llx",
	      v, base);
	check("cpuid-apic-on-when-enabled", cpuid(1).edx & CPUID_1_EDX_APIC,
	      "CPUID.01H:EDX 0x%x with the APIC enabled", cpuid(1).edx);

	/* A disable resets the APIC (SDM 10.4.3): set it up again. */
	apic_init();
	before = apic_timer_irqs;
	apic_timer_oneshot(APIC_TIMER_COUNT);
	delivered = apic_timer_wait_spinning(before, IRQ_WAIT_TICKS);
	apic_timer_stop();
	check("apic-timer-after-apic-base", delivered,
	      "no timer interrupt after disabling and re-enabling the APIC");
}

/* ---- ACPI PM timer ---- */

static void check_acpi(void)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *fadt;
	uint32_t port, first, now = 0, spins = 0;
	uint64_t t0;

	if (!check("acpi-rsdp", rsdp != NULL, "no RSDP in the EBDA or 0xE0000-0xFFFFF"))
		return;
	printf("acpi: RSDP at %p, RSDT at 0x%08x\n", (const void *)rsdp,
	       rsdp->rsdt_address);
	fadt = acpi_find_table(rsdp, "FACP");
	if (!check("acpi-fadt", fadt != NULL, "no valid FACP in the RSDT at 0x%08x",
		   rsdp->rsdt_address))
		return;
	port = acpi_fadt_pm_timer_port(fadt);
	if (!check("acpi-pm-timer-port", port != 0 && port <= 0xfffc,
		   "PM_TMR_BLK 0x%x", port))
		return;
	printf("acpi: FADT at %p, PM timer at port 0x%x\n", (const void *)fadt, port);
	/* 3.579545 MHz: it moves within a few hundred instructions. */
	first = inl((uint16_t)port) & 0xffffff;
	t0 = rdtsc();
	while (rdtsc() - t0 < 50000000ull) {
		now = inl((uint16_t)port) & 0xffffff;
		spins++;
		if (now != first)
			break;
	}
	check("acpi-pm-timer-advances", now != first,
	      "port 0x%x stayed at 0x%06x for %u reads", port, first, spins);
}

/* ---- the legacy 8259A pair and 8254 ---- */

#define PIC_POLL_LIMIT		1000000u

/* OCW3 then a read of the master's A0=0 port: IRR (0x0a), ISR (0x0b), poll (0x0c). */
static uint8_t pic1_read(uint8_t ocw3)
{
	outb(0x20, ocw3);
	return inb(0x20);
}

/* Spin (IF=0) until IR0 is requested; false after PIC_POLL_LIMIT reads. */
static bool wait_irq0_request(void)
{
	for (unsigned int i = 0; i < PIC_POLL_LIMIT; i++)
		if (pic1_read(0x0a) & 0x01)
			return true;
	return false;
}

/*
 * What a BIOS-era kernel does with the PC's timer, with interrupts off so
 * the check needs no IDT entry: re-initialise both 8259As (vectors 0x20
 * and 0x28), open IR0 alone, read the IRR as channel 0 runs, as a
 * one-shot (mode 0: no request before the terminal count, one at it) and
 * as a 1-kHz rate generator; read the count back with a latch; time a
 * one-shot on channel 2 through port 0x61.  Under exitplan these are the
 * emulated chips (runtime/devices/vpic.c, vpit.c); on bare Bochs and QEMU the
 * emulator's: the same results are expected of both.  No poll command
 * (OCW3.P): Bochs's does not follow the 8259A datasheet (it ends the
 * highest in-service IR and returns the IR number without bit 7).
 */
#define PIT_IRQ0_VECTOR	0x20	/* ICW2 of the master below */
#define PIT_IRQ0_WANTED	3

static volatile unsigned int pit_irqs;
static volatile uint8_t pit_isr_in_handler;

/* IRQ0 through the 8259: its ISR seen from inside, then the EOI. */
static void pit_irq_handler(struct trap_frame *frame)
{
	(void)frame;
	pit_isr_in_handler = pic1_read(0x0b);
	pit_irqs++;
	outb(0x20, 0x20);
}

static void check_legacy_pic_pit(void)
{
	static const uint8_t init[][2] = {
		{ 0x20, 0x11 }, { 0x21, 0x20 }, { 0x21, 0x04 }, { 0x21, 0x01 },
		{ 0xa0, 0x11 }, { 0xa1, 0x28 }, { 0xa1, 0x02 }, { 0xa1, 0x01 },
		{ 0x21, 0xfe }, { 0xa1, 0xff },
	};
	uint8_t imr1, imr2, irr_before, isr, lsb, msb, b;
	bool requested, out2_low, out2_high = false;
	uint16_t count;
	unsigned int i;

	cli();
	outb(0x43, 0x30);		/* channel 0, LSB then MSB, mode 0: OUT low */
	for (i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		outb(init[i][0], init[i][1]);
	imr1 = inb(0x21);
	imr2 = inb(0xa1);
	check("pic-imr", imr1 == 0xfe && imr2 == 0xff, "IMRs 0x%02x 0x%02x after OCW1 0xfe 0xff",
	      imr1, imr2);

	outb(0x40, 0xff);
	outb(0x40, 0xff);		/* 65535 ticks, 55 ms */
	irr_before = pic1_read(0x0a);
	requested = wait_irq0_request();
	isr = pic1_read(0x0b);
	check("pit-oneshot-irr", !(irr_before & 0x01) && requested && isr == 0x00,
	      "IRR 0x%02x before the terminal count, IR0 %s after it, ISR 0x%02x", irr_before,
	      requested ? "requested" : "never requested", isr);

	outb(0x43, 0x34);		/* channel 0, LSB then MSB, mode 2 */
	outb(0x40, 1193 & 0xff);
	outb(0x40, 1193 >> 8);		/* 1 ms */
	outb(0x20, 0x11);		/* ICW1 drops the request latched so far */
	outb(0x21, 0x20);
	outb(0x21, 0x04);
	outb(0x21, 0x01);
	outb(0x21, 0xfe);
	requested = wait_irq0_request();
	check("pit-irq0-irr", requested, "IR0 never requested in %u IRR reads", PIC_POLL_LIMIT);

	outb(0x43, 0x00);		/* counter latch, channel 0 */
	lsb = inb(0x40);
	msb = inb(0x40);
	count = lsb | msb << 8;
	check("pit-latch", count >= 1 && count <= 1193, "latched count %u (reload 1193)", count);

	b = inb(0x61) & ~0x03;
	outb(0x61, b);			/* gate 2 low, speaker off */
	outb(0x43, 0xb0);		/* channel 2, LSB then MSB, mode 0 */
	outb(0x42, 1000 & 0xff);
	outb(0x42, 1000 >> 8);
	out2_low = !(inb(0x61) & 0x20);
	outb(0x61, b | 0x01);		/* gate high: count */
	for (i = 0; i < PIC_POLL_LIMIT && !out2_high; i++)
		out2_high = inb(0x61) & 0x20;
	outb(0x61, b);
	check("pit-ch2-out2", out2_low && out2_high, "OUT2 %s before the count, %s after",
	      out2_low ? "low" : "high", out2_high ? "rose" : "never rose");

	/*
	 * `sti; hlt` waiting for the PIT, as a kernel's idle loop: IRQ0
	 * through the 8259 (virtual wire: the BIOS's LINT0 in ExtINT mode),
	 * vector 0x20, ISR bit 0 set in the handler, every period a wake-up.
	 */
	irq_register(PIT_IRQ0_VECTOR, pit_irq_handler);
	pit_irqs = 0;
	pit_isr_in_handler = 0;
	outb(0x20, 0x11);		/* nothing latched from before */
	outb(0x21, 0x20);
	outb(0x21, 0x04);
	outb(0x21, 0x01);
	outb(0x21, 0xfe);
	for (i = 0; i < 1000 && pit_irqs < PIT_IRQ0_WANTED; i++)
		sti_hlt();
	cli();
	isr = pic1_read(0x0b);
	check("pit-irq0-hlt", pit_irqs >= PIT_IRQ0_WANTED && pit_isr_in_handler == 0x01 &&
	      isr == 0x00, "%u IRQ0s in %u HLTs, ISR 0x%02x in the handler, 0x%02x after",
	      pit_irqs, i, pit_isr_in_handler, isr);

	/* Leave them as the other checks expect: every line masked. */
	outb(0x43, 0x36);		/* channel 0, mode 3, count 65536 */
	outb(0x40, 0);
	outb(0x40, 0);
	pic_mask_all();
}

/* ---- the RTC and CMOS ---- */

/*
 * The PC's MC146818A as an OS reads it (Linux's mc146818_get_time()):
 * index to port 0x70 with NMI_DISABLE clear, data from 0x71, each read
 * after register A's UIP cleared.  Under exitplan the guest's own
 * (runtime/devices/vrtc.c: UIP never set); on bare Bochs and QEMU the emulator's,
 * whose UIP is set for a moment once a second: the same results either way.
 * The wait for the seconds to change is at most one second of the RTC's
 * time, bounded by 2 s of the ACPI PM timer (3.579545 MHz on every
 * emulator, whatever its TSC or instruction rate) should the clock stand
 * still; by RTC_POLL_LIMIT polls where the FADT names no PM timer.
 */
#define RTC_POLL_LIMIT		3000000u
#define RTC_WAIT_PM_TICKS	(2u * 3579545u)

static uint8_t cmos_read(uint8_t index)
{
	outb(0x70, index);
	return inb(0x71);
}

/* Wait for UIP (register A bit 7) to clear; false after RTC_POLL_LIMIT reads. */
static bool rtc_wait_uip(void)
{
	for (unsigned int i = 0; i < RTC_POLL_LIMIT; i++)
		if (!(cmos_read(0x0a) & 0x80))
			return true;
	return false;
}

static bool bcd_ok(uint8_t v, unsigned int lo, unsigned int hi)
{
	unsigned int d = (v >> 4) * 10u + (v & 0xfu);

	return (v & 0xf) <= 9 && (v >> 4) <= 9 && d >= lo && d <= hi;
}

static unsigned int bcd(uint8_t v)
{
	return (v >> 4) * 10u + (v & 0xfu);
}

struct rtc_sample {
	uint8_t sec, min, hour, mday, mon, year, century;
};

static bool rtc_sample(struct rtc_sample *t)
{
	if (!rtc_wait_uip())
		return false;
	t->sec = cmos_read(0x00);
	t->min = cmos_read(0x02);
	t->hour = cmos_read(0x04);
	t->mday = cmos_read(0x07);
	t->mon = cmos_read(0x08);
	t->year = cmos_read(0x09);
	t->century = cmos_read(0x32);
	return true;
}

static bool rtc_valid(const struct rtc_sample *t)
{
	return bcd_ok(t->sec, 0, 59) && bcd_ok(t->min, 0, 59) && bcd_ok(t->hour, 0, 23) &&
	       bcd_ok(t->mday, 1, 31) && bcd_ok(t->mon, 1, 12) && bcd_ok(t->year, 0, 99) &&
	       bcd_ok(t->century, 19, 21);
}

static unsigned int rtc_secs_of_day(const struct rtc_sample *t)
{
	return bcd(t->hour) * 3600u + bcd(t->min) * 60u + bcd(t->sec);
}

static void check_rtc(void)
{
	struct rtc_sample a = { 0 }, b = { 0 };
	const struct acpi_rsdp *rsdp;
	const struct acpi_header *fadt;
	uint32_t pm, pm_last, pm_ticks = 0;
	uint8_t reg_a, reg_b, reg_d;
	bool uip, got_a, got_b = false, changed = false;
	unsigned int i, step = 0;

	uip = rtc_wait_uip();
	reg_a = cmos_read(0x0a);
	reg_b = cmos_read(0x0b);
	reg_d = cmos_read(0x0d);
	check("rtc-regs", uip && (reg_a & 0x7f) == 0x26 && (reg_b & 0x06) == 0x02 &&
	      (reg_d & 0x80), "UIP %s, A 0x%02x, B 0x%02x, D 0x%02x (want A 0x26, B BCD 24-hour, "
	      "D VRT)", uip ? "cleared" : "stuck", reg_a, reg_b, reg_d);

	got_a = rtc_sample(&a);
	check("rtc-bcd-time", got_a && rtc_valid(&a),
	      "%s %02x%02x-%02x-%02x %02x:%02x:%02x", got_a ? "read" : "UIP stuck", a.century,
	      a.year, a.mon, a.mday, a.hour, a.min, a.sec);

	/* The same second until it moves on (seconds only: fewer exits), then all of it. */
	rsdp = acpi_find_rsdp();
	fadt = rsdp ? acpi_find_table(rsdp, "FACP") : NULL;
	pm = fadt ? acpi_fadt_pm_timer_port(fadt) : 0;
	if (pm > 0xfffc)
		pm = 0;
	pm_last = pm ? inl((uint16_t)pm) & 0xffffff : 0;
	for (i = 0; got_a && (pm ? pm_ticks < RTC_WAIT_PM_TICKS : i < RTC_POLL_LIMIT); i++) {
		if (!rtc_wait_uip() || cmos_read(0x00) != a.sec) {
			changed = true;
			break;
		}
		if (pm) {
			uint32_t t = inl((uint16_t)pm) & 0xffffff;

			pm_ticks += (t - pm_last) & 0xffffff;	/* a 24-bit counter */
			pm_last = t;
		}
	}
	got_b = changed && rtc_sample(&b);
	if (got_b && b.sec != a.sec)
		step = (rtc_secs_of_day(&b) + 86400u - rtc_secs_of_day(&a)) % 86400u;
	check("rtc-advances", got_b && rtc_valid(&b) && step == 1,
	      "seconds 0x%02x then 0x%02x after %u polls (%u s later)", a.sec, b.sec, i, step);
}

void guest_main(void)
{
	quick = cmdline_has("quick");
	if (cmdline_has("apic-modes-only")) {
		check_apic_mode_cycle();
		return;
	}
	if (cmdline_has("mmio-forms-only")) {
		check_mmio_forms();
		return;
	}
	if (cmdline_has("interrupts-only")) {
		if (cmdline_has("firmware-pic"))
			check_firmware_timer();
		check_interrupt_delivery(true);
		return;
	}

	check_cpuid();
	check_multiboot();
	check_modules();
	check_exceptions();
	check_hypercalls();
	check_msrs();
	check_io();
	check_legacy_pic_pit();
	check_rtc();
	check_fw_cfg();
	check_crs();
	check_drs();
	check_misc();
	check_xsetbv();
	check_vmx_instructions();
	check_mmio();
	if (check_timer_and_hlt())
		check_apic_base();
	else
		skip("apic-base", "the APIC timer does not work to begin with");
	check_acpi();
	check_arch();
	check_mmio_forms();
	check_tasks();
	check_cpuid_msrs();
	check_interrupt_delivery(false);
	check_apic_mode_cycle();	/* last: it leaves the APIC re-initialized (or dead on bare Bochs) */
	skip("preemption-timer", "host-side only: nothing for the guest to observe");
}
