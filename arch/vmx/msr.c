// SPDX-License-Identifier: GPL-2.0-only
/*
 * RDMSR/WRMSR exits: the MSRs the profile's bitmap traps.
 *
 * Emulated: IA32_APIC_BASE (the guest's value; the physical APIC is never
 * globally disabled, see apic_base_write()), IA32_FEATURE_CONTROL (locked,
 * VMX off), the IA32_VMX_* capability MSRs (#GP: the guest has no VMX),
 * IA32_EFER (validated like hardware), IA32_TSC_DEADLINE (with the
 * VMX-preemption timer when the profile activates it).  Others are
 * performed on the guest's behalf only from msr_allow[]; everything else
 * is #GP, and so is an access the CPU itself faults on.
 */
#include "arch_bits.h"
#include "compiler.h"
#include "console.h"
#include "cpu.h"
#include "exit_handlers.h"
#include "msr_index.h"
#include "msr_switch.h"
#include "page_alloc.h"
#include "panic.h"
#include "profile.h"
#include "traps.h"
#include "vm.h"
#include "vmcs_fields.h"
#include "vmx.h"
#include "vmx_controls_bits.h"

/* --- RDMSR/WRMSR that may fault --------------------------------------- */

extern const char msr_safe_rdmsr[], msr_safe_rdmsr_end[];
extern const char msr_safe_wrmsr[], msr_safe_wrmsr_end[];

/*
 * A #GP at one of the two instructions below resumes after it with RSI
 * = 1 ("faulted"); any other #GP is a host bug and panics like every
 * unhandled exception.  Installed only around the access.
 */
static void msr_gp_fixup(struct interrupt_frame *f)
{
	if (f->rip == (uintptr_t)msr_safe_rdmsr) {
		f->rip = (uintptr_t)msr_safe_rdmsr_end;
		f->rsi = 1;
		return;
	}
	if (f->rip == (uintptr_t)msr_safe_wrmsr) {
		f->rip = (uintptr_t)msr_safe_wrmsr_end;
		f->rsi = 1;
		return;
	}
	interrupt_frame_dump(f);
	panic("#GP in the hypervisor at %#llx", (unsigned long long)f->rip);
}

/* Perform the access; false when the CPU raised #GP.  noinline: the labels are unique. */
static __attribute__((__noinline__)) bool msr_access_safe(uint32_t msr, uint64_t *value, bool write)
{
	uint32_t lo = (uint32_t)*value, hi = (uint32_t)(*value >> 32);
	uint64_t faulted = 0;

	idt_set_handler(X86_EXC_GP, msr_gp_fixup);
	if (write)
		asm volatile(".globl msr_safe_wrmsr, msr_safe_wrmsr_end\n"
			     "msr_safe_wrmsr: wrmsr\n"
			     "msr_safe_wrmsr_end:"
			     : "+S"(faulted) : "c"(msr), "a"(lo), "d"(hi) : "memory");
	else
		asm volatile(".globl msr_safe_rdmsr, msr_safe_rdmsr_end\n"
			     "msr_safe_rdmsr: rdmsr\n"
			     "msr_safe_rdmsr_end:"
			     : "=a"(lo), "=d"(hi), "+S"(faulted) : "c"(msr) : "memory");
	idt_set_handler(X86_EXC_GP, NULL);
	if (faulted)
		return false;
	if (!write)
		*value = ((uint64_t)hi << 32) | lo;
	return true;
}

/* --- the allow-list ----------------------------------------------------- */

enum msr_how {
	MSR_VIA_VMCS,		/* the guest's copy is a VMCS guest-state field */
	MSR_EXECUTE,		/* the host does not use it: RDMSR/WRMSR for the guest */
	MSR_READ_ONLY,		/* reads are performed; writes #GP (not emulated) */
};

struct msr_allow {
	uint32_t first, last;
	enum msr_how how;
	enum vmcs_field field;
};

/*
 * MSRs a profile may trap (to count them) that the runtime then performs
 * for the guest.  SYSCALL MSRs, TSC_AUX, the speculation controls and
 * the x2APIC registers are not used by the host, so executing the access
 * gives the guest exactly what a passthrough would.
 */
