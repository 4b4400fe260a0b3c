// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's general-purpose registers by their instruction encoding,
 * its operand width, and the PAE PDPTEs a MOV to CR0/CR3/CR4 loads
 * (vcpu_regs.h).  Out of handlers.c: the MMIO decoder (ept_exits.c) and
 * the task switch (task_switch_vmcs.c) need them too, and no handler
 * file should call another's.
 */
#include "arch_bits.h"
#include "page_alloc.h"
#include "string.h"
#include "vmcs_fields.h"
#include "guest_mem.h"
#include "vcpu_regs.h"
#include "vmx_ctls.h"
#include "vmx_controls_bits.h"

/* --- general-purpose registers by their instruction encoding ---------- */

/*
 * 0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP (in the VMCS), 5 RBP, 6 RSI, 7 RDI,
 * 8-15 R8-R15.  RBP and R10-R15 (NULL here) are the guest's in the
 * registers themselves during an exit: no host C touches them (vcpu.h).
 */
static uint64_t *gpr_slot(struct vcpu *vcpu, unsigned int n)
{
	struct guest_regs *r = &vcpu->regs;
	uint64_t *const slots[16] = {
		&r->rax, &r->rcx, &r->rdx, &r->rbx, NULL, NULL, &r->rsi, &r->rdi,
		&r->r8, &r->r9, NULL, NULL, NULL, NULL, NULL, NULL,
	};

	return slots[n & 15];
}

/*
 * The live guest RBP, R10-R15.  The asm names the register: the compiler
 * was told never to allocate it (-ffixed-*), so nothing else holds a
 * value there that a write could clobber.
 */
static uint64_t fixed_gpr_read(unsigned int n)
{
	uint64_t v;

	switch (n & 15) {
	case 5:
		asm volatile("mov %%rbp, %0" : "=r"(v));
		break;
	case 10:
		asm volatile("mov %%r10, %0" : "=r"(v));
		break;
	case 11:
		asm volatile("mov %%r11, %0" : "=r"(v));
		break;
	case 12:
		asm volatile("mov %%r12, %0" : "=r"(v));
		break;
	case 13:
		asm volatile("mov %%r13, %0" : "=r"(v));
		break;
	case 14:
		asm volatile("mov %%r14, %0" : "=r"(v));
		break;
	default:
		asm volatile("mov %%r15, %0" : "=r"(v));
		break;
	}
	return v;
}

static void fixed_gpr_write(unsigned int n, uint64_t v)
{
	switch (n & 15) {
	case 5:
		asm volatile("mov %0, %%rbp" : : "r"(v));
		break;
	case 10:
		asm volatile("mov %0, %%r10" : : "r"(v));
		break;
	case 11:
		asm volatile("mov %0, %%r11" : : "r"(v));
		break;
	case 12:
		asm volatile("mov %0, %%r12" : : "r"(v));
		break;
	case 13:
		asm volatile("mov %0, %%r13" : : "r"(v));
		break;
	case 14:
		asm volatile("mov %0, %%r14" : : "r"(v));
		break;
	default:
		asm volatile("mov %0, %%r15" : : "r"(v));
		break;
	}
}

static bool gpr_is_rsp(unsigned int n)
{
	return (n & 15) == 4;
}

/* IA-32e mode with CS.L: the only mode with 64-bit operands (SDM Vol. 1 3.2.1). */
bool vcpu_in_64bit_mode(const struct vcpu *vcpu)
{
	return (vcpu_ctls(vcpu, VMX_ENTRY) & VM_ENTRY_IA32E_MODE) &&
	       (vmcs_read32(GUEST_CS_AR_BYTES) & VMX_AR_L);
}

/*
 * The register as the exiting instruction read it: outside 64-bit mode
 * (compatibility mode included) its operand is 32 bits wide, and
 * whatever a 64-bit stretch of code left in bits 63:32 is not part of it.
 */
uint64_t vcpu_gpr_read(struct vcpu *vcpu, unsigned int n)
{
	uint64_t *p = gpr_slot(vcpu, n);
	uint64_t v;

	if (p)
		v = *p;
	else
		v = gpr_is_rsp(n) ? vmcs_read(GUEST_RSP) : fixed_gpr_read(n);
	return vcpu_in_64bit_mode(vcpu) ? v : v & 0xffffffffull;
}

void vcpu_gpr_write(struct vcpu *vcpu, unsigned int n, uint64_t v)
{
	uint64_t *p = gpr_slot(vcpu, n);

	/* A 32-bit result (any mode but 64-bit) zero-extends (SDM Vol. 1 3.4.1.1). */
	if (!vcpu_in_64bit_mode(vcpu))
		v &= 0xffffffffull;
	if (p)
		*p = v;
	else if (gpr_is_rsp(n))
		vmcs_write(GUEST_RSP, v);
	else
		fixed_gpr_write(n, v);
}

/*
 * With EPT, a VM entry into PAE paging (CR0.PG, CR4.PAE, not IA-32e mode)
 * takes the four PDPTEs from the VMCS, not from memory (SDM Vol. 3C
 * 26.3.2.4): when the hypervisor performs the guest's MOV to CR0/CR4 it
 * must load them, as the instruction itself would have (Vol. 3A 4.4.1).
 * false when they cannot be read (the guest's CR3 points at memory it
 * does not have).
 */
bool load_pae_pdptrs(void)
{
	static const enum vmcs_field pdptr[4] = {
		GUEST_PDPTR0, GUEST_PDPTR1, GUEST_PDPTR2, GUEST_PDPTR3,
	};
	uint64_t e[4];

	if (!(vmcs_read(GUEST_CR0) & X86_CR0_PG) || !(vmcs_read(GUEST_CR4) & X86_CR4_PAE) ||
	    (vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE))
		return true;
	/* CR3[31:5] is the page-directory-pointer table in PAE mode: 32-byte aligned. */
	if (!guest_phys_ok(vmcs_read(GUEST_CR3) & PAE_CR3_PDPT_MASK, sizeof(e)))
		return false;
	memcpy(e, phys_to_virt(vmcs_read(GUEST_CR3) & PAE_CR3_PDPT_MASK), sizeof(e));
	for (unsigned int i = 0; i < 4; i++)
		vmcs_write(pdptr[i], e[i]);
	return true;
}
