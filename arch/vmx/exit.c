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
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "arch/vmx/exit.h"
#include "exit_handlers.h"
#include "lib/format.h"
#include "msr_switch.h"
#include "profile.h"
#include "lib/string.h"
#include "arch/vmx/vcpu_asm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_regs.h"
#include "vmx_exit_reasons.h"

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

static enum vmx_exit_action vmx_entry_failed(struct vcpu *vcpu, uint32_t reason);

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

/* One direct-indexed range of a breakdown: count[i] is key base + i. */
struct stats_range {
	uint64_t base;
	const uint64_t *count;
	unsigned int n;
};

/*
 * One breakdown map of the statistics document (docs/STATS.md): the
 * direct ranges, then the table, then `other`.  Keys in hex, or decimal.
 */
static void print_breakdown(const char *name, bool hex, const struct stats_range *ranges,
			    unsigned int n_ranges, const struct exit_stats_table *t)
{
	const char *sep = "";

	printk("      %s: {", name);
	for (unsigned int r = 0; r < n_ranges; r++) {
		for (unsigned int i = 0; i < ranges[r].n; i++) {
			if (!ranges[r].count[i])
				continue;
			printk(hex ? "%s0x%llx: %llu" : "%s%llu: %llu", sep,
			       (unsigned long long)(ranges[r].base + i),
			       (unsigned long long)ranges[r].count[i]);
			sep = ", ";
		}
	}
	for (unsigned int i = 0; i < EXIT_STATS_KEYS; i++) {
		/* A slot claimed for a fast handler's key (profile.h) may be unused. */
		if (!t->key[i] || !t->count[i])
			continue;
		printk(hex ? "%s0x%llx: %llu" : "%s%llu: %llu", sep,
		       (unsigned long long)(t->key[i] - 1), (unsigned long long)t->count[i]);
		sep = ", ";
	}
	if (t->other)
		printk("%sother: %llu", sep, (unsigned long long)t->other);
	printk("}\n");
}

void exit_stats_print_breakdowns(const struct exit_stats *st)
{
	const struct stats_range msr_read[] = {
		{ MSR_IA32_X2APIC_FIRST, st->msr_read_x2apic, EXIT_STATS_X2APIC },
	};
	const struct stats_range msr_write[] = {
		{ MSR_IA32_X2APIC_FIRST, st->msr_write_x2apic, EXIT_STATS_X2APIC },
	};
	const struct stats_range cpuid[] = {
		{ 0, st->cpuid_basic, EXIT_STATS_CPUID_BASIC },
		{ CPUID_HYPERVISOR_BASE, st->cpuid_hv, EXIT_STATS_CPUID_HV },
		{ CPUID_LEAF_EXT_BASE, st->cpuid_ext, EXIT_STATS_CPUID_EXT },
	};
	const struct stats_range hypercall[] = {
		{ 0, st->hypercall_low, EXIT_STATS_HYPERCALLS },
	};

	print_breakdown("msr_read", true, msr_read, ARRAY_SIZE(msr_read), &st->msr_read);
	print_breakdown("msr_write", true, msr_write, ARRAY_SIZE(msr_write), &st->msr_write);
	print_breakdown("io", true, NULL, 0, &st->io);
	print_breakdown("cpuid", true, cpuid, ARRAY_SIZE(cpuid), &st->cpuid);
	print_breakdown("hypercall", false, hypercall, ARRAY_SIZE(hypercall), &st->hypercall);
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
