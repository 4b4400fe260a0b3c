// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/vm/vm.c: the guest machine's vCPU run states and posted events
 * (INIT, STARTUP, fixed interrupts, NMI, the stop), and the decode of the
 * interrupt command register (SDM Vol. 3A 11.6.1, 11.6.2, 11.12.9,
 * 11.12.10); which vCPUs the caller must kick is what vm_icr_deliver()
 * and vm_stop() return.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "fake_runtime.h"
#include "runtime/vm/vm.h"

static struct vm vm;

/* Four vCPUs with APIC IDs 0, 1, 2, 3; vCPU 0 runs, the others wait for SIPI. */
static int setup(void **state)
{
	static const uint32_t ids[] = { 0, 1, 2, 3 };

	(void)state;
	vm_init(&vm, 4, ids);
	vm.vcpu[0].state = VCPU_RUN_RUNNING;
	fake_printk_reset();
	return 0;
}

static uint64_t xapic_icr(uint8_t dest, uint64_t low)
{
	return ((uint64_t)dest << APIC_ICR_XAPIC_DEST_SHIFT) | low;
}

static uint64_t x2apic_icr(uint32_t dest, uint64_t low)
{
	return ((uint64_t)dest << APIC_ICR_X2APIC_DEST_SHIFT) | low;
}

/* --- the decode --------------------------------------------------------- */

static void test_decode_kinds(void **state)
{
	(void)state;
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, 0x40), false).kind, ICR_FIXED);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, 0x40), false).vector, 0x40);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_SMI), false).kind,
			 ICR_SMI);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_NMI), false).kind,
			 ICR_NMI);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_INIT |
						       APIC_ICR_LEVEL_ASSERT |
						       APIC_ICR_TRIGGER_LEVEL), false).kind, ICR_INIT);
	/* The level de-assert form of INIT does nothing. */
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_INIT |
						       APIC_ICR_TRIGGER_LEVEL), false).kind,
			 ICR_INIT_DEASSERT);
	/* Edge-triggered INIT (what Linux sends) is an INIT. */
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_INIT), false).kind,
			 ICR_INIT);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_STARTUP | 0x9a),
				       false).kind, ICR_STARTUP);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_STARTUP | 0x9a),
				       false).vector, 0x9a);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, 3ull << 8), false).kind, ICR_RESERVED);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, 7ull << 8), false).kind, ICR_RESERVED);
}

static void test_decode_physical(void **state)
{
	(void)state;
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(2, 0x40), false).targets, 1u << 2);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0xff, 0x40), false).targets, 0xf);
	/* No vCPU has APIC ID 9: nobody. */
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(9, 0x40), false).targets, 0);
	/* x2APIC: 32-bit destination; 0xff is an ordinary ID there, 0xffffffff broadcast. */
	assert_int_equal(vm_icr_decode(&vm, 1, x2apic_icr(3, 0x40), true).targets, 1u << 3);
	assert_int_equal(vm_icr_decode(&vm, 1, x2apic_icr(0xff, 0x40), true).targets, 0);
	assert_int_equal(vm_icr_decode(&vm, 1, x2apic_icr(0xffffffffu, 0x40), true).targets, 0xf);
	/* The xAPIC decode ignores ICR bits 55:32. */
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(1, 0x40) | (0x123456ull << 32), false).targets,
			 1u << 1);
}

static void test_decode_shorthands(void **state)
{
	(void)state;
	assert_int_equal(vm_icr_decode(&vm, 2, xapic_icr(0, 0x40 | APIC_ICR_SHORTHAND_SELF), false).targets,
			 1u << 2);
	assert_int_equal(vm_icr_decode(&vm, 2, xapic_icr(0, 0x40 | APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF),
				       false).targets, 0xf);
	assert_int_equal(vm_icr_decode(&vm, 2, xapic_icr(0, 0x40 | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF),
				       false).targets, 0xf & ~(1u << 2));
	/* The shorthand wins over the destination field. */
	assert_int_equal(vm_icr_decode(&vm, 0, x2apic_icr(3, 0x40 | APIC_ICR_SHORTHAND_SELF), true).targets,
			 1u << 0);
}

