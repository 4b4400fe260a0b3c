/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM-exit entry stub (HOST_RIP) and the first VM entry.
 *
 * On a VM exit the CPU loads the host state from the VMCS: RSP points at
 * this CPU's exit frame (vcpu_asm.h), RFLAGS is 0x2 (interrupts off),
 * and every general-purpose register still holds the guest's value.  The
 * stub saves them into vcpu->regs, reads the exit reason and calls the
 * generated dispatch -- or, when the vCPU needs more around it (manual
 * MSR switching, timing, a failed VM entry), vmx_handle_exit() in exit.c
 * -- and either
 * restores them and VMRESUMEs, or returns from vmx_enter_guest() to the
 * code that launched the guest.
 *
 * The round trip is the hot path every exit pays: keep it straight-line.
 * CR2 is not switched: the host takes no page faults (a host #PF is a
 * panic), so the guest's CR2 survives in the register.
 */
#include "vcpu_asm.h"

	.text
	.code64

/*
 * int vmx_enter_guest(struct vcpu *vcpu, void *exit_frame)
 *
 * VMLAUNCH the current VMCS with vcpu->regs.  Returns VMX_ENTER_STOPPED
 * when a handler stopped the guest, VMX_ENTER_VMFAIL when VMLAUNCH
 * itself failed (RFLAGS.CF or ZF; nothing was entered).
 */
	.globl vmx_enter_guest
	.type vmx_enter_guest, @function
vmx_enter_guest:
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	/* The stop path in the stub returns through this RSP. */
	mov	%rsp, EXIT_FRAME_HOST_RSP(%rsi)
	mov	%rdi, %rax
	mov	VCPU_RCX(%rax), %rcx
	mov	VCPU_RDX(%rax), %rdx
	mov	VCPU_RBX(%rax), %rbx
	mov	VCPU_RBP(%rax), %rbp
	mov	VCPU_RSI(%rax), %rsi
	mov	VCPU_RDI(%rax), %rdi
	mov	VCPU_R8(%rax), %r8
	mov	VCPU_R9(%rax), %r9
	mov	VCPU_R10(%rax), %r10
	mov	VCPU_R11(%rax), %r11
	mov	VCPU_R12(%rax), %r12
	mov	VCPU_R13(%rax), %r13
	mov	VCPU_R14(%rax), %r14
	mov	VCPU_R15(%rax), %r15
	mov	VCPU_RAX(%rax), %rax
	vmlaunch
	/* Only reached when VMLAUNCH failed: the guest never ran. */
	mov	$VMX_ENTER_VMFAIL, %eax
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	ret
	.size vmx_enter_guest, . - vmx_enter_guest

/*
 * Save the guest's general-purpose registers into the vcpu named by the
 * exit frame; leave the vcpu in RBX (callee-saved: it survives the C
 * calls) and RDI (their first argument).
 */
.macro SAVE_GUEST_REGS
	push	%rax
	mov	8+EXIT_FRAME_VCPU(%rsp), %rax
	mov	%rcx, VCPU_RCX(%rax)
	mov	%rdx, VCPU_RDX(%rax)
	mov	%rbx, VCPU_RBX(%rax)
	mov	%rbp, VCPU_RBP(%rax)
	mov	%rsi, VCPU_RSI(%rax)
	mov	%rdi, VCPU_RDI(%rax)
	mov	%r8, VCPU_R8(%rax)
	mov	%r9, VCPU_R9(%rax)
	mov	%r10, VCPU_R10(%rax)
	mov	%r11, VCPU_R11(%rax)
	mov	%r12, VCPU_R12(%rax)
	mov	%r13, VCPU_R13(%rax)
	mov	%r14, VCPU_R14(%rax)
	mov	%r15, VCPU_R15(%rax)
	popq	VCPU_RAX(%rax)
	mov	%rax, %rbx
	mov	%rax, %rdi
.endm

/*
 * HOST_RIP, one of two.  [rsp] = struct vcpu *, 16-byte aligned, so the
 * calls below see the ABI's alignment.  vmx_exit_stub is the common
 * case: read the exit reason and call the generated dispatch directly.
 * vmx_exit_stub_hooks, for a vCPU whose exits need more around the
 * dispatch (vcpu->exit_hooks: manual MSR switching, timing), goes
 * through vmx_handle_exit() in exit.c; so does a failed VM entry (exit
 * reason bit 31).  Which one a vCPU uses is fixed at VMCS setup.
 */
	.globl vmx_exit_stub
	.type vmx_exit_stub, @function
vmx_exit_stub:
	SAVE_GUEST_REGS
	mov	vmx_exit_reason_field(%rip), %rsi
	vmread	%rsi, %rsi
	test	%esi, %esi
	js	.Lhooks
	movzwl	%si, %esi
	call	vmx_dispatch_exit
.Lhandled:
	test	%eax, %eax
	jnz	.Lstop
.Lresume:
	mov	%rbx, %rax
	mov	VCPU_RCX(%rax), %rcx
	mov	VCPU_RDX(%rax), %rdx
	mov	VCPU_RBX(%rax), %rbx
	mov	VCPU_RBP(%rax), %rbp
	mov	VCPU_RSI(%rax), %rsi
	mov	VCPU_RDI(%rax), %rdi
	mov	VCPU_R8(%rax), %r8
	mov	VCPU_R9(%rax), %r9
	mov	VCPU_R10(%rax), %r10
	mov	VCPU_R11(%rax), %r11
	mov	VCPU_R12(%rax), %r12
	mov	VCPU_R13(%rax), %r13
	mov	VCPU_R14(%rax), %r14
	mov	VCPU_R15(%rax), %r15
	mov	VCPU_RAX(%rax), %rax
	vmresume
	/*
	 * VMRESUME failed (RFLAGS.CF: no valid VMCS, ZF: VM_INSTRUCTION_ERROR
	 * says why).  Report it with the vcpu and stop.  A failed VM entry
	 * that got as far as the guest-state checks is a VM exit with bit 31
	 * set instead, handled in vmx_handle_exit().
	 */
	pushfq
	pop	%rsi
	mov	EXIT_FRAME_VCPU(%rsp), %rdi
	call	vmx_report_vmresume_failure
	mov	$VMX_ENTER_STOPPED, %eax
	jmp	.Lstop
.Lhooks:
	call	vmx_handle_exit		/* exit.c: reason, MSRs, timing, dispatch */
	jmp	.Lhandled
.Lstop:
	mov	EXIT_FRAME_HOST_RSP(%rsp), %rsp
	pop	%r15
	pop	%r14
	pop	%r13
	pop	%r12
	pop	%rbx
	pop	%rbp
	ret
	.size vmx_exit_stub, . - vmx_exit_stub

	.globl vmx_exit_stub_hooks
	.type vmx_exit_stub_hooks, @function
vmx_exit_stub_hooks:
	SAVE_GUEST_REGS
	jmp	.Lhooks
	.size vmx_exit_stub_hooks, . - vmx_exit_stub_hooks

	.section .note.GNU-stack, "", @progbits
