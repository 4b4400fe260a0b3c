// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/vm/sched.c: placement, round robin on slice end, block on HLT and
 * wake on a posted event, the spin yield that prefers a preempted vCPU
 * (KVM's kvm_vcpu_on_spin()), and the PAUSE count of the PAUSE-exiting
 * fallback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/vm/sched.h"

static struct sched s;

/* Start every vCPU (wake it) and let each CPU pick its first. */
static void start_all(void)
{
	bool sw;

	for (unsigned int i = 0; i < s.nr_vcpus; i++)
		sched_wake(&s, i);
	for (unsigned int c = 0; c < s.nr_cpus; c++)
		sched_pick_next(&s, c, 0, &sw);
}

static int next(unsigned int cpu)
{
	bool sw;

	return sched_pick_next(&s, cpu, 0, &sw);
}

/* A wakeup preemption's kick at time 0 (granularity 0 unless a test sets it). */
static bool resched(unsigned int cpu)
{
	uint64_t retry;

	return sched_resched(&s, cpu, 0, &retry);
}

static void test_init_and_placement(void **state)
{
	(void)state;
	assert_false(sched_init(&s, 0, 2, 1));
	assert_false(sched_init(&s, 1, 0, 1));
	assert_false(sched_init(&s, 1, SCHED_MAX_VCPUS + 1, 1));
	assert_false(sched_init(&s, SCHED_MAX_CPUS + 1, 2, 1));
	assert_true(sched_init(&s, 2, 5, 0));
	assert_int_equal(s.pause_yield_after, 1);	/* 0 means every PAUSE */
	/* vCPU i on CPU i mod p. */
	for (unsigned int i = 0; i < 5; i++) {
		assert_int_equal(sched_vcpu_cpu(&s, i), i % 2);
		assert_int_equal(sched_state(&s, i), SCHED_BLOCKED);
	}
	assert_int_equal(sched_cpu_vcpus(&s, 0), 3);
	assert_int_equal(sched_cpu_vcpus(&s, 1), 2);
	/* More CPUs than vCPUs: the spare ones are not used. */
	assert_true(sched_init(&s, 4, 2, 1));
	assert_int_equal(s.nr_cpus, 2);
	assert_int_equal(sched_vcpu_cpu(&s, 1), 1);
}

static void test_idle_cpu_picks_nothing(void **state)
{
	bool sw = true;

	(void)state;
	sched_init(&s, 1, 2, 1);
	assert_int_equal(sched_pick_next(&s, 0, 0, &sw), SCHED_NONE);
	assert_false(sw);
	/* Waking a vCPU of an idle CPU says the CPU must be woken. */
	assert_true(sched_wake(&s, 1));
	assert_int_equal(sched_pick_next(&s, 0, 0, &sw), 1);
	assert_true(sw);
	assert_int_equal(sched_state(&s, 1), SCHED_RUNNING);
	/* The CPU is busy now: a wake queues vCPU 0 and asks to kick the CPU (preemption). */
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);
	assert_int_equal(sched_state(&s, 0), SCHED_RUNNABLE);
	/* A RUNNING or RUNNABLE vCPU woken again: nothing changes. */
	assert_false(sched_wake(&s, 1));
	assert_false(sched_wake(&s, 0));
	assert_int_equal(s.cpu[0].nr_queued, 1);
	/* Out of range. */
	assert_false(sched_wake(&s, 7));
}

static void test_round_robin_on_slice_end(void **state)
{
	bool sw;

	(void)state;
	sched_init(&s, 1, 3, 1);
	start_all();
	assert_int_equal(sched_current(&s, 0), 0);
	for (unsigned int round = 0; round < 2; round++) {
		for (int want = 1; want <= 3; want++) {
			assert_true(sched_slice_end(&s, 0));
			assert_int_equal(sched_pick_next(&s, 0, 0, &sw), want % 3);
			assert_true(sw);
		}
	}
	assert_int_equal(s.cpu[0].switches, 6);
	assert_int_equal(s.vcpu[0].preemptions, 2);
	assert_int_equal(s.vcpu[1].switched_in, 2);
	/* Alone on its CPU a vCPU keeps it: no switch, not marked preempted. */
	sched_init(&s, 2, 2, 1);
	start_all();
	assert_false(sched_slice_end(&s, 1));
	assert_int_equal(sched_pick_next(&s, 1, 0, &sw), 1);
	assert_false(sw);
	assert_false(s.vcpu[1].preempted);
	assert_int_equal(s.cpu[1].switches, 0);
}

