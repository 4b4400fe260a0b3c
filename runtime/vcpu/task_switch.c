// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hardware task switch, emulated for a TASK_SWITCH exit: to and from
 * a 32-bit or a 16-bit TSS in protected mode, in the order of SDM Vol. 3A
 * 8.3 "Task Switching" with the checks of its Table 8-2.  Pure: the guest's state
 * is a struct ts_cpu, its memory the callbacks of struct ts_mem
 * (task_switch.h); task_switch_vmcs.c is the VMCS side.
 *
 * A new task whose EFLAGS has VM set runs in virtual-8086 mode: its
 * segment registers are loaded as that mode loads them (base selector *
 * 16, limit 0xffff, a read/write data segment at DPL 3; Vol. 3A 20.2.1,
 * 8.3 step 12), without descriptor checks; its LDTR is loaded and checked
 * as any task's.  A switch from virtual-8086 mode (an interrupt through a
 * task gate) saves the old task's state as any other.
 *
 * A 16-bit TSS (Vol. 3A 8.6) holds IP, FLAGS, AX to DI, ES, CS, SS, DS,
 * the LDT selector and the back link: a switch from it saves those, a
 * switch to it loads them and leaves CR3 as it is.  The SDM leaves the
 * upper halves of the registers undefined after a switch to a 16-bit TSS;
 * they are loaded as Bochs loads them (cpu/tasking.cc), the reference the
 * guest tests run against: EIP and EFLAGS zero-extended (so never VM),
 * the general registers with 0xffff in bits 31:16, FS and GS null.  An
 * error code delivered through a gate to a 16-bit TSS is pushed as a word.
 *
 * Not emulated (the guest is stopped with a report): guest memory the
 * hypervisor cannot reach (where the CPU would raise #PF, the guest is
 * stopped).
 */
#include <stddef.h>

#include "arch_bits.h"
#include "runtime/vcpu/task_switch.h"

#define SEL_RPL_MASK	3u	/* selector bits 1:0: requested privilege level */
#define SEL_TI		4u	/* selector bit 2: table indicator (1 = LDT) */
#define SEL_INDEX_MASK	0xfff8u
/* A segment register in virtual-8086 mode (Vol. 3A 20.1.1; Vol. 3C 27.3.1.2). */
#define VM86_SEG_LIMIT	0xffffu
#define VM86_SEG_AR	(VMX_AR_TYPE_DATA_RW_ACCESSED | VMX_AR_S | (3u << VMX_AR_DPL_SHIFT) | VMX_AR_P)
#define VM86_SEG_SHIFT	4	/* base = selector << 4 */

/* The error code of a selector fault: the selector without RPL, EXT in bit 0 (Vol. 3A 6.13). */
#define SEL_ERR(sel, ext)	(((sel) & 0xfffcu) | (ext))
/* An error code that names an IDT entry: IDT (bit 1) set (Vol. 3A 6.13). */
#define IDT_ERR(vector, ext)	(((vector) << 3) | 2u | (ext))

uint64_t ts_desc_base(uint64_t desc)
{
	return ((desc & X86_DESC_BASE_LOW_MASK) >> X86_DESC_BASE_LOW_SHIFT) |
	       ((desc >> 56) << 24);	/* base 31:24 in bits 63:56 */
}

uint32_t ts_desc_limit(uint64_t desc)
{
	uint32_t limit = (uint32_t)((desc & X86_DESC_LIMIT_LOW_MASK) |
				    ((desc & X86_DESC_LIMIT_HIGH_MASK) >> X86_DESC_LIMIT_HIGH_SHIFT << 16));

	return (desc & X86_DESC_G) ? (limit << 12) | 0xfff : limit;
}

/*
 * The access-rights field holds descriptor bits 47:40 (type, S, DPL, P)
 * in its bits 7:0 and bits 55:52 (AVL, L, D/B, G) in its bits 15:12.
 */
uint32_t ts_desc_to_ar(uint64_t desc)
{
	return (uint32_t)(desc >> X86_DESC_TYPE_SHIFT) & 0xf0ffu;
}

