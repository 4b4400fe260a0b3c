// SPDX-License-Identifier: GPL-2.0-only
/*
 * Running the VM: vmm_run() brings up every CPU and vCPU, starts the
 * guest, and each CPU's loop runs its vCPUs' turns (waits in root
 * operation, STARTUP, HLT with interrupts off, kicks) until the machine
 * stops; then the report.
 */

#include "runtime/host/acpi.h"
#include "arch/vmx/ap_park.h"
#include "runtime/host/panic.h"
#include "runtime/host/smp.h"
#include "runtime/host/timer.h"
#include "runtime/loader/guest_loader.h"
#include "arch/vmx/mmio.h"
#include "arch/vmx/profile_values.h"
#include "arch/vmx/vcpu_asm.h"
#include "arch/vmx/vcpu_arch.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/cpuid.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/legacy_irq.h"
#include "arch/vmx/apic.h"
#include "arch/vmx/vlapic_exits.h"
#include "arch/vmx/vcpu_switch.h"
#include "runtime/vm/vmm.h"
#include "arch/vmx/vmx_setup.h"
#include "arch/vmx/preemption_timer.h"
#include "arch/vmx/nmi_root.h"
#include "vmx_controls_bits.h"
#include "runtime/host/console.h"
#include "runtime/devices/pci.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "lib/string.h"

/* --- the machine and its vCPUs --------------------------------------- */

/* The machine: one per boot; its vCPUs are vcpu_switch.c's vmx_vcpus[]. */
static struct vm vmx_vm;
/* vCPU 0's multiboot entry and info, for vmx_setup_cpu_vcpus(). */
static uint32_t vmx_boot_entry, vmx_boot_mbi;

/* Make the first vCPU of @cpu that is not gone runnable: its turn stops the machine. */
static void vmx_hv_deadline_wake(unsigned int cpu)
{
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus) {
		if (sched_state(&vmx_sched, id) == SCHED_GONE)
			continue;
		/* Its block stays: the report says what it was waiting in. */
		sched_wake(&vmx_sched, id);
		return;
	}
}

static bool vmx_startup_posted(struct vcpu *vcpu)
{
	return READ_ONCE(vcpu->vv->sipi);
}

/*
 * Leave the guest on this CPU for a new VMLAUNCH: VMCLEAR keeps the
 * VMCS's content and makes its launch state clear (SDM Vol. 3C 25.11.3).
 */
static void vmx_relaunchable(struct vcpu *vcpu)
{
	vmclear(vcpu->vmcs_pa);
	vmptrld(vcpu->vmcs_pa);
	vcpu->launched = false;
}

/* Check the machine can still make progress; if not, stop it (as vCPU @vcpu). */
static void vmx_check_progress(struct vcpu *vcpu)
{
	if (!vm_stopping(vcpu->vm) && !vm_any_vcpu_runnable(vcpu->vm)) {
		vcpu_stop(vcpu, "no vCPU is left running: each waits for a STARTUP IPI or halted "
			  "with interrupts off");
		vmx_kick_vcpus(vm_stop(vcpu->vm, vcpu->id));
	}
}

/* What a vCPU's turn on its CPU ended with. */
enum vmx_turn {
	VMX_TURN_SWITCH,	/* it gave the CPU up (blocked, yielded, preempted): it lives on */
	VMX_TURN_GONE,		/* it stopped for good */
};

/*
 * A shared vCPU woken from a block (its VMCS current): true when what it
 * waited for came, false when it blocked again (a wake for an event that
 * does not end its wait, e.g. a fixed interrupt while halted with IF=0).
 */
static bool vmx_vcpu_unblock(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;
	enum vcpu_block_reason why = a->block;

	if (vm_stopping(vcpu->vm))
		return true;
	switch (why) {
	case VCPU_BLOCK_HLT_IRQS_OFF:
		if (!vm_vcpu_wakeup_pending(vcpu->vv))
			break;
		vm_vcpu_set_halted(vcpu->vv, false);
		a->block = VCPU_BLOCK_NONE;
		return true;
	case VCPU_BLOCK_HLT:
		/* vCPU 0 keeps the 8254's deadline (legacy_irq.c); it may be what woke it. */
		if (a->pit_deadline && rdtsc() >= a->pit_deadline)
			vmx_legacy_irq_update(vcpu);
		/* Woken for nothing it takes (the 8254's request was another vCPU's): block again. */
		if (!vm_vcpu_events_pending(vcpu->vv) && !vmx_vlapic_has_interrupt(vcpu) &&
		    !(vmcs_read32(VM_ENTRY_INTR_INFO_FIELD) & INTR_INFO_VALID)) {
			vmx_vlapic_sync(vcpu);		/* its timer's next deadline, for the siblings */
			break;
		}
		a->block = VCPU_BLOCK_NONE;
		return true;
	default:
		a->block = VCPU_BLOCK_NONE;
		return true;
	}
	vmx_sched_block(vcpu, why);
	return false;
}

