// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vCPU scheduler (sched.h): per-CPU run queues, round robin on slice
 * end, block on HLT, wake on a posted event, yield on a spin.  Pure
 * decisions under each CPU's lock; the VMM acts on them.
 */
#include "runtime/vm/sched.h"
#include "runtime/vm/vm.h"

/* Every vCPU of the VM has a place in the scheduler, and a queue slot is a byte. */
_Static_assert(SCHED_MAX_VCPUS == VM_MAX_VCPUS, "the scheduler and the VM disagree on vCPUs");
_Static_assert(SCHED_MAX_VCPUS <= 255, "run-queue entries are bytes");

bool sched_init(struct sched *s, unsigned int nr_cpus, unsigned int nr_vcpus,
		unsigned int pause_yield_after)
{
	if (!nr_vcpus || nr_vcpus > SCHED_MAX_VCPUS || !nr_cpus || nr_cpus > SCHED_MAX_CPUS)
		return false;
	*s = (struct sched){
		/* A CPU without a vCPU would only idle: use no more CPUs than vCPUs. */
		.nr_cpus = nr_cpus < nr_vcpus ? nr_cpus : nr_vcpus,
		.nr_vcpus = nr_vcpus,
		.pause_yield_after = pause_yield_after ? pause_yield_after : 1,
	};
	for (unsigned int c = 0; c < s->nr_cpus; c++)
		s->cpu[c].current = s->cpu[c].last = SCHED_NONE;
	for (unsigned int i = 0; i < nr_vcpus; i++)
		s->vcpu[i] = (struct sched_vcpu){ .id = i, .cpu = sched_vcpu_cpu(s, i),
						  .state = SCHED_BLOCKED };
	return true;
}

unsigned int sched_cpu_vcpus(const struct sched *s, unsigned int cpu)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nr_vcpus; i++)
		n += s->vcpu[i].cpu == cpu;
	return n;
}

/* --- the run queue (the CPU's lock held) ------------------------------------ */

static void enqueue_tail(struct sched_cpu *c, struct sched_vcpu *v)
{
	c->queue[(c->head + c->nr_queued) % SCHED_MAX_VCPUS] = (uint8_t)v->id;
	c->nr_queued++;
	v->state = SCHED_RUNNABLE;
}

/* Insert @v at the queue's @pos-th place (0 = head), the ones from there on one back. */
static void enqueue_at(struct sched_cpu *c, struct sched_vcpu *v, unsigned int pos)
{
	enqueue_tail(c, v);
	for (unsigned int i = c->nr_queued - 1; i > pos; i--)
		c->queue[(c->head + i) % SCHED_MAX_VCPUS] =
			c->queue[(c->head + i - 1) % SCHED_MAX_VCPUS];
	c->queue[(c->head + pos) % SCHED_MAX_VCPUS] = (uint8_t)v->id;
}

static int dequeue_head(struct sched_cpu *c)
{
	int id;

	if (!c->nr_queued)
		return SCHED_NONE;
	id = c->queue[c->head];
	c->head = (c->head + 1) % SCHED_MAX_VCPUS;
	c->nr_queued--;
	if (c->nr_cut)
		c->nr_cut--;
	return id;
}

/* Move the queue's @pos-th entry (0 = head) to the head, the others keeping their order. */
static void move_to_head(struct sched_cpu *c, unsigned int pos)
{
	uint8_t id = c->queue[(c->head + pos) % SCHED_MAX_VCPUS];

	for (; pos > 0; pos--)
		c->queue[(c->head + pos) % SCHED_MAX_VCPUS] =
			c->queue[(c->head + pos - 1) % SCHED_MAX_VCPUS];
	c->queue[c->head] = id;
}

/* The current vCPU of @cpu, which the CPU's own decisions are about. */
static struct sched_vcpu *current_of(struct sched *s, struct sched_cpu *c)
{
	return c->current == SCHED_NONE ? NULL : &s->vcpu[c->current];
}

/* --- events --------------------------------------------------------------- */

enum sched_wake_result sched_wake(struct sched *s, unsigned int id)
{
	enum sched_wake_result res = SCHED_WAKE_NOTHING;
	struct sched_vcpu *v, *cur;
	struct sched_cpu *c;

	if (id >= s->nr_vcpus)
		return SCHED_WAKE_NOTHING;
	v = &s->vcpu[id];
	c = &s->cpu[v->cpu];
	spin_lock(&c->lock);
	if (v->state == SCHED_BLOCKED) {
		cur = current_of(s, c);
		if (cur == v) {
			/* Blocked, but its CPU has not switched away yet: it runs on. */
			v->state = SCHED_RUNNING;
		} else if (cur && cur->state == SCHED_RUNNING && !s->no_wake_preempt) {
			/* Another runs: cut in (sched.h), and have the CPU kicked. */
			enqueue_at(c, v, c->nr_cut++);
			c->resched = true;
			res = SCHED_WAKE_PREEMPT;
		} else {
			/* Idle, or its current blocked or gone (the CPU picks next anyway), or no preemption. */
			if (!cur)
				res = SCHED_WAKE_IDLE;
			enqueue_tail(c, v);
		}
	}
	spin_unlock(&c->lock);
	return res;
}

