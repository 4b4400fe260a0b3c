/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Just enough ACPI to list the CPUs and find the I/O APICs and the HPET:
 * the RSDP, the RSDT/XSDT, the MADT's local APIC, x2APIC and I/O APIC
 * entries (ACPI 6.4, 5.2.5-5.2.8, 5.2.12) and the HPET table's base address (IA-PC HPET
 * Specification 1.0a, 3.2.4).
 */
#ifndef EXITPLAN_ACPI_H
#define EXITPLAN_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/host/boot_info.h"

/*
 * The APIC IDs of the enabled CPUs the MADT lists, at most `max` of them.
 * Returns how many there are (which may exceed max), or 0 when there is
 * no usable MADT.
 */
unsigned int acpi_madt_apic_ids(uint32_t *ids, unsigned int max);

/*
 * The physical addresses of the I/O APICs the MADT lists, in its order,
 * at most `max` of them.  Returns how many there are (which may exceed
 * max), or 0 when there is no usable MADT.
 */
unsigned int acpi_madt_ioapic_bases(uint64_t *bases, unsigned int max);

/*
 * The pin of the MADT's first I/O APIC that ISA IRQ @irq drives: its
 * interrupt source override's GSI (the 8254's IRQ 0 on GSI 2, as on
 * most PCs), else the IRQ itself, less the I/O APIC's GSI base.
 */
unsigned int acpi_madt_isa_irq_pin(unsigned int irq);

/*
 * The physical address of the HPET's event timer block the ACPI HPET
 * table gives, or 0 when there is no such table (or its block is not in
 * memory space).
 */
uint64_t acpi_hpet_base(void);

/*
 * The FADT's SMI_CMD port and the values that ask the firmware to enter
 * and leave ACPI mode there (ACPI 6.4 5.2.9, 4.8.3.2: ACPI_ENABLE,
 * ACPI_DISABLE).  False when there is no FADT, or it has no SMI_CMD (the
 * machine is always in ACPI mode).
 */
bool acpi_fadt_smi_cmd(uint16_t *port, uint8_t *enable, uint8_t *disable);

/*
 * A MADT listing @n enabled processor local APICs with these IDs
 * (processor UIDs 0 .. n-1) in place of @old_madt's processor entries,
 * its other entries (I/O APICs, overrides, NMI sources) kept in order,
 * into @dst (@cap bytes), checksummed.  Its length, or 0 when it does
 * not fit, an ID needs x2APIC, or @old_madt is malformed.
 */
size_t acpi_madt_build(void *dst, size_t cap, const void *old_madt, const uint32_t *ids,
		       unsigned int n);

/*
 * The guest sees more vCPUs than the machine has CPUs: the firmware's
 * MADT is copied, listing these @n APIC IDs (acpi_madt_build()), into
 * the zero bytes just past the firmware's ACPI tables within their e820
 * region (@mmap), and the root table points at the copy.  False, with
 * nothing changed, when there is no MADT or no room.
 */
bool acpi_guest_madt_set_cpus(const uint32_t *ids, unsigned int n,
			      const struct boot_mmap_entry *mmap, unsigned int mmap_count);

#endif /* EXITPLAN_ACPI_H */