static void test_decode_logical_xapic(void **state)
{
	(void)state;
	/* Flat model (DFR all ones): LDR bit i for vCPU i. */
	for (unsigned int i = 0; i < 4; i++)
		vm.vcpu[i].xapic_ldr = (1u << i) << 24;
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0x6, 0x40 | APIC_ICR_DEST_LOGICAL), false).targets,
			 0x6);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0xff, 0x40 | APIC_ICR_DEST_LOGICAL), false).targets,
			 0xf);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0x10, 0x40 | APIC_ICR_DEST_LOGICAL), false).targets,
			 0);
	/* Cluster model: cluster 1 holds vCPUs 2 and 3 (bits 0, 1). */
	for (unsigned int i = 0; i < 4; i++) {
		vm.vcpu[i].xapic_dfr = 0x0fffffffu;
		vm.vcpu[i].xapic_ldr = (((i / 2) << 4) | (1u << (i % 2))) << 24;
	}
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0x13, 0x40 | APIC_ICR_DEST_LOGICAL), false).targets,
			 0xc);
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0x02, 0x40 | APIC_ICR_DEST_LOGICAL), false).targets,
			 0x2);
	/* Lowest priority: one of them. */
	assert_int_equal(vm_icr_decode(&vm, 0, xapic_icr(0x13, 0x40 | APIC_ICR_DEST_LOGICAL |
						       APIC_ICR_DELIVERY_MODE_LOWEST), false).targets,
			 0x4);
}

/* The Bochs 2.7 bug (LDR reads 0 in x2APIC mode) does not matter: the LDR is computed. */
static void test_decode_logical_x2apic(void **state)
{
	(void)state;
	assert_int_equal(vm_x2apic_ldr(0), 0x1);
	assert_int_equal(vm_x2apic_ldr(3), 0x8);
	assert_int_equal(vm_x2apic_ldr(0x13), 0x10008);
	/* Cluster 0, bits 1 and 3: vCPUs 1 and 3. */
	assert_int_equal(vm_icr_decode(&vm, 0, x2apic_icr(0xa, 0x40 | APIC_ICR_DEST_LOGICAL), true).targets,
			 0xa);
	/* Cluster 1: nobody. */
	assert_int_equal(vm_icr_decode(&vm, 0, x2apic_icr(0x1000f, 0x40 | APIC_ICR_DEST_LOGICAL), true).targets,
			 0);
}

/* --- the I/O APIC's messages and the 8259s' ExtINT ------------------------------ */

/* A redirection entry's dwords: @low (vector, delivery and destination mode), destination @dest. */
static struct icr_request ioapic_msg(uint32_t low, uint8_t dest)
{
	return vm_ioapic_decode(&vm, low, (uint32_t)dest << 24);
}

static void test_ioapic_decode_physical_logical(void **state)
{
	struct icr_request r;

	(void)state;
	/* Physical: the APIC ID, 0xff every vCPU, an ID nobody has none. */
	r = ioapic_msg(0x30, 3);
	assert_int_equal(r.kind, ICR_FIXED);
	assert_int_equal(r.vector, 0x30);
	assert_int_equal(r.targets, 0x8);
	assert_int_equal(ioapic_msg(0x30, 0xff).targets, 0xf);
	assert_int_equal(ioapic_msg(0x30, 9).targets, 0);
	/* Logical, flat xAPIC: LDR bit i for vCPU i. */
	for (unsigned int i = 0; i < 4; i++)
		vm.vcpu[i].xapic_ldr = (1u << i) << 24;
	assert_int_equal(ioapic_msg(0x830, 0x6).targets, 0x6);
	/* Lowest priority: one of them; SMI, NMI, INIT, ExtINT are no interrupt of the guest's. */
	assert_int_equal(ioapic_msg(0x930, 0x6).targets, 0x2);
	assert_int_equal(ioapic_msg(0x230, 0x6).kind, ICR_RESERVED);
	assert_int_equal(ioapic_msg(0x730, 0x6).kind, ICR_RESERVED);
}