bool sched_resched(struct sched *s, unsigned int cpu, uint64_t now, uint64_t *retry_at)
{
	struct sched_cpu *c = &s->cpu[cpu];
	struct sched_vcpu *v;
	bool preempted = false;

	*retry_at = 0;
	spin_lock(&c->lock);
	v = current_of(s, c);
	if (c->resched && v && v->state == SCHED_RUNNING && c->nr_queued) {
		if (now - c->turn_start < s->wake_granularity) {
			/* Too early in its turn: it runs on until the granularity is up. */
			*retry_at = c->turn_start + s->wake_granularity;
			spin_unlock(&c->lock);
			return false;
		}
		/* Behind the cut-ins, before the rest: only the woken ones go first. */
		enqueue_at(c, v, c->nr_cut);
		v->preempted = true;
		v->preemptions++;
		c->wake_preemptions++;
		preempted = true;
	}
	c->resched = false;
	spin_unlock(&c->lock);
	return preempted;
}

void sched_block(struct sched *s, unsigned int cpu)
{
	struct sched_cpu *c = &s->cpu[cpu];
	struct sched_vcpu *v;

	spin_lock(&c->lock);
	v = current_of(s, c);
	if (v && v->state == SCHED_RUNNING) {
		v->state = SCHED_BLOCKED;
		v->preempted = false;
		v->blocks++;
	}
	spin_unlock(&c->lock);
}

void sched_gone(struct sched *s, unsigned int cpu)
{
	struct sched_cpu *c = &s->cpu[cpu];
	struct sched_vcpu *v;

	spin_lock(&c->lock);
	v = current_of(s, c);
	if (v) {
		v->state = SCHED_GONE;
		v->preempted = false;
	}
	spin_unlock(&c->lock);
}

bool sched_slice_end(struct sched *s, unsigned int cpu)
{
	struct sched_cpu *c = &s->cpu[cpu];
	struct sched_vcpu *v;
	bool preempted = false;

	spin_lock(&c->lock);
	v = current_of(s, c);
	/* Alone on its CPU it would only be picked again: nothing to record. */
	if (v && v->state == SCHED_RUNNING && c->nr_queued) {
		enqueue_tail(c, v);
		v->preempted = true;
		v->preemptions++;
		preempted = true;
	}
	spin_unlock(&c->lock);
	return preempted;
}

/* The spin decision, with the CPU's lock held; true when @v gives its CPU away. */
static bool yield_locked(struct sched *s, struct sched_cpu *c, struct sched_vcpu *v)
{
	unsigned int pos = 0;

	if (!v || v->state != SCHED_RUNNING || !c->nr_queued)
		return false;
	for (unsigned int i = 0; i < c->nr_queued; i++) {
		if (s->vcpu[c->queue[(c->head + i) % SCHED_MAX_VCPUS]].preempted) {
			pos = i;
			break;
		}
	}
	move_to_head(c, pos);
	/* A spinner is not a lock holder: it does not count as preempted. */
	enqueue_tail(c, v);
	v->preempted = false;
	v->pause_exits = 0;
	v->spin_yields++;
	return true;
}

bool sched_yield_on_spin(struct sched *s, unsigned int cpu)
{
	struct sched_cpu *c = &s->cpu[cpu];
	bool yielded;

	spin_lock(&c->lock);
	yielded = yield_locked(s, c, current_of(s, c));
	if (yielded)
		c->ple_yields++;
	spin_unlock(&c->lock);
	return yielded;
}

bool sched_pause_exit(struct sched *s, unsigned int cpu)
{
	struct sched_cpu *c = &s->cpu[cpu];
	struct sched_vcpu *v;
	bool yielded = false;

	spin_lock(&c->lock);
	v = current_of(s, c);
	if (v && ++v->pause_exits >= s->pause_yield_after) {
		/* Counted again from 0 whether or not there was anyone to yield to. */
		v->pause_exits = 0;
		yielded = yield_locked(s, c, v);
		if (yielded)
			c->pause_yields++;
	}
	spin_unlock(&c->lock);
	return yielded;
}

int sched_pick_next(struct sched *s, unsigned int cpu, uint64_t now, bool *switched)
{
	struct sched_cpu *c = &s->cpu[cpu];
	struct sched_vcpu *v;
	int next;

	spin_lock(&c->lock);
	v = current_of(s, c);
	if (v && v->state == SCHED_RUNNING) {
		next = c->current;
	} else {
		next = dequeue_head(c);
		c->current = next;
		/* The current one left: a pending wakeup preemption is served or moot. */
		c->resched = false;
		if (next != SCHED_NONE) {
			v = &s->vcpu[next];
			v->state = SCHED_RUNNING;
			v->preempted = false;
			v->pause_exits = 0;
			v->switched_in++;
			c->turn_start = now;
		}
	}
	*switched = next != SCHED_NONE && next != c->last;
	if (*switched) {
		if (c->last != SCHED_NONE)
			c->switches++;
		c->last = next;
	}
	spin_unlock(&c->lock);
	return next;
}

int sched_current(struct sched *s, unsigned int cpu)
{
	int cur;

	spin_lock(&s->cpu[cpu].lock);
	cur = s->cpu[cpu].current;
	spin_unlock(&s->cpu[cpu].lock);
	return cur;
}

enum sched_state sched_state(struct sched *s, unsigned int id)
{
	struct sched_cpu *c = &s->cpu[s->vcpu[id].cpu];
	enum sched_state st;

	spin_lock(&c->lock);
	st = s->vcpu[id].state;
	spin_unlock(&c->lock);
	return st;
}
