// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/platform.c: the devices a guest sees, through the port I/O
 * functions the exit handlers call.  fw_cfg as QEMU's traditional I/O
 * interface defines it (docs/specs/fw_cfg.rst): a 16-bit selector write
 * picks an item and rewinds it, data reads return its bytes in order,
 * little endian, and 0 past its end or for items that do not exist;
 * isa-debug-exit (hw/misc/debugexit.c): status (value << 1) | 1, never
 * negative; and every port a guest does not own: all ones, writes
 * dropped, never forwarded, the dangerous ones reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "fake_runtime.h"
#include "runtime/devices/platform.h"

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
	platform_init(&plat, 0x1f7e0000ull, 2, 0);
	fake_cpu_reset();
	fake_printk_reset();
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
	platform_init(&plat, 0x0123456789abcdefull, 1, 0);
	select_key(FW_CFG_RAM_SIZE, 2);
	read_bytes(b, sizeof(b));
	assert_int_equal(b[0], 0xef);	/* least significant byte first */
	assert_int_equal(b[7], 0x01);
	assert_int_equal(le64(b), 0x0123456789abcdefull);
	assert_int_equal(b[8] | b[9], 0);

	/* Guest RAM beyond 4 GiB: the upper half is not lost. */
	platform_init(&plat, 0x140000000ull, 1, 0);
	select_key(FW_CFG_RAM_SIZE, 2);
	read_bytes(b, 8);
	assert_int_equal(le64(b), 0x140000000ull);
}

