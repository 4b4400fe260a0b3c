// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/host/acpi.c: the guest's MADT copy for more vCPUs than CPUs
 * (acpi_madt_build()): the processor entries replaced by one enabled
 * local APIC per vCPU, every other entry kept in order, the checksum
 * right; refused when it does not fit, an ID needs x2APIC, or the old
 * table is malformed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/acpi.h"

/* A firmware MADT as Bochs builds one: header, LAPIC address, flags, 2 CPUs, an I/O APIC, an override. */
static uint8_t old[36 + 8 + 2 * 8 + 12 + 10];

static uint8_t sum(const uint8_t *p, size_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

static void build_old(void)
{
	uint8_t *p = old + 44;
	uint32_t len = sizeof(old), lapic = 0xfee00000u, flags = 1;

	memset(old, 0, sizeof(old));
	memcpy(old, "APIC", 4);
	memcpy(old + 4, &len, 4);
	old[8] = 1;				/* revision */
	memcpy(old + 10, "BOCHS ", 6);
	memcpy(old + 36, &lapic, 4);
	memcpy(old + 40, &flags, 4);
	for (int i = 0; i < 2; i++, p += 8) {
		p[0] = 0; p[1] = 8; p[2] = (uint8_t)i; p[3] = (uint8_t)i; p[4] = 1;
	}
	p[0] = 1; p[1] = 12; p[2] = 2;			/* I/O APIC 2 at 0xfec00000 */
	p[6] = 0x00; p[7] = 0x00; p[8] = 0xc0; p[9] = 0xfe;
	p += 12;
	p[0] = 2; p[1] = 10; p[3] = 0; p[4] = 2;	/* IRQ0 -> GSI 2 */
	old[9] = (uint8_t)-sum(old, sizeof(old));
}

static void test_lists_every_vcpu(void **state)
{
	static const uint32_t ids[] = { 0, 1, 2, 3 };
	uint8_t out[256];
	uint32_t len;
	size_t n;

	(void)state;
	build_old();
	n = acpi_madt_build(out, sizeof(out), old, ids, 4);
	assert_int_equal(n, 44 + 4 * 8 + 12 + 10);
	memcpy(&len, out + 4, 4);
	assert_int_equal(len, n);
	assert_int_equal(sum(out, n), 0);
	assert_memory_equal(out, "APIC", 4);
	assert_memory_equal(out + 36, old + 36, 8);	/* LAPIC address and flags kept */
	for (unsigned int i = 0; i < 4; i++) {
		const uint8_t *e = out + 44 + i * 8;

		assert_int_equal(e[0], 0);
		assert_int_equal(e[1], 8);
		assert_int_equal(e[2], i);		/* processor UID */
		assert_int_equal(e[3], ids[i]);		/* APIC ID */
		assert_int_equal(e[4] & 1, 1);		/* enabled */
	}
	/* The I/O APIC and the override follow, as they were. */
	assert_memory_equal(out + 44 + 32, old + 44 + 16, 22);
}

static void test_fewer_and_refusals(void **state)
{
	static const uint32_t ids[] = { 0, 7, 0xff };
	uint8_t out[256];

	(void)state;
	build_old();
	assert_int_equal(acpi_madt_build(out, sizeof(out), old, ids, 2), 44 + 2 * 8 + 22);
	assert_int_equal(out[44 + 8 + 3], 7);
	/* 0xff is the xAPIC broadcast: such an ID needs an x2APIC entry, not made here. */
	assert_int_equal(acpi_madt_build(out, sizeof(out), old, ids, 3), 0);
	/* Too small a buffer: nothing. */
	assert_int_equal(acpi_madt_build(out, 44 + 2 * 8 + 21, old, ids, 2), 0);
	/* A table shorter than its fixed part. */
	old[4] = 20;
	assert_int_equal(acpi_madt_build(out, sizeof(out), old, ids, 2), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_every_vcpu),
		cmocka_unit_test(test_fewer_and_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
