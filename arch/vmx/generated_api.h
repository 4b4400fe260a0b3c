/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The contract between the generated code (generated/common,
 * generated/PROFILE) and the hand-written runtime: the one hand-written
 * header a generated file includes (tests/gen/test_generated_api.py), so
 * that code flows one way and arch/vmx's internals may change without
 * the generator knowing.  It declares what the generated code uses and
 * nothing else:
 *   - the exit actions, the dispatch and the catch-all handler;
 *   - struct vcpu, through arch/vmx/vcpu.h, which is already only the part
 *     the generated code and the exit stub touch (registers, statistics,
 *     manual MSR slots, controls cache);
 *   - the types the tables are made of (arch/vmx/policy.h,
 *     arch/vmx/vmx_controls.h) and the profile as data
 *     (arch/vmx/profile_values.h);
 *   - the statistics slots (arch/vmx/exit_stats.h, through vcpu.h);
 *   - array_index_nospec() for the dispatch's table;
 *   - the manual MSR switching and the fast handlers' answers, each only
 *     for the generated file that asks (at the end).
 * Common objects read it (through the generated exit_handlers.h), so it
 * includes no generated per-profile header: profile.h, msr_policy.h,
 * msr_switch.h and runtime_profile.h stay out of it.
 */
#ifndef EXITPLAN_GENERATED_API_H
#define EXITPLAN_GENERATED_API_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/*
 * Before any include: vcpu.h reads the generated exit_handlers.h, which
 * includes this header for the action's type.
 *
 * The values are the stub's (exit.c checks them): RESUME is 0, so that
 * the one CMPQ of the action and nmi_pending finds "resume, no NMI"; a
 * stop or a switch is returned as it is, as vmx_enter_guest()'s result
 * (VMX_ENTER_STOPPED, VMX_ENTER_SWITCHED in vcpu_asm.h; 2 is
 * VMX_ENTER_VMFAIL, no action).
 */
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
 * Hand-written (vcpu_stop.c): every reason the dispatch has no handler for,
 * including those above the highest reason the SDM defines, and a failed
 * VM entry (bit 31 set, reported as such).  Prints the exit information
 * and VMCS state, and stops the guest.  Never skips.
 */
enum vmx_exit_action handle_unexpected_exit(struct vcpu *vcpu, uint16_t basic_reason);

/* Defined by the generated vmcs_setup.c; declared for the runtime in runtime/vm/vmm.h. */
extern const char vmm_profile_name[];

#include "runtime/host/nospec.h"	/* array_index_nospec(): the dispatch's table */
#include "arch/vmx/policy.h"		/* struct msr_bitmap_rule, io_port_range */
#include "arch/vmx/vmx_controls.h"	/* struct vmx_profile_setup, vmx_gate, ... */
#include "arch/vmx/vcpu.h"		/* struct vcpu (the generated code's part) */
#include "arch/vmx/profile_values.h"	/* struct exitplan_profile, the tables */

#endif /* EXITPLAN_GENERATED_API_H */

/*
 * Outside the guard: a per-profile generated file asks for one of these
 * by defining its macro before it includes this header, and gets it even
 * when the header was read before.  Both read per-profile generated
 * headers, so no common object may ask.
 *
 * Manual MSR switching: the generated msr_switch.h defines
 * PROFILE_MANUAL_MSRS(X) and gets the code that expands it, the same for
 * every profile.
 */
#if defined(PROFILE_MANUAL_MSRS) && !defined(EXITPLAN_GENERATED_API_MANUAL_MSRS)
#define EXITPLAN_GENERATED_API_MANUAL_MSRS
#include "arch/vmx/manual_msrs.h"
#endif

/*
 * The fast handlers (generated cpuid_fast.c and msr_io_fast.c of a
 * profile with a fast: section) define GENERATED_API_FAST_HANDLERS: they
 * inline the general handlers' own answers (arch/vmx/msr_io_fast.h) and
 * the instruction skip (arch/vmx/vcpu_regs.h), which is what makes them
 * fast; the answers stay hand-written in one place.
 */
#if defined(GENERATED_API_FAST_HANDLERS) && !defined(EXITPLAN_GENERATED_API_FAST)
#define EXITPLAN_GENERATED_API_FAST
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/msr_io_fast.h"
#endif
