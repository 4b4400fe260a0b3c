// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest machine (vm.h): vCPU run states, posted events, the ICR
 * decode, the stop.  No VT-x here, and no call into the VMM: what must
 * be kicked after a post is returned to the caller, which kicks
 * (arch/vmx ap_park.h vmx_kick_vcpus()).  Unit-tested on the host
 * (tests/unit/test_vm.c).
 */
#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "runtime/host/console.h"
#include "runtime/vm/vm.h"

void vm_init(struct vm *vm, unsigned int n, const uint32_t *apic_ids)
{
	if (n > VM_MAX_VCPUS)
		n = VM_MAX_VCPUS;
	*vm = (struct vm){ .nr_vcpus = n, .stopped_by = VM_NOT_STOPPING };
	for (unsigned int i = 0; i < n; i++) {
		vm->vcpu[i] = (struct vm_vcpu){
			.id = i,
			.apic_id = apic_ids[i],
			.state = VCPU_RUN_WAIT_FOR_SIPI,
			/* The reset values (SDM Vol. 3A 11.4.6 ... 11.6.2.2): flat model. */
			.xapic_ldr = 0,
			.xapic_dfr = 0xffffffffu,
			/* Firmware leaves the BSP's LINT0 in ExtINT mode (MP spec 3.6.2.2, virtual wire). */
			.lint0_extint = i == 0,
		};
	}
}

/* --- the ICR ----------------------------------------------------------- */

/* Does vCPU @v answer logical destination @dest (SDM Vol. 3A 11.6.2.2, 11.12.10.2)? */
static bool logical_match(const struct vm_vcpu *v, uint32_t dest, bool x2apic)
{
	uint32_t ldr;

	if (x2apic) {
		/*
		 * Bochs 2.7 bug (PLATFORM.md): in x2APIC mode the logical
		 * destination register reads 0.  It is read-only and derived
		 * from the APIC ID, so it is computed here, never read.
		 */
		ldr = vm_x2apic_ldr(v->apic_id);
		if (dest == 0xffffffffu)
			return true;
		return (dest >> 16) == (ldr >> 16) && (dest & ldr & 0xffff);
	}
	dest &= 0xff;
	if (dest == 0xff)
		return true;	/* broadcast, either model */
	/*
	 * The target's own CPU writes them at any time (arch/vmx/apic.c,
	 * vlapic.c): each read once, so that one match sees one value.
	 */
	ldr = READ_ONCE(v->xapic_ldr);
	if ((READ_ONCE(v->xapic_dfr) >> 28) == 0xf)	/* flat: a bit per APIC */
		return dest & (ldr >> 24);
	/* Cluster: bits 7:4 name the cluster, 3:0 the APICs in it. */
	return (dest >> 4) == (ldr >> 28) && (dest & (ldr >> 24) & 0xf);
}

static uint32_t icr_destination(const struct vm *vm, unsigned int self, uint64_t icr,
				bool x2apic)
{
	uint32_t dest = x2apic ? (uint32_t)(icr >> APIC_ICR_X2APIC_DEST_SHIFT)
			       : (uint32_t)(icr >> APIC_ICR_XAPIC_DEST_SHIFT) & 0xff;
	uint32_t all = (vm->nr_vcpus >= 32 ? ~0u : (1u << vm->nr_vcpus) - 1);
	uint32_t targets = 0;

	switch (icr & APIC_ICR_SHORTHAND_MASK) {
	case APIC_ICR_SHORTHAND_SELF:
		return 1u << self;
	case APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF:
		return all;
	case APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF:
		return all & ~(1u << self);
	}
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		const struct vm_vcpu *v = &vm->vcpu[i];
		bool hit;

		if (icr & APIC_ICR_DEST_LOGICAL)
			hit = logical_match(v, dest, x2apic);
		else
			hit = dest == v->apic_id || dest == (x2apic ? 0xffffffffu : 0xffu);
		if (hit)
			targets |= 1u << i;
	}
	return targets;
}

