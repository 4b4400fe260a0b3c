// SPDX-License-Identifier: GPL-2.0-only
/*
 * NMIs in root operation on the CPUs that run vCPUs, and parking a CPU
 * for good (ap_park.h).
 */
#include <stdbool.h>

#include "arch/vmx/ap_park.h"
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "runtime/host/layout.h"
#include "runtime/host/panic.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "arch/vmx/apic.h"
#include "msr_index.h"
#include "runtime/host/phys_apic.h"
#include "arch/vmx/profile_values.h"
#include "runtime/vm/vmm.h"
#include "arch/vmx/vcpu_switch.h"
#include "arch/vmx/vcpu_arch.h"

/* The CPUs whose NMIs in root operation are kicks (or stray): dropped. */
static bool cpu_kickable[HV_MAX_CPUS];

/*
 * An NMI in root operation on a vCPU's CPU, while the vCPU runs or
 * waits there (vmx_wait_in_root(), halted with interrupts off), is taken
 * by vmm_nmi_in_root() before this handler is asked: a kick, or the
 * guest's own NMI, kept for it.  Here come those of a parked or idle
 * CPU; anywhere else (no guest on the CPU) nmi_host() reports it.
 */
/*
 * Per CPU, for vmx_idle_*(): halting idle (prepare .. done); an NMI came
 * since the prepare; an idle kick's NMI was sent (or the CPU closed the
 * door on them, vmx_idle_done()).
 */
static bool cpu_idle[HV_MAX_CPUS];
static uint8_t cpu_idle_kicked[HV_MAX_CPUS];
static uint8_t cpu_idle_nmi_sent[HV_MAX_CPUS];
/* The idle timer's interrupt (or a late kick's) came since the prepare: vmx_idle_irq(). */
static uint8_t cpu_idle_timer_fired[HV_MAX_CPUS];
/* The physical APIC has TSC-deadline mode (CPUID.1:ECX[24]): the idle timer exists. */
static bool idle_timer_ok;

extern const char vmx_idle_window[], vmx_idle_window_end[];

static void ap_park_nmi(struct interrupt_frame *f)
{
	unsigned int cpu = this_cpu_id();

	if (cpu < HV_MAX_CPUS && READ_ONCE(cpu_kickable[cpu])) {
		WRITE_ONCE(cpu_idle_kicked[cpu], 1);
		/* vmx_idle_halt() tests the flag before its HLT; already past the test, skip the HLT. */
		if (READ_ONCE(cpu_idle[cpu]) && f->rip >= (uintptr_t)vmx_idle_window &&
		    f->rip < (uintptr_t)vmx_idle_window_end)
			f->rip = (uintptr_t)vmx_idle_window_end;
		return;
	}
	nmi_host(f);
}

void vmx_idle_irq(struct interrupt_frame *f)
{
	unsigned int cpu = this_cpu_id();

	if (cpu >= HV_MAX_CPUS)
		return;
	WRITE_ONCE(cpu_idle_timer_fired[cpu], 1);
	/* As the NMI's: already past the test, skip the HLT. */
	if (READ_ONCE(cpu_idle[cpu]) && f->rip >= (uintptr_t)vmx_idle_window &&
	    f->rip < (uintptr_t)vmx_idle_window_end)
		f->rip = (uintptr_t)vmx_idle_window_end;
}

/* VMX_KICK_VECTOR taken in root operation (the idle timer's, or a kick): EOI, then as above. */
static void idle_timer_irq(struct interrupt_frame *f)
{
	vmx_apic_eoi();
	vmx_idle_irq(f);
}

bool vmx_idle_timer_available(void)
{
	return READ_ONCE(idle_timer_ok);
}

void vmx_idle_prepare(unsigned int cpu)
{
	WRITE_ONCE(cpu_idle_timer_fired[cpu], 0);
	WRITE_ONCE(cpu_idle_kicked[cpu], 0);
	WRITE_ONCE(cpu_idle_nmi_sent[cpu], 0);
	WRITE_ONCE(cpu_idle[cpu], true);
	/* Pairs with vmx_idle_kick(): the poster enqueues, then reads cpu_idle. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void __attribute__((__noinline__)) vmx_idle_halt(unsigned int cpu)
{
	/* One copy of the window: the NMI handler and vmx_idle_irq() know its bounds. */
	asm volatile(".globl vmx_idle_window\n"
		     "vmx_idle_window:\n\t"
		     "cmpb $0, %0\n\t"
		     "jne vmx_idle_window_end\n\t"
		     "cmpb $0, %1\n\t"
		     "jne vmx_idle_window_end\n\t"
		     "hlt\n"
		     ".globl vmx_idle_window_end\n"
		     "vmx_idle_window_end:"
		     : : "m"(cpu_idle_kicked[cpu]), "m"(cpu_idle_timer_fired[cpu]) : "memory");
}