/*
 * One turn of a vCPU on its CPU, its VMCS current: wait for STARTUP (not
 * vCPU 0, which starts at the multiboot entry), run the guest until it
 * stops, takes an INIT (back to the wait) or -- sharing its CPU -- gives
 * the CPU up; and stop the machine when it stops: the first vCPU to stop
 * decides the machine's end, the others are kicked out.  A vCPU alone on
 * its CPU has one turn, its whole life, as before there was a scheduler:
 * it waits for STARTUP and halts with interrupts off in root operation.
 */
static enum vmx_turn vmx_vcpu_turn(struct vcpu *vcpu)
{
	struct vcpu_arch_state *a = vcpu->arch;

	for (;;) {
		int r;

		if (a->shared && vm_stopping(vcpu->vm))
			break;
		/* Woken by its idle CPU for the deadline (vmx_cpu_run()): it ends the machine. */
		if (a->shared && vmx_hv_deadline_passed()) {
			vmx_hv_deadline_stop(vcpu);
			break;
		}
		if (vm_vcpu_state(vcpu->vv) == VCPU_RUN_WAIT_FOR_SIPI) {
			uint8_t vector;

			/*
			 * An NMI of its own taken in root before the INIT
			 * (vmm_nmi_in_root()) is gone with it, as the posted
			 * ones are (vm_vcpu_post_init()).
			 */
			__atomic_and_fetch(&vcpu->nmi_pending,
					   ~(uint32_t)(VCPU_NMI_ARRIVED | VCPU_NMI_QUEUED),
					   __ATOMIC_RELAXED);
			vmx_check_progress(vcpu);
			if (a->shared) {
				struct vm_events ev;

				/*
				 * What was posted before the INIT that put it here
				 * (the INIT itself among it) is not for the next run,
				 * and pending it would wake the block below at once.
				 */
				vm_vcpu_take_events(vcpu->vv, &ev);
				if (!vm_vcpu_take_startup(vcpu->vv, &vector)) {
					if (vm_stopping(vcpu->vm))
						break;
					vmx_sched_block(vcpu, VCPU_BLOCK_SIPI);
					return VMX_TURN_SWITCH;
				}
				a->block = VCPU_BLOCK_NONE;
			} else if (!vmx_wait_in_root(vcpu, vmx_startup_posted, VMX_WAIT_SIPI) ||
				   !vm_vcpu_take_startup(vcpu->vv, &vector)) {
				break;
			}
			if (!vmx_setup_guest_startup(vcpu, vector)) {
				vcpu_stop(vcpu, "cannot set up the STARTUP state (vector %#x)", vector);
				break;
			}
		} else if (a->shared && a->block != VCPU_BLOCK_NONE && !vmx_vcpu_unblock(vcpu)) {
			return VMX_TURN_SWITCH;
		}
		if (a->shared) {
			/* What was posted while it was switched out, then its virtual APIC's state. */
			if (vmx_take_events(vcpu) != VMX_EXIT_RESUME) {
				if (a->stop == VCPU_RUNNING &&
				    vm_vcpu_state(vcpu->vv) == VCPU_RUN_WAIT_FOR_SIPI) {
					vmx_relaunchable(vcpu);		/* INIT */
					continue;
				}
				break;
			}
			vmx_vlapic_sync(vcpu);
			vmx_sched_switch_in(vcpu);
			if (vcpu->nmi_pending)
				vmx_deliver_pending_nmi(vcpu);
		}
		/*
		 * The 8254 runs from the start, as the firmware left it (channel
		 * 0 at 18.2 Hz, runtime/devices/platform.c): vCPU 0 arms its first IR0
		 * before the guest's first instruction, not at its first port
		 * access, which a guest that keeps the firmware's timer (an
		 * `sti; hlt` in real mode) never makes.
		 */
		if (!vcpu->launched && vcpu->id == 0)
			vmx_legacy_irq_update(vcpu);
		profile_msrs_before_entry_call(vcpu);
		r = vmx_enter_guest(vcpu, vcpu->launched);
		if (r == VMX_ENTER_SWITCHED) {
			vcpu->launched = true;
			vmx_sched_switch_out(vcpu);
			return VMX_TURN_SWITCH;
		}
		if (r == VMX_ENTER_VMFAIL) {
			const char *insn = vcpu->launched ? "VMRESUME" : "VMLAUNCH";

			/* Nothing ran: give the host its MSRs back, then say why. */
			profile_msrs_on_exit_call(vcpu);
			printk("exitplan: vCPU %u: %s failed: VM-instruction error %u\n",
			       vcpu->id, insn, vmcs_read32(VM_INSTRUCTION_ERROR));
			vcpu_stop(vcpu, "%s failed: VM-instruction error %u", insn,
				  vmcs_read32(VM_INSTRUCTION_ERROR));
			break;
		}
		vcpu->launched = true;
		if (vmcs_read32(GUEST_ACTIVITY_STATE) == GUEST_ACTIVITY_HLT)
			a->halted_at_stop = true;
		vmx_relaunchable(vcpu);
		/* An INIT took it out (apic.c): back to wait-for-SIPI. */
		if (a->stop == VCPU_RUNNING && vm_vcpu_state(vcpu->vv) == VCPU_RUN_WAIT_FOR_SIPI)
			continue;
		if (a->stop == VCPU_RUNNING)
			vcpu_stop(vcpu, "left the guest without a reason");
		break;
	}
	if (a->stop == VCPU_RUNNING)
		a->stop = VCPU_STOP_VM;		/* the machine stopped while it waited */
	if (a->stop != VCPU_STOP_VM)
		vmx_kick_vcpus(vm_stop(vcpu->vm, vcpu->id));
	if (a->block == VCPU_BLOCK_HLT_IRQS_OFF || a->block == VCPU_BLOCK_HLT)
		a->halted_at_stop = true;
	vm_vcpu_set_stopped(vcpu->vv, a->halted_at_stop);
	sched_gone(&vmx_sched, vcpu->cpu->id);
	return VMX_TURN_GONE;
}

