/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guests' test framework.  Output lines, exactly:
 *	PASS: name
 *	FAIL: name (detail)
 *	SKIP: name (why)
 *	guest <guest>: N passed, M failed
 * then the guest exits through the isa-debug-exit port 0xf4 with code 0
 * when nothing failed, else 1 (QEMU and exitplan report (code << 1) | 1).
 */
#ifndef GUEST_TEST_H
#define GUEST_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch_bits.h"	/* X86_EXC_UD */
#include "idt.h"

/* Each guest defines its name and its body; lib/main.c calls it. */
extern const char guest_name[];
void guest_main(void);

/* PASS/FAIL with the condition's text as the detail. */
#define CHECK(name, cond)	check((name), (cond), "%s", #cond)
/* PASS/FAIL with a printf-formatted detail. */
bool check(const char *name, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void skip(const char *name, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * PASS when the instruction @insn (asm text, its operands after it, at
 * least one) raises #UD, else FAIL with what it raised (idt.h's
 * expected-fault mechanism).
 */
#define CHECK_UD(name, insn, ...)						\
	do {									\
		expect_fault(X86_EXC_UD);					\
		asm volatile(ASM_TRY("1f") insn "\n\t1:" : : __VA_ARGS__ : "memory"); \
		check(name, fault_happened(), "got %s",			\
		      vector_name(last_fault_vector()));			\
	} while (0)

unsigned int tests_passed(void);
unsigned int tests_failed(void);

/* Print the summary line and exit with 0 (all passed) or 1. */
void __attribute__((noreturn)) test_finish(void);
/* Count one failure that was already printed, then test_finish(). */
void __attribute__((noreturn)) test_abort(void);
/* Exit through the isa-debug-exit port; spin halted if that returns. */
void __attribute__((noreturn)) guest_exit(uint32_t code);

/* Command line: "key=value" or "key" words, separated by spaces. */
const char *cmdline(void);
bool cmdline_has(const char *key);
/* Copy the value of key=value into buf (NULL if absent; "" for a bare key). */
const char *cmdline_value(const char *key, char *buf, size_t size);
/* Parse a decimal or 0x-hex value; def when absent or malformed. */
uint32_t cmdline_u32(const char *key, uint32_t def);

#endif /* GUEST_TEST_H */
