/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hardware task switches between 32-bit and 16-bit TSSs in protected
 * mode (and to and from virtual-8086 mode), emulated for
 * the TASK_SWITCH exit (SDM Vol. 3A 8.3 "Task Switching"; Vol. 3C 27.4.2,
 * 28.2.1 Table 28-2).  task_switch() is pure: it works on a copy of the
 * guest's state and reaches guest memory only through the callbacks of
 * struct ts_mem, so that it is unit-tested on the host
 * (tests/unit/test_task_switch.c).  task_switch_vmcs.c moves the state
 * between it and the VMCS.
 */
#ifndef EXITPLAN_TASK_SWITCH_H
#define EXITPLAN_TASK_SWITCH_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/tss.h"	/* struct tss32, tss16, shared with the handlers guest */

/* The segment registers in the TSS's order. */
enum ts_sreg { TS_ES, TS_CS, TS_SS, TS_DS, TS_FS, TS_GS, TS_NR_SREGS };

/* A segment register as the VMCS holds it: access rights in its format. */
struct ts_segment {
	uint16_t selector;
	uint64_t base;
	uint32_t limit;		/* byte-granular */
	uint32_t ar;		/* VMX_AR_* (VMX_AR_UNUSABLE for a null selector) */
};

/* The guest state a task switch reads and writes. */
struct ts_cpu {
	uint32_t gpr[8];	/* EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI */
	uint32_t eip;		/* of the instruction or event that switches (see task_switch()) */
	uint32_t eflags;
	uint64_t cr0, cr3, dr7;
	struct ts_segment sreg[TS_NR_SREGS];
	struct ts_segment ldtr, tr;
	uint64_t gdtr_base, idtr_base;
	uint32_t gdtr_limit, idtr_limit;
};

/* What started the switch: the exit qualification's source (Table 28-2). */
enum ts_source { TS_SOURCE_CALL, TS_SOURCE_IRET, TS_SOURCE_JMP, TS_SOURCE_IDT_GATE };

/* For TS_SOURCE_IDT_GATE: the event being delivered (IDT-vectoring information). */
struct ts_event {
	unsigned int vector;
	bool external;		/* an external interrupt or NMI: EXT in the error codes */
	bool software;		/* INT n, INT3, INTO: the gate's DPL is checked against CPL */
	bool exception;		/* a hardware exception: a fault in its delivery may be #DF */
	bool has_error_code;	/* pushed on the new task's stack */
	uint32_t error_code;
};

/*
 * Guest memory, by linear address through the guest's paging; set_cr3
 * loads a new CR3 (and, with PAE paging, its PDPTEs), after which the
 * accesses go through the new task's paging.  Each returns false when
 * the access cannot be made (the hypervisor then stops the guest).
 */
struct ts_mem {
	bool (*read)(void *ctx, uint64_t la, void *dst, unsigned int len);
	bool (*write)(void *ctx, uint64_t la, const void *src, unsigned int len);
	bool (*set_cr3)(void *ctx, uint64_t cr3);
	void *ctx;
};

enum ts_outcome {
	TS_DONE,	/* switched; cpu holds the new task's state */
	TS_FAULT,	/* raise fault_vector(error_code) in cpu's state (before or after the switch) */
	TS_STOP,	/* not emulated or guest memory unreachable: stop with stop_reason */
};

struct ts_result {
	enum ts_outcome outcome;
	bool committed;		/* past the commit point: cpu is the new task's */
	unsigned int fault_vector;
	uint32_t error_code;
	bool debug_trap;	/* the new TSS's T flag: #DB with DR6.BT before its first instruction */
	const char *stop_reason;
};

/*
 * Switch from the task in cpu->tr to the TSS @selector.  cpu->eip is the
 * EIP the old task resumes at: after the instruction for CALL, JMP, IRET
 * and software interrupts, the faulting instruction or the next one for
 * other events, as the old TSS is to record it.  @event is for
 * TS_SOURCE_IDT_GATE only (NULL otherwise).  On TS_FAULT before the
 * commit point (the new TSS's descriptor and the gate's privilege) cpu is
 * unchanged; after it, the switch is done and the fault belongs to the
 * new task (SDM Vol. 3A 8.3, Table 8-2).  A fault in the delivery of a
 * hardware exception through the gate combines with it as Vol. 3A 6.15
 * Table 6-5 says: #DF, or TS_STOP (shutdown) in the delivery of a #DF.
 */
void task_switch(struct ts_cpu *cpu, const struct ts_mem *mem, uint16_t selector,
		 enum ts_source source, const struct ts_event *event, struct ts_result *res);

/* The VMCS access-rights format of a segment descriptor (Vol. 3C 24.4.1). */
uint32_t ts_desc_to_ar(uint64_t desc);
uint64_t ts_desc_base(uint64_t desc);
uint32_t ts_desc_limit(uint64_t desc);

#endif /* EXITPLAN_TASK_SWITCH_H */
