// SPDX-License-Identifier: GPL-2.0-only
/*
 * The emulated devices (isa-debug-exit, fw_cfg), the filters on the
 * machine's reset and power-off ports and on PCI configuration space
 * (pci.c), and every other port the guest was not granted (platform.h).
 */
#include <stdarg.h>

#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "lib/format.h"
#include "runtime/devices/pci.h"
#include "runtime/devices/platform.h"
#include "lib/string.h"

static void fw_cfg_items_init(struct platform_state *p);

void platform_init(struct platform_state *p, uint64_t ram_size, unsigned int nr_cpus,
		   uint64_t tsc_hz)
{
	*p = (struct platform_state){ .ram_size = ram_size, .nr_cpus = nr_cpus };
	pci_init(&p->pci);
	/*
	 * The 8254 counts at VPIT_HZ of the TSC's time: under Bochs the TSC
	 * counts instructions and Bochs's own 8254 runs at VPIT_HZ per `ips`
	 * instructions, so measured against it at boot the guest's 8254
	 * keeps Bochs's rate, as bare Bochs would give the guest.
	 */
	p->tsc_hz = tsc_hz ? tsc_hz : VPIT_HZ;
	p->pit_mult = ((uint64_t)VPIT_HZ << 32) / p->tsc_hz;
	vpic_reset_bios(&p->pic);
	vpit_reset(&p->pit, platform_pit_now(p));
	vrtc_reset(&p->rtc, NULL, NULL, p->tsc_hz, rdtsc());
	fw_cfg_items_init(p);
	platform_fw_cfg_select(p, FW_CFG_SIGNATURE);	/* the selector's reset value */
}

void platform_set_acpi_smi(struct platform_state *p, uint16_t smi_cmd, uint8_t enable,
			   uint8_t disable)
{
	p->acpi_smi_cmd = smi_cmd;
	p->acpi_enable = enable;
	p->acpi_disable = disable;
	p->acpi_sci_en = false;		/* the firmware leaves the machine in legacy mode */
}

/* A byte write to SMI_CMD: ACPI_ENABLE / ACPI_DISABLE as the firmware's SMI handler does them. */
static bool acpi_smi_cmd_write(struct platform_state *p, uint8_t v)
{
	if (v != p->acpi_enable && v != p->acpi_disable)
		return false;
	p->acpi_sci_en = v == p->acpi_enable;
	printk("exitplan: guest wrote %#x to SMI_CMD %#x: ACPI mode %s (SCI_EN emulated, no SMI)\n",
	       v, p->acpi_smi_cmd, p->acpi_sci_en ? "on" : "off");
	return true;
}

static uint64_t tsc_to_pit(const struct platform_state *p, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * p->pit_mult) >> 32);
}

uint64_t platform_pit_now(const struct platform_state *p)
{
	return tsc_to_pit(p, rdtsc());
}

/*
 * Channel 0's OUT up to @now (8254 clock): its periods so far are
 * requests (coalesced) on both inputs it drives, the master 8259's IR0
 * and the I/O APIC pin (platform_legacy_irq0_rose()).
 */
static void pit_irq0_catch_up(struct platform_state *p, uint64_t now)
{
	if (vpit_irq0_edges(&p->pit, now)) {
		vpic_pulse_irq(&p->pic, 0);
		p->irq0_rose = true;
	}
}

bool platform_legacy_int(struct platform_state *p, uint64_t now_tsc, uint64_t *next_tsc)
{
	pit_irq0_catch_up(p, tsc_to_pit(p, now_tsc));
	*next_tsc = platform_legacy_next(p, now_tsc);
	return vpic_has_interrupt(&p->pic);
}

uint64_t platform_legacy_next(const struct platform_state *p, uint64_t now_tsc)
{
	/*
	 * A request due while IR0 is open and not requested already: one
	 * in the IRR takes every edge until its INTA (they coalesce), so
	 * nothing is due before then.  Waking at each edge would leave the
	 * guest nothing when the 8254's period is shorter than an exit.
	 */
	if (p->pic.chip[0].imr & 1 || p->pic.chip[0].irr & 1)
		return 0;
	return platform_pit_next_irq0(p, now_tsc);
}

uint64_t platform_pit_period(const struct platform_state *p, uint8_t vector)
{
	const struct vpit_channel *c = &p->pit.ch[0];

	if (vector != p->pic.chip[0].vector_base || !c->counting || (c->mode != 2 && c->mode != 3))
		return 0;
	return (uint64_t)c->reload * p->tsc_hz / VPIT_HZ;
}

