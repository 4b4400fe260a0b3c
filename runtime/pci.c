// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's view of PCI configuration space (pci.h): a read-only view
 * of the chipset's bridges, nothing of any other function.
 */
#include "console.h"
#include "cpu.h"
#include "pci.h"
#include "spinlock.h"

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
