/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What an NMI taken in VMX root operation on a vCPU's CPU means for that
 * vCPU (nmi_root.c's vmm_nmi_in_root()), as pure functions for the
 * unit tests (tests/unit/test_nmi_root.c), and nmi_root.c's interface.
 */
#ifndef EXITPLAN_NMI_ROOT_H
#define EXITPLAN_NMI_ROOT_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/vmx/vcpu_asm.h"
#include "arch/vmx/exit.h"

/* What a vCPU waits for in root operation (vmx_wait_in_root()). */
enum vmx_root_wait {
	VMX_WAIT_NONE,		/* not waiting: handling an exit or entering */
	VMX_WAIT_HLT,		/* HLT with IF=0: an NMI ends it (SDM Vol. 2A, HLT) */
	VMX_WAIT_SIPI,		/* wait-for-SIPI: it blocks NMIs (SDM Vol. 3C, "Activity State") */
};

/*
 * The nmi_pending bit an NMI sets: VCPU_NMI_KICK for the host's kick
 * (flagged by its sender, apic.c) to a vCPU handling an exit,
 * VCPU_NMI_ARRIVED for the guest's own (unflagged) NMI, 0 for none.
 * A kick to a waiting vCPU only ends its HLT: the waiter re-checks what
 * it waits for.  The guest's NMI ends a HLT wait as it ends HLT on
 * hardware, and is injected at the next entry; in wait-for-SIPI it is
 * dropped, as an NMI IPI to such a vCPU is (runtime/vm/vm.c
 * vm_vcpu_post_nmi(); "the wait-for-SIPI state blocks external
 * interrupts, non-maskable interrupts (NMIs), INIT signals, and SMIs",
 * SDM Vol. 3C, VM entries, "Activity State").
 */
static inline uint32_t vmx_nmi_in_root_bit(bool kick, enum vmx_root_wait wait)
{
	if (kick)
		return wait == VMX_WAIT_NONE ? VCPU_NMI_KICK : 0;
	return wait == VMX_WAIT_SIPI ? 0 : VCPU_NMI_ARRIVED;
}

/* A HLT wait with IF=0 ends on an NMI: one posted (@posted) or one taken in root. */
static inline bool vmx_hlt_wait_over(bool posted, uint32_t nmi_pending)
{
	return posted || (nmi_pending & VCPU_NMI_ARRIVED);
}

struct interrupt_frame;
struct vcpu;

/*
 * Wait in root operation, interrupts off, until @ready(vcpu) or the
 * machine stops (false): halted until an NMI, or polling where halting
 * is not safe.  vmx_run.c's run loop, for STARTUP and HLT with IF=0.
 */
bool vmx_wait_in_root(struct vcpu *vcpu, bool (*ready)(struct vcpu *), enum vmx_root_wait why);

/*
 * An NMI in the hypervisor: true when it is the guest's (a vCPU runs on
 * this CPU) and has been queued for it; @frame may be changed to re-run
 * the exit stub's last check before VM entry.  The host's NMI owner
 * (runtime/host/traps.h traps_set_nmi_owner()), registered by vmm_run().
 */
bool vmm_nmi_in_root(struct interrupt_frame *frame);

/*
 * HLT with RFLAGS.IF = 0 (handle_hlt()): halt in root operation until an
 * NMI, INIT or the machine's stop is posted; stop the vCPU if no other
 * vCPU runs to post one.
 */
enum vmx_exit_action vmx_halt_interrupts_off(struct vcpu *vcpu);

/* Where the exit stub's NMI tests are (exit_entry.S): vmm_nmi_in_root() moves a RIP there. */
struct vmx_stub_windows {
	const char *check, *check_end;
	const char *recheck, *recheck_end;
};
/* Given once at boot, by vmm_run(), before the NMI owner is registered. */
void vmx_nmi_root_init(const struct vmx_stub_windows *w);

#endif /* EXITPLAN_NMI_ROOT_H */
