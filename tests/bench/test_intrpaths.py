# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/intrpaths.py and its place in make bench: the bench
guest's interrupt paths parsed from recorded serial output
(fixtures/intr/: the default profile's bench run, the bench guest on bare
Bochs, the IPI to another CPU bare and under default), the split of a
round trip of several exits into the parts of the exit path, the
section of results.md and intr.csv.  No timing is asserted."""
import csv
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import dispatchcmp  # noqa: E402
import exitmix  # noqa: E402
import exitpath  # noqa: E402
import intrpaths  # noqa: E402
import run_bench  # noqa: E402

FIX = HERE / "fixtures" / "intr"
OBJ = HERE / "fixtures" / "objdump"
# What the recorded default run printed (its 500 iterations, stats on).
SELF_IPI = "intr-self-ipi-xapic-sti-nop"


def bench_text():
    return (FIX / "runs" / "default" / "bench.serial").read_text()


def test_parse_kinds_exits_and_late():
    paths = intrpaths.parse(bench_text())
    for k in ["intr-eoi-xapic", SELF_IPI, "intr-tsc-deadline-arm",
              "intr-tsc-deadline-immediate", "intr-tsc-deadline-fire", "intr-pit-fire",
              "intr-eoi-x2apic", "intr-self-ipi-x2apic-sti-nop"]:
        assert k in paths, k
        assert paths[k].iterations == 500 and paths[k].ticks > 0
        assert paths[k].exits, k
    assert paths["intr-eoi-xapic"].exits == {"EPT_VIOLATION": 500}
    assert not paths[SELF_IPI].gap and paths["intr-pit-fire"].gap
    assert paths[SELF_IPI].exits_per_trip()["EPT_VIOLATION"] == 2
    # This run was recorded before the STI-window fix: its late count parses.
    assert paths[SELF_IPI].late == 260


def test_parse_line_forms():
    text = ("bench: intr-eoi-x2apic 5 10\n"
            "bench-exits: intr-eoi-x2apic in 10 round trips: none\n"
            "bench: intr-pit-fire 25 10\n"
            "bench-exits: intr-pit-fire in 10 gaps with their arming and EOI: IO_INSTRUCTION=40\n"
            "bench: intr-tsc-deadline-arm 7 10\n"
            "bench-exits: intr-tsc-deadline-arm in 9 round trips: MSR_WRITE=9\n"
            "bench: cpuid 80 10\n")
    p = intrpaths.parse(text)
    assert list(p) == ["intr-eoi-x2apic", "intr-pit-fire", "intr-tsc-deadline-arm"]
    assert p["intr-eoi-x2apic"].exits == {} and p["intr-eoi-x2apic"].exits_words() == "none"
    assert p["intr-pit-fire"].gap and p["intr-pit-fire"].exits == {"IO_INSTRUCTION": 40}
    # A count over another number of round trips than the line's is not this run's.
    assert p["intr-tsc-deadline-arm"].exits is None


def test_parse_serial_keeps_paths_out_of_the_exit_kinds():
    out = run_bench.parse_serial(bench_text())
    assert not [k for k in out.measures if k.startswith("intr-")]
    assert "cpuid" in out.measures and SELF_IPI in out.paths


def test_split_many():
    path = {"stub": (12, 12), "resume": (12, 12)}
    s = exitpath.split_many("k", 500.0, {"MSR_WRITE": 2, "EXTERNAL_INTERRUPT": 1},
                            {"EXTERNAL_INTERRUPT": 4, "MSR_WRITE": 6, "*table": 46}, path)
    assert s.parts["stub"] == (36, 36) and s.parts["resume"] == (36, 36)
    assert s.parts["dispatch"] == (16, 16)     # 2 * 6 + 4
    assert s.parts["msr switch"] == (0, 0)
    assert s.parts["handler"] == (500 - 36 - 16 - 36,) * 2
    # A reason outside the chain takes the table's path.
    s = exitpath.split_many("k", 100.0, {"APIC_WRITE": 1},
                            {"MSR_WRITE": 6, "*table": 46}, path)
    assert s.parts["dispatch"] == (46, 46)
    # The hooks stub's msr switch, a range, once per exit too.
    s = exitpath.split_many("k", 300.0, {"HLT": 2}, {"HLT": 8, "*table": 46},
                            {"stub": (11, 11), "msr switch": (10, 20), "resume": (13, 13)})
    assert s.parts["msr switch"] == (20, 40)
    assert s.parts["handler"] == (300 - 22 - 16 - 40 - 26, 300 - 22 - 16 - 20 - 26)


def test_dispatch_with_the_count_after_the_chain():
    """GCC's shape for a profile with statistics counts: each chain link's
    JE reaches its constant counter slot's ADD, then the JMP."""
    numbers = exitmix.exit_reason_names(REPO / "spec")
    chain = ["EXTERNAL_INTERRUPT", "MSR_WRITE", "HLT", "IO_INSTRUCTION", "EPT_VIOLATION",
             "INTERRUPT_WINDOW", "CPUID", "PREEMPTION_TIMER", "MSR_READ", "CR_ACCESS",
             "EXCEPTION_NMI", "VMCALL", "PAUSE_INSTRUCTION"]
    asm = (OBJ / "default-counts-after-chain-vmx_dispatch_exit.txt").read_text()
    pl = dispatchcmp.path_lengths(asm, chain, numbers)
    # The k-th link: 2k compares and jumps, the ADD, the JMP.
    assert pl["EXTERNAL_INTERRUPT"] == 4 and pl["MSR_WRITE"] == 6
    assert pl["PAUSE_INSTRUCTION"] == 2 * 13 + 2
    assert pl["*table"] > pl["PAUSE_INSTRUCTION"]
    # The shape must be exact: a link in the wrong order is no count.
    assert dispatchcmp.path_lengths(asm, [chain[1], chain[0]] + chain[2:], numbers) is None


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    runs = intrpaths.from_serial(FIX)
    profile_paths = {"default": intrpaths.parse(bench_text())}
    sp = {"default": {SELF_IPI: exitpath.split_many(
        SELF_IPI, profile_paths["default"][SELF_IPI].ticks,
        profile_paths["default"][SELF_IPI].exits_per_trip(),
        {"EXTERNAL_INTERRUPT": 4, "INTERRUPT_WINDOW": 14, "EPT_VIOLATION": 12, "*table": 46},
        {"stub": (12, 12), "resume": (12, 12)})}}
    out = tmp_path_factory.mktemp("intr")
    intrpaths.write_csv(profile_paths, runs, out / "intr.csv")
    return runs, intrpaths.render(profile_paths, runs, sp), out


