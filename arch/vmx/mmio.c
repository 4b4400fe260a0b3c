// SPDX-License-Identifier: GPL-2.0-only
/*
 * The MOV decoder of the emulated MMIO pages (mmio.h): the instruction at
 * the guest's RIP as a load or store, and its completion.  Its own file,
 * below the pages' owners: ept_exits.c (the xAPIC page) and the device
 * pages (ioapic_exits.c, vlapic_exits.c) all decode with it, and
 * ept_exits.c calls the device pages.
 */
#include "arch_bits.h"
#include "layout.h"
#include "mmio.h"
#include "string.h"
#include "vmcs_fields.h"
#include "vcpu_arch.h"
#include "events.h"
#include "vcpu_regs.h"
#include "vmm.h"
#include "vmx_controls_bits.h"

uint64_t vmx_guest_rip_linear(void)
{
	uint64_t rip = vmcs_read(GUEST_RIP) + vmcs_read(GUEST_CS_BASE);

	if (!(vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE))
		rip &= 0xffffffffull;
	return rip;
}

/*
 * The stores that may reach the xAPIC page (mapped read-only: reads do
 * not exit): MOV r/m, r (88, 89), MOV r/m, imm (C6 /0, C7 /0) and MOV
 * moffs, AL/eAX (A2, A3), with
 * operand-size (66), address-size (67), segment and REX prefixes, in
 * 16-, 32- and 64-bit code, any ModRM/SIB form.  The address comes from
 * the exit; the decode is for the value, its size and the length.
 */
#define STORE_INSN_MAX		15	/* the architectural limit */

struct store_insn {
	unsigned int size;	/* 1, 2, 4 or 8 bytes */
	uint64_t value;
	unsigned int len;
};

