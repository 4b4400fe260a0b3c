/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VT-x runtime's internal interface: per-CPU VMX state, the rest of
 * a vCPU's VT-x state (struct vcpu_arch_state), and the helpers the exit
 * handlers share (guest RIP advance, event injection, stopping a guest).
 */
#ifndef EXITPLAN_VMX_H
#define EXITPLAN_VMX_H

#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"
#include "arch_checks.h"
#include "compiler.h"
#include "exit.h"
#include "vcpu.h"
#include "vmx_controls.h"
#include "vmx_ops.h"
#include "ept.h"
#include "platform.h"
#include "profile.h"
#include "vlapic.h"
#include "sched.h"
#include "vmm.h"

struct boot_info;

/* Why a guest stopped; printed in the exit summary. */
enum vcpu_stop_kind {
	VCPU_RUNNING = 0,
	VCPU_STOP_STATUS,	/* isa-debug-exit: status = (code << 1) | 1 */
	VCPU_STOP_SHUTDOWN,	/* SHUTDOWN hypercall: status from the guest */
	VCPU_STOP_FAULT,	/* anything else: stop_reason says what */
	VCPU_STOP_VM,		/* another vCPU stopped the machine */
};

/* How many MSRs msr.c's vmx_resident_msrs[] lists. */
#define VMX_RESIDENT_MSRS	8

/*
 * The VT-x state of one vCPU that the generated code does not touch.
 * Reached through vcpu->arch.
 */
struct vcpu_arch_state {
	/* Why the guest stopped, and its exit status if it gave one. */
	enum vcpu_stop_kind stop;
	int exit_status;
	char stop_reason[128];

	/* The CR0/CR4 bits the host owns (guest/host masks), fixed values. */
	uint64_t cr0_mask, cr4_mask;
	uint64_t cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1;

	/*
	 * External interrupts acknowledged on exit and not yet injected, one
	 * bit per vector (a virtual IRR); irq_pending says whether any is set.
	 */
	uint64_t irr[4];
	bool irq_pending;
	/*
	 * Vectors whose next external-interrupt exit is a duplicate: the
	 * APIC latched them again after the exit acknowledged the first,
	 * before the guest took it (events.c).
	 */
	uint64_t coalesce[4];
	/* NMIs that arrived in VMX root operation and were given to the guest. */
	uint64_t nmis_in_root;
	/*
	 * Interrupt storms (events.c): where the last interrupt was injected,
	 * whether the guest has since been given one instruction of its own
	 * (an STI-shadow step), and how many such steps were needed.
	 */
	uint64_t last_inject_rip;
	bool last_inject_valid, inject_stepped;
	uint64_t storm_steps;

	/* Guest-visible MSR state the hypervisor emulates. */
	uint64_t apic_base;		/* IA32_APIC_BASE as the guest sees it */
	uint64_t tsc_deadline;		/* IA32_TSC_DEADLINE, 0 = disarmed */
	uint64_t pit_deadline;		/* TSC of the guest 8254's next IR0, 0 = none */
	bool legacy_int_waiting;	/* the 8259s' INT is up, the guest has IF=0 */
	uint64_t xcr0;			/* the guest's XCR0 */
	bool has_x2apic, has_nx, has_tsc_deadline;	/* CPUID facts the MSR checks need */
	bool has_tsc_adjust;		/* CPUID.(EAX=7,ECX=0):EBX[1] */
	struct guest_tsc tsc;		/* TSC_OFFSET and the guest's IA32_TSC_ADJUST */
	uint64_t pat;			/* IA32_PAT when neither the VMCS nor a slot holds it */
	uint64_t misc_enable;		/* IA32_MISC_ENABLE as the guest sees it */
	/*
	 * The MTRRs, emulated per vCPU (never written to hardware: the
	 * host's memory types are the host's): MTRRCAP as the CPU reports it,
	 * capped to the architectural MSRs; initial values the firmware's.
	 */
	uint64_t mtrr_cap, mtrr_def_type;
	uint64_t mtrr_var[2 * MTRR_VAR_MAX];
	uint64_t mtrr_fixed[11];	/* FIX64K_00000, FIX16K_80000/A0000, FIX4K_C0000..F8000 */
	unsigned int maxphyaddr;

	/* The devices the guest sees (runtime/platform.c), shared by the VM's vCPUs. */
	struct platform_state *platform;

