// SPDX-License-Identifier: GPL-2.0-only
/*
 * Starting APs (smp.h).  The trampoline: real mode at CS = 0x0700, IP 0,
 * counts its arrival, loads a flat GDT of entry.S's selectors (0x08 code,
 * 0x10 data), enters protected mode and jumps to ap_entry32 in the image,
 * which takes the next of SMP_AP_STACKS stacks and calls the entry.
 */
#include "acpi.h"
#include "apic.h"
#include "smp.h"
#include "string.h"
#include "x86.h"

bool smp_x2apic;
uint8_t smp_ap_stacks[SMP_AP_STACKS][SMP_AP_STACK_SIZE] __attribute__((aligned(16)));
volatile uint32_t smp_ap_stack_next;
void (*volatile smp_ap_entry)(void);
void smp_ap_start(void);

extern const char smp_tramp_start[], smp_tramp_end[], smp_tramp_arrivals[];
asm(".pushsection .rodata\n"
    ".balign 16\n"
    "smp_tramp_start:\n"
    ".code16\n"
    "	cli\n"
    "	movw %cs, %ax\n"
    "	movw %ax, %ds\n"
    "	lock incl smp_tramp_arrivals - smp_tramp_start\n"
    "	lgdtl smp_tramp_gdtr - smp_tramp_start\n"
    "	movl %cr0, %eax\n"
    "	orl $1, %eax\n"
    "	movl %eax, %cr0\n"
    "	ljmpl $0x08, $smp_ap_entry32\n"
    ".balign 8\n"
    "smp_tramp_gdt:\n"
    "	.quad 0\n"
    "	.quad 0x00cf9a000000ffff\n"	/* 0x08: flat 32-bit code */
    "	.quad 0x00cf92000000ffff\n"	/* 0x10: flat data */
    "smp_tramp_gdtr:\n"
    "	.word 23\n"
    "	.long smp_tramp_gdt - smp_tramp_start + 0x7000\n"	/* SMP_TRAMPOLINE_PA */
    ".balign 4\n"
    "smp_tramp_arrivals:\n"
    "	.long 0\n"
    "smp_tramp_end:\n"
    ".code32\n"
    ".popsection\n"
    ".text\n"
    "smp_ap_entry32:\n"
    "	movw $0x10, %ax\n"
    "	movw %ax, %ds\n"
    "	movw %ax, %es\n"
    "	movw %ax, %ss\n"
    "	movw %ax, %fs\n"
    "	movw %ax, %gs\n"
    "	movl $1, %eax\n"
    "	lock xaddl %eax, smp_ap_stack_next\n"
    "	andl $31, %eax\n"			/* SMP_AP_STACKS - 1 */
    "	incl %eax\n"
    "	shll $12, %eax\n"			/* SMP_AP_STACK_SIZE */
    "	leal smp_ap_stacks(%eax), %esp\n"
    "	pushl $0\n"
    "	popfl\n"
    "	call smp_ap_start\n"
    "1:	cli\n"
    "	hlt\n"
    "	jmp 1b\n");

unsigned int smp_cpu_slot(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	uintptr_t first = (uintptr_t)smp_ap_stacks;

	if (sp > first && sp <= first + sizeof(smp_ap_stacks))
		return 1 + (sp - first - 1) / SMP_AP_STACK_SIZE;
	return 0;
}

void smp_ap_start(void)
{
	smp_ap_entry();
}

static volatile uint32_t *arrivals(void)
{
	return phys_ptr(SMP_TRAMPOLINE_PA + (smp_tramp_arrivals - smp_tramp_start));
}

uint32_t smp_trampoline_arrivals(void)
{
	return *arrivals();
}

void smp_install_trampoline(void (*entry)(void))
{
	smp_ap_entry = entry;
	memcpy(phys_ptr(SMP_TRAMPOLINE_PA), smp_tramp_start, smp_tramp_end - smp_tramp_start);
	*arrivals() = 0;
}

unsigned int smp_madt_apic_ids(uint32_t *ids, unsigned int max)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *madt = rsdp ? acpi_find_table(rsdp, "APIC") : NULL;
	const uint8_t *p, *end;
	unsigned int n = 0;

	if (!madt)
		return 0;
	p = (const uint8_t *)madt + sizeof(*madt) + 8;	/* local APIC address, flags */
	end = (const uint8_t *)madt + madt->length;
	while (p + 2 <= end && p[1] >= 2) {
		/* Type 0: processor local APIC (ACPI 6.x 5.2.12.2), enabled if flags bit 0. */
		if (p[0] == 0 && p[1] >= 8 && (p[4] & 1) && n < max)
			ids[n++] = p[3];
		p += p[1];
	}
	return n;
}

void smp_send_ipi(uint32_t dest, uint32_t low)
{
	if (smp_x2apic) {
		wrmsr(0x830, ((uint64_t)dest << 32) | low);	/* the x2APIC ICR */
		return;
	}
	apic_write(XAPIC_REG_ICR_HIGH, dest << 24);
	apic_write(XAPIC_REG_ICR_LOW, low);
	for (unsigned int i = 0; i < 100000 && (apic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING); i++)
		pause();
}

uint32_t smp_apic_id(void)
{
	return smp_x2apic ? (uint32_t)rdmsr(0x802) : apic_read(XAPIC_REG_ID) >> 24;
}

void smp_delay(uint64_t ticks)
{
	uint64_t t = rdtsc();

	while (rdtsc() - t < ticks)
		pause();
}

/* Between INIT and STARTUP, and STARTUP and STARTUP: far more than the SDM's 10 ms and 200 us need on Bochs. */
#define SMP_SETTLE_TICKS	2000000ull

void smp_start_aps(const uint32_t *ids, unsigned int n, bool each)
{
	uint32_t init = APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT | APIC_ICR_TRIGGER_LEVEL;
	uint32_t sipi = APIC_ICR_DELIVERY_MODE_STARTUP | (SMP_TRAMPOLINE_PA >> 12);
	uint32_t self = smp_apic_id();

	if (!each) {
		smp_send_ipi(0, init | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		smp_send_ipi(0, (init & ~(uint32_t)APIC_ICR_LEVEL_ASSERT) |
			     APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		smp_delay(SMP_SETTLE_TICKS);
		smp_send_ipi(0, sipi | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		smp_delay(SMP_SETTLE_TICKS);
		smp_send_ipi(0, sipi | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		return;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (ids[i] == self)
			continue;
		smp_send_ipi(ids[i], init);
		smp_delay(SMP_SETTLE_TICKS);
		smp_send_ipi(ids[i], sipi);
		smp_delay(SMP_SETTLE_TICKS);
		smp_send_ipi(ids[i], sipi);
	}
}
