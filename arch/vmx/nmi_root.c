// SPDX-License-Identifier: GPL-2.0-only
/*
 * NMIs in VMX root operation, and the waits they end: a vCPU waiting in
 * root operation (for STARTUP, or in HLT with interrupts off) and the
 * NMI handler that wakes it, the kick or the guest's own NMI.
 * vmm_nmi_in_root() is the host's NMI owner (runtime/host/traps.h),
 * registered by vmm_run() (vmx_run.c) at boot.  And HLT with interrupts
 * off, which waits here (handle_hlt()).
 */
#include "arch/vmx/apic.h"
#include "runtime/host/compiler.h"
#include "arch/vmx/nmi_root.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_asm.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/vcpu_switch.h"
#include "runtime/vm/vm.h"

extern const char vmx_wait_window[], vmx_wait_window_end[];

/*
 * Wait in root operation, interrupts off, until @ready(vcpu) or the
 * machine stops: halted, woken by vmm_kick()'s NMI or, in a HLT wait, by
 * the guest's own NMI (vmm_nmi_in_root() queues it), or polling where
 * halting is not safe.  Returns false when the machine stops first.
 *
 * An NMI that lands after ready() looked and before the HLT must not be
 * slept through: the NMI handler sets wait_woken, tested just before the
 * HLT, and one that lands between that test and the HLT has its return
 * RIP moved past the HLT (vmx_wait_window .. vmx_wait_window_end).
 * noinline: the window's labels exist once.
 */
noinline bool vmx_wait_in_root(struct vcpu *vcpu, bool (*ready)(struct vcpu *),
			       enum vmx_root_wait why)
{
	bool ok;

	WRITE_ONCE(vcpu->arch->waiting_in_root, why);
	/* Pairs with vmm_kick(): the event is posted before it reads the flag. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		WRITE_ONCE(vcpu->arch->wait_woken, 0);
		if (vm_stopping(vcpu->vm)) {
			ok = false;
			break;
		}
		if (ready(vcpu)) {
			ok = true;
			break;
		}
		asm volatile("cli\n"
			     ".globl vmx_wait_window\n"
			     "vmx_wait_window:\n\t"
			     "cmpb $0, %0\n\t"
			     "jne vmx_wait_window_end\n\t"
			     "hlt\n"
			     ".globl vmx_wait_window_end\n"
			     "vmx_wait_window_end:"
			     : : "m"(vcpu->arch->wait_woken) : "memory", "cc");
	}
	WRITE_ONCE(vcpu->arch->waiting_in_root, VMX_WAIT_NONE);
	return ok;
}

/* An NMI, INIT or stop posted, or the guest's own NMI taken while it waited. */
static bool vmx_wakeup_posted(struct vcpu *vcpu)
{
	return vmx_hlt_wait_over(vm_vcpu_wakeup_pending(vcpu->vv),
				 __atomic_load_n(&vcpu->nmi_pending, __ATOMIC_RELAXED));
}

/*
 * HLT with interrupts off (SDM Vol. 3A 9.x: only NMI, SMI, INIT or a
 * reset end it).  Bochs 2.7 bug (PLATFORM.md): a guest halted with IF=0
 * is never woken in VMX non-root operation, not even by the preemption
 * timer's interrupt that would come after it; so the halt is done here,
 * in root operation, where vmm_kick()'s NMI wakes the CPU.  With one
 * vCPU, or none left running, nothing can come: the vCPU is stopped, as
 * before SMP.
 */
enum vmx_exit_action vmx_halt_interrupts_off(struct vcpu *vcpu)
{
	uint64_t rip = vmcs_read(GUEST_RIP);

	if (!vm_vcpu_set_halted(vcpu->vv, true))
		return vmx_take_events(vcpu);
	if (!vm_any_vcpu_runnable(vcpu->vm) && !vm_vcpu_wakeup_pending(vcpu->vv)) {
		vm_vcpu_set_halted(vcpu->vv, false);
		return vcpu_stop(vcpu, "HLT with interrupts disabled at RIP %#llx (the guest halted "
				 "for good)", (unsigned long long)rip);
	}
	vmx_skip_instruction();
	/* Sharing its CPU, it gives it up instead of halting it (vcpu_switch.c). */
	if (vcpu->arch->shared)
		return vmx_sched_block(vcpu, VCPU_BLOCK_HLT_IRQS_OFF);
	if (!vmx_wait_in_root(vcpu, vmx_wakeup_posted, VMX_WAIT_HLT))
		vcpu->arch->halted_at_stop = true;	/* the machine stopped meanwhile */
	vm_vcpu_set_halted(vcpu->vv, false);
	return vmx_take_events(vcpu);
}

/*
 * NMIs in root operation.  The exit stub tests vcpu->nmi_pending twice
 * before VMRESUME (exit_entry.S); an NMI between those tests and the
 * VMRESUME sends the stub back to them.  The windows' addresses come from
 * vmm_run() at boot, before the NMI owner is registered, rather than
 * from the stub's symbols here: the stub calls every exit handler, and
 * the handlers call into this file (the HLT wait above).
 */
static struct vmx_stub_windows stub;

void vmx_nmi_root_init(const struct vmx_stub_windows *w)
{
	stub = *w;
}

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
		if (rip_in(f->rip, stub.check, stub.check_end) ||
		    rip_in(f->rip, stub.recheck, stub.recheck_end))
			f->rip = (uintptr_t)stub.check;
		vcpu->arch->kicks_in_root++;
		return true;
	}
	__atomic_or_fetch(&vcpu->nmi_pending, bit, __ATOMIC_RELAXED);
	/*
	 * Between the stub's last test and VMRESUME (exit_entry.S): test
	 * again, or the NMI would wait for the next exit.  Both tests are
	 * a CMP or TEST and a jump: nothing to undo.
	 */
	if (rip_in(f->rip, stub.check, stub.check_end))
		f->rip = (uintptr_t)stub.check;
	else if (rip_in(f->rip, stub.recheck, stub.recheck_end))
		f->rip = (uintptr_t)stub.recheck;
	vcpu->arch->nmis_in_root++;
	return true;
}