uint64_t platform_pit_next_irq0(const struct platform_state *p, uint64_t now_tsc)
{
	uint64_t now = tsc_to_pit(p, now_tsc), next = vpit_next_irq0(&p->pit, now);

	/* +1: the TSC tick at or after it. */
	return next == UINT64_MAX ? 0 : now_tsc + (next - now) * p->tsc_hz / VPIT_HZ + 1;
}

bool platform_legacy_irq0_rose(struct platform_state *p)
{
	bool rose = p->irq0_rose;

	p->irq0_rose = false;
	return rose;
}

uint8_t platform_legacy_inta(struct platform_state *p)
{
	return vpic_intack(&p->pic);
}

/* --- the guest's 8259A pair, 8254 and port 0x61 --------------------------- */

/* A wider access is byte accesses to consecutive ports, as on the ISA bus. */
static bool legacy_io(struct platform_state *p, uint16_t port, unsigned int size, bool in,
		      uint32_t *value)
{
	uint64_t now;
	uint32_t v = in ? 0 : *value;

	if (!platform_legacy_port(port, size))
		return false;
	now = platform_pit_now(p);
	pit_irq0_catch_up(p, now);
	for (unsigned int i = 0; i < size; i++) {
		uint16_t b = (uint16_t)(port + i);
		uint8_t byte = in ? 0xff : (uint8_t)(v >> (8 * i));

		/* A byte of no device here (a straddling access): 0xff, or dropped. */
		if (!vpic_io(&p->pic, b, in, &byte))
			vpit_io(&p->pit, b, in, &byte, now);
		if (in)
			*value |= (uint32_t)byte << (8 * i);
	}
	return true;
}

/* --- the guest's RTC and CMOS ----------------------------------------- */

static bool touches_rtc(uint16_t port, unsigned int size)
{
	return port <= RTC_PORT_DATA && port + size - 1 >= RTC_PORT_INDEX;
}

/* Byte by byte, as on the ISA bus; a straddling byte of no device reads 0xff. */
static void rtc_io(struct platform_state *p, uint16_t port, unsigned int size, bool in,
		   uint32_t *value)
{
	uint64_t now = rdtsc();
	uint32_t v = in ? 0 : *value;

	if (in)
		*value = 0;
	for (unsigned int i = 0; i < size; i++) {
		uint8_t byte = in ? 0xff : (uint8_t)(v >> (8 * i));

		vrtc_io(&p->rtc, (uint16_t)(port + i), in, &byte, now);
		if (in)
			*value |= (uint32_t)byte << (8 * i);
	}
}

/*
 * The host's CMOS byte `i`.  The index is written with NMI_DISABLE clear:
 * NMIs stay enabled, as the BIOS leaves them (port 0x70 cannot be read
 * back, so there is no previous value to restore).
 */
static uint8_t host_cmos(uint8_t i)
{
	outb(RTC_PORT_INDEX, i);
	return inb(RTC_PORT_DATA);
}

#define HOST_RTC_UIP_POLLS	100000u	/* an update takes at most 1984 + 244 us */

static bool host_rtc_read(struct vrtc_time *t, uint8_t *b)
{
	unsigned int polls = 0;

	while (host_cmos(RTC_REG_A) & RTC_A_UIP)
		if (++polls == HOST_RTC_UIP_POLLS)
			return false;
	*b = host_cmos(RTC_REG_B);
	t->sec = host_cmos(RTC_SECONDS);
	t->min = host_cmos(RTC_MINUTES);
	t->hour = host_cmos(RTC_HOURS);
	t->mday = host_cmos(RTC_DAY_OF_MONTH);
	t->mon = host_cmos(RTC_MONTH);
	t->year = (uint16_t)(host_cmos(RTC_CENTURY) << 8 | host_cmos(RTC_YEAR));
	return true;
}

