// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/format.c, the formatter behind the hypervisor's printk, panic and
 * snprintf and the guests' printf, against the host C library's snprintf:
 * every conversion, length modifier, flag, width and precision
 * lib/format.h documents, edge
 * values (INT_MIN, LLONG_MIN, ULLONG_MAX), truncation at every buffer
 * size, and the deliberate differences (%p, NULL strings, unknown
 * conversions) as format.c documents them.
 *
 * format.c is compiled with -Dsnprintf=ep_snprintf -Dvsnprintf=ep_vsnprintf
 * (tests/unit/unit.mk) so that it does not replace the host's.
 */
#include <limits.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/host/compiler.h"
/* format.h's declarations, under the names format.c is compiled with. */
#define snprintf ep_snprintf
#define vsnprintf ep_vsnprintf
#include "lib/format.h"
#undef snprintf
#undef vsnprintf

#define OUT 512

static void compare(int line, const char *what, const char *ep, int ep_ret,
		    const char *host, int host_ret)
{
	if (ep_ret != host_ret || strcmp(ep, host))
		fail_msg("line %d: snprintf(%s): exitplan \"%s\" (%d), host \"%s\" (%d)",
			 line, what, ep, ep_ret, host, host_ret);
}

/* The same call to both formatters; the output and return must agree. */
#define SAME(...) do {								\
	char ep_[OUT], host_[OUT];						\
	int ep_ret_ = ep_snprintf(ep_, sizeof(ep_), __VA_ARGS__);		\
	int host_ret_ = snprintf(host_, sizeof(host_), __VA_ARGS__);		\
	compare(__LINE__, #__VA_ARGS__, ep_, ep_ret_, host_, host_ret_);	\
} while (0)

