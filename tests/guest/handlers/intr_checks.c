// SPDX-License-Identifier: GPL-2.0-only
/*
 * Interrupts taken at the instruction boundary where hardware takes them
 * (SDM Vol. 3A 6.8.3, 6.7.1, 11.8.4; kvm-unit-tests' eventinj, vmexit's
 * self_ipi_sti_*, realmode's sti_inhibit), each the same on bare Bochs:
 *
 *   intr-self-ipi-sti-window   a self-IPI sent with IF=0 is taken right
 *				after `sti; nop`, before the CLI after it --
 *				three times from the same RIP, the timer's
 *				LVT (TSC-deadline mode, not armed) on the
 *				same vector
 *   intr-two-pending-in-order  two self-IPIs of one priority class sent
 *				with IF=0: both taken in `sti; nop`, the
 *				higher vector first, the second at the first's
 *				IRET
 *   intr-self-ipi-sti-hlt      a pending self-IPI ends `sti; hlt` at once
 *				(a backstop timer says if it did not)
 *   intr-8259-pending-sti-hlt  the 8254's IRQ 0, requested in the 8259
 *				while IF=0, ends `sti; hlt` at once
 *   intr-nmi-nested-after-iret an NMI sent from the NMI handler waits for
 *				its IRET and comes at that IRET
 *   intr-nmi-iret-in-handler   an IRET inside the NMI handler ends NMI
 *				blocking: the held-back NMI comes right after it
 *
 * With x2apic_too, the first two again through the x2APIC ICR after the
 * switch to x2APIC mode (one way on Bochs: last), and an EOI of 1, #GP.
 */
#include "apic.h"
#include "console.h"
#include "idt.h"
#include "intr_checks.h"
#include "test.h"
#include "x86.h"

#define VEC_LOW			0x61
#define VEC_HIGH		0x62	/* same priority class as VEC_LOW */
#define PIT_VECTOR		0x20
#define BACKSTOP_COUNT		5000000u	/* APIC timer: far beyond any delivery */
#define WAIT_TICKS		20000000ull
#define ROUNDS			3

static volatile uint32_t taken, order[4];
static bool x2;

static void eoi(void)
{
	if (x2)
		wrmsr(MSR_IA32_X2APIC_EOI, 0);
	else
		apic_eoi();
}

static void record_irq(struct trap_frame *f)
{
	if (taken < 4)
		order[taken] = f->vector;
	taken++;
	eoi();
}

static void self_ipi(uint8_t vector)
{
	if (x2)
		wrmsr(MSR_IA32_X2APIC_ICR, (uint32_t)APIC_ICR_SHORTHAND_SELF | vector);
	else
		apic_write(XAPIC_REG_ICR_LOW, (uint32_t)APIC_ICR_SHORTHAND_SELF | vector);
}

/*
 * `sti; nop; cli` at one RIP for every caller (noinline: an unrolled loop
 * would give each round its own): an interrupt taken in the window comes
 * back to where the last one did, as a guest's loop does.
 */
static void __attribute__((noinline)) sti_nop_cli(void)
{
	asm volatile("sti; nop; cli" : : : "memory");
}

static void __attribute__((noinline)) sti_hlt_cli(void)
{
	asm volatile("sti; hlt; cli" : : : "memory");
}

/* With IF=1 until @n interrupts were taken since @before (a late one is not lost). */
static void drain(uint32_t before, uint32_t n)
{
	sti();
	for (uint64_t t = rdtsc(); taken - before < n && rdtsc() - t < WAIT_TICKS;)
		pause();
	cli();
}

