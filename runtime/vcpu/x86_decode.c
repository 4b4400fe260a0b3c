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
 * BT, BTS, BTR, BTC (0F A3, AB, B3, BB, BA /4-/7), the shifts and
 * rotates (C0, C1, D0-D3), SHLD and SHRD (0F A4, A5, AC, AD), MUL, IMUL,
 * DIV, IDIV (F6/F7 /4-/7), IMUL r, m (0F AF, 69, 6B), BSF and BSR (0F BC,
 * BD), CMOVcc (0F 40-4F), SETcc (0F 90-9F), SMSW m16 (0F 01 /4), PUSH m
 * (FF /6), POP m (8F /0), CMPXCHG8B and CMPXCHG16B (0F C7 /1), MOVBE
 * (0F 38 F0, F1); every legacy prefix and REX.  Anything else is
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

static int64_t disp_at(const uint8_t *b, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int k = 0; k < n; k++)
		v |= (uint64_t)b[k] << (8 * k);
	if (n && n < 8 && (v >> (8 * n - 1)) & 1)
		v |= ~0ull << (8 * n);
	return (int64_t)v;
}

/*
 * The effective address of the ModRM memory operand at @b (modrm_len()
 * has checked its bytes are there): SDM Vol. 2A 2.1.5, tables 2-1 to 2-3,
 * and 2.2.1 for REX.B, REX.X and RIP-relative addressing.
 */
static void modrm_ea(const uint8_t *b, unsigned int rex, bool addr16, bool code64,
		     struct x86_insn *insn)
{
	unsigned int mod = b[0] >> 6, rm = b[0] & 7, n = 1;
	static const signed char base16[8] = { 3, 3, 5, 5, 6, 7, 5, 3 };	/* BX BX BP BP SI DI BP BX */
	static const signed char index16[8] = { 6, 7, 6, 7, -1, -1, -1, -1 };	/* SI DI SI DI */

	insn->ea_base = insn->ea_index = -1;
	insn->ea_scale = 1;
	insn->ea_rip = false;
	insn->ea_seg = X86_SEG_DS;
	if (addr16) {
		if (mod == 0 && rm == 6) {
			insn->ea_disp = disp_at(b + 1, 2);
			return;
		}
		insn->ea_base = base16[rm];
		insn->ea_index = index16[rm];
		if (insn->ea_base == 5)
			insn->ea_seg = X86_SEG_SS;
		insn->ea_disp = disp_at(b + 1, mod == 1 ? 1 : mod == 2 ? 2 : 0);
		return;
	}
	if (rm == 4) {
		uint8_t sib = b[1];
		unsigned int index = ((sib >> 3) & 7) | ((rex & 0x02) ? 8 : 0);

		n = 2;
		insn->ea_scale = 1u << (sib >> 6);
		if (index != 4)
			insn->ea_index = (int)index;	/* 4 (no REX.X) is no index */
		if (mod == 0 && (sib & 7) == 5) {
			insn->ea_disp = disp_at(b + 2, 4);
			return;
		}
		insn->ea_base = (int)((sib & 7) | ((rex & 0x01) ? 8 : 0));
	} else if (mod == 0 && rm == 5) {
		insn->ea_disp = disp_at(b + 1, 4);
		insn->ea_rip = code64;
		return;
	} else {
		insn->ea_base = (int)(rm | ((rex & 0x01) ? 8 : 0));
	}
	if (insn->ea_base == 4 || insn->ea_base == 5)
		insn->ea_seg = X86_SEG_SS;	/* rSP, rBP (not R12, R13) */
	insn->ea_disp = disp_at(b + n, mod == 1 ? 1 : mod == 2 ? 4 : 0);
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

/*
 * The SSE moves between an XMM register and memory (0F @opc with its
 * mandatory prefix: none, 66, F3, F2; SDM Vol. 2, Appendix A table A-3):
 * MOVUPS/MOVUPD/MOVSS/MOVSD (10, 11), MOVAPS/MOVAPD (28, 29), MOVNTPS/PD
 * (2B), MOVD/MOVQ (66 6E, 7E), MOVQ (F3 7E, 66 D6), MOVDQA/MOVDQU (66/F3
 * 6F, 7F), MOVNTDQ (66 E7).  The MMX forms (no prefix on 6E-7F) are not.
 */
static bool sse_move(unsigned int opc, bool p66, bool pf3, bool pf2, unsigned int rex,
		     struct x86_insn *insn)
{
	bool load;
	unsigned int size = 16;