static void test_cpu_count(void **state)
{
	uint8_t b[4];

	(void)state;
	for (unsigned int cpus = 1; cpus <= 8; cpus++) {
		platform_init(&plat, 64 << 20, cpus, 0);
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
	platform_init(&plat, 64 << 20, 0x1234, 0);
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
	for (unsigned int k = 0; k < ARRAY_SIZE(keys); k++) {
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
	assert_int_equal(platform_io_read(&plat, 0x300, 1), 0xff);
	assert_int_equal(platform_io_read(&plat, 0x300, 2), 0xffff);
	assert_int_equal(platform_io_read(&plat, 0x300, 4), 0xffffffffu);
	assert_int_equal(platform_io_read(&plat, PLATFORM_FW_CFG_PORT_SEL, 2), 0xffff);
	assert_int_equal(platform_io_read(&plat, PLATFORM_ISA_DEBUG_EXIT_PORT, 1), 0xff);
	/* Writes to nothing are lost and change no fw_cfg state. */
	select_key(FW_CFG_SIGNATURE, 2);
	assert_int_equal(platform_io_write(&plat, 0x300, 1, 0x55, &status), PLATFORM_IO_DONE);
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
		/* Bit 31 (and 30) dropped: never a negative VMM_* result. */
		{ 4, 0x7fffffff, 0x7fffffff },
		{ 4, 0xfffffffe, 0x7ffffffd },	/* not -3, VMM_GUEST_FAULT */
		{ 4, 0xffffffff, 0x7fffffff },
		{ 4, 0x80000000, 0x1 },
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		int status = -1;

		assert_int_equal(platform_io_write(&plat, PLATFORM_ISA_DEBUG_EXIT_PORT,
						   cases[i].size, cases[i].value, &status),
				 PLATFORM_IO_EXIT);
		if (status != cases[i].status || status < 0)
			fail_msg("isa-debug-exit: %u-byte write of %#x: status %#x, want %#x",
				 cases[i].size, cases[i].value, status, cases[i].status);
	}
}

/*
 * Ports the guest does not own and the runtime does not emulate: APM
 * (SMI), the debug console, Bochs's BIOS and debugger ports, the 8259,
 * the ATA and DMA controllers, the rest of the PM block, a
 * bus-master IDE BAR the BIOS may have put at 0xc000.  All ones, and not
 * one access reaches the hardware.
 */
static void test_denied_ports_never_reach_the_hardware(void **state)
{
	static const uint16_t denied[] = {
		0xb2, 0xb3, 0xe9, 0x400, 0x401, 0x402, 0x403, 0x8a00, 0x8a01,
		0x00, 0x0b, 0x87, 0xc0, 0xd6, 0x1f0, 0x1f7, 0x3f6,
		0x170, 0x4d0, 0xb00c, 0xb010, 0xb014, 0xb028, 0xb03f, 0xc000, 0xc002, 0xc004,
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(denied); i++) {
		for (unsigned int size = 1; size <= 4; size *= 2) {
			int status = -12345;

			if (denied[i] + size - 1 > 0xffff)
				continue;
			assert_int_equal(platform_io_read(&plat, denied[i], size),
					 size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1);
			assert_int_equal(platform_io_write(&plat, denied[i], size, 0x01020304u, &status),
					 PLATFORM_IO_DONE);
			assert_int_equal(status, -12345);
		}
	}
	assert_int_equal(fake_cpu.io_reads, 0);
	assert_int_equal(fake_cpu.io_writes, 0);
}

/* The host's CMOS, as a Bochs BIOS leaves it: 2026-12-02 13:59:58, BCD, 24-hour. */
static uint8_t host_cmos[128], host_index;
static unsigned int host_uip_reads;	/* reads of register A that still see UIP */

static uint32_t host_cmos_read(uint16_t port)
{
	if (port != RTC_PORT_DATA)
		return ~0u;
	if (host_index == RTC_REG_A && host_uip_reads) {
		host_uip_reads--;
		return host_cmos[RTC_REG_A] | RTC_A_UIP;
	}
	return host_cmos[host_index];
}

static void host_cmos_write(uint16_t port, uint32_t v)
{
	if (port == RTC_PORT_INDEX)
		host_index = (uint8_t)(v & 0x7f);
	else
		host_cmos[host_index] = (uint8_t)v;
}

/*
 * The RTC and CMOS are emulated (runtime/devices/vrtc.c, test_vrtc.c): the host's
 * clock read once at boot, after its UIP cleared, and the BIOS's memory
 * sizes; after that not one guest access reaches the host's CMOS, and
 * the NMI bit stays the guest's.
 */
static void test_rtc_from_host_then_emulated(void **state)
{
	static const uint8_t time[] = { [0x00] = 0x58, [0x02] = 0x59, [0x04] = 0x13,
					[0x06] = 0x04, [0x07] = 0x02, [0x08] = 0x12, [0x09] = 0x26,
					[0x0a] = 0x26, [0x0b] = 0x02, [0x0d] = 0x80, [0x0e] = 0x77,
					[0x15] = 0x80, [0x16] = 0x02, [0x32] = 0x20 };
	int status = -12345;

	(void)state;
	platform_init(&plat, 64 << 20, 1, 1000);	/* 1000 TSC ticks a second */
	memcpy(host_cmos, time, sizeof(time));
	host_uip_reads = 3;
	fake_cpu.io_read_hook = host_cmos_read;
	fake_cpu.io_write_hook = host_cmos_write;
	fake_cpu.tsc = 1000000;
	fake_cpu.tsc_step = 0;
	assert_true(platform_rtc_from_host(&plat));
	assert_int_equal(host_uip_reads, 0);
	fake_cpu.io_reads = fake_cpu.io_writes = 0;

	assert_int_equal(platform_io_write(&plat, RTC_PORT_INDEX, 1, 0x80 | RTC_SECONDS, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x58);
	fake_cpu.tsc += 2000;
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x00);
	platform_io_write(&plat, RTC_PORT_INDEX, 1, RTC_MINUTES, &status);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x00);
	platform_io_write(&plat, RTC_PORT_INDEX, 1, RTC_HOURS, &status);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x14);
	platform_io_write(&plat, RTC_PORT_INDEX, 1, RTC_REG_A, &status);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x26);
	/* The base memory size is the host's; its other RAM bytes are not. */
	platform_io_write(&plat, RTC_PORT_INDEX, 1, 0x16, &status);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x02);
	platform_io_write(&plat, RTC_PORT_INDEX, 1, 0x0e, &status);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x00);
	/* A guest write stays in the shadow. */
	assert_int_equal(platform_io_write(&plat, RTC_PORT_DATA, 1, 0x42, &status), PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x42);
	assert_int_equal(host_cmos[0x0e], 0x77);
	/* A word access: index then data, byte by byte. */
	assert_int_equal(platform_io_read(&plat, RTC_PORT_INDEX, 2), 0x42ff);
	assert_int_equal(status, -12345);
	assert_int_equal(fake_cpu.io_reads, 0);
	assert_int_equal(fake_cpu.io_writes, 0);
	assert_int_equal(plat.rtc.nmi_disable, 0);
}

