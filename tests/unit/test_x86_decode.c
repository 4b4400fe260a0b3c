// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/vcpu/x86_decode.c: instruction bytes -> the decoded operation on
 * MMIO, in each mode, with prefixes, REX and every ModRM form; the forms
 * hardware refuses with #UD; and x86_alu()'s results and flags against
 * the host CPU's own instructions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "runtime/host/compiler.h"
#include "runtime/vcpu/x86_decode.h"

#define B(...)	{ __VA_ARGS__ }, sizeof((uint8_t[]){ __VA_ARGS__ })

struct decode_case {
	const char *text;	/* the instruction, AT&T syntax */
	enum x86_mode mode;
	uint8_t bytes[X86_INSN_MAX];
	unsigned int nbytes;
	enum x86_decode_result result;
	/* The expected decode (X86_DECODE_OK only). */
	enum x86_op op;
	enum x86_alu alu;
	unsigned int size, reg_size, reg;
	bool high_byte, has_imm;
	uint64_t imm;
	enum x86_ext ext;
	bool lock, rep;
	int seg;
	unsigned int addr_size, len;
};

#define M16 X86_MODE_16
#define M32 X86_MODE_32
#define M64 X86_MODE_64
#define OK X86_DECODE_OK
#define NA X86_ALU_NONE

