/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The architectural numbers the boot runtime needs: CR/EFER bits, MSR
 * indices, paging-entry bits, exception vectors, the long-mode CPUID bit.
 * They all come from spec/ through the generated headers; this header
 * only gathers them for the runtime.
 */
#ifndef EXITPLAN_X86_ARCH_H
#define EXITPLAN_X86_ARCH_H

#include "arch_bits.h"
#include "msr_index.h"

#endif /* EXITPLAN_X86_ARCH_H */
