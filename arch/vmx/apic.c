// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's interprocessor interrupts, as VT-x sees them: the ICR write
 * arrives as a WRMSR exit (x2APIC MSR 0x830, always trapped:
 * spec/runtime.yaml) or as an EPT violation on the xAPIC page (mapped
 * read-only, never executable: vmx.c), is decoded by the neutral VM
 * (runtime/vm.c), and becomes events posted to the target vCPUs, which a
 * kick IPI makes them take.  INIT and STARTUP are emulated (Bochs 2.7
 * never consumes a physical INIT in VMX non-root: PLATFORM.md), an NMI
 * becomes a virtual NMI injected into the target, an SMI is dropped: no
 * guest-written ICR reaches the hardware with those delivery modes.
 *
 * Fixed interrupts: with the profile's `apic: passthrough` (the default)
 * the checked ICR value is written to the real ICR and the hardware
 * delivers it; with `apic: intercept-icr` the hypervisor delivers it
 * itself to the vCPUs the destination names, so a guest can reach no CPU
 * that is not one of its vCPUs.
 */
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "cpu.h"
#include "exit_handlers.h"
#include "msr_index.h"
#include "page_alloc.h"
#include "percpu.h"
#include "profile.h"
#include "vlapic.h"
#include "vm.h"
#include "vmcs_fields.h"
#include "vmm.h"
#include "vcpu_arch.h"
#include "events.h"
#include "apic.h"
#include "vlapic_exits.h"

static uint64_t xapic_page_pa;

uint64_t vmx_xapic_page(void)
{
	return xapic_page_pa;
}

void vmx_apic_init(uint64_t apic_base)
{
	xapic_page_pa = apic_base & APIC_BASE_ADDR_MASK;
}

static bool this_apic_x2apic(void)
{
	return rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD;
}

static volatile uint32_t *xapic_reg(unsigned int offset)
{
	return phys_to_virt(xapic_page_pa + offset);
}

/* --- the kick ------------------------------------------------------------ */

/*
 * Through this CPU's own APIC, in whatever mode the guest left it.  In
 * xAPIC mode the ICR high half is the guest's (written through by
 * vmx_xapic_write()): it is put back after.  Called with interrupts off
 * (in an exit, or in root operation between runs), so nothing on this
 * CPU interleaves.
 */
