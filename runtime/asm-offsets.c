/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Constants for assembly files.  The architectural numbers live in spec/
 * and reach C through generated headers whose literals (1u << 31) the
 * assembler cannot read; this file is compiled to assembly only, and the
 * build turns each "->NAME VALUE" marker into a #define in asm-offsets.h
 * (the Linux kernel's asm-offsets technique).
 */
#include <stddef.h>

#include "percpu.h"
#include "traps.h"
#include "x86_arch.h"

#define DEFINE(sym, val) \
	asm volatile("\n.ascii \"->" #sym " %0\"" : : "i"((unsigned long)(val)))

void asm_offsets(void);

void asm_offsets(void)
{
	/* 32-bit entry: switch to IA-32e mode (SDM Vol. 3A 10.8.5). */
	DEFINE(BOOT_CR0_PG, X86_CR0_PG);
	DEFINE(BOOT_CR4_PAE, X86_CR4_PAE);
	DEFINE(BOOT_EFER_LME, EFER_LME);
	DEFINE(BOOT_MSR_EFER, MSR_IA32_EFER);

	/* entry.S builds struct interrupt_frame. */
	DEFINE(INTERRUPT_FRAME_SIZE, sizeof(struct interrupt_frame));
	DEFINE(INTERRUPT_FRAME_VECTOR, offsetof(struct interrupt_frame, vector));
}
