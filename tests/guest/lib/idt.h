/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guests' IDT and expected-fault mechanism.
 *
 * Every exception is unexpected unless a check has armed a recovery
 * address: then the handler records the vector and error code, resumes at
 * that address and disarms.  The recovery address is set by the same asm
 * statement that holds the faulting instruction, so the compiler cannot
 * move anything between the two:
 *
 *	expect_fault(X86_EXC_GP);
 *	asm volatile(ASM_TRY("1f") "wrmsr\n\t" "1:" : ...);
 *	if (fault_happened()) ...
 *
 * The helpers below (rdmsr_safe and friends) wrap that pattern.
 */
#ifndef GUEST_IDT_H
#define GUEST_IDT_H

#include <stdbool.h>
#include <stdint.h>

/* Pushed by entry.S: PUSHAL, then vector/error code, then the CPU's frame. */
struct trap_frame {
	uint32_t edi, esi, ebp, esp_unused, ebx, edx, ecx, eax;
	uint32_t vector, error_code;
	uint32_t eip, cs, eflags;
};

typedef void (*irq_handler_t)(struct trap_frame *frame);

void idt_init(void);
/* Install a handler for an external-interrupt vector (32..255). */
void irq_register(uint8_t vector, irq_handler_t handler);

/* Set by ASM_TRY; read by the exception handler. */
extern volatile uint32_t fault_recovery_eip;
#define NO_FAULT	(-1)	/* last_fault_vector(): nothing was raised */
#define ANY_VECTOR	(-2)	/* expect_fault(): whichever comes */

#define ASM_TRY(label)	"movl $" label ", fault_recovery_eip\n\t"

/* Arm: the next exception inside an ASM_TRY resumes at its label. */
void expect_fault(int vector);
/* Disarm; true when the vector passed to expect_fault() was raised. */
bool fault_happened(void);
/* After fault_happened(): what was raised (NO_FAULT if nothing). */
int last_fault_vector(void);
uint32_t last_fault_error_code(void);
const char *vector_name(int vector);

/* These return the vector raised (any is caught), or NO_FAULT. */
int rdmsr_safe(uint32_t msr, uint64_t *value);
int wrmsr_safe(uint32_t msr, uint64_t value);
int write_cr4_safe(uint32_t value);
int xsetbv_safe(uint32_t xcr, uint64_t value);

#endif /* GUEST_IDT_H */
