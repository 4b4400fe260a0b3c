// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's 8259A pair and 8254 (runtime/devices/vpic.c, vpit.c) as sources of
 * external interrupts, the VT-x side.  On a PC the 8254's channel 0 OUT
 * drives two inputs at once, and the guest's programming decides which
 * one delivers, to which CPU:
 *
 *   - the master 8259's IR0, whose INT reaches the LINT0 of the CPU that
 *     takes it in ExtINT mode (firmware leaves the BSP so: the virtual
 *     wire).  That vCPU (vm_extint_vcpu(): under apic: virtual whichever
 *     vCPU's virtual APIC has LINT0 unmasked ExtINT, else vCPU 0) runs the
 *     INTA when the guest can take the interrupt (at once, or at the
 *     interrupt-window exit it asks for) and injects the vector as any
 *     external interrupt (events.c).  Found by another vCPU, the INT is
 *     posted to it (vm_events.legacy) and it is kicked;
 *   - the I/O APIC pin the MADT's override of ISA IRQ 0 names (emulated
 *     under every APIC model: the hardware's pin is the host's 8254,
 *     kept masked, ioapic.c).  While the guest's entry there delivers,
 *     each rising edge sends its vector to the vCPUs its destination
 *     names, physical or logical, in each target's own APIC mode
 *     (vm_ioapic_decode()), posted and kicked like an IPI wherever they
 *     run; the vCPU that found the edge takes its own at once (its
 *     virtual APIC, or under the passthrough models its own APIC's self
 *     IPI or an injection, vmx_deliver_apic_irq()).
 *
 * The 8254's next request is kept by vCPU 0, the clock (pit_deadline):
 * it arms the VMX-preemption timer, or, blocked on a shared CPU, ends a
 * sibling's slice (vcpu_switch.c), so a guest in `sti; hlt`, or spinning
 * on a tick count, gets its ticks; under a profile without the timer
 * (vmexit-bench) the runtime switches it on while a deadline is armed
 * (preemption_timer.c).  Another vCPU that changes the deadline (it programmed the
 * 8254, the 8259's mask or the I/O APIC's entry) posts vCPU 0 to bring
 * it up to date.
 *
 * Not yet: the other ISA IRQs (the guest's 8259s have no other emulated
 * source; a host device's interrupt comes through the hardware's I/O
 * APIC, ioapic_exits.c), and under the passthrough APIC models the
 * 8259's INT to any vCPU but 0 (the guest's LINT0 there is its physical
 * APIC's, which the hypervisor does not see).
 */
#include "arch/vmx/ap_park.h"
#include "runtime/devices/platform.h"
#include "runtime/host/spinlock.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/profile_values.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/preemption_timer.h"
#include "arch/vmx/events.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/mmio.h"
#include "arch/vmx/vlapic_exits.h"
#include "runtime/vm/vmm.h"
#include "arch/vmx/vmx_ops.h"
#include "arch/vmx/vcpu_switch.h"
#include "vmx_controls_bits.h"

/* The I/O APIC pin's interrupt: its targets posted and kicked; @vcpu's own taken here. */
static void deliver_pin(struct vcpu *vcpu, uint32_t low, uint32_t high)
{
	struct icr_request req = vm_ioapic_decode(vcpu->vm, low, high);
	bool self = req.targets & (1u << vcpu->id);

	req.targets &= ~(1u << vcpu->id);
	vmx_kick_vcpus(vm_icr_deliver(vcpu->vm, vcpu->id, &req));
	if (!self || req.kind != ICR_FIXED)
		return;
	if (exitplan_profile.apic_virtual)
		vmx_vlapic_post(vcpu, req.vector);
	else
		vmx_deliver_apic_irq(vcpu, req.vector);
}

/* Ask vCPU @id to bring the 8259s and the 8254 up to date on itself (vm_events.legacy). */
static void post_legacy(struct vm *vm, unsigned int id)
{
	if (id < vm->nr_vcpus && vm_vcpu_post_legacy(&vm->vcpu[id]))
		vmm_kick(id);
}

void vmx_legacy_irq_update(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct vm *vm = vcpu->vm;
	unsigned int extint = vm_extint_vcpu(vm);
	bool mine = extint == vcpu->id, intr, take, rose, routed;
	uint32_t low = 0, high = 0;
	uint8_t vector = 0;
	uint64_t now = rdtsc(), next, pin_next = 0;
	struct vcpu *clock;

	/*
	 * The INTA only when the guest can take the interrupt now: until
	 * then the request stays in the 8259's IRR, where a mask or a new
	 * ICW1 from the guest can still withdraw it, as on hardware.
	 */
	take = mine && vmx_guest_interruptible() &&
	       !(vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID);
	spin_lock(&vm->platform_lock);
	intr = platform_legacy_int(a->platform, now, &next);
	rose = platform_legacy_irq0_rose(a->platform);
	routed = vmx_ioapic_pit_route(&low, &high);
	if (routed) {
		pin_next = platform_pit_next_irq0(a->platform, now);
		if (pin_next && (!next || pin_next < next))
			next = pin_next;
	}
	if (intr && take) {
		vector = platform_legacy_inta(a->platform);
		/* The INTA took IR0's request: the next one is due again. */
		next = platform_legacy_next(a->platform, now);
		if (routed && pin_next && (!next || pin_next < next))
			next = pin_next;
		/* A storm's source if the 8254 runs faster than an exit round (events.c). */
		a->pit_storm_vector = vector;
		a->pit_storm_period = platform_pit_period(a->platform, vector);
	}
	spin_unlock(&vm->platform_lock);

	if (rose && routed)
		deliver_pin(vcpu, low, high);
	a->legacy_int_waiting = intr && mine && !take;
	if (intr && take)
		vmx_deliver_irq(vcpu, vector);
	else if (intr && mine)
		vmx_set_intr_window(vcpu, true);
	else if (intr)
		post_legacy(vm, extint);	/* another vCPU's LINT0 takes it */
	/* Only a new deadline restarts the timer: the profile's period stands. */
	if (vcpu->id == 0) {
		if (next != a->pit_deadline) {
			WRITE_ONCE(a->pit_deadline, next);
			vmx_program_preemption_timer(vcpu);
		}
	} else if ((clock = vmx_vcpu(0)) && next != READ_ONCE(clock->arch->pit_deadline)) {
		post_legacy(vm, 0);
	}
}
