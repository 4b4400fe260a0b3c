// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/vlapic.c: the virtual local APIC (SDM Vol. 3A chapter 11) on
 * the host -- priorities and EOI, the timer in its three modes at given
 * times, the IA32_APIC_BASE transitions, the x2APIC MSRs' #GP rules, the
 * xAPIC page's, and the ICR handed back through vm_icr_decode().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "fake_runtime.h"
#include "msr_index.h"
#include "runtime/devices/vlapic.h"
#include "runtime/vm/vm.h"

static struct vm vm;
static struct vlapic lapic;
static struct icr_request req;

#define X2APIC_MSR(offset)	(MSR_IA32_X2APIC_FIRST + ((offset) >> 4))

/* Two vCPUs, APIC IDs 0 and 1; the model is vCPU 0's, software-enabled, xAPIC mode. */
static int setup(void **state)
{
	static const uint32_t ids[] = { 0, 1 };

	(void)state;
	vm_init(&vm, 2, ids);
	vm.vcpu[0].state = vm.vcpu[1].state = VCPU_RUN_RUNNING;
	vlapic_init(&lapic, &vm, 0, 0, true, true, true, 39);
	assert_int_equal(vlapic_mmio_write(&lapic, XAPIC_REG_SVR, APIC_SVR_ENABLE | 0xff, 0, &req),
			 VLAPIC_DONE);
	return 0;
}

static uint32_t rd(unsigned int offset, uint64_t now)
{
	uint32_t v;

	assert_int_equal(vlapic_mmio_read(&lapic, offset, now, &v), VLAPIC_DONE);
	return v;
}

static enum vlapic_result wr(unsigned int offset, uint32_t v, uint64_t now)
{
	return vlapic_mmio_write(&lapic, offset, v, now, &req);
}

static void to_x2apic(void)
{
	assert_int_equal(vlapic_write_apic_base(&lapic, APIC_DEFAULT_PHYS_BASE | APIC_BASE_EN |
						APIC_BASE_EXTD, 0), VLAPIC_DONE);
}

static uint64_t msr_rd(uint32_t msr, uint64_t now)
{
	uint64_t v = 0xdead;

	assert_int_equal(vlapic_msr_read(&lapic, msr, now, &v), VLAPIC_DONE);
	return v;
}

/* --- reset and identity ------------------------------------------------------ */

static void test_reset_state(void **state)
{
	(void)state;
	vlapic_init(&lapic, &vm, 1, 1, false, true, true, 39);
	assert_int_equal(lapic.apic_base, APIC_DEFAULT_PHYS_BASE | APIC_BASE_EN);
	assert_int_equal(rd(XAPIC_REG_ID, 0), 1u << 24);
	assert_int_equal(rd(XAPIC_REG_VERSION, 0), 0x00060014u);
	assert_int_equal(rd(XAPIC_REG_SVR, 0), 0xffu);
	assert_int_equal(rd(XAPIC_REG_DFR, 0), 0xffffffffu);
	assert_int_equal(rd(XAPIC_REG_LVT_TIMER, 0), APIC_LVT_MASKED);
	assert_int_equal(rd(XAPIC_REG_LVT_CMCI, 0), APIC_LVT_MASKED);
	assert_false(vlapic_sw_enabled(&lapic));
	/* Software-disabled: LVT masks stay set, fixed interrupts are not taken. */
	wr(XAPIC_REG_LVT_LINT0, 0x30, 0);
	assert_int_equal(rd(XAPIC_REG_LVT_LINT0, 0), APIC_LVT_MASKED | 0x30);
	assert_false(vlapic_accept_irq(&lapic, 0x40, false));
}

/*
 * LINT0 takes the 8259s' INT (vm_vcpu.lint0_extint) only unmasked in
 * ExtINT mode on a software-enabled APIC, or as the BSP's INTR pin while
 * its APIC is globally disabled; firmware's handoff leaves the BSP so.
 */
