// SPDX-License-Identifier: GPL-2.0-only
/*
 * The SMP guest: the BSP starts every AP the ACPI MADT lists the
 * architectural way -- INIT, STARTUP, STARTUP (by default all at once
 * with the all-excluding-self shorthand, as Linux and kvm-unit-tests do;
 * start=each sends them to one APIC ID after another) -- into a real-mode
 * trampoline that enters protected mode and C.  Every AP runs the
 * per-CPU checks (its APIC ID, CPUID, an exception through the IDT), then
 * waits in STI; HLT for interrupts, and the BSP checks IPIs of every
 * shape: physical and logical destination, self, all-excluding-self,
 * all-including-self, each AP woken from HLT; an NMI that wakes an AP
 * halted with interrupts off; INIT to a running AP and a new STARTUP
 * (it starts again); a second STARTUP (ignored); a STARTUP to an APIC ID
 * nobody has (dropped).
 *
 * Before that, on any number of CPUs, what the ICR must not do (issue 7):
 * an SMI IPI, an NMI to itself (delivered as an NMI, on the BSP), and
 * under exitplan only (bare Bochs dies of the first, hardware allows the
 * second): a byte write to the APIC page (dropped), moving the APIC
 * window with IA32_APIC_BASE (#GP).
 *
 * Last, every CPU checks that its DR0-DR3, DR6 and the MSRs the
 * hypervisor executes for it (SYSCALL, KERNEL_GS_BASE, TSC_AUX, XSS)
 * keep its own values while the others write theirs (cpu-state-kept:
 * with vCPUs sharing a CPU, what VMX does not switch must be).
 *
 * Options: start=each, x2apic (every CPU switches to x2APIC mode and
 * the IPIs go through MSR 0x830; skipped where CPUID has no x2APIC),
 * init-self (end by sending INIT to itself: under exitplan with one vCPU
 * the machine stops, reported; on hardware the CPU resets), ap-deaf (the
 * last AP ends spinning with its APIC software-disabled, deaf to every
 * fixed interrupt: the machine must stop all the same), apic-cycle
 * (each CPU's APIC goes xAPIC -> x2APIC -> disabled -> xAPIC before it
 * is set up; exitplan only), irq-route (the 8254's IRQ 0 routed to the
 * last AP through the I/O APIC and the 8259: irq_route_checks();
 * irq-route=ioapic: through the I/O APIC alone), vectors (every vector
 * 0x10-0xff to itself and to an AP, each taken once: vector_checks()),
 * ioapic-rmw (every CPU at once LOCK ADDs to one I/O APIC entry: none of
 * the adds is lost).
 * Runs unmodified on bare Bochs and under QEMU -smp n.
 */
#include "acpi.h"
#include "apic.h"
#include "console.h"
#include "exitplan.h"
#include "fw_cfg.h"
#include "idt.h"
#include "smp.h"
#include "string.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "smp";

#define MAX_CPUS		SMP_MAX_CPUS
#define IPI_VECTOR		0x50
#define WAIT_TICKS		50000000ull	/* Bochs: 50M instructions */
#define ABSENT_APIC_ID		0x3e

#define MSR_APIC_BASE		0x1b
#define APIC_BASE_EXTD_BIT	(1u << 10)

/* What each CPU (by its MADT index) did; written by the AP, read by the BSP. */
struct cpu_slot {
	uint32_t apic_id;
	volatile uint32_t starts;	/* times it came up through the trampoline */
	volatile uint32_t checked;	/* its per-CPU checks are done */
	volatile uint32_t apic_id_ok, vmx_hidden, exception_ok, x2apic_ok, x2apic_ldr;
	volatile uint32_t ipis;		/* IPI_VECTOR interrupts taken */
	volatile uint32_t cmd, cmd_done;
	volatile uint32_t armed;	/* about to halt with interrupts off */
	volatile uint32_t nmis;
	volatile uint32_t pit_irqs;	/* PIT_IOAPIC_VECTOR interrupts taken */
	volatile uint32_t extint_irqs;	/* the 8259's IRQ 0 (PIT_PIC_VECTOR) taken */
};

static struct cpu_slot slots[MAX_CPUS];
static unsigned int ncpus;
static volatile uint32_t ap_lock;

/* In the order the BSP sends them: each AP's cmd_done only grows. */
enum { CMD_NONE, CMD_NMI_HALT, CMD_STATE, CMD_LINT0_EXTINT, CMD_LINT0_MASKED, CMD_IOAPIC_RMW,
       CMD_DEAF };

/*
 * The state a CPU keeps outside what VMX switches (issue 11): DR0-DR3,
 * DR6 and the MSRs the hypervisor executes for the guest.  Each CPU
 * writes values of its own, waits (spinning on PAUSE: with vCPUs
 * sharing a CPU the others run meanwhile), then reads them back.
 */
#define STATE_MSRS	6
static const uint32_t state_msr[STATE_MSRS] = {
	0xc0000081u,	/* IA32_STAR */
	0xc0000082u,	/* IA32_LSTAR */
	0xc0000084u,	/* IA32_FMASK */
	0xc0000102u,	/* IA32_KERNEL_GS_BASE */
	0xc0000103u,	/* IA32_TSC_AUX: where CPUID.80000001H:EDX.RDTSCP */
	0xda0u,		/* IA32_XSS: where CPUID.(0DH,1):EAX.XSAVES and a supervisor component */
};
static const char *const state_msr_name[STATE_MSRS] = {
	"STAR", "LSTAR", "FMASK", "KERNEL_GS_BASE", "TSC_AUX", "XSS",
};
static const char *const state_dr_name[5] = { "DR0", "DR1", "DR2", "DR3", "DR6" };

struct cpu_state {
	uint32_t dr[5];			/* DR0-DR3, DR6 as read back after the write */
	uint64_t msr[STATE_MSRS];
	uint32_t msrs;			/* the MSRs written (a bit each) */
	uint32_t dr_bad, msr_bad;	/* what read back otherwise after the wait */
};

static struct cpu_state states[MAX_CPUS];
static volatile uint32_t states_written, states_checked;

static void lock(void)
{
	while (__atomic_exchange_n(&ap_lock, 1, __ATOMIC_ACQUIRE))
		pause();
}

