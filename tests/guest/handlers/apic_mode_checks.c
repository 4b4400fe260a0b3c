// SPDX-License-Identifier: GPL-2.0-only
/*
 * The local APIC's modes (SDM Vol. 3A 11.12.5, "x2APIC State
 * Transitions"): xAPIC -> x2APIC -> disabled -> xAPIC -> x2APIC, and the
 * transitions the SDM forbids, each #GP.  In each mode the APIC answers
 * as it must: its ID and version, IPIs to itself (shorthand, physical
 * and logical destination) taken and EOIed; disabled, it is not there
 * (CPUID.01H:EDX.APIC 0, x2APIC MSRs #GP, its page reads all ones).
 *
 * Under exitplan with every `apic:` choice.  Bare Bochs 2.7 runs the
 * checks up to the disabled state (its answers there are the
 * reference); from then on it ignores every IA32_APIC_BASE write, its
 * APIC never comes back (PLATFORM.md), so the rest SKIPs there.  QEMU's
 * TCG skips it all.
 */
#include "apic.h"
#include "apic_mode_checks.h"
#include "exitplan.h"
#include "idt.h"
#include "test.h"
#include "x86.h"

#define MODE_IPI_VECTOR		0x63
#define X2APIC_VERSION_MSR	(MSR_IA32_X2APIC_FIRST + (XAPIC_REG_VERSION >> 4))
#define X2APIC_ISR_MSR(v)	(MSR_IA32_X2APIC_FIRST + (XAPIC_REG_ISR >> 4) + (v) / 32)

static volatile uint32_t mode_ipis;
static volatile bool mode_x2apic;	/* the handler's EOI: MSR or MMIO */

static void mode_ipi_irq(struct trap_frame *frame)
{
	(void)frame;
	mode_ipis++;
	if (mode_x2apic)
		wrmsr(MSR_IA32_X2APIC_EOI, 0);
	else
		apic_eoi();
}

/* Interrupts on for a while: true when exactly one more IPI arrived. */
static bool one_ipi_arrived(uint32_t before)
{
	sti();
	for (uint64_t t = rdtsc(); rdtsc() - t < 20000000ull && mode_ipis == before;)
		pause();
	for (uint64_t t = rdtsc(); rdtsc() - t < 2000000ull;)
		pause();
	cli();
	return mode_ipis == before + 1;
}

static bool xapic_ipi(uint32_t dest, uint32_t icr_low)
{
	uint32_t before = mode_ipis;

	apic_write(XAPIC_REG_ICR_HIGH, dest << 24);
	apic_write(XAPIC_REG_ICR_LOW, icr_low | MODE_IPI_VECTOR);
	for (unsigned int i = 0; i < 100000 && (apic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING); i++)
		pause();
	return one_ipi_arrived(before) &&
	       !(apic_read(XAPIC_REG_ISR + (MODE_IPI_VECTOR / 32) * 0x10) & (1u << (MODE_IPI_VECTOR % 32)));
}

static bool x2apic_self_ipi(void)
{
	uint32_t before = mode_ipis;

	wrmsr(MSR_IA32_X2APIC_ICR, APIC_ICR_SHORTHAND_SELF | MODE_IPI_VECTOR);
	return one_ipi_arrived(before) &&
	       !(rdmsr(X2APIC_ISR_MSR(MODE_IPI_VECTOR)) & (1u << (MODE_IPI_VECTOR % 32)));
}

static const char *const after_disable[] = {
	"apic-mode-disabled-to-x2apic-gp", "apic-mode-disabled-to-invalid-gp",
	"apic-mode-relocate-gp", "apic-mode-disabled-to-xapic", "apic-mode-xapic-again-id", "apic-mode-xapic-again-version",
	"apic-mode-xapic-again-x2apic-msr-gp", "apic-mode-xapic-again-ldr-dfr",
	"apic-mode-xapic-again-tpr", "apic-mode-xapic-again-unaligned-zero",
	"apic-mode-xapic-again-self-ipi", "apic-mode-xapic-again-physical-ipi", "apic-mode-xapic-again-logical-ipi",
	"apic-mode-x2apic-again", "apic-mode-x2apic-again-self-ipi",
};

