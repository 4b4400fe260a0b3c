/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's I/O APIC (Intel 82093AA I/O Advanced Programmable Interrupt
 * Controller datasheet, 3.0 "Register Description").
 *
 * The I/O APIC page is not mapped in EPT: a redirection-table entry
 * routes a device interrupt to any CPU with any delivery mode, SMI and
 * INIT included, and SMM runs outside VMX and EPT (docs/THREAT-MODEL.md).
 * Every access exits (ioapic_exits.c) and is answered here:
 *   - IOREGSEL (offset 0x00) is the guest's own latch: the hardware's is
 *     the hypervisor's, written just before each access it forwards;
 *   - IOWIN (0x10) reads the register the latch names from the hardware;
 *     writes go through only to a redirection entry, and the low dword of
 *     one with a delivery mode other than fixed or lowest priority (SMI,
 *     NMI, INIT, ExtINT, the reserved ones) is written masked (bit 16
 *     set), the rest as the guest wrote it, and refused;
 *   - IOAPICID, IOAPICVER, IOAPICARB read what the hardware holds; writes
 *     to them (the ID is the only writable one) are dropped;
 *   - an index past the last redirection entry, and every other offset
 *     of the page, read 0 and ignore writes (reserved);
 *   - the EOI register (offset 0x40) of an I/O APIC of version 0x20 or
 *     later is written through (a vector: it only clears Remote IRR).
 * The datasheet leaves anything but an aligned 32-bit access undefined:
 * such an access is refused (IOAPIC_BAD_ACCESS) and the guest stopped.
 *
 * The hardware is reached through ioapic_hw_read()/ioapic_hw_write()
 * (ioapic_hw.c; a fake in the unit test), whose callers hold the lock
 * that serialises the hardware's IOREGSEL.
 */
#ifndef EXITPLAN_IOAPIC_H
#define EXITPLAN_IOAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define IOAPIC_DEFAULT_BASE	0xfec00000ull	/* the PIIX's APICBASE at reset */

/* Memory-mapped registers, offsets in the page. */
#define IOAPIC_IOREGSEL		0x00
#define IOAPIC_IOWIN		0x10
#define IOAPIC_EOI		0x40	/* version 0x20 and later (ICH) */

/* Indirect registers, through IOREGSEL/IOWIN. */
#define IOAPIC_REG_ID		0x00
#define IOAPIC_REG_VER		0x01
#define IOAPIC_REG_ARB		0x02
#define IOAPIC_REG_REDTBL	0x10	/* entry n: low dword 0x10 + 2n, high 0x11 + 2n */

#define IOAPIC_VER_VERSION(v)	((v) & 0xffu)
#define IOAPIC_VER_MAX_REDIR(v)	(((v) >> 16) & 0xffu)	/* entries - 1 */
#define IOAPIC_VERSION_EOI	0x20	/* the first version with the EOI register */

/* Redirection entry, low dword. */
#define IOREDTBL_VECTOR_MASK		0xffu
#define IOREDTBL_DELMOD_SHIFT		8
#define IOREDTBL_DELMOD_MASK		(7u << IOREDTBL_DELMOD_SHIFT)
#define IOREDTBL_DESTMOD_LOGICAL	(1u << 11)	/* 0 = physical */
#define IOREDTBL_DELIVS			(1u << 12)	/* delivery status (read-only) */
#define IOREDTBL_REMOTE_IRR		(1u << 14)	/* read-only */
#define IOREDTBL_MASKED			(1u << 16)
/* High dword: the destination, bits 63:56 of the entry. */
#define IOREDTBL_DEST_SHIFT		24
/* Indexes 0x10-0xff: at most 120 entries reachable through an 8-bit IOREGSEL. */
#define IOAPIC_MAX_ENTRIES		120
/*
 * Virtual destinations: the vector the hardware's entry @n delivers,
 * 0x30-0xa7, clear of the exceptions and of the hypervisor's kick (0xf2).
 */
#define IOAPIC_HOST_VECTOR_BASE		0x30u
#define IOAPIC_HOST_VECTOR(n)		(IOAPIC_HOST_VECTOR_BASE + (n))

/* Delivery modes (82093AA 3.2.4, bits 10:8). */
#define IOAPIC_DELMOD_FIXED		0
#define IOAPIC_DELMOD_LOWEST		1
#define IOAPIC_DELMOD_SMI		2
#define IOAPIC_DELMOD_NMI		4
#define IOAPIC_DELMOD_INIT		5
#define IOAPIC_DELMOD_EXTINT		7

static inline unsigned int ioredtbl_delivery_mode(uint32_t low)
{
	return (low & IOREDTBL_DELMOD_MASK) >> IOREDTBL_DELMOD_SHIFT;
}

/* Only fixed and lowest-priority delivery reach a CPU as an interrupt the guest handles. */
static inline bool ioapic_delivery_allowed(uint32_t low)
{
	unsigned int mode = ioredtbl_delivery_mode(low);

	return mode == IOAPIC_DELMOD_FIXED || mode == IOAPIC_DELMOD_LOWEST;
}