static void unlock(void)
{
	__atomic_store_n(&ap_lock, 0, __ATOMIC_RELEASE);
}

/* --- the local APIC, xAPIC or x2APIC ------------------------------------- */

static void lapic_write(uint32_t reg, uint32_t v)
{
	if (smp_x2apic)
		wrmsr(0x800 + reg / 16, v);
	else
		apic_write(reg, v);
}

static uint32_t lapic_id(void)
{
	return smp_apic_id();
}

static void lapic_eoi(void)
{
	lapic_write(XAPIC_REG_EOI, 0);
}


/* The logical destination of the CPU in slot @i: flat xAPIC bit i, or x2APIC's own. */
static uint32_t logical_id(unsigned int i)
{
	uint32_t id = slots[i].apic_id;

	return smp_x2apic ? ((id >> 4) << 16) | (1u << (id & 0xf)) : 1u << i;
}

static int slot_of(uint32_t apic_id)
{
	for (unsigned int i = 0; i < ncpus; i++)
		if (slots[i].apic_id == apic_id)
			return (int)i;
	return -1;
}

static void ipi_irq(struct trap_frame *f)
{
	int i = slot_of(lapic_id());

	(void)f;
	if (i >= 0)
		__atomic_fetch_add(&slots[i].ipis, 1, __ATOMIC_RELAXED);
	lapic_eoi();
}

/*
 * apic-cycle: each CPU first takes its APIC xAPIC -> x2APIC -> disabled
 * -> xAPIC (SDM Vol. 3A 11.12.5), so that every IPI below reaches and
 * leaves an xAPIC that was in x2APIC mode (exitplan only: bare Bochs's
 * APIC is dead after the disable).
 */
static bool smp_apic_cycle;

static void lapic_cycle(void)
{
	uint64_t base = rdmsr(MSR_APIC_BASE);

	wrmsr(MSR_APIC_BASE, base | APIC_BASE_EXTD_BIT);
	wrmsr(MSR_APIC_BASE, base & ~(uint64_t)(APIC_BASE_EXTD_BIT | APIC_BASE_EN));
	wrmsr(MSR_APIC_BASE, base);
}

/* This CPU's APIC: enabled, flat logical model, x2APIC if asked. */
static void lapic_setup(unsigned int i)
{
	if (smp_apic_cycle)
		lapic_cycle();
	if (smp_x2apic)
		wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EXTD_BIT);
	lapic_write(XAPIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
	lapic_write(XAPIC_REG_TPR, 0);
	if (!smp_x2apic) {
		apic_write(XAPIC_REG_DFR, 0xffffffffu);
		apic_write(XAPIC_REG_LDR, logical_id(i) << 24);
	}
}

/* --- the APs ------------------------------------------------------------- */

static void ap_checks(struct cpu_slot *s)
{
	struct cpuid_regs r = cpuid(1);

	s->apic_id_ok = (r.ebx >> 24) == s->apic_id;
	/* Leaf 0BH's EDX is the x2APIC ID too, where the CPU has the leaf (SDM Vol. 2A CPUID). */
	if (cpuid(0).eax >= 0xb && cpuid_count(0xb, 0).ebx != 0)
		s->apic_id_ok = s->apic_id_ok && cpuid_count(0xb, 0).edx == s->apic_id;
	s->vmx_hidden = !(r.ecx & (1u << 5));
	s->x2apic_ok = !smp_x2apic || (rdmsr(MSR_APIC_BASE) & APIC_BASE_EXTD_BIT);
	/* The x2APIC LDR (SDM Vol. 3A 11.12.10.2); bare Bochs 2.7 reads 0 (PLATFORM.md). */
	s->x2apic_ldr = smp_x2apic ? (uint32_t)rdmsr(0x80d) : 0;
	/* The IDT's fault recovery is one for all CPUs: under ap_lock. */
	expect_fault(X86_EXC_UD);
	asm volatile(ASM_TRY("1f") "ud2\n\t" "1:" : : : "memory");
	s->exception_ok = fault_happened();
}

static void dr_write(unsigned int n, uint32_t v)
{
	switch (n) {
	case 0: asm volatile("mov %0, %%db0" : : "r"(v)); break;
	case 1: asm volatile("mov %0, %%db1" : : "r"(v)); break;
	case 2: asm volatile("mov %0, %%db2" : : "r"(v)); break;
	case 3: asm volatile("mov %0, %%db3" : : "r"(v)); break;
	default: asm volatile("mov %0, %%db6" : : "r"(v)); break;
	}
}

static uint32_t dr_read(unsigned int n)
{
	uint32_t v;

	switch (n) {
	case 0: asm volatile("mov %%db0, %0" : "=r"(v)); break;
	case 1: asm volatile("mov %%db1, %0" : "=r"(v)); break;
	case 2: asm volatile("mov %%db2, %0" : "=r"(v)); break;
	case 3: asm volatile("mov %%db3, %0" : "=r"(v)); break;
	default: asm volatile("mov %%db6, %0" : "=r"(v)); break;
	}
	return v;
}

/* The value CPU @i writes to state MSR @k, or false where it has no such MSR. */
static bool state_msr_value(unsigned int i, unsigned int k, uint64_t *v)
{
	switch (k) {
	case 2:
		*v = 0x100u + i;		/* FMASK: bits 63:32 reserved */
		return true;
	case 4:
		if (cpuid(0x80000000u).eax < 0x80000001u || !(cpuid(0x80000001u).edx & (1u << 27)))
			return false;
		*v = 0x100u + i;		/* TSC_AUX: bits 63:32 reserved */
		return true;
	case 5: {
		uint64_t comps;

		if (cpuid(0).eax < 0xd || !(cpuid_count(0xd, 1).eax & (1u << 3)))
			return false;
		comps = cpuid_count(0xd, 1).ecx | ((uint64_t)cpuid_count(0xd, 1).edx << 32);
		if (!comps)
			return false;		/* XSS can only be 0 */
		*v = (i & 1) ? comps & -comps : 0;
		return true;
	}
	default:
		*v = (0x10000000ull * (k + 1)) + ((uint64_t)i << 12);
		return true;
	}
}

