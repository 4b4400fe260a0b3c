/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * x86_decode.c: the instructions that may touch emulated MMIO, decoded
 * from their bytes alone (no VMCS, no guest state: host-unit-tested by
 * tests/unit/test_x86_decode.c), and the ALU operations they perform
 * with the flags the SDM gives them.  mmio.c executes what this decodes.
 */
#ifndef EXITPLAN_VMX_X86_DECODE_H
#define EXITPLAN_VMX_X86_DECODE_H

#include <stdbool.h>
#include <stdint.h>

#define X86_INSN_MAX		15	/* SDM Vol. 2A 2.3.11 */

enum x86_mode {
	X86_MODE_16,		/* real, virtual-8086, 16-bit protected code */
	X86_MODE_32,		/* 32-bit code (CS.D), compatibility mode included */
	X86_MODE_64,		/* 64-bit mode (IA32_EFER.LMA and CS.L) */
};

enum x86_decode_result {
	X86_DECODE_OK,
	X86_DECODE_UD,		/* hardware raises #UD: a LOCK prefix where it is not allowed */
	X86_DECODE_UNSUPPORTED,	/* a form not emulated (or no memory operand) */
	X86_DECODE_SHORT,	/* the bytes end before the instruction does */
};

/* What the instruction does with its memory operand. */
enum x86_op {
	X86_OP_NONE,
	X86_OP_LOAD,		/* MOV r, m; MOVZX; MOVSX; MOVSXD: reg = ext(mem) */
	X86_OP_STORE,		/* MOV m, r / imm: mem = src */
	X86_OP_ALU_MEM,		/* mem = mem alu src (or flags only: CMP, TEST) */
	X86_OP_ALU_REG,		/* reg = reg alu mem (or flags only: CMP) */
	X86_OP_XCHG,		/* XCHG m, r: swapped, always locked */
	X86_OP_CMPXCHG,		/* CMPXCHG m, r */
	X86_OP_XADD,		/* XADD m, r */
	X86_OP_BT,		/* BT, BTS, BTR, BTC m, r / imm8 (sub: 0..3) */
	X86_OP_SHIFT,		/* ROL..SAR m, 1 / CL / imm8 (sub: ModRM.reg, /6 is SHL) */
	X86_OP_SHIFTD,		/* SHLD, SHRD m, r, CL / imm8 (sub: 0 SHLD, 1 SHRD) */
	X86_OP_MULDIV,		/* MUL, IMUL, DIV, IDIV m: rDX:rAX (sub: 0..3) */
	X86_OP_IMUL,		/* IMUL r, m (, imm): reg = reg (or imm) * mem, truncated */
	X86_OP_BITSCAN,		/* BSF, BSR r, m (sub: 0 BSF, 1 BSR) */
	X86_OP_CMOV,		/* CMOVcc r, m (sub: cc): reads whatever the condition */
	X86_OP_SETCC,		/* SETcc m8 (sub: cc) */
	X86_OP_SMSW,		/* SMSW m16: CR0[15:0] as the guest sees it */
	X86_OP_PUSH,		/* PUSH m: the stack gets mem */
	X86_OP_POP,		/* POP m: mem gets the stack's top */
	X86_OP_CMPXCHG8B,	/* CMPXCHG8B m64, CMPXCHG16B m128 (size 8 or 16) */
	X86_OP_LOAD_SYSSEL,	/* LLDT m16 (sub 2), LTR m16 (sub 3): a selector read (0F 00 /2, /3) */
	X86_OP_SSE_LOAD,	/* MOVUPS..MOVQ xmm, m: reg is the XMM register, zero-extended */
	X86_OP_SSE_STORE,	/* MOVUPS..MOVQ m, xmm (size 4, 8 or 16) */
	/* The string instructions last (mmio.c tests op >= X86_OP_STOS). */
	X86_OP_STOS,		/* STOS: ES:rDI = rAX */
	X86_OP_LODS,		/* LODS: rAX = seg:rSI */
	X86_OP_MOVS,		/* MOVS: ES:rDI = seg:rSI */
	X86_OP_CMPS,		/* CMPS: flags of seg:rSI - ES:rDI (REPE, REPNE) */
	X86_OP_SCAS,		/* SCAS: flags of rAX - ES:rDI (REPE, REPNE) */
};

/* The ALU operation (ADD..CMP in the order of their opcode rows and /digit). */
enum x86_alu {
	X86_ALU_ADD, X86_ALU_OR, X86_ALU_ADC, X86_ALU_SBB,
	X86_ALU_AND, X86_ALU_SUB, X86_ALU_XOR, X86_ALU_CMP,
	X86_ALU_TEST, X86_ALU_INC, X86_ALU_DEC, X86_ALU_NOT, X86_ALU_NEG,
	X86_ALU_NONE,
};