static void test_conversions_match_libc(void **state)
{
	(void)state;
	SAME("plain text, no conversion");
	SAME("%%");
	SAME("a%%b%%%%c");
	SAME("%s", "hello");
	SAME("%s", "");
	SAME("[%10s]", "right");
	SAME("[%-10s]", "left");
	SAME("[%.3s]", "truncated");
	SAME("[%.0s]", "gone");
	SAME("[%8.3s]", "abcdef");
	SAME("[%-8.3s]", "abcdef");
	SAME("[%.10s]", "short");
	SAME("[%*s]", 7, "star");
	SAME("[%*s]", -7, "star");
	SAME("[%.*s]", 2, "star");
	SAME("[%.*s]", -1, "negative precision is none");
	SAME("[%c]", 'x');
	SAME("[%5c]", 'x');
	SAME("[%-5c]", 'x');
	SAME("[%c%c%c]", 'a', 'b', 'c');
	SAME("%d", 0);
	SAME("%d", 1);
	SAME("%d", -1);
	SAME("%d", INT_MAX);
	SAME("%d", INT_MIN);
	SAME("%i", -12345);
	SAME("%i", INT_MIN);
	SAME("%u", 0u);
	SAME("%u", UINT_MAX);
	SAME("%x", 0u);
	SAME("%x", 0xdeadbeefu);
	SAME("%X", 0xdeadbeefu);
	SAME("%x", UINT_MAX);
	SAME("%ld", LONG_MIN);
	SAME("%ld", LONG_MAX);
	SAME("%lu", ULONG_MAX);
	SAME("%lx", ULONG_MAX);
	SAME("%lx", 0x123456789abcdefUL);
	SAME("%lld", LLONG_MIN);
	SAME("%lld", LLONG_MAX);
	SAME("%lli", -1LL);
	SAME("%llu", ULLONG_MAX);
	SAME("%llx", ULLONG_MAX);
	SAME("%llX", 0xfedcba9876543210ULL);
	SAME("%zu", (size_t)SIZE_MAX);
	SAME("%zx", (size_t)0x1000);
	SAME("%zd", (size_t)12345);
	SAME("%hd", (short)-32768);
	SAME("%hd", 65535);		/* converted to short: -1 */
	SAME("%hu", 70000);		/* converted to unsigned short */
	SAME("%hx", 0x12345);
	SAME("%hhd", 255);		/* converted to signed char: -1 */
	SAME("%hhu", 0x1ff);
	SAME("%hhx", 0xabc);
	/* Widths, zero padding, '-'. */
	SAME("[%5d]", 42);
	SAME("[%-5d]", 42);
	SAME("[%05d]", 42);
	SAME("[%05d]", -42);
	/* Defined by C, though GCC warns that the '0' does nothing. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat"
	SAME("[%-05d]", -42);	/* '-' wins over '0' */
	SAME("[%08.5d]", 42);	/* a precision too */
#pragma GCC diagnostic pop
	SAME("[%1d]", 12345);	/* width smaller than the number */
	SAME("[%020lld]", LLONG_MIN);
	SAME("[%25lld]", LLONG_MIN);
	SAME("[%-25lld]", LLONG_MIN);
	SAME("[%08x]", 0xbeefu);
	SAME("[%016llx]", 0x1234ULL);
	SAME("[%-8x]", 0xbeefu);
	SAME("[%*d]", 6, -3);
	SAME("[%*d]", -6, -3);
	SAME("[%0*d]", 6, -3);
	/* Precision on integers: minimum digits, and '0' ignored. */
	SAME("[%.5d]", 42);
	SAME("[%.5d]", -42);
	SAME("[%8.5d]", -42);
	SAME("[%-8.5d]", -42);
	SAME("[%.0d]", 0);	/* C: no digits at all */
	SAME("[%5.0d]", 0);
	SAME("[%.0x]", 0u);
	SAME("[%.0u]", 0u);
	SAME("[%.0d]", 7);
	SAME("[%.1d]", 0);
	SAME("[%.30llu]", ULLONG_MAX);
	SAME("[%.*d]", 4, 9);
	SAME("[%.*d]", -4, 9);
	/* '#': 0x/0X before a non-zero hex number only. */
	SAME("[%#x]", 0xabu);
	SAME("[%#X]", 0xabu);
	SAME("[%#x]", 0u);
	SAME("[%#10x]", 0xabu);
	SAME("[%#-10x]", 0xabu);
	SAME("[%#010x]", 0xabu);
	SAME("[%#.6x]", 0xabu);
	SAME("[%#.0x]", 0u);
	SAME("[%#llx]", ULLONG_MAX);
	SAME("[%#lx]", 0x80000000UL);
	/* Several conversions consume their arguments in order. */
	SAME("%s=%d %s=%#x %c %llu%%", "a", -1, "b", 0x10u, 'z', 1ULL << 63);
	SAME("exit %u (%s): %llu exits, %llu cycles", 10u, "CPUID", 123456789ULL, 987654321ULL);
}

/* What format.c documents where it differs from C or C leaves it undefined. */
static void test_documented_differences(void **state)
{
	/* volatile: GCC rightly warns of a NULL %s it can see. */
	const char *volatile null_str = NULL;
	char buf[OUT];
	int n;

	(void)state;
	/* %p: always 0x and 16 digits (the pointer's width), so addresses line up. */
	n = ep_snprintf(buf, sizeof(buf), "%p", (void *)0x1234);
	assert_string_equal(buf, "0x0000000000001234");
	assert_int_equal(n, 18);
	n = ep_snprintf(buf, sizeof(buf), "%p", (void *)0);
	assert_string_equal(buf, "0x0000000000000000");
	n = ep_snprintf(buf, sizeof(buf), "%p", (void *)UINTPTR_MAX);
	assert_string_equal(buf, "0xffffffffffffffff");
	n = ep_snprintf(buf, sizeof(buf), "[%p|%d]", (void *)0xfee00000, 7);
	assert_string_equal(buf, "[0x00000000fee00000|7]");

	/* A NULL string prints "(null)", cut by the precision like any string. */
	n = ep_snprintf(buf, sizeof(buf), "[%s]", null_str);
	assert_string_equal(buf, "[(null)]");
	assert_int_equal(n, 8);
	ep_snprintf(buf, sizeof(buf), "[%8s]", null_str);
	assert_string_equal(buf, "[  (null)]");
	ep_snprintf(buf, sizeof(buf), "[%.3s]", null_str);
	assert_string_equal(buf, "[(nu]");

	/* A NUL character is one character of output, as in C. */
	n = ep_snprintf(buf, sizeof(buf), "a%cb", '\0');
	assert_int_equal(n, 3);
	assert_memory_equal(buf, "a\0b", 4);
	n = ep_snprintf(buf, sizeof(buf), "[%3c]", '\0');
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "[  \0]", 6);
	n = ep_snprintf(buf, sizeof(buf), "[%-3c]", '\0');
	assert_int_equal(n, 5);
	assert_memory_equal(buf, "[\0  ]", 6);
}

