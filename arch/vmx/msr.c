// SPDX-License-Identifier: GPL-2.0-only
/*
 * RDMSR/WRMSR exits: the MSRs the profile's bitmap traps.
 *
 * Emulated: IA32_APIC_BASE (the guest's value; the physical APIC is never
 * globally disabled, see apic_base_write()), IA32_FEATURE_CONTROL (locked,
 * VMX off), the IA32_VMX_* capability MSRs (#GP: the guest has no VMX),
 * IA32_EFER (validated like hardware), IA32_TSC_DEADLINE (with the
 * VMX-preemption timer when the profile activates it),
 * IA32_TIME_STAMP_COUNTER and IA32_TSC_ADJUST (the VMCS TSC offset),
 * IA32_PAT, the MTRRs and IA32_MISC_ENABLE (per-vCPU copies, checked as
 * the CPU checks them), and the MSRs Linux reads at boot
 * (IA32_BIOS_SIGN_ID, SMI_COUNT, PPIN_CTL, MISC_FEATURE_ENABLES, IA32_XSS:
 * spec/msrs.yaml says how each answers).  Others are answered from the
 * VMCS or performed on the guest's behalf only from msr_answers[]
 * (generated from spec/msrs.yaml); everything else is #GP, and so is an
 * access the CPU itself faults on.  No guest value reaches a host register or a VMCS
 * field the next VM entry would reject without the check the CPU makes.
 */
#include "runtime/devices/apic_mode.h"
#include "arch_bits.h"
#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "exit_handlers.h"
#include "msr_index.h"
#include "msr_table.h"
#include "arch/vmx/msr_io_fast.h"
#include "runtime/host/msr_safe.h"
#include "msr_switch.h"
#include "runtime/host/page_alloc.h"
#include "runtime/host/phys_apic.h"
#include "profile.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/preemption_timer.h"
#include "arch/vmx/events.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vlapic_exits.h"
#include "arch/vmx/msr.h"
#include "runtime/host/nospec.h"
#include "arch/vmx/vmx_ctls.h"
#include "vmx_controls_bits.h"

/* --- the answer table --------------------------------------------------- */

/*
 * MSRs a profile may trap (to count them) that the runtime answers from
 * the VMCS or performs for the guest: msr_answers[] (spec/msrs.yaml
 * `answer`, generated/common/msr_table.c).  SYSCALL MSRs, TSC_AUX, the
 * speculation controls and the x2APIC registers are not used by the
 * host, so executing the access gives the guest exactly what a
 * passthrough would.  The MSRs handle_msr_read()/_write() answer by
 * their own code (answer: emulated, and IA32_XSS, executed_if_shown: only
 * when CPUID shows XSAVES) are not in it.
 */
static const struct msr_answer_range *msr_allowed(uint32_t msr)
{
	for (unsigned int i = 0; i < MSR_ANSWER_COUNT; i++) {
		if (msr >= msr_answers[i].first && msr <= msr_answers[i].last)
			return &msr_answers[i];
	}
	return NULL;
}

/* --- the local APIC ----------------------------------------------------- */

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

	phys_apic_write(XAPIC_REG_SVR, APIC_SVR_VECTOR_MASK);
	for (unsigned int i = 0; i < ARRAY_SIZE(lvt); i++)
		phys_apic_write(lvt[i], APIC_LVT_MASKED);
	phys_apic_write(XAPIC_REG_TIMER_INIT_COUNT, 0);
	phys_apic_write(XAPIC_REG_TPR, 0);
}

/*
 * IA32_APIC_BASE (SDM Vol. 3A 11.4.4, 11.12.5).  The guest's value is
 * kept in vcpu->arch and follows the SDM's state machine
 * (apic_mode_transition_ok(): x2APIC -> xAPIC and disabled -> x2APIC are
 * #GP, as on hardware).  The physical APIC is never globally disabled and
 * never leaves x2APIC mode once the guest has put it there -- Bochs 2.7's
 * APIC dies either way (PLATFORM.md):
 *   - a disable software-disables it, and the guest sees no APIC: no
 *     interrupt, the page reads all ones (apic.c), x2APIC MSRs #GP;
 *   - an enable from disabled resets it by hand, as a real enable would;
 *   - xAPIC -> x2APIC is performed, once; the xAPIC mode a guest enters
 *     afterwards (through disabled) is emulated on the x2APIC MSRs
 *     (apic.c, vmx_apic_mode_changed()).
 * The base address cannot change.
 */
