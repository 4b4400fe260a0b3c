// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtual local APIC (vlapic.h): registers, priorities, the timer,
 * xAPIC and x2APIC access.  No VT-x here; unit-tested on the host
 * (tests/unit/test_vlapic.c).
 */
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "msr_index.h"
#include "runtime/devices/vlapic.h"

/* The bits software may write in each LVT entry (SDM Vol. 3A 11.5.1, Figure 11-8). */
#define LVT_BITS_TIMER	(APIC_LVT_VECTOR_MASK | APIC_LVT_MASKED | APIC_LVT_TIMER_MODE_MASK)
#define LVT_BITS_LINT	(APIC_LVT_VECTOR_MASK | APIC_LVT_DELIVERY_MODE_MASK | \
			 APIC_LVT_INPUT_POLARITY | APIC_LVT_TRIGGER_LEVEL | APIC_LVT_MASKED)
#define LVT_BITS_ERROR	(APIC_LVT_VECTOR_MASK | APIC_LVT_MASKED)
#define LVT_BITS_OTHER	(APIC_LVT_VECTOR_MASK | APIC_LVT_DELIVERY_MODE_MASK | APIC_LVT_MASKED)

/* The ICR bits software writes (11.6.1); the rest are reserved (#GP in x2APIC, 11.12.9). */
#define ICR_LOW_BITS	((uint32_t)(APIC_ICR_VECTOR_MASK | APIC_ICR_DELIVERY_MODE_MASK | \
				    APIC_ICR_DEST_LOGICAL | APIC_ICR_LEVEL_ASSERT | \
				    APIC_ICR_TRIGGER_LEVEL | APIC_ICR_SHORTHAND_MASK))
/* SVR: the vector, software enable, focus processor checking (no EOI-broadcast suppression). */
#define SVR_BITS	(APIC_SVR_VECTOR_MASK | APIC_SVR_ENABLE | (1u << 9))

static const struct {
	unsigned int offset;
	uint32_t bits;
} lvt_regs[VLAPIC_LVT_COUNT] = {
	[VLAPIC_LVT_TIMER]   = { XAPIC_REG_LVT_TIMER,   LVT_BITS_TIMER },
	[VLAPIC_LVT_THERMAL] = { XAPIC_REG_LVT_THERMAL, LVT_BITS_OTHER },
	[VLAPIC_LVT_PERF]    = { XAPIC_REG_LVT_PERF,    LVT_BITS_OTHER },
	[VLAPIC_LVT_LINT0]   = { XAPIC_REG_LVT_LINT0,   LVT_BITS_LINT },
	[VLAPIC_LVT_LINT1]   = { XAPIC_REG_LVT_LINT1,   LVT_BITS_LINT },
	[VLAPIC_LVT_ERROR]   = { XAPIC_REG_LVT_ERROR,   LVT_BITS_ERROR },
	[VLAPIC_LVT_CMCI]    = { XAPIC_REG_LVT_CMCI,    LVT_BITS_OTHER },
};

static int lvt_index(unsigned int offset)
{
	for (int i = 0; i < VLAPIC_LVT_COUNT; i++) {
		if (lvt_regs[i].offset == offset)
			return i;
	}
	return -1;
}

/* --- 256-bit registers ----------------------------------------------------- */

static void vec_set(uint32_t *r, unsigned int v)
{
	r[v / 32] |= 1u << (v % 32);
}

static void vec_clear(uint32_t *r, unsigned int v)
{
	r[v / 32] &= ~(1u << (v % 32));
}

static bool vec_test(const uint32_t *r, unsigned int v)
{
	return r[v / 32] & (1u << (v % 32));
}

/* The highest vector set, or -1. */
static int vec_highest(const uint32_t *r)
{
	for (int w = 7; w >= 0; w--) {
		if (r[w])
			return w * 32 + 31 - __builtin_clz(r[w]);
	}
	return -1;
}

/* --- state ---------------------------------------------------------------- */

bool vlapic_enabled(const struct vlapic *l)
{
	return l->apic_base & APIC_BASE_EN;
}