static const struct msr_allow msr_allow[] = {
	{ MSR_IA32_SYSENTER_CS, MSR_IA32_SYSENTER_CS, MSR_VIA_VMCS, GUEST_SYSENTER_CS },
	{ MSR_IA32_SYSENTER_ESP, MSR_IA32_SYSENTER_ESP, MSR_VIA_VMCS, GUEST_SYSENTER_ESP },
	{ MSR_IA32_SYSENTER_EIP, MSR_IA32_SYSENTER_EIP, MSR_VIA_VMCS, GUEST_SYSENTER_EIP },
	{ MSR_IA32_FS_BASE, MSR_IA32_FS_BASE, MSR_VIA_VMCS, GUEST_FS_BASE },
	{ MSR_IA32_GS_BASE, MSR_IA32_GS_BASE, MSR_VIA_VMCS, GUEST_GS_BASE },
	{ MSR_IA32_DEBUGCTL, MSR_IA32_DEBUGCTL, MSR_VIA_VMCS, GUEST_IA32_DEBUGCTL },
	{ MSR_IA32_STAR, MSR_IA32_STAR, MSR_EXECUTE, 0 },
	{ MSR_IA32_LSTAR, MSR_IA32_LSTAR, MSR_EXECUTE, 0 },
	{ MSR_IA32_CSTAR, MSR_IA32_CSTAR, MSR_EXECUTE, 0 },
	{ MSR_IA32_FMASK, MSR_IA32_FMASK, MSR_EXECUTE, 0 },
	{ MSR_IA32_KERNEL_GS_BASE, MSR_IA32_KERNEL_GS_BASE, MSR_EXECUTE, 0 },
	{ MSR_IA32_TSC_AUX, MSR_IA32_TSC_AUX, MSR_EXECUTE, 0 },
	{ MSR_IA32_SPEC_CTRL, MSR_IA32_SPEC_CTRL, MSR_EXECUTE, 0 },
	{ MSR_IA32_PRED_CMD, MSR_IA32_PRED_CMD, MSR_EXECUTE, 0 },
	{ MSR_IA32_FLUSH_CMD, MSR_IA32_FLUSH_CMD, MSR_EXECUTE, 0 },
	{ MSR_IA32_X2APIC_FIRST, MSR_IA32_X2APIC_LAST, MSR_EXECUTE, 0 },
	{ MSR_IA32_TSC, MSR_IA32_TSC, MSR_READ_ONLY, 0 },
	{ MSR_IA32_TSC_ADJUST, MSR_IA32_TSC_ADJUST, MSR_READ_ONLY, 0 },
	{ MSR_IA32_MTRRCAP, MSR_IA32_MTRRCAP, MSR_READ_ONLY, 0 },
	{ MSR_IA32_MTRR_DEF_TYPE, MSR_IA32_MTRR_DEF_TYPE, MSR_READ_ONLY, 0 },
	{ MSR_IA32_MISC_ENABLE, MSR_IA32_MISC_ENABLE, MSR_READ_ONLY, 0 },
};

static const struct msr_allow *msr_allowed(uint32_t msr)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(msr_allow); i++) {
		if (msr >= msr_allow[i].first && msr <= msr_allow[i].last)
			return &msr_allow[i];
	}
	return NULL;
}

/* --- the local APIC ----------------------------------------------------- */

static bool apic_x2apic_mode(void)
{
	return rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_EXTD;
}

static uint32_t apic_read(unsigned int reg)
{
	if (apic_x2apic_mode())
		return (uint32_t)rdmsr(MSR_IA32_X2APIC_FIRST + (reg >> 4));
	return *(volatile uint32_t *)phys_to_virt((rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK) + reg);
}

static void apic_write(unsigned int reg, uint32_t v)
{
	if (apic_x2apic_mode())
		wrmsr(MSR_IA32_X2APIC_FIRST + (reg >> 4), v);
	else
		*(volatile uint32_t *)phys_to_virt((rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK) + reg) = v;
}

/*
 * What a global disable and re-enable would leave behind (SDM Vol. 3A
 * 11.4.3, 11.4.7.1): the APIC software-disabled with the spurious vector
 * 0xFF, every LVT entry masked, TPR 0, the timer stopped.  Done by hand:
 * Bochs 2.7 never revives an APIC whose IA32_APIC_BASE[11] was cleared.
 */
static void apic_reset_by_hand(void)
{
	static const unsigned int lvt[] = {
		XAPIC_REG_LVT_TIMER, XAPIC_REG_LVT_THERMAL, XAPIC_REG_LVT_PERF, XAPIC_REG_LVT_LINT0,
		XAPIC_REG_LVT_LINT1, XAPIC_REG_LVT_ERROR,
	};

	apic_write(XAPIC_REG_SVR, APIC_SVR_VECTOR_MASK);
	for (unsigned int i = 0; i < ARRAY_SIZE(lvt); i++)
		apic_write(lvt[i], APIC_LVT_MASKED);
	apic_write(XAPIC_REG_TIMER_INIT_COUNT, 0);
	apic_write(XAPIC_REG_TPR, 0);
}

