/* SPDX-License-Identifier: GPL-2.0-only */
/* A test-and-test-and-set spinlock: enough for a handful of CPUs. */
#ifndef EXITPLAN_SPINLOCK_H
#define EXITPLAN_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"

typedef struct {
	uint32_t locked;
} spinlock_t;

#define SPINLOCK_INIT	{ 0 }

static inline bool spin_trylock(spinlock_t *lock)
{
	return !__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_lock(spinlock_t *lock)
{
	while (!spin_trylock(lock))
		while (READ_ONCE(lock->locked))
			cpu_relax();
}

static inline void spin_unlock(spinlock_t *lock)
{
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
}

#endif /* EXITPLAN_SPINLOCK_H */
