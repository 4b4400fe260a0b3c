/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The string and memory functions of the freestanding code, the
 * hypervisor's and the test guests' (lib/string.c, 64- and 32-bit alike).
 * GCC may emit calls to memset/memcpy/memmove/memcmp by itself, so they
 * must exist with the standard semantics.
 */
#ifndef EXITPLAN_STRING_H
#define EXITPLAN_STRING_H

#include <stddef.h>

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

#endif /* EXITPLAN_STRING_H */
