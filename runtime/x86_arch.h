/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The architectural CR/EFER bits and MSR indices the boot runtime needs.
 * They come from spec/ through the generated headers; the fallback below
 * exists only so that the runtime builds before generated/common/ has
 * been committed, and goes away once it has.
 */
#ifndef EXITPLAN_X86_ARCH_H
#define EXITPLAN_X86_ARCH_H

#if __has_include("arch_bits.h") && __has_include("msr_index.h")
#include "arch_bits.h"
#include "msr_index.h"
#else
/* TEMPORARY: remove when generated/common/{arch_bits,msr_index}.h exist. */
#define X86_CR0_PE		(1u << 0)
#define X86_CR0_PG		(1u << 31)
#define X86_CR4_PAE		(1u << 5)
#define EFER_LME		(1u << 8)
#define MSR_IA32_EFER		0xc0000080u
#define MSR_IA32_FS_BASE	0xc0000100u
#define MSR_IA32_GS_BASE	0xc0000101u
#endif

#endif /* EXITPLAN_X86_ARCH_H */
