// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's interprocessor interrupts, as VT-x sees them: the ICR write
 * arrives as a WRMSR exit (x2APIC MSR 0x830, always trapped:
 * spec/runtime.yaml) or as an EPT violation on the xAPIC page (mapped
 * read-only, never executable: vmx.c), is decoded by the neutral VM
 * (runtime/vm/vm.c), and becomes events posted to the target vCPUs, which a
 * kick makes them take (vmx_kick_ipi()).  INIT and STARTUP are emulated
 * (Bochs 2.7 never consumes a physical INIT in VMX non-root: PLATFORM.md),
 * an NMI becomes a virtual NMI injected into the target, an SMI is
 * dropped: no guest-written ICR reaches the hardware with those delivery
 * modes.
 *
 * Fixed interrupts: with the profile's `apic: passthrough` (the default)
 * the checked ICR value is written to the real ICR and the hardware
 * delivers it; with `apic: intercept-icr` the hypervisor delivers it
 * itself to the vCPUs the destination names, so a guest can reach no CPU
 * that is not one of its vCPUs.
 */
#include "arch/vmx/ap_park.h"
#include "runtime/devices/apic_mode.h"
#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "exit_handlers.h"
#include "msr_index.h"
#include "msr_policy.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/percpu.h"
#include "runtime/host/phys_apic.h"
#include "arch/vmx/policy.h"
#include "profile.h"
#include "runtime/devices/vlapic.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "runtime/vm/vmm.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/events.h"
#include "runtime/host/msr_safe.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/eptp.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/vlapic_exits.h"
#include "arch/vmx/vcpu_switch.h"

static uint64_t xapic_page_pa;
/* Some CPU's physical APIC is in x2APIC mode (it stays there: msr.c apic_base_write()). */
static bool some_apic_x2apic;

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
		/*
		 * A WRMSR to the x2APIC ICR is not serializing (SDM Vol. 3A
		 * 11.12.3): without a fence the IPI can reach its target
		 * before the events posted for it (vm.c) are visible there,
		 * and a look at `posted` would miss them.  MFENCE; LFENCE,
		 * as Linux's weak_wrmsr_fence().  An xAPIC MMIO write is
		 * ordered after earlier stores already (UC memory).
		 */
		asm volatile("mfence; lfence" : : : "memory");
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

/* A fixed self IPI of @vector, on the APIC the guest owns. */
static void send_self_ipi(uint8_t vector)
{
	send_ipi(0, APIC_ICR_SHORTHAND_SELF | APIC_ICR_DELIVERY_MODE_FIXED | vector);
}

/*
 * The host's NMIs (kicks, wake-ups) sent to each CPU and not yet taken
 * there.  An NMI carries no sender, and where the guest owns its CPU's
 * local APIC its LVT entries may raise NMIs of its own: one that finds
 * the flag set is the host's, any other the guest's.  One at most is in
 * flight per CPU: only the sender that sets the flag sends one, so that
 * two of the host's can neither merge into one (leaving the flag set for
 * the guest's next NMI to be taken as a kick) nor arrive one after the
 * other (the second, unflagged, taken for the guest's).  A sender that
 * finds the flag set posted its events before: the NMI in flight is
 * claimed after that, and its receiver takes them (vmx_kick_nmi_claim()
 * before vmx_take_events(), or before the waiter tests its condition).
 */
static uint8_t cpu_kick_nmi[HV_MAX_CPUS];

static void send_kick_nmi(unsigned int cpu)
{
	struct percpu *p = percpu_area(cpu);

	if (p && cpu < HV_MAX_CPUS && !__atomic_exchange_n(&cpu_kick_nmi[cpu], 1, __ATOMIC_SEQ_CST))
		send_ipi(p->apic_id, APIC_ICR_DELIVERY_MODE_NMI);
}

/*
 * A vCPU in the guest.  Under apic: passthrough and intercept-icr the
 * physical APIC's vectors are all the guest's (its fixed IPIs, its
 * SELF_IPI, its LVT and I/O APIC entries reach the hardware with any
 * vector 16-255): no vector could tell a kick from the guest's own
 * interrupt, so the kick is a flagged NMI, an NMI exit (NMI exiting:
 * spec/runtime.yaml).  Under apic: virtual the physical APIC is the
 * host's alone: the kick is VMX_KICK_VECTOR, an external-interrupt exit.
 */