/* A host RTC stuck in UIP (or absent: all ones): refused, the guest's stays at 2000. */
static void test_rtc_host_stuck(void **state)
{
	(void)state;
	platform_init(&plat, 64 << 20, 1, 1000);
	assert_false(platform_rtc_from_host(&plat));
	platform_io_write(&plat, RTC_PORT_INDEX, 1, RTC_YEAR, &(int){ 0 });
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x00);
	platform_io_write(&plat, RTC_PORT_INDEX, 1, RTC_CENTURY, &(int){ 0 });
	assert_int_equal(platform_io_read(&plat, RTC_PORT_DATA, 1), 0x20);
}

/*
 * The guest's 8259A pair, 8254 and port 0x61 are emulated: the BIOS's
 * state to start with, the guest's programming read back, time from the
 * TSC at the rate platform_init() was given, and not one access reaches
 * the host's own chips.
 */
static void test_legacy_devices_emulated(void **state)
{
	int status = -12345;

	(void)state;
	platform_init(&plat, 64 << 20, 1, VPIT_HZ);	/* one TSC tick per 8254 tick */
	fake_cpu.tsc_step = 0;
	fake_cpu.tsc = 5000;
	assert_int_equal(platform_io_read(&plat, 0x21, 1), 0xb8);
	assert_int_equal(platform_io_read(&plat, 0xa1, 1), 0x8f);
	/* A word write to 0x20 is OCW3 to 0x20 and OCW1 to 0x21. */
	assert_int_equal(platform_io_write(&plat, 0x20, 2, 0xfe0a, &status), PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, 0x21, 1), 0xfe);
	vpic_pulse_irq(&plat.pic, 0);
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x01);	/* IRR */

	/* Channel 2 as pit_delay_us() drives it: OUT2 in port 0x61 bit 5. */
	platform_io_write(&plat, 0x61, 1, 0x00, &status);
	platform_io_write(&plat, 0x43, 1, 0xb0, &status);
	platform_io_write(&plat, 0x42, 1, 0xe8, &status);
	platform_io_write(&plat, 0x42, 1, 0x03, &status);	/* 1000 */
	platform_io_write(&plat, 0x61, 1, 0x01, &status);
	fake_cpu.tsc += 999;
	assert_int_equal(platform_io_read(&plat, 0x61, 1) & 0x21, 0x01);
	fake_cpu.tsc += 1;
	assert_int_equal(platform_io_read(&plat, 0x61, 1) & 0x21, 0x21);

	/*
	 * Channel 0 at 100 Hz, mode 2, IR0 open: a period is a request in the
	 * IRR, which a poll acknowledges; then EOI, and the next period.
	 */
	platform_io_write(&plat, 0x43, 1, 0x34, &status);
	platform_io_write(&plat, 0x40, 1, 11932 & 0xff, &status);
	platform_io_write(&plat, 0x40, 1, 11932 >> 8, &status);
	platform_io_write(&plat, 0x20, 1, 0x20, &status);	/* EOI of nothing */
	platform_io_write(&plat, 0x21, 1, 0xfe, &status);
	platform_io_write(&plat, 0x20, 1, 0x0c, &status);
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x80);	/* the earlier pulse */
	platform_io_write(&plat, 0x20, 1, 0x20, &status);
	fake_cpu.tsc += 11931;
	platform_io_write(&plat, 0x20, 1, 0x0a, &status);
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x00);
	fake_cpu.tsc += 1;
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x01);
	platform_io_write(&plat, 0x20, 1, 0x0c, &status);
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x80);
	platform_io_write(&plat, 0x20, 1, 0x0b, &status);
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x01);	/* ISR */
	platform_io_write(&plat, 0x20, 1, 0x20, &status);
	assert_int_equal(platform_io_read(&plat, 0x20, 1), 0x00);
	assert_int_equal(status, -12345);
	assert_int_equal(fake_cpu.io_reads, 0);
	assert_int_equal(fake_cpu.io_writes, 0);
}

