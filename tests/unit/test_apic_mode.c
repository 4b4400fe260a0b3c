// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/apic_mode.c: the local APIC's modes and the SDM's transitions
 * between them (Vol. 3A 11.12.5), and the xAPIC page described in terms
 * of the x2APIC MSRs (Vol. 3A Table 11-6) for an xAPIC emulated on the
 * physical x2APIC (issue 9 item 4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/devices/apic_mode.h"
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "msr_index.h"

#define BASE	0xfee00000ull

static void test_modes_of_apic_base(void **state)
{
	(void)state;
	assert_int_equal(apic_mode_of(BASE), APIC_MODE_DISABLED);
	assert_int_equal(apic_mode_of(BASE | APIC_BASE_BSP | APIC_BASE_EN), APIC_MODE_XAPIC);
	assert_int_equal(apic_mode_of(BASE | APIC_BASE_EN | APIC_BASE_EXTD), APIC_MODE_X2APIC);
	assert_int_equal(apic_mode_of(BASE | APIC_BASE_EXTD), APIC_MODE_INVALID);
}

/* SDM Figure 11-27, every pair of the four encodings. */
static void test_transitions(void **state)
{
	static const struct {
		enum apic_mode from, to;
		bool ok;
	} t[] = {
		{ APIC_MODE_XAPIC, APIC_MODE_X2APIC, true },
		{ APIC_MODE_XAPIC, APIC_MODE_DISABLED, true },
		{ APIC_MODE_XAPIC, APIC_MODE_XAPIC, true },
		{ APIC_MODE_X2APIC, APIC_MODE_DISABLED, true },
		{ APIC_MODE_X2APIC, APIC_MODE_X2APIC, true },
		{ APIC_MODE_X2APIC, APIC_MODE_XAPIC, false },	/* only through disabled */
		{ APIC_MODE_DISABLED, APIC_MODE_XAPIC, true },
		{ APIC_MODE_DISABLED, APIC_MODE_DISABLED, true },
		{ APIC_MODE_DISABLED, APIC_MODE_X2APIC, false },	/* only through xAPIC */
		{ APIC_MODE_XAPIC, APIC_MODE_INVALID, false },
		{ APIC_MODE_X2APIC, APIC_MODE_INVALID, false },
		{ APIC_MODE_DISABLED, APIC_MODE_INVALID, false },
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(t); i++) {
		if (apic_mode_transition_ok(t[i].from, t[i].to) != t[i].ok)
			fail_msg("transition %d -> %d: want %s", t[i].from, t[i].to,
				 t[i].ok ? "allowed" : "#GP");
	}
}

/* The whole cycle of the issue: x2APIC -> disabled -> xAPIC -> x2APIC. */
static void test_cycle_back_to_x2apic(void **state)
{
	uint64_t x2 = BASE | APIC_BASE_EN | APIC_BASE_EXTD, off = BASE, x = BASE | APIC_BASE_EN;

	(void)state;
	assert_true(apic_mode_transition_ok(apic_mode_of(x2), apic_mode_of(off)));
	assert_true(apic_mode_transition_ok(apic_mode_of(off), apic_mode_of(x)));
	assert_true(apic_mode_transition_ok(apic_mode_of(x), apic_mode_of(x2)));
}

static void test_plain_registers_map_to_msr_offset_by_16(void **state)
{
	static const unsigned int rw[] = {
		XAPIC_REG_TPR, XAPIC_REG_SVR, XAPIC_REG_LVT_CMCI, XAPIC_REG_LVT_TIMER,
		XAPIC_REG_LVT_THERMAL, XAPIC_REG_LVT_PERF, XAPIC_REG_LVT_LINT0, XAPIC_REG_LVT_LINT1,
		XAPIC_REG_LVT_ERROR, XAPIC_REG_TIMER_INIT_COUNT, XAPIC_REG_TIMER_DIV_CONF,
	};
	static const unsigned int ro[] = {
		XAPIC_REG_VERSION, XAPIC_REG_PPR, XAPIC_REG_TIMER_CUR_COUNT,
		XAPIC_REG_ISR, XAPIC_REG_ISR + 0x70, XAPIC_REG_TMR + 0x30, XAPIC_REG_IRR,
		XAPIC_REG_IRR + 0x70,
	};
	struct xapic_on_x2apic r;

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(rw); i++) {
		r = xapic_on_x2apic_reg(rw[i]);
		assert_int_equal(r.kind, XAPIC_ON_X2APIC_MSR);
		assert_int_equal(r.msr, 0x800 + (rw[i] >> 4));
		assert_true(r.writable);
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(ro); i++) {
		r = xapic_on_x2apic_reg(ro[i]);
		assert_int_equal(r.kind, XAPIC_ON_X2APIC_MSR);
		assert_int_equal(r.msr, 0x800 + (ro[i] >> 4));
		assert_false(r.writable);
	}
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_TPR).msr, MSR_IA32_X2APIC_TPR);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_SVR).msr, MSR_IA32_X2APIC_SIVR);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_ISR).msr, 0x810);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_IRR + 0x70).msr, 0x827);
}

