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

#endif /* EXITPLAN_SPEC_GAPS_H */
