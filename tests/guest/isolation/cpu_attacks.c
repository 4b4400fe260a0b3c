// SPDX-License-Identifier: GPL-2.0-only
/*
 * The isolation guest's attacks on the CPU state the hypervisor shares
 * with the guest (issue 7, items 6, 7, 9, 10): values the hypervisor
 * executes on the guest's behalf with reserved bits set, an NMI the
 * guest sends itself through a trapped ICR, an interrupt storm,
 * and instruction fetches from device memory.  Hooked into the attack
 * table of main.c; tests/boot/test_vmx_isolation_cpu.py checks each.
 * Every non-fatal one passes on bare Bochs too (tests/guest/bochs-bare.sh).
 */
#include "apic.h"
#include "console.h"
#include "cpu_attacks.h"
#include "exitplan.h"
#include "idt.h"
#include "test.h"
#include "x86.h"

#define STORM_VECTOR		0x41
#define STORM_PIT_VECTOR	0x30	/* ICW2 of the master 8259 under storm_pit=1 */

/*
 * reserved-xcr0: XSETBV of the values the CPU refuses -- one half of the
 * MPX or AMX pair, XCR0[0] clear, XCR number 1 -- must be the guest's
 * #GP.  XSETBV always exits: the hypervisor must check before it executes.
 */
void attack_reserved_xcr0(void)
{
	static const struct { const char *what; uint32_t xcr; uint64_t value; } bad[] = {
		{ "BNDREGS without BNDCSR", 0, XCR0_X87 | XCR0_SSE | XCR0_BNDREGS },
		{ "BNDCSR without BNDREGS", 0, XCR0_X87 | XCR0_SSE | XCR0_BNDCSR },
		{ "TILECFG without TILEDATA", 0, XCR0_X87 | XCR0_SSE | XCR0_TILECFG },
		{ "TILEDATA without TILECFG", 0, XCR0_X87 | XCR0_SSE | XCR0_TILEDATA },
		{ "x87 clear", 0, XCR0_SSE },
		{ "XCR 1", 1, XCR0_X87 },
		{ "bit 63", 0, XCR0_X87 | (1ull << 63) },
	};
	unsigned int refused = 0;

	printf("isolation: attacking reserved-xcr0 (XSETBV with reserved combinations)\n");
	if (!(cpuid(1).ecx & CPUID_1_ECX_XSAVE)) {
		skip("reserved-xcr0", "no XSAVE on this CPU");
		return;
	}
	write_cr4(read_cr4() | X86_CR4_OSXSAVE);
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int v = xsetbv_safe(bad[i].xcr, bad[i].value);

		if (v == X86_EXC_GP)
			refused++;
		else
			printf("  XSETBV(%u, 0x%llx) %s: %s, not #GP\n", bad[i].xcr,
			       (unsigned long long)bad[i].value, bad[i].what, vector_name(v));
	}
	/* A valid one still works afterwards. */
	check("reserved-xcr0", refused == sizeof(bad) / sizeof(bad[0]) &&
	      xsetbv_safe(0, XCR0_X87 | XCR0_SSE) == NO_FAULT,
	      "%u of %u reserved values refused", refused,
	      (unsigned int)(sizeof(bad) / sizeof(bad[0])));
}

static volatile uint32_t storm_irqs;

static void storm_irq(struct trap_frame *frame)
{
	(void)frame;
	storm_irqs++;
	apic_eoi();
}

static void storm_pit_irq(struct trap_frame *frame)
{
	(void)frame;
	storm_irqs++;
	outb(0x20, 0x20);	/* non-specific EOI to the master */
}

/*
 * The 8259s initialised (master at STORM_PIT_VECTOR, only IR0 unmasked)
 * and the 8254's channel 0 in mode 2 (rate generator) at @divisor, or
 * with @divisor 0 the 8259s masked again.
 */
