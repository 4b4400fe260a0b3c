// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TASK_SWITCH exit (SDM Vol. 3C 27.4.2, 28.2.1 Table 28-2): the
 * guest's state from the VMCS into task_switch() (task_switch.c) and the
 * new task's back, with the event being delivered when the switch came
 * through a task gate in the IDT.
 */
#include "arch_bits.h"
#include "exit_handlers.h"
#include "runtime/vcpu/task_switch.h"
#include "vmcs_fields.h"
#include "arch/vmx/vcpu_stop.h"
#include "arch/vmx/events.h"
#include "arch/vmx/vcpu_regs.h"
#include "arch/vmx/guest_mem.h"
#include "arch/vmx/vmx_ctls.h"
#include "vmx_controls_bits.h"

/* ES, CS, SS, DS, FS, GS: the TSS's order (enum ts_sreg). */
static const enum vmcs_field sreg_selector[TS_NR_SREGS] = {
	GUEST_ES_SELECTOR, GUEST_CS_SELECTOR, GUEST_SS_SELECTOR,
	GUEST_DS_SELECTOR, GUEST_FS_SELECTOR, GUEST_GS_SELECTOR,
};
static const enum vmcs_field sreg_base[TS_NR_SREGS] = {
	GUEST_ES_BASE, GUEST_CS_BASE, GUEST_SS_BASE, GUEST_DS_BASE, GUEST_FS_BASE, GUEST_GS_BASE,
};
static const enum vmcs_field sreg_limit[TS_NR_SREGS] = {
	GUEST_ES_LIMIT, GUEST_CS_LIMIT, GUEST_SS_LIMIT, GUEST_DS_LIMIT, GUEST_FS_LIMIT, GUEST_GS_LIMIT,
};
static const enum vmcs_field sreg_ar[TS_NR_SREGS] = {
	GUEST_ES_AR_BYTES, GUEST_CS_AR_BYTES, GUEST_SS_AR_BYTES,
	GUEST_DS_AR_BYTES, GUEST_FS_AR_BYTES, GUEST_GS_AR_BYTES,
};

static void read_segment(struct ts_segment *s, enum vmcs_field sel, enum vmcs_field base,
			 enum vmcs_field limit, enum vmcs_field ar)
{
	s->selector = (uint16_t)vmcs_read(sel);
	s->base = vmcs_read(base);
	s->limit = vmcs_read32(limit);
	s->ar = vmcs_read32(ar);
}

static void write_segment(const struct ts_segment *s, enum vmcs_field sel, enum vmcs_field base,
			  enum vmcs_field limit, enum vmcs_field ar)
{
	vmcs_write(sel, s->selector);
	vmcs_write(base, s->base);
	vmcs_write(limit, s->limit);
	vmcs_write(ar, s->ar);
}

static bool mem_read(void *ctx, uint64_t la, void *dst, unsigned int len)
{
	(void)ctx;
	return guest_read_linear(la, dst, len);
}

static bool mem_write(void *ctx, uint64_t la, const void *src, unsigned int len)
{
	(void)ctx;
	return guest_write_linear(la, src, len);
}

/* CR3 from the new TSS; with PAE paging its PDPTEs too, as MOV to CR3 loads them. */
static bool mem_set_cr3(void *ctx, uint64_t cr3)
{
	(void)ctx;
	vmcs_write(GUEST_CR3, cr3);
	return load_pae_pdptrs();
}

static const char *source_name(enum ts_source source)
{
	switch (source) {
	case TS_SOURCE_CALL: return "CALL";
	case TS_SOURCE_IRET: return "IRET";
	case TS_SOURCE_JMP: return "JMP";
	default: return "task gate in the IDT";
	}
}

/*
 * The TASK_SWITCH handler itself (the dispatch calls it; of handlers.c it
 * needs only the registers, which never call back): a task switch (CALL,
 * JMP, IRET or a task gate in the IDT to a TSS; SDM Vol. 3A 8.3, Vol. 3C
 * 27.4.2) emulated, with the faults the CPU raises, by task_switch.c.
 */
