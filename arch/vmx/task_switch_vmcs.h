/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * task_switch_vmcs.c: the TASK_SWITCH exit, emulated on the VMCS.
 */
#ifndef EXITPLAN_TASK_SWITCH_VMCS_H
#define EXITPLAN_TASK_SWITCH_VMCS_H

#include "exit.h"

struct vcpu;

enum vmx_exit_action vmx_task_switch(struct vcpu *vcpu);

#endif /* EXITPLAN_TASK_SWITCH_VMCS_H */
