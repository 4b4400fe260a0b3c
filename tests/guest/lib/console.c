// SPDX-License-Identifier: GPL-2.0-only
/*
 * COM1 console and a small printf.  No 64-bit division helpers exist in a
 * -nostdlib 32-bit build, so decimal conversion of 64-bit values divides
 * by 10 with DIVL in two 32-bit steps.
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

/* q = n / 10, returns n % 10, without libgcc's __udivdi3. */
static unsigned int divmod10_u64(uint64_t *n)
{
	uint32_t hi = (uint32_t)(*n >> 32), lo = (uint32_t)*n;
	uint32_t qhi = hi / 10, rem = hi % 10, qlo;

	/* rem < 10, so rem:lo / 10 fits in 32 bits: no #DE. */
	asm("divl %4" : "=a"(qlo), "=d"(rem) : "a"(lo), "d"(rem), "rm"(10u));
	*n = ((uint64_t)qhi << 32) | qlo;
	return rem;
}

struct out {
	char *buf;		/* NULL: to the console */
	unsigned int size;
	unsigned int len;
};

static void out_char(struct out *o, char c)
{
	if (!o->buf)
		console_putc(c);
	else if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_number(struct out *o, uint64_t v, unsigned int base,
		       bool upper, bool negative, int width, char pad)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0;

	do {
		if (base == 16) {
			tmp[n++] = digits[v & 0xf];
			v >>= 4;
		} else {
			tmp[n++] = digits[divmod10_u64(&v)];
		}
	} while (v);
	if (negative && pad == '0') {
		out_char(o, '-');
		width--;
	} else if (negative) {
		tmp[n++] = '-';
	}
	for (int i = n; i < width; i++)
		out_char(o, pad);
	while (n)
		out_char(o, tmp[--n]);
}

static int format(struct out *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		int width = 0, longs = 0;
		char pad = ' ';
		uint64_t u;
		int64_t s;

		if (*fmt != '%') {
			out_char(o, *fmt);
			continue;
		}
		fmt++;
		if (*fmt == '0') {
			pad = '0';
			fmt++;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		while (*fmt == 'l') {
			longs++;
			fmt++;
		}
		switch (*fmt) {
		case 'd':
		case 'i':
			s = longs >= 2 ? va_arg(ap, long long) :
			    longs ? va_arg(ap, long) : va_arg(ap, int);
			u = s < 0 ? -(uint64_t)s : (uint64_t)s;
			out_number(o, u, 10, false, s < 0, width, pad);
			break;
		case 'u':
		case 'x':
		case 'X':
			u = longs >= 2 ? va_arg(ap, unsigned long long) :
			    longs ? va_arg(ap, unsigned long) :
				    va_arg(ap, unsigned int);
			out_number(o, u, *fmt == 'u' ? 10 : 16, *fmt == 'X',
				   false, width, pad);
			break;
		case 'p':
			out_char(o, '0');
			out_char(o, 'x');
			out_number(o, (uintptr_t)va_arg(ap, void *), 16, false,
				   false, 8, '0');
			break;
		case 'c':
			out_char(o, (char)va_arg(ap, int));
			break;
		case 's': {
			const char *str = va_arg(ap, const char *);
			int len = 0;

			if (!str)
				str = "(null)";
			while (str[len])
				len++;
			for (int i = len; i < width; i++)
				out_char(o, ' ');
			while (*str)
				out_char(o, *str++);
			break;
		}
		case '%':
			out_char(o, '%');
			break;
		case '\0':
			fmt--;	/* a lone '%' at the end */
			break;
		default:
			/* Show what was not understood rather than drop it. */
			out_char(o, '%');
			out_char(o, *fmt);
			break;
		}
	}
	return (int)o->len;
}

int vprintf(const char *fmt, va_list ap)
{
	struct out o = { .buf = NULL };

	return format(&o, fmt, ap);
}

int printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

int vsnprintf(char *buf, unsigned int size, const char *fmt, va_list ap)
{
	struct out o = { .buf = buf, .size = size };
	int n = format(&o, fmt, ap);

	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return n;
}

int snprintf(char *buf, unsigned int size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
