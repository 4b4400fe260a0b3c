/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A range of physical (or guest-physical, identity-mapped) addresses,
 * [start, end): the one range type of the region choice, the guest's RAM,
 * the loaders and the EPT map.
 */
#ifndef EXITPLAN_PHYS_RANGE_H
#define EXITPLAN_PHYS_RANGE_H

#include <stdint.h>

struct phys_range {
	uint64_t start, end;		/* [start, end) */
};

#endif /* EXITPLAN_PHYS_RANGE_H */