static void check_sti_window(const char *mode)
{
	uint32_t in_window[ROUNDS];
	bool ok = true;
	char name[64];

	/*
	 * The timer's LVT on the same vector, in TSC-deadline mode and not
	 * armed (kvm-unit-tests' vmexit shares it so): the vector alone is
	 * no timer's interrupt.
	 */
	if (x2)
		wrmsr(MSR_IA32_X2APIC_FIRST + (XAPIC_REG_LVT_TIMER >> 4),
		      APIC_LVT_TIMER_MODE_TSC_DEADLINE | VEC_LOW);
	else
		apic_write(XAPIC_REG_LVT_TIMER, APIC_LVT_TIMER_MODE_TSC_DEADLINE | VEC_LOW);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		uint32_t before = taken;

		cli();
		self_ipi(VEC_LOW);
		sti_nop_cli();		/* taken after the NOP, before the CLI */
		in_window[i] = taken - before;
		ok = ok && in_window[i] == 1;
		drain(before, 1);
	}
	if (x2)
		wrmsr(MSR_IA32_X2APIC_FIRST + (XAPIC_REG_LVT_TIMER >> 4),
		      APIC_LVT_MASKED | APIC_TIMER_VECTOR);
	else
		apic_timer_stop();
	snprintf(name, sizeof(name), "intr-self-ipi-sti-window%s", mode);
	check(name, ok, "self-IPIs taken in sti; nop: %u, %u, %u of 1 each", in_window[0],
	      in_window[1], in_window[2]);
}

static void check_two_pending(const char *mode)
{
	uint32_t got = 0, first = 0, second = 0;
	bool ok = true;
	char name[64];

	for (unsigned int i = 0; i < ROUNDS; i++) {
		cli();
		taken = 0;		/* order[] from its start */
		order[0] = order[1] = 0;
		self_ipi(VEC_LOW);
		self_ipi(VEC_HIGH);
		sti_nop_cli();
		got = taken;
		first = order[0];
		second = order[1];
		ok = ok && got == 2 && first == VEC_HIGH && second == VEC_LOW;
		drain(0, 2);
	}
	snprintf(name, sizeof(name), "intr-two-pending-in-order%s", mode);
	check(name, ok, "%u of 2 taken in sti; nop, vectors 0x%x then 0x%x (want 0x%x then 0x%x)",
	      got, first, second, VEC_HIGH, VEC_LOW);
}

static void check_sti_hlt(void)
{
	uint32_t timer_before = apic_timer_irqs, woken = 0;

	for (unsigned int i = 0; i < ROUNDS; i++) {
		uint32_t before = taken;

		cli();
		self_ipi(VEC_LOW);
		apic_timer_oneshot(BACKSTOP_COUNT);
		sti_hlt_cli();
		woken += taken - before == 1;
		apic_timer_stop();
		drain(before, 1);
	}
	check("intr-self-ipi-sti-hlt", woken == ROUNDS && apic_timer_irqs == timer_before,
	      "%u of %u HLTs ended by the pending self-IPI, %u by the backstop timer", woken,
	      ROUNDS, apic_timer_irqs - timer_before);
}

static volatile uint32_t pit_irqs;

static void pit_irq(struct trap_frame *f)
{
	(void)f;
	pit_irqs++;
	outb(0x20, 0x20);		/* non-specific EOI */
}

/* The master 8259's IRR (OCW3). */
static uint8_t pic1_irr(void)
{
	outb(0x20, 0x0a);
	return inb(0x20);
}

