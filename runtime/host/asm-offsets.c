/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Constants for assembly files.  The architectural numbers live in spec/
 * and reach C through generated headers whose literals (1u << 31) the
 * assembler cannot read; this file is compiled to assembly only, and the
 * build turns each "->NAME VALUE" marker into a #define in asm-offsets.h
 * (the Linux kernel's asm-offsets technique).
 */
#include <stddef.h>

#include "runtime/host/paging.h"
#include "runtime/host/percpu.h"
#include "runtime/host/traps.h"
#include "runtime/host/x86_arch.h"

#define DEFINE(sym, val) \
	asm volatile("\n.ascii \"->" #sym " %0\"" : : "i"((unsigned long)(val)))

void asm_offsets(void);

void asm_offsets(void)
{
	/* 32-bit entry: switch to IA-32e mode (SDM Vol. 3A 10.8.5). */
	DEFINE(BOOT_CR0_PE, X86_CR0_PE);
	/*
	 * CR0 as the hypervisor runs: paging; x87 errors the native way (NE,
	 * which VMXON requires anyway); WP; caches on.  The BIOS and INIT
	 * leave CD and NW set, which on hardware means no caching at all.
	 */
	DEFINE(BOOT_CR0_SET, X86_CR0_PG | X86_CR0_NE | X86_CR0_WP);
	DEFINE(BOOT_CR0_CLEAR, X86_CR0_CD | X86_CR0_NW);
	DEFINE(BOOT_CR4_PAE, X86_CR4_PAE);
	DEFINE(BOOT_EFER_LME, EFER_LME);
	DEFINE(BOOT_MSR_EFER, MSR_IA32_EFER);
	DEFINE(BOOT_CPUID_EDX_LM, CPUID_80000001_EDX_LM);
	DEFINE(BOOT_PTE_PRESENT, PTE_PRESENT);
	DEFINE(BOOT_PTE_WRITE, PTE_WRITE);
	DEFINE(BOOT_PTE_PS, PTE_PS);
	DEFINE(BOOT_PTE_UC, PTE_PCD | PTE_PWT);

	/* entry.S builds struct interrupt_frame. */
	DEFINE(INTERRUPT_FRAME_SIZE, sizeof(struct interrupt_frame));
	DEFINE(INTERRUPT_FRAME_VECTOR, offsetof(struct interrupt_frame, vector));
	/* The exceptions for which the CPU pushes an error code (table 6-1). */
	DEFINE(EXC_ERROR_CODE_MASK,
	       (1u << X86_EXC_DF) | (1u << X86_EXC_TS) | (1u << X86_EXC_NP) |
	       (1u << X86_EXC_SS) | (1u << X86_EXC_GP) | (1u << X86_EXC_PF) |
	       (1u << X86_EXC_AC) | (1u << X86_EXC_CP) | (1u << X86_EXC_VC) |
	       (1u << X86_EXC_SX));
}
