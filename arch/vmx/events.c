// SPDX-License-Identifier: GPL-2.0-only
/*
 * Event injection (SDM Vol. 3C 27.6): exceptions, external interrupts, the
 * interrupt window.
 *
 * Two rules from the SDM and from Bochs (docs/PLATFORM.md):
 * an external interrupt is injected only when the guest could take it
 * (RFLAGS.IF = 1, no STI or MOV-SS blocking), otherwise the entry fails;
 * such an interrupt waits in vcpu->arch with interrupt-window exiting on.
 *
 * Interrupts that arrive while one is queued coalesce in the virtual IRR
 * (one bit per vector), as in the APIC's own IRR.  And an interrupt storm
 * (a periodic APIC timer with a tiny count) cannot starve the guest: the
 * time an exit takes is time the APIC counts too, so the next interrupt
 * is always already pending when the last handler returns.  When one is
 * to be injected where the previous one was (same RIP: the guest has run
 * nothing but handlers since), the guest first gets one instruction of
 * its own -- an entry in the STI shadow with interrupt-window exiting,
 * the same one-instruction delay STI itself gives -- and the interrupt
 * comes after it.  Hardware could have delivered it one instruction later
 * too; the guest always makes progress.
 */
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "exit_handlers.h"
#include "mmio.h"
#include "percpu.h"
#include "traps.h"
#include "vcpu_asm.h"
#include "vmcs_fields.h"
#include "vmm.h"
#include "vcpu_arch.h"
#include "vcpu_stop.h"
#include "legacy_irq.h"
#include "apic.h"
#include "vlapic_exits.h"
#include "vmx_ctls.h"
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

void vmx_set_intr_window(struct vcpu *vcpu, bool on)
{
	if (on)
		vcpu_ctls_setbit(vcpu, VMX_PROC_BASED, CPU_BASED_INTR_WINDOW_EXITING);
	else
		vcpu_ctls_clearbit(vcpu, VMX_PROC_BASED, CPU_BASED_INTR_WINDOW_EXITING);
}

/* The highest queued vector, or -1 (the APIC, too, delivers the highest first). */
static int irr_highest(const struct vcpu_arch_state *a)
{
	for (int w = 3; w >= 0; w--) {
		if (a->irr[w])
			return w * 64 + 63 - __builtin_clzll(a->irr[w]);
	}
	return -1;
}

/*
 * Inject the highest queued interrupt if the guest can take it now and no
 * other event is being injected; keep the window open otherwise.  Returns
 * true when one was injected.  @fresh: the vector whose exit this is (it
 * is injected as it arrives), or -1.
 */
static bool inject_pending(struct vcpu *vcpu, int fresh)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t rip;
	int vector;

	if (!a->irq_pending)
		return false;
	if (!vmx_guest_interruptible() ||
	    (vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID)) {
		vmx_set_intr_window(vcpu, true);
		return false;
	}
	rip = vmcs_read(GUEST_RIP);
	if (a->last_inject_valid && rip == a->last_inject_rip && !a->inject_stepped &&
	    vmcs_read32(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_ACTIVE) {
		/* One instruction first (the STI shadow needs RFLAGS.IF, which is set). */
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
			   vmcs_read32(GUEST_INTERRUPTIBILITY_INFO) | GUEST_INTR_STATE_STI);
		vmx_set_intr_window(vcpu, true);
		a->inject_stepped = true;
		a->storm_steps++;
		return false;
	}
	a->inject_stepped = false;
	a->last_inject_rip = rip;
	a->last_inject_valid = true;
	vector = irr_highest(a);
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD,
		   INTR_INFO_VALID | INTR_INFO_TYPE_EXT_INTR | (uint32_t)vector);
	/* An interrupt wakes a halted guest (Bochs may have left it in HLT). */
	vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	a->irr[vector / 64] &= ~(1ull << (vector % 64));
	a->irq_pending = irr_highest(a) >= 0;
	/*
	 * Acknowledge-on-exit moved the vector to the APIC's ISR when it
	 * arrived, so its IRR could latch it again meanwhile; on the CPU the
	 * guest thinks it is, the interrupt stayed in the IRR until now and
	 * the second request coalesced with it.  The one the APIC latched is
	 * dropped when it arrives (an edge: a level-triggered one is its
	 * source's to re-assert).  Not for an interrupt injected at its own
	 * exit: it was not held back, and one arriving now would come after
	 * it on hardware too.
	 */
	if (vector != fresh && vmx_apic_irr_pending_edge((uint8_t)vector))
		a->coalesce[vector / 64] |= 1ull << (vector % 64);
	/* More queued: the window exit after this one's delivery injects the next. */
	vmx_set_intr_window(vcpu, a->irq_pending);
	return true;
}

