/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vcpu_switch.c: several vCPUs on one CPU.
 */
#ifndef EXITPLAN_VCPU_SWITCH_H
#define EXITPLAN_VCPU_SWITCH_H

#include <stdbool.h>

#include "arch/vmx/exit.h"
#include "runtime/vm/sched.h"
#include "arch/vmx/vcpu_arch.h"

/*
 * vcpu_switch.c: several vCPUs on one CPU.  The exit handlers' decisions
 * (VMX_EXIT_SWITCH gives the CPU away), and what the run loop (vmx_run.c)
 * does around a switch.
 */
enum vmx_exit_action vmx_sched_block(struct vcpu *vcpu, enum vcpu_block_reason why);
enum vmx_exit_action vmx_sched_pause(struct vcpu *vcpu);
enum vmx_exit_action vmx_sched_tick(struct vcpu *vcpu);
/* A kick's exit: the CPU goes to a vCPU that was woken for it (wakeup preemption, sched.h). */
enum vmx_exit_action vmx_sched_kicked(struct vcpu *vcpu);
/* Before a turn of @vcpu on this CPU: the next scheduling deadline; after: save its state. */
void vmx_sched_switch_in(struct vcpu *vcpu);
void vmx_sched_switch_out(struct vcpu *vcpu);
/* Wake the vCPUs of @cpu blocked in HLT whose timer is due; true when one was. */
bool vmx_sched_wake_due(unsigned int cpu, struct vcpu *self);
/* The earliest timer deadline of the vCPUs of @cpu blocked in HLT, 0 = none. */
uint64_t vmx_sched_timer_due(unsigned int cpu);
extern struct sched vmx_sched;
/* The machine's vCPUs (vmx_run.c fills the table), and the one with this id or NULL. */
extern struct vcpu *vmx_vcpus[VM_MAX_VCPUS];
struct vcpu *vmx_vcpu(unsigned int id);

#endif /* EXITPLAN_VCPU_SWITCH_H */