static void test_lint0_extint(void **state)
{
	(void)state;
	vlapic_init(&lapic, &vm, 0, 0, true, true, true, 39);
	assert_false(vm.vcpu[0].lint0_extint);		/* power-up: LVT masked */
	vlapic_firmware_handoff(&lapic);
	assert_true(vlapic_sw_enabled(&lapic));
	assert_int_equal(rd(XAPIC_REG_LVT_LINT0, 0), APIC_LVT_DELIVERY_MODE_EXTINT);
	assert_int_equal(rd(XAPIC_REG_LVT_LINT1, 0), APIC_LVT_DELIVERY_MODE_NMI);
	assert_true(vm.vcpu[0].lint0_extint);
	/* Masked, or fixed delivery: not the 8259's. */
	wr(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT | APIC_LVT_MASKED, 0);
	assert_false(vm.vcpu[0].lint0_extint);
	wr(XAPIC_REG_LVT_LINT0, 0x31, 0);
	assert_false(vm.vcpu[0].lint0_extint);
	wr(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT, 0);
	assert_true(vm.vcpu[0].lint0_extint);
	/* A software disable masks it. */
	wr(XAPIC_REG_SVR, 0xff, 0);
	assert_false(vm.vcpu[0].lint0_extint);
	/* Globally disabled, the BSP's LINT0 is INTR; an AP's is nothing. */
	assert_int_equal(vlapic_write_apic_base(&lapic, APIC_DEFAULT_PHYS_BASE, 0), VLAPIC_DONE);
	assert_true(vm.vcpu[0].lint0_extint);
	vlapic_init(&lapic, &vm, 1, 1, false, true, true, 39);
	vlapic_firmware_handoff(&lapic);
	assert_int_equal(rd(XAPIC_REG_LVT_LINT0, 0), APIC_LVT_MASKED);	/* not the BSP */
	assert_false(vm.vcpu[1].lint0_extint);
	wr(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT, 0);
	assert_true(vm.vcpu[1].lint0_extint);
	assert_int_equal(vlapic_write_apic_base(&lapic, APIC_DEFAULT_PHYS_BASE, 0), VLAPIC_DONE);
	assert_false(vm.vcpu[1].lint0_extint);
	/* An INIT masks it again. */
	vlapic_init(&lapic, &vm, 1, 1, false, true, true, 39);
	vlapic_firmware_handoff(&lapic);
	wr(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT, 0);
	vlapic_init_signal(&lapic);
	assert_false(vm.vcpu[1].lint0_extint);
}

/* An INIT resets everything but the ID; IA32_APIC_BASE (x2APIC mode) stays (SDM 11.4.7.3). */
static void test_init_signal(void **state)
{
	(void)state;
	to_x2apic();
	assert_int_equal(vlapic_msr_write(&lapic, X2APIC_MSR(XAPIC_REG_TPR), 0x50, 0, &req), VLAPIC_DONE);
	assert_int_equal(vlapic_msr_write(&lapic, X2APIC_MSR(XAPIC_REG_LVT_TIMER), 0x40, 0, &req),
			 VLAPIC_DONE);
	assert_int_equal(vlapic_msr_write(&lapic, X2APIC_MSR(XAPIC_REG_TIMER_INIT_COUNT), 1000, 0,
					  &req), VLAPIC_DONE);
	assert_true(vlapic_accept_irq(&lapic, 0x61, false));
	vlapic_ack(&lapic, 0x61);
	assert_true(vlapic_accept_irq(&lapic, 0x71, true));
	vlapic_init_signal(&lapic);
	assert_true(vlapic_x2apic_mode(&lapic));
	assert_int_equal(lapic.apic_base, APIC_DEFAULT_PHYS_BASE | APIC_BASE_EN | APIC_BASE_EXTD |
			 APIC_BASE_BSP);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_ID), 0), 0);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_TPR), 0), 0);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_SVR), 0), 0xffu);
	assert_false(vlapic_sw_enabled(&lapic));
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_LVT_TIMER), 0), APIC_LVT_MASKED);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_TIMER_INIT_COUNT), 0), 0);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_ISR) + 3, 0), 0);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_IRR) + 3, 0), 0);
	assert_int_equal(vlapic_ppr(&lapic), 0);
}

/* --- priorities and EOI ------------------------------------------------------ */