/*
 * A target in x2APIC mode is matched in its own mode: physical by APIC
 * ID, logical by its x2APIC logical ID in cluster 0 -- not by the xAPIC
 * LDR it had (stale once the APIC switched), while the others still are.
 */
static void test_ioapic_decode_x2apic_targets(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < 4; i++)
		vm.vcpu[i].xapic_ldr = 0x80u << 24;	/* stale, or never written */
	vm.vcpu[2].x2apic = vm.vcpu[3].x2apic = true;
	assert_int_equal(ioapic_msg(0x30, 2).targets, 0x4);
	/* x2APIC logical IDs 1 << id: bits 2 and 3 are vCPUs 2 and 3; 0x80 the xAPIC ones. */
	assert_int_equal(ioapic_msg(0x830, 0x0c).targets, 0xc);
	assert_int_equal(ioapic_msg(0x830, 0x80).targets, 0x3);
	assert_int_equal(ioapic_msg(0x830, 0x04).targets, 0x4);
	assert_int_equal(ioapic_msg(0x830, 0xff).targets, 0xf);
}

/* The 8259s' INT goes to the lowest vCPU whose LINT0 takes ExtINT; at reset vCPU 0's. */
static void test_extint_vcpu(void **state)
{
	(void)state;
	assert_int_equal(vm_extint_vcpu(&vm), 0);
	vm.vcpu[0].lint0_extint = false;
	assert_int_equal(vm_extint_vcpu(&vm), VM_MAX_VCPUS);
	vm.vcpu[3].lint0_extint = true;
	assert_int_equal(vm_extint_vcpu(&vm), 3);
	vm.vcpu[2].lint0_extint = true;
	assert_int_equal(vm_extint_vcpu(&vm), 2);
}

/* A legacy event is posted like an interrupt: to a vCPU in the guest, and it wakes it. */
static void test_post_legacy(void **state)
{
	struct vm_events ev;

	(void)state;
	assert_false(vm_vcpu_post_legacy(&vm.vcpu[1]));		/* waiting for SIPI */
	assert_true(vm_vcpu_post_legacy(&vm.vcpu[0]));
	assert_true(vm_vcpu_events_pending(&vm.vcpu[0]));
	assert_false(vm_vcpu_wakeup_pending(&vm.vcpu[0]));	/* not an NMI, INIT or stop */
	assert_true(vm_vcpu_take_events(&vm.vcpu[0], &ev));
	assert_true(ev.legacy);
	assert_false(vm_vcpu_events_pending(&vm.vcpu[0]));
}

/* --- INIT, STARTUP and the run states --------------------------------------- */

static void test_startup_only_after_wait_for_sipi(void **state)
{
	uint8_t vector = 0;
	struct icr_request sipi = vm_icr_decode(&vm, 0, xapic_icr(1, APIC_ICR_DELIVERY_MODE_STARTUP | 0x9a),
						false);

	(void)state;
	/* vCPU 1 has waited since the start: the first STARTUP starts it. */
	assert_int_equal(vm_icr_deliver(&vm, 0, &sipi), 1u << 1);	/* to kick */
	/* The second of the pair is ignored, as on hardware. */
	assert_int_equal(vm_icr_deliver(&vm, 0, &sipi), 0);
	assert_true(vm_vcpu_take_startup(&vm.vcpu[1], &vector));
	assert_int_equal(vector, 0x9a);
	assert_int_equal(vm_vcpu_state(&vm.vcpu[1]), VCPU_RUN_RUNNING);
	/* Running: a STARTUP now is ignored too. */
	assert_false(vm_vcpu_post_startup(&vm.vcpu[1], 0x10));
	assert_false(vm_vcpu_take_startup(&vm.vcpu[1], &vector));
}

