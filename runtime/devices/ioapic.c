// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's I/O APIC: IOREGSEL emulated, IOWIN forwarded to the
 * hardware with the redirection entries filtered (ioapic.h says what the
 * guest finds at each register).  No VMX here: ioapic_exits.c turns EPT
 * violations on the page into these calls.
 */
#include "runtime/devices/ioapic.h"

static const char *const delivery_mode_names[8] = {
	"fixed", "lowest priority", "SMI", "reserved (011b)",
	"NMI", "INIT", "reserved (110b)", "ExtINT",
};

const char *ioapic_delivery_mode_name(uint32_t low)
{
	return delivery_mode_names[ioredtbl_delivery_mode(low)];
}

static void guest_init(struct ioapic_guest *g, bool virtual_dest, uint8_t host_dest,
		       uint64_t emulated_pins)
{
	g->ioregsel = 0;
	g->version = ioapic_hw_read(IOAPIC_REG_VER);
	g->virtual_dest = virtual_dest;
	g->host_dest = host_dest;
	g->emulated_pins = emulated_pins;
}

static unsigned int redirection_entries(const struct ioapic_guest *g)
{
	unsigned int n = IOAPIC_VER_MAX_REDIR(g->version) + 1;

	return n < IOAPIC_MAX_ENTRIES ? n : IOAPIC_MAX_ENTRIES;
}

/* Is @index one of the redirection table's dwords the hardware has? */
static bool redirection_index(const struct ioapic_guest *g, uint8_t index)
{
	return index >= IOAPIC_REG_REDTBL &&
	       index < IOAPIC_REG_REDTBL + 2 * redirection_entries(g);
}

/* Pin @n's device is the hypervisor's emulation (emulated_pins): its hardware entry stays masked. */
static bool emulated_pin(const struct ioapic_guest *g, unsigned int n)
{
	return n < 64 && (g->emulated_pins & (1ull << n));
}

/* Entry @n is the guest's own, kept in low[n]/high[n], not the hardware's. */
static bool shadowed(const struct ioapic_guest *g, unsigned int n)
{
	return g->virtual_dest || emulated_pin(g, n);
}

/*
 * Entry @n's low dword as the hardware gets it.  An emulated pin's is
 * masked: the hardware's device there is the host's.  Virtual
 * destinations: fixed delivery of the entry's own host vector, physical
 * mode (the high dword is host_dest); trigger mode, polarity and mask
 * the guest's.
 */
static uint32_t hw_low(const struct ioapic_guest *g, unsigned int n, uint32_t guest_low)
{
	uint32_t v = guest_low;

	if (emulated_pin(g, n))
		return guest_low | IOREDTBL_MASKED;
	if (g->virtual_dest && ioapic_delivery_allowed(guest_low))
		v = (guest_low & ~(IOREDTBL_VECTOR_MASK | IOREDTBL_DELMOD_MASK |
				   IOREDTBL_DESTMOD_LOGICAL)) |
		    IOAPIC_HOST_VECTOR(n) | (IOAPIC_DELMOD_FIXED << IOREDTBL_DELMOD_SHIFT);
	return ioapic_filter_redirection(v);
}

static uint32_t hw_high(const struct ioapic_guest *g, uint32_t guest_high)
{
	return g->virtual_dest ? (uint32_t)g->host_dest << IOREDTBL_DEST_SHIFT : guest_high;
}

/* Entry @n becomes the guest's: it starts as the hardware's, which is rewritten for it. */
static void take_entry(struct ioapic_guest *g, unsigned int n)
{
	uint8_t lo = (uint8_t)(IOAPIC_REG_REDTBL + 2 * n);

	g->low[n] = ioapic_hw_read(lo);
	g->high[n] = ioapic_hw_read((uint8_t)(lo + 1));
	ioapic_hw_write((uint8_t)(lo + 1), hw_high(g, g->high[n]));
	ioapic_hw_write(lo, hw_low(g, n, g->low[n]));
}

void ioapic_guest_init(struct ioapic_guest *g, uint64_t emulated_pins)
{
	guest_init(g, false, 0, emulated_pins);
	for (unsigned int n = 0; n < redirection_entries(g); n++)
		if (emulated_pin(g, n))
			take_entry(g, n);
}

void ioapic_guest_init_virtual(struct ioapic_guest *g, uint8_t host_dest, uint64_t emulated_pins)
{
	guest_init(g, true, host_dest, emulated_pins);
	for (unsigned int n = 0; n < redirection_entries(g); n++)
		take_entry(g, n);
}

