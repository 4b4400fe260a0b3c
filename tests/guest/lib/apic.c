// SPDX-License-Identifier: GPL-2.0-only
#include "apic.h"
#include "idt.h"
#include "x86.h"

#define PIC1_DATA	0x21
#define PIC2_DATA	0xa1

static uintptr_t apic_base;
volatile uint32_t apic_timer_irqs;

void pic_mask_all(void)
{
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);
}

uint32_t apic_read(uint32_t reg)
{
	return mmio_read32(apic_base + reg);
}

void apic_write(uint32_t reg, uint32_t value)
{
	mmio_write32(apic_base + reg, value);
}

void apic_eoi(void)
{
	apic_write(XAPIC_REG_EOI, 0);
}

static void apic_timer_irq(struct trap_frame *frame)
{
	(void)frame;
	apic_timer_irqs++;
	apic_eoi();
}

/* A spurious interrupt sets no ISR bit, so it gets no EOI (SDM 10.9). */
static void apic_spurious_irq(struct trap_frame *frame)
{
	(void)frame;
}

void apic_init(void)
{
	apic_base = (uintptr_t)(rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK);
	irq_register(APIC_TIMER_VECTOR, apic_timer_irq);
	irq_register(APIC_SPURIOUS_VECTOR, apic_spurious_irq);

	apic_write(XAPIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
	apic_write(XAPIC_REG_TPR, 0);
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_MASKED | APIC_TIMER_VECTOR);
	apic_write(XAPIC_REG_TIMER_INIT_COUNT, 0);
	apic_write(XAPIC_REG_TIMER_DIV_CONF, APIC_TIMER_DIV_1);
}

void apic_timer_oneshot(uint32_t initial_count)
{
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_ONESHOT | APIC_TIMER_VECTOR);
	apic_write(XAPIC_REG_TIMER_INIT_COUNT, initial_count);
}

void apic_timer_tsc_deadline_mode(void)
{
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_TSC_DEADLINE | APIC_TIMER_VECTOR);
	/*
	 * The LVT write is an MMIO store and the deadline a WRMSR, which is
	 * not serializing for this MSR: order them, or the deadline can reach
	 * the APIC while it is still in the old mode (SDM 10.5.4.1; Linux
	 * does the same MFENCE in lapic_next_deadline()).
	 */
	asm volatile("mfence" : : : "memory");
}

void apic_timer_set_deadline(uint64_t deadline)
{
	wrmsr(MSR_IA32_TSC_DEADLINE, deadline);
}

void apic_timer_tsc_deadline(uint64_t deadline)
{
	apic_timer_tsc_deadline_mode();
	apic_timer_set_deadline(deadline);
}

void apic_timer_stop(void)
{
	apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_MASKED | APIC_TIMER_VECTOR);
	apic_write(XAPIC_REG_TIMER_INIT_COUNT, 0);
}

bool cpu_has_tsc_deadline(void)
{
	return cpuid(CPUID_LEAF_FEATURES).ecx & CPUID_1_ECX_TSC_DEADLINE;
}

bool apic_timer_wait_spinning(uint32_t irqs_before, uint64_t max_ticks)
{
	uint64_t start = rdtsc();
	bool fired;

	sti();
	while (apic_timer_irqs == irqs_before && rdtsc() - start < max_ticks)
		pause();
	cli();
	fired = apic_timer_irqs != irqs_before;
	return fired;
}

void apic_timer_wait_halted(uint32_t irqs_before)
{
	while (apic_timer_irqs == irqs_before) {
		sti_hlt();
		cli();
	}
}