static void test_init_while_running(void **state)
{
	struct vm_events ev;
	uint8_t vector;

	(void)state;
	assert_true(vm_vcpu_post_fixed(&vm.vcpu[0], 0x40));
	assert_true(vm_vcpu_post_nmi(&vm.vcpu[0]));
	/* INIT: wait-for-SIPI at once; what was posted before it is gone. */
	assert_true(vm_vcpu_post_init(&vm.vcpu[0]));
	assert_int_equal(vm_vcpu_state(&vm.vcpu[0]), VCPU_RUN_WAIT_FOR_SIPI);
	assert_true(vm_vcpu_take_events(&vm.vcpu[0], &ev));
	assert_true(ev.init);
	assert_false(ev.nmi);
	assert_int_equal(ev.irr[1], 0);
	/* Interrupts are not taken in wait-for-SIPI. */
	assert_false(vm_vcpu_post_fixed(&vm.vcpu[0], 0x40));
	assert_false(vm_vcpu_post_nmi(&vm.vcpu[0]));
	assert_false(vm_vcpu_take_startup(&vm.vcpu[0], &vector));
	/* A second INIT while waiting changes nothing and needs no kick. */
	assert_false(vm_vcpu_post_init(&vm.vcpu[0]));
	assert_true(vm_vcpu_post_startup(&vm.vcpu[0], 0x08));
	/* INIT between STARTUP and its taking drops the STARTUP. */
	assert_false(vm_vcpu_post_init(&vm.vcpu[0]));
	assert_false(vm_vcpu_take_startup(&vm.vcpu[0], &vector));
	assert_true(vm_vcpu_post_startup(&vm.vcpu[0], 0x08));
	assert_true(vm_vcpu_take_startup(&vm.vcpu[0], &vector));
	assert_int_equal(vector, 0x08);
}

static void test_broadcast_init_sipi_sipi(void **state)
{
	struct icr_request init = vm_icr_decode(&vm, 0, xapic_icr(0, APIC_ICR_DELIVERY_MODE_INIT |
		APIC_ICR_LEVEL_ASSERT | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF), false);
	struct icr_request sipi = vm_icr_decode(&vm, 0, xapic_icr(0, APIC_ICR_DELIVERY_MODE_STARTUP |
		0x08 | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF), false);
	uint8_t vector;

	(void)state;
	assert_int_equal(init.targets, 0xe);
	/* They wait already: INIT needs no kick. */
	assert_int_equal(vm_icr_deliver(&vm, 0, &init), 0);
	assert_int_equal(vm_icr_deliver(&vm, 0, &sipi), 0xe);
	assert_int_equal(vm_icr_deliver(&vm, 0, &sipi), 0);
	for (unsigned int i = 1; i < 4; i++) {
		assert_true(vm_vcpu_take_startup(&vm.vcpu[i], &vector));
		assert_int_equal(vector, 0x08);
	}
	/* The sender itself is untouched. */
	assert_int_equal(vm_vcpu_state(&vm.vcpu[0]), VCPU_RUN_RUNNING);
}

static void test_fixed_and_nmi_to_running(void **state)
{
	struct vm_events ev;
	struct icr_request fixed = vm_icr_decode(&vm, 0, xapic_icr(0, 0x41 | APIC_ICR_SHORTHAND_SELF),
						 false);

	(void)state;
	/* Ourselves: taken by the caller, which kicks all but itself. */
	assert_int_equal(vm_icr_deliver(&vm, 0, &fixed), 1u << 0);
	assert_true(vm_vcpu_post_nmi(&vm.vcpu[0]));
	assert_true(vm_vcpu_take_events(&vm.vcpu[0], &ev));
	assert_true(ev.nmi);
	assert_int_equal(ev.irr[1], 1ull << 1);
	assert_false(vm_vcpu_take_events(&vm.vcpu[0], &ev));
}