/*
 * CPU @i's part of the state check: write, wait until every CPU has
 * written (each vCPU sharing a CPU has been switched out and in by then,
 * but for the last one there), read back.  MSR faults are caught under
 * ap_lock (one fault recovery for all CPUs).
 */
static void state_check(unsigned int i)
{
	struct cpu_state *st = &states[i];

	for (unsigned int n = 0; n < 5; n++) {
		dr_write(n, n == 4 ? 0xffff0ff0u | (i & 0xf) : 0x01000000u * (n + 1) + (i << 12));
		st->dr[n] = dr_read(n);
	}
	lock();
	st->msrs = 0;
	for (unsigned int k = 0; k < STATE_MSRS; k++) {
		uint64_t v;

		if (state_msr_value(i, k, &v) && wrmsr_safe(state_msr[k], v) == NO_FAULT &&
		    rdmsr_safe(state_msr[k], &st->msr[k]) == NO_FAULT)
			st->msrs |= 1u << k;
	}
	unlock();
	__atomic_fetch_add(&states_written, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&states_written, __ATOMIC_ACQUIRE) < ncpus)
		pause();
	st->dr_bad = st->msr_bad = 0;
	for (unsigned int n = 0; n < 5; n++)
		if (dr_read(n) != st->dr[n])
			st->dr_bad |= 1u << n;
	lock();
	for (unsigned int k = 0; k < STATE_MSRS; k++) {
		uint64_t v;

		if ((st->msrs & (1u << k)) &&
		    (rdmsr_safe(state_msr[k], &v) != NO_FAULT || v != st->msr[k]))
			st->msr_bad |= 1u << k;
	}
	unlock();
	/* Back to 0: DR0-DR3 mean nothing while DR7 disables them, but leave nothing behind. */
	for (unsigned int n = 0; n < 4; n++)
		dr_write(n, 0);
	__atomic_fetch_add(&states_checked, 1, __ATOMIC_RELEASE);
}

/* Halt with interrupts off until an NMI (recovered like a fault) ends it. */
static void ap_nmi_halt(struct cpu_slot *s)
{
	lock();
	expect_fault(X86_EXC_NMI);
	s->armed = 1;
	asm volatile(ASM_TRY("1f") "cli\n\t" "2: hlt\n\t" "jmp 2b\n\t" "1:" : : : "memory");
	if (fault_happened())
		s->nmis++;
	s->armed = 0;
	unlock();
}

/*
 * ioapic-rmw: every CPU at once adds 1 to the destination byte of I/O
 * APIC entry 23 (IOREGSEL then LOCK ADD on IOWIN) RMW_ROUNDS times.  A
 * LOCKed read-modify-write is atomic (SDM Vol. 3A 9.1.2.2): no CPU's
 * write lands between another's read and write, so none is lost.
 */
#define RMW_ENTRY_HIGH		(0x10u + 2 * 23 + 1)
#define RMW_ROUNDS		50
static volatile uint32_t rmw_ready, rmw_go;

static void ioapic_rmw_run(void)
{
	__atomic_fetch_add(&rmw_ready, 1, __ATOMIC_SEQ_CST);
	while (!rmw_go)
		pause();
	for (unsigned int k = 0; k < RMW_ROUNDS; k++) {
		mmio_write32(0xfec00000u, RMW_ENTRY_HIGH);
		asm volatile("lock addl $0x01000000, (%0)" : : "r"(0xfec00010u) : "memory", "cc");
	}
}

void ap_main(void)
{
	struct cpu_slot *s;
	uint32_t id;
	int i;

	idt_init();		/* the same table: loads IDTR on this CPU */
	/* x2APIC mode is per CPU, and this one is fresh from INIT: xAPIC first. */
	id = cpuid(1).ebx >> 24;
	i = slot_of(id);
	if (i < 0)
		for (;;)
			asm volatile("cli; hlt");
	s = &slots[i];
	lapic_setup((unsigned int)i);
	lock();
	ap_checks(s);
	unlock();
	__atomic_fetch_add(&s->starts, 1, __ATOMIC_RELEASE);
	s->checked = 1;
	for (;;) {
		uint32_t cmd;

		cli();
		cmd = s->cmd;
		if (cmd != s->cmd_done) {
			if (cmd == CMD_NMI_HALT)
				ap_nmi_halt(s);
			if (cmd == CMD_STATE)
				state_check((unsigned int)i);
			if (cmd == CMD_IOAPIC_RMW)
				ioapic_rmw_run();
			if (cmd == CMD_LINT0_EXTINT || cmd == CMD_LINT0_MASKED)
				lapic_write(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT |
					    (cmd == CMD_LINT0_MASKED ? APIC_LVT_MASKED : 0));
			if (cmd == CMD_DEAF) {
				/* APIC software-disabled: no fixed interrupt reaches it now. */
				lapic_write(XAPIC_REG_SVR, APIC_SPURIOUS_VECTOR);
				s->cmd_done = cmd;
				for (;;)
					asm volatile("" : : : "memory");
			}
			s->cmd_done = cmd;
			continue;
		}
		sti_hlt();
	}
}

/* --- the BSP -------------------------------------------------------------- */

static bool wait_until(volatile uint32_t *p, uint32_t value)
{
	/*
	 * QEMU TCG's TSC counts host time and its vCPUs are host threads: on
	 * a loaded machine one may wait a scheduler slice or more, so there
	 * the budget is 20 times Bochs's (it is spent only when a check fails).
	 */
	uint64_t budget = qemu_tcg_detected() ? 20 * WAIT_TICKS : WAIT_TICKS;
	uint64_t t = rdtsc();

	while (*p < value && rdtsc() - t < budget)
		pause();
	return *p >= value;
}

static void settle(void)
{
	smp_delay(2000000);
}

static uint32_t ipis_before[MAX_CPUS];

static void count_start(void)
{
	for (unsigned int i = 0; i < ncpus; i++)
		ipis_before[i] = slots[i].ipis;
}

