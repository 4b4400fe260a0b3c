# SPDX-License-Identifier: GPL-2.0-only
"""scripts/run-verdict.py: the line that ends `make run`, for each way a
run can end, judged from the files a run leaves, written here: the serial
log (COM1) and the hypervisor's own channel beside it (port 0xE9, Bochs's
stdout), which alone carries the verdict."""
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "run-verdict.py"

BANNER = "exitplan 1234abc (profile default)\nexitplan: 1 module\n"
STATS = ("# exitplan-stats-begin\nexitplan_stats:\n  version: 1\n  profile: default\n"
         "# exitplan-stats-end\n")


def verdict(tmp_path, serial_text, *extra, hv_text=None):
    """The verdict for a run whose COM1 said SERIAL_TEXT and whose port
    0xE9 said HV_TEXT (by default the same: the hypervisor prints on both)."""
    serial = tmp_path / "run-handlers-skx.serial"
    serial.write_text(serial_text.replace("\n", "\r\n"))   # COM1's line ends
    (tmp_path / "run-handlers-skx.stdout").write_text(
        serial_text if hv_text is None else hv_text)
    p = subprocess.run([sys.executable, str(SCRIPT), "--serial", str(serial),
                        "--cpu", "corei7_skylake_x", "--timeout", "300", *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stderr == ""
    lines = p.stdout.splitlines()
    assert len(lines) == 1, p.stdout
    return p.returncode, lines[0], serial


def test_pass_names_summary_status_serial_and_statistics(tmp_path):
    rc, line, serial = verdict(tmp_path, BANNER + "guest handlers: 83 passed, 0 failed\n" + STATS
                               + "exitplan: guest exit status 1\nexitplan: exit status 1\n")
    stats = serial.with_name("run-handlers-skx.stats.yaml")
    assert rc == 0
    assert line == (f"run: PASS: guest handlers: 83 passed, 0 failed; exit status 1 = the guest's "
                    f"isa-debug-exit code 0 (success); serial {serial}; statistics {stats}")
    assert stats.read_text() == STATS


def test_guest_failure(tmp_path):
    rc, line, _ = verdict(tmp_path, BANNER + "guest handlers: 80 passed, 3 failed\n"
                          "exitplan: exit status 3\n")
    assert rc == 1
    assert line.startswith("run: FAIL: guest handlers: 80 passed, 3 failed; exit status 3 = "
                           "the guest's isa-debug-exit code 1 (failure); serial ")
    assert "; statistics " not in line


@pytest.mark.parametrize("status, ok, meaning", [
    (0, True, "the guest stopped with status 0 by SHUTDOWN hypercall or power-off (success)"),
    (4, False, "the guest stopped with status 4 by SHUTDOWN hypercall or power-off (failure)"),
    (-2, False, "exitplan's setup failed before the guest ran"),
])
def test_status_meanings(tmp_path, status, ok, meaning):
    rc, line, _ = verdict(tmp_path, BANNER + f"exitplan: exit status {status}\n")
    assert rc == (0 if ok else 1)
    assert line.startswith(f"run: {'PASS' if ok else 'FAIL'}: exit status {status} = {meaning}; "
                           "serial "), line


def test_refusal_and_guest_stop_say_why(tmp_path):
    _, line, _ = verdict(tmp_path, BANNER + "exitplan: profile 'overcommit' refused: this CPU "
                         "lacks pause_loop_exiting\nexitplan: exit status -1\n")
    assert ("exit status -1 = exitplan refused to run (no VT-x, or the profile cannot run on "
            "this CPU): profile 'overcommit' refused: this CPU lacks pause_loop_exiting") in line
    _, line, _ = verdict(tmp_path, BANNER + "exitplan: guest stopped: triple fault\n"
                         "exitplan: exit status -3\n")
    assert "exit status -3 = the guest was stopped by exitplan: triple fault;" in line


def test_panic_timeout_and_no_status_line(tmp_path):
    rc, line, _ = verdict(tmp_path, BANNER + "exitplan: PANIC: out of pages\n")
    assert rc == 1 and line.startswith("run: FAIL: exitplan: PANIC: out of pages; serial ")
    rc, line, _ = verdict(tmp_path, BANNER + "guest handlers: starting\n", "--timed-out")
    assert rc == 1 and line.startswith("run: FAIL: TIMED OUT after 300 s; serial "), line
    rc, line, _ = verdict(tmp_path, BANNER)
    assert rc == 1 and "the run ended without exitplan's exit-status line" in line


def test_stale_statistics_of_an_earlier_run_are_removed(tmp_path):
    stats = tmp_path / "run-handlers-skx.stats.yaml"
    stats.write_text("old\n")
    _, line, _ = verdict(tmp_path, BANNER + "exitplan: exit status 1\n")
    assert not stats.exists() and "; statistics " not in line


def test_a_status_forged_on_com1_is_not_the_verdict(tmp_path):
    """The guest owns COM1: its "exit status 1" line there counts for
    nothing; the hypervisor's channel says the guest was stopped."""
    rc, line, _ = verdict(tmp_path, BANNER + "exitplan: guest stopped: nothing at all\n"
                          "exitplan: exit status 1\n",
                          hv_text=BANNER + "exitplan: guest stopped: triple fault\n"
                                           "exitplan: exit status -3\n")
    assert rc == 1 and "exit status -3 = the guest was stopped by exitplan: triple fault;" in line
