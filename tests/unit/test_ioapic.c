// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/ioapic.c: the guest's I/O APIC over a fake one (an array of
 * indirect registers with its own IOREGSEL, as the 82093AA has).  The
 * redirection-entry filter for every delivery mode, the guest's IOREGSEL
 * latch apart from the hardware's, the registers a guest may not write,
 * reserved offsets and indexes, the access sizes the datasheet defines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "runtime/devices/ioapic.h"

/* The fake I/O APIC: Bochs's 82093AA, ID 1, version 0x11, 24 entries. */
#define FAKE_VER	0x00170011u
#define FAKE_ENTRIES	24

static uint32_t hw[256];
static unsigned int hw_writes, hw_eois;
static uint32_t hw_last_eoi;

uint32_t ioapic_hw_read(uint8_t index)
{
	return hw[index];
}

void ioapic_hw_write(uint8_t index, uint32_t value)
{
	hw[index] = value;
	hw_writes++;
}

void ioapic_hw_eoi(uint32_t value)
{
	hw_last_eoi = value;
	hw_eois++;
}

static struct ioapic_guest g;

static int setup(void **state)
{
	(void)state;
	memset(hw, 0, sizeof(hw));
	hw[IOAPIC_REG_ID] = 1u << 24;
	hw[IOAPIC_REG_VER] = FAKE_VER;
	hw[IOAPIC_REG_ARB] = 1u << 24;
	for (unsigned int n = 0; n < FAKE_ENTRIES; n++)
		hw[IOAPIC_REG_REDTBL + 2 * n] = IOREDTBL_MASKED;
	hw_writes = hw_eois = 0;
	ioapic_guest_init(&g, 0);
	return 0;
}

static void select_reg(uint32_t index)
{
	struct ioapic_refusal r;

	assert_int_equal(ioapic_guest_write(&g, IOAPIC_IOREGSEL, 4, index, &r), IOAPIC_DONE);
}

static enum ioapic_result win_write(uint8_t index, uint32_t value, struct ioapic_refusal *r)
{
	select_reg(index);
	return ioapic_guest_write(&g, IOAPIC_IOWIN, 4, value, r);
}

static uint32_t win_read(uint8_t index)
{
	uint32_t v = 0xdeadbeef;

	select_reg(index);
	assert_int_equal(ioapic_guest_read(&g, IOAPIC_IOWIN, 4, &v), IOAPIC_DONE);
	return v;
}

/* The filter alone: fixed and lowest priority pass, the other six are masked. */
static void test_filter(void **state)
{
	(void)state;
	for (unsigned int mode = 0; mode < 8; mode++) {
		uint32_t low = (mode << IOREDTBL_DELMOD_SHIFT) | (1u << 15) | (1u << 13) | 0x31;
		bool allowed = mode == IOAPIC_DELMOD_FIXED || mode == IOAPIC_DELMOD_LOWEST;

		assert_int_equal(ioapic_delivery_allowed(low), allowed);
		assert_int_equal(ioapic_filter_redirection(low), allowed ? low : low | IOREDTBL_MASKED);
		/* Already masked: unchanged either way. */
		assert_int_equal(ioapic_filter_redirection(low | IOREDTBL_MASKED),
				 low | IOREDTBL_MASKED);
	}
	assert_string_equal(ioapic_delivery_mode_name(IOAPIC_DELMOD_SMI << 8), "SMI");
	assert_string_equal(ioapic_delivery_mode_name(IOAPIC_DELMOD_INIT << 8), "INIT");
	assert_string_equal(ioapic_delivery_mode_name(IOAPIC_DELMOD_NMI << 8), "NMI");
	assert_string_equal(ioapic_delivery_mode_name(IOAPIC_DELMOD_EXTINT << 8), "ExtINT");
	assert_string_equal(ioapic_delivery_mode_name(3u << 8), "reserved (011b)");
}

/* Through the page: what reaches the hardware, what is reported. */
static void test_redirection_entries(void **state)
{
	struct ioapic_refusal r = { 99, 0 };

	(void)state;
	for (unsigned int n = 0; n < FAKE_ENTRIES; n++) {
		uint8_t low = IOAPIC_REG_REDTBL + 2 * n;

		for (unsigned int mode = 0; mode < 8; mode++) {
			uint32_t v = (mode << IOREDTBL_DELMOD_SHIFT) | (0x40 + n);
			enum ioapic_result res = win_write(low, v, &r);

			if (mode == IOAPIC_DELMOD_FIXED || mode == IOAPIC_DELMOD_LOWEST) {
				assert_int_equal(res, IOAPIC_DONE);
				assert_int_equal(hw[low], v);
			} else {
				assert_int_equal(res, IOAPIC_REFUSED);
				assert_int_equal(hw[low], v | IOREDTBL_MASKED);
				assert_int_equal(r.entry, n);
				assert_int_equal(r.value, v);
			}
			assert_int_equal(win_read(low), hw[low]);
		}
		/* The high dword (the destination) goes through as written. */
		assert_int_equal(win_write(low + 1, 0xff000000u, &r), IOAPIC_DONE);
		assert_int_equal(hw[low + 1], 0xff000000u);
	}
}

