// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's view of PCI configuration space (pci.h): a read-only view
 * of the chipset's bridges, nothing of any other function.
 */
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "runtime/devices/pci.h"
#include "runtime/host/spinlock.h"

/*
 * The real CONFIG_ADDRESS/CONFIG_DATA pair is one per machine: every CPU
 * that reads configuration space for its guest takes this lock around it.
 */
static spinlock_t pci_hw_lock = SPINLOCK_INIT;

static uint32_t pci_hw_read32(uint32_t address)
{
	uint32_t v;

	spin_lock(&pci_hw_lock);
	outl(PCI_CONFIG_ADDRESS_PORT, address);
	v = inl(PCI_CONFIG_DATA_PORT);
	spin_unlock(&pci_hw_lock);
	return v;
}

static void pci_hw_write32(uint32_t address, uint32_t value)
{
	spin_lock(&pci_hw_lock);
	outl(PCI_CONFIG_ADDRESS_PORT, address);
	outl(PCI_CONFIG_DATA_PORT, value);
	spin_unlock(&pci_hw_lock);
}

/* The ports of I/O BAR @reg of function @fn, sized; false when it decodes none. */
static bool io_bar_size(uint32_t fn, uint32_t reg, uint32_t bar, uint16_t *first, uint16_t *last)
{
	uint32_t cmd = pci_hw_read32(fn | PCI_COMMAND), mask;

	/* Decoding off while the BAR holds all ones: it must not claim ports meanwhile. */
	pci_hw_write32(fn | PCI_COMMAND, cmd & ~(uint32_t)PCI_COMMAND_IO & 0xffff);
	pci_hw_write32(fn | reg, 0xffffffffu);
	mask = pci_hw_read32(fn | reg) & PCI_BAR_IO_MASK;
	pci_hw_write32(fn | reg, bar);
	pci_hw_write32(fn | PCI_COMMAND, cmd & 0xffff);
	/* A BAR of a device decoding only 16 address bits reads 0 above them. */
	if (!(mask & 0xffff0000u))
		mask |= 0xffff0000u;
	bar &= PCI_BAR_IO_MASK;
	if (!mask || !bar || bar > 0xffff)
		return false;
	*first = (uint16_t)bar;
	*last = (uint16_t)((bar + ~mask) > 0xffff ? 0xffff : bar + ~mask);
	return true;
}

unsigned int pci_io_bars(struct pci_io_bar *out, unsigned int max)
{
	unsigned int n = 0;

	for (uint32_t bus = 0; bus < 256; bus++) {
		for (uint32_t dev = 0; dev < 32; dev++) {
			uint32_t dev_addr = PCI_CONFIG_ENABLE | bus << 16 | dev << 11;

			if ((pci_hw_read32(dev_addr | PCI_VENDOR_ID) & 0xffff) == PCI_VENDOR_NONE)
				continue;
			/* Every function of a device that is there (some lack the multi-function bit). */
			for (uint32_t f = 0; f < 8; f++) {
				uint32_t fn = dev_addr | f << 8;
				uint32_t id = pci_hw_read32(fn | PCI_VENDOR_ID);
				uint32_t type, nbars;

				if ((id & 0xffff) == PCI_VENDOR_NONE)
					continue;
				type = (pci_hw_read32(fn | PCI_HEADER_TYPE_DWORD) >> 16) &
				       PCI_HEADER_TYPE_MASK;
				nbars = type == 0 ? 6 : type == PCI_HEADER_TYPE_BRIDGE ? 2 : 0;
				for (uint32_t i = 0; i < nbars; i++) {
					uint32_t reg = PCI_BAR0 + 4 * i;
					uint32_t bar = pci_hw_read32(fn | reg);
					uint16_t first, last;

					if (!(bar & PCI_BAR_IO)) {
						if ((bar & 0x6u) == PCI_BAR_MEM_TYPE_64)
							i++;	/* its upper half */
						continue;
					}
					if (!io_bar_size(fn, reg, bar, &first, &last))
						continue;
					if (n < max)
						out[n] = (struct pci_io_bar){
							.bdf = fn & 0x00ffff00u, .id = id,
							.class_rev = pci_hw_read32(fn | PCI_CLASS_REVISION),
							.bar = i, .first = first, .last = last,
						};
					n++;
				}
			}
		}
	}
	return n;
}

void pci_init(struct pci_state *s)
{
	*s = (struct pci_state){ 0 };
}

enum pci_view pci_view_of(uint16_t vendor, uint32_t class_revision)
{
	if (vendor == PCI_VENDOR_NONE)
		return PCI_VIEW_HIDDEN;
	switch (class_revision >> 16) {
	case PCI_CLASS_BRIDGE_HOST:
	case PCI_CLASS_BRIDGE_ISA:
	case PCI_CLASS_BRIDGE_OTHER:
		return PCI_VIEW_READ_ONLY;
	default:
		/* Default deny: whatever is not a chipset bridge may master the bus. */
		return PCI_VIEW_HIDDEN;
	}
}

uint32_t pci_config_address_read(const struct pci_state *s)
{
	return s->config_address;
}

void pci_config_address_write(struct pci_state *s, uint32_t value)
{
	s->config_address = value & PCI_CONFIG_ADDRESS_MASK;
}

/* The view of the function the guest's CONFIG_ADDRESS selects. */
static enum pci_view selected_view(const struct pci_state *s)
{
	uint32_t function = s->config_address & ~(PCI_CONFIG_REG_MASK);

	if (!(s->config_address & PCI_CONFIG_ENABLE))
		return PCI_VIEW_HIDDEN;
	return pci_view_of((uint16_t)pci_hw_read32(function | PCI_VENDOR_ID),
			   pci_hw_read32(function | PCI_CLASS_REVISION));
}

static uint32_t all_ones(unsigned int size)
{
	return size >= 4 ? 0xffffffffu : (1u << (8 * size)) - 1;
}

uint32_t pci_config_data_read(struct pci_state *s, unsigned int offset, unsigned int size)
{
	if (offset + size > 4 || selected_view(s) != PCI_VIEW_READ_ONLY)
		return all_ones(size);
	return (pci_hw_read32(s->config_address) >> (8 * offset)) & all_ones(size);
}

void pci_config_data_write(struct pci_state *s, unsigned int offset, unsigned int size,
			   uint32_t value)
{
	uint32_t a = s->config_address;

	if (s->write_reported)
		return;
	s->write_reported = true;
	printk("exitplan: guest PCI configuration write dropped: %02x:%02x.%u offset %#x, "
	       "%u byte(s) %#x (%s); later ones are not reported\n",
	       (a >> 16) & 0xff, (a >> 11) & 0x1f, (a >> 8) & 7,
	       (a & PCI_CONFIG_REG_MASK) + offset, size, value & all_ones(size),
	       !(a & PCI_CONFIG_ENABLE) ? "configuration space not enabled" :
	       selected_view(s) == PCI_VIEW_READ_ONLY ? "read-only function" :
	       "no such function for the guest");
}