bool vmx_try_inject_pending(struct vcpu *vcpu)
{
	return inject_pending(vcpu, -1);
}

void vmx_deliver_irq(struct vcpu *vcpu, uint8_t vector)
{
	struct vcpu_arch_state *a = vcpu->arch;
	bool queued = a->irr[vector / 64] & (1ull << (vector % 64));

	a->irr[vector / 64] |= 1ull << (vector % 64);
	a->irq_pending = true;
	inject_pending(vcpu, queued ? -1 : vector);
}

/* Interrupt-window exit: the guest can take the queued interrupt now. */
enum vmx_exit_action handle_interrupt_window(struct vcpu *vcpu)
{
	if (vcpu->arch->legacy_int_waiting)
		vmx_legacy_irq_update(vcpu);	/* the 8259s' INTA, now (legacy_irq.c) */
	if (PROFILE_APIC_VIRTUAL) {
		/* An 8259 vector (ExtINT) waits here beside the virtual APIC's (legacy_irq.c). */
		if (vcpu->arch->irq_pending)
			vmx_try_inject_pending(vcpu);
		return vmx_vlapic_interrupt_window(vcpu);
	}
	if (!vmx_try_inject_pending(vcpu) && !vcpu->arch->irq_pending)
		vmx_set_intr_window(vcpu, false);
	return VMX_EXIT_RESUME;
}

/*
 * An exit that interrupted the delivery of an event through the guest's
 * IDT (SDM Vol. 3C 28.2.4): deliver it again on the next entry, or it is
 * lost (KVM's vmx_complete_interrupts).
 */
void vmx_reinject_idt_vectoring(void)
{
	uint32_t idt = vmcs_read32(IDT_VECTORING_INFO_FIELD);
	uint32_t type = idt & INTR_INFO_TYPE_MASK;

	if (!(idt & INTR_INFO_VALID))
		return;
	if (idt & INTR_INFO_DELIVER_CODE)
		vmcs_write(VM_ENTRY_EXCEPTION_ERROR_CODE, vmcs_read32(IDT_VECTORING_ERROR_CODE));
	if (type == INTR_INFO_TYPE_SW_INT || type == INTR_INFO_TYPE_PRIV_SW_EXC ||
	    type == INTR_INFO_TYPE_SW_EXC)
		vmcs_write(VM_ENTRY_INSTRUCTION_LEN, vmcs_read32(VM_EXIT_INSTRUCTION_LEN));
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, idt & (INTR_INFO_VALID | INTR_INFO_TYPE_MASK |
						    INTR_INFO_VECTOR_MASK | INTR_INFO_DELIVER_CODE));
}

/* --- NMIs ---------------------------------------------------------------- */

/*
 * An NMI that reaches the hypervisor (an NMI arriving in VMX root
 * operation, or an NMI exit) is the guest's: the hypervisor sends none
 * itself, and the local APIC and LINT1 belong to the guest.  It is
 * delivered to the guest as a virtual NMI on the next VM entry, or as
 * soon as the guest can take one (SDM Vol. 3C 27.6.1.2 and the VM-entry
 * checks of 27.3.1.5: not while "blocking by NMI", STI or MOV-SS blocking
 * is in force, nor together with another injected event).  Like the
 * CPU's own NMI latch it holds one: more NMIs meanwhile coalesce into it.
 */
extern const char vmx_nmi_check[], vmx_nmi_check_end[];
extern const char vmx_nmi_recheck[], vmx_nmi_recheck_end[];

static bool rip_in(uint64_t rip, const char *first, const char *last)
{
	return rip >= (uintptr_t)first && rip <= (uintptr_t)last;
}

bool vmm_nmi_in_root(struct interrupt_frame *f)
{
	struct vcpu *vcpu;

	if (!percpu_bsp_ready || !(vcpu = this_cpu()->vcpu) || !vcpu->arch ||
	    vcpu->arch->stop != VCPU_RUNNING)
		return false;
	/*
	 * A vCPU waiting in root operation (vmx_run.c's vmx_wait_in_root()) is
	 * woken by vmm_kick()'s NMI: the host's, not the guest's.  The guest
	 * cannot send a physical NMI (its ICR writes are emulated, apic.c).
	 */
	if (READ_ONCE(vcpu->arch->waiting_in_root))
		return false;
	__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
	/*
	 * Between the stub's last test and VMRESUME (exit_entry.S): test
	 * again, or the NMI would wait for the next exit.  Both tests are
	 * a CMP or TEST and a jump: nothing to undo.
	 */
	if (rip_in(f->rip, vmx_nmi_check, vmx_nmi_check_end))
		f->rip = (uintptr_t)vmx_nmi_check;
	else if (rip_in(f->rip, vmx_nmi_recheck, vmx_nmi_recheck_end))
		f->rip = (uintptr_t)vmx_nmi_recheck;
	vcpu->arch->nmis_in_root++;
	return true;
}

