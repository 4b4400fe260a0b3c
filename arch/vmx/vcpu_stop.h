/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stopping a vCPU: the reason goes into its report (vmx_report.c).
 */
#ifndef EXITPLAN_VCPU_STOP_H
#define EXITPLAN_VCPU_STOP_H

#include "runtime/host/compiler.h"
#include "arch/vmx/exit.h"
#include "arch/vmx/vcpu_arch.h"

/* Stop the guest with a reason (printf-style); returns VMX_EXIT_STOP. */
enum vmx_exit_action vcpu_stop(struct vcpu *vcpu, const char *fmt, ...) __printf(2, 3);
enum vmx_exit_action vcpu_stop_status(struct vcpu *vcpu, enum vcpu_stop_kind kind,
				      int status);

#endif /* EXITPLAN_VCPU_STOP_H */
