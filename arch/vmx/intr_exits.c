// SPDX-License-Identifier: GPL-2.0-only
/*
 * The interrupt exits, above the device models they hand interrupts to
 * (apic.c, ioapic_exits.c, legacy_irq.c, vlapic_exits.c), which inject
 * through events.c below them: the external-interrupt exit, the
 * interrupt-window exit, and the NMIs that arrive in VMX root operation.
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

/*
 * NMIs in root operation.  The exit stub tests vcpu->nmi_pending twice
 * before VMRESUME (exit_entry.S); an NMI between those tests and the
 * VMRESUME sends the stub back to them.
 */
extern const char vmx_nmi_check[], vmx_nmi_check_end[];
extern const char vmx_nmi_recheck[], vmx_nmi_recheck_end[];
extern const char vmx_wait_window[], vmx_wait_window_end[];

static bool rip_in(uint64_t rip, const char *first, const char *last)
{
	return rip >= (uintptr_t)first && rip <= (uintptr_t)last;
}

bool vmm_nmi_in_root(struct interrupt_frame *f)
{
	struct vcpu *vcpu;
	enum vmx_root_wait wait;
	uint32_t bit;
	bool kick;

	if (!percpu_bsp_ready)
		return false;
	/*
	 * Claimed first, whatever the CPU does: a flag left set would stop
	 * every later kick to it (one in flight at most, apic.c).  A kick
	 * that finds no vCPU is spent too.
	 */
	kick = vmx_kick_nmi_claim(this_cpu_id());
	if (!(vcpu = this_cpu()->vcpu) || !vcpu->arch || vcpu->arch->stop != VCPU_RUNNING)
		return false;
	wait = READ_ONCE(vcpu->arch->waiting_in_root);
	bit = vmx_nmi_in_root_bit(kick, wait);
	if (wait != VMX_WAIT_NONE) {
		/*
		 * A vCPU waiting in root operation (vmx_run.c's
		 * vmx_wait_in_root()): a kick, or the guest's own NMI (an LVT
		 * entry of its own in NMI mode, under `apic: passthrough`),
		 * ends the CPU's HLT and the waiter re-checks.  The guest's
		 * ends a HLT wait as it ends HLT on hardware and is injected
		 * at the next entry (vmx_wakeup_posted() sees ARRIVED); in
		 * wait-for-SIPI, which blocks NMIs, it is dropped.  Landed
		 * after the waiter's test of wait_woken: skip the HLT.  (Kicks
		 * here are not counted in kicks_in_root: those are the ones
		 * that made a running guest exit again.)
		 */
		if (bit) {
			__atomic_or_fetch(&vcpu->nmi_pending, bit, __ATOMIC_RELAXED);
			vcpu->arch->nmis_in_root++;
		}
		WRITE_ONCE(vcpu->arch->wait_woken, 1);
		if (rip_in(f->rip, vmx_wait_window, vmx_wait_window_end))
			f->rip = (uintptr_t)vmx_wait_window_end;
		return true;
	}
	if (kick) {
		/*
		 * A kick (apic.c) while the CPU handles an exit.  The stub's
		 * test before VMRESUME sees the KICK bit and makes the guest
		 * exit again at once (vmx_deliver_pending_nmi()), where its
		 * events are taken; back to the first test, which tests every
		 * bit (the second tests ARRIVED only).
		 */
		__atomic_or_fetch(&vcpu->nmi_pending, VCPU_NMI_KICK, __ATOMIC_RELAXED);
		if (rip_in(f->rip, vmx_nmi_check, vmx_nmi_check_end) ||
		    rip_in(f->rip, vmx_nmi_recheck, vmx_nmi_recheck_end))
			f->rip = (uintptr_t)vmx_nmi_check;
		vcpu->arch->kicks_in_root++;
		return true;
	}
	__atomic_or_fetch(&vcpu->nmi_pending, bit, __ATOMIC_RELAXED);
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
