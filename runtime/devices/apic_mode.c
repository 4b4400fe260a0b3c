// SPDX-License-Identifier: GPL-2.0-only
/* The local APIC's modes and the xAPIC page on the x2APIC MSRs (apic_mode.h). */
#include "runtime/devices/apic_mode.h"
#include "arch_bits.h"
#include "msr_index.h"

enum apic_mode apic_mode_of(uint64_t apic_base)
{
	bool en = apic_base & APIC_BASE_EN, extd = apic_base & APIC_BASE_EXTD;

	if (!en)
		return extd ? APIC_MODE_INVALID : APIC_MODE_DISABLED;
	return extd ? APIC_MODE_X2APIC : APIC_MODE_XAPIC;
}

bool apic_mode_transition_ok(enum apic_mode from, enum apic_mode to)
{
	if (to == APIC_MODE_INVALID)
		return false;
	if (from == to)
		return true;
	/* SDM Vol. 3A Figure 11-27: x2APIC is entered from xAPIC only, and left to disabled only. */
	if (to == APIC_MODE_X2APIC)
		return from == APIC_MODE_XAPIC;
	if (from == APIC_MODE_X2APIC)
		return to == APIC_MODE_DISABLED;
	return true;	/* xAPIC <-> disabled */
}

struct xapic_on_x2apic xapic_on_x2apic_reg(unsigned int offset)
{
	struct xapic_on_x2apic r = { XAPIC_ON_X2APIC_MSR, MSR_IA32_X2APIC_FIRST + (offset >> 4), false };

	if (offset & 0xf || offset >= 0x400)
		return (struct xapic_on_x2apic){ XAPIC_ON_X2APIC_RESERVED, 0, false };
	switch (offset) {
	case XAPIC_REG_ID:
		r.kind = XAPIC_ON_X2APIC_ID;
		break;
	case XAPIC_REG_VERSION:
	case XAPIC_REG_PPR:
	case XAPIC_REG_TIMER_CUR_COUNT:
		break;		/* read-only */
	case XAPIC_REG_TPR:
	case XAPIC_REG_SVR:
	case XAPIC_REG_LVT_CMCI:
	case XAPIC_REG_LVT_TIMER:
	case XAPIC_REG_LVT_THERMAL:
	case XAPIC_REG_LVT_PERF:
	case XAPIC_REG_LVT_LINT0:
	case XAPIC_REG_LVT_LINT1:
	case XAPIC_REG_LVT_ERROR:
	case XAPIC_REG_TIMER_INIT_COUNT:
	case XAPIC_REG_TIMER_DIV_CONF:
		r.writable = true;
		break;
	case XAPIC_REG_APR:
		r.kind = XAPIC_ON_X2APIC_APR;
		break;
	case XAPIC_REG_EOI:
		r.kind = XAPIC_ON_X2APIC_EOI;
		r.writable = true;
		break;
	case XAPIC_REG_ESR:
		r.kind = XAPIC_ON_X2APIC_ESR;
		r.writable = true;
		break;
	case XAPIC_REG_LDR:
		r.kind = XAPIC_ON_X2APIC_LDR;
		r.writable = true;
		break;
	case XAPIC_REG_DFR:
		r.kind = XAPIC_ON_X2APIC_DFR;
		r.writable = true;
		break;
	case XAPIC_REG_ICR_LOW:
		r.kind = XAPIC_ON_X2APIC_ICR_LOW;
		r.writable = true;
		break;
	case XAPIC_REG_ICR_HIGH:
		r.kind = XAPIC_ON_X2APIC_ICR_HIGH;
		r.writable = true;
		break;
	default:
		/* ISR, TMR, IRR: eight read-only registers each, MSRs 810H-827H. */
		if (offset >= XAPIC_REG_ISR && offset < XAPIC_REG_IRR + 0x80)
			break;
		/* Reserved in xAPIC mode, 0C0H (remote read) and 3F0H (SELF IPI, x2APIC only) among them. */
		r.kind = XAPIC_ON_X2APIC_RESERVED;
		break;
	}
	if (r.kind != XAPIC_ON_X2APIC_MSR && r.kind != XAPIC_ON_X2APIC_ID &&
	    r.kind != XAPIC_ON_X2APIC_EOI && r.kind != XAPIC_ON_X2APIC_ESR &&
	    r.kind != XAPIC_ON_X2APIC_ICR_LOW)
		r.msr = 0;
	return r;
}

uint64_t xapic_icr_to_x2apic(uint64_t xapic_icr)
{
	uint32_t dest = (uint32_t)(xapic_icr >> APIC_ICR_XAPIC_DEST_SHIFT) & 0xff;
	uint32_t low = (uint32_t)xapic_icr & ~(uint32_t)X2APIC_ICR_RESERVED;

	if (dest == 0xff)
		dest = 0xffffffffu;
	return ((uint64_t)dest << APIC_ICR_X2APIC_DEST_SHIFT) | low;
}

uint32_t xapic_apr(uint32_t tpr, uint32_t isrv, uint32_t irrv)
{
	uint32_t t = (tpr >> 4) & 0xf, s = (isrv >> 4) & 0xf, q = (irrv >> 4) & 0xf;

	if (t >= q && t > s)
		return tpr & 0xff;
	/* The SDM's "TPR[7:4] AND ISRV[7:4]", bitwise, as Bochs computes it too. */
	return ((t & s) > q ? (t & s) : q) << 4;
}