/* Every vCPU of @cpu is gone. */
static bool vmx_cpu_done(unsigned int cpu)
{
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus)
		if (sched_state(&vmx_sched, id) != SCHED_GONE)
			return false;
	return true;
}

/* Nothing runnable on @cpu: idle, under the scheduler's lock-free peeks. */
static bool vmx_cpu_has_work(unsigned int cpu)
{
	return sched_has_queued(&vmx_sched, cpu) || vmx_sched_wake_due(cpu, NULL) ||
	       vmx_hv_deadline_passed();
}

/* The earlier of a blocked vCPU's timer @due (0: none) and the hypervisor's deadline. */
static uint64_t vmx_idle_due(unsigned int cpu)
{
	uint64_t due = vmx_sched_timer_due(cpu);

	if (vmx_hv_deadline && (!due || vmx_hv_deadline < due))
		due = vmx_hv_deadline;
	return due;
}

/*
 * Wait until a vCPU of @cpu is runnable: halted (interrupts off) until
 * vmm_kick()'s NMI when no blocked vCPU has a timer armed, halted until
 * the earliest such timer's deadline (or a kick) on the host's idle
 * timer (ap_park.c) when it has one, else polling for the deadline
 * (sched_idle_may_halt()).  No NMI that comes is taken for a guest's:
 * the CPU has no current vCPU meanwhile.
 */
static void vmx_cpu_idle(unsigned int cpu)
{
	struct sched_cpu *sc = &vmx_sched.cpu[cpu];
	bool timer = vmx_idle_timer_available();
	uint64_t due = vmx_idle_due(cpu);

	/*
	 * The CPU the hardware's I/O APIC entries name (apic: virtual) takes
	 * the devices' interrupts in root operation: with the idle timer it
	 * halts with interrupts on (they end the halt, as the timer's does),
	 * without it polls with interrupts open for an instant -- a device's
	 * interrupt for a blocked vCPU would otherwise wait in its APIC.
	 */
	bool devices = vmx_ioapic_idle_polls(cpu);
	bool may_halt = devices ? timer : sched_idle_may_halt(&vmx_sched, due, timer);

	this_cpu()->vcpu = NULL;
	if (!may_halt) {
		sc->idle_polls++;
		while (!vmx_cpu_has_work(cpu)) {
			vmx_ioapic_idle(cpu);
			cpu_relax();
		}
		return;
	}
	if (due)
		sc->idle_timer_halts++;
	else
		sc->idle_halts++;
	for (;;) {
		vmx_idle_prepare(cpu);
		if (vmx_cpu_has_work(cpu))
			break;
		/* A timer armed meanwhile is a vCPU's woken and blocked again: this CPU's own doing. */
		due = vmx_idle_due(cpu);
		if (!devices && !sched_idle_may_halt(&vmx_sched, due, timer))
			break;		/* polled, at the next call */
		if (due || devices)
			vmx_idle_halt_until(cpu, due);
		else
			vmx_idle_halt(cpu);
	}
	vmx_idle_done(cpu);
}

/*
 * A CPU's life: run the vCPU the scheduler picks, one turn at a time,
 * until all of its vCPUs are gone.  The VMCS of the one picked is made
 * current (VMPTRLD) when it is another than the last one; with none
 * runnable the CPU waits in root operation (vmx_cpu_idle()): halted
 * until a kick or a blocked vCPU's timer, or polling for the timer
 * where no host timer ends a halt.
 */