bool ioapic_guest_route(const struct ioapic_guest *g, uint8_t host_vector, uint32_t *low,
			uint32_t *high)
{
	unsigned int n = host_vector - IOAPIC_HOST_VECTOR_BASE;

	if (!g->virtual_dest || host_vector < IOAPIC_HOST_VECTOR_BASE || n >= redirection_entries(g))
		return false;
	/* Masked since it was sent: dropped, as a masked pin would not have sent it. */
	if ((g->low[n] & IOREDTBL_MASKED) || !ioapic_delivery_allowed(g->low[n]))
		return false;
	*low = g->low[n];
	*high = g->high[n];
	return true;
}

bool ioapic_guest_pin_route(const struct ioapic_guest *g, unsigned int pin, uint32_t *low,
			    uint32_t *high)
{
	if (!emulated_pin(g, pin) || pin >= redirection_entries(g) ||
	    (g->low[pin] & IOREDTBL_MASKED) || !ioapic_delivery_allowed(g->low[pin]))
		return false;
	*low = g->low[pin];
	*high = g->high[pin];
	return true;
}

enum ioapic_result ioapic_guest_read(struct ioapic_guest *g, unsigned int offset,
				     unsigned int size, uint32_t *value)
{
	uint8_t index = g->ioregsel;
	unsigned int n = (index - IOAPIC_REG_REDTBL) / 2;	/* the entry, where redirection_index() */

	if (size != 4 || (offset & 3))
		return IOAPIC_BAD_ACCESS;
	*value = 0;		/* reserved offsets and indexes read 0 */
	if (offset == IOAPIC_IOREGSEL)
		*value = g->ioregsel;
	else if (offset == IOAPIC_IOWIN &&
		 (index <= IOAPIC_REG_ARB || redirection_index(g, index)))
		*value = ioapic_hw_read(index);
	if (offset == IOAPIC_IOWIN && redirection_index(g, index) && shadowed(g, n)) {
		/* The guest's destination; the hardware's status bits (delivery status, remote IRR). */
		uint32_t hw_bits = IOREDTBL_DELIVS | IOREDTBL_REMOTE_IRR | IOREDTBL_MASKED;

		/* An emulated pin's hardware entry is masked for good: the mask is the guest's. */
		if (emulated_pin(g, n))
			hw_bits &= ~IOREDTBL_MASKED;

		if ((index - IOAPIC_REG_REDTBL) & 1)
			*value = g->high[n];
		else
			*value = (*value & hw_bits) | (g->low[n] & ~hw_bits);
	}
	return IOAPIC_DONE;
}

enum ioapic_result ioapic_guest_write(struct ioapic_guest *g, unsigned int offset,
				      unsigned int size, uint32_t value,
				      struct ioapic_refusal *refusal)
{
	uint8_t index = g->ioregsel;
	unsigned int n;

	if (size != 4 || (offset & 3))
		return IOAPIC_BAD_ACCESS;
	if (offset == IOAPIC_IOREGSEL) {
		g->ioregsel = value & 0xff;
		return IOAPIC_DONE;
	}
	if (offset == IOAPIC_EOI) {
		if (IOAPIC_VER_VERSION(g->version) < IOAPIC_VERSION_EOI)
			return IOAPIC_DONE;
		if (!g->virtual_dest) {
			ioapic_hw_eoi(value & IOREDTBL_VECTOR_MASK);
			return IOAPIC_DONE;
		}
		/* The guest's vector names the entries that deliver it; the hardware's are theirs. */
		for (unsigned int n = 0; n < redirection_entries(g); n++)
			if ((g->low[n] & IOREDTBL_VECTOR_MASK) == (value & IOREDTBL_VECTOR_MASK))
				ioapic_hw_eoi(IOAPIC_HOST_VECTOR(n));
		return IOAPIC_DONE;
	}
	/* IOAPICID, IOAPICVER, IOAPICARB and reserved indexes: dropped. */
	if (offset != IOAPIC_IOWIN || !redirection_index(g, index))
		return IOAPIC_DONE;
	/* The high dword is the destination only; the low one has the delivery mode. */
	n = (index - IOAPIC_REG_REDTBL) / 2;
	if ((index - IOAPIC_REG_REDTBL) & 1) {
		if (shadowed(g, n))
			g->high[n] = value;
		ioapic_hw_write(index, hw_high(g, value));
		return IOAPIC_DONE;
	}
	if (shadowed(g, n))
		g->low[n] = value;
	ioapic_hw_write(index, hw_low(g, n, value));
	if (ioapic_delivery_allowed(value))
		return IOAPIC_DONE;
	refusal->entry = n;
	refusal->value = value;
	return IOAPIC_REFUSED;
}
