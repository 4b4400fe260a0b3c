/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupt stubs for the fixed vectors 16-31 (the vectors check in
 * main.c): an interrupt pushes no error code, where the exceptions 17,
 * 21, 29 and 30 do, so the library's stubs cannot take them.  Each stub
 * is 16 bytes: vector_low_stubs + 16 * (vector - 16).
 */
	.text
	.balign 16
	.globl	vector_low_stubs
vector_low_stubs:
	.set	vec, 16
	.rept	16
	.balign 16
	pushal
	pushl	$vec
	call	vector_irq
	addl	$4, %esp
	popal
	iretl
	.set	vec, vec + 1
	.endr
