// SPDX-License-Identifier: GPL-2.0-only
/*
 * The decoder of the instructions compilers and kernels use on MMIO
 * (SDM Vol. 2, Appendix A's one- and two-byte opcode maps), and their
 * ALU operations.  Pure: bytes in, a struct x86_insn out.
 *
 * Decoded: MOV (88-8B, A0-A3, C6 /0, C7 /0), MOVZX (0F B6, B7), MOVSX
 * (0F BE, BF), MOVSXD (63, 64-bit mode), the ALU rows ADD..CMP (00-3B
 * with a memory operand, 80, 81, 83), TEST (84, 85, F6 /0, F7 /0), NOT
 * and NEG (F6/F7 /2, /3), INC and DEC (FE, FF /0, /1), XCHG (86, 87),
 * CMPXCHG (0F B0, B1), XADD (0F C0, C1), and STOS, LODS, MOVS (AA-AD,
 * A4, A5) with REP, CMPS and SCAS (A6, A7, AE, AF) with REPE and REPNE;
 * every legacy prefix and REX.  Anything else is
 * X86_DECODE_UNSUPPORTED: the caller stops the guest with a report.
 */
#include "runtime/vcpu/x86_decode.h"

/* Legacy prefixes (SDM Vol. 2A 2.1.1). */
#define PFX_LOCK	0xf0
#define PFX_REPNE	0xf2
#define PFX_REP		0xf3
#define PFX_OPSIZE	0x66
#define PFX_ADSIZE	0x67
#define REX_W		0x08
#define REX_R		0x04
#define OPC_ESCAPE	0x0f

static int segment_prefix(uint8_t p)
{
	switch (p) {
	case 0x26: return X86_SEG_ES;
	case 0x2e: return X86_SEG_CS;
	case 0x36: return X86_SEG_SS;
	case 0x3e: return X86_SEG_DS;
	case 0x64: return X86_SEG_FS;
	case 0x65: return X86_SEG_GS;
	default: return -1;
	}
}

/*
 * Length of the ModRM memory operand at @b (ModRM, SIB, displacement;
 * SDM Vol. 2A 2.1.5), 16-bit addressing when @addr16.  False for a
 * register operand (mod 3: no memory access) or when @avail ends first.
 */
