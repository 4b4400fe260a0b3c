// SPDX-License-Identifier: GPL-2.0-only
/*
 * runtime/devices/vpic.c: the guest's 8259A pair, programmed as a PC BIOS and a
 * BIOS-era kernel do.  Every expectation is the 8259A datasheet's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "runtime/devices/vpic.h"

static void out(struct vpic *pic, uint16_t port, uint8_t v)
{
	assert_true(vpic_io(pic, port, false, &v));
}

static uint8_t in(struct vpic *pic, uint16_t port)
{
	uint8_t v = 0xee;

	assert_true(vpic_io(pic, port, true, &v));
	return v;
}

/* The PC BIOS's initialisation: vectors 0x08 and 0x70, cascade on IR2. */
static void bios_init(struct vpic *pic, uint8_t icw4)
{
	vpic_reset(pic);
	out(pic, 0x20, 0x11);		/* ICW1: edge, cascade, ICW4 */
	out(pic, 0x21, 0x08);		/* ICW2 */
	out(pic, 0x21, 0x04);		/* ICW3: slave on IR2 */
	out(pic, 0x21, icw4);		/* ICW4: 8086 mode */
	out(pic, 0xa0, 0x11);
	out(pic, 0xa1, 0x70);
	out(pic, 0xa1, 0x02);		/* ICW3: slave ID 2 */
	out(pic, 0xa1, icw4);
	out(pic, 0x21, 0x00);		/* OCW1: all unmasked */
	out(pic, 0xa1, 0x00);
}

static void test_irq0_delivery_and_eoi(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	assert_false(vpic_has_interrupt(&pic));

	vpic_pulse_irq(&pic, 0);
	assert_true(vpic_has_interrupt(&pic));
	out(&pic, 0x20, 0x0a);		/* OCW3: read IRR */
	assert_int_equal(in(&pic, 0x20), 0x01);

	assert_int_equal(vpic_intack(&pic), 0x08);
	assert_false(vpic_has_interrupt(&pic));
	assert_int_equal(in(&pic, 0x20), 0x00);	/* IRR cleared by INTA */
	out(&pic, 0x20, 0x0b);		/* OCW3: read ISR */
	assert_int_equal(in(&pic, 0x20), 0x01);

	/* A second period while IR0 is in service: requested, not given. */
	vpic_pulse_irq(&pic, 0);
	assert_false(vpic_has_interrupt(&pic));
	out(&pic, 0x20, 0x20);		/* non-specific EOI */
	assert_int_equal(in(&pic, 0x20), 0x00);	/* ISR empty */
	assert_true(vpic_has_interrupt(&pic));
	assert_int_equal(vpic_intack(&pic), 0x08);
}

static void test_edge_needs_low_between(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	vpic_set_irq(&pic, 1, true);
	assert_int_equal(vpic_intack(&pic), 0x09);
	out(&pic, 0x20, 0x20);
	vpic_set_irq(&pic, 1, true);	/* still high: no new edge */
	assert_false(vpic_has_interrupt(&pic));
	vpic_set_irq(&pic, 1, false);
	vpic_set_irq(&pic, 1, true);
	assert_true(vpic_has_interrupt(&pic));
}

static void test_mask_and_priority(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	out(&pic, 0x21, 0x01);		/* mask IR0 */
	assert_int_equal(in(&pic, 0x21), 0x01);
	vpic_pulse_irq(&pic, 0);
	assert_false(vpic_has_interrupt(&pic));
	vpic_pulse_irq(&pic, 3);
	assert_int_equal(vpic_intack(&pic), 0x0b);
	/* IR3 in service: IR4 waits, IR1 (higher) interrupts it. */
	vpic_pulse_irq(&pic, 4);
	assert_false(vpic_has_interrupt(&pic));
	vpic_pulse_irq(&pic, 1);
	assert_int_equal(vpic_intack(&pic), 0x09);
	out(&pic, 0x20, 0x20);		/* ends IR1, the highest in service */
	out(&pic, 0x20, 0x0b);
	assert_int_equal(in(&pic, 0x20), 0x08);
	out(&pic, 0x20, 0x63);		/* specific EOI of IR3 */
	assert_int_equal(in(&pic, 0x20), 0x00);
	assert_int_equal(vpic_intack(&pic), 0x0c);
	/* Unmasking IR0 lets its latched request through. */
	out(&pic, 0x20, 0x20);
	out(&pic, 0x21, 0x00);
	assert_int_equal(vpic_intack(&pic), 0x08);
}

