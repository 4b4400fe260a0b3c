// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory and string functions, for the hypervisor and the test guests
 * (32-bit: the same instructions).  The bulk operations use the string
 * instructions: short, fast enough for a hypervisor that copies a guest
 * image once, and GCC cannot turn them back into a call to themselves.
 */
#include <stdint.h>

#include "string.h"

void *memset(void *s, int c, size_t n)
{
	void *d = s;

	asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return s;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	void *d = dst;

	asm volatile("rep movsb" : "+D"(d), "+S"(src), "+c"(n) : : "memory");
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	if (d <= s || d >= s + n)
		return memcpy(dst, src, n);
	/* Overlap with dst above src: copy backwards (DF=1, then clear it). */
	d += n - 1;
	s += n - 1;
	asm volatile("std; rep movsb; cld" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p - *q;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return p - s;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

size_t strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len < size - 1 ? len : size - 1;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}