bool vlapic_x2apic_mode(const struct vlapic *l)
{
	return (l->apic_base & (APIC_BASE_EN | APIC_BASE_EXTD)) == (APIC_BASE_EN | APIC_BASE_EXTD);
}

bool vlapic_sw_enabled(const struct vlapic *l)
{
	return vlapic_enabled(l) && (l->svr & APIC_SVR_ENABLE);
}

bool vlapic_lint0_extint(const struct vlapic *l)
{
	uint32_t lint0 = l->lvt[VLAPIC_LVT_LINT0];

	/* Globally disabled, the BSP's LINT0 is the INTR pin the 8259 drives (11.4.3). */
	if (!vlapic_enabled(l))
		return l->apic_base & APIC_BASE_BSP;
	return vlapic_sw_enabled(l) && !(lint0 & APIC_LVT_MASKED) &&
	       (lint0 & APIC_LVT_DELIVERY_MODE_MASK) == APIC_LVT_DELIVERY_MODE_EXTINT;
}

/*
 * Tell the VM how others address this APIC (vm.c matches destinations
 * there) and whether its LINT0 takes the 8259s' INT (vm_extint_vcpu()).
 */
static void publish_destination(struct vlapic *l)
{
	struct vm_vcpu *v = &l->vm->vcpu[l->vcpu_id];

	WRITE_ONCE(v->lint0_extint, vlapic_lint0_extint(l));

	WRITE_ONCE(v->xapic_ldr, l->ldr);
	WRITE_ONCE(v->xapic_dfr, l->dfr);
	WRITE_ONCE(v->x2apic, vlapic_x2apic_mode(l));
}

/* The register state a reset, and a global disable, leave (SDM 11.4.7.1). */
static void reset_registers(struct vlapic *l)
{
	l->tpr = l->ldr = 0;
	l->dfr = 0xffffffffu;
	l->svr = APIC_SVR_VECTOR_MASK;
	l->esr = l->esr_pending = 0;
	for (unsigned int w = 0; w < 8; w++)
		l->isr[w] = l->tmr[w] = l->irr[w] = 0;
	for (unsigned int i = 0; i < VLAPIC_LVT_COUNT; i++)
		l->lvt[i] = APIC_LVT_MASKED;
	l->icr_low = l->icr_high = 0;
	l->timer_initial = l->timer_dcr = 0;
	l->timer_running = false;
	l->timer_start = 0;
	l->count_at_start = 0;
	l->tsc_deadline = 0;
	publish_destination(l);
}

void vlapic_init(struct vlapic *l, struct vm *vm, unsigned int vcpu_id, uint32_t apic_id,
		 bool bsp, bool has_x2apic, bool has_tsc_deadline, unsigned int maxphyaddr)
{
	*l = (struct vlapic){
		.vm = vm,
		.vcpu_id = vcpu_id,
		.apic_id = apic_id,
		.has_x2apic = has_x2apic,
		.has_tsc_deadline = has_tsc_deadline,
		.apic_base = APIC_DEFAULT_PHYS_BASE | APIC_BASE_EN | (bsp ? APIC_BASE_BSP : 0),
	};
	l->base_reserved = ~(APIC_BASE_BSP | APIC_BASE_EN | (has_x2apic ? APIC_BASE_EXTD : 0) |
			     (APIC_BASE_ADDR_MASK & ((1ull << maxphyaddr) - 1)));
	reset_registers(l);
}

/*
 * An INIT to the vCPU: its local APIC returns to its power-up state but
 * for the APIC ID (SDM Vol. 3A 11.4.7.3); IA32_APIC_BASE, the enable bit
 * and x2APIC mode with it, is left as it was (as KVM's kvm_lapic_reset()
 * for an INIT event).  A pending timer is gone with the rest.
 */
void vlapic_init_signal(struct vlapic *l)
{
	reset_registers(l);
}

void vlapic_firmware_handoff(struct vlapic *l)
{
	l->svr = APIC_SVR_ENABLE | APIC_SVR_VECTOR_MASK;
	if (l->apic_base & APIC_BASE_BSP) {
		l->lvt[VLAPIC_LVT_LINT0] = APIC_LVT_DELIVERY_MODE_EXTINT;
		l->lvt[VLAPIC_LVT_LINT1] = APIC_LVT_DELIVERY_MODE_NMI;
	}
	publish_destination(l);
}

