/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The vCPU scheduler, architecture-neutral: a run queue per physical
 * CPU and the decisions made on the events that end a vCPU's turn --
 * the end of its time slice, HLT, a PAUSE-loop exit (or, without
 * PAUSE-loop exiting, every Nth PAUSE exit) -- and on the event that
 * makes one runnable again: an interrupt, IPI, NMI, INIT or STARTUP
 * posted to it (runtime/vm/vm.h).  No VT-x here: the VMM switches VMCSs on
 * what these functions decide, and they are unit-tested on the host
 * (tests/unit/test_sched.c).
 *
 * Placement is static: vCPU i lives on CPU i mod p, for good.  No
 * migration, so no vCPU ever needs its VMCS moved between CPUs (a VMCS
 * is VMCLEARed on the CPU it was last loaded on, SDM Vol. 3C 25.11.3).
 *
 * States: RUNNING (the CPU's current vCPU), RUNNABLE (in the CPU's run
 * queue), BLOCKED (halted, or waiting for STARTUP: only sched_wake()
 * makes it runnable) and GONE (stopped for good).
 *
 * The spin-yield policy is KVM's kvm_vcpu_on_spin() in small: a vCPU
 * that spins gives its CPU to a runnable vCPU that was preempted while
 * running (its slice ended: it may hold the lock the spinner waits for)
 * in preference to one that merely woke from HLT; with none runnable
 * the spinner keeps its CPU.
 *
 * Locking: each CPU's queue and the state of every vCPU on it are under
 * that CPU's lock (struct sched_cpu.lock).  The CPU itself takes it for
 * its decisions (slice end, block, yield, pick), a poster on any CPU
 * takes it to wake a vCPU there; since a vCPU never changes CPUs, no
 * operation needs two CPUs' locks, and none is held across a VM entry.
 * The vCPU's own lock (runtime/vm/vm.h) is never taken inside it: events
 * are posted first (vm.h), the vCPU woken after.
 */
#ifndef EXITPLAN_SCHED_H
#define EXITPLAN_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/layout.h"
#include "runtime/host/spinlock.h"

#define SCHED_MAX_VCPUS		8
#define SCHED_MAX_CPUS		HV_MAX_CPUS
/* No vCPU: the CPU is idle. */
#define SCHED_NONE		(-1)

/* The default slice and PAUSE count when a profile names none (spec/profile.schema.json). */
#define SCHED_DEFAULT_SLICE_TICKS	200000
#define SCHED_DEFAULT_PAUSE_YIELD_AFTER	64
/*
 * The default wakeup granularity (sched_resched()): about the cost of a
 * VMCS switch and a few exits, so a storm of wakes cannot cut a turn
 * shorter than what switching costs.  Measured (make bench's sleeping
 * lock, 4 vCPUs on 2 CPUs, k=200): 0, 1000 and 2000 ticks finish in
 * the same 4157400 ticks; 5000 takes 4626975 and 20000 4726070 (each
 * woken lock waiter waits for the granularity), no better than without
 * wakeup preemption.  CFS's 1 ms is a fraction of its latency; here the
 * woken vCPU is typically the one the others wait for.
 */
#define SCHED_DEFAULT_WAKE_GRANULARITY_TICKS	2000

enum sched_state {
	SCHED_BLOCKED = 0,	/* halted or waiting for STARTUP: only a wake runs it */
	SCHED_RUNNABLE,		/* in its CPU's run queue */
	SCHED_RUNNING,		/* its CPU's current vCPU */
	SCHED_GONE,		/* stopped for good */
};

struct sched_vcpu {
	unsigned int id;
	unsigned int cpu;		/* where it lives: id mod the CPU count */
	enum sched_state state;
	/*
	 * It left its CPU while running (its slice ended): the likely lock
	 * holder a spinner yields to first.  Cleared when it blocks, when
	 * it yields on a spin itself, and when it is switched in.
	 */
	bool preempted;
	unsigned int pause_exits;	/* plain PAUSE exits since it last yielded or was switched in */
	/* For the report. */
	uint64_t switched_in;		/* turns it got (first one included) */
	uint64_t preemptions, blocks, spin_yields;
};