static const struct decode_case cases[] = {
	/* MOV */
	{ "mov %eax,0x80(%ebx)", M32, B(0x89, 0x43, 0x80), OK, X86_OP_STORE, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 3 },
	{ "mov 0xfee00080,%ecx", M32, B(0x8b, 0x0d, 0x80, 0x00, 0xe0, 0xfe), OK, X86_OP_LOAD, NA, 4, 4, 1, false, false, 0, 0, false, false, -1, 4, 6 },
	{ "mov %ah,(%esi)", M32, B(0x88, 0x26), OK, X86_OP_STORE, NA, 1, 1, 0, true, false, 0, 0, false, false, -1, 4, 2 },
	{ "mov %sil,(%rdi) (REX)", M64, B(0x40, 0x88, 0x37), OK, X86_OP_STORE, NA, 1, 1, 6, false, false, 0, 0, false, false, -1, 8, 3 },
	{ "mov %r9,0x10(%rax,%rcx,8)", M64, B(0x4c, 0x89, 0x4c, 0xc8, 0x10), OK, X86_OP_STORE, NA, 8, 8, 9, false, false, 0, 0, false, false, -1, 8, 5 },
	{ "movw $0x1234,%fs:(%eax) (66)", M32, B(0x64, 0x66, 0xc7, 0x00, 0x34, 0x12), OK, X86_OP_STORE, NA, 2, 2, 0, false, true, 0x1234, 0, false, false, X86_SEG_FS, 4, 6 },
	{ "movq $-1,(%rax) (imm32 sign-extended)", M64, B(0x48, 0xc7, 0x00, 0xff, 0xff, 0xff, 0xff), OK, X86_OP_STORE, NA, 8, 8, 0, false, true, ~0ull, 0, false, false, -1, 8, 7 },
	{ "movb $0x5a,0x80(%bx) (16-bit)", M16, B(0xc6, 0x87, 0x80, 0x00, 0x5a), OK, X86_OP_STORE, NA, 1, 1, 0, false, true, 0x5a, 0, false, false, -1, 2, 5 },
	{ "mov %eax,0xfee00080 (moffs)", M32, B(0xa3, 0x80, 0x00, 0xe0, 0xfe), OK, X86_OP_STORE, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 5 },
	{ "mov 0xfee00080,%rax (moffs64)", M64, B(0x48, 0xa1, 0x80, 0x00, 0xe0, 0xfe, 0, 0, 0, 0), OK, X86_OP_LOAD, NA, 8, 8, 0, false, false, 0, 0, false, false, -1, 8, 10 },
	{ "mov 0x80,%ax (16-bit moffs)", M16, B(0xa1, 0x80, 0x00), OK, X86_OP_LOAD, NA, 2, 2, 0, false, false, 0, 0, false, false, -1, 2, 3 },
	{ "mov 0x80(%rip),%eax", M64, B(0x8b, 0x05, 0x80, 0, 0, 0), OK, X86_OP_LOAD, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 8, 6 },
	{ "mov (%ebp,%esi,1) disp32 SIB", M32, B(0x8b, 0x04, 0x35, 0, 0, 0xe0, 0xfe), OK, X86_OP_LOAD, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 7 },
	{ "mov (%eax) with 67 in 64-bit", M64, B(0x67, 0x8b, 0x00), OK, X86_OP_LOAD, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 3 },
	{ "REX before 66 is ignored", M64, B(0x48, 0x66, 0x8b, 0x00), OK, X86_OP_LOAD, NA, 2, 2, 0, false, false, 0, 0, false, false, -1, 8, 4 },
	/* MOVZX, MOVSX, MOVSXD */
	{ "movzbl (%eax),%edx", M32, B(0x0f, 0xb6, 0x10), OK, X86_OP_LOAD, NA, 1, 4, 2, false, false, 0, X86_EXT_ZERO, false, false, -1, 4, 3 },
	{ "movzwl (%eax),%esp", M32, B(0x0f, 0xb7, 0x20), OK, X86_OP_LOAD, NA, 2, 4, 4, false, false, 0, X86_EXT_ZERO, false, false, -1, 4, 3 },
	{ "movsbw (%eax),%ax", M32, B(0x66, 0x0f, 0xbe, 0x00), OK, X86_OP_LOAD, NA, 1, 2, 0, false, false, 0, X86_EXT_SIGN, false, false, -1, 4, 4 },
	{ "movswq (%rax),%r8", M64, B(0x4c, 0x0f, 0xbf, 0x00), OK, X86_OP_LOAD, NA, 2, 8, 8, false, false, 0, X86_EXT_SIGN, false, false, -1, 8, 4 },
	{ "movslq (%rax),%rax", M64, B(0x48, 0x63, 0x00), OK, X86_OP_LOAD, NA, 4, 8, 0, false, false, 0, X86_EXT_SIGN, false, false, -1, 8, 3 },
	/* The read-modify-write ALU forms */
	{ "or %eax,0x1000(%r12)", M64, B(0x41, 0x09, 0x84, 0x24, 0x00, 0x10, 0, 0), OK, X86_OP_ALU_MEM, X86_ALU_OR, 4, 4, 0, false, false, 0, 0, false, false, -1, 8, 8 },
	{ "lock orl $0x10,0x80(%ebx)", M32, B(0xf0, 0x83, 0x4b, 0x80, 0x10), OK, X86_OP_ALU_MEM, X86_ALU_OR, 4, 4, 0, false, true, 0x10, 0, true, false, -1, 4, 5 },
	{ "lock andl $0xffffff0f,(%eax) (81)", M32, B(0xf0, 0x81, 0x20, 0x0f, 0xff, 0xff, 0xff), OK, X86_OP_ALU_MEM, X86_ALU_AND, 4, 4, 0, false, true, 0xffffff0f, 0, true, false, -1, 4, 7 },
	{ "addw $-2,(%eax) (83, 16-bit)", M32, B(0x66, 0x83, 0x00, 0xfe), OK, X86_OP_ALU_MEM, X86_ALU_ADD, 2, 2, 0, false, true, 0xfffe, 0, false, false, -1, 4, 4 },
	{ "lock subq $1,(%rax)", M64, B(0xf0, 0x48, 0x83, 0x28, 0x01), OK, X86_OP_ALU_MEM, X86_ALU_SUB, 8, 8, 0, false, true, 1, 0, true, false, -1, 8, 5 },
	{ "xorb $0xff,(%eax) (80)", M32, B(0x80, 0x30, 0xff), OK, X86_OP_ALU_MEM, X86_ALU_XOR, 1, 1, 0, false, true, 0xff, 0, false, false, -1, 4, 3 },
	{ "lock adc %ecx,(%eax)", M32, B(0xf0, 0x11, 0x08), OK, X86_OP_ALU_MEM, X86_ALU_ADC, 4, 4, 1, false, false, 0, 0, true, false, -1, 4, 3 },
	{ "sbb %bh,(%eax)", M32, B(0x18, 0x38), OK, X86_OP_ALU_MEM, X86_ALU_SBB, 1, 1, 3, true, false, 0, 0, false, false, -1, 4, 2 },
	{ "add (%eax),%edx (03)", M32, B(0x03, 0x10), OK, X86_OP_ALU_REG, X86_ALU_ADD, 4, 4, 2, false, false, 0, 0, false, false, -1, 4, 2 },
	{ "lock incl (%eax)", M32, B(0xf0, 0xff, 0x00), OK, X86_OP_ALU_MEM, X86_ALU_INC, 4, 4, 0, false, false, 0, 0, true, false, -1, 4, 3 },
	{ "decb (%eax)", M32, B(0xfe, 0x08), OK, X86_OP_ALU_MEM, X86_ALU_DEC, 1, 1, 0, false, false, 0, 0, false, false, -1, 4, 2 },
	{ "notl (%eax)", M32, B(0xf7, 0x10), OK, X86_OP_ALU_MEM, X86_ALU_NOT, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 2 },
	{ "lock negw (%eax)", M32, B(0xf0, 0x66, 0xf7, 0x18), OK, X86_OP_ALU_MEM, X86_ALU_NEG, 2, 2, 0, false, false, 0, 0, true, false, -1, 4, 4 },
	/* TEST and CMP reads */
	{ "testb $0x1,0xa0000", M32, B(0xf6, 0x05, 0x00, 0x00, 0x0a, 0x00, 0x01), OK, X86_OP_ALU_MEM, X86_ALU_TEST, 1, 1, 0, false, true, 1, 0, false, false, -1, 4, 7 },
	{ "testl $0x1000,(%eax)", M32, B(0xf7, 0x00, 0x00, 0x10, 0x00, 0x00), OK, X86_OP_ALU_MEM, X86_ALU_TEST, 4, 4, 0, false, true, 0x1000, 0, false, false, -1, 4, 6 },
	{ "test %edx,(%eax)", M32, B(0x85, 0x10), OK, X86_OP_ALU_MEM, X86_ALU_TEST, 4, 4, 2, false, false, 0, 0, false, false, -1, 4, 2 },
	{ "cmpl $0x30,(%eax)", M32, B(0x83, 0x38, 0x30), OK, X86_OP_ALU_MEM, X86_ALU_CMP, 4, 4, 0, false, true, 0x30, 0, false, false, -1, 4, 3 },
	{ "cmp (%eax),%ecx (3B)", M32, B(0x3b, 0x08), OK, X86_OP_ALU_REG, X86_ALU_CMP, 4, 4, 1, false, false, 0, 0, false, false, -1, 4, 2 },
	/* XCHG, CMPXCHG, XADD */
	{ "xchg %eax,(%ebx)", M32, B(0x87, 0x03), OK, X86_OP_XCHG, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 2 },
	{ "lock cmpxchg %ecx,(%ebx)", M32, B(0xf0, 0x0f, 0xb1, 0x0b), OK, X86_OP_CMPXCHG, NA, 4, 4, 1, false, false, 0, 0, true, false, -1, 4, 4 },
	{ "lock cmpxchg %r10b,(%rbx)", M64, B(0xf0, 0x44, 0x0f, 0xb0, 0x13), OK, X86_OP_CMPXCHG, NA, 1, 1, 10, false, false, 0, 0, true, false, -1, 8, 5 },
	{ "lock xadd %edx,(%eax)", M32, B(0xf0, 0x0f, 0xc1, 0x10), OK, X86_OP_XADD, NA, 4, 4, 2, false, false, 0, 0, true, false, -1, 4, 4 },
	/* String instructions */
	{ "rep stos %eax,%es:(%edi)", M32, B(0xf3, 0xab), OK, X86_OP_STOS, NA, 4, 4, 0, false, false, 0, 0, false, true, -1, 4, 2 },
	{ "rep stosb (addr16)", M32, B(0x67, 0xf3, 0xaa), OK, X86_OP_STOS, NA, 1, 1, 0, false, false, 0, 0, false, true, -1, 2, 3 },
	{ "rep movsl %fs:(%esi),%es:(%edi)", M32, B(0xf3, 0x64, 0xa5), OK, X86_OP_MOVS, NA, 4, 4, 0, false, false, 0, 0, false, true, X86_SEG_FS, 4, 3 },
	{ "rep movsq (64-bit)", M64, B(0xf3, 0x48, 0xa5), OK, X86_OP_MOVS, NA, 8, 8, 0, false, false, 0, 0, false, true, -1, 8, 3 },
	{ "movsw (16-bit)", M16, B(0xa5), OK, X86_OP_MOVS, NA, 2, 2, 0, false, false, 0, 0, false, false, -1, 2, 1 },
	{ "lodsb %ds:(%esi)", M32, B(0x3e, 0xac), OK, X86_OP_LODS, NA, 1, 1, 0, false, false, 0, 0, false, false, X86_SEG_DS, 4, 2 },
	{ "%ds: override ignored in 64-bit mode", M64, B(0x3e, 0xac), OK, X86_OP_LODS, NA, 1, 1, 0, false, false, 0, 0, false, false, -1, 8, 2 },
	/* Hardware's #UD: LOCK where it is not allowed */
	{ "lock mov %eax,(%ebx)", M32, B(0xf0, 0x89, 0x03), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock cmpl $1,(%eax)", M32, B(0xf0, 0x83, 0x38, 0x01), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock test %eax,(%eax)", M32, B(0xf0, 0x85, 0x00), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock add (%eax),%eax (reg destination)", M32, B(0xf0, 0x03, 0x00), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock stosl", M32, B(0xf0, 0xab), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock or %eax,%ebx (register operand)", M32, B(0xf0, 0x09, 0xc3), X86_DECODE_UD, .op = X86_OP_NONE },
	/* Not emulated, or no memory operand */
	{ "mov %eax,%ebx", M32, B(0x89, 0xc3), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "call *(%eax)", M32, B(0xff, 0x10), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "ljmp *(%rax)", M64, B(0xff, 0x28), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "0F BA /0 is reserved", M32, B(0x0f, 0xba, 0x00, 0x01), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "crc32 (0F 38 F0 with F2) is not MOVBE", M32, B(0xf2, 0x0f, 0x38, 0xf0, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "tzcnt (F3 0F BC) is not BSF", M32, B(0xf3, 0x0f, 0xbc, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "str (%eax) (0F 00 /1)", M32, B(0x0f, 0x00, 0x08), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "fldl (%eax): x87", M32, B(0xdd, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "lock bt %eax,(%ebx)", M32, B(0xf0, 0x0f, 0xa3, 0x03), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock shll (%eax)", M32, B(0xf0, 0xd1, 0x20), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock mull (%eax)", M32, B(0xf0, 0xf7, 0x20), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "lock pushl (%eax)", M32, B(0xf0, 0xff, 0x30), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "movq (%eax),%mm0 (MMX)", M32, B(0x0f, 0x6f, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "vmovdqu (%eax),%xmm0 (VEX)", M32, B(0xc5, 0xfa, 0x6f, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "lock movups (%eax),%xmm0", M32, B(0xf0, 0x0f, 0x10, 0x00), X86_DECODE_UD, .op = X86_OP_NONE },
	{ "popcnt (%eax),%eax (F3 0F B8)", M32, B(0xf3, 0x0f, 0xb8, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "F3 0F B6 is not MOVZX", M32, B(0xf3, 0x0f, 0xb6, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "arpl outside 64-bit mode", M32, B(0x63, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "repe cmpsb", M32, B(0xf3, 0xa6), OK, X86_OP_CMPS, NA, 1, 1, 0, false, false, 0, 0, false, true, -1, 4, 2 },
	{ "repne scasl", M32, B(0xf2, 0xaf), OK, X86_OP_SCAS, NA, 4, 4, 0, false, false, 0, 0, false, false, -1, 4, 2 },
	{ "lock cmpsb", M32, B(0xf0, 0xa6), X86_DECODE_UD, .op = X86_OP_NONE },
	/* Cut short */
	{ "mov disp32 cut", M32, B(0x8b, 0x05, 0x80, 0x00), X86_DECODE_SHORT, .op = X86_OP_NONE },
	{ "prefixes only", M32, B(0x66, 0x67), X86_DECODE_SHORT, .op = X86_OP_NONE },
	{ "imm cut", M32, B(0xc7, 0x00, 0x01, 0x02), X86_DECODE_SHORT, .op = X86_OP_NONE },
};

static void test_decode_table(void **state)
{
	(void)state;
	for (size_t n = 0; n < ARRAY_SIZE(cases); n++) {
		const struct decode_case *c = &cases[n];
		struct x86_insn insn;
		enum x86_decode_result r = x86_decode(c->bytes, c->nbytes, c->mode, &insn);

		print_message("  %s\n", c->text);
		assert_int_equal(r, c->result);
		if (r != X86_DECODE_OK)
			continue;
		assert_int_equal(insn.op, c->op);
		assert_int_equal(insn.alu, c->alu);
		assert_int_equal(insn.size, c->size);
		assert_int_equal(insn.reg_size, c->reg_size);
		assert_int_equal(insn.reg, c->reg);
		assert_int_equal(insn.high_byte, c->high_byte);
		assert_int_equal(insn.has_imm, c->has_imm);
		if (c->has_imm)
			assert_int_equal(insn.imm, c->imm);
		assert_int_equal(insn.ext, c->ext);
		assert_int_equal(insn.lock, c->lock);
		assert_int_equal(insn.rep, c->rep);
		assert_int_equal(insn.seg_override, c->seg);
		assert_int_equal(insn.addr_size, c->addr_size);
		assert_int_equal(insn.len, c->len);
	}
}

/* The forms beyond the ALU ones: the family member, the count's source, MOVBE's swap. */
struct decode_case2 {
	const char *text;
	enum x86_mode mode;
	uint8_t bytes[X86_INSN_MAX];
	unsigned int nbytes;
	enum x86_op op;
	unsigned int sub, size, reg_size, reg;
	bool has_imm;
	uint64_t imm;
	bool count_cl, bswap, lock;
	unsigned int len;
};

static const struct decode_case2 cases2[] = {
	{ "btl %ecx,(%eax)", M32, B(0x0f, 0xa3, 0x08), X86_OP_BT, 0, 4, 4, 1, false, 0, false, false, false, 3 },
	{ "lock btsq %rdx,(%rax)", M64, B(0xf0, 0x48, 0x0f, 0xab, 0x10), X86_OP_BT, 1, 8, 8, 2, false, 0, false, false, true, 5 },
	{ "btrw %ax,(%eax)", M32, B(0x66, 0x0f, 0xb3, 0x00), X86_OP_BT, 2, 2, 2, 0, false, 0, false, false, false, 4 },
	{ "btcl $32,(%eax) (imm8 not sign-extended)", M32, B(0x0f, 0xba, 0x38, 0x20), X86_OP_BT, 3, 4, 4, 0, true, 0x20, false, false, false, 4 },
	{ "btl $0x80,(%eax)", M32, B(0x0f, 0xba, 0x20, 0x80), X86_OP_BT, 0, 4, 4, 0, true, 0x80, false, false, false, 4 },
	{ "roll (%eax) (D1: by 1)", M32, B(0xd1, 0x00), X86_OP_SHIFT, 0, 4, 4, 0, true, 1, false, false, false, 2 },
	{ "rcrb %cl,(%eax)", M32, B(0xd2, 0x18), X86_OP_SHIFT, 3, 1, 1, 0, false, 0, true, false, false, 2 },
	{ "shlq $0x3f,(%rax)", M64, B(0x48, 0xc1, 0x20, 0x3f), X86_OP_SHIFT, 4, 8, 8, 0, true, 0x3f, false, false, false, 4 },
	{ "sarw $0xff,(%eax) (imm8 0xff)", M32, B(0x66, 0xc1, 0x38, 0xff), X86_OP_SHIFT, 7, 2, 2, 0, true, 0xff, false, false, false, 4 },
	{ "shld $3,%edx,(%eax)", M32, B(0x0f, 0xa4, 0x10, 0x03), X86_OP_SHIFTD, 0, 4, 4, 2, true, 3, false, false, false, 4 },
	{ "shrd %cl,%ebx,(%eax)", M32, B(0x0f, 0xad, 0x18), X86_OP_SHIFTD, 1, 4, 4, 3, false, 0, true, false, false, 3 },
	{ "mulb (%eax)", M32, B(0xf6, 0x20), X86_OP_MULDIV, 0, 1, 1, 0, false, 0, false, false, false, 2 },
	{ "imull (%eax)", M32, B(0xf7, 0x28), X86_OP_MULDIV, 1, 4, 4, 0, false, 0, false, false, false, 2 },
	{ "divq (%rax)", M64, B(0x48, 0xf7, 0x30), X86_OP_MULDIV, 2, 8, 8, 0, false, 0, false, false, false, 3 },
	{ "idivw (%eax)", M32, B(0x66, 0xf7, 0x38), X86_OP_MULDIV, 3, 2, 2, 0, false, 0, false, false, false, 3 },
	{ "imul (%eax),%edx", M32, B(0x0f, 0xaf, 0x10), X86_OP_IMUL, 0, 4, 4, 2, false, 0, false, false, false, 3 },
	{ "imul $-3,(%eax),%ecx (6B)", M32, B(0x6b, 0x08, 0xfd), X86_OP_IMUL, 0, 4, 4, 1, true, 0xfffffffd, false, false, false, 3 },
	{ "imul $0x137,(%eax),%ax (69, 16-bit)", M32, B(0x66, 0x69, 0x00, 0x37, 0x01), X86_OP_IMUL, 0, 2, 2, 0, true, 0x137, false, false, false, 5 },
	{ "bsf (%eax),%ecx", M32, B(0x0f, 0xbc, 0x08), X86_OP_BITSCAN, 0, 4, 4, 1, false, 0, false, false, false, 3 },
	{ "bsr (%rax),%r9", M64, B(0x4c, 0x0f, 0xbd, 0x08), X86_OP_BITSCAN, 1, 8, 8, 9, false, 0, false, false, false, 4 },
	{ "cmovne (%eax),%edx", M32, B(0x0f, 0x45, 0x10), X86_OP_CMOV, 5, 4, 4, 2, false, 0, false, false, false, 3 },
	{ "setg (%eax)", M32, B(0x0f, 0x9f, 0x00), X86_OP_SETCC, 15, 1, 1, 0, false, 0, false, false, false, 3 },
	{ "smsw (%rax) (REX.W: still a word)", M64, B(0x48, 0x0f, 0x01, 0x20), X86_OP_SMSW, 0, 2, 2, 0, false, 0, false, false, false, 4 },
	{ "pushl (%eax)", M32, B(0xff, 0x30), X86_OP_PUSH, 0, 4, 4, 0, false, 0, false, false, false, 2 },
	{ "pushq (%rax) (64-bit default)", M64, B(0xff, 0x30), X86_OP_PUSH, 0, 8, 8, 0, false, 0, false, false, false, 2 },
	{ "pushw (%rax) (66)", M64, B(0x66, 0xff, 0x30), X86_OP_PUSH, 0, 2, 2, 0, false, 0, false, false, false, 3 },
	{ "popq (%rax)", M64, B(0x8f, 0x00), X86_OP_POP, 0, 8, 8, 0, false, 0, false, false, false, 2 },
	{ "popw (%bx) (16-bit)", M16, B(0x8f, 0x07), X86_OP_POP, 0, 2, 2, 0, false, 0, false, false, false, 2 },
	{ "lock cmpxchg8b (%eax)", M32, B(0xf0, 0x0f, 0xc7, 0x08), X86_OP_CMPXCHG8B, 0, 8, 8, 0, false, 0, false, false, true, 4 },
	{ "cmpxchg16b (%rax)", M64, B(0x48, 0x0f, 0xc7, 0x08), X86_OP_CMPXCHG8B, 0, 16, 16, 0, false, 0, false, false, false, 4 },
	{ "movbe (%eax),%ecx", M32, B(0x0f, 0x38, 0xf0, 0x08), X86_OP_LOAD, 0, 4, 4, 1, false, 0, false, true, false, 4 },
	{ "movbe %dx,(%eax)", M32, B(0x66, 0x0f, 0x38, 0xf1, 0x10), X86_OP_STORE, 0, 2, 2, 2, false, 0, false, true, false, 5 },
	{ "movups (%eax),%xmm1", M32, B(0x0f, 0x10, 0x08), X86_OP_SSE_LOAD, 0, 16, 16, 1, false, 0, false, false, false, 3 },
	{ "movupd %xmm2,(%eax)", M32, B(0x66, 0x0f, 0x11, 0x10), X86_OP_SSE_STORE, 0, 16, 16, 2, false, 0, false, false, false, 4 },
	{ "movss (%eax),%xmm0", M32, B(0xf3, 0x0f, 0x10, 0x00), X86_OP_SSE_LOAD, 0, 4, 16, 0, false, 0, false, false, false, 4 },
	{ "movsd %xmm3,(%eax)", M32, B(0xf2, 0x0f, 0x11, 0x18), X86_OP_SSE_STORE, 0, 8, 16, 3, false, 0, false, false, false, 4 },
	{ "movaps (%rax),%xmm9", M64, B(0x44, 0x0f, 0x28, 0x08), X86_OP_SSE_LOAD, 0, 16, 16, 9, false, 0, false, false, false, 4 },
	{ "movapd %xmm1,(%eax)", M32, B(0x66, 0x0f, 0x29, 0x08), X86_OP_SSE_STORE, 0, 16, 16, 1, false, 0, false, false, false, 4 },
	{ "movdqa (%eax),%xmm0", M32, B(0x66, 0x0f, 0x6f, 0x00), X86_OP_SSE_LOAD, 0, 16, 16, 0, false, 0, false, false, false, 4 },
	{ "movdqu %xmm1,(%rbx)", M64, B(0xf3, 0x0f, 0x7f, 0x0b), X86_OP_SSE_STORE, 0, 16, 16, 1, false, 0, false, false, false, 4 },
	{ "movd (%eax),%xmm2", M32, B(0x66, 0x0f, 0x6e, 0x10), X86_OP_SSE_LOAD, 0, 4, 16, 2, false, 0, false, false, false, 4 },
	{ "movq %xmm2,(%rax) (66 REX.W 0F 7E)", M64, B(0x66, 0x48, 0x0f, 0x7e, 0x10), X86_OP_SSE_STORE, 0, 8, 16, 2, false, 0, false, false, false, 5 },
	{ "movq (%eax),%xmm1 (F3 0F 7E)", M32, B(0xf3, 0x0f, 0x7e, 0x08), X86_OP_SSE_LOAD, 0, 8, 16, 1, false, 0, false, false, false, 4 },
	{ "movq %xmm1,(%eax) (66 0F D6)", M32, B(0x66, 0x0f, 0xd6, 0x08), X86_OP_SSE_STORE, 0, 8, 16, 1, false, 0, false, false, false, 4 },
	{ "movntdq %xmm0,(%eax)", M32, B(0x66, 0x0f, 0xe7, 0x00), X86_OP_SSE_STORE, 0, 16, 16, 0, false, 0, false, false, false, 4 },
	{ "ltr 0x1000(%r12)", M64, B(0x41, 0x0f, 0x00, 0x9c, 0x24, 0x00, 0x10, 0x00, 0x00), X86_OP_LOAD_SYSSEL, 3, 2, 2, 0, false, 0, false, false, false, 9 },
	{ "lldt (%eax)", M32, B(0x0f, 0x00, 0x10), X86_OP_LOAD_SYSSEL, 2, 2, 2, 0, false, 0, false, false, false, 3 },
	{ "lock incl (%eax) still (FF /0)", M32, B(0xf0, 0xff, 0x00), X86_OP_ALU_MEM, 0, 4, 4, 0, false, 0, false, false, true, 3 },
};

static void test_decode_table2(void **state)
{
	(void)state;
	for (size_t n = 0; n < ARRAY_SIZE(cases2); n++) {
		const struct decode_case2 *c = &cases2[n];
		struct x86_insn insn;

		print_message("  %s\n", c->text);
		assert_int_equal(x86_decode(c->bytes, c->nbytes, c->mode, &insn), X86_DECODE_OK);
		assert_int_equal(insn.op, c->op);
		if (c->op != X86_OP_ALU_MEM)
			assert_int_equal(insn.sub, c->sub);
		assert_int_equal(insn.size, c->size);
		assert_int_equal(insn.reg_size, c->reg_size);
		assert_int_equal(insn.reg, c->reg);
		assert_int_equal(insn.has_imm, c->has_imm);
		if (c->has_imm)
			assert_int_equal(insn.imm, c->imm);
		assert_int_equal(insn.count_cl, c->count_cl);
		assert_int_equal(insn.bswap, c->bswap);
		assert_int_equal(insn.lock, c->lock);
		assert_int_equal(insn.len, c->len);
		for (unsigned int k = 0; k < c->len; k++)
			assert_int_equal(x86_decode(c->bytes, k, c->mode, &insn), X86_DECODE_SHORT);
	}
}

/* The memory operand's effective address, in every ModRM form and mode. */
struct ea_case {
	const char *text;
	enum x86_mode mode;
	uint8_t bytes[X86_INSN_MAX];
	unsigned int nbytes;
	int base, index;
	unsigned int scale;
	int64_t disp;
	bool rip;
	enum x86_seg seg;
};

static const struct ea_case ea_cases[] = {
	{ "mov %eax,0x80(%ebx) (short path)", M32, B(0x89, 0x43, 0x80), 3, -1, 1, -128, false, X86_SEG_DS },
	{ "mov 0x1000(%ebp),%eax (short path, SS)", M32, B(0x8b, 0x85, 0x00, 0x10, 0, 0), 5, -1, 1, 0x1000, false, X86_SEG_SS },
	{ "or %eax,0x1000(%r12) (REX.B, SIB)", M64, B(0x41, 0x09, 0x84, 0x24, 0x00, 0x10, 0, 0), 12, -1, 1, 0x1000, false, X86_SEG_DS },
	{ "mov %r9,0x10(%rax,%rcx,8)", M64, B(0x4c, 0x89, 0x4c, 0xc8, 0x10), 0, 1, 8, 0x10, false, X86_SEG_DS },
	{ "mov (%rax,%r10,2),%eax (REX.X)", M64, B(0x42, 0x8b, 0x04, 0x50), 0, 10, 2, 0, false, X86_SEG_DS },
	{ "mov (%rsp),%eax (SS)", M64, B(0x8b, 0x04, 0x24), 4, -1, 1, 0, false, X86_SEG_SS },
	{ "mov (%r13),%eax (not SS)", M64, B(0x41, 0x8b, 0x45, 0x00), 13, -1, 1, 0, false, X86_SEG_DS },
	{ "mov 0x80(%rip),%eax", M64, B(0x8b, 0x05, 0x80, 0, 0, 0), -1, -1, 1, 0x80, true, X86_SEG_DS },
	{ "mov 0xfee00080,%ecx (disp32, 32-bit)", M32, B(0x8b, 0x0d, 0x80, 0x00, 0xe0, 0xfe), -1, -1, 1, (int32_t)0xfee00080, false, X86_SEG_DS },
	{ "mov (%ebp,%esi,1) disp32 SIB", M32, B(0x8b, 0x04, 0x35, 0, 0, 0xe0, 0xfe), -1, 6, 1, (int32_t)0xfee00000, false, X86_SEG_DS },
	{ "movw $1,-2(%bp,%di) (16-bit)", M16, B(0xc7, 0x43, 0xfe, 0x01, 0x00), 5, 7, 1, -2, false, X86_SEG_SS },
	{ "movb $0x5a,0x80(%bx) (16-bit)", M16, B(0xc6, 0x87, 0x80, 0x00, 0x5a), 3, -1, 1, 0x80, false, X86_SEG_DS },
	{ "mov 0x1234,%ax (16-bit disp16)", M16, B(0x8b, 0x06, 0x34, 0x12), -1, -1, 1, 0x1234, false, X86_SEG_DS },
	{ "mov %eax,0xfee00080 (moffs)", M32, B(0xa3, 0x80, 0x00, 0xe0, 0xfe), -1, -1, 1, 0xfee00080, false, X86_SEG_DS },
	{ "btl $1,8(%esp) (imm after SIB)", M32, B(0x0f, 0xba, 0x64, 0x24, 0x08, 0x01), 4, -1, 1, 8, false, X86_SEG_SS },
};

static void test_decode_ea(void **state)
{
	(void)state;
	for (size_t n = 0; n < ARRAY_SIZE(ea_cases); n++) {
		const struct ea_case *c = &ea_cases[n];
		struct x86_insn insn;

		print_message("  %s\n", c->text);
		assert_int_equal(x86_decode(c->bytes, c->nbytes, c->mode, &insn), X86_DECODE_OK);
		assert_int_equal(insn.ea_base, c->base);
		assert_int_equal(insn.ea_index, c->index);
		assert_int_equal(insn.ea_scale, c->scale);
		assert_int_equal(insn.ea_disp, c->disp);
		assert_int_equal(insn.ea_rip, c->rip);
		assert_int_equal(insn.ea_seg, c->seg);
	}
}

/* Every prefix of a longer instruction is too short, never a different instruction. */
static void test_decode_truncated(void **state)
{
	(void)state;
	for (size_t n = 0; n < ARRAY_SIZE(cases); n++) {
		const struct decode_case *c = &cases[n];
		struct x86_insn insn;

		if (c->result != X86_DECODE_OK)
			continue;
		for (unsigned int k = 0; k < c->len; k++)
			assert_int_equal(x86_decode(c->bytes, k, c->mode, &insn), X86_DECODE_SHORT);
	}
}

/* Fifteen bytes is the limit: sixteen prefixes never make an instruction. */
static void test_decode_length_limit(void **state)
{
	uint8_t b[20];
	struct x86_insn insn;

	(void)state;
	for (unsigned int k = 0; k < sizeof(b); k++)
		b[k] = 0x66;
	b[15] = 0x89;
	b[16] = 0x00;
	assert_int_equal(x86_decode(b, sizeof(b), M32, &insn), X86_DECODE_SHORT);
	b[13] = 0x89;
	b[14] = 0x00;
	assert_int_equal(x86_decode(b, sizeof(b), M32, &insn), X86_DECODE_OK);
	assert_int_equal(insn.len, 15);
}

/*
 * The bytes are the guest's: any of them decode without reading past
 * @avail (ASan watches the exact-size copy), to a length within it, and
 * an operation whose sizes are the architecture's.  A xorshift stream,
 * seeded, over a million instructions in the three modes.
 */
static void test_decode_random_bytes(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned int ok = 0;

	(void)state;
	for (unsigned int n = 0; n < 1000000; n++) {
		uint8_t buf[X86_INSN_MAX], *copy;
		unsigned int avail;
		struct x86_insn insn;
		enum x86_decode_result r;

		for (unsigned int k = 0; k < sizeof(buf); k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Prefixes and the opcodes decoded here, more often than chance gives them. */
			buf[k] = (x & 0x300) ? (uint8_t)x : (uint8_t)"\x66\x67\xf0\xf3\x48\x0f\x89\x81"[x >> 61];
		}
		avail = 1 + (unsigned int)(x % X86_INSN_MAX);
		copy = malloc(avail);
		assert_non_null(copy);
		memcpy(copy, buf, avail);
		r = x86_decode(copy, avail, (enum x86_mode)(n % 3), &insn);
		free(copy);
		if (r != X86_DECODE_OK)
			continue;
		ok++;
		assert_true(insn.len >= 1 && insn.len <= avail);
		assert_true(insn.size == 1 || insn.size == 2 || insn.size == 4 || insn.size == 8 ||
			    (insn.size == 16 && (insn.op == X86_OP_CMPXCHG8B ||
						 insn.op == X86_OP_SSE_LOAD ||
						 insn.op == X86_OP_SSE_STORE)));
		assert_true(insn.reg_size >= insn.size || insn.op == X86_OP_LOAD);
		assert_true(insn.reg < 16);
		assert_true(insn.addr_size == 2 || insn.addr_size == 4 || insn.addr_size == 8);
		assert_true(insn.op != X86_OP_NONE);
		if (n % 3 != X86_MODE_64)
			assert_true(insn.reg < 8 && (insn.size < 8 || insn.op == X86_OP_CMPXCHG8B ||
						     insn.op == X86_OP_SSE_LOAD ||
						     insn.op == X86_OP_SSE_STORE) &&
				    insn.addr_size < 8);
	}
	print_message("  %u of 1000000 decoded\n", ok);
	assert_true(ok > 10000);
}

/*
 * x86_decode_store32(), mmio.c's fast path for an xAPIC register write:
 * its forms, with their lengths and sources, and what it leaves to
 * x86_decode().
 */
struct store32_case {
	const char *text;
	enum x86_mode mode;
	uint8_t bytes[X86_STORE32_BYTES];
	bool ok;
	unsigned int len, reg;
	bool has_imm;
	uint32_t imm;
};

static const struct store32_case store32_cases[] = {
	{ "mov %edx,(%eax)", M32, { 0x89, 0x10 }, true, 2, 2, false, 0 },
	{ "mov %esi,(%rdi)", M64, { 0x89, 0x37 }, true, 2, 6, false, 0 },
	{ "mov %eax,0xb0(%ebx)", M32, { 0x89, 0x83, 0xb0, 0, 0, 0 }, true, 6, 0, false, 0 },
	{ "mov %ecx,-0x50(%ebp)", M32, { 0x89, 0x4d, 0xb0 }, true, 3, 1, false, 0 },
	{ "mov %eax,0xfee000b0 (disp32)", M32, { 0x89, 0x05, 0xb0, 0, 0xe0, 0xfe }, true, 6, 0, false, 0 },
	{ "mov %edi,0xffffffffff5fd0b0 (SIB, no base)", M64, { 0x89, 0x3c, 0x25, 0xb0, 0xd0, 0x5f, 0xff }, true, 7, 7, false, 0 },
	{ "mov %eax,(%rsp)", M64, { 0x89, 0x04, 0x24 }, true, 3, 0, false, 0 },
	{ "mov %eax,0x10(%rax,%rcx,4)", M64, { 0x89, 0x44, 0x88, 0x10 }, true, 4, 0, false, 0 },
	{ "mov %r9d,0xb0(%r12) (REX.RB)", M64, { 0x45, 0x89, 0x8c, 0x24, 0xb0, 0, 0, 0 }, true, 8, 9, false, 0 },
	{ "mov %eax,0x1000(%rip)", M64, { 0x89, 0x05, 0, 0x10, 0, 0 }, true, 6, 0, false, 0 },
	{ "movl $0,0xb0(%eax)", M32, { 0xc7, 0x80, 0xb0, 0, 0, 0, 0, 0, 0, 0 }, true, 10, 0, true, 0 },
	{ "movl $0x12345678,0xfee00300 (SIB, no base, imm)", M64, { 0x41, 0xc7, 0x04, 0x25, 0, 0x03, 0xe0, 0xfe, 0x78, 0x56, 0x34, 0x12 }, true, 12, 0, true, 0x12345678 },
	{ "movl $0xffffffff,(%eax)", M32, { 0xc7, 0x00, 0xff, 0xff, 0xff, 0xff }, true, 6, 0, true, 0xffffffff },
	/* Left to x86_decode(). */
	{ "mov %rax,(%rdi) (REX.W)", M64, { 0x48, 0x89, 0x07 }, false, 0, 0, false, 0 },
	{ "movw %ax,(%eax) (66)", M32, { 0x66, 0x89, 0x00 }, false, 0, 0, false, 0 },
	{ "mov %eax,%fs:(%eax)", M32, { 0x64, 0x89, 0x00 }, false, 0, 0, false, 0 },
	{ "mov %eax,(%si) (67)", M32, { 0x67, 0x89, 0x04 }, false, 0, 0, false, 0 },
	{ "mov %eax,(%bx,%si) (16-bit)", M16, { 0x89, 0x00 }, false, 0, 0, false, 0 },
	{ "inc %ecx; mov (32-bit: no REX)", M32, { 0x41, 0x89, 0x00 }, false, 0, 0, false, 0 },
	{ "two REX", M64, { 0x41, 0x41, 0x89, 0x00 }, false, 0, 0, false, 0 },
	{ "mov %eax,%ecx (mod 3)", M32, { 0x89, 0xc1 }, false, 0, 0, false, 0 },
	{ "C7 /1 is not MOV", M32, { 0xc7, 0x08, 0, 0, 0, 0 }, false, 0, 0, false, 0 },
	{ "mov (%eax),%edx (a load)", M32, { 0x8b, 0x10 }, false, 0, 0, false, 0 },
	{ "mov %dl,(%eax) (8-bit)", M32, { 0x88, 0x10 }, false, 0, 0, false, 0 },
	{ "lock or %eax,(%eax)", M32, { 0xf0, 0x09, 0x00 }, false, 0, 0, false, 0 },
};

/* What x86_decode() makes of a form x86_decode_store32() accepts: the same store. */
static void check_store32_agrees(const uint8_t *b, enum x86_mode mode, const struct x86_store32 *st)
{
	struct x86_insn insn;

	assert_int_equal(x86_decode(b, X86_INSN_MAX, mode, &insn), X86_DECODE_OK);
	assert_int_equal(insn.op, X86_OP_STORE);
	assert_int_equal(insn.size, 4);
	assert_int_equal(insn.len, st->len);
	assert_int_equal(insn.has_imm, st->has_imm);
	if (st->has_imm)
		assert_int_equal((uint32_t)insn.imm, st->imm);
	else
		assert_int_equal(insn.reg, st->reg);
	assert_false(insn.lock || insn.rep || insn.repne || insn.high_byte);
	assert_int_equal(insn.seg_override, -1);
	assert_int_equal(insn.addr_size, mode == X86_MODE_64 ? 8 : 4);
}

static void test_store32_table(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(store32_cases); i++) {
		const struct store32_case *c = &store32_cases[i];
		struct x86_store32 st;
		bool ok = x86_decode_store32(c->bytes, c->mode, &st);

		print_message("  %s\n", c->text);
		assert_int_equal(ok, c->ok);
		if (!ok)
			continue;
		assert_int_equal(st.len, c->len);
		assert_int_equal(st.has_imm, c->has_imm);
		if (c->has_imm)
			assert_int_equal(st.imm, c->imm);
		else
			assert_int_equal(st.reg, c->reg);
		check_store32_agrees(c->bytes, c->mode, &st);
	}
}

/* Random bytes, biased to its forms: whatever it accepts, x86_decode() decodes alike. */
static void test_store32_random_bytes(void **state)
{
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned int ok = 0;

	(void)state;
	for (unsigned int n = 0; n < 1000000; n++) {
		uint8_t buf[X86_STORE32_BYTES];
		struct x86_store32 st;

		for (unsigned int k = 0; k < sizeof(buf); k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[k] = (x & 0x300) ? (uint8_t)x : (uint8_t)"\x89\xc7\x41\x48\x66\x04\x25\x44"[x >> 61];
		}
		if (!x86_decode_store32(buf, (enum x86_mode)(n % 3), &st))
			continue;
		ok++;
		assert_true(st.len >= 2 && st.len <= 12);
		check_store32_agrees(buf, (enum x86_mode)(n % 3), &st);
	}
	print_message("  %u of 1000000 accepted\n", ok);
	assert_true(ok > 1000);
}

static void test_reads_writes(void **state)
{
	struct x86_insn insn;
	static const uint8_t cmp[] = { 0x83, 0x38, 0x30 }, or[] = { 0x09, 0x00 },
		stos[] = { 0xab }, mov_ld[] = { 0x8b, 0x00 }, xchg[] = { 0x87, 0x00 };

	(void)state;
	assert_int_equal(x86_decode(cmp, sizeof(cmp), M32, &insn), OK);
	assert_true(x86_insn_reads(&insn));
	assert_false(x86_insn_writes(&insn));
	assert_int_equal(x86_decode(or, sizeof(or), M32, &insn), OK);
	assert_true(x86_insn_reads(&insn));
	assert_true(x86_insn_writes(&insn));
	assert_int_equal(x86_decode(stos, sizeof(stos), M32, &insn), OK);
	assert_false(x86_insn_reads(&insn));
	assert_true(x86_insn_writes(&insn));
	assert_int_equal(x86_decode(mov_ld, sizeof(mov_ld), M32, &insn), OK);
	assert_true(x86_insn_reads(&insn));
	assert_false(x86_insn_writes(&insn));
	assert_int_equal(x86_decode(xchg, sizeof(xchg), M32, &insn), OK);
	assert_true(x86_insn_reads(&insn));
	assert_true(x86_insn_writes(&insn));
}

/* --- x86_alu() against the host CPU ------------------------------------------- */

#define HOST_FLAGS	0x8d5ull

/* The host's result and flags for @alu on @size bytes, CF in from @cf. */
static uint64_t host_alu(enum x86_alu alu, unsigned int size, uint64_t dst, uint64_t src,
			 bool cf, uint64_t *flags)
{
	uint64_t f = cf ? 1 : 0;

#define HOST_OP(insn, sfx, reg)							\
	asm volatile("push %[f]; popf; " insn sfx " %" reg "[s], %" reg "[d]; pushf; pop %[f]" \
		     : [d] "+r"(dst), [f] "+r"(f) : [s] "r"(src) : "cc")
#define HOST_SIZED(insn)							\
	do {									\
		if (size == 1) HOST_OP(insn, "b", "b");				\
		else if (size == 2) HOST_OP(insn, "w", "w");			\
		else if (size == 4) HOST_OP(insn, "l", "k");			\
		else HOST_OP(insn, "q", "q");					\
	} while (0)
#define HOST_OP1(insn, sfx, reg)						\
	asm volatile("push %[f]; popf; " insn sfx " %" reg "[d]; pushf; pop %[f]" \
		     : [d] "+r"(dst), [f] "+r"(f) : : "cc")
#define HOST_SIZED1(insn)							\
	do {									\
		if (size == 1) HOST_OP1(insn, "b", "b");			\
		else if (size == 2) HOST_OP1(insn, "w", "w");			\
		else if (size == 4) HOST_OP1(insn, "l", "k");			\
		else HOST_OP1(insn, "q", "q");					\
	} while (0)
	switch (alu) {
	case X86_ALU_ADD: HOST_SIZED("add"); break;
	case X86_ALU_OR: HOST_SIZED("or"); break;
	case X86_ALU_ADC: HOST_SIZED("adc"); break;
	case X86_ALU_SBB: HOST_SIZED("sbb"); break;
	case X86_ALU_AND: HOST_SIZED("and"); break;
	case X86_ALU_SUB: HOST_SIZED("sub"); break;
	case X86_ALU_XOR: HOST_SIZED("xor"); break;
	case X86_ALU_CMP: HOST_SIZED("cmp"); break;
	case X86_ALU_TEST: HOST_SIZED("test"); break;
	case X86_ALU_INC: HOST_SIZED1("inc"); break;
	case X86_ALU_DEC: HOST_SIZED1("dec"); break;
	case X86_ALU_NOT: HOST_SIZED1("not"); break;
	case X86_ALU_NEG: HOST_SIZED1("neg"); break;
	default: break;
	}
	*flags = f & HOST_FLAGS;
	return size == 8 ? dst : dst & ((1ull << (8 * size)) - 1);
}

static void test_alu_against_host(void **state)
{
	static const uint64_t values[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x0f0f0f0f,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
		0x8000000000000000ull, 0xffffffffffffffffull, 0x123456789abcdef0ull,
	};
	static const unsigned int sizes[] = { 1, 2, 4, 8 };
	unsigned int checked = 0;

	(void)state;
	for (int alu = X86_ALU_ADD; alu <= X86_ALU_NEG; alu++)
		for (size_t s = 0; s < 4; s++)
			for (size_t i = 0; i < ARRAY_SIZE(values); i++)
				for (size_t j = 0; j < ARRAY_SIZE(values); j++)
					for (int cf = 0; cf < 2; cf++) {
			unsigned int size = sizes[s];
			uint64_t mask = size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
			uint64_t hf, ef = cf ? 1 : 0, hr, er;
			/* AF is undefined after the logical ones; Bochs and exitplan clear it. */
			uint64_t care = (alu == X86_ALU_OR || alu == X86_ALU_AND || alu == X86_ALU_XOR ||
					 alu == X86_ALU_TEST) ? HOST_FLAGS & ~0x10ull : HOST_FLAGS;

			hr = host_alu((enum x86_alu)alu, size, values[i], values[j], cf, &hf);
			er = x86_alu((enum x86_alu)alu, size, values[i], values[j], &ef);
			if (alu == X86_ALU_CMP || alu == X86_ALU_TEST)
				hr = values[i] & mask;	/* the host left dst; the emulation returns the result */
			else
				assert_int_equal(er, hr);
			if ((ef & care) != (hf & care))
				fail_msg("alu %d size %u %#llx, %#llx cf %d: flags %#llx, host %#llx", alu,
					 size, (unsigned long long)values[i],
					 (unsigned long long)values[j], cf,
					 (unsigned long long)ef, (unsigned long long)hf);
			assert_int_equal(ef & ~HOST_FLAGS, 0);
			checked++;
		}
	print_message("  %u operations match the host CPU\n", checked);
}

/* Bits outside the arithmetic flags are never touched. */
static void test_alu_keeps_other_flags(void **state)
{
	uint64_t f = 0x246 | 0x400 | 0x200;	/* IF, DF, ZF, PF, bit 1 */

	(void)state;
	assert_int_equal(x86_alu(X86_ALU_OR, 4, 0x10, 0x20, &f), 0x30);
	assert_int_equal(f & ~X86_FLAGS_ARITH, (0x246 | 0x400 | 0x200) & ~X86_FLAGS_ARITH);
	f = 0x2;
	assert_int_equal(x86_alu(X86_ALU_NOT, 4, 0x0f, 0, &f), 0xfffffff0);
	assert_int_equal(f, 0x2);
}

/* --- the other operations against the host CPU -------------------------------- */

#define F_CF 0x001ull
#define F_PF 0x004ull
#define F_AF 0x010ull
#define F_ZF 0x040ull
#define F_SF 0x080ull
#define F_OF 0x800ull

static const uint64_t op_values[] = {
	0, 1, 2, 3, 0x7f, 0x80, 0x81, 0xff, 0x100, 0x7fff, 0x8000, 0x8001, 0xffff, 0x12345678,
	0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ull, 0x7fffffffffffffffull,
	0x8000000000000000ull, 0xffffffffffffffffull, 0x123456789abcdef0ull, 0xfedcba9876543210ull,
};
static const unsigned int op_sizes[] = { 1, 2, 4, 8 };

static uint64_t szmask(unsigned int size)
{
	return size == 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

/* The host's flags and result of `insn %cl, dst` (a shift or rotate) on @size bytes. */
static uint64_t host_shift(unsigned int kind, unsigned int size, uint64_t dst, uint8_t count,
			   uint64_t *flags)
{
	uint64_t f = *flags;

#define HSH(insn, sfx, reg)							\
	asm volatile("push %[f]; popf; " insn sfx " %%cl, %" reg "[d]; pushf; pop %[f]" \
		     : [d] "+r"(dst), [f] "+r"(f) : "c"(count) : "cc")
#define HSHS(insn)								\
	do {									\
		if (size == 1) HSH(insn, "b", "b");				\
		else if (size == 2) HSH(insn, "w", "w");			\
		else if (size == 4) HSH(insn, "l", "k");			\
		else HSH(insn, "q", "q");					\
	} while (0)
	switch (kind) {
	case 0: HSHS("rol"); break;
	case 1: HSHS("ror"); break;
	case 2: HSHS("rcl"); break;
	case 3: HSHS("rcr"); break;
	case 4: case 6: HSHS("shl"); break;
	case 5: HSHS("shr"); break;
	default: HSHS("sar"); break;
	}
	*flags = f;
	return dst & szmask(size);
}

/*
 * Results always; CF where the SDM defines it (a masked count not 0, and
 * for SHL, SHR within the operand); OF for a count of 1; SF, ZF, PF for
 * the shifts.  Untouched flags stay untouched for a count of 0.
 */
static void test_shift_against_host(void **state)
{
	unsigned int checked = 0;

	(void)state;
	for (unsigned int kind = 0; kind < 8; kind++)
		for (size_t si = 0; si < 4; si++)
			for (size_t i = 0; i < ARRAY_SIZE(op_values); i++)
				for (unsigned int count = 0; count < 70; count++)
					for (int cf = 0; cf < 2; cf++) {
			unsigned int size = op_sizes[si], bits = 8 * size;
			unsigned int mc = count & (size == 8 ? 63 : 31);
			uint64_t hf = 0x202 | (cf ? F_CF : 0), ef = hf, hr, er, care = 0;

			hr = host_shift(kind, size, op_values[i], (uint8_t)count, &hf);
			er = x86_shift(kind, size, op_values[i], count, &ef);
			assert_int_equal(er, hr);
			if (mc == 0)
				care = ~0ull;
			else if (kind < 4)
				care = F_CF | (mc == 1 ? F_OF : 0);
			else
				care = (mc <= bits ? F_CF : 0) | (mc == 1 ? F_OF : 0) | F_SF | F_ZF | F_PF;
			if (kind == 2 || kind == 3) {
				/* RCL/RCR of a byte or word rotate modulo 9 or 17: 0 changes nothing. */
				if (size < 4 && mc % (bits + 1) == 0)
					care = ~0ull & ~F_OF;	/* back where it was; OF undefined */
				else if (size < 4 && mc % (bits + 1) != 1)
					care &= ~F_OF;
			}
			if ((ef & care) != (hf & care))
				fail_msg("shift %u size %u %#llx by %u cf %d: flags %#llx, host %#llx", kind,
					 size, (unsigned long long)op_values[i], count, cf,
					 (unsigned long long)ef, (unsigned long long)hf);
			checked++;
		}
	print_message("  %u shifts match the host CPU\n", checked);
}

static uint64_t host_shiftd(bool right, unsigned int size, uint64_t dst, uint64_t src,
			    uint8_t count, uint64_t *flags)
{
	uint64_t f = *flags;

#define HSD(insn, sfx, reg)							\
	asm volatile("push %[f]; popf; " insn sfx " %%cl, %" reg "[s], %" reg "[d]; pushf; pop %[f]" \
		     : [d] "+r"(dst), [f] "+r"(f) : [s] "r"(src), "c"(count) : "cc")
	if (size == 2) { if (right) HSD("shrd", "w", "w"); else HSD("shld", "w", "w"); }
	else if (size == 4) { if (right) HSD("shrd", "l", "k"); else HSD("shld", "l", "k"); }
	else { if (right) HSD("shrd", "q", "q"); else HSD("shld", "q", "q"); }
	*flags = f;
	return dst & szmask(size);
}

static void test_shiftd_against_host(void **state)
{
	unsigned int checked = 0;

	(void)state;
	for (int right = 0; right < 2; right++)
		for (size_t si = 1; si < 4; si++)
			for (size_t i = 0; i < ARRAY_SIZE(op_values); i++)
				for (size_t j = 0; j < ARRAY_SIZE(op_values); j += 3)
					for (unsigned int count = 0; count < 66; count++) {
			unsigned int size = op_sizes[si], bits = 8 * size;
			unsigned int mc = count & (size == 8 ? 63 : 31);
			uint64_t hf = 0x202, ef = hf, hr, er, care;

			hr = host_shiftd(right, size, op_values[i], op_values[j], (uint8_t)count, &hf);
			er = x86_shiftd(right, size, op_values[i], op_values[j], count, &ef);
			if (mc > bits)
				continue;	/* undefined (a word by 17-31): Bochs's choice, not the host's */
			assert_int_equal(er, hr);
			care = mc == 0 ? ~0ull : F_CF | F_SF | F_ZF | F_PF | (mc == 1 ? F_OF : 0);
			if ((ef & care) != (hf & care))
				fail_msg("shiftd %d size %u %#llx %#llx by %u: flags %#llx, host %#llx",
					 right, size, (unsigned long long)op_values[i],
					 (unsigned long long)op_values[j], count, (unsigned long long)ef,
					 (unsigned long long)hf);
			checked++;
		}
	print_message("  %u double shifts match the host CPU\n", checked);
}

/* MUL, IMUL, DIV, IDIV: results, CF and OF of the multiplies, #DE where the host would fault. */
static void test_muldiv_against_host(void **state)
{
	unsigned int checked = 0, faults = 0;

	(void)state;
	for (unsigned int op = 0; op < 4; op++)
		for (size_t si = 0; si < 4; si++)
			for (size_t i = 0; i < ARRAY_SIZE(op_values); i++)
				for (size_t j = 0; j < ARRAY_SIZE(op_values); j++)
					for (size_t k = 0; k < ARRAY_SIZE(op_values); k += 4) {
			unsigned int size = op_sizes[si];
			uint64_t m = szmask(size), a = op_values[i] & m, d = op_values[k] & m;
			uint64_t s = op_values[j] & m, lo = a, hi = d, ef = 0x202, hf = 0x202;
			uint64_t ha, hd;
			bool ok = x86_muldiv(op, size, &lo, &hi, s, &ef);

			/* The fault condition, computed apart from the emulation. */
			if (op >= 2) {
				bool want_fault;

				if (size == 8) {
					unsigned __int128 n = (unsigned __int128)d << 64 | a;

					if (op == 2) {
						want_fault = !s || (n / s) >> 64;
					} else {
						__int128 sn = (__int128)n;
						int64_t sd = (int64_t)s;

						want_fault = !sd || (sn == (__int128)((unsigned __int128)1 << 127)) ||
							     sn / sd > INT64_MAX || sn / sd < INT64_MIN;
					}
				} else {
					unsigned int bits = 8 * size;
					uint64_t n = d << bits | a;

					if (op == 2) {
						want_fault = !s || n / s > m;
					} else {
						int64_t sn = (int64_t)(n << (64 - 2 * bits)) >> (64 - 2 * bits);
						int64_t sd = (int64_t)(s << (64 - bits)) >> (64 - bits);
						int64_t lim = (int64_t)1 << (bits - 1);

						want_fault = !sd || sn / sd >= lim || sn / sd < -lim;
					}
				}
				assert_int_equal(!ok, want_fault);
				if (!ok) {
					faults++;
					assert_int_equal(lo, a);
					assert_int_equal(hi, d);
					continue;
				}
			}
			assert_true(ok);
			ha = a;
			hd = d;
#define HMD(insn, sfx, reg)							\
	asm volatile("push %[f]; popf; " insn sfx " %" reg "[s]; pushf; pop %[f]" \
		     : "+a"(ha), "+d"(hd), [f] "+r"(hf) : [s] "r"(s) : "cc")
			if (size == 1) {
				ha = (d << 8) | a;
				switch (op) {
				case 0: HMD("mul", "b", "b"); break;
				case 1: HMD("imul", "b", "b"); break;
				case 2: HMD("div", "b", "b"); break;
				default: HMD("idiv", "b", "b"); break;
				}
				hd = (ha >> 8) & 0xff;
				ha &= 0xff;
			} else if (size == 2) {
				switch (op) {
				case 0: HMD("mul", "w", "w"); break;
				case 1: HMD("imul", "w", "w"); break;
				case 2: HMD("div", "w", "w"); break;
				default: HMD("idiv", "w", "w"); break;
				}
			} else if (size == 4) {
				switch (op) {
				case 0: HMD("mul", "l", "k"); break;
				case 1: HMD("imul", "l", "k"); break;
				case 2: HMD("div", "l", "k"); break;
				default: HMD("idiv", "l", "k"); break;
				}
			} else {
				switch (op) {
				case 0: HMD("mul", "q", "q"); break;
				case 1: HMD("imul", "q", "q"); break;
				case 2: HMD("div", "q", "q"); break;
				default: HMD("idiv", "q", "q"); break;
				}
			}
			assert_int_equal(lo, ha & m);
			assert_int_equal(hi, hd & m);
			if (op < 2 && (ef & (F_CF | F_OF)) != (hf & (F_CF | F_OF)))
				fail_msg("mul %u size %u %#llx * %#llx: flags %#llx, host %#llx", op, size,
					 (unsigned long long)a, (unsigned long long)s,
					 (unsigned long long)ef, (unsigned long long)hf);
			if (op >= 2)
				assert_int_equal(ef, 0x202);	/* DIV, IDIV keep the flags (Bochs) */
			checked++;
		}
	print_message("  %u multiplies and divides match the host CPU, %u #DE\n", checked, faults);
	assert_true(faults > 100);
}

static void test_imul_bitop_bitscan_cond(void **state)
{
	unsigned int checked = 0;

	(void)state;
	for (size_t si = 1; si < 4; si++)
		for (size_t i = 0; i < ARRAY_SIZE(op_values); i++)
			for (size_t j = 0; j < ARRAY_SIZE(op_values); j++) {
		unsigned int size = op_sizes[si];
		uint64_t m = szmask(size), a = op_values[i] & m, b = op_values[j] & m;
		uint64_t ef = 0x202, hf = 0x202, hr = a, er, hidx = 0x5555, eidx = 0x5555;
		bool found;

		/* IMUL r, r/m: the truncated product, CF = OF. */
		er = x86_imul(size, a, b, &ef);
#define H2(insn, sfx, reg)							\
	asm volatile("push %[f]; popf; " insn sfx " %" reg "[s], %" reg "[d]; pushf; pop %[f]" \
		     : [d] "+r"(hr), [f] "+r"(hf) : [s] "r"(b) : "cc")
		if (size == 2) H2("imul", "w", "w"); else if (size == 4) H2("imul", "l", "k"); else H2("imul", "q", "q");
		assert_int_equal(er, hr & m);
		assert_int_equal(ef & (F_CF | F_OF), hf & (F_CF | F_OF));
		/* BT, BTS, BTR, BTC with a register offset (taken modulo the size). */
		for (unsigned int op = 0; op < 4; op++) {
			ef = hf = 0x202;
			hr = a;
			switch (op * 4 + (unsigned int)si) {
			case 1: H2("bt", "w", "w"); break;
			case 2: H2("bt", "l", "k"); break;
			case 3: H2("bt", "q", "q"); break;
			case 5: H2("bts", "w", "w"); break;
			case 6: H2("bts", "l", "k"); break;
			case 7: H2("bts", "q", "q"); break;
			case 9: H2("btr", "w", "w"); break;
			case 10: H2("btr", "l", "k"); break;
			case 11: H2("btr", "q", "q"); break;
			case 13: H2("btc", "w", "w"); break;
			case 14: H2("btc", "l", "k"); break;
			default: H2("btc", "q", "q"); break;
			}
			er = x86_bitop(op, size, a, b, &ef);
			assert_int_equal(er, hr & m);
			assert_int_equal(ef & F_CF, hf & F_CF);
			assert_int_equal(ef & ~F_CF, 0x202);	/* Bochs: CF alone */
		}
		/* BSF, BSR: the index and ZF; a zero source keeps the destination. */
		for (int rev = 0; rev < 2; rev++) {
			ef = hf = 0x202;
			hidx = eidx = 0x5555;
			hr = hidx;
			found = x86_bitscan(rev, size, a, &eidx, &ef);
#define HBS(insn, sfx, reg)							\
	asm volatile("push %[f]; popf; " insn sfx " %" reg "[s], %" reg "[d]; pushf; pop %[f]" \
		     : [d] "+r"(hr), [f] "+r"(hf) : [s] "r"(a) : "cc")
			if (size == 2) { if (rev) HBS("bsr", "w", "w"); else HBS("bsf", "w", "w"); }
			else if (size == 4) { if (rev) HBS("bsr", "l", "k"); else HBS("bsf", "l", "k"); }
			else { if (rev) HBS("bsr", "q", "q"); else HBS("bsf", "q", "q"); }
			assert_int_equal(found, a != 0);
			assert_int_equal(ef & F_ZF, hf & F_ZF);
			if (found)
				assert_int_equal(eidx, hr & m);
		}
		checked++;
	}
	/* Every condition code on every combination of the flags it reads. */
	for (unsigned int bitsv = 0; bitsv < 32; bitsv++) {
		uint64_t f = 0x202 | ((bitsv & 1) ? F_CF : 0) | ((bitsv & 2) ? F_PF : 0) |
			     ((bitsv & 4) ? F_ZF : 0) | ((bitsv & 8) ? F_SF : 0) | ((bitsv & 16) ? F_OF : 0);
		uint8_t host[16];

		asm volatile("push %[f]; popf; seto 0(%[h]); setno 1(%[h]); setb 2(%[h]); setae 3(%[h]);"
			     "sete 4(%[h]); setne 5(%[h]); setbe 6(%[h]); seta 7(%[h]); sets 8(%[h]);"
			     "setns 9(%[h]); setp 10(%[h]); setnp 11(%[h]); setl 12(%[h]); setge 13(%[h]);"
			     "setle 14(%[h]); setg 15(%[h])"
			     : : [f] "r"(f), [h] "r"(host) : "cc", "memory");
		for (unsigned int cc = 0; cc < 16; cc++)
			assert_int_equal(x86_cond(cc, f), host[cc]);
	}
	print_message("  %u IMUL, BT*, BSF/BSR operand pairs match the host CPU\n", checked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_table),
		cmocka_unit_test(test_decode_table2),
		cmocka_unit_test(test_decode_ea),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_decode_length_limit),
		cmocka_unit_test(test_decode_random_bytes),
		cmocka_unit_test(test_store32_table),
		cmocka_unit_test(test_store32_random_bytes),
		cmocka_unit_test(test_reads_writes),
		cmocka_unit_test(test_alu_against_host),
		cmocka_unit_test(test_alu_keeps_other_flags),
		cmocka_unit_test(test_shift_against_host),
		cmocka_unit_test(test_shiftd_against_host),
		cmocka_unit_test(test_muldiv_against_host),
		cmocka_unit_test(test_imul_bitop_bitscan_cond),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
