// SPDX-License-Identifier: GPL-2.0-only
/*
 * One compiled dispatch of the host microbenchmark: built once per profile
 * and retpoline setting, with the same flags and the same renames as that
 * profile's exit_dispatch.c (tests/bench/bench.mk):
 *   -Dvmx_dispatch_exit=vmx_dispatch_exit_<variant>
 *   -Dvmx_exit_table=vmx_exit_table_<variant>
 *   -DBENCH_VARIANT_SYM=bench_variant_<variant> -DBENCH_RETPOLINE=0|1
 * and -iquote generated/PROFILE, so struct vcpu has this profile's layout.
 */
#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "arch/vmx/exit.h"
#include "profile.h"
#include "arch/vmx/vcpu.h"

#if !defined(BENCH_VARIANT_SYM) || !defined(BENCH_RETPOLINE)
#error "build with -DBENCH_VARIANT_SYM=... -DBENCH_RETPOLINE=0|1 (tests/bench/bench.mk)"
#endif

/*
 * A direct call per exit, like the exit stub's: the only indirect branch
 * in the loop is the one the dispatch itself takes (its table).  noinline
 * keeps the loop out of the caller; the dispatch is in another object, so
 * without LTO it cannot be inlined here either.
 */
static __attribute__((noinline)) uint64_t run(struct vcpu *vcpu, const uint16_t *reasons,
					       size_t n)
{
	uint64_t actions = 0;
	size_t i;

	for (i = 0; i < n; i++)
		actions += vmx_dispatch_exit(vcpu, reasons[i]);
	return actions;
}

const struct bench_variant BENCH_VARIANT_SYM = {
	.profile = PROFILE_NAME,
	.retpoline = BENCH_RETPOLINE,
	.stats_level = PROFILE_STATS_LEVEL,
	.direct_reasons = PROFILE_DIRECT_REASONS,
	.vcpu_size = sizeof(struct vcpu),
	.run = run,
};