/*
 * Unknown conversions are printed as written, so a format mistake is
 * visible in the log.  Built at run time: the compiler would (rightly)
 * reject these formats as literals.
 */
static int ep_fmt(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = ep_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

static void test_unknown_conversions_are_literal(void **state)
{
	char buf[OUT], fmt[32];
	int n;

	(void)state;
	strcpy(fmt, "a%qb");
	n = ep_fmt(buf, sizeof(buf), fmt);
	assert_string_equal(buf, "a%qb");
	assert_int_equal(n, 4);
	/* The directive with its flags, width and length modifier. */
	strcpy(fmt, "[%-08lq]");
	ep_fmt(buf, sizeof(buf), fmt);
	assert_string_equal(buf, "[%-08lq]");
	/* A '%' at the very end, or a directive cut short by the end. */
	strcpy(fmt, "100%");
	n = ep_fmt(buf, sizeof(buf), fmt);
	assert_string_equal(buf, "100%");
	assert_int_equal(n, 4);
	strcpy(fmt, "x%5.2l");
	ep_fmt(buf, sizeof(buf), fmt);
	assert_string_equal(buf, "x%5.2l");
	strcpy(fmt, "x%hh");
	ep_fmt(buf, sizeof(buf), fmt);
	assert_string_equal(buf, "x%hh");
	/* A literal directive consumes no argument: the next one gets it. */
	strcpy(fmt, "%q%d");
	ep_fmt(buf, sizeof(buf), fmt, 5);
	assert_string_equal(buf, "%q5");
}

/*
 * Truncation, as C99 snprintf: at most size - 1 characters and a NUL,
 * nothing written when size is 0, the return value always the length of
 * the full output; not one byte past the buffer (checked with a canary
 * and by ASan on an exactly sized heap buffer).
 */
static void check_truncation(int line, const char *fmt, ...)
{
	char full[OUT];
	int len;
	va_list ap, aq;

	va_start(ap, fmt);
	va_copy(aq, ap);
	len = vsnprintf(full, sizeof(full), fmt, aq);
	va_end(aq);
	assert_true(len >= 0 && len < OUT);
	for (size_t size = 0; size <= (size_t)len + 2; size++) {
		char *ep = malloc(size + 1), *host = malloc(size + 1);
		int ep_ret, host_ret;

		assert_non_null(ep);
		assert_non_null(host);
		memset(ep, '#', size + 1);
		memset(host, '#', size + 1);
		va_copy(aq, ap);
		ep_ret = ep_vsnprintf(size ? ep : NULL, size, fmt, aq);
		va_end(aq);
		va_copy(aq, ap);
		host_ret = vsnprintf(size ? host : NULL, size, fmt, aq);
		va_end(aq);
		if (ep_ret != host_ret || memcmp(ep, host, size + 1))
			fail_msg("line %d: \"%s\" into %zu bytes: exitplan \"%.*s\" (%d), host \"%.*s\" (%d)",
				 line, fmt, size, (int)size, ep, ep_ret, (int)size, host, host_ret);
		assert_int_equal(ep[size], '#');	/* the canary */
		free(ep);
		free(host);
	}
	va_end(ap);
}

static void test_truncation(void **state)
{
	(void)state;
	check_truncation(__LINE__, "");
	check_truncation(__LINE__, "x");
	check_truncation(__LINE__, "hello, world");
	check_truncation(__LINE__, "%s|%d|%08x", "abc", INT_MIN, 0xbeefu);
	check_truncation(__LINE__, "[%-20s]", "padded on the right");
	check_truncation(__LINE__, "[%30lld]", LLONG_MIN);
	check_truncation(__LINE__, "%#llx %llu %c", ULLONG_MAX, ULLONG_MAX, 'q');
	check_truncation(__LINE__, "%%%%%%");
}

/*
 * Many random directives: flags, width, precision, length modifier and
 * conversion drawn at random from the combinations C defines (no '#'
 * with d/i/u, no '0' or precision with c, no '0' with s), with edge and
 * random values, each compared with the host's output.
 */
static unsigned long long rnd_state = 0x9e3779b97f4a7c15ULL;

static unsigned long long rnd(void)
{
	/* xorshift64*: reproducible without the host's rand(). */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dULL;
}

static unsigned long long rnd_value(void)
{
	static const unsigned long long edge[] = {
		0, 1, 9, 10, 15, 16, 255, 0x7f, 0x80, 0x7fff, 0x8000, 0xffff,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL, ~0ULL, ~0ULL - 1,
	};
	unsigned long long r = rnd();

	switch (r % 4) {
	case 0:
		return edge[(r >> 8) % ARRAY_SIZE(edge)];
	case 1:
		return -(unsigned long long)((r >> 8) % 1000);	/* small negatives */
	case 2:
		return (r >> 8) % 100000;
	default:
		return rnd();
	}
}

static void random_case(void)
{
	static const char convs[] = "diuxXcs";
	static const char *const lens[] = { "", "hh", "h", "l", "ll", "z" };
	static const char *const strs[] = { "", "a", "exitplan", "VM exit reason", "0123456789abcdef" };
	char fmt[64], ep[OUT], host[OUT];
	char conv = convs[rnd() % (sizeof(convs) - 1)];
	const char *len = (conv == 'c' || conv == 's') ? "" : lens[rnd() % ARRAY_SIZE(lens)];
	bool num = conv != 'c' && conv != 's';
	unsigned long long v = rnd_value();
	const char *s = strs[rnd() % ARRAY_SIZE(strs)];
	int p = 0, ep_ret, host_ret;

	p += sprintf(fmt + p, "<%%");
	if (rnd() % 3 == 0)
		fmt[p++] = '-';
	if (num && rnd() % 3 == 0)
		fmt[p++] = '0';
	if ((conv == 'x' || conv == 'X') && rnd() % 3 == 0)
		fmt[p++] = '#';
	if (rnd() % 2)
		p += sprintf(fmt + p, "%u", (unsigned int)(rnd() % 30));
	if (conv != 'c' && rnd() % 3 == 0)
		p += sprintf(fmt + p, ".%u", (unsigned int)(rnd() % 25));
	p += sprintf(fmt + p, "%s%c>", len, conv);

#define BOTH(arg) do {								\
	ep_ret = ep_fmt(ep, sizeof(ep), fmt, arg);				\
	host_ret = snprintf(host, sizeof(host), fmt, arg);			\
} while (0)
	/* The host snprintf with a run-time format: checked by hand above. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (conv == 's') {
		BOTH(s);
	} else if (conv == 'c') {
		BOTH((int)(' ' + v % 95));
	} else if (!strcmp(len, "l")) {
		BOTH((unsigned long)v);
	} else if (!strcmp(len, "ll")) {
		BOTH(v);
	} else if (!strcmp(len, "z")) {
		BOTH((size_t)v);
	} else {
		BOTH((unsigned int)v);	/* int, short and char all pass as int */
	}
