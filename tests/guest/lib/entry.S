/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Multiboot v1 entry of every test guest, its GDT, and the 256 interrupt
 * stubs the IDT points at.
 *
 * The loader (GRUB, QEMU -kernel, or exitplan acting as one) enters in
 * 32-bit protected mode with paging off, EAX = the multiboot magic and
 * EBX = the multiboot information.  The spec leaves GDTR, the stack and
 * EFLAGS.IF undefined, so all of them are set up here before any C runs.
 */

#define MULTIBOOT_HEADER_MAGIC	0x1BADB002
/* bit 0: align modules on pages, bit 1: we want mem_* and the memory map */
#define MULTIBOOT_HEADER_FLAGS	0x00000003

#define GUEST_CS	0x08
#define GUEST_DS	0x10
#define STACK_SIZE	16384

	.section .multiboot, "a"
	.balign 4
	.long	MULTIBOOT_HEADER_MAGIC
	.long	MULTIBOOT_HEADER_FLAGS
	.long	-(MULTIBOOT_HEADER_MAGIC + MULTIBOOT_HEADER_FLAGS)

	.text
	.code32
	.globl	_start
_start:
	cli
	cld
	movl	$stack_top, %esp
	/* Keep the loader's EAX/EBX: the bss clear below uses EAX. */
	movl	%eax, %esi
	movl	%ebx, %ebp

	lgdt	gdt_desc
	ljmp	$GUEST_CS, $1f
1:	movw	$GUEST_DS, %ax
	movw	%ax, %ds
	movw	%ax, %es
	movw	%ax, %fs
	movw	%ax, %gs
	movw	%ax, %ss

	/*
	 * GRUB and QEMU zero .bss, but the multiboot spec does not oblige a
	 * loader to, and exitplan's loader is under development: be sure.
	 * The stack lives in .bss; nothing is on it yet.
	 */
	movl	$__bss_start, %edi
	movl	$__bss_end, %ecx
	subl	%edi, %ecx
	xorl	%eax, %eax
	rep stosb

	pushl	$0			/* EFLAGS = 0: IF, DF, AC clear */
	popfl
	pushl	%ebp			/* multiboot info */
	pushl	%esi			/* magic */
	call	guest_start
	/* guest_start() never returns; stop hard if it does. */
2:	cli
	hlt
	jmp	2b

/*
 * Interrupt stubs.  Every vector gets one, so a stray interrupt or
 * exception is reported by the C code instead of escalating to a double
 * or triple fault.  The CPU pushes an error code for vectors 8, 10-14,
 * 17, 21, 29 and 30 (SDM Vol. 3A, 6.13); the others push a zero so that
 * every frame has the same layout (struct trap_frame in idt.h).
 */
	.balign 16
	.globl	trap_stub_table
	.section .rodata
	.balign 4
trap_stub_table:
	.text

	.set	vec, 0
	.rept	256
	.balign 8
1:
	.if !(vec == 8 || (vec >= 10 && vec <= 14) || vec == 17 || vec == 21 || vec == 29 || vec == 30)
	pushl	$0
	.endif
	pushl	$vec
	jmp	trap_common
	.section .rodata
	.long	1b
	.text
	.set	vec, vec + 1
	.endr

trap_common:
	pushal
	pushl	%esp			/* struct trap_frame * */
	call	trap_dispatch
	addl	$4, %esp
	popal
	addl	$8, %esp		/* vector and error code */
	iretl

	.section .rodata
	.balign 8
gdt:
	.quad	0
	/* flat 4-GiB 32-bit code, DPL 0 (access 0x9A, flags G|D) */
	.quad	0x00CF9A000000FFFF
	/* flat 4-GiB data, DPL 0 (access 0x92) */
	.quad	0x00CF92000000FFFF
	/*
	 * 64-bit code (flags G|L), selector 0x18: for a guest that turns on
	 * IA-32e mode and far-calls 64-bit code from compatibility mode.
	 */
	.quad	0x00AF9A000000FFFF
gdt_end:
gdt_desc:
	.word	gdt_end - gdt - 1
	.long	gdt

	.bss
	.balign 16
	.globl	stack_bottom
stack_bottom:
	.skip	STACK_SIZE
stack_top:
