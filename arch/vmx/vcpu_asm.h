/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offsets into struct vcpu for the exit stub (arch/vmx/exit_entry.S).
 * Not architectural: the layout of struct guest_regs, which is first in
 * struct vcpu.  arch/vmx/exit.c checks every one with _Static_assert.
 */
#ifndef EXITPLAN_VCPU_ASM_H
#define EXITPLAN_VCPU_ASM_H

#define VCPU_RAX	0
#define VCPU_RCX	8
#define VCPU_RDX	16
#define VCPU_RBX	24
#define VCPU_RBP	32
#define VCPU_RSI	40
#define VCPU_RDI	48
#define VCPU_R8		56
#define VCPU_R9		64
#define VCPU_R10	72
#define VCPU_R11	80
#define VCPU_R12	88
#define VCPU_R13	96
#define VCPU_R14	104
#define VCPU_R15	112

/*
 * The exit frame at the top of each CPU's exit stack; HOST_RSP points at
 * it.  The stub finds its vcpu there, and the RSP to return to when the
 * guest stops (saved by vmx_enter_guest).
 */
#define EXIT_FRAME_VCPU		0
#define EXIT_FRAME_HOST_RSP	8
#define EXIT_FRAME_SIZE		16

/* vmx_enter_guest()'s results. */
#define VMX_ENTER_STOPPED	1	/* the guest stopped (VMX_EXIT_STOP) */
#define VMX_ENTER_VMFAIL	2	/* VMLAUNCH failed: see VM_INSTRUCTION_ERROR */

#endif /* EXITPLAN_VCPU_ASM_H */
