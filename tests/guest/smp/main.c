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
 * Options: start=each, x2apic (every CPU switches to x2APIC mode and
 * the IPIs go through MSR 0x830; skipped where CPUID has no x2APIC).
 * Runs unmodified on bare Bochs and under QEMU -smp n.
 */
#include "acpi.h"
#include "apic.h"
#include "console.h"
#include "fw_cfg.h"
#include "idt.h"
#include "string.h"
#include "test.h"
#include "x86.h"

const char guest_name[] = "smp";

#define MAX_CPUS		8
#define TRAMPOLINE_PA		0x7000		/* STARTUP vector 0x07 */
#define IPI_VECTOR		0x50
#define AP_STACK_SIZE		4096
#define AP_STACKS		32		/* every (re)start takes one */
#define WAIT_TICKS		50000000ull	/* Bochs: 50M instructions */
#define ABSENT_APIC_ID		0x3e

#define MSR_APIC_BASE		0x1b
#define APIC_BASE_EXTD_BIT	(1u << 10)
#define MSR_X2APIC_ICR		0x830

/* What each CPU (by its MADT index) did; written by the AP, read by the BSP. */
struct cpu_slot {
	uint32_t apic_id;
	volatile uint32_t starts;	/* times it came up through the trampoline */
	volatile uint32_t checked;	/* its per-CPU checks are done */
	volatile uint32_t apic_id_ok, vmx_hidden, exception_ok, x2apic_ok;
	volatile uint32_t ipis;		/* IPI_VECTOR interrupts taken */
	volatile uint32_t cmd, cmd_done;
	volatile uint32_t armed;	/* about to halt with interrupts off */
	volatile uint32_t nmis;
};

static struct cpu_slot slots[MAX_CPUS];
static unsigned int ncpus;
static bool use_x2apic;
static volatile uint32_t ap_lock;

enum { CMD_NONE, CMD_NMI_HALT };

uint8_t ap_stacks[AP_STACKS][AP_STACK_SIZE] __attribute__((aligned(16)));
volatile uint32_t ap_stack_next;
void ap_main(void);

/*
 * The trampoline, copied to TRAMPOLINE_PA: real mode at CS = 0x0700, IP 0,
 * to 32-bit protected mode with a flat GDT of entry.S's selectors (0x08
 * code, 0x10 data), then to ap_entry32 in the image.
 */
extern const char tramp_start[], tramp_end[], tramp_arrivals[];
asm(".pushsection .rodata\n"
    ".balign 16\n"
    "tramp_start:\n"
    ".code16\n"
    "	cli\n"
    "	movw %cs, %ax\n"
    "	movw %ax, %ds\n"
    "	lock incl tramp_arrivals - tramp_start\n"
    "	lgdtl tramp_gdtr - tramp_start\n"
    "	movl %cr0, %eax\n"
    "	orl $1, %eax\n"
    "	movl %eax, %cr0\n"
    "	ljmpl $0x08, $ap_entry32\n"
    ".balign 8\n"
    "tramp_gdt:\n"
    "	.quad 0\n"
    "	.quad 0x00cf9a000000ffff\n"	/* 0x08: flat 32-bit code */
    "	.quad 0x00cf92000000ffff\n"	/* 0x10: flat data */
    "tramp_gdtr:\n"
    "	.word 23\n"
    "	.long tramp_gdt - tramp_start + 0x7000\n"
    ".balign 4\n"
    "tramp_arrivals:\n"
    "	.long 0\n"
    "tramp_end:\n"
    ".code32\n"
    ".popsection\n"
    ".text\n"
    "ap_entry32:\n"
    "	movw $0x10, %ax\n"
    "	movw %ax, %ds\n"
    "	movw %ax, %es\n"
    "	movw %ax, %ss\n"
    "	movw %ax, %fs\n"
    "	movw %ax, %gs\n"
    "	movl $1, %eax\n"
    "	lock xaddl %eax, ap_stack_next\n"
    "	andl $31, %eax\n"
    "	incl %eax\n"
    "	shll $12, %eax\n"
    "	leal ap_stacks(%eax), %esp\n"
    "	pushl $0\n"
    "	popfl\n"
    "	call ap_main\n"
    "1:	cli\n"
    "	hlt\n"
    "	jmp 1b\n");