void vmx_kick_ipi(unsigned int cpu)
{
	struct percpu *p = percpu_area(cpu);

	if (!p)
		return;
	if (!PROFILE_APIC_VIRTUAL) {
		send_kick_nmi(cpu);
		return;
	}
	send_ipi(p->apic_id, APIC_ICR_DELIVERY_MODE_FIXED | VMX_KICK_VECTOR);
}

bool vmx_kick_nmi_claim(unsigned int cpu)
{
	return cpu < HV_MAX_CPUS && __atomic_exchange_n(&cpu_kick_nmi[cpu], 0, __ATOMIC_SEQ_CST);
}

/*
 * An NMI exit leaves NMIs blocked in VMX root operation until the next
 * IRET, as an NMI delivered through the IDT would (KVM calls the host's
 * NMI handler there, whose IRET unblocks them).  An IRET to the next
 * instruction does it, so that a later kick's NMI can wake this CPU
 * while it waits in root operation (vmx_wait_in_root()).
 */
void vmx_nmi_unblock(void)
{
	unsigned long tmp;

	asm volatile("mov %%ss, %k0\n\t"
		     "push %0\n\t"
		     "lea 8(%%rsp), %0\n\t"
		     "push %0\n\t"
		     "pushfq\n\t"
		     "mov %%cs, %k0\n\t"
		     "push %0\n\t"
		     "lea 1f(%%rip), %0\n\t"
		     "push %0\n\t"
		     "iretq\n"
		     "1:"
		     : "=&r"(tmp) : : "memory", "cc");
}

/*
 * A fixed interrupt for the guest from the hypervisor (a posted IPI, the
 * emulated TSC deadline).  Where the guest owns its CPU's interrupts
 * (interrupts: direct) it is a self IPI: the guest's own APIC orders it
 * with the rest by TPR and ISR, and the guest's EOI ends it there, as it
 * ends every other; else it is injected (events.c).
 */
static __always_inline void deliver_apic_irq(struct vcpu *vcpu, uint8_t vector, bool oneshot)
{
	if (PROFILE_INTERRUPTS_DIRECT)
		send_self_ipi(vector);
	else
		vmx_queue_irq(vcpu, vector, oneshot);
}

void vmx_deliver_apic_irq(struct vcpu *vcpu, uint8_t vector)
{
	deliver_apic_irq(vcpu, vector, false);
}

/* The same for the emulated TSC deadline's vector: a one-shot (events.c). */
void vmx_deliver_apic_oneshot_irq(struct vcpu *vcpu, uint8_t vector)
{
	deliver_apic_irq(vcpu, vector, true);
}

/*
 * A vCPU waiting in root operation, halted with interrupts off: only an
 * NMI (or INIT, which VMX root blocks) ends that HLT; vmm_nmi_in_root()
 * takes it (intr_exits.c), and the waiter re-checks.
 * Flagged like a kick: if the waiter is back in the guest by the time it
 * arrives, its NMI exit takes it for the host's, not the guest's.
 */