static void test_cpus_are_independent(void **state)
{
	(void)state;
	sched_init(&s, 2, 4, 1);	/* CPU 0: vCPUs 0, 2; CPU 1: 1, 3 */
	start_all();
	assert_int_equal(sched_current(&s, 0), 0);
	assert_int_equal(sched_current(&s, 1), 1);
	sched_slice_end(&s, 0);
	assert_int_equal(next(0), 2);
	assert_int_equal(sched_current(&s, 1), 1);	/* CPU 1 untouched */
	sched_slice_end(&s, 1);
	assert_int_equal(next(1), 3);
	assert_int_equal(s.cpu[0].nr_queued, 1);
	assert_int_equal(s.cpu[0].queue[s.cpu[0].head], 0);
	assert_int_equal(s.cpu[1].queue[s.cpu[1].head], 1);
}

static void test_block_until_woken(void **state)
{
	bool sw;

	(void)state;
	sched_init(&s, 1, 2, 1);
	start_all();			/* 0 runs, 1 queued */
	sched_block(&s, 0);
	assert_int_equal(sched_state(&s, 0), SCHED_BLOCKED);
	assert_int_equal(next(0), 1);
	assert_int_equal(s.vcpu[0].blocks, 1);
	/* A blocked vCPU is not run on slice end: the other keeps the CPU. */
	assert_false(sched_slice_end(&s, 0));
	assert_false(sched_has_queued(&s, 0));
	assert_true(sched_blocked(&s, 0));
	assert_int_equal(sched_pick_next(&s, 0, 0, &sw), 1);
	assert_false(sw);
	/* Woken by a posted event: back in the queue (the slice end switches too). */
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);
	assert_true(sched_has_queued(&s, 0));
	assert_false(sched_blocked(&s, 0));
	assert_true(sched_slice_end(&s, 0));
	assert_int_equal(next(0), 0);
	/* Both block: the CPU idles; a wake says to kick it. */
	sched_block(&s, 0);
	assert_int_equal(next(0), 1);
	sched_block(&s, 0);
	assert_int_equal(next(0), SCHED_NONE);
	assert_int_equal(sched_current(&s, 0), SCHED_NONE);
	assert_true(sched_wake(&s, 1));
	assert_int_equal(next(0), 1);
}

/*
 * The race a HLT handler closes: the vCPU blocks, then sees an event
 * that was posted meanwhile and wakes itself, before its CPU switches.
 * It runs on; no switch, and not queued behind the others.
 */
static void test_wake_before_switch_runs_on(void **state)
{
	bool sw;

	(void)state;
	sched_init(&s, 1, 2, 1);
	start_all();
	sched_block(&s, 0);
	assert_false(sched_wake(&s, 0));
	assert_int_equal(sched_state(&s, 0), SCHED_RUNNING);
	assert_int_equal(s.cpu[0].nr_queued, 1);
	assert_int_equal(sched_pick_next(&s, 0, 0, &sw), 0);
	assert_false(sw);
}

static void test_gone_is_never_run(void **state)
{
	(void)state;
	sched_init(&s, 1, 2, 1);
	start_all();
	sched_gone(&s, 0);
	assert_int_equal(sched_state(&s, 0), SCHED_GONE);
	assert_int_equal(next(0), 1);
	assert_false(sched_wake(&s, 0));
	assert_int_equal(sched_state(&s, 0), SCHED_GONE);
	sched_gone(&s, 0);	/* CPU 0's current, vCPU 1, stops too */
	assert_int_equal(next(0), SCHED_NONE);
}

/*
 * 3 vCPUs on 1 CPU: vCPU 0 halted and was woken, vCPU 1 was preempted
 * (likely lock holder) and is behind 0 in the queue.  The spinner, 2,
 * yields to 1.
 */