struct icr_request vm_icr_decode(const struct vm *vm, unsigned int self, uint64_t icr,
				 bool x2apic)
{
	struct icr_request r = { .vector = (uint8_t)(icr & APIC_ICR_VECTOR_MASK) };

	switch (icr & APIC_ICR_DELIVERY_MODE_MASK) {
	case APIC_ICR_DELIVERY_MODE_FIXED:
	case APIC_ICR_DELIVERY_MODE_LOWEST:
		r.kind = ICR_FIXED;
		break;
	case APIC_ICR_DELIVERY_MODE_SMI:
		r.kind = ICR_SMI;
		break;
	case APIC_ICR_DELIVERY_MODE_NMI:
		r.kind = ICR_NMI;
		break;
	case APIC_ICR_DELIVERY_MODE_INIT:
		/* Level-triggered with level 0: the de-assert, which does nothing. */
		r.kind = ((icr & APIC_ICR_TRIGGER_LEVEL) && !(icr & APIC_ICR_LEVEL_ASSERT))
			 ? ICR_INIT_DEASSERT : ICR_INIT;
		break;
	case APIC_ICR_DELIVERY_MODE_STARTUP:
		r.kind = ICR_STARTUP;
		break;
	default:
		r.kind = ICR_RESERVED;
		break;
	}
	r.targets = icr_destination(vm, self, icr, x2apic);
	if ((icr & APIC_ICR_DELIVERY_MODE_MASK) == APIC_ICR_DELIVERY_MODE_LOWEST && r.targets)
		r.targets &= -r.targets;	/* the lowest id */
	return r;
}

struct icr_request vm_ioapic_decode(const struct vm *vm, uint32_t low, uint32_t high)
{
	uint32_t mode = low & APIC_ICR_DELIVERY_MODE_MASK;	/* bits 10:8, as in the ICR */
	uint32_t dest = high >> 24;
	struct icr_request r = {
		.kind = mode == APIC_ICR_DELIVERY_MODE_FIXED || mode == APIC_ICR_DELIVERY_MODE_LOWEST
			? ICR_FIXED : ICR_RESERVED,
		.vector = (uint8_t)(low & APIC_ICR_VECTOR_MASK),
	};

	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		const struct vm_vcpu *v = &vm->vcpu[i];
		bool x2 = READ_ONCE(v->x2apic), hit;

		if (!(low & APIC_ICR_DEST_LOGICAL))
			hit = dest == 0xff || dest == v->apic_id;
		else if (x2)
			hit = dest == 0xff || logical_match(v, dest, true);	/* cluster 0 */
		else
			hit = logical_match(v, dest, false);
		if (hit)
			r.targets |= 1u << i;
	}
	if (mode == APIC_ICR_DELIVERY_MODE_LOWEST && r.targets)
		r.targets &= -r.targets;	/* the lowest id */
	return r;
}

unsigned int vm_extint_vcpu(const struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++)
		if (READ_ONCE(vm->vcpu[i].lint0_extint))
			return i;
	return VM_MAX_VCPUS;
}

uint32_t vm_icr_deliver(struct vm *vm, unsigned int self, const struct icr_request *req)
{
	uint32_t got = 0;

	if (req->kind == ICR_SMI || req->kind == ICR_RESERVED) {
		/* Said a few times, not for every one: a guest could flood the console. */
		unsigned int n_dropped = __atomic_fetch_add(&vm->dropped_ipis, 1, __ATOMIC_RELAXED);

		if (n_dropped < VM_DROPPED_IPIS_REPORTED)
			printk("exitplan: vCPU %u: %s IPI (vector %#x, targets %#x) dropped%s\n", self,
			       req->kind == ICR_SMI ? "SMI" : "reserved delivery mode", req->vector,
			       req->targets, n_dropped + 1 == VM_DROPPED_IPIS_REPORTED ?
			       "; further ones are dropped silently" : "");
		return 0;
	}
	if (req->kind == ICR_INIT_DEASSERT)
		return 0;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vm_vcpu *v = &vm->vcpu[i];
		bool act;

		if (!(req->targets & (1u << i)))
			continue;
		switch (req->kind) {
		case ICR_FIXED:
			act = vm_vcpu_post_fixed(v, req->vector);
			break;
		case ICR_NMI:
			act = vm_vcpu_post_nmi(v);
			break;
		case ICR_INIT:
			act = vm_vcpu_post_init(v);
			break;
		default:
			act = vm_vcpu_post_startup(v, req->vector);
			break;
		}
		if (act)
			got |= 1u << i;
	}
	return got;
}