#pragma GCC diagnostic pop
#undef BOTH
	compare(__LINE__, fmt, ep, ep_ret, host, host_ret);
}

static void test_random_directives_match_libc(void **state)
{
	(void)state;
	for (int i = 0; i < 50000; i++)
		random_case();
}

/*
 * Regression: "%-p" was not "0x and 16 digits": '-' turned off the
 * forced zero padding, and the address came out as "0x1234" and spaces.
 * The 16 digits are a precision now; a width pads around them with
 * spaces on either side and never shortens them.
 */
static void test_pointer_width_and_flags(void **state)
{
	char buf[OUT];
	int n;

	(void)state;
	n = ep_snprintf(buf, sizeof(buf), "[%-p]", (void *)0x1234);
	assert_string_equal(buf, "[0x0000000000001234]");
	assert_int_equal(n, 20);
	ep_snprintf(buf, sizeof(buf), "[%-22p]", (void *)0x1234);
	assert_string_equal(buf, "[0x0000000000001234    ]");
	ep_snprintf(buf, sizeof(buf), "[%22p]", (void *)0x1234);
	assert_string_equal(buf, "[    0x0000000000001234]");
	/*
	 * '0' does not turn the padding into more digits: still 16 of them
	 * (through ep_fmt: GCC rejects '0' and a precision with %p literals).
	 */
	ep_fmt(buf, sizeof(buf), "[%022p]", (void *)0x1234);
	assert_string_equal(buf, "[    0x0000000000001234]");
	/* A width below 18 or a precision cannot shorten an address. */
	ep_fmt(buf, sizeof(buf), "[%5p|%.3p|%-1p]", (void *)0xfee00000, (void *)0x1,
		    (void *)UINTPTR_MAX);
	assert_string_equal(buf, "[0x00000000fee00000|0x0000000000000001|0xffffffffffffffff]");
}

