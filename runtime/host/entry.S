/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupt and exception entry stubs, one per vector.
 *
 * The CPU pushes an error code for the exceptions in EXC_ERROR_CODE_MASK
 * (SDM Vol. 3A 6.13, table 6-1); every other stub pushes a zero in its
 * place so that struct interrupt_frame has one layout.
 * In 64-bit mode the CPU aligns RSP to 16 bytes before pushing, and the
 * frame is a multiple of 16 bytes, so the call into C is ABI-aligned.
 */
#include "asm-offsets.h"


	.section .text
	.balign 16
interrupt_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	cld
	movq %rsp, %rdi
	call interrupt_dispatch
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp			/* vector and error code */
	iretq

	.macro interrupt_stub vector
	.balign 16
interrupt_stub_\vector:
	.if \vector >= 32
	pushq $0
	.elseif !((EXC_ERROR_CODE_MASK >> \vector) & 1)
	pushq $0
	.endif
	pushq $\vector
	jmp interrupt_common
	.pushsection .rodata
	.quad interrupt_stub_\vector
	.popsection
	.endm

	.section .rodata
	.balign 8
	.globl interrupt_stubs
interrupt_stubs:			/* const uint64_t interrupt_stubs[256] */
	.section .text
	.altmacro
	.set vec, 0
	.rept 256
	interrupt_stub %vec
	.set vec, vec + 1
	.endr

	/* The frame size entry.S builds must match struct interrupt_frame. */
	.if (15 + 2 + 5) * 8 - INTERRUPT_FRAME_SIZE
	.error "struct interrupt_frame does not match entry.S"
	.endif
