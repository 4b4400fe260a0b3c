/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The exception fixup table, as Linux's extable: each host instruction
 * that may fault on a value the guest chose (WRMSR, RDMSR, XSETBV) has
 * a fixed entry, faulting address -> continuation, emitted beside it by
 * EXTABLE_FAULT() and linked into .rodata (read-only once paging.c has
 * write-protected it).  A #GP or #UD on any CPU looks its RIP up there
 * (traps.c) and resumes at the continuation; only a miss panics.  No
 * handler is installed or removed at run time, so concurrent faults on
 * several CPUs cannot interfere.
 */
#ifndef EXITPLAN_EXTABLE_H
#define EXITPLAN_EXTABLE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Offsets relative to each field's own address, so an entry needs no
 * relocation when the image moves itself (reloc.c).
 */
struct extable_entry {
	int32_t insn;
	int32_t fixup;
};

/*
 * Inside an asm statement: the instruction labelled 1 may fault with
 * #GP or #UD; then @err_operand (an "+r" output) is set to 1 and
 * execution goes on at label 2, which must follow the instruction.
 */
#define EXTABLE_FAULT(err_operand)					\
	".pushsection .text.fixup, \"ax\"\n"				\
	"3:\tmovl $1, " err_operand "\n\t"				\
	"jmp 2b\n\t"							\
	".popsection\n\t"						\
	".pushsection __extable, \"a\"\n\t"				\
	".balign 4\n\t"							\
	".long 1b - ., 3b - .\n\t"					\
	".popsection\n"

static inline uint64_t extable_insn(const struct extable_entry *e)
{
	return (uintptr_t)&e->insn + (int64_t)e->insn;
}

static inline uint64_t extable_fixup_addr(const struct extable_entry *e)
{
	return (uintptr_t)&e->fixup + (int64_t)e->fixup;
}

/* The entry for a fault at @rip in [@first, @last), or NULL. */
const struct extable_entry *extable_search(const struct extable_entry *first,
					   const struct extable_entry *last, uint64_t rip);

struct interrupt_frame;

/*
 * A #GP or #UD at an instruction of the table: the frame resumes at its
 * continuation (true).  Any other fault, or vector, is not fixed (false).
 */
bool extable_fixup(struct interrupt_frame *frame);

#endif /* EXITPLAN_EXTABLE_H */
