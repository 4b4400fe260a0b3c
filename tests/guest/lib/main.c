// SPDX-License-Identifier: GPL-2.0-only
/*
 * What every guest does before its own checks, and the test framework:
 * check/skip bookkeeping, the summary line, the exit, the command line.
 */
#include <stdarg.h>

#include "apic.h"
#include "console.h"
#include "idt.h"
#include "boot.h"
#include "string.h"
#include "test.h"
#include "x86.h"

/* isa-debug-exit: QEMU and exitplan both trap it and report (code << 1) | 1 */
#define DEBUG_EXIT_PORT	0xf4
/* Bochs's own power-off port (the string "Shutdown"): bare Bochs only. */
#define BOCHS_SHUTDOWN_PORT	0x8900

#define CMDLINE_MAX	1024

uint32_t multiboot_magic;
const struct multiboot_info *multiboot_info;

static char cmdline_buf[CMDLINE_MAX];
static unsigned int passed, failed;

void guest_start(uint32_t magic, const struct multiboot_info *mbi);

static void cmdline_save(void)
{
	const char *src = "";

	if (multiboot_magic == MULTIBOOT_BOOTLOADER_MAGIC &&
	    (multiboot_info->flags & MULTIBOOT_INFO_CMDLINE) &&
	    multiboot_info->cmdline)
		src = (const char *)(uintptr_t)multiboot_info->cmdline;
	/* Copy it: the loader's copy may sit where a check will write. */
	for (unsigned int i = 0; i < CMDLINE_MAX - 1 && src[i]; i++)
		cmdline_buf[i] = src[i];
}

void guest_start(uint32_t magic, const struct multiboot_info *mbi)
{
	multiboot_magic = magic;
	multiboot_info = mbi;
	cmdline_save();

	if (cmdline_has("e9") && cmdline_u32("e9", 1) == 0)
		console_set_e9(false);
	console_init();
	idt_init();
	/*
	 * The BIOS leaves the 8259 unmasked with the PIT on vector 8, which
	 * the guest would take for a #DF: mask every line.  The guests use
	 * only the local APIC -- but for `firmware-pic`, which leaves the
	 * 8259s and the 8254 as the firmware did (untouched: no port access)
	 * for a check that the firmware's timer runs (handlers guest).
	 */
	if (!cmdline_has("firmware-pic"))
		pic_mask_all();

	printf("guest %s: starting\n", guest_name);
	if (magic != MULTIBOOT_BOOTLOADER_MAGIC)
		printf("guest %s: not started by a multiboot loader (EAX 0x%08x)\n",
		       guest_name, magic);
	printf("guest %s: command line \"%s\"\n", guest_name, cmdline_buf);

	guest_main();
	test_finish();
}

static void vreport(const char *verdict, const char *name, const char *fmt,
		    va_list ap)
{
	printf("%s: %s", verdict, name);
	if (fmt) {
		printf(" (");
		vprintf(fmt, ap);
		printf(")");
	}
	printf("\n");
}

bool check(const char *name, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		printf("PASS: %s\n", name);
		return true;
	}
	failed++;
	va_start(ap, fmt);
	vreport("FAIL", name, fmt, ap);
	va_end(ap);
	return false;
}

void skip(const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("SKIP", name, fmt, ap);
	va_end(ap);
}

unsigned int tests_passed(void)
{
	return passed;
}

unsigned int tests_failed(void)
{
	return failed;
}

void guest_exit(uint32_t code)
{
	console_flush();
	outl(DEBUG_EXIT_PORT, code);
	/*
	 * Still here: no isa-debug-exit.  On bare Bochs (tests/guest/
	 * bochs-bare.sh) power off instead; the exit code is lost, the
	 * summary line says it all.  Elsewhere the port is unassigned.
	 */
	printf("guest %s: no isa-debug-exit device, powering off\n", guest_name);
	console_flush();
	outsb(BOCHS_SHUTDOWN_PORT, "Shutdown", 8);
	for (;;)
		asm volatile("cli; hlt");
}

void test_finish(void)
{
	printf("guest %s: %u passed, %u failed\n", guest_name, passed, failed);
	guest_exit(failed ? 1 : 0);
}

void test_abort(void)
{
	failed++;
	test_finish();
}

const char *cmdline(void)
{
	return cmdline_buf;
}

/* Start of the word key or key=value in the command line, or NULL. */
static const char *cmdline_find(const char *key)
{
	size_t klen = strlen(key);
	const char *p = cmdline_buf;

	while (*p) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, klen) &&
		    (p[klen] == '=' || p[klen] == ' ' || p[klen] == '\0'))
			return p;
		while (*p && *p != ' ')
			p++;
	}
	return NULL;
}

bool cmdline_has(const char *key)
{
	return cmdline_find(key) != NULL;
}

const char *cmdline_value(const char *key, char *buf, size_t size)
{
	const char *p = cmdline_find(key);
	size_t i = 0;

	if (!p || !size)
		return NULL;
	p += strlen(key);
	if (*p == '=')
		p++;
	while (*p && *p != ' ' && i < size - 1)
		buf[i++] = *p++;
	buf[i] = '\0';
	return buf;
}

uint32_t cmdline_u32(const char *key, uint32_t def)
{
	char buf[16];
	const char *v = cmdline_value(key, buf, sizeof(buf));
	uint32_t n = 0, base = 10;

	if (!v || !*v)
		return def;
	if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		base = 16;
		v += 2;
		if (!*v)
			return def;
	}
	for (; *v; v++) {
		uint32_t d;

		if (*v >= '0' && *v <= '9')
			d = *v - '0';
		else if (base == 16 && *v >= 'a' && *v <= 'f')
			d = *v - 'a' + 10;
		else if (base == 16 && *v >= 'A' && *v <= 'F')
			d = *v - 'A' + 10;
		else
			return def;
		n = n * base + d;
	}
	return n;
}
