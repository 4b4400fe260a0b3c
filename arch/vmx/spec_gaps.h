/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SPEC GAPS: architectural numbers the VT-x runtime needs that spec/ does
 * not describe yet.  This is the ONE place they are typed; each belongs
 * in spec/arch.yaml (and then in generated/common/arch_bits.h), after
 * which its line here goes away.  Guarded so that a generated definition
 * takes over without an edit here.
 */
#ifndef EXITPLAN_SPEC_GAPS_H
#define EXITPLAN_SPEC_GAPS_H

#include "arch_bits.h"

/* The instructions the MMIO test page emulates (Vol. 2B MOV): 8B /r and 89 /r. */
#ifndef X86_OPCODE_MOV_LOAD
#define X86_OPCODE_MOV_LOAD	0x8b	/* MOV r32, r/m32 */
#endif
#ifndef X86_OPCODE_MOV_STORE
#define X86_OPCODE_MOV_STORE	0x89	/* MOV r/m32, r32 */
#endif

/* PAE paging: CR3[31:5] locates the page-directory-pointer table (Vol. 3A 4.4.1). */
#ifndef PAE_CR3_PDPT_MASK
#define PAE_CR3_PDPT_MASK	0xffffffe0ull
#endif

/* CPUID leaves 80000002H-80000004H: the processor brand string (Vol. 2A CPUID). */
#ifndef CPUID_LEAF_BRAND_FIRST
#define CPUID_LEAF_BRAND_FIRST	0x80000002u
#define CPUID_LEAF_BRAND_LAST	0x80000004u
#endif

#endif /* EXITPLAN_SPEC_GAPS_H */