/* The look without the lock says what vm_vcpu_events_pending() says, after every change. */
static void test_posted_follows_pending(void **state)
{
	struct vm_vcpu *v = &vm.vcpu[0];
	struct vm_events ev;
	uint8_t vector;

	(void)state;
	assert_false(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_post_fixed(v, 0x40));
	assert_true(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_take_events(v, &ev));
	assert_false(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_post_nmi(v));
	assert_true(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_take_events(v, &ev));
	assert_true(vm_vcpu_post_legacy(v));
	assert_true(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_take_events(v, &ev));
	assert_false(vm_vcpu_events_posted(v));
	/* INIT to a running vCPU is posted; taken, a STARTUP is no event. */
	assert_true(vm_vcpu_post_init(v));
	assert_true(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_take_events(v, &ev));
	assert_false(vm_vcpu_post_init(v));
	assert_false(vm_vcpu_events_posted(v));
	assert_true(vm_vcpu_post_startup(v, 0x08));
	assert_true(vm_vcpu_take_startup(v, &vector));
	assert_false(vm_vcpu_events_posted(v));
	/* Refused posts leave nothing behind (vCPU 1 waits for SIPI). */
	assert_false(vm_vcpu_post_fixed(&vm.vcpu[1], 0x40));
	assert_false(vm_vcpu_post_nmi(&vm.vcpu[1]));
	assert_false(vm_vcpu_events_posted(&vm.vcpu[1]));
	/* A stop is posted to the others; a stopped vCPU has nothing. */
	assert_true(vm_vcpu_post_fixed(v, 0x41));
	assert_true(vm_stop(&vm, 1));
	assert_true(vm_vcpu_events_posted(v));
	vm_vcpu_set_stopped(v, false);
	assert_false(vm_vcpu_events_posted(v));
	assert_false(vm_vcpu_events_pending(v));
}

static void test_smi_dropped(void **state)
{
	struct icr_request smi = vm_icr_decode(&vm, 0, xapic_icr(0, APIC_ICR_DELIVERY_MODE_SMI |
		APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF), false);
	struct vm_events ev;

	(void)state;
	assert_int_equal(vm_icr_deliver(&vm, 0, &smi), 0);
	assert_false(vm_vcpu_take_events(&vm.vcpu[0], &ev));
	assert_true(fake_printk_contains("SMI IPI"));
	/* A flood is reported a few times only. */
	for (unsigned int i = 0; i < 100; i++)
		vm_icr_deliver(&vm, 0, &smi);
	assert_int_equal(vm.dropped_ipis, 101);
	assert_int_equal(fake_printk_calls, VM_DROPPED_IPIS_REPORTED);
	assert_true(fake_printk_contains("further ones are dropped silently"));
}

static void test_halted_and_progress(void **state)
{
	uint8_t vector;

	(void)state;
	assert_true(vm_any_vcpu_runnable(&vm));
	/* vCPU 0 halts with interrupts off; no one else runs: no progress possible. */
	assert_true(vm_vcpu_set_halted(&vm.vcpu[0], true));
	assert_false(vm_any_vcpu_runnable(&vm));
	assert_false(vm_vcpu_wakeup_pending(&vm.vcpu[0]));
	/* An NMI ends such a HLT; a fixed interrupt does not (but is pending all the same). */
	assert_false(vm_vcpu_events_pending(&vm.vcpu[0]));
	assert_true(vm_vcpu_post_fixed(&vm.vcpu[0], 0x30));
	assert_false(vm_vcpu_wakeup_pending(&vm.vcpu[0]));
	assert_true(vm_vcpu_events_pending(&vm.vcpu[0]));
	assert_true(vm_vcpu_post_nmi(&vm.vcpu[0]));
	assert_true(vm_vcpu_wakeup_pending(&vm.vcpu[0]));
	assert_true(vm_vcpu_set_halted(&vm.vcpu[0], false));
	/* A STARTUP posted to a waiting vCPU counts as progress. */
	assert_true(vm_vcpu_set_halted(&vm.vcpu[0], true));
	assert_false(vm_vcpu_events_pending(&vm.vcpu[2]));
	assert_true(vm_vcpu_post_startup(&vm.vcpu[2], 0x10));
	assert_true(vm_vcpu_events_pending(&vm.vcpu[2]));	/* what wakes a vCPU blocked for it */
	assert_true(vm_any_vcpu_runnable(&vm));
	assert_true(vm_vcpu_take_startup(&vm.vcpu[2], &vector));
}