void check_apic_mode_cycle(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE), v;
	uint64_t x2 = base | APIC_BASE_EXTD, off = base & ~(APIC_BASE_EN | APIC_BASE_EXTD);
	uintptr_t page = (uintptr_t)(base & APIC_BASE_ADDR_MASK);
	bool bare = !exitplan_detected();
	uint32_t x2id, x2ver, id, ver;
	int f;

	if (qemu_tcg_detected()) {
		skip("apic-mode-cycle", "QEMU TCG: its APIC is not the reference here");
		return;
	}
	if (!(cpuid(1).ecx & CPUID_1_ECX_X2APIC)) {
		skip("apic-mode-cycle", "CPUID.01H:ECX.x2APIC is 0");
		return;
	}
	if (!(base & APIC_BASE_EN) || (base & APIC_BASE_EXTD)) {
		skip("apic-mode-cycle", "the APIC is not in xAPIC mode to begin with (0x%llx)", base);
		return;
	}
	irq_register(MODE_IPI_VECTOR, mode_ipi_irq);
	apic_init();

	/* xAPIC -> x2APIC. */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, x2);
	mode_x2apic = f == NO_FAULT;
	check("apic-mode-xapic-to-x2apic", f == NO_FAULT && rdmsr(MSR_IA32_APIC_BASE) == x2,
	      "WRMSR 0x%llx raised %s", x2, vector_name(f));
	if (f != NO_FAULT)
		return;
	x2id = (uint32_t)rdmsr(MSR_IA32_X2APIC_APICID);
	x2ver = (uint32_t)rdmsr(X2APIC_VERSION_MSR);
	check("apic-mode-x2apic-self-ipi", x2apic_self_ipi(), "no self IPI in x2APIC mode");
	/* x2APIC -> xAPIC is not a transition (SDM Figure 11-27). */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, base);
	check("apic-mode-x2apic-to-xapic-gp", f == X86_EXC_GP && rdmsr(MSR_IA32_APIC_BASE) == x2,
	      "WRMSR 0x%llx raised %s, reads 0x%llx", base, vector_name(f),
	      rdmsr(MSR_IA32_APIC_BASE));

	/* EXTD without EN is no state at all. */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, off | APIC_BASE_EXTD);
	check("apic-mode-x2apic-to-invalid-gp", f == X86_EXC_GP && rdmsr(MSR_IA32_APIC_BASE) == x2,
	      "WRMSR 0x%llx (EXTD without EN) raised %s", off | APIC_BASE_EXTD, vector_name(f));

	/* x2APIC -> disabled. */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, off);
	mode_x2apic = false;
	v = rdmsr(MSR_IA32_APIC_BASE);
	check("apic-mode-x2apic-to-disabled", f == NO_FAULT && v == off,
	      "WRMSR 0x%llx raised %s, reads 0x%llx", off, vector_name(f), v);
	check("apic-mode-disabled-cpuid", !(cpuid(1).edx & CPUID_1_EDX_APIC),
	      "CPUID.01H:EDX 0x%x with the APIC disabled", cpuid(1).edx);
	f = rdmsr_safe(MSR_IA32_X2APIC_APICID, &v);
	check("apic-mode-disabled-x2apic-msr-gp", f == X86_EXC_GP, "RDMSR 0x802 raised %s",
	      vector_name(f));
	/* No APIC on the bus: its page is unclaimed memory (all ones on a PC and on Bochs). */
	check("apic-mode-disabled-mmio", mmio_read32(page + XAPIC_REG_ID) == 0xffffffffu &&
	      mmio_read32(page + XAPIC_REG_VERSION) == 0xffffffffu,
	      "ID 0x%x, version 0x%x", mmio_read32(page + XAPIC_REG_ID),
	      mmio_read32(page + XAPIC_REG_VERSION));

	/* Bochs 2.7 ignores every IA32_APIC_BASE write from here on: the APIC stays dead. */
	if (bare) {
		for (unsigned int i = 0; i < sizeof(after_disable) / sizeof(after_disable[0]); i++)
			skip(after_disable[i], "bare Bochs 2.7: the APIC is dead after a global disable "
			     "(PLATFORM.md), exitplan hides that");
		return;
	}
	f = wrmsr_safe(MSR_IA32_APIC_BASE, x2);
	check("apic-mode-disabled-to-x2apic-gp", f == X86_EXC_GP && rdmsr(MSR_IA32_APIC_BASE) == off,
	      "WRMSR 0x%llx raised %s", x2, vector_name(f));
	f = wrmsr_safe(MSR_IA32_APIC_BASE, off | APIC_BASE_EXTD);
	check("apic-mode-disabled-to-invalid-gp", f == X86_EXC_GP,
	      "WRMSR 0x%llx (EXTD without EN) raised %s", off | APIC_BASE_EXTD, vector_name(f));

	/*
	 * Enabled again at another base, as kvm-unit-tests' apic test does
	 * (0xfed40000): exitplan keeps the window where firmware put it and
	 * refuses the move with #GP, as a processor whose APIC cannot be
	 * relocated (docs/GUESTS.md); nothing changes.
	 */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, 0xfed40000ull | (base & ~APIC_BASE_ADDR_MASK));
	check("apic-mode-relocate-gp", f == X86_EXC_GP && rdmsr(MSR_IA32_APIC_BASE) == off,
	      "WRMSR 0x%llx raised %s, reads 0x%llx",
	      0xfed40000ull | (base & ~APIC_BASE_ADDR_MASK), vector_name(f),
	      rdmsr(MSR_IA32_APIC_BASE));

	/* disabled -> xAPIC: reset, in xAPIC mode, the ID the x2APIC ID's low byte. */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, base);
	v = rdmsr(MSR_IA32_APIC_BASE);
	check("apic-mode-disabled-to-xapic", f == NO_FAULT && v == base &&
	      (cpuid(1).edx & CPUID_1_EDX_APIC),
	      "WRMSR 0x%llx raised %s, reads 0x%llx, CPUID.01H:EDX 0x%x", base, vector_name(f), v,
	      cpuid(1).edx);
	apic_init();
	id = apic_read(XAPIC_REG_ID);
	check("apic-mode-xapic-again-id", id == (x2id & 0xff) << 24, "ID register 0x%x, x2APIC ID %u",
	      id, x2id);
	ver = apic_read(XAPIC_REG_VERSION);
	check("apic-mode-xapic-again-version", (ver & 0xff) >= 0x10 && (ver & 0xff) <= 0x15 &&
	      ver == x2ver, "version register 0x%x, 0x%x in x2APIC mode", ver, x2ver);
	f = rdmsr_safe(MSR_IA32_X2APIC_APICID, &v);
	check("apic-mode-xapic-again-x2apic-msr-gp", f == X86_EXC_GP, "RDMSR 0x802 raised %s",
	      vector_name(f));
	/* Reset values, then the flat model with this CPU's bit 0. */
	{
		uint32_t ldr0 = apic_read(XAPIC_REG_LDR), dfr0 = apic_read(XAPIC_REG_DFR), ldr, dfr;

		apic_write(XAPIC_REG_DFR, 0xffffffffu);
		apic_write(XAPIC_REG_LDR, 0x01000000u);
		ldr = apic_read(XAPIC_REG_LDR);
		dfr = apic_read(XAPIC_REG_DFR);
		check("apic-mode-xapic-again-ldr-dfr", ldr0 == 0 && dfr0 == 0xffffffffu &&
		      ldr == 0x01000000u && dfr == 0xffffffffu,
		      "after the enable LDR 0x%x DFR 0x%x; written LDR 0x%x DFR 0x%x", ldr0, dfr0,
		      ldr, dfr);
	}
	apic_write(XAPIC_REG_TPR, 0x20);
	v = apic_read(XAPIC_REG_TPR);
	/*
	 * Bytes 4-15 of a register's 16-byte slot hold none (SDM Vol. 3A
	 * 11.4.1): they read 0, not TPR's bytes.  The page is not mapped
	 * here (emulated on the x2APIC, or the virtual APIC's), so these
	 * plain loads are exitplan's to answer; on a mapped page Bochs's
	 * APIC panics on them.
	 */
	{
		uint32_t r84 = mmio_read32(page + 0x84), r88 = mmio_read32(page + 0x88);
		uint32_t r8c = mmio_read32(page + 0x8c), r24 = mmio_read32(page + 0x24);
		uint8_t b85 = *(volatile uint8_t *)(page + 0x85);
		uint16_t w86 = *(volatile uint16_t *)(page + 0x86);

		check("apic-mode-xapic-again-unaligned-zero", !r84 && !r88 && !r8c && !r24 && !b85 &&
		      !w86, "0x84 0x%x, 0x88 0x%x, 0x8c 0x%x, 0x24 0x%x, byte 0x85 0x%x, word 0x86 "
		      "0x%x (TPR 0x%llx)", r84, r88, r8c, r24, b85, w86, v);
	}
	apic_write(XAPIC_REG_TPR, 0);
	check("apic-mode-xapic-again-tpr", v == 0x20 && apic_read(XAPIC_REG_TPR) == 0,
	      "TPR read 0x%llx after writing 0x20", v);
	check("apic-mode-xapic-again-self-ipi", xapic_ipi(0, (uint32_t)APIC_ICR_SHORTHAND_SELF),
	      "no self IPI (shorthand) in xAPIC mode after x2APIC");
	check("apic-mode-xapic-again-physical-ipi", xapic_ipi(id >> 24, 0),
	      "no fixed IPI to APIC ID %u in xAPIC mode after x2APIC", id >> 24);
	check("apic-mode-xapic-again-logical-ipi", xapic_ipi(1, (uint32_t)APIC_ICR_DEST_LOGICAL),
	      "no fixed IPI to logical destination 1 (flat) in xAPIC mode after x2APIC");

	/* xAPIC -> x2APIC again. */
	f = wrmsr_safe(MSR_IA32_APIC_BASE, x2);
	mode_x2apic = f == NO_FAULT;
	v = 0;
	check("apic-mode-x2apic-again", f == NO_FAULT && rdmsr(MSR_IA32_APIC_BASE) == x2 &&
	      rdmsr_safe(MSR_IA32_X2APIC_APICID, &v) == NO_FAULT && v == x2id,
	      "WRMSR 0x%llx raised %s, x2APIC ID %llu (was %u)", x2, vector_name(f), v, x2id);
	if (f != NO_FAULT)
		return;
	check("apic-mode-x2apic-again-self-ipi", x2apic_self_ipi(), "no self IPI in x2APIC mode again");

	/* Back to xAPIC (through disabled) for what follows. */
	wrmsr(MSR_IA32_APIC_BASE, off);
	mode_x2apic = false;
	wrmsr(MSR_IA32_APIC_BASE, base);
	apic_init();
}