static void test_priority_nested(void **state)
{
	(void)state;
	assert_true(vlapic_accept_irq(&lapic, 0x41, false));
	assert_true(vlapic_accept_irq(&lapic, 0x62, false));
	assert_int_equal(vlapic_pending_vector(&lapic), 0x62);	/* highest first */
	vlapic_ack(&lapic, 0x62);
	assert_int_equal(vlapic_ppr(&lapic), 0x60);
	assert_int_equal(rd(XAPIC_REG_PPR, 0), 0x60);
	assert_int_equal(rd(XAPIC_REG_ISR + 0x30, 0), 1u << 2);	/* 0x62: ISR word 3, bit 2 */
	/* 0x41's class 4 is not above PPR class 6: held. */
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	/* A higher class nests. */
	vlapic_accept_irq(&lapic, 0x75, false);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x75);
	vlapic_ack(&lapic, 0x75);
	assert_int_equal(vlapic_ppr(&lapic), 0x70);
	/* Same class as in service: held (class must be strictly above). */
	vlapic_accept_irq(&lapic, 0x7a, false);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	/* EOI ends the highest in service: 0x75; 0x7a is then deliverable above 0x62. */
	wr(XAPIC_REG_EOI, 0, 0);
	assert_int_equal(vlapic_ppr(&lapic), 0x60);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x7a);
	vlapic_ack(&lapic, 0x7a);
	wr(XAPIC_REG_EOI, 0, 0);
	wr(XAPIC_REG_EOI, 0, 0);
	assert_int_equal(vlapic_ppr(&lapic), 0);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x41);
	/* An EOI with nothing in service changes nothing. */
	vlapic_ack(&lapic, 0x41);
	wr(XAPIC_REG_EOI, 0, 0);
	wr(XAPIC_REG_EOI, 0, 0);
	assert_int_equal(vlapic_ppr(&lapic), 0);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
}

static void test_tpr(void **state)
{
	(void)state;
	vlapic_accept_irq(&lapic, 0x55, false);
	wr(XAPIC_REG_TPR, 0x5f, 0);
	assert_int_equal(vlapic_ppr(&lapic), 0x5f);	/* TPR class >= ISR class: PPR = TPR */
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	wr(XAPIC_REG_TPR, 0x4f, 0);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x55);
	/* TPR bits 31:8 are reserved: ignored in xAPIC mode. */
	wr(XAPIC_REG_TPR, 0x12345620, 0);
	assert_int_equal(rd(XAPIC_REG_TPR, 0), 0x20);
	/* ISR class above TPR class: PPR is the ISR class. */
	vlapic_ack(&lapic, 0x55);
	assert_int_equal(vlapic_ppr(&lapic), 0x50);
	/* APR (xAPIC only): the highest of the classes, TPR's when it dominates. */
	vlapic_accept_irq(&lapic, 0x91, false);
	assert_int_equal(rd(XAPIC_REG_APR, 0), 0x90);
}

static void test_cr8(void **state)
{
	(void)state;
	/* CR8 is TPR[7:4]; TPR[3:0] written through the APIC read back 0 through CR8's view. */
	wr(XAPIC_REG_TPR, 0x5a, 0);
	assert_int_equal(vlapic_read_cr8(&lapic), 5);
	vlapic_write_cr8(&lapic, 0x7);
	assert_int_equal(rd(XAPIC_REG_TPR, 0), 0x70);
	vlapic_accept_irq(&lapic, 0x71, false);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	vlapic_write_cr8(&lapic, 0x6);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x71);
}

static void test_level_tmr(void **state)
{
	(void)state;
	vlapic_accept_irq(&lapic, 0x80, true);
	assert_int_equal(rd(XAPIC_REG_TMR + 0x40, 0), 1u);
	vlapic_accept_irq(&lapic, 0x80, false);
	assert_int_equal(rd(XAPIC_REG_TMR + 0x40, 0), 0u);
	assert_int_equal(rd(XAPIC_REG_IRR + 0x40, 0), 1u);
}

/* --- errors ------------------------------------------------------------------ */

static void test_esr_illegal_vector(void **state)
{
	(void)state;
	wr(XAPIC_REG_LVT_ERROR, 0xe0, 0);
	/* A received illegal vector is not taken; the error interrupt is. */
	assert_false(vlapic_accept_irq(&lapic, 0x0f, false));
	assert_int_equal(vlapic_pending_vector(&lapic), 0xe0);
	/* ESR reads what the last write latched: nothing yet. */
	assert_int_equal(rd(XAPIC_REG_ESR, 0), 0);
	wr(XAPIC_REG_ESR, 0, 0);
	assert_int_equal(rd(XAPIC_REG_ESR, 0), APIC_ESR_RECEIVE_ILLEGAL_VECTOR);
	/* Sending one: Send Illegal Vector, and nothing goes out. */
	wr(XAPIC_REG_ICR_HIGH, 1u << 24, 0);
	assert_int_equal(wr(XAPIC_REG_ICR_LOW, 0x05, 0), VLAPIC_DONE);
	/* A reserved offset: Illegal Register Address. */
	wr(0x3c0, 1, 0);
	wr(XAPIC_REG_ESR, 0, 0);
	assert_int_equal(rd(XAPIC_REG_ESR, 0),
			 APIC_ESR_SEND_ILLEGAL_VECTOR | APIC_ESR_ILLEGAL_REGISTER_ADDRESS);
	wr(XAPIC_REG_ESR, 0, 0);
	assert_int_equal(rd(XAPIC_REG_ESR, 0), 0);
}