/*
 * vm_any_vcpu_runnable() on one CPU while vCPU 2 takes its STARTUP on
 * another: caught between the two stores of vm_vcpu_take_startup() (sipi
 * cleared, still in wait-for-SIPI), read without the vCPU's lock it looks
 * like a vCPU that can never run.  Here the test holds the lock in that
 * state, as the taking CPU does: the check must wait for the lock, then
 * find vCPU 2 running.
 */
struct runnable_probe {
	bool result;
	bool done;
};

static void *runnable_thread(void *arg)
{
	struct runnable_probe *p = arg;

	p->result = vm_any_vcpu_runnable(&vm);
	__atomic_store_n(&p->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void test_runnable_reads_state_and_startup_together(void **state)
{
	struct runnable_probe probe = { 0 };
	struct vm_vcpu *v = &vm.vcpu[2];
	pthread_t t;

	(void)state;
	assert_true(vm_vcpu_set_halted(&vm.vcpu[0], true));
	assert_true(vm_vcpu_post_startup(v, 0x10));
	/* Half way through vm_vcpu_take_startup(), the lock held. */
	spin_lock(&v->lock);
	v->sipi = false;
	assert_int_equal(pthread_create(&t, NULL, runnable_thread, &probe), 0);
	usleep(100000);
	assert_false(__atomic_load_n(&probe.done, __ATOMIC_ACQUIRE));
	v->state = VCPU_RUN_RUNNING;
	spin_unlock(&v->lock);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(probe.done);
	assert_true(probe.result);
}

static void test_first_stop_wins(void **state)
{
	struct vm_events ev;

	(void)state;
	assert_false(vm_stopping(&vm));
	/* Everyone else is told, and to be kicked (running or waiting alike). */
	assert_int_equal(vm_stop(&vm, 2), 0xb);
	assert_true(vm_stopping(&vm));
	assert_int_equal(vm.stopped_by, 2);
	assert_true(vm_vcpu_take_events(&vm.vcpu[0], &ev));
	assert_true(ev.stop);
	assert_int_equal(vm_stop(&vm, 1), 0);
	assert_int_equal(vm.stopped_by, 2);
	vm_vcpu_set_stopped(&vm.vcpu[0], false);
	assert_int_equal(vm_vcpu_state(&vm.vcpu[0]), VCPU_RUN_STOPPED);
	assert_int_equal(vm.vcpu[0].state_at_stop, VCPU_RUN_RUNNING);
	/* Nothing reaches a stopped vCPU. */
	assert_false(vm_vcpu_post_init(&vm.vcpu[0]));
	assert_false(vm_vcpu_post_fixed(&vm.vcpu[0], 0x40));
	assert_false(vm_vcpu_post_startup(&vm.vcpu[0], 0x40));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_decode_kinds, setup),
		cmocka_unit_test_setup(test_decode_physical, setup),
		cmocka_unit_test_setup(test_decode_shorthands, setup),
		cmocka_unit_test_setup(test_decode_logical_xapic, setup),
		cmocka_unit_test_setup(test_decode_logical_x2apic, setup),
		cmocka_unit_test_setup(test_ioapic_decode_physical_logical, setup),
		cmocka_unit_test_setup(test_ioapic_decode_x2apic_targets, setup),
		cmocka_unit_test_setup(test_extint_vcpu, setup),
		cmocka_unit_test_setup(test_post_legacy, setup),
		cmocka_unit_test_setup(test_startup_only_after_wait_for_sipi, setup),
		cmocka_unit_test_setup(test_init_while_running, setup),
		cmocka_unit_test_setup(test_broadcast_init_sipi_sipi, setup),
		cmocka_unit_test_setup(test_fixed_and_nmi_to_running, setup),
		cmocka_unit_test_setup(test_posted_follows_pending, setup),
		cmocka_unit_test_setup(test_smi_dropped, setup),
		cmocka_unit_test_setup(test_halted_and_progress, setup),
		cmocka_unit_test_setup(test_runnable_reads_state_and_startup_together, setup),
		cmocka_unit_test_setup(test_first_stop_wins, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
