// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's I/O APIC: IOREGSEL emulated, IOWIN forwarded to the
 * hardware with the redirection entries filtered (ioapic.h says what the
 * guest finds at each register).  No VMX here: ioapic_exits.c turns EPT
 * violations on the page into these calls.
 */
#include "ioapic.h"

static const char *const delivery_mode_names[8] = {
	"fixed", "lowest priority", "SMI", "reserved (011b)",
	"NMI", "INIT", "reserved (110b)", "ExtINT",
};

const char *ioapic_delivery_mode_name(uint32_t low)
{
	return delivery_mode_names[ioredtbl_delivery_mode(low)];
}

void ioapic_guest_init(struct ioapic_guest *g)
{
	g->ioregsel = 0;
	g->version = ioapic_hw_read(IOAPIC_REG_VER);
}

/* Is @index one of the redirection table's dwords the hardware has? */
static bool redirection_index(const struct ioapic_guest *g, uint8_t index)
{
	unsigned int entries = IOAPIC_VER_MAX_REDIR(g->version) + 1;

	return index >= IOAPIC_REG_REDTBL && index < IOAPIC_REG_REDTBL + 2 * entries;
}

enum ioapic_result ioapic_guest_read(struct ioapic_guest *g, unsigned int offset,
				     unsigned int size, uint32_t *value)
{
	uint8_t index = g->ioregsel;

	if (size != 4 || (offset & 3))
		return IOAPIC_BAD_ACCESS;
	*value = 0;		/* reserved offsets and indexes read 0 */
	if (offset == IOAPIC_IOREGSEL)
		*value = g->ioregsel;
	else if (offset == IOAPIC_IOWIN &&
		 (index <= IOAPIC_REG_ARB || redirection_index(g, index)))
		*value = ioapic_hw_read(index);
	return IOAPIC_DONE;
}

enum ioapic_result ioapic_guest_write(struct ioapic_guest *g, unsigned int offset,
				      unsigned int size, uint32_t value,
				      struct ioapic_refusal *refusal)
{
	uint8_t index = g->ioregsel;

	if (size != 4 || (offset & 3))
		return IOAPIC_BAD_ACCESS;
	if (offset == IOAPIC_IOREGSEL) {
		g->ioregsel = value & 0xff;
		return IOAPIC_DONE;
	}
	if (offset == IOAPIC_EOI) {
		if (IOAPIC_VER_VERSION(g->version) >= IOAPIC_VERSION_EOI)
			ioapic_hw_eoi(value & IOREDTBL_VECTOR_MASK);
		return IOAPIC_DONE;
	}
	/* IOAPICID, IOAPICVER, IOAPICARB and reserved indexes: dropped. */
	if (offset != IOAPIC_IOWIN || !redirection_index(g, index))
		return IOAPIC_DONE;
	/* The high dword is the destination only; the low one has the delivery mode. */
	if ((index - IOAPIC_REG_REDTBL) & 1) {
		ioapic_hw_write(index, value);
		return IOAPIC_DONE;
	}
	ioapic_hw_write(index, ioapic_filter_redirection(value));
	if (ioapic_delivery_allowed(value))
		return IOAPIC_DONE;
	refusal->entry = (index - IOAPIC_REG_REDTBL) / 2;
	refusal->value = value;
	return IOAPIC_REFUSED;
}