static unsigned int desc_type(uint64_t desc)
{
	return (unsigned int)((desc & X86_DESC_TYPE_MASK) >> X86_DESC_TYPE_SHIFT);
}

static unsigned int desc_dpl(uint64_t desc)
{
	return (unsigned int)((desc & X86_DESC_DPL_MASK) >> X86_DESC_DPL_SHIFT);
}

static void fault(struct ts_result *res, unsigned int vector, uint32_t error_code)
{
	res->outcome = TS_FAULT;
	res->fault_vector = vector;
	res->error_code = error_code;
}

static void stop(struct ts_result *res, const char *why)
{
	res->outcome = TS_STOP;
	res->stop_reason = why;
}

/* Where @sel's descriptor is: false when the selector is outside its table. */
static bool desc_address(const struct ts_cpu *cpu, uint16_t sel, uint64_t *la)
{
	uint64_t base = cpu->gdtr_base;
	uint32_t limit = cpu->gdtr_limit;

	if (sel & SEL_TI) {
		if (cpu->ldtr.ar & VMX_AR_UNUSABLE)
			return false;
		base = cpu->ldtr.base;
		limit = cpu->ldtr.limit;
	}
	if ((uint32_t)(sel | 7u) > limit)
		return false;
	*la = base + (sel & SEL_INDEX_MASK);
	return true;
}

/*
 * Load the LDTR from the new task's LDT selector (Table 8-2): null leaves
 * it unusable; otherwise a present LDT descriptor in the GDT, or #TS.
 */
static bool load_ldtr(struct ts_cpu *cpu, const struct ts_mem *mem, uint32_t ext,
		      struct ts_result *res)
{
	uint16_t sel = cpu->ldtr.selector;
	uint64_t la, desc;

	cpu->ldtr.ar = VMX_AR_UNUSABLE;
	if (!(sel & ~SEL_RPL_MASK))
		return true;
	if ((sel & SEL_TI) || !desc_address(cpu, sel, &la)) {
		fault(res, X86_EXC_TS, SEL_ERR(sel, ext));
		return false;
	}
	if (!mem->read(mem->ctx, la, &desc, sizeof(desc))) {
		stop(res, "the new task's LDT descriptor is not readable");
		return false;
	}
	if ((desc & X86_DESC_TYPE_MASK) != X86_DESC_TYPE_LDT || (desc & X86_DESC_S) ||
	    !(desc & X86_DESC_P)) {
		fault(res, X86_EXC_TS, SEL_ERR(sel, ext));
		return false;
	}
	cpu->ldtr.base = ts_desc_base(desc);
	cpu->ldtr.limit = ts_desc_limit(desc);
	cpu->ldtr.ar = ts_desc_to_ar(desc);
	return true;
}

/*
 * Load a segment register from the selector the new task's TSS gave it,
 * with the checks of Table 8-2: CS a code segment whose DPL is its RPL
 * (non-conforming) or at most it (conforming), present or #NP; SS a
 * writable data segment with DPL and RPL the CPL, present or #SS; ES, DS,
 * FS and GS null, or data or readable code, with DPL at least CPL and
 * RPL unless conforming code, present or #NP.  Everything else is #TS.
 * The descriptor's accessed bit is set, as the processor sets it.
 */
