// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one formatter behind the hypervisor's printk, panic and snprintf
 * and the test guests' printf and snprintf.  It knows the conversions
 * they print with and nothing else; an unknown conversion is printed
 * literally so that a format mistake is visible.  The guests build it
 * -m32 without libgcc, so no 64-bit division in C: hex digits are
 * shifts, decimal ones div10().
 */
#include <stdbool.h>
#include <stdint.h>

#include "format.h"
#include "string.h"

struct out {
	format_sink sink;	/* NULL: into buf */
	char *buf;
	size_t size;
	size_t len;		/* what the full output would need */
};

static void put(struct out *o, char c)
{
	if (o->sink)
		o->sink(c);
	else if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

/*
 * Returns v / 10 and leaves v % 10 in *digit.  On i386 GCC may make a
 * 64-bit '/' a call to libgcc's __udivdi3 (it does at -O0 and -Os), which
 * a -nostdlib guest does not have: divide in two 32-bit DIVL steps, the
 * high half first.
 */
static uint64_t div10(uint64_t v, unsigned int *digit)
{
#ifdef __i386__
	uint32_t hi = (uint32_t)(v >> 32), lo = (uint32_t)v;
	uint32_t qhi = hi / 10, rem = hi % 10, qlo;

	/* rem < 10, so rem:lo / 10 fits in 32 bits: no #DE. */
	asm("divl %4" : "=a"(qlo), "=d"(rem) : "a"(lo), "d"(rem), "rm"(10u));
	*digit = rem;
	return ((uint64_t)qhi << 32) | qlo;
#else
	*digit = (unsigned int)(v % 10);
	return v / 10;
#endif
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

/*
 * The largest field width or precision: longer ones saturate here.  C
 * leaves an output longer than INT_MAX undefined (the return value cannot
 * say it); parsing "%99999999999d" into an int would overflow first.  No
 * buffer the hypervisor prints into comes near this, and put_num()'s int
 * arithmetic (width + prefix + sign) stays far from overflow.
 */
#define FORMAT_FIELD_MAX	100000

/* A decimal field (width or precision) from *fmt, saturated. */
static int parse_field(const char **fmt)
{
	int v = 0;

	while (**fmt >= '0' && **fmt <= '9') {
		v = v * 10 + (*(*fmt)++ - '0');
		if (v > FORMAT_FIELD_MAX)
			v = FORMAT_FIELD_MAX;
	}
	return v;
}

struct spec {
	bool left;		/* '-' */
	bool zero;		/* '0' */
	bool alt;		/* '#': 0x/0X before a non-zero hex number */
	int width;
	int precision;		/* -1: none */
};

static void put_str(struct out *o, const struct spec *sp, const char *s)
{
	size_t n;

	if (!s)
		s = "(null)";
	n = sp->precision >= 0 ? strnlen(s, sp->precision) : strlen(s);
	if (!sp->left)
		pad(o, ' ', sp->width - (int)n);
	for (size_t i = 0; i < n; i++)
		put(o, s[i]);
	if (sp->left)
		pad(o, ' ', sp->width - (int)n);
}

/* base is 10 or 16. */
static void put_num(struct out *o, const struct spec *sp, uint64_t v, bool negative,
		    unsigned int base, bool upper, const char *prefix)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, prefix_len = prefix ? (int)strlen(prefix) : 0;
	int zeros = 0, total;

	/* C: zero with precision 0 has no digits at all. */
	while (v || (n == 0 && sp->precision != 0)) {
		unsigned int d = (unsigned int)v & 0xf;

		if (base == 16)
			v >>= 4;
		else
			v = div10(v, &d);
		tmp[n++] = digits[d];
	}
	if (sp->precision > n)
		zeros = sp->precision - n;
	total = n + zeros + prefix_len + (negative ? 1 : 0);
	/* '0' pads after the sign and prefix; ignored with '-' or a precision. */
	if (sp->zero && !sp->left && sp->precision < 0 && sp->width > total) {
		zeros += sp->width - total;
		total = sp->width;
	}
	if (!sp->left)
		pad(o, ' ', sp->width - total);
	if (negative)
		put(o, '-');
	for (int i = 0; i < prefix_len; i++)
		put(o, prefix[i]);
	pad(o, '0', zeros);
	while (n)
		put(o, tmp[--n]);
	if (sp->left)
		pad(o, ' ', sp->width - total);
}

static void format(struct out *o, const char *fmt, va_list ap)
{
	while (*fmt) {
		struct spec sp = { .precision = -1 };
		int lmod = 0;		/* -2 hh, -1 h, 0 int, 1 l, 2 ll, 3 z */
		const char *start = fmt;
		uint64_t u;
		int64_t s;

		if (*fmt != '%') {
			put(o, *fmt++);
			continue;
		}
		fmt++;
		for (;; fmt++) {
			if (*fmt == '-')
				sp.left = true;
			else if (*fmt == '0')
				sp.zero = true;
			else if (*fmt == '#')
				sp.alt = true;
			else
				break;
		}
		if (*fmt == '*') {
			int w = va_arg(ap, int);

			/* A negative '*' width is '-' and its magnitude (INT_MIN has none as an int). */
			if (w < 0) {
				sp.left = true;
				w = w < -FORMAT_FIELD_MAX ? -FORMAT_FIELD_MAX : w;
				w = -w;
			}
			sp.width = w > FORMAT_FIELD_MAX ? FORMAT_FIELD_MAX : w;
			fmt++;
		} else {
			sp.width = parse_field(&fmt);
		}
		if (*fmt == '.') {
			fmt++;
			sp.precision = 0;
			if (*fmt == '*') {
				sp.precision = va_arg(ap, int);
				/* A negative '*' precision is no precision (C). */
				if (sp.precision < 0)
					sp.precision = -1;
				else if (sp.precision > FORMAT_FIELD_MAX)
					sp.precision = FORMAT_FIELD_MAX;
				fmt++;
			} else {
				sp.precision = parse_field(&fmt);
			}
		}
		if (*fmt == 'h') {
			lmod = -1;
			if (*++fmt == 'h') {
				lmod = -2;
				fmt++;
			}
		} else if (*fmt == 'l') {
			lmod = 1;
			if (*++fmt == 'l') {
				lmod = 2;
				fmt++;
			}
		} else if (*fmt == 'z') {
			lmod = 3;
			fmt++;
		}

		switch (*fmt) {
		case 'd':
		case 'i':
			if (lmod >= 1)
				s = lmod == 1 ? va_arg(ap, long) :
				    lmod == 2 ? va_arg(ap, long long) : (ptrdiff_t)va_arg(ap, size_t);
			else
				s = va_arg(ap, int);
			if (lmod == -1)
				s = (short)s;
			else if (lmod == -2)
				s = (signed char)s;
			/* Negate in unsigned arithmetic: INT64_MIN has no positive. */
			put_num(o, &sp, s < 0 ? -(uint64_t)s : (uint64_t)s, s < 0, 10, false, NULL);
			break;
		case 'u':
		case 'x':
		case 'X':
			if (lmod >= 1)
				u = lmod == 1 ? va_arg(ap, unsigned long) :
				    lmod == 2 ? va_arg(ap, unsigned long long) : va_arg(ap, size_t);
			else
				u = va_arg(ap, unsigned int);
			if (lmod == -1)
				u = (unsigned short)u;
			else if (lmod == -2)
				u = (unsigned char)u;
			put_num(o, &sp, u, false, *fmt == 'u' ? 10 : 16, *fmt == 'X',
				sp.alt && u && *fmt != 'u' ? (*fmt == 'X' ? "0X" : "0x") : NULL);
			break;
		case 'p':
			/*
			 * Always 0x and the pointer's width in digits (16; 8 in
			 * a 32-bit guest), so addresses line up in dumps: the
			 * digits are a precision, which a width (also with '-')
			 * pads around with spaces and never shortens.
			 */
			sp.precision = (int)(2 * sizeof(void *));
			put_num(o, &sp, (uintptr_t)va_arg(ap, void *), false, 16, false, "0x");
			break;
		case 's':
			put_str(o, &sp, va_arg(ap, const char *));
			break;
		case 'c':
			sp.precision = -1;
			{
				char c[2] = { (char)va_arg(ap, int), '\0' };

				/* A NUL char is still one character of output. */
				if (!c[0]) {
					pad(o, ' ', sp.left ? 0 : sp.width - 1);
					put(o, '\0');
					pad(o, ' ', sp.left ? sp.width - 1 : 0);
				} else {
					put_str(o, &sp, c);
				}
			}
			break;
		case '%':
			put(o, '%');
			break;
		default:
			/* Unknown: print the directive as written. */
			while (start < fmt)
				put(o, *start++);
			if (!*fmt)
				continue;
			put(o, *fmt);
			break;
		}
		fmt++;
	}
}

int vformat(format_sink sink, const char *fmt, va_list ap)
{
	struct out o = { .sink = sink };

	format(&o, fmt, ap);
	return (int)o.len;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { .buf = buf, .size = size };

	format(&o, fmt, ap);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
