// SPDX-License-Identifier: GPL-2.0-only
/*
 * One profile's generated dispatch (generated/PROFILE/exit_dispatch.c)
 * against fake handlers: every basic exit reason 0..65535 reaches exactly
 * the handler the generated VMX_EXIT_HANDLERS() names, or
 * handle_unexpected_exit(), exactly once; the hot reasons are called
 * directly and are absent from vmx_exit_table; the statistics are counted
 * exactly when the profile asks for them, and nothing else in the vCPU is
 * touched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/vmx/exit.h"
#include "exit_handlers.h"
#include "profile.h"
#include "profile_facts.h"	/* build/unit/PROFILE: derived from the profile */
#include "arch/vmx/vcpu.h"
#include "vmx_exit_reasons.h"

#define N_REASONS 65536u	/* every value of the 16-bit basic exit reason */

/* What the fakes saw during one vmx_dispatch_exit(). */
static struct {
	unsigned int calls;		/* handlers of spec/handlers.yaml */
	vmx_exit_handler_t handler;	/* which one */
	unsigned int unexpected;	/* handle_unexpected_exit() */
	uint16_t unexpected_reason;
	struct vcpu *vcpu;
} seen;

/* What the fakes return, so the test sees it passed through unchanged. */
static enum vmx_exit_action fake_result;

static enum vmx_exit_action fake_handled(struct vcpu *vcpu, vmx_exit_handler_t self)
{
	seen.calls++;
	seen.handler = self;
	seen.vcpu = vcpu;
	return fake_result;
}

/*
 * One fake per handler function.  Some functions serve several reasons
 * (handle_vmx_instruction), so VMX_EXIT_HANDLERS() would define them more
 * than once: the functions come from profile_facts.h, once each, and the
 * reason -> function mapping under test from the generated X-macro.
 */
#define DEFINE_FAKE(fn)							\
	enum vmx_exit_action fn(struct vcpu *vcpu)			\
	{								\
		return fake_handled(vcpu, fn);				\
	}
UNIT_HANDLER_FUNCS(DEFINE_FAKE)

enum vmx_exit_action handle_unexpected_exit(struct vcpu *vcpu, uint16_t basic_reason)
{
	seen.unexpected++;
	seen.unexpected_reason = basic_reason;
	seen.vcpu = vcpu;
	return fake_result;
}

/*
 * The handler spec/handlers.yaml names for each reason, NULL for none;
 * and the handler the dispatch calls: the same but where the profile has
 * a fast one (fast.cpuid_leaves: handle_cpuid_fast()).
 */
static vmx_exit_handler_t expected[N_REASONS];
static vmx_exit_handler_t called[N_REASONS];

static int setup_expected(void **state)
{
	(void)state;
	memset(expected, 0, sizeof(expected));
#define EXPECT(reason, fn) expected[reason] = fn;
	VMX_EXIT_HANDLERS(EXPECT)
#undef EXPECT
	memcpy(called, expected, sizeof(called));
#define FAST(reason, fn) called[reason] = fn;
	UNIT_FAST_HANDLERS(FAST)
#undef FAST
	return 0;
}

/* The generated X-macro says what spec/handlers.yaml says, no more. */
static void test_handler_macro_matches_spec(void **state)
{
	static vmx_exit_handler_t from_spec[N_REASONS];
	unsigned int r;

	(void)state;
#define SPEC(reason, fn) from_spec[reason] = fn;
	UNIT_SPEC_HANDLERS(SPEC)
#undef SPEC
	for (r = 0; r < N_REASONS; r++)
		if (from_spec[r] != expected[r])
			fail_msg("reason %u (%s): exit_handlers.h and spec/handlers.yaml disagree",
				 r, vmx_exit_reason_name(r));
}

static struct vcpu vcpu;

static enum vmx_exit_action dispatch(uint16_t reason)
{
	memset(&seen, 0, sizeof(seen));
	/* Alternate the result so a dispatch that invents its own is caught. */
	fake_result = (reason & 1) ? VMX_EXIT_STOP : VMX_EXIT_RESUME;
	return vmx_dispatch_exit(&vcpu, reason);
}

