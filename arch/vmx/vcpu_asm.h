/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Offsets into struct vcpu for the exit stub (arch/vmx/exit_entry.S).
 * Not architectural: the layout of struct guest_regs, which is first in
 * struct vcpu, and the stack pointer after it.  arch/vmx/exit.c
 * checks every one with _Static_assert.
 */
#ifndef EXITPLAN_VCPU_ASM_H
#define EXITPLAN_VCPU_ASM_H

/* Saved by the stub with PUSH, in this order from the top down. */
#define VCPU_RAX	0
#define VCPU_RCX	8
#define VCPU_RDX	16
#define VCPU_RBX	24
#define VCPU_RSI	32
#define VCPU_RDI	40
#define VCPU_R8		48
#define VCPU_R9		56
/* HOST_RSP = the vcpu + this: just past R9, so the pushes fill the slots above. */
#define VCPU_PUSHED_END	64
/* Live in the registers during an exit; spilled only when the guest stops. */
#define VCPU_R10	64
#define VCPU_R11	72
#define VCPU_RBP	80
#define VCPU_R12	88
#define VCPU_R13	96
#define VCPU_R14	104
#define VCPU_R15	112
#define VCPU_CR2	120
#define VCPU_HOST_RSP	128	/* vmx_enter_guest()'s RSP, for the stop path */
#define VCPU_NMI_PENDING 136	/* an NMI for the guest arrived in VMX root operation */
#define VCPU_EXIT_ACTION 140	/* this exit's action, tested with nmi_pending in one CMPQ */
/* Its bits: arrived since the stub last looked; waiting for the guest to unblock NMIs. */
#define VCPU_NMI_ARRIVED	1
#define VCPU_NMI_QUEUED		2
/* interrupts: direct: a kick's NMI arrived in root operation (nmi_root.c), not the guest's. */
#define VCPU_NMI_KICK		4

/* vmx_enter_guest()'s results. */
#define VMX_ENTER_STOPPED	1	/* the guest stopped (VMX_EXIT_STOP) */
#define VMX_ENTER_VMFAIL	2	/* VMLAUNCH or VMRESUME failed: see VM_INSTRUCTION_ERROR */
#define VMX_ENTER_SWITCHED	3	/* a handler gave the CPU away (VMX_EXIT_SWITCH) */

#endif /* EXITPLAN_VCPU_ASM_H */
