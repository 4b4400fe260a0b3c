// SPDX-License-Identifier: GPL-2.0-only
/*
 * The guest's 8259A pair (vpic.h).  Priorities are counted from the IR
 * after `lowest`: with no rotation IR0 is highest and IR7 lowest.
 */
#include "runtime/host/compiler.h"
#include "runtime/devices/vpic.h"

#define ICW1		0x10	/* A0 = 0, D4 = 1 */
#define ICW1_IC4	0x01
#define ICW1_SNGL	0x02
#define OCW3		0x08	/* A0 = 0, D4 = 0, D3 = 1 */
#define OCW3_RIS	0x01
#define OCW3_RR		0x02
#define OCW3_P		0x04
#define OCW3_SMM	0x20
#define OCW3_ESMM	0x40
#define ICW4_AEOI	0x02
#define ICW4_SFNM	0x10

/* OCW2 bits D7-D5: R, SL, EOI. */
enum ocw2_cmd {
	OCW2_ROTATE_AEOI_CLEAR	= 0,
	OCW2_NONSPECIFIC_EOI	= 1,
	OCW2_NOP		= 2,
	OCW2_SPECIFIC_EOI	= 3,
	OCW2_ROTATE_AEOI_SET	= 4,
	OCW2_ROTATE_NONSPECIFIC	= 5,
	OCW2_SET_PRIORITY	= 6,
	OCW2_ROTATE_SPECIFIC	= 7,
};

#define NO_IRQ		8

/* The highest-priority IR set in `bits`, as a priority (0 highest). */
static unsigned int priority(const struct vpic_chip *c, uint8_t bits)
{
	for (unsigned int p = 0; p < 8; p++)
		if (bits & (1u << ((c->lowest + 1 + p) & 7)))
			return p;
	return NO_IRQ;
}

static unsigned int priority_irq(const struct vpic_chip *c, unsigned int p)
{
	return (c->lowest + 1 + p) & 7;
}

/*
 * The IR this chip would ask the CPU (or the master) to serve, or
 * NO_IRQ: an unmasked request of higher priority than every IR in
 * service.  In special mask mode a masked IR in service does not block;
 * in special fully nested mode the master lets the slave interrupt its
 * own cascade IR again (a higher-priority slave request).
 */
static unsigned int chip_pending(const struct vpic_chip *c, bool master)
{
	unsigned int req = priority(c, c->irr & ~c->imr);
	uint8_t in_service = c->isr;

	if (req == NO_IRQ)
		return NO_IRQ;
	if (c->special_mask)
		in_service &= ~c->imr;
	if (master && c->special_fully_nested)
		in_service &= ~(1u << VPIC_CASCADE_IRQ);
	if (req < priority(c, in_service))
		return priority_irq(c, req);
	return NO_IRQ;
}

static void chip_set_line(struct vpic_chip *c, unsigned int irq, bool level)
{
	uint8_t bit = 1u << irq;

	if (level && !(c->lines & bit))
		c->irr |= bit;
	if (level)
		c->lines |= bit;
	else
		c->lines &= ~bit;
}

/* The slave's INT is the master's IR2: follow it after every change. */
static void update_cascade(struct vpic *pic)
{
	bool slave_int = chip_pending(&pic->chip[1], false) != NO_IRQ;

	chip_set_line(&pic->chip[0], VPIC_CASCADE_IRQ, slave_int);
}

static void chip_ack(struct vpic_chip *c, unsigned int irq)
{
	c->irr &= ~(1u << irq);
	if (!c->auto_eoi)
		c->isr |= 1u << irq;
	else if (c->rotate_on_aeoi)
		c->lowest = irq;
}

static void chip_reset(struct vpic_chip *c)
{
	*c = (struct vpic_chip){ .lowest = 7 };
}

void vpic_reset(struct vpic *pic)
{
	chip_reset(&pic->chip[0]);
	chip_reset(&pic->chip[1]);
}

void vpic_reset_bios(struct vpic *pic)
{
	static const uint8_t seq[][2] = {
		{ VPIC_MASTER_CMD, 0x11 }, { VPIC_MASTER_DATA, 0x08 },
		{ VPIC_MASTER_DATA, 0x04 }, { VPIC_MASTER_DATA, 0x01 },
		{ VPIC_SLAVE_CMD, 0x11 }, { VPIC_SLAVE_DATA, 0x70 },
		{ VPIC_SLAVE_DATA, 0x02 }, { VPIC_SLAVE_DATA, 0x01 },
		{ VPIC_MASTER_DATA, 0xb8 }, { VPIC_SLAVE_DATA, 0x8f },
	};

	vpic_reset(pic);
	for (unsigned int i = 0; i < ARRAY_SIZE(seq); i++) {
		uint8_t v = seq[i][1];

		vpic_io(pic, seq[i][0], false, &v);
	}
}

/*
 * ICW1 starts the initialisation sequence: the edge-sense circuit is
 * reset, the IMR is cleared, IR7 gets the lowest priority, special mask
 * mode is off and a read gives the IRR (8259A datasheet, "Initialization
 * Command Words").  Requests latched before are dropped, as Bochs's and
 * QEMU's models do: the next rising edge requests anew.
 */