/* Every CPU in @mask got exactly one more IPI, every other none. */
static bool count_check(const char *name, uint32_t mask)
{
	uint32_t got = 0;

	for (unsigned int i = 0; i < ncpus; i++)
		if (mask & (1u << i))
			wait_until(&slots[i].ipis, ipis_before[i] + 1);
	settle();
	for (unsigned int i = 0; i < ncpus; i++)
		if (slots[i].ipis - ipis_before[i] == 1)
			got |= 1u << i;
		else if (slots[i].ipis != ipis_before[i])
			got |= 0x80000000u;
	return check(name, got == mask, "CPUs that got one IPI: mask 0x%x, expected 0x%x", got, mask);
}

static void ipi_checks(void)
{
	uint32_t all = (1u << ncpus) - 1, aps = all & ~1u, logical = 0;

	count_start();
	for (unsigned int i = 1; i < ncpus; i++)
		smp_send_ipi(slots[i].apic_id, IPI_VECTOR);
	count_check("ipi-physical-each-ap", aps);

	count_start();
	smp_send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_SELF);
	count_check("ipi-self", 1);

	count_start();
	smp_send_ipi(slots[0].apic_id, IPI_VECTOR);
	count_check("ipi-physical-to-self", 1);

	count_start();
	smp_send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
	count_check("ipi-all-excluding-self", aps);

	count_start();
	smp_send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF);
	count_check("ipi-all-including-self", all);

	count_start();
	smp_send_ipi(smp_x2apic ? 0xffffffffu : 0xff, IPI_VECTOR);
	count_check("ipi-physical-broadcast", all);

	/* Logical: the APs with an odd index, and in x2APIC mode cluster 0's. */
	for (unsigned int i = 1; i < ncpus; i += 2)
		logical |= logical_id(i);
	count_start();
	if (logical) {
		uint32_t mask = 0;

		for (unsigned int i = 1; i < ncpus; i += 2)
			mask |= 1u << i;
		smp_send_ipi(logical, IPI_VECTOR | APIC_ICR_DEST_LOGICAL);
		count_check("ipi-logical", mask);
	}
}

static void nmi_check(void)
{
	struct cpu_slot *s = &slots[1];

	s->cmd = CMD_NMI_HALT;
	smp_send_ipi(s->apic_id, IPI_VECTOR);		/* wake it for the command */
	if (!wait_until(&s->armed, 1)) {
		check("nmi-wakes-cli-hlt", false, "the AP never armed");
		return;
	}
	settle();					/* let it reach the HLT */
	smp_send_ipi(s->apic_id, APIC_ICR_DELIVERY_MODE_NMI);
	wait_until(&s->cmd_done, CMD_NMI_HALT);
	check("nmi-wakes-cli-hlt", s->nmis == 1 && s->cmd_done == CMD_NMI_HALT,
	      "NMIs taken %u, command done %u", s->nmis, s->cmd_done);
}

/* Every CPU's DR0-DR3, DR6 and executed MSRs are its own after the others ran (issue 11). */
static void state_checks(void)
{
	for (unsigned int i = 1; i < ncpus; i++) {
		slots[i].cmd = CMD_STATE;
		smp_send_ipi(slots[i].apic_id, IPI_VECTOR);	/* wake it for the command */
	}
	state_check(0);
	wait_until(&states_checked, ncpus);
	for (unsigned int i = 0; i < ncpus; i++) {
		struct cpu_state *st = &states[i];
		char bad[96] = "";
		unsigned int len = 0;

		/* At most 5 DRs and 6 MSRs of at most 15 characters: it fits. */
		for (unsigned int n = 0; n < 5; n++)
			if (st->dr_bad & (1u << n))
				len += (unsigned int)snprintf(bad + len, sizeof(bad) - len, " %s",
							      state_dr_name[n]);
		for (unsigned int k = 0; k < STATE_MSRS; k++)
			if (st->msr_bad & (1u << k))
				len += (unsigned int)snprintf(bad + len, sizeof(bad) - len, " %s",
							      state_msr_name[k]);
		check("cpu-state-kept", states_checked == ncpus && !st->dr_bad && !st->msr_bad,
		      "APIC ID %u: changed:%s (%u of %u CPUs checked; MSRs written 0x%x)",
		      slots[i].apic_id, bad[0] ? bad : " -", states_checked, ncpus, st->msrs);
	}
	for (unsigned int i = 1; i < ncpus; i++)
		wait_until(&slots[i].cmd_done, CMD_STATE);
}

static void init_sipi_checks(void)
{
	struct cpu_slot *s = &slots[1];
	uint32_t before = smp_trampoline_arrivals(), starts = s->starts;
	uint32_t sipi = APIC_ICR_DELIVERY_MODE_STARTUP | (SMP_TRAMPOLINE_PA >> 12);

	/* INIT to a running AP: it waits for STARTUP again; one STARTUP restarts it. */
	smp_send_ipi(s->apic_id, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT |
		 APIC_ICR_TRIGGER_LEVEL);
	settle();
	check("init-stops-running-ap", smp_trampoline_arrivals() == before && s->starts == starts,
	      "arrivals %u -> %u", before, smp_trampoline_arrivals());
	smp_send_ipi(s->apic_id, sipi);
	wait_until(&s->starts, starts + 1);
	check("init-sipi-restarts-ap", s->starts == starts + 1 && smp_trampoline_arrivals() == before + 1,
	      "starts %u -> %u, arrivals %u -> %u", starts, s->starts, before, smp_trampoline_arrivals());
	/* A second STARTUP to a running CPU is ignored. */
	smp_send_ipi(s->apic_id, sipi);
	settle();
	check("second-sipi-ignored", smp_trampoline_arrivals() == before + 1 && s->starts == starts + 1,
	      "arrivals %u -> %u", before, smp_trampoline_arrivals());
	/* A STARTUP nobody has the APIC ID for goes nowhere. */
	smp_send_ipi(ABSENT_APIC_ID, sipi);
	settle();
	check("sipi-to-absent-cpu-dropped", smp_trampoline_arrivals() == before + 1,
	      "arrivals %u -> %u", before, smp_trampoline_arrivals());
	/* The restarted AP still takes IPIs. */
	count_start();
	smp_send_ipi(s->apic_id, IPI_VECTOR);
	count_check("ipi-after-restart", 1u << 1);
}

