/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The contract between the exit path and the generated dispatch.
 *
 * The exit stub saves the guest's registers into struct vcpu, reads the
 * exit reason, handles VM-entry failures (bit 31) itself, and calls
 * vmx_dispatch_exit() with the basic exit reason (bits 15:0).  The
 * dispatch, generated per profile, calls one handler and returns what it
 * returned.  Handlers are named in spec/handlers.yaml and declared in the
 * generated exit_handlers.h.
 */
#ifndef EXITPLAN_VMX_EXIT_H
#define EXITPLAN_VMX_EXIT_H

#include <stdbool.h>
#include <stdint.h>

struct exit_stats;
struct vcpu;

enum vmx_exit_action {
	VMX_EXIT_RESUME = 0,	/* VMRESUME the guest */
	VMX_EXIT_STOP = 1,	/* stop this guest; the report is printed */
	/*
	 * Leave the guest for the run loop: the scheduler gave this CPU to
	 * another vCPU (arch/vmx/vcpu_switch.c).  Taken like a stop by the
	 * stub -- every guest register saved -- but the vCPU lives on.
	 */
	VMX_EXIT_SWITCH = 3,
};

typedef enum vmx_exit_action (*vmx_exit_handler_t)(struct vcpu *vcpu);

/* Generated per profile (generated/PROFILE/exit_dispatch.c). */
enum vmx_exit_action vmx_dispatch_exit(struct vcpu *vcpu, uint16_t basic_reason);

/*
 * Hand-written (arch/vmx): every reason the dispatch has no handler for,
 * including those above the highest reason the SDM defines.  Prints the
 * exit information and VMCS state, and stops the guest.  Never skips.
 */
enum vmx_exit_action handle_unexpected_exit(struct vcpu *vcpu, uint16_t basic_reason);

/* exit_entry.S */
int vmx_enter_guest(struct vcpu *vcpu, bool resume);
void vmx_exit_stub(void);
void vmx_exit_stub_hooks(void);

/* exit.c: called by the stub. */
enum vmx_exit_action vmx_handle_exit(struct vcpu *vcpu);
void vmx_report_vmresume_failure(struct vcpu *vcpu, uint64_t rflags);
void vmx_dump_guest_state(struct vcpu *vcpu);
/* The breakdown maps of the statistics document (docs/STATS.md). */
void exit_stats_print_breakdowns(const struct exit_stats *st);

#endif /* EXITPLAN_VMX_EXIT_H */