enum vmx_exit_action handle_task_switch(struct vcpu *vcpu)
{
	static const enum ts_source sources[4] = {
		[EXIT_QUAL_TS_SOURCE_CALL >> EXIT_QUAL_TS_SOURCE_SHIFT] = TS_SOURCE_CALL,
		[EXIT_QUAL_TS_SOURCE_IRET >> EXIT_QUAL_TS_SOURCE_SHIFT] = TS_SOURCE_IRET,
		[EXIT_QUAL_TS_SOURCE_JMP >> EXIT_QUAL_TS_SOURCE_SHIFT] = TS_SOURCE_JMP,
		[EXIT_QUAL_TS_SOURCE_IDT_GATE >> EXIT_QUAL_TS_SOURCE_SHIFT] = TS_SOURCE_IDT_GATE,
	};
	const struct ts_mem mem = { mem_read, mem_write, mem_set_cr3, NULL };
	uint64_t q = vmcs_read(EXIT_QUALIFICATION);
	uint16_t selector = (uint16_t)(q & EXIT_QUAL_TS_SELECTOR_MASK);
	enum ts_source source = sources[(q & EXIT_QUAL_TS_SOURCE_MASK) >> EXIT_QUAL_TS_SOURCE_SHIFT];
	uint32_t idt = vmcs_read32(IDT_VECTORING_INFO_FIELD);
	uint32_t type = idt & INTR_INFO_TYPE_MASK;
	uint64_t rip = vmcs_read(GUEST_RIP);
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);
	struct ts_event event = { 0 };
	struct ts_result res;
	struct ts_cpu cpu;

	if (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_IA32E_MODE)
		return vcpu_stop(vcpu, "task switch (%s) to TSS %#x in IA-32e mode, where there is none",
				 source_name(source), selector);
	if (source == TS_SOURCE_IDT_GATE) {
		if (!(idt & INTR_INFO_VALID))
			return vcpu_stop(vcpu, "task switch through the IDT to TSS %#x with no "
					 "IDT-vectoring information", selector);
		/*
		 * The event's delivery ends with the switch: it is not
		 * re-injected.  EXT marks faults in the delivery of anything
		 * but INT n, INT3 and INTO (Vol. 3A 6.13).
		 */
		event.vector = idt & INTR_INFO_VECTOR_MASK;
		event.software = type == INTR_INFO_TYPE_SW_INT || type == INTR_INFO_TYPE_SW_EXC;
		event.external = !event.software;
		event.exception = type == INTR_INFO_TYPE_HW_EXCEPTION;
		event.has_error_code = idt & INTR_INFO_DELIVER_CODE;
		event.error_code = vmcs_read32(IDT_VECTORING_ERROR_CODE);
	}
	/*
	 * The old task resumes after the instruction that switched (CALL,
	 * JMP, IRET, INT n, INT3, INTO, INT1), or where the interrupt or
	 * exception left it (Vol. 3C 27.4.2: the exit saves the RIP of the
	 * instruction, its length in the exit instruction length).
	 */
	if (source != TS_SOURCE_IDT_GATE ||
	    (type != INTR_INFO_TYPE_EXT_INTR && type != INTR_INFO_TYPE_NMI &&
	     type != INTR_INFO_TYPE_HW_EXCEPTION))
		rip += vmcs_read32(VM_EXIT_INSTRUCTION_LEN);

	for (unsigned int i = 0; i < 8; i++)
		cpu.gpr[i] = (uint32_t)vcpu_gpr_read(vcpu, i);
	cpu.eip = (uint32_t)rip;
	cpu.eflags = (uint32_t)vmcs_read(GUEST_RFLAGS);
	cpu.cr0 = vmcs_read(GUEST_CR0);
	cpu.cr3 = vmcs_read(GUEST_CR3);
	cpu.dr7 = vmcs_read(GUEST_DR7);
	for (unsigned int i = 0; i < TS_NR_SREGS; i++)
		read_segment(&cpu.sreg[i], sreg_selector[i], sreg_base[i], sreg_limit[i], sreg_ar[i]);
	read_segment(&cpu.ldtr, GUEST_LDTR_SELECTOR, GUEST_LDTR_BASE, GUEST_LDTR_LIMIT, GUEST_LDTR_AR_BYTES);
	read_segment(&cpu.tr, GUEST_TR_SELECTOR, GUEST_TR_BASE, GUEST_TR_LIMIT, GUEST_TR_AR_BYTES);
	cpu.gdtr_base = vmcs_read(GUEST_GDTR_BASE);
	cpu.gdtr_limit = vmcs_read32(GUEST_GDTR_LIMIT);
	cpu.idtr_base = vmcs_read(GUEST_IDTR_BASE);
	cpu.idtr_limit = vmcs_read32(GUEST_IDTR_LIMIT);

	task_switch(&cpu, &mem, selector, source, source == TS_SOURCE_IDT_GATE ? &event : NULL, &res);

	if (res.outcome == TS_STOP)
		return vcpu_stop(vcpu, "hardware task switch (%s) to TSS %#x at RIP %#llx: %s",
				 source_name(source), selector,
				 (unsigned long long)vmcs_read(GUEST_RIP), res.stop_reason);
	if (res.committed) {
		for (unsigned int i = 0; i < 8; i++)
			vcpu_gpr_write(vcpu, i, cpu.gpr[i]);
		vmcs_write(GUEST_RIP, cpu.eip);
		vmcs_write(GUEST_RFLAGS, cpu.eflags);
		/* CR0.TS: the guest sees it set, whichever of CR0's bits it owns. */
		vmcs_write(GUEST_CR0, cpu.cr0);
		vmcs_write(CR0_READ_SHADOW, vmcs_read(CR0_READ_SHADOW) | X86_CR0_TS);
		vmcs_write(GUEST_DR7, cpu.dr7);
		for (unsigned int i = 0; i < TS_NR_SREGS; i++)
			write_segment(&cpu.sreg[i], sreg_selector[i], sreg_base[i], sreg_limit[i], sreg_ar[i]);
		write_segment(&cpu.ldtr, GUEST_LDTR_SELECTOR, GUEST_LDTR_BASE, GUEST_LDTR_LIMIT,
			      GUEST_LDTR_AR_BYTES);
		write_segment(&cpu.tr, GUEST_TR_SELECTOR, GUEST_TR_BASE, GUEST_TR_LIMIT, GUEST_TR_AR_BYTES);
		/*
		 * The new task starts with no STI or MOV-SS shadow; an NMI
		 * delivered through the gate blocks NMIs until the next IRET,
		 * which unblocks them also when it switches tasks (Vol. 3A
		 * 6.7.1; with virtual NMIs the bit is virtual-NMI blocking).
		 */
		intr &= ~(uint32_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS);
		if (source == TS_SOURCE_IDT_GATE && type == INTR_INFO_TYPE_NMI)
			intr |= GUEST_INTR_STATE_NMI;
		else if (source == TS_SOURCE_IRET)
			intr &= ~(uint32_t)GUEST_INTR_STATE_NMI;
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO, intr);
	}
	if (res.outcome == TS_FAULT) {
		/* #TS, #NP, #SS, #GP or #DF: each with its error code (0 for #DF). */
		vmx_inject_exception(vcpu, res.fault_vector, true, res.error_code);
		return VMX_EXIT_RESUME;
	}
	if (res.debug_trap) {
		/* The new TSS's T flag: #DB, DR6.BT, before the new task's first instruction. */
		uint64_t dr6;

		asm volatile("mov %%db6, %0" : "=r"(dr6));
		dr6 |= X86_DR6_BT;
		asm volatile("mov %0, %%db6" : : "r"(dr6));
		vmx_inject_exception(vcpu, X86_EXC_DB, false, 0);
	}
	return VMX_EXIT_RESUME;
}