static void test_every_reason_reaches_its_handler_once(void **state)
{
	unsigned int r, handled = 0;

	(void)state;
	for (r = 0; r < N_REASONS; r++) {
		enum vmx_exit_action ret = dispatch((uint16_t)r);

		assert_int_equal(ret, fake_result);
		assert_ptr_equal(seen.vcpu, &vcpu);
		if (expected[r]) {
			if (seen.calls != 1 || seen.unexpected || seen.handler != called[r])
				fail_msg("reason %u (%s): %u handler calls, %u unexpected, "
					 "wrong handler: %d", r, vmx_exit_reason_name(r),
					 seen.calls, seen.unexpected, seen.handler != called[r]);
			handled++;
		} else {
			if (seen.calls != 0 || seen.unexpected != 1)
				fail_msg("reason %u (%s) has no handler: %u handler calls, "
					 "%u unexpected", r, vmx_exit_reason_name(r),
					 seen.calls, seen.unexpected);
			assert_int_equal(seen.unexpected_reason, r);
		}
	}
	/* The runtime handles some reasons, and only reasons the SDM defines. */
	assert_true(handled > 0);
	for (r = VMX_EXIT_REASON_MAX + 1; r < N_REASONS; r++)
		assert_null(expected[r]);
}

/* The reasons this profile calls directly (profile_facts.py). */
static const uint16_t direct[] = {
#define DIRECT(reason) reason,
	UNIT_DIRECT_REASONS(DIRECT)
#undef DIRECT
};
/* A variable, not the macro: with no direct reason, "i < 0" would not compile. */
static const unsigned int n_direct = UNIT_DIRECT_COUNT;

static void test_direct_reasons_bypass_the_table(void **state)
{
	unsigned int i, r, null_handled = 0;

	(void)state;
	assert_int_equal(UNIT_DIRECT_COUNT, PROFILE_DIRECT_REASONS);
	for (i = 0; i < n_direct; i++) {
		r = direct[i];
		assert_non_null(expected[r]);
		/* Dispatched correctly although the table has no entry... */
		dispatch((uint16_t)r);
		assert_int_equal(seen.calls, 1);
		assert_ptr_equal(seen.handler, called[r]);
#if UNIT_DISPATCH_HAS_TABLE
		/* ...so it never reads the table. */
		assert_null(vmx_exit_table[r]);
#endif
	}
#if UNIT_DISPATCH_HAS_TABLE
	/* Every other handled reason is in the table; nothing else is. */
	for (r = 0; r <= VMX_EXIT_REASON_MAX; r++) {
		bool is_direct = false;

		for (i = 0; i < n_direct; i++)
			is_direct |= direct[i] == r;
		if (is_direct)
			continue;
		assert_ptr_equal(vmx_exit_table[r], called[r]);
		null_handled += !vmx_exit_table[r] && expected[r];
	}
	assert_int_equal(null_handled, 0);
#else
	(void)null_handled;
	assert_int_equal(UNIT_DIRECT_COUNT, 0);
#endif
}

/*
 * Statistics: with counts or timing, each exit adds one to its reason's
 * slot (reasons above VMX_EXIT_REASON_MAX share EXIT_STATS_OTHER); with
 * off, struct exit_stats is not touched at all.  Either way the dispatch
 * writes nothing else in the vCPU: compare it byte for byte against a
 * canary copy with only the expected counts applied.
 */
static void test_statistics(void **state)
{
	static struct vcpu canary;
	unsigned int r;

	(void)state;
	memset(&vcpu, 0x5a, sizeof(vcpu));
	memcpy(&canary, &vcpu, sizeof(vcpu));
	for (r = 0; r < N_REASONS; r++) {
		dispatch((uint16_t)r);
		if (PROFILE_STATS_LEVEL != STATS_OFF)
			canary.stats.count[exit_stats_slot((uint16_t)r)]++;
	}
	assert_memory_equal(&vcpu, &canary, sizeof(vcpu));

	if (PROFILE_STATS_LEVEL != STATS_OFF) {
		/* Spot-check the arithmetic the comparison relied on. */
		assert_int_equal(vcpu.stats.count[0] - 0x5a5a5a5a5a5a5a5aull, 1);
		assert_int_equal(vcpu.stats.count[EXIT_STATS_OTHER] - 0x5a5a5a5a5a5a5a5aull,
				 N_REASONS - (VMX_EXIT_REASON_MAX + 1));
	}
	memset(&vcpu, 0, sizeof(vcpu));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handler_macro_matches_spec),
		cmocka_unit_test(test_every_reason_reaches_its_handler_once),
		cmocka_unit_test(test_direct_reasons_bypass_the_table),
		cmocka_unit_test(test_statistics),
	};

	return cmocka_run_group_tests_name("dispatch of profile " PROFILE_NAME, tests,
					   setup_expected, NULL);
}