void vmx_kick_nmi(unsigned int cpu)
{
	send_kick_nmi(cpu);
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
	send_self_ipi(vector);
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

	if (!vm_vcpu_events_posted(vcpu->vv) || !vm_vcpu_take_events(vcpu->vv, &ev))
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
	/* The 8259s' INT for its LINT0, or the 8254's deadline changed (legacy_irq.c). */
	if (ev.legacy)
		vmx_legacy_irq_update(vcpu);
	/* A globally disabled APIC accepts no interrupt: it is not there (SDM Vol. 3A 11.4.3). */
	if (!PROFILE_APIC_VIRTUAL && !(a->apic_base & APIC_BASE_EN))
		ev.irr[0] = ev.irr[1] = ev.irr[2] = ev.irr[3] = 0;
	for (int w = 3; w >= 0; w--) {
		while (ev.irr[w]) {
			int bit = 63 - __builtin_clzll(ev.irr[w]);

			ev.irr[w] &= ~(1ull << bit);
			if (PROFILE_APIC_VIRTUAL)
				vmx_vlapic_post(vcpu, (uint8_t)(w * 64 + bit));
			else
				vmx_deliver_apic_irq(vcpu, (uint8_t)(w * 64 + bit));
		}
	}
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_kicked(struct vcpu *vcpu)
{
	/* Acknowledged on exit: the kick is in service in the APIC until this EOI. */
	enum vmx_exit_action act;

	apic_eoi();
	act = vmx_take_events(vcpu);
	/* Sent for a sibling woken on this CPU (vmm_kick()): it may take the CPU now. */
	if (act == VMX_EXIT_RESUME && vcpu->arch->shared)
		act = vmx_sched_kicked(vcpu);
	return act;
}

/* --- the ICR ----------------------------------------------------------------- */

enum vmx_exit_action vmx_icr_write(struct vcpu *vcpu, uint64_t icr, bool x2apic)
{
	struct icr_request req = vm_icr_decode(vcpu->vm, vcpu->id, icr, x2apic);

	/*
	 * Bochs 2.7 bug (PLATFORM.md): in x2APIC mode the logical destination
	 * register reads 0, and the emulated APICs match logical destinations
	 * against it, so a logical IPI reaches nobody.  Those are delivered
	 * here, with the logical IDs derived from the APIC IDs (vm.c).  So
	 * are a guest's xAPIC logical IPIs while its APIC is emulated on the
	 * physical x2APIC: the flat and cluster models have no x2APIC form.
	 * Once any CPU's APIC is in x2APIC mode, an xAPIC sender's logical
	 * IPI could miss it too (its guest may be in xAPIC mode on it).
	 */
	bool phys_x2apic = this_apic_x2apic();
	bool logical_here = (phys_x2apic || READ_ONCE(some_apic_x2apic)) &&
			    (icr & APIC_ICR_DEST_LOGICAL);
	/*
	 * A fixed self IPI (shorthand self) reaches no other CPU, and the
	 * guest's own APIC -- which it owns but for the ICR -- orders it by
	 * priority (TPR, ISR) and flags an illegal vector in its ESR: the
	 * hardware delivers it under intercept-icr too.
	 */
	bool self_only = (icr & APIC_ICR_SHORTHAND_MASK) == APIC_ICR_SHORTHAND_SELF;

	if (req.kind == ICR_FIXED && (!PROFILE_APIC_INTERCEPT_ICR || self_only) &&
	    !logical_here) {
		/* Checked: a fixed or lowest-priority IPI; the APIC delivers it. */
		if (phys_x2apic)
			wrmsr(MSR_IA32_X2APIC_ICR, x2apic ? icr : xapic_icr_to_x2apic(icr));
		else
			*xapic_reg(XAPIC_REG_ICR_LOW) = (uint32_t)icr;
		return VMX_EXIT_RESUME;
	}
	/* Vectors 0-15 are illegal for fixed delivery: the APIC drops them (SDM 11.5.3). */
	if (req.kind == ICR_FIXED && req.vector < 16)
		return VMX_EXIT_RESUME;
	vmx_kick_vcpus(vm_icr_deliver(vcpu->vm, vcpu->id, &req) & ~(1u << vcpu->id));
	/* Ours (self, a broadcast, INIT to ourselves) are taken at once. */
	if (req.targets & (1u << vcpu->id))
		return vmx_take_events(vcpu);
	return VMX_EXIT_RESUME;
}

/* --- the LVT entries ---------------------------------------------------------- */

static bool lvt_refusal_reported;

static const char *lvt_delivery_mode_name(uint32_t value)
{
	static const char *const names[8] = {
		"fixed", "reserved (1)", "SMI", "reserved (3)", "NMI", "INIT", "reserved (6)", "ExtINT",
	};

	return names[(value & APIC_LVT_DELIVERY_MODE_MASK) >> APIC_LVT_DELIVERY_MODE_SHIFT];
}

uint32_t vmx_apic_lvt_checked(unsigned int reg, uint32_t value)
{
	if (apic_lvt_delivery_allowed(reg, value))
		return value;
	if (!__atomic_exchange_n(&lvt_refusal_reported, true, __ATOMIC_RELAXED))
		printk("exitplan: guest local APIC LVT entry %#x written masked: delivery mode %s "
		       "(%#x) is not the guest's; later ones are not reported\n", reg,
		       lvt_delivery_mode_name(value), value);
	return value | APIC_LVT_MASKED;
}

/* --- the guest's APIC mode on the physical APIC ------------------------------ */

static enum apic_mode guest_apic_mode(const struct vcpu *vcpu)
{
	return apic_mode_of(vcpu->arch->apic_base);
}

/*
 * After a change of the guest's IA32_APIC_BASE (msr.c apic_base_write()).
 * While the guest's mode is not the physical APIC's -- disabled, or
 * xAPIC on an APIC that stays in x2APIC mode -- its xAPIC page is not
 * mapped, so that its reads exit too and are answered here, and the
 * x2APIC MSRs exit whatever the profile passes through, so that they
 * are #GP (msr.c).  Back in the physical mode, the profile's bitmap.
 */
void vmx_apic_mode_changed(struct vcpu *vcpu)
{
	static const struct msr_bitmap_rule x2apic_trapped = {
		MSR_IA32_X2APIC_FIRST, MSR_IA32_X2APIC_LAST, MSR_INTERCEPT_RW,
	};
	enum apic_mode mode = guest_apic_mode(vcpu);
	bool phys_x2apic = this_apic_x2apic();

	WRITE_ONCE(vcpu->vv->x2apic, mode == APIC_MODE_X2APIC);
	if (phys_x2apic)
		WRITE_ONCE(some_apic_x2apic, true);
	vmx_xapic_page_trap(vcpu, mode != (phys_x2apic ? APIC_MODE_X2APIC : APIC_MODE_XAPIC));
	if (!phys_x2apic)
		return;
	if (mode == APIC_MODE_X2APIC)
		msr_bitmap_build(vcpu->arch->msr_bitmap, profile_msr_bitmap_rules,
				 profile_msr_bitmap_rule_count);
	else
		msr_bitmap_set(vcpu->arch->msr_bitmap, &x2apic_trapped);
}

/* The highest vector set in the ISR or IRR whose first x2APIC MSR is @msr; 0 for none. */
static uint32_t x2apic_highest_vector(uint32_t msr)
{
	for (int i = 7; i >= 0; i--) {
		uint32_t bits = (uint32_t)rdmsr(msr + (uint32_t)i);

		if (bits)
			return (uint32_t)i * 32 + 31 - (uint32_t)__builtin_clz(bits);
	}
	return 0;
}

/* The guest's xAPIC register @reg (16-byte aligned), its APIC emulated on the physical x2APIC. */
static uint32_t xapic_on_x2apic_read(struct vcpu *vcpu, unsigned int reg)
{
	struct xapic_on_x2apic r = xapic_on_x2apic_reg(reg);
	uint64_t v = 0;

	switch (r.kind) {
	case XAPIC_ON_X2APIC_MSR:
	case XAPIC_ON_X2APIC_ESR:
	case XAPIC_ON_X2APIC_ICR_LOW:
		/* A register this CPU's APIC lacks (LVT CMCI on some models) reads 0. */
		if (!vmx_msr_access_safe(r.msr, &v, false))
			v = 0;
		return (uint32_t)v;
	case XAPIC_ON_X2APIC_ID:
		return (uint32_t)rdmsr(r.msr) << 24;
	case XAPIC_ON_X2APIC_APR:
		return xapic_apr((uint32_t)rdmsr(MSR_IA32_X2APIC_TPR),
				 x2apic_highest_vector(MSR_IA32_X2APIC_FIRST + (XAPIC_REG_ISR >> 4)),
				 x2apic_highest_vector(MSR_IA32_X2APIC_FIRST + (XAPIC_REG_IRR >> 4)));
	case XAPIC_ON_X2APIC_LDR:
		return READ_ONCE(vcpu->vv->xapic_ldr);
	case XAPIC_ON_X2APIC_DFR:
		return READ_ONCE(vcpu->vv->xapic_dfr);
	case XAPIC_ON_X2APIC_ICR_HIGH:
		return vcpu->arch->xapic_icr_high;
	case XAPIC_ON_X2APIC_EOI:
	case XAPIC_ON_X2APIC_RESERVED:
		break;
	}
	return 0;
}

static enum vmx_exit_action xapic_on_x2apic_write(struct vcpu *vcpu, unsigned int reg,
						  uint32_t value)
{
	struct vcpu_arch_state *a = vcpu->arch;
	struct xapic_on_x2apic r = xapic_on_x2apic_reg(reg);
	uint64_t v = value;

	if (!r.writable)
		return VMX_EXIT_RESUME;		/* read-only or reserved: dropped */
	switch (r.kind) {
	case XAPIC_ON_X2APIC_ICR_LOW:
		return vmx_icr_write(vcpu, ((uint64_t)a->xapic_icr_high << 32) | value, false);
	case XAPIC_ON_X2APIC_ICR_HIGH:
		a->xapic_icr_high = value & (uint32_t)(APIC_ICR_XAPIC_DEST_MASK >> 32);
		return VMX_EXIT_RESUME;
	case XAPIC_ON_X2APIC_LDR:
		WRITE_ONCE(vcpu->vv->xapic_ldr, xapic_ldr_value(value));
		return VMX_EXIT_RESUME;
	case XAPIC_ON_X2APIC_DFR:
		WRITE_ONCE(vcpu->vv->xapic_dfr, xapic_dfr_value(value));
		return VMX_EXIT_RESUME;
	case XAPIC_ON_X2APIC_EOI:
	case XAPIC_ON_X2APIC_ESR:
		v = 0;		/* any value in xAPIC mode; x2APIC takes only 0 */
		break;
	default:
		v = vmx_apic_lvt_checked(reg, value);
		break;
	}
	/* Bits the x2APIC reserves (and faults on) the xAPIC ignores: such a write is dropped. */
	vmx_msr_access_safe(r.msr, &v, true);
	return VMX_EXIT_RESUME;
}

void vmx_xapic_read(struct vcpu *vcpu, unsigned int offset, unsigned int size, uint64_t *value)
{
	uint32_t v;

	/*
	 * Disabled, or in x2APIC mode, the APIC has no MMIO interface: the
	 * access goes to the bus, where nothing answers (SDM Vol. 3A
	 * 11.4.3, 11.12.1; bare Bochs reads all ones there).
	 */
	if (guest_apic_mode(vcpu) != APIC_MODE_XAPIC) {
		*value = ~0ull;
		return;
	}
	/*
	 * Bytes 4-15 of a register's slot read 0, as under apic: virtual
	 * (vlapic_exits.c); the physical APIC is read at the register's own
	 * offset only (apic_mode.h xapic_load_in_register()).
	 */
	if (!xapic_load_in_register(offset, size)) {
		*value = 0;
		return;
	}
	if (this_apic_x2apic())
		v = xapic_on_x2apic_read(vcpu, offset & 0xff0);
	else
		v = *xapic_reg(offset & 0xff0);
	*value = xapic_load_bytes(v, offset, size);
}

enum vmx_exit_action vmx_xapic_write(struct vcpu *vcpu, unsigned int offset, uint32_t value,
				     unsigned int size)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/*
	 * The registers are 32 bits wide at 16-byte boundaries (SDM Vol. 3A
	 * 11.4.1); other accesses are undefined there.  Here they are
	 * dropped, like a write to a reserved offset; the whole page is
	 * dropped while the guest's APIC is disabled or in x2APIC mode (no
	 * MMIO then).
	 */
	if (guest_apic_mode(vcpu) != APIC_MODE_XAPIC || size != 4 || (offset & 0xf))
		return VMX_EXIT_RESUME;
	if (this_apic_x2apic())
		return xapic_on_x2apic_write(vcpu, offset, value);
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
	case XAPIC_REG_EOI:
	case XAPIC_REG_TPR:
		break;		/* the common writes, straight through: no LVT entry to check */
	default:
		value = vmx_apic_lvt_checked(offset, value);
		break;
	}
	*xapic_reg(offset) = value;
	return VMX_EXIT_RESUME;
}

/* --- the physical local APIC (phys_apic.h) ----------------------------- */

void vmx_apic_eoi(void)
{
	phys_apic_write(XAPIC_REG_EOI, 0);
}