	/*
	 * The guest's xAPIC ICR high half (the destination): every xAPIC
	 * write exits (apic.c), and the low half's write sends with it.
	 */
	uint32_t xapic_icr_high;
	/* apic: virtual: the vCPU's local APIC (runtime/vlapic.c, vlapic_exits.c). */
	struct vlapic vlapic;
	/* The guest's HLT activity state when it stopped, for the report. */
	bool halted_at_stop;
	/*
	 * Scheduling (vcpu_switch.c).  shared: its CPU carries other vCPUs
	 * too, so it gives the CPU up on HLT, a spin and its slice's end;
	 * fixed at setup, false on a CPU of its own.  sched_deadline: the
	 * TSC of this CPU's next scheduling event while it runs (its slice's
	 * end, or a blocked sibling's timer), 0 = none; the preemption timer
	 * fires there too.  block: why it is BLOCKED in the scheduler.
	 */
	bool shared;
	uint64_t sched_deadline;
	enum vcpu_block_reason {
		VCPU_BLOCK_NONE = 0,
		VCPU_BLOCK_HLT,		/* HLT with interrupts on: until one is deliverable */
		VCPU_BLOCK_HLT_IRQS_OFF,	/* HLT with interrupts off: until NMI, INIT or stop */
		VCPU_BLOCK_SIPI,	/* wait-for-SIPI: until a STARTUP */
	} block;
	/*
	 * The guest state the CPU holds outside the VMCS, saved while it
	 * is switched out: x87/SSE/AVX (XSAVE or FXSAVE area, one page), CR2.
	 * fpu_saved: they are saved (restored before the next entry).
	 */
	void *fpu_area;
	bool fpu_saved;
	/*
	 * The rest of what a shared vCPU leaves in the CPU (vcpu_switch.c):
	 * DR0-DR3 and DR6 (DR7 is in the VMCS), and the MSRs the runtime
	 * executes for the guest without switching them (msr.c,
	 * vmx_resident_msrs[]: SYSCALL MSRs, KERNEL_GS_BASE, TSC_AUX,
	 * SPEC_CTRL, XSS), each present on this CPU and not switched by the
	 * profile (resident_msrs, a bit per entry).  regs_saved: they hold
	 * the guest's values (its reset values from setup, then each
	 * switch-out's) and the next switch-in loads them.
	 */
	bool regs_saved;
	uint64_t dr[4], dr6;
	uint64_t resident_msr[VMX_RESIDENT_MSRS];
	uint32_t resident_msrs;
	/* Halted in root operation, interrupts off: vmm_kick() sends an NMI. */
	bool waiting_in_root;

	/* For the statistics document: the guest's name and arguments. */
	char guest_name[64];
	const char *guest_args;

	/* VMX-preemption timer: rate (IA32_VMX_MISC[4:0]) and the profile's value. */
	unsigned int preemption_rate;
	bool preemption_timer_on;	/* the profile sets the pin-based control */
	/*
	 * The profile leaves the timer off but the CPU has it (with "save
	 * VMX-preemption timer value"): the runtime switches it on while the
	 * guest's 8254 has a deadline, the only timer its emulation has when
	 * the guest owns the local APIC (legacy_irq.c).
	 */
	bool preemption_timer_borrowable;
	/*
	 * IA32_TSC_DEADLINE is emulated with the timer: only when it keeps
	 * counting across exits ("save VMX-preemption timer value"); without
	 * that every entry would restart it and a busy guest's deadline
	 * would slip, so the write goes to the real MSR instead.
	 */
	bool tsc_deadline_emulated;
	/* Derived once (vcpu_setup_msrs()): has_tsc_deadline && !tsc_deadline_emulated. */
	bool tsc_deadline_to_cpu;

	uint16_t vpid;
	uint64_t eptp;
	struct ept ept;

	/* Pages the VMCS points at. */
	uint8_t *msr_bitmap;
	uint8_t *io_bitmap_a, *io_bitmap_b;
	struct vmx_msr_entry *entry_load, *exit_load, *exit_store;
};

/* An entry of a VM-entry/VM-exit MSR-load or -store area (SDM Vol. 3C 25.7.2). */
struct vmx_msr_entry {
	uint32_t index;
	uint32_t reserved;
	uint64_t value;
} __packed;

