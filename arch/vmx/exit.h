/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The contract between the exit path and the generated dispatch.
 *
 * The exit stub (exit_entry.S) pushes the eight guest registers host C
 * may use into struct vcpu (the rest stay live in their registers),
 * reads the exit reason and calls vmx_dispatch_exit() with it -- or,
 * for a vCPU with exit hooks (manual MSR switching, timing),
 * vmx_handle_exit() in exit.c, which calls the dispatch.  The dispatch,
 * generated per profile, calls one handler and returns what it returned;
 * the stub stores that action beside vcpu->nmi_pending and tests both
 * with one compare before VMRESUME.  Handlers are named in
 * spec/handlers.yaml and declared in the generated exit_handlers.h.  A
 * failed VM entry (bit 31) is not tested in the stub: its basic reasons
 * (33, 34, 41) have no handler, which the generator enforces, so the
 * dispatch sends them to handle_unexpected_exit().
 */
#ifndef EXITPLAN_VMX_EXIT_H
#define EXITPLAN_VMX_EXIT_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The exit actions, vmx_dispatch_exit() and handle_unexpected_exit():
 * the generated code's side of this contract, in its interface header.
 */
#include "arch/vmx/generated_api.h"

/* exit_entry.S */
int vmx_enter_guest(struct vcpu *vcpu, bool resume);
void vmx_exit_stub(void);
void vmx_exit_stub_hooks(void);
/* The stub's tests of nmi_pending before VMRESUME (labels; nmi_root.c moves an NMI's RIP there). */
extern const char vmx_nmi_check[], vmx_nmi_check_end[], vmx_nmi_recheck[], vmx_nmi_recheck_end[];

/* Called by the stub: the hooked exits (exit.c); a failed VMRESUME (vcpu_stop.c). */
enum vmx_exit_action vmx_handle_exit(struct vcpu *vcpu);
void vmx_report_vmresume_failure(struct vcpu *vcpu, uint64_t rflags);

#endif /* EXITPLAN_VMX_EXIT_H */
