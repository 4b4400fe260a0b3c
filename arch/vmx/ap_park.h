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

#include <stdbool.h>
#include <stdint.h>

/*
 * On the boot CPU, before any vCPU runs: CPUs 0 .. @n - 1 run vCPUs, and
 * an NMI in root operation there is a kick (dropped), not a fault
 * (nothing to do for one CPU: no one sends it kicks); and the idle
 * timer's handler (vmx_idle_halt_until()) where there is one.
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

/*
 * The idle timer (apic: virtual, a CPU with TSC-deadline mode): instead
 * of polling for a blocked vCPU's timer, vmx_idle_halt_until() halts
 * (between the same prepare and done) until the TSC reaches @deadline,
 * on the physical APIC's TSC-deadline timer, whose interrupt
 * (VMX_KICK_VECTOR) is taken with interrupts on for the HLT alone -- or
 * until a kick, as vmx_idle_halt(); @deadline 0: no timer, only a kick
 * or a device's interrupt (CPU 0, ioapic_exits.c) ends it.  The timer is
 * disarmed after.
 */
bool vmx_idle_timer_available(void);
void vmx_idle_halt_until(unsigned int cpu, uint64_t deadline);
/*
 * VMX_KICK_VECTOR taken in root operation (the idle timer's, or a kick
 * that came late), after the EOI: ends an idle halt, race-free.
 */
struct interrupt_frame;
void vmx_idle_irq(struct interrupt_frame *f);
/* After posting to a vCPU of @cpu: wake @cpu if it is halted idle. */
void vmx_idle_kick(unsigned int cpu);

/*
 * Make vCPU @vcpu_id look at its posted events (runtime/vm/vm.h) soon: an
 * IPI with the host's kick vector to the CPU running it, which leaves
 * the guest with an external-interrupt exit (or, if it is in the
 * hypervisor already, right after its next entry).  A vCPU not in the
 * guest polls its events itself and needs no kick.
 */
void vmm_kick(unsigned int vcpu_id);

/* vmm_kick() each vCPU of @mask (bit i: vCPU i), as vm_icr_deliver() and vm_stop() return them. */
static inline void vmx_kick_vcpus(uint32_t mask)
{
	while (mask) {
		vmm_kick((unsigned int)__builtin_ctz(mask));
		mask &= mask - 1;
	}
}

#endif /* EXITPLAN_AP_PARK_H */
