/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's RAM: what the boot memory map makes available, minus the
 * hypervisor's region.  Apart from the guest loader so that the EPT code
 * (arch/vmx/ept.c) needs nothing of the loader to map it.
 */
#ifndef EXITPLAN_GUEST_RAM_H
#define EXITPLAN_GUEST_RAM_H

#include <stdint.h>

#include "runtime/host/phys_range.h"

struct boot_info;

/* The most memory ranges a guest's view of memory has. */
#define GUEST_MAX_RANGES	(2 * 64 + 8)

/*
 * The guest's RAM: every available range of the boot memory map, minus
 * the hypervisor's region [bi->hv_start, bi->hv_end), sorted, whole
 * pages.  Returns the count.
 */
unsigned int guest_ram_ranges(const struct boot_info *bi, struct phys_range *r,
			      unsigned int max);

#endif /* EXITPLAN_GUEST_RAM_H */