bool platform_rtc_from_host(struct platform_state *p)
{
	uint8_t cmos[RTC_CMOS_SIZE], b = 0, hour;
	struct vrtc_time raw, again, t;
	unsigned int tries = 0, century;

	/* Twice the same: no update fell between the reads. */
	do {
		if (++tries > 4 || !host_rtc_read(&raw, &b) || !host_rtc_read(&again, &b))
			return false;
	} while (raw.sec != again.sec || raw.min != again.min || raw.hour != again.hour ||
		 raw.mday != again.mday || raw.mon != again.mon || raw.year != again.year);
	for (unsigned int i = 0; i < RTC_CMOS_SIZE; i++)
		cmos[i] = host_cmos((uint8_t)i);
	hour = raw.hour;
	t.sec = (uint8_t)vrtc_decode(b, raw.sec);
	t.min = (uint8_t)vrtc_decode(b, raw.min);
	t.hour = (uint8_t)vrtc_decode(b, hour & (uint8_t)~RTC_HOURS_PM);
	if (!(b & RTC_B_H24))
		t.hour = (uint8_t)(t.hour % 12 + (hour & RTC_HOURS_PM ? 12 : 0));
	t.mday = (uint8_t)vrtc_decode(b, raw.mday);
	t.mon = (uint8_t)vrtc_decode(b, raw.mon);
	century = vrtc_decode(b, (uint8_t)(raw.year >> 8));
	t.year = (uint16_t)((century >= 19 && century <= 99 ? century : 20) * 100 +
			    vrtc_decode(b, (uint8_t)raw.year));
	if (t.sec > 59 || t.min > 59 || t.hour > 23 || t.mday < 1 || t.mday > 31 || t.mon < 1 ||
	    t.mon > 12)
		return false;
	vrtc_reset(&p->rtc, &t, cmos, p->tsc_hz, rdtsc());
	return true;
}

/* The items by key (QEMU's), little endian; the rest read as 0. */
static void fw_cfg_items_init(struct platform_state *p)
{
	struct platform_fw_cfg_item *it = p->fw_cfg_items;

	it[FW_CFG_SIGNATURE] = (struct platform_fw_cfg_item){
		'Q' | 'E' << 8 | 'M' << 16 | (uint64_t)'U' << 24, 4 };	/* "QEMU" */
	it[FW_CFG_ID] = (struct platform_fw_cfg_item){ FW_CFG_ID_TRADITIONAL, 4 };	/* no DMA */
	it[FW_CFG_RAM_SIZE] = (struct platform_fw_cfg_item){ p->ram_size, 8 };
	it[FW_CFG_NB_CPUS] = (struct platform_fw_cfg_item){ p->nr_cpus, 2 };
	it[FW_CFG_MAX_CPUS] = (struct platform_fw_cfg_item){ p->nr_cpus, 2 };
}

/* --- reset and power-off ports ---------------------------------------- */

/*
 * The reason of the first request that stops the guest: kept, never
 * rewritten, since the VM is one and its vCPUs' I/O exits come from
 * every CPU.  A vCPU reads it after dropping the platform lock
 * (arch/vmx/io.c), and the machine stops on the first request anyway
 * (vm_stop()); each request is printed as it comes.
 */
static void __printf(2, 3) stop_reason_once(struct platform_state *p, const char *fmt, ...)
{
	va_list ap;

	if (p->stop_reason[0])
		return;
	va_start(ap, fmt);
	vsnprintf(p->stop_reason, sizeof(p->stop_reason), fmt, ap);
	va_end(ap);
}

static enum platform_io_result __printf(2, 3)
reset_request(struct platform_state *p, const char *how, ...)
{
	char what[48];
	va_list ap;

	va_start(ap, how);
	vsnprintf(what, sizeof(what), how, ap);
	va_end(ap);
	printk("exitplan: guest requested a reset (%s)\n", what);
	stop_reason_once(p, "reset requested through %s", what);
	return PLATFORM_IO_STOP;
}

static enum platform_io_result power_off(const char *how, int *status)
{
	printk("exitplan: guest powered off (%s)\n", how);
	*status = PLATFORM_POWER_OFF_STATUS;
	return PLATFORM_IO_EXIT;
}

/* Is @port one of the byte-wide ports filtered below? */
static bool filtered_byte_port(uint16_t port)
{
	return port == PLATFORM_KBC_DATA_PORT || port == PLATFORM_KBC_CMD_PORT ||
	       port == PLATFORM_SYSCTL_A_PORT || port == PLATFORM_BOCHS_SHUTDOWN_PORT ||
	       port == PLATFORM_PCI_RST_CNT_PORT;
}

/* Does the access touch one of them?  (The I/O bitmap makes an access exit
 * when any of its bytes is trapped, SDM Vol. 3C 26.1.3.) */
static bool touches_filtered_port(uint16_t port, unsigned int size)
{
	for (unsigned int i = 0; i < size; i++)
		if (filtered_byte_port((uint16_t)(port + i)))
			return true;
	return false;
}

/* Does the access lie inside the PM I/O space? */
static bool in_pm_block(uint16_t port, unsigned int size)
{
	return port >= PLATFORM_PM_BASE && port + size - 1 <= PLATFORM_PM_LAST;
}