static void test_registers_that_differ(void **state)
{
	struct xapic_on_x2apic r;

	(void)state;
	r = xapic_on_x2apic_reg(XAPIC_REG_ID);
	assert_int_equal(r.kind, XAPIC_ON_X2APIC_ID);
	assert_int_equal(r.msr, MSR_IA32_X2APIC_APICID);
	assert_false(r.writable);
	r = xapic_on_x2apic_reg(XAPIC_REG_ICR_LOW);
	assert_int_equal(r.kind, XAPIC_ON_X2APIC_ICR_LOW);
	assert_int_equal(r.msr, MSR_IA32_X2APIC_ICR);
	assert_true(r.writable);
	r = xapic_on_x2apic_reg(XAPIC_REG_ICR_HIGH);
	assert_int_equal(r.kind, XAPIC_ON_X2APIC_ICR_HIGH);
	assert_int_equal(r.msr, 0);	/* 831H does not exist */
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_LDR).kind, XAPIC_ON_X2APIC_LDR);
	assert_true(xapic_on_x2apic_reg(XAPIC_REG_LDR).writable);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_DFR).kind, XAPIC_ON_X2APIC_DFR);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_DFR).msr, 0);	/* 80EH does not exist */
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_APR).kind, XAPIC_ON_X2APIC_APR);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_EOI).kind, XAPIC_ON_X2APIC_EOI);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_EOI).msr, MSR_IA32_X2APIC_EOI);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_ESR).kind, XAPIC_ON_X2APIC_ESR);
	assert_int_equal(xapic_on_x2apic_reg(XAPIC_REG_ESR).msr, 0x828);
}

static void test_reserved_offsets(void **state)
{
	/* Below ID, remote read (0C0H), the gaps, SELF IPI (x2APIC only), past 3F0H, unaligned. */
	static const unsigned int off[] = {
		0x000, 0x010, 0x040, 0x070, 0x0c0, 0x290, 0x2e0, 0x3a0, 0x3d0, 0x3f0, 0x400, 0xff0,
		0x024, 0x301,
	};
	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(off); i++) {
		struct xapic_on_x2apic r = xapic_on_x2apic_reg(off[i]);

		if (r.kind != XAPIC_ON_X2APIC_RESERVED || r.writable || r.msr)
			fail_msg("offset %#x: kind %d msr %#x writable %d", off[i], r.kind, r.msr,
				 r.writable);
	}
}

static void test_icr_translation(void **state)
{
	(void)state;
	/* Physical destination 3, fixed vector 0x40. */
	assert_int_equal(xapic_icr_to_x2apic((3ull << 56) | 0x40), (3ull << 32) | 0x40);
	/* The xAPIC broadcast is the x2APIC one. */
	assert_int_equal(xapic_icr_to_x2apic((0xffull << 56) | 0x4040), (0xffffffffull << 32) | 0x4040);
	/* Delivery status (read-only) and reserved bits cleared: WRMSR would #GP. */
	assert_int_equal(xapic_icr_to_x2apic((1ull << 56) | 0xffffffffull), (1ull << 32) | 0xccfffull);
	/* Shorthand self, INIT level assert: kept; ICR high bits 23:0 (reserved) dropped. */
	assert_int_equal(xapic_icr_to_x2apic(0x00ffffffull << 32 | APIC_ICR_SHORTHAND_SELF | 0x4500),
			 APIC_ICR_SHORTHAND_SELF | 0x4500);
	assert_int_equal(X2APIC_ICR_RESERVED & 0xccfffull, 0);
}

