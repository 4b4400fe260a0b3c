/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vmx_run.c: the run loop's services to the exit handlers.
 */
#ifndef EXITPLAN_VMX_RUN_H
#define EXITPLAN_VMX_RUN_H

#include "exit.h"

struct vcpu;

/* The vCPU with this id (vmx_run.c), or NULL. */
struct vcpu *vmx_vcpu(unsigned int id);
/*
 * HLT with RFLAGS.IF = 0 (handle_hlt()): halt in root operation until an
 * NMI, INIT or the machine's stop is posted; stop the vCPU if no other
 * vCPU runs to post one.
 */
enum vmx_exit_action vmx_halt_interrupts_off(struct vcpu *vcpu);

#endif /* EXITPLAN_VMX_RUN_H */