/*
 * irq-route (exitplan only): the 8254's IRQ 0 reaches the vCPU the
 * guest routes it to, whichever CPU runs it (issue 11).  Channel 0 runs
 * as a rate generator; first through the I/O APIC pin the MADT's
 * interrupt source override names for ISA IRQ 0 -- physical destination
 * the last AP, then logical destination the same AP -- then through the
 * 8259 to the LINT0 of that AP, in ExtINT mode while the BSP's is
 * masked.  Each time the AP gets the interrupts and no other CPU does.
 * Bare Bochs gives the 8254's IRQ 0 to the I/O APIC's pin 2 alone, and
 * the ExtINT path to the BSP only: skipped there.
 */
#define IOAPIC_BASE		0xfec00000u
#define IOAPIC_REDTBL(pin)	(0x10u + 2 * (pin))
#define IOREDTBL_LOGICAL	(1u << 11)
#define IOREDTBL_MASKED		(1u << 16)
#define PIT_IOAPIC_VECTOR	0x60
#define PIT_PIC_BASE		0x68	/* the master 8259's vectors: IRQ 0 is 0x68 */
#define PIT_PIC_VECTOR		PIT_PIC_BASE
#define PIT_DIVISOR		11932	/* 100 Hz */
#define PIT_IRQS_WANTED		3

static void ioapic_write(uint8_t index, uint32_t v)
{
	mmio_write32(IOAPIC_BASE, index);
	mmio_write32(IOAPIC_BASE + 0x10, v);
}

/* The I/O APIC pin of ISA IRQ @irq: its MADT override's GSI (ACPI 6.x 5.2.12.5), else @irq. */
static unsigned int isa_irq_pin(unsigned int irq)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *madt = rsdp ? acpi_find_table(rsdp, "APIC") : NULL;
	const uint8_t *p, *end;
	unsigned int pin = irq;

	if (!madt)
		return irq;
	p = (const uint8_t *)madt + sizeof(*madt) + 8;
	end = (const uint8_t *)madt + madt->length;
	for (; p + 2 <= end && p[1] >= 2; p += p[1]) {
		uint32_t gsi;

		if (p[0] != 2 || p[1] < 10 || p[2] != 0 || p[3] != irq)
			continue;
		memcpy(&gsi, p + 4, sizeof(gsi));
		pin = gsi;
	}
	return pin;
}

static void pit_ioapic_irq(struct trap_frame *f)
{
	int i = slot_of(lapic_id());

	(void)f;
	if (i >= 0)
		__atomic_fetch_add(&slots[i].pit_irqs, 1, __ATOMIC_RELAXED);
	lapic_eoi();
}

static void pit_pic_irq(struct trap_frame *f)
{
	int i = slot_of(lapic_id());

	(void)f;
	if (i >= 0)
		__atomic_fetch_add(&slots[i].extint_irqs, 1, __ATOMIC_RELAXED);
	outb(0x20, 0x20);		/* non-specific EOI to the 8259: ExtINT is not the APIC's */
}

/* Channel 0, mode 2 (rate generator), lobyte/hibyte, @divisor. */
static void pit_start(uint16_t divisor)
{
	outb(0x43, 0x34);
	outb(0x40, divisor & 0xff);
	outb(0x40, divisor >> 8);
}

/*
 * Channel 2 as a clock (mode 0, polled through port 0x61's OUT2): @n
 * times 65535 input clocks, 55 ms each, whatever channel 0 does.
 */
static void pit_ch2_wait(unsigned int n)
{
	uint8_t b = inb(0x61) & ~0x03;

	for (unsigned int i = 0; i < n; i++) {
		outb(0x61, b);			/* gate 2 low, speaker off */
		outb(0x43, 0xb0);		/* channel 2, LSB then MSB, mode 0 */
		outb(0x42, 0xff);
		outb(0x42, 0xff);
		outb(0x61, b | 0x01);		/* gate high: count */
		for (unsigned int j = 0; j < 100000000u && !(inb(0x61) & 0x20); j++)
			;
	}
	outb(0x61, b);
}

/*
 * Channel 0 stopped (mode 0 past its terminal count: OUT stays high), the
 * pin routed to slot @who: no interrupt reaches anyone for 4 of
 * channel 2's 55 ms.  The host's 8254 behind the pin (the firmware's
 * 18.2 Hz) would give about 4: it is not the guest's.
 */
static void route_check_silent(unsigned int pin, unsigned int who)
{
	uint32_t before[MAX_CPUS], took = 0;
	uint64_t t0;

	ioapic_write((uint8_t)(IOAPIC_REDTBL(pin) + 1), slots[who].apic_id << 24);
	outb(0x43, 0x30);		/* channel 0, mode 0, count 1: one edge, now */
	outb(0x40, 1);
	outb(0x40, 0);
	/*
	 * Past the edge without touching the 8254, the pin still masked: an
	 * edge on a masked pin is lost (82093AA, IOREDTBL bit 16), not sent
	 * when the guest unmasks it.
	 */
	t0 = rdtsc();
	while (rdtsc() - t0 < 10000000)
		;
	for (unsigned int i = 0; i < ncpus; i++)
		before[i] = slots[i].pit_irqs;
	ioapic_write((uint8_t)IOAPIC_REDTBL(pin), PIT_IOAPIC_VECTOR);
	pit_ch2_wait(4);
	ioapic_write((uint8_t)IOAPIC_REDTBL(pin), PIT_IOAPIC_VECTOR | IOREDTBL_MASKED);
	for (unsigned int i = 0; i < ncpus; i++)
		took += slots[i].pit_irqs - before[i];
	check("irq-route-ioapic-silent", took == 0,
	      "%u interrupts through the 8254's pin with the guest's channel 0 stopped", took);
}

/* Exactly the CPU in slot @who took at least PIT_IRQS_WANTED of @count's interrupts. */
static void route_check(const char *name, unsigned int who, volatile uint32_t *(*count)(unsigned int))
{
	uint32_t before[MAX_CPUS], others = 0;

	for (unsigned int i = 0; i < ncpus; i++)
		before[i] = *count(i);
	wait_until(count(who), before[who] + PIT_IRQS_WANTED);
	for (unsigned int i = 0; i < ncpus; i++)
		if (i != who && *count(i) != before[i])
			others |= 1u << i;
	check(name, *count(who) >= before[who] + PIT_IRQS_WANTED && !others,
	      "APIC ID %u took %u of the 8254's interrupts (want %u); other CPUs that did: mask 0x%x",
	      slots[who].apic_id, *count(who) - before[who], PIT_IRQS_WANTED, others);
}

