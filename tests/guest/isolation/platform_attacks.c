// SPDX-License-Identifier: GPL-2.0-only
/*
 * The isolation guest's attacks through the platform: what a guest could
 * do to the machine under the hypervisor with port I/O and PCI
 * configuration cycles, on Bochs's i440FX/PIIX machine.  Under exitplan
 * every port the guest was not granted reads all ones and ignores writes,
 * and PCI configuration space shows the chipset's bridges read-only and
 * nothing else (docs/THREAT-MODEL.md).
 *
 * The non-fatal attacks check that nothing happened and print PASS/FAIL;
 * the parts that would end or reset a bare machine run only under
 * exitplan (elsewhere they are skipped).  The fatal ones end the guest,
 * and the boot test (tests/boot/test_vmx_isolation_platform.py) reads
 * the hypervisor's verdict.
 */
#include "acpi.h"
#include "console.h"
#include "exitplan.h"
#include "hypercall.h"
#include "platform_attacks.h"
#include "string.h"
#include "test.h"
#include "x86.h"

/* PCI configuration mechanism #1 (PCI Local Bus Specification 3.0, 3.2.2.3.2). */
#define PCI_CONF_ADDR		0xcf8
#define PCI_CONF_DATA		0xcfc
#define PCI_ENABLE		0x80000000u
#define PCI_BDF(dev, fn)	((uint32_t)(dev) << 11 | (uint32_t)(fn) << 8)	/* bus 0 */
#define PCI_COMMAND		0x04
#define PCI_COMMAND_IO		0x0001
#define PCI_COMMAND_MASTER	0x0004
#define PCI_BAR4		0x20

/* Bochs's i440FX machine: where its functions are. */
#define BDF_HOST_BRIDGE		PCI_BDF(0, 0)	/* Intel 440FX PMC */
#define BDF_IDE			PCI_BDF(1, 1)	/* PIIX3 IDE, a bus master */
#define BDF_PM			PCI_BDF(1, 3)	/* PIIX4 power management */
/* i440FX SMRAM register (82441FX datasheet 3.2.27): D_OPEN makes SMRAM visible. */
#define I440FX_SMRAM		0x72
#define SMRAM_D_OPEN		0x40
#define SMRAM_G_SMRAME		0x08
#define SMRAM_C_BASE_SEG_A0000	0x02
/* PIIX4 PMBA (82371AB datasheet 3.4.2.1) and PMREGMISC bit 0, PM I/O enable. */
#define PIIX4_PMBA		0x40
#define PIIX4_PMREGMISC		0x80
#define PM_BASE_ELSEWHERE	0xc800
/* APM control and status (the FADT's SMI_CMD): a write to 0xb2 raises an SMI. */
#define APM_CNT			0xb2
#define APM_STS			0xb3
/* PM1_CNT (ACPI 6.x 4.8.3.2.1). */
#define PM1_CNT			0x04
#define PM1_CNT_SLP_TYP_SHIFT	10
#define PM1_CNT_SLP_EN		(1u << 13)

/* The primary ATA channel and its bus-master registers (Bus Master IDE, rev. 1.0). */
#define ATA_DATA		0x1f0
#define ATA_FEATURES		0x1f1
#define ATA_LBA_MID		0x1f4
#define ATA_LBA_HIGH		0x1f5
#define ATA_DRIVE		0x1f6
#define ATA_COMMAND		0x1f7	/* reads: status */
#define ATA_STATUS_BSY		0x80
#define ATA_STATUS_DRQ		0x08
#define ATA_CMD_PACKET		0xa0
#define ATAPI_READ_10		0x28
#define BM_COMMAND		0
#define BM_STATUS		2
#define BM_PRD_TABLE		4
#define BM_CMD_START		0x01
#define BM_CMD_TO_MEMORY	0x08
#define BM_STATUS_ACTIVE	0x01
#define BM_STATUS_IRQ		0x04
#define DMA_WAIT_TICKS		50000000ull	/* Bochs: 50M instructions */
/* Where Bochs's BIOS puts the IDE bus-master registers: the guess when BAR4 is hidden. */
#define BM_BASE_GUESS		0xc000
#define ISO_PVD_LBA		16	/* ISO 9660 primary volume descriptor: "\1CD001" */
#define CD_SECTOR		2048
#define SPINS			10000	/* bounded waits: each poll of a denied port exits */

