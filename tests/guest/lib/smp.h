/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Starting APs: the CPUs the ACPI MADT lists, a real-mode trampoline at
 * SMP_TRAMPOLINE_PA (STARTUP vector SMP_TRAMPOLINE_PA >> 12) that enters
 * 32-bit protected mode with entry.S's selectors, takes a stack of its
 * own and calls the entry function, and the INIT-SIPI-SIPI sequences
 * (SDM Vol. 3A 9.4.4.1) through the local APIC in xAPIC or x2APIC mode.
 */
#ifndef GUEST_SMP_H
#define GUEST_SMP_H

#include <stdbool.h>
#include <stdint.h>

#define SMP_TRAMPOLINE_PA	0x7000
#define SMP_MAX_CPUS		8
#define SMP_AP_STACK_SIZE	4096
#define SMP_AP_STACKS		32		/* every (re)start takes the next */
/* smp_cpu_slot()'s values: 0 for the boot CPU's stack, 1 + n for AP stack n. */
#define SMP_CPU_SLOTS		(1 + SMP_AP_STACKS)

/* The enabled processors' APIC IDs, in MADT order; their number (0: no MADT). */
unsigned int smp_madt_apic_ids(uint32_t *ids, unsigned int max);

/* Copy the trampoline, arrivals reset; every AP that runs it calls @entry (which must not return). */
void smp_install_trampoline(void (*entry)(void));
/* How many times an AP entered the trampoline. */
uint32_t smp_trampoline_arrivals(void);

/* x2APIC mode for the IPIs below (every CPU switches itself). */
extern bool smp_x2apic;
/* Send one IPI: @low the ICR's low half, @dest the destination field. */
void smp_send_ipi(uint32_t dest, uint32_t low);
/* This CPU's APIC ID, in the current mode. */
uint32_t smp_apic_id(void);

/* INIT, STARTUP, STARTUP to every other CPU (all-excluding-self), or to each of @ids. */
void smp_start_aps(const uint32_t *ids, unsigned int n, bool each);

/*
 * Which CPU runs this, told by its stack (each AP takes its own): no
 * exit, no shared state, usable in an exception handler.
 */
unsigned int smp_cpu_slot(void);

/* Busy-wait @ticks TSC ticks. */
void smp_delay(uint64_t ticks);

#endif /* GUEST_SMP_H */
