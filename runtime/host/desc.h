/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Segment descriptors, the GDT layout, the 64-bit TSS and IDT gates
 * (SDM Vol. 3A 3.4.5, 7.2.3, 7.7, 6.14.1).  The #defines are usable from
 * assembly.
 */
#ifndef EXITPLAN_DESC_H
#define EXITPLAN_DESC_H

#ifdef __ASSEMBLER__
#define _AC(x, y)	x
#else
#define _AC(x, y)	x##y
#endif

/*
 * Descriptor attributes as one 16-bit value: bits 7:0 are the access
 * byte (type, S, DPL, P), bits 15:12 the flags nibble (AVL, L, D/B, G),
 * placed as in Linux's GDT_ENTRY().
 */
#define DESC_TYPE_ACCESSED	0x0001	/* set, so the CPU never writes the GDT */
#define DESC_TYPE_RW		0x0002	/* code: readable; data: writable */
#define DESC_TYPE_CODE		0x0008
#define DESC_TYPE_TSS64_AVAIL	0x0009	/* system descriptor type */
#define DESC_S			0x0010	/* code or data (not system) */
#define DESC_DPL0		0x0000
#define DESC_P			0x0080
#define DESC_L			0x2000	/* 64-bit code */
#define DESC_DB			0x4000
#define DESC_G			0x8000	/* limit in 4-KiB units */

#define DESC_KERNEL_CODE64	(DESC_P | DESC_DPL0 | DESC_S | DESC_TYPE_CODE | \
				 DESC_TYPE_RW | DESC_TYPE_ACCESSED | DESC_L | DESC_G)
#define DESC_KERNEL_CODE32	(DESC_P | DESC_DPL0 | DESC_S | DESC_TYPE_CODE | \
				 DESC_TYPE_RW | DESC_TYPE_ACCESSED | DESC_DB | DESC_G)
#define DESC_KERNEL_DATA	(DESC_P | DESC_DPL0 | DESC_S | DESC_TYPE_RW | \
				 DESC_TYPE_ACCESSED | DESC_DB | DESC_G)

#define GDT_ENTRY(flags, base, limit)					\
	((((base) & _AC(0xff000000, ULL)) << (56 - 24)) |		\
	 (((flags) & _AC(0x0000f0ff, ULL)) << 40) |			\
	 (((limit) & _AC(0x000f0000, ULL)) << (48 - 16)) |		\
	 (((base) & _AC(0x00ffffff, ULL)) << 16) |			\
	 (((limit) & _AC(0x0000ffff, ULL))))

/*
 * GDT slots.  The selectors are what VMX host-state fields take
 * (HOST_CS_SELECTOR = GDT_KERNEL_CS, ...: RPL 0, TI 0).
 */
#define GDT_NULL_IDX		0
#define GDT_KERNEL_CS_IDX	1
#define GDT_KERNEL_DS_IDX	2
#define GDT_TSS_IDX		3	/* 16 bytes: slots 3 and 4 */
#define GDT_ENTRIES		5

#define GDT_KERNEL_CS		(GDT_KERNEL_CS_IDX * 8)
#define GDT_KERNEL_DS		(GDT_KERNEL_DS_IDX * 8)
#define GDT_TSS			(GDT_TSS_IDX * 8)

/* IDT gate: present, DPL 0, 64-bit interrupt gate (clears IF). */
#define IDT_GATE_INTERRUPT	0x8e

/* Interrupt-stack-table slots (TSS.IST1..7). */
#define IST_DOUBLE_FAULT	1
#define IST_NMI			2
#define IST_MACHINE_CHECK	3
#define IST_COUNT		3

#ifndef __ASSEMBLER__
#include <stdint.h>

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];		/* IST1..IST7 */
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;		/* >= limit: no I/O permission bitmap */
} __attribute__((packed));

struct idt_gate {
	uint16_t offset_low;
	uint16_t selector;
	uint8_t ist;
	uint8_t type_attr;
	uint16_t offset_mid;
	uint32_t offset_high;
	uint32_t reserved;
} __attribute__((packed));

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));
#endif /* !__ASSEMBLER__ */

#endif /* EXITPLAN_DESC_H */
