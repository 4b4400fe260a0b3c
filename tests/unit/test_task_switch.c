// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/vcpu/task_switch.c: the hardware task switch to a 32-bit or 16-bit TSS, on a
 * flat fake guest memory (linear == offset into mem[]).  A GDT with two
 * TSSs (tasks A and B), flat code and data segments and an LDT; task A is
 * running.  Expected values are the SDM's steps (Vol. 3A 8.3) and the
 * faults of its Table 8-2, written out case by case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch_bits.h"
#include "runtime/vcpu/task_switch.h"

#define MEM_SIZE	0x10000u
#define GDT		0x1000u
#define IDT		0x1800u
#define TSS_A_BASE	0x2000u
#define TSS_B_BASE	0x3000u

/* GDT selectors. */
#define SEL_CODE0	0x08
#define SEL_DATA0	0x10
#define SEL_TSS_A	0x18
#define SEL_TSS_B	0x20
#define SEL_CODE3	0x28	/* DPL 3 */
#define SEL_DATA3	0x30	/* DPL 3 */
#define SEL_LDT		0x38
#define SEL_DATA_NP	0x40	/* not present */
#define SEL_CODE_XO	0x48	/* execute-only code */
#define SEL_TSS16	0x50	/* 16-bit TSS C, available */
#define SEL_TSS16_D	0x58	/* 16-bit TSS D, available */
#define SEL_DATA16	0x60	/* a 16-bit (B clear) data segment at 0x6000 */
#define GDT_LIMIT	0x67
#define TSS_C_BASE	0x5000u
#define TSS_D_BASE	0x5100u
#define DATA16_BASE	0x6000u

struct fake_mem {
	uint8_t mem[MEM_SIZE];
	unsigned int cr3_loads;
	uint64_t cr3;
	bool fail_reads;
	bool fail_cr3;
};

static bool fake_read(void *ctx, uint64_t la, void *dst, unsigned int len)
{
	struct fake_mem *m = ctx;

	if (m->fail_reads || la + len > MEM_SIZE)
		return false;
	memcpy(dst, m->mem + la, len);
	return true;
}

static bool fake_write(void *ctx, uint64_t la, const void *src, unsigned int len)
{
	struct fake_mem *m = ctx;

	if (la + len > MEM_SIZE)
		return false;
	memcpy(m->mem + la, src, len);
	return true;
}

static bool fake_set_cr3(void *ctx, uint64_t cr3)
{
	struct fake_mem *m = ctx;

	m->cr3_loads++;
	m->cr3 = cr3;
	return !m->fail_cr3;
}

static struct fake_mem fm;
static const struct ts_mem mem = { fake_read, fake_write, fake_set_cr3, &fm };

/* A segment descriptor (Vol. 3A Figure 3-8) from its fields. */
static uint64_t make_desc(uint32_t base, uint32_t limit, unsigned int type, bool s,
			  unsigned int dpl, bool p, bool db, bool g)
{
	return (limit & 0xffffull) | ((uint64_t)(base & 0xffffff) << 16) |
	       ((uint64_t)type << 40) | ((uint64_t)s << 44) | ((uint64_t)dpl << 45) |
	       ((uint64_t)p << 47) | ((uint64_t)((limit >> 16) & 0xf) << 48) |
	       ((uint64_t)db << 54) | ((uint64_t)g << 55) | ((uint64_t)(base >> 24) << 56);
}

static uint64_t gdt_get(uint16_t sel)
{
	uint64_t d;

	memcpy(&d, fm.mem + GDT + (sel & ~7u), 8);
	return d;
}

static void gdt_set(uint16_t sel, uint64_t d)
{
	memcpy(fm.mem + GDT + (sel & ~7u), &d, 8);
}

static struct tss32 *tss_at(uint32_t base)
{
	return (struct tss32 *)(fm.mem + base);
}

static struct ts_cpu cpu;

/* Task A runs at CPL 0 with TR = TSS A (busy); task B's TSS holds its start state. */
static int setup(void **state)
{
	struct tss32 *b = tss_at(TSS_B_BASE);

	(void)state;
	memset(&fm, 0, sizeof(fm));
	gdt_set(SEL_CODE0, make_desc(0, 0xfffff, 0xb, true, 0, true, true, true));
	gdt_set(SEL_DATA0, make_desc(0, 0xfffff, 0x2, true, 0, true, true, true));	/* not accessed */
	gdt_set(SEL_TSS_A, make_desc(TSS_A_BASE, 0x67, 0xb, false, 0, true, false, false));
	gdt_set(SEL_TSS_B, make_desc(TSS_B_BASE, 0x67, 0x9, false, 0, true, false, false));
	gdt_set(SEL_CODE3, make_desc(0, 0xfffff, 0xb, true, 3, true, true, true));
	gdt_set(SEL_DATA3, make_desc(0, 0xfffff, 0x3, true, 3, true, true, true));
	gdt_set(SEL_LDT, make_desc(0x4000, 0xf, 0x2, false, 0, true, false, false));
	gdt_set(SEL_DATA_NP, make_desc(0, 0xfffff, 0x3, true, 0, false, true, true));
	gdt_set(SEL_CODE_XO, make_desc(0, 0xfffff, 0x9, true, 0, true, true, true));
	gdt_set(SEL_TSS16, make_desc(TSS_C_BASE, 0x2b, 0x1, false, 0, true, false, false));
	gdt_set(SEL_TSS16_D, make_desc(TSS_D_BASE, 0x2b, 0x1, false, 0, true, false, false));
	gdt_set(SEL_DATA16, make_desc(DATA16_BASE, 0xffff, 0x3, true, 0, true, false, false));
	/* LDT entry 1 (selector 0x0c): a flat data segment. */
	{
		uint64_t d = make_desc(0, 0xfffff, 0x3, true, 0, true, true, true);

		memcpy(fm.mem + 0x4008, &d, 8);
	}

	memset(&cpu, 0, sizeof(cpu));
	for (unsigned int i = 0; i < 8; i++)
		cpu.gpr[i] = 0x1000 + i;
	cpu.gpr[4] = 0x7000;
	cpu.eip = 0x123456;
	cpu.eflags = X86_RFLAGS_FIXED | X86_RFLAGS_IF | X86_RFLAGS_ZF;
	cpu.cr0 = X86_CR0_PE;
	cpu.cr3 = 0xa000;
	cpu.dr7 = X86_DR7_INIT | X86_DR7_LOCAL_ENABLES | 0xaa;
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		cpu.sreg[i] = (struct ts_segment){ SEL_DATA0, 0, 0xffffffff, 0xc093 };
	cpu.sreg[TS_CS] = (struct ts_segment){ SEL_CODE0, 0, 0xffffffff, 0xc09b };
	cpu.ldtr = (struct ts_segment){ 0, 0, 0, VMX_AR_UNUSABLE };
	cpu.tr = (struct ts_segment){ SEL_TSS_A, TSS_A_BASE, 0x67, 0x8b };
	cpu.gdtr_base = GDT;
	cpu.gdtr_limit = GDT_LIMIT;
	cpu.idtr_base = IDT;
	cpu.idtr_limit = 0x7ff;

	b->cr3 = 0xb000;
	b->eip = 0x4242;
	b->eflags = X86_RFLAGS_FIXED | X86_RFLAGS_CF;
	for (unsigned int i = 0; i < 8; i++)
		b->gpr[i] = 0xb0 + i;
	b->gpr[4] = 0x9000;
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		b->sreg[i][0] = SEL_DATA0;
	b->sreg[TS_CS][0] = SEL_CODE0;
	b->ldt_selector = 0;
	return 0;
}

