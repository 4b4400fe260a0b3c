// SPDX-License-Identifier: GPL-2.0-only
/*
 * The C half of the exit path (the stub is exit_entry.S): read the exit
 * reason, catch failed VM entries, switch the manually switched MSRs,
 * call the generated dispatch.  The reporting side (unexpected exits,
 * failed entries, stopping a guest) is vcpu_stop.c's: the handlers call
 * it, and it calls nothing that reaches the dispatch again.
 */
#include <stddef.h>

#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "arch/vmx/exit.h"
#include "msr_switch.h"
#include "profile.h"
#include "arch/vmx/vcpu_asm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_stop.h"
#include "vmx_exit_reasons.h"
#include "arch/vmx/vmx_ops.h"

/* The stub's view of struct vcpu must match C's. */
BUILD_BUG_ON(offsetof(struct vcpu, regs) != 0);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rax) != VCPU_RAX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rcx) != VCPU_RCX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rdx) != VCPU_RDX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rbx) != VCPU_RBX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rsi) != VCPU_RSI);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rdi) != VCPU_RDI);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r8) != VCPU_R8);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r9) != VCPU_R9);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r9) + 8 != VCPU_PUSHED_END);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r10) != VCPU_R10);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r11) != VCPU_R11);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rbp) != VCPU_RBP);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r12) != VCPU_R12);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r13) != VCPU_R13);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r14) != VCPU_R14);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r15) != VCPU_R15);
BUILD_BUG_ON(offsetof(struct vcpu, regs.cr2) != VCPU_CR2);
BUILD_BUG_ON(offsetof(struct vcpu, host_rsp) != VCPU_HOST_RSP);
BUILD_BUG_ON(offsetof(struct vcpu, nmi_pending) != VCPU_NMI_PENDING);
BUILD_BUG_ON(offsetof(struct vcpu, exit_action) != VCPU_EXIT_ACTION);
/* The stub's CMPQ reads nmi_pending and exit_action as one aligned quadword. */
BUILD_BUG_ON(VCPU_EXIT_ACTION != VCPU_NMI_PENDING + 4 || VCPU_NMI_PENDING % 8 != 0);
BUILD_BUG_ON(VMX_EXIT_RESUME != 0);
/* The stub returns the action as vmx_enter_guest()'s result. */
BUILD_BUG_ON(VMX_EXIT_STOP != VMX_ENTER_STOPPED);
BUILD_BUG_ON(VMX_EXIT_SWITCH != VMX_ENTER_SWITCHED);

/* The VMCS encoding the stub's VMREAD needs, from the generated header. */
const uint64_t vmx_exit_reason_field = VM_EXIT_REASON;

/*
 * Called by the stub instead of the dispatch when vcpu->exit_hooks is
 * set (manual MSR switching active, timing: HOST_RIP is then
 * vmx_exit_stub_hooks).  It tests bit 31 itself, before the dispatch;
 * the plain stub leaves a failed VM entry to handle_unexpected_exit().
 */
enum vmx_exit_action vmx_handle_exit(struct vcpu *vcpu)
{
	enum vmx_exit_action action;
	uint32_t reason;

	if (PROFILE_STATS_LEVEL >= STATS_TIMING)
		vcpu->stats.exit_tsc = rdtsc();
	reason = vmcs_read32(VM_EXIT_REASON);
	profile_msrs_on_exit(vcpu);
	/* Bit 31: the VM entry failed on guest state or MSR loading (SDM 26.8). */
	if (unlikely(reason & VMX_EXIT_REASONS_FAILED_VMENTRY))
		return vmx_entry_failed(vcpu, reason);
	action = vmx_dispatch_exit(vcpu, (uint16_t)reason);
	if (likely(action == VMX_EXIT_RESUME))
		profile_msrs_before_entry(vcpu);
	if (PROFILE_STATS_LEVEL >= STATS_TIMING) {
		uint16_t basic = (uint16_t)reason;

		vcpu->stats.ticks[exit_stats_slot(basic)] += rdtsc() - vcpu->stats.exit_tsc;
	}
	return action;
}