static void vmx_cpu_run(unsigned int cpu)
{
	for (;;) {
		bool switched;
		int id = sched_pick_next(&vmx_sched, cpu, rdtsc(), &switched);
		struct vcpu *vcpu;

		if (id == SCHED_NONE) {
			if (vmx_cpu_done(cpu))
				return;
			/*
			 * Past the deadline with every vCPU here blocked (in HLT,
			 * or waiting for a STARTUP): one of them runs its turn, to
			 * stop the machine (vmx_vcpu_turn()).
			 */
			if (vmx_hv_deadline_passed() && !vm_stopping(&vmx_vm)) {
				vmx_hv_deadline_wake(cpu);
				continue;
			}
			vmx_cpu_idle(cpu);
			continue;
		}
		vcpu = vmx_vcpus[id];
		if (switched && !vmptrld(vcpu->vmcs_pa))
			panic("CPU %u: VMPTRLD of vCPU %u's VMCS failed", cpu, id);
		this_cpu()->vcpu = vcpu;
		vmx_vcpu_turn(vcpu);
	}
}

/* What an AP reports back to the boot CPU before it runs its vCPUs. */
enum vmx_ap_state {
	VMX_AP_PENDING = 0,
	VMX_AP_READY,
	VMX_AP_FAILED,
};

struct vmx_ap_start {
	unsigned int cpu;
	struct vmx_cpu *vc;
	uint32_t state;		/* enum vmx_ap_state */
};

/* VMXON on this CPU and a VMCS for each of its vCPUs (allocated by the boot CPU). */
static bool vmx_setup_cpu_vcpus(unsigned int cpu, struct vmx_cpu *vc)
{
	if (!vmx_setup_cpu(vc))
		return false;
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus) {
		if (!vmx_setup_vcpu(vmx_vcpus[id], vc))
			return false;
		/* vCPU 0's entry state, with its VMCS still current. */
		if (id == 0 && !vmx_setup_guest_state(vmx_vcpus[0], vc, vmx_boot_entry, vmx_boot_mbi))
			return false;
	}
	return true;
}

/* Give up VMX on this CPU: no VMCS of it is left active. */
static void vmx_cpu_off(unsigned int cpu)
{
	for (unsigned int id = cpu; id < vmx_sched.nr_vcpus; id += vmx_sched.nr_cpus)
		vmclear(vmx_vcpus[id]->vmcs_pa);
}

/* Runs on the AP through smp_call_async(), interrupts off; never returns. */
static void vmx_ap_main(void *arg)
{
	struct vmx_ap_start *st = arg;

	if (!vmx_feature_control_ok() || !vmx_setup_cpu_vcpus(st->cpu, st->vc)) {
		__atomic_store_n(&st->state, VMX_AP_FAILED, __ATOMIC_RELEASE);
		vmx_park_this_cpu();
	}
	__atomic_store_n(&st->state, VMX_AP_READY, __ATOMIC_RELEASE);
	vmx_cpu_run(st->cpu);
	/* Stopped: stay in VMX root operation (INIT blocked), halted. */
	vmx_cpu_off(st->cpu);
	vmx_park_this_cpu();
}

/* How long the boot CPU waits for an AP's vCPUs to be ready, or to stop. */
#define VMX_AP_WAIT_US		200000
#define VMX_STOP_WAIT_US	2000000
#define VMX_POLL_US		100

/* The vCPUs and the per-CPU VT-x state of every CPU, allocated here on the boot CPU. */
static bool vmx_alloc_vcpus(struct vmx_cpu **vcs, unsigned int nr_cpus, unsigned int nr_vcpus)
{
	for (unsigned int cpu = 1; cpu < nr_cpus; cpu++) {
		vcs[cpu] = vmx_alloc_pages((sizeof(*vcs[cpu]) + PAGE_SIZE - 1) / PAGE_SIZE);
		if (!vcs[cpu])
			return false;
		vcs[cpu]->caps = vcs[0]->caps;
		vcs[cpu]->controls = vcs[0]->controls;
	}
	for (unsigned int id = 0; id < nr_vcpus; id++) {
		vmx_vcpus[id] = vmx_alloc_vcpu(&vmx_vm, id, vcs[sched_vcpu_cpu(&vmx_sched, id)]);
		if (!vmx_vcpus[id])
			return false;	/* reported by vmx_alloc_vcpu() */
	}
	return true;
}

