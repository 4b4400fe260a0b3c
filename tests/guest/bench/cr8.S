/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Timing loops for MOV to/from CR8, which exists only in 64-bit mode.
 * Reached by a far call (selector 0x18, 64-bit code) from compatibility
 * mode once bench/longmode.c has turned IA-32e mode on; they return with
 * a 32-bit far return.  Interrupts stay off: the guest's IDT has 32-bit
 * gates, useless in IA-32e mode.
 *
 * In:  EDI = struct cr8_loop { uint32_t iters; uint32_t pad; uint64_t total; }
 * Out: total = the sum of the ticks of every timed round trip.
 */
	.code64
	.text

.macro TIMED_LOOP name, insn:vararg
	.globl	\name
\name:
	pushq	%rbx
	movl	%edi, %edi		/* zero-extend: upper halves are undefined */
	movl	(%rdi), %ecx
	xorl	%r9d, %r9d
	xorl	%r11d, %r11d		/* the TPR value written: 0 masks nothing */
	testl	%ecx, %ecx
	jz	2f
1:	lfence
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx
	movq	%rdx, %r8
	\insn
	lfence
	rdtsc
	shlq	$32, %rdx
	orq	%rax, %rdx
	subq	%r8, %rdx
	addq	%rdx, %r9
	decl	%ecx
	jnz	1b
2:	movq	%r9, 8(%rdi)
	popq	%rbx
	lretl				/* 32-bit CS:EIP, as the far call pushed */
.endm

TIMED_LOOP cr8_loop_none, nop
TIMED_LOOP cr8_loop_write, movq %r11, %cr8
TIMED_LOOP cr8_loop_read, movq %cr8, %rax

	.section .note.GNU-stack, "", @progbits
