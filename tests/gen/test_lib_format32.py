# SPDX-License-Identifier: GPL-2.0-only
"""lib/format.c as the test guests build it (tests/guest/guest.mk: -m32
-ffreestanding -nostdlib, no libgcc), without Bochs: the object, as
built and at -O0 and -Os, calls nothing but lib/string.c (no
__udivdi3/__umoddi3 for 64-bit division), and, run as a bare 32-bit program, prints 64-bit decimals through the
i386 div10() path, %p with 8 digits, and the same through vformat()'s
sink as through vsnprintf."""

import os
import shlex
import shutil
import subprocess

import pytest

from conftest import ROOT, i386_runner

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None,
                                reason="no gcc or nm")

# (format, C arguments, what C prints): the edges of the two-step DIVL.
CASES = [
    ("%llu", "18446744073709551615ULL", "18446744073709551615"),
    ("%lld", "-9223372036854775807LL - 1", "-9223372036854775808"),
    ("%lld", "9223372036854775807LL", "9223372036854775807"),
    ("%llu", "10000000000000000000ULL", "10000000000000000000"),
    ("%llu", "4294967296ULL", "4294967296"),
    ("%llu", "0x9ffffffffULL", str(0x9ffffffff)),
    ("[%025llu]", "0xfffffffffffffff6ULL", "[%025d]" % 0xfffffffffffffff6),
    ("%u %d", "4294967295u, -2147483647 - 1", "4294967295 -2147483648"),
    ("%09llx|%llX", "0x123456789ULL, 0xfedcba9876543210ULL", "123456789|FEDCBA9876543210"),
    ("%p", "(void *)0x1234", "0x00001234"),
    ("at %p: %02x", "(void *)0xfee00000, 7u", "at 0xfee00000: 07"),
    ("[%05d|%5d|%-5d]", "-42, -42, -42", "[-0042|  -42|-42  ]"),
    ("%#x %s %c%%", '255u, "str", \'c\'', "0xff str c%"),
]

HARNESS = r"""
#include <stdarg.h>

#include "format.h"

static void sys_write(const char *s, unsigned int n)
{
	int ret;

	/* write(1, s, n); the kernel returns in EAX. */
	asm volatile("int $0x80" : "=a"(ret) : "a"(4), "b"(1), "c"(s), "d"(n) : "memory");
}

static void sink(char c)
{
	sys_write(&c, 1);
}

static int bad;

/* vsnprintf's output, then vformat's to the sink, each on a line. */
__attribute__((format(printf, 1, 2))) static void both(const char *fmt, ...)
{
	char buf[128];
	va_list ap, aq;
	int n;

	va_start(ap, fmt);
	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	sys_write(buf, n);
	sys_write("\n", 1);
	bad |= vformat(sink, fmt, aq) != n;
	sys_write("\n", 1);
	va_end(aq);
	va_end(ap);
}

void _start(void)
{
%s
	asm volatile("int $0x80" : : "a"(1), "b"(bad));
	for (;;)
		;
}
"""

CASE = '\tboth("%s", %s);\n'


def build_objects(tmp_path):
    """format.c and string.c compiled by guest.mk's own rule and flags;
    also the command line that compiled format.c."""
    build = tmp_path / "build"
    objs = [build / "guest" / "shared" / f"{n}.c.o" for n in ("format", "string")]
    # Not the flags of a make this runs under (make -s check would hide the command).
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "V=1", "--no-print-directory", f"BUILD={build}", *map(str, objs)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    cmd = [l for l in r.stdout.splitlines() if " -c lib/format.c " in l]
    assert len(cmd) == 1, r.stdout
    return objs, shlex.split(cmd[0])


# GCC 12 turns a 64-bit division by 10 into multiplications at -O2, but
# calls __udivdi3/__umoddi3 at -O0 and -Os: built at each, so a division
# that slips back in is caught whatever guest.mk's -O says.
@pytest.mark.parametrize("opt", ["", "-O0", "-Os"])
def test_guest_format_needs_no_libgcc(tmp_path, opt):
    (fmt, _), cmd = build_objects(tmp_path)
    if opt:
        fmt = tmp_path / f"format{opt}.o"
        cmd = [a for a in cmd if a not in ("-MMD", "-MP")]
        cmd = cmd[:cmd.index("-o")] + [opt, "-o", str(fmt)]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
    undefined = set(subprocess.run(["nm", "-u", "--format=just-symbols", str(fmt)],
                                   capture_output=True, text=True, check=True).stdout.split())
    undefined.discard("_GLOBAL_OFFSET_TABLE_")
    assert not undefined & {"__udivdi3", "__umoddi3", "__divdi3", "__moddi3"}, undefined
    assert undefined <= {"strlen", "strnlen"}, f"lib/format.c (32-bit) calls {sorted(undefined)}"


def test_guest_format_prints_64_bit_values(tmp_path):
    """A bare _start and the i386 write and exit system calls (no 32-bit
    libc here); under qemu-i386 where the host kernel runs no 32-bit
    programs."""
    runner = i386_runner(tmp_path)
    objs, _ = build_objects(tmp_path)
    src = tmp_path / "harness.c"
    exe = tmp_path / "harness"
    src.write_text(HARNESS % "".join(CASE % (f, a) for f, a, _ in CASES))
    r = subprocess.run(["gcc", "-m32", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffreestanding",
                        "-fno-pic", "-no-pie", "-nostdlib", "-static", "-mgeneral-regs-only",
                        "-iquote", str(ROOT / "lib"), str(src), *map(str, objs), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([*runner, str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, "vformat() returned another length than vsnprintf()"
    want = [w for _, _, w in CASES for w in (w, w)]
    assert run.stdout.splitlines() == want
