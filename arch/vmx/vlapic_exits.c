// SPDX-License-Identifier: GPL-2.0-only
/*
 * The virtual local APIC (runtime/devices/vlapic.c) attached to VT-x, under the
 * profile's `apic: virtual`: how its accesses arrive and how the
 * interrupts it names are injected.
 *
 * - x2APIC MSRs 800H-8FFH, IA32_APIC_BASE and IA32_TSC_DEADLINE: every
 *   access exits (the generator refuses the profile otherwise) and msr.c
 *   hands it here.
 * - The xAPIC page is not mapped in EPT (vmx.c): every load and store
 *   exits as an EPT violation, its instruction is emulated by mmio.c
 *   (vmx_mmio_emulate()) and each access answered by the model.
 * - Fixed interrupts posted by other vCPUs (vm_icr_deliver()), the
 *   guest's own self IPIs and the model's timer set its IRR.  After each
 *   such exit vmx_vlapic_sync() injects the highest deliverable vector if
 *   the guest can take it (RFLAGS.IF = 1, no STI or MOV-SS blocking, no
 *   other event being injected), else opens the interrupt window.
 * - The model's timer runs on the VMX-preemption timer (kept counting
 *   across exits): its next deadline is programmed after every change.
 *   The physical APIC and its timer stay the host's; the host only
 *   software-enables it, so that kick IPIs reach the CPU.
 *
 * The model keeps time in host TSC ticks; IA32_TSC_DEADLINE is converted
 * from and to the guest's TSC (the VMCS TSC offset) here.
 */
#include "arch/vmx/ap_park.h"
#include "runtime/devices/apic_mode.h"
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "exit_handlers.h"
#include "arch/vmx/mmio.h"
#include "msr_index.h"
#include "runtime/host/page_alloc.h"
#include "runtime/devices/vlapic.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/preemption_timer.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vcpu_switch.h"

/* The physical APIC, this CPU's: software-enabled, TPR 0, so the host's kicks are accepted. */
static void host_apic_enable(void)
{
	if (rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD) {
		wrmsr(MSR_IA32_X2APIC_TPR, 0);
		wrmsr(MSR_IA32_X2APIC_SIVR, APIC_SVR_ENABLE | APIC_SVR_VECTOR_MASK);
	} else {
		volatile uint32_t *apic = phys_to_virt(vmx_xapic_page());

		apic[XAPIC_REG_TPR / 4] = 0;
		apic[XAPIC_REG_SVR / 4] = APIC_SVR_ENABLE | APIC_SVR_VECTOR_MASK;
	}
}

void vmx_vlapic_setup(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct vlapic *l = &a->vlapic;

	vlapic_init(l, vcpu->vm, vcpu->id, vcpu->vv->apic_id, a->apic_base & APIC_BASE_BSP,
		    a->has_x2apic, a->has_tsc_deadline, a->maxphyaddr);
	/* Where firmware put the window (it cannot move: vmx_vlapic_wrmsr()). */
	l->apic_base = vmx_xapic_page() | APIC_BASE_EN | (a->apic_base & APIC_BASE_BSP);
	a->apic_base = l->apic_base;
	/* What firmware leaves: the BSP in virtual wire mode, the 8259s' INT on its LINT0. */
	vlapic_firmware_handoff(l);
	host_apic_enable();
}

bool vmx_vlapic_msr(uint32_t msr)
{
	return msr == MSR_IA32_APIC_BASE || msr == MSR_IA32_TSC_DEADLINE ||
	       (msr >= MSR_IA32_X2APIC_FIRST && msr <= MSR_IA32_X2APIC_LAST);
}

/* --- injection and the timer ----------------------------------------------- */

