// SPDX-License-Identifier: GPL-2.0-only
/*
 * The C half of the exit path (the stub is exit_entry.S): read the exit
 * reason, catch failed VM entries, switch the manually switched MSRs,
 * call the generated dispatch.  And the reporting side: unexpected exits,
 * failed entries, stopping a guest.
 */
#include <stdarg.h>
#include <stddef.h>

#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "cpu.h"
#include "exit.h"
#include "exit_handlers.h"
#include "msr_switch.h"
#include "profile.h"
#include "string.h"
#include "vcpu_asm.h"
#include "vmcs_fields.h"
#include "vmx.h"
#include "vmx_exit_reasons.h"

/* The stub's view of struct vcpu must match C's. */
BUILD_BUG_ON(offsetof(struct vcpu, regs) != 0);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rax) != VCPU_RAX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rcx) != VCPU_RCX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rdx) != VCPU_RDX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rbx) != VCPU_RBX);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rbp) != VCPU_RBP);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rsi) != VCPU_RSI);
BUILD_BUG_ON(offsetof(struct vcpu, regs.rdi) != VCPU_RDI);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r8) != VCPU_R8);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r9) != VCPU_R9);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r10) != VCPU_R10);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r11) != VCPU_R11);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r12) != VCPU_R12);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r13) != VCPU_R13);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r14) != VCPU_R14);
BUILD_BUG_ON(offsetof(struct vcpu, regs.r15) != VCPU_R15);
/* The stub returns the action as vmx_enter_guest()'s result. */
BUILD_BUG_ON(VMX_EXIT_STOP != VMX_ENTER_STOPPED);

/* The VMCS encoding the stub's VMREAD needs, from the generated header. */
const uint64_t vmx_exit_reason_field = VM_EXIT_REASON;

static enum vmx_exit_action vmx_entry_failed(struct vcpu *vcpu, uint32_t reason);

/*
 * Called by the stub instead of the dispatch when vcpu->exit_hooks is
 * set (manual MSR switching active, timing: HOST_RIP is then
 * vmx_exit_stub_hooks), and for failed VM entries.
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

static void vcpu_vstop(struct vcpu *vcpu, const char *fmt, va_list ap)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* The first reason wins: it is the cause, later ones are consequences. */
	if (a->stop != VCPU_RUNNING)
		return;
	a->stop = VCPU_STOP_FAULT;
	vsnprintf(a->stop_reason, sizeof(a->stop_reason), fmt, ap);
}

enum vmx_exit_action vcpu_stop(struct vcpu *vcpu, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcpu_vstop(vcpu, fmt, ap);
	va_end(ap);
	return VMX_EXIT_STOP;
}

enum vmx_exit_action vcpu_stop_status(struct vcpu *vcpu, enum vcpu_stop_kind kind, int status)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (a->stop == VCPU_RUNNING) {
		a->stop = kind;
		a->exit_status = status;
	}
	return VMX_EXIT_STOP;
}

void vmx_dump_guest_state(struct vcpu *vcpu)
{
	const struct guest_regs *r = &vcpu->regs;

	printk("  guest RIP %#llx RSP %#llx RFLAGS %#llx\n",
	       (unsigned long long)vmcs_read(GUEST_RIP), (unsigned long long)vmcs_read(GUEST_RSP),
	       (unsigned long long)vmcs_read(GUEST_RFLAGS));
	printk("  guest CR0 %#llx CR3 %#llx CR4 %#llx (shadows CR0 %#llx CR4 %#llx)\n",
	       (unsigned long long)vmcs_read(GUEST_CR0), (unsigned long long)vmcs_read(GUEST_CR3),
	       (unsigned long long)vmcs_read(GUEST_CR4),
	       (unsigned long long)vmcs_read(CR0_READ_SHADOW),
	       (unsigned long long)vmcs_read(CR4_READ_SHADOW));
	printk("  guest CS %#x base %#llx AR %#x; interruptibility %#x activity %u\n",
	       vmcs_read32(GUEST_CS_SELECTOR), (unsigned long long)vmcs_read(GUEST_CS_BASE),
	       vmcs_read32(GUEST_CS_AR_BYTES), vmcs_read32(GUEST_INTERRUPTIBILITY_INFO),
	       vmcs_read32(GUEST_ACTIVITY_STATE));
	printk("  RAX %#llx RBX %#llx RCX %#llx RDX %#llx RSI %#llx RDI %#llx RBP %#llx\n",
	       (unsigned long long)r->rax, (unsigned long long)r->rbx, (unsigned long long)r->rcx,
	       (unsigned long long)r->rdx, (unsigned long long)r->rsi, (unsigned long long)r->rdi,
	       (unsigned long long)r->rbp);
}

enum vmx_exit_action handle_unexpected_exit(struct vcpu *vcpu, uint16_t basic_reason)
{
	printk("exitplan: unexpected VM exit %u (%s): qualification %#llx\n", basic_reason,
	       vmx_exit_reason_name(basic_reason),
	       (unsigned long long)vmcs_read(EXIT_QUALIFICATION));
	printk("  IDT-vectoring info %#x error code %#x; exit interruption info %#x; "
	       "VM-instruction error %u\n",
	       vmcs_read32(IDT_VECTORING_INFO_FIELD), vmcs_read32(IDT_VECTORING_ERROR_CODE),
	       vmcs_read32(VM_EXIT_INTR_INFO), vmcs_read32(VM_INSTRUCTION_ERROR));
	vmx_dump_guest_state(vcpu);
	return vcpu_stop(vcpu, "unexpected VM exit %u (%s) at RIP %#llx", basic_reason,
			 vmx_exit_reason_name(basic_reason),
			 (unsigned long long)vmcs_read(GUEST_RIP));
}

static enum vmx_exit_action vmx_entry_failed(struct vcpu *vcpu, uint32_t reason)
{
	uint16_t basic = (uint16_t)reason;

	/*
	 * Nothing of the guest ran.  On Bochs, bochs.log names the check
	 * that failed ("VMENTER FAIL: ...").
	 */
	printk("exitplan: VM entry failed: exit reason %#x (%s), qualification %#llx\n",
	       reason, vmx_exit_reason_name(basic),
	       (unsigned long long)vmcs_read(EXIT_QUALIFICATION));
	vmx_dump_guest_state(vcpu);
	return vcpu_stop(vcpu, "VM entry failed: %s", vmx_exit_reason_name(basic));
}

void vmx_report_vmresume_failure(struct vcpu *vcpu, uint64_t rflags)
{
	/* The guest's MSR values were loaded for the entry that did not happen. */
	profile_msrs_on_exit(vcpu);
	if (rflags & X86_RFLAGS_CF) {
		printk("exitplan: VMRESUME failed: VMfailInvalid (no current VMCS)\n");
		vcpu_stop(vcpu, "VMRESUME failed: VMfailInvalid");
		return;
	}
	printk("exitplan: VMRESUME failed: VM-instruction error %u\n",
	       vmcs_read32(VM_INSTRUCTION_ERROR));
	vmx_dump_guest_state(vcpu);
	vcpu_stop(vcpu, "VMRESUME failed: VM-instruction error %u",
		  vmcs_read32(VM_INSTRUCTION_ERROR));
}