/* ID, version, arbitration: read from the hardware, never written. */
static void test_id_version_arbitration(void **state)
{
	struct ioapic_refusal r;

	(void)state;
	assert_int_equal(win_read(IOAPIC_REG_VER), FAKE_VER);
	assert_int_equal(win_read(IOAPIC_REG_ID), 1u << 24);
	assert_int_equal(win_read(IOAPIC_REG_ARB), 1u << 24);
	hw_writes = 0;
	for (uint8_t i = IOAPIC_REG_ID; i <= IOAPIC_REG_ARB; i++)
		assert_int_equal(win_write(i, 0x0f000000u, &r), IOAPIC_DONE);
	assert_int_equal(hw_writes, 0);
	assert_int_equal(hw[IOAPIC_REG_ID], 1u << 24);
}

/* Reserved indexes (3..0xf, past the last entry) and offsets: read 0, writes go nowhere. */
static void test_reserved(void **state)
{
	struct ioapic_refusal r;
	uint32_t v = 1;

	(void)state;
	hw[0x05] = 0x1234;
	hw[IOAPIC_REG_REDTBL + 2 * FAKE_ENTRIES] = 0x5678;
	assert_int_equal(win_read(0x05), 0);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * FAKE_ENTRIES), 0);
	assert_int_equal(win_read(0xff), 0);
	hw_writes = 0;
	assert_int_equal(win_write(0x05, 2u << 8, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * FAKE_ENTRIES, 2u << 8, &r), IOAPIC_DONE);
	assert_int_equal(ioapic_guest_write(&g, 0x20, 4, 2u << 8, &r), IOAPIC_DONE);
	assert_int_equal(hw_writes, 0);
	assert_int_equal(ioapic_guest_read(&g, 0x20, 4, &v), IOAPIC_DONE);
	assert_int_equal(v, 0);
	/* Version 0x11 has no EOI register: dropped; 0x20 has one. */
	assert_int_equal(ioapic_guest_write(&g, IOAPIC_EOI, 4, 0x141, &r), IOAPIC_DONE);
	assert_int_equal(hw_eois, 0);
	hw[IOAPIC_REG_VER] = 0x00170020u;
	ioapic_guest_init(&g, 0);
	assert_int_equal(ioapic_guest_write(&g, IOAPIC_EOI, 4, 0x141, &r), IOAPIC_DONE);
	assert_int_equal(hw_eois, 1);
	assert_int_equal(hw_last_eoi, 0x41);
}

/* IOREGSEL is the guest's: 8 bits, read back, never the hardware's. */
static void test_ioregsel_latch(void **state)
{
	uint32_t v;

	(void)state;
	select_reg(0x12);
	assert_int_equal(ioapic_guest_read(&g, IOAPIC_IOREGSEL, 4, &v), IOAPIC_DONE);
	assert_int_equal(v, 0x12);
	select_reg(0xffffff13u);
	assert_int_equal(ioapic_guest_read(&g, IOAPIC_IOREGSEL, 4, &v), IOAPIC_DONE);
	assert_int_equal(v, 0x13);
	/* The latch survives the hypervisor's own accesses for another index. */
	(void)ioapic_hw_read(IOAPIC_REG_VER);
	hw[0x13] = 0xabcd;
	assert_int_equal(ioapic_guest_read(&g, IOAPIC_IOWIN, 4, &v), IOAPIC_DONE);
	assert_int_equal(v, 0xabcd);
}

