# SPDX-License-Identifier: GPL-2.0-only
"""The Linux workloads of `make bench` (tests/bench/linux.py): parsing a
run's serial output, the command lines, the table it adds to results.md
and linux.csv.  No Bochs, no timing: the shape of the report, never a
number's size.

    /usr/bin/python3 -m pytest -q tests/bench/test_linux_bench.py
"""
import csv
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import linux  # noqa: E402

HRTIMER, PINGPONG, OVERCOMMIT = linux.WORKLOADS

HV_RUN = """Command line: console=ttyS0 exitplan.run=pingpong\r
tsc: Detected 10.002 MHz TSC\r
linux-init: running pingpong\r
workload pingpong: n=200 mean=14955 p50=13630 p99=19185 ticks\r
linux-init: pingpong exited with status 0\r
linux-init: done, powering off\r
# exitplan-stats-begin
exitplan_stats:
  version: 1
  profile: linux-pipe-pingpong
  level: counts
  vcpus:
    - id: 0
      exits: 12
      reasons:
        MSR_WRITE: {count: 10}
        HLT: {count: 2}
    - id: 1
      exits: 5
      reasons:
        MSR_WRITE: {count: 5}
# exitplan-stats-end
"""
BARE_RUN = """tsc: Detected 10.000 MHz processor
linux-init: running pingpong
workload pingpong: n=200 mean=7441 p50=6850 p99=9000 ticks
linux-init: pingpong exited with status 0
"""
SPIN_RUN = """tsc: Detected 10.000 MHz processor
linux-init: running spinlock
workload spinlock: n=8 mean=300 p50=290 p99=410 ticks
linux-init: spinlock exited with status 0
"""


def test_parse_runs():
    hv = linux.parse(PINGPONG, PINGPONG.profile, HV_RUN)
    assert hv.status == "ok" and hv.tsc_mhz == "10.002"
    assert hv.row == {"workload": "pingpong", "n": 200, "mean": 14955, "p50": 13630,
                      "p99": 19185}
    assert hv.exits == {"MSR_WRITE": 15, "HLT": 2}
    bare = linux.parse(PINGPONG, linux.BARE, BARE_RUN)
    assert bare.status == "ok" and bare.row["mean"] == 7441 and bare.exits == {}


def test_parse_failures():
    assert linux.parse(PINGPONG, "x", HV_RUN, timed_out=True).status == "timeout"
    assert linux.parse(PINGPONG, "x", "linux-init: running pingpong\n").status == "incomplete"
    bad = BARE_RUN.replace("status 0", "status 3")
    assert linux.parse(PINGPONG, "x", bad).status == "failed (status 3)"
    # Another program's line is not this workload's.
    assert linux.parse(HRTIMER, "x", BARE_RUN).status == "incomplete"


def test_command_lines():
    assert linux.cmdline("console=ttyS0", OVERCOMMIT, False) == \
        "console=ttyS0 exitplan.run=spinlock exitplan.args=8,2000"
    assert linux.cmdline("console=ttyS0", HRTIMER, True) == \
        f"console=ttyS0 exitplan.run=hrtimer tsc_early_khz={linux.BARE_TSC_KHZ} idle=halt"
    # Every workload runs under a profile that exists.
    for w in linux.WORKLOADS:
        assert (linux.REPO / "profiles" / f"{w.profile}.yaml").is_file()


def test_render_and_csv(tmp_path):
    res = [linux.parse(PINGPONG, PINGPONG.profile, HV_RUN),
           linux.parse(PINGPONG, linux.BARE, BARE_RUN),
           linux.Result(OVERCOMMIT, OVERCOMMIT.profile, 2, "timeout"),
           linux.parse(OVERCOMMIT, linux.BARE, SPIN_RUN, ncpu=4)]
    md = "\n".join(linux.render(res))
    assert md.startswith("## Workloads: Linux programs")
    assert "retired instructions" in md
    row = next(line for line in md.splitlines() if line.startswith("| pipe ping-pong |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:] == ["`linux-pipe-pingpong`", "2", "14955 / 13630 / 19185",
                         "7441 / 6850 / 9000", "+7514", "2.01"]
    oc = [line for line in md.splitlines() if line.startswith("| overcommit |")]
    # Bare on the same 2 CPUs (not run here) and on the 4 the guest sees.
    assert len(oc) == 2
    assert "| 2 (4) |" in oc[0] and "| timeout |" in oc[0]
    assert "| 2 (4); bare on 4 |" in oc[1] and "| 300 / 290 / 410 |" in oc[1]
    assert "- overcommit, bare on 4 CPUs: tsc" in md
    assert "hrtimer" not in [line.split("|")[1].strip() for line in md.splitlines()
                             if line.startswith("| ")]
    assert "- pipe ping-pong, `linux-pipe-pingpong`: tsc 10.002 MHz; 17 exits: MSR_WRITE 15, " \
        "HLT 2" in md
    assert linux.render([]) == []
    linux.write_csv(res, tmp_path / "linux.csv")
    rows = list(csv.DictReader((tmp_path / "linux.csv").open()))
    assert [(r["setting"], r["status"], r["mean"]) for r in rows] == \
        [("linux-pipe-pingpong", "ok", "14955"), ("bare Bochs", "ok", "7441"),
         ("linux-overcommit", "timeout", ""), ("bare Bochs", "ok", "300")]
    assert rows[2]["nvcpu"] == "4" and rows[1]["nvcpu"] == "2"
    assert (rows[3]["ncpu"], rows[3]["nvcpu"]) == ("4", "4") and rows[2]["ncpu"] == "2"


def test_from_serial(tmp_path):
    (tmp_path / "linux").mkdir()
    linux.serial_path(tmp_path, PINGPONG, False).write_text(HV_RUN)
    linux.serial_path(tmp_path, PINGPONG, True).write_text(BARE_RUN)
    four = linux.serial_path(tmp_path, OVERCOMMIT, True, 4)
    assert four.name == "overcommit-bare4.serial"
    assert linux.serial_path(tmp_path, OVERCOMMIT, True, 2).name == "overcommit-bare.serial"
    four.write_text(SPIN_RUN)
    got = [(r.workload.name, r.setting, r.ncpu, r.status) for r in linux.from_serial(tmp_path)]
    assert got == [("pipe ping-pong", "linux-pipe-pingpong", 2, "ok"),
                   ("pipe ping-pong", linux.BARE, 2, "ok"),
                   ("overcommit", linux.BARE, 4, "ok")]


def test_bench_workloads_module_is_not_shadowed():
    """linux.py reads tests/linux/workloads.py under another name, so that
    `import workloads` (tests/bench/workloads.py) still gives run_bench's."""
    import workloads
    assert hasattr(workloads, "hv_job") and hasattr(linux.linux_workloads, "parse")
