// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/vcpu/arch_checks.c: the checks the exit handlers make before they
 * load a guest's value (CR8, XCR0, IA32_PAT, the MTRRs), the TSC-offset
 * arithmetic of IA32_TIME_STAMP_COUNTER and IA32_TSC_ADJUST, and the
 * segment checks of string I/O.  Expected values are the SDM's rules,
 * written out case by case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/compiler.h"

/* Everything a Skylake-X with AMX and MPX could enable. */
#define XCR0_ALL	(XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_BNDREGS | XCR0_BNDCSR | \
			 XCR0_AVX512 | XCR0_PKRU | XCR0_TILECFG | XCR0_TILEDATA)

static void test_cr8(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 16; v++)
		assert_true(cr8_valid(v));
	assert_false(cr8_valid(16));
	assert_false(cr8_valid(1ull << 63));
	assert_false(cr8_valid(0x100000000ull));
}

/*
 * LVT entries with a delivery mode: SMI, INIT and the reserved modes only
 * masked; fixed, NMI, ExtINT as written; timer and error have no mode.
 */
static void test_apic_lvt_delivery(void **state)
{
	static const unsigned int with_mode[] = {
		XAPIC_REG_LVT_CMCI, XAPIC_REG_LVT_THERMAL, XAPIC_REG_LVT_PERF,
		XAPIC_REG_LVT_LINT0, XAPIC_REG_LVT_LINT1,
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(with_mode); i++) {
		unsigned int reg = with_mode[i];

		assert_true(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_FIXED | 0x40));
		assert_true(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_NMI));
		assert_true(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_EXTINT));
		assert_false(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_SMI));
		assert_false(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_INIT | 0x40));
		for (uint32_t m = 1; m < 8; m += 2 + (m == 3))	/* 1, 3, 6: reserved */
			assert_false(apic_lvt_delivery_allowed(reg, m << APIC_LVT_DELIVERY_MODE_SHIFT));
		/* Masked, any mode is only stored. */
		assert_true(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_SMI | APIC_LVT_MASKED));
		assert_true(apic_lvt_delivery_allowed(reg, APIC_LVT_DELIVERY_MODE_INIT | APIC_LVT_MASKED));
	}
	assert_true(apic_lvt_delivery_allowed(XAPIC_REG_LVT_TIMER, APIC_LVT_DELIVERY_MODE_SMI));
	assert_true(apic_lvt_delivery_allowed(XAPIC_REG_LVT_ERROR, APIC_LVT_DELIVERY_MODE_INIT));
	assert_true(apic_lvt_delivery_allowed(XAPIC_REG_TPR, APIC_LVT_DELIVERY_MODE_SMI));
}

static void test_xcr0(void **state)
{
	(void)state;
	assert_true(xcr0_valid(XCR0_X87, XCR0_ALL));
	assert_true(xcr0_valid(XCR0_X87 | XCR0_SSE, XCR0_ALL));
	assert_true(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_AVX, XCR0_ALL));
	assert_true(xcr0_valid(XCR0_ALL, XCR0_ALL));
	/* Bit 0 always. */
	assert_false(xcr0_valid(0, XCR0_ALL));
	assert_false(xcr0_valid(XCR0_SSE, XCR0_ALL));
	/* AVX needs SSE. */
	assert_false(xcr0_valid(XCR0_X87 | XCR0_AVX, XCR0_ALL));
	/* AVX-512: all three and AVX. */
	assert_false(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_OPMASK, XCR0_ALL));
	assert_false(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_OPMASK | XCR0_ZMM_HI256,
				XCR0_ALL));
	assert_false(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_AVX512, XCR0_ALL));
	assert_true(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_AVX | XCR0_AVX512, XCR0_ALL));
	/* The MPX pair. */
	assert_false(xcr0_valid(XCR0_X87 | XCR0_BNDREGS, XCR0_ALL));
	assert_false(xcr0_valid(XCR0_X87 | XCR0_BNDCSR, XCR0_ALL));
	assert_true(xcr0_valid(XCR0_X87 | XCR0_BNDREGS | XCR0_BNDCSR, XCR0_ALL));
	/* The AMX pair. */
	assert_false(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_TILECFG, XCR0_ALL));
	assert_false(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_TILEDATA, XCR0_ALL));
	assert_true(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_TILECFG | XCR0_TILEDATA, XCR0_ALL));
	/* Only what CPUID leaf 0xD enumerates. */
	assert_false(xcr0_valid(XCR0_X87 | XCR0_SSE | XCR0_AVX, XCR0_X87 | XCR0_SSE));
	assert_false(xcr0_valid(XCR0_X87 | XCR0_PKRU, XCR0_X87 | XCR0_SSE | XCR0_AVX));
	assert_false(xcr0_valid(XCR0_X87 | (1ull << 40), XCR0_ALL));
}

