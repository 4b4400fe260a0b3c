/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IA-32e mode checks (issue 7): what the hypervisor must check for a
 * guest in 64-bit and in compatibility mode, judged as the CPU judges it.
 * Far-called like cr8.S's loops, once IA-32e mode is on; a 64-bit IDT
 * of its own (#GP only) is loaded for the duration, the guest's put back.
 *
 * In:  EDI = struct lm64_result (longmode.h)
 *   cr8_gp:   #GPs of MOV CR8 with 0x10 (bits 63:4 are reserved: #GP, SDM Vol. 2B MOV)
 *   cr8_left: CR8 after it (0: the write did not happen)
 *   cr0_gp:   #GPs of MOV CR0,EAX in compatibility mode, RAX[63:32] stale
 *             (the operand is EAX there: none), and of the MOV CR0,ECX back
 *   cr0_ne:   1 when that MOV flipped CR0.NE
 *   tpr:      the local APIC's TPR after 0x10 in it was ORed with 0x20 by
 *             `or %eax,0x1000(%r12)` (41 09 84 24 00 10 00 00), as Linux
 *             emits it on MMIO; or_flags: RFLAGS after it
 *   q_lo, q_hi: a 64-bit load (REX.W MOV) at 0xd0000100, where no device
 *             answers (all ones), after `orq $1` there; qor_flags: RFLAGS
 *             after that OR
 */
#define GUEST_CS32	0x08
#define GUEST_CS64	0x18
#define X86_CR0_NE_BIT	5

	.code64
	.text

	.globl	lm64_checks
lm64_checks:
	pushq	%rbx
	movl	%edi, %ebx			/* zero-extend: upper halves are undefined */
	sidt	old_idt(%rip)
	/* The #GP gate: a 64-bit interrupt gate to gp_handler. */
	leaq	gp_handler(%rip), %rax
	movw	%ax, idt64 + 13 * 16(%rip)
	movw	$GUEST_CS64, idt64 + 13 * 16 + 2(%rip)
	movw	$0x8e00, idt64 + 13 * 16 + 4(%rip)
	shrq	$16, %rax
	movw	%ax, idt64 + 13 * 16 + 6(%rip)
	shrq	$16, %rax
	movl	%eax, idt64 + 13 * 16 + 8(%rip)
	lidt	idt64_desc(%rip)

	/* 1. MOV CR8 with bit 4 set. */
	movl	$0, gp_count(%rip)
	leaq	1f(%rip), %rax
	movq	%rax, gp_recovery(%rip)
	movl	$0x10, %eax
	movq	%rax, %cr8
1:	movl	gp_count(%rip), %eax
	movl	%eax, 0(%rbx)
	movq	%cr8, %rax
	movl	%eax, 4(%rbx)
	xorl	%eax, %eax
	movq	%rax, %cr8

	/*
	 * 2. MOV CR0,EAX in compatibility mode with junk in RAX[63:32] (and
	 * RCX's for the write back): CR0.NE flipped, a bit the hypervisor
	 * owns (VMX fixes it to 1), so both writes exit.
	 */
	movl	$0, gp_count(%rip)
	movq	%cr0, %rcx
	movl	%ecx, %eax
	xorl	$(1 << X86_CR0_NE_BIT), %eax
	movabsq	$0xdead000000000000, %rdx
	orq	%rdx, %rax
	orq	%rdx, %rcx
	leaq	2f(%rip), %rdx
	movq	%rdx, gp_recovery(%rip)
	pushq	$GUEST_CS32
	leaq	compat(%rip), %rdx
	pushq	%rdx
	lretq
	.code32
compat:
	movl	%eax, %cr0
2:	movl	%cr0, %eax
	movl	%ecx, %cr0			/* NE back */
	ljmp	$GUEST_CS64, $back64
	.code64
back64:
	movl	gp_count(%rip), %edx
	movl	%edx, 8(%rbx)
	xorl	%ecx, %eax
	shrl	$X86_CR0_NE_BIT, %eax
	andl	$1, %eax
	movl	%eax, 12(%rbx)

	/* 3. The OR kernels emit on MMIO, with a REX.B base and a SIB, on the TPR. */
	pushq	%r12
	movl	$0xfee00080, %edx		/* zero-extended, unlike a disp32 */
	movl	$0x10, (%rdx)
	leaq	-0x1000(%rdx), %r12
	movl	$0x20, %eax
	orl	%eax, 0x1000(%r12)
	pushfq
	popq	%rax
	movl	%eax, 20(%rbx)
	movl	(%rdx), %eax
	andl	$0xff, %eax
	movl	%eax, 16(%rbx)
	movl	$0, (%rdx)
	/* 4. REX.W forms where no device answers: OR imm8 (83 /1), then MOV r64, r/m64. */
	movl	$0xd0000100, %edx
	leaq	-0x1000(%rdx), %r12
	orq	$1, 0x1000(%r12)
	pushfq
	popq	%rax
	movl	%eax, 32(%rbx)
	movq	0x1000(%r12), %r9
	movl	%r9d, 24(%rbx)
	shrq	$32, %r9
	movl	%r9d, 28(%rbx)
	popq	%r12

	lidt	old_idt(%rip)
	popq	%rbx
	lretl				/* 32-bit CS:EIP, as the far call pushed */

/*
 * #GP: count it and resume at gp_recovery, in the mode it came from (the
 * frame's CS is kept).  The gp_recovery of the compatibility-mode MOV is
 * a 32-bit address, as the frame's RIP is there.
 */
gp_handler:
	addq	$8, %rsp			/* the error code */
	incl	gp_count(%rip)
	pushq	%rax
	movq	gp_recovery(%rip), %rax
	movq	%rax, 8(%rsp)
	popq	%rax
	iretq

	.data
	.balign	16
idt64:
	.fill	2 * 32, 8, 0
idt64_desc:
	.word	32 * 16 - 1
	.long	idt64, 0			/* a 32-bit object: no 64-bit relocation */
old_idt:
	.word	0
	.long	0, 0
gp_count:
	.long	0
	.balign	8
gp_recovery:
	.quad	0

	.section .note.GNU-stack, "", @progbits
