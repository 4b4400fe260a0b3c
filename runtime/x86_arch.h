/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The architectural numbers the boot runtime needs: CR/EFER bits, MSR
 * indices, paging-entry bits, exception vectors, the long-mode CPUID bit.
 * They come from spec/ through the generated headers; this header only
 * fills what spec/ does not have yet.
 */
#ifndef EXITPLAN_X86_ARCH_H
#define EXITPLAN_X86_ARCH_H

#include "arch_bits.h"
#include "msr_index.h"

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