	switch (opc) {
	case 0x10: case 0x11:
		load = opc == 0x10;
		size = pf3 ? 4 : pf2 ? 8 : 16;
		break;
	case 0x28: case 0x29: case 0x2b:
		if (pf3 || pf2)
			return false;
		load = opc == 0x28;
		break;
	case 0x6e: case 0x7e:
		if (p66 && !pf3 && !pf2) {
			load = opc == 0x6e;
			size = (rex & REX_W) ? 8 : 4;
		} else if (pf3 && opc == 0x7e) {
			load = true;	/* MOVQ xmm, m64 */
			size = 8;
		} else {
			return false;
		}
		break;
	case 0x6f: case 0x7f:
		if (!(p66 || pf3) || pf2)
			return false;
		load = opc == 0x6f;
		break;
	case 0xd6:			/* MOVQ m64, xmm */
		if (!p66 || pf3 || pf2)
			return false;
		load = false;
		size = 8;
		break;
	case 0xe7:			/* MOVNTDQ m128, xmm */
		if (!p66 || pf3 || pf2)
			return false;
		load = false;
		break;
	default:
		return false;
	}
	insn->op = load ? X86_OP_SSE_LOAD : X86_OP_SSE_STORE;
	insn->size = size;
	insn->reg_size = 16;	/* never a byte register */
	return true;
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

