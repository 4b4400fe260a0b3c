// SPDX-License-Identifier: GPL-2.0-only
/*
 * Several vCPUs on one CPU: what the exit handlers decide and what the
 * run loop (vmx_run.c, vmx_cpu_run()) does around a switch.  The policy is
 * runtime/vm/sched.c's; this file only feeds it the VT-x events and acts
 * on its answers.
 *
 * A vCPU whose CPU carries others (vcpu->arch->shared) gives the CPU up
 *
 * - on HLT with nothing deliverable (it is BLOCKED until an interrupt,
 *   or its virtual APIC's timer, makes one deliverable), instead of
 *   halting in non-root operation;
 * - on HLT with interrupts off (until an NMI, INIT or the stop);
 * - on a PAUSE-loop exit, or every pause_yield_after-th plain PAUSE exit,
 *   when another vCPU is runnable there (sched_yield_on_spin(): a
 *   preempted one first, the likely lock holder);
 * - at the end of its slice (execution.scheduler.slice TSC ticks),
 *   which the VMX-preemption timer measures: vmx_program_preemption_timer()
 *   fires at sched_deadline too;
 * - when a blocked sibling is woken (an IPI or interrupt posted to it,
 *   vmm_kick(), or its timer came due): the kick's exit, or the timer's,
 *   gives it the CPU (vmx_sched_kicked(), sched_resched()) instead of
 *   letting it wait for the rest of the slice -- once this vCPU has run
 *   the profile's wake granularity of its turn (else the preemption
 *   timer asks again then).
 *
 * A handler that gives the CPU up returns VMX_EXIT_SWITCH: the stub
 * saves every guest register and returns from vmx_enter_guest() to the
 * run loop, which picks the next vCPU and makes its VMCS current with
 * VMPTRLD (no VMCLEAR: a vCPU never leaves its CPU, and its VPID keeps
 * its TLB entries apart, so nothing is flushed), then enters it with
 * VMRESUME (VMLAUNCH for a VMCS never launched).  Each VMCS was set up
 * on the CPU that runs it, so its host state (HOST_GS_BASE, TR, GDTR,
 * HOST_RSP at the vCPU's own exit stack) is that CPU's.
 *
 * What the CPU holds of a guest outside the VMCS is saved and restored
 * here: the x87/SSE/AVX state (XSAVE with the guest's XCR0, or FXSAVE),
 * XCR0 itself, CR2, DR0-DR3 and DR6 (DR7 is in the VMCS; with or without
 * MOV-DR exiting -- only vmexit-bench sets it -- the guest's values are
 * in the registers, handle_dr_access() reads and writes them there), and
 * the MSRs the runtime executes for the guest without switching them
 * (below: the SYSCALL MSRs, KERNEL_GS_BASE, TSC_AUX,
 * SPEC_CTRL, XSS -- the `switch: none` ones, trapped or passed through;
 * an MSR the profile switches has its per-vCPU copy already).  The host
 * uses none of them (-mgeneral-regs-only, no host page faults, no
 * breakpoints, no SYSCALL/SWAPGS/RDTSCP/XSAVES).
 *
 * None of this is on the exit path of a vCPU alone on its CPU: the HLT
 * and PAUSE handlers test `shared`, the preemption-timer exit of
 * apic: virtual (the only APIC model a shared vCPU can have) calls
 * vmx_sched_tick(), and every other exit is untouched.
 */
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/cpu.h"
#include "runtime/host/percpu.h"
#include "arch/vmx/profile_values.h"
#include "runtime/vm/sched.h"
#include "runtime/devices/vlapic.h"
#include "msr_index.h"
#include "runtime/vm/vm.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/msr.h"
#include "arch/vmx/preemption_timer.h"
#include "vmx_controls_bits.h"
#include "runtime/host/msr_safe.h"
#include "msr_table.h"

