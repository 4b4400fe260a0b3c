/* SPDX-License-Identifier: GPL-2.0-only */
/* The hypervisor's formatter (format.c), under printk and the reports. */
#ifndef EXITPLAN_FORMAT_H
#define EXITPLAN_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

#include "compiler.h"

/*
 * printk's formatter: %d %i %u %x %X %p %s %c %%, length modifiers hh h l
 * ll z, flags '-', '0' and '#' (0x before a non-zero hex number), a field
 * width and a precision (also '*').
 * Returns the length the full output would have, like C99.
 */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __printf(3, 0);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

#endif /* EXITPLAN_FORMAT_H */