/* The ICR fast path's decode: what it sends as written, what it leaves to vm_icr_decode(). */
static void test_icr_fast_path_decode(void **state)
{
	static const struct { uint64_t icr; bool fast; } cases[] = {
		{ (1ull << 32) | 0x40, true },			/* fixed, physical, APIC ID 1 */
		{ (0xffffffffull << 32) | 0xfd, true },		/* the broadcast destination */
		{ (7ull << 32) | 0x4040, true },		/* level assert: ignored for fixed */
		{ (1ull << 32) | 0xc040, true },		/* level-triggered: ignored too */
		{ (1ull << 32) | 0x0f, true },			/* illegal vector: the APIC's ESR */
		{ (1ull << 32) | APIC_ICR_DELIVERY_MODE_LOWEST | 0x40, false },
		{ (1ull << 32) | APIC_ICR_DELIVERY_MODE_SMI, false },
		{ (1ull << 32) | APIC_ICR_DELIVERY_MODE_NMI, false },
		{ (1ull << 32) | APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT, false },
		{ (1ull << 32) | APIC_ICR_DELIVERY_MODE_STARTUP | 0x08, false },
		{ (1ull << 32) | (7ull << 8) | 0x40, false },	/* reserved delivery mode */
		{ (1ull << 32) | APIC_ICR_DEST_LOGICAL | 0x40, false },
		{ APIC_ICR_SHORTHAND_SELF | 0x40, false },
		{ APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF | 0x40, false },
		{ APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF | 0x40, false },
		{ (1ull << 32) | APIC_ICR_PENDING | 0x40, false },	/* bit 12: reserved in x2APIC */
		{ (1ull << 32) | (1ull << 13) | 0x40, false },
		{ (1ull << 32) | (1ull << 16) | 0x40, false },
		{ (1ull << 32) | (1ull << 20) | 0x40, false },
		{ (1ull << 32) | (1ull << 31) | 0x40, false },
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		if (x2apic_icr_fixed_physical(cases[i].icr) != cases[i].fast)
			fail_msg("ICR %#llx: fast %d, expected %d", (unsigned long long)cases[i].icr,
				 !cases[i].fast, cases[i].fast);
	}
	/* Every bit x2APIC reserves (SDM Vol. 3A 11.12.9) leaves the fast path. */
	for (unsigned int b = 0; b < 32; b++) {
		uint64_t icr = (1ull << 32) | 0x40 | (1ull << b);

		if ((X2APIC_ICR_RESERVED >> b) & 1)
			assert_false(x2apic_icr_fixed_physical(icr));
	}
}

static void test_ldr_dfr_values(void **state)
{
	(void)state;
	assert_int_equal(xapic_dfr_value(0x0fffffff), 0x0fffffff);	/* cluster */
	assert_int_equal(xapic_dfr_value(0xf0000000), 0xffffffff);	/* flat */
	assert_int_equal(xapic_ldr_value(0x01ffffff), 0x01000000);
}

static void test_apr(void **state)
{
	(void)state;
	/* Nothing pending or in service: TPR. */
	assert_int_equal(xapic_apr(0x25, 0, 0), 0x25);
	/* A requested vector of a higher class than TPR: its class. */
	assert_int_equal(xapic_apr(0x25, 0, 0x41), 0x40);
	/* TPR class equal to the one in service: not above it. */
	assert_int_equal(xapic_apr(0x30, 0x31, 0), 0x30 & 0x30);
	/* The SDM's bitwise AND of TPR and ISRV classes, against IRRV. */
	assert_int_equal(xapic_apr(0x50, 0x61, 0x21), (5 & 6) << 4);
	assert_int_equal(xapic_apr(0x10, 0x61, 0x81), 0x80);
}

/* Loads of the xAPIC page: 32-bit registers at 16-byte boundaries (SDM Vol. 3A 11.4.1). */
static void test_xapic_loads(void **state)
{
	(void)state;
	/* Within a register's first 4 bytes: its bytes, at any width. */
	assert_true(xapic_load_in_register(0x80, 4));
	assert_true(xapic_load_in_register(0x81, 1));
	assert_true(xapic_load_in_register(0x82, 2));
	assert_true(xapic_load_in_register(0x83, 1));
	assert_true(xapic_load_in_register(0xff0, 4));
	assert_int_equal(xapic_load_bytes(0x12345678, 0x80, 4), 0x12345678);
	assert_int_equal(xapic_load_bytes(0x12345678, 0x81, 1), 0x56);
	assert_int_equal(xapic_load_bytes(0x12345678, 0x82, 2), 0x1234);
	assert_int_equal(xapic_load_bytes(0x12345678, 0x23, 1), 0x12);
	/* Bytes 4-15 of a slot, or a load reaching them: not the register (reads 0). */
	for (unsigned int size = 1; size <= 4; size *= 2)
		for (unsigned int off = 4; off < 16; off += size) {
			assert_false(xapic_load_in_register(0x80 + off, size));
			assert_false(xapic_load_in_register(0x20 + off, size));
		}
	assert_false(xapic_load_in_register(0x83, 2));
	assert_false(xapic_load_in_register(0x82, 4));
	assert_false(xapic_load_in_register(0x80, 8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modes_of_apic_base),
		cmocka_unit_test(test_transitions),
		cmocka_unit_test(test_cycle_back_to_x2apic),
		cmocka_unit_test(test_plain_registers_map_to_msr_offset_by_16),
		cmocka_unit_test(test_registers_that_differ),
		cmocka_unit_test(test_reserved_offsets),
		cmocka_unit_test(test_icr_translation),
		cmocka_unit_test(test_icr_fast_path_decode),
		cmocka_unit_test(test_ldr_dfr_values),
		cmocka_unit_test(test_apr),
		cmocka_unit_test(test_xapic_loads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
