// SPDX-License-Identifier: GPL-2.0-only
/* The fake CPU behind tests/unit/fakes/runtime/host/cpu.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch_bits.h"
#include "runtime/host/cpu.h"
#include "msr_index.h"

struct fake_cpu fake_cpu;

void fake_cpu_reset(void)
{
	memset(&fake_cpu, 0, sizeof(fake_cpu));
	fake_cpu.tsc_step = 1;
}

static int msr_slot(uint32_t index)
{
	unsigned int i;

	for (i = 0; i < fake_cpu.n_msrs; i++)
		if (fake_cpu.msr[i].index == index)
			return (int)i;
	return -1;
}

void fake_msr_set(uint32_t index, uint64_t value)
{
	int i = msr_slot(index);

	if (i < 0) {
		if (fake_cpu.n_msrs == FAKE_MSRS) {
			fprintf(stderr, "fake_cpu: MSR file full (FAKE_MSRS)\n");
			abort();
		}
		i = (int)fake_cpu.n_msrs++;
		fake_cpu.msr[i].index = index;
	}
	fake_cpu.msr[i].value = value;
}

bool fake_msr_get(uint32_t index, uint64_t *value)
{
	int i = msr_slot(index);

	if (i < 0)
		return false;
	*value = fake_cpu.msr[i].value;
	return true;
}

static void log_access(enum fake_msr_op op, uint32_t index, uint64_t value)
{
	if (fake_cpu.n_log < FAKE_LOG)
		fake_cpu.log[fake_cpu.n_log] = (struct fake_msr_access){ op, index, value };
	fake_cpu.n_log++;
}

unsigned int fake_msr_count(enum fake_msr_op op, uint32_t index)
{
	unsigned int i, n = 0;

	for (i = 0; i < fake_cpu.n_log && i < FAKE_LOG; i++)
		if (fake_cpu.log[i].op == op && fake_cpu.log[i].index == index)
			n++;
	return n;
}

/* runtime/host/lapic.c's xAPIC page: none here, no test reaches the xAPIC's MMIO. */
volatile uint32_t *lapic_xapic_regs;

uint64_t fake_rdmsr(uint32_t index)
{
	uint64_t v = 0;

	if (!fake_msr_get(index, &v)) {
		fake_cpu.gp_faults++;
		fake_cpu.last_gp_index = index;
	}
	log_access(FAKE_RDMSR, index, v);
	return v;
}

void fake_wrmsr(uint32_t index, uint64_t value)
{
	int slot = msr_slot(index);

	log_access(FAKE_WRMSR, index, value);
	/*
	 * Changing IA32_EFER.LME while paging is enabled is a #GP (SDM Vol. 3A
	 * "Initializing IA-32e Mode"): what a manual EFER switch must never do in the
	 * 64-bit host.  Tests opt in by setting CR0.PG in the fake.
	 */
	if (slot < 0 || (index == MSR_IA32_EFER && (fake_cpu.cr0 & X86_CR0_PG) &&
			 ((fake_cpu.msr[slot].value ^ value) & EFER_LME))) {
		fake_cpu.gp_faults++;
		fake_cpu.last_gp_index = index;
		return;
	}
	fake_msr_set(index, value);
}

uint64_t fake_rdtsc(void)
{
	uint64_t v = fake_cpu.tsc;

	fake_cpu.tsc += fake_cpu.tsc_step;
	fake_cpu.rdtsc_calls++;
	return v;
}

void fake_io_write(uint16_t port, uint32_t value)
{
	fake_cpu.io_writes++;
	fake_cpu.last_port = port;
	fake_cpu.last_io_value = value;
	if (fake_cpu.io_write_hook)
		fake_cpu.io_write_hook(port, value);
}

uint32_t fake_io_read(uint16_t port)
{
	fake_cpu.io_reads++;
	fake_cpu.last_port = port;
	if (fake_cpu.io_read_hook)
		return fake_cpu.io_read_hook(port);
	return ~0u;	/* an unclaimed port reads all ones */
}

void fake_halt_forever(void)
{
	fprintf(stderr, "fake_cpu: cpu_halt_forever() called\n");
	abort();
}