/*
 * IA32_APIC_BASE (SDM Vol. 3A 11.4.4, 11.12.5).  The guest's value is
 * kept in vcpu->arch; the physical APIC stays globally enabled:
 * clearing EN software-disables it, setting EN again resets it by hand.
 * The base address cannot change.
 * xAPIC -> x2APIC is passed through; the transitions the SDM forbids
 * (x2APIC -> xAPIC, disabled -> x2APIC) are #GP, as on hardware.
 */
static bool apic_base_write(struct vcpu *vcpu, uint64_t v)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t old = a->apic_base;
	bool en = v & APIC_BASE_EN, x2 = v & APIC_BASE_EXTD;
	bool old_en = old & APIC_BASE_EN, old_x2 = old & APIC_BASE_EXTD;
	uint64_t reserved = ~(APIC_BASE_ADDR_MASK | APIC_BASE_EN | APIC_BASE_BSP |
			      (vcpu->arch->has_x2apic ? APIC_BASE_EXTD : 0));

	if ((v & reserved) || (x2 && !en) || (old_x2 && en && !x2) || (!old_en && x2))
		return false;
	/*
	 * The xAPIC window stays where firmware put it: moved, it could
	 * shadow hypervisor memory (or the exit stub) for the host, and its
	 * EPT mapping -- read-only, so that every write, the ICR's above
	 * all, exits (apic.c) -- would no longer cover it.  A move is #GP,
	 * which hardware would not raise (a documented difference).
	 */
	if ((v & APIC_BASE_ADDR_MASK) != (old & APIC_BASE_ADDR_MASK))
		return false;
	/* The BSP flag is read-only. */
	v = (v & ~APIC_BASE_BSP) | (old & APIC_BASE_BSP);
	if (!en) {
		if (old_en)
			apic_write(XAPIC_REG_SVR, apic_read(XAPIC_REG_SVR) & ~APIC_SVR_ENABLE);
	} else if (!old_en) {
		if (apic_x2apic_mode()) {
			printk("exitplan: the guest re-enables its APIC in xAPIC mode after x2APIC: "
			       "not possible on Bochs 2.7 without killing the APIC\n");
			return false;
		}
		apic_reset_by_hand();
	} else if (x2 != old_x2) {
		uint64_t phys = rdmsr(MSR_IA32_APIC_BASE);

		if (!msr_access_safe(MSR_IA32_APIC_BASE, &(uint64_t){
				(phys & APIC_BASE_BSP) | (v & ~APIC_BASE_BSP) }, true))
			return false;
	}
	a->apic_base = v;
	return true;
}

/* --- IA32_TSC_DEADLINE with the VMX-preemption timer ------------------- */

/*
 * Program the preemption timer for the earliest of the guest's deadline
 * and the profile's own period (SDM Vol. 3C 26.5.1: it counts down at
 * the TSC rate divided by 2^rate).
 */
void vmx_program_preemption_timer(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t ticks = PROFILE_PREEMPTION_TIMER_VALUE ? PROFILE_PREEMPTION_TIMER_VALUE
							 : UINT32_MAX;

	if (!a->preemption_timer_on)
		return;
	if (a->tsc_deadline) {
		uint64_t now = rdtsc();
		uint64_t left = a->tsc_deadline > now ? (a->tsc_deadline - now) >> a->preemption_rate : 0;

		if (left < ticks)
			ticks = left;
	}
	if (ticks > UINT32_MAX)
		ticks = UINT32_MAX;
	vmcs_write(VMX_PREEMPTION_TIMER_VALUE, ticks);
}

static uint8_t apic_timer_vector(bool *masked)
{
	uint32_t lvt = apic_read(XAPIC_REG_LVT_TIMER);

	*masked = lvt & APIC_LVT_MASKED;
	return lvt & APIC_LVT_VECTOR_MASK;
}

/*
 * The guest's TSC deadline passed: deliver its LVT timer vector as the
 * APIC would (nothing when the entry is masked) and disarm, as the SDM's
 * TSC-deadline mode does (11.5.4.1).
 */
enum vmx_exit_action handle_preemption_timer(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (a->tsc_deadline && rdtsc() >= a->tsc_deadline) {
		bool masked;
		uint8_t vector = apic_timer_vector(&masked);

		a->tsc_deadline = 0;
		if (!masked)
			vmx_deliver_irq(vcpu, vector);
	}
	vmx_program_preemption_timer(vcpu);
	/*
	 * The watchdog: events posted to this vCPU whose kick its APIC did not
	 * accept (disabled, or TPR 15) are taken here, at the latest one timer
	 * period late; a stop among them ends the vCPU (apic.c).
	 */
	return vmx_take_events(vcpu);
}