static void test_canonical(void **state)
{
	(void)state;
	assert_true(is_canonical_address(0));
	assert_true(is_canonical_address(0x00007fffffffffffull));
	assert_true(is_canonical_address(0xffff800000000000ull));
	assert_true(is_canonical_address(~0ull));
	assert_false(is_canonical_address(0x0000800000000000ull));
	assert_false(is_canonical_address(0x8000000000000000ull));
	assert_false(is_canonical_address(0xffff7fffffffffffull));
}

static void test_pat(void **state)
{
	(void)state;
	/* The power-up value: WB WT UC- UC, twice. */
	assert_true(pat_valid(0x0007040600070406ull));
	assert_true(pat_valid(0x0505010107060400ull));
	for (unsigned int byte = 0; byte < 8; byte++) {
		for (unsigned int t = 0; t < 256; t++) {
			uint64_t pat = 0x0007040600070406ull & ~(0xffull << (8 * byte));

			pat |= (uint64_t)t << (8 * byte);
			assert_int_equal(pat_valid(pat),
					 t == 0 || t == 1 || t == 4 || t == 5 || t == 6 || t == 7);
		}
	}
}

static void test_mtrr(void **state)
{
	(void)state;
	/* IA32_MTRR_DEF_TYPE: E, FE and a type; 9:8 and 63:12 reserved. */
	assert_true(mtrr_def_type_valid(0, true));
	assert_true(mtrr_def_type_valid(0xc06, true));
	assert_true(mtrr_def_type_valid(0x801, true));
	assert_false(mtrr_def_type_valid(0x801, false));	/* WC needs MTRRCAP.WC */
	assert_false(mtrr_def_type_valid(0x002, true));		/* type 2 reserved */
	assert_false(mtrr_def_type_valid(0x007, true));		/* UC- is PAT only */
	assert_false(mtrr_def_type_valid(0x100, true));
	assert_false(mtrr_def_type_valid(0x200, true));
	assert_false(mtrr_def_type_valid(0x1000, true));
	assert_false(mtrr_def_type_valid(1ull << 63, true));
	/* Fixed ranges: eight types. */
	assert_true(mtrr_fixed_valid(0x0606060606060606ull, true));
	assert_true(mtrr_fixed_valid(0, false));
	assert_false(mtrr_fixed_valid(0x0606060606060607ull, true));
	assert_false(mtrr_fixed_valid(0x0306060606060606ull, true));
	assert_false(mtrr_fixed_valid(0x0101010101010101ull, false));
	/* Variable ranges with a 36-bit MAXPHYADDR. */
	assert_true(mtrr_physbase_valid(0x0000000fe0000000ull, 36, true));
	assert_true(mtrr_physbase_valid(0x0000000000000006ull, 36, true));
	assert_false(mtrr_physbase_valid(0x0000001000000006ull, 36, true));
	assert_true(mtrr_physbase_valid(0x0000001000000006ull, 39, true));
	assert_false(mtrr_physbase_valid(0x0000000000000106ull, 36, true));
	assert_false(mtrr_physbase_valid(0x0000000000000802ull, 36, true));
	assert_false(mtrr_physbase_valid(0x0000000000000003ull, 36, true));
	assert_true(mtrr_physmask_valid(0x0000000ff0000800ull, 36));
	assert_true(mtrr_physmask_valid(0, 36));
	assert_false(mtrr_physmask_valid(0x0000000ff0000801ull, 36));
	assert_false(mtrr_physmask_valid(0x0000000ff0000400ull, 36));
	assert_false(mtrr_physmask_valid(0x0000001ff0000800ull, 36));
}

static void test_tsc(void **state)
{
	struct guest_tsc t = { 0, 0 };

	(void)state;
	assert_int_equal(guest_tsc_read(&t, 1000), 1000);
	/* Writing the TSC adds the difference to TSC_ADJUST too. */
	guest_tsc_write(&t, 1000, 5000);
	assert_int_equal(guest_tsc_read(&t, 1000), 5000);
	assert_int_equal(guest_tsc_read(&t, 1500), 5500);
	assert_int_equal(t.adjust, 4000);
	/* Backwards: the adjust goes negative, two's complement. */
	guest_tsc_write(&t, 2000, 100);
	assert_int_equal(guest_tsc_read(&t, 2000), 100);
	assert_int_equal(t.adjust, (uint64_t)-1900);
	/* Writing TSC_ADJUST moves the TSC by the same amount. */
	guest_tsc_adjust_write(&t, 0);
	assert_int_equal(guest_tsc_read(&t, 2000), 2000);
	assert_int_equal(t.offset, 0);
	guest_tsc_adjust_write(&t, 700);
	assert_int_equal(guest_tsc_read(&t, 2000), 2700);
	assert_int_equal(t.adjust, 700);
	/* A write of the current value changes nothing. */
	guest_tsc_write(&t, 3000, 3700);
	assert_int_equal(t.adjust, 700);
	assert_int_equal(t.offset, 700);
	/* Wrap-around: far below the host's TSC. */
	guest_tsc_write(&t, ~0ull - 10, 5);
	assert_int_equal(guest_tsc_read(&t, ~0ull - 10), 5);
	assert_int_equal(guest_tsc_read(&t, ~0ull), 15);
}