/* Anything but an aligned dword is undefined (82093AA 3.0): refused, nothing written. */
static void test_bad_access(void **state)
{
	static const struct { unsigned int offset, size; } bad[] = {
		{ 0x00, 1 }, { 0x00, 2 }, { 0x00, 8 }, { 0x10, 1 }, { 0x10, 2 }, { 0x11, 4 },
		{ 0x12, 2 }, { 0x01, 1 }, { 0x13, 1 },
	};
	struct ioapic_refusal r;
	uint32_t v;

	(void)state;
	select_reg(IOAPIC_REG_REDTBL);
	hw_writes = 0;
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(ioapic_guest_write(&g, bad[i].offset, bad[i].size, 2u << 8, &r),
				 IOAPIC_BAD_ACCESS);
		assert_int_equal(ioapic_guest_read(&g, bad[i].offset, bad[i].size, &v),
				 IOAPIC_BAD_ACCESS);
	}
	assert_int_equal(hw_writes, 0);
	assert_int_equal(hw[IOAPIC_REG_REDTBL], IOREDTBL_MASKED);
}

/*
 * apic: virtual: the hardware's entries go to one physical APIC, fixed,
 * physical mode, each with its own host vector; the guest reads back
 * what it wrote; the host vector finds the guest's entry (Linux gives
 * IRQs on different CPUs the same vector: 0x21 on pins 4 and 9 here).
 */
static void test_virtual_destinations(void **state)
{
	struct ioapic_refusal r;
	uint32_t low, high;

	(void)state;
	hw[IOAPIC_REG_REDTBL + 2 * 3 + 1] = 5u << 24;		/* firmware's, before init */
	ioapic_guest_init_virtual(&g, 7, 0);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 3 + 1], 7u << 24);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 3 + 1), 5u << 24);
	/* Pin 4: logical destination 0x04, edge, vector 0x21; pin 9: physical 1, level, 0x21. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 4 + 1, 0x04u << 24, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 4, 0x821, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 9 + 1, 0x01u << 24, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 9, 0xa121, &r), IOAPIC_DONE);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 4 + 1], 7u << 24);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 4], IOAPIC_HOST_VECTOR(4));
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 9], 0xa000 | IOAPIC_HOST_VECTOR(9));
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 4), 0x821);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 4 + 1), 0x04u << 24);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 9), 0xa121);
	/* The hardware's status bits show through. */
	hw[IOAPIC_REG_REDTBL + 2 * 9] |= IOREDTBL_REMOTE_IRR;
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 9), 0xa121 | IOREDTBL_REMOTE_IRR);
	assert_true(ioapic_guest_route(&g, (uint8_t)IOAPIC_HOST_VECTOR(4), &low, &high));
	assert_int_equal(low, 0x821);
	assert_int_equal(high, 0x04u << 24);
	assert_true(ioapic_guest_route(&g, (uint8_t)IOAPIC_HOST_VECTOR(9), &low, &high));
	assert_int_equal(high, 0x01u << 24);
	/* Masked entries, vectors that are no entry's: no route. */
	assert_false(ioapic_guest_route(&g, (uint8_t)IOAPIC_HOST_VECTOR(5), &low, &high));
	assert_false(ioapic_guest_route(&g, 0x21, &low, &high));
	assert_false(ioapic_guest_route(&g, (uint8_t)IOAPIC_HOST_VECTOR(FAKE_ENTRIES), &low, &high));
	/* A refused delivery mode stays masked in the hardware and is no route. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 4, 0x221, &r), IOAPIC_REFUSED);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 4], 0x221 | IOREDTBL_MASKED);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 4), 0x221 | IOREDTBL_MASKED);
	assert_false(ioapic_guest_route(&g, (uint8_t)IOAPIC_HOST_VECTOR(4), &low, &high));
	/*
	 * The EOI register takes the guest's vector: the hardware gets the
	 * own vector of every entry with it (pin 4's masked 0x221, pin 9's).
	 */
	hw[IOAPIC_REG_VER] = 0x00170020u;
	ioapic_guest_init_virtual(&g, 7, 0);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 9, 0xa121, &r), IOAPIC_DONE);
	hw_eois = 0;
	assert_int_equal(ioapic_guest_write(&g, IOAPIC_EOI, 4, 0x21, &r), IOAPIC_DONE);
	assert_int_equal(hw_eois, 2);
	assert_int_equal(hw_last_eoi, IOAPIC_HOST_VECTOR(9));
	/* Without virtual destinations no vector routes. */
	ioapic_guest_init(&g, 0);
	assert_false(ioapic_guest_route(&g, (uint8_t)IOAPIC_HOST_VECTOR(9), &low, &high));
}

/*
 * An emulated pin (the 8254's, pin 2): its hardware entry stays masked
 * whatever the guest writes, the guest reads its own mask back, and the
 * pin's route is the guest's entry while unmasked.
 */