static void storm_pit(uint32_t divisor)
{
	static const uint8_t init[][2] = {
		{ 0x20, 0x11 }, { 0x21, STORM_PIT_VECTOR }, { 0x21, 0x04 }, { 0x21, 0x01 },
		{ 0xa0, 0x11 }, { 0xa1, 0x28 }, { 0xa1, 0x02 }, { 0xa1, 0x01 },
		{ 0x21, 0xfe }, { 0xa1, 0xff },
	};

	if (!divisor) {
		outb(0x21, 0xff);
		return;
	}
	for (unsigned int i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		outb(init[i][0], init[i][1]);
	outb(0x43, 0x34);	/* channel 0, LSB then MSB, mode 2 */
	outb(0x40, divisor & 0xff);
	outb(0x40, (divisor >> 8) & 0xff);
}

/*
 * interrupt-storm: the local APIC timer periodic with a tiny initial
 * count (storm_count=N, default 50: on bare Bochs an interrupt every few
 * instructions of the loop below, which still ends; with 1 even bare
 * Bochs runs only the handler).  Under exitplan every interrupt costs an
 * exit whose time the APIC timer counts too, so the next one is always
 * pending: the guest must still make progress between them -- its own
 * loop runs to the end -- and the hypervisor must stay responsive.
 * storm_ticks=N: the loop runs for N TSC ticks instead, and the guest
 * prints how many times it went round: its progress under the storm, to
 * compare with bare Bochs's (issue 24: at least half of it).
 * storm_div=N: the timer's divide value (1, 2, 4 ... 128; default 1), for
 * periods up to 128 times the count.  storm_pit=1: the storm comes from
 * the 8254 through the 8259 instead, storm_count its divisor (one count
 * is 1/1193182 s: at Bochs's 10 MHz TSC about 8.4 ticks).
 */
#define STORM_LOOPS	500
#define STORM_COUNT	50
/*
 * QEMU TCG's APIC timer counts nanoseconds of host time: a 50 ns period
 * is a storm the emulator itself cannot serve (the loop crawled past CI's
 * 60 s timeout on a slower machine), so there a 100 us period is used.
 */
#define STORM_COUNT_TCG	100000

/* The divide configuration register for a divide by @div (SDM 11.5.4: bits 0, 1 and 3). */
static uint32_t storm_dcr(uint32_t div)
{
	uint32_t x = 0;

	if (div <= 1)
		return APIC_TIMER_DIV_1;
	while ((2u << x) < div)
		x++;
	return ((x & 4) << 1) | (x & 3);
}

void attack_interrupt_storm(void)
{
	uint32_t count = cmdline_u32("storm_count",
				     qemu_tcg_detected() ? STORM_COUNT_TCG : STORM_COUNT);
	uint32_t div = cmdline_u32("storm_div", 1);
	bool pit = cmdline_u32("storm_pit", 0);
	uint32_t ticks = cmdline_u32("storm_ticks", 0);
	volatile uint32_t loops = 0;
	uint32_t irqs;
	uint64_t end;

	if (div < 1 || div > 128 || (div & (div - 1)))
		div = 1;	/* a power of two up to 128, or the default */
	if (pit)
		printf("isolation: attacking interrupt-storm (the 8254 through the 8259, divisor "
		       "%u)\n", (unsigned int)count);
	else
		printf("isolation: attacking interrupt-storm (periodic APIC timer, initial count "
		       "%u, divide by %u)\n", (unsigned int)count, (unsigned int)div);
	storm_irqs = 0;
	if (pit) {
		irq_register(STORM_PIT_VECTOR, storm_pit_irq);
		storm_pit(count ? count : 1);
	} else {
		apic_init();
		irq_register(STORM_VECTOR, storm_irq);
		apic_write(XAPIC_REG_TIMER_DIV_CONF, storm_dcr(div));
		apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_PERIODIC | STORM_VECTOR);
		apic_write(XAPIC_REG_TIMER_INIT_COUNT, count);
	}
	end = rdtsc() + ticks;
	sti();
	if (ticks) {
		while (rdtsc() < end)
			loops++;
	} else {
		while (loops < STORM_LOOPS)
			loops++;
	}
	cli();
	if (pit) {
		storm_pit(0);
	} else {
		apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_MASKED | STORM_VECTOR);
		apic_write(XAPIC_REG_TIMER_INIT_COUNT, 0);
	}
	irqs = storm_irqs;
	if (ticks) {
		printf("isolation: interrupt-storm: %u loops in %u ticks under %u interrupts\n",
		       (unsigned int)loops, (unsigned int)ticks, (unsigned int)irqs);
		check("interrupt-storm", loops > 0 && irqs > 0, "%u loops, %u interrupts",
		      (unsigned int)loops, (unsigned int)irqs);
		return;
	}
	printf("isolation: interrupt-storm: %u loops done under %u interrupts\n",
	       (unsigned int)loops, (unsigned int)irqs);
	/* QEMU TCG's APIC timer counts host time: the short loop may end before it fires. */
	if (!irqs && qemu_tcg_detected()) {
		skip("interrupt-storm", "QEMU TCG's timer fired no interrupt within the loop");
		return;
	}
	check("interrupt-storm", loops == STORM_LOOPS && irqs > 0,
	      "%u loops, %u interrupts", (unsigned int)loops, (unsigned int)irqs);
}

