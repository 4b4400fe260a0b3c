# SPDX-License-Identifier: GPL-2.0-only
"""Shared helpers for the generator's tests."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "gen" / "exitplan-gen"
PYTHON = "/usr/bin/python3"

sys.path.insert(0, str(ROOT / "gen"))


def run_gen(*args, env=None, cwd=ROOT):
    """Run the generator as users do; returns the CompletedProcess."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run([PYTHON, str(GEN), *map(str, args)], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=120)


PROBE32 = 'void _start(void) { asm volatile("int $0x80" :: "a"(1), "b"(0)); }\n'


def _runs(cmd):
    """None when cmd ran and exited 0; else how the host refused it.  A
    kernel without IA-32 emulation refuses at exec (ENOEXEC, an OSError,
    not a status); one that half supports it may kill it with a signal."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except OSError as e:
        return e.strerror or str(e)
    except subprocess.TimeoutExpired:
        return "timed out"
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}"
    if r.returncode != 0:
        return f"exit status {r.returncode}"
    return None


def i386_runner(tmp_path):
    """How this host runs a bare 32-bit Linux program (a static -m32
    -nostdlib executable using int $0x80): [] natively, ["qemu-i386"]
    under user-mode emulation where the kernel refuses IA-32 programs
    (qemu-i386 translates the code and the system calls itself, so it
    needs nothing of the kernel).  Skips the calling test, with the
    reason, when neither works."""
    probe = tmp_path / "probe32"
    r = subprocess.run(["gcc", "-m32", "-ffreestanding", "-nostdlib", "-static", "-no-pie", "-x", "c", "-",
                        "-o", str(probe)], input=PROBE32, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("gcc cannot link a bare -m32 program: " + (r.stderr.strip().splitlines() or ["?"])[-1])
    native = _runs([str(probe)])
    if native is None:
        return []
    qemu = shutil.which("qemu-i386")
    if qemu is None:
        pytest.skip(f"the host refuses 32-bit programs ({native}) and there is no qemu-i386 "
                    "(Debian package qemu-user, which make deps-test installs)")
    emulated = _runs([qemu, str(probe)])
    if emulated is not None:
        pytest.skip(f"the host refuses 32-bit programs ({native}) and qemu-i386 fails too ({emulated})")
    return [qemu]


def snapshot(directory):
    """{relpath: (bytes, mtime_ns)} of every file under directory."""
    out = {}
    for dirpath, _, files in os.walk(directory):
        for f in files:
            path = os.path.join(dirpath, f)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, directory)] = (fh.read(), os.stat(path).st_mtime_ns)
    return out


@pytest.fixture(scope="session")
def generator():
    """An in-process Generator over the checkout (spec/ loaded once)."""
    from exitplan_gen.main import Generator
    return Generator(str(ROOT))


PROFILE_HEAD = """profile: {name}
description: A profile written by the generator's tests.
exit_mix:
  source: {{kind: estimate, basis: "test"}}
  unit: share
  reasons: {{{reasons}}}
"""


@pytest.fixture
def write_profile(tmp_path):
    """write_profile(name, reasons, rest) -> path of a profile in tmp_path."""
    def write(name, reasons, rest):
        path = tmp_path / "profiles" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(PROFILE_HEAD.format(name=name, reasons=reasons) + rest)
        return path
    return write
