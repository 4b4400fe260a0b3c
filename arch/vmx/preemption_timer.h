/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * preemption_timer.c: arming the VMX-preemption timer for the earliest
 * deadline of a vCPU (SDM Vol. 3C 26.5.1).
 */
#ifndef EXITPLAN_PREEMPTION_TIMER_H
#define EXITPLAN_PREEMPTION_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "arch/vmx/exit.h"

struct vcpu;

/*
 * The hypervisor's own deadline (its `deadline=` option, vmx_run.c): the
 * host TSC value after which every vCPU is stopped and the report
 * printed, however the guest behaves; 0: none.  Written once by the boot
 * CPU before any vCPU runs, only read afterwards.  Every vCPU's
 * VMX-preemption timer is armed no later than it (borrowed where the
 * profile leaves the timer off), and its exit checks it.
 */
extern uint64_t vmx_hv_deadline;
/* deadline=N's N, for the stop's reason. */
extern uint64_t vmx_hv_deadline_ticks;

static inline bool vmx_hv_deadline_passed(void)
{
	uint64_t d = READ_ONCE(vmx_hv_deadline);

	return d && rdtsc() >= d;
}

void vmx_program_preemption_timer(struct vcpu *vcpu);

/* The deadline passed: stop the vCPU, saying so (returns VMX_EXIT_STOP). */
enum vmx_exit_action vmx_hv_deadline_stop(struct vcpu *vcpu);

#endif /* EXITPLAN_PREEMPTION_TIMER_H */
