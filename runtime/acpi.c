// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stddef.h>

#include "acpi.h"
#include "compiler.h"
#include "string.h"

struct acpi_rsdp {
	char signature[8];		/* "RSD PTR " */
	uint8_t checksum;		/* of the first 20 bytes */
	char oem_id[6];
	uint8_t revision;		/* 0: ACPI 1.0, RSDT only; 2: XSDT too */
	uint32_t rsdt_address;
	uint32_t length;		/* revision >= 2 from here on */
	uint64_t xsdt_address;
	uint8_t extended_checksum;	/* of all `length` bytes */
	uint8_t reserved[3];
} __packed;

struct acpi_header {
	char signature[4];
	uint32_t length;		/* of the whole table */
	uint8_t revision;
	uint8_t checksum;		/* all bytes sum to 0 */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
} __packed;

struct acpi_madt {
	struct acpi_header header;	/* "APIC" */
	uint32_t local_apic_address;
	uint32_t flags;
	/* Interrupt controller structures follow: {type, length, ...}. */
} __packed;

#define MADT_LOCAL_APIC		0
#define MADT_IO_APIC		1
#define MADT_LOCAL_X2APIC	9
#define MADT_ENABLED		(1u << 0)

struct madt_local_apic {
	uint8_t type, length;
	uint8_t processor_uid;
	uint8_t apic_id;
	uint32_t flags;
} __packed;

struct madt_io_apic {
	uint8_t type, length;
	uint8_t io_apic_id;
	uint8_t reserved;
	uint32_t io_apic_address;
	uint32_t global_system_interrupt_base;
} __packed;

struct madt_local_x2apic {
	uint8_t type, length;
	uint16_t reserved;
	uint32_t x2apic_id;
	uint32_t flags;
	uint32_t processor_uid;
} __packed;

/*
 * The IA-PC HPET description table (HPET Specification 1.0a, 3.2.4): the
 * event timer block's base address as a Generic Address Structure.
 */
struct acpi_hpet {
	struct acpi_header header;	/* "HPET" */
	uint32_t event_timer_block_id;
	uint8_t address_space_id;	/* 0: system memory */
	uint8_t register_bit_width;
	uint8_t register_bit_offset;
	uint8_t access_size;
	uint64_t address;
	uint8_t hpet_number;
	uint16_t min_clock_tick;
	uint8_t page_protection;
} __packed;

#define ACPI_GAS_SYSTEM_MEMORY	0

/* Where the RSDP may be (ACPI 5.2.5.1): the EBDA's first KiB, the BIOS ROM. */
#define BDA_EBDA_SEGMENT	0x40e
#define BIOS_ROM_START		0xe0000
#define BIOS_ROM_END		0x100000
#define RSDP_ALIGN		16
#define RSDP_V1_LENGTH		20

/* Tables above the 4-GiB identity map cannot be read. */
#define ACPI_ADDR_LIMIT		0x100000000ull

static bool checksum_ok(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum == 0;
}

static const struct acpi_rsdp *rsdp_scan(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = ALIGN_UP(start, RSDP_ALIGN); a + sizeof(struct acpi_rsdp) <= end;
	     a += RSDP_ALIGN) {
		const struct acpi_rsdp *r = (const void *)a;

		if (memcmp(r->signature, "RSD PTR ", 8) || !checksum_ok(r, RSDP_V1_LENGTH))
			continue;
		if (r->revision >= 2 && (r->length < sizeof(*r) || !checksum_ok(r, r->length)))
			continue;
		return r;
	}
	return NULL;
}

/* A word of low memory; the asm hides the constant address from GCC's
 * bounds checking, which takes small constant pointers for NULL + n. */
static uint16_t read_low16(uintptr_t pa)
{
	asm("" : "+r"(pa));
	return *(const volatile uint16_t *)pa;
}

static const struct acpi_rsdp *rsdp_find(void)
{
	uintptr_t ebda = (uintptr_t)read_low16(BDA_EBDA_SEGMENT) << 4;
	const struct acpi_rsdp *r = NULL;

	if (ebda >= 0x80000 && ebda < 0xa0000)	/* a plausible EBDA */
		r = rsdp_scan(ebda, ebda + 1024);
	return r ? r : rsdp_scan(BIOS_ROM_START, BIOS_ROM_END);
}

