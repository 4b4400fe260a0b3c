/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The host IDT.  All 256 vectors have a stub (entry.S) that saves the
 * registers into a struct interrupt_frame and calls interrupt_dispatch():
 * a handler registered with idt_set_handler() runs; otherwise an
 * exception (vector < 32) is reported with its state and panics, and any
 * other vector panics as an unexpected interrupt.  The NMI is the one
 * exception: it never panics (nmi_host()).
 */
#ifndef EXITPLAN_TRAPS_H
#define EXITPLAN_TRAPS_H

#include <stdbool.h>
#include <stdint.h>

#define IDT_VECTORS		256
#define NR_EXCEPTION_VECTORS	32

/* Layout built by entry.S: keep in the order of the pushes, reversed. */
struct interrupt_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector;
	uint64_t error_code;		/* 0 for vectors without one */
	/* Pushed by the CPU. */
	uint64_t rip, cs, rflags, rsp, ss;
};

typedef void (*interrupt_handler_t)(struct interrupt_frame *frame);

/* Fill the IDT and load it on this CPU (each CPU calls idt_load()). */
void idt_init(void);
void idt_load(void);
/* HOST_IDTR_BASE for the VMCS. */
uint64_t idt_base(void);

/*
 * Install (or with NULL remove) the C handler of a vector: at boot only.
 * idt_seal(), before any vCPU runs, fixes them: a handler is never
 * patched while another CPU may take its vector (faults on guest
 * values go through the exception fixup table instead, extable.h).
 */
void idt_set_handler(unsigned int vector, interrupt_handler_t handler);
void idt_seal(void);

/* Called by entry.S. */
void interrupt_dispatch(struct interrupt_frame *frame);

/*
 * The NMI's owner: asked first on every NMI, before the vector's handler
 * (idt_set_handler()) and nmi_host(); true when it took the NMI.  The
 * VMM registers it once at boot, before idt_seal() and before any vCPU
 * exists (an NMI taken earlier is nobody's and goes on as if it had
 * said false): the host calls it without knowing the VMM is above it.
 */
typedef bool (*nmi_owner_t)(struct interrupt_frame *frame);
void traps_set_nmi_owner(nmi_owner_t owner);

/*
 * An NMI that is nobody's (no guest on this CPU): reported once per CPU
 * and dropped, never a panic.  NMIs reach their owner first.
 */
void nmi_host(struct interrupt_frame *frame);

/* "#PF" etc., or NULL above 31. */
const char *exception_name(unsigned int vector);

/* Print a frame: registers and control registers. */
void interrupt_frame_dump(const struct interrupt_frame *frame);

#endif /* EXITPLAN_TRAPS_H */