static void send_ipi(uint32_t apic_id, uint32_t icr)
{
	if (this_apic_x2apic()) {
		wrmsr(MSR_IA32_X2APIC_ICR, ((uint64_t)apic_id << APIC_ICR_X2APIC_DEST_SHIFT) | icr);
	} else {
		uint32_t high = *xapic_reg(XAPIC_REG_ICR_HIGH);

		/* The previous IPI (the guest's, or a kick) must have been sent. */
		for (unsigned int i = 0; i < 100000 && (*xapic_reg(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING); i++)
			cpu_relax();
		*xapic_reg(XAPIC_REG_ICR_HIGH) = apic_id << (APIC_ICR_XAPIC_DEST_SHIFT - 32);
		*xapic_reg(XAPIC_REG_ICR_LOW) = icr;
		*xapic_reg(XAPIC_REG_ICR_HIGH) = high;
	}
}

/* A vCPU in the guest: an external-interrupt exit with the kick vector there. */
void vmx_kick_ipi(unsigned int cpu)
{
	struct percpu *p = percpu_area(cpu);

	if (p)
		send_ipi(p->apic_id, APIC_ICR_DELIVERY_MODE_FIXED | VMX_KICK_VECTOR);
}

/*
 * A vCPU waiting in root operation, halted with interrupts off: only an
 * NMI (or INIT, which VMX root blocks) ends that HLT; ap_park.c drops it.
 */
void vmx_kick_nmi(unsigned int cpu)
{
	struct percpu *p = percpu_area(cpu);

	if (p)
		send_ipi(p->apic_id, APIC_ICR_DELIVERY_MODE_NMI);
}

/*
 * The guest's emulated LVT timer fired with an illegal vector (0-15): its
 * APIC must record a receive error and deliver nothing (SDM Vol. 3A
 * 11.5.3).  A self IPI of that vector does exactly that on the APIC the
 * guest owns (Bochs's trigger_irq() flags Received Illegal Vector for a
 * self IPI as for an LVT entry; some CPUs flag Send Illegal Vector too),
 * and raises the guest's LVT error interrupt as the APIC would.
 */
void vmx_apic_flag_illegal_vector(uint8_t vector)
{
	send_ipi(0, APIC_ICR_SHORTHAND_SELF | APIC_ICR_DELIVERY_MODE_FIXED | vector);
}

/*
 * A vCPU that ignores its stop (a guest spinning with interrupts off, on
 * a profile without the VMX-preemption timer): a physical INIT, blocked
 * in VMX root but an INIT-signal exit in non-root (SDM Vol. 3C 26.2), is
 * the one event that takes its CPU back whatever the guest does.  Bochs
 * 2.7 never consumes it (PLATFORM.md): the CPU must not resume that
 * guest afterwards, and does not (handle_init_signal()).
 */
void vmx_kick_init(unsigned int cpu)
{
	struct percpu *p = percpu_area(cpu);

	if (p)
		send_ipi(p->apic_id, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT);
}

static void apic_eoi(void)
{
	if (this_apic_x2apic())
		wrmsr(MSR_IA32_X2APIC_EOI, 0);
	else
		*xapic_reg(XAPIC_REG_EOI) = 0;
}

/* --- taking posted events -------------------------------------------------- */

enum vmx_exit_action vmx_take_events(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct vm_events ev;

	if (!vm_vcpu_take_events(vcpu->vv, &ev))
		return VMX_EXIT_RESUME;
	if (ev.stop) {
		if (a->stop == VCPU_RUNNING)
			a->stop = VCPU_STOP_VM;
		return VMX_EXIT_STOP;
	}
	if (ev.init) {
		/*
		 * INIT: the vCPU is in wait-for-SIPI already (vm.c); leave the
		 * guest.  The run loop (vmx_run.c) waits for the STARTUP there.
		 * A virtual APIC is reset with the processor (SDM 11.4.7.3);
		 * the physical one the guest owns otherwise is the host's to
		 * reset, and Bochs consumes no INIT in non-root (PLATFORM.md).
		 */
		if (PROFILE_APIC_VIRTUAL)
			vlapic_init_signal(&a->vlapic);
		return VMX_EXIT_STOP;
	}
	/* The NMI first: it has priority over external interrupts (SDM 6.9). */
	if (ev.nmi)
		vmx_queue_nmi(vcpu);	/* injected by the stub before VMRESUME (events.c) */
	for (int w = 3; w >= 0; w--) {
		while (ev.irr[w]) {
			int bit = 63 - __builtin_clzll(ev.irr[w]);

			ev.irr[w] &= ~(1ull << bit);
			if (PROFILE_APIC_VIRTUAL)
				vmx_vlapic_post(vcpu, (uint8_t)(w * 64 + bit));
			else
				vmx_deliver_irq(vcpu, (uint8_t)(w * 64 + bit));
		}
	}
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_kicked(struct vcpu *vcpu)
{
	/* Acknowledged on exit: the kick is in service in the APIC until this EOI. */
	apic_eoi();
	return vmx_take_events(vcpu);
}

/* --- the ICR ----------------------------------------------------------------- */

enum vmx_exit_action vmx_icr_write(struct vcpu *vcpu, uint64_t icr, bool x2apic)
{
	struct icr_request req = vm_icr_decode(vcpu->vm, vcpu->id, icr, x2apic);

	/*
	 * Bochs 2.7 bug (PLATFORM.md): in x2APIC mode the logical destination
	 * register reads 0, and the emulated APICs match logical destinations
	 * against it, so a logical IPI reaches nobody.  Those are delivered
	 * here, with the logical IDs derived from the APIC IDs (vm.c).
	 */
	bool bochs_x2apic_logical = x2apic && (icr & APIC_ICR_DEST_LOGICAL);
	/*
	 * A fixed self IPI (shorthand self) reaches no other CPU, and the
	 * guest's own APIC -- which it owns but for the ICR -- orders it by
	 * priority (TPR, ISR) and flags an illegal vector in its ESR: the
	 * hardware delivers it under intercept-icr too.
	 */
	bool self_only = (icr & APIC_ICR_SHORTHAND_MASK) == APIC_ICR_SHORTHAND_SELF;

	if (req.kind == ICR_FIXED && (!PROFILE_APIC_INTERCEPT_ICR || self_only) &&
	    !bochs_x2apic_logical) {
		/* Checked: a fixed or lowest-priority IPI; the APIC delivers it. */
		if (x2apic)
			wrmsr(MSR_IA32_X2APIC_ICR, icr);
		else
			*xapic_reg(XAPIC_REG_ICR_LOW) = (uint32_t)icr;
		return VMX_EXIT_RESUME;
	}
	/* Vectors 0-15 are illegal for fixed delivery: the APIC drops them (SDM 11.5.3). */
	if (req.kind == ICR_FIXED && req.vector < 16)
		return VMX_EXIT_RESUME;
	vm_icr_deliver(vcpu->vm, vcpu->id, &req);
	/* Ours (self, a broadcast, INIT to ourselves) are taken at once. */
	if (req.targets & (1u << vcpu->id))
		return vmx_take_events(vcpu);
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_xapic_write(struct vcpu *vcpu, unsigned int offset, uint32_t value,
				     unsigned int size)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/*
	 * The registers are 32 bits wide at 16-byte boundaries (SDM Vol. 3A
	 * 11.4.1); other accesses are undefined there.  Here they are
	 * dropped, like a write to a reserved offset; the whole page is
	 * dropped while the guest's APIC is in x2APIC mode (no MMIO then).
	 */
	if (size != 4 || (offset & 0xf) || this_apic_x2apic())
		return VMX_EXIT_RESUME;
	switch (offset) {
	case XAPIC_REG_ICR_LOW:
		return vmx_icr_write(vcpu, ((uint64_t)a->xapic_icr_high << 32) | value, false);
	case XAPIC_REG_ICR_HIGH:
		a->xapic_icr_high = value;
		break;
	case XAPIC_REG_ID:
		/* The kick and every destination decode rely on it: read-only here. */
		return VMX_EXIT_RESUME;
	case XAPIC_REG_LDR:
		WRITE_ONCE(vcpu->vv->xapic_ldr, value);
		break;
	case XAPIC_REG_DFR:
		WRITE_ONCE(vcpu->vv->xapic_dfr, value);
		break;
	}
	*xapic_reg(offset) = value;
	return VMX_EXIT_RESUME;
}
