# SPDX-License-Identifier: GPL-2.0-only
"""The workloads part of `make bench` (tests/bench/workloads.py): parsing
the ping-pong guest's lines, which builds run which cases, the section it
adds to results.md and workloads.csv, from the recorded runs in
tests/bench/fixtures/workloads/.  No timing: the shape of the report,
never a number's size.

    /usr/bin/python3 -m pytest -q tests/bench/test_workloads.py
"""
import csv
import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = HERE / "fixtures" / "workloads"
sys.path.insert(0, str(HERE))
import dispatchcmp  # noqa: E402
import workloads  # noqa: E402

HOT = workloads.CASES[0]

GOOD = """guest pingpong: starting
pingpong: 200 round trips (+20 warm-up) between APIC IDs 0 and 1, HLT until the IPI, IPI shape physical, x2APIC\r
pingpong: round trip ticks: mean 1987 min 1830 p50 2145 p99 2145 max 2145
pingpong: IPI send ticks: mean 412 (with one RDTSC pair)
guest pingpong: 2 passed, 0 failed
"""


def test_parse_a_complete_run():
    r = workloads.parse("pipe-pingpong", HOT, GOOD)
    assert r.status == "ok"
    assert r.rtt == {"mean": 1987, "min": 1830, "p50": 2145, "p99": 2145, "max": 2145}
    assert r.send == 412
    assert r.rounds == 220


@pytest.mark.parametrize("text,timed_out,status", [
    (GOOD.replace("0 failed", "1 failed"), False, "failed checks"),
    (GOOD.split("pingpong: round trip")[0], False, "incomplete"),
    (GOOD.split("pingpong: round trip")[0], True, "timeout"),
    (GOOD + "exitplan: PANIC: #GP in the hypervisor\n", False, "panic"),
    ("exitplan: profile 'x' refused: no VMX\n", False, "panic"),
])
def test_parse_says_how_a_run_ended(text, timed_out, status):
    assert workloads.parse("s", HOT, text, timed_out).status == status


def test_every_case_runs_on_bare_bochs_and_the_subject_only_the_hot_one_elsewhere():
    assert workloads.cases_for(workloads.BARE) == workloads.CASES
    assert workloads.cases_for(workloads.SUBJECT) == workloads.CASES
    assert workloads.cases_for(workloads.APIC_VARIANT) == workloads.CASES
    assert workloads.cases_for(workloads.DIRECT) == workloads.CASES
    assert (REPO / "profiles" / f"{workloads.DIRECT}.yaml").is_file()
    for other in ("default", "pipe-pingpong~table", "pipe-pingpong@timing", "table-only"):
        assert workloads.cases_for(other) == (HOT,)
    assert {c.ncpu for c in workloads.CASES} == {2, 4}


def test_settings_are_the_builds_run_bench_booted(tmp_path):
    for lb in ("default", "default~table", "default@timing", "pipe-pingpong",
               "pipe-pingpong~kvm@timing", "default-efer-manual", "pipe-pingpong-direct",
               "pipe-pingpong-direct@timing"):
        (tmp_path / f"{lb}.elf").write_text("")
    got = [lb for lb, _ in workloads.settings_from(tmp_path, ["default", "pipe-pingpong",
                                                              "pipe-pingpong-direct"])]
    # Timing builds only of the subject and its interrupts: direct sibling
    # (their statistics are the per-reason table); EFER variants not at all.
    assert got == ["default", "default~table", "pipe-pingpong", "pipe-pingpong~kvm@timing",
                   "pipe-pingpong-direct", "pipe-pingpong-direct@timing"]


def test_the_apic_variant_is_the_subject_with_the_other_apic_choice():
    text = workloads.apic_variant_text(REPO)
    assert re.search(r"^apic:[ \t]*passthrough[ \t]*$", text, re.M)
    assert not re.search(r"^apic:[ \t]*intercept-icr", text, re.M)
    assert re.search(r"^profile:[ \t]*pipe-pingpong-passthrough[ \t]*$", text, re.M)
    # Everything else is the profile as it stands.
    src = (REPO / "profiles" / "pipe-pingpong.yaml").read_text()
    assert len(text.splitlines()) == len(src.splitlines()) + 2


