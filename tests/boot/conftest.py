# SPDX-License-Identifier: GPL-2.0-only
"""Shared fixtures of the boot tests.  See bootlib.py for the helpers."""
import os
import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bootlib  # noqa: E402


@pytest.fixture(scope="session")
def hv_elf():
    """The default profile's hypervisor image, built once per session."""
    return bootlib.build_hv(os.environ.get("EXITPLAN_PROFILE", "default"))


@pytest.fixture(scope="session")
def boot_out():
    """Where the boot tests put ISOs, serial output and Bochs logs."""
    d = bootlib.BUILD / "boot-tests"
    d.mkdir(parents=True, exist_ok=True)
    return d


@pytest.fixture
def test_out(boot_out, request):
    """A directory of this test's own (its module's name in it: modules
    run side by side under pytest-xdist)."""
    name = f"{request.node.module.__name__}.{request.node.name}"
    d = boot_out / re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    d.mkdir(parents=True, exist_ok=True)
    return d


# The whole boot suite must stay under 10 minutes on 2 cores.
SUITE_BUDGET_S = 600
_session_start = [0.0]
# The emulator runs of the pytest-xdist workers, summed as each ends.
_workers = {"runs": 0, "seconds": 0.0}


def pytest_sessionstart(session):
    _session_start[0] = time.monotonic()


def pytest_sessionfinish(session):
    """In an xdist worker: hand this process's emulator runs to the controller."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["boot_stats"] = dict(bootlib.STATS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """In the xdist controller: a worker ended; add its emulator runs."""
    got = getattr(node, "workeroutput", {}).get("boot_stats") or {}
    _workers["runs"] += got.get("runs", 0)
    _workers["seconds"] += got.get("seconds", 0.0)


def pytest_terminal_summary(terminalreporter):
    runs = bootlib.STATS["runs"] + _workers["runs"]
    secs = bootlib.STATS["seconds"] + _workers["seconds"]
    if not runs:
        return
    elapsed = time.monotonic() - _session_start[0]
    terminalreporter.write_line(
        f"boot tests: {runs} emulator runs, {secs:.0f} s of emulator time, "
        f"{elapsed:.0f} s wall (budget {SUITE_BUDGET_S} s)")
    if elapsed > SUITE_BUDGET_S:
        terminalreporter.write_line(
            "boot tests: OVER BUDGET: share boots between tests (module-scoped "
            "fixtures, selftest=A,B) or run more of them in parallel (bootlib.run_parallel)",
            red=True)
