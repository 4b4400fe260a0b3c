/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmx_run.c: the run loop's service to the exit handlers (the vCPU table is
 * vcpu_switch.h's).
 */
#ifndef EXITPLAN_VMX_RUN_H
#define EXITPLAN_VMX_RUN_H

#include "arch/vmx/exit.h"

struct vcpu;

/*
 * HLT with RFLAGS.IF = 0 (handle_hlt()): halt in root operation until an
 * NMI, INIT or the machine's stop is posted; stop the vCPU if no other
 * vCPU runs to post one.
 */
enum vmx_exit_action vmx_halt_interrupts_off(struct vcpu *vcpu);

#endif /* EXITPLAN_VMX_RUN_H */
