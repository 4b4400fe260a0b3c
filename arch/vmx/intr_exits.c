// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt exits, above the device models they hand interrupts to
 * (apic.c, ioapic_exits.c, legacy_irq.c, vlapic_exits.c), which inject
 * through events.c below them: the external-interrupt exit, the
 * interrupt-window exit.  The NMIs that arrive in VMX root operation
 * are nmi_root.c's.
 */
#include "arch/vmx/apic.h"
#include "runtime/host/compiler.h"
#include "arch/vmx/events.h"
#include "exit_handlers.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/mmio.h"
#include "arch/vmx/nmi_root.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "arch/vmx/vcpu_arch.h"
#include "profile.h"		/* generated per profile */
#include "arch/vmx/vcpu_asm.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/vlapic_exits.h"
#include "vmcs_fields.h"
#include "runtime/vm/vmm.h"
#include "arch/vmx/vmx_ops.h"

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
	if (PROFILE_APIC_VIRTUAL) {
		/*
		 * Another CPU posted this vCPU events (apic.c): the physical
		 * APIC is the host's alone, so the vector is the kick's.
		 * Elsewhere every vector is the guest's, and kicks are NMIs.
		 */
		if (vector == VMX_KICK_VECTOR)
			return vmx_kicked(vcpu);
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
