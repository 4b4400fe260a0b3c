// SPDX-License-Identifier: GPL-2.0-only
/*
 * The legacy 8259 PICs.  The BIOS leaves them unmasked with the PIT on
 * vector 8, which in protected mode is #DF.  Move them to vectors
 * 0x20-0x2f and mask every line; a masked PIC can still deliver a
 * spurious IRQ 7 or 15, which is acknowledged and dropped.
 */
#include "runtime/host/cpu.h"
#include "runtime/host/pic.h"
#include "runtime/host/traps.h"

#define PIC1_CMD	0x20
#define PIC1_DATA	0x21
#define PIC2_CMD	0xa0
#define PIC2_DATA	0xa1

#define ICW1_INIT_ICW4	0x11	/* edge triggered, cascade, ICW4 follows */
#define ICW4_8086	0x01
#define OCW3_READ_ISR	0x0b
#define PIC_EOI		0x20
#define PIC_CASCADE_IRQ	2

#define PIC_SPURIOUS_IRQ	7	/* per PIC, the lowest-priority line */

static uint8_t pic_read_isr(uint16_t cmd)
{
	outb(cmd, OCW3_READ_ISR);
	return inb(cmd);
}

static void pic_irq7(struct interrupt_frame *frame)
{
	(void)frame;
	/* A real IRQ 7 (ISR bit set) gets its EOI; a spurious one must not. */
	if (pic_read_isr(PIC1_CMD) & (1 << PIC_SPURIOUS_IRQ))
		outb(PIC1_CMD, PIC_EOI);
}

static void pic_irq15(struct interrupt_frame *frame)
{
	(void)frame;
	/* Spurious on the slave: the master still saw IRQ 2 and wants EOI. */
	if (pic_read_isr(PIC2_CMD) & (1 << PIC_SPURIOUS_IRQ))
		outb(PIC2_CMD, PIC_EOI);
	outb(PIC1_CMD, PIC_EOI);
}

void pic_remap_and_mask(void)
{
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);

	outb(PIC1_CMD, ICW1_INIT_ICW4);
	outb(PIC2_CMD, ICW1_INIT_ICW4);
	outb(PIC1_DATA, PIC1_VECTOR_BASE);
	outb(PIC2_DATA, PIC2_VECTOR_BASE);
	outb(PIC1_DATA, 1 << PIC_CASCADE_IRQ);	/* master: slave on IRQ 2 */
	outb(PIC2_DATA, PIC_CASCADE_IRQ);	/* slave: its cascade identity */
	outb(PIC1_DATA, ICW4_8086);
	outb(PIC2_DATA, ICW4_8086);

	/* OCW1: mask all lines. */
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);

	idt_set_handler(PIC1_VECTOR_BASE + PIC_SPURIOUS_IRQ, pic_irq7);
	idt_set_handler(PIC2_VECTOR_BASE + PIC_SPURIOUS_IRQ, pic_irq15);
}
