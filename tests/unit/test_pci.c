// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/pci.c: the guest's view of PCI configuration space, against a
 * fake configuration mechanism #1 holding the functions Bochs's i440FX
 * machine has (host bridge, PIIX3 ISA bridge, IDE, USB, PIIX4 PM) plus a
 * network card on bus 1.  The guest must see the bridges read-only and
 * nothing of the rest, and no guest write may ever reach the hardware.
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
#include "runtime/devices/pci.h"

#define BDF(bus, dev, fn)	((uint32_t)(bus) << 16 | (uint32_t)(dev) << 11 | (uint32_t)(fn) << 8)
#define ADDR(bdf, reg)		(PCI_CONFIG_ENABLE | (bdf) | (reg))

static const struct fake_function {
	uint32_t bdf;
	uint32_t id;		/* device << 16 | vendor */
	uint32_t class_rev;
} functions[] = {
	{ BDF(0, 0, 0), 0x12378086, 0x06000002 },	/* i440FX host bridge */
	{ BDF(0, 1, 0), 0x70008086, 0x06010000 },	/* PIIX3 ISA bridge */
	{ BDF(0, 1, 1), 0x70108086, 0x01018000 },	/* PIIX3 IDE, bus master */
	{ BDF(0, 1, 2), 0x70208086, 0x0c030000 },	/* PIIX3 USB UHCI */
	{ BDF(0, 1, 3), 0x71138086, 0x06800003 },	/* PIIX4 ACPI/PM */
	{ BDF(1, 0, 0), 0x100e8086, 0x02000003 },	/* a NIC behind a bridge */
};

/*
 * The I/O BARs of the fake machine, as Bochs's BIOS assigns them (the IDE
 * bus-master block at 0xc000, UHCI at 0xc020) and one behind the bridge
 * that decodes 16 address bits only (its size reads 0 above them), and
 * each function's command register: BAR sizing writes them.
 */
static const struct fake_bar {
	uint32_t bdf, reg, value, size, decoded;
} bars_reset[] = {
	{ BDF(0, 1, 1), 0x20, 0xc001, 16, 0xffffffffu },	/* PIIX3 IDE BAR4: bus-master registers */
	{ BDF(0, 1, 2), 0x20, 0xc021, 32, 0xffffffffu },	/* UHCI BAR4 */
	{ BDF(1, 0, 0), 0x14, 0x1001, 64, 0xffffu },		/* the NIC's BAR1 */
};
static struct fake_bar bars[ARRAY_SIZE(bars_reset)];
static bool bar_sizing[ARRAY_SIZE(bars_reset)];
static uint32_t commands[ARRAY_SIZE(functions)];
/* A BAR held all ones while its function decoded I/O. */
static bool sized_while_decoding;

/* The fake machine's configuration space and what reached it. */
static uint32_t hw_address;
static unsigned int hw_data_writes, hw_data_reads;

/* Register @reg of a fake function: its IDs, class, and a pattern elsewhere. */
static uint32_t hw_config(uint32_t address)
{
	uint32_t reg = address & PCI_CONFIG_REG_MASK;

	for (unsigned int i = 0; i < ARRAY_SIZE(bars); i++) {
		if ((address & 0x00ffff00u) != bars[i].bdf || reg != bars[i].reg)
			continue;
		if (!bar_sizing[i])
			return bars[i].value;
		/* Sizing: the writable address bits, the I/O bit; 16-bit decoders read 0 above. */
		return (~(bars[i].size - 1) | PCI_BAR_IO) & bars[i].decoded;
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(functions); i++) {
		if ((address & 0x00ffff00u) != functions[i].bdf)
			continue;
		if (reg == PCI_COMMAND)
			return commands[i];
		if (reg == PCI_HEADER_TYPE_DWORD)	/* the PIIX3 is multi-function */
			return functions[i].bdf == BDF(0, 1, 0) ? 0x00800000u : 0;
		if (reg >= PCI_BAR0 && reg < PCI_BAR0 + 24)
			return 0;			/* a BAR not implemented */
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(functions); i++) {
		if ((address & 0x00ffff00u) != functions[i].bdf)
			continue;
		if (reg == PCI_VENDOR_ID)
			return functions[i].id;
		if (reg == PCI_CLASS_REVISION)
			return functions[i].class_rev;
		/* e.g. the SMRAM register of the host bridge at 0x70-0x73 */
		return 0xa0000000u | functions[i].bdf | reg;
	}
	return 0xffffffffu;	/* master abort: nobody there */
}

