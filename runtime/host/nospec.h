/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Clamping an array index under speculation (Spectre variant 1).
 *
 * The exit reason that indexes vmx_exit_table comes from the VMCS, and the
 * guest chooses it: a bounds check alone does not stop the CPU from
 * speculatively loading vmx_exit_table[reason] for an out-of-range reason
 * while the check's branch is still unresolved, and then calling through
 * whatever pointer that load found.  array_index_nospec() turns the index
 * into 0 when it is out of range with arithmetic only, so even the
 * speculative load stays inside the table.
 *
 * This is Linux's generic array_index_mask_nospec() (include/linux/nospec.h).
 * Nothing here depends on the width of long: it works unchanged in the
 * 64-bit hypervisor, in 32-bit code and in the host unit tests.
 */
#ifndef EXITPLAN_NOSPEC_H
#define EXITPLAN_NOSPEC_H

/* Bits in an unsigned long: 64 in the hypervisor, 32 with -m32. */
#define NOSPEC_BITS_PER_LONG	(__SIZEOF_LONG__ * __CHAR_BIT__)

/*
 * ~0UL when index < size, else 0; without a branch.
 *
 * index | (size - 1 - index) has its top bit clear exactly when both
 * index <= size - 1 and index itself is below 2^(BITS_PER_LONG - 1): for
 * an index beyond size - 1 the subtraction wraps and sets the top bit.
 * Inverted and shifted arithmetically, the top bit becomes all ones or all
 * zeros.  Both index and size must be below LONG_MAX, which any array
 * size is.  The empty asm hides index's value from the compiler, which
 * could otherwise prove the range and turn the arithmetic back into a
 * compare-and-branch (Linux's OPTIMIZER_HIDE_VAR).
 */
static inline unsigned long array_index_mask_nospec(unsigned long index, unsigned long size)
{
	asm("" : "+r"(index));
	return (unsigned long)(~(long)(index | (size - 1UL - index)) >> (NOSPEC_BITS_PER_LONG - 1));
}

/*
 * @index if it is below @size, else 0.  Use it after the bounds check,
 * for the access the check guards:
 *
 *	if (i < size)
 *		x = table[array_index_nospec(i, size)];
 */
static inline unsigned long array_index_nospec(unsigned long index, unsigned long size)
{
	return index & array_index_mask_nospec(index, size);
}

#endif /* EXITPLAN_NOSPEC_H */