static bool vmx_start_aps(struct vmx_cpu **vcs, unsigned int nr_cpus)
{
	static struct vmx_ap_start start[HV_MAX_CPUS];
	bool ok = true;

	for (unsigned int cpu = 1; cpu < nr_cpus; cpu++) {
		unsigned int waited = 0;
		uint32_t st;

		start[cpu] = (struct vmx_ap_start){ .cpu = cpu, .vc = vcs[cpu] };
		if (!smp_call_async(cpu, vmx_ap_main, &start[cpu])) {
			printk("exitplan: CPU %u is busy: no vCPU there\n", cpu);
			return false;
		}
		while ((st = __atomic_load_n(&start[cpu].state, __ATOMIC_ACQUIRE)) == VMX_AP_PENDING &&
		       waited < VMX_AP_WAIT_US) {
			pit_delay_us(VMX_POLL_US);
			waited += VMX_POLL_US;
		}
		if (st != VMX_AP_READY) {
			printk("exitplan: CPU %u: %s: no vCPU there\n", cpu,
			       st == VMX_AP_FAILED ? "VMX setup failed" : "did not answer");
			ok = false;
		}
	}
	return ok;
}

/*
 * After vCPU 0 stopped: wait for the others, which the stop kicked out
 * of their guests.  One that does not come is reported as hung, with the
 * state it is in; its statistics are printed as they are.
 */
static void vmx_wait_for_vcpus(unsigned int n)
{
	for (unsigned int id = 1; id < n; id++) {
		struct vcpu *v = vmx_vcpus[id];
		unsigned int waited = 0;
		bool init_sent = false;

		while (vm_vcpu_state(&vmx_vm.vcpu[id]) != VCPU_RUN_STOPPED &&
		       waited < VMX_STOP_WAIT_US) {
			/*
			 * Half the wait without an answer, in its guest alone on
			 * its CPU: the kick did not reach it (interrupts off, no
			 * VMX-preemption timer to end its run).  INIT does.
			 */
			if (!init_sent && waited >= VMX_STOP_WAIT_US / 2 && v && !v->arch->shared &&
			    v->cpu && vm_vcpu_state(&vmx_vm.vcpu[id]) == VCPU_RUN_RUNNING) {
				printk("exitplan: vCPU %u did not stop in %u ms: INIT to CPU %u\n", id,
				       VMX_STOP_WAIT_US / 2000, v->cpu->id);
				vmx_kick_init(v->cpu->id);
				init_sent = true;
			}
			pit_delay_us(VMX_POLL_US);
			waited += VMX_POLL_US;
		}
		if (vm_vcpu_state(&vmx_vm.vcpu[id]) != VCPU_RUN_STOPPED)
			printk("exitplan: vCPU %u is hung: still %s %u ms after the machine stopped\n",
			       id, vm_vcpu_state_name(vm_vcpu_state(&vmx_vm.vcpu[id])),
			       VMX_STOP_WAIT_US / 1000);
	}
}

/*
 * The hypervisor's `wake_preempt=off` option: a vCPU woken on a CPU
 * running a sibling waits for the slice's end (runtime/vm/sched.h), for
 * make bench to compare with wakeup preemption, the default.
 */
static void vmx_wake_preempt_option(const struct boot_info *bi)
{
	char v[8];

	if (!cmdline_option(bi->cmdline, "wake_preempt", v, sizeof(v)))
		return;
	if (!strcmp(v, "off")) {
		vmx_sched.no_wake_preempt = true;
		printk("exitplan: scheduler: wakeup preemption off (wake_preempt=off)\n");
	} else if (strcmp(v, "on")) {
		printk("exitplan: wake_preempt=%s: not on or off: ignored\n", v);
	}
}

/*
 * The hypervisor's `deadline=N` option: N TSC ticks (on Bochs, retired
 * instructions; a k, M or G suffix multiplies by 10^3, 10^6, 10^9) after
 * the VM is set up, every vCPU is stopped and the report printed, however
 * the guest behaves (halted with interrupts off, under an interrupt
 * storm, spinning without exits).  0 or absent: no deadline.  Set before
 * any vCPU runs: vmx_hv_deadline is read-only afterwards.
 */
static bool vmx_deadline_option(const struct boot_info *bi)
{
	char v[24];
	uint64_t n = 0, unit = 1;
	const char *p = v;

	if (!cmdline_option(bi->cmdline, "deadline", v, sizeof(v)))
		return true;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			break;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (*p == 'k' || *p == 'K')
		unit = 1000ull;
	else if (*p == 'M')
		unit = 1000000ull;
	else if (*p == 'G')
		unit = 1000000000ull;
	if (unit != 1)
		p++;
	if (p == v || *p || (unit != 1 && p == v + 1) || n > (UINT64_MAX / 4) / unit) {
		printk("exitplan: deadline=%s: not a count of TSC ticks (digits, then k, M or G): "
		       "refusing\n", v);
		return false;
	}
	vmx_hv_deadline_ticks = n * unit;
	if (!vmx_hv_deadline_ticks)
		return true;
	WRITE_ONCE(vmx_hv_deadline, rdtsc() + vmx_hv_deadline_ticks);
	printk("exitplan: deadline: the guest is stopped %llu TSC ticks after its launch "
	       "(deadline=%s)\n", (unsigned long long)vmx_hv_deadline_ticks, v);
	return true;
}