static uint32_t hw_read(uint16_t port)
{
	if (port == PCI_CONFIG_ADDRESS_PORT)
		return hw_address;
	if (port >= PCI_CONFIG_DATA_PORT && port <= PCI_CONFIG_DATA_PORT + 3) {
		hw_data_reads++;
		/* pci.c reads whole dwords; this fake answers only those. */
		assert_int_equal(port, PCI_CONFIG_DATA_PORT);
		return hw_config(hw_address);
	}
	fail_msg("pci.c read port %#x", port);
	return 0;
}

/* A dword written to CONFIG_DATA: only BAR sizing and command registers change. */
static void hw_config_write(uint32_t address, uint32_t value)
{
	uint32_t reg = address & PCI_CONFIG_REG_MASK;

	for (unsigned int i = 0; i < ARRAY_SIZE(bars); i++) {
		if ((address & 0x00ffff00u) != bars[i].bdf || reg != bars[i].reg)
			continue;
		bar_sizing[i] = value == 0xffffffffu;
		if (!bar_sizing[i])
			bars[i].value = value;
		for (unsigned int f = 0; f < ARRAY_SIZE(functions); f++)
			if (functions[f].bdf == bars[i].bdf && bar_sizing[i] &&
			    (commands[f] & PCI_COMMAND_IO))
				sized_while_decoding = true;
	}
	for (unsigned int f = 0; f < ARRAY_SIZE(functions); f++)
		if ((address & 0x00ffff00u) == functions[f].bdf && reg == PCI_COMMAND)
			commands[f] = value & 0xffff;
}

static void hw_write(uint16_t port, uint32_t value)
{
	if (port == PCI_CONFIG_ADDRESS_PORT) {
		hw_address = value;
		return;
	}
	if (port >= PCI_CONFIG_DATA_PORT && port <= PCI_CONFIG_DATA_PORT + 3)
		hw_data_writes++;
	else
		fail_msg("pci.c wrote %#x to port %#x", value, port);
	hw_config_write(hw_address, value);
}

static struct pci_state pci;

static int setup(void **state)
{
	(void)state;
	fake_cpu_reset();
	fake_printk_reset();
	fake_cpu.io_read_hook = hw_read;
	fake_cpu.io_write_hook = hw_write;
	hw_address = 0;
	hw_data_writes = hw_data_reads = 0;
	memcpy(bars, bars_reset, sizeof(bars));
	memset(bar_sizing, 0, sizeof(bar_sizing));
	for (unsigned int f = 0; f < ARRAY_SIZE(functions); f++)
		commands[f] = PCI_COMMAND_IO | PCI_COMMAND_MEMORY | 0x4;	/* and bus master */
	sized_while_decoding = false;
	pci_init(&pci);
	return 0;
}

static uint32_t guest_read(uint32_t address, unsigned int offset, unsigned int size)
{
	pci_config_address_write(&pci, address);
	return pci_config_data_read(&pci, offset, size);
}

static void test_view_by_class(void **state)
{
	(void)state;
	assert_int_equal(pci_view_of(0x8086, 0x06000002), PCI_VIEW_READ_ONLY);
	assert_int_equal(pci_view_of(0x8086, 0x06010000), PCI_VIEW_READ_ONLY);
	assert_int_equal(pci_view_of(0x8086, 0x06800003), PCI_VIEW_READ_ONLY);
	/* Storage, USB, network, display, a PCI-to-PCI bridge: hidden. */
	assert_int_equal(pci_view_of(0x8086, 0x01018000), PCI_VIEW_HIDDEN);
	assert_int_equal(pci_view_of(0x8086, 0x0c030000), PCI_VIEW_HIDDEN);
	assert_int_equal(pci_view_of(0x8086, 0x02000003), PCI_VIEW_HIDDEN);
	assert_int_equal(pci_view_of(0x1234, 0x03000000), PCI_VIEW_HIDDEN);
	assert_int_equal(pci_view_of(0x8086, 0x06040000), PCI_VIEW_HIDDEN);
	/* No function there. */
	assert_int_equal(pci_view_of(PCI_VENDOR_NONE, 0x06000000), PCI_VIEW_HIDDEN);
}