static bool modrm_len(const uint8_t *b, unsigned int avail, bool addr16, unsigned int *len)
{
	unsigned int mod, rm, n = 1;

	if (avail < 1)
		return false;
	mod = b[0] >> 6;
	rm = b[0] & 7;
	if (mod == 3)
		return false;
	if (addr16) {
		if (mod == 0 && rm == 6)
			n += 2;
		n += mod == 1 ? 1 : mod == 2 ? 2 : 0;
	} else {
		if (rm == 4) {
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

/* Immediates are at most 32 bits here, sign-extended to the operand. */
static uint64_t read_imm(const uint8_t *b, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int k = 0; k < n; k++)
		v |= (uint64_t)b[k] << (8 * k);
	if (n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	return v;
}

static uint64_t size_mask(unsigned int size)
{
	return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

static __attribute__((noinline)) enum x86_decode_result
decode_general(const uint8_t *b, unsigned int avail, enum x86_mode mode, struct x86_insn *insn)
{
	bool opsize = false, adsize = false, code64 = mode == X86_MODE_64;
	unsigned int i = 0, rex = 0, opc, osz, mlen, digit = 0, imm_len = 0;
	bool modrm = true, lockable = false, escape = false, digit_form = false;

	*insn = (struct x86_insn){ .op = X86_OP_NONE, .alu = X86_ALU_NONE, .seg_override = -1 };
	for (; i < avail; i++) {
		uint8_t p = b[i];
		int seg = segment_prefix(p);

		if (p == PFX_OPSIZE)
			opsize = true;
		else if (p == PFX_ADSIZE)
			adsize = true;
		else if (p == PFX_LOCK)
			insn->lock = true;
		else if (p == PFX_REP)
			insn->rep = true, insn->repne = false;
		else if (p == PFX_REPNE)
			insn->repne = true, insn->rep = false;
		else if (seg >= 0)
			insn->seg_override = seg;
		else if (code64 && (p & 0xf0) == 0x40)
			{ rex = p; continue; }	/* a REX counts only right before the opcode */
		else
			break;
		rex = 0;
	}
	/* In 64-bit mode ES, CS, SS and DS overrides are ignored (SDM Vol. 1 3.3.7.1). */
	if (code64 && insn->seg_override >= 0 && insn->seg_override < X86_SEG_FS)
		insn->seg_override = -1;
	if (i >= avail)
		return X86_DECODE_SHORT;
	opc = b[i++];
	if (opc == OPC_ESCAPE) {
		if (i >= avail)
			return X86_DECODE_SHORT;
		escape = true;
		opc = b[i++];
	}
	insn->addr_size = code64 ? (adsize ? 4 : 8) : ((mode == X86_MODE_32) != adsize) ? 4 : 2;
	osz = (rex & REX_W) ? 8 : ((mode != X86_MODE_16) != opsize) ? 4 : 2;
	insn->size = insn->reg_size = osz;

	if (escape) {
		/* A mandatory prefix (F2, F3) makes these other instructions. */
		if (insn->rep || insn->repne)
			return X86_DECODE_UNSUPPORTED;
		switch (opc) {
		case 0xb0: case 0xb1:		/* CMPXCHG r/m, r */
		case 0xc0: case 0xc1:		/* XADD r/m, r */
			insn->op = opc >= 0xc0 ? X86_OP_XADD : X86_OP_CMPXCHG;
			if (opc & 1)
				insn->size = insn->reg_size = osz;
			else
				insn->size = insn->reg_size = 1;
			lockable = true;
			break;
		case 0xb6: case 0xb7:		/* MOVZX r, r/m8, r/m16 */
		case 0xbe: case 0xbf:		/* MOVSX */
			insn->op = X86_OP_LOAD;
			insn->ext = opc >= 0xbe ? X86_EXT_SIGN : X86_EXT_ZERO;
			insn->size = (opc & 1) ? 2 : 1;
			insn->reg_size = osz;
			break;
		default:
			return X86_DECODE_UNSUPPORTED;
		}
	} else if (opc < 0x40 && (opc & 7) < 4) {
		/* The ALU rows: 0 r/m8,r8  1 r/m,r  2 r8,r/m8  3 r,r/m. */
		insn->alu = (enum x86_alu)(opc >> 3);
		insn->op = (opc & 2) ? X86_OP_ALU_REG : X86_OP_ALU_MEM;
		insn->size = insn->reg_size = (opc & 1) ? osz : 1;
		lockable = !(opc & 2) && insn->alu != X86_ALU_CMP;
	} else {
		switch (opc) {
		case 0x63:			/* MOVSXD r, r/m32 */
			if (!code64)
				return X86_DECODE_UNSUPPORTED;	/* ARPL */
			insn->op = X86_OP_LOAD;
			insn->size = osz == 8 ? 4 : osz;
			insn->ext = osz == 8 ? X86_EXT_SIGN : X86_EXT_NONE;
			break;
		case 0x80: case 0x81: case 0x83:	/* ALU r/m, imm */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			digit_form = true;
			insn->op = X86_OP_ALU_MEM;
			insn->alu = (enum x86_alu)digit;
			insn->size = insn->reg_size = opc == 0x80 ? 1 : osz;
			insn->has_imm = true;
			imm_len = opc == 0x81 ? (osz == 2 ? 2 : 4) : 1;
			lockable = insn->alu != X86_ALU_CMP;
			break;
		case 0x84: case 0x85:		/* TEST r/m, r */
			insn->op = X86_OP_ALU_MEM;
			insn->alu = X86_ALU_TEST;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			break;
		case 0x86: case 0x87:		/* XCHG r/m, r */
			insn->op = X86_OP_XCHG;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			lockable = true;
			break;
		case 0x88: case 0x89:		/* MOV r/m, r */
		case 0x8a: case 0x8b:		/* MOV r, r/m */
			insn->op = (opc & 2) ? X86_OP_LOAD : X86_OP_STORE;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			break;
		case 0xa0: case 0xa1:		/* MOV AL/rAX, moffs */
		case 0xa2: case 0xa3:		/* MOV moffs, AL/rAX */
			insn->op = (opc & 2) ? X86_OP_STORE : X86_OP_LOAD;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			modrm = false;
			imm_len = insn->addr_size;	/* the offset, not a value */
			break;
		case 0xa4: case 0xa5:		/* MOVS */
		case 0xa6: case 0xa7:		/* CMPS */
		case 0xaa: case 0xab:		/* STOS */
		case 0xac: case 0xad:		/* LODS */
		case 0xae: case 0xaf:		/* SCAS */
			insn->op = opc <= 0xa5 ? X86_OP_MOVS : opc <= 0xa7 ? X86_OP_CMPS :
				   opc <= 0xab ? X86_OP_STOS : opc <= 0xad ? X86_OP_LODS : X86_OP_SCAS;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			modrm = false;
			break;
		case 0xc6: case 0xc7:		/* MOV r/m, imm */
			if (i >= avail)
				return X86_DECODE_SHORT;
			if ((b[i] >> 3) & 7)
				return X86_DECODE_UNSUPPORTED;	/* XABORT, XBEGIN, or reserved */
			digit_form = true;
			insn->op = X86_OP_STORE;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			insn->has_imm = true;
			imm_len = (opc & 1) ? (osz == 2 ? 2 : 4) : 1;
			break;
		case 0xf6: case 0xf7:		/* TEST imm, NOT, NEG (MUL, DIV: not emulated) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			digit_form = true;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			insn->op = X86_OP_ALU_MEM;
			if (digit == 0) {
				insn->alu = X86_ALU_TEST;
				insn->has_imm = true;
				imm_len = (opc & 1) ? (osz == 2 ? 2 : 4) : 1;
			} else if (digit == 2 || digit == 3) {
				insn->alu = digit == 2 ? X86_ALU_NOT : X86_ALU_NEG;
				lockable = true;
			} else {
				return X86_DECODE_UNSUPPORTED;
			}
			break;
		case 0xfe: case 0xff:		/* INC, DEC */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			digit_form = true;
			if (digit > 1)
				return X86_DECODE_UNSUPPORTED;	/* CALL, JMP, PUSH through memory */
			insn->op = X86_OP_ALU_MEM;
			insn->alu = digit ? X86_ALU_DEC : X86_ALU_INC;
			insn->size = insn->reg_size = opc == 0xfe ? 1 : osz;
			lockable = true;
			break;
		default:
			return X86_DECODE_UNSUPPORTED;
		}
	}

	if (modrm) {
		if (!modrm_len(b + i, avail - i, insn->addr_size == 2, &mlen)) {
			if (i < avail && (b[i] >> 6) == 3)
				return insn->lock ? X86_DECODE_UD : X86_DECODE_UNSUPPORTED;
			return X86_DECODE_SHORT;
		}
		insn->reg = ((b[i] >> 3) & 7) | ((rex & REX_R) ? 8 : 0);
		i += mlen;
		if (digit_form)
			insn->reg = 0;	/* ModRM.reg is an opcode extension */
		else if (insn->reg_size == 1 && !rex && insn->reg >= 4)
			insn->reg -= 4, insn->high_byte = true;	/* AH, CH, DH, BH */
	}
	if (!modrm && insn->op != X86_OP_LOAD && insn->op != X86_OP_STORE)
		insn->reg = 0;		/* string instructions: AL/rAX */
	if (i + imm_len > avail)
		return X86_DECODE_SHORT;
	if (modrm && imm_len)
		insn->imm = read_imm(b + i, imm_len) & size_mask(insn->size);
	i += imm_len;
	insn->len = i;
	/* LOCK: only the read-modify-write forms with a memory destination (SDM Vol. 2B LOCK). */
	if (insn->lock && !lockable)
		return X86_DECODE_UD;
	return X86_DECODE_OK;
}

enum x86_decode_result x86_decode(const uint8_t *b, unsigned int avail, enum x86_mode mode,
				  struct x86_insn *insn)
{
	/*
	 * The common case first, in a few instructions: MOV r/m, r or MOV r,
	 * r/m (88-8B) with no prefix, in 32- or 64-bit code, through a base
	 * register with no SIB and a displacement of 0, 8 or 32 bits, as an
	 * APIC EOI or a device register access is.  Anything else takes the
	 * general path, which decodes these too.
	 */
	if (avail >= 2 && (b[0] & 0xfc) == 0x88 && mode != X86_MODE_16) {
		unsigned int mod = b[1] >> 6, rm = b[1] & 7;
		unsigned int len = 2 + (mod == 1 ? 1 : mod == 2 ? 4 : 0);

		if (mod != 3 && rm != 4 && !(mod == 0 && rm == 5) && len <= avail) {
			unsigned int size = (b[0] & 1) ? 4 : 1, reg = (b[1] >> 3) & 7;
			bool high = size == 1 && reg >= 4;	/* AH, CH, DH, BH */

			*insn = (struct x86_insn){
				.op = (b[0] & 2) ? X86_OP_LOAD : X86_OP_STORE,
				.alu = X86_ALU_NONE,
				.size = size,
				.reg_size = size,
				.reg = high ? reg - 4 : reg,
				.high_byte = high,
				.seg_override = -1,
				.addr_size = mode == X86_MODE_64 ? 8 : 4,
				.len = len,
			};
			return X86_DECODE_OK;
		}
	}
	return decode_general(b, avail > X86_INSN_MAX ? X86_INSN_MAX : avail, mode, insn);
}

#define FL_CF	0x001ull
#define FL_PF	0x004ull
#define FL_AF	0x010ull
#define FL_ZF	0x040ull
#define FL_SF	0x080ull
#define FL_OF	0x800ull

static uint64_t parity_flag(uint64_t r)
{
	uint8_t b = (uint8_t)r;

	b ^= b >> 4;
	b ^= b >> 2;
	b ^= b >> 1;
	return (b & 1) ? 0 : FL_PF;	/* PF: an even number of set bits in the low byte */
}

uint64_t x86_alu(enum x86_alu alu, unsigned int size, uint64_t dst, uint64_t src,
		 uint64_t *rflags)
{
	uint64_t mask = size_mask(size), sign = 1ull << (8 * size - 1);
	uint64_t cf_in = *rflags & FL_CF, r, f = 0;
	bool arith = true, sub = false;

	dst &= mask;
	src &= mask;
	switch (alu) {
	case X86_ALU_ADD: r = dst + src; break;
	case X86_ALU_ADC: r = dst + src + (cf_in ? 1 : 0); break;
	case X86_ALU_SUB: case X86_ALU_CMP: r = dst - src; sub = true; break;
	case X86_ALU_SBB: r = dst - src - (cf_in ? 1 : 0); sub = true; break;
	case X86_ALU_OR: r = dst | src; arith = false; break;
	case X86_ALU_AND: case X86_ALU_TEST: r = dst & src; arith = false; break;
	case X86_ALU_XOR: r = dst ^ src; arith = false; break;
	case X86_ALU_INC: src = 1; r = dst + 1; break;
	case X86_ALU_DEC: src = 1; r = dst - 1; sub = true; break;
	case X86_ALU_NEG: src = dst; dst = 0; r = 0 - src; sub = true; break;
	case X86_ALU_NOT: return ~dst & mask;
	default: return dst;
	}
	r &= mask;
	if (arith) {
		uint64_t c = dst ^ src ^ r;	/* the carries (borrows) into each bit */

		if (alu == X86_ALU_ADC)
			f |= (r < dst || (cf_in && r == dst)) ? FL_CF : 0;
		else if (alu == X86_ALU_SBB)
			f |= (dst < src || (cf_in && dst == src)) ? FL_CF : 0;
		else if (alu == X86_ALU_NEG)
			f |= src ? FL_CF : 0;
		else if (sub)
			f |= dst < src ? FL_CF : 0;
		else
			f |= r < dst ? FL_CF : 0;
		f |= (c & 0x10) ? FL_AF : 0;
		/* Overflow: the operands' signs agree (ADD) or differ (SUB) and the result's does not. */
		if (sub)
			f |= ((dst ^ src) & (dst ^ r) & sign) ? FL_OF : 0;
		else
			f |= (~(dst ^ src) & (dst ^ r) & sign) ? FL_OF : 0;
	}
	f |= r == 0 ? FL_ZF : 0;
	f |= (r & sign) ? FL_SF : 0;
	f |= parity_flag(r);
	if (alu == X86_ALU_INC || alu == X86_ALU_DEC)
		f = (f & ~FL_CF) | cf_in;	/* INC, DEC: CF unchanged */
	*rflags = (*rflags & ~X86_FLAGS_ARITH) | f;
	return r;
}