static bool load_sreg(struct ts_cpu *cpu, const struct ts_mem *mem, enum ts_sreg r,
		      unsigned int cpl, uint32_t ext, struct ts_result *res)
{
	struct ts_segment *s = &cpu->sreg[r];
	uint16_t sel = s->selector;
	unsigned int rpl = sel & SEL_RPL_MASK;
	unsigned int type, dpl, np_vector = X86_EXC_NP;
	bool bad;
	uint64_t la, desc;

	if (!(sel & ~SEL_RPL_MASK)) {
		if (r == TS_CS || r == TS_SS) {
			fault(res, X86_EXC_TS, SEL_ERR(sel, ext));
			return false;
		}
		s->base = 0;
		s->limit = 0;
		s->ar = VMX_AR_UNUSABLE;
		return true;
	}
	if (!desc_address(cpu, sel, &la)) {
		fault(res, X86_EXC_TS, SEL_ERR(sel, ext));
		return false;
	}
	if (!mem->read(mem->ctx, la, &desc, sizeof(desc))) {
		stop(res, "a segment descriptor of the new task is not readable");
		return false;
	}
	type = desc_type(desc);
	dpl = desc_dpl(desc);
	if (!(desc & X86_DESC_S)) {
		bad = true;
	} else if (r == TS_CS) {
		bad = !(type & X86_SEG_TYPE_CODE) ||
		      ((type & X86_SEG_TYPE_EC) ? dpl > rpl : dpl != rpl);
	} else if (r == TS_SS) {
		bad = (type & X86_SEG_TYPE_CODE) || !(type & X86_SEG_TYPE_WR) ||
		      dpl != cpl || rpl != cpl;
		np_vector = X86_EXC_SS;
	} else {
		bool code = type & X86_SEG_TYPE_CODE;

		bad = (code && !(type & X86_SEG_TYPE_WR)) ||
		      ((!code || !(type & X86_SEG_TYPE_EC)) && (dpl < cpl || dpl < rpl));
	}
	if (bad) {
		fault(res, X86_EXC_TS, SEL_ERR(sel, ext));
		return false;
	}
	if (!(desc & X86_DESC_P)) {
		fault(res, np_vector, SEL_ERR(sel, ext));
		return false;
	}
	if (!(type & X86_SEG_TYPE_ACCESSED)) {
		desc |= (uint64_t)X86_SEG_TYPE_ACCESSED << X86_DESC_TYPE_SHIFT;
		if (!mem->write(mem->ctx, la, &desc, sizeof(desc))) {
			stop(res, "a segment descriptor of the new task is not writable");
			return false;
		}
	}
	s->base = ts_desc_base(desc);
	s->limit = ts_desc_limit(desc);
	s->ar = ts_desc_to_ar(desc);
	return true;
}

/*
 * The error code of an exception delivered through the task gate, on the
 * new task's stack: a dword for a 32-bit TSS, a word for a 16-bit one.
 */
static bool push_error_code(struct ts_cpu *cpu, const struct ts_mem *mem, uint32_t error_code,
			    bool word, struct ts_result *res)
{
	const struct ts_segment *ss = &cpu->sreg[TS_SS];
	bool big = ss->ar & VMX_AR_DB;	/* SS.B: ESP, else SP */
	unsigned int len = word ? 2 : 4;
	uint32_t esp = big ? cpu->gpr[4] - len
			   : (cpu->gpr[4] & 0xffff0000u) | ((cpu->gpr[4] - len) & 0xffffu);

	/* Little-endian: the low word of error_code is its first two bytes. */
	if (!mem->write(mem->ctx, (uint32_t)(ss->base + (big ? esp : esp & 0xffffu)),
			&error_code, len)) {
		stop(res, "the new task's stack is not writable for the error code");
		return false;
	}
	cpu->gpr[4] = esp;
	return true;
}

/* Divide error, invalid TSS, segment not present, stack fault, #GP (Vol. 3A Table 6-4). */
static bool contributory(unsigned int vector)
{
	return vector == X86_EXC_DE || (vector >= X86_EXC_TS && vector <= X86_EXC_GP);
}

/*
 * The fault @res raised while the hardware exception @event was being
 * delivered (Vol. 3A 6.15, Table 6-5): contributory after contributory,
 * or contributory or #PF after #PF, is #DF(0); any fault in the delivery
 * of a #DF shuts the processor down.  Benign pairs are delivered serially:
 * the new fault stands.
 */
static void combine_with_event(const struct ts_event *event, struct ts_result *res)
{
	unsigned int first = event->vector, second = res->fault_vector;

	if (first == X86_EXC_DF) {
		stop(res, "a fault in the delivery of #DF through a task gate: shutdown (triple fault)");
		return;
	}
	if ((contributory(first) && contributory(second)) ||
	    (first == X86_EXC_PF && (contributory(second) || second == X86_EXC_PF)))
		fault(res, X86_EXC_DF, 0);
}