struct sched vmx_sched;
/*
 * The machine's vCPUs by id (vmx_run.c fills it at setup), beside the
 * scheduler that says which CPU runs each: every file that names a vCPU
 * by id (the 8259s' LINT0 target, a sibling) asks here, never the run loop.
 */
struct vcpu *vmx_vcpus[VM_MAX_VCPUS];

struct vcpu *vmx_vcpu(unsigned int id)
{
	return id < VM_MAX_VCPUS ? vmx_vcpus[id] : NULL;
}

/* The earliest timer deadline (host TSC) of a vCPU: its virtual APIC's, the 8254's; 0 = none. */
static uint64_t timer_due(const struct vcpu_arch_state *a)
{
	uint64_t d = READ_ONCE(a->tsc_deadline), p = READ_ONCE(a->pit_deadline);

	return !d || (p && p < d) ? p : d;
}

/* The vCPUs of @cpu: ids cpu, cpu + p, cpu + 2p, ... (sched_vcpu_cpu()). */
#define for_each_vcpu_on(id, cpu) \
	for (unsigned int id = (cpu); id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus)

/* A sibling blocked in HLT whose timer will end the HLT: the deadline, or 0. */
static uint64_t sibling_due(unsigned int id, const struct vcpu *self)
{
	struct vcpu *v = vmx_vcpu(id);

	if (!v || v == self || !sched_blocked(&vmx_sched, id) ||
	    READ_ONCE(v->arch->block) != VCPU_BLOCK_HLT)
		return 0;
	return timer_due(v->arch);
}

bool vmx_sched_wake_due(unsigned int cpu, struct vcpu *self)
{
	uint64_t now = rdtsc();
	bool woke = false;

	for_each_vcpu_on(id, cpu) {
		uint64_t d = sibling_due(id, self);

		if (d && d <= now) {
			sched_wake(&vmx_sched, id);
			woke = true;
		}
	}
	return woke;
}

uint64_t vmx_sched_timer_due(unsigned int cpu)
{
	uint64_t due = 0;

	for_each_vcpu_on(id, cpu) {
		uint64_t d = sibling_due(id, NULL);

		if (d && (!due || d < due))
			due = d;
	}
	return due;
}

/* When this CPU must next decide: the slice's end, or a blocked sibling's timer if earlier. */
static uint64_t next_deadline(struct vcpu *vcpu, uint64_t now)
{
	uint64_t d = now + exitplan_profile.sched_slice_ticks;

	for_each_vcpu_on(id, vcpu->cpu->id) {
		uint64_t s = sibling_due(id, vcpu);

		if (s && s < d)
			d = s;
	}
	return d ? d : 1;
}

/* --- the exit handlers' decisions ------------------------------------------- */

/* Has what ends this kind of wait been posted? */
static bool wait_ends(struct vcpu *vcpu, enum vcpu_block_reason why)
{
	if (vm_stopping(vcpu->vm))
		return true;
	if (why == VCPU_BLOCK_HLT_IRQS_OFF)
		return vm_vcpu_wakeup_pending(vcpu->vv);
	/* HLT: any interrupt may be deliverable (the turn checks); SIPI: only a STARTUP is posted then. */
	return vm_vcpu_events_pending(vcpu->vv);
}

enum vmx_exit_action vmx_sched_block(struct vcpu *vcpu, enum vcpu_block_reason why)
{
	WRITE_ONCE(vcpu->arch->block, why);
	sched_block(&vmx_sched, vcpu->cpu->id);
	/*
	 * Posted before the block (the poster's sched_wake() found it still
	 * running and did nothing): wake it now.  Posted after: the poster's
	 * wake sees it BLOCKED.  sched.h: no wake-up is lost.
	 */
	if (wait_ends(vcpu, why))
		sched_wake(&vmx_sched, vcpu->id);
	return VMX_EXIT_SWITCH;
}

enum vmx_exit_action vmx_sched_pause(struct vcpu *vcpu)
{
	unsigned int cpu = vcpu->cpu->id;
	bool yielded;