static void test_xapic_read_only_and_reserved(void **state)
{
	(void)state;
	wr(XAPIC_REG_ID, 5u << 24, 0);
	assert_int_equal(rd(XAPIC_REG_ID, 0), 0);
	wr(XAPIC_REG_VERSION, 0, 0);
	assert_int_equal(rd(XAPIC_REG_VERSION, 0), 0x00060014u);
	wr(XAPIC_REG_IRR, ~0u, 0);
	assert_int_equal(rd(XAPIC_REG_IRR, 0), 0);
	/* LVT reserved bits are dropped; delivery status and remote IRR are not software's. */
	wr(XAPIC_REG_LVT_LINT1, 0xffffffffu, 0);
	assert_int_equal(rd(XAPIC_REG_LVT_LINT1, 0), 0x1a7ffu);
	wr(XAPIC_REG_LVT_ERROR, 0xffffffffu, 0);
	assert_int_equal(rd(XAPIC_REG_LVT_ERROR, 0), 0x100ffu);
	/* Logical destination: LDR bits 31:24, DFR model bits; the VM sees them. */
	wr(XAPIC_REG_LDR, 0x12345678, 0);
	wr(XAPIC_REG_DFR, 0x0fffffff, 0);
	assert_int_equal(rd(XAPIC_REG_LDR, 0), 0x12000000u);
	assert_int_equal(rd(XAPIC_REG_DFR, 0), 0x0fffffffu);
	assert_int_equal(vm.vcpu[0].xapic_ldr, 0x12000000u);
	assert_int_equal(vm.vcpu[0].xapic_dfr, 0x0fffffffu);
	/* Unaligned accesses do nothing and read 0. */
	assert_int_equal(rd(XAPIC_REG_TPR + 4, 0), 0);
	/* Software disable masks every LVT entry. */
	wr(XAPIC_REG_LVT_TIMER, 0x40, 0);
	wr(XAPIC_REG_SVR, 0xff, 0);
	assert_int_equal(rd(XAPIC_REG_LVT_TIMER, 0), APIC_LVT_MASKED | 0x40);
}

/* --- the timer ----------------------------------------------------------------- */

static void test_timer_oneshot(void **state)
{
	(void)state;
	wr(XAPIC_REG_TIMER_DIV_CONF, APIC_TIMER_DIV_16, 0);
	wr(XAPIC_REG_LVT_TIMER, 0x40 | APIC_LVT_TIMER_MODE_ONESHOT, 0);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	wr(XAPIC_REG_TIMER_INIT_COUNT, 100, 1000);
	/* 100 counts of 16 ticks each. */
	assert_int_equal(vlapic_timer_next(&lapic), 1000 + 1600);
	assert_int_equal(rd(XAPIC_REG_TIMER_CUR_COUNT, 1000 + 160), 90);
	assert_int_equal(rd(XAPIC_REG_TIMER_INIT_COUNT, 1000 + 160), 100);
	vlapic_timer_update(&lapic, 2599);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	vlapic_timer_update(&lapic, 2600);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x40);
	assert_int_equal(rd(XAPIC_REG_TIMER_CUR_COUNT, 2600), 0);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	/* Once only. */
	vlapic_ack(&lapic, 0x40);
	wr(XAPIC_REG_EOI, 0, 5000);
	vlapic_timer_update(&lapic, 100000);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	/* A divide change mid-count goes on from the current count at the new rate. */
	wr(XAPIC_REG_TIMER_INIT_COUNT, 100, 10000);		/* /16: 50 counts by 10800 */
	wr(XAPIC_REG_TIMER_DIV_CONF, APIC_TIMER_DIV_1, 10800);
	assert_int_equal(vlapic_timer_next(&lapic), 10800 + 50);
	/* Initial count 0 stops it. */
	wr(XAPIC_REG_TIMER_INIT_COUNT, 0, 10810);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	assert_int_equal(rd(XAPIC_REG_TIMER_CUR_COUNT, 10810), 0);
}

