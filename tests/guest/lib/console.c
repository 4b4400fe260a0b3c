// SPDX-License-Identifier: GPL-2.0-only
/*
 * COM1 console, and printf on it: the formatter is lib/format.c's, the
 * hypervisor's, which also gives the guests snprintf and vsnprintf.
 */
#include <stdint.h>

#include "console.h"
#include "x86.h"

#define COM1		0x3f8
#define UART_THR	0	/* transmit holding (DLAB=0) */
#define UART_DLL	0	/* divisor latch low (DLAB=1) */
#define UART_IER	1
#define UART_DLM	1
#define UART_FCR	2
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5
#define UART_LCR_DLAB	0x80
#define UART_LCR_8N1	0x03
#define UART_LSR_THRE	0x20
#define UART_LSR_TEMT	0x40
#define DEBUG_PORT_E9	0xe9

/*
 * Bound every wait on the UART: a missing UART must not hang the guest.
 * The waits do not PAUSE: under PAUSE-loop exiting each spin would add
 * PAUSE exits to the workload's exit statistics.
 */
#define UART_SPIN_LIMIT	1000000

static bool uart_present;
static bool e9_enabled = true;

void console_init(void)
{
	outb(COM1 + UART_IER, 0);		/* polled: no interrupts */
	outb(COM1 + UART_LCR, UART_LCR_DLAB);
	outb(COM1 + UART_DLL, 1);		/* 115200 baud */
	outb(COM1 + UART_DLM, 0);
	outb(COM1 + UART_LCR, UART_LCR_8N1);
	outb(COM1 + UART_FCR, 0xc7);		/* enable and clear FIFOs */
	outb(COM1 + UART_MCR, 0x03);		/* DTR, RTS */
	/* An absent UART floats the bus: every register reads 0xff. */
	uart_present = inb(COM1 + UART_LSR) != 0xff;
	/*
	 * Bochs's port_e9_hack and QEMU's debugcon read back 0xE9.  Under
	 * exitplan the port is the hypervisor's verdict channel: the guest
	 * does not own it, it reads all ones, and a write would only cost
	 * an exit, so the guest prints on COM1 alone.
	 */
	if (e9_enabled && inb(DEBUG_PORT_E9) != DEBUG_PORT_E9)
		e9_enabled = false;
}

void console_set_e9(bool on)
{
	e9_enabled = on;
}

void console_putc(char c)
{
	if (c == '\n')
		console_putc('\r');
	if (e9_enabled && c != '\r')
		outb(DEBUG_PORT_E9, (uint8_t)c);
	if (!uart_present)
		return;
	for (int i = 0; i < UART_SPIN_LIMIT; i++) {
		if (inb(COM1 + UART_LSR) & UART_LSR_THRE)
			break;
	}
	outb(COM1 + UART_THR, (uint8_t)c);
}

void console_puts(const char *s)
{
	while (*s)
		console_putc(*s++);
}

void console_flush(void)
{
	if (!uart_present)
		return;
	for (int i = 0; i < UART_SPIN_LIMIT; i++) {
		if (inb(COM1 + UART_LSR) & UART_LSR_TEMT)
			return;
	}
}

int vprintf(const char *fmt, va_list ap)
{
	return vformat(console_putc, fmt, ap);
}

int printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vformat(console_putc, fmt, ap);
	va_end(ap);
	return n;
}