/*
 * What the VT-x side asks (arch/vmx/legacy_irq.c): is INT up, when is
 * IR0's next request, and the INTA's vector; a TSC at twice the 8254's
 * rate, so deadlines are in TSC ticks.
 */
static void test_legacy_irq_and_deadline(void **state)
{
	uint64_t next;
	int status;

	(void)state;
	platform_init(&plat, 64 << 20, 1, 2 * VPIT_HZ);
	fake_cpu.tsc_step = 0;
	fake_cpu.tsc = 1000;
	platform_io_write(&plat, 0x21, 1, 0xff, &status);	/* all masked */
	assert_false(platform_legacy_int(&plat, 1000, &next));
	assert_int_equal(next, 0);				/* IR0 masked: no deadline */
	platform_io_write(&plat, 0x43, 1, 0x34, &status);
	platform_io_write(&plat, 0x40, 1, 100, &status);
	platform_io_write(&plat, 0x40, 1, 0, &status);		/* 100 ticks: 200 TSC */
	platform_io_write(&plat, 0x21, 1, 0xfe, &status);
	assert_false(platform_legacy_int(&plat, 1000, &next));
	assert_int_equal(next, 1000 + 200 + 1);
	assert_false(platform_legacy_int(&plat, 1199, &next));
	assert_true(platform_legacy_int(&plat, 1201, &next));
	/*
	 * IR0 requested already: the next edges coalesce with it until the
	 * INTA, so nothing is due (else an exit at every period: a storm's
	 * live-lock when the period is shorter than an exit).
	 */
	assert_int_equal(next, 0);
	assert_int_equal(platform_pit_period(&plat, 0x08), 200);	/* a storm's source (events.c) */
	assert_int_equal(platform_pit_period(&plat, 0x09), 0);
	assert_int_equal(platform_legacy_inta(&plat), 0x08);	/* the BIOS's vector base */
	/* Taken: from 1201 (8254 tick 600, rounded down), never before the edge. */
	assert_int_equal(platform_legacy_next(&plat, 1201), 1201 + 200 + 1);
	/* In service until the EOI: INT stays low however many periods pass. */
	assert_false(platform_legacy_int(&plat, 2000, &next));
	platform_io_write(&plat, 0x20, 1, 0x20, &status);
	assert_true(platform_legacy_int(&plat, 2000, &next));
}

/* The first write to a port that reaches SMM, ends Bochs or writes 0xE9 is reported, once. */
static void test_dangerous_denials_reported_once(void **state)
{
	int status;

	(void)state;
	platform_io_write(&plat, 0x21, 1, 0xff, &status);	/* the guests' own 8259 mask */
	assert_int_equal(fake_printk_calls, 0);
	platform_io_write(&plat, PLATFORM_APM_CNT_PORT, 1, 0x5a, &status);
	platform_io_write(&plat, PLATFORM_APM_CNT_PORT, 1, 0x5b, &status);
	platform_io_write(&plat, PLATFORM_APM_CNT_PORT + 1, 1, 0x5c, &status);
	assert_true(fake_printk_contains("exitplan: guest write of 0x5a to port 0xb2 denied "
					 "(APM control and status: a write to 0xb2 raises an SMI)\n"));
	assert_int_equal(fake_printk_calls, 1);
	platform_io_write(&plat, PLATFORM_DEBUG_CONSOLE_PORT, 1, 'e', &status);
	platform_io_write(&plat, 0x401, 2, 0x1234, &status);
	platform_io_write(&plat, 0x8a00, 2, 0xffff8ae0u, &status);	/* RAX's upper bits */
	assert_true(fake_printk_contains("port 0xe9 denied (the debug console"));
	assert_true(fake_printk_contains("guest write of 0x1234 to port 0x401 denied (Bochs's BIOS debug"));
	assert_true(fake_printk_contains("guest write of 0x8ae0 to port 0x8a00 denied (Bochs's debugger"));
	assert_int_equal(fake_printk_calls, 4);
}

