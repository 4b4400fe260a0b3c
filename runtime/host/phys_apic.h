/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The physical local APIC of this CPU, in whichever mode the guest left
 * it (under `apic: passthrough` the guest switches it between xAPIC and
 * x2APIC): the mode is read from IA32_APIC_BASE at each access, unlike
 * runtime/host/lapic.c, which fixes it at boot for the host's own IPIs.
 * The xAPIC page is lapic.c's: it never moves.  One definition
 * for msr.c (IA32_APIC_BASE, the TSC-deadline LVT) and apic.c (EOI, IRR).
 */
#ifndef EXITPLAN_VMX_PHYS_APIC_H
#define EXITPLAN_VMX_PHYS_APIC_H

#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"
#include "runtime/host/cpu.h"
#include "msr_index.h"
#include "runtime/host/lapic.h"

static inline bool phys_apic_x2apic_mode(void)
{
	return rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD;
}

/* @reg an xAPIC offset; in x2APIC mode its MSR (SDM Vol. 3A 11.12.1.2). */
static inline uint32_t phys_apic_read(unsigned int reg)
{
	if (phys_apic_x2apic_mode())
		return (uint32_t)rdmsr(MSR_IA32_X2APIC_FIRST + (reg >> 4));
	return lapic_xapic_regs[reg / 4];
}

static inline void phys_apic_write(unsigned int reg, uint32_t v)
{
	if (phys_apic_x2apic_mode())
		wrmsr(MSR_IA32_X2APIC_FIRST + (reg >> 4), v);
	else
		lapic_xapic_regs[reg / 4] = v;
}

/* One bit of the IRR, ISR or TMR (@reg the first of its eight registers). */
static inline bool phys_apic_vector_bit(unsigned int reg, uint8_t vector)
{
	return phys_apic_read(reg + (vector / 32) * 0x10) & (1u << (vector % 32));
}

/* @vector is requested again (IRR) as an edge (TMR clear): events.c's coalescing. */
static inline bool vmx_apic_irr_pending_edge(uint8_t vector)
{
	return phys_apic_vector_bit(XAPIC_REG_IRR, vector) &&
	       !phys_apic_vector_bit(XAPIC_REG_TMR, vector);
}

#endif /* EXITPLAN_VMX_PHYS_APIC_H */
