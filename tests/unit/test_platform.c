// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/platform.c: the devices a guest sees, through the port I/O
 * functions the exit handlers call.  fw_cfg as QEMU's traditional I/O
 * interface defines it (docs/specs/fw_cfg.rst): a 16-bit selector write
 * picks an item and rewinds it, data reads return its bytes in order,
 * little endian, and 0 past its end or for items that do not exist;
 * isa-debug-exit (hw/misc/debugexit.c): status (value << 1) | 1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "platform.h"

static struct platform_state plat;

static void select_key(uint16_t key, unsigned int size)
{
	int status = -12345;

	assert_int_equal(platform_io_write(&plat, PLATFORM_FW_CFG_PORT_SEL, size, key, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(status, -12345);	/* not an exit */
}

/* @n bytes of the selected item, one byte read at a time. */
static void read_bytes(uint8_t *out, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t v = platform_io_read(&plat, PLATFORM_FW_CFG_PORT_DATA, 1);

		assert_true(v <= 0xff);
		out[i] = (uint8_t)v;
	}
}

static uint64_t le64(const uint8_t *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static int setup(void **state)
{
	(void)state;
	platform_init(&plat, 0x1f7e0000ull, 2);
	return 0;
}

static void test_signature(void **state)
{
	uint8_t b[12];

	(void)state;
	select_key(FW_CFG_SIGNATURE, 2);
	read_bytes(b, sizeof(b));
	assert_memory_equal(b, "QEMU", 4);
	/* Past the end of an item: zeros. */
	for (unsigned int i = 4; i < sizeof(b); i++)
		assert_int_equal(b[i], 0);
	/* A new selection rewinds, also of the same key. */
	select_key(FW_CFG_SIGNATURE, 2);
	read_bytes(b, 2);
	assert_memory_equal(b, "QE", 2);
	select_key(FW_CFG_SIGNATURE, 2);
	read_bytes(b, 4);
	assert_memory_equal(b, "QEMU", 4);
}

static void test_id_is_traditional_interface(void **state)
{
	uint8_t b[6];

	(void)state;
	select_key(FW_CFG_ID, 2);
	read_bytes(b, sizeof(b));
	/* 32-bit little endian: bit 0, the I/O interface; no DMA (bit 1). */
	assert_int_equal(b[0], FW_CFG_ID_TRADITIONAL);
	assert_int_equal(b[1] | b[2] | b[3] | b[4] | b[5], 0);
}

static void test_ram_size_is_le64(void **state)
{
	uint8_t b[10];

	(void)state;
	platform_init(&plat, 0x0123456789abcdefull, 1);
	select_key(FW_CFG_RAM_SIZE, 2);
	read_bytes(b, sizeof(b));
	assert_int_equal(b[0], 0xef);	/* least significant byte first */
	assert_int_equal(b[7], 0x01);
	assert_int_equal(le64(b), 0x0123456789abcdefull);
	assert_int_equal(b[8] | b[9], 0);

	/* Guest RAM beyond 4 GiB: the upper half is not lost. */
	platform_init(&plat, 0x140000000ull, 1);
	select_key(FW_CFG_RAM_SIZE, 2);
	read_bytes(b, 8);
	assert_int_equal(le64(b), 0x140000000ull);
}

static void test_cpu_count(void **state)
{
	uint8_t b[4];

	(void)state;
	for (unsigned int cpus = 1; cpus <= 8; cpus++) {
		platform_init(&plat, 64 << 20, cpus);
		select_key(FW_CFG_NB_CPUS, 2);
		read_bytes(b, sizeof(b));
		/* 16-bit little endian, then the end of the item. */
		assert_int_equal(b[0] | b[1] << 8, cpus);
		assert_int_equal(b[2] | b[3], 0);
		select_key(FW_CFG_MAX_CPUS, 2);
		read_bytes(b, 2);
		assert_int_equal(b[0] | b[1] << 8, cpus);
	}
	/* More than 255: the high byte carries. */
	platform_init(&plat, 64 << 20, 0x1234);
	select_key(FW_CFG_NB_CPUS, 2);
	read_bytes(b, 2);
	assert_int_equal(b[0], 0x34);
	assert_int_equal(b[1], 0x12);
}

static void test_nographic_and_unknown_keys_read_zero(void **state)
{
	static const uint16_t keys[] = {
		FW_CFG_NOGRAPHIC, 0x02, 0x04, 0x0e, 0x19, 0x8000, 0x4000, 0xffff,
	};
	uint8_t b[16];

	(void)state;
	for (unsigned int k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		select_key(keys[k], 2);
		memset(b, 0xaa, sizeof(b));
		read_bytes(b, sizeof(b));
		for (unsigned int i = 0; i < sizeof(b); i++)
			assert_int_equal(b[i], 0);
	}
}

/*
 * The selector is 16 bits wide: the whole value selects, no byte of it is
 * dropped.  Key 0x0100 is not key 0x00 (which would read "QEMU").
 */
static void test_selector_is_16_bit(void **state)
{
	uint8_t b[4];

	(void)state;
	select_key(0x0100 | FW_CFG_SIGNATURE, 2);
	read_bytes(b, 4);
	assert_memory_equal(b, "\0\0\0\0", 4);
	select_key(0x0100 | FW_CFG_NB_CPUS, 2);
	read_bytes(b, 2);
	assert_int_equal(b[0] | b[1], 0);
	/* And the low byte is not dropped either. */
	select_key(FW_CFG_NB_CPUS, 2);
	read_bytes(b, 2);
	assert_int_equal(b[0], 2);
}

/* A 2- or 4-byte data read returns the next bytes, as QEMU's does. */
static void test_wide_data_reads(void **state)
{
	(void)state;
	select_key(FW_CFG_SIGNATURE, 2);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_DATA, 4),
			 'Q' | 'E' << 8 | 'M' << 16 | (uint32_t)'U' << 24);
	select_key(FW_CFG_SIGNATURE, 2);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_DATA, 2), 'Q' | 'E' << 8);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_DATA, 2), 'M' | 'U' << 8);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_DATA, 2), 0);
}