/* Set or clear the busy flag of the TSS descriptor at @la. */
static bool set_busy(const struct ts_mem *mem, uint64_t la, uint64_t desc, bool busy)
{
	desc = busy ? desc | X86_DESC_TSS_BUSY : desc & ~X86_DESC_TSS_BUSY;
	return mem->write(mem->ctx, la, &desc, sizeof(desc));
}

/*
 * The new task's state from its TSS at @base, in the 32-bit layout: a
 * 16-bit TSS's words zero-extended (EIP, EFLAGS), with 0xffff above them
 * (the general registers, as Bochs loads them), FS, GS and T zero, CR3
 * unused.
 */
static bool read_new_tss(const struct ts_mem *mem, uint64_t base, bool tss16, struct tss32 *t)
{
	struct tss16 t16;

	if (!tss16)
		return mem->read(mem->ctx, base, t, sizeof(*t));
	if (!mem->read(mem->ctx, base, &t16, sizeof(t16)))
		return false;
	*t = (struct tss32){ .prev_task_link = t16.prev_task_link, .eip = t16.ip,
			     .eflags = t16.flags, .ldt_selector = t16.ldt_selector };
	for (unsigned int i = 0; i < 8; i++)
		t->gpr[i] = 0xffff0000u | t16.gpr[i];
	for (unsigned int i = 0; i < 4; i++)
		t->sreg[i][0] = t16.sreg[i];	/* ES, CS, SS, DS; FS and GS null */
	return true;
}

/*
 * Save the old task's dynamic state in its TSS at @base: EIP to GS in a
 * 32-bit TSS, IP to DS (the low halves) in a 16-bit one (Vol. 3A 8.2.1,
 * 8.6).  The static fields are not written.
 */
static bool save_old_tss(const struct ts_cpu *cpu, const struct ts_mem *mem, uint64_t base,
			 bool tss16, uint32_t eflags)
{
	struct tss32 t32;
	struct tss16 t16;

	if (tss16) {
		t16.ip = (uint16_t)cpu->eip;
		t16.flags = (uint16_t)eflags;
		for (unsigned int i = 0; i < 8; i++)
			t16.gpr[i] = (uint16_t)cpu->gpr[i];
		for (unsigned int i = 0; i < 4; i++)
			t16.sreg[i] = cpu->sreg[i].selector;
		return mem->write(mem->ctx, base + offsetof(struct tss16, ip), &t16.ip,
				  offsetof(struct tss16, ldt_selector) - offsetof(struct tss16, ip));
	}
	t32.eip = cpu->eip;
	t32.eflags = eflags;
	for (unsigned int i = 0; i < 8; i++)
		t32.gpr[i] = cpu->gpr[i];
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		t32.sreg[i][0] = cpu->sreg[i].selector;
	return mem->write(mem->ctx, base + offsetof(struct tss32, eip), &t32.eip,
			  offsetof(struct tss32, ldt_selector) - offsetof(struct tss32, eip));
}

static void do_task_switch(struct ts_cpu *cpu, const struct ts_mem *mem, uint16_t selector,
			   enum ts_source source, const struct ts_event *event,
			   struct ts_result *res)
{
	bool gate = source == TS_SOURCE_IDT_GATE;
	bool iret = source == TS_SOURCE_IRET;
	bool nested = source == TS_SOURCE_CALL || gate;
	uint32_t ext = gate && event->external ? 1 : 0;
	unsigned int bad_sel_fault = iret ? X86_EXC_TS : X86_EXC_GP;
	unsigned int cpl = (cpu->sreg[TS_SS].ar & VMX_AR_DPL_MASK) >> VMX_AR_DPL_SHIFT;
	uint64_t new_la, new_desc, old_la, old_desc, type;
	struct tss32 old_tss, new_tss;
	uint64_t new_base;
	uint32_t eflags;
	bool new16, old16;

	res->outcome = TS_DONE;
	res->committed = false;
	res->fault_vector = 0;
	res->error_code = 0;
	res->debug_trap = false;
	res->stop_reason = NULL;