/*
 * How many vCPUs: the hypervisor's `vcpus=N` option (1 .. VM_MAX_VCPUS,
 * at least the CPUs: every CPU runs one), else one per CPU.  More than
 * the CPUs needs a virtual local APIC per vCPU (a physical one cannot be
 * shared): refused under any other `apic:` model.
 */
static bool vmx_vcpu_count(const struct boot_info *bi, unsigned int ncpus, unsigned int *n)
{
	char v[8];
	unsigned int want = 0;

	*n = ncpus;
	if (!cmdline_option(bi->cmdline, "vcpus", v, sizeof(v)))
		return true;
	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || want > VM_MAX_VCPUS) {
			want = 0;
			break;
		}
		want = want * 10 + (unsigned int)(*p - '0');
	}
	if (!want || want > VM_MAX_VCPUS) {
		printk("exitplan: vcpus=%s: not a vCPU count in 1..%u: refusing\n", v, VM_MAX_VCPUS);
		return false;
	}
	if (want < ncpus) {
		printk("exitplan: vcpus=%u is fewer than the %u CPUs, each of which runs a vCPU: "
		       "refusing\n", want, ncpus);
		return false;
	}
	if (want > ncpus && !exitplan_profile.apic_virtual) {
		printk("exitplan: vcpus=%u on %u CPU%s needs `apic: virtual` (vCPUs that share a CPU "
		       "cannot own its local APIC); profile '%s' has apic: %s: refusing\n", want, ncpus,
		       ncpus == 1 ? "" : "s", exitplan_profile.name,
		       exitplan_profile.apic_intercept_icr ? "intercept-icr" : "passthrough");
		return false;
	}
	*n = want;
	return true;
}

/*
 * No port the guest is granted (spec/runtime.yaml's granted_io_ports, the
 * profile's execution.io.grant) may be an I/O BAR of a PCI function: the
 * guest owns none (runtime/devices/pci.h), and a bus master's registers -- on
 * Bochs the IDE controller's bus-master block at 0xc000-0xc00f -- start
 * DMA anywhere in memory, the hypervisor included.  The generator refuses
 * the ports spec/runtime.yaml reserves; where firmware put the BARs only
 * the machine can say, so it is checked here, at boot.
 */
#define VMX_PCI_IO_BARS_MAX	64

static bool vmx_io_grants_clear_of_pci(void)
{
	static struct pci_io_bar bars[VMX_PCI_IO_BARS_MAX];
	unsigned int n = pci_io_bars(bars, VMX_PCI_IO_BARS_MAX);
	bool clear = true;

	if (n > VMX_PCI_IO_BARS_MAX) {
		printk("exitplan: %u PCI I/O BARs, more than the %u the check of the I/O grants "
		       "holds: refusing\n", n, VMX_PCI_IO_BARS_MAX);
		return false;
	}
	for (unsigned int g = 0; g < profile_io_grant_range_count; g++) {
		const struct io_port_range *r = &profile_io_grant_ranges[g];

		for (unsigned int i = 0; i < n; i++) {
			const struct pci_io_bar *b = &bars[i];

			if (!pci_io_bar_overlaps(b, r->first, r->last))
				continue;
			printk("exitplan: profile '%s' grants ports %#x..%#x, which overlap I/O BAR %u "
			       "(ports %#x..%#x) of PCI function %02x:%02x.%u (vendor %04x device %04x, "
			       "class %06x), which the guest does not own: a device's registers can "
			       "start DMA into the hypervisor: refusing\n", exitplan_profile.name,
			       r->first, r->last, b->bar, b->first, b->last, b->bdf >> 16, (b->bdf >> 11) & 0x1f,
			       (b->bdf >> 8) & 7, b->id & 0xffff, b->id >> 16, b->class_rev >> 8);
			clear = false;
		}
	}
	return clear;
}

