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

#include "exit_handlers.h"	/* generated: struct cpuid_regs, CPUID_FAST_LEAVES_MAX */
#include "arch/vmx/exit_stats.h"
#include "msr_table.h"		/* generated: MSR_MANUAL_MAX */
#include "arch/vmx/vmx_controls.h"	/* enum vmx_ctl_field */

/*
 * Guest general-purpose registers (RSP is in the VMCS).  The exit stub
 * PUSHes the first eight straight into place (HOST_RSP points just past
 * r9), so their order is the stub's pop order: keep it.  RBP and
 * R10-R15 are never used by host C (the image is compiled with -ffixed-*
 * for them, runtime/runtime.mk): during an exit they stay live in the
 * registers, and their slots here are valid only while the guest is not
 * in an exit (before VMLAUNCH, after it stopped) or after
 * vcpu_spill_fixed_regs().  Handlers go through vcpu_gpr_read/write().
 */
struct guest_regs {
	uint64_t rax, rcx, rdx, rbx, rsi, rdi;
	uint64_t r8, r9, r10, r11;
	uint64_t rbp, r12, r13, r14, r15;
	uint64_t cr2;
};

/*
 * Guest and host values of the MSRs the profile switches by hand, in its
 * slots (PROFILE_MANUAL_MSR_*, the generated msr_policy.h).  The runtime
 * fills host[] once per vCPU (profile_msrs_save_host()) and guest[] with
 * the guest's initial values; the RDMSR/WRMSR handlers of a trapped
 * manual MSR read and write guest[] (profile_msr_manual_slot()).  Room
 * for every MSR spec/msrs.yaml lets be switched so, not just the
 * profile's: struct vcpu's layout is the same for every profile, so the
 * files that only reach it compile once (runtime/runtime.mk).
 */
struct profile_msr_state {
	uint64_t guest[MSR_MANUAL_MAX];
	uint64_t host[MSR_MANUAL_MAX];
};

struct vmx_controls;
struct percpu;
struct vm;
struct vm_vcpu;

struct vcpu {
	struct guest_regs regs;		/* first: the exit stub addresses it */
	/*
	 * For the stub (offset in vcpu_asm.h): the RSP vmx_enter_guest()
	 * returns through when the guest stops.  The exit stack needs no
	 * pointer: it is the pages just below the vcpu (vmx.c), so the
	 * stub's PUSHes leave RSP on its top.
	 */
	uint64_t host_rsp;
	/*
	 * An NMI arrived while this vCPU's CPU was in VMX root operation
	 * (runtime/host/traps.c): the stub tests it just before VMRESUME and has
	 * vmx_deliver_pending_nmi() inject it (offset in vcpu_asm.h).
	 */
	uint32_t nmi_pending;
	/*
	 * The stub's copy of the action the dispatch returned on this exit
	 * (enum vmx_exit_action), written on every exit.  Beside nmi_pending,
	 * in the same aligned 8 bytes, so that one CMPQ before VMRESUME tests
	 * both: resume with no NMI waiting is the only case with all 64 bits
	 * zero (offset in vcpu_asm.h).
	 */
	uint32_t exit_action;
	/*
	 * Set when exits need more than the dispatch: manual MSR switching
	 * active on this CPU, or per-reason timing.  HOST_RIP is then the
	 * stub that goes through vmx_handle_exit(); otherwise the stub calls
	 * the dispatch itself.
	 */
	bool exit_hooks;
	/*
	 * Derived once (vcpu_setup_msrs()): has_tsc_deadline &&
	 * !tsc_deadline_emulated, so a WRMSR IA32_TSC_DEADLINE goes to the
	 * CPU's MSR.  Here, not in vcpu_arch_state, so that the fast handler's
	 * common write (0, the disarm) loads no arch pointer.
	 */
	bool tsc_deadline_to_cpu;
	unsigned int id;
	struct vm *vm;			/* the machine it belongs to (runtime/vm/vm.h) */
	struct vm_vcpu *vv;		/* its run state and posted events there */
	struct percpu *cpu;		/* the physical CPU running it */
	const struct vmx_controls *controls;
	/*
	 * The controls cache: the five control fields as this vCPU's VMCS
	 * holds them now (controls above is what setup computed; these
	 * follow the interrupt and NMI windows and IA-32e mode).  Written
	 * only through vmx_ctls.h, which writes the VMCS too; handlers read
	 * them here instead of with VMREAD.
	 */
	uint32_t ctls[VMX_CTL_FIELDS];
	uint64_t vmcs_pa;		/* physical address of its VMCS */
	void *vmcs;
	bool launched;			/* VMLAUNCH done; VMRESUME from now on */
	struct profile_msr_state msrs;	/* manual MSR switching */
	/*
	 * The answers of the profile's fast.cpuid_leaves, in its order,
	 * filled once by cpuid_fast_init() (generated cpuid_fast.c).
	 */
	struct cpuid_regs cpuid_fast[CPUID_FAST_LEAVES_MAX];
	struct exit_stats stats;
	struct vcpu_arch_state *arch;	/* the rest of the VT-x state */
};

#endif /* EXITPLAN_VCPU_H */
