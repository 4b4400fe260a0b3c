/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The profile's values as data, for the files off the exit path: they
 * read exitplan_profile instead of the generated profile.h's PROFILE_*
 * macros, so they compile once for every profile (runtime/runtime.mk's
 * common build).  The exit path's files keep the macros, which the
 * compiler folds (HV_PER_PROFILE_SRCS).  Defined in the generated
 * vmcs_setup.c and msr_policy.c of each profile.
 */
#ifndef EXITPLAN_PROFILE_VALUES_H
#define EXITPLAN_PROFILE_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/vmx/policy.h"
#include "arch/vmx/vmx_controls.h"
#include "runtime/vm/stats_level.h"

struct vcpu;
struct exit_stats;

struct exitplan_profile {
	const char *name;		/* PROFILE_NAME */
	const char *source;		/* PROFILE_SOURCE: profiles/NAME.yaml */
	unsigned int stats_level;	/* PROFILE_STATS_LEVEL: STATS_OFF, _COUNTS, _TIMING */
	bool apic_virtual;		/* PROFILE_APIC_VIRTUAL */
	bool apic_intercept_icr;	/* PROFILE_APIC_INTERCEPT_ICR */
	bool interrupts_direct;		/* PROFILE_INTERRUPTS_DIRECT */
	uint32_t ple_gap, ple_window;	/* PROFILE_PLE_GAP, PROFILE_PLE_WINDOW */
	uint32_t preemption_timer_value;	/* PROFILE_PREEMPTION_TIMER_VALUE */
	/* PROFILE_SCHED_SLICE_TICKS, _WAKE_GRANULARITY_TICKS, _PAUSE_YIELD_AFTER */
	uint32_t sched_slice_ticks, sched_wake_granularity_ticks, sched_pause_yield_after;
	unsigned int manual_msr_count;	/* PROFILE_MANUAL_MSR_COUNT */
	int gate_pause;			/* PROFILE_GATE_PAUSE; -1: no pause gate */
};

extern const struct exitplan_profile exitplan_profile;

/* The generated tables (declared for the per-profile files by profile.h and msr_policy.h). */
extern const struct vmx_profile_setup profile_vmx_setup;
extern const struct io_port_range profile_io_grant_ranges[];
extern const unsigned int profile_io_grant_range_count;
extern const struct msr_bitmap_rule profile_msr_bitmap_rules[];
extern const unsigned int profile_msr_bitmap_rule_count;
extern const uint32_t profile_msr_load_list[];
extern const unsigned int profile_msr_load_list_count;

/* PROFILE_STATS_CLAIM_FAST_KEYS(st) as a call (vmcs_setup.c). */
void profile_stats_claim_fast_keys(struct exit_stats *st);
/*
 * arch/vmx/manual_msrs.h's switching as calls (msr_policy.c), for the
 * paths that run once per turn or per vCPU, not per exit.
 */
void profile_msrs_on_exit_call(struct vcpu *vcpu);
void profile_msrs_before_entry_call(struct vcpu *vcpu);
int profile_msr_manual_slot_call(const struct vcpu *vcpu, uint32_t msr);

#endif /* EXITPLAN_PROFILE_VALUES_H */