/* --- priorities (SDM 11.8.3) ---------------------------------------------- */

uint32_t vlapic_ppr(const struct vlapic *l)
{
	int isrv = vec_highest(l->isr);
	uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & APIC_PRIORITY_CLASS_MASK;

	if ((l->tpr & APIC_PRIORITY_CLASS_MASK) >= isr_class)
		return l->tpr & 0xff;
	return isr_class;
}

void vlapic_write_cr8(struct vlapic *l, uint64_t cr8)
{
	l->tpr = (uint32_t)(cr8 & 0xf) << 4;
}

uint64_t vlapic_read_cr8(const struct vlapic *l)
{
	return (l->tpr >> 4) & 0xf;
}

/* Arbitration priority (11.6.2.4, Figure 11-15): the lowest-priority arbitration's view. */
static uint32_t vlapic_apr(const struct vlapic *l)
{
	int isrv = vec_highest(l->isr), irrv = vec_highest(l->irr);
	uint32_t tpr_class = l->tpr & APIC_PRIORITY_CLASS_MASK;
	uint32_t isr_class = isrv < 0 ? 0 : (uint32_t)isrv & APIC_PRIORITY_CLASS_MASK;
	uint32_t irr_class = irrv < 0 ? 0 : (uint32_t)irrv & APIC_PRIORITY_CLASS_MASK;

	if (tpr_class >= irr_class && tpr_class > isr_class)
		return l->tpr & 0xff;
	if (isr_class >= irr_class && isr_class >= tpr_class)
		return isr_class;
	return irr_class >= tpr_class ? irr_class : tpr_class;
}

int vlapic_pending_vector(const struct vlapic *l)
{
	int v = vec_highest(l->irr);

	if (v < 0 || !vlapic_sw_enabled(l))
		return -1;
	if (((uint32_t)v & APIC_PRIORITY_CLASS_MASK) <= (vlapic_ppr(l) & APIC_PRIORITY_CLASS_MASK))
		return -1;
	return v;
}

void vlapic_ack(struct vlapic *l, uint8_t vector)
{
	vec_clear(l->irr, vector);
	vec_set(l->isr, vector);
}

/* EOI: the highest in-service vector ends (11.8.5); -1 when none was in service. */
static int vlapic_eoi(struct vlapic *l)
{
	int v = vec_highest(l->isr);

	if (v >= 0)
		vec_clear(l->isr, (unsigned int)v);
	/*
	 * A level-triggered one (TMR set) would be broadcast to the I/O APIC;
	 * the VM has no level-triggered source on a virtual APIC yet.
	 */
	return v;
}

/* --- errors (SDM 11.5.3) --------------------------------------------------- */

static void lvt_fire(struct vlapic *l, enum vlapic_lvt which);

static void vlapic_error(struct vlapic *l, uint32_t bits)
{
	bool fresh = bits & ~l->esr_pending;

	l->esr_pending |= bits;
	/* The LVT error entry signals each new error (not for its own illegal vector: no loop). */
	if (fresh && !(bits == APIC_ESR_RECEIVE_ILLEGAL_VECTOR &&
		       (l->lvt[VLAPIC_LVT_ERROR] & APIC_LVT_VECTOR_MASK) < APIC_VECTOR_MIN_LEGAL))
		lvt_fire(l, VLAPIC_LVT_ERROR);
}

bool vlapic_accept_irq(struct vlapic *l, uint8_t vector, bool level)
{
	/* A software-disabled APIC takes no fixed interrupts (as KVM's __apic_accept_irq). */
	if (!vlapic_sw_enabled(l))
		return false;
	if (vector < APIC_VECTOR_MIN_LEGAL) {
		vlapic_error(l, APIC_ESR_RECEIVE_ILLEGAL_VECTOR);
		return false;
	}
	vec_set(l->irr, vector);
	if (level)
		vec_set(l->tmr, vector);
	else
		vec_clear(l->tmr, vector);
	return true;
}