/* Access rights: present, S, and a type. */
#define AR(type, flags)	(VMX_AR_P | VMX_AR_S | (type) | (flags))

static void test_segments(void **state)
{
	const uint32_t rw = AR(3, VMX_AR_DB), ro = AR(1, VMX_AR_DB);
	const uint32_t code_r = AR(11, VMX_AR_DB), code_x = AR(9, VMX_AR_DB);
	const uint32_t down = AR(7, VMX_AR_DB), down16 = AR(7, 0);

	(void)state;
	/* Expand-up, writable, 4 KiB. */
	assert_int_equal(seg_check_access(rw, 0xfff, 0, 1, true, true), SEG_OK);
	assert_int_equal(seg_check_access(rw, 0xfff, 0xfff, 1, true, true), SEG_OK);
	assert_int_equal(seg_check_access(rw, 0xfff, 0xffe, 2, true, true), SEG_OK);
	assert_int_equal(seg_check_access(rw, 0xfff, 0xfff, 2, true, true), SEG_FAULT);
	assert_int_equal(seg_check_access(rw, 0xfff, 0x1000, 1, false, true), SEG_FAULT);
	assert_int_equal(seg_check_access(rw, 0xffffffff, 0xfffffffc, 4, true, true), SEG_OK);
	/* Across the top of a 4-GiB segment: wraps to offset 0 (5.3: implementation-specific; Bochs). */
	assert_int_equal(seg_check_access(rw, 0xffffffff, 0xfffffffe, 4, true, true), SEG_OK);
	assert_int_equal(seg_check_access(rw, 0xffffffff, 0xffffffff, 2, true, true), SEG_OK);
	assert_int_equal(seg_check_access(rw, 0xfffffffe, 0xfffffffe, 2, true, true), SEG_FAULT);
	/* Read-only data: reads only. */
	assert_int_equal(seg_check_access(ro, 0xffffffff, 0x100, 1, false, true), SEG_OK);
	assert_int_equal(seg_check_access(ro, 0xffffffff, 0x100, 1, true, true), SEG_FAULT);
	/* Code: never written; read only when readable. */
	assert_int_equal(seg_check_access(code_r, 0xffffffff, 0x100, 4, false, true), SEG_OK);
	assert_int_equal(seg_check_access(code_r, 0xffffffff, 0x100, 4, true, true), SEG_FAULT);
	assert_int_equal(seg_check_access(code_x, 0xffffffff, 0x100, 4, false, true), SEG_FAULT);
	/* Expand-down: limit + 1 .. top. */
	assert_int_equal(seg_check_access(down, 0xfff, 0xfff, 1, true, true), SEG_FAULT);
	assert_int_equal(seg_check_access(down, 0xfff, 0x1000, 4, true, true), SEG_OK);
	assert_int_equal(seg_check_access(down, 0xfff, 0xfffffffc, 4, true, true), SEG_OK);
	assert_int_equal(seg_check_access(down16, 0xfff, 0xfffe, 2, true, true), SEG_OK);
	assert_int_equal(seg_check_access(down16, 0xfff, 0xffff, 2, true, true), SEG_FAULT);
	/* Unusable (a null selector in protected mode). */
	assert_int_equal(seg_check_access(rw | VMX_AR_UNUSABLE, 0xffffffff, 0, 1, true, true),
			 SEG_FAULT);
	/* Real mode: the limit, not the type. */
	assert_int_equal(seg_check_access(ro, 0xffff, 0xffff, 1, true, false), SEG_OK);
	assert_int_equal(seg_check_access(ro, 0xffff, 0xffff, 2, true, false), SEG_FAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cr8),
		cmocka_unit_test(test_xcr0),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_pat),
		cmocka_unit_test(test_mtrr),
		cmocka_unit_test(test_tsc),
		cmocka_unit_test(test_segments),
		cmocka_unit_test(test_apic_lvt_delivery),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
