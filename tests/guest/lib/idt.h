/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guests' IDT and expected-fault mechanism.
 *
 * Every exception is unexpected unless it is raised inside an ASM_TRY
 * region: then the handler records the vector and error code for the
 * CPU that raised it and resumes at the region's recovery label.  The
 * region is the asm statement that holds the faulting instruction, from
 * ASM_TRY to the label, listed in a table beside the code (.guest_try),
 * so that nothing the compiler moves can fall into it, and so that every
 * CPU can fault at once without sharing an armed address:
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
/*
 * Point the gate of @vector at @entry (an interrupt stub of the caller's,
 * which must IRET itself), or back at the library's stub (@entry 0): for
 * fixed interrupts with vectors 16-31, which push no error code where the
 * exceptions of those vectors (17, 21, 29, 30) do.
 */
void idt_set_gate(uint8_t vector, uint32_t entry);

/* Take NMIs in @handler (NULL: an NMI is an unexpected exception again). */
void nmi_register(irq_handler_t handler);

#define NO_FAULT	(-1)	/* last_fault_vector(): nothing was raised */
#define ANY_VECTOR	(-2)	/* expect_fault(): whichever comes */

/* The region starts here and ends at @label (always "1f" so far). */
#define ASM_TRY(label)							\
	"9876:\n\t"							\
	ASM_TRY_RANGE("9876b", label, label)

/*
 * Code elsewhere that the region runs (a stub it calls): an exception
 * raised in [@first, @last] resumes at the region's @label too.
 */
#define ASM_TRY_RANGE(first, last, label)				\
	".pushsection .guest_try, \"a\"\n\t"				\
	".balign 4\n\t"							\
	".long " first ", " last ", " label "\n\t"			\
	".popsection\n\t"

/* This CPU's next exception inside an ASM_TRY is expected to be @vector. */
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