/* Nothing else answers: the bus floats high, at the width of the access. */
static void test_unclaimed_ports_read_all_ones(void **state)
{
	int status = 0;

	(void)state;
	assert_int_equal(platform_io_read(&plat, 0x80, 1), 0xff);
	assert_int_equal(platform_io_read(&plat, 0x80, 2), 0xffff);
	assert_int_equal(platform_io_read(&plat, 0x80, 4), 0xffffffffu);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_SEL, 2), 0xffff);
	assert_int_equal(platform_io_read(&plat, PLATFORM_ISA_DEBUG_EXIT_PORT, 1), 0xff);
	/* Writes to nothing are lost and change no fw_cfg state. */
	select_key(FW_CFG_SIGNATURE, 2);
	assert_int_equal(platform_io_write(&plat, 0x80, 1, 0x55, &status), PLATFORM_IO_DONE);
	assert_int_equal(platform_io_write(&plat, PLATFORM_FW_CFG_PORT_DATA, 1, 0x55, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_DATA, 1), 'Q');
}

static void test_isa_debug_exit_status(void **state)
{
	static const struct {
		unsigned int size;
		uint32_t value;
		int status;
	} cases[] = {
		{ 1, 0, 1 },		/* QEMU: (0 << 1) | 1 */
		{ 1, 1, 3 },
		{ 1, 0x10, 0x21 },
		{ 1, 0x7f, 0xff },
		{ 1, 0xff, 0x1ff },
		{ 1, 0x1ff, 0x1ff },	/* a byte write carries only the low byte */
		{ 2, 0x1234, 0x2469 },
		{ 2, 0x12345, 0x468b },
		{ 4, 0x31, 0x63 },
		{ 4, 0x12345678, 0x2468acf1 },
	};

	(void)state;
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int status = -1;

		assert_int_equal(platform_io_write(&plat, PLATFORM_ISA_DEBUG_EXIT_PORT,
						   cases[i].size, cases[i].value, &status),
				 PLATFORM_IO_EXIT);
		if (status != cases[i].status)
			fail_msg("isa-debug-exit: %u-byte write of %#x: status %#x, want %#x",
				 cases[i].size, cases[i].value, status, cases[i].status);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_signature, setup),
		cmocka_unit_test_setup(test_id_is_traditional_interface, setup),
		cmocka_unit_test_setup(test_ram_size_is_le64, setup),
		cmocka_unit_test_setup(test_cpu_count, setup),
		cmocka_unit_test_setup(test_nographic_and_unknown_keys_read_zero, setup),
		cmocka_unit_test_setup(test_selector_is_16_bit, setup),
		cmocka_unit_test_setup(test_wide_data_reads, setup),
		cmocka_unit_test_setup(test_unclaimed_ports_read_all_ones, setup),
		cmocka_unit_test_setup(test_isa_debug_exit_status, setup),
	};

	return cmocka_run_group_tests_name("runtime/platform.c: fw_cfg and isa-debug-exit",
					   tests, NULL, NULL);
}
