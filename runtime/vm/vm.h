/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest machine, architecture-neutral: its vCPUs and their run
 * states, the events other CPUs post to a vCPU (fixed interrupts, NMI,
 * INIT, STARTUP), the decode of the guest's interrupt command register,
 * the shared platform devices, and how the machine stops.
 *
 * One vCPU per physical CPU for now (vCPU i runs on CPU i); nothing here
 * assumes it except vm_kick(), which asks the VMM to interrupt the CPU
 * running the target (runtime/vm/vmm.h).  A scheduler for more vCPUs than
 * CPUs would own the "where does vCPU i run" question and nothing else.
 *
 * Locking: each vCPU's events and run state are under its own lock,
 * taken by the poster and by the vCPU itself, never nested with another
 * vCPU's; the platform devices have the VM's platform_lock; the stop
 * state is one atomic word (the first stop wins).
 */
#ifndef EXITPLAN_VM_H
#define EXITPLAN_VM_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/layout.h"
#include "runtime/devices/platform.h"
#include "runtime/host/spinlock.h"

/*
 * A count of its own, not HV_MAX_CPUS: with the scheduler (sched.h) one
 * CPU carries several vCPUs.  Both are 8 today.  At most 32: an ICR's
 * targets are a 32-bit mask (struct icr_request).
 */
#define VM_MAX_VCPUS	8

/* A vCPU's run state (what the summary prints, and what an event may do). */
enum vcpu_run_state {
	VCPU_RUN_RUNNING = 0,	/* in the guest, or in one of its exits */
	VCPU_RUN_HALTED,	/* in HLT with interrupts off: only NMI or INIT wake it */
	VCPU_RUN_WAIT_FOR_SIPI,	/* after INIT (or never started): only STARTUP runs it */
	VCPU_RUN_STOPPED,	/* gone for good; its statistics are final */
};

/* What vm_vcpu_take_events() hands the vCPU: to inject, or to act on. */
struct vm_events {
	uint64_t irr[4];	/* fixed interrupts, one bit per vector */
	bool nmi;
	bool init;		/* leave the guest: it is in wait-for-SIPI now */
	bool stop;		/* the VM is stopping: leave the guest for good */
	/*
	 * The guest's 8259s or 8254 changed for this vCPU: bring them up to
	 * date on it (its LINT0 takes the 8259s' INT, or it keeps the 8254's
	 * deadline: arch/vmx/legacy_irq.c).
	 */
	bool legacy;
};

/* The VM's view of one vCPU: what other CPUs may read or post to. */
struct vm_vcpu {
	spinlock_t lock;
	unsigned int id;
	uint32_t apic_id;	/* the APIC ID the guest addresses it by */
	enum vcpu_run_state state;
	/* Posted, not yet taken by the vCPU itself. */
	struct vm_events pending;
	/*
	 * pending holds something: written under the lock with it, read
	 * without for a look (vm_vcpu_events_posted()).
	 */
	bool posted;
	bool sipi;		/* a STARTUP arrived in wait-for-SIPI ... */
	uint8_t sipi_vector;	/* ... with this vector: start at vector << 12 */
	/*
	 * The xAPIC logical destination and destination format registers as
	 * the guest last wrote them (every xAPIC write exits, arch/vmx): a
	 * sender cannot read another CPU's APIC.  In x2APIC mode the logical
	 * ID is derived from the APIC ID (vm_x2apic_ldr()).
	 */
	uint32_t xapic_ldr, xapic_dfr;
	bool x2apic;		/* the guest put this vCPU's APIC in x2APIC mode */
	/*
	 * Its LINT0 takes the 8259s' INT (ExtINT, the virtual wire): unmasked
	 * in ExtINT mode, or the BSP's APIC globally disabled (LINT0 is then
	 * the INTR pin, SDM Vol. 3A 11.4.3).  vm_init() gives it to vCPU 0,
	 * as firmware leaves the BSP; a virtual APIC publishes its own
	 * (vlapic_lint0_extint()).
	 */
	bool lint0_extint;
	enum vcpu_run_state state_at_stop;	/* for the report */
	void *arch;		/* the VMM's struct vcpu */
};

/* Why the VM stopped: the first vCPU to stop it, or none yet. */
#define VM_NOT_STOPPING	(-1)

struct vm {
	unsigned int nr_vcpus;
	struct vm_vcpu vcpu[VM_MAX_VCPUS];
	/* The devices every vCPU shares (runtime/devices/platform.c). */
	spinlock_t platform_lock;
	struct platform_state platform;
	/* The id of the vCPU whose stop ended the machine, or VM_NOT_STOPPING. */
	int stopped_by;
	/* SMI and reserved-mode IPIs dropped; the first VM_DROPPED_IPIS_REPORTED are printed. */
	unsigned int dropped_ipis;
};

#define VM_DROPPED_IPIS_REPORTED	4

/* Delivery modes and shorthands of the ICR (SDM Vol. 3A 11.6.1). */
enum icr_kind {
	ICR_FIXED,		/* also lowest priority: to one of the targets */
	ICR_NMI,
	ICR_INIT,
	ICR_INIT_DEASSERT,	/* INIT level de-assert: a no-op since the Pentium 4 */
	ICR_STARTUP,
	ICR_SMI,		/* never delivered: SMM is outside VMX and EPT */
	ICR_RESERVED,		/* delivery modes 3 and 7 */
};

struct icr_request {
	enum icr_kind kind;
	uint8_t vector;
	uint32_t targets;	/* bit i: vCPU i */
};

/* An empty VM of @n vCPUs (1 .. VM_MAX_VCPUS) with these APIC IDs, all in wait-for-SIPI. */
void vm_init(struct vm *vm, unsigned int n, const uint32_t *apic_ids);

