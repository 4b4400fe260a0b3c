/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough ACPI to list the CPUs: the RSDP, the RSDT/XSDT, and the
 * MADT's local APIC and x2APIC entries (ACPI 6.4, 5.2.5-5.2.8, 5.2.12).
 */
#ifndef EXITPLAN_ACPI_H
#define EXITPLAN_ACPI_H

#include <stdint.h>

/*
 * The APIC IDs of the enabled CPUs the MADT lists, at most `max` of them.
 * Returns how many there are (which may exceed max), or 0 when there is
 * no usable MADT.
 */
unsigned int acpi_madt_apic_ids(uint32_t *ids, unsigned int max);

#endif /* EXITPLAN_ACPI_H */
