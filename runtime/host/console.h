/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The console: COM1 (115200 8N1, polled) and the Bochs/QEMU debug port
 * 0xE9.  Every byte goes to both.  Lines written by one printk call are
 * never interleaved with another CPU's.
 */
#ifndef EXITPLAN_CONSOLE_H
#define EXITPLAN_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>

#include "runtime/host/compiler.h"

void console_init(void);
void console_write(const char *s, size_t len);
/* Text from the guest (the PUTS hypercall): COM1 only, never port 0xE9. */
void console_write_guest(const char *s, size_t len);
/* Wait until the UART has shifted out its last bit (LSR.TEMT). */
void console_flush(void);
/* From panic(): stop waiting indefinitely for another CPU's console lock. */
void console_enter_panic(void);

/* Returns the number of characters written (after truncation to 1 KiB). */
int printk(const char *fmt, ...) __printf(1, 2);
int vprintk(const char *fmt, va_list ap) __printf(1, 0);

#endif /* EXITPLAN_CONSOLE_H */
