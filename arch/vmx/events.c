// SPDX-License-Identifier: GPL-2.0-only
/*
 * Event injection (SDM Vol. 3C 27.6) and the guest-RIP advance.
 *
 * Two rules from the SDM and from Bochs (shared/design/PLATFORM.md):
 * an external interrupt is injected only when the guest could take it
 * (RFLAGS.IF = 1, no STI or MOV-SS blocking), otherwise the entry fails;
 * such an interrupt waits in vcpu->arch with interrupt-window exiting on.
 */
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "exit_handlers.h"
#include "spec_gaps.h"
#include "vmcs_fields.h"
#include "vmx.h"
#include "vmx_controls_bits.h"

void vmx_inject_exception(struct vcpu *vcpu, unsigned int vector, bool has_error,
			  uint32_t error_code)
{
	uint32_t info = INTR_INFO_VALID | INTR_INFO_TYPE_HW_EXCEPTION | vector;

	(void)vcpu;
	if (has_error) {
		info |= INTR_INFO_DELIVER_CODE;
		vmcs_write(VM_ENTRY_EXCEPTION_ERROR_CODE, error_code);
	}
	/*
	 * A fault is delivered with RIP at the faulting instruction: the
	 * handler does not advance RIP.  An exception may be injected in an
	 * STI shadow (only external interrupts and NMIs are blocked by it,
	 * SDM 26.3.1.5), so the interruptibility state stays as it is.
	 */
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, info);
}

void vmx_inject_gp(struct vcpu *vcpu)
{
	vmx_inject_exception(vcpu, X86_EXC_GP, true, 0);
}

void vmx_inject_ud(struct vcpu *vcpu)
{
	vmx_inject_exception(vcpu, X86_EXC_UD, false, 0);
}

bool vmx_guest_interruptible(void)
{
	return (vmcs_read(GUEST_RFLAGS) & X86_RFLAGS_IF) &&
	       !(vmcs_read32(GUEST_INTERRUPTIBILITY_INFO) &
		 (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

static void vmx_set_intr_window(struct vcpu *vcpu, bool on)
{
	uint32_t ctl = vmcs_read32(CPU_BASED_VM_EXEC_CONTROL);
	uint32_t want = on ? ctl | CPU_BASED_INTR_WINDOW_EXITING
			   : ctl & ~(uint32_t)CPU_BASED_INTR_WINDOW_EXITING;

	(void)vcpu;
	if (want != ctl)
		vmcs_write(CPU_BASED_VM_EXEC_CONTROL, want);
}

/*
 * Inject the queued interrupt if the guest can take it now and no other
 * event is being injected; keep the window open otherwise.  Returns true
 * when it was injected.
 */
static bool vmx_try_inject_pending(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (!a->irq_pending)
		return false;
	if (!vmx_guest_interruptible() ||
	    (vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID)) {
		vmx_set_intr_window(vcpu, true);
		return false;
	}
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD,
		   INTR_INFO_VALID | INTR_INFO_TYPE_EXT_INTR | a->irq_vector);
	/* An interrupt wakes a halted guest (Bochs may have left it in HLT). */
	vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	a->irq_pending = false;
	vmx_set_intr_window(vcpu, false);
	return true;
}

void vmx_deliver_irq(struct vcpu *vcpu, uint8_t vector)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/*
	 * One slot is enough: the interrupt was acknowledged on exit, and the
	 * local APIC raises no lower-priority one until the guest's EOI.  A
	 * second one arriving before the first is injected would be a bug in
	 * this code; report it rather than lose it silently.
	 */
	if (a->irq_pending && a->irq_vector != vector)
		printk("exitplan: interrupt %u dropped: %u still pending\n", vector, a->irq_vector);
	a->irq_pending = true;
	a->irq_vector = vector;
	vmx_try_inject_pending(vcpu);
}

/* Interrupt-window exit: the guest can take the queued interrupt now. */
enum vmx_exit_action handle_interrupt_window(struct vcpu *vcpu)
{
	if (!vmx_try_inject_pending(vcpu) && !vcpu->arch->irq_pending)
		vmx_set_intr_window(vcpu, false);
	return VMX_EXIT_RESUME;
}

/* External interrupt, acknowledged on exit (SDM 25.7.1, 28.2.2). */
enum vmx_exit_action handle_external_interrupt(struct vcpu *vcpu)
{
	uint32_t info = vmcs_read32(VM_EXIT_INTR_INFO);

	if (!(info & INTR_INFO_VALID)) {
		/*
		 * Without "acknowledge interrupt on exit" the interrupt is still
		 * pending in the APIC: let the guest take it through its IDT by
		 * resuming it with interrupts unmasked -- but then external-
		 * interrupt exiting would bring us straight back.  A profile
		 * that exits on interrupts must acknowledge them.
		 */
		return vcpu_stop(vcpu, "external-interrupt exit without acknowledge-on-exit");
	}
	vmx_deliver_irq(vcpu, info & INTR_INFO_VECTOR_MASK);
	return VMX_EXIT_RESUME;
}
