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
	{ "mull (%eax)", M32, B(0xf7, 0x20), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "call *(%eax)", M32, B(0xff, 0x10), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
	{ "movdqa (%eax),%xmm0", M32, B(0x66, 0x0f, 0x6f, 0x00), X86_DECODE_UNSUPPORTED, .op = X86_OP_NONE },
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
		assert_true(insn.size == 1 || insn.size == 2 || insn.size == 4 || insn.size == 8);
		assert_true(insn.reg_size >= insn.size || insn.op == X86_OP_LOAD);
		assert_true(insn.reg < 16);
		assert_true(insn.addr_size == 2 || insn.addr_size == 4 || insn.addr_size == 8);
		assert_true(insn.op != X86_OP_NONE);
		if (n % 3 != X86_MODE_64)
			assert_true(insn.reg < 8 && insn.size < 8 && insn.addr_size < 8);
	}
	print_message("  %u of 1000000 decoded\n", ok);
	assert_true(ok > 10000);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_table),
		cmocka_unit_test(test_decode_truncated),
		cmocka_unit_test(test_decode_length_limit),
		cmocka_unit_test(test_decode_random_bytes),
		cmocka_unit_test(test_reads_writes),
		cmocka_unit_test(test_alu_against_host),
		cmocka_unit_test(test_alu_keeps_other_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
