// SPDX-License-Identifier: GPL-2.0-only
/*
 * The overcommit guest (issue 11): every CPU the ACPI MADT lists is
 * started with INIT, STARTUP, STARTUP, and all of them -- the BSP too --
 * contend one ticket spinlock whose waiters spin with PAUSE, as Linux's
 * does, each taking it k times around a short critical section; every
 * 16th section is long, so that a holder is now and then preempted
 * there when vCPUs share a CPU.
 *
 * Checks: mutual exclusion (no vCPU ever finds the lock's owner set when
 * it enters, the shared counter, updated without atomics inside, ends at
 * exactly vCPUs * k) and that every vCPU got its share (each finished its
 * k acquisitions: none was starved).  Printed, never judged: the ticks
 * (Bochs: instructions) per acquisition over the whole run, the wait
 * distribution in powers of two, and how many acquisitions each vCPU had
 * made when half of them were done.
 *
 * A vCPU is numbered in the order it arrives, not by its APIC ID, so the
 * guest does not depend on the APIC IDs being distinct.
 *
 * Options: k=N acquisitions per vCPU (default 200); lock=sleep makes the
 * waiters halt instead of spin (a sleeping lock, for comparison): a
 * waiter says which ticket it sleeps on and halts, and the unlocker wakes
 * the holder of the next ticket with a fixed IPI -- the pair a
 * paravirtual spinlock's wait and kick (Linux's kvm_wait, kvm_kick_cpu)
 * are, with the APIC instead of a hypercall.
 * Runs unmodified on bare Bochs and under QEMU -smp n.
 */
#include "apic.h"
#include "console.h"
#include "idt.h"
#include "smp.h"
#include "string.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "overcommit";

#define MAX_CPUS		SMP_MAX_CPUS
#define DEFAULT_K		200
#define LONG_EVERY		16	/* every 16th critical section is long */
#define SHORT_WORK		8	/* loop iterations inside a short section */
#define LONG_WORK		2000
#define WAIT_BUCKETS		24	/* waits of < 2^1 .. >= 2^23 ticks */
/* Bochs: instructions.  The whole run, however the vCPUs share the CPUs. */
#define RUN_TIMEOUT_TICKS	400000000ull
#define NOBODY			0xffffffffu
#define WAKE_VECTOR		0x52	/* the sleeping lock's wake-up IPI */

/* A ticket lock (Linux's before qspinlock): take a ticket, wait for it to be served. */
static volatile uint32_t next_ticket, now_serving;

static volatile uint32_t owner = NOBODY;
static volatile uint32_t counter;	/* only ever changed by the lock's owner */
static volatile uint32_t violations;
static volatile uint32_t arrived, go, done, total_acquired;
static uint32_t k;
static unsigned int ncpus;

struct worker {
	volatile uint32_t acquired;
	volatile uint32_t at_half;	/* its acquisitions when half of all were done */
	uint64_t wait_ticks, max_wait;
	uint32_t wait_hist[WAIT_BUCKETS];
};

static struct worker workers[MAX_CPUS];

/*
 * lock=sleep: who sleeps on which ticket.  At most one ticket per vCPU is
 * outstanding, so the tickets waited for, [now_serving, next_ticket),
 * are fewer than ncpus apart and ticket % ncpus names a slot of its own.
 */
struct sleeper {
	volatile uint32_t ticket, apic_id;
	volatile uint32_t asleep;
};

static bool sleeping_lock;
static struct sleeper sleepers[MAX_CPUS];
static volatile uint32_t wakeups;	/* IPIs the unlockers sent */

static void wake_irq(struct trap_frame *f)
{
	(void)f;
	apic_eoi();
}

/* Halt until ticket @me is served; interrupts on only while halted. */
static void ticket_wait_halted(uint32_t me, uint32_t apic_id)
{
	struct sleeper *s = &sleepers[me % ncpus];

	cli();
	while (__atomic_load_n(&now_serving, __ATOMIC_ACQUIRE) != me) {
		s->ticket = me;
		s->apic_id = apic_id;
		/*
		 * Store asleep, then load now_serving; the unlocker stores
		 * now_serving, then loads asleep.  With a full fence on each
		 * side one of them sees the other's store: the waiter does not
		 * halt, or the unlocker sends the IPI.  One that arrives
		 * between STI and HLT wakes the HLT (the STI shadow).
		 */
		__atomic_store_n(&s->asleep, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&now_serving, __ATOMIC_SEQ_CST) != me)
			sti_hlt();	/* STI; HLT, then interrupts off again */
		s->asleep = 0;
	}
	sti();
}

static void ticket_lock(uint32_t apic_id)
{
	uint32_t me = __atomic_fetch_add(&next_ticket, 1, __ATOMIC_RELAXED);

	if (sleeping_lock) {
		ticket_wait_halted(me, apic_id);
		return;
	}
	while (__atomic_load_n(&now_serving, __ATOMIC_ACQUIRE) != me)
		pause();
}

static void ticket_unlock(void)
{
	uint32_t next = now_serving + 1;
	struct sleeper *s;

	__atomic_store_n(&now_serving, next, __ATOMIC_SEQ_CST);
	if (!sleeping_lock)
		return;
	s = &sleepers[next % ncpus];
	if (__atomic_load_n(&s->asleep, __ATOMIC_SEQ_CST) && s->ticket == next) {
		smp_send_ipi(s->apic_id, WAKE_VECTOR);
		__atomic_fetch_add(&wakeups, 1, __ATOMIC_RELAXED);
	}
}

