/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The one printf formatter (format.c) of the hypervisor (64-bit: printk,
 * panic and the reports) and the test guests (32-bit: their printf and
 * snprintf).
 */
#ifndef EXITPLAN_FORMAT_H
#define EXITPLAN_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

/*
 * Conversions %d %i %u %x %X %p %s %c %%, length modifiers hh h l ll z,
 * flags '-', '0' and '#' (0x before a non-zero hex number), a field width
 * and a precision (also '*').  %p is 0x and the pointer's width in hex
 * digits (16 in the hypervisor, 8 in a guest).  An unknown conversion is
 * printed as written.  Each returns the length the full output has (or
 * would have), like C99.
 */

/* Where vformat() sends its output, one character at a time. */
typedef void (*format_sink)(char c);

int vformat(format_sink sink, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
int snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* EXITPLAN_FORMAT_H */
