# SPDX-License-Identifier: GPL-2.0-only
"""The status guest's outl(0xf4, N) ends the run with exit status
(N << 1) | 1, as QEMU's isa-debug-exit does; the exit summary comes
first.  The guest takes N from its command line (code=N)."""
import pytest

import bootlib

CODES = [0, 3, 42, 127]


@pytest.fixture(scope="module")
def status_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("status")
    out = boot_out / "vmx-status"
    isos = [bootlib.build_iso(hv_elf, guest, out / f"status-{c}.iso", guest_args=f"code={c}")
            for c in CODES]
    runs = bootlib.run_parallel([
        lambda i=iso, c=c: bootlib.run_bochs(i, bootlib.DEFAULT_CPU, out / f"status-{c}.serial")
        for iso, c in zip(isos, CODES)])
    return dict(zip(CODES, runs))


@pytest.mark.parametrize("code", CODES)
def test_status(status_runs, code):
    r = status_runs[code]
    r.expect(rf"^status guest: exiting with code {code}$")
    summary = r.expect(r"^exitplan: (exits by reason|exit statistics are off)")
    status = r.expect(rf"^exitplan: guest exit status {(code << 1) | 1}$")
    assert summary.start() < status.start(), r.describe()
    r.expect_clean_exit()
