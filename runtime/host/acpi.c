// SPDX-License-Identifier: GPL-2.0-only
#include <stdbool.h>
#include <stddef.h>

#include "runtime/host/acpi.h"
#include "runtime/host/compiler.h"
#include "lib/string.h"

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
#define MADT_INT_SRC_OVERRIDE	2
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

struct madt_int_src_override {
	uint8_t type, length;
	uint8_t bus;			/* 0: ISA */
	uint8_t source;			/* the ISA IRQ */
	uint32_t global_system_interrupt;
	uint16_t flags;
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

unsigned int acpi_madt_isa_irq_pin(unsigned int irq)
{
	const struct acpi_madt *madt = madt_find();
	uint32_t gsi = irq, base = 0;
	bool first = true;

	if (!madt)
		return irq;
	for (const uint8_t *p = madt_next(madt, NULL); p; p = madt_next(madt, p)) {
		if (p[0] == MADT_IO_APIC && p[1] >= sizeof(struct madt_io_apic) && first) {
			base = ((const struct madt_io_apic *)(const void *)p)->global_system_interrupt_base;
			first = false;
		} else if (p[0] == MADT_INT_SRC_OVERRIDE &&
			   p[1] >= sizeof(struct madt_int_src_override)) {
			const struct madt_int_src_override *o = (const void *)p;

			if (o->bus == 0 && o->source == irq)
				gsi = o->global_system_interrupt;
		}
	}
	return gsi >= base ? gsi - base : irq;
}

uint64_t acpi_hpet_base(void)
{
	const struct acpi_hpet *hpet = (const void *)table_find("HPET");

	if (!hpet || hpet->header.length < offsetof(struct acpi_hpet, hpet_number) ||
	    hpet->address_space_id != ACPI_GAS_SYSTEM_MEMORY)
		return 0;
	return hpet->address;
}

/* --- the guest's copy ------------------------------------------------------ */

static uint8_t acpi_sum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum;
}

size_t acpi_madt_build(void *dst, size_t cap, const void *old_madt, const uint32_t *ids,
		       unsigned int n)
{
	const struct acpi_madt *old = old_madt;
	struct acpi_madt *madt = dst;
	uint8_t *out = (uint8_t *)(madt + 1);
	size_t len = sizeof(*madt) + n * sizeof(struct madt_local_apic);

	if (old->header.length < sizeof(*old))
		return 0;
	for (const uint8_t *p = madt_next(old, NULL); p; p = madt_next(old, p))
		if (p[0] != MADT_LOCAL_APIC && p[0] != MADT_LOCAL_X2APIC)
			len += p[1];
	if (len > cap)
		return 0;
	for (unsigned int i = 0; i < n; i++)
		if (ids[i] > 0xfe)	/* 0xff is the broadcast: an xAPIC ID is below it */
			return 0;
	memcpy(madt, old, sizeof(*madt));
	for (unsigned int i = 0; i < n; i++) {
		struct madt_local_apic e = {
			.type = MADT_LOCAL_APIC, .length = sizeof(e),
			.processor_uid = (uint8_t)i, .apic_id = (uint8_t)ids[i], .flags = MADT_ENABLED,
		};

		memcpy(out, &e, sizeof(e));
		out += sizeof(e);
	}
	/* The I/O APICs, interrupt source overrides, NMI sources as they were, in order. */
	for (const uint8_t *p = madt_next(old, NULL); p; p = madt_next(old, p)) {
		if (p[0] == MADT_LOCAL_APIC || p[0] == MADT_LOCAL_X2APIC)
			continue;
		memcpy(out, p, p[1]);
		out += p[1];
	}
	madt->header.length = (uint32_t)len;
	madt->header.checksum = 0;
	madt->header.checksum = (uint8_t)-acpi_sum(madt, len);
	return len;
}

/* The FADT's SMI_CMD (32-bit, an I/O port), ACPI_ENABLE and ACPI_DISABLE (ACPI 6.4 Table 5.9). */
#define FADT_SMI_CMD		48
#define FADT_ACPI_ENABLE	52
#define FADT_ACPI_DISABLE	53

