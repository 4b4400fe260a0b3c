/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A profile's exit statistics level (statistics: off, counts, timing):
 * PROFILE_STATS_LEVEL of the generated runtime_profile.h, and
 * exitplan_profile.stats_level (arch/vmx/profile_values.h) for the files
 * compiled once for every profile.  The generated runtime_profile.h
 * defines the same (it includes nothing), so the two agree or the
 * compiler says so.
 */
#ifndef EXITPLAN_STATS_LEVEL_H
#define EXITPLAN_STATS_LEVEL_H

#define STATS_OFF		0
#define STATS_COUNTS		1
#define STATS_TIMING		2

#endif /* EXITPLAN_STATS_LEVEL_H */