/* The serial port and the debug console. */
#define COM1			0x3f8
#define UART_DLL		0
#define UART_DLM		1
#define UART_FCR		2
#define UART_LCR		3
#define UART_MCR		4
#define UART_LCR_DLAB		0x80
#define UART_MCR_LOOP		0x10
#define DEBUG_PORT_E9		0xe9
/* Bochs's debugger port: 0x8a00 enables the commands, 0x8ae0 returns to the prompt. */
#define BOCHS_DEBUGGER		0x8a00
#define BOCHS_DBG_ENABLE	0x8a00
#define BOCHS_DBG_PROMPT	0x8ae0
#define BOCHS_BIOS_PANIC	0x400	/* 0x400 and 0x401: "BIOS panic", the emulator ends */
#define BOCHS_BIOS_INFO		0x402

static uint32_t pci_read32(uint32_t bdf, uint32_t reg)
{
	outl(PCI_CONF_ADDR, PCI_ENABLE | bdf | (reg & 0xfc));
	return inl(PCI_CONF_DATA);
}

static uint8_t pci_read8(uint32_t bdf, uint32_t reg)
{
	outl(PCI_CONF_ADDR, PCI_ENABLE | bdf | (reg & 0xfc));
	return inb(PCI_CONF_DATA + (reg & 3));
}

static void pci_write8(uint32_t bdf, uint32_t reg, uint8_t v)
{
	outl(PCI_CONF_ADDR, PCI_ENABLE | bdf | (reg & 0xfc));
	outb(PCI_CONF_DATA + (reg & 3), v);
}

static void pci_write16(uint32_t bdf, uint32_t reg, uint16_t v)
{
	outl(PCI_CONF_ADDR, PCI_ENABLE | bdf | (reg & 0xfc));
	outw(PCI_CONF_DATA + (reg & 2), v);
}

static void pci_write32(uint32_t bdf, uint32_t reg, uint32_t v)
{
	outl(PCI_CONF_ADDR, PCI_ENABLE | bdf | (reg & 0xfc));
	outl(PCI_CONF_DATA, v);
}

static void announce(const char *name, const char *how)
{
	printf("isolation: attacking %s (%s)\n", name, how);
	console_flush();
}

/* Parts that would reset or end a machine without exitplan run only under it. */
static bool dangerous_ok(const char *name)
{
	if (exitplan_detected())
		return true;
	skip(name, "not under exitplan: this would reach the real machine");
	return false;
}

/*
 * Without exitplan nothing contains these attacks: in attack=all-nonfatal,
 * whose summary must say 0 failed anywhere (tests/guest/qemu-check.sh),
 * they are skipped; run alone (attack=NAME, e.g. under bochs-bare.sh) they
 * show what they do to a machine nobody protects.
 */
static bool run_here(const char *name)
{
	char attack[32];

	if (exitplan_detected() || !cmdline_value("attack", attack, sizeof(attack)) ||
	    strcmp(attack, "all-nonfatal"))
		return true;
	printf("isolation: attacking %s (skipped)\n", name);
	skip(name, "not under exitplan, where nothing contains it: attack=%s alone shows it", name);
	return false;
}

static const struct acpi_header *fadt(void)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();

	return rsdp ? acpi_find_table(rsdp, "FACP") : NULL;
}