/* Per physical CPU: VMXON region, the exit stack and its frame. */
struct vmx_cpu {
	void *vmxon_region;
	uint64_t vmxon_pa;
	struct vmx_caps caps;
	struct vmx_controls controls;
	struct vcpu *vcpu;		/* one vCPU per CPU for now */
};

/* exit_entry.S */
int vmx_enter_guest(struct vcpu *vcpu, bool resume);
void vmx_exit_stub(void);
void vmx_exit_stub_hooks(void);

/* exit.c: called by the stub. */
enum vmx_exit_action vmx_handle_exit(struct vcpu *vcpu);
void vmx_report_vmresume_failure(struct vcpu *vcpu, uint64_t rflags);
void vmx_dump_guest_state(struct vcpu *vcpu);
/* The breakdown maps of the statistics document (docs/STATS.md). */
void exit_stats_print_breakdowns(const struct exit_stats *st);

/* Stop the guest with a reason (printf-style); returns VMX_EXIT_STOP. */
enum vmx_exit_action vcpu_stop(struct vcpu *vcpu, const char *fmt, ...) __printf(2, 3);
enum vmx_exit_action vcpu_stop_status(struct vcpu *vcpu, enum vcpu_stop_kind kind,
				      int status);

/* events.c: event injection (SDM Vol. 3C 27.6 "Event Injection"). */
/* CPUID leaves 15H/16H follow the TSC rate measured at boot (cpuid.c). */
void cpuid_set_tsc_hz(uint64_t hz);
void vmx_inject_gp(struct vcpu *vcpu);
void vmx_inject_ud(struct vcpu *vcpu);
void vmx_inject_exception(struct vcpu *vcpu, unsigned int vector, bool has_error,
			  uint32_t error_code);
/*
 * msr.c, the physical local APIC: @vector is requested again (IRR) and
 * edge-triggered (TMR clear); an EOI for the interrupt in service.
 */
bool vmx_apic_irr_pending_edge(uint8_t vector);
void vmx_apic_eoi(void);
/* Queue @vector; inject the highest queued one now if the guest can take it, else open a window. */
void vmx_deliver_irq(struct vcpu *vcpu, uint8_t vector);
/* Inject the highest queued interrupt if possible (after HLT, interrupt window). */
bool vmx_try_inject_pending(struct vcpu *vcpu);
bool vmx_guest_interruptible(void);
/* Re-inject the event an exit interrupted the delivery of (IDT-vectoring information). */
void vmx_reinject_idt_vectoring(void);
/* An NMI for the guest (NMI exit): injected before the next VMRESUME when it can be. */
void vmx_queue_nmi(struct vcpu *vcpu);
/* The exit stub's call when vcpu->nmi_pending is set. */
void vmx_deliver_pending_nmi(struct vcpu *vcpu);

/*
 * Advance GUEST_RIP past the instruction that exited, and end any STI or
 * MOV-SS blocking it sat in: the instruction completed (SDM Vol. 3C
 * 26.4.1; KVM's skip_emulated_instruction).  Inline: every instruction
 * exit's hot path ends here.  vmx_advance_rip() is the same for an
 * instruction the runtime decoded itself (EPT violations report no
 * instruction length).
 */
