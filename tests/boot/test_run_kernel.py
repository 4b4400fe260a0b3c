# SPDX-License-Identifier: GPL-2.0-only
"""`make run KERNEL=path CMDLINE=... MODULES=...`: a kernel from outside
the project, given by path, boots under exitplan as QEMU's `-kernel path
-append CMDLINE -initrd a,b` would boot it: its command line is its path
and then CMDLINE, the modules follow it in order, each with its path as
its command line, all of them whole (longer than 255 bytes here), and the
run ends with the verdict line; under the default profile and CPU model,
and under another of each.  QEMU booting the same kernel directly is the
reference: the guest sees the same command line and modules.  A command line too long to pass whole is
refused at boot with a message naming the limit, never cut.

The kernel is the handlers guest copied out of build/guest, so nothing
ties it to the project's own guest handling: it prints the command line
and every module (size, FNV-1a hash, command line) it received."""
import os
import re
import subprocess

import pytest

import bootlib

# runtime/host/boot_info.h
BOOT_CMDLINE_MAX = 4096


def fnv1a(data: bytes) -> int:
    h = 0x811c9dc5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xffffffff
    return h


@pytest.mark.parametrize("profile, cpu", [("default", bootlib.DEFAULT_CPU),
                                          ("hrtimer", "corei7_icelake_u")])
def test_run_outside_kernel_with_cmdline_and_modules(test_out, profile, cpu):
    kernel = test_out / "outside" / "kernel.elf"
    kernel.parent.mkdir(parents=True, exist_ok=True)
    kernel.write_bytes(bootlib.build_guest("handlers").read_bytes())

    # Two modules: one whose path (its command line) is longer than 255
    # bytes, one whose size is not a multiple of a page.
    deep = test_out / ("m" * 150) / ("n" * 120)
    deep.mkdir(parents=True, exist_ok=True)
    mod1 = deep / "environ.txt"
    mod1.write_text("TESTNAME=outside\nKEY=value\n")
    mod2 = test_out / "blob.bin"
    mod2.write_bytes(bytes((i * 13 + 5) & 0xff for i in range(3 * 4096 + 77)))
    assert len(str(mod1)) > 255

    pad = "pad=" + "x" * 300
    words = ["quick", "expect_modules=2", pad]
    cmdline = " ".join(words + ["expect_cmdline=" + ",".join(words)])

    build = os.path.relpath(bootlib.BUILD, bootlib.REPO) \
        if bootlib.BUILD.is_relative_to(bootlib.REPO) else str(bootlib.BUILD)
    # The ISO first (one make at a time in the suite), then `make run`,
    # which finds it built, in an emulator slot.
    run_vars = dict(KERNEL=str(kernel), CMDLINE=cmdline, MODULES=f"{mod1} {mod2}",
                    PROFILE=profile, CPU=cpu)
    bootlib.make("iso", **run_vars)
    p = bootlib.timed_run(["make", "--no-print-directory", f"BUILD={build}", "run",
                           *(f"{k}={v}" for k, v in run_vars.items()),
                           f"RUN_TIMEOUT={bootlib.BOOT_TIMEOUT}"] + bootlib.MAKE_ARGS,
                          cwd=bootlib.REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    assert p.returncode == 0, p.stdout[-4000:]
    verdict = p.stdout.rstrip("\n").splitlines()[-1]
    m = re.fullmatch(r"run: PASS: guest handlers: \d+ passed, 0 failed; exit status 1 = "
                     r"the guest's isa-debug-exit code 0 \(success\); serial (\S+)"
                     r"(?:; statistics (\S+))?", verdict)
    assert m, verdict
    serial = bootlib.REPO / m.group(1)
    assert serial == bootlib.BUILD / profile / f"run-kernel-kernel-{cpu}.serial"
    if m.group(2):
        assert "guest_args:" in (bootlib.REPO / m.group(2)).read_text()

    r = bootlib.read_result("bochs", cpu, serial)
    r.expect_clean_exit(1)
    r.expect(rf"^exitplan \S+ \(profile {profile}\)$")
    # The command line: the path first, then CMDLINE, whole.
    r.expect("^" + re.escape(f'guest handlers: command line "{kernel} {cmdline}"') + "$")
    r.expect(r"^PASS: multiboot-cmdline$")
    # The modules, in order, their contents and command lines intact.
    for i, m in enumerate((mod1, mod2)):
        data = m.read_bytes()
        r.expect("^" + re.escape(f"multiboot: module {i}: {len(data)} bytes, fnv1a "
                                 f"0x{fnv1a(data):08x}, command line \"{m}\"") + "$")
    r.expect(r"^PASS: multiboot-modules$")
    assert not r.findall(r"^FAIL: "), r.describe()

    # The reference: QEMU itself, booting the kernel directly.
    qemu = test_out / "qemu.serial"
    bootlib.timed_run(["timeout", str(bootlib.BOOT_TIMEOUT), "qemu-system-x86_64", "-display",
                       "none", "-no-reboot", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
                       "-kernel", str(kernel), "-append", cmdline, "-initrd", f"{mod1},{mod2}",
                       "-serial", f"file:{qemu}"], stdin=subprocess.DEVNULL,
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    q = bootlib.read_result("qemu", "qemu64", qemu)
    seen = r"^(?:guest handlers: command line|multiboot: module) .*$"
    assert re.findall(seen, q.serial, re.M) == re.findall(seen, r.serial, re.M), q.describe()
    assert len(re.findall(seen, q.serial, re.M)) == 3


def test_cmdline_too_long_is_refused(hv_elf, test_out):
    """One byte over the limit: a panic that names the limit, not a guest
    started with part of its command line."""
    guest = bootlib.build_guest("handlers")
    args = "quick pad=" + "y" * (BOOT_CMDLINE_MAX - len("quick pad="))
    assert len(args) == BOOT_CMDLINE_MAX
    iso = bootlib.build_iso(hv_elf, guest, test_out / "long.iso", guest_args=args)
    r = bootlib.run_bochs(iso, bootlib.DEFAULT_CPU, test_out / "long.serial")
    r.expect(rf"^exitplan: PANIC: module 0's command line is {BOOT_CMDLINE_MAX} bytes long: "
             rf"at most {BOOT_CMDLINE_MAX - 1} bytes \(BOOT_CMDLINE_MAX - 1\) are passed on")
    assert not r.find(r"^guest handlers: starting$"), r.describe()