/*
 * Reads of the PM1 event and control blocks and of the PM timer have no
 * side effects: they come from the hardware (an access to the timer alone
 * does not exit; one that also covers PM1 does, and is read whole).
 */
static bool pm_readable(uint16_t port, unsigned int size)
{
	return port >= PLATFORM_PM_BASE && port + size - 1 <= PLATFORM_PM_TMR_PORT + 3;
}

static uint8_t filtered_byte_read(uint16_t port)
{
	switch (port) {
	case PLATFORM_KBC_DATA_PORT:
	case PLATFORM_KBC_CMD_PORT:
		return inb(port);	/* the real 8042: data and status */
	case PLATFORM_SYSCTL_A_PORT:
		return SYSCTL_A_A20;	/* A20 on, no reset in progress */
	case PLATFORM_PCI_RST_CNT_PORT:
		return 0;
	default:
		return 0xff;	/* Bochs's shutdown port, or a straddling access's denied byte */
	}
}

static enum platform_io_result filtered_byte_write(struct platform_state *p, uint16_t port,
						   uint8_t v, int *status)
{
	static const char shutdown[] = "Shutdown";

	switch (port) {
	case PLATFORM_KBC_CMD_PORT:
		p->kbc_output_port_next = false;
		/* Pulse output port bits whose mask bit is 0: bit 0 is reset. */
		if (v >= KBC_CMD_PULSE_FIRST && !(v & KBC_OUTPUT_SYS_RESET))
			return reset_request(p, "keyboard controller command %#x", v);
		if (v == KBC_CMD_WRITE_OUTPUT_PORT) {
			/* Held back: the byte that follows decides (reset, A20). */
			p->kbc_output_port_next = true;
			return PLATFORM_IO_DONE;
		}
		if (v == KBC_CMD_A20_DISABLE || v == KBC_CMD_A20_ENABLE)
			return PLATFORM_IO_DONE;	/* A20 stays on */
		outb(port, v);
		return PLATFORM_IO_DONE;
	case PLATFORM_KBC_DATA_PORT:
		if (p->kbc_output_port_next) {
			p->kbc_output_port_next = false;
			if (!(v & KBC_OUTPUT_SYS_RESET))
				return reset_request(p, "keyboard controller output port %#x", v);
			return PLATFORM_IO_DONE;	/* A20 and the other lines: unchanged */
		}
		outb(port, v);	/* to the keyboard itself */
		return PLATFORM_IO_DONE;
	case PLATFORM_SYSCTL_A_PORT:
		if (v & SYSCTL_A_FAST_RESET)
			return reset_request(p, "port 0x92 fast reset (%#x)", v);
		return PLATFORM_IO_DONE;
	case PLATFORM_PCI_RST_CNT_PORT:
		if (v & RST_CNT_RST_CPU)
			return reset_request(p, "reset control register 0xcf9 (%#x)", v);
		return PLATFORM_IO_DONE;	/* SYS_RST alone only selects the kind */
	case PLATFORM_BOCHS_SHUTDOWN_PORT:
		/* Bochs matches the string byte by byte and starts over on a mismatch. */
		if (v == (uint8_t)shutdown[p->bochs_shutdown_matched])
			p->bochs_shutdown_matched++;
		else
			p->bochs_shutdown_matched = v == (uint8_t)shutdown[0];
		if (p->bochs_shutdown_matched == sizeof(shutdown) - 1) {
			p->bochs_shutdown_matched = 0;
			return power_off("\"Shutdown\" to Bochs's port 0x8900", status);
		}
		return PLATFORM_IO_DONE;
	default:
		return PLATFORM_IO_DONE;	/* a straddling access's denied byte */
	}
}

static uint32_t port_in(uint16_t port, unsigned int size)
{
	return size == 1 ? inb(port) : size == 2 ? inw(port) : inl(port);
}

/*
 * Byte @i of an access at @port: its bit shift within the 16-bit PM1_EN
 * register, or -1 when it is not one of PM1_EN's two bytes.
 */
static int pm1_en_shift(uint16_t port, unsigned int i)
{
	unsigned int off = port + i - PLATFORM_PM1A_EN_PORT;

	return off < 2 ? (int)(8 * off) : -1;
}