static void check_8259_pending_hlt(void)
{
	static const uint8_t init[][2] = {
		{ 0x20, 0x11 }, { 0x21, PIT_VECTOR }, { 0x21, 0x04 }, { 0x21, 0x01 },
		{ 0xa0, 0x11 }, { 0xa1, PIT_VECTOR + 8 }, { 0xa1, 0x02 }, { 0xa1, 0x01 },
		{ 0x21, 0xfe }, { 0xa1, 0xff },
	};
	uint32_t timer_before = apic_timer_irqs, woken = 0, requested = 0;
	uint32_t lint0 = apic_read(XAPIC_REG_LVT_LINT0);

	irq_register(PIT_VECTOR, pit_irq);
	cli();
	/*
	 * The 8259's INT reaches the CPU through LINT0 in ExtINT mode (the
	 * virtual wire the firmware sets up); checks before this one may
	 * have software-disabled the APIC, which masks it: set it again, as
	 * a kernel that uses the 8259 does.
	 */
	apic_write(XAPIC_REG_LVT_LINT0, APIC_LVT_DELIVERY_MODE_EXTINT);
	for (unsigned int i = 0; i < sizeof(init) / sizeof(init[0]); i++)
		outb(init[i][0], init[i][1]);
	for (unsigned int i = 0; i < ROUNDS; i++) {
		uint32_t before = pit_irqs;
		bool irr = false;

		outb(0x43, 0x30);		/* channel 0, mode 0: one request at the count */
		outb(0x40, 100);
		outb(0x40, 0);
		for (uint64_t t = rdtsc(); !irr && rdtsc() - t < WAIT_TICKS;)
			irr = pic1_irr() & 0x01;
		requested += irr;
		apic_timer_oneshot(BACKSTOP_COUNT);
		sti_hlt_cli();
		woken += pit_irqs - before == 1;
		apic_timer_stop();
		sti();
		for (uint64_t t = rdtsc(); pit_irqs == before && rdtsc() - t < WAIT_TICKS;)
			pause();
		cli();
	}
	pic_mask_all();
	apic_write(XAPIC_REG_LVT_LINT0, lint0);
	check("intr-8259-pending-sti-hlt", requested == ROUNDS && woken == ROUNDS &&
	      apic_timer_irqs == timer_before,
	      "IR0 requested with IF=0 %u of %u times; %u HLTs ended by it, %u by the backstop timer",
	      requested, ROUNDS, woken, apic_timer_irqs - timer_before);
}

/* ---- NMIs ---- */

static volatile uint32_t nmis, nmis_in_handler, nmis_after_inner_iret;
static volatile bool nmi_inner_iret;

static void send_self_nmi(void)
{
	if (x2) {
		wrmsr(MSR_IA32_X2APIC_ICR, ((uint64_t)rdmsr(MSR_IA32_X2APIC_APICID) << 32) |
		      APIC_ICR_DELIVERY_MODE_NMI);
		return;
	}
	apic_write(XAPIC_REG_ICR_HIGH, apic_read(XAPIC_REG_ID) & 0xff000000u);
	apic_write(XAPIC_REG_ICR_LOW, (uint32_t)APIC_ICR_DELIVERY_MODE_NMI);
}

static void nmi_handler(struct trap_frame *f)
{
	(void)f;
	if (++nmis != 1)
		return;			/* the nested one */
	send_self_nmi();
	/* Blocked by this NMI until its IRET, however long it takes. */
	for (uint64_t t = rdtsc(); rdtsc() - t < 200000;)
		pause();
	nmis_in_handler = nmis;
	if (!nmi_inner_iret)
		return;
	/* An IRET to the next instruction, still in the handler, ends the blocking. */
	asm volatile("pushfl\n\t"
		     "pushl %%cs\n\t"
		     "pushl $1f\n\t"
		     "iretl\n"
		     "1:" : : : "memory");
	nmis_after_inner_iret = nmis;
}

static void check_nmis(void)
{
	uint32_t after_iret, at_end;

	nmi_register(nmi_handler);
	cli();
	nmis = 0;
	nmi_inner_iret = false;
	send_self_nmi();		/* IF does not mask an NMI: taken at once */
	after_iret = nmis;
	asm volatile("sti; nop; cli" : : : "memory");
	at_end = nmis;
	check("intr-nmi-nested-after-iret", nmis_in_handler == 1 && after_iret == 2,
	      "%u NMIs while the first's handler ran (want 1), %u right after its IRET (want 2), "
	      "%u after sti; nop", nmis_in_handler, after_iret, at_end);

	nmis = 0;
	nmi_inner_iret = true;
	send_self_nmi();
	after_iret = nmis;
	check("intr-nmi-iret-in-handler", nmis_in_handler == 1 && nmis_after_inner_iret == 2,
	      "%u NMIs before the handler's own IRET (want 1), %u right after it (want 2), "
	      "%u when the handler returned", nmis_in_handler, nmis_after_inner_iret, after_iret);
	nmi_register(NULL);
}

