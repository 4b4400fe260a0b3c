// SPDX-License-Identifier: GPL-2.0-only
#include "acpi.h"
#include "string.h"
#include "x86.h"

#define BDA_EBDA_SEGMENT	0x40e	/* real-mode segment of the EBDA */
#define BIOS_AREA_START		0xe0000
#define BIOS_AREA_END		0x100000
#define FADT_PM_TMR_BLK		76	/* byte offset in the FADT */

static uint8_t checksum(const void *p, uint32_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	while (len--)
		sum += *b++;
	return sum;
}

/* The RSDP sits on a 16-byte boundary. */
static const struct acpi_rsdp *scan(uintptr_t start, uintptr_t end)
{
	for (uintptr_t a = start; a + sizeof(struct acpi_rsdp) <= end; a += 16) {
		const struct acpi_rsdp *rsdp = (const void *)a;

		if (!memcmp(rsdp->signature, "RSD PTR ", 8) &&
		    checksum(rsdp, sizeof(*rsdp)) == 0)
			return rsdp;
	}
	return NULL;
}

const struct acpi_rsdp *acpi_find_rsdp(void)
{
	uintptr_t ebda =
		(uintptr_t)*(volatile uint16_t *)phys_ptr(BDA_EBDA_SEGMENT) << 4;
	const struct acpi_rsdp *rsdp = NULL;

	/* An EBDA outside conventional memory is garbage: don't follow it. */
	if (ebda >= 0x80000 && ebda < 0xa0000)
		rsdp = scan(ebda, ebda + 1024);
	return rsdp ? rsdp : scan(BIOS_AREA_START, BIOS_AREA_END);
}

const struct acpi_header *acpi_find_table(const struct acpi_rsdp *rsdp,
					  const char sig[4])
{
	const struct acpi_header *rsdt =
		(const void *)(uintptr_t)rsdp->rsdt_address;
	const uint32_t *entries;
	uint32_t n;

	if (!rsdt || memcmp(rsdt->signature, "RSDT", 4) ||
	    rsdt->length < sizeof(*rsdt) || checksum(rsdt, rsdt->length))
		return NULL;
	entries = (const uint32_t *)(rsdt + 1);
	n = (rsdt->length - sizeof(*rsdt)) / 4;
	for (uint32_t i = 0; i < n; i++) {
		const struct acpi_header *t = (const void *)(uintptr_t)entries[i];

		if (t && !memcmp(t->signature, sig, 4) &&
		    t->length >= sizeof(*t) && checksum(t, t->length) == 0)
			return t;
	}
	return NULL;
}

uint32_t acpi_fadt_pm_timer_port(const struct acpi_header *fadt)
{
	if (fadt->length < FADT_PM_TMR_BLK + 4)
		return 0;
	return *(const uint32_t *)((const uint8_t *)fadt + FADT_PM_TMR_BLK);
}
