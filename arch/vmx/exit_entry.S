/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The VM-exit entry stub (HOST_RIP) and the first VM entry.
 *
 * On a VM exit the CPU loads the host state from the VMCS: RFLAGS is 0x2
 * (interrupts off), every general-purpose register still holds the
 * guest's value, and RSP is HOST_RSP, which points just past the R9
 * slot of vcpu->regs (vcpu_asm.h): eight PUSHes save RAX, RCX, RDX, RBX,
 * RSI, RDI, R8 and R9 in place, with no scratch register and no load of
 * the vcpu pointer, and leave RSP pointing at the vcpu, which is the top
 * of its exit stack: the stack is the pages just below struct vcpu
 * (vmx.c), so no stack switch is needed.  The stub reads the exit
 * reason and calls the generated dispatch -- or, when the vCPU needs more
 * around it (manual MSR switching, timing), vmx_handle_exit() in exit.c
 * -- and either restores the eight with POPs and VMRESUMEs, or returns from
 * vmx_enter_guest() to the code that launched the guest.
 *
 * After the call RSP is the vcpu again, which is where the POPs start.
 *
 * RBP and R10-R15 are not saved at all: all host C is compiled with
 * -ffixed-rbp -ffixed-r10 ... -ffixed-r15 (runtime/runtime.mk), so no
 * compiled code ever reads or writes them, and the guest's values stay
 * in the registers through the whole exit.  (R8 and R9 are saved: gcc
 * passes a fifth and sixth argument in them even when they are fixed.)
 * Host assembly that runs in an exit (the interrupt and exception entry,
 * runtime/host/entry.S) saves and restores every register it touches.
 * Handlers reach them through vcpu_gpr_read/write() (handlers.c); the
 * stop path spills them into vcpu->regs before it returns to the host's
 * own values.
 *
 * HOST_RSP pointing into struct vcpu is safe for the eight PUSHes: nothing
 * else can push there before they are done.  External interrupts are off
 * (RFLAGS.IF = 0), the PUSHes cannot fault (struct vcpu is mapped,
 * page-aligned, and regs is at its start), and NMI, #DF and #MC run on
 * IST stacks (runtime/host/traps.c), never on the interrupted RSP.
 *
 * The round trip is the hot path every exit pays: keep it straight-line.
 * CR2 is not switched: the host takes no page faults (a host #PF is a
 * panic), so the guest's CR2 survives in the register.
 */
#include "arch/vmx/vcpu_asm.h"

	.text
	.code64

/*
 * int vmx_enter_guest(struct vcpu *vcpu, bool resume)
 *
 * VMLAUNCH (or, with @resume, VMRESUME: a VMCS launched before and
 * switched back in by the run loop, vcpu_switch.c) the current VMCS with
 * vcpu->regs.  Returns VMX_ENTER_STOPPED when a handler stopped the
 * guest, VMX_ENTER_SWITCHED when one gave the CPU to another vCPU
 * (either way vcpu->regs then holds all the guest's registers),
 * VMX_ENTER_VMFAIL when the instruction itself failed (RFLAGS.CF or ZF;
 * nothing was entered).
 */
	.globl vmx_enter_guest
	.type vmx_enter_guest, @function
vmx_enter_guest:
	/*
	 * Our caller was compiled not to use RBP and R10-R15, but save the
	 * ABI's callee-saved set anyway: it is once per guest, not per exit.
	 * R10 and R11 are caller-saved: the caller expects nothing in them.
	 */
	push	%rbp
	push	%rbx
	push	%r12
	push	%r13
	push	%r14
	push	%r15
	/* The stop path in the stub returns through this RSP. */
	mov	%rsp, VCPU_HOST_RSP(%rdi)
	mov	%rdi, %rax
	/* MOV leaves RFLAGS alone: the test of @resume (SIL) holds to the Jcc. */
	test	%sil, %sil
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
	jnz	1f
	vmlaunch
	jmp	2f
1:	vmresume
	/* Only reached when VMLAUNCH or VMRESUME failed: the guest never ran. */