/*
 * PM1: reads come from the hardware, SLP_EN is the guest's power off or
 * a refused sleep, and no write is forwarded (GBL_RLS, bit 2 of PM1_CNT,
 * would raise an SMI; PM1_EN would route events to the host).
 */
static void test_pm1_writes_never_forwarded(void **state)
{
	int status = -12345;

	(void)state;
	/* SCI_EN (bit 0) is the guest's: off until it enables ACPI mode. */
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_CNT_PORT, 2), 0xfffe);
	assert_true(fake_cpu.io_reads > 0);
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM_BASE, 4, 0xffffffffu, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM1A_CNT_PORT, 2, 0x0005, &status),
			 PLATFORM_IO_DONE);	/* SCI_EN | GBL_RLS */
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM_TMR_PORT, 4, 0, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(status, -12345);
	assert_int_equal(fake_cpu.io_writes, 0);
	/* S1 (SLP_TYP 1) is refused; S5 (SLP_TYP 0) is the guest's power off. */
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM1A_CNT_PORT, 2,
					   ACPI_PM1_CNT_SLP_EN | 1u << ACPI_PM1_CNT_SLP_TYP_SHIFT,
					   &status), PLATFORM_IO_STOP);
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM1A_CNT_PORT, 2, ACPI_PM1_CNT_SLP_EN,
					   &status), PLATFORM_IO_EXIT);
	assert_int_equal(status, PLATFORM_POWER_OFF_STATUS);
	assert_int_equal(fake_cpu.io_writes, 0);
}

/*
 * Two requests that stop the guest (on two vCPUs at once, say): the
 * first one's reason stays, since arch/vmx/io.c reads it after dropping
 * the platform lock, when another vCPU's request may already have come.
 * Each request is still printed.
 */
static void test_stop_reason_written_once(void **state)
{
	int status = -12345;

	(void)state;
	assert_int_equal(platform_io_write(&plat, PLATFORM_SYSCTL_A_PORT, 1,
					   SYSCTL_A_A20 | SYSCTL_A_FAST_RESET, &status),
			 PLATFORM_IO_STOP);
	assert_string_equal(plat.stop_reason, "reset requested through port 0x92 fast reset (0x3)");
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM1A_CNT_PORT, 2,
					   ACPI_PM1_CNT_SLP_EN | 1u << ACPI_PM1_CNT_SLP_TYP_SHIFT,
					   &status), PLATFORM_IO_STOP);
	assert_true(fake_printk_contains("exitplan: guest asked for ACPI sleep type 1: refused\n"));
	assert_int_equal(platform_io_write(&plat, PLATFORM_PCI_RST_CNT_PORT, 1,
					   RST_CNT_SYS_RST | RST_CNT_RST_CPU, &status),
			 PLATFORM_IO_STOP);
	assert_true(fake_printk_contains("exitplan: guest requested a reset (reset control register 0xcf9"));
	assert_string_equal(plat.stop_reason, "reset requested through port 0x92 fast reset (0x3)");
	assert_int_equal(status, -12345);
	assert_int_equal(fake_cpu.io_writes, 0);
}

/*
 * ACPI enable (ACPI 6.4 4.8.3.2): ACPI_ENABLE written to the FADT's
 * SMI_CMD sets the guest's SCI_EN, ACPI_DISABLE clears it; no SMI, no
 * write to the hardware; PM1a_CNT reads show the guest's SCI_EN whatever
 * the machine's is.  Other values there stay denied.
 */