/*
 * Regression: a field width or precision with more digits than an int
 * holds overflowed a signed int while it was parsed (undefined behaviour;
 * UBSan aborted).  C leaves such output undefined (its length does not
 * fit the int returned); format.c saturates every width and precision,
 * written or '*', at 100000 (FORMAT_FIELD_MAX), and is exact below it.
 */
#define FIELD_MAX 100000

static void test_huge_width(void **state)
{
	char buf[16], host[16], fmt[32];
	int n;

	(void)state;
	/* Built at run time: GCC would (rightly) warn of these as literals. */
	strcpy(fmt, "%99999999999d");
	n = ep_fmt(buf, sizeof(buf), fmt, 1);
	assert_int_equal(n, FIELD_MAX);
	assert_string_equal(buf, "               ");
	strcpy(fmt, "%.99999999999d");
	n = ep_fmt(buf, sizeof(buf), fmt, 1);
	assert_int_equal(n, FIELD_MAX);
	assert_string_equal(buf, "000000000000000");
	strcpy(fmt, "%-99999999999999999999999x|");
	n = ep_fmt(buf, sizeof(buf), fmt, 0xab);
	assert_int_equal(n, FIELD_MAX + 1);
	assert_string_equal(buf, "ab             ");
	strcpy(fmt, "%9999999999.9999999999s");
	n = ep_fmt(buf, sizeof(buf), fmt, "xyz");
	assert_int_equal(n, FIELD_MAX);

	/*
	 * '*' values (through ep_fmt: GCC rejects these as literals): INT_MIN
	 * has no positive int; INT_MAX would overflow the sums in put_num().
	 */
	n = ep_fmt(buf, sizeof(buf), "%*d", INT_MIN, 7);
	assert_int_equal(n, FIELD_MAX);
	assert_string_equal(buf, "7              ");
	n = ep_fmt(buf, sizeof(buf), "%*d", INT_MAX, -7);
	assert_int_equal(n, FIELD_MAX);
	n = ep_fmt(buf, sizeof(buf), "%#.*x", INT_MAX, 1u);
	assert_int_equal(n, FIELD_MAX + 2);
	assert_string_equal(buf, "0x0000000000000");
	n = ep_fmt(buf, sizeof(buf), "%*.*d", INT_MIN + 1, INT_MAX, -1);
	assert_int_equal(n, FIELD_MAX + 1);
	assert_string_equal(buf, "-00000000000000");

	/* At and below the limit the width is exact, as in C. */
	strcpy(fmt, "%100000d");
	n = ep_fmt(buf, sizeof(buf), fmt, 42);
	assert_int_equal(n, snprintf(host, sizeof(host), fmt, 42));
	assert_string_equal(buf, host);
	strcpy(fmt, "%-99999.99998u");
	n = ep_fmt(buf, sizeof(buf), fmt, 42u);
	assert_int_equal(n, snprintf(host, sizeof(host), fmt, 42u));
	assert_string_equal(buf, host);
}

