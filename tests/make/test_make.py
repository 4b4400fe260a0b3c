# SPDX-License-Identifier: GPL-2.0-only
"""The build as a person sees it: one `  TAG     target` line per step as
Kbuild prints it, the full command lines with V=1, compiler errors shown
either way; `make help` names every user-facing target and variable of
the Makefile and its *.mk files; nothing in the tree names a path
outside the repository."""
import os
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
INTERNAL_VARIABLES = {"GEN_COMMON_SRCS", "GEN_PROFILE_SRCS", "GEN_PROFILE_DIR"}


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


def _outside_patterns():
    """What would name a place outside this clone, derived from where the
    clone stands (so no machine's path is written here): the absolute path
    of the folder holding it, and a folder beside the clone named with one
    of its subfolders (NAME/SUB, as in a copy's provenance), unless the
    clone itself has a NAME at its top."""
    top = REPO.resolve()
    parent = top.parent
    # (A clone at the top of the file system has no outside folder to name.)
    alts = [re.escape(str(parent) + os.sep)] if parent != parent.parent else []
    for sib in sorted(parent.iterdir()):
        if not sib.is_dir() or sib.resolve() == top or sib.name.startswith(".") or \
                (top / sib.name).exists():
            continue
        subs = sorted(re.escape(d.name) for d in sib.iterdir()
                      if d.is_dir() and not d.name.startswith("."))
        if subs:
            alts.append(r"(?<![\w./-])" + re.escape(sib.name) + "/(?:" + "|".join(subs) + r")\b")
    return re.compile("|".join(alts) or r"(?!)")


# A relative path that climbs: it names the outside when it leaves the
# clone both from the file's own folder and from the top (where make and
# the scripts run).
RELATIVE_UP = re.compile(r"(?<![\w./])(?:\.\./)+[\w.-][\w./-]*")


def _leaves_repo(file_dir, rel):
    top = REPO.resolve()
    return all(top not in (base / rel).resolve().parents and (base / rel).resolve() != top
               for base in (file_dir, top))


def test_no_path_outside_the_repository():
    """A fresh clone with nothing beside it must work: no file names a
    folder beside the clone, a relative path that climbs out of it, or an
    absolute path of the machine it was checked out on."""
    files = subprocess.run(["git", "ls-files"], cwd=REPO, stdout=subprocess.PIPE,
                           text=True, check=True).stdout.split()
    outside = _outside_patterns()
    hits = []
    for name in files:
        path = REPO / name
        if name.startswith("tests/make/") or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for i, l in enumerate(text.splitlines(), 1):
            if outside.search(l) or any(_leaves_repo(path.parent, m)
                                        for m in RELATIVE_UP.findall(l)):
                hits.append(f"{name}:{i}: {l.strip()}")
    assert not hits, "\n".join(hits)


def test_long_test_suites_run_side_by_side():
    """tests/gen and the boot tests use pytest-xdist where it is installed
    (deps-test installs python3-pytest-xdist): CHECK_JOBS generator
    workers; one boot module per worker, a worker more than BOOT_JOBS
    (bootlib's emulator slots keep the emulators to BOOT_JOBS)."""
    pytest.importorskip("xdist")
    gen = make("-n", "test-gen", "CHECK_JOBS=3", "V=1").stdout
    assert re.search(r"-m pytest .*-n 3 .*tests/gen", gen.replace("\\\n", " ")), gen
    boot = make("-n", "test-boot", "BOOT_JOBS=2", "BOOT_TESTS=tests/boot/x.py", "V=1").stdout
    assert re.search(r"EXITPLAN_BOOT_JOBS=2 .*-m pytest .*-n 3 --dist loadfile .*tests/boot/x\.py",
                     boot.replace("\\\n", " ")), boot