static void test_acpi_enable_emulated(void **state)
{
	int status = -12345;

	(void)state;
	platform_set_acpi_smi(&plat, PLATFORM_APM_CNT_PORT, 0xf1, 0xf0);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_CNT_PORT, 2), 0xfffe);
	assert_int_equal(platform_io_write(&plat, PLATFORM_APM_CNT_PORT, 1, 0xf1, &status),
			 PLATFORM_IO_DONE);
	assert_true(fake_printk_contains("exitplan: guest wrote 0xf1 to SMI_CMD 0xb2: ACPI mode on "
					 "(SCI_EN emulated, no SMI)\n"));
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_CNT_PORT, 2), 0xffff);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_CNT_PORT, 1), 0xff);
	/* Bit 0 of PM1a_CNT inside a wider read of the block (PM1_EN below it: 0). */
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM_BASE + 2, 4), 0xffff0000u);
	assert_int_equal(platform_io_write(&plat, PLATFORM_APM_CNT_PORT, 1, 0xf0, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM_BASE + 2, 4), 0xfffe0000u);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_CNT_PORT + 1, 1), 0xff);
	/* PM1_EN reads back what the guest wrote (GBL_EN here); the hardware's is untouched. */
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_EN_PORT, 2), 0);
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM1A_EN_PORT, 2, 0x0020, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_EN_PORT, 2), 0x0020);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM_BASE, 4), 0x0020ffffu);
	assert_int_equal(platform_io_write(&plat, PLATFORM_PM1A_EN_PORT + 1, 1, 0x01, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PM1A_EN_PORT, 2), 0x0120);
	/* Anything else to SMI_CMD is the denial it was. */
	assert_int_equal(platform_io_write(&plat, PLATFORM_APM_CNT_PORT, 1, 0x5a, &status),
			 PLATFORM_IO_DONE);
	assert_true(fake_printk_contains("guest write of 0x5a to port 0xb2 denied"));
	assert_int_equal(status, -12345);
	assert_int_equal(fake_cpu.io_writes, 0);
}

/* CONFIG_ADDRESS is the guest's own latch; its byte ports and RST_CNT are not PCI. */
static void test_pci_ports(void **state)
{
	int status;

	(void)state;
	assert_int_equal(platform_io_write(&plat, PCI_CONFIG_ADDRESS_PORT, 4, 0x80000070u, &status),
			 PLATFORM_IO_DONE);
	assert_int_equal(platform_io_read(&plat, PCI_CONFIG_ADDRESS_PORT, 4), 0x80000070u);
	assert_int_equal(fake_cpu.io_writes, 0);
	assert_int_equal(platform_io_read(&plat, PCI_CONFIG_ADDRESS_PORT, 1), 0xff);
	assert_int_equal(platform_io_read(&plat, PCI_CONFIG_ADDRESS_PORT + 2, 2), 0xffff);
	assert_int_equal(platform_io_read(&plat, PLATFORM_PCI_RST_CNT_PORT, 1), 0);
	/* Nothing at 00:00.0 on the fake machine: an empty slot. */
	assert_int_equal(platform_io_read(&plat, PCI_CONFIG_DATA_PORT + 2, 1), 0xff);
	assert_int_equal(platform_io_write(&plat, PCI_CONFIG_DATA_PORT + 2, 1, 0x4a, &status),
			 PLATFORM_IO_DONE);
	assert_true(fake_printk_contains("guest PCI configuration write dropped: 00:00.0 offset 0x72"));
	/* Only configuration reads reached the hardware: CONFIG_ADDRESS, then CONFIG_DATA. */
	assert_true(fake_cpu.io_writes > 0);
	assert_int_equal(fake_cpu.last_port, PCI_CONFIG_DATA_PORT);
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
		cmocka_unit_test_setup(test_denied_ports_never_reach_the_hardware, setup),
		cmocka_unit_test_setup(test_rtc_from_host_then_emulated, setup),
		cmocka_unit_test_setup(test_rtc_host_stuck, setup),
		cmocka_unit_test_setup(test_legacy_devices_emulated, setup),
		cmocka_unit_test_setup(test_legacy_irq_and_deadline, setup),
		cmocka_unit_test_setup(test_dangerous_denials_reported_once, setup),
		cmocka_unit_test_setup(test_pm1_writes_never_forwarded, setup),
		cmocka_unit_test_setup(test_stop_reason_written_once, setup),
		cmocka_unit_test_setup(test_acpi_enable_emulated, setup),
		cmocka_unit_test_setup(test_pci_ports, setup),
	};

	return cmocka_run_group_tests_name("runtime/devices/platform.c: fw_cfg and isa-debug-exit",
					   tests, NULL, NULL);
}