/* ---- the firmware's timer ---- */

/*
 * IRQ 0 on the firmware's vector 8, which in protected mode is #DF's: a
 * gate of its own that pushes nothing (no error code), counts, and ends
 * it in the 8259.
 */
volatile uint32_t fw_irq0_count;
void fw_irq0_stub(void);
asm(".text\n"
    ".globl fw_irq0_stub\n"
    "fw_irq0_stub:\n"
    "	lock incl fw_irq0_count\n"
    "	pushl %eax\n"
    "	movb $0x20, %al\n"
    "	outb %al, $0x20\n"		/* non-specific EOI */
    "	popl %eax\n"
    "	iretl\n");

struct idtr32 {
	uint16_t limit;
	uint32_t base;
} __attribute__((packed));

void check_firmware_timer(void)
{
	uint32_t timer_before, n;
	struct idtr32 idtr;
	uint64_t *idt, old;
	uint16_t cs;

	asm volatile("sidt %0" : "=m"(idtr));
	asm volatile("movw %%cs, %0" : "=r"(cs));
	idt = phys_ptr(idtr.base);
	old = idt[8];
	/* A 32-bit interrupt gate (type 0xe, present) to the stub. */
	idt[8] = ((uint64_t)((uint32_t)(uintptr_t)fw_irq0_stub & 0xffff0000u) << 32) |
		 (0x8e00ull << 32) | ((uint32_t)cs << 16) |
		 ((uint32_t)(uintptr_t)fw_irq0_stub & 0xffffu);
	apic_init();
	timer_before = apic_timer_irqs;
	apic_timer_oneshot(BACKSTOP_COUNT * 4);
	/*
	 * Nothing programmed: the firmware's 8254 (channel 0, 18.2 Hz) and
	 * 8259s (IRQ 0 open, vector 8), which it left running for the guest,
	 * as a real-mode guest that HLTs relies on (kvm-unit-tests' realmode).
	 */
	asm volatile("sti; hlt; cli" : : : "memory");
	n = fw_irq0_count;
	apic_timer_stop();
	pic_mask_all();
	idt[8] = old;
	check("intr-firmware-timer-wakes-hlt", n >= 1 && apic_timer_irqs == timer_before,
	      "%u IRQ 0s at the firmware's vector 8 ended the HLT, %u backstop timer interrupts", n,
	      apic_timer_irqs - timer_before);
}

void check_interrupt_delivery(bool x2apic_too)
{
	apic_init();
	irq_register(VEC_LOW, record_irq);
	irq_register(VEC_HIGH, record_irq);
	x2 = false;
	taken = 0;
	check_sti_window("");
	check_two_pending("");
	check_sti_hlt();
	check_8259_pending_hlt();
	check_nmis();
	if (!x2apic_too)
		return;
	if (!(cpuid(1).ecx & CPUID_1_ECX_X2APIC)) {
		skip("intr-self-ipi-sti-window-x2apic", "no x2APIC (CPUID.1:ECX[21])");
		return;
	}
	wrmsr(MSR_IA32_APIC_BASE, rdmsr(MSR_IA32_APIC_BASE) | APIC_BASE_EXTD);
	x2 = true;
	taken = 0;
	check_sti_window("-x2apic");
	check_two_pending("-x2apic");
	/* Only 0 is an EOI in x2APIC mode (SDM Vol. 3A 11.12.1): nothing else reaches the APIC. */
	check("intr-x2apic-eoi-nonzero-gp", wrmsr_safe(MSR_IA32_X2APIC_EOI, 1) == X86_EXC_GP,
	      "WRMSR 0x80b with 1: %s", vector_name(wrmsr_safe(MSR_IA32_X2APIC_EOI, 1)));
}
