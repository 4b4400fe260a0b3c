/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * preemption_timer.c: arming the VMX-preemption timer for the earliest
 * deadline of a vCPU (SDM Vol. 3C 26.5.1).
 */
#ifndef EXITPLAN_PREEMPTION_TIMER_H
#define EXITPLAN_PREEMPTION_TIMER_H

struct vcpu;

void vmx_program_preemption_timer(struct vcpu *vcpu);

#endif /* EXITPLAN_PREEMPTION_TIMER_H */
