/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's registers during an exit: RIP past the instruction that
 * exited, the general-purpose registers by encoding, the paging mode.
 */
#ifndef EXITPLAN_VCPU_REGS_H
#define EXITPLAN_VCPU_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch_bits.h"
#include "runtime/host/compiler.h"
#include "arch/vmx/vcpu.h"
#include "arch/vmx/vmx_ops.h"

/*
 * Advance GUEST_RIP past the instruction that exited, and end any STI or
 * MOV-SS blocking it sat in: the instruction completed (SDM Vol. 3C
 * 26.4.1; KVM's skip_emulated_instruction).  Inline: every instruction
 * exit's hot path ends here.  vmx_advance_rip() is the same for an
 * instruction the runtime decoded itself (EPT violations report no
 * instruction length).
 */
static inline void vmx_advance_rip(uint64_t len)
{
	uint64_t rip = vmcs_read(GUEST_RIP) + len;
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);

	vmcs_write(GUEST_RIP, rip);
	if (unlikely(intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS)))
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
			   intr & ~(uint32_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}

static inline void vmx_skip_instruction(void)
{
	/*
	 * The full-width vmcs_read() of a 32-bit field: VMREAD into a 64-bit
	 * register clears the bits above the field (SDM Vol. 3C 31.3,
	 * VMREAD), so no zero-extension is needed before the add.
	 */
	uint64_t rip = vmcs_read(GUEST_RIP) + vmcs_read(VM_EXIT_INSTRUCTION_LEN);
	uint32_t intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);

	vmcs_write(GUEST_RIP, rip);
	if (unlikely(intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS)))
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
			   intr & ~(uint32_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
}


/*
 * handlers.c: general-purpose registers by instruction encoding (0 = RAX
 * .. 15 = R15).  Only for the vCPU whose exit this CPU is handling: RBP
 * and R10-R15 are read from and written to the live registers.
 */
uint64_t vcpu_gpr_read(struct vcpu *vcpu, unsigned int n);
void vcpu_gpr_write(struct vcpu *vcpu, unsigned int n, uint64_t v);
/* The guest is in 64-bit mode (IA-32e mode and CS.L), not compatibility mode. */
bool vcpu_in_64bit_mode(const struct vcpu *vcpu);

/*
 * Copy the guest's RBP and R10-R15, live in the registers during an exit
 * (vcpu.h), into vcpu->regs: for reports that print the registers.  A
 * write to those slots would not reach the guest; vcpu_gpr_write() does.
 */
static inline void vcpu_spill_fixed_regs(struct vcpu *vcpu)
{
	struct guest_regs *r = &vcpu->regs;

	asm volatile("mov %%rbp, %0\n\tmov %%r10, %1\n\tmov %%r11, %2\n\t"
		     "mov %%r12, %3\n\tmov %%r13, %4\n\tmov %%r14, %5\n\tmov %%r15, %6"
		     : "=m"(r->rbp), "=m"(r->r10), "=m"(r->r11), "=m"(r->r12), "=m"(r->r13),
		       "=m"(r->r14), "=m"(r->r15));
}

/*
 * handlers.c: with PAE paging (not IA-32e mode), load the VMCS's PDPTEs
 * from the guest's CR3, as a MOV to CR0, CR3 or CR4 does; false when
 * they are not in guest memory.
 */
bool load_pae_pdptrs(void);

#endif /* EXITPLAN_VCPU_REGS_H */
