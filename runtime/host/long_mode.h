/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Entering IA-32e mode from 32-bit protected mode with paging off, as the
 * SDM orders it (Vol. 3A 10.8.5): CR4.PAE, CR3, IA32_EFER.LME, then CR0.PG.
 * One sequence for the boot CPU (boot.S) and the APs (trampoline.S), and
 * one for the data segments once in 64-bit mode.
 * Assembly only; the constants come from asm-offsets.h.
 */
#ifndef EXITPLAN_LONG_MODE_H
#define EXITPLAN_LONG_MODE_H

#include "runtime/host/desc.h"	/* GDT_KERNEL_DS */

#ifdef __ASSEMBLER__
/*
 * @pml4: an operand for `movl X, %eax` that gives the PML4's physical
 * address.  Clobbers EAX, ECX and EDX.  The caller far-jumps to a 64-bit
 * code segment next: until then the CPU runs in compatibility mode.
 */
#define ENTER_LONG_MODE(pml4)			\
	movl %cr4, %eax;			\
	orl $BOOT_CR4_PAE, %eax;		\
	movl %eax, %cr4;			\
	movl pml4, %eax;			\
	movl %eax, %cr3;			\
	movl $BOOT_MSR_EFER, %ecx;		\
	rdmsr;					\
	orl $BOOT_EFER_LME, %eax;		\
	wrmsr;					\
	movl %cr0, %eax;			\
	andl $~BOOT_CR0_CLEAR, %eax;		\
	orl $BOOT_CR0_SET, %eax;		\
	movl %eax, %cr0

/*
 * In 64-bit mode, after the far jump: the kernel's data segment in DS, ES
 * and SS, and null FS and GS (their bases come from MSRs: percpu.c).
 * Clobbers EAX.
 */
#define LOAD_KERNEL_DATA_SEGMENTS		\
	movl $GDT_KERNEL_DS, %eax;		\
	movl %eax, %ds;				\
	movl %eax, %es;				\
	movl %eax, %ss;				\
	xorl %eax, %eax;			\
	movl %eax, %fs;				\
	movl %eax, %gs
#endif

#endif