enum x86_ext { X86_EXT_NONE, X86_EXT_ZERO, X86_EXT_SIGN };

/* Segment registers, in the encoding of Sreg and of the instruction information. */
enum x86_seg { X86_SEG_ES, X86_SEG_CS, X86_SEG_SS, X86_SEG_DS, X86_SEG_FS, X86_SEG_GS };

struct x86_insn {
	enum x86_op op;
	enum x86_alu alu;
	unsigned int size;	/* bytes of the memory operand: 1, 2, 4, 8 */
	unsigned int reg_size;	/* of the register operand (MOVZX/MOVSX: the destination) */
	enum x86_ext ext;	/* LOAD: how mem widens to reg_size */
	bool bswap;		/* MOVBE: LOAD or STORE with the bytes reversed */
	unsigned int sub;	/* BT..CMPXCHG8B: which of the family (see enum x86_op) */
	bool count_cl;		/* SHIFT, SHIFTD: the count is CL (else imm, 1 for D0/D1) */
	unsigned int reg;	/* the register operand: 0 rAX .. 15 r15 ... */
	bool high_byte;		/* ... or its bits 15:8 (AH, CH, DH, BH: 8-bit, no REX) */
	bool has_imm;		/* the source is imm (sign-extended to size), not reg */
	uint64_t imm;
	bool lock, rep, repne;
	int seg_override;	/* -1, or an enum x86_seg */
	/*
	 * The memory operand's effective address (SDM Vol. 1 3.7.5): base +
	 * index * scale + disp, truncated to addr_size; ea_rip: disp is from
	 * the next instruction's RIP (64-bit mode).  ea_base, ea_index: a
	 * register number, or -1 for none.  ea_seg: the segment it goes
	 * through without an override (SS through rBP or rSP, else DS).
	 * String instructions address through rSI/rDI instead.
	 */
	int ea_base, ea_index;
	unsigned int ea_scale;
	int64_t ea_disp;
	bool ea_rip;
	enum x86_seg ea_seg;
	unsigned int addr_size;	/* 2, 4 or 8 */
	unsigned int len;
};

/*
 * Decode the @avail bytes at @b, the instruction that touched emulated
 * MMIO, in @mode.  X86_DECODE_OK: @insn says what it does with its one
 * memory operand (whose address the exit gives; string instructions
 * address theirs through rSI/rDI).
 */
enum x86_decode_result x86_decode(const uint8_t *b, unsigned int avail, enum x86_mode mode,
				  struct x86_insn *insn);

/*
 * The form most stores to a device register take -- an EOI, an ICR or
 * TPR write -- decoded in a few instructions for mmio.c's fast path:
 * MOV m32, r32 (89 /r) or MOV m32, imm32 (C7 /0) in 32- or 64-bit code,
 * with no legacy prefix and, in 64-bit mode, at most one REX, without
 * W.  @b holds X86_STORE32_BYTES bytes (the longest such form is 12).
 * False for anything else: x86_decode() decodes these too, and the rest.
 */
#define X86_STORE32_BYTES	16

struct x86_store32 {
	unsigned int len;
	bool has_imm;
	unsigned int reg;	/* the source register, 0 eAX .. 15 r15d (!has_imm) */
	uint32_t imm;		/* the source (has_imm) */
};

static inline bool x86_decode_store32(const uint8_t *b, enum x86_mode mode,
				      struct x86_store32 *st)
{
	unsigned int rex = 0, i = 0, modrm, mod, rm;

	if (mode == X86_MODE_16)
		return false;
	if (mode == X86_MODE_64 && (b[0] & 0xf0) == 0x40)
		rex = b[i++];
	modrm = b[i + 1];
	mod = modrm >> 6;
	rm = modrm & 7;
	/* REX.W: a 64-bit store.  C7's /digit must be 0.  Mod 3: no memory operand. */
	if ((rex & 0x08) || mod == 3)
		return false;
	if (b[i] == 0xc7 && !(modrm & 0x38))
		st->has_imm = true;
	else if (b[i] == 0x89)
		st->has_imm = false;
	else
		return false;
	i += 2;
	if (rm == 4)		/* SIB; base 5 with mod 0: disp32, no base */
		i += (mod == 0 && (b[i] & 7) == 5) ? 5 : 1;
	else if (mod == 0 && rm == 5)	/* disp32, RIP-relative in 64-bit mode */
		i += 4;
	i += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	st->reg = ((modrm >> 3) & 7) | ((rex & 0x04) << 1);	/* REX.R */
	if (st->has_imm) {
		st->imm = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 | (uint32_t)b[i + 2] << 16 |
			  (uint32_t)b[i + 3] << 24;
		i += 4;
	}
	st->len = i;
	return true;
}

