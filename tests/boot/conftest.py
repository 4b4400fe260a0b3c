# SPDX-License-Identifier: GPL-2.0-only
"""Shared fixtures of the boot tests.  See bootlib.py for the helpers."""
import os
import re
import sys
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