	/*
	 * INT n, INT3 and INTO through a task gate: the gate's DPL is checked
	 * against the CPL (Vol. 3A 6.12.1.1); the CPU checked those of a
	 * task gate or TSS named by CALL or JMP before the exit, and none
	 * applies to other events and IRET.
	 */
	if (gate && event->software) {
		uint64_t gate_desc;

		if (!mem->read(mem->ctx, cpu->idtr_base + event->vector * 8u, &gate_desc, sizeof(gate_desc))) {
			stop(res, "the IDT's task gate is not readable");
			return;
		}
		if (cpl > desc_dpl(gate_desc)) {
			fault(res, X86_EXC_GP, IDT_ERR(event->vector, 0u));
			return;
		}
	}

	/* The new TSS descriptor: in the GDT, a TSS available (busy for IRET), present, large enough. */
	if ((selector & SEL_TI) || (uint32_t)(selector | 7u) > cpu->gdtr_limit) {
		fault(res, bad_sel_fault, SEL_ERR(selector, ext));
		return;
	}
	new_la = cpu->gdtr_base + (selector & SEL_INDEX_MASK);
	if (!mem->read(mem->ctx, new_la, &new_desc, sizeof(new_desc))) {
		stop(res, "the GDT is not readable");
		return;
	}
	type = new_desc & X86_DESC_TYPE_MASK;
	if (iret ? type != X86_DESC_TYPE_TSS32_BUSY && type != X86_DESC_TYPE_TSS16_BUSY
		 : type != X86_DESC_TYPE_TSS32_AVAIL && type != X86_DESC_TYPE_TSS16_AVAIL) {
		fault(res, bad_sel_fault, SEL_ERR(selector, ext));
		return;
	}
	if (!(new_desc & X86_DESC_P)) {
		fault(res, X86_EXC_NP, SEL_ERR(selector, ext));
		return;
	}
	if (ts_desc_limit(new_desc) < ((type == X86_DESC_TYPE_TSS32_AVAIL || type == X86_DESC_TYPE_TSS32_BUSY)
				       ? TSS32_MIN_LIMIT : TSS16_MIN_LIMIT)) {
		fault(res, X86_EXC_TS, SEL_ERR(selector, ext));
		return;
	}
	new16 = type == X86_DESC_TYPE_TSS16_AVAIL || type == X86_DESC_TYPE_TSS16_BUSY;
	/* VM entry let TR hold a busy TSS only: 16-bit (type 3) or 32-bit (type 11). */
	old16 = (cpu->tr.ar & VMX_AR_TYPE_MASK) == VMX_AR_TYPE_TSS16_BUSY;
	if (!old16 && (cpu->tr.ar & VMX_AR_TYPE_MASK) != VMX_AR_TYPE_TSS_BUSY) {
		stop(res, "TR does not hold a busy TSS");
		return;
	}

	/* Both TSSs and the old one's descriptor must be reachable before anything is written. */
	new_base = ts_desc_base(new_desc);
	if (!mem->read(mem->ctx, cpu->tr.base, &old_tss,
		       old16 ? sizeof(struct tss16) : sizeof(struct tss32)) ||
	    !read_new_tss(mem, new_base, new16, &new_tss)) {
		stop(res, "a TSS of the task switch is not readable");
		return;
	}
	old_la = cpu->gdtr_base + (cpu->tr.selector & SEL_INDEX_MASK);
	if (!mem->read(mem->ctx, old_la, &old_desc, sizeof(old_desc))) {
		stop(res, "the GDT is not readable");
		return;
	}