/* Does @insn write memory (CMPXCHG always does: back its old value on a mismatch)? */
static inline bool x86_insn_writes(const struct x86_insn *insn)
{
	if (insn->op == X86_OP_ALU_MEM)
		return insn->alu != X86_ALU_CMP && insn->alu != X86_ALU_TEST;
	if (insn->op == X86_OP_BT)
		return insn->sub != 0;	/* BT only reads */
	return insn->op == X86_OP_STORE || insn->op == X86_OP_XCHG || insn->op == X86_OP_CMPXCHG ||
	       insn->op == X86_OP_XADD || insn->op == X86_OP_STOS || insn->op == X86_OP_MOVS ||
	       insn->op == X86_OP_SHIFT || insn->op == X86_OP_SHIFTD || insn->op == X86_OP_SETCC ||
	       insn->op == X86_OP_SMSW || insn->op == X86_OP_POP || insn->op == X86_OP_CMPXCHG8B ||
	       insn->op == X86_OP_SSE_STORE;
}

/* Does @insn read memory? */
static inline bool x86_insn_reads(const struct x86_insn *insn)
{
	return insn->op != X86_OP_STORE && insn->op != X86_OP_STOS && insn->op != X86_OP_NONE &&
	       insn->op != X86_OP_SETCC && insn->op != X86_OP_SMSW && insn->op != X86_OP_POP &&
	       insn->op != X86_OP_SSE_STORE;
}

#define X86_FLAGS_ARITH	0x8d5ull	/* CF PF AF ZF SF OF */

/*
 * @dst alu @src on @size bytes (ADC and SBB take CF from @rflags): the
 * result (truncated to @size) and @rflags with CF, PF, AF, ZF, SF and OF
 * as the SDM gives them (INC and DEC keep CF; NOT changes none; the
 * logical ones clear CF, OF and AF, which the SDM leaves undefined and
 * Bochs clears).
 */
uint64_t x86_alu(enum x86_alu alu, unsigned int size, uint64_t dst, uint64_t src,
		 uint64_t *rflags);

/*
 * The other operations, with the flags the SDM defines and, where it
 * leaves one undefined, the value Bochs gives (the reference the guest
 * tests compare with; each function says which).
 */

/* Condition code @cc (the low nibble of Jcc, SETcc, CMOVcc) on @rflags. */
bool x86_cond(unsigned int cc, uint64_t rflags);

/* BT (0), BTS, BTR, BTC (3) of bit @bit (taken modulo the operand's bits): CF only. */
uint64_t x86_bitop(unsigned int op, unsigned int size, uint64_t dst, uint64_t bit,
		   uint64_t *rflags);

/* ROL..SAR (@kind: ModRM.reg, 6 = SHL) by @count (masked as the CPU masks it). */
uint64_t x86_shift(unsigned int kind, unsigned int size, uint64_t dst, unsigned int count,
		   uint64_t *rflags);

/* SHLD (@right false) or SHRD of @dst with bits from @src by @count (2, 4, 8 bytes). */
uint64_t x86_shiftd(bool right, unsigned int size, uint64_t dst, uint64_t src,
		    unsigned int count, uint64_t *rflags);

/*
 * MUL (0), IMUL, DIV, IDIV (3) of @src with the accumulator pair: *@lo is
 * AL/AX/EAX/RAX, *@hi AH/DX/EDX/RDX (their @size bits), replaced by the
 * result (MUL: product low, high; DIV: quotient, remainder).  False: #DE
 * (a zero divisor, or a quotient that does not fit), nothing changed.
 */
bool x86_muldiv(unsigned int op, unsigned int size, uint64_t *lo, uint64_t *hi, uint64_t src,
		uint64_t *rflags);

/* IMUL's two- and three-operand forms: @a * @b truncated to @size, CF = OF = it overflowed. */
uint64_t x86_imul(unsigned int size, uint64_t a, uint64_t b, uint64_t *rflags);

/* BSF (@reverse false) or BSR of @src: false when it is 0 (ZF set, destination kept). */
bool x86_bitscan(bool reverse, unsigned int size, uint64_t src, uint64_t *index,
		 uint64_t *rflags);

#endif /* EXITPLAN_VMX_X86_DECODE_H */