static bool apic_base_write(struct vcpu *vcpu, uint64_t v)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint64_t old = a->apic_base;
	enum apic_mode from = apic_mode_of(old), to = apic_mode_of(v);
	uint64_t reserved = ~(APIC_BASE_ADDR_MASK | APIC_BASE_EN | APIC_BASE_BSP |
			      (vcpu->arch->has_x2apic ? APIC_BASE_EXTD : 0));

	if ((v & reserved) || !apic_mode_transition_ok(from, to))
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
	if (to == APIC_MODE_DISABLED) {
		if (from != APIC_MODE_DISABLED)
			phys_apic_write(XAPIC_REG_SVR, phys_apic_read(XAPIC_REG_SVR) & ~APIC_SVR_ENABLE);
	} else if (from == APIC_MODE_DISABLED) {
		/* Enabled again: the registers as a reset leaves them (SDM 11.4.7.1). */
		apic_reset_by_hand();
		if (!phys_apic_x2apic_mode()) {
			phys_apic_write(XAPIC_REG_DFR, 0xffffffffu);
			phys_apic_write(XAPIC_REG_LDR, 0);
		}
		WRITE_ONCE(vcpu->vv->xapic_ldr, 0);
		WRITE_ONCE(vcpu->vv->xapic_dfr, 0xffffffffu);
		a->xapic_icr_high = 0;
	} else if (to == APIC_MODE_X2APIC && from == APIC_MODE_XAPIC && !phys_apic_x2apic_mode()) {
		uint64_t phys = rdmsr(MSR_IA32_APIC_BASE);

		if (!vmx_msr_access_safe(MSR_IA32_APIC_BASE, &(uint64_t){
				(phys & APIC_BASE_BSP) | (v & ~APIC_BASE_BSP) }, true))
			return false;
	}
	a->apic_base = v;
	if (from != to)
		vmx_apic_mode_changed(vcpu);
	return true;
}

/* --- IA32_TSC_DEADLINE with the VMX-preemption timer ------------------- */

/* The LVT timer entry @lvt is in TSC-deadline mode (SDM Vol. 3A 11.5.4.1). */
static bool lvt_tsc_deadline_mode(uint32_t lvt)
{
	return (lvt & APIC_LVT_TIMER_MODE_MASK) == APIC_LVT_TIMER_MODE_TSC_DEADLINE;
}

/*
 * The guest's TSC deadline passed: deliver its LVT timer vector as the
 * APIC would and disarm, as TSC-deadline mode does (11.5.4.1).  Nothing
 * when the entry is masked or left TSC-deadline mode meanwhile, and
 * nothing delivered for an illegal vector (0-15): the APIC flags those as
 * a receive error in its ESR (11.5.3) and never delivers them.
 */
enum vmx_exit_action handle_preemption_timer(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* The hypervisor's own deadline ends the run, whatever the guest does. */
	if (unlikely(vmx_hv_deadline_passed()))
		return vmx_hv_deadline_stop(vcpu);
	/* The virtual APIC's timer is its own (vlapic_exits.c). */
	if (!PROFILE_APIC_VIRTUAL && a->tsc_deadline && rdtsc() >= a->tsc_deadline) {
		uint32_t lvt = phys_apic_read(XAPIC_REG_LVT_TIMER);
		uint8_t vector = lvt & APIC_LVT_VECTOR_MASK;

		a->tsc_deadline = 0;
		if (!(lvt & APIC_LVT_MASKED) && lvt_tsc_deadline_mode(lvt)) {
			if (vector >= APIC_VECTOR_MIN_LEGAL)
				vmx_deliver_apic_oneshot_irq(vcpu, vector);
			else
				vmx_apic_flag_illegal_vector(vector);
		}
	}
	/* The guest's 8254 shares the timer with either APIC model. */
	if (a->pit_deadline && rdtsc() >= a->pit_deadline)
		vmx_legacy_irq_update(vcpu);	/* the 8254's IR0 (legacy_irq.c) */
	/* The end of a storm's hold: what it held back goes in now (events.c). */
	if (unlikely(a->storm_hold_until) && rdtsc() >= a->storm_hold_until) {
		a->storm_hold_until = 0;
		vmx_try_inject_pending(vcpu);
	}
	if (PROFILE_APIC_VIRTUAL)
		return vmx_vlapic_preemption_timer(vcpu);
	vmx_program_preemption_timer(vcpu);
	/*
	 * The watchdog: events posted to this vCPU whose kick its APIC did not
	 * accept (disabled, or TPR 15) are taken here, at the latest one timer
	 * period late; a stop among them ends the vCPU (apic.c).  Mostly
	 * there is none: the look is inline.
	 */
	if (!vm_vcpu_events_posted(vcpu->vv))
		return VMX_EXIT_RESUME;
	return vmx_take_events(vcpu);
}

static bool tsc_deadline_write(struct vcpu *vcpu, uint64_t v)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* Without TSC-deadline mode (CPUID.1:ECX[24]) the MSR does not exist. */
	if (!a->has_tsc_deadline)
		return false;
	/* To the CPU's MSR (hrtimer's hot path): the fast handler's answer too. */
	if (msr_fast_write_ia32_tsc_deadline(vcpu, (uint32_t)v, (uint32_t)(v >> 32)))
		return true;
	/* The guest's deadline is in its own TSC's terms; the emulated one in the host's. */
	if (v)
		v -= a->tsc.offset;
	/* Outside TSC-deadline mode writes are ignored (SDM Vol. 3A 11.5.4.1). */
	a->tsc_deadline = lvt_tsc_deadline_mode(phys_apic_read(XAPIC_REG_LVT_TIMER)) ? v : 0;
	vmx_program_preemption_timer(vcpu);
	return true;
}