/* Length of a ModRM memory operand (ModRM, SIB, displacement) at @b. */
static bool modrm_len(const uint8_t *b, unsigned int avail, bool addr16, unsigned int *len)
{
	unsigned int mod = b[0] >> 6, rm = b[0] & 7, n = 1;

	if (mod == 3)
		return false;		/* a register operand: no memory access */
	if (addr16) {
		if (mod == 0 && rm == 6)
			n += 2;
		n += mod == 1 ? 1 : mod == 2 ? 2 : 0;
	} else {
		if (rm == 4) {		/* SIB */
			if (avail < 2)
				return false;
			if (mod == 0 && (b[1] & 7) == 5)
				n += 4;
			n += 1;
		} else if (mod == 0 && rm == 5) {
			n += 4;		/* disp32, or RIP-relative in 64-bit mode */
		}
		n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	*len = n;
	return n <= avail;
}

static bool decode_store(struct vcpu *vcpu, const uint8_t *b, unsigned int avail,
			 struct store_insn *insn)
{
	bool long_mode = vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE;
	uint32_t cs_ar = vmcs_read32(GUEST_CS_AR_BYTES);
	bool code64 = long_mode && (cs_ar & VMX_AR_L);
	bool code32 = code64 || (cs_ar & VMX_AR_DB);
	bool opsize = false, adsize = false;
	unsigned int i = 0, rex = 0, mlen, reg;

	for (; i < avail; i++) {
		uint8_t p = b[i];

		if (p == X86_PREFIX_OPERAND_SIZE)
			opsize = true;
		else if (p == X86_PREFIX_ADDRESS_SIZE)
			adsize = true;
		else if (p == X86_PREFIX_ES || p == X86_PREFIX_CS || p == X86_PREFIX_SS ||
			 p == X86_PREFIX_DS || p == X86_PREFIX_FS || p == X86_PREFIX_GS)
			continue;
		else
			break;
	}
	/* REX is the last prefix, and exists only in 64-bit code. */
	if (code64 && i < avail && (b[i] & 0xf0) == X86_REX_BASE)
		rex = b[i++];
	if (i + 1 > avail)
		return false;
	if (b[i] == X86_OPCODE_MOV_MOFFS8_AL || b[i] == X86_OPCODE_MOV_MOFFS_EAX) {
		/* MOV moffs, AL/eAX: the address is an immediate of the address size. */
		unsigned int asz = code64 ? (adsize ? 4 : 8) : (adsize == code32) ? 2 : 4;

		insn->size = b[i] == X86_OPCODE_MOV_MOFFS8_AL ? 1 : (rex & X86_REX_W) ? 8 :
			     (opsize == code32) ? 2 : 4;
		insn->value = vcpu_gpr_read(vcpu, 0);
		insn->len = i + 1 + asz;
		return insn->len <= avail;
	}
	if (i + 2 > avail)
		return false;
	switch (b[i]) {
	case X86_OPCODE_MOV_STORE8:
	case X86_OPCODE_MOV_STORE_IMM8:
		insn->size = 1;
		break;
	case X86_OPCODE_MOV_STORE:
	case X86_OPCODE_MOV_STORE_IMM:
		insn->size = (rex & X86_REX_W) ? 8 : (opsize == code32) ? 2 : 4;
		break;
	default:
		return false;
	}
	reg = ((b[i + 1] >> 3) & 7) | ((rex & X86_REX_R) ? 8 : 0);
	if ((b[i] == X86_OPCODE_MOV_STORE_IMM8 || b[i] == X86_OPCODE_MOV_STORE_IMM) && (reg & 7))
		return false;		/* C6/C7 with /1../7 is not MOV */
	if (!modrm_len(b + i + 1, avail - i - 1, code64 ? false : (adsize == code32), &mlen))
		return false;
	i += 1 + mlen;
	if (b[i - 1 - mlen] == X86_OPCODE_MOV_STORE_IMM8 ||
	    b[i - 1 - mlen] == X86_OPCODE_MOV_STORE_IMM) {
		unsigned int imm = insn->size == 8 ? 4 : insn->size;	/* imm32, sign-extended */

		if (i + imm > avail)
			return false;
		insn->value = 0;
		for (unsigned int k = 0; k < imm; k++)
			insn->value |= (uint64_t)b[i + k] << (8 * k);
		i += imm;
	} else if (insn->size == 1 && !rex && reg >= 4) {
		insn->value = vcpu_gpr_read(vcpu, reg - 4) >> 8;	/* AH, CH, DH, BH */
	} else {
		insn->value = vcpu_gpr_read(vcpu, reg);
	}
	insn->len = i;
	return true;
}

/*
 * The loads an emulated MMIO page answers: MOV r, r/m (8A, 8B) and MOV
 * AL/eAX, moffs (A0, A1), with the prefixes decode_store() takes.  The
 * destination is ModRM.reg (REX.R), or AH..BH for 8A without REX.
 */
static bool decode_load(const uint8_t *b, unsigned int avail, struct mmio_access *a)
{
	bool long_mode = vmcs_read32(VM_ENTRY_CONTROLS) & VM_ENTRY_IA32E_MODE;
	uint32_t cs_ar = vmcs_read32(GUEST_CS_AR_BYTES);
	bool code64 = long_mode && (cs_ar & VMX_AR_L);
	bool code32 = code64 || (cs_ar & VMX_AR_DB);
	bool opsize = false, adsize = false;
	unsigned int i = 0, rex = 0, mlen;

	for (; i < avail; i++) {
		uint8_t p = b[i];

		if (p == 0x66)
			opsize = true;
		else if (p == 0x67)
			adsize = true;
		else if (p == 0x26 || p == 0x2e || p == 0x36 || p == 0x3e || p == 0x64 || p == 0x65)
			continue;
		else
			break;
	}
	if (code64 && i < avail && (b[i] & 0xf0) == 0x40)
		rex = b[i++];
	if (i + 1 > avail)
		return false;
	a->store = false;
	a->high_byte = false;
	if (b[i] == 0xa0 || b[i] == 0xa1) {
		unsigned int asz = code64 ? (adsize ? 4 : 8) : (adsize == code32) ? 2 : 4;

		a->size = b[i] == 0xa0 ? 1 : (rex & 8) ? 8 : (opsize == code32) ? 2 : 4;
		a->reg = 0;
		a->len = i + 1 + asz;
		return a->len <= avail;
	}
	if (b[i] != 0x8a && b[i] != 0x8b)
		return false;
	if (i + 2 > avail)
		return false;
	a->size = b[i] == 0x8a ? 1 : (rex & 8) ? 8 : (opsize == code32) ? 2 : 4;
	a->reg = ((b[i + 1] >> 3) & 7) | ((rex & 4) ? 8 : 0);
	if (a->size == 1 && !rex && a->reg >= 4) {
		a->reg -= 4;
		a->high_byte = true;
	}
	if (!modrm_len(b + i + 1, avail - i - 1, code64 ? false : (adsize == code32), &mlen))
		return false;
	a->len = i + 1 + mlen;
	return true;
}

bool vmx_mmio_decode(struct vcpu *vcpu, struct mmio_access *a)
{
	uint8_t code[STORE_INSN_MAX];
	struct store_insn st;
	unsigned int avail;
	uint64_t rip = vmx_guest_rip_linear();

	/* The instruction may end just before an unmapped page: fetch no further. */
	avail = PAGE_SIZE - (rip & (PAGE_SIZE - 1));
	if (avail > sizeof(code))
		avail = sizeof(code);
	memset(code, 0, sizeof(code));
	if (!guest_read_linear(rip, code, avail))
		avail = 0;
	memcpy(a->bytes, code, sizeof(a->bytes));
	if (avail && decode_load(code, avail, a))
		return true;
	if (avail && decode_store(vcpu, code, avail, &st)) {
		a->store = true;
		a->high_byte = false;
		a->size = st.size;
		a->value = st.value;
		a->len = st.len;
		return true;
	}
	return false;
}

void vmx_mmio_complete(struct vcpu *vcpu, const struct mmio_access *a, uint64_t value)
{
	uint32_t intr;

	if (!a->store) {
		uint64_t old = vcpu_gpr_read(vcpu, a->reg);

		/* 32-bit results zero-extend; 8- and 16-bit ones merge (SDM Vol. 1 3.4.1.1). */
		if (a->high_byte)
			value = (old & ~0xff00ull) | ((value & 0xff) << 8);
		else if (a->size == 1)
			value = (old & ~0xffull) | (value & 0xff);
		else if (a->size == 2)
			value = (old & ~0xffffull) | (value & 0xffff);
		else if (a->size == 4)
			value &= 0xffffffffull;
		vcpu_gpr_write(vcpu, a->reg, value);
	}
	/* The instruction completes: past it, out of any STI or MOV-SS shadow. */
	vmcs_write(GUEST_RIP, vmcs_read(GUEST_RIP) + a->len);
	intr = vmcs_read32(GUEST_INTERRUPTIBILITY_INFO);
	if (intr & (GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS))
		vmcs_write(GUEST_INTERRUPTIBILITY_INFO,
			   intr & ~(uint32_t)(GUEST_INTR_STATE_STI | GUEST_INTR_STATE_MOV_SS));
	/* An event the exit interrupted goes in first (SDM 28.2.4). */
	vmx_reinject_idt_vectoring();
}