static const struct acpi_header *table_at(uint64_t pa, const char *signature)
{
	const struct acpi_header *h;

	if (!pa || pa + sizeof(*h) > ACPI_ADDR_LIMIT)
		return NULL;
	h = (const void *)(uintptr_t)pa;
	if (signature && memcmp(h->signature, signature, 4))
		return NULL;
	if (h->length < sizeof(*h) || pa + h->length > ACPI_ADDR_LIMIT ||
	    !checksum_ok(h, h->length))
		return NULL;
	return h;
}

static const struct acpi_header *table_find(const char *signature)
{
	const struct acpi_rsdp *r = rsdp_find();
	const struct acpi_header *root;
	bool xsdt;
	size_t entry, n;

	if (!r)
		return NULL;
	xsdt = r->revision >= 2 && r->xsdt_address;
	root = xsdt ? table_at(r->xsdt_address, "XSDT") : table_at(r->rsdt_address, "RSDT");
	if (!root)
		return NULL;
	entry = xsdt ? sizeof(uint64_t) : sizeof(uint32_t);
	n = (root->length - sizeof(*root)) / entry;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = (const uint8_t *)(root + 1) + i * entry;
		uint64_t pa = 0;
		const struct acpi_header *t;

		memcpy(&pa, p, entry);		/* entries are unaligned in the XSDT */
		t = table_at(pa, signature);
		if (t)
			return t;
	}
	return NULL;
}

/* The MADT, when it is there and holds at least its fixed part. */
static const struct acpi_madt *madt_find(void)
{
	const struct acpi_madt *madt = (const void *)table_find("APIC");

	return madt && madt->header.length >= sizeof(*madt) ? madt : NULL;
}

/*
 * The MADT's interrupt controller structures one by one (type, length,
 * ...): the first after NULL, the one after @prev, NULL at the end or at
 * an entry that would not fit (the walk stops there).
 */
static const uint8_t *madt_next(const struct acpi_madt *madt, const uint8_t *prev)
{
	const uint8_t *end = (const uint8_t *)madt + madt->header.length;
	const uint8_t *p = prev ? prev + prev[1] : (const uint8_t *)(madt + 1);

	return p + 2 <= end && p[1] >= 2 && p + p[1] <= end ? p : NULL;
}

unsigned int acpi_madt_apic_ids(uint32_t *ids, unsigned int max)
{
	const struct acpi_madt *madt = madt_find();
	unsigned int n = 0;

	if (!madt)
		return 0;
	for (const uint8_t *p = madt_next(madt, NULL); p; p = madt_next(madt, p)) {
		uint32_t id = 0, flags = 0;
		bool cpu = false;

		if (p[0] == MADT_LOCAL_APIC && p[1] >= sizeof(struct madt_local_apic)) {
			const struct madt_local_apic *e = (const void *)p;

			id = e->apic_id;
			flags = e->flags;
			cpu = true;
		} else if (p[0] == MADT_LOCAL_X2APIC && p[1] >= sizeof(struct madt_local_x2apic)) {
			const struct madt_local_x2apic *e = (const void *)p;

			id = e->x2apic_id;
			flags = e->flags;
			cpu = true;
		}
		/* Disabled entries are CPUs that are not there (or hot-pluggable). */
		if (cpu && (flags & MADT_ENABLED)) {
			if (n < max)
				ids[n] = id;
			n++;
		}
	}
	return n;
}

unsigned int acpi_madt_ioapic_bases(uint64_t *bases, unsigned int max)
{
	const struct acpi_madt *madt = madt_find();
	unsigned int n = 0;

	if (!madt)
		return 0;
	for (const uint8_t *p = madt_next(madt, NULL); p; p = madt_next(madt, p)) {
		if (p[0] == MADT_IO_APIC && p[1] >= sizeof(struct madt_io_apic)) {
			const struct madt_io_apic *e = (const void *)p;

			if (n < max)
				bases[n] = e->io_apic_address;
			n++;
		}
	}
	return n;
}

uint64_t acpi_hpet_base(void)
{
	const struct acpi_hpet *hpet = (const void *)table_find("HPET");

	if (!hpet || hpet->header.length < offsetof(struct acpi_hpet, hpet_number) ||
	    hpet->address_space_id != ACPI_GAS_SYSTEM_MEMORY)
		return 0;
	return hpet->address;
}
