/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The multiboot v1 header and the 32-bit entry point.
 *
 * GRUB's `multiboot` command loads this ELF64 image by its program
 * headers at HV_LOAD_ADDR (from where it moves itself, runtime/host/reloc.c) and jumps to _start in 32-bit protected mode
 * with paging off, EAX = MULTIBOOT_BOOTLOADER_MAGIC and EBX = the
 * physical address of struct multiboot_info.  We check both, zero .bss,
 * identity-map the first 4 GiB with 2-MiB pages, enter IA-32e mode
 * (SDM Vol. 3A 10.8.5: CR4.PAE, CR3, EFER.LME, then CR0.PG) and call
 * hv_main(magic, info) on the boot CPU's stack.  The page tables and the
 * stack are boot_data.S's.
 */
#include "asm-offsets.h"
#include "runtime/host/desc.h"
#include "runtime/host/layout.h"
#include "runtime/host/long_mode.h"
#include "lib/multiboot.h"
#include "runtime/host/paging.h"
#include "runtime/host/panic.h"
#include "runtime/host/uart.h"

#define MB_HEADER_FLAGS	(MULTIBOOT_PAGE_ALIGN | MULTIBOOT_MEMORY_INFO)

/* The leaf with the long-mode bit; BOOT_CPUID_EDX_LM is the bit. */
#define CPUID_EXT_FEATURES	0x80000001

/* Where a failure before the console exists is reported. */
#define BOCHS_E9_PORT		0xe9

	/*
	 * The header must be 32-bit aligned within the first 8 KiB of the
	 * file; the linker script puts .multiboot first.  For an ELF image
	 * GRUB takes the load addresses from the program headers, so flag
	 * bit 16 (the a.out address fields) is not set.
	 */
	.section .text.boot32, "ax"
	.balign 4
	.globl multiboot_header
multiboot_header:
	.long MULTIBOOT_HEADER_MAGIC
	.long MB_HEADER_FLAGS
	.long -(MULTIBOOT_HEADER_MAGIC + MB_HEADER_FLAGS)

/*
 * The image is linked position-independent (runtime/host/reloc.c moves it
 * later), and ld refuses 32-bit absolute addresses in it.  This code runs
 * where GRUB loaded it, at HV_LOAD_ADDR, so an address is HV_LOAD_ADDR
 * plus its distance from the header at the image's start: a difference
 * with a label of this section, which gas resolves PC-relative.
 */
#define ABS32(sym)	((sym) - multiboot_header + HV_LOAD_ADDR)

	.code32
	.globl _start
_start:
	cli
	cld
	movl $ABS32(boot_stack_top), %esp
	movl %eax, %esi			/* keep magic and info across the setup */
	movl %ebx, %ebp

	cmpl $MULTIBOOT_BOOTLOADER_MAGIC, %eax
	jne .Lbad_magic

	/* Long mode present?  (Extended leaf first, then the LM bit.) */
	movl $CPUID_EXT_FEATURES & 0xffff0000, %eax
	cpuid
	cmpl $CPUID_EXT_FEATURES, %eax
	jb .Lno_long_mode
	movl $CPUID_EXT_FEATURES, %eax
	cpuid
	testl $BOOT_CPUID_EDX_LM, %edx
	jz .Lno_long_mode

	/* Zero .bss (page tables and stacks included). */
	movl $ABS32(__bss_start), %edi
	movl $ABS32(__bss_end), %ecx
	subl %edi, %ecx
	shrl $2, %ecx
	xorl %eax, %eax
	rep stosl

	/* PML4[0] -> PDPT; PDPT[0..3] -> the four page directories. */
	movl $ABS32(boot_pdpt) + (BOOT_PTE_PRESENT | BOOT_PTE_WRITE), ABS32(boot_pml4)
	movl $ABS32(boot_pd), %eax
	orl $(BOOT_PTE_PRESENT | BOOT_PTE_WRITE), %eax
	xorl %ecx, %ecx
1:	movl %eax, ABS32(boot_pdpt)(, %ecx, 8)
	addl $PAGE_SIZE, %eax
	incl %ecx
	cmpl $4, %ecx
	jb 1b

	/*
	 * 2048 PDEs of 2 MiB each cover [0, 4 GiB).  A PDE is 8 bytes; the
	 * high half (address bits 63:32) stays zero from the .bss clear.
	 */
	movl $(BOOT_PTE_PRESENT | BOOT_PTE_WRITE | BOOT_PTE_PS), %eax
	xorl %ecx, %ecx
2:	movl %eax, %edx
	cmpl $BOOT_UC_START, %eax
	jb 3f
	orl $BOOT_PTE_UC, %edx	/* APIC, IO-APIC, firmware: uncached */
3:	movl %edx, ABS32(boot_pd)(, %ecx, 8)
	addl $LARGE_PAGE_SIZE, %eax
	incl %ecx
	cmpl $(4 * PT_ENTRIES), %ecx
	jb 2b

	ENTER_LONG_MODE($ABS32(boot_pml4))	/* compatibility mode */

	lgdt ABS32(boot_gdt_ptr)
	ljmp $GDT_KERNEL_CS, $ABS32(start64)

