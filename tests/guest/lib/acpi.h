/* SPDX-License-Identifier: GPL-2.0-only */
/* Just enough ACPI to find the FADT and its PM timer (ACPI 6.x, 5.2). */
#ifndef GUEST_ACPI_H
#define GUEST_ACPI_H

#include <stdbool.h>
#include <stdint.h>

struct acpi_rsdp {
	char signature[8];	/* "RSD PTR " */
	uint8_t checksum;	/* over the first 20 bytes */
	char oem_id[6];
	uint8_t revision;
	uint32_t rsdt_address;
} __attribute__((packed));

struct acpi_header {
	char signature[4];
	uint32_t length;
	uint8_t revision;
	uint8_t checksum;	/* over `length` bytes */
	char oem_id[6];
	char oem_table_id[8];
	uint32_t oem_revision;
	uint32_t creator_id;
	uint32_t creator_revision;
} __attribute__((packed));

/* The RSDP in the EBDA's first KiB or in 0xE0000-0xFFFFF, or NULL. */
const struct acpi_rsdp *acpi_find_rsdp(void);
/* A table the RSDT lists, checksum verified, or NULL. */
const struct acpi_header *acpi_find_table(const struct acpi_rsdp *rsdp,
					  const char sig[4]);
/* The FADT's PM_TMR_BLK port, 0 if none. */
uint32_t acpi_fadt_pm_timer_port(const struct acpi_header *fadt);

#endif /* GUEST_ACPI_H */
