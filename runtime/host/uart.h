/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 16550 UART on COM1, as the console and the 32-bit boot code's
 * failure path use it.  Usable from assembly.
 */
#ifndef EXITPLAN_UART_H
#define EXITPLAN_UART_H

#define COM1_BASE	0x3f8

/* Registers (offsets from the base). */
#define UART_THR	0	/* transmit holding (DLAB = 0) */
#define UART_DLL	0	/* divisor latch low (DLAB = 1) */
#define UART_IER	1
#define UART_DLM	1	/* divisor latch high (DLAB = 1) */
#define UART_FCR	2	/* write */
#define UART_IIR	2	/* read */
#define UART_LCR	3
#define UART_MCR	4
#define UART_LSR	5

#define UART_LCR_8N1		0x03
#define UART_LCR_DLAB		0x80
#define UART_FCR_ENABLE		0x01	/* enable FIFOs */
#define UART_FCR_ENABLE_CLEAR	0x07	/* enable FIFOs, clear RX and TX */
#define UART_IIR_FIFO_MASK	0xc0	/* both set: a 16550A with working FIFOs */
#define UART_MCR_DTR_RTS	0x03
#define UART_MCR_LOOP		0x10	/* loopback: transmitted bytes never leave */
#define UART_LSR_THRE		0x20	/* transmit holding register (FIFO) empty */
#define UART_LSR_TEMT		0x40	/* transmitter completely idle */

#define UART_CLOCK	115200
#define UART_BAUD	115200
#define UART_FIFO_SIZE	16

/*
 * Bound on each polling loop: an absent UART reads all ones (so THRE and
 * TEMT look set), but a broken one must not hang the hypervisor.
 */
#define UART_SPIN_LIMIT	1000000

#endif /* EXITPLAN_UART_H */
