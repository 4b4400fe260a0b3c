/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The rest of a vCPU's VT-x state (struct vcpu_arch_state, reached
 * through vcpu->arch: what the generated code does not touch), and the
 * per-CPU VMX state (struct vmx_cpu).
 */
#ifndef EXITPLAN_VCPU_ARCH_H
#define EXITPLAN_VCPU_ARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/vcpu/arch_checks.h"
#include "runtime/host/compiler.h"
#include "arch/vmx/ept.h"
#include "runtime/devices/platform.h"
#include "arch/vmx/vcpu.h"
#include "runtime/devices/vlapic.h"
#include "arch/vmx/vmx_controls.h"
#include "msr_table.h"

/* Why a guest stopped; printed in the exit summary. */
enum vcpu_stop_kind {
	VCPU_RUNNING = 0,
	VCPU_STOP_STATUS,	/* isa-debug-exit: status = (code << 1) | 1 */
	VCPU_STOP_SHUTDOWN,	/* SHUTDOWN hypercall: status from the guest */
	VCPU_STOP_FAULT,	/* anything else: stop_reason says what */
	VCPU_STOP_VM,		/* another vCPU stopped the machine */
};

/* The IA32_MCi_* MSRs' room (0x400-0x47f, four per bank: Vol. 3B 16.3.2). */
#define VMX_MC_BANKS_MAX	32

/*
 * The VT-x state of one vCPU that the generated code does not touch.
 * Reached through vcpu->arch.
 */
struct vcpu_arch_state {
	/* Why the guest stopped, and its exit status if it gave one. */
	enum vcpu_stop_kind stop;
	int exit_status;
	/* Room for the longest report: an instruction not emulated lists its 15 bytes. */
	char stop_reason[256];

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
	uint64_t kicks_in_root;		/* interrupts: direct: kick NMIs taken in root (nmi_root.c) */
	/*
	 * Interrupt storms (events.c): where and when (host TSC) the last
	 * interrupt was injected, whether the guest has since been given time
	 * of its own (a hold or an STI-shadow step), when the periodic APIC
	 * timer's vector last went in, what a round of its delivery costs
	 * (ticks; 0: not measured yet), until when the queued interrupts are
	 * held back (host TSC, 0: not held), and how many such steps were
	 * needed.
	 */
	uint64_t last_inject_rip, last_inject_tsc;
	bool last_inject_valid, inject_stepped;
	uint64_t storm_last_tsc, storm_round;
	/* The 8259 vector of the 8254's last INTA and its period, ticks (0: not periodic). */
	uint64_t pit_storm_period;
	uint8_t pit_storm_vector;
	uint64_t storm_hold_until;
	uint64_t storm_steps;

	/* Guest-visible MSR state the hypervisor emulates. */
	uint64_t apic_base;		/* IA32_APIC_BASE as the guest sees it */
	uint64_t tsc_deadline;		/* IA32_TSC_DEADLINE, 0 = disarmed */
	uint64_t pit_deadline;		/* TSC of the guest 8254's next IR0, 0 = none */
	bool legacy_int_waiting;	/* the 8259s' INT is up, the guest has IF=0 */
	/*
	 * The controls an open interrupt window sets (events.h): interrupt-
	 * window exiting, and HLT exiting where the profile has none, since
	 * on Bochs a window exit never ends a HLT (docs/PLATFORM.md).
	 */
	uint32_t intr_window_ctls;
	uint64_t xcr0;			/* the guest's XCR0 */
	bool has_x2apic, has_nx, has_tsc_deadline;	/* CPUID facts the MSR checks need */
	bool has_tsc_adjust;		/* CPUID.(EAX=7,ECX=0):EBX[1] */
	struct guest_tsc tsc;		/* TSC_OFFSET and the guest's IA32_TSC_ADJUST */
	uint64_t pat;			/* IA32_PAT when neither the VMCS nor a slot holds it */
	uint64_t misc_enable;		/* IA32_MISC_ENABLE as the guest sees it */
	uint64_t misc_enable_writable;	/* its bits the guest may change (msr.c) */
	/* Machine-check architecture as the guest sees it (msr.c). */
	uint64_t mcg_cap, mcg_status;
	uint64_t mc_ctl[VMX_MC_BANKS_MAX];	/* IA32_MCi_CTL of each bank */
	/*
	 * The MTRRs, emulated per vCPU (never written to hardware: the
	 * host's memory types are the host's): MTRRCAP as the CPU reports it,
	 * capped to the architectural MSRs; initial values the firmware's.
	 */
	uint64_t mtrr_cap, mtrr_def_type;
	uint64_t mtrr_var[2 * MTRR_VAR_MAX];
	uint64_t mtrr_fixed[11];	/* FIX64K_00000, FIX16K_80000/A0000, FIX4K_C0000..F8000 */
	unsigned int maxphyaddr;

	/* The devices the guest sees (runtime/devices/platform.c), shared by the VM's vCPUs. */
	struct platform_state *platform;

	/*
	 * The guest's xAPIC ICR high half (the destination): every xAPIC
	 * write exits (apic.c), and the low half's write sends with it.
	 */
	uint32_t xapic_icr_high;
	/* apic: virtual: the vCPU's local APIC (runtime/devices/vlapic.c, vlapic_exits.c). */
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
	 * msr_resident[]: SYSCALL MSRs, KERNEL_GS_BASE, TSC_AUX,
	 * SPEC_CTRL, XSS), each present on this CPU and not switched by the
	 * profile (resident_msrs, a bit per entry).  regs_saved: they hold
	 * the guest's values (its reset values from setup, then each
	 * switch-out's) and the next switch-in loads them.
	 */
	bool regs_saved;
	uint64_t dr[4], dr6;
	uint64_t resident_msr[MSR_RESIDENT_COUNT];
	uint32_t resident_msrs;
	/*
	 * Halted in root operation, interrupts off (enum vmx_root_wait,
	 * nmi_root.h; 0 when not): vmm_kick() sends an NMI.  wait_woken:
	 * an NMI came since the waiter last looked (vmx_wait_in_root()).
	 */
	uint8_t waiting_in_root;
	uint8_t wait_woken;

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

	uint16_t vpid;
	uint64_t eptp;
	struct ept ept;
	/* guest_mem.c: the last translation of a guest-linear page, and how it was made. */
	struct guest_walk_memo {
		uint64_t cr0, cr3, cr4, ia32e;	/* the paging mode and root it was made under */
		uint64_t page;			/* its linear page (gla >> 12) + 1; 0: none */
		uint64_t frame;			/* the guest-physical 4-KiB frame it gave */
		uint64_t pte_pa[4], pte[4];	/* the entries read, where and what */
		unsigned int n, pte_size;
		bool writable, user;
	} walk_memo;
	/* guest_mem.c: the last page guest_phys_ok() found guest RAM (+1; 0: none). */
	uint64_t ram_page_ok;

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

#endif /* EXITPLAN_VCPU_ARCH_H */