int vmm_run(const struct boot_info *bi)
{
	struct vmx_cpu *vc;
	struct vcpu *vcpu;
	struct guest_start start;
	uint32_t apic_ids[VM_MAX_VCPUS];
	uint64_t tsc_overhead = 0, tsc_hz;
	uint16_t smi_cmd;
	uint8_t acpi_enable, acpi_disable;
	char line[160];
	unsigned int n, ncpus;
	struct vcpu *cause;
	struct vmx_cpu *vcs[HV_MAX_CPUS];

	/*
	 * The host's NMIs are asked of the VMM first, from before any CPU can
	 * take one meant for a vCPU (none exists yet) to the end.
	 */
	vmx_nmi_root_init(&(struct vmx_stub_windows){
		.check = vmx_nmi_check, .check_end = vmx_nmi_check_end,
		.recheck = vmx_nmi_recheck, .recheck_end = vmx_nmi_recheck_end,
	});
	traps_set_nmi_owner(vmm_nmi_in_root);
	vc = vmx_alloc_pages((sizeof(*vc) + PAGE_SIZE - 1) / PAGE_SIZE);
	if (!vc)
		return VMM_ERROR;
	vmx_read_caps(&vc->caps);
	if (!(vc->caps.cpuid_1_ecx & CPUID_1_ECX_VMX)) {
		printk("exitplan: VT-x not available: CPUID.1:ECX.VMX is 0 (this CPU lacks vmx)\n");
		return VMM_REFUSED;
	}
	if (!vmx_feature_control_ok()) {
		printk("exitplan: VT-x not available: IA32_FEATURE_CONTROL is locked without "
			  "VMXON outside SMX (this CPU lacks vmx)\n");
		return VMM_REFUSED;
	}
	printk("exitplan: VMX: revision %#llx, profile '%s' (%s)\n",
		  (unsigned long long)(vc->caps.basic & VMX_BASIC_REVISION_ID_MASK),
		  exitplan_profile.name, exitplan_profile.source);

	vmx_compute_controls(&profile_vmx_setup, &vc->caps, &vc->controls);
	if (vc->controls.status != VMX_CONTROLS_OK) {
		vmx_format_refusal(line, sizeof(line), &profile_vmx_setup, &vc->controls);
		printk("exitplan: %s\n", line);
		return VMM_REFUSED;
	}
	vmx_print_gates(&vc->controls);
	if (exitplan_profile.apic_virtual) {
		/* The generator requires the timer; a CPU without it fails the controls above. */
		if (!(vc->controls.field[VMX_PIN_BASED] & PIN_BASED_VMX_PREEMPTION_TIMER) ||
		    !(vc->controls.field[VMX_EXIT] & VM_EXIT_SAVE_VMX_PREEMPTION_TIMER)) {
			printk("exitplan: apic: virtual needs the VMX-preemption timer, saved across "
			       "exits: refusing\n");
			return VMM_REFUSED;
		}
		printk("gate apic: virtual: a virtual local APIC per vCPU; x2APIC MSRs and the xAPIC "
		       "page at %#llx emulated, its timer on the VMX-preemption timer "
		       "(preemption_timer)\n",
		       (unsigned long long)(rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK));
	}
	if (exitplan_profile.interrupts_direct) {
		/* The generator requires both; a CPU without them fails the controls above. */
		if (!(vc->controls.field[VMX_PIN_BASED] & PIN_BASED_NMI_EXITING) ||
		    !(vc->controls.field[VMX_PIN_BASED] & PIN_BASED_VMX_PREEMPTION_TIMER)) {
			printk("exitplan: interrupts: direct needs NMI exiting and the "
			       "VMX-preemption timer: refusing\n");
			return VMM_REFUSED;
		}
		printk("gate interrupts: direct: each vCPU's CPU's interrupts go to the guest's "
		       "IDT (no external-interrupt exiting), its local APIC the guest's but the "
		       "ICR; kicks are NMIs, the watchdog the VMX-preemption timer "
		       "(virtual_nmis, preemption_timer)\n");
	}
	if (!vmx_runtime_controls_ok(&vc->controls))
		return VMM_REFUSED;
	if (!vmx_io_grants_clear_of_pci())
		return VMM_REFUSED;

	/*
	 * Every CPU runs a vCPU, or several (vCPU i on CPU i mod p); a CPU
	 * the MADT lists that did not come up would be outside VMX, the
	 * guest's for a physical INIT-SIPI: refuse.
	 */
	ncpus = smp_start_aps();
	if (smp_cpus_left_out()) {
		printk("exitplan: %u CPU%s not online: refusing to run a guest beside them\n",
		       smp_cpus_left_out(), smp_cpus_left_out() == 1 ? "" : "s");
		return VMM_ERROR;
	}
	if (ncpus > VM_MAX_VCPUS)
		ncpus = VM_MAX_VCPUS;
	if (!vmx_vcpu_count(bi, ncpus, &n))
		return VMM_REFUSED;
	if (!sched_init(&vmx_sched, ncpus, n, exitplan_profile.sched_pause_yield_after))
		return VMM_ERROR;
	vmx_sched.wake_granularity = exitplan_profile.sched_wake_granularity_ticks;
	vmx_wake_preempt_option(bi);
	if (!vmx_deadline_option(bi))
		return VMM_REFUSED;
	/*
	 * One vCPU per CPU: the guest's APIC IDs are the CPUs'.  More: each
	 * vCPU's virtual APIC has its id as APIC ID, and the guest's MADT
	 * is rewritten to list them (runtime/host/acpi.c).
	 */
	for (unsigned int i = 0; i < n; i++)
		apic_ids[i] = n > ncpus ? i : percpu_area(i)->apic_id;
	if (n > ncpus && !acpi_guest_madt_set_cpus(apic_ids, n, bi->mmap, bi->mmap_count)) {
		printk("exitplan: cannot list %u vCPUs in the guest's MADT: refusing\n", n);
		return VMM_ERROR;
	}
	vm_init(&vmx_vm, n, apic_ids);
	vmx_apic_init(rdmsr(MSR_IA32_APIC_BASE));
	vmx_ap_park_init(ncpus);
	vmx_ioapic_root_init(&vmx_vm);
	/* Every CPU may take an exit from here on: no handler changes after. */
	idt_seal();

	vcs[0] = vc;
	if (!vmx_alloc_vcpus(vcs, ncpus, n))
		return VMM_ERROR;
	vcpu = vmx_vcpus[0];
	/* Load the guest before VMXON: a bad module is reported without VMX on. */
	if (!guest_load(bi, &start))
		return VMM_ERROR;
	if (!vmx_build_vm_ept(vc, bi))
		return VMM_ERROR;
	tsc_hz = tsc_measure_hz();
	platform_init(&vmx_vm.platform, start.ram_bytes, n, tsc_hz);
	if (!platform_rtc_from_host(&vmx_vm.platform))
		printk("exitplan: the host's RTC did not answer: the guest's starts at 2000-01-01\n");
	cpuid_set_tsc_hz(tsc_hz);
	if (acpi_fadt_smi_cmd(&smi_cmd, &acpi_enable, &acpi_disable))
		platform_set_acpi_smi(&vmx_vm.platform, smi_cmd, acpi_enable, acpi_disable);
	printk("exitplan: TSC %llu Hz: CPUID 15H/16H say so\n", (unsigned long long)tsc_hz);
	vmx_boot_entry = start.entry;
	vmx_boot_mbi = start.mbi;
	if (!vmx_setup_cpu_vcpus(0, vc)) {
		vmxoff();
		return VMM_ERROR;
	}
	if (start.boot_params) {
		/*
		 * The Linux 32-bit boot protocol (boot.rst): the same flat
		 * protected mode, ESI = boot_params, EBP, EDI and EBX zero.
		 */
		vcpu->regs.rax = 0;
		vcpu->regs.rbx = 0;
		vcpu->regs.rsi = start.boot_params;
	}
	strlcpy(vcpu->arch->guest_name, start.name, sizeof(vcpu->arch->guest_name));
	vcpu->arch->guest_args = start.args;
	/* vCPU 0 runs from the multiboot entry; the others wait for STARTUP. */
	vmx_vm.vcpu[0].state = VCPU_RUN_RUNNING;
	/*
	 * In the scheduler: vCPU 0 runnable; a vCPU alone on its CPU too (it
	 * waits for STARTUP in its one turn); one that shares a CPU blocked
	 * until its STARTUP is posted.
	 */
	for (unsigned int id = 0; id < n; id++) {
		if (id == 0 || !vmx_vcpus[id]->arch->shared)
			sched_wake(&vmx_sched, id);
		else
			vmx_vcpus[id]->arch->block = VCPU_BLOCK_SIPI;
	}
	if (ncpus > 1 && !vmx_start_aps(vcs, ncpus)) {
		printk("exitplan: not every other CPU runs a vCPU: refusing to run a guest\n");
		vmxoff();
		return VMM_ERROR;
	}
	if (n > 1)
		printk("exitplan: %u vCPUs: vCPU 0 at the multiboot entry, %u waiting for STARTUP "
		       "(%s)\n", n, n - 1, n == ncpus ? "one per CPU" : "scheduled");
	if (n > ncpus)
		printk("exitplan: scheduler: %u vCPUs on %u CPU%s (vCPU i on CPU i mod %u), slice %u "
		       "ticks, wake granularity %u ticks, yield after %u plain PAUSE exits\n", n, ncpus,
		       ncpus == 1 ? "" : "s", ncpus, exitplan_profile.sched_slice_ticks,
		       exitplan_profile.sched_wake_granularity_ticks,
		       exitplan_profile.sched_pause_yield_after);
	if (exitplan_profile.stats_level >= STATS_TIMING) {
		/* What reading the TSC twice adds to every timed exit. */
		uint64_t t = rdtsc();

		tsc_overhead = rdtsc() - t;
	}
	printk("exitplan: launching the guest at %#x (multiboot info at %#x)\n",
		  start.entry, start.mbi);
	vmx_cpu_run(0);
	vmx_wait_for_vcpus(n);

	cause = vmx_vcpus[vmx_vm.stopped_by >= 0 ? vmx_vm.stopped_by : 0];
	vmx_print_summary(vmx_vcpus, n, vmx_vm.stopped_by, tsc_overhead);
	vmx_cpu_off(0);
	vmxoff();
	write_cr4(read_cr4() & ~(uint64_t)X86_CR4_VMXE);
	return cause->arch->stop == VCPU_STOP_FAULT ? VMM_GUEST_FAULT : cause->arch->exit_status;
}