static bool tsc_deadline_write(struct vcpu *vcpu, uint64_t v)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* Without TSC-deadline mode (CPUID.1:ECX[24]) the MSR does not exist. */
	if (!a->has_tsc_deadline)
		return false;
	if (!a->tsc_deadline_emulated) {
		/* Any value is valid: no #GP to catch, and the hot path of hrtimer. */
		wrmsr(MSR_IA32_TSC_DEADLINE, v);
		return true;
	}
	a->tsc_deadline = v;
	vmx_program_preemption_timer(vcpu);
	return true;
}

/* --- IA32_EFER ----------------------------------------------------------- */

uint64_t vcpu_guest_efer(struct vcpu *vcpu)
{
	int slot;

	if (vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_LOAD_IA32_EFER)
		return vmcs_read(GUEST_IA32_EFER);
	slot = profile_msr_manual_slot(vcpu, MSR_IA32_EFER);
	return slot >= 0 ? vcpu->msrs.guest[slot] : rdmsr(MSR_IA32_EFER);
}

void vcpu_set_guest_efer(struct vcpu *vcpu, uint64_t v)
{
	int slot;

	if (vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_LOAD_IA32_EFER) {
		vmcs_write(GUEST_IA32_EFER, v);
		return;
	}
	slot = profile_msr_manual_slot(vcpu, MSR_IA32_EFER);
	if (slot >= 0)
		vcpu->msrs.guest[slot] = v;
}

/*
 * WRMSR to EFER (SDM Vol. 3A 2.2.1, Vol. 4 IA32_EFER): SCE, LME, NXE (when
 * CPUID.80000001H:EDX.NX says so) are writable, LMA is read-only, the
 * rest is reserved; changing LME while paging is on is #GP.
 */
static bool efer_write(struct vcpu *vcpu, uint64_t v)
{
	uint64_t cur = vcpu_guest_efer(vcpu);
	uint64_t writable = EFER_SCE | EFER_LME | (vcpu->arch->has_nx ? EFER_NXE : 0);

	if ((v & ~(writable | EFER_LMA)) ||
	    (((v ^ cur) & EFER_LME) && (vmcs_read(CR0_READ_SHADOW) & X86_CR0_PG)))
		return false;
	vcpu_set_guest_efer(vcpu, (v & ~(uint64_t)EFER_LMA) | (cur & EFER_LMA));
	return true;
}

/*
 * A WRMSR to an MSR the profile switches by hand: try the value on the
 * CPU (so a value the CPU rejects is the guest's #GP, not a host fault at
 * the next entry), keep it as the guest's, and give the host its own
 * back; profile_msrs_before_entry() loads it.
 */
static bool manual_msr_write(struct vcpu *vcpu, uint32_t msr, int slot, uint64_t v)
{
	if (!msr_access_safe(msr, &v, true))
		return false;
	vcpu->msrs.guest[slot] = v;
	wrmsr(msr, vcpu->msrs.host[slot]);
	return true;
}

/* --- the handlers -------------------------------------------------------- */

/* x2APIC ICR bits that are reserved (SDM Vol. 3A 11.12.9): WRMSR setting one is #GP. */
#define X2APIC_ICR_RESERVED	0xfff33000ull

static bool msr_is_vmx_capability(uint32_t msr)
{
	return msr >= MSR_IA32_VMX_CAPS_FIRST && msr <= MSR_IA32_VMX_CAPS_LAST;
}