	if (escape && sse_move(opc, opsize, insn->rep, insn->repne, rex, insn)) {
		/* Decoded: an SSE move (its mandatory prefix is not a size or a repeat). */
		insn->rep = insn->repne = false;
	} else if (escape) {
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
		case 0x00:			/* LLDT m16, LTR m16 (0F 00 /2, /3) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			if (digit != 2 && digit != 3)
				return X86_DECODE_UNSUPPORTED;	/* SLDT, STR, VERR, VERW */
			digit_form = true;
			insn->op = X86_OP_LOAD_SYSSEL;
			insn->sub = digit;
			insn->size = insn->reg_size = 2;
			break;
		case 0x01:			/* SMSW m16 (0F 01 /4; the rest are not memory forms here) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			if (((b[i] >> 3) & 7) != 4)
				return X86_DECODE_UNSUPPORTED;
			digit_form = true;
			insn->op = X86_OP_SMSW;
			insn->size = insn->reg_size = 2;	/* a word whatever the operand size */
			break;
		case 0x38:			/* MOVBE r, m (0F 38 F0), MOVBE m, r (F1) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			if ((b[i] & 0xfe) != 0xf0)
				return X86_DECODE_UNSUPPORTED;
			insn->op = (b[i++] & 1) ? X86_OP_STORE : X86_OP_LOAD;
			insn->bswap = true;
			break;
		case 0x40 ... 0x4f:		/* CMOVcc r, r/m */
			insn->op = X86_OP_CMOV;
			insn->sub = opc & 15;
			break;
		case 0x90 ... 0x9f:		/* SETcc r/m8 */
			digit_form = true;
			insn->op = X86_OP_SETCC;
			insn->sub = opc & 15;
			insn->size = insn->reg_size = 1;
			break;
		case 0xa3: case 0xab:		/* BT, BTS r/m, r */
		case 0xb3: case 0xbb:		/* BTR, BTC r/m, r */
			insn->op = X86_OP_BT;
			insn->sub = (opc >> 3) & 3;
			lockable = insn->sub != 0;
			break;
		case 0xba:			/* BT, BTS, BTR, BTC r/m, imm8 (/4../7) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			if (digit < 4)
				return X86_DECODE_UNSUPPORTED;	/* reserved: #UD before any access */
			digit_form = true;
			insn->op = X86_OP_BT;
			insn->sub = digit - 4;
			insn->has_imm = true;
			imm_len = 1;
			lockable = insn->sub != 0;
			break;
		case 0xa4: case 0xa5:		/* SHLD r/m, r, imm8 / CL */
		case 0xac: case 0xad:		/* SHRD */
			insn->op = X86_OP_SHIFTD;
			insn->sub = opc >= 0xac;
			insn->count_cl = opc & 1;
			imm_len = (opc & 1) ? 0 : 1;
			break;
		case 0xaf:			/* IMUL r, r/m */
			insn->op = X86_OP_IMUL;
			break;
		case 0xbc: case 0xbd:		/* BSF, BSR r, r/m (F3: TZCNT, LZCNT, refused above) */
			insn->op = X86_OP_BITSCAN;
			insn->sub = opc & 1;
			break;
		case 0xc7:			/* CMPXCHG8B m64, CMPXCHG16B m128 (0F C7 /1) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			if (((b[i] >> 3) & 7) != 1)
				return X86_DECODE_UNSUPPORTED;	/* RDRAND, VMPTRLD, ...: not on MMIO */
			digit_form = true;
			insn->op = X86_OP_CMPXCHG8B;
			insn->size = insn->reg_size = (rex & REX_W) ? 16 : 8;
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
		case 0x69: case 0x6b:		/* IMUL r, r/m, imm (16/32, or imm8) */
			insn->op = X86_OP_IMUL;
			insn->has_imm = true;
			imm_len = opc == 0x6b ? 1 : (osz == 2 ? 2 : 4);
			break;
		case 0x8f:			/* POP r/m (8F /0) */
		case 0xff:			/* INC, DEC, PUSH r/m (FF /0, /1, /6) */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			digit_form = true;
			if (opc == 0x8f ? digit != 0 : digit != 6)
				goto inc_dec;
			insn->op = opc == 0x8f ? X86_OP_POP : X86_OP_PUSH;
			/* 64-bit mode: 64 bits, or 16 with 66; REX.W changes nothing (SDM Vol. 2B PUSH). */
			if (code64)
				insn->size = insn->reg_size = opsize ? 2 : 8;
			break;
		case 0xc0: case 0xc1:		/* ROL..SAR r/m, imm8 */
		case 0xd0: case 0xd1:		/* ... r/m, 1 */
		case 0xd2: case 0xd3:		/* ... r/m, CL */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit_form = true;
			insn->op = X86_OP_SHIFT;
			insn->sub = (b[i] >> 3) & 7;
			insn->size = insn->reg_size = (opc & 1) ? osz : 1;
			insn->count_cl = opc >= 0xd2;
			if (opc <= 0xc1)
				imm_len = 1;
			else if (opc <= 0xd1)
				insn->has_imm = true, insn->imm = 1;
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
			} else if (digit >= 4) {
				insn->op = X86_OP_MULDIV;	/* MUL, IMUL, DIV, IDIV */
				insn->sub = digit - 4;
			} else {
				return X86_DECODE_UNSUPPORTED;
			}
			break;
		case 0xfe:			/* INC, DEC */
			if (i >= avail)
				return X86_DECODE_SHORT;
			digit = (b[i] >> 3) & 7;
			digit_form = true;
inc_dec:
			if (opc == 0x8f || digit > 1)
				return X86_DECODE_UNSUPPORTED;	/* CALL, JMP through memory; 8F /1-/7 */
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
		modrm_ea(b + i, rex, insn->addr_size == 2, code64, insn);
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
	if (!modrm && (insn->op == X86_OP_LOAD || insn->op == X86_OP_STORE)) {
		/* MOV moffs: the offset is the whole effective address. */
		insn->ea_base = insn->ea_index = -1;
		insn->ea_scale = 1;
		insn->ea_seg = X86_SEG_DS;
		insn->ea_disp = 0;
		for (unsigned int k = 0; k < imm_len && i + k < avail; k++)
			insn->ea_disp |= (int64_t)((uint64_t)b[i + k] << (8 * k));
	}
	if (modrm && imm_len) {
		insn->has_imm = true;
		insn->imm = read_imm(b + i, imm_len) & size_mask(insn->size);
		if (insn->op == X86_OP_BT || insn->op == X86_OP_SHIFT || insn->op == X86_OP_SHIFTD)
			insn->imm &= 0xff;	/* a bit offset or a count: imm8, not sign-extended */
	}
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
				.ea_base = (int)rm,
				.ea_index = -1,
				.ea_scale = 1,
				.ea_disp = mod == 1 ? (int8_t)b[2] : mod == 2 ? (int32_t)((uint32_t)b[2] |
					   (uint32_t)b[3] << 8 | (uint32_t)b[4] << 16 | (uint32_t)b[5] << 24) : 0,
				.ea_seg = rm == 5 ? X86_SEG_SS : X86_SEG_DS,
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

static uint64_t sign_bit(unsigned int size)
{
	return 1ull << (8 * size - 1);
}

static uint64_t sign_extend(uint64_t v, unsigned int size)
{
	return size >= 8 || !(v & sign_bit(size)) ? v : v | ~size_mask(size);
}

/* SF, ZF, PF of @r; CF, OF, AF clear (the logical operations' flags). */
static uint64_t logic_flags(uint64_t r, unsigned int size)
{
	r &= size_mask(size);
	return (r == 0 ? FL_ZF : 0) | ((r & sign_bit(size)) ? FL_SF : 0) | parity_flag(r);
}

bool x86_cond(unsigned int cc, uint64_t f)
{
	bool sf_ne_of = !(f & FL_SF) != !(f & FL_OF), r;

	switch (cc >> 1) {
	case 0: r = f & FL_OF; break;				/* O */
	case 1: r = f & FL_CF; break;				/* B */
	case 2: r = f & FL_ZF; break;				/* E */
	case 3: r = f & (FL_CF | FL_ZF); break;			/* BE */
	case 4: r = f & FL_SF; break;				/* S */
	case 5: r = f & FL_PF; break;				/* P */
	case 6: r = sf_ne_of; break;				/* L */
	default: r = sf_ne_of || (f & FL_ZF); break;		/* LE */
	}
	return (cc & 1) ? !r : r;
}

/* Bochs sets CF alone: OF, SF, AF, PF (undefined in the SDM) and ZF are kept. */
uint64_t x86_bitop(unsigned int op, unsigned int size, uint64_t dst, uint64_t bit,
		   uint64_t *rflags)
{
	uint64_t m = 1ull << (bit & (8 * size - 1));

	*rflags = (*rflags & ~FL_CF) | ((dst & m) ? FL_CF : 0);
	switch (op) {
	case 1: return dst | m;		/* BTS */
	case 2: return dst & ~m;	/* BTR */
	case 3: return dst ^ m;		/* BTC */
	default: return dst;		/* BT */
	}
}

/*
 * The count is masked to 5 bits (6 with a 64-bit operand); a masked
 * count of 0 changes nothing, flags included (SDM Vol. 2B SAL/SAR/SHL/SHR,
 * RCL/RCR/ROL/ROR).  OF is defined for a count of 1; for larger counts
 * it is computed by the same formula, as Bochs does.  The shifts set SF,
 * ZF, PF from the result and clear AF (undefined; Bochs clears it); the
 * rotates change only CF and OF.
 */
uint64_t x86_shift(unsigned int kind, unsigned int size, uint64_t dst, unsigned int count,
		   uint64_t *rflags)
{
	unsigned int bits = 8 * size;
	uint64_t mask = size_mask(size), msb = sign_bit(size), r, cf, of;

	dst &= mask;
	count &= size == 8 ? 63 : 31;
	if (!count)
		return dst;
	switch (kind) {
	case 0: case 1: {			/* ROL, ROR */
		unsigned int n = count % bits;

		if (kind == 0) {
			r = n ? ((dst << n) | (dst >> (bits - n))) & mask : dst;
			cf = r & 1;
			of = !!(r & msb) ^ cf;
		} else {
			r = n ? ((dst >> n) | (dst << (bits - n))) & mask : dst;
			cf = !!(r & msb);
			of = cf ^ !!(r & (msb >> 1));
		}
		*rflags = (*rflags & ~(FL_CF | FL_OF)) | (cf ? FL_CF : 0) | (of ? FL_OF : 0);
		return r;
	}
	case 2: case 3: {			/* RCL, RCR: through CF, a bits+1-bit rotate */
		unsigned int n = size < 4 ? count % (bits + 1) : count;

		cf = *rflags & FL_CF ? 1 : 0;
		r = dst;
		for (unsigned int k = 0; k < n; k++) {
			uint64_t out;

			if (kind == 2) {
				out = !!(r & msb);
				r = ((r << 1) | cf) & mask;
			} else {
				out = r & 1;
				r = (r >> 1) | (cf ? msb : 0);
			}
			cf = out;
		}
		if (!n)
			return dst;
		of = kind == 2 ? (!!(r & msb) ^ cf) : (!!(r & msb) ^ !!(r & (msb >> 1)));
		*rflags = (*rflags & ~(FL_CF | FL_OF)) | (cf ? FL_CF : 0) | (of ? FL_OF : 0);
		return r;
	}
	case 4: case 6:				/* SHL (SAL) */
		r = count < 64 ? (dst << count) & mask : 0;
		cf = count <= bits ? (dst >> (bits - count)) & 1 : 0;
		of = !!(r & msb) ^ cf;
		break;
	case 5:					/* SHR */
		r = count < 64 ? dst >> count : 0;
		cf = (dst >> (count - 1)) & 1;	/* count - 1 < 63 (31 for sizes under 8) */
		of = !!(r & msb) ^ !!(r & (msb >> 1));
		break;
	default: {				/* SAR */
		uint64_t s = sign_extend(dst, size);

		r = (uint64_t)((int64_t)s >> (count < 64 ? count : 63)) & mask;
		cf = ((int64_t)s >> (count - 1)) & 1;
		of = 0;
		break;
	}
	}
	*rflags = (*rflags & ~X86_FLAGS_ARITH) | logic_flags(r, size) | (cf ? FL_CF : 0) |
		  (of ? FL_OF : 0);
	return r;
}

/*
 * SHLD, SHRD: the count masked to 5 bits (6 for 64); 0 changes nothing.
 * CF is the last bit shifted out of @dst.  OF is defined for a count of
 * 1 (the sign changed); Bochs computes it for every count as CF ^ the
 * result's sign (SHLD) or the result's top two bits differing (SHRD),
 * and so does this.  SF, ZF, PF follow the result, AF is cleared.  A
 * 16-bit operand with a count above 16 is undefined: Bochs (and the P6)
 * shift dst:src:dst, and so does this.
 */
uint64_t x86_shiftd(bool right, unsigned int size, uint64_t dst, uint64_t src,
		    unsigned int count, uint64_t *rflags)
{
	unsigned int bits = 8 * size;
	uint64_t mask = size_mask(size), msb = sign_bit(size), r, cf, of;

	dst &= mask;
	src &= mask;
	count &= size == 8 ? 63 : 31;
	if (!count)
		return dst;
	if (size == 2) {
		uint64_t t = right ? (src << 16 | dst) : (dst << 16 | src);

		if (right) {
			r = t >> count;
			if (count > 16)
				r |= dst << (32 - count);
			cf = (dst >> (count - 1)) & 1;
		} else {
			r = ((t << count) & 0xffffffffull) >> 16;
			if (count > 16)
				r |= (dst << (count - 16)) >> 16;
			cf = (t >> (32 - count)) & 1;
		}
		r &= mask;
	} else if (right) {
		r = ((dst >> count) | (src << (bits - count))) & mask;
		cf = (dst >> (count - 1)) & 1;
	} else {
		r = ((dst << count) | (src >> (bits - count))) & mask;
		cf = (dst >> (bits - count)) & 1;
	}
	of = right ? !!(r & msb) ^ !!(r & (msb >> 1)) : !!(r & msb) ^ cf;
	*rflags = (*rflags & ~X86_FLAGS_ARITH) | logic_flags(r, size) | (cf ? FL_CF : 0) |
		  (of ? FL_OF : 0);
	return r;
}

/* The unsigned 128 / 64 division of the host CPU, checked before it can fault. */
static bool udiv128(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *q, uint64_t *rem)
{
	if (!d || hi >= d)
		return false;	/* a zero divisor, or a quotient wider than 64 bits */
	asm("divq %4" : "=a"(*q), "=d"(*rem) : "a"(lo), "d"(hi), "rm"(d) : "cc");
	return true;
}

/*
 * MUL, IMUL: CF = OF = the high half is significant; SF, ZF, PF of the
 * low half and AF cleared (undefined in the SDM; Bochs's values).  DIV,
 * IDIV: the flags are undefined and kept, as Bochs keeps them.
 */
bool x86_muldiv(unsigned int op, unsigned int size, uint64_t *lo, uint64_t *hi, uint64_t src,
		uint64_t *rflags)
{
	unsigned int bits = 8 * size;
	uint64_t mask = size_mask(size), a = *lo & mask, d = *hi & mask, s = src & mask;

	if (op < 2) {
		uint64_t pl, ph;
		bool wide;

		if (op == 0) {
			unsigned __int128 p = (unsigned __int128)a * s;

			pl = (uint64_t)p & mask;
			ph = size == 8 ? (uint64_t)(p >> 64) : (uint64_t)(p >> bits) & mask;
			wide = ph != 0;
		} else {
			__int128 p = (__int128)(int64_t)sign_extend(a, size) *
				     (__int128)(int64_t)sign_extend(s, size);

			pl = (uint64_t)p & mask;
			ph = size == 8 ? (uint64_t)((unsigned __int128)p >> 64)
				       : (uint64_t)((unsigned __int128)p >> bits) & mask;
			/* Overflow: the product is not the sign extension of its low half. */
			wide = (__int128)(int64_t)sign_extend(pl, size) != p;
		}
		*lo = pl;
		*hi = ph;
		*rflags = (*rflags & ~X86_FLAGS_ARITH) | logic_flags(pl, size) |
			  (wide ? FL_CF | FL_OF : 0);
		return true;
	}
	{
		/* The dividend d:a as 128 bits (sizes under 8 fit the low 64). */
		uint64_t nh = size == 8 ? d : 0, nl = size == 8 ? a : (d << bits) | a, q, r;
		bool neg_n = false, neg_d = false;

		if (op == 3) {
			neg_n = size == 8 ? (int64_t)nh < 0 : !!(d & sign_bit(size));
			neg_d = !!(s & sign_bit(size));
			if (neg_n) {
				if (size == 8) {
					nh = ~nh + (nl == 0);
					nl = -nl;
				} else {
					nl = -(nl | ~size_mask(2 * size)) & size_mask(2 * size);
				}
			}
			if (neg_d)
				s = (-s) & mask;
		}
		if (!udiv128(nh, nl, s, &q, &r))
			return false;
		if (op == 2) {
			if (size < 8 && q > mask)
				return false;
		} else {
			/* The signed quotient fits in @size: up to 2^(bits-1), or 2^(bits-1)-1. */
			uint64_t lim = sign_bit(size);

			if (q > lim || (q == lim && neg_n == neg_d))
				return false;
			if (neg_n != neg_d)
				q = -q;
			if (neg_n)
				r = -r;
		}
		*lo = q & mask;
		*hi = r & mask;
		return true;
	}
}

uint64_t x86_imul(unsigned int size, uint64_t a, uint64_t b, uint64_t *rflags)
{
	uint64_t lo = a, hi = 0;

	x86_muldiv(1, size, &lo, &hi, b, rflags);
	return lo;
}

/* Bochs: ZF clear and SF, PF of the index, CF, OF, AF clear; a zero source sets ZF alone. */
bool x86_bitscan(bool reverse, unsigned int size, uint64_t src, uint64_t *index,
		 uint64_t *rflags)
{
	src &= size_mask(size);
	if (!src) {
		*rflags |= FL_ZF;
		return false;
	}
	*index = reverse ? 63 - (uint64_t)__builtin_clzll(src) : (uint64_t)__builtin_ctzll(src);
	*rflags = (*rflags & ~X86_FLAGS_ARITH) | (logic_flags(*index, size) & ~FL_ZF);
	return true;
}