2:
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
 * Save the eight guest registers host C may use into vcpu->regs (RSP =
 * HOST_RSP, just past the R9 slot).  RSP is then the vcpu, the top of
 * its exit stack.  Leaves the vcpu in RDI (the C calls' first argument).
 */
.macro SAVE_GUEST_REGS
	push	%r9
	push	%r8
	push	%rdi
	push	%rsi
	push	%rbx
	push	%rdx
	push	%rcx
	push	%rax
	mov	%rsp, %rdi
.endm

/* Load them back, in the order SAVE_GUEST_REGS pushed them; RSP is past R9 again. */
.macro RESTORE_GUEST_REGS
	pop	%rax
	pop	%rcx
	pop	%rdx
	pop	%rbx
	pop	%rsi
	pop	%rdi
	pop	%r8
	pop	%r9
.endm

/*
 * HOST_RIP, one of two.  The vcpu is page-aligned, so the calls
 * below see the ABI's alignment.  vmx_exit_stub is the common case: read
 * the exit reason and call the generated dispatch directly with its basic
 * reason.  A failed VM entry (bit 31) needs no test here: its basic
 * reasons (33, 34, 41) have no handler in spec/handlers.yaml, so the
 * dispatch sends them to handle_unexpected_exit(), which reads bit 31 and
 * reports the failed entry (docs/INTERFACES.md).  vmx_exit_stub_hooks,
 * for a vCPU whose exits need more around the dispatch (vcpu->exit_hooks:
 * manual MSR switching, timing), goes through vmx_handle_exit() in
 * exit.c.  Which one a vCPU uses is fixed at VMCS setup.
 */
	.globl vmx_exit_stub
	.type vmx_exit_stub, @function
vmx_exit_stub:
	SAVE_GUEST_REGS
	mov	vmx_exit_reason_field(%rip), %rsi
	/*
	 * No MOVZWL to the basic reason: the argument is a uint16_t, whose
	 * bits above 15 the psABI leaves unspecified, and gcc (the only
	 * compiler of this code) extends such arguments in the callee.
	 */
	vmread	%rsi, %rsi
	call	vmx_dispatch_exit
.Lhandled:
	/*
	 * The action goes beside vcpu->nmi_pending (vcpu_asm.h), so that the
	 * one CMPQ below tests both: a MOV here instead of a TEST and a JNZ.
	 */
	mov	%eax, VCPU_EXIT_ACTION(%rsp)
	/*
	 * RSP is the vcpu again: POP the eight back in the order they were
	 * pushed; RBP, R10-R15 are live.  A stop or a switch POPs them too
	 * and finds them still in vcpu->regs below (.Lnot_resume).
	 */
	RESTORE_GUEST_REGS
	/*
	 * An NMI that arrived in VMX root operation is the guest's
	 * (runtime/host/traps.c, vmm_nmi_in_root()): test for it last, with no
	 * register but RFLAGS touched (VMRESUME loads the guest's RFLAGS).
	 * An NMI between this CMP and VMRESUME is sent back to the CMP by
	 * the NMI handler, so none is left behind until the next exit.  The
	 * same CMPQ tests the action (the upper half): zero is "resume, no
	 * NMI".
	 */
	.globl vmx_nmi_check, vmx_nmi_check_end
vmx_nmi_check:
	cmpq	$0, VCPU_NMI_PENDING - VCPU_PUSHED_END(%rsp)
	jne	.Lnot_resume
vmx_nmi_check_end:
.Lvmresume:
	vmresume
	/*
	 * VMRESUME failed (RFLAGS.CF: no valid VMCS, ZF: VM_INSTRUCTION_ERROR
	 * says why).  RSP is HOST_RSP again, VCPU_PUSHED_END past the vcpu;
	 * LEA and MOV leave RFLAGS alone for the PUSHFQ, which lands on the
	 * exit stack below the vcpu.  Report it and stop.  A failed VM
	 * entry that got as far as the guest-state checks is a VM exit with
	 * bit 31 set instead (handle_unexpected_exit(), vmx_handle_exit()).
	 */
	lea	-VCPU_PUSHED_END(%rsp), %rsp
	mov	%rsp, %rdi
	pushfq
	pop	%rsi
	call	vmx_report_vmresume_failure
	mov	$VMX_ENTER_STOPPED, %eax
	jmp	.Lstop
.Lhooks:
	call	vmx_handle_exit		/* exit.c: reason, MSRs, timing, dispatch */
	jmp	.Lhandled
.Lnot_resume:
	/*
	 * A stop or a switch first, as before the NMI check: the action is
	 * vmx_enter_guest()'s result, every guest register is in vcpu->regs
	 * still (the POPs only read them), and RSP goes back to the vcpu.
	 * A waiting NMI stays in nmi_pending for the run loop (vmx_run.c).
	 */
	cmpl	$0, VCPU_EXIT_ACTION - VCPU_PUSHED_END(%rsp)
	je	.Lnmi
	lea	-VCPU_PUSHED_END(%rsp), %rsp
	mov	VCPU_EXIT_ACTION(%rsp), %eax
	jmp	.Lstop
.Lnmi:
	/*
	 * Save the eight again and inject the NMI (events.c).  If the guest
	 * cannot take it yet it stays queued for the next exit: only a new
	 * arrival (VCPU_NMI_ARRIVED) comes back here, so this is no loop.
	 */
	SAVE_GUEST_REGS
	call	vmx_deliver_pending_nmi
	RESTORE_GUEST_REGS
	.globl vmx_nmi_recheck, vmx_nmi_recheck_end
vmx_nmi_recheck:
	testl	$VCPU_NMI_ARRIVED, VCPU_NMI_PENDING - VCPU_PUSHED_END(%rsp)
	jnz	.Lnmi
vmx_nmi_recheck_end:
	jmp	.Lvmresume
.Lstop:
	/*
	 * The guest stopped: leave all of its registers in vcpu->regs for
	 * the summary, then return to the host's own RBP, R12-R15.
	 */
	mov	%rsp, %rbx		/* the vcpu */
	mov	%rbp, VCPU_RBP(%rbx)
	mov	%r10, VCPU_R10(%rbx)
	mov	%r11, VCPU_R11(%rbx)
	mov	%r12, VCPU_R12(%rbx)
	mov	%r13, VCPU_R13(%rbx)
	mov	%r14, VCPU_R14(%rbx)
	mov	%r15, VCPU_R15(%rbx)
	mov	VCPU_HOST_RSP(%rbx), %rsp
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
