// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's 8259A pair (runtime/vpic.c) as the source of external
 * interrupts, the VT-x side: on a PC the master's INT reaches the boot
 * CPU's LINT0, which the BIOS leaves in ExtINT mode (virtual wire), and
 * the CPU's INTA cycle fetches the vector from the 8259.  Here vCPU 0
 * runs the INTA when the guest can take the interrupt (at once, or at the
 * interrupt-window exit it asks for) and injects the vector as any
 * virtual interrupt (events.c).  The 8254's next IR0 request arms the
 * VMX-preemption timer, so a guest in `sti; hlt`, or spinning on a tick
 * count, gets its ticks; under a profile without the timer (vmexit-bench)
 * the runtime switches it on while a deadline is armed (msr.c).
 *
 * Not yet: the guest's LINT0 programming is not consulted, and IR0 is
 * not routed through the emulated IO-APIC's pin 2 (the MADT's interrupt
 * source override), the route Linux's check_timer() tries first.
 */
#include "platform.h"
#include "spinlock.h"
#include "vm.h"
#include "vmcs_fields.h"
#include "vcpu_arch.h"
#include "events.h"
#include "msr.h"
#include "vmx_ops.h"
#include "vmx_controls_bits.h"

void vmx_legacy_irq_update(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	bool intr, take;
	uint8_t vector = 0;
	uint64_t next;

	if (vcpu->id != 0)
		return;			/* the 8259s are wired to the boot CPU */
	/*
	 * The INTA only when the guest can take the interrupt now: until
	 * then the request stays in the 8259's IRR, where a mask or a new
	 * ICW1 from the guest can still withdraw it, as on hardware.
	 */
	take = vmx_guest_interruptible() &&
	       !(vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID);
	spin_lock(&vcpu->vm->platform_lock);
	intr = platform_legacy_int(a->platform, rdtsc(), &next);
	if (intr && take)
		vector = platform_legacy_inta(a->platform);
	spin_unlock(&vcpu->vm->platform_lock);

	a->legacy_int_waiting = intr && !take;
	if (intr && take)
		vmx_deliver_irq(vcpu, vector);
	else if (intr)
		vmx_set_intr_window(vcpu, true);
	/* Only a new deadline restarts the timer: the profile's period stands. */
	if (next != a->pit_deadline) {
		a->pit_deadline = next;
		vmx_program_preemption_timer(vcpu);
	}
}