/* A local interrupt from LVT entry @which, fixed delivery (the only one the model raises). */
static void lvt_fire(struct vlapic *l, enum vlapic_lvt which)
{
	uint32_t lvt = l->lvt[which];

	if (lvt & APIC_LVT_MASKED)
		return;
	vlapic_accept_irq(l, lvt & APIC_LVT_VECTOR_MASK, false);
}

/* --- the timer (SDM 11.5.4) ----------------------------------------------- */

static uint32_t timer_mode(const struct vlapic *l)
{
	return l->lvt[VLAPIC_LVT_TIMER] & APIC_LVT_TIMER_MODE_MASK;
}

/* TSC ticks per count: DCR bits 3, 1:0 = 000b divide by 2 ... 110b by 128, 111b by 1. */
static uint64_t timer_divide(const struct vlapic *l)
{
	unsigned int x = ((l->timer_dcr >> 1) & 4) | (l->timer_dcr & 3);

	return x == 7 ? 1 : 2ull << x;
}

static uint64_t timer_expiry(const struct vlapic *l)
{
	return l->timer_start + (uint64_t)l->count_at_start * timer_divide(l);
}

void vlapic_timer_update(struct vlapic *l, uint64_t now)
{
	if (timer_mode(l) == APIC_LVT_TIMER_MODE_TSC_DEADLINE) {
		if (l->tsc_deadline && now >= l->tsc_deadline) {
			l->tsc_deadline = 0;	/* the MSR reads 0 once it fired (11.5.4.1) */
			lvt_fire(l, VLAPIC_LVT_TIMER);
		}
		return;
	}
	if (!l->timer_running || now < timer_expiry(l))
		return;
	/* However many periods passed, one interrupt: the IRR holds one. */
	lvt_fire(l, VLAPIC_LVT_TIMER);
	if (timer_mode(l) == APIC_LVT_TIMER_MODE_PERIODIC && l->timer_initial) {
		uint64_t expiry = timer_expiry(l);
		uint64_t period = (uint64_t)l->timer_initial * timer_divide(l);

		l->timer_start = expiry + (now - expiry) / period * period;
		l->count_at_start = l->timer_initial;
		return;
	}
	l->timer_running = false;
}

uint64_t vlapic_timer_period(const struct vlapic *l, int vector)
{
	uint32_t lvt = l->lvt[VLAPIC_LVT_TIMER];

	if ((lvt & (APIC_LVT_MASKED | APIC_LVT_TIMER_MODE_MASK)) != APIC_LVT_TIMER_MODE_PERIODIC ||
	    vector != (int)(lvt & APIC_LVT_VECTOR_MASK) || !l->timer_running)
		return 0;
	return (uint64_t)l->timer_initial * timer_divide(l);
}

uint64_t vlapic_timer_next(const struct vlapic *l)
{
	/* A masked timer still counts, but nothing needs to happen when it expires. */
	if (l->lvt[VLAPIC_LVT_TIMER] & APIC_LVT_MASKED)
		return VLAPIC_NO_DEADLINE;
	if (timer_mode(l) == APIC_LVT_TIMER_MODE_TSC_DEADLINE)
		return l->tsc_deadline ? l->tsc_deadline : VLAPIC_NO_DEADLINE;
	/*
	 * A periodic timer whose interrupt is still requested in the IRR:
	 * its expiries meanwhile coalesce with it (the IRR holds one), so
	 * nothing happens before that one is accepted, and the count is
	 * worked out when read (timer_current()).  Waking at every expiry
	 * would leave a guest nothing when the period is shorter than an
	 * exit: each entry would find the next one already past.
	 */
	if (timer_mode(l) == APIC_LVT_TIMER_MODE_PERIODIC &&
	    vec_test(l->irr, l->lvt[VLAPIC_LVT_TIMER] & APIC_LVT_VECTOR_MASK))
		return VLAPIC_NO_DEADLINE;
	return l->timer_running ? timer_expiry(l) : VLAPIC_NO_DEADLINE;
}