static bool manual_msr_write(struct vcpu *vcpu, uint32_t msr, int slot, uint64_t v);

/* --- the TSC: IA32_TIME_STAMP_COUNTER, IA32_TSC_ADJUST ------------------- */

static bool tsc_offsetting(const struct vcpu *vcpu)
{
	return vcpu_ctls(vcpu, VMX_PROC_BASED) & CPU_BASED_USE_TSC_OFFSETTING;
}

/* What the guest's RDTSC returns now. */
static uint64_t guest_tsc_now(struct vcpu *vcpu)
{
	return tsc_offsetting(vcpu) ? guest_tsc_read(&vcpu->arch->tsc, rdtsc()) : rdtsc();
}

/*
 * A WRMSR to either moves the guest's TSC by the VMCS offset, and the
 * other follows (SDM Vol. 3B 17.17.3).  The host's own TSC is untouched.
 */
static bool tsc_write(struct vcpu *vcpu, uint32_t msr, uint64_t v)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (!tsc_offsetting(vcpu) || (msr == MSR_IA32_TSC_ADJUST && !a->has_tsc_adjust))
		return false;
	if (msr == MSR_IA32_TSC)
		guest_tsc_write(&a->tsc, rdtsc(), v);
	else
		guest_tsc_adjust_write(&a->tsc, v);
	vmcs_write(TSC_OFFSET, a->tsc.offset);
	/* The emulated deadline is kept in host TSC terms: it does not move. */
	return true;
}

/* --- IA32_PAT, the MTRRs, IA32_MISC_ENABLE ---------------------------------- */

/* The fixed-range MTRR slot of @msr, or -1. */
static int mtrr_fixed_slot(uint32_t msr)
{
	if (msr == MSR_IA32_MTRR_FIX64K_00000)
		return 0;
	if (msr == MSR_IA32_MTRR_FIX16K_80000 || msr == MSR_IA32_MTRR_FIX16K_A0000)
		return 1 + (int)(msr - MSR_IA32_MTRR_FIX16K_80000);
	if (msr >= MSR_IA32_MTRR_FIX4K_FIRST && msr <= MSR_IA32_MTRR_FIX4K_LAST)
		return 3 + (int)(msr - MSR_IA32_MTRR_FIX4K_FIRST);
	return -1;
}

static bool msr_is_mtrr(uint32_t msr)
{
	return msr == MSR_IA32_MTRRCAP || msr == MSR_IA32_MTRR_DEF_TYPE ||
	       (msr >= MSR_IA32_MTRR_PHYS_FIRST && msr <= MSR_IA32_MTRR_PHYS_LAST) ||
	       mtrr_fixed_slot(msr) >= 0;
}

/*
 * The MTRR's slot in vcpu->arch, or NULL where the CPU has no such MSR
 * (beyond MTRRCAP.VCNT, fixed ranges without MTRRCAP.FIX, no MTRRs).
 */
static uint64_t *mtrr_reg(struct vcpu_arch_state *a, uint32_t msr)
{
	unsigned int vcnt = a->mtrr_cap & MTRRCAP_VCNT_MASK;
	int fixed = mtrr_fixed_slot(msr);

	if (msr == MSR_IA32_MTRR_DEF_TYPE)
		return a->mtrr_cap || a->mtrr_def_type ? &a->mtrr_def_type : NULL;
	if (msr >= MSR_IA32_MTRR_PHYS_FIRST && msr <= MSR_IA32_MTRR_PHYS_LAST)
		return msr - MSR_IA32_MTRR_PHYS_FIRST < 2 * vcnt
		       ? &a->mtrr_var[msr - MSR_IA32_MTRR_PHYS_FIRST] : NULL;
	if (fixed >= 0)
		return (a->mtrr_cap & MTRRCAP_FIX) ? &a->mtrr_fixed[fixed] : NULL;
	return NULL;
}

static bool mtrr_write(struct vcpu_arch_state *a, uint32_t msr, uint64_t v)
{
	uint64_t *reg = mtrr_reg(a, msr);
	bool wc = a->mtrr_cap & MTRRCAP_WC;
	bool ok;

	if (!reg)
		return false;	/* MTRRCAP itself is read-only */
	if (msr == MSR_IA32_MTRR_DEF_TYPE)
		ok = mtrr_def_type_valid(v, wc);
	else if (mtrr_fixed_slot(msr) >= 0)
		ok = mtrr_fixed_valid(v, wc);
	else if ((msr - MSR_IA32_MTRR_PHYS_FIRST) % 2 == 0)
		ok = mtrr_physbase_valid(v, a->maxphyaddr, wc);
	else
		ok = mtrr_physmask_valid(v, a->maxphyaddr);
	if (ok)
		*reg = v;
	return ok;
}

static bool mtrr_read(struct vcpu_arch_state *a, uint32_t msr, uint64_t *v)
{
	uint64_t *reg;

	if (msr == MSR_IA32_MTRRCAP) {
		*v = a->mtrr_cap;
		return a->mtrr_cap != 0;
	}
	reg = mtrr_reg(a, msr);
	if (reg)
		*v = *reg;
	return reg != NULL;
}