/*
 * The decimal digits come from div10(), which on i386 divides in two
 * 32-bit DIVL steps (the guests have no __udivdi3): values whose high
 * half is not a multiple of 10, the largest, and powers of ten around
 * the 32-bit boundary.  Here the x86_64 path; tests/gen/test_lib_format32.py
 * runs the i386 one.
 */
static void test_decimal_of_64_bit_values(void **state)
{
	(void)state;
	SAME("%llu", (unsigned long long)UINT64_MAX);
	SAME("%lld", (long long)INT64_MIN);
	SAME("%lld", (long long)INT64_MAX);
	SAME("%llu", 10000000000000000000ULL);		/* 10^19 */
	SAME("%llu", 9999999999999999999ULL);
	SAME("%llu", 4294967295ULL);
	SAME("%llu", 4294967296ULL);
	SAME("%llu", 42949672950ULL);			/* (2^32 - 1) * 10 */
	SAME("%llu", 0x00000009ffffffffULL);		/* high half 9: remainder 9 into DIVL */
	SAME("[%025llu]", 0xfffffffffffffff6ULL);
	SAME("%llx|%llX", 0x8000000000000001ULL, 0xfedcba9876543210ULL);
}

/* vformat(): the same output, one character at a time to the sink, uncut. */
static char sunk[OUT * 2];
static size_t sunk_len;

static void sink(char c)
{
	assert_true(sunk_len < sizeof(sunk));
	sunk[sunk_len++] = c;
}

static int ep_sink(const char *fmt, ...)
{
	va_list ap;
	int n;

	sunk_len = 0;
	va_start(ap, fmt);
	n = vformat(sink, fmt, ap);
	va_end(ap);
	return n;
}

static void test_sink_gets_every_character(void **state)
{
	char buf[OUT];
	int n;

	(void)state;
	n = ep_sink("%s=%5d [%-4x] %llu%%", "exits", -42, 0xabu, (unsigned long long)UINT64_MAX);
	snprintf(buf, sizeof(buf), "%s=%5d [%-4x] %llu%%", "exits", -42, 0xabu,
		 (unsigned long long)UINT64_MAX);
	assert_int_equal(n, (int)strlen(buf));
	assert_int_equal(sunk_len, strlen(buf));
	assert_memory_equal(sunk, buf, sunk_len);
	/* A NUL character is sent like any other, and counted. */
	n = ep_sink("a%cb", '\0');
	assert_int_equal(n, 3);
	assert_int_equal(sunk_len, 3);
	assert_memory_equal(sunk, "a\0b", 3);
	/* Nothing is cut: a sink has no size (the buffer holds 1000 here). */
	n = ep_sink("%600d|", 7);
	assert_int_equal(n, 601);
	assert_int_equal(sunk_len, 601);
	assert_int_equal(sunk[599], '7');
	n = ep_sink("");
	assert_int_equal(n, 0);
	assert_int_equal(sunk_len, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conversions_match_libc),
		cmocka_unit_test(test_documented_differences),
		cmocka_unit_test(test_unknown_conversions_are_literal),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_random_directives_match_libc),
		cmocka_unit_test(test_pointer_width_and_flags),
		cmocka_unit_test(test_huge_width),
		cmocka_unit_test(test_decimal_of_64_bit_values),
		cmocka_unit_test(test_sink_gets_every_character),
	};

	return cmocka_run_group_tests_name("lib/format.c against the C library", tests,
					   NULL, NULL);
}