static uint32_t timer_current(struct vlapic *l, uint64_t now)
{
	uint64_t elapsed, div = timer_divide(l);

	if (timer_mode(l) == APIC_LVT_TIMER_MODE_TSC_DEADLINE || !l->timer_running)
		return 0;
	elapsed = (now - l->timer_start) / div;
	if (elapsed < l->count_at_start)
		return l->count_at_start - (uint32_t)elapsed;
	if (timer_mode(l) != APIC_LVT_TIMER_MODE_PERIODIC || !l->timer_initial)
		return 0;
	/* A masked periodic timer is not updated at its expiries: count on from the last one. */
	elapsed -= l->count_at_start;
	return l->timer_initial - (uint32_t)(elapsed % l->timer_initial);
}

static void timer_write_initial(struct vlapic *l, uint32_t count, uint64_t now)
{
	/* Ignored in TSC-deadline mode (11.5.4.1). */
	if (timer_mode(l) == APIC_LVT_TIMER_MODE_TSC_DEADLINE)
		return;
	l->timer_initial = count;
	l->count_at_start = count;
	l->timer_start = now;
	l->timer_running = count != 0;	/* 0 stops the timer */
}

static void timer_write_dcr(struct vlapic *l, uint32_t dcr, uint64_t now)
{
	/* Counting goes on from the current count at the new rate. */
	uint32_t current = timer_current(l, now);

	l->timer_dcr = dcr & APIC_TIMER_DIV_MASK;
	if (l->timer_running) {
		l->count_at_start = current;
		l->timer_start = now;
	}
}

static void lvt_write(struct vlapic *l, enum vlapic_lvt which, uint32_t value)
{
	value &= lvt_regs[which].bits;
	/* Masks cannot be cleared while the APIC is software-disabled (11.4.7.2). */
	if (!vlapic_sw_enabled(l))
		value |= APIC_LVT_MASKED;
	if (which == VLAPIC_LVT_TIMER) {
		uint32_t mode = value & APIC_LVT_TIMER_MODE_MASK;

		/* Mode 3 is reserved, 2 exists only with TSC-deadline support: keep the old mode. */
		if (mode == APIC_LVT_TIMER_MODE_MASK ||
		    (mode == APIC_LVT_TIMER_MODE_TSC_DEADLINE && !l->has_tsc_deadline))
			value = (value & ~APIC_LVT_TIMER_MODE_MASK) | timer_mode(l);
		/* A mode change disarms the timer (11.5.4.1). */
		if ((value & APIC_LVT_TIMER_MODE_MASK) != timer_mode(l)) {
			l->timer_running = false;
			l->timer_initial = 0;
			l->count_at_start = 0;
			l->tsc_deadline = 0;
		}
	}
	l->lvt[which] = value;
	if (which == VLAPIC_LVT_LINT0)
		publish_destination(l);
}

static void svr_write(struct vlapic *l, uint32_t value)
{
	l->svr = value & SVR_BITS;
	/* Software disable masks every LVT entry (11.4.7.2). */
	if (!(l->svr & APIC_SVR_ENABLE)) {
		for (unsigned int i = 0; i < VLAPIC_LVT_COUNT; i++)
			l->lvt[i] |= APIC_LVT_MASKED;
	}
	publish_destination(l);
}

/* --- register access, both interfaces ------------------------------------- */

static uint32_t version_value(void)
{
	return APIC_VERSION_INTEGRATED | ((VLAPIC_LVT_COUNT - 1) << APIC_VERSION_MAX_LVT_SHIFT);
}

/*
 * Read the register at xAPIC @offset (x2APIC: MSR 800H + offset / 16).
 * False for an offset with no readable register in this mode.
 */