/* Read the firmware's MTRRs once: the guest's power-on values. */
static void mtrr_setup(struct vcpu_arch_state *a)
{
	uint64_t cap = 0;
	unsigned int vcnt;

	a->mtrr_cap = 0;
	a->mtrr_def_type = 0;
	if (!vmx_msr_access_safe(MSR_IA32_MTRRCAP, &cap, false) || !cap)
		return;
	vcnt = cap & MTRRCAP_VCNT_MASK;
	if (vcnt > MTRR_VAR_MAX)
		vcnt = MTRR_VAR_MAX;
	/* SMRR is the firmware's: not shown. */
	a->mtrr_cap = (cap & (MTRRCAP_FIX | MTRRCAP_WC)) | vcnt;
	vmx_msr_access_safe(MSR_IA32_MTRR_DEF_TYPE, &a->mtrr_def_type, false);
	for (unsigned int i = 0; i < 2 * vcnt; i++)
		vmx_msr_access_safe(MSR_IA32_MTRR_PHYS_FIRST + i, &a->mtrr_var[i], false);
	if (cap & MTRRCAP_FIX) {
		static const uint32_t fixed[] = {
			MSR_IA32_MTRR_FIX64K_00000, MSR_IA32_MTRR_FIX16K_80000,
			MSR_IA32_MTRR_FIX16K_A0000,
		};

		for (unsigned int i = 0; i < ARRAY_SIZE(fixed); i++)
			vmx_msr_access_safe(fixed[i], &a->mtrr_fixed[i], false);
		for (unsigned int i = 0; i < 8; i++)
			vmx_msr_access_safe(MSR_IA32_MTRR_FIX4K_FIRST + i, &a->mtrr_fixed[3 + i], false);
	}
}

/*
 * IA32_MISC_ENABLE (Vol. 4 Table 2-2): the guest may change the bits
 * software sets on hardware (fast strings, thermal control, SpeedStep,
 * ENABLE MONITOR FSM where SSE3 is there -- without it the SDM lets the
 * write #GP --, the CPUID limit, xTPR, XD disable: what a kernel writes,
 * e.g. 0x4_00c50009); the read-only reporting bits keep their value
 * whatever is written; any other change (a reserved bit) is #GP.
 * The guest's copy only: the host's features stay as the host set them,
 * so CPUID, still the host's, does not follow LIMIT_CPUID, XD_DISABLE or
 * ENABLE MONITOR FSM (MONITOR/MWAIT stay hidden and #UD: docs/GUESTS.md).
 */
#define MISC_ENABLE_WRITABLE	(MISC_ENABLE_FAST_STRING | MISC_ENABLE_TCC | \
				 MISC_ENABLE_ENHANCED_SPEEDSTEP | \
				 MISC_ENABLE_LIMIT_CPUID | MISC_ENABLE_XTPR_DISABLE | \
				 MISC_ENABLE_XD_DISABLE)
#define MISC_ENABLE_READ_ONLY	(MISC_ENABLE_PERF_MON | MISC_ENABLE_BTS_UNAVAIL | \
				 MISC_ENABLE_PEBS_UNAVAIL)

static bool misc_enable_write(struct vcpu_arch_state *a, uint64_t v)
{
	uint64_t fixed = ~(a->misc_enable_writable | MISC_ENABLE_READ_ONLY);

	if ((v ^ a->misc_enable) & fixed)
		return false;
	a->misc_enable = (a->misc_enable & ~a->misc_enable_writable) |
			 (v & a->misc_enable_writable);
	return true;
}

/*
 * Machine-check architecture (Vol. 3B 16.3), per vCPU and never written
 * to hardware: the guest sees the host's bank count -- at least one where
 * CPUID.01H:EDX.MCA says the architecture is there (Bochs shows MCA and
 * answers IA32_MCG_CAP with 0) -- and none of the optional features.
 * IA32_MCi_CTL keeps what is written (each bit enables a report; 16.3.2.1),
 * IA32_MCi_STATUS reads 0 (no error is ever logged for the guest) and
 * takes only 0 (16.3.2.2: writing 1s is #GP), IA32_MCi_ADDR and MISC are
 * not implemented (#GP, 16.3.2.3-4: STATUS never sets ADDRV or MISCV).
 * IA32_MCG_STATUS keeps RIPV, EIPV and MCIP; its other bits are reserved.
 */
#define MCG_STATUS_WRITABLE	(MCG_STATUS_RIPV | MCG_STATUS_EIPV | MCG_STATUS_MCIP)

static void mca_setup(struct vcpu_arch_state *a, uint32_t cpuid_1_edx)
{
	uint64_t cap = 0;
	unsigned int banks;

	vmx_msr_access_safe(MSR_IA32_MCG_CAP, &cap, false);
	banks = (unsigned int)(cap & MCG_CAP_COUNT_MASK);
	if (banks > VMX_MC_BANKS_MAX)
		banks = VMX_MC_BANKS_MAX;
	if (!banks && (cpuid_1_edx & CPUID_1_EDX_MCA))
		banks = 1;
	a->mcg_cap = banks;
	a->mcg_status = 0;
	for (unsigned int i = 0; i < VMX_MC_BANKS_MAX; i++)
		a->mc_ctl[i] = 0;
}

