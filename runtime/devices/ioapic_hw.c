// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hardware I/O APIC's registers, the one the guest's (ioapic.c) is
 * emulated over.  Its own file, below both ioapic.c and ioapic_exits.c:
 * the model calls down to these (a fake in tests/unit/test_ioapic.c),
 * the exits call the model, and neither calls back up.
 */
#include "runtime/host/page_alloc.h"
#include "runtime/devices/ioapic.h"

/* The page of the MADT's first I/O APIC (set by vmx_hide_device_pages()). */
uint64_t ioapic_hw_page = IOAPIC_DEFAULT_BASE;

static volatile uint32_t *ioapic_reg(unsigned int offset)
{
	return phys_to_virt(ioapic_hw_page + offset);
}

uint32_t ioapic_hw_read(uint8_t index)
{
	*ioapic_reg(IOAPIC_IOREGSEL) = index;
	return *ioapic_reg(IOAPIC_IOWIN);
}

void ioapic_hw_write(uint8_t index, uint32_t value)
{
	*ioapic_reg(IOAPIC_IOREGSEL) = index;
	*ioapic_reg(IOAPIC_IOWIN) = value;
}

void ioapic_hw_eoi(uint32_t value)
{
	*ioapic_reg(IOAPIC_EOI) = value;
}