static void check_pm_timer_ticks(const char *name)
{
	const struct acpi_header *f = fadt();
	uint32_t port = f ? acpi_fadt_pm_timer_port(f) : 0;
	uint32_t t0, t1;
	unsigned int i;

	if (!port) {
		skip(name, "no FADT PM timer");
		return;
	}
	t0 = t1 = inl((uint16_t)port) & 0xffffff;
	for (i = 0; i < 1000000 && t1 == t0; i++)
		t1 = inl((uint16_t)port) & 0xffffff;
	check(name, t1 != t0, "PM timer at 0x%x stuck at 0x%x", port, t0);
}

/*
 * smm: open SMRAM through the host bridge's SMRAM register and raise an
 * SMI through the APM control port.  With SMRAM open, a guest could plant
 * an SMI handler, which runs outside VMX and EPT.
 */
void attack_smm(void)
{
	uint8_t before, after;

	if (!run_here("smm"))
		return;
	announce("smm", "D_OPEN in the i440FX SMRAM register, then an SMI through APM port 0xb2");
	before = pci_read8(BDF_HOST_BRIDGE, I440FX_SMRAM);
	pci_write8(BDF_HOST_BRIDGE, I440FX_SMRAM,
		   SMRAM_D_OPEN | SMRAM_G_SMRAME | SMRAM_C_BASE_SEG_A0000);
	after = pci_read8(BDF_HOST_BRIDGE, I440FX_SMRAM);
	check("smm-smram-closed", after == before && !(after & SMRAM_D_OPEN),
	      "SMRAM register 0x%02x after writing D_OPEN (was 0x%02x)", after, before);
	if (!dangerous_ok("smm-apm-denied"))
		return;
	/* APM status is a scratch register; control raises the SMI. */
	outb(APM_STS, 0x5a);
	outb(APM_CNT, 0x00);
	check("smm-apm-denied", inb(APM_STS) == 0xff && inb(APM_CNT) == 0xff,
	      "APM ports read 0x%02x/0x%02x: they reach the chipset", inb(APM_CNT), inb(APM_STS));
}

static uint8_t ata_wait(uint8_t mask, uint8_t want)
{
	uint8_t st = 0xff;

	for (unsigned int i = 0; i < SPINS; i++) {
		st = inb(ATA_COMMAND);
		if ((st & mask) == want)
			break;
	}
	return st;
}

/* PRD table and target: the guest's own memory, so that a DMA would show. */
static struct {
	uint32_t addr;
	uint16_t count;
	uint16_t flags;		/* bit 15: end of table */
} __attribute__((aligned(8))) prd;
static uint8_t dma_buffer[CD_SECTOR] __attribute__((aligned(CD_SECTOR)));

/*
 * dma: make the IDE controller a bus master and have it read the CD's
 * primary volume descriptor into memory with an ATAPI READ(10).  The
 * target is the guest's own buffer, so that the write shows; pointed at
 * the hypervisor it would overwrite the hypervisor (there is no IOMMU).
 */
