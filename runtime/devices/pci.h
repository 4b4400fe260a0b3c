/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's view of PCI configuration space (configuration mechanism #1,
 * PCI Local Bus Specification 3.0, 3.2.2.3.2: CONFIG_ADDRESS at 0xcf8,
 * 32-bit; CONFIG_DATA at 0xcfc-0xcff).
 *
 * The machine has no IOMMU, and its chipset's configuration registers
 * reach below the hypervisor: the i440FX host bridge opens SMRAM (SMRAM
 * register, offset 0x72) and shadows the BIOS (PAM), the PIIX3/PIIX4
 * functions move the PM I/O base (PMBA, 0x40 of the PM function), route
 * interrupts and raise SMIs, and any function with a BAR and a Bus Master
 * Enable bit (the IDE controller, USB) can be made to write anywhere in
 * memory.  So the guest gets, per function:
 *
 *   - a read-only view of the chipset's bridges: the host bridge (class
 *     06h/00h), the ISA bridge (06h/01h) and the "other bridge" the PIIX4
 *     power management function is (06h/80h).  Reads come from the
 *     hardware; every write is dropped.  The guest can identify the
 *     machine, and can neither open SMRAM, move the PM base, nor change
 *     a command register;
 *   - nothing of any other function (storage, USB, display, network,
 *     PCI-to-PCI bridges, anything not listed): it reads all ones, as an
 *     empty slot does, and writes are dropped.  So the guest never sees
 *     a BAR it could program or a Bus Master Enable bit it could set.
 *
 * The guest's CONFIG_ADDRESS is its own latch (the real one is the
 * hypervisor's); a CONFIG_DATA access with its enable bit clear reads all
 * ones.  The first dropped write is reported, the rest are not.
 */
#ifndef EXITPLAN_PCI_H
#define EXITPLAN_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_CONFIG_ADDRESS_PORT		0xcf8
#define PCI_CONFIG_DATA_PORT		0xcfc	/* 0xcfc-0xcff */

/* CONFIG_ADDRESS (PCI 3.0, Figure 3-2). */
#define PCI_CONFIG_ENABLE		(1u << 31)
#define PCI_CONFIG_BDF_SHIFT		8	/* bus 23:16, device 15:11, function 10:8 */
#define PCI_CONFIG_REG_MASK		0xfcu	/* dword-aligned register 7:2 */
/* Bits 30:24 and 1:0 are reserved and read as 0. */
#define PCI_CONFIG_ADDRESS_MASK		0x80fffffcu

/* Type 0 configuration header (PCI 3.0, 6.1). */
#define PCI_VENDOR_ID			0x00	/* 16-bit, with the device ID above */
#define PCI_COMMAND			0x04	/* 16-bit, with the status register above */
#define PCI_CLASS_REVISION		0x08	/* class code 31:8, revision 7:0 */
#define PCI_HEADER_TYPE_DWORD		0x0c	/* header type in bits 23:16 */
#define PCI_BAR0			0x10	/* 6 BARs in a type 0 header, 2 in a type 1 */
#define PCI_VENDOR_NONE			0xffff	/* no function at this address */

#define PCI_COMMAND_IO			0x0001	/* I/O space decoding */
#define PCI_COMMAND_MEMORY		0x0002
#define PCI_HEADER_TYPE_MASK		0x7f
#define PCI_HEADER_TYPE_BRIDGE		0x01	/* PCI-to-PCI bridge: 2 BARs */
#define PCI_BAR_IO			0x1u	/* bit 0: an I/O BAR (PCI 3.0, 6.2.5.1) */
#define PCI_BAR_IO_MASK			0xfffffffcu
#define PCI_BAR_MEM_TYPE_64		0x4u	/* memory BAR bits 2:1 = 10b: 64-bit, two BARs */

/* Base class and subclass (PCI Code and ID Assignment Specification). */
#define PCI_CLASS_BRIDGE_HOST		0x0600
#define PCI_CLASS_BRIDGE_ISA		0x0601
#define PCI_CLASS_BRIDGE_OTHER		0x0680

enum pci_view {
	PCI_VIEW_HIDDEN,	/* reads all ones, writes dropped */
	PCI_VIEW_READ_ONLY,	/* reads from the hardware, writes dropped */
};

struct pci_state {
	uint32_t config_address;	/* the guest's CONFIG_ADDRESS */
	bool write_reported;		/* a dropped write was reported */
};

void pci_init(struct pci_state *s);

/* What the guest sees of a function with this vendor ID and class/revision dword. */
enum pci_view pci_view_of(uint16_t vendor, uint32_t class_revision);

uint32_t pci_config_address_read(const struct pci_state *s);
void pci_config_address_write(struct pci_state *s, uint32_t value);

/* An access of @size bytes at CONFIG_DATA + @offset; offset + size <= 4. */
uint32_t pci_config_data_read(struct pci_state *s, unsigned int offset, unsigned int size);
void pci_config_data_write(struct pci_state *s, unsigned int offset, unsigned int size,
			   uint32_t value);

/*
 * An I/O BAR of a PCI function: where its registers decode in the I/O
 * space.  The guest owns no PCI function (pci_view_of()), so each is a
 * device's the hypervisor must keep from the guest: a bus master's
 * registers (the IDE bus-master block, USB, a NIC) let whoever writes
 * them start DMA anywhere in memory, the hypervisor included.
 */
struct pci_io_bar {
	uint32_t bdf;		/* bus 23:16, device 15:11, function 10:8 (CONFIG_ADDRESS's) */
	uint32_t id;		/* device ID << 16 | vendor ID */
	uint32_t class_rev;	/* class code << 8 | revision */
	unsigned int bar;	/* 0-5 */
	uint16_t first, last;	/* the ports it decodes */
};

/*
 * The I/O BARs of every function present on every bus, up to @max of
 * them into @out; returns how many there are (more than @max: some were
 * left out).  Each BAR is sized as PCI 3.0 6.2.5.1 says (all ones
 * written, the size read back, the value restored) with the function's
 * I/O decoding off meanwhile; BARs that read 0 (not implemented, or not
 * assigned) are left out.  For boot, before any guest runs.
 */
unsigned int pci_io_bars(struct pci_io_bar *out, unsigned int max);

static inline bool pci_io_bar_overlaps(const struct pci_io_bar *b, uint16_t first, uint16_t last)
{
	return first <= b->last && b->first <= last;
}

#endif /* EXITPLAN_PCI_H */