void vmx_vlapic_sync(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct vlapic *l = &a->vlapic;
	/* One held back under a storm waits for the preemption timer, not the window (events.c). */
	bool legacy = a->legacy_int_waiting || (a->irq_pending && !a->storm_hold_until);
	uint64_t next;
	int vector;

	vlapic_timer_update(l, rdtsc());
	vector = vlapic_pending_vector(l);
	if (vector < 0) {
		/* The 8259s' INT or vector may wait for the window too (legacy_irq.c). */
		vmx_set_intr_window(vcpu, legacy);
	} else if ((vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID) ||
		   !vmx_guest_interruptible()) {
		/* The interrupt-window exit comes back here when the guest can take it. */
		vmx_set_intr_window(vcpu, true);
	} else if (vmx_storm_defer(vcpu, vlapic_timer_period(l, vector))) {
		/*
		 * A storm's interrupt held back (events.c): pending in the IRR,
		 * where the timer's expiries meanwhile coalesce with it, so the
		 * model has nothing to do before the hold ends.
		 */
		if (a->storm_hold_until) {
			a->tsc_deadline = a->storm_hold_until;
			vmx_program_preemption_timer(vcpu);
			return;
		}
	} else {
		vmcs_write(VM_ENTRY_INTR_INFO_FIELD,
			   INTR_INFO_VALID | INTR_INFO_TYPE_EXT_INTR | (uint32_t)vector);
		/* An interrupt ends HLT. */
		vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_ACTIVE);
		vlapic_ack(l, (uint8_t)vector);
		/* The next one waits for this one's EOI (an exit) or a higher class (an exit too). */
		vmx_set_intr_window(vcpu, legacy);
	}
	/* The model's next deadline, in host TSC ticks, for vmx_program_preemption_timer(). */
	next = vlapic_timer_next(l);
	a->tsc_deadline = next == VLAPIC_NO_DEADLINE ? 0 : next ? next : 1;
	vmx_program_preemption_timer(vcpu);
}

void vmx_vlapic_post(struct vcpu *vcpu, uint8_t vector)
{
	vlapic_accept_irq(&vcpu->arch->vlapic, vector, false);
	vmx_vlapic_sync(vcpu);
}

enum vmx_exit_action vmx_vlapic_preemption_timer(struct vcpu *vcpu)
{
	enum vmx_exit_action act;

	vmx_vlapic_sync(vcpu);
	/* The watchdog for kicks that did not arrive, as without a virtual APIC (msr.c). */
	act = vmx_take_events(vcpu);
	/* The same timer ends the slice of a vCPU that shares its CPU (vcpu_switch.c). */
	if (act == VMX_EXIT_RESUME && vcpu->arch->shared)
		act = vmx_sched_tick(vcpu);
	return act;
}

enum vmx_exit_action vmx_vlapic_interrupt_window(struct vcpu *vcpu)
{
	vmx_vlapic_sync(vcpu);
	return VMX_EXIT_RESUME;
}

/*
 * HLT with RFLAGS.IF = 1 (handle_hlt(), past the instruction): it
 * completes at once when an interrupt is deliverable; otherwise the vCPU
 * stays in the HLT activity state until an exit (its timer's preemption
 * timer, a kick) makes one deliverable -- or, when it shares its CPU,
 * blocks in the scheduler and gives the CPU up (vcpu_switch.c) until
 * one is posted or its timer is due.
 */
enum vmx_exit_action vmx_vlapic_hlt(struct vcpu *vcpu)
{
	struct vlapic *l = &vcpu->arch->vlapic;
	bool idle;

	/* A storm's hold ends (events.c): the guest has nothing of its own left to run. */
	vcpu->arch->storm_hold_until = 0;
	vlapic_timer_update(l, rdtsc());
	/* The 8259s' INT waiting for its LINT0 ends the HLT too (legacy_irq.c). */
	idle = vlapic_pending_vector(l) < 0 && !vcpu->arch->legacy_int_waiting &&
	       !vcpu->arch->irq_pending;
	if (idle && !vcpu->arch->shared)
		vmcs_write(GUEST_ACTIVITY_STATE, GUEST_ACTIVITY_HLT);
	vmx_vlapic_sync(vcpu);
	if (idle && vcpu->arch->shared)
		return vmx_sched_block(vcpu, VCPU_BLOCK_HLT);
	return VMX_EXIT_RESUME;
}