static void test_spin_prefers_preempted(void **state)
{
	(void)state;
	sched_init(&s, 1, 3, 1);
	start_all();			/* 0 runs; queue 1, 2 */
	sched_block(&s, 0);		/* 0 halts */
	assert_int_equal(next(0), 1);
	/* 0 woken; 1's slice ends before the kick comes: queue 0, 2, 1 (preempted). */
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);	/* queue 0, 2 */
	sched_slice_end(&s, 0);
	assert_true(s.vcpu[1].preempted);
	assert_false(s.vcpu[0].preempted);
	assert_int_equal(next(0), 0);
	assert_false(resched(0));	/* the kick, late: served by the switch */
	/* 0 spins: the preempted 1 is chosen over 2, 0 goes to the back, unmarked. */
	assert_true(sched_yield_on_spin(&s, 0));
	assert_int_equal(next(0), 1);
	assert_false(s.vcpu[1].preempted);	/* it runs: no longer a candidate */
	assert_false(s.vcpu[0].preempted);
	assert_int_equal(s.vcpu[0].spin_yields, 1);
	assert_int_equal(s.cpu[0].ple_yields, 1);
	/* 1 spins now (queue 2, 0, none preempted): the first in queue order. */
	assert_true(sched_yield_on_spin(&s, 0));
	assert_int_equal(next(0), 2);
}

static void test_spin_prefers_preempted_deep_in_queue(void **state)
{
	(void)state;
	sched_init(&s, 1, 4, 1);
	start_all();			/* 0 runs; queue 1, 2, 3 */
	sched_slice_end(&s, 0);		/* queue 1, 2, 3, 0(preempted) */
	assert_int_equal(next(0), 1);
	/* 1 spins: 0, last in the queue, is the one preempted. */
	assert_true(sched_yield_on_spin(&s, 0));
	assert_int_equal(next(0), 0);
	/* The others kept their order: 2, 3, then the spinner 1. */
	sched_block(&s, 0);
	assert_int_equal(next(0), 2);
	sched_block(&s, 0);
	assert_int_equal(next(0), 3);
	sched_block(&s, 0);
	assert_int_equal(next(0), 1);
}

static void test_spin_alone_keeps_cpu(void **state)
{
	bool sw;

	(void)state;
	sched_init(&s, 2, 2, 1);
	start_all();
	assert_false(sched_yield_on_spin(&s, 0));
	assert_int_equal(sched_pick_next(&s, 0, 0, &sw), 0);
	assert_false(sw);
	assert_int_equal(s.cpu[0].ple_yields, 0);
	/* Nor to a vCPU that is blocked. */
	sched_init(&s, 1, 2, 1);
	sched_wake(&s, 0);
	assert_int_equal(next(0), 0);
	assert_false(sched_yield_on_spin(&s, 0));
}

static void test_pause_exits_yield_after_n(void **state)
{
	(void)state;
	sched_init(&s, 1, 2, 3);
	start_all();
	assert_false(sched_pause_exit(&s, 0));
	assert_false(sched_pause_exit(&s, 0));
	assert_true(sched_pause_exit(&s, 0));	/* the third */
	assert_int_equal(next(0), 1);
	assert_int_equal(s.cpu[0].pause_yields, 1);
	assert_int_equal(s.cpu[0].ple_yields, 0);
	/* The count starts over when a vCPU is switched in. */
	assert_false(sched_pause_exit(&s, 0));
	sched_slice_end(&s, 0);
	assert_int_equal(next(0), 0);
	assert_false(sched_pause_exit(&s, 0));
	assert_false(sched_pause_exit(&s, 0));
	assert_true(sched_pause_exit(&s, 0));
	/* Alone, the Nth PAUSE yields to nobody and the count starts over. */
	sched_init(&s, 1, 1, 2);
	start_all();
	assert_false(sched_pause_exit(&s, 0));
	assert_false(sched_pause_exit(&s, 0));
	assert_int_equal(s.vcpu[0].pause_exits, 0);
}

/* Eight vCPUs on one CPU, each blocking and being woken in turn: the ring wraps. */
static void test_queue_wraps(void **state)
{
	(void)state;
	sched_init(&s, 1, SCHED_MAX_VCPUS, 1);
	start_all();
	for (unsigned int turn = 1; turn < 5 * SCHED_MAX_VCPUS; turn++) {
		unsigned int prev = (turn - 1) % SCHED_MAX_VCPUS;

		sched_block(&s, 0);
		/* The one blocked a turn before, woken while the CPU switches: to the back. */
		if (turn >= 2)
			assert_int_equal(sched_wake(&s, (prev + SCHED_MAX_VCPUS - 1) % SCHED_MAX_VCPUS),
					 SCHED_WAKE_NOTHING);
		assert_int_equal(next(0), turn % SCHED_MAX_VCPUS);
		assert_int_equal(s.cpu[0].nr_queued, SCHED_MAX_VCPUS - 2);
	}
}