static void write_icw1(struct vpic_chip *c, uint8_t v)
{
	chip_reset(c);
	c->icw4_needed = v & ICW1_IC4;
	c->single = v & ICW1_SNGL;
	c->init_step = 2;
}

static void write_ocw2(struct vpic_chip *c, uint8_t v)
{
	unsigned int irq = v & 7, p;

	switch ((enum ocw2_cmd)(v >> 5)) {
	case OCW2_ROTATE_AEOI_CLEAR:
	case OCW2_ROTATE_AEOI_SET:
		c->rotate_on_aeoi = v & 0x80;
		break;
	case OCW2_NONSPECIFIC_EOI:
	case OCW2_ROTATE_NONSPECIFIC:
		p = priority(c, c->isr);
		if (p == NO_IRQ)
			break;
		irq = priority_irq(c, p);
		c->isr &= ~(1u << irq);
		if (v & 0x80)
			c->lowest = irq;
		break;
	case OCW2_SPECIFIC_EOI:
		c->isr &= ~(1u << irq);
		break;
	case OCW2_ROTATE_SPECIFIC:
		c->isr &= ~(1u << irq);
		c->lowest = irq;
		break;
	case OCW2_SET_PRIORITY:
		c->lowest = irq;
		break;
	case OCW2_NOP:
		break;
	}
}

static void write_ocw3(struct vpic_chip *c, uint8_t v)
{
	if (v & OCW3_P)
		c->poll = true;
	if (v & OCW3_RR)
		c->read_isr = v & OCW3_RIS;
	if (v & OCW3_ESMM)
		c->special_mask = v & OCW3_SMM;
}

static void write_data(struct vpic_chip *c, uint8_t v)
{
	switch (c->init_step) {
	case 2:				/* ICW2: the vector of IR0 */
		c->vector_base = v & 0xf8;
		c->init_step = !c->single ? 3 : c->icw4_needed ? 4 : 0;
		break;
	case 3:				/* ICW3: the cascade wiring */
		c->icw3 = v;
		c->init_step = c->icw4_needed ? 4 : 0;
		break;
	case 4:
		c->auto_eoi = v & ICW4_AEOI;
		c->special_fully_nested = v & ICW4_SFNM;
		c->init_step = 0;
		break;
	default:			/* OCW1 */
		c->imr = v;
		break;
	}
}

/*
 * A poll (OCW3.P then a read) is an INTA without the vector: bit 7 says
 * whether an IR wants service, bits 2-0 which; that IR is acknowledged.
 */
static uint8_t read_poll(struct vpic *pic, struct vpic_chip *c)
{
	unsigned int irq = chip_pending(c, c == &pic->chip[0]);

	c->poll = false;
	if (irq == NO_IRQ)
		return 0;
	chip_ack(c, irq);
	return 0x80 | irq;
}

bool vpic_io(struct vpic *pic, uint16_t port, bool in, uint8_t *val)
{
	struct vpic_chip *c;

	switch (port) {
	case VPIC_MASTER_CMD:
	case VPIC_MASTER_DATA:
		c = &pic->chip[0];
		break;
	case VPIC_SLAVE_CMD:
	case VPIC_SLAVE_DATA:
		c = &pic->chip[1];
		break;
	default:
		return false;
	}

	if (in) {
		if (port & 1)
			*val = c->imr;
		else if (c->poll)
			*val = read_poll(pic, c);
		else
			*val = c->read_isr ? c->isr : c->irr;
	} else if (port & 1) {
		write_data(c, *val);
	} else if (*val & ICW1) {
		write_icw1(c, *val);
	} else if (*val & OCW3) {
		write_ocw3(c, *val);
	} else {
		write_ocw2(c, *val);
	}
	update_cascade(pic);
	return true;
}

void vpic_set_irq(struct vpic *pic, unsigned int irq, bool level)
{
	if (irq >= 16 || irq == VPIC_CASCADE_IRQ)
		return;			/* IR2 of the master is the slave's */
	chip_set_line(&pic->chip[irq >> 3], irq & 7, level);
	update_cascade(pic);
}

void vpic_pulse_irq(struct vpic *pic, unsigned int irq)
{
	vpic_set_irq(pic, irq, true);
	vpic_set_irq(pic, irq, false);
}

bool vpic_has_interrupt(const struct vpic *pic)
{
	return chip_pending(&pic->chip[0], true) != NO_IRQ;
}

uint8_t vpic_intack(struct vpic *pic)
{
	struct vpic_chip *m = &pic->chip[0], *s = &pic->chip[1];
	unsigned int irq = chip_pending(m, true), sirq;
	uint8_t vector;

	if (irq == NO_IRQ)
		return m->vector_base | 7;		/* spurious IR7 */
	chip_ack(m, irq);
	if (irq != VPIC_CASCADE_IRQ || m->single) {
		vector = m->vector_base | irq;
	} else {
		sirq = chip_pending(s, false);
		if (sirq == NO_IRQ) {
			sirq = 7;			/* the slave's spurious IR7 */
		} else {
			chip_ack(s, sirq);
		}
		vector = s->vector_base | sirq;
	}
	update_cascade(pic);
	return vector;
}
