/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guest's legacy interrupt controllers: a master and a slave 8259A
 * cascaded on the master's IR2, at ports 0x20-0x21 and 0xA0-0xA1, as on
 * a PC.  The model is the 8259A datasheet's: ICW1-ICW4, OCW1 (the IMR),
 * OCW2 (the EOI and rotation commands), OCW3 (IRR/ISR read select, poll,
 * special mask), edge-triggered inputs, fully nested priority with
 * rotation, auto-EOI.  Architecture-neutral: the caller feeds it the
 * port accesses and the input lines, asks whether its INT output is
 * raised and runs the INTA cycle when it delivers the interrupt.
 *
 * Not modelled (no PC-compatible guest relies on them): level-triggered
 * mode (ICW1.LTIM, the ELCR), buffered mode, the 8080/8085 call format
 * (ICW4.uPM = 0 is taken as 8086 mode).
 */
#ifndef EXITPLAN_VPIC_H
#define EXITPLAN_VPIC_H

#include <stdbool.h>
#include <stdint.h>

#define VPIC_MASTER_CMD		0x20
#define VPIC_MASTER_DATA	0x21
#define VPIC_SLAVE_CMD		0xa0
#define VPIC_SLAVE_DATA		0xa1
/* The slave's INT drives this input of the master. */
#define VPIC_CASCADE_IRQ	2

struct vpic_chip {
	uint8_t irr;		/* interrupt request register */
	uint8_t isr;		/* in-service register */
	uint8_t imr;		/* interrupt mask register (OCW1) */
	uint8_t lines;		/* the inputs' levels, for edge detection */
	uint8_t vector_base;	/* ICW2 T7-T3 */
	uint8_t icw3;
	uint8_t init_step;	/* 0: initialised; else the ICW expected next */
	uint8_t lowest;		/* the IR with the lowest priority (rotation) */
	bool icw4_needed;	/* ICW1.IC4 */
	bool single;		/* ICW1.SNGL */
	bool auto_eoi;		/* ICW4.AEOI */
	bool rotate_on_aeoi;	/* OCW2 R with auto-EOI */
	bool special_fully_nested;	/* ICW4.SFNM */
	bool special_mask;	/* OCW3.SMM */
	bool read_isr;		/* OCW3.RR/RIS: a read of A0=0 gives the ISR */
	bool poll;		/* OCW3.P: the next read of A0=0 is a poll */
};

struct vpic {
	struct vpic_chip chip[2];	/* [0] master, [1] slave */
};

/* The state after power-on, before any ICW (what hardware gives). */
void vpic_reset(struct vpic *pic);

/*
 * The state a PC BIOS leaves: both chips initialised (edge, cascade,
 * 8086 mode), vectors 0x08 and 0x70, the slave on IR2; the IMRs are the
 * Bochs BIOS's (0xb8: IRQ 0, 1, 2, 6 open; 0x8f: IRQ 12, 13, 14 open).
 */
void vpic_reset_bios(struct vpic *pic);

/*
 * A port access.  Returns false when `port` is not one of the four
 * ports; `*val` is the byte written, or receives the byte read.
 */
bool vpic_io(struct vpic *pic, uint16_t port, bool in, uint8_t *val);

/* Drive input `irq` (0-15) to `level`; a rising edge sets its IRR bit. */
void vpic_set_irq(struct vpic *pic, unsigned int irq, bool level);

/* A rising then a falling edge: a PIT output period, one request. */
void vpic_pulse_irq(struct vpic *pic, unsigned int irq);

/* Is the master's INT output raised (an unmasked request it would give)? */
bool vpic_has_interrupt(const struct vpic *pic);

/*
 * The INTA cycle: the vector of the highest-priority request, moved from
 * IRR to ISR (unless auto-EOI).  With no request left (it went away
 * since INT was raised) the 8259A gives IR7's vector, the spurious one.
 */
uint8_t vpic_intack(struct vpic *pic);

#endif /* EXITPLAN_VPIC_H */