static void test_timer_divide_values(void **state)
{
	static const struct { uint32_t dcr; uint64_t div; } t[] = {
		{ 0x0, 2 }, { 0x1, 4 }, { 0x2, 8 }, { 0x3, 16 },
		{ 0x8, 32 }, { 0x9, 64 }, { 0xa, 128 }, { 0xb, 1 },
	};

	(void)state;
	wr(XAPIC_REG_LVT_TIMER, 0x40, 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(t); i++) {
		wr(XAPIC_REG_TIMER_DIV_CONF, t[i].dcr, 0);
		wr(XAPIC_REG_TIMER_INIT_COUNT, 10, 0);
		assert_int_equal(vlapic_timer_next(&lapic), 10 * t[i].div);
	}
	/* Bit 2 and above are reserved. */
	wr(XAPIC_REG_TIMER_DIV_CONF, 0xfffffff4u | 0xb, 0);
	assert_int_equal(rd(XAPIC_REG_TIMER_DIV_CONF, 0), 0xb);
}

static void test_timer_periodic(void **state)
{
	(void)state;
	wr(XAPIC_REG_TIMER_DIV_CONF, APIC_TIMER_DIV_2, 0);
	wr(XAPIC_REG_LVT_TIMER, 0x50 | APIC_LVT_TIMER_MODE_PERIODIC, 0);
	wr(XAPIC_REG_TIMER_INIT_COUNT, 50, 0);		/* period 100 ticks */
	assert_int_equal(vlapic_timer_next(&lapic), 100);
	assert_int_equal(vlapic_timer_period(&lapic, 0x50), 100);	/* a storm's source (events.c) */
	assert_int_equal(vlapic_timer_period(&lapic, 0x51), 0);
	vlapic_timer_update(&lapic, 100);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x50);
	/*
	 * Requested in the IRR: the next expiries coalesce with it, nothing is
	 * due before it is taken (else an exit at every period: a storm's
	 * live-lock when the period is shorter than an exit).
	 */
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	assert_int_equal(rd(XAPIC_REG_TIMER_CUR_COUNT, 120), 40);
	vlapic_ack(&lapic, 0x50);
	assert_int_equal(vlapic_timer_next(&lapic), 200);
	wr(XAPIC_REG_EOI, 0, 150);
	/* Late by several periods: one interrupt, the next expiry on the period grid. */
	vlapic_timer_update(&lapic, 530);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x50);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	/* Taken late: the one due meanwhile (500) coalesced; the grid goes on at 600. */
	vlapic_ack(&lapic, 0x50);
	assert_int_equal(vlapic_timer_next(&lapic), 600);
	/* Masked it counts on but asks for nothing; unmasked, it is back on the grid. */
	wr(XAPIC_REG_EOI, 0, 540);
	wr(XAPIC_REG_LVT_TIMER, APIC_LVT_MASKED | 0x50 | APIC_LVT_TIMER_MODE_PERIODIC, 540);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	assert_int_equal(rd(XAPIC_REG_TIMER_CUR_COUNT, 760), 20);
	vlapic_timer_update(&lapic, 760);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	wr(XAPIC_REG_LVT_TIMER, 0x50 | APIC_LVT_TIMER_MODE_PERIODIC, 770);
	assert_int_equal(vlapic_timer_next(&lapic), 800);
	/* A mode change disarms. */
	wr(XAPIC_REG_LVT_TIMER, 0x50 | APIC_LVT_TIMER_MODE_ONESHOT, 780);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	assert_int_equal(rd(XAPIC_REG_TIMER_INIT_COUNT, 780), 0);
}

