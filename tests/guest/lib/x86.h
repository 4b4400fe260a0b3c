/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The x86 instructions the test guests use, as inline functions, and the
 * architectural numbers they need.
 *
 * Architectural numbers (MSR indices, CR/EFER/XCR0/APIC bits, exception
 * vectors, CPUID bits) come only from exitplan's generated headers in
 * generated/common/, made from the YAML in spec/: the guests and the
 * hypervisor share one source of truth.
 */
#ifndef GUEST_X86_H
#define GUEST_X86_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch_bits.h"	/* generated from spec/arch.yaml */
#include "msr_index.h"	/* generated from spec/msrs.yaml */
#include "port_io.h"	/* lib/: IN and OUT, shared with the hypervisor */

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid_count(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	asm volatile("cpuid"
		     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
		     : "a"(leaf), "c"(subleaf)
		     : "memory");
	return r;
}

static inline struct cpuid_regs cpuid(uint32_t leaf)
{
	return cpuid_count(leaf, 0);
}

static inline void insb(uint16_t port, void *buf, uint32_t count)
{
	asm volatile("rep insb"
		     : "+D"(buf), "+c"(count)
		     : "d"(port)
		     : "memory");
}

static inline void outsb(uint16_t port, const void *buf, uint32_t count)
{
	asm volatile("rep outsb"
		     : "+S"(buf), "+c"(count)
		     : "d"(port)
		     : "memory");
}

static inline void outsw(uint16_t port, const void *buf, uint32_t count)
{
	asm volatile("rep outsw"
		     : "+S"(buf), "+c"(count)
		     : "d"(port)
		     : "memory");
}

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr) : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	asm volatile("wrmsr"
		     : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
		     : "memory");
}

#define DEFINE_CR_ACCESSORS(n)						\
static inline uint32_t read_cr##n(void)					\
{									\
	uint32_t v;							\
	asm volatile("mov %%cr" #n ", %0" : "=r"(v) : : "memory");	\
	return v;							\
}									\
static inline void write_cr##n(uint32_t v)				\
{									\
	asm volatile("mov %0, %%cr" #n : : "r"(v) : "memory");		\
}
DEFINE_CR_ACCESSORS(0)
DEFINE_CR_ACCESSORS(2)
DEFINE_CR_ACCESSORS(3)
DEFINE_CR_ACCESSORS(4)
#undef DEFINE_CR_ACCESSORS

#define DEFINE_DR_ACCESSORS(n)						\
static inline uint32_t read_dr##n(void)					\
{									\
	uint32_t v;							\
	asm volatile("mov %%dr" #n ", %0" : "=r"(v));			\
	return v;							\
}									\
static inline void write_dr##n(uint32_t v)				\
{									\
	asm volatile("mov %0, %%dr" #n : : "r"(v));			\
}
DEFINE_DR_ACCESSORS(0)
DEFINE_DR_ACCESSORS(7)
#undef DEFINE_DR_ACCESSORS

static inline uint32_t read_eflags(void)
{
	uint32_t f;

	asm volatile("pushfl; popl %0" : "=r"(f));
	return f;
}

static inline void cli(void)
{
	asm volatile("cli" : : : "memory");
}

static inline void sti(void)
{
	asm volatile("sti" : : : "memory");
}

/* STI's one-instruction shadow guarantees no interrupt slips in before HLT. */
static inline void sti_hlt(void)
{
	asm volatile("sti; hlt" : : : "memory");
}

static inline void pause(void)
{
	asm volatile("pause" : : : "memory");
}

/*
 * A pointer to a physical address (paging is off).  The empty asm hides
 * the constant from GCC, which otherwise warns about dereferencing
 * addresses in the first page as if they were offsets from NULL.
 */
static inline void *phys_ptr(uintptr_t addr)
{
	asm("" : "+r"(addr));
	return (void *)addr;
}

/* n / d without libgcc's __udivdi3 (absent in a -nostdlib 32-bit build). */
static inline uint64_t div_u64_u32(uint64_t n, uint32_t d)
{
	uint32_t hi = (uint32_t)(n >> 32), lo = (uint32_t)n, qhi, qlo, rem;

	qhi = hi / d;
	rem = hi % d;
	/* rem < d, so rem:lo / d fits in 32 bits: no #DE. */
	asm("divl %4" : "=a"(qlo), "=d"(rem) : "a"(lo), "d"(rem), "rm"(d));
	return ((uint64_t)qhi << 32) | qlo;
}

/*
 * MMIO accesses with fixed instruction forms, MOV m32, r32 (89 /r) and
 * MOV r32, m32 (8B /r) with a register-indirect operand: what exitplan's
 * MMIO emulation decodes (docs/GUESTS.md).  Left to itself, GCC may pick
 * MOV EAX, moffs32 (A1) for a constant address.
 */
static inline void mmio_write32(uintptr_t addr, uint32_t v)
{
	asm volatile("movl %0, (%1)" : : "r"(v), "r"(addr) : "memory");
}

static inline uint32_t mmio_read32(uintptr_t addr)
{
	uint32_t v;

	asm volatile("movl (%1), %0" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

#endif /* GUEST_X86_H */
