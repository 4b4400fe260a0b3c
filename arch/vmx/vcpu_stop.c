// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stopping a vCPU, and the reports that end in a stop: an exit no handler
 * takes, a failed VM entry, a failed VMRESUME.  The handlers and the run
 * loop call these; they call nothing that reaches the exit dispatch
 * again, so the dispatch and its handlers stay below exit.c
 * (tests/make/test_call_graph.py).
 */
#include <stdarg.h>

#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "arch/vmx/exit.h"
#include "lib/format.h"
#include "arch/vmx/profile_values.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/vcpu_stop.h"
#include "vmx_exit_reasons.h"

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

/*
 * Called only from within an exit (the unexpected-exit and failed-entry
 * reports, a failed VMRESUME): RBP and R10-R15 are then still the
 * guest's, live in the registers.
 */
void vmx_dump_guest_state(struct vcpu *vcpu)
{
	const struct guest_regs *r = &vcpu->regs;

	vcpu_spill_fixed_regs(vcpu);

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
	printk("  R8 %#llx R9 %#llx R10 %#llx R11 %#llx R12 %#llx R13 %#llx R14 %#llx R15 %#llx\n",
	       (unsigned long long)r->r8, (unsigned long long)r->r9, (unsigned long long)r->r10,
	       (unsigned long long)r->r11, (unsigned long long)r->r12, (unsigned long long)r->r13,
	       (unsigned long long)r->r14, (unsigned long long)r->r15);
}

enum vmx_exit_action handle_unexpected_exit(struct vcpu *vcpu, uint16_t basic_reason)
{
	uint32_t reason = vmcs_read32(VM_EXIT_REASON);

	/*
	 * The plain exit stub does not test bit 31 (exit_entry.S): a failed
	 * VM entry's basic reasons have no handler and arrive here.
	 */
	if (unlikely(reason & VMX_EXIT_REASONS_FAILED_VMENTRY))
		return vmx_entry_failed(vcpu, reason);
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

enum vmx_exit_action vmx_entry_failed(struct vcpu *vcpu, uint32_t reason)
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
	profile_msrs_on_exit_call(vcpu);
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