static bool reg_read(struct vlapic *l, unsigned int offset, uint64_t now, uint64_t *value)
{
	bool x2 = vlapic_x2apic_mode(l);
	int lvt = lvt_index(offset);

	if (lvt >= 0) {
		*value = l->lvt[lvt];
		return true;
	}
	if (offset >= XAPIC_REG_ISR && offset < XAPIC_REG_ISR + 0x80) {
		*value = l->isr[(offset - XAPIC_REG_ISR) / 16];
		return true;
	}
	if (offset >= XAPIC_REG_TMR && offset < XAPIC_REG_TMR + 0x80) {
		*value = l->tmr[(offset - XAPIC_REG_TMR) / 16];
		return true;
	}
	if (offset >= XAPIC_REG_IRR && offset < XAPIC_REG_IRR + 0x80) {
		*value = l->irr[(offset - XAPIC_REG_IRR) / 16];
		return true;
	}
	switch (offset) {
	case XAPIC_REG_ID:
		*value = x2 ? l->apic_id : l->apic_id << 24;
		return true;
	case XAPIC_REG_VERSION:
		*value = version_value();
		return true;
	case XAPIC_REG_TPR:
		*value = l->tpr;
		return true;
	case XAPIC_REG_APR:
		if (x2)
			return false;	/* no APR in x2APIC mode (Table 11-6) */
		*value = vlapic_apr(l);
		return true;
	case XAPIC_REG_PPR:
		*value = vlapic_ppr(l);
		return true;
	case XAPIC_REG_LDR:
		*value = x2 ? vm_x2apic_ldr(l->apic_id) : l->ldr;
		return true;
	case XAPIC_REG_DFR:
		if (x2)
			return false;
		*value = l->dfr;
		return true;
	case XAPIC_REG_SVR:
		*value = l->svr;
		return true;
	case XAPIC_REG_ESR:
		*value = l->esr;
		return true;
	case XAPIC_REG_ICR_LOW:
		/* Delivery status always idle: the model sends at once.  x2APIC: one 64-bit register. */
		*value = x2 ? ((uint64_t)l->icr_high << 32) | l->icr_low : l->icr_low;
		return true;
	case XAPIC_REG_ICR_HIGH:
		if (x2)
			return false;
		*value = l->icr_high;
		return true;
	case XAPIC_REG_TIMER_INIT_COUNT:
		*value = l->timer_initial;
		return true;
	case XAPIC_REG_TIMER_CUR_COUNT:
		vlapic_timer_update(l, now);
		*value = timer_current(l, now);
		return true;
	case XAPIC_REG_TIMER_DIV_CONF:
		*value = l->timer_dcr;
		return true;
	}
	return false;
}

/* The ICR was written: decode it for the VMM, or flag an illegal vector (11.5.3, 11.6.1). */
static enum vlapic_result icr_send(struct vlapic *l, struct icr_request *req)
{
	uint64_t icr = ((uint64_t)l->icr_high << 32) | l->icr_low;

	*req = vm_icr_decode(l->vm, l->vcpu_id, icr, vlapic_x2apic_mode(l));
	if (req->kind == ICR_FIXED && req->vector < APIC_VECTOR_MIN_LEGAL) {
		vlapic_error(l, APIC_ESR_SEND_ILLEGAL_VECTOR);
		return VLAPIC_DONE;
	}
	return VLAPIC_SEND_IPI;
}

enum vlapic_result vlapic_mmio_read(struct vlapic *l, unsigned int offset, uint64_t now,
				    uint32_t *value)
{
	uint64_t v;

	if (!vlapic_enabled(l) || vlapic_x2apic_mode(l)) {
		*value = 0xffffffffu;
		return VLAPIC_DONE;
	}
	/* Registers are 32 bits at 16-byte boundaries; other bytes read 0 here (11.4.1). */
	if ((offset & 0xf) || !reg_read(l, offset & 0xff0, now, &v))
		v = 0;
	*value = (uint32_t)v;
	return VLAPIC_DONE;
}