	/* With PAUSE-loop exiting every PAUSE exit is a spin; with plain PAUSE exiting, every Nth. */
	if (vcpu->ctls[VMX_PROC_BASED2] & SECONDARY_EXEC_PAUSE_LOOP_EXITING)
		yielded = sched_yield_on_spin(&vmx_sched, cpu);
	else
		yielded = sched_pause_exit(&vmx_sched, cpu);
	return yielded ? VMX_EXIT_SWITCH : VMX_EXIT_RESUME;
}

/* A wakeup preemption too early in this vCPU's turn: the timer asks again at @retry. */
static void resched_later(struct vcpu *vcpu, uint64_t retry)
{
	struct vcpu_arch_state *a = vcpu->arch;

	if (retry && (!a->sched_deadline || retry < a->sched_deadline)) {
		a->sched_deadline = retry;
		vmx_program_preemption_timer(vcpu);
	}
}

enum vmx_exit_action vmx_sched_tick(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	unsigned int cpu = vcpu->cpu->id;
	uint64_t now = rdtsc(), retry = 0;
	/*
	 * A sibling's timer came due: it is runnable, and woken as a post
	 * wakes it -- with wakeup preemption it cuts in and this vCPU keeps
	 * its place right behind it (sched_resched()), once it has run its
	 * wake granularity; without, this vCPU's slice ends early.
	 */
	bool woke = vmx_sched_wake_due(cpu, vcpu);

	if (!vmx_sched.no_wake_preempt && (woke || sched_resched_pending(&vmx_sched, cpu))) {
		if (sched_resched(&vmx_sched, cpu, now, &retry))
			return VMX_EXIT_SWITCH;
		woke = false;		/* not yet: at retry */
	}
	if (!woke && now < a->sched_deadline) {
		resched_later(vcpu, retry);
		return VMX_EXIT_RESUME;
	}
	if (sched_slice_end(&vmx_sched, cpu))
		return VMX_EXIT_SWITCH;
	/* Alone with nothing runnable: a new slice. */
	a->sched_deadline = next_deadline(vcpu, now);
	vmx_program_preemption_timer(vcpu);
	resched_later(vcpu, retry);
	return VMX_EXIT_RESUME;
}

enum vmx_exit_action vmx_sched_kicked(struct vcpu *vcpu)
{
	uint64_t retry;

	if (sched_resched(&vmx_sched, vcpu->cpu->id, rdtsc(), &retry))
		return VMX_EXIT_SWITCH;
	resched_later(vcpu, retry);
	return VMX_EXIT_RESUME;
}

/* --- around a switch ------------------------------------------------------------ */