enum vmx_exit_action handle_msr_read(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;
	uint32_t msr = (uint32_t)r->rcx;
	const struct msr_allow *allow;
	uint64_t v = 0;
	int slot;

	if (VCPU_STATS_COUNTING)
		exit_stats_count_msr(vcpu->stats.msr_read_x2apic, &vcpu->stats.msr_read, msr);

	if (msr == MSR_IA32_APIC_BASE) {
		v = vcpu->arch->apic_base;
	} else if (msr == MSR_IA32_FEATURE_CONTROL) {
		/* Locked, VMXON disabled in and outside SMX: no VMX for the guest. */
		v = FEAT_CTL_LOCKED;
	} else if (msr == MSR_IA32_EFER) {
		v = vcpu_guest_efer(vcpu);
	} else if (msr == MSR_IA32_X2APIC_LDR && (vcpu->arch->apic_base & APIC_BASE_EXTD)) {
		/* Bochs 2.7 bug (PLATFORM.md): it reads 0; it is derived from the APIC ID. */
		v = vm_x2apic_ldr(vcpu->vv->apic_id);
	} else if (msr == MSR_IA32_TSC_DEADLINE && vcpu->arch->tsc_deadline_emulated) {
		v = vcpu->arch->tsc_deadline;
	} else if ((slot = profile_msr_manual_slot(vcpu, msr)) >= 0) {
		v = vcpu->msrs.guest[slot];
	} else if (msr == MSR_IA32_TSC_DEADLINE) {
		if (!vcpu->arch->has_tsc_deadline)
			goto gp;
		v = rdmsr(msr);
	} else if (!(allow = msr_allowed(msr))) {
		goto gp;	/* including the IA32_VMX_* capability MSRs */
	} else if (allow->how == MSR_VIA_VMCS) {
		v = vmcs_read(allow->field);
	} else if (!msr_access_safe(msr, &v, false)) {
		goto gp;
	}
	r->rax = (uint32_t)v;
	r->rdx = (uint32_t)(v >> 32);
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
gp:
	vmx_inject_gp(vcpu);
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action handle_msr_write(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;
	uint32_t msr = (uint32_t)r->rcx;
	uint64_t v = ((r->rdx & 0xffffffffull) << 32) | (r->rax & 0xffffffffull);
	const struct msr_allow *allow;
	int slot;
	bool ok;

	if (VCPU_STATS_COUNTING)
		exit_stats_count_msr(vcpu->stats.msr_write_x2apic, &vcpu->stats.msr_write, msr);

	if (msr == MSR_IA32_X2APIC_ICR) {
		/*
		 * Never executed as it is: INIT, STARTUP, NMI, SMI are the
		 * hypervisor's (apic.c).  Outside x2APIC mode, or with a
		 * reserved bit set, the WRMSR is #GP (SDM Vol. 3A 11.12.1, 11.12.9).
		 */
		if (!(vcpu->arch->apic_base & APIC_BASE_EXTD) || (v & X2APIC_ICR_RESERVED)) {
			vmx_inject_gp(vcpu);
			return VMX_EXIT_RESUME;
		}
		vmx_skip_instruction();
		return vmx_icr_write(vcpu, v, true);
	}
	if (msr == MSR_IA32_APIC_BASE)
		ok = apic_base_write(vcpu, v);
	else if (msr == MSR_IA32_FEATURE_CONTROL || msr_is_vmx_capability(msr))
		ok = false;	/* locked / read-only, and the guest has no VMX */
	else if (msr == MSR_IA32_EFER)
		ok = efer_write(vcpu, v);
	else if (msr == MSR_IA32_TSC_DEADLINE)
		ok = tsc_deadline_write(vcpu, v);
	else if ((slot = profile_msr_manual_slot(vcpu, msr)) >= 0)
		ok = manual_msr_write(vcpu, msr, slot, v);
	else if (!(allow = msr_allowed(msr)) || allow->how == MSR_READ_ONLY)
		ok = false;
	else if (allow->how == MSR_VIA_VMCS)
		ok = (vmcs_write(allow->field, v), true);
	else
		ok = msr_access_safe(msr, &v, true);
	if (!ok) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

/* Initial guest-visible MSR state. */
void vcpu_setup_msrs(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint32_t eax, ebx, ecx, edx;
	int slot;

	/* The guest starts with the APIC as firmware left it (enabled, xAPIC). */
	a->apic_base = rdmsr(MSR_IA32_APIC_BASE);
	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	a->has_x2apic = ecx & CPUID_1_ECX_X2APIC;
	a->has_tsc_deadline = ecx & CPUID_1_ECX_TSC_DEADLINE;
	cpuid_count(CPUID_LEAF_EXT_BASE, 0, &eax, &ebx, &ecx, &edx);
	a->has_nx = false;
	if (eax >= CPUID_LEAF_EXT_FEATURES) {
		cpuid_count(CPUID_LEAF_EXT_FEATURES, 0, &eax, &ebx, &ecx, &edx);
		a->has_nx = edx & CPUID_80000001_EDX_NX;
	}
	a->tsc_deadline = 0;
	vmx_program_preemption_timer(vcpu);

	/* MSRs switched by hand: the host's now, the guest's reset values. */
	profile_msrs_save_host(vcpu);
	for (unsigned int i = 0; i < PROFILE_MANUAL_MSR_SLOTS; i++)
		vcpu->msrs.guest[i] = 0;	/* EFER and the SYSCALL MSRs reset to 0 */
	if ((slot = profile_msr_manual_slot(vcpu, MSR_IA32_PAT)) >= 0)
		vcpu->msrs.guest[slot] = vcpu->msrs.host[slot];
}