static volatile uint32_t *pit_count(unsigned int i)
{
	return &slots[i].pit_irqs;
}

static volatile uint32_t *extint_count(unsigned int i)
{
	return &slots[i].extint_irqs;
}

/* IRQ 0 through the master 8259 to the LINT0 of slot @who in ExtINT mode, the BSP's masked. */
static void route_through_8259(unsigned int who)
{
	struct cpu_slot *s = &slots[who];

	lapic_write(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT | APIC_LVT_MASKED);
	s->cmd = CMD_LINT0_EXTINT;
	smp_send_ipi(s->apic_id, IPI_VECTOR);		/* wake it for the command */
	wait_until(&s->cmd_done, CMD_LINT0_EXTINT);
	outb(0x21, 0xfe);
	route_check("irq-route-extint", who, extint_count);
	outb(0x21, 0xff);
	s->cmd = CMD_LINT0_MASKED;
	smp_send_ipi(s->apic_id, IPI_VECTOR);
	wait_until(&s->cmd_done, CMD_LINT0_MASKED);
}

static void irq_route_checks(void)
{
	unsigned int who = ncpus - 1, pin = isa_irq_pin(0);
	struct cpu_slot *s = &slots[who];
	uint32_t logical = logical_id(who);
	char how[16];
	/* irq-route=ioapic: the I/O APIC's half alone. */
	bool extint = strcmp(cmdline_value("irq-route", how, sizeof(how)), "ioapic") != 0;

	if (!exitplan_detected()) {
		skip("irq-route", "not under exitplan (bare Bochs's 8254 reaches the BSP alone)");
		return;
	}
	printf("smp: routing the 8254's IRQ 0 (I/O APIC pin %u) to APIC ID %u\n", pin, s->apic_id);
	irq_register(PIT_IOAPIC_VECTOR, pit_ioapic_irq);
	irq_register(PIT_PIC_VECTOR, pit_pic_irq);
	/* The 8259s out of the way first (their vectors off the exceptions), IRQ 0 masked. */
	outb(0x20, 0x11);
	outb(0x21, PIT_PIC_BASE);
	outb(0x21, 0x04);
	outb(0x21, 0x01);
	outb(0x21, 0xff);
	route_check_silent(pin, who);
	pit_start(PIT_DIVISOR);

	ioapic_write((uint8_t)(IOAPIC_REDTBL(pin) + 1), s->apic_id << 24);
	ioapic_write((uint8_t)IOAPIC_REDTBL(pin), PIT_IOAPIC_VECTOR);
	route_check("irq-route-ioapic-physical", who, pit_count);
	ioapic_write((uint8_t)IOAPIC_REDTBL(pin), PIT_IOAPIC_VECTOR | IOREDTBL_MASKED);
	/* An 8-bit destination: in x2APIC mode cluster 0's logical IDs (APIC IDs below 8). */
	if (logical <= 0xff) {
		ioapic_write((uint8_t)(IOAPIC_REDTBL(pin) + 1), logical << 24);
		ioapic_write((uint8_t)IOAPIC_REDTBL(pin), PIT_IOAPIC_VECTOR | IOREDTBL_LOGICAL);
		route_check("irq-route-ioapic-logical", who, pit_count);
		ioapic_write((uint8_t)IOAPIC_REDTBL(pin), PIT_IOAPIC_VECTOR | IOREDTBL_MASKED);
	}

	if (extint)
		route_through_8259(who);
	else
		skip("irq-route-extint", "irq-route=ioapic: the I/O APIC alone");
	outb(0x43, 0x30);				/* channel 0 to mode 0: it stops at terminal count */
	outb(0x40, 0);
	outb(0x40, 0);
}

#define XAPIC_PAGE		0xfee00000u
#define HV_WINDOW		0x04000000u	/* exitplan's region (docs/GUESTS.md) */

/*
 * vectors (issue 24): every vector 16-255 a fixed interrupt may carry
 * reaches the CPU it is sent to exactly once, and no other: a self IPI
 * through the ICR's shorthand, in x2APIC mode one through the SELF_IPI
 * register too, and an IPI to the first AP by its APIC ID.  The
 * hypervisor's own kicks must show up as none of them, nor take the
 * place of one: vector-0xf2-* names the vector of exitplan's kick IPI
 * (apic: virtual) alone.  Vectors 16-31 go through stubs of their own
 * (vector_stubs.S).
 */
#define VEC_FIRST		16
#define VEC_KICK_OLD		0xf2
#define VEC_WAIT_TICKS		2000000ull

extern const char vector_low_stubs[];
static volatile uint32_t vec_count[MAX_CPUS][256];

void vector_irq(uint32_t vector);
void vector_irq(uint32_t vector)
{
	int i = slot_of(lapic_id());

	if (i >= 0 && vector < 256)
		__atomic_fetch_add(&vec_count[i][vector], 1, __ATOMIC_RELAXED);
	/* IPI_VECTOR wakes an AP for its next command too (ap-deaf after this). */
	if (i >= 0 && vector == IPI_VECTOR)
		__atomic_fetch_add(&slots[i].ipis, 1, __ATOMIC_RELAXED);
	lapic_eoi();
}

static void vector_irq_frame(struct trap_frame *f)
{
	vector_irq(f->vector);
}

enum vec_how { VEC_SELF, VEC_SELF_IPI_MSR, VEC_TO_AP };

static void vec_send(enum vec_how how, uint32_t vector)
{
	switch (how) {
	case VEC_SELF:
		smp_send_ipi(0, vector | APIC_ICR_SHORTHAND_SELF);
		break;
	case VEC_SELF_IPI_MSR:
		wrmsr(0x83f, vector);		/* x2APIC SELF_IPI (SDM Vol. 3A 11.12.11) */
		break;
	case VEC_TO_AP:
		smp_send_ipi(slots[1].apic_id, vector);
		break;
	}
}

