/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Stopping a vCPU: the reason goes into its report (vmx_report.c).
 * vcpu_stop.c, which calls nothing that reaches the exit dispatch, so
 * that the handlers can call it without a circle.
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

/* A failed VM entry (exit reason bit 31 set): reported, and the guest stopped. */
enum vmx_exit_action vmx_entry_failed(struct vcpu *vcpu, uint32_t reason);

/*
 * The guest's registers and VMCS guest state, for a report.  Only within
 * an exit: RBP and R10-R15 are then still the guest's, in the registers.
 */
void vmx_dump_guest_state(struct vcpu *vcpu);

#endif /* EXITPLAN_VCPU_STOP_H */
