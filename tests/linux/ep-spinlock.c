// SPDX-License-Identifier: GPL-2.0-only
/*
 * ep-spinlock [THREADS] [N]: THREADS threads (default 4) take one
 * test-and-set lock N times each (default 2000), a short critical
 * section inside; prints the ticks per acquisition of each thread.
 *
 * More threads than CPUs is the overcommit workload (exitplan.run=spinlock
 * exitplan.args=8,200 on 4 vCPUs): a thread Linux preempts while it holds
 * the lock leaves the others spinning until it runs again.  So that a
 * starved thread shows, each thread's line says how many acquisitions it
 * had made when the first thread finished, besides its own total.
 */
#include <pthread.h>

#include "ep-workload.h"

#define MAX_THREADS 64

static volatile int lock;
static volatile unsigned long counter;
static unsigned int iters;
/* Acquisitions per thread (written under the lock), and a snapshot when the first finished. */
static volatile unsigned int done[MAX_THREADS];
static unsigned int at_first[MAX_THREADS];
static volatile int first_finished;
/* All start together: else the first ones are done before the last is created. */
static pthread_barrier_t start;

struct thread {
	unsigned int id;
	uint64_t per;		/* ticks per acquisition */
};

static void *spin(void *arg)
{
	struct thread *t = arg;
	uint64_t t0;

	pthread_barrier_wait(&start);
	t0 = ep_rdtsc();

	for (unsigned int i = 0; i < iters; i++) {
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			while (lock)
				__builtin_ia32_pause();
		counter++;
		done[t->id]++;
		if (i + 1 == iters && !first_finished) {
			/* Under the lock: every other thread's count is stable. */
			for (unsigned int j = 0; j < MAX_THREADS; j++)
				at_first[j] = done[j];
			first_finished = 1;
		}
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	}
	t->per = (ep_rdtsc() - t0) / (iters ? iters : 1);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) : 4;
	pthread_t th[MAX_THREADS];
	struct thread t[MAX_THREADS];
	uint64_t per[MAX_THREADS];

	iters = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 2000;
	if (!n || n > MAX_THREADS)
		n = 4;
	pthread_barrier_init(&start, NULL, n);
	for (unsigned int i = 0; i < n; i++) {
		t[i].id = i;
		if (pthread_create(&th[i], NULL, spin, &t[i])) {
			perror("ep-spinlock");
			return 1;
		}
	}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (counter != (unsigned long)n * iters) {
		printf("ep-spinlock: counter %lu, expected %lu: the lock is broken\n",
		       counter, (unsigned long)n * iters);
		return 1;
	}
	for (unsigned int i = 0; i < n; i++) {
		printf("spinlock thread %u: %u acquisitions, %u when the first finished, "
		       "%llu ticks each\n", i, done[i], at_first[i], (unsigned long long)t[i].per);
		per[i] = t[i].per;
	}
	ep_report("spinlock", per, n);
	return 0;
}