static volatile uint32_t *arrivals(void)
{
	return phys_ptr(TRAMPOLINE_PA + (tramp_arrivals - tramp_start));
}

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

static uint32_t lapic_read(uint32_t reg)
{
	if (use_x2apic)
		return (uint32_t)rdmsr(0x800 + reg / 16);
	return apic_read(reg);
}

static void lapic_write(uint32_t reg, uint32_t v)
{
	if (use_x2apic)
		wrmsr(0x800 + reg / 16, v);
	else
		apic_write(reg, v);
}

static uint32_t lapic_id(void)
{
	return use_x2apic ? lapic_read(XAPIC_REG_ID) : lapic_read(XAPIC_REG_ID) >> 24;
}

static void lapic_eoi(void)
{
	lapic_write(XAPIC_REG_EOI, 0);
}

/* Send one IPI: @low is the ICR's low half, @dest the destination field. */
static void send_ipi(uint32_t dest, uint32_t low)
{
	if (use_x2apic) {
		wrmsr(MSR_X2APIC_ICR, ((uint64_t)dest << 32) | low);
		return;
	}
	apic_write(XAPIC_REG_ICR_HIGH, dest << 24);
	apic_write(XAPIC_REG_ICR_LOW, low);
	for (unsigned int i = 0; i < 100000 && (apic_read(XAPIC_REG_ICR_LOW) & APIC_ICR_PENDING); i++)
		pause();
}

/* The logical destination of the CPU in slot @i: flat xAPIC bit i, or x2APIC's own. */
static uint32_t logical_id(unsigned int i)
{
	uint32_t id = slots[i].apic_id;

	return use_x2apic ? ((id >> 4) << 16) | (1u << (id & 0xf)) : 1u << i;
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

/* This CPU's APIC: enabled, flat logical model, x2APIC if asked. */
static void lapic_setup(unsigned int i)
{
	if (use_x2apic)
		wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | APIC_BASE_EXTD_BIT);
	lapic_write(XAPIC_REG_SVR, APIC_SVR_ENABLE | APIC_SPURIOUS_VECTOR);
	lapic_write(XAPIC_REG_TPR, 0);
	if (!use_x2apic) {
		apic_write(XAPIC_REG_DFR, 0xffffffffu);
		apic_write(XAPIC_REG_LDR, logical_id(i) << 24);
	}
}

/* --- the APs ------------------------------------------------------------- */

static void ap_checks(struct cpu_slot *s)
{
	struct cpuid_regs r = cpuid(1);

	s->apic_id_ok = (r.ebx >> 24) == s->apic_id;
	s->vmx_hidden = !(r.ecx & (1u << 5));
	s->x2apic_ok = !use_x2apic || (rdmsr(MSR_APIC_BASE) & APIC_BASE_EXTD_BIT);
	/* The IDT's fault recovery is one for all CPUs: under ap_lock. */
	expect_fault(X86_EXC_UD);
	asm volatile(ASM_TRY("1f") "ud2\n\t" "1:" : : : "memory");
	s->exception_ok = fault_happened();
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
			s->cmd_done = cmd;
			continue;
		}
		sti_hlt();
	}
}

/* --- the BSP -------------------------------------------------------------- */

static bool wait_until(volatile uint32_t *p, uint32_t value)
{
	uint64_t t = rdtsc();

	while (*p < value && rdtsc() - t < WAIT_TICKS)
		pause();
	return *p >= value;
}

static void settle(void)
{
	uint64_t t = rdtsc();

	while (rdtsc() - t < 2000000)
		pause();
}

