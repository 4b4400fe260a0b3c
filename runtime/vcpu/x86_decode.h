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
	unsigned int reg;	/* the register operand: 0 rAX .. 15 r15 ... */
	bool high_byte;		/* ... or its bits 15:8 (AH, CH, DH, BH: 8-bit, no REX) */
	bool has_imm;		/* the source is imm (sign-extended to size), not reg */
	uint64_t imm;
	bool lock, rep, repne;
	int seg_override;	/* -1, or an enum x86_seg */
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

/* Does @insn write memory (CMPXCHG always does: back its old value on a mismatch)? */
static inline bool x86_insn_writes(const struct x86_insn *insn)
{
	if (insn->op == X86_OP_ALU_MEM)
		return insn->alu != X86_ALU_CMP && insn->alu != X86_ALU_TEST;
	return insn->op == X86_OP_STORE || insn->op == X86_OP_XCHG || insn->op == X86_OP_CMPXCHG ||
	       insn->op == X86_OP_XADD || insn->op == X86_OP_STOS || insn->op == X86_OP_MOVS;
}

/* Does @insn read memory? */
static inline bool x86_insn_reads(const struct x86_insn *insn)
{
	return insn->op != X86_OP_STORE && insn->op != X86_OP_STOS && insn->op != X86_OP_NONE;
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

#endif /* EXITPLAN_VMX_X86_DECODE_H */