static void test_emulated_pin(void **state)
{
	struct ioapic_refusal r;
	uint32_t low, high;

	(void)state;
	ioapic_guest_init_virtual(&g, 7, 1ull << 2);
	assert_true(hw[IOAPIC_REG_REDTBL + 2 * 2] & IOREDTBL_MASKED);
	assert_false(ioapic_guest_pin_route(&g, 2, &low, &high));
	/* Logical destination 0x08, edge, vector 0x30, unmasked. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2 + 1, 0x08u << 24, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x830, &r), IOAPIC_DONE);
	assert_true(hw[IOAPIC_REG_REDTBL + 2 * 2] & IOREDTBL_MASKED);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 2), 0x830);
	assert_true(ioapic_guest_pin_route(&g, 2, &low, &high));
	assert_int_equal(low, 0x830);
	assert_int_equal(high, 0x08u << 24);
	/* Other pins go to the hardware as before. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 3, 0x831, &r), IOAPIC_DONE);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 3], IOAPIC_HOST_VECTOR(3));
	/* Masked again, or a refused mode: no route; past the table: none. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x830 | IOREDTBL_MASKED, &r),
			 IOAPIC_DONE);
	assert_false(ioapic_guest_pin_route(&g, 2, &low, &high));
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x430, &r), IOAPIC_REFUSED);
	assert_false(ioapic_guest_pin_route(&g, 2, &low, &high));
	assert_false(ioapic_guest_pin_route(&g, FAKE_ENTRIES, &low, &high));
	/* Not an emulated pin: no route. */
	ioapic_guest_init_virtual(&g, 7, 0);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x830, &r), IOAPIC_DONE);
	assert_false(ioapic_guest_pin_route(&g, 2, &low, &high));
}

/*
 * The passthrough APIC models: the 8254's pin is emulated there too.
 * Its entry starts as the firmware's and is the guest's from then on,
 * destination included; the hardware's stays masked (its 8254 is the
 * host's).  Every other pin is written through, filtered, as before.
 */
static void test_emulated_pin_passthrough(void **state)
{
	struct ioapic_refusal r;
	uint32_t low, high;

	(void)state;
	hw[IOAPIC_REG_REDTBL + 2 * 2] = 0x31;			/* firmware's: unmasked */
	hw[IOAPIC_REG_REDTBL + 2 * 2 + 1] = 3u << 24;
	ioapic_guest_init(&g, 1ull << 2);
	assert_true(hw[IOAPIC_REG_REDTBL + 2 * 2] & IOREDTBL_MASKED);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 2), 0x31);
	assert_true(ioapic_guest_pin_route(&g, 2, &low, &high));
	assert_int_equal(high, 3u << 24);
	/* Physical destination 1, vector 0x60: the guest's, the hardware masked. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2 + 1, 1u << 24, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x60, &r), IOAPIC_DONE);
	assert_true(hw[IOAPIC_REG_REDTBL + 2 * 2] & IOREDTBL_MASKED);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 2), 0x60);
	assert_int_equal(win_read(IOAPIC_REG_REDTBL + 2 * 2 + 1), 1u << 24);
	assert_true(ioapic_guest_pin_route(&g, 2, &low, &high));
	assert_int_equal(low, 0x60);
	assert_int_equal(high, 1u << 24);
	/* A refused delivery mode is reported and no route. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x460, &r), IOAPIC_REFUSED);
	assert_false(ioapic_guest_pin_route(&g, 2, &low, &high));
	/* Pin 3 is the hardware's: written through, its destination too, no route. */
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 3 + 1, 1u << 24, &r), IOAPIC_DONE);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 3, 0x61, &r), IOAPIC_DONE);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 3], 0x61);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 3 + 1], 1u << 24);
	assert_false(ioapic_guest_pin_route(&g, 3, &low, &high));
	/* No emulated pin: pin 2 is the hardware's as well. */
	ioapic_guest_init(&g, 0);
	assert_int_equal(win_write(IOAPIC_REG_REDTBL + 2 * 2, 0x60, &r), IOAPIC_DONE);
	assert_int_equal(hw[IOAPIC_REG_REDTBL + 2 * 2], 0x60);
	assert_false(ioapic_guest_pin_route(&g, 2, &low, &high));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_filter, setup),
		cmocka_unit_test_setup(test_redirection_entries, setup),
		cmocka_unit_test_setup(test_id_version_arbitration, setup),
		cmocka_unit_test_setup(test_reserved, setup),
		cmocka_unit_test_setup(test_ioregsel_latch, setup),
		cmocka_unit_test_setup(test_bad_access, setup),
		cmocka_unit_test_setup(test_virtual_destinations, setup),
		cmocka_unit_test_setup(test_emulated_pin, setup),
		cmocka_unit_test_setup(test_emulated_pin_passthrough, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
