// SPDX-License-Identifier: GPL-2.0-only
/*
 * The isolation guest's silent attacks (issue 24, part 4): guests that
 * never end and never say anything again.  Each prints its line and then
 * never returns; only the hypervisor's own deadline (its `deadline=`
 * option) can end the run, and its report must be the last word.
 * tests/boot/test_vmx_isolation_silent.py boots each with a deadline.
 *
 * - silent-hlt: every CPU in a CLI; HLT loop (the APs started through the
 *   MADT, as the smp guest does), NMIs aside nothing can wake them.
 * - silent-idle: every CPU in an STI; HLT loop with no interrupt source
 *   (the 8259s masked, the APIC timer off): idle forever.
 * - silent-spin: CLI, then a loop that never exits to the hypervisor.
 * - silent-pit: the 8254 at divisor 1 (mode 2) through the 8259 with
 *   interrupts on: an interrupt storm, forever.
 * - silent-apic-storm: the local APIC timer periodic with an initial
 *   count of 1, interrupts on, forever.
 */
#include "apic.h"
#include "console.h"
#include "idt.h"
#include "silent_attacks.h"
#include "smp.h"
#include "test.h"
#include "x86.h"

#define SILENT_PIT_VECTOR	0x20	/* ICW2 of the master 8259 below */
#define SILENT_APIC_VECTOR	0x42

static void __attribute__((noreturn)) halt_forever(void)
{
	for (;;)
		asm volatile("cli; hlt" : : : "memory");
}

static volatile uint32_t silent_irqs;

static void silent_pit_irq(struct trap_frame *frame)
{
	(void)frame;
	silent_irqs++;
	outb(0x20, 0x20);	/* non-specific EOI to the master */
}

static void silent_apic_irq(struct trap_frame *frame)
{
	(void)frame;
	silent_irqs++;
	apic_eoi();
}

static void __attribute__((noreturn)) idle_forever(void)
{
	for (;;)
		asm volatile("sti; hlt" : : : "memory");
}

/* Every other CPU the MADT lists runs @ap; then this one runs it too. */
static void __attribute__((noreturn)) all_cpus(const char *name, const char *what,
					       void (*ap)(void))
{
	uint32_t ids[SMP_MAX_CPUS];
	unsigned int n = smp_madt_apic_ids(ids, SMP_MAX_CPUS);

	printf("isolation: attacking %s (%s on each of %u CPUs)\n", name, what, n ? n : 1);
	if (n > 1) {
		apic_init();
		smp_install_trampoline(ap);
		smp_start_aps(ids, n, false);
		for (unsigned int i = 0; i < 1000 && smp_trampoline_arrivals() < n - 1; i++)
			smp_delay(100000);
		printf("isolation: %s: %u of %u APs started; the BSP follows\n", name,
		       (unsigned int)smp_trampoline_arrivals(), n - 1);
	}
	console_flush();
	ap();
	for (;;)
		;
}

void attack_silent_hlt(void)
{
	all_cpus("silent-hlt", "CLI; HLT", halt_forever);
}

void attack_silent_idle(void)
{
	/* Both 8259s masked; the APIC timer masked (apic_init() leaves it so). */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	apic_init();
	all_cpus("silent-idle", "STI; HLT, no interrupt source", idle_forever);
}

void attack_silent_spin(void)
{
	printf("isolation: attacking silent-spin (CLI, then a loop without exits)\n");
	console_flush();
	cli();
	for (;;)
		asm volatile("" : : : "memory");
}

void attack_silent_pit(void)
{
	static const uint8_t init[][2] = {
		{ 0x20, 0x11 }, { 0x21, SILENT_PIT_VECTOR }, { 0x21, 0x04 }, { 0x21, 0x01 },
		{ 0xa0, 0x11 }, { 0xa1, 0x28 }, { 0xa1, 0x02 }, { 0xa1, 0x01 },
		{ 0x21, 0xfe }, { 0xa1, 0xff },
	};

	printf("isolation: attacking silent-pit (the 8254 at divisor 1 through the 8259, "
	       "interrupts on)\n");
	console_flush();
	cli();
	irq_register(SILENT_PIT_VECTOR, silent_pit_irq);
	for (unsigned int i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		outb(init[i][0], init[i][1]);
	outb(0x43, 0x34);	/* channel 0, LSB then MSB, mode 2 (rate generator) */
	outb(0x40, 1);
	outb(0x40, 0);
	sti();
	for (;;)
		pause();
}

void attack_silent_apic_storm(void)
{
	printf("isolation: attacking silent-apic-storm (periodic APIC timer, initial count 1, "
	       "interrupts on)\n");
	console_flush();
	apic_init();
	irq_register(SILENT_APIC_VECTOR, silent_apic_irq);
	apic_write(XAPIC_REG_TIMER_DIV_CONF, APIC_TIMER_DIV_1);
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_PERIODIC | SILENT_APIC_VECTOR);
	apic_write(XAPIC_REG_TIMER_INIT_COUNT, 1);
	sti();
	for (;;)
		pause();
}