static void test_timer_tsc_deadline(void **state)
{
	struct icr_request r;

	(void)state;
	/* Outside TSC-deadline mode the MSR reads 0 and writes are ignored. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_TSC_DEADLINE, 5000, 0, &r), VLAPIC_DONE);
	assert_int_equal(msr_rd(MSR_IA32_TSC_DEADLINE, 0), 0);
	wr(XAPIC_REG_LVT_TIMER, 0x60 | APIC_LVT_TIMER_MODE_TSC_DEADLINE, 0);
	/* The initial count is ignored in this mode. */
	wr(XAPIC_REG_TIMER_INIT_COUNT, 10, 0);
	assert_int_equal(rd(XAPIC_REG_TIMER_INIT_COUNT, 0), 0);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	vlapic_msr_write(&lapic, MSR_IA32_TSC_DEADLINE, 5000, 100, &r);
	assert_int_equal(msr_rd(MSR_IA32_TSC_DEADLINE, 100), 5000);
	assert_int_equal(vlapic_timer_next(&lapic), 5000);
	vlapic_timer_update(&lapic, 4999);
	assert_int_equal(vlapic_pending_vector(&lapic), -1);
	vlapic_timer_update(&lapic, 5000);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x60);
	assert_int_equal(msr_rd(MSR_IA32_TSC_DEADLINE, 5001), 0);	/* disarmed once fired */
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	vlapic_ack(&lapic, 0x60);
	wr(XAPIC_REG_EOI, 0, 5002);
	/* A deadline already past fires at the write; 0 disarms. */
	vlapic_msr_write(&lapic, MSR_IA32_TSC_DEADLINE, 6000, 7000, &r);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x60);
	vlapic_msr_write(&lapic, MSR_IA32_TSC_DEADLINE, 9000, 7000, &r);
	vlapic_msr_write(&lapic, MSR_IA32_TSC_DEADLINE, 0, 7001, &r);
	assert_int_equal(vlapic_timer_next(&lapic), VLAPIC_NO_DEADLINE);
	/* Without TSC-deadline support: no MSR (#GP), and mode 2 cannot be set. */
	vlapic_init(&lapic, &vm, 0, 0, true, true, false, 39);
	wr(XAPIC_REG_SVR, APIC_SVR_ENABLE | 0xff, 0);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_TSC_DEADLINE, 1, 0, &r), VLAPIC_GP);
	wr(XAPIC_REG_LVT_TIMER, 0x60 | APIC_LVT_TIMER_MODE_TSC_DEADLINE, 0);
	assert_int_equal(rd(XAPIC_REG_LVT_TIMER, 0), 0x60);
}

/* --- IA32_APIC_BASE ------------------------------------------------------------- */

static void test_apic_base_transitions(void **state)
{
	const uint64_t base = APIC_DEFAULT_PHYS_BASE;

	(void)state;
	/* Reserved bits: 9, 7:0, above MAXPHYADDR. */
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EN | (1u << 9), 0), VLAPIC_GP);
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EN | 1, 0), VLAPIC_GP);
	assert_int_equal(vlapic_write_apic_base(&lapic, (1ull << 39) | APIC_BASE_EN, 0), VLAPIC_GP);
	/* EXTD without EN: invalid. */
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EXTD, 0), VLAPIC_GP);
	/* xAPIC -> x2APIC keeps state; the BSP flag stays the processor's. */
	wr(XAPIC_REG_TPR, 0x30, 0);
	to_x2apic();
	assert_true(vlapic_x2apic_mode(&lapic));
	assert_true(vm.vcpu[0].x2apic);
	assert_true(lapic.apic_base & APIC_BASE_BSP);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_TPR), 0), 0x30);
	/* x2APIC -> xAPIC: #GP. */
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EN, 0), VLAPIC_GP);
	/* x2APIC -> disabled: the reset state; disabled -> x2APIC: #GP; -> xAPIC fine. */
	assert_int_equal(vlapic_write_apic_base(&lapic, base, 0), VLAPIC_DONE);
	assert_false(vlapic_enabled(&lapic));
	assert_false(vm.vcpu[0].x2apic);
	assert_int_equal(rd(XAPIC_REG_ID, 0), 0xffffffffu);	/* no MMIO interface */
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EN | APIC_BASE_EXTD, 0),
			 VLAPIC_GP);
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EN, 0), VLAPIC_DONE);
	assert_int_equal(rd(XAPIC_REG_TPR, 0), 0);
	assert_int_equal(rd(XAPIC_REG_SVR, 0), 0xff);
	/* Without x2APIC support EXTD is reserved. */
	vlapic_init(&lapic, &vm, 0, 0, true, false, true, 39);
	assert_int_equal(vlapic_write_apic_base(&lapic, base | APIC_BASE_EN | APIC_BASE_EXTD, 0),
			 VLAPIC_GP);
}

/* --- x2APIC ------------------------------------------------------------------ */

