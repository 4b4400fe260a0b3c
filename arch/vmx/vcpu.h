/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A virtual CPU.  All per-vCPU state lives here, never in globals, so
 * that more vCPUs than CPUs (overcommit) needs no restructuring.
 *
 * The generated code touches only `stats` (dispatch, when the profile
 * counts exits) and `msrs` (manual MSR switching).  The exit stub relies
 * on `regs` being first; keep it there.
 */
#ifndef EXITPLAN_VCPU_H
#define EXITPLAN_VCPU_H

#include <stdbool.h>
#include <stdint.h>

#include "exit_stats.h"
#include "msr_policy.h"		/* generated per profile: struct profile_msr_state */

/* Guest general-purpose registers the exit stub saves (RSP is in the VMCS). */
struct guest_regs {
	uint64_t rax, rcx, rdx, rbx, rbp, rsi, rdi;
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t cr2;
};

struct vmx_controls;
struct percpu;

struct vcpu {
	struct guest_regs regs;		/* first: the exit stub addresses it */
	/*
	 * Set when exits need more than the dispatch: manual MSR switching
	 * active on this CPU, or per-reason timing.  HOST_RIP is then the
	 * stub that goes through vmx_handle_exit(); otherwise the stub calls
	 * the dispatch itself.
	 */
	bool exit_hooks;
	unsigned int id;
	struct percpu *cpu;		/* the physical CPU running it */
	const struct vmx_controls *controls;
	uint64_t vmcs_pa;		/* physical address of its VMCS */
	void *vmcs;
	bool launched;			/* VMLAUNCH done; VMRESUME from now on */
	struct profile_msr_state msrs;	/* manual MSR switching */
	struct exit_stats stats;
	struct vcpu_arch_state *arch;	/* the rest of the VT-x state */
};

#endif /* EXITPLAN_VCPU_H */