/*
 * nmi-root: NMIs to the guest's own APIC ID through the x2APIC ICR.  The
 * WRMSR exits, in VMX root operation: exitplan delivers the NMI itself,
 * as a virtual NMI (arch/vmx/apic.c; none reaches the hardware), and it
 * must reach the guest (its NMI handler runs), never the hypervisor's
 * panic.  Last in the table: the APIC stays in x2APIC mode.
 */
void attack_nmi_root(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);
	uint32_t id, spins = 20000000;
	unsigned int taken = 0;

	printf("isolation: attacking nmi-root (self-NMIs through the x2APIC ICR)\n");
	if (!(cpuid(1).ecx & CPUID_1_ECX_X2APIC)) {
		skip("nmi-root", "no x2APIC on this CPU");
		return;
	}
	if (!(base & APIC_BASE_EXTD))
		wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD);
	id = (uint32_t)rdmsr(MSR_IA32_X2APIC_APICID);
	for (unsigned int i = 0; i < 3; i++) {
		uint32_t left = spins;

		/* The NMI is taken as an "exception" at the label: the loop ends. */
		expect_fault(X86_EXC_NMI);
		asm volatile(ASM_TRY("1f")
			     "wrmsr\n\t"
			     "2: pause\n\t"
			     "decl %%ebx\n\t"
			     "jnz 2b\n\t"
			     "1:"
			     : "+b"(left)
			     : "c"(MSR_IA32_X2APIC_ICR), "a"((uint32_t)APIC_ICR_DELIVERY_MODE_NMI), "d"(id)
			     : "memory");
		if (fault_happened())
			taken++;
	}
	check("nmi-root", taken == 3, "%u of 3 NMIs reached the guest's handler", taken);
}

/*
 * mmio-exec-vga, mmio-exec-ioapic: a jump into device memory.  Fatal:
 * the hypervisor must stop the guest with a report (an instruction fetch
 * from MMIO), never hand the emulator an instruction stream in a device.
 */
static void jump_to(uintptr_t pa)
{
	asm volatile("call *%0" : : "r"(pa) : "memory");
}

void attack_mmio_exec_vga(void)
{
	printf("isolation: attacking mmio-exec-vga (jump to 0xa0000)\n");
	jump_to(0xa0000);
	check("mmio-exec-vga", false, "the jump into VGA memory returned");
}

void attack_mmio_exec_ioapic(void)
{
	printf("isolation: attacking mmio-exec-ioapic (jump to 0xfec00000)\n");
	jump_to(0xfec00000);
	check("mmio-exec-ioapic", false, "the jump into the IO-APIC page returned");
}
