/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The other CPUs.  smp_start_aps() wakes every AP the ACPI MADT lists
 * (all of them by broadcast if there is none, or with `smp_broadcast` on
 * the command line) with INIT-SIPI-SIPI;
 * each enters 64-bit mode on the boot page tables, sets up its per-CPU
 * area (GDT, TSS, GS base, IDT) and waits, spinning, for work given with
 * smp_call().  CPU ids are 0 (the boot CPU) .. percpu_online_count() - 1.
 */
#ifndef EXITPLAN_SMP_H
#define EXITPLAN_SMP_H

#include <stdbool.h>

/*
 * Start all APs, at most HV_MAX_CPUS in all.  Returns the number of CPUs
 * online, the boot CPU included.  Call once, from the boot CPU, after
 * boot_info_init() (it borrows the page at SMP_TRAMPOLINE_PA).
 */
unsigned int smp_start_aps(void);

/*
 * After smp_start_aps(): how many CPUs it knows of are not online (beyond
 * HV_MAX_CPUS, left halted in the trampoline; or listed by the MADT but
 * never arrived).  They are outside the hypervisor's control.
 */
unsigned int smp_cpus_left_out(void);

/*
 * Run fn(arg) on an idle AP.  smp_call_async() returns at once (false if
 * the CPU is not online or still busy); smp_call_wait() waits until fn
 * has returned.  smp_call() does both.  On the calling CPU itself, fn
 * runs directly.
 */
bool smp_call_async(unsigned int cpu, void (*fn)(void *arg), void *arg);
void smp_call_wait(unsigned int cpu);
bool smp_call(unsigned int cpu, void (*fn)(void *arg), void *arg);

#endif /* EXITPLAN_SMP_H */
