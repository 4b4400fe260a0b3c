/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Host unit tests: the runtime services that the pure parts under test
 * call (printk from runtime/host/console.h, strlcpy from lib/string.h,
 * which glibc before 2.38 lacks), as fakes in fake_runtime.c.  printk
 * appends to a log the tests search for the code's messages.
 */
#ifndef EXITPLAN_FAKE_RUNTIME_H
#define EXITPLAN_FAKE_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>

#define FAKE_PRINTK_LOG	16384

/* Everything printk printed since the last reset, NUL-terminated. */
extern char fake_printk_log[FAKE_PRINTK_LOG];
extern unsigned int fake_printk_calls;

void fake_printk_reset(void);
/* true if @needle occurs in what printk printed. */
bool fake_printk_contains(const char *needle);

#endif /* EXITPLAN_FAKE_RUNTIME_H */
