# SPDX-License-Identifier: GPL-2.0-only
"""Shared helpers for the generator's tests."""

import os
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


def can_run_32bit(tmp_path):
    """Whether gcc links a bare -m32 program (no 32-bit libc here) and the
    host runs it (a kernel without IA-32 emulation does not)."""
    probe = tmp_path / "probe32"
    r = subprocess.run(["gcc", "-m32", "-ffreestanding", "-nostdlib", "-static", "-no-pie", "-x", "c", "-",
                        "-o", str(probe)],
                       input='void _start(void) { asm volatile("int $0x80" :: "a"(1), "b"(0)); }\n',
                       capture_output=True, text=True)
    return r.returncode == 0 and subprocess.run([str(probe)]).returncode == 0


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
