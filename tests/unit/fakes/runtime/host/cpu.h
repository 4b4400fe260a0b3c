/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host unit tests: the interface of runtime/host/cpu.h, with every privileged
 * instruction replaced by a call into a fake CPU (fake_cpu.c) that keeps
 * an MSR file, a TSC, control registers and I/O ports, and logs every
 * MSR access in order so tests can assert what generated code did.
 */
#ifndef EXITPLAN_CPU_H
#define EXITPLAN_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"		/* generated: X86_RFLAGS_IF */

#define FAKE_MSRS	64	/* distinct MSRs the fake file can hold */
#define FAKE_LOG	256	/* MSR accesses logged before the log is full */

enum fake_msr_op { FAKE_RDMSR, FAKE_WRMSR };

struct fake_msr_access {
	enum fake_msr_op op;
	uint32_t index;
	uint64_t value;		/* value written, or value read */
};

struct fake_cpu {
	struct {
		uint32_t index;
		uint64_t value;
	} msr[FAKE_MSRS];
	unsigned int n_msrs;
	/* RDMSR/WRMSR of an MSR not in the file: #GP on hardware. */
	unsigned int gp_faults;
	uint32_t last_gp_index;

	struct fake_msr_access log[FAKE_LOG];
	unsigned int n_log;		/* may exceed FAKE_LOG: then it overflowed */

	uint64_t tsc;			/* value of the next RDTSC */
	uint64_t tsc_step;		/* added after every RDTSC */
	unsigned int rdtsc_calls;

	uint64_t cr0, cr2, cr3, cr4;
	uint64_t rflags;		/* IF follows local_irq_enable/disable */
	unsigned int io_writes, io_reads;
	uint16_t last_port;
	uint32_t last_io_value;
	/* Devices a test plugs in: called for every IN/OUT when set. */
	uint32_t (*io_read_hook)(uint16_t port);
	void (*io_write_hook)(uint16_t port, uint32_t value);
};

extern struct fake_cpu fake_cpu;

/* Empty MSR file, empty log, TSC at 0 stepping by 1. */
void fake_cpu_reset(void);
/* Create or overwrite an MSR in the file without logging it. */
void fake_msr_set(uint32_t index, uint64_t value);
/* Read an MSR without logging it; false when the file has no such MSR. */
bool fake_msr_get(uint32_t index, uint64_t *value);
/* Number of logged accesses of kind @op to @index. */
unsigned int fake_msr_count(enum fake_msr_op op, uint32_t index);

uint64_t fake_rdmsr(uint32_t index);
void fake_wrmsr(uint32_t index, uint64_t value);
uint64_t fake_rdtsc(void);
void fake_io_write(uint16_t port, uint32_t value);
uint32_t fake_io_read(uint16_t port);
void fake_halt_forever(void) __attribute__((noreturn));

static inline uint64_t rdmsr(uint32_t index)
{
	return fake_rdmsr(index);
}

static inline void wrmsr(uint32_t index, uint64_t value)
{
	fake_wrmsr(index, value);
}

static inline uint64_t rdtsc(void)
{
	return fake_rdtsc();
}

static inline void cpuid_count(uint32_t leaf, uint32_t subleaf, uint32_t *eax,
			       uint32_t *ebx, uint32_t *ecx, uint32_t *edx)
{
	/* No test needs CPUID values yet: report an empty leaf. */
	(void)leaf;
	(void)subleaf;
	*eax = *ebx = *ecx = *edx = 0;
}

static inline void outb(uint16_t port, uint8_t v)
{
	fake_io_write(port, v);
}

static inline void outw(uint16_t port, uint16_t v)
{
	fake_io_write(port, v);
}

static inline void outl(uint16_t port, uint32_t v)
{
	fake_io_write(port, v);
}

static inline uint8_t inb(uint16_t port)
{
	return (uint8_t)fake_io_read(port);
}

static inline uint16_t inw(uint16_t port)
{
	return (uint16_t)fake_io_read(port);
}

static inline uint32_t inl(uint16_t port)
{
	return fake_io_read(port);
}

/* read_cr0() ... write_cr4(): the fake CPU's control registers. */
#define DEFINE_CR_ACCESSORS(n)						\
static inline uint64_t read_cr##n(void)				\
{									\
	return fake_cpu.cr##n;						\
}									\
									\
static inline void write_cr##n(uint64_t v)				\
{									\
	fake_cpu.cr##n = v;						\
}

DEFINE_CR_ACCESSORS(0)
DEFINE_CR_ACCESSORS(2)
DEFINE_CR_ACCESSORS(3)
DEFINE_CR_ACCESSORS(4)

static inline void local_irq_disable(void)
{
	fake_cpu.rflags &= ~(uint64_t)X86_RFLAGS_IF;
}

static inline void local_irq_enable(void)
{
	fake_cpu.rflags |= X86_RFLAGS_IF;
}

static inline uint64_t read_rsp(void)
{
	/* The host stack pointer is real even in a test. */
	return (uint64_t)(uintptr_t)__builtin_frame_address(0);
}

static inline uint64_t read_rflags(void)
{
	return fake_cpu.rflags;
}

static inline void cpu_relax(void)
{
}

static inline __attribute__((noreturn)) void cpu_halt_forever(void)
{
	fake_halt_forever();
}

#endif /* EXITPLAN_CPU_H */
