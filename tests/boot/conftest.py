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
    """A directory of this test's own."""
    d = boot_out / re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)
    d.mkdir(parents=True, exist_ok=True)
    return d


# The whole boot suite must stay under 10 minutes on 2 cores.
SUITE_BUDGET_S = 600
_session_start = [0.0]


def pytest_sessionstart(session):
    _session_start[0] = time.monotonic()


def pytest_terminal_summary(terminalreporter):
    runs, secs = bootlib.STATS["runs"], bootlib.STATS["seconds"]
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