/* The x2APIC logical destination register of @apic_id (SDM Vol. 3A 11.12.10.2). */
static inline uint32_t vm_x2apic_ldr(uint32_t apic_id)
{
	return ((apic_id >> 4) << 16) | (1u << (apic_id & 0xf));
}

/*
 * Decode an ICR value the guest on vCPU @self wrote: in x2APIC mode
 * (@x2apic) the destination is bits 63:32, in xAPIC mode 63:56.
 * Lowest-priority delivery picks one target (the lowest id: any is
 * allowed, SDM 11.6.2.4).  A destination no vCPU matches gives no targets.
 */
struct icr_request vm_icr_decode(const struct vm *vm, unsigned int self, uint64_t icr,
				 bool x2apic);

/*
 * An I/O APIC redirection entry's interrupt message (@low, @high as the
 * guest wrote them: 82093AA 3.2.4): fixed or lowest-priority delivery of
 * its vector (any other mode is ICR_RESERVED) to the 8-bit destination
 * of bits 63:56, matched against each target in its own APIC mode -- an
 * x2APIC-mode target by its APIC ID (physical; 0xff is every vCPU) or
 * its x2APIC logical ID, the destination being cluster 0's bits (what an
 * xAPIC-format message can name without interrupt remapping, as KVM
 * matches it); an xAPIC-mode one by APIC ID or its LDR and DFR.
 * Lowest priority picks the lowest id, as vm_icr_decode().
 */
struct icr_request vm_ioapic_decode(const struct vm *vm, uint32_t low, uint32_t high);

/*
 * The vCPU whose LINT0 takes the 8259s' INT (ExtINT): the lowest id
 * with lint0_extint, or VM_MAX_VCPUS when none has (the INT goes nowhere).
 */
unsigned int vm_extint_vcpu(const struct vm *vm);

/*
 * Carry out a decoded request from vCPU @self: post the events to every
 * target and report an SMI as dropped.  Returns the vCPUs that got
 * something (bit i: vCPU i): the caller kicks those other than @self
 * (vmx_kick_vcpus()) and takes @self's right after.
 */
uint32_t vm_icr_deliver(struct vm *vm, unsigned int self, const struct icr_request *req);

/*
 * Post one event to a vCPU; true when it changed something the vCPU must
 * act on (the caller kicks it).  A STARTUP is taken only in
 * wait-for-SIPI and only the first one (a second is ignored, as on
 * hardware); INIT puts a running vCPU in wait-for-SIPI at once (it
 * leaves the guest when it takes the event) and drops a STARTUP not yet
 * acted on.  Nothing is posted to a stopped vCPU.
 */
bool vm_vcpu_post_fixed(struct vm_vcpu *v, uint8_t vector);
bool vm_vcpu_post_nmi(struct vm_vcpu *v);
bool vm_vcpu_post_init(struct vm_vcpu *v);
bool vm_vcpu_post_startup(struct vm_vcpu *v, uint8_t vector);
/* vm_events.legacy: false for a vCPU not in the guest (it has no interrupts to take). */
bool vm_vcpu_post_legacy(struct vm_vcpu *v);

/*
 * Was anything posted?  A look without the lock, for the vCPU itself: a
 * post that lands just after it is not lost, its poster kicks the vCPU
 * after posting.
 */
static inline bool vm_vcpu_events_posted(const struct vm_vcpu *v)
{
	return __atomic_load_n(&v->posted, __ATOMIC_RELAXED);
}

/*
 * Called by the vCPU itself: take (and clear) what was posted.  False
 * when nothing was, @out then untouched: the lock is not taken for a look.
 */
bool vm_vcpu_take_events(struct vm_vcpu *v, struct vm_events *out);

/*
 * Called by a vCPU in wait-for-SIPI: true, with the vector, once a
 * STARTUP came; the vCPU is RUNNING from then on.
 */
bool vm_vcpu_take_startup(struct vm_vcpu *v, uint8_t *vector);

/* Any vCPU running its code (one that can still send a STARTUP, NMI or INIT)? */
bool vm_any_vcpu_runnable(struct vm *vm);

/*
 * Stop the machine because vCPU @id stopped.  The first call wins (its id
 * is kept); every other vCPU is posted a stop.  Returns those the caller
 * must kick (bit i: vCPU i, not stopped yet), 0 for a call that did not win.
 */
uint32_t vm_stop(struct vm *vm, unsigned int id);
static inline bool vm_stopping(const struct vm *vm)
{
	return __atomic_load_n(&vm->stopped_by, __ATOMIC_ACQUIRE) != VM_NOT_STOPPING;
}

/*
 * HLT with interrupts off: RUNNING -> HALTED (@halted), and back; false
 * when the state was not the one expected (an INIT moved it meanwhile).
 */
bool vm_vcpu_set_halted(struct vm_vcpu *v, bool halted);
/* What ends such a HLT is posted: an NMI, INIT or the machine's stop. */
bool vm_vcpu_wakeup_pending(struct vm_vcpu *v);
/*
 * Anything posted at all (an interrupt too, or a STARTUP): what a vCPU
 * that blocked in HLT with interrupts on, or for a STARTUP, checks after
 * blocking, so that no wake-up is lost (runtime/vm/sched.h).
 */
bool vm_vcpu_events_pending(struct vm_vcpu *v);

/* The vCPU is gone for good: @halted says whether it was in HLT (for the report). */
void vm_vcpu_set_stopped(struct vm_vcpu *v, bool halted);
enum vcpu_run_state vm_vcpu_state(struct vm_vcpu *v);
const char *vm_vcpu_state_name(enum vcpu_run_state s);

#endif /* EXITPLAN_VM_H */
