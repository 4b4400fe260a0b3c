/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host microbenchmark of the generated VM-exit dispatch.
 *
 * Every profile's generated/PROFILE/exit_dispatch.c is compiled twice
 * (plain, and with retpolines) into its own object, its symbols renamed
 * with -D so that all of them link into one process, and fed sequences of
 * basic exit reasons drawn from each profile's exit_mix.  The handlers are
 * trivial fakes, so what is timed is the dispatch: the statistics count
 * (when the profile has one), the direct-call chain and the table lookup.
 *
 * This is timing: it runs in `make bench`, never in a pass/fail test.
 */
#ifndef EXITPLAN_BENCH_H
#define EXITPLAN_BENCH_H

#include <stddef.h>
#include <stdint.h>

struct vcpu;

/*
 * One compiled dispatch (tests/bench/host/variant.c, built once per profile
 * and retpoline setting).  run() calls the dispatch once per element of
 * reasons[] with a direct call, as the exit stub does, and returns the sum
 * of the actions it returned (so the calls cannot be dropped).
 */
struct bench_variant {
	const char *profile;		/* PROFILE_NAME of generated/PROFILE */
	int retpoline;			/* compiled with -mindirect-branch=thunk */
	int stats_level;		/* PROFILE_STATS_LEVEL: STATS_OFF = 0 */
	unsigned int direct_reasons;	/* PROFILE_DIRECT_REASONS: length of the chain */
	size_t vcpu_size;		/* sizeof(struct vcpu) with this profile's msr_policy.h */
	uint64_t (*run)(struct vcpu *vcpu, const uint16_t *reasons, size_t n);
};

/* One exit reason of a mix and how many of a sequence's elements it gets. */
struct bench_mix_entry {
	uint16_t reason;
	uint32_t count;
};

/*
 * A profile's exit_mix, apportioned to BENCH_SEQ_LEN exits (largest
 * remainder, by tests/bench/host/bench_data.py at build time).
 */
struct bench_mix {
	const char *profile;		/* profiles/PROFILE.yaml */
	const char *source_kind;	/* exit_mix.source.kind: estimate, measured */
	unsigned int n_entries;
	const struct bench_mix_entry *entries;
};

/* Generated: $(BUILD)/bench/host/bench_data.c. */
extern const unsigned int bench_seq_len;
extern const struct bench_mix bench_mixes[];
extern const unsigned int bench_mix_count;
extern const struct bench_variant *const bench_variants[];
extern const unsigned int bench_variant_count;

/*
 * The floor (handlers.c): the same loop calling a function that calls one
 * fake handler, with no decision in between.  What is left above it is the
 * dispatch's own work.
 */
uint64_t bench_floor_run(struct vcpu *vcpu, const uint16_t *reasons, size_t n);

#endif /* EXITPLAN_BENCH_H */