.Lbad_magic:
	movl $ABS32(msg_bad_magic), %ebx
	jmp .Lfail32
.Lno_long_mode:
	movl $ABS32(msg_no_long_mode), %ebx
	/* fall through */

	/*
	 * No console yet: program COM1 as console_init() does (115200 8N1)
	 * and write the message there and to port 0xE9 (Bochs, QEMU's
	 * debugcon), waiting for THRE before each byte; then power off the
	 * Bochs way and halt.
	 */
.Lfail32:
	movw $COM1_BASE + UART_IER, %dx
	xorb %al, %al
	outb %al, %dx
	movw $COM1_BASE + UART_LCR, %dx
	movb $UART_LCR_DLAB, %al
	outb %al, %dx
	movw $COM1_BASE + UART_DLL, %dx
	movb $1, %al			/* divisor 1: 115200 baud */
	outb %al, %dx
	movw $COM1_BASE + UART_DLM, %dx
	xorb %al, %al
	outb %al, %dx
	movw $COM1_BASE + UART_LCR, %dx
	movb $UART_LCR_8N1, %al
	outb %al, %dx
1:	movb (%ebx), %al
	testb %al, %al
	jz 4f
	outb %al, $BOCHS_E9_PORT
	movb %al, %ah
	movl $UART_SPIN_LIMIT, %ecx
	movw $COM1_BASE + UART_LSR, %dx
2:	inb %dx, %al
	testb $UART_LSR_THRE, %al
	jnz 3f
	pause
	loop 2b
3:	movw $COM1_BASE + UART_THR, %dx
	movb %ah, %al
	outb %al, %dx
	incl %ebx
	jmp 1b
	/* Wait until the last bit is out, or it is lost at power-off. */
4:	movl $UART_SPIN_LIMIT, %ecx
	movw $COM1_BASE + UART_LSR, %dx
5:	inb %dx, %al
	testb $UART_LSR_TEMT, %al
	jnz 6f
	pause
	loop 5b
6:	movl $ABS32(msg_shutdown), %ebx
	movw $BOCHS_SHUTDOWN_PORT, %dx
7:	movb (%ebx), %al
	testb %al, %al
	jz 8f
	outb %al, %dx
	incl %ebx
	jmp 7b
8:	movw $BOCHS_ACPI_PM1A_CNT, %dx	/* then as power_off() goes on */
	movw $ACPI_PM1_CNT_S5, %ax
	outw %ax, %dx
	movb $POWER_OFF_FAILED_BOOT, %al
	outb %al, $QEMU_DEBUG_EXIT_PORT
	movw $QEMU_ACPI_PM1A_CNT, %dx
	movw $ACPI_PM1_CNT_S5, %ax
	outw %ax, %dx
10:	cli
	hlt
	jmp 10b

	.code64
	.section .text, "ax"
start64:
	LOAD_KERNEL_DATA_SEGMENTS

	/*
	 * Move to the top of RAM (runtime/host/reloc.c): boot_relocate(magic,
	 * info) copies the image, relocated, and returns how far; carry on
	 * in the copy, on its page tables, GDT and stack.  The image left
	 * behind becomes the guest's RAM.
	 */
	leaq boot_stack_top(%rip), %rsp
	movl %esi, %ebx			/* callee-saved: magic, info */
	movl %ebp, %r12d
	movl %esi, %edi
	movl %ebp, %esi
	call boot_relocate
	leaq 1f(%rip), %rdx
	addq %rax, %rdx
	jmp *%rdx
1:	leaq boot_pml4(%rip), %rax
	movq %rax, %cr3
	lgdt boot_gdt_ptr(%rip)
	leaq boot_stack_top(%rip), %rsp
	movl %ebx, %edi			/* hv_main(magic, info) */
	movl %r12d, %esi
	xorl %ebp, %ebp			/* end of the frame-pointer chain */
	call hv_main
	/* hv_main powers off; should it ever return, stop here. */
9:	cli
	hlt
	jmp 9b

	.section .rodata
	.balign 8
boot_gdt:
	.quad 0
	.quad GDT_ENTRY(DESC_KERNEL_CODE64, 0, 0xfffff)
	.quad GDT_ENTRY(DESC_KERNEL_DATA, 0, 0xfffff)
boot_gdt_end:
	.balign 8
boot_gdt_ptr:
	.word boot_gdt_end - boot_gdt - 1
	.quad boot_gdt

msg_bad_magic:
	.asciz "exitplan: PANIC: not loaded by a multiboot v1 boot loader (bad magic in EAX)\r\n"
msg_no_long_mode:
	.asciz "exitplan: PANIC: this CPU has no long mode (CPUID.80000001H:EDX.LM = 0)\r\n"
msg_shutdown:
	.asciz "Shutdown"
