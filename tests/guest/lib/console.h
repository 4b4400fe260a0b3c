/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The guests' console: COM1 (0x3f8), which exitplan passes through, and a
 * copy of every byte on port 0xE9 (Bochs's "e9 hack", which prints at once
 * where COM1 is paced at the emulated baud rate; under QEMU without
 * -debugcon the port is unassigned and the write is dropped).  The copy
 * can be turned off with the command-line option e9=0.
 */
#ifndef GUEST_CONSOLE_H
#define GUEST_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>

#include "format.h"	/* snprintf, vsnprintf */

void console_init(void);
void console_set_e9(bool on);
void console_putc(char c);
void console_puts(const char *s);
/* Wait until COM1 has shifted out every byte (LSR.TEMT). */
void console_flush(void);

/* To the console, formatted by lib/format.c (the conversions of format.h). */
int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif /* GUEST_CONSOLE_H */