static void test_x2apic_registers(void **state)
{
	struct icr_request r;
	uint64_t v;

	(void)state;
	/* Outside x2APIC mode every x2APIC MSR is #GP. */
	assert_int_equal(vlapic_msr_read(&lapic, X2APIC_MSR(XAPIC_REG_TPR), 0, &v), VLAPIC_GP);
	vlapic_init(&lapic, &vm, 1, 1, false, true, true, 39);
	to_x2apic();
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_APICID, 0), 1);	/* 32-bit ID */
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_LDR, 0), vm_x2apic_ldr(1));
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_VERSION, 0), 0x00060014u);
	/* Read-only registers: a write is #GP. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_APICID, 1, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_LDR, 0, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, X2APIC_MSR(XAPIC_REG_PPR), 0, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_CUR_COUNT, 0, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, X2APIC_MSR(XAPIC_REG_ISR), 0, 0, &r), VLAPIC_GP);
	/* Write-only ones: a read is #GP. */
	assert_int_equal(vlapic_msr_read(&lapic, MSR_IA32_X2APIC_EOI, 0, &v), VLAPIC_GP);
	assert_int_equal(vlapic_msr_read(&lapic, MSR_IA32_X2APIC_SELF_IPI, 0, &v), VLAPIC_GP);
	/* Not there in x2APIC mode: DFR, APR, ICR high; reserved MSRs. */
	assert_int_equal(vlapic_msr_read(&lapic, X2APIC_MSR(XAPIC_REG_DFR), 0, &v), VLAPIC_GP);
	assert_int_equal(vlapic_msr_read(&lapic, X2APIC_MSR(XAPIC_REG_APR), 0, &v), VLAPIC_GP);
	assert_int_equal(vlapic_msr_read(&lapic, X2APIC_MSR(XAPIC_REG_ICR_HIGH), 0, &v), VLAPIC_GP);
	assert_int_equal(vlapic_msr_read(&lapic, 0x801, 0, &v), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, 0x8ff, 0, 0, &r), VLAPIC_GP);
	/* Reserved bits: #GP, nothing changes. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_SIVR, APIC_SVR_ENABLE | 0xff, 0, &r),
			 VLAPIC_DONE);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_TPR, 0x100, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_TPR, 1ull << 32, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_SIVR, 1u << 12, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_LVT_TIMER, 1u << 19, 0, &r),
			 VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_LVT_LINT0, APIC_LVT_REMOTE_IRR, 0,
					  &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_DIV_CONF, 0x4, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_EOI, 1, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ESR, 1, 0, &r), VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_SELF_IPI, 0x100, 0, &r), VLAPIC_GP);
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_TPR, 0), 0);
	/* SELF IPI: straight into the IRR; EOI 0 ends it. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_SELF_IPI, 0x99, 0, &r), VLAPIC_DONE);
	assert_int_equal(vlapic_pending_vector(&lapic), 0x99);
	vlapic_ack(&lapic, 0x99);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_PPR), 0), 0x90);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_EOI, 0, 0, &r), VLAPIC_DONE);
	assert_int_equal(msr_rd(X2APIC_MSR(XAPIC_REG_PPR), 0), 0);
	/* The timer through MSRs. */
	vlapic_msr_write(&lapic, MSR_IA32_X2APIC_DIV_CONF, APIC_TIMER_DIV_1, 0, &r);
	vlapic_msr_write(&lapic, MSR_IA32_X2APIC_LVT_TIMER, 0x44, 0, &r);
	vlapic_msr_write(&lapic, MSR_IA32_X2APIC_INIT_COUNT, 300, 10, &r);
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_CUR_COUNT, 110), 200);
	assert_int_equal(vlapic_timer_next(&lapic), 310);
	/* The MMIO page is not there in x2APIC mode. */
	assert_int_equal(rd(XAPIC_REG_TPR, 0), 0xffffffffu);
}

/* --- the ICR ------------------------------------------------------------------ */

