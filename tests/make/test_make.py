# SPDX-License-Identifier: GPL-2.0-only
"""The build as a person sees it: one `  TAG     target` line per step as
Kbuild prints it, the full command lines with V=1, compiler errors shown
either way; `make help` names every user-facing target and variable of
the Makefile and its *.mk files; nothing in the tree names a path
outside the repository."""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAKEFILES = [REPO / "Makefile"] + sorted(REPO.glob("*/*.mk")) + sorted(REPO.glob("*/*/*.mk"))
QUIET_LINE = re.compile(r"^  [A-Z]+ +\S.*$")
# Phony targets that are steps of others, not meant to be typed.
INTERNAL_TARGETS = {"all", "FORCE", "unit-build", "bench-host-build"}
# Variables set with ?= that are plumbing, not knobs for a person.
INTERNAL_VARIABLES = {"GEN_COMMON_SRCS", "GEN_PROFILE_SRCS"}


def make(*args, check=True):
    p = subprocess.run(["make", "--no-print-directory", *args], cwd=REPO,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check:
        assert p.returncode == 0, p.stdout[-4000:]
    return p


@pytest.fixture
def build(tmp_path):
    return tmp_path / "build"


def test_quiet_build_prints_one_line_per_step(build):
    out = make(f"BUILD={build}", f"{build}/guest/status.elf").stdout
    lines = out.splitlines()
    assert lines, "nothing printed"
    bad = [l for l in lines if not QUIET_LINE.match(l)]
    assert not bad, f"lines not in the `  TAG     target` form: {bad}"
    assert "  CC      tests/guest/status/main.o" in lines
    assert "  AS      tests/guest/lib/entry.o" in lines
    assert f"  LD      {build}/guest/status.elf" in lines


def test_verbose_build_prints_command_lines(build):
    out = make("V=1", f"BUILD={build}", f"{build}/guest/status.elf").stdout
    assert re.search(r"^gcc .* -c tests/guest/status/main\.c -o ", out, re.M), out
    assert not any(QUIET_LINE.match(l) for l in out.splitlines()), out


def test_silent_build_prints_nothing(build):
    """make -s (bootlib builds that way) is silent, as Kbuild's."""
    assert make("-s", f"BUILD={build}", f"{build}/guest/status.elf").stdout == ""


def test_quiet_build_still_shows_errors(build):
    """A compiler error reaches the terminal in quiet mode."""
    p = make(f"BUILD={build}", "GUEST_CC=gcc -include no-such-header.h",
             f"{build}/guest/status.elf", check=False)
    assert p.returncode != 0
    assert "no-such-header.h" in p.stdout and "error" in p.stdout, p.stdout


def _phony_targets():
    targets = set()
    for mk in MAKEFILES:
        text = mk.read_text().replace("\\\n", " ")
        for m in re.finditer(r"^\.PHONY:(.*)$", text, re.M):
            targets.update(m.group(1).split())
    return targets - INTERNAL_TARGETS


def _knob_variables():
    names = set()
    for mk in MAKEFILES:
        names.update(re.findall(r"^([A-Z][A-Z0-9_]*)\s*\?=", mk.read_text(), re.M))
    return names - INTERNAL_VARIABLES


def test_help_lists_every_target_and_variable():
    text = make("help").stdout
    listed = set(re.findall(r"[A-Za-z][A-Za-z0-9_-]*", text))
    missing_t = sorted(t for t in _phony_targets() if t not in listed)
    missing_v = sorted(v for v in _knob_variables() if v not in listed)
    assert not missing_t, f"make help does not list targets {missing_t}"
    assert not missing_v, f"make help does not list variables {missing_v}"
    assert len(_phony_targets()) > 20      # the parse found the targets at all


def test_no_path_outside_the_repository():
    """A fresh clone with nothing beside it must work: no file names
    ../shared or an absolute path of this machine's workspace."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, stdout=subprocess.PIPE,
                           text=True, check=True).stdout.split()
    outside = re.compile(r"\.\./shared|(?<![\w.])shared/(data|design)|/work/")
    hits = []
    for name in files:
        path = REPO / name
        if name.startswith("tests/make/") or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        hits += [f"{name}:{i}: {l.strip()}" for i, l in enumerate(text.splitlines(), 1)
                 if outside.search(l)]
    assert not hits, "\n".join(hits)
