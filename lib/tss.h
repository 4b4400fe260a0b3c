/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 32-bit and 16-bit task-state segments (SDM Vol. 3A 8.2.1, Figure
 * 8-2; 8.6, Figure 8-11): what the hypervisor's task-switch emulation
 * (runtime/vcpu/task_switch.c) reads and writes, and what the handlers
 * guest's task checks build.
 */
#ifndef EXITPLAN_TSS_H
#define EXITPLAN_TSS_H

#include <stdint.h>

struct tss32 {
	uint16_t prev_task_link, r0;
	uint32_t esp0;
	uint16_t ss0, r1;
	uint32_t esp1;
	uint16_t ss1, r2;
	uint32_t esp2;
	uint16_t ss2, r3;
	uint32_t cr3;
	uint32_t eip;
	uint32_t eflags;
	uint32_t gpr[8];		/* EAX, ECX, EDX, EBX, ESP, EBP, ESI, EDI */
	uint16_t sreg[6][2];		/* ES, CS, SS, DS, FS, GS: selector, reserved */
	uint16_t ldt_selector, r4;
	uint16_t trap;			/* bit 0: T, the debug trap flag */
	uint16_t io_map_base;
} __attribute__((packed));

_Static_assert(sizeof(struct tss32) == 104, "the 32-bit TSS is 104 bytes");

/*
 * The 16-bit (286) TSS: no CR3, no FS or GS, no T flag, no I/O map base,
 * the low halves of the registers only.
 */
struct tss16 {
	uint16_t prev_task_link;
	uint16_t sp0, ss0, sp1, ss1, sp2, ss2;
	uint16_t ip;
	uint16_t flags;
	uint16_t gpr[8];		/* AX, CX, DX, BX, SP, BP, SI, DI */
	uint16_t sreg[4];		/* ES, CS, SS, DS */
	uint16_t ldt_selector;
} __attribute__((packed));

_Static_assert(sizeof(struct tss16) == 44, "the 16-bit TSS is 44 bytes (limit 2BH)");

#endif /* EXITPLAN_TSS_H */