/* --- posted events ------------------------------------------------------ */

/* In the guest (running or halted there): it takes interrupts, and a kick reaches it. */
static bool in_guest(const struct vm_vcpu *v)
{
	return v->state == VCPU_RUN_RUNNING || v->state == VCPU_RUN_HALTED;
}

/* vm_vcpu.posted follows pending, under the vCPU's lock. */
static void set_posted(struct vm_vcpu *v, bool posted)
{
	__atomic_store_n(&v->posted, posted, __ATOMIC_RELAXED);
}

bool vm_vcpu_post_fixed(struct vm_vcpu *v, uint8_t vector)
{
	bool ok;

	spin_lock(&v->lock);
	/* Only a vCPU in the guest takes interrupts (wait-for-SIPI blocks them). */
	ok = in_guest(v);
	if (ok)
		v->pending.irr[vector / 64] |= 1ull << (vector % 64);
	if (ok)
		set_posted(v, true);
	spin_unlock(&v->lock);
	return ok;
}

bool vm_vcpu_post_nmi(struct vm_vcpu *v)
{
	bool ok;

	spin_lock(&v->lock);
	ok = in_guest(v);
	if (ok)
		v->pending.nmi = true;
	if (ok)
		set_posted(v, true);
	spin_unlock(&v->lock);
	return ok;
}

bool vm_vcpu_post_init(struct vm_vcpu *v)
{
	bool ok;

	spin_lock(&v->lock);
	ok = v->state != VCPU_RUN_STOPPED;
	if (ok) {
		/*
		 * INIT resets the processor and leaves it in wait-for-SIPI
		 * (SDM Vol. 3A 9.4.1): interrupts and NMIs posted before it are
		 * gone, and so is a STARTUP not yet acted on.  A vCPU already
		 * waiting needs no kick: it is not in the guest.
		 */
		bool was_running = in_guest(v);

		v->pending = (struct vm_events){ .init = was_running };
		set_posted(v, was_running);
		v->state = VCPU_RUN_WAIT_FOR_SIPI;
		v->sipi = false;
		ok = was_running;
	}
	spin_unlock(&v->lock);
	return ok;
}

bool vm_vcpu_post_startup(struct vm_vcpu *v, uint8_t vector)
{
	bool ok;

	spin_lock(&v->lock);
	/* Outside wait-for-SIPI, and the second of the pair, are ignored (SDM 9.4.4). */
	ok = v->state == VCPU_RUN_WAIT_FOR_SIPI && !v->sipi;
	if (ok) {
		v->sipi = true;
		v->sipi_vector = vector;
	}
	spin_unlock(&v->lock);
	return ok;
}

bool vm_vcpu_post_legacy(struct vm_vcpu *v)
{
	bool ok;

	spin_lock(&v->lock);
	ok = in_guest(v);
	if (ok)
		v->pending.legacy = true;
	if (ok)
		set_posted(v, true);
	spin_unlock(&v->lock);
	return ok;
}

/* Is anything posted in @e?  Every field of struct vm_events, once. */
static bool events_any(const struct vm_events *e)
{
	bool any = e->nmi || e->init || e->stop || e->legacy;

	for (unsigned int w = 0; w < 4; w++)
		any = any || e->irr[w];
	return any;
}

bool vm_vcpu_take_events(struct vm_vcpu *v, struct vm_events *out)
{
	/* Every exit of a timer looks (the watchdog, arch/vmx/apic.c): mostly nothing. */
	if (!vm_vcpu_events_posted(v))
		return false;
	spin_lock(&v->lock);
	*out = v->pending;
	v->pending = (struct vm_events){ 0 };
	set_posted(v, false);
	spin_unlock(&v->lock);
	return events_any(out);
}