static void test_icr_xapic(void **state)
{
	(void)state;
	/* The high half holds the destination; the low half's write sends. */
	assert_int_equal(wr(XAPIC_REG_ICR_HIGH, 1u << 24, 0), VLAPIC_DONE);
	assert_int_equal(wr(XAPIC_REG_ICR_LOW, 0x4031, 0), VLAPIC_SEND_IPI);
	assert_int_equal(req.kind, ICR_FIXED);
	assert_int_equal(req.vector, 0x31);
	assert_int_equal(req.targets, 1u << 1);
	assert_int_equal(rd(XAPIC_REG_ICR_LOW, 0), 0x4031);	/* delivery status idle */
	assert_int_equal(rd(XAPIC_REG_ICR_HIGH, 0), 1u << 24);
	/* Shorthands. */
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_SHORTHAND_SELF | 0x40, 0);
	assert_int_equal(req.targets, 1u << 0);
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF | APIC_ICR_DELIVERY_MODE_NMI, 0);
	assert_int_equal(req.kind, ICR_NMI);
	assert_int_equal(req.targets, 1u << 1);
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF | 0x40, 0);
	assert_int_equal(req.targets, 3u);
	/* INIT, its de-assert, STARTUP, SMI. */
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT, 0);
	assert_int_equal(req.kind, ICR_INIT);
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_TRIGGER_LEVEL, 0);
	assert_int_equal(req.kind, ICR_INIT_DEASSERT);
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_DELIVERY_MODE_STARTUP | 0x9a, 0);
	assert_int_equal(req.kind, ICR_STARTUP);
	assert_int_equal(req.vector, 0x9a);
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_DELIVERY_MODE_SMI, 0);
	assert_int_equal(req.kind, ICR_SMI);
	/* Logical, flat: the other vCPU's LDR is what the VM matches. */
	vm.vcpu[1].xapic_ldr = 0x02000000u;
	wr(XAPIC_REG_ICR_HIGH, 0x02u << 24, 0);
	wr(XAPIC_REG_ICR_LOW, APIC_ICR_DEST_LOGICAL | 0x41, 0);
	assert_int_equal(req.targets, 1u << 1);
	/* The reserved low bits are dropped, delivery status among them. */
	wr(XAPIC_REG_ICR_LOW, 0xffffffffu, 0);
	assert_int_equal(rd(XAPIC_REG_ICR_LOW, 0), 0x000ccfffu);
}

static void test_icr_x2apic(void **state)
{
	struct icr_request r;

	(void)state;
	to_x2apic();
	/* One 64-bit write, the destination in bits 63:32. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ICR, (1ull << 32) | 0x52, 0, &r),
			 VLAPIC_SEND_IPI);
	assert_int_equal(r.kind, ICR_FIXED);
	assert_int_equal(r.targets, 1u << 1);
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_ICR, 0), (1ull << 32) | 0x52);
	/* Logical: cluster 0, bit 1 = APIC ID 1. */
	vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ICR, (2ull << 32) | APIC_ICR_DEST_LOGICAL | 0x52, 0, &r);
	assert_int_equal(r.targets, 1u << 1);
	/* Broadcast. */
	vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ICR, (0xffffffffull << 32) | 0x52, 0, &r);
	assert_int_equal(r.targets, 3u);
	/* Reserved low bits (delivery status 12 among them): #GP, ICR unchanged. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ICR, APIC_ICR_PENDING | 0x52, 0, &r),
			 VLAPIC_GP);
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ICR, 1u << 20, 0, &r), VLAPIC_GP);
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_ICR, 0), (0xffffffffull << 32) | 0x52);
	/* An illegal vector is not sent: Send Illegal Vector. */
	assert_int_equal(vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ICR, (1ull << 32) | 0x0e, 0, &r),
			 VLAPIC_DONE);
	vlapic_msr_write(&lapic, MSR_IA32_X2APIC_ESR, 0, 0, &r);
	assert_int_equal(msr_rd(MSR_IA32_X2APIC_ESR, 0), APIC_ESR_SEND_ILLEGAL_VECTOR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_reset_state, setup),
		cmocka_unit_test_setup(test_lint0_extint, setup),
		cmocka_unit_test_setup(test_init_signal, setup),
		cmocka_unit_test_setup(test_priority_nested, setup),
		cmocka_unit_test_setup(test_tpr, setup),
		cmocka_unit_test_setup(test_cr8, setup),
		cmocka_unit_test_setup(test_level_tmr, setup),
		cmocka_unit_test_setup(test_esr_illegal_vector, setup),
		cmocka_unit_test_setup(test_xapic_read_only_and_reserved, setup),
		cmocka_unit_test_setup(test_timer_oneshot, setup),
		cmocka_unit_test_setup(test_timer_divide_values, setup),
		cmocka_unit_test_setup(test_timer_periodic, setup),
		cmocka_unit_test_setup(test_timer_tsc_deadline, setup),
		cmocka_unit_test_setup(test_apic_base_transitions, setup),
		cmocka_unit_test_setup(test_x2apic_registers, setup),
		cmocka_unit_test_setup(test_icr_xapic, setup),
		cmocka_unit_test_setup(test_icr_x2apic, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