static void check_new_task_b(void)
{
	assert_int_equal(cpu.tr.selector, SEL_TSS_B);
	assert_int_equal(cpu.tr.base, TSS_B_BASE);
	assert_int_equal(cpu.tr.limit, 0x67);
	assert_int_equal(cpu.tr.ar, 0x8b);	/* present, 32-bit busy TSS */
	assert_true(cpu.cr0 & X86_CR0_TS);
	assert_int_equal(fm.cr3_loads, 1);
	assert_int_equal(fm.cr3, 0xb000);
	assert_int_equal(cpu.cr3, 0xb000);
	assert_int_equal(cpu.eip, 0x4242);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(cpu.gpr[i], i == 4 ? 0x9000 : 0xb0 + i);
	assert_int_equal(cpu.sreg[TS_CS].selector, SEL_CODE0);
	assert_int_equal(cpu.sreg[TS_CS].ar, 0xc09b);
	assert_int_equal(cpu.sreg[TS_CS].limit, 0xffffffff);
	/* The data segment's accessed bit is set, in the GDT and the register. */
	assert_int_equal(cpu.sreg[TS_DS].ar, 0xc093);
	assert_true(gdt_get(SEL_DATA0) & (1ull << 40));
	assert_true(cpu.ldtr.ar & VMX_AR_UNUSABLE);
	/* L0-L3 cleared, the rest of DR7 kept. */
	assert_int_equal(cpu.dr7, X86_DR7_INIT | 0xaa);
}

static void check_old_task_a_saved(uint32_t eflags)
{
	const struct tss32 *a = tss_at(TSS_A_BASE);

	assert_int_equal(a->eip, 0x123456);
	assert_int_equal(a->eflags, eflags);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(a->gpr[i], i == 4 ? 0x7000 : 0x1000 + i);
	assert_int_equal(a->sreg[TS_CS][0], SEL_CODE0);
	assert_int_equal(a->sreg[TS_SS][0], SEL_DATA0);
	/* The static fields are not written. */
	assert_int_equal(a->cr3, 0);
	assert_int_equal(a->ldt_selector, 0);
}