enum vlapic_result vlapic_mmio_write(struct vlapic *l, unsigned int offset, uint32_t value,
				     uint64_t now, struct icr_request *req)
{
	int lvt = lvt_index(offset);

	if (!vlapic_enabled(l) || vlapic_x2apic_mode(l) || (offset & 0xf))
		return VLAPIC_DONE;
	vlapic_timer_update(l, now);
	if (lvt >= 0) {
		lvt_write(l, (enum vlapic_lvt)lvt, value);
		return VLAPIC_DONE;
	}
	switch (offset) {
	case XAPIC_REG_TPR:
		l->tpr = value & 0xff;
		return VLAPIC_DONE;
	case XAPIC_REG_EOI:
		vlapic_eoi(l);
		return VLAPIC_DONE;
	case XAPIC_REG_LDR:
		l->ldr = value & 0xff000000u;
		publish_destination(l);
		return VLAPIC_DONE;
	case XAPIC_REG_DFR:
		l->dfr = (value & APIC_DFR_MODEL_MASK) | ~APIC_DFR_MODEL_MASK;
		publish_destination(l);
		return VLAPIC_DONE;
	case XAPIC_REG_SVR:
		svr_write(l, value);
		return VLAPIC_DONE;
	case XAPIC_REG_ESR:
		/* A write latches the errors since the last one and clears them (11.5.3). */
		l->esr = l->esr_pending;
		l->esr_pending = 0;
		return VLAPIC_DONE;
	case XAPIC_REG_ICR_LOW:
		l->icr_low = value & ICR_LOW_BITS;
		return icr_send(l, req);
	case XAPIC_REG_ICR_HIGH:
		l->icr_high = value & 0xff000000u;
		return VLAPIC_DONE;
	case XAPIC_REG_TIMER_INIT_COUNT:
		timer_write_initial(l, value, now);
		return VLAPIC_DONE;
	case XAPIC_REG_TIMER_DIV_CONF:
		timer_write_dcr(l, value, now);
		return VLAPIC_DONE;
	case XAPIC_REG_ID:		/* read-only here: the VM's destinations rely on it */
	case XAPIC_REG_VERSION:
	case XAPIC_REG_APR:
	case XAPIC_REG_PPR:
	case XAPIC_REG_TIMER_CUR_COUNT:
		return VLAPIC_DONE;	/* read-only: the write is ignored */
	}
	if ((offset >= XAPIC_REG_ISR && offset < XAPIC_REG_ISR + 0x180))
		return VLAPIC_DONE;	/* ISR, TMR, IRR: read-only */
	vlapic_error(l, APIC_ESR_ILLEGAL_REGISTER_ADDRESS);
	return VLAPIC_DONE;
}

/* --- x2APIC (SDM 11.12) ------------------------------------------------------ */

enum vlapic_result vlapic_msr_read(struct vlapic *l, uint32_t msr, uint64_t now, uint64_t *value)
{
	if (msr == MSR_IA32_TSC_DEADLINE) {
		if (!l->has_tsc_deadline)
			return VLAPIC_GP;
		vlapic_timer_update(l, now);
		*value = timer_mode(l) == APIC_LVT_TIMER_MODE_TSC_DEADLINE ? l->tsc_deadline : 0;
		return VLAPIC_DONE;
	}
	if (!vlapic_x2apic_mode(l) || msr < MSR_IA32_X2APIC_FIRST || msr > MSR_IA32_X2APIC_LAST)
		return VLAPIC_GP;
	/* Write-only: EOI and SELF IPI.  ICR high is part of 830H. */
	if (!reg_read(l, (msr - MSR_IA32_X2APIC_FIRST) << 4, now, value))
		return VLAPIC_GP;
	return VLAPIC_DONE;
}

enum vlapic_result vlapic_msr_write(struct vlapic *l, uint32_t msr, uint64_t value, uint64_t now,
				    struct icr_request *req)
{
	unsigned int offset;
	int lvt;

