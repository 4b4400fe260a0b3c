# SPDX-License-Identifier: GPL-2.0-only
"""The overcommit workload of `make bench` (tests/bench/overcommit.py):
the profile variants it generates, parsing the guest's and the
scheduler's lines, the table it adds to results.md and overcommit.csv.
No timing: the shape of the report, never a number's size.

    /usr/bin/python3 -m pytest -q tests/bench/test_overcommit.py
"""
import csv
import re
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import dispatchcmp  # noqa: E402
import overcommit  # noqa: E402

RUN = """overcommit: 4 CPUs in the MADT, 50 acquisitions each, spinning lock
PASS: all-vcpus-arrived
overcommit: 4 vCPUs x 50 acquisitions: 200000 ticks, 1000 ticks per acquisition\r
guest overcommit: 6 passed, 0 failed
# exitplan-stats-begin
exitplan_stats:
  version: 1
  profile: overcommit
  level: counts
  vcpus:
    - id: 0
      exits: 12
      reasons:
        PAUSE_INSTRUCTION: {count: 10}
        HLT: {count: 2}
    - id: 1
      exits: 5
      reasons:
        PAUSE_INSTRUCTION: {count: 5}
# exitplan-stats-end
exitplan: scheduler: CPU 0: 30 VMCS switches, 12 PAUSE-loop yields, 0 plain-PAUSE yields
exitplan: scheduler: CPU 1: 20 VMCS switches, 0 PAUSE-loop yields, 3 plain-PAUSE yields
"""


def test_parse_a_complete_run():
    r = overcommit.parse("2:1", "PAUSE-loop exiting", RUN)
    assert r.status == "ok"
    assert (r.ticks, r.per_acquisition) == (200000, 1000)
    assert r.exits == {"PAUSE_INSTRUCTION": 15, "HLT": 2}
    assert (r.switches, r.yields) == (50, 15)


def test_parse_failures():
    assert overcommit.parse("2:1", "x", RUN.replace("6 passed, 0 failed",
                                                    "5 passed, 1 failed")).status == "failed checks"
    assert overcommit.parse("2:1", "x", "overcommit: 4 CPUs\n").status == "incomplete"
    assert overcommit.parse("2:1", "x", RUN, timed_out=True).status == "timeout"


@pytest.mark.parametrize("mode,pause", [m for m in overcommit.PAUSE_MODES if m[1]])
def test_variants_generate(tmp_path, mode, pause):
    """Each variant is the overcommit profile with only its pause line (and
    the PLE requirement) changed, and the generator accepts it."""
    src = (REPO / "profiles" / "overcommit.yaml").read_text()
    name = "overcommit-pause-" + pause.split("mode: ")[1].rstrip("}")
    text = overcommit.variant_text(src, name, pause)
    y, o = yaml.safe_load(text), yaml.safe_load(src)
    assert y["profile"] == name
    assert y["execution"]["pause"] == yaml.safe_load(pause.strip())["pause"]
    assert y["features"]["require"] == []
    for k in ("apic", "msrs", "dispatch"):
        assert y[k] == o[k]
    _, gdir = dispatchcmp.write_and_generate(REPO, tmp_path, name, text, tmp_path / "gen")
    assert (gdir / "vmcs_setup.c").is_file()


def test_render_and_csv(tmp_path):
    ok = overcommit.parse("2:1", "PAUSE-loop exiting", RUN)
    slow = overcommit.parse("2:1", "no PAUSE exiting",
                            RUN.replace("200000 ticks, 1000", "800000 ticks, 4000"))
    sleep = overcommit.parse("2:1", overcommit.SLEEP_MODE,
                             RUN.replace("200000 ticks, 1000", "300000 ticks, 1500"))
    late = overcommit.parse("2:1", overcommit.SLEEP_NO_PREEMPT_MODE,
                            RUN.replace("200000 ticks, 1000", "500000 ticks, 2500"))
    lines = overcommit.render([ok, slow, sleep, late])
    table = [ln for ln in lines if ln.startswith("| 2:1 |")]
    assert table == ["| 2:1 | 200000 (1000) |  | 800000 (4000) | 300000 (1500) | "
                     "500000 (2500) | 4.0x |"], lines
    assert overcommit.serial_path(tmp_path, "2:1", overcommit.SLEEP_MODE).name == \
        "2to1-sleeping.serial"
    assert overcommit.serial_path(tmp_path, "2:1", overcommit.SLEEP_NO_PREEMPT_MODE).name == \
        "2to1-sleeping-no-wake-preempt.serial"
    assert overcommit.SLEEP_MODE in overcommit.modes_of("1:1")
    assert overcommit.SLEEP_NO_PREEMPT_MODE in overcommit.modes_of("3:1")
    assert any(ln.startswith("| 1:1 |") for ln in lines)
    assert any("Bochs ticks are retired instructions" in ln for ln in lines)
    assert any(ln.startswith("- 2:1, PAUSE-loop exiting: PAUSE_INSTRUCTION 15, HLT 2")
               for ln in lines)
    assert not any("ple_window |" in ln for ln in lines)
    w = overcommit.parse("2:1", overcommit.sweep_mode(1024), RUN)
    lines = overcommit.render([ok, w])
    assert "| 1024 | 200000 (1000) | 15 | 15 |" in lines, lines
    assert "| 4096 | 200000 (1000) | 15 | 15 |" in lines, lines
    assert overcommit.serial_path(tmp_path, "2:1", overcommit.sweep_mode(1024)).name == \
        "2to1-pause-loop-window-1024.serial"
    overcommit.write_csv([ok, slow], tmp_path / "o.csv")
    rows = list(csv.DictReader((tmp_path / "o.csv").open()))
    assert [r["ticks"] for r in rows] == ["200000", "800000"]
    assert overcommit.render([]) == []



def test_turn_taking_ratios_outlast_a_slice():
    """At 3:1 the vCPUs take turns on one CPU: unless each one's share of the
    work outlasts its slice, no lock holder is ever descheduled and the
    PAUSE settings cannot differ (what the 3:1 row once measured, k=200).
    About 900 ticks an acquisition (the 1:1 runs)."""
    slice_ticks = int(re.search(r"^#define SCHED_DEFAULT_SLICE_TICKS\s+(\d+)$",
                                (REPO / "runtime" / "vm" / "sched.h").read_text(), re.M).group(1))
    m = re.search(r"^\s+slice: (\d+)", (REPO / "profiles" / "overcommit.yaml").read_text(), re.M)
    slice_ticks = int(m.group(1)) if m else slice_ticks
    one_cpu = [(ratio, k) for ratio, ncpu, _, k in overcommit.RATIOS if ncpu == 1]
    assert one_cpu == [("3:1", overcommit.K_3TO1)]
    for ratio, k in one_cpu:
        assert k * 900 > 2 * slice_ticks, ratio