static void test_config_address_is_the_guests_latch(void **state)
{
	(void)state;
	pci_config_address_write(&pci, 0xffffffffu);
	/* Reserved bits 30:24 and 1:0 read as 0. */
	assert_int_equal(pci_config_address_read(&pci), PCI_CONFIG_ADDRESS_MASK);
	pci_config_address_write(&pci, ADDR(BDF(0, 0, 0), 0x70));
	assert_int_equal(pci_config_address_read(&pci), ADDR(BDF(0, 0, 0), 0x70));
	/* The real CONFIG_ADDRESS was not touched by the guest's writes. */
	assert_int_equal(fake_cpu.io_writes, 0);
}

static void test_bridges_read_through(void **state)
{
	(void)state;
	assert_int_equal(guest_read(ADDR(BDF(0, 0, 0), 0), 0, 4), 0x12378086);
	assert_int_equal(guest_read(ADDR(BDF(0, 1, 0), 0), 0, 2), 0x8086);
	assert_int_equal(guest_read(ADDR(BDF(0, 1, 0), 0), 2, 2), 0x7000);
	assert_int_equal(guest_read(ADDR(BDF(0, 1, 3), PCI_CLASS_REVISION), 3, 1), 0x06);
	/* Byte 2 of the host bridge's dword at 0x70: the SMRAM register (0x72). */
	assert_int_equal(guest_read(ADDR(BDF(0, 0, 0), 0x70), 2, 1), (0xa0000070u >> 16) & 0xff);
	/* PMBA of the PM function, whole. */
	assert_int_equal(guest_read(ADDR(BDF(0, 1, 3), 0x40), 0, 4), 0xa0000000u | BDF(0, 1, 3) | 0x40);
}

static void test_bus_masters_and_the_rest_hidden(void **state)
{
	static const uint32_t hidden[] = {
		BDF(0, 1, 1), BDF(0, 1, 2), BDF(1, 0, 0),	/* IDE, USB, NIC */
		BDF(0, 2, 0), BDF(0, 31, 7), BDF(255, 31, 7),	/* nothing there */
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(hidden); i++) {
		/* Vendor, class, command and the BARs: an empty slot. */
		for (uint32_t reg = 0; reg < 0x40; reg += 4) {
			assert_int_equal(guest_read(ADDR(hidden[i], reg), 0, 4), 0xffffffffu);
			assert_int_equal(guest_read(ADDR(hidden[i], reg), 1, 2), 0xffff);
			assert_int_equal(guest_read(ADDR(hidden[i], reg), 3, 1), 0xff);
		}
	}
}

static void test_disabled_or_bad_accesses_read_all_ones(void **state)
{
	(void)state;
	/* Enable bit clear: no configuration cycle at all. */
	assert_int_equal(guest_read(BDF(0, 0, 0), 0, 4), 0xffffffffu);
	assert_int_equal(hw_data_reads, 0);
	/* An access past CONFIG_DATA's last byte. */
	assert_int_equal(guest_read(ADDR(BDF(0, 0, 0), 0), 2, 4), 0xffffffffu);
}

/*
 * The attacks: open SMRAM (i440FX SMRAM register 0x72: D_OPEN), move the
 * PM base (PIIX4 PMBA, 0x40), enable bus mastering and move a BAR of the
 * IDE controller.  None reaches the hardware; the first is reported.
 */
static void test_writes_never_reach_the_hardware(void **state)
{
	static const struct {
		uint32_t bdf, reg;
		unsigned int offset, size;
		uint32_t value;
	} writes[] = {
		{ BDF(0, 0, 0), 0x70, 2, 1, 0x4a },		/* SMRAM: D_OPEN | G_SMRAME */
		{ BDF(0, 1, 3), 0x40, 0, 4, 0x0000c001 },	/* PMBA elsewhere */
		{ BDF(0, 1, 3), 0x80, 0, 1, 0x00 },		/* PMREGMISC: PM I/O off */
		{ BDF(0, 1, 1), 0x04, 0, 2, 0x0005 },		/* IDE: I/O + Bus Master */
		{ BDF(0, 1, 1), 0x20, 0, 4, 0x0000c041 },	/* IDE: BAR4, bus-master regs */
		{ BDF(0, 1, 0), 0xa0, 0, 1, 0xff },		/* PIIX3 SMICNTL */
		{ BDF(0, 0, 0), 0x04, 0, 4, 0xffffffff },	/* host bridge command */
	};

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(writes); i++) {
		pci_config_address_write(&pci, ADDR(writes[i].bdf, writes[i].reg));
		pci_config_data_write(&pci, writes[i].offset, writes[i].size, writes[i].value);
	}
	/* A write with configuration disabled, too. */
	pci_config_address_write(&pci, BDF(0, 0, 0) | 0x70);
	pci_config_data_write(&pci, 2, 1, 0x4a);
	assert_int_equal(hw_data_writes, 0);
	/* One report, for the first write, naming the register. */
	assert_true(fake_printk_contains("guest PCI configuration write dropped: 00:00.0 offset 0x72, "
					 "1 byte(s) 0x4a (read-only function)"));
	assert_int_equal(fake_printk_calls, 1);
	/* The registers read as before. */
	assert_int_equal(guest_read(ADDR(BDF(0, 1, 3), 0x40), 0, 4), 0xa0000000u | BDF(0, 1, 3) | 0x40);
	assert_int_equal(guest_read(ADDR(BDF(0, 1, 1), 0x04), 0, 2), 0xffff);
}

