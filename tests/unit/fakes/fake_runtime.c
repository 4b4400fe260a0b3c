// SPDX-License-Identifier: GPL-2.0-only
/* Fakes of runtime services for host unit tests (fake_runtime.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fake_runtime.h"

char fake_printk_log[FAKE_PRINTK_LOG];
unsigned int fake_printk_calls;
static size_t log_len;

void fake_printk_reset(void)
{
	fake_printk_log[0] = '\0';
	log_len = 0;
	fake_printk_calls = 0;
}

bool fake_printk_contains(const char *needle)
{
	return strstr(fake_printk_log, needle) != NULL;
}

/* The runtime's prototypes (console.h), not included: they would clash
 * with the host's <string.h> in this file.  strlcpy() is lib/string.c's,
 * linked beside this file (unit.mk UNIT_FAKE_RUNTIME). */
int vprintk(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int vprintk(const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(fake_printk_log + log_len, sizeof(fake_printk_log) - log_len, fmt, aq);
	va_end(aq);
	if (n > 0)
		log_len += (size_t)n < sizeof(fake_printk_log) - log_len ?
			   (size_t)n : sizeof(fake_printk_log) - log_len - 1;
	fake_printk_calls++;
	return n;
}

int printk(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintk(fmt, ap);
	va_end(ap);
	return n;
}