	/* JMP and IRET leave the old task: its TSS is available again. */
	if ((source == TS_SOURCE_JMP || iret) && !set_busy(mem, old_la, old_desc, false)) {
		stop(res, "the GDT is not writable");
		return;
	}
	/* The old task's state, with NT cleared in the EFLAGS image of an IRET. */
	eflags = cpu->eflags;
	if (iret)
		eflags &= ~(uint32_t)X86_RFLAGS_NT;
	if (!save_old_tss(cpu, mem, cpu->tr.base, old16, eflags)) {
		stop(res, "the old TSS is not writable");
		return;
	}
	/*
	 * CALL and events nest: the new task links back to the old one (at
	 * offset 0 in both formats) and has NT set.
	 */
	if (nested) {
		new_tss.prev_task_link = cpu->tr.selector;
		new_tss.eflags |= X86_RFLAGS_NT;
		if (!mem->write(mem->ctx, new_base, &new_tss.prev_task_link, sizeof(new_tss.prev_task_link))) {
			stop(res, "the new TSS is not writable");
			return;
		}
	}
	if (!iret && !set_busy(mem, new_la, new_desc, true)) {
		stop(res, "the GDT is not writable");
		return;
	}

	/* The commit point: TR is the new task's; any fault from here on is the new task's. */
	res->committed = true;
	cpu->tr.selector = selector;
	cpu->tr.base = new_base;
	cpu->tr.limit = ts_desc_limit(new_desc);
	cpu->tr.ar = ts_desc_to_ar(new_desc | X86_DESC_TSS_BUSY);
	cpu->cr0 |= X86_CR0_TS;
	cpu->dr7 &= ~(uint64_t)X86_DR7_LOCAL_ENABLES;

	/*
	 * The new task's state.  Selectors first, with the descriptors they
	 * had, then the descriptors one by one: a fault leaves the rest as
	 * they are, as on the processor.
	 */
	if (!new16) {	/* a 16-bit TSS has no CR3: the old task's paging stays */
		if (!mem->set_cr3(mem->ctx, new_tss.cr3)) {
			stop(res, "the new task's CR3 does not point at guest memory (its PDPTEs)");
			return;
		}
		cpu->cr3 = new_tss.cr3;
	}
	cpu->eip = new_tss.eip;
	cpu->eflags = new_tss.eflags | (uint32_t)X86_RFLAGS_FIXED;
	for (unsigned int i = 0; i < 8; i++)
		cpu->gpr[i] = new_tss.gpr[i];
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		cpu->sreg[i].selector = new_tss.sreg[i][0];
	cpu->ldtr.selector = new_tss.ldt_selector;
	res->debug_trap = new_tss.trap & 1;

	if (cpu->eflags & X86_RFLAGS_VM) {
		/* Virtual-8086 mode: CPL 3, real-mode segments, no descriptors read. */
		if (!load_ldtr(cpu, mem, ext, res))
			return;
		for (unsigned int i = 0; i < TS_NR_SREGS; i++) {
			cpu->sreg[i].base = (uint64_t)cpu->sreg[i].selector << VM86_SEG_SHIFT;
			cpu->sreg[i].limit = VM86_SEG_LIMIT;
			cpu->sreg[i].ar = VM86_SEG_AR;
		}
		if (gate && event->has_error_code)
			push_error_code(cpu, mem, event->error_code, false, res);
		return;
	}
	cpl = cpu->sreg[TS_CS].selector & SEL_RPL_MASK;
	if (!load_ldtr(cpu, mem, ext, res) ||
	    !load_sreg(cpu, mem, TS_CS, cpl, ext, res) ||
	    !load_sreg(cpu, mem, TS_SS, cpl, ext, res) ||
	    !load_sreg(cpu, mem, TS_ES, cpl, ext, res) ||
	    !load_sreg(cpu, mem, TS_DS, cpl, ext, res) ||
	    !load_sreg(cpu, mem, TS_FS, cpl, ext, res) ||
	    !load_sreg(cpu, mem, TS_GS, cpl, ext, res))
		return;
	if (gate && event->has_error_code)
		push_error_code(cpu, mem, event->error_code, new16, res);
}

void task_switch(struct ts_cpu *cpu, const struct ts_mem *mem, uint16_t selector,
		 enum ts_source source, const struct ts_event *event, struct ts_result *res)
{
	do_task_switch(cpu, mem, selector, source, event, res);
	if (res->outcome == TS_FAULT && source == TS_SOURCE_IDT_GATE && event->exception)
		combine_with_event(event, res);
}