static void test_hidden_write_report(void **state)
{
	(void)state;
	pci_config_address_write(&pci, ADDR(BDF(0, 1, 1), 0x04));
	pci_config_data_write(&pci, 0, 2, 0x0005);
	assert_true(fake_printk_contains("01.1 offset 0x4, 2 byte(s) 0x5 "
					 "(no such function for the guest)"));
	assert_int_equal(hw_data_writes, 0);
}

/*
 * The I/O BARs the boot check of the I/O grants compares against
 * (arch/vmx/vmx_run.c): each found, on any bus, with its function and
 * ports; sized with I/O decoding off; left as they were.
 */
static void test_io_bars_found_and_left_as_they_were(void **state)
{
	struct pci_io_bar b[8];
	unsigned int n;

	(void)state;
	n = pci_io_bars(b, ARRAY_SIZE(b));
	assert_int_equal(n, 3);
	assert_int_equal(b[0].bdf, BDF(0, 1, 1));
	assert_int_equal(b[0].id, 0x70108086);
	assert_int_equal(b[0].class_rev >> 8, 0x010180);
	assert_int_equal(b[0].bar, 4);
	assert_int_equal(b[0].first, 0xc000);
	assert_int_equal(b[0].last, 0xc00f);
	assert_int_equal(b[1].bdf, BDF(0, 1, 2));
	assert_int_equal(b[1].first, 0xc020);
	assert_int_equal(b[1].last, 0xc03f);
	/* Behind the bridge, a 16-bit decoder's BAR1. */
	assert_int_equal(b[2].bdf, BDF(1, 0, 0));
	assert_int_equal(b[2].bar, 1);
	assert_int_equal(b[2].first, 0x1000);
	assert_int_equal(b[2].last, 0x103f);
	assert_false(sized_while_decoding);
	for (unsigned int i = 0; i < ARRAY_SIZE(bars); i++) {
		assert_int_equal(bars[i].value, bars_reset[i].value);
		assert_false(bar_sizing[i]);
	}
	for (unsigned int f = 0; f < ARRAY_SIZE(functions); f++)
		assert_int_equal(commands[f], PCI_COMMAND_IO | PCI_COMMAND_MEMORY | 0x4);
	/* The IDE bus-master block overlaps a grant of 0xc00f..0xc010, not one of 0xc010..0xc01f. */
	assert_true(pci_io_bar_overlaps(&b[0], 0xc00f, 0xc010));
	assert_true(pci_io_bar_overlaps(&b[0], 0xbff0, 0xffff));
	assert_false(pci_io_bar_overlaps(&b[0], 0xc010, 0xc01f));
	assert_false(pci_io_bar_overlaps(&b[0], 0xb000, 0xbfff));
	/* More than fit: the count says so, the array is not overrun. */
	memset(b, 0, sizeof(b));
	assert_int_equal(pci_io_bars(b, 1), 3);
	assert_int_equal(b[1].bdf, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_view_by_class, setup),
		cmocka_unit_test_setup(test_config_address_is_the_guests_latch, setup),
		cmocka_unit_test_setup(test_bridges_read_through, setup),
		cmocka_unit_test_setup(test_bus_masters_and_the_rest_hidden, setup),
		cmocka_unit_test_setup(test_disabled_or_bad_accesses_read_all_ones, setup),
		cmocka_unit_test_setup(test_writes_never_reach_the_hardware, setup),
		cmocka_unit_test_setup(test_hidden_write_report, setup),
		cmocka_unit_test_setup(test_io_bars_found_and_left_as_they_were, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