/* A blocked vCPU's interrupt is deliverable now (its timer included): its HLT ends. */
bool vmx_vlapic_has_interrupt(struct vcpu *vcpu)
{
	struct vlapic *l = &vcpu->arch->vlapic;

	vlapic_timer_update(l, rdtsc());
	return vlapic_pending_vector(l) >= 0 || vcpu->arch->legacy_int_waiting ||
	       vcpu->arch->irq_pending;
}

/* An ICR write: the model decoded it (vm_icr_decode()); deliver, and take ours at once. */
static enum vmx_exit_action send_ipi(struct vcpu *vcpu, const struct icr_request *req)
{
	vmx_kick_vcpus(vm_icr_deliver(vcpu->vm, vcpu->id, req) & ~(1u << vcpu->id));
	if (req->targets & (1u << vcpu->id))
		return vmx_take_events(vcpu);
	return VMX_EXIT_RESUME;
}

/* --- MSRs -------------------------------------------------------------------- */

enum vmx_exit_action vmx_vlapic_rdmsr(struct vcpu *vcpu, uint32_t msr)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct guest_regs *r = &vcpu->regs;
	uint64_t v;

	if (msr == MSR_IA32_APIC_BASE) {
		v = a->vlapic.apic_base;
	} else if (vlapic_msr_read(&a->vlapic, msr, rdtsc(), &v) != VLAPIC_DONE) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	} else if (msr == MSR_IA32_TSC_DEADLINE && v) {
		v += a->tsc.offset;	/* the model's host TSC, the guest's TSC */
	}
	r->rax = (uint32_t)v;
	r->rdx = (uint32_t)(v >> 32);
	vmx_skip_instruction();
	vmx_vlapic_sync(vcpu);
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_vlapic_wrmsr(struct vcpu *vcpu, uint32_t msr, uint64_t v)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct icr_request req;
	enum vlapic_result res;

	if (msr == MSR_IA32_APIC_BASE) {
		/* The window is the EPT hole vmx.c left at firmware's base: it cannot move. */
		if ((v & APIC_BASE_ADDR_MASK) != vmx_xapic_page())
			res = VLAPIC_GP;
		else
			res = vlapic_write_apic_base(&a->vlapic, v, rdtsc());
		a->apic_base = a->vlapic.apic_base;
	} else {
		if (msr == MSR_IA32_TSC_DEADLINE && v)
			v -= a->tsc.offset;
		res = vlapic_msr_write(&a->vlapic, msr, v, rdtsc(), &req);
	}
	if (res == VLAPIC_GP) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	vmx_skip_instruction();
	vmx_vlapic_sync(vcpu);
	return res == VLAPIC_SEND_IPI ? send_ipi(vcpu, &req) : VMX_EXIT_RESUME;
}

/* --- the xAPIC page ------------------------------------------------------------ */

/*
 * The registers are 32 bits wide at 16-byte boundaries (SDM 11.4.1).  A
 * narrower load within one's first 4 bytes reads its bytes; one that
 * reaches bytes 4-15 of the slot reads 0, as the passthrough page's
 * emulated loads do (apic.c vmx_xapic_read()).  Only 32-bit stores write.
 */
enum vmx_exit_action vmx_vlapic_mmio_read(struct vcpu *vcpu, unsigned int offset, unsigned int size,
					  uint64_t *v)
{
	uint32_t value = 0;

	if (xapic_load_in_register(offset, size)) {
		vlapic_mmio_read(&vcpu->arch->vlapic, offset & 0xff0, rdtsc(), &value);
		value = xapic_load_bytes(value, offset, size);
	}
	*v = value;
	vmx_vlapic_sync(vcpu);
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_vlapic_mmio_write(struct vcpu *vcpu, unsigned int offset,
					   unsigned int size, uint32_t v)
{
	enum vlapic_result res = VLAPIC_DONE;
	struct icr_request req;

	if (size == 4)
		res = vlapic_mmio_write(&vcpu->arch->vlapic, offset, v, rdtsc(), &req);
	vmx_vlapic_sync(vcpu);
	return res == VLAPIC_SEND_IPI ? send_ipi(vcpu, &req) : VMX_EXIT_RESUME;
}
