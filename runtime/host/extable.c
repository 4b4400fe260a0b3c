// SPDX-License-Identifier: GPL-2.0-only
/* The exception fixup table's lookup (extable.h). */
#include "arch_bits.h"
#include "runtime/host/extable.h"
#include "runtime/host/traps.h"

/* The linker script collects every __extable section between these. */
extern const struct extable_entry __extable_start[], __extable_end[];

/*
 * A dozen entries: a linear scan, read-only, no ordering to keep, and
 * the same answer on every CPU at once.
 */
const struct extable_entry *extable_search(const struct extable_entry *first,
					   const struct extable_entry *last, uint64_t rip)
{
	for (const struct extable_entry *e = first; e < last; e++)
		if (extable_insn(e) == rip)
			return e;
	return 0;
}

bool extable_fixup(struct interrupt_frame *f)
{
	const struct extable_entry *e;

	/* Not #PF: no entry's instruction touches memory a fault could mean. */
	if (f->vector != X86_EXC_GP && f->vector != X86_EXC_UD)
		return false;
	e = extable_search(__extable_start, __extable_end, f->rip);
	if (!e)
		return false;
	f->rip = extable_fixup_addr(e);
	return true;
}