static void test_slave_through_cascade(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	vpic_pulse_irq(&pic, 8);	/* RTC */
	assert_true(vpic_has_interrupt(&pic));
	assert_int_equal(vpic_intack(&pic), 0x70);
	out(&pic, 0xa0, 0x0b);
	assert_int_equal(in(&pic, 0xa0), 0x01);
	out(&pic, 0x20, 0x0b);
	assert_int_equal(in(&pic, 0x20), 0x04);	/* the cascade IR in service */
	vpic_pulse_irq(&pic, 12);
	assert_false(vpic_has_interrupt(&pic));	/* master's IR2 in service */
	out(&pic, 0xa0, 0x20);
	out(&pic, 0x20, 0x20);
	assert_int_equal(vpic_intack(&pic), 0x74);

	/* Masked at the slave: nothing reaches the master. */
	out(&pic, 0xa0, 0x20);
	out(&pic, 0x20, 0x20);
	out(&pic, 0xa1, 0x08);
	vpic_pulse_irq(&pic, 11);
	assert_false(vpic_has_interrupt(&pic));
	/* Masked at the master's IR2: likewise. */
	out(&pic, 0xa1, 0x00);
	out(&pic, 0x21, 0x04);
	assert_false(vpic_has_interrupt(&pic));
	out(&pic, 0x21, 0x00);
	assert_int_equal(vpic_intack(&pic), 0x73);
}

static void test_auto_eoi(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x03);		/* ICW4: 8086, AEOI */
	vpic_pulse_irq(&pic, 0);
	assert_int_equal(vpic_intack(&pic), 0x08);
	out(&pic, 0x20, 0x0b);
	assert_int_equal(in(&pic, 0x20), 0x00);	/* nothing stays in service */
	vpic_pulse_irq(&pic, 0);
	assert_int_equal(vpic_intack(&pic), 0x08);
}

static void test_spurious_and_poll(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	assert_int_equal(vpic_intack(&pic), 0x0f);	/* no request: IR7 */
	out(&pic, 0x20, 0x0b);
	assert_int_equal(in(&pic, 0x20), 0x00);	/* and it is not in service */

	vpic_pulse_irq(&pic, 5);
	out(&pic, 0x20, 0x0c);		/* OCW3: poll */
	assert_int_equal(in(&pic, 0x20), 0x85);
	out(&pic, 0x20, 0x0c);
	assert_int_equal(in(&pic, 0x20), 0x00);	/* IR5 in service, none else */
	out(&pic, 0x20, 0x0b);
	assert_int_equal(in(&pic, 0x20), 0x20);
}

static void test_rotation(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	vpic_pulse_irq(&pic, 0);
	vpic_pulse_irq(&pic, 4);
	assert_int_equal(vpic_intack(&pic), 0x08);
	out(&pic, 0x20, 0xa0);		/* rotate on non-specific EOI: IR0 lowest */
	vpic_pulse_irq(&pic, 0);
	assert_int_equal(vpic_intack(&pic), 0x0c);	/* IR4 now before IR0 */
	out(&pic, 0x20, 0x20);
	out(&pic, 0x20, 0xc7);		/* set priority: IR7 lowest again */
	vpic_pulse_irq(&pic, 6);
	assert_int_equal(vpic_intack(&pic), 0x08);
}

static void test_icw1_resets(void **state)
{
	struct vpic pic;

	(void)state;
	bios_init(&pic, 0x01);
	out(&pic, 0x21, 0xfb);
	vpic_set_irq(&pic, 1, true);
	out(&pic, 0x20, 0x11);		/* re-initialise the master */
	assert_int_equal(in(&pic, 0x21), 0x00);	/* IMR cleared */
	out(&pic, 0x21, 0x20);		/* ICW2: vector base 0x20 */
	out(&pic, 0x21, 0x04);
	out(&pic, 0x21, 0x01);
	assert_int_equal(in(&pic, 0x21), 0x00);	/* ICW4 was not OCW1 */
	/* The old request went with the re-initialisation; a new edge
	 * requests with the new vector base. */
	assert_false(vpic_has_interrupt(&pic));
	vpic_set_irq(&pic, 1, false);
	vpic_set_irq(&pic, 1, true);
	assert_int_equal(vpic_intack(&pic), 0x21);
	assert_false(vpic_io(&pic, 0x22, true, &(uint8_t){ 0 }));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_irq0_delivery_and_eoi),
		cmocka_unit_test(test_edge_needs_low_between),
		cmocka_unit_test(test_mask_and_priority),
		cmocka_unit_test(test_slave_through_cascade),
		cmocka_unit_test(test_auto_eoi),
		cmocka_unit_test(test_spurious_and_poll),
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_icw1_resets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
