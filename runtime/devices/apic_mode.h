/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The local APIC's modes as IA32_APIC_BASE selects them, the transitions
 * between them the SDM allows (Vol. 3A 11.12.5, "x2APIC State
 * Transitions"), and the xAPIC register page described in terms of the
 * x2APIC MSRs (Vol. 3A 11.12.1.2, Table 11-6), for a guest that believes
 * its APIC is in xAPIC mode while the physical one stays in x2APIC mode
 * (arch/vmx/apic.c: Bochs 2.7's APIC dies if x2APIC mode is left).
 * Pure: no register is touched here.
 */
#ifndef EXITPLAN_APIC_MODE_H
#define EXITPLAN_APIC_MODE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"

enum apic_mode {
	APIC_MODE_DISABLED,	/* EN = 0, EXTD = 0 */
	APIC_MODE_INVALID,	/* EN = 0, EXTD = 1: never a state, a WRMSR of it is #GP */
	APIC_MODE_XAPIC,	/* EN = 1, EXTD = 0 */
	APIC_MODE_X2APIC,	/* EN = 1, EXTD = 1 */
};

/* The mode IA32_APIC_BASE value @apic_base selects. */
enum apic_mode apic_mode_of(uint64_t apic_base);

/*
 * May WRMSR IA32_APIC_BASE take the APIC from @from to @to?  Staying is
 * allowed; xAPIC <-> disabled, xAPIC -> x2APIC and x2APIC -> disabled
 * are; x2APIC -> xAPIC, disabled -> x2APIC and anything -> invalid are
 * #GP.
 */
bool apic_mode_transition_ok(enum apic_mode from, enum apic_mode to);

/* How an xAPIC register (its 16-byte aligned page offset) maps onto the x2APIC. */
enum xapic_on_x2apic_kind {
	XAPIC_ON_X2APIC_RESERVED,	/* no register: reads 0, writes dropped */
	XAPIC_ON_X2APIC_MSR,		/* MSR 800H + offset / 16, the same format */
	XAPIC_ON_X2APIC_ID,		/* MSR 802H; xAPIC format: the ID in bits 31:24 */
	XAPIC_ON_X2APIC_APR,		/* no x2APIC register: computed (xapic_apr()) */
	XAPIC_ON_X2APIC_EOI,		/* write: MSR 80BH with 0 (any value in xAPIC mode); reads 0 */
	XAPIC_ON_X2APIC_ESR,		/* read MSR 828H; write: MSR 828H with 0 (x2APIC needs 0) */
	XAPIC_ON_X2APIC_LDR,		/* the guest's copy: x2APIC's LDR is read-only, derived */
	XAPIC_ON_X2APIC_DFR,		/* the guest's copy: x2APIC has no DFR */
	XAPIC_ON_X2APIC_ICR_LOW,	/* read MSR 830H[31:0]; a write sends (xapic_icr_to_x2apic()) */
	XAPIC_ON_X2APIC_ICR_HIGH,	/* the guest's copy: x2APIC's ICR is one 64-bit MSR */
};

struct xapic_on_x2apic {
	enum xapic_on_x2apic_kind kind;
	uint32_t msr;		/* the x2APIC MSR, for the kinds that have one */
	bool writable;		/* a write has an effect (else it is dropped, as by the xAPIC) */
};

/* The xAPIC register at page offset @offset (16-byte aligned, < 0x1000). */
struct xapic_on_x2apic xapic_on_x2apic_reg(unsigned int offset);

/*
 * A load of @size bytes at @offset in the xAPIC page.  The registers are
 * 32 bits at 16-byte boundaries (SDM Vol. 3A 11.4.1); bytes 4-15 of each
 * slot hold none.  A load within a register's first 4 bytes reads its
 * bytes: the register to read is @offset & 0xff0, never a guest's own
 * offset (Bochs's APIC panics on any other).  A load that reaches bytes
 * 4-15 reads 0 whole, as KVM's kvm_lapic_reg_read() answers it.
 */
static inline bool xapic_load_in_register(unsigned int offset, unsigned int size)
{
	return (offset & 0xf) + size <= 4;
}

/* The @size bytes at @offset of the register holding @value (xapic_load_in_register()). */
static inline uint32_t xapic_load_bytes(uint32_t value, unsigned int offset, unsigned int size)
{
	value >>= 8 * (offset & 3);
	return size >= 4 ? value : value & ((1u << (8 * size)) - 1);
}

/* x2APIC ICR bits that are reserved (SDM Vol. 3A 11.12.9): WRMSR setting one is #GP. */
#define X2APIC_ICR_RESERVED	0xfff33000ull

/*
 * An x2APIC ICR write the fast path (arch/vmx/msr_io_fast.h) may send to
 * the real ICR as it is: no reserved bit (those are #GP), fixed delivery,
 * physical destination, no shorthand -- the IPI of a guest kernel waking
 * another CPU.  Level and trigger mode are kept as written: for fixed
 * delivery the APIC ignores them (SDM Vol. 3A 11.6.1), and so does the
 * general decode (runtime/vm/vm.c vm_icr_decode()), which takes every other
 * value: INIT, STARTUP, NMI, SMI, lowest priority, logical, shorthands.
 * The bits are arch_bits.h's (APIC_ICR_*).
 */
#define X2APIC_ICR_FAST_MASK	(X2APIC_ICR_RESERVED | APIC_ICR_DELIVERY_MODE_MASK | \
				 APIC_ICR_DEST_LOGICAL | APIC_ICR_SHORTHAND_MASK)

static inline bool x2apic_icr_fixed_physical(uint64_t icr)
{
	return !(icr & X2APIC_ICR_FAST_MASK);
}

/*
 * An xAPIC ICR (high half bits 31:24 the destination) as the x2APIC ICR
 * that sends the same physical-destination or shorthand IPI: the
 * broadcast destination FFH becomes FFFFFFFFH, the bits x2APIC reserves
 * (delivery status among them) are cleared.  A logical destination has no
 * x2APIC equivalent (flat and cluster models differ): the caller
 * delivers those itself.
 */
uint64_t xapic_icr_to_x2apic(uint64_t xapic_icr);

/* The xAPIC DFR as it reads after the guest writes @v: bits 27:0 read as ones. */
static inline uint32_t xapic_dfr_value(uint32_t v)
{
	return v | 0x0fffffffu;
}

/* The xAPIC LDR as it reads after the guest writes @v: bits 23:0 are reserved, 0. */
static inline uint32_t xapic_ldr_value(uint32_t v)
{
	return v & 0xff000000u;
}

/*
 * The arbitration priority (SDM Vol. 3A 11.6.2.4 on the P6/Pentium 4
 * APIC): TPR when its class is at least the highest requested one and
 * above the highest in-service one, else the highest of those classes.
 * @isrv, @irrv: the highest vector in service and requested, 0 for none.
 */
uint32_t xapic_apr(uint32_t tpr, uint32_t isrv, uint32_t irrv);

#endif /* EXITPLAN_APIC_MODE_H */