static inline uint64_t xgetbv0(void)
{
	uint32_t lo, hi;

	asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static inline void xsetbv0(uint64_t v)
{
	asm volatile("xsetbv" : : "c"(0), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static bool host_osxsave(void)
{
	return read_cr4() & X86_CR4_OSXSAVE;
}

/* DR0-DR3 and DR6: VMX switches only DR7 (SDM Vol. 3C 27.3.1.1, 28.5.1). */
static void debug_regs_save(struct vcpu_arch_state *a)
{
	asm volatile("mov %%db0, %0" : "=r"(a->dr[0]));
	asm volatile("mov %%db1, %0" : "=r"(a->dr[1]));
	asm volatile("mov %%db2, %0" : "=r"(a->dr[2]));
	asm volatile("mov %%db3, %0" : "=r"(a->dr[3]));
	asm volatile("mov %%db6, %0" : "=r"(a->dr6));
}

static void debug_regs_load(const struct vcpu_arch_state *a)
{
	asm volatile("mov %0, %%db0" : : "r"(a->dr[0]));
	asm volatile("mov %0, %%db1" : : "r"(a->dr[1]));
	asm volatile("mov %0, %%db2" : : "r"(a->dr[2]));
	asm volatile("mov %0, %%db3" : : "r"(a->dr[3]));
	asm volatile("mov %0, %%db6" : : "r"(a->dr6));
}

void vmx_sched_switch_out(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	debug_regs_save(a);
	vmx_resident_msrs_save(vcpu);
	a->regs_saved = true;
	vcpu->regs.cr2 = read_cr2();
	a->fpu_saved = true;
	if (!a->fpu_area)
		return;
	if (host_osxsave()) {
		/* Every component the guest's XCR0 (now loaded) enables. */
		a->xcr0 = xgetbv0();
		asm volatile("xsave64 (%0)" : : "r"(a->fpu_area), "a"(~0u), "d"(~0u) : "memory");
	} else {
		asm volatile("fxsave64 (%0)" : : "r"(a->fpu_area) : "memory");
	}
}

void vmx_sched_switch_in(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	a->sched_deadline = next_deadline(vcpu, rdtsc());
	vmx_program_preemption_timer(vcpu);
	/* Not after a turn's INIT (no switch-out since): the CPU holds its values then. */
	if (a->regs_saved) {
		a->regs_saved = false;
		debug_regs_load(a);
		vmx_resident_msrs_load(vcpu);
	}
	if (!a->fpu_saved)
		return;
	a->fpu_saved = false;
	write_cr2(vcpu->regs.cr2);
	if (!a->fpu_area)
		return;
	if (host_osxsave()) {
		if (xgetbv0() != a->xcr0)
			xsetbv0(a->xcr0);	/* checked when the guest set it (handle_xsetbv()) */
		asm volatile("xrstor64 (%0)" : : "r"(a->fpu_area), "a"(~0u), "d"(~0u) : "memory");
	} else {
		asm volatile("fxrstor64 (%0)" : : "r"(a->fpu_area) : "memory");
	}
}

/* --- the guest MSRs that stay in the CPU (msr.h) ------------------------- */

/*
 * Which a vCPU has, at its setup (vmx.c), and their save and load when
 * vCPUs share a CPU (above).  Which MSRs: msr_resident[] (spec/msrs.yaml
 * `resident`, which says why these; generated/common/msr_table.c), in
 * their save and load order.
 */
/* Switched by the profile (the VM-entry load list, or by hand): its copy is per vCPU already. */
static bool msr_switched_by_profile(const struct vcpu *vcpu, uint32_t msr)
{
	for (unsigned int i = 0; i < profile_msr_load_list_count; i++)
		if (profile_msr_load_list[i] == msr)
			return true;
	return profile_msr_manual_slot_call(vcpu, msr) >= 0;
}

/*
 * Which of them this CPU has (a RDMSR that does not fault) and the guest
 * can reach, with their values now (the guest's start values: the CPU's
 * at setup, as a vCPU alone on its CPU sees them).  Once, when the vCPU
 * is set up: INIT leaves them as they are (SDM Vol. 3A Table 10-1), so
 * a STARTUP keeps the saved values.
 */
void vmx_resident_msrs_setup(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	a->resident_msrs = 0;
	for (unsigned int i = 0; i < MSR_RESIDENT_COUNT; i++) {
		uint32_t msr = msr_resident[i];

		if ((msr == MSR_IA32_XSS && !vcpu_xss_shown(vcpu)) || msr_switched_by_profile(vcpu, msr))
			continue;
		if (vmx_msr_access_safe(msr, &a->resident_msr[i], false))
			a->resident_msrs |= 1u << i;
	}
}

void vmx_resident_msrs_save(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	for (unsigned int i = 0; i < MSR_RESIDENT_COUNT; i++)
		if (a->resident_msrs & (1u << i))
			a->resident_msr[i] = rdmsr(msr_resident[i]);
}

void vmx_resident_msrs_load(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	/* Values the CPU took before (from the guest's WRMSR or at setup): no fault. */
	for (unsigned int i = 0; i < MSR_RESIDENT_COUNT; i++)
		if (a->resident_msrs & (1u << i))
			wrmsr(msr_resident[i], a->resident_msr[i]);
}