def test_an_apic_variant_of_a_changed_profile_fails_loudly(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "pipe-pingpong.yaml").write_text("profile: pipe-pingpong\n")
    with pytest.raises(dispatchcmp.VariantError, match="apic: intercept-icr"):
        workloads.apic_variant_text(tmp_path)


@pytest.fixture(scope="module")
def recorded():
    results = workloads.from_serial(FIXTURES)
    assert results, f"no recorded runs in {FIXTURES}"
    return results


def test_recorded_runs_are_complete(recorded):
    assert recorded[0].setting == workloads.BARE
    assert {r.status for r in recorded} == {"ok"}
    bare = {r.case.name for r in recorded if r.setting == workloads.BARE}
    assert bare == {c.name for c in workloads.CASES}
    # Bare Bochs has no statistics; a timing build has both vCPUs' documents.
    assert not any(r.stats_docs for r in recorded if r.setting == workloads.BARE)
    timed = [r for r in recorded if r.setting.endswith("@timing")]
    assert timed and all(len(r.stats_docs[0]["vcpus"]) == 2 for r in timed)


def test_the_hypervisors_share_sums_the_hot_reasons(recorded):
    r = next(r for r in recorded if r.setting == "pipe-pingpong@timing")
    total, per = workloads.hv_share(r)
    assert set(per) <= set(workloads.HOT_REASONS) and "HLT" in per
    assert total == pytest.approx(sum(n * t for n, t in per.values()))
    costs = dispatchcmp.hv_costs({"pingpong": r.stats_docs})
    # Both vCPUs halt once per round trip each.
    assert per["HLT"][0] == pytest.approx(costs["HLT"].count / r.rounds)
    assert workloads.hv_share(next(x for x in recorded if x.setting == workloads.BARE)) is None


def test_the_section_lists_every_setting_with_its_share(recorded):
    lines = workloads.render(recorded)
    text = "\n".join(lines)
    assert lines[0].startswith("## Workloads: pipe ping-pong")
    assert re.search(r"retired instructions.*not cycles", text)
    rows = [l for l in lines if l.startswith("| ") and not l.startswith("| setting")
            and not l.startswith("| build")]
    settings = list(dict.fromkeys(r.setting for r in recorded))
    bare = next(r for r in recorded if r.setting == workloads.BARE and r.case == HOT)
    for s in settings:
        row = next(l for l in rows if l.startswith(f"| `{s}` |") or l.startswith(f"| {s} |"))
        cells = [c.strip() for c in row.strip("|").split("|")]
        hot = next(r for r in recorded if r.setting == s and r.case == HOT)
        assert cells[1] == f"{hot.rtt['mean']} ({hot.rtt['p50']})"
        share = cells[1 + len(workloads.CASES)]
        if s == workloads.BARE:
            assert share == ""
        else:
            assert int(share) == hot.rtt["mean"] - bare.rtt["mean"]
    assert "### The hypervisor's ticks per round trip, by exit reason" in text
    assert f"under {workloads.SHARE_GOAL} ticks" in text


def test_a_missing_run_is_named_not_hidden(recorded):
    broken = list(recorded) + [workloads.Result("default", HOT, "timeout")]
    assert "`default`/x2apic: timeout" in "\n".join(workloads.render(broken))
    assert workloads.render([]) == []


def test_csv_has_one_row_per_run(recorded, tmp_path):
    path = tmp_path / "workloads.csv"
    workloads.write_csv(recorded, path)
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == len(recorded)
    assert rows[0]["setting"] == workloads.BARE and rows[0]["status"] == "ok"
    assert all(int(r["p50"]) >= int(r["min"]) for r in rows)


def test_results_md_carries_the_section_from_recorded_runs(tmp_path):
    """run_bench.py --from-serial DIR reads the workloads beside DIR."""
    import run_bench
    status = run_bench.main(["--from-serial", str(HERE / "fixtures" / "runs"),
                             "--out", str(tmp_path), "--build", str(tmp_path / "build")])
    assert status in (0, 1)     # 1: some recorded exit-cost runs lack numbers
    md = (tmp_path / "results.md").read_text()
    assert "## Workloads: pipe ping-pong (Bochs ticks)" in md
    assert md.index("## Workloads") < md.index("## Runs")
    assert (tmp_path / "workloads.csv").read_text().startswith("setting,case,ncpu,status")