def test_from_serial(section):
    runs, _, _ = section
    got = {(r.setting, r.case): r for r in runs}
    assert set(got) == {(intrpaths.BARE, "bench"), (intrpaths.BARE, "ipi-other"),
                        ("default", "ipi-other")}
    assert all(r.status == "ok" for r in runs)
    assert got[(intrpaths.BARE, "bench")].paths[SELF_IPI].exits is None   # bare: no counts
    assert "intr-ipi-other-hlt" in got[("default", "ipi-other")].paths


def test_section(section):
    _, L, _ = section
    text = "\n".join(L)
    assert L[0] == "## Interrupt paths"
    assert "not cycles" in text
    head = next(line for line in L if line.startswith("| kind | bare Bochs"))
    assert head.split("|")[3].strip() == "default"
    rows = {}
    for line in L:              # the first table's rows (the split's come after)
        if line.startswith("| intr-"):
            rows.setdefault(line.split("|")[1].strip(), line)
    # Every kind has its bare figure and default's; the IPI comes from its own runs.
    for k in intrpaths.KINDS:
        if "sti-hlt" in k:
            continue            # not run where the sti-nop ones came late
        assert k in rows, k
    assert "(260 late)" in rows[SELF_IPI]
    assert "Self-IPIs taken after the STI window" in text
    # The split table: the parts of the self-IPI's round trip, once per exit.
    split = [line for line in L if line.startswith(f"| {SELF_IPI} | ")][-1].split("|")
    stub, dispatch, msr, resume, handler = (split[i].strip() for i in range(6, 11))
    assert (stub, resume, msr) == ("42", "42", "0")     # 3.5 exits of 12
    assert float(dispatch) == 4 + 0.5 * 14 + 2 * 12
    gap = [line for line in L if line.startswith("| intr-pit-fire | ")][-1]
    assert "(with the arming and EOI)" in gap and gap.rstrip(" |").endswith("-")


def test_csv(section):
    _, _, out = section
    rows = list(csv.DictReader((out / "intr.csv").open()))
    assert set(rows[0]) == {"setting", "kind", "ticks", "iterations", "gap", "late", "exits"}
    by = {(r["setting"], r["kind"]): r for r in rows}
    assert by[("default", "intr-eoi-xapic")]["exits"] == "EPT_VIOLATION=500"
    assert by[(intrpaths.BARE, "intr-pit-fire")]["gap"] == "1"
    assert by[("default", "intr-ipi-other-hlt")]["exits"] == ""


def test_results_md_has_the_section(tmp_path):
    """run_bench's report carries the section where the profiles' bench runs have paths."""
    runs = run_bench.runs_from_serial(FIX / "runs", ["default"])
    res = run_bench.analyse(runs, run_bench.load_mixes(["default"]), "corei7_skylake_x",
                            {"bench": "", "hrtimer": ""}, commit="fixture", date="2026-12-07")
    assert SELF_IPI in res.intr_paths["default"]
    assert not [k for k in res.kinds if k.startswith("intr-")]
    res.intr = intrpaths.render(res.intr_paths, intrpaths.from_serial(FIX), res.intr_parts)
    run_bench.write_all(res, tmp_path)
    md = (tmp_path / "results.md").read_text()
    assert "## Interrupt paths" in md
    assert md.index("## Interrupt paths") < md.index("## Ticks per exit kind and profile")