/*
 * Wakeup preemption: a vCPU woken while a sibling runs cuts in at the
 * queue's front (woken ones in wake order), the running one goes right
 * behind them on the kick (marked preempted), the rest keep their order.
 */
static void test_wake_preempts_running(void **state)
{
	(void)state;
	sched_init(&s, 1, 4, 1);
	start_all();			/* 0 runs; queue 1, 2, 3 */
	sched_block(&s, 0);
	assert_int_equal(next(0), 1);	/* queue 2, 3 */
	sched_block(&s, 0);
	assert_int_equal(next(0), 2);	/* queue 3; 0 and 1 blocked */
	assert_false(resched(0));	/* nothing pending: no switch */
	assert_int_equal(sched_wake(&s, 1), SCHED_WAKE_PREEMPT);
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);	/* queue 1, 0, 3 */
	assert_true(resched(0));	/* queue 1, 0, 2, 3 */
	assert_true(s.vcpu[2].preempted);
	assert_int_equal(s.vcpu[2].preemptions, 1);
	assert_int_equal(s.cpu[0].wake_preemptions, 1);
	assert_false(resched(0));	/* served: a second kick does nothing */
	assert_int_equal(next(0), 1);
	sched_block(&s, 0);
	assert_int_equal(next(0), 0);
	sched_block(&s, 0);
	assert_int_equal(next(0), 2);
	sched_block(&s, 0);
	assert_int_equal(next(0), 3);
	/* Two vCPUs waking each other in turn do not starve a third in the queue. */
	sched_init(&s, 1, 3, 1);
	start_all();			/* 0 runs; queue 1, 2 */
	sched_block(&s, 0);
	assert_int_equal(next(0), 1);	/* queue 2 */
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);	/* queue 0, 2 */
	assert_true(resched(0));	/* queue 0, 1, 2 */
	assert_int_equal(next(0), 0);
	sched_block(&s, 0);		/* 0 halts; 1 is runnable, not woken */
	assert_int_equal(sched_wake(&s, 1), SCHED_WAKE_NOTHING);
	assert_int_equal(next(0), 1);
	sched_block(&s, 0);
	assert_int_equal(next(0), 2);
	/* Alone on its CPU a woken vCPU preempts nobody: the CPU was idle. */
	sched_init(&s, 2, 2, 1);
	assert_int_equal(sched_wake(&s, 1), SCHED_WAKE_IDLE);
	/* Off (wake_preempt=off): to the back of the queue, no kick, no preemption. */
	sched_init(&s, 1, 3, 1);
	s.no_wake_preempt = true;
	start_all();			/* 0 runs; queue 1, 2 */
	sched_block(&s, 0);
	assert_int_equal(next(0), 1);
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_NOTHING);	/* queue 2, 0 */
	assert_false(resched(0));
	assert_true(sched_slice_end(&s, 0));
	assert_int_equal(next(0), 2);
}

/*
 * A blocked vCPU whose timer came due, seen by its CPU while a sibling
 * runs (vcpu_switch.c's tick), is woken as a post wakes it: it cuts in,
 * and the running one keeps its place before the rest of the queue --
 * not the slice end's back of the queue.
 */
static void test_timer_wake_keeps_place(void **state)
{
	(void)state;
	sched_init(&s, 1, 4, 1);
	for (unsigned int i = 0; i < 3; i++)
		sched_wake(&s, i);	/* 3 stays blocked: halted with its timer armed */
	assert_int_equal(next(0), 0);	/* queue 1, 2 */
	assert_int_equal(sched_wake(&s, 3), SCHED_WAKE_PREEMPT);	/* queue 3, 1, 2 */
	assert_true(resched(0));	/* queue 3, 0, 1, 2 */
	assert_int_equal(next(0), 3);
	sched_block(&s, 0);
	assert_int_equal(next(0), 0);
	sched_block(&s, 0);
	assert_int_equal(next(0), 1);
	sched_block(&s, 0);
	assert_int_equal(next(0), 2);
}

