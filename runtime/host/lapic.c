// SPDX-License-Identifier: GPL-2.0-only
#include "runtime/host/cpu.h"
#include "runtime/host/lapic.h"
#include "runtime/host/x86_arch.h"

/* ICR delivery-status polls before an IPI counts as lost. */
#define LAPIC_ICR_SPIN_LIMIT	100000

volatile uint32_t *lapic_xapic_regs;	/* MMIO base, identity-mapped (UC) */
static bool x2apic;

bool lapic_init(void)
{
	uint32_t eax, ebx, ecx, edx;
	uint64_t base;

	cpuid_count(CPUID_LEAF_FEATURES, 0, &eax, &ebx, &ecx, &edx);
	if (!(edx & CPUID_1_EDX_APIC))
		return false;
	base = rdmsr(MSR_IA32_APIC_BASE);
	/* The boot page tables map the top of the first 4 GiB uncached. */
	lapic_xapic_regs = (volatile uint32_t *)(uintptr_t)(base & APIC_BASE_ADDR_MASK);
	if (!(base & APIC_BASE_EN))
		return false;
	x2apic = base & APIC_BASE_EXTD;
	return true;
}

bool lapic_x2apic_mode(void)
{
	return x2apic;
}

static uint32_t xapic_read(unsigned int reg)
{
	return lapic_xapic_regs[reg / 4];
}

static void xapic_write(unsigned int reg, uint32_t v)
{
	lapic_xapic_regs[reg / 4] = v;
}

uint32_t lapic_id(void)
{
	if (x2apic)
		return rdmsr(MSR_IA32_X2APIC_APICID);
	return (xapic_read(XAPIC_REG_ID) >> 24) & 0xff;
}

bool lapic_send_ipi(uint32_t dest_apic_id, uint64_t icr)
{
	unsigned int i;

	if (x2apic) {
		/* One WRMSR; x2APIC has no delivery-status bit to wait for. */
		wrmsr(MSR_IA32_X2APIC_ICR,
		      ((uint64_t)dest_apic_id << APIC_ICR_X2APIC_DEST_SHIFT) | icr);
		return true;
	}
	for (i = 0; i < LAPIC_ICR_SPIN_LIMIT; i++) {
		if (!(xapic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING))
			break;
		cpu_relax();
	}
	if (i == LAPIC_ICR_SPIN_LIMIT)
		return false;
	/* The high half first: writing the low half sends. */
	xapic_write(XAPIC_REG_ICR_HIGH,
		    dest_apic_id << (APIC_ICR_XAPIC_DEST_SHIFT - 32));
	xapic_write(XAPIC_REG_ICR_LOW, (uint32_t)icr);
	return true;
}