static void vec_phase(const char *name, enum vec_how how)
{
	unsigned int target = how == VEC_TO_AP ? 1 : 0;
	unsigned int bad = 0, first_v = 0, first_cpu = 0, first_got = 0;
	char kick_name[48];

	memset((void *)vec_count, 0, sizeof(vec_count));
	for (uint32_t v = VEC_FIRST; v < 256; v++) {
		uint64_t t = rdtsc();

		vec_send(how, v);
		while (!vec_count[target][v] && rdtsc() - t < VEC_WAIT_TICKS)
			pause();
	}
	settle();
	for (uint32_t v = VEC_FIRST; v < 256; v++) {
		for (unsigned int i = 0; i < ncpus; i++) {
			uint32_t want = i == target, got = vec_count[i][v];

			if (got == want)
				continue;
			if (!bad++) {
				first_v = v;
				first_cpu = slots[i].apic_id;
				first_got = got;
			}
		}
	}
	check(name, !bad, "%u (vector, CPU) pairs wrong; first vector 0x%x on APIC ID %u: "
	      "taken %u times, want %u", bad, first_v, first_cpu, first_got,
	      first_cpu == slots[target].apic_id);
	snprintf(kick_name, sizeof(kick_name), "vector-0xf2-%s", name + sizeof("vectors-") - 1);
	check(kick_name, vec_count[target][VEC_KICK_OLD] == 1,
	      "APIC ID %u took vector 0xf2 %u times, want 1", slots[target].apic_id,
	      vec_count[target][VEC_KICK_OLD]);
}

/* One SELF_IPI write of IPI_VECTOR: did it raise an interrupt? */
static bool vec_self_ipi_msr_works(void)
{
	uint64_t t = rdtsc();

	vec_count[0][IPI_VECTOR] = 0;
	vec_send(VEC_SELF_IPI_MSR, IPI_VECTOR);
	while (!vec_count[0][IPI_VECTOR] && rdtsc() - t < VEC_WAIT_TICKS)
		pause();
	return vec_count[0][IPI_VECTOR] != 0;
}

static void vector_checks(void)
{
	for (unsigned int v = VEC_FIRST; v < 32; v++)
		idt_set_gate((uint8_t)v, (uint32_t)(uintptr_t)(vector_low_stubs + 16 * (v - VEC_FIRST)));
	for (unsigned int v = 32; v < 256; v++)
		irq_register((uint8_t)v, vector_irq_frame);
	vec_phase("vectors-self", VEC_SELF);
	if (smp_x2apic && vec_self_ipi_msr_works()) {
		vec_phase("vectors-self-ipi-msr", VEC_SELF_IPI_MSR);
	} else if (smp_x2apic) {
		skip("vectors-self-ipi-msr", "a write to the SELF_IPI register raised no interrupt "
		     "(bare Bochs 2.7 raises none)");
		skip("vector-0xf2-self-ipi-msr", "no interrupt from the SELF_IPI register");
	}
	vec_phase("vectors-to-ap", VEC_TO_AP);
	for (unsigned int v = VEC_FIRST; v < 32; v++)
		idt_set_gate((uint8_t)v, 0);
}

/*
 * An SMI IPI to an AP, waiting for its STARTUP or running (issue 7): an
 * SMI puts a CPU in SMM, outside VMX and EPT.  exitplan drops it and says
 * so; the AP must go on as if nothing was sent (the IPI checks after the
 * running one use it).  Only under exitplan: on bare Bochs or QEMU an SMI
 * to an AP whose SMBASE the BIOS never relocated runs whatever is there.
 */
static void smi_to_ap(const char *name, uint32_t apic_id)
{
	if (!exitplan_detected()) {
		skip(name, "not under exitplan");
		return;
	}
	smp_send_ipi(apic_id, APIC_ICR_DELIVERY_MODE_SMI);
	settle();
	check(name, true, "-");
}

static void icr_checks(void)
{
	uint32_t self = apic_read(XAPIC_REG_ID) >> 24;

	/* Before any switch to x2APIC mode: these go through the xAPIC page. */
	/* SMI: never delivered by exitplan; on hardware the firmware's SMM returns. */
	apic_write(XAPIC_REG_ICR_HIGH, self << 24);
	apic_write(XAPIC_REG_ICR_LOW, APIC_ICR_DELIVERY_MODE_SMI);
	check("smi-ipi-survived", true, "-");
	/* An NMI to ourselves arrives as an NMI, right after the ICR write. */
	expect_fault(X86_EXC_NMI);
	asm volatile(ASM_TRY("1f")
		     "movl %0, 0xfee00310\n\t"
		     "movl %1, 0xfee00300\n\t"
		     "2: pause\n\t"
		     "jmp 2b\n\t"
		     "1:"
		     : : "r"(self << 24), "r"((uint32_t)APIC_ICR_DELIVERY_MODE_NMI) : "memory");
	check("self-nmi-delivered", fault_happened(), "got %s", vector_name(last_fault_vector()));
	if (!exitplan_detected()) {
		skip("apic-byte-write", "not under exitplan (bare Bochs dies of it)");
		skip("apic-base-move", "not under exitplan (hardware allows it)");
		return;
	}
	{
		uint32_t tpr = apic_read(XAPIC_REG_TPR);

		asm volatile("movb $0x20, 0xfee00080" : : : "memory");
		check("apic-byte-write", apic_read(XAPIC_REG_TPR) == tpr,
		      "TPR 0x%x -> 0x%x", tpr, apic_read(XAPIC_REG_TPR));
	}
	{
		uint64_t base = rdmsr(MSR_APIC_BASE);
		int v = wrmsr_safe(MSR_APIC_BASE, (base & 0xfff) | HV_WINDOW);

		check("apic-base-move", v == X86_EXC_GP && rdmsr(MSR_APIC_BASE) == base,
		      "WRMSR raised %s, base now 0x%llx", vector_name(v),
		      (unsigned long long)rdmsr(MSR_APIC_BASE));
	}
}

static void init_self(void)
{
	uint32_t self = apic_read(XAPIC_REG_ID) >> 24;

	printf("smp: sending INIT to myself (APIC ID %u)\n", self);
	console_flush();
	apic_write(XAPIC_REG_ICR_HIGH, self << 24);
	apic_write(XAPIC_REG_ICR_LOW, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT |
		   APIC_ICR_TRIGGER_LEVEL);
	for (;;)
		pause();
}