static void vmx_set_nmi_window(struct vcpu *vcpu, bool on)
{
	/* NMI-window exiting exists only with virtual NMIs (SDM 26.2.1.1). */
	if (!on)
		vcpu_ctls_clearbit(vcpu, VMX_PROC_BASED, CPU_BASED_NMI_WINDOW_EXITING);
	else if (vcpu_ctls(vcpu, VMX_PIN_BASED) & PIN_BASED_VIRTUAL_NMIS)
		vcpu_ctls_setbit(vcpu, VMX_PROC_BASED, CPU_BASED_NMI_WINDOW_EXITING);
}

/* Inject the queued NMI if the guest can take it now; true when it was. */
static bool vmx_try_inject_nmi(struct vcpu *vcpu)
{
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);

	if ((vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID) ||
	    (intr & (GUEST_INTR_STATE_NMI | GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS))) {
		/*
		 * With virtual NMIs the NMI-window exit says when; without,
		 * the NMI is tried again at every exit until it goes in.
		 */
		vmx_set_nmi_window(vcpu, true);
		return false;
	}
	vmcs_write(VM_ENTRY_INTR_INFO_FIELD, INTR_INFO_VALID | INTR_INFO_TYPE_NMI | X86_EXC_NMI);
	/* An NMI ends HLT (SDM Vol. 3C 27.6.1.2 does not keep the activity state for it). */
	if (vmcs_read32(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
		vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
	vmx_set_nmi_window(vcpu, false);
	return true;
}

/* Called by the exit stub just before VMRESUME when vcpu->nmi_pending is set. */
void vmx_deliver_pending_nmi(struct vcpu *vcpu)
{
	/* ARRIVED becomes QUEUED: one NMI, however many arrived. */
	__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_QUEUED, __ATOMIC_RELAXED);
	__atomic_and_fetch(&vcpu->nmi_pending, ~(uint32_t)VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
	if (vmx_try_inject_nmi(vcpu))
		__atomic_and_fetch(&vcpu->nmi_pending, ~(uint32_t)VCPU_NMI_QUEUED,
				   __ATOMIC_RELAXED);
}

/* NMI-window exit (virtual NMIs only): the guest can take its NMI now. */
enum vmx_exit_action handle_nmi_window(struct vcpu *vcpu)
{
	vmx_set_nmi_window(vcpu, false);
	/* The stub's test before VMRESUME injects it. */
	if (vcpu->nmi_pending & VCPU_NMI_QUEUED)
		__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
	return VMX_EXIT_RESUME;
}

/* An NMI exit (NMI exiting): queue it like one that arrived in root. */
void vmx_queue_nmi(struct vcpu *vcpu)
{
	__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_ARRIVED, __ATOMIC_RELAXED);
}

/* External interrupt, acknowledged on exit (SDM 25.7.1, 28.2.2). */
enum vmx_exit_action handle_external_interrupt(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint32_t info = vmcs_read32(VM_EXIT_INTR_INFO);
	uint8_t vector;

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
	vmx_reinject_idt_vectoring();
	vector = info & INTR_INFO_VECTOR_MASK;
	/* Another CPU posted this vCPU events (apic.c): not the guest's interrupt. */
	if (vector == VMX_KICK_VECTOR)
		return vmx_kicked(vcpu);
	if (PROFILE_APIC_VIRTUAL) {
		/*
		 * A host device's interrupt for the guest: ended here, raised
		 * in the virtual APIC of the vCPU its I/O APIC entry names
		 * (ioapic_exits.c).
		 */
		vmx_apic_eoi();
		return vmx_ioapic_deliver(vcpu, vector);
	}
	if (unlikely(a->coalesce[vector / 64] & (1ull << (vector % 64)))) {
		/* A duplicate (vmx_try_inject_pending()): the host acknowledged it, it ends it. */
		a->coalesce[vector / 64] &= ~(1ull << (vector % 64));
		vmx_apic_eoi();
		return VMX_EXIT_RESUME;
	}
	vmx_deliver_irq(vcpu, vector);
	return VMX_EXIT_RESUME;
}