static bool msr_is_mca(uint32_t msr)
{
	return msr == MSR_IA32_MCG_CAP || msr == MSR_IA32_MCG_STATUS ||
	       (msr >= MSR_IA32_MC_BANKS_FIRST && msr <= MSR_IA32_MC_BANKS_LAST);
}

/* MSR @msr of the machine-check MSRs (msr_is_mca()); false: #GP. */
static bool mca_access(struct vcpu_arch_state *a, uint32_t msr, uint64_t *v, bool write)
{
	unsigned int bank, reg;

	if (msr == MSR_IA32_MCG_CAP) {
		if (write)
			return false;
		*v = a->mcg_cap;
		return true;
	}
	if (msr == MSR_IA32_MCG_STATUS) {
		if (!write) {
			*v = a->mcg_status;
			return true;
		}
		if (*v & ~(uint64_t)MCG_STATUS_WRITABLE)
			return false;
		a->mcg_status = *v;
		return true;
	}
	bank = (msr - MSR_IA32_MC_BANKS_FIRST) / 4;
	reg = (msr - MSR_IA32_MC_BANKS_FIRST) % 4;
	if (bank >= (a->mcg_cap & MCG_CAP_COUNT_MASK))
		return false;
	bank = array_index_nospec(bank, VMX_MC_BANKS_MAX);
	switch (reg) {
	case 0:		/* IA32_MCi_CTL */
		if (write)
			a->mc_ctl[bank] = *v;
		else
			*v = a->mc_ctl[bank];
		return true;
	case 1:		/* IA32_MCi_STATUS */
		if (write)
			return *v == 0;
		*v = 0;
		return true;
	default:	/* IA32_MCi_ADDR, IA32_MCi_MISC */
		return false;
	}
}

/* IA32_PAT: the VMCS field when VM entry loads it, else the manual slot, else a copy. */
static bool pat_write(struct vcpu *vcpu, uint64_t v)
{
	int slot;

	if (!pat_valid(v))
		return false;
	if (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_LOAD_IA32_PAT)
		vmcs_write(GUEST_IA32_PAT, v);
	else if ((slot = profile_msr_manual_slot(vcpu, MSR_IA32_PAT)) >= 0)
		return manual_msr_write(vcpu, MSR_IA32_PAT, slot, v);
	else
		vcpu->arch->pat = v;
	return true;
}

static uint64_t pat_read(struct vcpu *vcpu)
{
	int slot;

	if (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_LOAD_IA32_PAT)
		return vmcs_read(GUEST_IA32_PAT);
	if ((slot = profile_msr_manual_slot(vcpu, MSR_IA32_PAT)) >= 0)
		return vcpu->msrs.guest[slot];
	return vcpu->arch->pat;
}

/* --- IA32_EFER ----------------------------------------------------------- */

uint64_t vcpu_guest_efer(struct vcpu *vcpu)
{
	int slot;

	if (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_LOAD_IA32_EFER)
		return vmcs_read(GUEST_IA32_EFER);
	slot = profile_msr_manual_slot(vcpu, MSR_IA32_EFER);
	return slot >= 0 ? vcpu->msrs.guest[slot] : rdmsr(MSR_IA32_EFER);
}