void guest_main(void)
{
	uint32_t ids[MAX_CPUS];
	uint32_t fw_cpus;
	bool ok = true;

	smp_x2apic = cmdline_has("x2apic");
	if (smp_x2apic && !(cpuid(1).ecx & (1u << 21))) {
		skip("x2apic", "CPUID.1:ECX.x2APIC is 0");
		smp_x2apic = false;
	}
	smp_apic_cycle = cmdline_has("apic-cycle");
	if (smp_apic_cycle && (smp_x2apic || !(cpuid(1).ecx & (1u << 21)) || !exitplan_detected())) {
		skip("apic-cycle", "%s", smp_x2apic ? "the CPUs stay in x2APIC mode (x2apic)" :
		     !(cpuid(1).ecx & (1u << 21)) ? "CPUID.1:ECX.x2APIC is 0" :
		     "not under exitplan: bare Bochs 2.7's APIC is dead after a global disable");
		smp_apic_cycle = false;
	}
	ncpus = smp_madt_apic_ids(ids, MAX_CPUS);
	fw_cpus = (uint32_t)fw_cfg_read_le(0x05, 2);
	printf("smp: %u CPUs in the MADT, fw_cfg says %u, %s mode\n", ncpus, fw_cpus,
	       smp_x2apic ? "x2APIC" : "xAPIC");
	/* Bare Bochs has no fw_cfg: its ports read all ones. */
	if (fw_cpus == 0xffff)
		skip("madt-matches-fw_cfg", "no fw_cfg (bare Bochs)");
	else
		check("madt-matches-fw_cfg", ncpus == fw_cpus, "MADT %u, fw_cfg %u", ncpus, fw_cpus);
	apic_init();
	icr_checks();
	if (cmdline_has("init-self"))
		init_self();
	if (ncpus < 2) {
		skip("smp", "one CPU");
		return;
	}
	irq_register(IPI_VECTOR, ipi_irq);
	/* The BSP first in the table (its index is 0 everywhere). */
	slots[0].apic_id = apic_read(XAPIC_REG_ID) >> 24;
	for (unsigned int i = 0, n = 1; i < ncpus; i++)
		if (ids[i] != slots[0].apic_id)
			slots[n++].apic_id = ids[i];
	lapic_setup(0);
	smp_install_trampoline(ap_main);
	sti();

	smi_to_ap("smi-ipi-parked-ap", slots[1].apic_id);
	smp_start_aps(ids, ncpus, cmdline_has("start=each"));
	for (unsigned int i = 1; i < ncpus; i++) {
		struct cpu_slot *s = &slots[i];

		wait_until(&s->checked, 1);
		ok = check("ap-started", s->checked && s->starts == 1, "APIC ID %u: starts %u",
			   s->apic_id, s->starts) && ok;
		check("ap-apic-id", s->apic_id_ok, "APIC ID %u: CPUID.1:EBX[31:24] or CPUID.0BH:EDX differs",
		      s->apic_id);
		if (exitplan_detected())
			check("ap-vmx-hidden", s->vmx_hidden, "APIC ID %u sees VMX", s->apic_id);
		check("ap-exception", s->exception_ok, "APIC ID %u: ud2 raised no #UD", s->apic_id);
		check("ap-x2apic-mode", s->x2apic_ok, "APIC ID %u not in x2APIC mode", s->apic_id);
		if (smp_x2apic && exitplan_detected())
			check("ap-x2apic-ldr", s->x2apic_ldr == logical_id(i),
			      "APIC ID %u: LDR 0x%x, want 0x%x", s->apic_id, s->x2apic_ldr, logical_id(i));
	}
	settle();
	/* Both STARTUPs of the pair went out; each AP ran the trampoline once. */
	check("aps-entered-once", smp_trampoline_arrivals() == ncpus - 1, "%u trampoline entries for %u APs",
	      smp_trampoline_arrivals(), ncpus - 1);
	if (!ok)
		return;
	smi_to_ap("smi-ipi-running-ap", slots[1].apic_id);
	ipi_checks();
	nmi_check();
	init_sipi_checks();
	state_checks();
	if (cmdline_has("irq-route"))
		irq_route_checks();
	if (cmdline_has("vectors"))
		vector_checks();
	if (cmdline_has("ioapic-rmw")) {
		uint32_t before, after, adds;

		mmio_write32(0xfec00000u, RMW_ENTRY_HIGH);
		before = mmio_read32(0xfec00010u);
		for (unsigned int i = 1; i < ncpus; i++) {
			slots[i].cmd = CMD_IOAPIC_RMW;
			smp_send_ipi(slots[i].apic_id, IPI_VECTOR);
		}
		wait_until(&rmw_ready, ncpus - 1);
		rmw_go = 1;
		rmw_ready++;
		ioapic_rmw_run();
		for (unsigned int i = 1; i < ncpus; i++)
			wait_until(&slots[i].cmd_done, CMD_IOAPIC_RMW);
		mmio_write32(0xfec00000u, RMW_ENTRY_HIGH);
		after = mmio_read32(0xfec00010u);
		adds = ((after >> 24) - (before >> 24)) & 0xff;
		check("ioapic-lock-rmw-atomic", adds == ((ncpus * RMW_ROUNDS) & 0xff),
		      "%u CPUs x %u LOCK ADDs on an I/O APIC entry added %u", ncpus, RMW_ROUNDS, adds);
		mmio_write32(0xfec00000u, RMW_ENTRY_HIGH);
		mmio_write32(0xfec00010u, before);
	}
	if (cmdline_has("ap-deaf")) {
		/* The last AP ends spinning with its APIC off: the machine must still stop. */
		struct cpu_slot *s = &slots[ncpus - 1];

		s->cmd = CMD_DEAF;
		smp_send_ipi(s->apic_id, IPI_VECTOR);
		wait_until(&s->cmd_done, CMD_DEAF);
		check("ap-deaf", s->cmd_done == CMD_DEAF, "APIC ID %u never went deaf", s->apic_id);
	}
}