static unsigned int madt_apic_ids(uint32_t *ids, unsigned int max)
{
	const struct acpi_rsdp *rsdp = acpi_find_rsdp();
	const struct acpi_header *madt = rsdp ? acpi_find_table(rsdp, "APIC") : NULL;
	const uint8_t *p, *end;
	unsigned int n = 0;

	if (!madt)
		return 0;
	p = (const uint8_t *)madt + sizeof(*madt) + 8;	/* local APIC address, flags */
	end = (const uint8_t *)madt + madt->length;
	while (p + 2 <= end && p[1] >= 2) {
		/* Type 0: processor local APIC (ACPI 6.x 5.2.12.2), enabled if flags bit 0. */
		if (p[0] == 0 && p[1] >= 8 && (p[4] & 1) && n < max)
			ids[n++] = p[3];
		p += p[1];
	}
	return n;
}

static void start_aps(bool each)
{
	uint32_t init = APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT | APIC_ICR_TRIGGER_LEVEL;
	uint32_t sipi = APIC_ICR_DELIVERY_MODE_STARTUP | (TRAMPOLINE_PA >> 12);

	if (!each) {
		send_ipi(0, init | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		send_ipi(0, (init & ~(uint32_t)APIC_ICR_LEVEL_ASSERT) | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		settle();
		send_ipi(0, sipi | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		settle();
		send_ipi(0, sipi | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
		return;
	}
	for (unsigned int i = 1; i < ncpus; i++) {
		send_ipi(slots[i].apic_id, init);
		settle();
		send_ipi(slots[i].apic_id, sipi);
		settle();
		send_ipi(slots[i].apic_id, sipi);
	}
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
		send_ipi(slots[i].apic_id, IPI_VECTOR);
	count_check("ipi-physical-each-ap", aps);

	count_start();
	send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_SELF);
	count_check("ipi-self", 1);

	count_start();
	send_ipi(slots[0].apic_id, IPI_VECTOR);
	count_check("ipi-physical-to-self", 1);

	count_start();
	send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_ALL_EXCLUDING_SELF);
	count_check("ipi-all-excluding-self", aps);

	count_start();
	send_ipi(0, IPI_VECTOR | APIC_ICR_SHORTHAND_ALL_INCLUDING_SELF);
	count_check("ipi-all-including-self", all);

	count_start();
	send_ipi(use_x2apic ? 0xffffffffu : 0xff, IPI_VECTOR);
	count_check("ipi-physical-broadcast", all);

	/* Logical: the APs with an odd index, and in x2APIC mode cluster 0's. */
	for (unsigned int i = 1; i < ncpus; i += 2)
		logical |= logical_id(i);
	count_start();
	if (logical) {
		uint32_t mask = 0;

		for (unsigned int i = 1; i < ncpus; i += 2)
			mask |= 1u << i;
		send_ipi(logical, IPI_VECTOR | APIC_ICR_DEST_LOGICAL);
		count_check("ipi-logical", mask);
	}
}

static void nmi_check(void)
{
	struct cpu_slot *s = &slots[1];

	s->cmd = CMD_NMI_HALT;
	send_ipi(s->apic_id, IPI_VECTOR);		/* wake it for the command */
	if (!wait_until(&s->armed, 1)) {
		check("nmi-wakes-cli-hlt", false, "the AP never armed");
		return;
	}
	settle();					/* let it reach the HLT */
	send_ipi(s->apic_id, APIC_ICR_DELIVERY_MODE_NMI);
	wait_until(&s->cmd_done, CMD_NMI_HALT);
	check("nmi-wakes-cli-hlt", s->nmis == 1 && s->cmd_done == CMD_NMI_HALT,
	      "NMIs taken %u, command done %u", s->nmis, s->cmd_done);
}

static void init_sipi_checks(void)
{
	struct cpu_slot *s = &slots[1];
	uint32_t before = *arrivals(), starts = s->starts;
	uint32_t sipi = APIC_ICR_DELIVERY_MODE_STARTUP | (TRAMPOLINE_PA >> 12);

	/* INIT to a running AP: it waits for STARTUP again; one STARTUP restarts it. */
	send_ipi(s->apic_id, APIC_ICR_DELIVERY_MODE_INIT | APIC_ICR_LEVEL_ASSERT |
		 APIC_ICR_TRIGGER_LEVEL);
	settle();
	check("init-stops-running-ap", *arrivals() == before && s->starts == starts,
	      "arrivals %u -> %u", before, *arrivals());
	send_ipi(s->apic_id, sipi);
	wait_until(&s->starts, starts + 1);
	check("init-sipi-restarts-ap", s->starts == starts + 1 && *arrivals() == before + 1,
	      "starts %u -> %u, arrivals %u -> %u", starts, s->starts, before, *arrivals());
	/* A second STARTUP to a running CPU is ignored. */
	send_ipi(s->apic_id, sipi);
	settle();
	check("second-sipi-ignored", *arrivals() == before + 1 && s->starts == starts + 1,
	      "arrivals %u -> %u", before, *arrivals());
	/* A STARTUP nobody has the APIC ID for goes nowhere. */
	send_ipi(ABSENT_APIC_ID, sipi);
	settle();
	check("sipi-to-absent-cpu-dropped", *arrivals() == before + 1,
	      "arrivals %u -> %u", before, *arrivals());
	/* The restarted AP still takes IPIs. */
	count_start();
	send_ipi(s->apic_id, IPI_VECTOR);
	count_check("ipi-after-restart", 1u << 1);
}

void guest_main(void)
{
	uint32_t ids[MAX_CPUS];
	uint32_t fw_cpus;
	bool ok = true;

	use_x2apic = cmdline_has("x2apic");
	if (use_x2apic && !(cpuid(1).ecx & (1u << 21))) {
		skip("x2apic", "CPUID.1:ECX.x2APIC is 0");
		use_x2apic = false;
	}
	ncpus = madt_apic_ids(ids, MAX_CPUS);
	fw_cpus = (uint32_t)fw_cfg_read_le(0x05, 2);
	printf("smp: %u CPUs in the MADT, fw_cfg says %u, %s mode\n", ncpus, fw_cpus,
	       use_x2apic ? "x2APIC" : "xAPIC");
	check("madt-matches-fw_cfg", ncpus == fw_cpus, "MADT %u, fw_cfg %u", ncpus, fw_cpus);
	if (ncpus < 2) {
		skip("smp", "one CPU");
		return;
	}
	apic_init();
	irq_register(IPI_VECTOR, ipi_irq);
	/* The BSP first in the table (its index is 0 everywhere). */
	slots[0].apic_id = apic_read(XAPIC_REG_ID) >> 24;
	for (unsigned int i = 0, n = 1; i < ncpus; i++)
		if (ids[i] != slots[0].apic_id)
			slots[n++].apic_id = ids[i];
	lapic_setup(0);
	memcpy(phys_ptr(TRAMPOLINE_PA), tramp_start, tramp_end - tramp_start);
	*arrivals() = 0;
	sti();

	start_aps(cmdline_has("start=each"));
	for (unsigned int i = 1; i < ncpus; i++) {
		struct cpu_slot *s = &slots[i];

		wait_until(&s->checked, 1);
		ok = check("ap-started", s->checked && s->starts == 1, "APIC ID %u: starts %u",
			   s->apic_id, s->starts) && ok;
		check("ap-apic-id", s->apic_id_ok, "APIC ID %u: CPUID.1:EBX[31:24] differs", s->apic_id);
		check("ap-vmx-hidden", s->vmx_hidden, "APIC ID %u sees VMX", s->apic_id);
		check("ap-exception", s->exception_ok, "APIC ID %u: ud2 raised no #UD", s->apic_id);
		check("ap-x2apic-mode", s->x2apic_ok, "APIC ID %u not in x2APIC mode", s->apic_id);
	}
	settle();
	/* Both STARTUPs of the pair went out; each AP ran the trampoline once. */
	check("aps-entered-once", *arrivals() == ncpus - 1, "%u trampoline entries for %u APs",
	      *arrivals(), ncpus - 1);
	if (!ok)
		return;
	ipi_checks();
	nmi_check();
	init_sipi_checks();
}
