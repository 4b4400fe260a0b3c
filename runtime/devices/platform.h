/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a guest finds on the I/O ports it does not own.  Port I/O is denied
 * by default (spec/runtime.yaml, docs/THREAT-MODEL.md): only the ports the
 * runtime and the profile grant pass through; every other access exits
 * and lands here.
 *
 * The devices exitplan emulates for a guest, as QEMU defines them so that
 * the same guest runs under both:
 *   - isa-debug-exit at port 0xf4: a write of `code` ends the guest with
 *     exit status (code << 1) | 1, code taken modulo 2^30 (bits 31:30
 *     of a dword write are dropped), so that every guest status is odd
 *     and positive and never one of the hypervisor's negative VMM_*
 *     results;
 *   - fw_cfg, the traditional I/O interface (selector 0x510, 16-bit;
 *     data 0x511, byte reads): signature, ID, RAM size, CPU count;
 *   - the MMIO test page (0xFEB00000): 32-bit reads return "EXIT",
 *     writes are ignored.  The guest's page-table-free way to check
 *     that MMIO emulation works.
 * Any other port reads all ones and ignores writes, as an unclaimed ISA
 * port does; the first write to a port that would reach SMM (APM 0xb2),
 * end the emulator (Bochs's 0x400-0x403, 0x8a00) or write the
 * hypervisor's verdict channel (0xE9) is reported.  An access that covers
 * both a granted byte and one that is not exits, and is answered here as
 * a whole: its granted bytes read all ones too (the PM timer beside the
 * PM1 block is read from the hardware).
 *
 * The port numbers and keys are QEMU's ABI (docs/specs/fw_cfg.rst,
 * hw/misc/debugexit.c), not the CPU's; spec/runtime.yaml traps the ports.
 *
 * The machine's own reset and power-off ports are filtered, so that a
 * guest cannot reset or power off the machine under the hypervisor
 * (spec/runtime.yaml traps them; the rest of these devices is forwarded
 * to the real hardware as the guest issued it):
 *   - 8042 keyboard controller (0x60 data, 0x64 command/status): the
 *     "pulse output port" commands F0h-FFh with bit 0 clear (FEh is the
 *     classic reset) and "write output port" D1h followed by a data byte
 *     with bit 0 (system reset) clear are a reset request; D1h/DDh, which
 *     drive the A20 gate, are dropped (A20 stays enabled: the physical
 *     address bus is the hypervisor's too);
 *   - System control port A (0x92): bit 0 set is a fast reset; reads give
 *     0x02 (A20 enabled, no reset pending) and writes change nothing else;
 *   - PCI reset control register (0xcf9, inside CONFIG_ADDRESS
 *     0xcf8-0xcfb, which runtime/devices/pci.c emulates with CONFIG_DATA):
 *     RST_CPU (bit 2) set is a reset request; it reads 0;
 *   - the ACPI PM1 block at the PM base Bochs's BIOS programs (0xb000):
 *     reads come from the hardware, but for PM1_EN and SCI_EN, which are the guest's
 *     (the ACPI enable handshake on the FADT's SMI_CMD port is emulated,
 *     platform_set_acpi_smi()); a write to PM1a_CNT with SLP_EN set
 *     is a sleep request, which with SLP_TYP = the \_S5 value is the
 *     guest powering off; other sleep states are refused (the machine is
 *     not the guest's to suspend); every other write is dropped.  The PM
 *     timer is granted (passthrough); the rest of the PM I/O space is
 *     denied;
 *   - Bochs's shutdown port 0x8900: the bytes "Shutdown" power off.
 * A reset request stops the guest with a report (like a triple fault);
 * a power off ends the run with guest exit status 0 (PLATFORM_POWER_OFF_STATUS,
 * what QEMU's process returns when its guest powers off; isa-debug-exit
 * statuses are always odd, so the two cannot be confused).
 */
#ifndef EXITPLAN_PLATFORM_H
#define EXITPLAN_PLATFORM_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/devices/pci.h"
#include "runtime/devices/vpic.h"
#include "runtime/devices/vpit.h"
#include "runtime/devices/vrtc.h"

#define PLATFORM_ISA_DEBUG_EXIT_PORT	0xf4
#define PLATFORM_ISA_DEBUG_EXIT_VALUE_MASK 0x3fffffffu	/* (value << 1) | 1 fits in an int */
#define PLATFORM_FW_CFG_PORT_SEL	0x510
#define PLATFORM_FW_CFG_PORT_DATA	0x511
#define PLATFORM_MMIO_TEST_PAGE		0xFEB00000ull
#define PLATFORM_MMIO_TEST_VALUE	0x45584954u	/* "EXIT" as a little-endian u32 */

/* The machine's reset and power-off ports (see above). */
#define PLATFORM_KBC_DATA_PORT		0x60
#define PLATFORM_KBC_CMD_PORT		0x64	/* reads: status register */
#define PLATFORM_SYSCTL_A_PORT		0x92
#define PLATFORM_PCI_RST_CNT_PORT	0xcf9	/* byte accesses: reset control */
#define PLATFORM_BOCHS_SHUTDOWN_PORT	0x8900
#define PLATFORM_PM_BASE		0xb000	/* PIIX4 PMBA as Bochs's BIOS sets it */
#define PLATFORM_PM_LAST		0xb03f	/* the PIIX4 PM I/O space is 64 bytes */
#define PLATFORM_PM1A_EN_PORT		(PLATFORM_PM_BASE + 0x02)	/* 16-bit */
#define PLATFORM_PM1A_CNT_PORT		(PLATFORM_PM_BASE + 0x04)	/* 16-bit */
#define PLATFORM_PM_TMR_PORT		(PLATFORM_PM_BASE + 0x08)	/* 32-bit, passthrough */

/* Denied ports whose first write is reported (platform.c). */
#define PLATFORM_APM_CNT_PORT		0xb2	/* APM control; 0xb3 status */
#define PLATFORM_DEBUG_CONSOLE_PORT	0xe9	/* Bochs's port_e9_hack, QEMU's debugcon */
#define PLATFORM_BOCHS_BIOS_DEBUG_PORT	0x400	/* 0x400-0x403 */
#define PLATFORM_BOCHS_DEBUGGER_PORT	0x8a00	/* 0x8a00-0x8a01 */

/* 8042 commands (IBM PC/AT Technical Reference, 8042 command byte set). */
#define KBC_CMD_WRITE_OUTPUT_PORT	0xd1	/* next byte to 0x60 is the output port */
#define KBC_CMD_A20_DISABLE		0xdd	/* some controllers' A20 off */
#define KBC_CMD_A20_ENABLE		0xdf	/* some controllers' A20 on */
#define KBC_CMD_PULSE_FIRST		0xf0	/* F0h-FFh: pulse output lines whose bits 3:0 are 0 */
#define KBC_OUTPUT_SYS_RESET		0x01	/* output port bit 0: system reset, active low */
#define KBC_STATUS_IBF			0x02	/* input buffer full */
/* Port 0x92 bits. */
#define SYSCTL_A_FAST_RESET		0x01
#define SYSCTL_A_A20			0x02
/* Reset control register (Intel PIIX4/ICH "RST_CNT") bits. */
#define RST_CNT_SYS_RST			0x02	/* full (hard) reset when RST_CPU goes 1 */
#define RST_CNT_RST_CPU			0x04	/* 0 -> 1 starts the reset */
/* PM1_CNT (ACPI 6.x 4.8.3.2.1, Table 4-15). */
#define ACPI_PM1_CNT_SLP_TYP_SHIFT	10
#define ACPI_PM1_CNT_SLP_TYP_MASK	(7u << ACPI_PM1_CNT_SLP_TYP_SHIFT)
#define ACPI_PM1_CNT_SLP_EN		(1u << 13)
#define ACPI_PM1_CNT_SCI_EN		(1u << 0)	/* SCI, not SMI: the OS is in ACPI mode */
/* SLP_TYPa of \_S5 in the DSDTs of Bochs's BIOS (and of QEMU's). */
#define PLATFORM_S5_SLP_TYP		0
#define PLATFORM_POWER_OFF_STATUS	0

/* fw_cfg keys (QEMU include/standard-headers/linux/qemu_fw_cfg.h). */
#define FW_CFG_SIGNATURE		0x00
#define FW_CFG_ID			0x01
#define FW_CFG_RAM_SIZE			0x03
#define FW_CFG_NB_CPUS			0x05
#define FW_CFG_MAX_CPUS			0x0f
#define FW_CFG_NOGRAPHIC		0x11	/* reads 0: exitplan has no display */
#define FW_CFG_ID_TRADITIONAL		0x1	/* FW_CFG_ID bit 0: the I/O interface */

/* Keys below this have an item table entry (the highest key exitplan knows, +1). */
#define PLATFORM_FW_CFG_KEYS		(FW_CFG_NOGRAPHIC + 1)

/* One guest's devices. */
struct platform_state {
	uint32_t fw_cfg_offset;
	/*
	 * Every item by key, built at platform_init(), and one empty item
	 * past them for every other key; fw_cfg_sel is the selected one,
	 * looked up once at the selector write, so a data read is an index.
	 */
	const struct platform_fw_cfg_item {
		uint64_t value;		/* read little endian */
		uint32_t len;
	} *fw_cfg_sel;
	struct platform_fw_cfg_item fw_cfg_items[PLATFORM_FW_CFG_KEYS + 1];
	uint64_t ram_size;		/* bytes of RAM the guest's memory map gives it */
	unsigned int nr_cpus;

	struct pci_state pci;		/* the guest's view of PCI configuration space */
	uint8_t denials_reported;	/* bit i: reported_denials[i] was reported */

	/*
	 * The guest's own 8259A pair, 8254 and port 0x61, emulated (the
	 * host's stay masked and its own), under the VM's platform lock
	 * like every device here.  pit_mult converts the TSC to 8254
	 * input-clock ticks (32.32 fixed point, from tsc_hz, the TSC rate
	 * measured at boot).
	 */
	struct vpic pic;
	struct vpit pit;
	struct vrtc rtc;		/* the guest's RTC and CMOS (vrtc.h): 2000-01-01 until platform_rtc_from_host() */
	uint64_t pit_mult;
	uint64_t tsc_hz;
	bool irq0_rose;			/* platform_legacy_irq0_rose() */

	/*
	 * The guest's ACPI mode (platform_set_acpi_smi()): the FADT's
	 * SMI_CMD port (0: none), the values it takes, and the guest's
	 * SCI_EN in PM1a_CNT, kept here, never written to the hardware.
	 */
	uint16_t acpi_smi_cmd;
	uint8_t acpi_enable, acpi_disable;
	bool acpi_sci_en;
	/*
	 * The guest's PM1_EN: its writes kept and read back, so that the OS
	 * finds the enables it set (ACPICA's global-lock handshake reads
	 * GBL_EN back), never written to the hardware (its events are the
	 * host's); no event the guest enables ever fires.
	 */
	uint16_t acpi_pm1_en;

	bool kbc_output_port_next;	/* D1h written: 0x60 takes the output port */
	uint8_t bochs_shutdown_matched;	/* bytes of "Shutdown" written so far */
	/*
	 * Why PLATFORM_IO_STOP stopped the guest: the first request's, written
	 * once under the platform lock and never again, so a vCPU may read
	 * it after dropping the lock.
	 */
	char stop_reason[64];
};

enum platform_io_result {
	PLATFORM_IO_DONE,		/* handled; continue the guest */
	PLATFORM_IO_EXIT,		/* isa-debug-exit or power off: stop with *status */
	PLATFORM_IO_STOP,		/* reset or sleep request: stop, stop_reason says why */
};

/*
 * fw_cfg: select @key, its item taken from the table once (unknown keys,
 * and FW_CFG_NOGRAPHIC, read as 0 like an empty item); then the byte at
 * the offset, 0 past the end.
 */
static inline void platform_fw_cfg_select(struct platform_state *p, uint16_t key)
{
	p->fw_cfg_offset = 0;
	p->fw_cfg_sel = &p->fw_cfg_items[key < PLATFORM_FW_CFG_KEYS ? key : PLATFORM_FW_CFG_KEYS];
}

static inline uint8_t platform_fw_cfg_byte(struct platform_state *p)
{
	uint32_t off = p->fw_cfg_offset++;

	/* Items are little endian. */
	return off < p->fw_cfg_sel->len ? (uint8_t)(p->fw_cfg_sel->value >> (8 * off)) : 0;
}

/* @tsc_hz: the TSC's rate, which the guest's 8254 counts from. */
void platform_init(struct platform_state *p, uint64_t ram_size, unsigned int nr_cpus,
		   uint64_t tsc_hz);

/*
 * The FADT's SMI_CMD port and its ACPI_ENABLE and ACPI_DISABLE values
 * (acpi_fadt_smi_cmd()).  An OS asks for ACPI mode by writing
 * ACPI_ENABLE there, which on the machine raises an SMI whose handler
 * sets SCI_EN in PM1a_CNT; exitplan lets no guest reach SMM, so the
 * write is emulated: the guest's SCI_EN is set (cleared by ACPI_DISABLE)
 * and its PM1a_CNT reads show it.  Other writes there stay denied.
 */
void platform_set_acpi_smi(struct platform_state *p, uint16_t smi_cmd, uint8_t enable,
			   uint8_t disable);

/*
 * Set the guest's RTC (vrtc.h) from the host's, in root at boot, before
 * any guest runs: waits for the host RTC's update-in-progress flag to
 * clear (the MC146818A datasheet: then no update starts for 244 us),
 * reads the time until two reads agree, and copies the BIOS's harmless
 * configuration bytes.  Returns false (the guest's clock stays at
 * 2000-01-01) when the host's RTC never leaves UIP or reads nonsense.
 */
bool platform_rtc_from_host(struct platform_state *p);

/* The guest's 8254 clock now, in input-clock ticks (VPIT_HZ). */
uint64_t platform_pit_now(const struct platform_state *p);

/* Does a port access touch the guest's 8259s, 8254 or port 0x61? */
static inline bool platform_legacy_port(uint16_t port, unsigned int size)
{
	uint16_t last = (uint16_t)(port + size - 1);

	return port <= 0xa1 && last >= 0x20 &&
	       ((port <= 0x21 && last >= 0x20) || (port <= 0x43 && last >= 0x40) ||
		(port <= 0x61 && last >= 0x61) || last >= 0xa0);
}

/*
 * Bring the 8259s up to date with the 8254 at `now_tsc`: returns whether
 * the master's INT is raised, and sets *next_tsc to the TSC of channel
 * 0's next IR0 request while IR0 is unmasked (0 when none is due).
 * platform_legacy_inta() is the CPU's INTA cycle: the vector, which the
 * caller delivers as an external interrupt (arch/vmx/legacy_irq.c).
 */
bool platform_legacy_int(struct platform_state *p, uint64_t now_tsc, uint64_t *next_tsc);
uint8_t platform_legacy_inta(struct platform_state *p);
/* *next_tsc of platform_legacy_int() as the 8259s stand now (after an INTA, say). */
uint64_t platform_legacy_next(const struct platform_state *p, uint64_t now_tsc);
/*
 * Channel 0's period in TSC ticks if it runs periodically (mode 2 or 3)
 * and @vector is the master's IR0 vector, else 0: an interrupt storm's
 * source (arch/vmx/events.c).
 */
uint64_t platform_pit_period(const struct platform_state *p, uint8_t vector);

/*
 * The TSC of channel 0's next IR0 request whatever the 8259's mask (0
 * when none is due): the I/O APIC's pin takes it too.
 */
uint64_t platform_pit_next_irq0(const struct platform_state *p, uint64_t now_tsc);
/*
 * Did channel 0's OUT rise since the last call (requests coalesce)?
 * Besides the 8259's IR0 it drives an I/O APIC pin (the MADT's override
 * of ISA IRQ 0), whose entry the caller follows (arch/vmx/legacy_irq.c).
 */
bool platform_legacy_irq0_rose(struct platform_state *p);

/* Port I/O of @size bytes (1, 2, 4). */
uint32_t platform_io_read(struct platform_state *p, uint16_t port, unsigned int size);
enum platform_io_result platform_io_write(struct platform_state *p, uint16_t port,
					  unsigned int size, uint32_t value, int *status);

/* Is @gpa in the MMIO test page? */
static inline bool platform_mmio_test_page(uint64_t gpa)
{
	return (gpa & ~0xfffull) == PLATFORM_MMIO_TEST_PAGE;
}

#endif /* EXITPLAN_PLATFORM_H */
