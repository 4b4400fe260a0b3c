// SPDX-License-Identifier: GPL-2.0-only
/*
 * Polled 16550 UART on COM1 plus port 0xE9.
 *
 * COM1 is what the boot tests read (Bochs writes it to a file, paced at
 * the emulated baud rate); port 0xE9 shows every byte at once on Bochs's
 * stdout and on QEMU's debugcon, which is what `make run` streams.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "console.h"
#include "cpu.h"
#include "percpu.h"
#include "spinlock.h"
#include "string.h"
#include "uart.h"

#define DEBUG_PORT_E9	0xe9

static bool uart_ready;
static unsigned int uart_fifo_size = 1;	/* bytes to write per THRE */
static spinlock_t console_lock = SPINLOCK_INIT;
/* CPU that holds console_lock, so a fault while printing cannot deadlock. */
static int console_owner = -1;
/* Set by panic(): the lock is only tried for a while, never waited on forever. */
static bool console_panicking;

/* Spins on a busy console lock before a panicking CPU prints regardless. */
#define CONSOLE_PANIC_SPIN_LIMIT	10000000

void console_init(void)
{
	unsigned int divisor = UART_CLOCK / UART_BAUD;

	outb(COM1_BASE + UART_IER, 0);			/* polled: no interrupts */
	outb(COM1_BASE + UART_LCR, UART_LCR_DLAB);
	outb(COM1_BASE + UART_DLL, divisor & 0xff);
	outb(COM1_BASE + UART_DLM, divisor >> 8);
	outb(COM1_BASE + UART_LCR, UART_LCR_8N1);
	outb(COM1_BASE + UART_FCR, UART_FCR_ENABLE_CLEAR);
	outb(COM1_BASE + UART_MCR, UART_MCR_DTR_RTS);
	/* An 8250/16450 has no FIFO: one byte per THRE there. */
	if ((inb(COM1_BASE + UART_IIR) & UART_IIR_FIFO_MASK) == UART_IIR_FIFO_MASK)
		uart_fifo_size = UART_FIFO_SIZE;
	uart_ready = true;
}

static void uart_wait(uint8_t lsr_bit)
{
	for (unsigned int i = 0; i < UART_SPIN_LIMIT; i++) {
		if (inb(COM1_BASE + UART_LSR) & lsr_bit)
			return;
		cpu_relax();
	}
}

/* Serial wants CR LF; port 0xE9 gets the text as is. */
static void uart_write(const char *s, size_t len)
{
	unsigned int room = 0;

	for (size_t i = 0; i < len; i++) {
		bool crlf = s[i] == '\n';

		for (int k = crlf ? 0 : 1; k < 2; k++) {
			/* With THRE set the whole FIFO is free: fill it. */
			if (!room) {
				uart_wait(UART_LSR_THRE);
				room = uart_fifo_size;
			}
			outb(COM1_BASE + UART_THR, k == 0 ? '\r' : s[i]);
			room--;
		}
	}
}

static void console_write_locked(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		outb(DEBUG_PORT_E9, s[i]);
	if (uart_ready)
		uart_write(s, len);
}

/*
 * Take the console lock unless this CPU already holds it (an exception
 * or panic in the middle of a printk): then print anyway, interleaving
 * beats losing the report.
 */
static bool console_lock_acquire(void)
{
	int me = (int)this_cpu_id();

	if (READ_ONCE(console_owner) == me)
		return false;
	if (READ_ONCE(console_panicking)) {
		/* The holder may be the CPU that died: do not wait for it forever. */
		for (unsigned int i = 0; i < CONSOLE_PANIC_SPIN_LIMIT; i++) {
			if (spin_trylock(&console_lock)) {
				WRITE_ONCE(console_owner, me);
				return true;
			}
			cpu_relax();
		}
		return false;
	}
	spin_lock(&console_lock);
	WRITE_ONCE(console_owner, me);
	return true;
}

void console_enter_panic(void)
{
	WRITE_ONCE(console_panicking, true);
}

static void console_lock_release(bool taken)
{
	if (!taken)
		return;
	WRITE_ONCE(console_owner, -1);
	spin_unlock(&console_lock);
}

void console_write(const char *s, size_t len)
{
	bool taken = console_lock_acquire();

	console_write_locked(s, len);
	console_lock_release(taken);
}

void console_flush(void)
{
	if (uart_ready)
		uart_wait(UART_LSR_TEMT);
}

int vprintk(const char *fmt, va_list ap)
{
	char buf[1024];
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);

	if (n >= (int)sizeof(buf))
		n = sizeof(buf) - 1;
	console_write(buf, n);
	return n;
}

int printk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintk(fmt, ap);
	va_end(ap);
	return n;
}