static void test_jmp(void **state)
{
	struct ts_result res;
	uint32_t eflags = cpu.eflags;

	(void)state;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_true(res.committed);
	assert_false(res.debug_trap);
	check_new_task_b();
	check_old_task_a_saved(eflags);
	/* JMP: the old TSS is available again, the new one busy; no link, no NT. */
	assert_false(gdt_get(SEL_TSS_A) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
	assert_int_equal(tss_at(TSS_B_BASE)->prev_task_link, 0);
	assert_false(cpu.eflags & X86_RFLAGS_NT);
	assert_int_equal(cpu.eflags, X86_RFLAGS_FIXED | X86_RFLAGS_CF);
}

static void test_call_then_iret(void **state)
{
	struct ts_result res;
	uint32_t eflags = cpu.eflags;

	(void)state;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_CALL, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	check_new_task_b();
	check_old_task_a_saved(eflags);
	/* CALL nests: both busy, the back link names A, NT set in the new task. */
	assert_true(gdt_get(SEL_TSS_A) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
	assert_int_equal(tss_at(TSS_B_BASE)->prev_task_link, SEL_TSS_A);
	assert_true(cpu.eflags & X86_RFLAGS_NT);

	/* IRET in B back to A: B's EFLAGS image without NT, B available, A's state back. */
	tss_at(TSS_A_BASE)->cr3 = 0xa000;
	cpu.eip = 0x5555;
	cpu.gpr[0] = 0xdead;
	task_switch(&cpu, &mem, SEL_TSS_A, TS_SOURCE_IRET, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_false(tss_at(TSS_B_BASE)->eflags & X86_RFLAGS_NT);
	assert_int_equal(tss_at(TSS_B_BASE)->eip, 0x5555);
	assert_int_equal(tss_at(TSS_B_BASE)->gpr[0], 0xdead);
	assert_false(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS_A) & X86_DESC_TSS_BUSY);
	/* IRET writes no back link into A. */
	assert_int_equal(tss_at(TSS_A_BASE)->prev_task_link, 0);
	assert_int_equal(cpu.tr.selector, SEL_TSS_A);
	assert_int_equal(cpu.eip, 0x123456);
	assert_int_equal(cpu.eflags, eflags);
	assert_int_equal(cpu.gpr[0], 0x1000);
	assert_int_equal(cpu.cr3, 0xa000);
}

static void test_idt_gate_error_code(void **state)
{
	struct ts_event ev = { .vector = 13, .external = true, .has_error_code = true,
			       .error_code = 0x1234 };
	struct ts_result res;
	uint32_t pushed;

	(void)state;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &ev, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(tss_at(TSS_B_BASE)->prev_task_link, SEL_TSS_A);
	assert_true(cpu.eflags & X86_RFLAGS_NT);
	assert_true(gdt_get(SEL_TSS_A) & X86_DESC_TSS_BUSY);
	/* The error code on the new task's stack, ESP 4 lower. */
	assert_int_equal(cpu.gpr[4], 0x9000 - 4);
	memcpy(&pushed, fm.mem + 0x9000 - 4, 4);
	assert_int_equal(pushed, 0x1234);
}

/*
 * A TSS whose EFLAGS has VM set: the new task runs in virtual-8086 mode.
 * Its segment registers are real-mode segments (base selector * 16, limit
 * 0xffff, read/write accessed data at DPL 3: the access rights VM entry
 * requires, Vol. 3C 27.3.1.2), whatever the GDT holds at those
 * selectors; its LDTR is loaded from the GDT as any task's.
 */
static void test_to_vm86(void **state)
{
	static const uint16_t sel[TS_NR_SREGS] = { 0x1000, 0x2468, 0x0800, 0x1234, 0xffff, 0 };
	struct tss32 *b = tss_at(TSS_B_BASE);
	uint64_t data0 = gdt_get(SEL_DATA0);
	struct ts_result res;

	(void)state;
	b->eflags = X86_RFLAGS_FIXED | X86_RFLAGS_VM | X86_RFLAGS_IF | (3u << 12);	/* IOPL 3 */
	b->eip = 0x100;
	b->gpr[4] = 0xfffe;
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		b->sreg[i][0] = sel[i];
	b->ldt_selector = SEL_LDT;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_true(res.committed);
	assert_true(cpu.eflags & X86_RFLAGS_VM);
	assert_int_equal(cpu.eip, 0x100);
	assert_int_equal(cpu.cr3, 0xb000);
	for (unsigned int i = 0; i < TS_NR_SREGS; i++) {
		assert_int_equal(cpu.sreg[i].selector, sel[i]);
		assert_int_equal(cpu.sreg[i].base, (uint64_t)sel[i] << 4);
		assert_int_equal(cpu.sreg[i].limit, 0xffff);
		assert_int_equal(cpu.sreg[i].ar, 0xf3);
	}
	assert_int_equal(cpu.ldtr.selector, SEL_LDT);
	assert_int_equal(cpu.ldtr.base, 0x4000);
	assert_int_equal(cpu.ldtr.ar, 0x82);
	/* No descriptor was read for the segments: the GDT's accessed bits are untouched. */
	assert_int_equal(gdt_get(SEL_DATA0), data0);
	assert_false(gdt_get(SEL_TSS_A) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
	check_old_task_a_saved(X86_RFLAGS_FIXED | X86_RFLAGS_IF | X86_RFLAGS_ZF);
}

/* The LDT selector of a virtual-8086 task is checked as any task's: #TS after the commit point. */
static void test_to_vm86_bad_ldt(void **state)
{
	struct tss32 *b = tss_at(TSS_B_BASE);
	struct ts_result res;

	(void)state;
	b->eflags = X86_RFLAGS_FIXED | X86_RFLAGS_VM;
	b->ldt_selector = SEL_DATA0;	/* not an LDT descriptor */
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_CALL, NULL, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_true(res.committed);
	assert_int_equal(res.fault_vector, X86_EXC_TS);
	assert_int_equal(res.error_code, SEL_DATA0);
	assert_true(cpu.eflags & X86_RFLAGS_VM);
	assert_true(cpu.eflags & X86_RFLAGS_NT);
}

/*
 * An exception with an error code through a task gate into a
 * virtual-8086 task: the code goes on its 16-bit stack (SS.B clear) at
 * SS * 16 + SP - 4, ESP's upper half kept.
 */
static void test_to_vm86_error_code(void **state)
{
	struct ts_event ev = { .vector = 13, .exception = true, .has_error_code = true,
			       .error_code = 0x5678 };
	struct tss32 *b = tss_at(TSS_B_BASE);
	struct ts_result res;
	uint32_t pushed = 0;

	(void)state;
	b->eflags = X86_RFLAGS_FIXED | X86_RFLAGS_VM;
	b->sreg[TS_SS][0] = 0x0500;	/* base 0x5000 */
	b->gpr[4] = 0xabcd0010;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &ev, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(cpu.sreg[TS_SS].base, 0x5000);
	assert_int_equal(cpu.gpr[4], 0xabcd000c);
	memcpy(&pushed, fm.mem + 0x5000 + 0xc, 4);
	assert_int_equal(pushed, 0x5678);
}

/*
 * From virtual-8086 mode (an interrupt through a task gate; JMP, CALL and
 * IRET cannot switch tasks there): the old task's EFLAGS image keeps VM
 * and its selectors are saved as they are; the new task is a protected-
 * mode one.
 */
static void test_from_vm86(void **state)
{
	struct ts_event ev = { .vector = 0x30, .external = true };
	struct ts_result res;
	const struct tss32 *a = tss_at(TSS_A_BASE);

	(void)state;
	cpu.eflags = X86_RFLAGS_FIXED | X86_RFLAGS_VM | X86_RFLAGS_IF;
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		cpu.sreg[i] = (struct ts_segment){ (uint16_t)(0x100 * (i + 1)), 0x1000 * (i + 1),
						   0xffff, 0xf3 };
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &ev, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(a->eflags, X86_RFLAGS_FIXED | X86_RFLAGS_VM | X86_RFLAGS_IF);
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		assert_int_equal(a->sreg[i][0], 0x100 * (i + 1));
	assert_false(cpu.eflags & X86_RFLAGS_VM);
	assert_true(cpu.eflags & X86_RFLAGS_NT);
	assert_int_equal(cpu.sreg[TS_CS].ar, 0xc09b);
	assert_int_equal(tss_at(TSS_B_BASE)->prev_task_link, SEL_TSS_A);
}

static void test_software_int_gate_dpl(void **state)
{
	struct ts_event ev = { .vector = 0x40, .software = true };
	uint64_t gate = make_desc(0, 0, 0x5, false, 0, true, false, false) |
			((uint64_t)SEL_TSS_B << 16);
	struct ts_result res;

	(void)state;
	memcpy(fm.mem + IDT + 0x40 * 8, &gate, 8);
	/* CPL 3 through a DPL-0 task gate: #GP with the IDT entry. */
	cpu.sreg[TS_SS].ar = 0xc0f3;
	cpu.sreg[TS_CS].ar = 0xc0fb;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &ev, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_false(res.committed);
	assert_int_equal(res.fault_vector, X86_EXC_GP);
	assert_int_equal(res.error_code, 0x40 * 8 + 2);
	assert_int_equal(cpu.tr.selector, SEL_TSS_A);
	/* CPL 0: allowed, no error code pushed. */
	cpu.sreg[TS_SS].ar = 0xc093;
	cpu.sreg[TS_CS].ar = 0xc09b;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &ev, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(cpu.gpr[4], 0x9000);
}

/* Faults before the commit point: nothing changed, in the CPU or in memory. */
static void expect_early_fault(uint16_t sel, enum ts_source src, const struct ts_event *ev,
			       unsigned int vector, uint32_t err)
{
	struct ts_cpu before = cpu;
	static uint8_t mem_before[MEM_SIZE];
	struct ts_result res;

	memcpy(mem_before, fm.mem, MEM_SIZE);
	task_switch(&cpu, &mem, sel, src, ev, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_false(res.committed);
	assert_int_equal(res.fault_vector, vector);
	assert_int_equal(res.error_code, err);
	assert_memory_equal(&before, &cpu, sizeof(cpu));
	assert_memory_equal(mem_before, fm.mem, MEM_SIZE);
	assert_int_equal(fm.cr3_loads, 0);
}

static void test_new_tss_descriptor_faults(void **state)
{
	struct ts_event ext = { .vector = 0x20, .external = true };

	(void)state;
	/* TI set, or past the GDT limit: #GP, #TS for IRET. */
	expect_early_fault(SEL_TSS_B | 4, TS_SOURCE_JMP, NULL, X86_EXC_GP, SEL_TSS_B | 4);
	expect_early_fault(0x68, TS_SOURCE_CALL, NULL, X86_EXC_GP, 0x68);
	expect_early_fault(0x68, TS_SOURCE_IRET, NULL, X86_EXC_TS, 0x68);
	/* Not an available TSS (busy for JMP), not a busy one for IRET. */
	expect_early_fault(SEL_TSS_A, TS_SOURCE_JMP, NULL, X86_EXC_GP, SEL_TSS_A);
	expect_early_fault(SEL_CODE0, TS_SOURCE_CALL, NULL, X86_EXC_GP, SEL_CODE0);
	expect_early_fault(SEL_TSS_B, TS_SOURCE_IRET, NULL, X86_EXC_TS, SEL_TSS_B);
	/* The RPL is not in the error code; EXT is, for an external interrupt. */
	expect_early_fault(SEL_CODE0 | 3, TS_SOURCE_IDT_GATE, &ext, X86_EXC_GP, SEL_CODE0 | 1);
	/* Not present: #NP. */
	gdt_set(SEL_TSS_B, gdt_get(SEL_TSS_B) & ~X86_DESC_P);
	expect_early_fault(SEL_TSS_B, TS_SOURCE_JMP, NULL, X86_EXC_NP, SEL_TSS_B);
	/* A limit below 67H: #TS. */
	gdt_set(SEL_TSS_B, make_desc(TSS_B_BASE, 0x66, 0x9, false, 0, true, false, false));
	expect_early_fault(SEL_TSS_B, TS_SOURCE_JMP, NULL, X86_EXC_TS, SEL_TSS_B);
}

/* A fault in the delivery of a hardware exception through the gate (Vol. 3A Table 6-5). */
static void test_fault_in_exception_delivery(void **state)
{
	struct ts_event gp = { .vector = X86_EXC_GP, .external = true, .exception = true,
			       .has_error_code = true };
	struct ts_event pf = { .vector = X86_EXC_PF, .external = true, .exception = true,
			       .has_error_code = true };
	struct ts_event db = { .vector = X86_EXC_DB, .external = true, .exception = true };
	struct ts_event df = { .vector = X86_EXC_DF, .external = true, .exception = true,
			       .has_error_code = true };
	struct ts_event irq = { .vector = 0x30, .external = true };
	struct ts_result res;

	(void)state;
	gdt_set(SEL_TSS_B, gdt_get(SEL_TSS_B) & ~X86_DESC_P);
	/* Contributory (#GP) then contributory (#NP): #DF(0). */
	expect_early_fault(SEL_TSS_B, TS_SOURCE_IDT_GATE, &gp, X86_EXC_DF, 0);
	/* #PF then #NP: #DF(0). */
	expect_early_fault(SEL_TSS_B, TS_SOURCE_IDT_GATE, &pf, X86_EXC_DF, 0);
	/* Benign (#DB) then #NP, and an interrupt then #NP: the #NP, with EXT. */
	expect_early_fault(SEL_TSS_B, TS_SOURCE_IDT_GATE, &db, X86_EXC_NP, SEL_TSS_B | 1);
	expect_early_fault(SEL_TSS_B, TS_SOURCE_IDT_GATE, &irq, X86_EXC_NP, SEL_TSS_B | 1);
	/* Any fault in the delivery of #DF: shutdown. */
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &df, &res);
	assert_int_equal(res.outcome, TS_STOP);
	/* After the commit point too: #GP through the gate, the new task's DS not present. */
	setup(NULL);
	tss_at(TSS_B_BASE)->sreg[TS_DS][0] = SEL_DATA_NP;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_IDT_GATE, &gp, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_true(res.committed);
	assert_int_equal(res.fault_vector, X86_EXC_DF);
	assert_int_equal(res.error_code, 0);
	/* No error code was pushed: the delivery did not complete. */
	assert_int_equal(cpu.gpr[4], 0x9000);
}

static void expect_stop(uint16_t sel, enum ts_source src)
{
	struct ts_result res;

	task_switch(&cpu, &mem, sel, src, NULL, &res);
	assert_int_equal(res.outcome, TS_STOP);
	assert_non_null(res.stop_reason);
}

static void test_not_emulated(void **state)
{
	(void)state;
	fm.fail_reads = true;
	expect_stop(SEL_TSS_B, TS_SOURCE_JMP);
	setup(NULL);
	fm.fail_cr3 = true;
	expect_stop(SEL_TSS_B, TS_SOURCE_JMP);
}

/* Faults after the commit point: the switch is done, the fault is the new task's. */
static void expect_late_fault(unsigned int vector, uint32_t err)
{
	struct ts_result res;

	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_true(res.committed);
	assert_int_equal(res.fault_vector, vector);
	assert_int_equal(res.error_code, err);
	assert_int_equal(cpu.tr.selector, SEL_TSS_B);
	assert_true(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
	setup(NULL);
}

static void test_segment_faults(void **state)
{
	struct tss32 *b = tss_at(TSS_B_BASE);

	(void)state;
	b->sreg[TS_CS][0] = 0;				/* null CS */
	expect_late_fault(X86_EXC_TS, 0);
	b = tss_at(TSS_B_BASE);
	b->sreg[TS_CS][0] = SEL_DATA0;			/* CS not code */
	expect_late_fault(X86_EXC_TS, SEL_DATA0);
	b->sreg[TS_CS][0] = SEL_CODE3;			/* non-conforming, DPL 3 != RPL 0 */
	expect_late_fault(X86_EXC_TS, SEL_CODE3);
	b->sreg[TS_SS][0] = 0;				/* null SS */
	expect_late_fault(X86_EXC_TS, 0);
	b->sreg[TS_SS][0] = SEL_DATA3;			/* SS DPL 3 != CPL 0 */
	expect_late_fault(X86_EXC_TS, SEL_DATA3);
	b->sreg[TS_SS][0] = SEL_CODE0;			/* SS not writable data */
	expect_late_fault(X86_EXC_TS, SEL_CODE0);
	b->sreg[TS_SS][0] = SEL_DATA_NP;		/* SS not present: #SS */
	expect_late_fault(X86_EXC_SS, SEL_DATA_NP);
	b->sreg[TS_DS][0] = SEL_DATA_NP;		/* DS not present: #NP */
	expect_late_fault(X86_EXC_NP, SEL_DATA_NP);
	b->sreg[TS_DS][0] = SEL_CODE_XO;		/* execute-only code in DS */
	expect_late_fault(X86_EXC_TS, SEL_CODE_XO);
	b->sreg[TS_FS][0] = SEL_TSS_A;			/* a system descriptor */
	expect_late_fault(X86_EXC_TS, SEL_TSS_A);
	b->sreg[TS_GS][0] = 0x70;			/* past the GDT limit */
	expect_late_fault(X86_EXC_TS, 0x70);
	b->sreg[TS_ES][0] = 0x0c;			/* in the LDT, with no LDT */
	expect_late_fault(X86_EXC_TS, 0x0c);
	b->ldt_selector = SEL_DATA0;			/* not an LDT */
	expect_late_fault(X86_EXC_TS, SEL_DATA0);
	b->ldt_selector = 0x0c;				/* an LDT selector with TI set */
	expect_late_fault(X86_EXC_TS, 0x0c);
}

static void test_ldt_and_ring3(void **state)
{
	struct tss32 *b = tss_at(TSS_B_BASE);
	struct ts_result res;

	(void)state;
	/* Ring 3, ES from the new task's LDT, a null GS, the T flag. */
	b->ldt_selector = SEL_LDT;
	b->sreg[TS_CS][0] = SEL_CODE3 | 3;
	b->sreg[TS_SS][0] = SEL_DATA3 | 3;
	b->sreg[TS_DS][0] = SEL_DATA3 | 3;
	b->sreg[TS_ES][0] = 0x0c | 3;	/* DPL 0 data at CPL 3: #TS */
	b->trap = 1;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_int_equal(res.fault_vector, X86_EXC_TS);
	assert_int_equal(res.error_code, 0x0c);
	assert_int_equal(cpu.ldtr.base, 0x4000);
	assert_int_equal(cpu.ldtr.limit, 0xf);
	assert_int_equal(cpu.ldtr.ar, 0x82);

	setup(NULL);
	b = tss_at(TSS_B_BASE);
	b->ldt_selector = SEL_LDT;
	b->sreg[TS_CS][0] = SEL_CODE3 | 3;
	b->sreg[TS_SS][0] = SEL_DATA3 | 3;
	b->sreg[TS_DS][0] = SEL_DATA3 | 3;
	b->sreg[TS_ES][0] = SEL_DATA3 | 3;
	b->sreg[TS_FS][0] = SEL_DATA3 | 3;
	b->sreg[TS_GS][0] = 3;		/* null: unusable */
	b->trap = 1;
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_true(res.debug_trap);
	assert_int_equal(cpu.sreg[TS_CS].ar & VMX_AR_DPL_MASK, 3u << VMX_AR_DPL_SHIFT);
	assert_int_equal(cpu.sreg[TS_SS].ar & VMX_AR_DPL_MASK, 3u << VMX_AR_DPL_SHIFT);
	assert_true(cpu.sreg[TS_GS].ar & VMX_AR_UNUSABLE);
	assert_int_equal(cpu.sreg[TS_GS].selector, 3);
}

static void test_descriptor_fields(void **state)
{
	uint64_t d = make_desc(0x12345678, 0xabcde, 0xb, true, 2, true, true, true);

	(void)state;
	assert_int_equal(ts_desc_base(d), 0x12345678);
	assert_int_equal(ts_desc_limit(d), 0xabcdefff);
	assert_int_equal(ts_desc_to_ar(d), 0xc0db);
	d = make_desc(0xff000000, 0x67, 0x9, false, 0, true, false, false);
	assert_int_equal(ts_desc_base(d), 0xff000000);
	assert_int_equal(ts_desc_limit(d), 0x67);
	assert_int_equal(ts_desc_to_ar(d), 0x89);
}

/*
 * 16-bit TSSs (Vol. 3A 8.6, Figure 8-11): IP, FLAGS, AX-DI, ES, CS, SS,
 * DS, the LDT selector and the back link; no CR3, FS, GS or T flag.  On
 * a load the upper halves are Bochs's (cpu/tasking.cc): EIP and EFLAGS
 * zero-extended, the general registers 0xffff above, FS and GS null.
 */
static struct tss16 *tss16_at(uint32_t base)
{
	return (struct tss16 *)(fm.mem + base);
}

/* A 16-bit task's start state: IP 0x1000 + tag, registers tag + i, 16-bit stack. */
static void tss16_init(uint32_t base, uint16_t tag)
{
	struct tss16 *t = tss16_at(base);

	memset(t, 0, sizeof(*t));
	t->ip = 0x1000 + tag;
	t->flags = X86_RFLAGS_FIXED | X86_RFLAGS_CF | X86_RFLAGS_IF;
	for (unsigned int i = 0; i < 8; i++)
		t->gpr[i] = tag + i;
	t->gpr[4] = 0x800;	/* SP */
	t->sreg[TS_ES] = SEL_DATA0;
	t->sreg[TS_CS] = SEL_CODE0;
	t->sreg[TS_SS] = SEL_DATA16;
	t->sreg[TS_DS] = SEL_DATA0;
	/* The bytes past the 16-bit TSS's end: never written. */
	memset(fm.mem + base + sizeof(*t), 0xee, 0x40);
}

/* Make the running task the 16-bit task C (TR = TSS C, busy). */
static void run_in_tss16_c(void)
{
	gdt_set(SEL_TSS16, gdt_get(SEL_TSS16) | X86_DESC_TSS_BUSY);
	gdt_set(SEL_TSS_A, gdt_get(SEL_TSS_A) & ~X86_DESC_TSS_BUSY);
	cpu.tr = (struct ts_segment){ SEL_TSS16, TSS_C_BASE, 0x2b, 0x83 };
	cpu.eflags = X86_RFLAGS_FIXED | X86_RFLAGS_ZF | X86_RFLAGS_AC | X86_RFLAGS_IF;
	cpu.sreg[TS_SS] = (struct ts_segment){ SEL_DATA16, DATA16_BASE, 0xffff, 0x93 };
	for (unsigned int i = 0; i < 8; i++)
		cpu.gpr[i] = 0xabcd0000u + 0x100 + i;
}

/* The 16-bit task at @base was saved from run_in_tss16_c()'s state: low halves only. */
static void check_tss16_saved(uint32_t base, uint16_t flags)
{
	const struct tss16 *t = tss16_at(base);

	assert_int_equal(t->ip, 0x3456);	/* cpu.eip 0x123456 */
	assert_int_equal(t->flags, flags);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(t->gpr[i], 0x100 + i);
	assert_int_equal(t->sreg[TS_ES], SEL_DATA0);
	assert_int_equal(t->sreg[TS_CS], SEL_CODE0);
	assert_int_equal(t->sreg[TS_SS], SEL_DATA16);
	assert_int_equal(t->sreg[TS_DS], SEL_DATA0);
	/* The LDT selector and the stacks are static; nothing past the TSS is touched. */
	assert_int_equal(t->ldt_selector, 0);
	assert_int_equal(t->sp0, 0);
	for (unsigned int i = 0; i < 0x40; i++)
		assert_int_equal(fm.mem[base + sizeof(*t) + i], 0xee);
}

/* The 16-bit task at @sel/@base started with tss16_init(@tag)'s state. */
static void check_new_task16(uint16_t sel, uint32_t base, uint16_t tag)
{
	assert_int_equal(cpu.tr.selector, sel);
	assert_int_equal(cpu.tr.base, base);
	assert_int_equal(cpu.tr.limit, 0x2b);
	assert_int_equal(cpu.tr.ar, 0x83);	/* present, 16-bit busy TSS */
	assert_true(cpu.cr0 & X86_CR0_TS);
	assert_int_equal(cpu.dr7, X86_DR7_INIT | 0xaa);
	/* No CR3 in a 16-bit TSS: paging stays the old task's. */
	assert_int_equal(fm.cr3_loads, 0);
	assert_int_equal(cpu.cr3, 0xa000);
	assert_int_equal(cpu.eip, 0x1000u + tag);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(cpu.gpr[i], 0xffff0000u | (i == 4 ? 0x800u : tag + i));
	assert_int_equal(cpu.sreg[TS_CS].selector, SEL_CODE0);
	assert_int_equal(cpu.sreg[TS_CS].ar, 0xc09b);
	assert_int_equal(cpu.sreg[TS_SS].selector, SEL_DATA16);
	assert_int_equal(cpu.sreg[TS_SS].base, DATA16_BASE);
	assert_int_equal(cpu.sreg[TS_SS].ar, 0x93);
	assert_int_equal(cpu.sreg[TS_DS].selector, SEL_DATA0);
	for (unsigned int i = TS_FS; i <= TS_GS; i++) {
		assert_int_equal(cpu.sreg[i].selector, 0);
		assert_true(cpu.sreg[i].ar & VMX_AR_UNUSABLE);
	}
	assert_true(cpu.ldtr.ar & VMX_AR_UNUSABLE);
}

static void test_tss16_jmp_16_to_16(void **state)
{
	struct ts_result res;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	tss16_init(TSS_D_BASE, 0x20);
	run_in_tss16_c();
	task_switch(&cpu, &mem, SEL_TSS16_D, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_true(res.committed);
	assert_false(res.debug_trap);
	check_new_task16(SEL_TSS16_D, TSS_D_BASE, 0x20);
	/* FLAGS zero-extended: AC (bit 18) of the old task is gone, no NT. */
	assert_int_equal(cpu.eflags, X86_RFLAGS_FIXED | X86_RFLAGS_CF | X86_RFLAGS_IF);
	check_tss16_saved(TSS_C_BASE, X86_RFLAGS_FIXED | X86_RFLAGS_ZF | X86_RFLAGS_IF);
	assert_false(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS16_D) & X86_DESC_TSS_BUSY);
	assert_int_equal(tss16_at(TSS_D_BASE)->prev_task_link, 0);
}

/* CALL from 16-bit C to 16-bit D and IRET back: the back link, NT, both busy. */
static void test_tss16_call_iret_16_to_16(void **state)
{
	struct ts_result res;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	tss16_init(TSS_D_BASE, 0x20);
	run_in_tss16_c();
	task_switch(&cpu, &mem, SEL_TSS16_D, TS_SOURCE_CALL, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	check_new_task16(SEL_TSS16_D, TSS_D_BASE, 0x20);
	assert_int_equal(tss16_at(TSS_D_BASE)->prev_task_link, SEL_TSS16);
	assert_true(cpu.eflags & X86_RFLAGS_NT);
	assert_true(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS16_D) & X86_DESC_TSS_BUSY);

	cpu.eip = 0x2222;
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_IRET, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	/* D's FLAGS image without NT; D available; C's saved state back. */
	assert_int_equal(tss16_at(TSS_D_BASE)->ip, 0x2222);
	assert_false(tss16_at(TSS_D_BASE)->flags & X86_RFLAGS_NT);
	assert_false(gdt_get(SEL_TSS16_D) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);
	assert_int_equal(cpu.tr.selector, SEL_TSS16);
	assert_int_equal(cpu.eip, 0x3456);
	assert_int_equal(cpu.eflags, X86_RFLAGS_FIXED | X86_RFLAGS_ZF | X86_RFLAGS_IF);
	assert_int_equal(cpu.gpr[0], 0xffff0100);
	assert_int_equal(fm.cr3_loads, 0);
}

/* CALL from 32-bit A to 16-bit C, IRET back to A: each TSS in its own format. */
static void test_tss16_call_iret_32_to_16(void **state)
{
	uint32_t eflags = cpu.eflags;
	struct ts_result res;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_CALL, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	check_new_task16(SEL_TSS16, TSS_C_BASE, 0x10);
	check_old_task_a_saved(eflags);
	assert_int_equal(tss16_at(TSS_C_BASE)->prev_task_link, SEL_TSS_A);
	assert_int_equal(cpu.eflags, X86_RFLAGS_FIXED | X86_RFLAGS_CF | X86_RFLAGS_IF | X86_RFLAGS_NT);
	assert_true(gdt_get(SEL_TSS_A) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);

	tss_at(TSS_A_BASE)->cr3 = 0xa000;
	cpu.eip = 0x3333;
	cpu.gpr[0] = 0x12345678;
	task_switch(&cpu, &mem, SEL_TSS_A, TS_SOURCE_IRET, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(tss16_at(TSS_C_BASE)->ip, 0x3333);
	assert_int_equal(tss16_at(TSS_C_BASE)->gpr[0], 0x5678);
	assert_int_equal(tss16_at(TSS_C_BASE)->flags, X86_RFLAGS_FIXED | X86_RFLAGS_CF | X86_RFLAGS_IF);
	assert_false(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);
	assert_int_equal(cpu.tr.selector, SEL_TSS_A);
	assert_int_equal(cpu.tr.ar, 0x8b);
	assert_int_equal(cpu.eip, 0x123456);
	assert_int_equal(cpu.eflags, eflags);
	assert_int_equal(cpu.gpr[0], 0x1000);
	/* Back in a 32-bit task: its CR3 is loaded. */
	assert_int_equal(fm.cr3_loads, 1);
	assert_int_equal(cpu.cr3, 0xa000);
}

/* JMP from 16-bit C to 32-bit B: C saved in the 16-bit format, B loaded in full. */
static void test_tss16_jmp_16_to_32(void **state)
{
	struct ts_result res;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	run_in_tss16_c();
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	check_new_task_b();
	check_tss16_saved(TSS_C_BASE, X86_RFLAGS_FIXED | X86_RFLAGS_ZF | X86_RFLAGS_IF);
	assert_false(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);
	assert_true(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
	assert_int_equal(cpu.eflags, X86_RFLAGS_FIXED | X86_RFLAGS_CF);
}

/*
 * CALL from 16-bit C to 32-bit B links B back to C; B's IRET returns to
 * C with the 16-bit load.
 */
static void test_tss16_call_iret_16_to_32(void **state)
{
	struct ts_result res;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	run_in_tss16_c();
	task_switch(&cpu, &mem, SEL_TSS_B, TS_SOURCE_CALL, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(tss_at(TSS_B_BASE)->prev_task_link, SEL_TSS16);
	assert_true(cpu.eflags & X86_RFLAGS_NT);
	assert_true(gdt_get(SEL_TSS16) & X86_DESC_TSS_BUSY);
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_IRET, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(cpu.tr.ar, 0x83);
	assert_int_equal(cpu.eip, 0x3456);
	assert_int_equal(cpu.eflags, X86_RFLAGS_FIXED | X86_RFLAGS_ZF | X86_RFLAGS_IF);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(cpu.gpr[i], 0xffff0000u + 0x100 + i);
	/* CR3 stays B's: the 16-bit TSS has none. */
	assert_int_equal(fm.cr3_loads, 1);
	assert_int_equal(cpu.cr3, 0xb000);
	assert_false(gdt_get(SEL_TSS_B) & X86_DESC_TSS_BUSY);
}

/*
 * An exception through a task gate to a 16-bit TSS: the error code is a
 * word, at SS.base + SP - 2 (SS.B clear), ESP's upper half kept.
 */
static void test_tss16_idt_gate_error_code(void **state)
{
	struct ts_event ev = { .vector = 13, .exception = true, .has_error_code = true,
			       .error_code = 0x12345678 };
	struct ts_result res;
	uint32_t around;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	memset(fm.mem + DATA16_BASE + 0x800 - 4, 0xcc, 8);
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_IDT_GATE, &ev, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(tss16_at(TSS_C_BASE)->prev_task_link, SEL_TSS_A);
	assert_true(cpu.eflags & X86_RFLAGS_NT);
	assert_int_equal(cpu.gpr[4], 0xffff07fe);
	memcpy(&around, fm.mem + DATA16_BASE + 0x800 - 4, 4);
	assert_int_equal(around, 0x5678cccc);	/* the word at SP - 2, nothing below it */
	memcpy(&around, fm.mem + DATA16_BASE + 0x800, 4);
	assert_int_equal(around, 0xcccccccc);
}

/* A 16-bit TSS's limit below 2BH: #TS(selector) before anything changes. */
static void test_tss16_limit(void **state)
{
	struct ts_event ext = { .vector = 0x20, .external = true };

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	gdt_set(SEL_TSS16, make_desc(TSS_C_BASE, 0x2a, 0x1, false, 0, true, false, false));
	expect_early_fault(SEL_TSS16, TS_SOURCE_JMP, NULL, X86_EXC_TS, SEL_TSS16);
	expect_early_fault(SEL_TSS16, TS_SOURCE_IDT_GATE, &ext, X86_EXC_TS, SEL_TSS16 | 1);
	/* Busy for JMP, available for IRET: #GP, #TS as for a 32-bit TSS. */
	gdt_set(SEL_TSS16, make_desc(TSS_C_BASE, 0x2b, 0x3, false, 0, true, false, false));
	expect_early_fault(SEL_TSS16, TS_SOURCE_JMP, NULL, X86_EXC_GP, SEL_TSS16);
	expect_early_fault(SEL_TSS16_D, TS_SOURCE_IRET, NULL, X86_EXC_TS, SEL_TSS16_D);
	/* Not present: #NP. */
	gdt_set(SEL_TSS16_D, gdt_get(SEL_TSS16_D) & ~X86_DESC_P);
	expect_early_fault(SEL_TSS16_D, TS_SOURCE_CALL, NULL, X86_EXC_NP, SEL_TSS16_D);
}

/* The new 16-bit task's segments are checked as a 32-bit task's, after the commit point. */
static void test_tss16_segment_faults(void **state)
{
	struct ts_result res;

	(void)state;
	tss16_init(TSS_C_BASE, 0x10);
	tss16_at(TSS_C_BASE)->sreg[TS_CS] = 0;
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_true(res.committed);
	assert_int_equal(res.fault_vector, X86_EXC_TS);
	assert_int_equal(res.error_code, 0);
	assert_int_equal(cpu.tr.selector, SEL_TSS16);

	setup(NULL);
	tss16_init(TSS_C_BASE, 0x10);
	tss16_at(TSS_C_BASE)->sreg[TS_SS] = SEL_DATA_NP;
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_int_equal(res.fault_vector, X86_EXC_SS);
	assert_int_equal(res.error_code, SEL_DATA_NP);

	setup(NULL);
	tss16_init(TSS_C_BASE, 0x10);
	tss16_at(TSS_C_BASE)->ldt_selector = SEL_DATA0;
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_FAULT);
	assert_int_equal(res.fault_vector, X86_EXC_TS);
	assert_int_equal(res.error_code, SEL_DATA0);

	setup(NULL);
	tss16_init(TSS_C_BASE, 0x10);
	tss16_at(TSS_C_BASE)->ldt_selector = SEL_LDT;
	tss16_at(TSS_C_BASE)->sreg[TS_ES] = 0x0c;	/* from the new task's LDT */
	task_switch(&cpu, &mem, SEL_TSS16, TS_SOURCE_JMP, NULL, &res);
	assert_int_equal(res.outcome, TS_DONE);
	assert_int_equal(cpu.ldtr.base, 0x4000);
	assert_int_equal(cpu.sreg[TS_ES].selector, 0x0c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_jmp, setup),
		cmocka_unit_test_setup(test_call_then_iret, setup),
		cmocka_unit_test_setup(test_idt_gate_error_code, setup),
		cmocka_unit_test_setup(test_software_int_gate_dpl, setup),
		cmocka_unit_test_setup(test_new_tss_descriptor_faults, setup),
		cmocka_unit_test_setup(test_not_emulated, setup),
		cmocka_unit_test_setup(test_to_vm86, setup),
		cmocka_unit_test_setup(test_to_vm86_bad_ldt, setup),
		cmocka_unit_test_setup(test_to_vm86_error_code, setup),
		cmocka_unit_test_setup(test_from_vm86, setup),
		cmocka_unit_test_setup(test_fault_in_exception_delivery, setup),
		cmocka_unit_test_setup(test_segment_faults, setup),
		cmocka_unit_test_setup(test_ldt_and_ring3, setup),
		cmocka_unit_test_setup(test_tss16_jmp_16_to_16, setup),
		cmocka_unit_test_setup(test_tss16_call_iret_16_to_16, setup),
		cmocka_unit_test_setup(test_tss16_call_iret_32_to_16, setup),
		cmocka_unit_test_setup(test_tss16_jmp_16_to_32, setup),
		cmocka_unit_test_setup(test_tss16_call_iret_16_to_32, setup),
		cmocka_unit_test_setup(test_tss16_idt_gate_error_code, setup),
		cmocka_unit_test_setup(test_tss16_limit, setup),
		cmocka_unit_test_setup(test_tss16_segment_faults, setup),
		cmocka_unit_test(test_descriptor_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