	if (msr == MSR_IA32_TSC_DEADLINE) {
		if (!l->has_tsc_deadline)
			return VLAPIC_GP;
		vlapic_timer_update(l, now);
		/* Outside TSC-deadline mode writes are ignored (11.5.4.1). */
		if (timer_mode(l) == APIC_LVT_TIMER_MODE_TSC_DEADLINE) {
			l->tsc_deadline = value;
			vlapic_timer_update(l, now);	/* a deadline already past fires now */
		}
		return VLAPIC_DONE;
	}
	if (!vlapic_x2apic_mode(l) || msr < MSR_IA32_X2APIC_FIRST || msr > MSR_IA32_X2APIC_LAST)
		return VLAPIC_GP;
	offset = (msr - MSR_IA32_X2APIC_FIRST) << 4;
	/* Only the ICR is 64 bits; every other register's bits 63:32 are reserved. */
	if (offset != XAPIC_REG_ICR_LOW && (value >> 32))
		return VLAPIC_GP;
	vlapic_timer_update(l, now);
	lvt = lvt_index(offset);
	if (lvt >= 0) {
		if (value & ~(uint64_t)lvt_regs[lvt].bits)
			return VLAPIC_GP;
		lvt_write(l, (enum vlapic_lvt)lvt, (uint32_t)value);
		return VLAPIC_DONE;
	}
	switch (offset) {
	case XAPIC_REG_TPR:
		if (value & ~0xffull)
			return VLAPIC_GP;
		l->tpr = (uint32_t)value;
		return VLAPIC_DONE;
	case XAPIC_REG_EOI:
		/* A non-zero write is #GP in x2APIC mode (11.12.1). */
		if (value)
			return VLAPIC_GP;
		vlapic_eoi(l);
		return VLAPIC_DONE;
	case XAPIC_REG_SVR:
		if (value & ~(uint64_t)SVR_BITS)
			return VLAPIC_GP;
		svr_write(l, (uint32_t)value);
		return VLAPIC_DONE;
	case XAPIC_REG_ESR:
		if (value)
			return VLAPIC_GP;
		l->esr = l->esr_pending;
		l->esr_pending = 0;
		return VLAPIC_DONE;
	case XAPIC_REG_ICR_LOW:
		if ((uint32_t)value & ~ICR_LOW_BITS)
			return VLAPIC_GP;
		/* One 64-bit write: the destination is bits 63:32 (11.12.9). */
		l->icr_low = (uint32_t)value;
		l->icr_high = (uint32_t)(value >> 32);
		return icr_send(l, req);
	case XAPIC_REG_TIMER_INIT_COUNT:
		timer_write_initial(l, (uint32_t)value, now);
		return VLAPIC_DONE;
	case XAPIC_REG_TIMER_DIV_CONF:
		if (value & ~(uint64_t)APIC_TIMER_DIV_MASK)
			return VLAPIC_GP;
		timer_write_dcr(l, (uint32_t)value, now);
		return VLAPIC_DONE;
	case XAPIC_REG_SELF_IPI:
		/* A self IPI: vector in bits 7:0, the rest reserved (11.12.11). */
		if (value & ~0xffull)
			return VLAPIC_GP;
		vlapic_accept_irq(l, (uint8_t)value, false);
		return VLAPIC_DONE;
	}
	/* Read-only (ID, version, LDR, PPR, ISR/TMR/IRR, current count) and reserved MSRs. */
	return VLAPIC_GP;
}

/* --- IA32_APIC_BASE (SDM 11.4.4, 11.12.5) ------------------------------------- */

enum vlapic_result vlapic_write_apic_base(struct vlapic *l, uint64_t value, uint64_t now)
{
	bool en = value & APIC_BASE_EN, x2 = value & APIC_BASE_EXTD;
	bool was_en = vlapic_enabled(l), was_x2 = vlapic_x2apic_mode(l);

	if (value & l->base_reserved)
		return VLAPIC_GP;
	/* EXTD without EN is invalid; x2APIC -> xAPIC and disabled -> x2APIC are not allowed (Figure 11-27). */
	if ((x2 && !en) || (was_x2 && en && !x2) || (!was_en && x2))
		return VLAPIC_GP;
	vlapic_timer_update(l, now);
	/* The BSP flag is the processor's, not software's. */
	l->apic_base = (value & ~APIC_BASE_BSP) | (l->apic_base & APIC_BASE_BSP);
	if (!en) {
		/* Globally disabled: a re-enable finds the reset state (11.4.3). */
		reset_registers(l);
		return VLAPIC_DONE;
	}
	/* xAPIC -> x2APIC keeps the state; the logical ID becomes the derived one (11.12.5.1). */
	publish_destination(l);
	return VLAPIC_DONE;
}