bool vm_vcpu_take_startup(struct vm_vcpu *v, uint8_t *vector)
{
	bool ok;

	spin_lock(&v->lock);
	ok = v->state == VCPU_RUN_WAIT_FOR_SIPI && v->sipi;
	if (ok) {
		*vector = v->sipi_vector;
		v->sipi = false;
		v->state = VCPU_RUN_RUNNING;
		/* Whatever was posted while it waited was not for this run. */
		v->pending = (struct vm_events){ 0 };
		set_posted(v, false);
	}
	spin_unlock(&v->lock);
	return ok;
}

bool vm_any_vcpu_runnable(struct vm *vm)
{
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vm_vcpu *v = &vm->vcpu[i];
		bool runnable;

		/*
		 * State and STARTUP read together, under the vCPU's lock: one
		 * taking its STARTUP on another CPU (vm_vcpu_take_startup())
		 * clears sipi and then leaves wait-for-SIPI, and read apart the
		 * two could show it waiting with no STARTUP -- no vCPU left
		 * running, and the machine stopped under a guest that runs on.
		 */
		spin_lock(&v->lock);
		/* A halted one waits for someone else's NMI or INIT itself. */
		runnable = v->state == VCPU_RUN_RUNNING ||
			   /* One about to start counts: its STARTUP is already posted. */
			   (v->state == VCPU_RUN_WAIT_FOR_SIPI && v->sipi);
		spin_unlock(&v->lock);
		if (runnable)
			return true;
	}
	return false;
}

/* --- stopping ------------------------------------------------------------- */

uint32_t vm_stop(struct vm *vm, unsigned int id)
{
	int expected = VM_NOT_STOPPING;
	uint32_t kick = 0;

	if (!__atomic_compare_exchange_n(&vm->stopped_by, &expected, (int)id, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0;
	for (unsigned int i = 0; i < vm->nr_vcpus; i++) {
		struct vm_vcpu *v = &vm->vcpu[i];

		if (i == id)
			continue;
		spin_lock(&v->lock);
		v->pending.stop = true;
		set_posted(v, true);
		/* In the guest or waiting in the hypervisor, it must look now. */
		if (v->state != VCPU_RUN_STOPPED)
			kick |= 1u << i;
		spin_unlock(&v->lock);
	}
	return kick;
}

bool vm_vcpu_set_halted(struct vm_vcpu *v, bool halted)
{
	bool ok;

	spin_lock(&v->lock);
	ok = v->state == (halted ? VCPU_RUN_RUNNING : VCPU_RUN_HALTED);
	if (ok)
		v->state = halted ? VCPU_RUN_HALTED : VCPU_RUN_RUNNING;
	spin_unlock(&v->lock);
	return ok;
}

bool vm_vcpu_wakeup_pending(struct vm_vcpu *v)
{
	bool wake;

	spin_lock(&v->lock);
	wake = v->pending.nmi || v->pending.init || v->pending.stop;
	spin_unlock(&v->lock);
	return wake;
}

bool vm_vcpu_events_pending(struct vm_vcpu *v)
{
	bool any;

	spin_lock(&v->lock);
	any = events_any(&v->pending) || v->sipi;
	spin_unlock(&v->lock);
	return any;
}

void vm_vcpu_set_stopped(struct vm_vcpu *v, bool halted)
{
	spin_lock(&v->lock);
	v->state_at_stop = halted ? VCPU_RUN_HALTED : v->state;
	v->state = VCPU_RUN_STOPPED;
	v->pending = (struct vm_events){ 0 };
	set_posted(v, false);
	spin_unlock(&v->lock);
}

enum vcpu_run_state vm_vcpu_state(struct vm_vcpu *v)
{
	return __atomic_load_n(&v->state, __ATOMIC_ACQUIRE);
}

const char *vm_vcpu_state_name(enum vcpu_run_state s)
{
	switch (s) {
	case VCPU_RUN_RUNNING:
		return "running";
	case VCPU_RUN_HALTED:
		return "halted";
	case VCPU_RUN_WAIT_FOR_SIPI:
		return "wait-for-SIPI";
	case VCPU_RUN_STOPPED:
		return "stopped";
	}
	return "unknown";
}