/*
 * A write inside the PM I/O space: PM1_EN is kept as the guest's (read
 * back, never forwarded); SLP_EN in PM1a_CNT is a sleep request
 * (its new value merges the written bytes into the current one, so a byte
 * write to the high half counts too); every other write is dropped: the
 * PM1 registers are the machine's (GBL_RLS in PM1_CNT raises an SMI,
 * PM1_EN routes events to the host's interrupts), the timer is read-only
 * and the rest of the block is denied.
 */
static enum platform_io_result pm_write(struct platform_state *p, uint16_t port,
					unsigned int size, uint32_t value, int *status)
{
	uint16_t cnt;

	/* PM1_EN: kept for the guest's reads, never written to the hardware. */
	for (unsigned int i = 0; i < size; i++) {
		int shift = pm1_en_shift(port, i);

		if (shift >= 0)
			p->acpi_pm1_en = (uint16_t)((p->acpi_pm1_en & ~(0xffu << shift)) |
						    (((value >> (8 * i)) & 0xffu) << shift));
	}
	if (port > PLATFORM_PM1A_CNT_PORT + 1 || port + size - 1 < PLATFORM_PM1A_CNT_PORT)
		return PLATFORM_IO_DONE;	/* PM1a_CNT untouched: dropped */
	cnt = inw(PLATFORM_PM1A_CNT_PORT);
	for (unsigned int i = 0; i < size; i++) {
		unsigned int at = port + i;

		if (at == PLATFORM_PM1A_CNT_PORT || at == PLATFORM_PM1A_CNT_PORT + 1) {
			unsigned int shift = 8 * (at - PLATFORM_PM1A_CNT_PORT);

			cnt = (uint16_t)((cnt & ~(0xffu << shift)) |
					 (((value >> (8 * i)) & 0xffu) << shift));
		}
	}
	if (cnt & ACPI_PM1_CNT_SLP_EN) {
		unsigned int typ = (cnt & ACPI_PM1_CNT_SLP_TYP_MASK) >> ACPI_PM1_CNT_SLP_TYP_SHIFT;

		if (typ == PLATFORM_S5_SLP_TYP)
			return power_off("ACPI S5 through PM1a_CNT", status);
		printk("exitplan: guest asked for ACPI sleep type %u: refused\n", typ);
		stop_reason_once(p, "ACPI sleep (SLP_TYP %u) requested; the machine's sleep is not "
				 "the guest's", typ);
		return PLATFORM_IO_STOP;
	}
	return PLATFORM_IO_DONE;
}

/*
 * Denied ports whose first write is worth a line in the report: they
 * would reach SMM, end the emulator or write the hypervisor's verdict
 * channel (spec/runtime.yaml reserves them).  Every other denied write is
 * dropped silently: the test guests' own mask of the 8259 is one.
 */
static const struct {
	uint16_t first, last;
	const char *what;
} reported_denials[] = {
	{ PLATFORM_APM_CNT_PORT, PLATFORM_APM_CNT_PORT + 1,
	  "APM control and status: a write to 0xb2 raises an SMI" },
	{ PLATFORM_DEBUG_CONSOLE_PORT, PLATFORM_DEBUG_CONSOLE_PORT,
	  "the debug console, the hypervisor's verdict channel" },
	{ PLATFORM_BOCHS_BIOS_DEBUG_PORT, PLATFORM_BOCHS_BIOS_DEBUG_PORT + 3,
	  "Bochs's BIOS debug ports: 0x400 and 0x401 end the emulator" },
	{ PLATFORM_BOCHS_DEBUGGER_PORT, PLATFORM_BOCHS_DEBUGGER_PORT + 1,
	  "Bochs's debugger ports" },
};

static void denied_write(struct platform_state *p, uint16_t port, unsigned int size,
			 uint32_t value)
{
	if (size < 4)
		value &= (1u << (8 * size)) - 1;	/* what the access carried */
	for (unsigned int i = 0; i < ARRAY_SIZE(reported_denials); i++) {
		if (port + size - 1 < reported_denials[i].first || port > reported_denials[i].last)
			continue;
		if (p->denials_reported & (1u << i))
			return;
		p->denials_reported |= 1u << i;
		printk("exitplan: guest write of %#x to port %#x denied (%s)\n",
		       value, port, reported_denials[i].what);
		return;
	}
}

/* --- port I/O ------------------------------------------------------------ */