void vcpu_set_guest_efer(struct vcpu *vcpu, uint64_t v)
{
	int slot;

	if (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_LOAD_IA32_EFER) {
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
	if (!vmx_msr_access_safe(msr, &v, true))
		return false;
	vcpu->msrs.guest[slot] = v;
	wrmsr(msr, vcpu->msrs.host[slot]);
	return true;
}

/* --- the handlers -------------------------------------------------------- */

/*
 * An MSR whose guest copy is a VMCS field: the value must pass what the
 * WRMSR itself checks, or the next VM entry fails on it (SDM Vol. 3C
 * 27.3.1.1) and the guest is killed where hardware gives #GP.
 */
static bool vmcs_msr_write(const struct msr_answer_range *allow, uint64_t v)
{
	switch (allow->first) {
	case MSR_IA32_SYSENTER_ESP:
	case MSR_IA32_SYSENTER_EIP:
	case MSR_IA32_FS_BASE:
	case MSR_IA32_GS_BASE:
		/* Addresses: canonical (SDM Vol. 4 Table 2-2, WRMSR #GP). */
		if (!is_canonical_address(v))
			return false;
		break;
	case MSR_IA32_DEBUGCTL: {
		/* Tried on the CPU, which knows its reserved bits; the host's put back. */
		uint64_t host = rdmsr(MSR_IA32_DEBUGCTL);

		if (!vmx_msr_access_safe(MSR_IA32_DEBUGCTL, &v, true))
			return false;
		wrmsr(MSR_IA32_DEBUGCTL, host);
		break;
	}
	case MSR_IA32_SYSENTER_CS:
		/* A 32-bit field: bits 63:32 are ignored by the CPU... */
		v &= 0xffffffffull;
		break;
	}
	vmcs_write(allow->field, v);
	return true;
}

static bool msr_is_x2apic(uint32_t msr)
{
	return msr >= MSR_IA32_X2APIC_FIRST && msr <= MSR_IA32_X2APIC_LAST;
}

static bool msr_is_vmx_capability(uint32_t msr)
{
	return msr >= MSR_IA32_VMX_CAPS_FIRST && msr <= MSR_IA32_VMX_CAPS_LAST;
}

enum vmx_exit_action handle_msr_read(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;
	uint32_t msr = (uint32_t)r->rcx;
	const struct msr_answer_range *allow;
	uint64_t v = 0;
	int slot;

	if (VCPU_STATS_COUNTING)
		exit_stats_count_msr(vcpu->stats.msr_read_x2apic, &vcpu->stats.msr_read, msr);
	if (PROFILE_APIC_VIRTUAL && vmx_vlapic_msr(msr))
		return vmx_vlapic_rdmsr(vcpu, msr);	/* vlapic_exits.c */
	/*
	 * Outside x2APIC mode its MSRs are #GP (SDM Vol. 3A 11.12.1), the
	 * CPU's own included: the physical APIC may be in x2APIC mode still.
	 */
	if (msr_is_x2apic(msr) && !(vcpu->arch->apic_base & APIC_BASE_EXTD))
		goto gp;

	if (msr == MSR_IA32_APIC_BASE) {
		msr_fast_read_ia32_apic_base(vcpu, &v);	/* the fast handler's answer too */
	} else if (msr == MSR_IA32_FEATURE_CONTROL) {
		/* Locked, VMXON disabled in and outside SMX: no VMX for the guest. */
		v = FEAT_CTL_LOCKED;
	} else if (msr == MSR_IA32_EFER) {
		v = vcpu_guest_efer(vcpu);
	} else if (msr == MSR_IA32_X2APIC_LDR && (vcpu->arch->apic_base & APIC_BASE_EXTD)) {
		/* Bochs 2.7 bug (PLATFORM.md): it reads 0; it is derived from the APIC ID. */
		v = vm_x2apic_ldr(vcpu->vv->apic_id);
	} else if (msr == MSR_IA32_TSC_DEADLINE && vcpu->arch->tsc_deadline_emulated) {
		/* Kept in host TSC terms; 0 = disarmed. */
		v = vcpu->arch->tsc_deadline ? vcpu->arch->tsc_deadline + vcpu->arch->tsc.offset : 0;
	} else if (msr == MSR_IA32_PAT) {
		v = pat_read(vcpu);
	} else if (msr == MSR_IA32_TSC) {
		v = guest_tsc_now(vcpu);
	} else if (msr == MSR_IA32_TSC_ADJUST) {
		if (!vcpu->arch->has_tsc_adjust)
			goto gp;
		v = vcpu->arch->tsc.adjust;
	} else if (msr == MSR_IA32_MISC_ENABLE) {
		v = vcpu->arch->misc_enable;
	} else if (msr_is_mca(msr)) {
		if (!mca_access(vcpu->arch, msr, &v, false))
			goto gp;
	} else if (msr == MSR_IA32_BIOS_SIGN_ID) {
		/* The host's microcode revision, bits 31:0 reserved; 0 where it has none. */
		if (!vmx_msr_access_safe(msr, &v, false))
			v = 0;
		v &= ~0xffffffffull;
	} else if (msr == MSR_SMI_COUNT || msr == MSR_MISC_FEATURE_ENABLES) {
		v = 0;		/* no SMI reaches the guest; no CPUID faulting, no ring-3 MWAIT */
	} else if (msr == MSR_PPIN_CTL) {
		v = PPIN_CTL_LOCKOUT;	/* locked disabled: MSR_PPIN is #GP */
	} else if (msr == MSR_IA32_XSS) {
		if (!vcpu_xss_shown(vcpu) || !vmx_msr_access_safe(msr, &v, false))
			goto gp;
	} else if (msr_is_mtrr(msr)) {
		if (!mtrr_read(vcpu->arch, msr, &v))
			goto gp;
	} else if ((slot = profile_msr_manual_slot(vcpu, msr)) >= 0) {
		v = vcpu->msrs.guest[slot];
	} else if (msr == MSR_IA32_TSC_DEADLINE) {
		if (!vcpu->arch->has_tsc_deadline)
			goto gp;
		/* The CPU's deadline is in host TSC terms (tsc_deadline_write()). */
		v = rdmsr(msr);
		if (v)
			v += vcpu->arch->tsc.offset;
	} else if (!(allow = msr_allowed(msr))) {
		goto gp;	/* including the IA32_VMX_* capability MSRs */
	} else if (allow->how == MSR_ANSWER_VMCS) {
		v = vmcs_read(allow->field);
	} else if (!vmx_msr_access_safe(msr, &v, false)) {
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

/*
 * The TSC deadline, the MSR write a tickless kernel makes per timer: none
 * of handle_msr_write()'s checks concern it (not an x2APIC MSR), and its
 * statistics slot is its home one, claimed at vCPU setup, so a constant
 * key counts it with a compare.  A function of its own, so that the
 * other MSRs' stack frame is not built for it.
 */
static enum vmx_exit_action tsc_deadline_exit(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;

	if (VCPU_STATS_COUNTING)
		exit_stats_table_count(&vcpu->stats.msr_write, MSR_IA32_TSC_DEADLINE);
	if (!tsc_deadline_write(vcpu, ((r->rdx & 0xffffffffull) << 32) | (r->rax & 0xffffffffull))) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

/*
 * The EOI, the x2APIC write every interrupt handler makes, with the guest's
 * APIC in x2APIC mode: on the guest's own APIC, the physical one here
 * (apic: virtual is vlapic_exits.c's), straight away rather than through
 * the MSR chain and the fault-catching WRMSR.  Only 0 is an EOI; anything
 * else #GPs, as the APIC itself would make it (SDM Vol. 3A 11.12.1).
 */
static enum vmx_exit_action x2apic_eoi_exit(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;

	if (VCPU_STATS_COUNTING)
		vcpu->stats.msr_write_x2apic[MSR_IA32_X2APIC_EOI - MSR_IA32_X2APIC_FIRST]++;
	if ((uint32_t)r->rax || (uint32_t)r->rdx) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	wrmsr(MSR_IA32_X2APIC_EOI, 0);
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

static noinline enum vmx_exit_action msr_write(struct vcpu *vcpu, uint32_t msr)
{
	struct guest_regs *r = &vcpu->regs;
	uint64_t v = ((r->rdx & 0xffffffffull) << 32) | (r->rax & 0xffffffffull);
	const struct msr_answer_range *allow;
	int slot;
	bool ok;

	if (VCPU_STATS_COUNTING)
		exit_stats_count_msr(vcpu->stats.msr_write_x2apic, &vcpu->stats.msr_write, msr);
	if (PROFILE_APIC_VIRTUAL && vmx_vlapic_msr(msr))
		return vmx_vlapic_wrmsr(vcpu, msr, v);	/* vlapic_exits.c */

	/* Outside x2APIC mode its MSRs are #GP (SDM Vol. 3A 11.12.1), as in handle_msr_read(). */
	if (msr_is_x2apic(msr) && !(vcpu->arch->apic_base & APIC_BASE_EXTD)) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	if (msr == MSR_IA32_X2APIC_ICR) {
		/*
		 * Never executed as it is: INIT, STARTUP, NMI, SMI are the
		 * hypervisor's (apic.c).  With a reserved bit set the WRMSR
		 * is #GP (SDM Vol. 3A 11.12.9).
		 */
		if (v & X2APIC_ICR_RESERVED) {
			vmx_inject_gp(vcpu);
			return VMX_EXIT_RESUME;
		}
		vmx_skip_instruction();
		return vmx_icr_write(vcpu, v, true);
	}
	/* An LVT entry with SMI, INIT or a reserved delivery mode goes in masked (apic.c). */
	if (msr_is_x2apic(msr) && !(v >> 32))
		v = vmx_apic_lvt_checked((msr - MSR_IA32_X2APIC_FIRST) << 4, (uint32_t)v);
	if (msr == MSR_IA32_APIC_BASE)
		ok = apic_base_write(vcpu, v);
	else if (msr == MSR_IA32_FEATURE_CONTROL || msr_is_vmx_capability(msr))
		ok = false;	/* locked / read-only, and the guest has no VMX */
	else if (msr == MSR_IA32_EFER)
		ok = efer_write(vcpu, v);
	else if (msr == MSR_IA32_PAT)
		ok = pat_write(vcpu, v);
	else if (msr == MSR_IA32_TSC || msr == MSR_IA32_TSC_ADJUST)
		ok = tsc_write(vcpu, msr, v);
	else if (msr == MSR_IA32_MISC_ENABLE)
		ok = misc_enable_write(vcpu->arch, v);
	else if (msr_is_mca(msr))
		ok = mca_access(vcpu->arch, msr, &v, true);
	else if (msr == MSR_IA32_BIOS_SIGN_ID)
		ok = true;	/* software writes 0 before CPUID.01H; nothing to load */
	else if (msr == MSR_MISC_FEATURE_ENABLES)
		ok = v == 0;	/* neither feature is offered */
	else if (msr == MSR_SMI_COUNT || msr == MSR_PPIN_CTL)
		ok = false;	/* read-only; locked */
	else if (msr == MSR_IA32_XSS)
		ok = vcpu_xss_shown(vcpu) && vmx_msr_access_safe(msr, &v, true);
	else if (msr_is_mtrr(msr))
		ok = mtrr_write(vcpu->arch, msr, v);
	else if ((slot = profile_msr_manual_slot(vcpu, msr)) >= 0)
		ok = manual_msr_write(vcpu, msr, slot, v);
	else if (!(allow = msr_allowed(msr)) || allow->how == MSR_ANSWER_READ_ONLY)
		ok = false;
	else if (allow->how == MSR_ANSWER_VMCS)
		ok = vmcs_msr_write(allow, v);
	else
		ok = vmx_msr_access_safe(msr, &v, true);
	if (!ok) {
		vmx_inject_gp(vcpu);
		return VMX_EXIT_RESUME;
	}
	vmx_skip_instruction();
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action handle_msr_write(struct vcpu *vcpu)
{
	uint32_t msr = (uint32_t)vcpu->regs.rcx;

	/* The two every timer interrupt costs, first; the virtual APIC's are vlapic_exits.c's. */
	if (!PROFILE_APIC_VIRTUAL && msr == MSR_IA32_TSC_DEADLINE)
		return tsc_deadline_exit(vcpu);
	if (!PROFILE_APIC_VIRTUAL && msr == MSR_IA32_X2APIC_EOI &&
	    (vcpu->arch->apic_base & APIC_BASE_EXTD) && phys_apic_x2apic_mode())
		return x2apic_eoi_exit(vcpu);
	return msr_write(vcpu, msr);
}

/* Initial guest-visible MSR state. */
void vcpu_setup_msrs(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	uint32_t eax, ebx, ecx, edx;
	int slot;

	/*
	 * The guest starts with the APIC as firmware left it (enabled,
	 * xAPIC).  An INIT keeps its mode (SDM Vol. 3A 11.12.5): this runs
	 * again at each STARTUP, when the physical APIC may be in the x2APIC
	 * mode the guest has since left (apic_base_write()).
	 */
	/*
	 * BSP is vCPU 0's alone: the CPU setting a vCPU up may carry several
	 * (runtime/vm/sched.h), and the boot CPU's BSP flag is not theirs.
	 */
	if (!a->apic_base)
		a->apic_base = (rdmsr(MSR_IA32_APIC_BASE) & ~(uint64_t)APIC_BASE_BSP) |
			       (vcpu->id == 0 ? APIC_BASE_BSP : 0);
	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	a->has_x2apic = ecx & CPUID_1_ECX_X2APIC;
	a->has_tsc_deadline = ecx & CPUID_1_ECX_TSC_DEADLINE;
	a->misc_enable_writable = MISC_ENABLE_WRITABLE |
				  ((ecx & CPUID_1_ECX_SSE3) ? MISC_ENABLE_MONITOR : 0);
	mca_setup(a, edx);
	/* After vmx_setup_controls(), which decided tsc_deadline_emulated. */
	vcpu->tsc_deadline_to_cpu = a->has_tsc_deadline && !a->tsc_deadline_emulated;
	cpuid_count(0, 0, &eax, &ebx, &ecx, &edx);
	a->has_tsc_adjust = false;
	if (eax >= CPUID_LEAF_EXT_STRUCT_FEATURES) {
		cpuid_count(CPUID_LEAF_EXT_STRUCT_FEATURES, 0, &eax, &ebx, &ecx, &edx);
		a->has_tsc_adjust = ebx & CPUID_7_EBX_TSC_ADJUST;
	}
	cpuid_count(CPUID_LEAF_EXT_BASE, 0, &eax, &ebx, &ecx, &edx);
	a->has_nx = false;
	a->maxphyaddr = 36;	/* the SDM's default without leaf 80000008H */
	if (eax >= CPUID_LEAF_ADDR_SIZES) {
		uint32_t max = eax;

		cpuid_count(CPUID_LEAF_ADDR_SIZES, 0, &eax, &ebx, &ecx, &edx);
		a->maxphyaddr = eax & 0xff;
		eax = max;
	}
	if (eax >= CPUID_LEAF_EXT_FEATURES) {
		cpuid_count(CPUID_LEAF_EXT_FEATURES, 0, &eax, &ebx, &ecx, &edx);
		a->has_nx = edx & CPUID_80000001_EDX_NX;
	}
	/* The guest's TSC starts as the host's; its TSC_ADJUST as the host's. */
	a->tsc.offset = 0;
	a->tsc.adjust = 0;
	if (a->has_tsc_adjust)
		vmx_msr_access_safe(MSR_IA32_TSC_ADJUST, &a->tsc.adjust, false);
	a->pat = rdmsr(MSR_IA32_PAT);
	a->misc_enable = 0;
	vmx_msr_access_safe(MSR_IA32_MISC_ENABLE, &a->misc_enable, false);
	a->misc_enable &= ~(uint64_t)MISC_ENABLE_MONITOR;	/* CPUID.01H:ECX.MONITOR is 0 */
	mtrr_setup(a);
	a->tsc_deadline = 0;
	vmx_program_preemption_timer(vcpu);
	if (PROFILE_APIC_VIRTUAL)
		vmx_vlapic_setup(vcpu);		/* the APIC's reset state (vlapic_exits.c) */

	/* MSRs switched by hand: the host's now, the guest's reset values. */
	profile_msrs_save_host(vcpu);
	for (unsigned int i = 0; i < MSR_MANUAL_MAX; i++)
		vcpu->msrs.guest[i] = 0;	/* EFER and the SYSCALL MSRs reset to 0 */
	if ((slot = profile_msr_manual_slot(vcpu, MSR_IA32_PAT)) >= 0)
		vcpu->msrs.guest[slot] = vcpu->msrs.host[slot];
}
