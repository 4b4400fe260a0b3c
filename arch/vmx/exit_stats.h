/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-vCPU exit statistics.  The generated dispatch counts an exit only
 * when the profile's statistics level is "counts" or "timing"; at "off"
 * it contains no reference to this file.
 */
#ifndef EXITPLAN_EXIT_STATS_H
#define EXITPLAN_EXIT_STATS_H

#include <stdint.h>

#include "vmx_exit_reasons.h"	/* generated: VMX_EXIT_REASON_MAX */

/* One slot per reason the SDM defines, and one for anything above. */
#define EXIT_STATS_OTHER	(VMX_EXIT_REASON_MAX + 1)
#define EXIT_STATS_SLOTS	(VMX_EXIT_REASON_MAX + 2)

struct exit_stats {
	uint64_t count[EXIT_STATS_SLOTS];
	uint64_t ticks[EXIT_STATS_SLOTS];	/* "timing" level only */
	uint64_t exit_tsc;			/* TSC at the exit stub's entry */
};

static inline unsigned int exit_stats_slot(uint16_t basic_reason)
{
	return basic_reason <= VMX_EXIT_REASON_MAX ? basic_reason : EXIT_STATS_OTHER;
}

#endif /* EXITPLAN_EXIT_STATS_H */
