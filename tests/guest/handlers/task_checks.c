// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware task switches that succeed (issue 7: TASK_SWITCH emulated):
 * a far JMP to a TSS and back, a CALL through a task gate in the GDT
 * and back with IRET, INT n through a task gate in the IDT, a #GP
 * delivered through a task gate with its error code on the new task's
 * stack, an external interrupt (a self-IPI) and NMIs through task gates
 * (the IRET back unblocks NMIs), a TSS with its T flag set: #DB
 * with DR6.BT before the new task's first instruction, and a far JMP to
 * a TSS whose EFLAGS has VM set: a virtual-8086 task, which comes back
 * with INT n through a task gate.  And 16-bit TSSs (Vol. 3A 8.6): a JMP
 * from the 32-bit main task to a 16-bit task, from it to another and back
 * to the main task; a CALL to a 16-bit task and its IRET back; a #GP
 * through a task gate to a 16-bit TSS, its error code a word.
 * Each new task records what it finds (its registers, EFLAGS,
 * CR0, the busy bits of both TSS descriptors, its back link) and returns;
 * the checks compare with SDM Vol. 3A 8.3.  They pass on bare Bochs
 * (tests/guest/bochs-bare.sh) as under exitplan.
 *
 * The checks leave TR at the TSS of the main task (this file's tss_a);
 * the GDT and IDT they change are restored.
 */
#include "apic.h"
#include "console.h"
#include "exitplan.h"
#include "string.h"
#include "task_checks.h"
#include "test.h"
#include "tss.h"	/* struct tss32, the hypervisor's too */
#include "x86.h"

/* The selectors of this file's GDT: entry.S's first four entries, then these. */
#define SEL_CODE	0x08
#define SEL_DATA	0x10
#define SEL_TSS_A	0x20	/* the main task */
#define SEL_TSS_B	0x28	/* far JMP */
#define SEL_TSS_C	0x30	/* CALL through the task gate, IRET */
#define SEL_GATE_C	0x38	/* task gate to TSS C */
#define SEL_TSS_D	0x40	/* INT 0x41 through a task gate in the IDT */
#define SEL_TSS_E	0x48	/* #GP through a task gate in the IDT */
#define SEL_TSS_F	0x50	/* an external interrupt through a task gate in the IDT */
#define SEL_TSS_G	0x58	/* NMIs through a task gate in the IDT */
#define SEL_TSS_H	0x60	/* T flag set */
#define SEL_TSS_I	0x68	/* #DB through a task gate in the IDT */
#define SEL_TSS_V	0x70	/* far JMP into virtual-8086 mode */
#define SEL_TSS16_J	0x78	/* 16-bit: JMP from A; JMPs to M */
#define SEL_TSS16_M	0x80	/* 16-bit: JMP from J; JMPs back to A */
#define SEL_TSS16_K	0x88	/* 16-bit: CALL from A, IRET back */
#define SEL_TSS16_L	0x90	/* 16-bit: #GP through a task gate in the IDT */
#define SEL_CODE_T16	0x98	/* the 16-bit tasks' code, based at task16_base: IP fits in 16 bits */
#define SEL_STACK16	0xa0	/* their stack: SS.B clear (SP), based at task16_stack */
#define GDT_ENTRIES	21
#define DR6_BT		(1u << 15)

#define INT_VECTOR	0x41
#define VM86_VECTOR	0x42	/* INT n in the virtual-8086 task: a task gate back to A */
#define IRQ_VECTOR	0x52	/* the self-IPI */
#define GP_SELECTOR	0x1238	/* beyond the GDT: MOV to FS raises #GP(0x1238) */
/* The high dword of a TSS descriptor: bit 9 is the busy flag (type bit 1). */
#define DESC_HI_BUSY	(1u << 9)
#define EFLAGS_NT	(1u << 14)
#define CR0_TS		(1u << 3)

/* What a task saw when it started (the RECORD macro below), at these offsets. */
struct task_seen {
	uint32_t gpr[8];	/* 0 */
	uint32_t eflags;	/* 32 */
	uint32_t cr0;		/* 36 */
	uint32_t desc_a_hi;	/* 40: the main task's TSS descriptor, high dword */
	uint32_t desc_self_hi;	/* 44: its own */
	uint32_t link;		/* 48: its TSS's previous task link */
	uint32_t error_code;	/* 52: task E: popped from its stack */
	uint32_t esp_after_pop;	/* 56 */
	uint32_t count;		/* 60: how many times a task started */
};

struct tss32 tss_a, tss_b, tss_c, tss_d, tss_e, tss_f, tss_g, tss_h, tss_i, tss_v;
struct tss16 tss16_j, tss16_m, tss16_k, tss16_l;
/* What task M saw in FS and GS (a 16-bit TSS has neither: null). */
volatile uint32_t t16_fs_gs;
/* What task I (the #DB task) saw: DR6, its back link, how often it ran. */
volatile uint32_t dbg_dr6, dbg_link, dbg_count;
uint64_t task_gdt[GDT_ENTRIES] __attribute__((aligned(8)));
volatile struct task_seen seen;
static struct tss32 tss_f_start;	/* what task F starts with */
static uint8_t task_stacks[8][1024] __attribute__((aligned(16)));

void task_b_entry(void);
void task_c_entry(void);
void task_d_entry(void);
void task_e_entry(void);
void task_f_entry(void);
void task_g_entry(void);
void task_h_entry(void);
void task_i_entry(void);
void task16_base(void);
void task_j_entry(void);
void task_m_entry(void);
void task_k_entry(void);
void task_l_entry(void);

/*
 * Each task: record, then go back (JMP to A, or IRET to the task that
 * nested it); started again, it resumes after that and starts over.
 */
asm(".macro RECORD self, tss\n\t"
    "movl %eax, seen\n\t"
    "movl %ecx, seen+4\n\t"
    "movl %edx, seen+8\n\t"
    "movl %ebx, seen+12\n\t"
    "movl %esp, seen+16\n\t"
    "movl %ebp, seen+20\n\t"
    "movl %esi, seen+24\n\t"
    "movl %edi, seen+28\n\t"
    "pushfl\n\t"
    "popl seen+32\n\t"
    "movl %cr0, %eax\n\t"
    "movl %eax, seen+36\n\t"
    "movl task_gdt+0x24, %eax\n\t"
    "movl %eax, seen+40\n\t"
    "movl task_gdt+\\self+4, %eax\n\t"
    "movl %eax, seen+44\n\t"
    "movzwl \\tss, %eax\n\t"
    "movl %eax, seen+48\n\t"
    "incl seen+60\n\t"
    ".endm\n\t"
    ".text\n\t"
    ".globl task_b_entry\n"
    "task_b_entry:\n\t"
    "RECORD 0x28, tss_b\n\t"
    "ljmp $0x20, $0\n\t"
    "jmp task_b_entry\n\t"
    ".globl task_c_entry\n"
    "task_c_entry:\n\t"
    "RECORD 0x30, tss_c\n\t"
    "iretl\n\t"
    "jmp task_c_entry\n\t"
    ".globl task_d_entry\n"
    "task_d_entry:\n\t"
    "RECORD 0x40, tss_d\n\t"
    "iretl\n\t"
    "jmp task_d_entry\n\t"
    ".globl task_e_entry\n"
    "task_e_entry:\n\t"
    "RECORD 0x48, tss_e\n\t"
    "popl %eax\n\t"
    "movl %eax, seen+52\n\t"
    "movl %esp, seen+56\n\t"
    /* Resume the main task after the faulting instruction (tss_a.eip). */
    "movl $task_gp_resume, tss_a+32\n\t"
    "iretl\n\t"
    "jmp task_e_entry\n\t"
    ".globl task_f_entry\n"
    "task_f_entry:\n\t"
    "RECORD 0x50, tss_f\n\t"
    "call apic_eoi\n\t"
    "iretl\n\t"
    "jmp task_f_entry\n\t"
    ".globl task_g_entry\n"
    "task_g_entry:\n\t"
    "RECORD 0x58, tss_g\n\t"
    "iretl\n\t"
    "jmp task_g_entry\n\t"
    ".globl task_h_entry\n"
    "task_h_entry:\n\t"
    "RECORD 0x60, tss_h\n\t"
    "ljmp $0x20, $0\n\t"
    "jmp task_h_entry\n\t"
    ".globl task_i_entry\n"
    "task_i_entry:\n\t"
    "movl %dr6, %eax\n\t"
    "movl %eax, dbg_dr6\n\t"
    "movzwl tss_i, %eax\n\t"
    "movl %eax, dbg_link\n\t"
    "incl dbg_count\n\t"
    "movl $0xffff0ff0, %eax\n\t"	/* DR6 as at reset: BT clear again */
    "movl %eax, %dr6\n\t"
    /* Or the IRET back to H, a switch to a TSS with T set, traps again. */
    "movw $0, tss_h+100\n\t"
    "iretl\n\t"
    "jmp task_i_entry\n\t"
    /*
     * The 16-bit tasks: 32-bit code in a segment based here (a 16-bit
     * TSS holds IP only), data through the flat DS, SS 16-bit.
     */
    ".globl task16_base\n"
    "task16_base:\n\t"
    ".globl task_j_entry\n"
    "task_j_entry:\n\t"
    "RECORD 0x78, tss16_j\n\t"
    "ljmp $0x80, $0\n\t"
    "jmp task_j_entry\n\t"
    ".globl task_m_entry\n"
    "task_m_entry:\n\t"
    "RECORD 0x80, tss16_m\n\t"
    "movw %fs, %ax\n\t"
    "shll $16, %eax\n\t"
    "movw %gs, %ax\n\t"
    "movl %eax, t16_fs_gs\n\t"
    "ljmp $0x20, $0\n\t"
    "jmp task_m_entry\n\t"
    ".globl task_k_entry\n"
    "task_k_entry:\n\t"
    "RECORD 0x88, tss16_k\n\t"
    "iretl\n\t"
    "jmp task_k_entry\n\t"
    ".globl task_l_entry\n"
    "task_l_entry:\n\t"
    "RECORD 0x90, tss16_l\n\t"
    "popw %ax\n\t"			/* SS.B clear: from SS:SP, SP += 2 */
    "movzwl %ax, %eax\n\t"
    "movl %eax, seen+52\n\t"
    "movl %esp, seen+56\n\t"
    "movl $task_gp16_resume, tss_a+32\n\t"
    "iretl\n\t"
    "jmp task_l_entry\n\t");

static uint64_t tss_desc(const struct tss32 *t)
{
	uint32_t base = (uint32_t)(uintptr_t)t, limit = sizeof(*t) - 1;

	/* Present, DPL 0, type 9: an available 32-bit TSS. */
	return (limit & 0xffff) | ((uint64_t)(base & 0xffffff) << 16) | (0x89ull << 40) |
	       ((uint64_t)(limit >> 16) << 48) | ((uint64_t)(base >> 24) << 56);
}

/* A task gate (type 5, present, DPL 0) naming @sel; the same format in the GDT and the IDT. */
static uint64_t task_gate(uint16_t sel)
{
	return ((uint64_t)sel << 16) | (0x85ull << 40);
}

static void tss_init(struct tss32 *t, void (*entry)(void), uint8_t *stack, uint32_t tag)
{
	memset(t, 0, sizeof(*t));
	t->cr3 = read_cr3();
	t->eip = (uint32_t)(uintptr_t)entry;
	t->eflags = 0x2;
	for (unsigned int i = 0; i < 8; i++)
		t->gpr[i] = tag + i;
	t->gpr[4] = (uint32_t)(uintptr_t)(stack + sizeof(task_stacks[0]));
	for (unsigned int i = 0; i < 6; i++)
		t->sreg[i][0] = SEL_DATA;
	t->sreg[1][0] = SEL_CODE;	/* CS */
	t->io_map_base = sizeof(*t);	/* no I/O bitmap */
}

static uint32_t desc_hi(uint16_t sel)
{
	return (uint32_t)(task_gdt[sel >> 3] >> 32);
}

/* The task saw the registers its TSS gave it (ESP less what it pushed: nothing). */
static bool regs_from_tss(const struct tss32 *t)
{
	for (unsigned int i = 0; i < 8; i++)
		if (seen.gpr[i] != t->gpr[i])
			return false;
	return true;
}

static void clear_seen(void)
{
	memset((void *)&seen, 0, sizeof(seen));
}

static void check_jmp(void)
{
	uint32_t a = 0xa0000001, b = 0xa0000002, c = 0xa0000003, d = 0xa0000004;
	uint32_t s = 0xa0000005, di = 0xa0000006;
	uint32_t cr0;
	struct tss32 b_start;

	clear_seen();
	b_start = tss_b;
	asm volatile("ljmp $0x28, $0" : "+a"(a), "+b"(b), "+c"(c), "+d"(d), "+S"(s), "+D"(di)
		     : : "memory", "cc");
	cr0 = read_cr0();
	asm volatile("clts" : : : "memory");
	check("task-jmp", seen.count == 1 && regs_from_tss(&b_start) &&
	      !(seen.eflags & EFLAGS_NT) && (seen.cr0 & CR0_TS) &&
	      !(seen.desc_a_hi & DESC_HI_BUSY) && (seen.desc_self_hi & DESC_HI_BUSY) &&
	      seen.link == 0,
	      "task B ran %u times, registers %s, EFLAGS 0x%x, CR0 0x%x, TSS A %s, TSS B %s, "
	      "link 0x%x", seen.count, regs_from_tss(&b_start) ? "as in its TSS" : "wrong",
	      seen.eflags, seen.cr0, seen.desc_a_hi & DESC_HI_BUSY ? "busy" : "available",
	      seen.desc_self_hi & DESC_HI_BUSY ? "busy" : "available", seen.link);
	/* Back in A (B JMPed to it): A's registers, B available again, A busy, CR0.TS. */
	check("task-jmp-back", a == 0xa0000001 && b == 0xa0000002 && c == 0xa0000003 &&
	      d == 0xa0000004 && s == 0xa0000005 && di == 0xa0000006 && (cr0 & CR0_TS) &&
	      !(desc_hi(SEL_TSS_B) & DESC_HI_BUSY) && (desc_hi(SEL_TSS_A) & DESC_HI_BUSY) &&
	      tss_b.eip != b_start.eip && tss_a.eip != 0,
	      "EAX 0x%x EBX 0x%x ECX 0x%x EDX 0x%x ESI 0x%x EDI 0x%x, CR0 0x%x, TSS B %s, "
	      "TSS A %s, B's saved EIP 0x%x", a, b, c, d, s, di, cr0,
	      desc_hi(SEL_TSS_B) & DESC_HI_BUSY ? "busy" : "available",
	      desc_hi(SEL_TSS_A) & DESC_HI_BUSY ? "busy" : "available", tss_b.eip);
}

static void check_call_iret(void)
{
	uint32_t a = 0xc0000001, b = 0xc0000002, s = 0xc0000005, di = 0xc0000006;
	uint32_t eflags;
	struct tss32 c_start;

	clear_seen();
	c_start = tss_c;
	asm volatile("lcall $0x38, $0" : "+a"(a), "+b"(b), "+S"(s), "+D"(di) : : "ecx", "edx",
		     "memory", "cc");
	asm volatile("pushfl; popl %0" : "=r"(eflags));
	asm volatile("clts" : : : "memory");
	/* In C: NT set, linked back to A, both busy, CR0.TS. */
	check("task-call-gate", seen.count == 1 && regs_from_tss(&c_start) &&
	      (seen.eflags & EFLAGS_NT) && (seen.cr0 & CR0_TS) && seen.link == SEL_TSS_A &&
	      (seen.desc_a_hi & DESC_HI_BUSY) && (seen.desc_self_hi & DESC_HI_BUSY),
	      "task C ran %u times, registers %s, EFLAGS 0x%x, CR0 0x%x, link 0x%x, "
	      "TSS A %s, TSS C %s", seen.count, regs_from_tss(&c_start) ? "as in its TSS" : "wrong",
	      seen.eflags, seen.cr0, seen.link,
	      seen.desc_a_hi & DESC_HI_BUSY ? "busy" : "available",
	      seen.desc_self_hi & DESC_HI_BUSY ? "busy" : "available");
	/* Back in A by IRET: C available, its EFLAGS image without NT, A's registers. */
	check("task-iret", a == 0xc0000001 && b == 0xc0000002 && s == 0xc0000005 &&
	      di == 0xc0000006 && !(eflags & EFLAGS_NT) &&
	      !(desc_hi(SEL_TSS_C) & DESC_HI_BUSY) && (desc_hi(SEL_TSS_A) & DESC_HI_BUSY) &&
	      !(tss_c.eflags & EFLAGS_NT),
	      "EAX 0x%x EBX 0x%x ESI 0x%x EDI 0x%x, EFLAGS 0x%x, TSS C %s, TSS A %s, "
	      "C's saved EFLAGS 0x%x", a, b, s, di, eflags,
	      desc_hi(SEL_TSS_C) & DESC_HI_BUSY ? "busy" : "available",
	      desc_hi(SEL_TSS_A) & DESC_HI_BUSY ? "busy" : "available", tss_c.eflags);
}

static void check_int_gate(void)
{
	uint32_t a = 0xd0000001, b = 0xd0000002;
	struct tss32 d_start;

	clear_seen();
	d_start = tss_d;
	asm volatile("int $0x41" : "+a"(a), "+b"(b) : : "ecx", "edx", "esi", "edi", "memory", "cc");
	asm volatile("clts" : : : "memory");
	check("task-int-gate", seen.count == 1 && regs_from_tss(&d_start) &&
	      (seen.eflags & EFLAGS_NT) && (seen.cr0 & CR0_TS) && seen.link == SEL_TSS_A &&
	      (seen.desc_a_hi & DESC_HI_BUSY) && (seen.desc_self_hi & DESC_HI_BUSY) &&
	      a == 0xd0000001 && b == 0xd0000002 && !(desc_hi(SEL_TSS_D) & DESC_HI_BUSY),
	      "task D ran %u times, registers %s, EFLAGS 0x%x, CR0 0x%x, link 0x%x; back: "
	      "EAX 0x%x EBX 0x%x, TSS D %s", seen.count,
	      regs_from_tss(&d_start) ? "as in its TSS" : "wrong", seen.eflags, seen.cr0,
	      seen.link, a, b, desc_hi(SEL_TSS_D) & DESC_HI_BUSY ? "busy" : "available");
}

static __attribute__((noinline)) void check_exception_gate(void)
{
	uint32_t stack_top = tss_e.gpr[4];

	clear_seen();
	asm volatile("movw %%ax, %%fs\n\t"
		     "task_gp_resume:"
		     : : "a"(GP_SELECTOR) : "ecx", "edx", "ebx", "esi", "edi", "memory", "cc");
	asm volatile("clts" : : : "memory");
	check("task-exception-error-code", seen.count == 1 && seen.error_code == GP_SELECTOR &&
	      seen.gpr[4] == stack_top - 4 && seen.esp_after_pop == stack_top &&
	      seen.link == SEL_TSS_A && (seen.eflags & EFLAGS_NT),
	      "task E ran %u times: error code 0x%x on its stack (want 0x%x), ESP 0x%x "
	      "(stack top 0x%x), link 0x%x, EFLAGS 0x%x", seen.count, seen.error_code,
	      GP_SELECTOR, seen.gpr[4], stack_top, seen.link, seen.eflags);
}

static void send_self_nmi(void)
{
	apic_write(XAPIC_REG_ICR_HIGH, apic_read(XAPIC_REG_ID) & 0xff000000u);
	apic_write(XAPIC_REG_ICR_LOW, (uint32_t)APIC_ICR_DELIVERY_MODE_NMI);
}

static void wait_for_task(uint32_t count)
{
	for (uint64_t t = rdtsc(); seen.count < count && rdtsc() - t < 20000000ull;)
		pause();
}

/* An external interrupt through a task gate: not an instruction, so no EIP advance. */
static void check_ext_interrupt_gate(void)
{
	apic_init();
	clear_seen();
	cli();
	apic_write(XAPIC_REG_ICR_HIGH, 0);
	apic_write(XAPIC_REG_ICR_LOW, (uint32_t)APIC_ICR_SHORTHAND_SELF | IRQ_VECTOR);
	sti();
	wait_for_task(1);
	cli();
	asm volatile("clts" : : : "memory");
	check("task-ext-interrupt-gate", seen.count == 1 && regs_from_tss(&tss_f_start) &&
	      (seen.eflags & EFLAGS_NT) && (seen.cr0 & CR0_TS) && seen.link == SEL_TSS_A &&
	      (seen.desc_a_hi & DESC_HI_BUSY) && (seen.desc_self_hi & DESC_HI_BUSY) &&
	      !(desc_hi(SEL_TSS_F) & DESC_HI_BUSY),
	      "task F ran %u times, registers %s, EFLAGS 0x%x, CR0 0x%x, link 0x%x; back: TSS F %s",
	      seen.count, regs_from_tss(&tss_f_start) ? "as in its TSS" : "wrong", seen.eflags,
	      seen.cr0, seen.link, desc_hi(SEL_TSS_F) & DESC_HI_BUSY ? "busy" : "available");
}

/* An NMI through a task gate; the IRET that switches back unblocks NMIs: a second one comes. */
static void check_nmi_gate(void)
{
	uint32_t link, eflags, first;

	clear_seen();
	send_self_nmi();
	wait_for_task(1);
	first = seen.count;
	link = seen.link;
	eflags = seen.eflags;
	send_self_nmi();
	wait_for_task(2);
	asm volatile("clts" : : : "memory");
	check("task-nmi-gate", first == 1 && link == SEL_TSS_A && (eflags & EFLAGS_NT) &&
	      seen.count == 2 && !(desc_hi(SEL_TSS_G) & DESC_HI_BUSY),
	      "task G ran %u times for the first NMI (link 0x%x, EFLAGS 0x%x), %u for both; "
	      "TSS G %s", first, link, eflags, seen.count,
	      desc_hi(SEL_TSS_G) & DESC_HI_BUSY ? "busy" : "available");
}

/* JMP to a TSS with T set: #DB (DR6.BT) in the new task before its first instruction. */
static void check_debug_trap(void)
{
	if (qemu_tcg_detected()) {
		skip("task-debug-trap", "QEMU TCG ignores the T flag of a TSS");
		return;
	}
	clear_seen();
	dbg_count = 0;
	asm volatile("ljmp $0x60, $0" : : : "eax", "ecx", "edx", "ebx", "esi", "edi", "memory", "cc");
	asm volatile("clts" : : : "memory");
	check("task-debug-trap", dbg_count == 1 && (dbg_dr6 & DR6_BT) && dbg_link == SEL_TSS_H &&
	      seen.count == 1,
	      "the #DB task ran %u times, DR6 0x%x, its link 0x%x; task H ran %u times",
	      dbg_count, dbg_dr6, dbg_link, seen.count);
}

/*
 * ---- a task in virtual-8086 mode ----
 * Its code and stack in conventional memory (saved and restored): CS
 * 0x0700, IP 0 (linear 0x7000), SS:SP 0x0700:0x0ff0.  It loads AX and
 * BX, reads a word through DS (0x0780: linear 0x7800) into CX, then INT
 * 0x42, a task gate of DPL 3 back to the main task (IOPL 3: INT n goes to
 * the protected-mode IDT).
 */
#define VM86_LINEAR	0x7000u
#define VM86_CS		0x0700u
#define VM86_DS		0x0780u
#define VM86_SP		0x0ff0u
#define EFLAGS_VM	(1u << 17)
#define EFLAGS_IOPL3	(3u << 12)

static const uint8_t vm86_code[] = {
	0xb8, 0x34, 0x12,		/* mov $0x1234, %ax */
	0xbb, 0x78, 0x56,		/* mov $0x5678, %bx */
	0x8b, 0x0e, 0x10, 0x00,		/* mov 0x10, %cx (DS:0x10) */
	0xcd, VM86_VECTOR,		/* int $0x42 */
	0xeb, 0xfe,			/* jmp . (never: the task is not resumed) */
};

static void check_vm86_task(uint64_t *idt)
{
	static uint8_t saved[0x1000];
	uint8_t *low = phys_ptr(VM86_LINEAR);
	uint32_t eflags, link, v_eflags, v_busy;
	uint64_t old_vec = idt[VM86_VECTOR];

	memcpy(saved, low, sizeof(saved));
	memcpy(low, vm86_code, sizeof(vm86_code));
	low[0x800 + 0x10] = 0xcd;
	low[0x800 + 0x11] = 0xab;
	tss_init(&tss_v, NULL, task_stacks[7], 0x56560000);
	tss_v.eip = 0;
	tss_v.eflags = 0x2 | EFLAGS_VM | EFLAGS_IOPL3;	/* IF clear: no interrupt in the task */
	tss_v.gpr[4] = VM86_SP;
	tss_v.sreg[0][0] = 0;		/* ES */
	tss_v.sreg[1][0] = VM86_CS;	/* CS */
	tss_v.sreg[2][0] = VM86_CS;	/* SS */
	tss_v.sreg[3][0] = VM86_DS;	/* DS */
	tss_v.sreg[4][0] = 0;
	tss_v.sreg[5][0] = 0;
	tss_v.esp0 = (uint32_t)(uintptr_t)(task_stacks[6] + sizeof(task_stacks[6]));
	tss_v.ss0 = SEL_DATA;
	task_gdt[SEL_TSS_V >> 3] = tss_desc(&tss_v);
	idt[VM86_VECTOR] = task_gate(SEL_TSS_A) | (3ull << 45);	/* DPL 3: INT n at CPL 3 */
	tss_a.prev_task_link = 0;

	cli();
	asm volatile("ljmp $0x70, $0" : : : "eax", "ecx", "edx", "ebx", "esi", "edi", "memory", "cc");
	asm volatile("pushfl; popl %0" : "=r"(eflags));
	/* Back in A through the gate: nested, so NT is set; IRET must not follow the link. */
	asm volatile("pushfl; andl %0, (%%esp); popfl" : : "i"(~EFLAGS_NT) : "memory", "cc");
	asm volatile("clts" : : : "memory");
	link = tss_a.prev_task_link;
	v_eflags = tss_v.eflags;
	v_busy = desc_hi(SEL_TSS_V) & DESC_HI_BUSY;
	check("task-vm86", (eflags & EFLAGS_NT) && link == SEL_TSS_V && (v_eflags & EFLAGS_VM) &&
	      (tss_v.gpr[0] & 0xffff) == 0x1234 && (tss_v.gpr[3] & 0xffff) == 0x5678 &&
	      (tss_v.gpr[1] & 0xffff) == 0xabcd && tss_v.eip == 12 &&
	      tss_v.sreg[1][0] == VM86_CS && tss_v.sreg[3][0] == VM86_DS &&
	      (tss_v.gpr[4] & 0xffff) == VM86_SP && v_busy,
	      "back with EFLAGS 0x%x, link 0x%x; the VM86 task saved EFLAGS 0x%x, AX 0x%x BX 0x%x "
	      "CX 0x%x, IP 0x%x, CS 0x%x, DS 0x%x, SP 0x%x, TSS %s", eflags, link, v_eflags,
	      tss_v.gpr[0] & 0xffff, tss_v.gpr[3] & 0xffff, tss_v.gpr[1] & 0xffff, tss_v.eip,
	      tss_v.sreg[1][0], tss_v.sreg[3][0], tss_v.gpr[4] & 0xffff, v_busy ? "busy" : "available");
	/* The VM86 task stays nested (busy) behind A: make it available again. */
	task_gdt[SEL_TSS_V >> 3] &= ~((uint64_t)DESC_HI_BUSY << 32);
	idt[VM86_VECTOR] = old_vec;
	memcpy(low, saved, sizeof(saved));
}

/*
 * ---- 16-bit TSSs ----
 * On loading one the processor leaves the upper halves of the registers
 * undefined (Vol. 3A 8.6): Bochs (cpu/tasking.cc) sets those of the
 * general registers to 0xffff, QEMU keeps them.  The checks take the low
 * halves, which the SDM defines; tests/unit/test_task_switch.c holds
 * exitplan to Bochs's choice for the rest.
 */
#define T16_STACK_SIZE	0x400u
static uint8_t task16_stack[T16_STACK_SIZE] __attribute__((aligned(16)));

/* A code or data segment descriptor; @flags: descriptor bits 55:52 (G, D/B, L, AVL). */
static uint64_t seg_desc(uint32_t base, uint32_t limit, uint8_t access, uint8_t flags)
{
	return (limit & 0xffff) | ((uint64_t)(base & 0xffffff) << 16) | ((uint64_t)access << 40) |
	       ((uint64_t)((limit >> 16) & 0xf) << 48) | ((uint64_t)flags << 52) |
	       ((uint64_t)(base >> 24) << 56);
}

/* An available 16-bit TSS (type 1, present, DPL 0) with the minimum limit 2BH. */
static uint64_t tss16_desc(const struct tss16 *t)
{
	return seg_desc((uint32_t)(uintptr_t)t, sizeof(*t) - 1, 0x81, 0);
}

static void tss16_init(struct tss16 *t, void (*entry)(void), uint16_t tag)
{
	memset(t, 0, sizeof(*t));
	t->ip = (uint16_t)((uintptr_t)entry - (uintptr_t)task16_base);
	t->flags = 0x2;
	for (unsigned int i = 0; i < 8; i++)
		t->gpr[i] = tag + i;
	t->gpr[4] = T16_STACK_SIZE;
	t->sreg[0] = SEL_DATA;		/* ES */
	t->sreg[1] = SEL_CODE_T16;	/* CS */
	t->sreg[2] = SEL_STACK16;	/* SS */
	t->sreg[3] = SEL_DATA;		/* DS */
}

/* The task saw the registers its 16-bit TSS gave it (their low halves). */
static bool regs_from_tss16(const struct tss16 *t)
{
	for (unsigned int i = 0; i < 8; i++)
		if ((seen.gpr[i] & 0xffff) != t->gpr[i])
			return false;
	return true;
}

/* A JMPs to 16-bit J, J to 16-bit M, M back to A. */
static void check_tss16_jmp(void)
{
	uint32_t a = 0x16000001, b = 0x16000002, c = 0x16000003, d = 0x16000004;
	struct tss16 j_start = tss16_j, m_start = tss16_m;
	bool j_saved;

	clear_seen();
	t16_fs_gs = 0xdeadbeef;
	asm volatile("ljmp $0x78, $0" : "+a"(a), "+b"(b), "+c"(c), "+d"(d)
		     : : "esi", "edi", "memory", "cc");
	asm volatile("clts" : : : "memory");
	/* J's state saved in its 16-bit TSS: IP past its JMP, the low halves (AX its last load). */
	j_saved = tss16_j.ip > j_start.ip && tss16_j.flags == 0x2 && tss16_j.gpr[4] == T16_STACK_SIZE &&
		  tss16_j.gpr[1] == j_start.gpr[1] && tss16_j.gpr[7] == j_start.gpr[7] &&
		  tss16_j.sreg[1] == SEL_CODE_T16 && tss16_j.sreg[2] == SEL_STACK16 &&
		  tss16_j.prev_task_link == 0;
	check("task16-jmp", seen.count == 2 && regs_from_tss16(&m_start) && seen.eflags == 0x2 &&
	      (seen.cr0 & CR0_TS) && seen.link == 0 && t16_fs_gs == 0 &&
	      !(seen.desc_a_hi & DESC_HI_BUSY) && (seen.desc_self_hi & DESC_HI_BUSY) &&
	      !(desc_hi(SEL_TSS16_J) & DESC_HI_BUSY) && !(desc_hi(SEL_TSS16_M) & DESC_HI_BUSY) &&
	      (desc_hi(SEL_TSS_A) & DESC_HI_BUSY) && j_saved &&
	      a == 0x16000001 && b == 0x16000002 && c == 0x16000003 && d == 0x16000004,
	      "J and M ran %u times; M saw registers %s, EFLAGS 0x%x, CR0 0x%x, link 0x%x, "
	      "FS:GS 0x%x, TSS A %s; J's saved state %s (IP 0x%x, FLAGS 0x%x, SP 0x%x); "
	      "back: EAX 0x%x, TSS J %s, M %s", seen.count,
	      regs_from_tss16(&m_start) ? "as in its TSS" : "wrong", seen.eflags, seen.cr0,
	      seen.link, t16_fs_gs, seen.desc_a_hi & DESC_HI_BUSY ? "busy" : "available",
	      j_saved ? "right" : "wrong", tss16_j.ip, tss16_j.flags, tss16_j.gpr[4], a,
	      desc_hi(SEL_TSS16_J) & DESC_HI_BUSY ? "busy" : "available",
	      desc_hi(SEL_TSS16_M) & DESC_HI_BUSY ? "busy" : "available");
}

/* A CALLs 16-bit K (the back link, NT, both busy); K's IRET returns to A. */
static void check_tss16_call_iret(void)
{
	uint32_t a = 0x16100001, s = 0x16100005, eflags;
	struct tss16 k_start = tss16_k;

	clear_seen();
	asm volatile("lcall $0x88, $0" : "+a"(a), "+S"(s) : : "ebx", "ecx", "edx", "edi",
		     "memory", "cc");
	asm volatile("pushfl; popl %0" : "=r"(eflags));
	asm volatile("clts" : : : "memory");
	check("task16-call", seen.count == 1 && regs_from_tss16(&k_start) &&
	      seen.eflags == (0x2 | EFLAGS_NT) && (seen.cr0 & CR0_TS) && seen.link == SEL_TSS_A &&
	      (seen.desc_a_hi & DESC_HI_BUSY) && (seen.desc_self_hi & DESC_HI_BUSY),
	      "task K ran %u times, registers %s, EFLAGS 0x%x, CR0 0x%x, link 0x%x, TSS A %s, "
	      "TSS K %s", seen.count, regs_from_tss16(&k_start) ? "as in its TSS" : "wrong",
	      seen.eflags, seen.cr0, seen.link,
	      seen.desc_a_hi & DESC_HI_BUSY ? "busy" : "available",
	      seen.desc_self_hi & DESC_HI_BUSY ? "busy" : "available");
	check("task16-iret", a == 0x16100001 && s == 0x16100005 && !(eflags & EFLAGS_NT) &&
	      !(desc_hi(SEL_TSS16_K) & DESC_HI_BUSY) && (desc_hi(SEL_TSS_A) & DESC_HI_BUSY) &&
	      tss16_k.flags == 0x2 && tss16_k.ip > k_start.ip,
	      "EAX 0x%x ESI 0x%x, EFLAGS 0x%x, TSS K %s, TSS A %s, K's saved FLAGS 0x%x IP 0x%x",
	      a, s, eflags, desc_hi(SEL_TSS16_K) & DESC_HI_BUSY ? "busy" : "available",
	      desc_hi(SEL_TSS_A) & DESC_HI_BUSY ? "busy" : "available", tss16_k.flags, tss16_k.ip);
}

/* #GP through a task gate to 16-bit L: the error code is a word at SS:SP - 2. */
static __attribute__((noinline)) void check_tss16_exception_gate(uint64_t *idt)
{
	uint64_t old_gp = idt[13];

	idt[13] = task_gate(SEL_TSS16_L);
	clear_seen();
	asm volatile("movw %%ax, %%fs\n\t"
		     "task_gp16_resume:"
		     : : "a"(GP_SELECTOR) : "ecx", "edx", "ebx", "esi", "edi", "memory", "cc");
	asm volatile("clts" : : : "memory");
	idt[13] = old_gp;
	check("task16-exception-error-code", seen.count == 1 && seen.error_code == GP_SELECTOR &&
	      (seen.gpr[4] & 0xffff) == T16_STACK_SIZE - 2 &&
	      (seen.esp_after_pop & 0xffff) == T16_STACK_SIZE &&
	      seen.link == SEL_TSS_A && (seen.eflags & EFLAGS_NT) &&
	      !(desc_hi(SEL_TSS16_L) & DESC_HI_BUSY),
	      "task L ran %u times: error code 0x%x on its stack (want 0x%x), ESP 0x%x "
	      "(want SP 0x%x), after the pop 0x%x, link 0x%x, EFLAGS 0x%x, TSS L %s", seen.count,
	      seen.error_code, GP_SELECTOR, seen.gpr[4], T16_STACK_SIZE - 2,
	      seen.esp_after_pop, seen.link, seen.eflags,
	      desc_hi(SEL_TSS16_L) & DESC_HI_BUSY ? "busy" : "available");
}

static void check_tss16_tasks(uint64_t *idt)
{
	tss16_init(&tss16_j, task_j_entry, 0x1610);
	tss16_init(&tss16_m, task_m_entry, 0x1620);
	tss16_init(&tss16_k, task_k_entry, 0x1630);
	tss16_init(&tss16_l, task_l_entry, 0x1640);
	task_gdt[SEL_TSS16_J >> 3] = tss16_desc(&tss16_j);
	task_gdt[SEL_TSS16_M >> 3] = tss16_desc(&tss16_m);
	task_gdt[SEL_TSS16_K >> 3] = tss16_desc(&tss16_k);
	task_gdt[SEL_TSS16_L >> 3] = tss16_desc(&tss16_l);
	/* 32-bit code (D set), read/execute; a 16-bit (B clear) read/write stack. */
	task_gdt[SEL_CODE_T16 >> 3] = seg_desc((uint32_t)(uintptr_t)task16_base, 0xffff, 0x9b, 0x4);
	task_gdt[SEL_STACK16 >> 3] = seg_desc((uint32_t)(uintptr_t)task16_stack,
					       T16_STACK_SIZE - 1, 0x93, 0);
	check_tss16_jmp();
	check_tss16_call_iret();
	check_tss16_exception_gate(idt);
}

void check_tasks(void)
{
	struct { uint16_t limit; uint32_t base; } __attribute__((packed)) old_gdt, gdt, idtr;
	uint64_t *idt, old_int, old_gp, old_irq, old_nmi, old_db;
	uint16_t tr;

	asm volatile("sgdt %0" : "=m"(old_gdt));
	asm volatile("sidt %0" : "=m"(idtr));
	memset(task_gdt, 0, sizeof(task_gdt));
	memcpy(task_gdt, (const void *)(uintptr_t)old_gdt.base,
	       old_gdt.limit + 1u < 4 * 8 ? old_gdt.limit + 1u : 4 * 8);
	tss_init(&tss_a, NULL, task_stacks[0], 0);
	tss_init(&tss_b, task_b_entry, task_stacks[0], 0xb0000000);
	tss_init(&tss_c, task_c_entry, task_stacks[1], 0xc0c00000);
	tss_init(&tss_d, task_d_entry, task_stacks[2], 0xd0d00000);
	tss_init(&tss_e, task_e_entry, task_stacks[3], 0xe0e00000);
	tss_init(&tss_f, task_f_entry, task_stacks[4], 0xf0f00000);
	tss_f_start = tss_f;
	tss_init(&tss_g, task_g_entry, task_stacks[5], 0x90900000);
	tss_init(&tss_h, task_h_entry, task_stacks[6], 0x80800000);
	tss_h.trap = 1;
	tss_init(&tss_i, task_i_entry, task_stacks[7], 0x70700000);
	task_gdt[SEL_TSS_A >> 3] = tss_desc(&tss_a);
	task_gdt[SEL_TSS_B >> 3] = tss_desc(&tss_b);
	task_gdt[SEL_TSS_C >> 3] = tss_desc(&tss_c);
	task_gdt[SEL_GATE_C >> 3] = task_gate(SEL_TSS_C);
	task_gdt[SEL_TSS_D >> 3] = tss_desc(&tss_d);
	task_gdt[SEL_TSS_E >> 3] = tss_desc(&tss_e);
	task_gdt[SEL_TSS_F >> 3] = tss_desc(&tss_f);
	task_gdt[SEL_TSS_G >> 3] = tss_desc(&tss_g);
	task_gdt[SEL_TSS_H >> 3] = tss_desc(&tss_h);
	task_gdt[SEL_TSS_I >> 3] = tss_desc(&tss_i);
	gdt.limit = sizeof(task_gdt) - 1;
	gdt.base = (uint32_t)(uintptr_t)task_gdt;
	asm volatile("lgdt %0" : : "m"(gdt) : "memory");
	/* The main task: its TSS receives this state at each switch away. */
	asm volatile("ltr %w0" : : "r"((uint16_t)SEL_TSS_A) : "memory");	/* sets the busy flag */
	asm volatile("str %w0" : "=r"(tr));

	idt = (uint64_t *)(uintptr_t)idtr.base;
	old_int = idt[INT_VECTOR];
	old_gp = idt[13];
	old_irq = idt[IRQ_VECTOR];
	old_nmi = idt[2];
	old_db = idt[1];
	idt[INT_VECTOR] = task_gate(SEL_TSS_D);
	idt[13] = task_gate(SEL_TSS_E);
	idt[IRQ_VECTOR] = task_gate(SEL_TSS_F);
	idt[2] = task_gate(SEL_TSS_G);
	idt[1] = task_gate(SEL_TSS_I);

	if (tr != SEL_TSS_A || !(desc_hi(SEL_TSS_A) & DESC_HI_BUSY)) {
		check("task-jmp", false, "LTR 0x%x: TR 0x%x, descriptor 0x%08x", SEL_TSS_A, tr,
		      desc_hi(SEL_TSS_A));
	} else {
		check_jmp();
		check_call_iret();
		check_int_gate();
		check_exception_gate();
		check_ext_interrupt_gate();
		check_nmi_gate();
		check_debug_trap();
		check_vm86_task(idt);
		check_tss16_tasks(idt);
	}

	idt[INT_VECTOR] = old_int;
	idt[13] = old_gp;
	idt[IRQ_VECTOR] = old_irq;
	idt[2] = old_nmi;
	idt[1] = old_db;
	asm volatile("lgdt %0" : : "m"(old_gdt));
}
