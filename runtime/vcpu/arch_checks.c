// SPDX-License-Identifier: GPL-2.0-only
/*
 * The architectural validity checks of arch_checks.h.  No VMCS access, no
 * host state: the same file is compiled into the hypervisor and into the
 * unit tests.
 */
#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"

bool cr8_valid(uint64_t v)
{
	return !(v >> 4);
}

bool xcr0_valid(uint64_t xcr0, uint64_t supported)
{
	if (!(xcr0 & XCR0_X87) || (xcr0 & ~supported))
		return false;
	if ((xcr0 & XCR0_AVX) && !(xcr0 & XCR0_SSE))
		return false;
	if ((xcr0 & XCR0_AVX512) &&
	    ((xcr0 & XCR0_AVX512) != XCR0_AVX512 || !(xcr0 & XCR0_AVX)))
		return false;
	/* Both or neither (XSETBV: #GP if XCR0[3] != XCR0[4], XCR0[17] != XCR0[18]). */
	if ((xcr0 & XCR0_BNDREGS_BNDCSR) && (xcr0 & XCR0_BNDREGS_BNDCSR) != XCR0_BNDREGS_BNDCSR)
		return false;
	if ((xcr0 & XCR0_TILECFG_TILEDATA) &&
	    (xcr0 & XCR0_TILECFG_TILEDATA) != XCR0_TILECFG_TILEDATA)
		return false;
	return true;
}

bool apic_lvt_delivery_allowed(unsigned int reg, uint32_t value)
{
	uint32_t mode = value & APIC_LVT_DELIVERY_MODE_MASK;

	if (reg != XAPIC_REG_LVT_CMCI && reg != XAPIC_REG_LVT_THERMAL &&
	    reg != XAPIC_REG_LVT_PERF && reg != XAPIC_REG_LVT_LINT0 && reg != XAPIC_REG_LVT_LINT1)
		return true;
	return (value & APIC_LVT_MASKED) || mode == APIC_LVT_DELIVERY_MODE_FIXED ||
	       mode == APIC_LVT_DELIVERY_MODE_NMI || mode == APIC_LVT_DELIVERY_MODE_EXTINT;
}

bool is_canonical_address(uint64_t la)
{
	uint64_t upper = la >> 47;	/* bits 63:47 */

	return upper == 0 || upper == 0x1ffff;
}

static bool pat_type_valid(unsigned int t)
{
	return t == X86_MEMTYPE_UC || t == X86_MEMTYPE_WC || t == X86_MEMTYPE_WT ||
	       t == X86_MEMTYPE_WP || t == X86_MEMTYPE_WB || t == X86_MEMTYPE_UC_MINUS;
}

bool pat_valid(uint64_t pat)
{
	for (unsigned int i = 0; i < 8; i++) {
		if (!pat_type_valid((pat >> (8 * i)) & 0xff))
			return false;
	}
	return true;
}

bool mtrr_type_valid(unsigned int type, bool wc)
{
	return type == X86_MEMTYPE_UC || (type == X86_MEMTYPE_WC && wc) ||
	       type == X86_MEMTYPE_WT || type == X86_MEMTYPE_WP || type == X86_MEMTYPE_WB;
}

bool mtrr_def_type_valid(uint64_t v, bool wc)
{
	const uint64_t defined = MTRR_DEF_TYPE_TYPE_MASK | MTRR_DEF_TYPE_FE | MTRR_DEF_TYPE_E;

	return !(v & ~defined) && mtrr_type_valid(v & MTRR_DEF_TYPE_TYPE_MASK, wc);
}

bool mtrr_fixed_valid(uint64_t v, bool wc)
{
	for (unsigned int i = 0; i < MTRR_FIXED_TYPES_PER_MSR; i++) {
		if (!mtrr_type_valid((v >> (8 * i)) & 0xff, wc))
			return false;
	}
	return true;
}

/* Bits MAXPHYADDR..63: reserved in physical-address fields. */
static uint64_t above_maxphyaddr(unsigned int maxphyaddr)
{
	return maxphyaddr >= 64 ? 0 : ~0ull << maxphyaddr;
}

bool mtrr_physbase_valid(uint64_t v, unsigned int maxphyaddr, bool wc)
{
	const uint64_t reserved = 0xf00ull | above_maxphyaddr(maxphyaddr);

	return !(v & reserved) && mtrr_type_valid(v & MTRR_PHYS_TYPE_MASK, wc);
}

bool mtrr_physmask_valid(uint64_t v, unsigned int maxphyaddr)
{
	const uint64_t reserved = (MTRR_PHYS_VALID - 1) | above_maxphyaddr(maxphyaddr);

	return !(v & reserved);
}

void guest_tsc_write(struct guest_tsc *t, uint64_t host_tsc, uint64_t value)
{
	uint64_t delta = value - guest_tsc_read(t, host_tsc);

	t->offset += delta;
	t->adjust += delta;
}

void guest_tsc_adjust_write(struct guest_tsc *t, uint64_t value)
{
	t->offset += value - t->adjust;
	t->adjust = value;
}

/* Segment type bits (SDM Vol. 3A 3.4.5.1, Table 3-1). */
#define SEG_TYPE_CODE		0x8	/* 1 = code, 0 = data */
#define SEG_TYPE_EXPAND_DOWN	0x4	/* data: expand-down */
#define SEG_TYPE_WRITABLE	0x2	/* data: writable; code: readable */

enum seg_check seg_check_access(uint32_t ar, uint32_t limit, uint64_t offset,
				unsigned int size, bool write, bool protected_mode)
{
	unsigned int type = ar & VMX_AR_TYPE_MASK;
	uint64_t last = offset + size - 1;

	if (ar & VMX_AR_UNUSABLE)
		return SEG_FAULT;
	if (protected_mode) {
		if (type & SEG_TYPE_CODE) {
			/* Code segments are never writable; readable only with R. */
			if (write || !(type & SEG_TYPE_WRITABLE))
				return SEG_FAULT;
		} else if (write && !(type & SEG_TYPE_WRITABLE)) {
			return SEG_FAULT;
		}
	}
	if (!(type & SEG_TYPE_CODE) && (type & SEG_TYPE_EXPAND_DOWN) && protected_mode) {
		uint64_t top = (ar & VMX_AR_DB) ? 0xffffffffull : 0xffffull;

		/* Valid offsets are limit + 1 .. top. */
		return offset > limit && last <= top ? SEG_OK : SEG_FAULT;
	}
	/*
	 * An expand-up segment of 4 GiB: an access past its top may or may
	 * not fault (SDM Vol. 3A 5.3, implementation-specific); Bochs lets it
	 * wrap around to offset 0, and so does exitplan.
	 */
	if (limit == 0xffffffffu && offset <= limit)
		return SEG_OK;
	return last <= limit && last >= offset ? SEG_OK : SEG_FAULT;
}
