/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The string and memory functions of the freestanding runtime.  GCC may
 * emit calls to memset/memcpy/memmove/memcmp by itself, so they must
 * exist with the standard semantics.
 */
#ifndef EXITPLAN_STRING_H
#define EXITPLAN_STRING_H

#include <stdarg.h>
#include <stddef.h>

#include "compiler.h"

void *memset(void *s, int c, size_t n);
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
/* Copies at most size - 1 bytes and always terminates; returns strlen(src). */
size_t strlcpy(char *dst, const char *src, size_t size);

/*
 * printk's formatter: %d %i %u %x %X %p %s %c %%, length modifiers hh h l
 * ll z, flags '-', '0' and '#' (0x before a non-zero hex number), a field
 * width and a precision (also '*').
 * Returns the length the full output would have, like C99.
 */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) __printf(3, 0);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

#endif /* EXITPLAN_STRING_H */