struct sched_cpu {
	spinlock_t lock;
	int current;			/* vCPU id, or SCHED_NONE */
	int last;			/* the vCPU it ran last (whose VMCS is loaded), or SCHED_NONE */
	/* The run queue, in order: queue[head], queue[head + 1], ... (mod SCHED_MAX_VCPUS). */
	uint8_t queue[SCHED_MAX_VCPUS];
	unsigned int head, nr_queued;
	/* For the report: a switch loads another vCPU's VMCS than the last one. */
	uint64_t switches;
	uint64_t ple_yields, pause_yields;
	/*
	 * Wakeup preemption (sched_wake(), sched_resched()): resched is set
	 * when a woken vCPU should take the CPU from its running current
	 * one, until the CPU acts on it or switches anyway; nr_cut counts
	 * the woken vCPUs that cut in at the queue's front, in wake order.
	 */
	bool resched;
	unsigned int nr_cut;
	uint64_t wake_preemptions;
	/* When the current vCPU got the CPU (sched_pick_next()'s @now): its turn's start. */
	uint64_t turn_start;
	/*
	 * Idle (every vCPU blocked): halted until a kick, halted until a
	 * blocked vCPU's timer (or a kick) on the host timer, or polled.
	 */
	uint64_t idle_halts, idle_timer_halts, idle_polls;
};

struct sched {
	unsigned int nr_cpus, nr_vcpus;
	unsigned int pause_yield_after;	/* plain PAUSE exits before a yield (>= 1) */
	bool no_wake_preempt;		/* wakeup preemption off (for comparison: make bench) */
	/* A current vCPU runs at least this long (ticks) before a wake preempts it: sched_resched(). */
	uint64_t wake_granularity;
	struct sched_cpu cpu[SCHED_MAX_CPUS];
	struct sched_vcpu vcpu[SCHED_MAX_VCPUS];
};

/*
 * @nr_vcpus vCPUs (1 .. SCHED_MAX_VCPUS) on @nr_cpus CPUs (1 .. SCHED_MAX_CPUS,
 * at most @nr_vcpus are used), all BLOCKED; @pause_yield_after 0 means 1.
 * False when a count is out of range.
 */
bool sched_init(struct sched *s, unsigned int nr_cpus, unsigned int nr_vcpus,
		unsigned int pause_yield_after);

/* The CPU vCPU @id lives on (static: id mod the CPU count). */
static inline unsigned int sched_vcpu_cpu(const struct sched *s, unsigned int id)
{
	return id % s->nr_cpus;
}

/* How many vCPUs live on CPU @cpu. */
unsigned int sched_cpu_vcpus(const struct sched *s, unsigned int cpu);

/* What a wake asks of the woken vCPU's CPU. */
enum sched_wake_result {
	SCHED_WAKE_NOTHING = 0,	/* nothing: it runs when the CPU next picks */
	SCHED_WAKE_IDLE,	/* the CPU is idle: wake it to run the vCPU */
	SCHED_WAKE_PREEMPT,	/* the CPU runs another vCPU: kick it, sched_resched() there */
};

/*
 * Make vCPU @id runnable: a BLOCKED one joins its CPU's run queue (or,
 * when it is still that CPU's current vCPU -- it blocked but its CPU
 * has not yet switched away -- simply runs on).  SCHED_WAKE_IDLE when
 * its CPU is idle and must be woken to run it.
 *
 * Wakeup preemption (as CFS's for a woken task, which is what KVM's
 * halted vCPUs get): when the CPU is running another vCPU, the woken
 * one cuts in at the queue's front (behind earlier cut-ins, in wake
 * order) and SCHED_WAKE_PREEMPT says to kick the CPU, whose
 * sched_resched() then gives it the CPU -- instead of waiting up to
 * the rest of the running vCPU's slice.  The rest of the queue keeps
 * its order, so a pair of vCPUs waking each other cannot starve it.
 *
 * With no_wake_preempt set (the hypervisor's wake_preempt=off) the woken
 * one queues at the back and waits for the slice's end, as before.
 *
 * A RUNNING or RUNNABLE vCPU needs nothing (it takes its events when it
 * next enters); a GONE one stays gone.
 */
enum sched_wake_result sched_wake(struct sched *s, unsigned int id);

