// SPDX-License-Identifier: GPL-2.0-only
/*
 * Polled 16550 UART on COM1 plus port 0xE9.
 *
 * COM1 is shared with the guest, which owns its ports (spec/runtime.yaml)
 * and may leave the UART in any state: before each write the console
 * checks the line control, the loopback bit, the FIFO and the divisor,
 * and programs the UART again if the guest changed them, so that the
 * hypervisor's report is never lost or garbled.  Port 0xE9 (Bochs's
 * port_e9_hack, QEMU's debugcon) is the hypervisor's alone: the guest
 * cannot write it, so what appears there, the verdict of a run above
 * all, cannot be forged (docs/THREAT-MODEL.md).  Text a guest hands the
 * hypervisor (the PUTS hypercall) goes to COM1 only.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "runtime/host/console.h"
#include "runtime/host/cpu.h"
#include "lib/format.h"
#include "runtime/host/percpu.h"
#include "runtime/host/spinlock.h"
#include "lib/string.h"
#include "runtime/host/uart.h"

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

#define UART_DIVISOR	(UART_CLOCK / UART_BAUD)

static void uart_set_divisor(void)
{
	outb(COM1_BASE + UART_LCR, UART_LCR_DLAB);
	outb(COM1_BASE + UART_DLL, UART_DIVISOR & 0xff);
	outb(COM1_BASE + UART_DLM, UART_DIVISOR >> 8);
	outb(COM1_BASE + UART_LCR, UART_LCR_8N1);
}

void console_init(void)
{
	outb(COM1_BASE + UART_IER, 0);			/* polled: no interrupts */
	uart_set_divisor();
	outb(COM1_BASE + UART_FCR, UART_FCR_ENABLE_CLEAR);
	outb(COM1_BASE + UART_MCR, UART_MCR_DTR_RTS);
	/* An 8250/16450 has no FIFO: one byte per THRE there. */
	if ((inb(COM1_BASE + UART_IIR) & UART_IIR_FIFO_MASK) == UART_IIR_FIFO_MASK)
		uart_fifo_size = UART_FIFO_SIZE;
	uart_ready = true;
}

/*
 * Undo what a guest may have done to COM1 that would lose or garble the
 * hypervisor's text: another word length, parity or stop bits, DLAB left
 * set (THR writes would go to the divisor), loopback (the bytes never
 * leave), FIFOs off (a full FIFO's worth per THRE would overrun), another
 * divisor.  The guest's interrupt enables and modem lines other than
 * loopback stay as they are: they lose nothing.  Reading IIR may take a
 * pending THRE interrupt from the guest; the bytes written next raise it
 * again when they drain.
 */
static void uart_reclaim(void)
{
	uint8_t mcr = inb(COM1_BASE + UART_MCR);
	unsigned int divisor;

	if (inb(COM1_BASE + UART_LCR) != UART_LCR_8N1) {
		uart_set_divisor();
	} else {
		outb(COM1_BASE + UART_LCR, UART_LCR_DLAB);
		divisor = inb(COM1_BASE + UART_DLL) | (unsigned int)inb(COM1_BASE + UART_DLM) << 8;
		outb(COM1_BASE + UART_LCR, UART_LCR_8N1);
		if (divisor != UART_DIVISOR)
			uart_set_divisor();
	}
	if (mcr & UART_MCR_LOOP)
		outb(COM1_BASE + UART_MCR, mcr & ~UART_MCR_LOOP);
	/* Enabling the FIFOs without the clear bits keeps what is queued. */
	if (uart_fifo_size > 1 &&
	    (inb(COM1_BASE + UART_IIR) & UART_IIR_FIFO_MASK) != UART_IIR_FIFO_MASK)
		outb(COM1_BASE + UART_FCR, UART_FCR_ENABLE);
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

static void console_write_locked(const char *s, size_t len, bool e9)
{
	if (e9)
		for (size_t i = 0; i < len; i++)
			outb(DEBUG_PORT_E9, s[i]);
	if (uart_ready) {
		uart_reclaim();
		uart_write(s, len);
	}
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

	console_write_locked(s, len, true);
	console_lock_release(taken);
}

void console_write_guest(const char *s, size_t len)
{
	bool taken = console_lock_acquire();

	console_write_locked(s, len, false);
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