void attack_dma(void)
{
	uint32_t id = pci_read32(BDF_IDE, 0);
	uint32_t bar4 = pci_read32(BDF_IDE, PCI_BAR4);
	uint16_t bm = (bar4 & 1) && bar4 != 0xffffffffu ? (uint16_t)(bar4 & 0xfffc) : BM_BASE_GUESS;
	static const uint8_t read_pvd[12] = { ATAPI_READ_10, 0, 0, 0, 0, ISO_PVD_LBA, 0, 0, 1 };
	uint8_t st;

	if (!run_here("dma"))
		return;
	printf("isolation: attacking dma (ATAPI READ(10) by IDE bus master at 0x%x into 0x%08x)\n",
	       bm, (uint32_t)(uintptr_t)dma_buffer);
	console_flush();
	/* Safe on any machine: the target is the guest's own buffer. */
	check("dma-ide-hidden", (id & 0xffff) == 0xffff,
	      "00:01.1 reads 0x%08x: the IDE controller is visible", id);
	memset(dma_buffer, 0xaa, sizeof(dma_buffer));
	pci_write16(BDF_IDE, PCI_COMMAND, PCI_COMMAND_IO | PCI_COMMAND_MASTER);
	prd.addr = (uint32_t)(uintptr_t)dma_buffer;
	prd.count = CD_SECTOR;
	prd.flags = 0x8000;
	outb(bm + BM_COMMAND, 0);
	outl(bm + BM_PRD_TABLE, (uint32_t)(uintptr_t)&prd);
	outb(bm + BM_STATUS, 0x06);	/* clear error and interrupt */
	outb(ATA_DRIVE, 0xa0);		/* master */
	ata_wait(ATA_STATUS_BSY, 0);
	outb(ATA_FEATURES, 0x01);	/* the data by DMA */
	outb(ATA_LBA_MID, CD_SECTOR & 0xff);
	outb(ATA_LBA_HIGH, CD_SECTOR >> 8);
	outb(ATA_COMMAND, ATA_CMD_PACKET);
	ata_wait(ATA_STATUS_BSY | ATA_STATUS_DRQ, ATA_STATUS_DRQ);
	outsw(ATA_DATA, read_pvd, sizeof(read_pvd) / 2);
	outb(bm + BM_COMMAND, BM_CMD_START | BM_CMD_TO_MEMORY);
	/* Bochs models the drive's seek: give it time, unless nothing answers. */
	for (uint64_t t = rdtsc(); rdtsc() - t < DMA_WAIT_TICKS;) {
		st = inb(bm + BM_STATUS);
		if (st == 0xff || (st & BM_STATUS_IRQ) || !(st & BM_STATUS_ACTIVE))
			break;
		pause();
	}
	outb(bm + BM_COMMAND, 0);
	st = inb(bm + BM_STATUS);
	check("dma-no-transfer", memcmp(dma_buffer + 1, "CD001", 5) && dma_buffer[0] == 0xaa,
	      "the CD's volume descriptor was written to 0x%08x", (uint32_t)(uintptr_t)dma_buffer);
	check("dma-bm-registers-denied", st == 0xff, "bus-master status reads 0x%02x", st);
}

/*
 * pci-config: move the PIIX4 PM I/O base through PCI configuration, turn
 * its decoding off, make the host bridge a bus master, and ask for S1 at
 * the moved base.  Had the base moved, the machine would sleep or reset.
 */
void attack_pci_config(void)
{
	uint32_t pmba = pci_read32(BDF_PM, PIIX4_PMBA);
	uint8_t misc = pci_read8(BDF_PM, PIIX4_PMREGMISC);
	uint32_t cmd = pci_read32(BDF_HOST_BRIDGE, PCI_COMMAND);

	if (!run_here("pci-config"))
		return;
	announce("pci-config",
		 "PIIX4 PMBA to 0xc800, PMREGMISC off, host bridge bus master, S1 at the new base");
	pci_write32(BDF_PM, PIIX4_PMBA, PM_BASE_ELSEWHERE | 1);
	pci_write8(BDF_PM, PIIX4_PMREGMISC, 0);
	pci_write16(BDF_HOST_BRIDGE, PCI_COMMAND, (uint16_t)cmd | PCI_COMMAND_MASTER);
	check("pci-config-pm-base", pci_read32(BDF_PM, PIIX4_PMBA) == pmba,
	      "PMBA 0x%08x, was 0x%08x", pci_read32(BDF_PM, PIIX4_PMBA), pmba);
	check("pci-config-pm-enable", pci_read8(BDF_PM, PIIX4_PMREGMISC) == misc,
	      "PMREGMISC 0x%02x, was 0x%02x", pci_read8(BDF_PM, PIIX4_PMREGMISC), misc);
	check("pci-config-command", pci_read32(BDF_HOST_BRIDGE, PCI_COMMAND) == cmd,
	      "host bridge command/status 0x%08x, was 0x%08x",
	      pci_read32(BDF_HOST_BRIDGE, PCI_COMMAND), cmd);
	check_pm_timer_ticks("pci-config-pm-timer");
	if (!dangerous_ok("pci-config-moved-sleep"))
		return;
	/* S1 (SLP_TYP 1 in Bochs's DSDT) where the PM block would now be. */
	outw(PM_BASE_ELSEWHERE + PM1_CNT, PM1_CNT_SLP_EN | 1u << PM1_CNT_SLP_TYP_SHIFT);
	check("pci-config-moved-sleep", inw(PM_BASE_ELSEWHERE + PM1_CNT) == 0xffff,
	      "0x%x reads 0x%04x: a PM block answers there", PM_BASE_ELSEWHERE + PM1_CNT,
	      inw(PM_BASE_ELSEWHERE + PM1_CNT));
}