static inline void vmx_advance_rip(uint64_t len)
{
	uint64_t rip = vmcs_read(GUEST_RIP) + len;
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);

	vmcs_write(GUEST_RIP, rip);
	if (unlikely(intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS)))
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
			   intr & ~(uint32_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

static inline void vmx_skip_instruction(void)
{
	/*
	 * The full-width vmcs_read() of a 32-bit field: VMREAD into a 64-bit
	 * register clears the bits above the field (SDM Vol. 3C 31.3,
	 * VMREAD), so no zero-extension is needed before the add.
	 */
	uint64_t rip = vmcs_read(GUEST_RIP) + vmcs_read(VM_EXIT_INSTRUCTION_LEN);
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);

	vmcs_write(GUEST_RIP, rip);
	if (unlikely(intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS)))
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
			   intr & ~(uint32_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

/*
 * legacy_irq.c: the guest's 8259s' INT as an external interrupt of vCPU 0,
 * after an access to their ports or the 8254's, or the 8254's deadline.
 */
void vmx_legacy_irq_update(struct vcpu *vcpu);

/*
 * apic.c: the guest's interprocessor interrupts.  The host's kick vector
 * (vmm_kick()) makes a vCPU take its posted events; a vector the guest
 * never uses for itself (Linux has no 0xf2 outside a KVM host's posted
 * interrupts).  An external-interrupt exit with it comes here.
 */
#define VMX_KICK_VECTOR		0xf2
enum vmx_exit_action vmx_kicked(struct vcpu *vcpu);
/* Take and act on this vCPU's posted events (runtime/vm.h). */
enum vmx_exit_action vmx_take_events(struct vcpu *vcpu);
/*
 * HLT with RFLAGS.IF = 0 (handle_hlt()): halt in root operation until an
 * NMI, INIT or the machine's stop is posted; stop the vCPU if no other
 * vCPU runs to post one.
 */
enum vmx_exit_action vmx_halt_interrupts_off(struct vcpu *vcpu);
/* A guest write of the ICR: x2APIC MSR 0x830 (@x2apic) or the xAPIC page. */
enum vmx_exit_action vmx_icr_write(struct vcpu *vcpu, uint64_t icr, bool x2apic);
/* A guest write to the xAPIC page at @offset that exited (ept_exits.c): emulate it. */
enum vmx_exit_action vmx_xapic_write(struct vcpu *vcpu, unsigned int offset, uint32_t value,
				     unsigned int size);
/* The guest-physical page of the xAPIC window (fixed: apic_base_write() refuses a move). */
uint64_t vmx_xapic_page(void);
/* Interrupt the CPU @cpu: with the kick vector (in the guest), or an NMI (halted in root). */
void vmx_kick_ipi(unsigned int cpu);
void vmx_kick_nmi(unsigned int cpu);
/* A vCPU deaf to its stop: a physical INIT to its CPU (the watchdog's last resort). */
void vmx_kick_init(unsigned int cpu);
/* The emulated TSC deadline fired with an illegal vector: flag it in the guest's APIC's ESR. */
void vmx_apic_flag_illegal_vector(uint8_t vector);
/* Once, on the boot CPU: where the xAPIC window is (IA32_APIC_BASE as firmware left it). */
void vmx_apic_init(uint64_t apic_base);

/*
 * vlapic_exits.c (apic: virtual): the virtual local APIC's accesses and
 * injection.  vmx_vlapic_sync() injects its highest deliverable vector or
 * opens the interrupt window, and arms the preemption timer for its timer.
 */
void vmx_vlapic_setup(struct vcpu *vcpu);
bool vmx_vlapic_msr(uint32_t msr);
enum vmx_exit_action vmx_vlapic_rdmsr(struct vcpu *vcpu, uint32_t msr);
enum vmx_exit_action vmx_vlapic_wrmsr(struct vcpu *vcpu, uint32_t msr, uint64_t v);
enum vmx_exit_action vmx_vlapic_mmio(struct vcpu *vcpu, uint64_t gpa, uint64_t q);
void vmx_vlapic_post(struct vcpu *vcpu, uint8_t vector);
void vmx_vlapic_sync(struct vcpu *vcpu);
enum vmx_exit_action vmx_vlapic_preemption_timer(struct vcpu *vcpu);
enum vmx_exit_action vmx_vlapic_interrupt_window(struct vcpu *vcpu);
enum vmx_exit_action vmx_vlapic_hlt(struct vcpu *vcpu);
bool vmx_vlapic_has_interrupt(struct vcpu *vcpu);
/*
 * vcpu_switch.c: several vCPUs on one CPU.  The exit handlers' decisions
 * (VMX_EXIT_SWITCH gives the CPU away), and what the run loop (vmx_run.c)
 * does around a switch.
 */
enum vmx_exit_action vmx_sched_block(struct vcpu *vcpu, enum vcpu_block_reason why);
enum vmx_exit_action vmx_sched_pause(struct vcpu *vcpu);
enum vmx_exit_action vmx_sched_tick(struct vcpu *vcpu);
/* Before a turn of @vcpu on this CPU: the next scheduling deadline; after: save its state. */
void vmx_sched_switch_in(struct vcpu *vcpu);
void vmx_sched_switch_out(struct vcpu *vcpu);
/* Wake the vCPUs of @cpu blocked in HLT whose timer is due; true when one was. */
bool vmx_sched_wake_due(unsigned int cpu, struct vcpu *self);
/* The earliest timer deadline of the vCPUs of @cpu blocked in HLT, 0 = none. */
uint64_t vmx_sched_timer_due(unsigned int cpu);
/* The vCPU with this id (vmx_run.c), or NULL. */
struct vcpu *vmx_vcpu(unsigned int id);
extern struct sched vmx_sched;

/* events.c: interrupt-window exiting on or off. */
void vmx_set_intr_window(struct vcpu *vcpu, bool on);

/* msr.c */
void vcpu_setup_msrs(struct vcpu *vcpu);
/*
 * The guest MSRs that live in the CPU while the guest runs (msr.c):
 * saved when a shared vCPU is switched out, loaded when it is switched in.
 */
void vmx_resident_msrs_setup(struct vcpu *vcpu);
void vmx_resident_msrs_save(struct vcpu *vcpu);
void vmx_resident_msrs_load(struct vcpu *vcpu);
/*
 * The guest's IA32_EFER wherever it lives: the VMCS guest field when VM
 * entry loads it, else the manual-switch slot (vcpu->msrs).
 */
uint64_t vcpu_guest_efer(struct vcpu *vcpu);
void vcpu_set_guest_efer(struct vcpu *vcpu, uint64_t efer);
void vmx_program_preemption_timer(struct vcpu *vcpu);

/*
 * handlers.c: general-purpose registers by instruction encoding (0 = RAX
 * .. 15 = R15).  Only for the vCPU whose exit this CPU is handling: RBP
 * and R10-R15 are read from and written to the live registers.
 */
uint64_t vcpu_gpr_read(struct vcpu *vcpu, unsigned int n);
void vcpu_gpr_write(struct vcpu *vcpu, unsigned int n, uint64_t v);
/* The guest is in 64-bit mode (IA-32e mode and CS.L), not compatibility mode. */
bool vcpu_in_64bit_mode(const struct vcpu *vcpu);

/*
 * Copy the guest's RBP and R10-R15, live in the registers during an exit
 * (vcpu.h), into vcpu->regs: for reports that print the registers.  A
 * write to those slots would not reach the guest; vcpu_gpr_write() does.
 */
static inline void vcpu_spill_fixed_regs(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;

	asm volatile("mov %%rbp, %0\n\tmov %%r10, %1\n\tmov %%r11, %2\n\t"
		     "mov %%r12, %3\n\tmov %%r13, %4\n\tmov %%r14, %5\n\tmov %%r15, %6"
		     : "=m"(r->rbp), "=m"(r->r10), "=m"(r->r11), "=m"(r->r12), "=m"(r->r13),
		       "=m"(r->r14), "=m"(r->r15));
}

/*
 * handlers.c: with PAE paging (not IA-32e mode), load the VMCS's PDPTEs
 * from the guest's CR3, as a MOV to CR0, CR3 or CR4 does; false when
 * they are not in guest memory.
 */
bool load_pae_pdptrs(void);
/* task_switch_vmcs.c: the TASK_SWITCH exit, emulated. */
enum vmx_exit_action vmx_task_switch(struct vcpu *vcpu);

/* Guest memory: identity GPA == HPA outside the hypervisor region. */
bool guest_phys_ok(uint64_t gpa, uint64_t len);
/* Translate a guest linear address through the guest's paging (or none). */
enum guest_walk {
	GUEST_WALK_OK,
	GUEST_WALK_PAGE_FAULT,		/* the guest's #PF: error code given */
	GUEST_WALK_UNREACHABLE,		/* a paging structure outside guest RAM */
};
#define GUEST_ACCESS_WRITE	1u
#define GUEST_ACCESS_USER	2u	/* at CPL 3 */
enum guest_walk guest_linear_walk(uint64_t gla, unsigned int access, uint64_t *gpa,
				  uint32_t *pf_error);
/* A supervisor access: true when it translates. */
bool guest_linear_to_phys(uint64_t gla, bool write, uint64_t *gpa);
/* guest_read_linear(), guest_write_linear(): runtime/vmm.h */

/*
 * The handlers' breakdowns (exit_stats.h), when the profile counts: a
 * compile-time constant, so at "off" the counting code is not there.
 */
#define VCPU_STATS_COUNTING	(PROFILE_STATS_LEVEL >= STATS_COUNTS)

#endif /* EXITPLAN_VMX_H */