uint32_t platform_io_read(struct platform_state *p, uint16_t port, unsigned int size)
{
	uint32_t legacy = 0;

	/* First: the fw_cfg data port is the hot one (no legacy port is near it). */
	if (port == PLATFORM_FW_CFG_PORT_DATA) {
		uint32_t v = 0;

		/* A wider read returns consecutive bytes, as QEMU's does. */
		for (unsigned int i = 0; i < size; i++)
			v |= (uint32_t)platform_fw_cfg_byte(p) << (8 * i);
		return v;
	}
	if (legacy_io(p, port, size, true, &legacy))
		return legacy;
	if (touches_rtc(port, size)) {
		rtc_io(p, port, size, true, &legacy);
		return legacy;
	}
	if (port == PCI_CONFIG_ADDRESS_PORT && size == 4)
		return pci_config_address_read(&p->pci);	/* only dword accesses reach it */
	if (port >= PCI_CONFIG_DATA_PORT && port + size - 1 <= PCI_CONFIG_DATA_PORT + 3)
		return pci_config_data_read(&p->pci, port - PCI_CONFIG_DATA_PORT, size);
	if (pm_readable(port, size)) {
		uint32_t v = port_in(port, size);

		/* PM1_EN is the guest's own. */
		for (unsigned int i = 0; i < size; i++) {
			int shift = pm1_en_shift(port, i);

			if (shift >= 0)
				v = (v & ~(0xffu << (8 * i))) |
				    (uint32_t)((p->acpi_pm1_en >> shift) & 0xffu) << (8 * i);
		}
		/* SCI_EN, bit 0 of PM1a_CNT, is the guest's own. */
		if (port <= PLATFORM_PM1A_CNT_PORT && port + size - 1 >= PLATFORM_PM1A_CNT_PORT) {
			unsigned int shift = 8 * (PLATFORM_PM1A_CNT_PORT - port);

			v &= ~((uint32_t)ACPI_PM1_CNT_SCI_EN << shift);
			if (p->acpi_sci_en)
				v |= (uint32_t)ACPI_PM1_CNT_SCI_EN << shift;
		}
		return v;
	}
	if (touches_filtered_port(port, size)) {
		uint32_t v = 0;

		for (unsigned int i = 0; i < size; i++)
			v |= (uint32_t)filtered_byte_read((uint16_t)(port + i)) << (8 * i);
		return v;
	}
	/* Nothing answers: the bus floats high. */
	return size == 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
}

enum platform_io_result platform_io_write(struct platform_state *p, uint16_t port,
					  unsigned int size, uint32_t value, int *status)
{
	switch (port) {
	case PLATFORM_ISA_DEBUG_EXIT_PORT:
		/*
		 * QEMU: the process exits with (value << 1) | 1.  Bits 31:30
		 * of a dword are dropped, so that the status is a positive
		 * int: the hypervisor's own VMM_* results are negative (vmm.h).
		 */
		value &= size == 4 ? PLATFORM_ISA_DEBUG_EXIT_VALUE_MASK : (1u << (8 * size)) - 1;
		*status = (int)((value << 1) | 1);
		return PLATFORM_IO_EXIT;
	case PLATFORM_FW_CFG_PORT_SEL:
		platform_fw_cfg_select(p, (uint16_t)value);
		return PLATFORM_IO_DONE;
	default:
		break;
	}
	if (legacy_io(p, port, size, false, &value))
		return PLATFORM_IO_DONE;
	if (touches_rtc(port, size)) {
		rtc_io(p, port, size, false, &value);
		return PLATFORM_IO_DONE;
	}
	if (port == PCI_CONFIG_ADDRESS_PORT && size == 4) {
		pci_config_address_write(&p->pci, value);
		return PLATFORM_IO_DONE;
	}
	if (port >= PCI_CONFIG_DATA_PORT && port + size - 1 <= PCI_CONFIG_DATA_PORT + 3) {
		pci_config_data_write(&p->pci, port - PCI_CONFIG_DATA_PORT, size, value);
		return PLATFORM_IO_DONE;
	}
	if (in_pm_block(port, size))
		return pm_write(p, port, size, value, status);
	if (p->acpi_smi_cmd && port == p->acpi_smi_cmd && size == 1 &&
	    acpi_smi_cmd_write(p, (uint8_t)value))
		return PLATFORM_IO_DONE;
	if (touches_filtered_port(port, size)) {
		for (unsigned int i = 0; i < size; i++) {
			enum platform_io_result r;

			r = filtered_byte_write(p, (uint16_t)(port + i), (uint8_t)(value >> (8 * i)),
						status);
			if (r != PLATFORM_IO_DONE)
				return r;
		}
		return PLATFORM_IO_DONE;
	}
	denied_write(p, port, size, value);
	return PLATFORM_IO_DONE;	/* writes to nothing are lost */
}
