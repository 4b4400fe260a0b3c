/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * EPT: the guest-physical address space (SDM Vol. 3C 29.3).
 *
 * exitplan identity-maps guest-physical to host-physical memory with the
 * largest pages that fit: the guest's RAM, the firmware (ROMs, ACPI
 * tables, the EBDA) and the device pages the runtime grants (the local
 * APIC's).  Nothing else is present -- default deny, as for ports: an
 * access to the hypervisor region is reported, one to an address nothing
 * grants is answered as open bus (ept_exits.c).
 */
#ifndef EXITPLAN_EPT_H
#define EXITPLAN_EPT_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/boot_info.h"	/* BOOT_MMAP_MAX */
#include "runtime/loader/guest_ram.h"	/* GUEST_MAX_RANGES */

/* What a guest-physical range is, for the identity map. */
enum ept_range_kind {
	EPT_RANGE_HOLE,		/* not present: EPT violation */
	EPT_RANGE_RAM,		/* write-back */
	EPT_RANGE_MMIO,		/* uncacheable, not executable: a granted device page */
	EPT_RANGE_ROM,		/* uncacheable, executable: the BIOS and option ROMs */
	EPT_RANGE_FIRMWARE,	/* write-back, not executable: ACPI tables and NVS, the EBDA */
};

/*
 * The firmware the guest may run (real-mode BIOS calls, option ROMs):
 * the legacy ROM area below 1 MiB and the BIOS flash below 4 GiB
 * (docs/PLATFORM.md).  Every other non-RAM address below 4 GiB
 * is a device: an instruction fetch there is an EPT violation, reported,
 * never an instruction stream the emulator has to make sense of.
 */
#define EPT_LEGACY_ROM_START	0xc0000ull
#define EPT_LEGACY_ROM_END	0x100000ull
#define EPT_BIOS_FLASH_START	0xfff00000ull
#define EPT_BIOS_FLASH_END	0x100000000ull

struct ept_range {
	uint64_t start, end;	/* [start, end), 4-KiB aligned */
	enum ept_range_kind kind;
};

struct ept {
	uint64_t *pml4;		/* identity: virtual == physical */
	bool use_1g;		/* IA32_VMX_EPT_VPID_CAP allows 1-GiB pages */
	bool use_2m;
	unsigned int pages;	/* page-table pages used */
	uint64_t mapped[3];	/* bytes mapped with 4-KiB, 2-MiB, 1-GiB pages */
};

struct boot_info;

/* The most device grants ept_identity_ranges() takes (vmx.c: the local APIC page). */
#define EPT_MAX_GRANTS		8

/*
 * The most ranges ept_identity_ranges() returns: each guest RAM range,
 * firmware entry of the boot map and grant adds at most two boundaries,
 * the holes, the ROMs and 4 GiB a few more.
 */
#define EPT_IDENTITY_MAX_RANGES	(2 * GUEST_MAX_RANGES + 2 * BOOT_MMAP_MAX + 2 * EPT_MAX_GRANTS + 12)

/*
 * The identity map's ranges for boot memory map @bi: guest RAM
 * (guest_ram_ranges(): the available entries minus the hypervisor)
 * write-back; the firmware ROMs uncached and executable; the firmware's
 * data (the map's ACPI entries, its reserved entries below 1 MiB)
 * write-back and not executable; the device pages @grants (4-KiB aligned,
 * below 4 GiB) uncached and not executable; everything else -- legacy
 * VGA, the PCI hole, the I/O APIC, the HPET, the hypervisor region, the
 * MMIO test page -- not present.  In that priority where they overlap:
 * a grant never maps RAM as a device.  Sorted, contiguous from 0 to the
 * end of the highest RAM range (at least 4 GiB), adjacent ranges of
 * different kinds.  Returns the count, 0 when more than @max would be
 * needed or a grant is not whole pages below 4 GiB.
 */
unsigned int ept_identity_ranges(const struct boot_info *bi, const struct ept_range *grants,
				 unsigned int n_grants, struct ept_range *out, unsigned int max);

/*
 * Build the identity map of @ranges (sorted, not overlapping; gaps
 * between them are holes), as ept_identity_ranges() returns them.
 * false when out of memory.
 */
bool ept_build(struct ept *ept, const struct ept_range *ranges, unsigned int n);

/* The leaf entry for @gpa, or 0 when not present; *level = 1 (4K) .. 3 (1G). */
uint64_t ept_lookup(const struct ept *ept, uint64_t gpa, unsigned int *level);

/* The EPT pointer for VMCS EPT_POINTER: WB paging structures, 4 levels. */
uint64_t ept_pointer(const struct ept *ept);

/* Change the leaf flags of one 4-KiB page, splitting a large page around it (ept.c). */
bool ept_set_4k(struct ept *ept, uint64_t gpa, uint64_t flags);

#endif /* EXITPLAN_EPT_H */