static unsigned int bucket_of(uint64_t ticks)
{
	unsigned int b = 0;

	while (ticks > 1 && b < WAIT_BUCKETS - 1) {
		ticks >>= 1;
		b++;
	}
	return b;
}

static void critical_section(uint32_t self, unsigned int work)
{
	uint32_t c;

	if (owner != NOBODY)
		violations++;
	owner = self;
	c = counter;
	for (volatile unsigned int i = 0; i < work; i++)
		;
	counter = c + 1;
	if (owner != self)
		violations++;
	owner = NOBODY;
}

/* One vCPU's share of the work. */
static void work(uint32_t self)
{
	struct worker *w = &workers[self];
	uint32_t apic_id = smp_apic_id();

	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		pause();
	for (uint32_t n = 0; n < k; n++) {
		uint64_t t = rdtsc(), waited;
		uint32_t all;

		ticket_lock(apic_id);
		waited = rdtsc() - t;
		critical_section(self, (n % LONG_EVERY == LONG_EVERY - 1) ? LONG_WORK : SHORT_WORK);
		/* Under the lock, so that the snapshot at half time is exact. */
		w->acquired = n + 1;
		all = ++total_acquired;
		if (all == ncpus * k / 2)
			for (unsigned int i = 0; i < ncpus; i++)
				workers[i].at_half = workers[i].acquired;
		ticket_unlock();
		w->wait_ticks += waited;
		if (waited > w->max_wait)
			w->max_wait = waited;
		w->wait_hist[bucket_of(waited)]++;
	}
	__atomic_fetch_add(&done, 1, __ATOMIC_RELEASE);
}

static void ap_main(void)
{
	uint32_t self;

	idt_init();		/* the same table: loads IDTR on this CPU */
	if (sleeping_lock) {
		/* This CPU's own APIC, software-enabled to take the wake-up IPI. */
		apic_write(XAPIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
		sti();
	}
	self = __atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
	if (self >= ncpus)
		for (;;)
			asm volatile("cli; hlt");
	work(self);
	for (;;)
		sti_hlt();
}

static void report(uint64_t ticks)
{
	uint32_t hist[WAIT_BUCKETS] = { 0 };
	uint32_t total = ncpus * k;

	printf("overcommit: %u vCPUs x %u acquisitions: %llu ticks, %llu ticks per acquisition\n",
	       ncpus, k, (unsigned long long)ticks,
	       (unsigned long long)div_u64_u32(ticks, total ? total : 1));
	for (unsigned int i = 0; i < ncpus; i++) {
		struct worker *w = &workers[i];

		printf("overcommit: vCPU %u: %u acquisitions (%u at half time), mean wait %llu, "
		       "max wait %llu ticks\n", i, w->acquired, w->at_half,
		       (unsigned long long)div_u64_u32(w->wait_ticks, w->acquired ? w->acquired : 1),
		       (unsigned long long)w->max_wait);
		for (unsigned int b = 0; b < WAIT_BUCKETS; b++)
			hist[b] += w->wait_hist[b];
	}
	if (sleeping_lock)
		printf("overcommit: sleeping lock: %u wake-up IPIs\n", wakeups);
	printf("overcommit: waits:");
	for (unsigned int b = 0; b < WAIT_BUCKETS; b++)
		if (hist[b])
			printf(" <2^%u:%u", b + 1, hist[b]);
	printf("\n");
}

void guest_main(void)
{
	uint32_t ids[MAX_CPUS];
	uint64_t t0, t;
	bool all_done;

	char lock[8];
	const char *l = cmdline_value("lock", lock, sizeof(lock));

	k = cmdline_u32("k", DEFAULT_K);
	if (l && strcmp(l, "sleep") && strcmp(l, "spin")) {
		check("lock-option", false, "unknown lock \"%s\" (spin or sleep)", l);
		return;
	}
	sleeping_lock = l && !strcmp(l, "sleep");
	ncpus = smp_madt_apic_ids(ids, MAX_CPUS);
	if (!ncpus)
		ncpus = 1;
	printf("overcommit: %u CPUs in the MADT, %u acquisitions each, %s lock\n", ncpus, k,
	       sleeping_lock ? "sleeping" : "spinning");
	arrived = 1;			/* the BSP is vCPU 0 */
	if (ncpus > 1) {
		apic_init();
		if (sleeping_lock) {
			irq_register(WAKE_VECTOR, wake_irq);
			sti();
		}
		smp_install_trampoline(ap_main);
		smp_start_aps(ids, ncpus, false);
		t = rdtsc();
		while (arrived < ncpus && rdtsc() - t < RUN_TIMEOUT_TICKS)
			pause();
	}
	if (!check("all-vcpus-arrived", arrived == ncpus, "%u of %u vCPUs arrived", arrived, ncpus))
		return;
	t0 = rdtsc();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	work(0);
	while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < ncpus && rdtsc() - t0 < RUN_TIMEOUT_TICKS)
		pause();
	t = rdtsc() - t0;
	all_done = done == ncpus;
	check("mutual-exclusion", violations == 0 && (!all_done || counter == ncpus * k),
	      "%u violations, counter %u, expected %u", violations, counter, ncpus * k);
	for (unsigned int i = 0; i < ncpus; i++)
		check("vcpu-got-its-share", workers[i].acquired == k,
		      "vCPU %u made %u of %u acquisitions", i, workers[i].acquired, k);
	report(t);
}
