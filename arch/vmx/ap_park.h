/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What keeps the other CPUs out of the guest's reach when they are not
 * running its code.
 *
 * Every CPU runs a vCPU (vmx.c), so every CPU is in VMX operation from
 * before the guest runs until the machine powers off: INIT is blocked in
 * VMX root operation (SDM Vol. 3C 24.8 "Restrictions on VMX Operation")
 * and a STARTUP is ignored outside wait-for-SIPI, so a physical
 * INIT-SIPI could not take a CPU over even if one reached it -- and none
 * does: the guest's ICR writes are intercepted (apic.c).  A CPU whose
 * vCPU waits in root operation (for a STARTUP, or halted with interrupts
 * off) sleeps in HLT with interrupts off; vmm_kick() wakes it with an
 * NMI, which the handler here drops.  A CPU whose vCPU stopped, or whose
 * VMX setup failed, is parked: halted for good, NMIs dropped.
 */
#ifndef EXITPLAN_AP_PARK_H
#define EXITPLAN_AP_PARK_H

/*
 * On the boot CPU, before any vCPU runs: CPUs 0 .. @n - 1 run vCPUs, and
 * an NMI in root operation there is a kick (dropped), not a fault.
 * Nothing to do for one CPU: no one sends it kicks.
 */
void vmx_ap_park_init(unsigned int n);

/* Halt this CPU for good, interrupts off, NMIs dropped. */
void __attribute__((noreturn)) vmx_park_this_cpu(void);

/*
 * An idle CPU (every vCPU on it blocked, vmx_run.c) halts here, interrupts
 * off, until vmx_idle_kick()'s NMI.  Race-free: vmx_idle_prepare() first,
 * then the caller's last check for work, then vmx_idle_halt(); an NMI at
 * any point after the prepare makes the halt return at once (the NMI
 * handler marks the CPU kicked and steps a RIP still before the HLT past
 * it).  Only with two CPUs or more (vmx_ap_park_init() installs the NMI
 * handler then; on one CPU nobody else can post).
 */
void vmx_idle_prepare(unsigned int cpu);
void vmx_idle_halt(unsigned int cpu);
void vmx_idle_done(unsigned int cpu);
/* After posting to a vCPU of @cpu: wake @cpu if it is halted idle. */
void vmx_idle_kick(unsigned int cpu);

#endif /* EXITPLAN_AP_PARK_H */