bool acpi_fadt_smi_cmd(uint16_t *port, uint8_t *enable, uint8_t *disable)
{
	const struct acpi_header *fadt = table_find("FACP");
	uint32_t smi_cmd;

	if (!fadt || fadt->length < FADT_ACPI_DISABLE + 1)
		return false;
	memcpy(&smi_cmd, (const uint8_t *)fadt + FADT_SMI_CMD, 4);
	if (!smi_cmd || smi_cmd > 0xffff)
		return false;
	*port = (uint16_t)smi_cmd;
	*enable = ((const uint8_t *)fadt)[FADT_ACPI_ENABLE];
	*disable = ((const uint8_t *)fadt)[FADT_ACPI_DISABLE];
	return true;
}

/* Where a table ends, if @pa holds a valid one; else 0. */
static uint64_t table_end(uint64_t pa)
{
	const struct acpi_header *h = table_at(pa, NULL);

	return h ? pa + h->length : 0;
}

/* The FADT's FACS and DSDT (ACPI 5.2.9: FIRMWARE_CTRL at 36, DSDT at 40, 32-bit). */
#define FADT_FIRMWARE_CTRL	36
#define FADT_DSDT		40
#define FACS_LENGTH_OFFSET	4

bool acpi_guest_madt_set_cpus(const uint32_t *ids, unsigned int n,
			      const struct boot_mmap_entry *mmap, unsigned int mmap_count)
{
	const struct acpi_rsdp *r = rsdp_find();
	struct acpi_header *root;
	bool xsdt;
	size_t entry, count, slot = SIZE_MAX;
	uint64_t end, at, limit = 0, madt_pa = 0;
	static uint8_t buf[1024];
	size_t len;

	if (!r)
		return false;
	xsdt = r->revision >= 2 && r->xsdt_address;
	root = (struct acpi_header *)(xsdt ? table_at(r->xsdt_address, "XSDT")
					   : table_at(r->rsdt_address, "RSDT"));
	if (!root)
		return false;
	entry = xsdt ? sizeof(uint64_t) : sizeof(uint32_t);
	count = (root->length - sizeof(*root)) / entry;
	/* The end of the firmware's ACPI data: past the root and every table it reaches. */
	end = (uint64_t)(uintptr_t)root + root->length;
	for (size_t i = 0; i < count; i++) {
		uint64_t pa = 0, e;
		const struct acpi_header *t;

		memcpy(&pa, (uint8_t *)(root + 1) + i * entry, entry);
		if (!(t = table_at(pa, NULL)))
			continue;
		e = pa + t->length;
		end = e > end ? e : end;
		if (!memcmp(t->signature, "APIC", 4)) {
			slot = i;
			madt_pa = pa;
		}
		if (!memcmp(t->signature, "FACP", 4) && t->length >= FADT_DSDT + 4) {
			uint32_t facs, dsdt;

			memcpy(&facs, (const uint8_t *)t + FADT_FIRMWARE_CTRL, 4);
			memcpy(&dsdt, (const uint8_t *)t + FADT_DSDT, 4);
			e = table_end(dsdt);
			end = e > end ? e : end;
			if (facs) {	/* no checksum: its length is at offset 4 */
				uint32_t flen;

				memcpy(&flen, (const uint8_t *)(uintptr_t)facs + FACS_LENGTH_OFFSET, 4);
				end = facs + flen > end ? facs + flen : end;
			}
		}
	}
	if (slot == SIZE_MAX)
		return false;
	len = acpi_madt_build(buf, sizeof(buf), (const void *)(uintptr_t)madt_pa, ids, n);
	if (!len)
		return false;
	/* The firmware's ACPI region (e820) around the tables bounds the copy. */
	for (unsigned int i = 0; i < mmap_count; i++)
		if ((mmap[i].type == BOOT_MEM_ACPI_RECLAIMABLE || mmap[i].type == BOOT_MEM_ACPI_NVS ||
		     mmap[i].type == BOOT_MEM_RESERVED) &&
		    madt_pa >= mmap[i].addr && madt_pa < mmap[i].addr + mmap[i].len)
			limit = mmap[i].addr + mmap[i].len;
	at = ALIGN_UP(end, 16);
	if (!limit || at + len > limit)
		return false;
	/* Only unused bytes (all zero) are taken. */
	for (size_t i = 0; i < len; i++)
		if (((const uint8_t *)(uintptr_t)at)[i])
			return false;
	memcpy((void *)(uintptr_t)at, buf, len);
	memcpy((uint8_t *)(root + 1) + slot * entry, &at, entry);
	root->checksum = 0;
	root->checksum = (uint8_t)-acpi_sum(root, root->length);
	return true;
}