/*
 * The low dword of a redirection entry as the hardware gets it: as the
 * guest wrote it when its delivery mode is allowed, else masked.
 */
static inline uint32_t ioapic_filter_redirection(uint32_t low)
{
	return ioapic_delivery_allowed(low) ? low : low | IOREDTBL_MASKED;
}

/* "SMI", "INIT", ...: the delivery mode of @low, for reports. */
const char *ioapic_delivery_mode_name(uint32_t low);

/* The guest's view of the I/O APIC (one per VM, as the hardware is one). */
struct ioapic_guest {
	uint8_t ioregsel;		/* the guest's latch (bits 7:0 only) */
	uint32_t version;		/* IOAPICVER, read once at init */
	/*
	 * Virtual destinations (apic: virtual, ioapic_guest_init_virtual()):
	 * the guest's destinations name vCPUs, whose APIC IDs and logical
	 * IDs no physical APIC holds (several vCPUs share a CPU; the
	 * guest's LDR writes never reach the hardware).  Every hardware
	 * entry then goes to the one physical APIC host_dest, in physical
	 * mode, fixed delivery, with a vector of the hypervisor's that names
	 * the entry: IOAPIC_HOST_VECTOR(n) (the guest's vectors cannot name
	 * it: Linux gives IRQs on different CPUs the same vector).  The
	 * guest's entries are kept in low[]/high[], read back as the guest
	 * wrote them (the hardware's status and mask bits), and decoded when
	 * the interrupt arrives (ioapic_guest_route()).
	 */
	bool virtual_dest;
	uint8_t host_dest;
	/*
	 * Pins whose device the hypervisor emulates (bit n: pin n): the
	 * 8254's (acpi_madt_isa_irq_pin(0)), under every APIC model.  The
	 * hardware's entry stays masked -- its device is the host's, the
	 * hypervisor's delay timer -- the guest's is kept in low[]/high[]
	 * as with virtual destinations, and the emulated device's interrupt
	 * follows it (ioapic_guest_pin_route()).
	 */
	uint64_t emulated_pins;
	uint32_t low[IOAPIC_MAX_ENTRIES], high[IOAPIC_MAX_ENTRIES];
};

enum ioapic_result {
	IOAPIC_DONE,
	IOAPIC_REFUSED,		/* a redirection entry written masked: report it */
	IOAPIC_BAD_ACCESS,	/* not an aligned 32-bit access: stop the guest */
};

/* What was refused, for the report. */
struct ioapic_refusal {
	unsigned int entry;	/* redirection entry number */
	uint32_t value;		/* the low dword the guest wrote */
};

/*
 * The guest's destinations are the hardware's (the passthrough APIC
 * models): its entries are written through, filtered, but for those of
 * @emulated_pins (bit n: pin n, below 64), which start as the hardware's
 * and are the guest's from then on, the hardware's kept masked.
 */
void ioapic_guest_init(struct ioapic_guest *g, uint64_t emulated_pins);
/*
 * The same with virtual destinations: every entry of the guest's starts
 * as the hardware's; the hardware's are rewritten to physical mode,
 * @host_dest, those of @emulated_pins masked.
 */
void ioapic_guest_init_virtual(struct ioapic_guest *g, uint8_t host_dest, uint64_t emulated_pins);
/*
 * The guest's entry of pin @pin, an emulated device's (emulated_pins),
 * its low and high dwords; false when it is masked, of a refused
 * delivery mode, past the table, or not an emulated pin.
 */
bool ioapic_guest_pin_route(const struct ioapic_guest *g, unsigned int pin, uint32_t *low,
			    uint32_t *high);
/*
 * Virtual destinations: the guest's entry whose interrupt arrived as
 * @host_vector (IOAPIC_HOST_VECTOR()), its low and high dwords; false
 * when the vector names no entry, or one masked or of a refused
 * delivery mode.
 */
bool ioapic_guest_route(const struct ioapic_guest *g, uint8_t host_vector, uint32_t *low,
			uint32_t *high);
/* An access of @size bytes at @offset in the page. */
enum ioapic_result ioapic_guest_read(struct ioapic_guest *g, unsigned int offset,
				     unsigned int size, uint32_t *value);
enum ioapic_result ioapic_guest_write(struct ioapic_guest *g, unsigned int offset,
				      unsigned int size, uint32_t value,
				      struct ioapic_refusal *refusal);

/* The hardware's page, and its indirect register @index (ioapic_hw.c). */
extern uint64_t ioapic_hw_page;
uint32_t ioapic_hw_read(uint8_t index);
void ioapic_hw_write(uint8_t index, uint32_t value);
/* The hardware's EOI register (version 0x20 and later). */
void ioapic_hw_eoi(uint32_t value);

#endif /* EXITPLAN_IOAPIC_H */
