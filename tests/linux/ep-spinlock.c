// SPDX-License-Identifier: GPL-2.0-only
/*
 * ep-spinlock [THREADS] [N]: THREADS threads (default 4) take one
 * test-and-set lock N times each (default 2000), a short critical
 * section inside; prints the ticks per acquisition of each thread.
 */
#include <pthread.h>

#include "ep-workload.h"

static volatile int lock;
static volatile unsigned long counter;
static unsigned int iters;

static void *spin(void *arg)
{
	uint64_t *out = arg, t = ep_rdtsc();

	for (unsigned int i = 0; i < iters; i++) {
		while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
			while (lock)
				__builtin_ia32_pause();
		counter++;
		__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
	}
	*out = (ep_rdtsc() - t) / (iters ? iters : 1);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 0) : 4;
	pthread_t th[64];
	uint64_t per[64];

	iters = argc > 2 ? (unsigned int)strtoul(argv[2], NULL, 0) : 2000;
	if (!n || n > 64)
		n = 4;
	for (unsigned int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, spin, &per[i])) {
			perror("ep-spinlock");
			return 1;
		}
	for (unsigned int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	if (counter != (unsigned long)n * iters) {
		printf("ep-spinlock: counter %lu, expected %lu: the lock is broken\n",
		       counter, (unsigned long)n * iters);
		return 1;
	}
	ep_report("spinlock", per, n);
	return 0;
}
