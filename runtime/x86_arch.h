/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The architectural numbers the boot runtime needs: CR/EFER bits, MSR
 * indices, paging-entry bits, exception vectors, the long-mode CPUID bit.
 * They come from spec/ through the generated headers.  The fallback
 * branch exists only so that the runtime builds before generated/common/
 * has been committed; it goes away once it has.
 */
#ifndef EXITPLAN_X86_ARCH_H
#define EXITPLAN_X86_ARCH_H

#if __has_include("arch_bits.h") && __has_include("msr_index.h")
#include "arch_bits.h"
#include "msr_index.h"
#else
/* TEMPORARY: remove when generated/common/{arch_bits,msr_index}.h exist. */
#define X86_CR0_PG		(1u << 31)
#define X86_CR4_PAE		(1u << 5)
#define EFER_LME		(1ull << 8)
#define MSR_IA32_EFER		0xc0000080u
#define MSR_IA32_FS_BASE	0xc0000100u
#define MSR_IA32_GS_BASE	0xc0000101u
#define PT64_PRESENT		(1ull << 0)
#define PT64_RW			(1ull << 1)
#define PT64_USER		(1ull << 2)
#define PT64_PWT		(1ull << 3)
#define PT64_PCD		(1ull << 4)
#define PT64_ACCESSED		(1ull << 5)
#define PT64_DIRTY		(1ull << 6)
#define PT64_PS			(1ull << 7)
#define CPUID_80000001_EDX_LM	(1u << 29)
#define X86_EXC_DE	0
#define X86_EXC_DB	1
#define X86_EXC_NMI	2
#define X86_EXC_BP	3
#define X86_EXC_OF	4
#define X86_EXC_BR	5
#define X86_EXC_UD	6
#define X86_EXC_NM	7
#define X86_EXC_DF	8
#define X86_EXC_TS	10
#define X86_EXC_NP	11
#define X86_EXC_SS	12
#define X86_EXC_GP	13
#define X86_EXC_PF	14
#define X86_EXC_MF	16
#define X86_EXC_AC	17
#define X86_EXC_MC	18
#define X86_EXC_XM	19
#define X86_EXC_VE	20
#define X86_EXC_CP	21
#endif

/*
 * Not in spec/arch.yaml yet (SDM Vol. 3A table 6-1): #HV, #VC and #SX.
 * #VC and #SX push an error code, so the entry stubs must know them.
 */
#ifndef X86_EXC_HV
#define X86_EXC_HV	28
#endif
#ifndef X86_EXC_VC
#define X86_EXC_VC	29
#endif
#ifndef X86_EXC_SX
#define X86_EXC_SX	30
#endif

#endif /* EXITPLAN_X86_ARCH_H */