void vmx_idle_halt_until(unsigned int cpu, uint64_t deadline)
{
	/* TSC-deadline mode, this CPU's physical APIC (the host's under apic: virtual). */
	phys_apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_TSC_DEADLINE | VMX_KICK_VECTOR);
	wrmsr(MSR_IA32_TSC_DEADLINE, deadline);		/* 0: none (disarmed) */
	/*
	 * Interrupts on for the halt alone: the timer's interrupt ends it
	 * (an interrupt before the HLT sets the flag the window tests, or
	 * steps past it), the kick's NMI as ever.
	 */
	asm volatile("sti" : : : "memory");
	vmx_idle_halt(cpu);
	asm volatile("cli" : : : "memory");
	/* Disarmed (a write of 0), so it does not fire in a guest as a kick. */
	wrmsr(MSR_IA32_TSC_DEADLINE, 0);
}

/*
 * No kick's NMI may reach the vCPU the CPU runs next (it would be taken
 * for the guest's, vmm_nmi_in_root()): take the last word on sending
 * one, and if a poster had it, wait for its NMI to arrive.
 */
void vmx_idle_done(unsigned int cpu)
{
	WRITE_ONCE(cpu_idle[cpu], false);
	if (__atomic_exchange_n(&cpu_idle_nmi_sent[cpu], 1, __ATOMIC_SEQ_CST))
		while (!READ_ONCE(cpu_idle_kicked[cpu]))
			cpu_relax();
}

void vmx_idle_kick(unsigned int cpu)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (cpu < HV_MAX_CPUS && cpu != this_cpu_id() && READ_ONCE(cpu_idle[cpu]) &&
	    !__atomic_exchange_n(&cpu_idle_nmi_sent[cpu], 1, __ATOMIC_SEQ_CST))
		vmx_kick_nmi(cpu);
}

void vmx_ap_park_init(unsigned int n)
{
	uint32_t eax, ebx, ecx, edx;

	/*
	 * apic: virtual: the physical APICs are the host's, their timers free
	 * for the idle timer (the guest's TSC-deadline MSR is the model's).
	 */
	cpuid_count(1, 0, &eax, &ebx, &ecx, &edx);
	if (exitplan_profile.apic_virtual) {
		/* Also a kick taken in root operation, while CPU 0 idles with interrupts on. */
		idt_set_handler(VMX_KICK_VECTOR, idle_timer_irq);
		WRITE_ONCE(idle_timer_ok, !!(ecx & CPUID_1_ECX_TSC_DEADLINE));
	}
	if (n < 2)
		return;
	for (unsigned int cpu = 0; cpu < n && cpu < HV_MAX_CPUS; cpu++)
		WRITE_ONCE(cpu_kickable[cpu], true);
	idt_set_handler(X86_EXC_NMI, ap_park_nmi);
}

void vmx_park_this_cpu(void)
{
	unsigned int cpu = this_cpu_id();

	if (cpu < HV_MAX_CPUS)
		WRITE_ONCE(cpu_kickable[cpu], true);
	/* An NMI (dropped above) or an SMI ends a HLT: halt again. */
	for (;;)
		asm volatile("cli; hlt" : : : "memory");
}

/*
 * runtime/vm/vmm.h: the kick, here beside the halts it ends.  Which of the
 * three a vCPU gets depends on where it is: running in the guest (the
 * kick IPI, apic.c), waiting in root operation (an NMI), or blocked on
 * a shared CPU (woken in the scheduler; its CPU kicked, or NMI'd if idle).
 */
void vmm_kick(unsigned int vcpu_id)
{
	struct vcpu *target = vcpu_id < VM_MAX_VCPUS ? vmx_vcpus[vcpu_id] : NULL;
	unsigned int cpu;

	if (!target)
		return;
	/*
	 * The CPU that holds the vCPU (vmx_setup_vcpu() set it), never "CPU
	 * vcpu_id": with a scheduler the two differ (runtime/vm/sched.h).
	 */
	cpu = target->cpu ? target->cpu->id : vcpu_id;
	if (target->arch->shared) {
		/*
		 * Blocked: runnable now.  Queued: it takes its events when it
		 * is switched in.  Running there: the kick makes it take them
		 * now (if it is being switched out meanwhile, another vCPU
		 * gets a spurious kick, which it ignores).  Blocked on a CPU
		 * running a sibling: the kick makes the sibling give it the CPU
		 * (wakeup preemption, sched.h) -- to this CPU too, when the
		 * sibling is the poster: its next entry exits on it at once.
		 */
		if (sched_wake(&vmx_sched, vcpu_id) == SCHED_WAKE_PREEMPT)
			vmx_kick_ipi(cpu);
		else if (cpu != this_cpu_id() && sched_current(&vmx_sched, cpu) == (int)vcpu_id)
			vmx_kick_ipi(cpu);
		else
			vmx_idle_kick(cpu);	/* halted idle: an NMI (ap_park.c) */
		return;
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (READ_ONCE(target->arch->waiting_in_root))
		vmx_kick_nmi(cpu);
	else
		vmx_kick_ipi(cpu);
}
