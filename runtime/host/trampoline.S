/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where the other CPUs (APs) start.  smp_start_aps() copies
 * trampoline_start..trampoline_end to SMP_TRAMPOLINE_PA and sends the
 * STARTUP IPI; an AP begins at CS = SMP_TRAMPOLINE_PA >> 4, IP = 0 in
 * real mode, and goes to protected mode, to IA-32e mode on the boot
 * page tables (as boot.S did), and to ap_start64 in the image (both
 * addresses patched into the copy by smp.c).  Nothing
 * here runs where it is linked: addresses inside the copy are computed
 * with TRAMP_ADDR(), and the 16-bit code addresses data relative to DS =
 * CS.
 */
#include "asm-offsets.h"
#include "runtime/host/desc.h"
#include "runtime/host/layout.h"
#include "runtime/host/long_mode.h"

#define TRAMP_OFF(sym)	((sym) - trampoline_start)
#define TRAMP_ADDR(sym)	(SMP_TRAMPOLINE_PA + TRAMP_OFF(sym))

/* The trampoline's GDT: the kernel's selectors plus 32-bit code. */
#define TRAMP_CS32	(GDT_ENTRIES * 8)

	.section .rodata
	.balign 16
	.globl trampoline_start, trampoline_end, trampoline_arrived
trampoline_start:
	.code16
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	/* Count the arrival first: smp_start_aps() must not take the page
	 * back while an AP still runs in it. */
	lock incl TRAMP_OFF(trampoline_arrived)
	lgdtl TRAMP_OFF(tramp_gdt_ptr)
	movl %cr0, %eax
	orl $BOOT_CR0_PE, %eax
	movl %eax, %cr0
	ljmpl $TRAMP_CS32, $TRAMP_ADDR(tramp32)

	.code32
tramp32:
	movl $GDT_KERNEL_DS, %eax
	movl %eax, %ds
	movl %eax, %es
	movl %eax, %ss

	ENTER_LONG_MODE(TRAMP_ADDR(trampoline_cr3))
	ljmpl *TRAMP_ADDR(trampoline_entry64)

	/*
	 * Filled in the copy by smp.c: the image is position-independent
	 * (runtime/host/reloc.c), so where boot_pml4 and ap_start64 are is known
	 * only at run time.
	 */
	.balign 4
	.globl trampoline_cr3, trampoline_entry64
trampoline_cr3:
	.long 0
trampoline_entry64:			/* m16:32 for the far jump */
	.long 0
	.word GDT_KERNEL_CS

	.balign 8
tramp_gdt:
	.quad 0
	.quad GDT_ENTRY(DESC_KERNEL_CODE64, 0, 0xfffff)	/* GDT_KERNEL_CS */
	.quad GDT_ENTRY(DESC_KERNEL_DATA, 0, 0xfffff)	/* GDT_KERNEL_DS */
	.fill GDT_ENTRIES - 3, 8, 0			/* the TSS slots */
	.quad GDT_ENTRY(DESC_KERNEL_CODE32, 0, 0xfffff)	/* TRAMP_CS32 */
tramp_gdt_end:
tramp_gdt_ptr:
	.word tramp_gdt_end - tramp_gdt - 1
	.long TRAMP_ADDR(tramp_gdt)
	.balign 4
trampoline_arrived:
	.long 0
trampoline_end:

	/*
	 * In the image, 64-bit: take the next CPU number, switch to its
	 * stack, and enter C.  CPUs beyond HV_MAX_CPUS park here.
	 */
	.code64
	.section .text
	.globl ap_start64
ap_start64:
	LOAD_KERNEL_DATA_SEGMENTS

	movl $1, %eax
	lock xaddl %eax, ap_next_id(%rip)
	cmpl $HV_MAX_CPUS, %eax
	jae .Lpark
	movl %eax, %edi			/* ap_main(id) */
	movl %eax, %eax
	incq %rax
	imulq $HV_STACK_SLOT, %rax
	leaq ap_stacks(%rip), %rsp
	addq %rax, %rsp			/* top of ap_stacks[id] */
	xorl %ebp, %ebp
	call ap_main
.Lpark:
	lock incl ap_parked(%rip)
1:	cli
	hlt
	jmp 1b

	.section .data
	.balign 4
	.globl ap_next_id, ap_parked
ap_next_id:
	.long 1				/* 0 is the boot CPU */
ap_parked:
	.long 0
