/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Privileged x86 instructions as inline functions.  Host unit tests put
 * tests/unit/fakes first on the include path, where a cpu.h of the same
 * interface records the calls instead.
 */
#ifndef EXITPLAN_CPU_H
#define EXITPLAN_CPU_H

#include <stdint.h>

#include "lib/port_io.h"	/* lib/: IN and OUT, shared with the test guests */

static inline uint64_t rdmsr(uint32_t index)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(index));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t index, uint64_t value)
{
	asm volatile("wrmsr"
		     : : "c"(index), "a"((uint32_t)value), "d"((uint32_t)(value >> 32))
		     : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpuid_count(uint32_t leaf, uint32_t subleaf, uint32_t *eax,
			       uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
	asm volatile("cpuid"
		     : "=a"(*eax), "=b"(*ebx), "=c"(*ecx), "=d"(*edx)
		     : "a"(leaf), "c"(subleaf));
}

/*
 * read_cr0() ... write_cr4(): MOV from and to the control registers
 * (SDM Vol. 3A 2.5).  A write is a compiler barrier: it changes how
 * memory is reached.
 */
#define DEFINE_CR_ACCESSORS(n)						\
static inline uint64_t read_cr##n(void)				\
{									\
	uint64_t v;							\
									\
	asm volatile("mov %%cr" #n ", %0" : "=r"(v));			\
	return v;							\
}									\
									\
static inline void write_cr##n(uint64_t v)				\
{									\
	asm volatile("mov %0, %%cr" #n : : "r"(v) : "memory");		\
}

DEFINE_CR_ACCESSORS(0)
DEFINE_CR_ACCESSORS(2)
DEFINE_CR_ACCESSORS(3)
DEFINE_CR_ACCESSORS(4)

static inline void local_irq_disable(void)
{
	asm volatile("cli" : : : "memory");
}

static inline void local_irq_enable(void)
{
	asm volatile("sti" : : : "memory");
}

static inline uint64_t read_rsp(void)
{
	uint64_t v;

	asm volatile("mov %%rsp, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_rflags(void)
{
	uint64_t v;

	asm volatile("pushfq; popq %0" : "=r"(v));
	return v;
}

static inline void cpu_relax(void)
{
	asm volatile("pause");
}

static inline __attribute__((noreturn)) void cpu_halt_forever(void)
{
	for (;;)
		asm volatile("cli; hlt");
}

#endif /* EXITPLAN_CPU_H */