/*
 * On @cpu at @now, after a SCHED_WAKE_PREEMPT kick (or a blocked
 * sibling's timer the CPU saw come due, woken there): true when its
 * current vCPU gives the CPU to the woken one(s) -- it goes right behind
 * them, marked preempted (it was running: a likely lock holder), and
 * keeps its place before the rest of the queue; sched_pick_next() then
 * switches.  False when no preemption is pending (the CPU switched
 * meanwhile), or when the current vCPU has run less than
 * wake_granularity ticks of its turn (CFS's wakeup granularity: a wake
 * storm cannot cut every turn to nothing): the preemption stays pending,
 * and *@retry_at says when to ask again (else 0).
 */
bool sched_resched(struct sched *s, unsigned int cpu, uint64_t now, uint64_t *retry_at);

/* Is a wakeup preemption pending on @cpu (a lock-free peek for the VMM's timer)? */
static inline bool sched_resched_pending(struct sched *s, unsigned int cpu)
{
	return __atomic_load_n(&s->cpu[cpu].resched, __ATOMIC_ACQUIRE);
}

/*
 * The current vCPU of @cpu halted with nothing to wake it yet: it is
 * BLOCKED until sched_wake().  The caller checks for an event posted
 * meanwhile after this (and wakes it if there is one), then calls
 * sched_pick_next(): no wake-up is lost between the check and the block.
 */
void sched_block(struct sched *s, unsigned int cpu);

/* The current vCPU of @cpu stopped for good. */
void sched_gone(struct sched *s, unsigned int cpu);

/*
 * The slice of @cpu's current vCPU ended: to the back of the queue,
 * marked preempted, and true (sched_pick_next() then switches); false,
 * and it runs on, when no other vCPU is runnable there.
 */
bool sched_slice_end(struct sched *s, unsigned int cpu);

/* Is vCPU @id BLOCKED (for the VMM's wake-up checks, e.g. a due timer)? */
static inline bool sched_blocked(struct sched *s, unsigned int id)
{
	return __atomic_load_n(&s->vcpu[id].state, __ATOMIC_ACQUIRE) == SCHED_BLOCKED;
}

/* Does @cpu have a vCPU waiting in its run queue (a lock-free peek for the idle loop)? */
static inline bool sched_has_queued(struct sched *s, unsigned int cpu)
{
	return __atomic_load_n(&s->cpu[cpu].nr_queued, __ATOMIC_ACQUIRE) != 0;
}

/*
 * An idle CPU (no vCPU runnable there) halts until a poster kicks it,
 * or, when it must watch a timer -- @timer_due is the earliest deadline
 * of its blocked vCPUs' timers, 0 = none -- until that deadline too,
 * where the VMM has a host timer to end the halt there (@host_timer);
 * without one only polling sees the deadline come.  With one CPU nobody
 * else can post: it halts only until a timer, else it polls.
 */
static inline bool sched_idle_may_halt(const struct sched *s, uint64_t timer_due,
				       bool host_timer)
{
	if (timer_due)
		return host_timer;
	return s->nr_cpus >= 2;
}

/*
 * @cpu's current vCPU spins (a PAUSE-loop exit): true when it gives the
 * CPU away, to the first preempted runnable vCPU in queue order, else
 * to the first runnable one; false, and it keeps running, when the
 * queue is empty.  The one chosen goes to the queue's head, the spinner
 * to its back.  sched_pick_next() then switches.
 */
bool sched_yield_on_spin(struct sched *s, unsigned int cpu);

/*
 * A plain PAUSE exit (PAUSE exiting, no PAUSE-loop exiting): every
 * pause_yield_after-th one of a vCPU is a spin, as sched_yield_on_spin().
 */
bool sched_pause_exit(struct sched *s, unsigned int cpu);

/*
 * What @cpu runs next at @now: its current vCPU while that is RUNNING,
 * else the head of its queue (now RUNNING, its turn starting @now),
 * else SCHED_NONE (idle, until a sched_wake() says so).  *@switched is
 * set when the vCPU returned is another than the one whose VMCS the CPU
 * last had loaded.
 */
int sched_pick_next(struct sched *s, unsigned int cpu, uint64_t now, bool *switched);

/* For tests and the report: @cpu's current vCPU, or SCHED_NONE. */
int sched_current(struct sched *s, unsigned int cpu);
enum sched_state sched_state(struct sched *s, unsigned int id);

#endif /* EXITPLAN_SCHED_H */