/*
 * The wakeup granularity: a woken vCPU preempts the running one only
 * once that has run wake_granularity ticks of its turn; before, the
 * preemption stays pending and the CPU is told when to ask again.  A
 * slice end meanwhile serves it as the switch does.
 */
static void test_wake_granularity(void **state)
{
	uint64_t retry;
	bool sw;

	(void)state;
	sched_init(&s, 1, 3, 1);
	s.wake_granularity = 1000;
	start_all();			/* 0 runs since 0; queue 1, 2 */
	sched_block(&s, 0);
	assert_int_equal(sched_pick_next(&s, 0, 5000, &sw), 1);	/* 1's turn from 5000 */
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);	/* queue 0, 2 */
	assert_false(sched_resched(&s, 0, 5400, &retry));
	assert_int_equal(retry, 6000);
	assert_true(sched_resched_pending(&s, 0));
	assert_int_equal(s.vcpu[1].preemptions, 0);
	/* Asked again too early: still not; at the granularity: preempted. */
	assert_false(sched_resched(&s, 0, 5999, &retry));
	assert_int_equal(retry, 6000);
	assert_true(sched_resched(&s, 0, 6000, &retry));
	assert_int_equal(retry, 0);
	assert_false(sched_resched_pending(&s, 0));
	assert_int_equal(sched_pick_next(&s, 0, 6000, &sw), 0);	/* queue 1, 2 */
	/* 0's turn started at 6000: a wake at 6100 waits, the slice's end takes it. */
	sched_block(&s, 0);
	assert_int_equal(sched_pick_next(&s, 0, 6050, &sw), 1);
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);	/* queue 0, 2 */
	assert_false(sched_resched(&s, 0, 6100, &retry));
	assert_true(sched_slice_end(&s, 0));
	assert_int_equal(sched_pick_next(&s, 0, 6200, &sw), 0);
	assert_false(sched_resched_pending(&s, 0));
	/* Granularity 0: at once, as before. */
	s.wake_granularity = 0;
	sched_block(&s, 0);
	assert_int_equal(sched_pick_next(&s, 0, 7000, &sw), 2);
	assert_int_equal(sched_wake(&s, 0), SCHED_WAKE_PREEMPT);
	assert_true(sched_resched(&s, 0, 7000, &retry));
}

/*
 * An idle CPU halts until a kick; with a blocked vCPU's timer armed only
 * when a host timer ends the halt at its deadline (else only polling
 * sees it come); on one CPU nobody can kick: it halts only for a timer.
 */
static void test_idle_halts_only_without_a_timer(void **state)
{
	(void)state;
	sched_init(&s, 2, 4, 1);
	assert_true(sched_idle_may_halt(&s, 0, false));
	assert_true(sched_idle_may_halt(&s, 0, true));
	assert_false(sched_idle_may_halt(&s, 12345, false));
	assert_true(sched_idle_may_halt(&s, 12345, true));
	sched_init(&s, 1, 3, 1);
	assert_false(sched_idle_may_halt(&s, 0, false));
	assert_false(sched_idle_may_halt(&s, 0, true));
	assert_false(sched_idle_may_halt(&s, 12345, false));
	assert_true(sched_idle_may_halt(&s, 12345, true));
	/* A new machine's counters start at 0. */
	assert_int_equal(s.cpu[0].idle_halts, 0);
	assert_int_equal(s.cpu[0].idle_timer_halts, 0);
	assert_int_equal(s.cpu[0].idle_polls, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_and_placement),
		cmocka_unit_test(test_wake_granularity),
		cmocka_unit_test(test_timer_wake_keeps_place),
		cmocka_unit_test(test_idle_cpu_picks_nothing),
		cmocka_unit_test(test_round_robin_on_slice_end),
		cmocka_unit_test(test_cpus_are_independent),
		cmocka_unit_test(test_block_until_woken),
		cmocka_unit_test(test_wake_before_switch_runs_on),
		cmocka_unit_test(test_gone_is_never_run),
		cmocka_unit_test(test_spin_prefers_preempted),
		cmocka_unit_test(test_spin_prefers_preempted_deep_in_queue),
		cmocka_unit_test(test_spin_alone_keeps_cpu),
		cmocka_unit_test(test_pause_exits_yield_after_n),
		cmocka_unit_test(test_queue_wraps),
		cmocka_unit_test(test_wake_preempts_running),
		cmocka_unit_test(test_idle_halts_only_without_a_timer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
