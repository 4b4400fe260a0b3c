/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The checks the CPU itself makes before it loads a value, for the values
 * the exit handlers load on the guest's behalf: a value the guest could
 * not have loaded on hardware gets the guest its #GP, and never reaches
 * the host's own registers (where the same check would be a #GP in the
 * hypervisor).  Pure functions, unit-tested on the host
 * (tests/unit/test_arch_checks.c).
 */
#ifndef EXITPLAN_ARCH_CHECKS_H
#define EXITPLAN_ARCH_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

/* MOV to CR8: bits 63:4 are reserved (SDM Vol. 3A 2.5, 11.8.6.1). */
bool cr8_valid(uint64_t v);

/*
 * XSETBV's checks on the new XCR0 (SDM Vol. 2C XSETBV, Vol. 1 13.3):
 * bit 0 set; only bits @supported (CPUID.(EAX=0DH,ECX=0):EDX:EAX) may be
 * set; AVX needs SSE; the AVX-512 bits 7:5 all or none, and with AVX;
 * BNDREGS/BNDCSR and TILECFG/TILEDATA both or neither.
 */
bool xcr0_valid(uint64_t xcr0, uint64_t supported);

/*
 * A guest write of @value to the local APIC's LVT register at xAPIC
 * offset @reg (x2APIC MSR 800H + @reg / 16) the physical APIC may take
 * unmasked.  CMCI, thermal, performance counter, LINT0 and LINT1 have a
 * delivery mode (SDM Vol. 3A 11.5.1): SMI would put the CPU in SMM,
 * outside VMX and EPT; INIT, blocked in VMX root, would reset the CPU
 * after VMXOFF; 001, 011 and 110 are reserved.  Fixed, NMI and ExtINT
 * reach only the guest's own CPU as interrupts it owns.  The caller
 * writes a refused value masked, as the I/O APIC's entries
 * (ioapic_delivery_allowed()).  The timer and error entries have no
 * delivery mode: always allowed.
 */
bool apic_lvt_delivery_allowed(unsigned int reg, uint32_t value);

/* A linear address is canonical: bits 63:47 all equal (48-bit linear addresses). */
bool is_canonical_address(uint64_t la);

/*
 * IA32_PAT (SDM Vol. 3A 12.12.2): eight entries of 3 bits, each one of
 * UC, WC, WT, WP, WB, UC- (2 and 3 are reserved), and bits 7:3 of each
 * byte reserved.
 */
bool pat_valid(uint64_t pat);

/* An MTRR memory type (Vol. 3A 12.11.2): UC, WC (when @wc), WT, WP, WB. */
bool mtrr_type_valid(unsigned int type, bool wc);
/* IA32_MTRR_DEF_TYPE: type, FE, E; bits 9:8 and 63:12 reserved. */
bool mtrr_def_type_valid(uint64_t v, bool wc);
/* Fixed-range MTRRs: eight memory types. */
bool mtrr_fixed_valid(uint64_t v, bool wc);
/* IA32_MTRR_PHYSBASEn: type, bits 11:8 and MAXPHYADDR..63 reserved. */
bool mtrr_physbase_valid(uint64_t v, unsigned int maxphyaddr, bool wc);
/* IA32_MTRR_PHYSMASKn: V (bit 11); bits 10:0 and MAXPHYADDR..63 reserved. */
bool mtrr_physmask_valid(uint64_t v, unsigned int maxphyaddr);

/*
 * The guest's time-stamp counter: host TSC + offset (the VMCS TSC
 * offset), and its IA32_TSC_ADJUST.  SDM Vol. 3B 17.17.3: a WRMSR to
 * IA32_TIME_STAMP_COUNTER that adds X to the TSC also adds X to
 * IA32_TSC_ADJUST; a WRMSR to IA32_TSC_ADJUST that adds X to it also adds
 * X to the TSC.  Two's-complement wrap-around, as the counters do.
 */
struct guest_tsc {
	uint64_t offset;	/* TSC_OFFSET */
	uint64_t adjust;	/* the guest's IA32_TSC_ADJUST */
};

static inline uint64_t guest_tsc_read(const struct guest_tsc *t, uint64_t host_tsc)
{
	return host_tsc + t->offset;
}

void guest_tsc_write(struct guest_tsc *t, uint64_t host_tsc, uint64_t value);
void guest_tsc_adjust_write(struct guest_tsc *t, uint64_t value);

/*
 * A data access through a segment outside 64-bit mode (SDM Vol. 3A 5.3,
 * 5.5; 3.4.5.1): @ar is the VMCS access-rights format, @limit the
 * byte-granular limit the VMCS holds, [@offset, @offset + @size) the
 * effective addresses touched.  Protected mode checks type (a write needs
 * a writable data segment, a read a readable one) and the limit
 * (expand-down segments invert it, with 0xffff or 0xffffffff as the top
 * by the B flag); real and virtual-8086 mode only the limit.  In 64-bit
 * mode no segment check applies (the caller checks canonicality).
 */
enum seg_check {
	SEG_OK = 0,
	SEG_FAULT,	/* #GP(0), or #SS(0) for a stack-segment access */
};

enum seg_check seg_check_access(uint32_t ar, uint32_t limit, uint64_t offset,
				unsigned int size, bool write, bool protected_mode);

#endif /* EXITPLAN_ARCH_CHECKS_H */