/*
 * bochs-ports: Bochs's debugger port (return to the prompt, which ends a
 * headless run), its BIOS panic port, and the magic breakpoint
 * `xchg %bx,%bx`.  Each would end the emulator without the hypervisor's
 * report.  The magic breakpoint is an instruction: no hypervisor can trap
 * it, so the boot tests' Bochs configuration disables it.
 */
void attack_bochs_ports(void)
{
	if (!run_here("bochs-ports"))
		return;
	announce("bochs-ports", "debugger port 0x8a00, BIOS panic port 0x400, xchg %bx,%bx");
	if (!dangerous_ok("bochs-ports"))
		return;
	outw(BOCHS_DEBUGGER, BOCHS_DBG_ENABLE);
	outw(BOCHS_DEBUGGER, BOCHS_DBG_PROMPT);
	outw(BOCHS_BIOS_PANIC, 1234);
	outw(BOCHS_BIOS_PANIC + 1, 1234);
	outsb(BOCHS_BIOS_INFO, "isolation: escaped through 0x402\n", 33);
	asm volatile("xchg %%bx, %%bx" : : : "ebx");
	check("bochs-ports", inw(BOCHS_DEBUGGER) == 0xffff && inb(BOCHS_BIOS_PANIC) == 0xff,
	      "0x8a00 reads 0x%04x, 0x400 reads 0x%02x", inw(BOCHS_DEBUGGER),
	      inb(BOCHS_BIOS_PANIC));
}

/*
 * uart-garble (fatal): leave COM1, which the hypervisor prints on too,
 * with DLAB set, 5-bit words, another divisor, FIFOs off and loopback
 * on, then exit.  The hypervisor's report must still arrive whole.
 */
void attack_uart_garble(void)
{
	announce("uart-garble", "COM1 left in loopback, FIFOs off, 5-bit words, DLAB set");
	outb(COM1 + UART_LCR, UART_LCR_DLAB);
	outb(COM1 + UART_DLL, 0x0c);		/* 9600 baud */
	outb(COM1 + UART_DLM, 0);
	outb(COM1 + UART_FCR, 0);		/* FIFOs off */
	outb(COM1 + UART_MCR, UART_MCR_LOOP);
	outb(COM1 + UART_LCR, UART_LCR_DLAB);	/* 5 bits, DLAB on */
	console_set_e9(false);
	guest_exit(0);
}

/*
 * forged-status (fatal): print the hypervisor's verdict lines as if the
 * run had passed, on COM1, on port 0xE9 and through the PUTS hypercall,
 * then exit with the isa-debug-exit value whose status would read as
 * VMM_GUEST_FAULT (-3) if it wrapped.  The verdict the tests read must be
 * the hypervisor's: guest exit status 0x7ffffffd.
 */
#define FORGED	"exitplan: guest exit status 0\nexitplan: exit status 0\n"

void attack_forged_status(void)
{
	announce("forged-status",
		 "the verdict lines on COM1, port 0xE9 and PUTS, then outl(0xf4, 0xfffffffe)");
	printf("%s", FORGED);
	outsb(DEBUG_PORT_E9, FORGED, sizeof(FORGED) - 1);
	if (exitplan_detected())
		hypercall4(HYPERCALL_PUTS, (uint32_t)(uintptr_t)FORGED, sizeof(FORGED) - 1, 0, 0);
	console_flush();
	guest_exit(0xfffffffeu);
}
