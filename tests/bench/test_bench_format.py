# SPDX-License-Identifier: GPL-2.0-only
"""The format of `make bench`'s output, and that its pieces run.  No timing.

Feeds run_bench.py's parser, analysis and writers the recorded guest
output in tests/bench/fixtures/runs/ and checks the documented format of
results.md, results.csv and weighted.csv (docs/BENCH.md); checks the exit
mix arithmetic both benchmarks share; builds the host microbenchmark and
runs it with --smoke, checking the shape of its report, never a number's
size.

    /usr/bin/python3 -m pytest -q tests/bench/test_bench_format.py
"""
import csv
import os
import re
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIXTURES = HERE / "fixtures" / "runs"
PANIC_SERIAL = HERE / "fixtures" / "panic" / "default-efer-manual-bench.serial"
sys.path.insert(0, str(HERE))
import dispatchcmp  # noqa: E402
import exitmix  # noqa: E402
import run_bench  # noqa: E402
import table  # noqa: E402

BUILD = Path(os.environ.get("EXITPLAN_BUILD", "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD

# The kinds tests/guest/bench prints without options (docs/GUESTS.md), in order.
BENCH_KINDS = ["cpuid", "vmcall-nop", "rdmsr-apic-base", "wrmsr-tsc-deadline", "in-fw_cfg",
               "out-fw_cfg", "pause", "mmio-read-test-page", "hlt-apic-timer"]
VARIANTS = ["default-efer-loadlist", "default-efer-manual"]
OBJDUMP = HERE / "fixtures" / "objdump" / "default-vmx_dispatch_exit.txt"
CENTRAL = "## Each profile's dispatch against the table and KVM's chain, everything else equal"
NOT_CYCLES = re.compile(r"(instruction counts|retired instructions).*not cycles", re.I)


def fixture_profiles():
    """Profiles with recorded runs that still exist in profiles/."""
    return sorted(d.name for d in FIXTURES.iterdir()
                  if d.is_dir() and (REPO / "profiles" / f"{d.name}.yaml").exists())


def serial(label, guest):
    return (FIXTURES / label / f"{guest}.serial").read_text()


def subjects(profiles):
    return [p for p in profiles if p not in dispatchcmp.BASELINES]


def dispatch_labels(profiles):
    """The dispatch variants' labels in run order (run_bench's specs)."""
    return [dispatchcmp.label(b, d, t)
            for b, d, t, _ in run_bench.dispatch_variant_specs(profiles)]


def untimed_dispatch_labels(profiles):
    return [lb for lb in dispatch_labels(profiles) if not lb.endswith("@timing")]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    profiles = fixture_profiles()
    runs = run_bench.runs_from_serial(FIXTURES, profiles)
    res = run_bench.analyse(runs, run_bench.load_mixes(profiles), "corei7_skylake_x",
                            {"bench": "", "hrtimer": ""}, commit="fixture", date="2026-11-29")
    out = tmp_path_factory.mktemp("bench")
    run_bench.write_all(res, out)
    return res, out, profiles


# ---------------------------------------------------------------- parser

def test_parse_bench_guest():
    out = run_bench.parse_serial(serial("default", "bench"))
    assert list(out.measures) == BENCH_KINDS
    assert out.rdtsc_pair == {"rdtsc-pair": 4}
    assert all(m.iterations == 2000 for m in out.measures.values())
    text = serial("default", "bench")
    assert out.measures["cpuid"].ticks == float(re.search(r"^bench: cpuid (\S+) ", text,
                                                          re.M).group(1))
    # bench-info lines attach exit counts to their kind.
    w = out.measures["wrmsr-tsc-deadline"]
    assert (w.exits, w.exit_reason) == (2000, "MSR_WRITE") and w.exits_once()
    p = out.measures["pause"]
    assert p.exit_reason == "PAUSE_INSTRUCTION" and p.exits < p.iterations
    assert not p.exits_once()
    assert set(out.skipped) == {"mov-to-cr8", "mov-from-cr8", "mov-to-dr7", "mov-from-dr7"}
    assert (out.guest, out.passed, out.failed) == ("bench", 7, 0) and out.complete
    assert out.gates["efer"] == "atomic (load_ia32_efer)"
    assert out.notes_line
    assert out.stats_profile == "default" and out.exit_counts["CPUID"] > 2000
    assert out.refused is None and out.panic is None


def test_parse_without_statistics_uses_the_tick_rule():
    out = run_bench.parse_serial(serial("vmexit-bench", "bench"))
    assert out.exit_counts == {} and all(m.exits is None for m in out.measures.values())
    assert out.measures["cpuid"].exits_once()
    assert out.measures["pause"].ticks < run_bench.NO_EXIT_TICKS
    assert not out.measures["pause"].exits_once()


def test_parse_hrtimer_guest():
    text = serial("hrtimer", "hrtimer")
    out = run_bench.parse_serial(text)
    count, delta = map(int, re.search(r"^hrtimer: (\d+) timers, (\d+) ticks apart", text,
                                      re.M).groups())
    total = int(re.search(r"^hrtimer: (\d+) ticks in all", text, re.M).group(1))
    mean = int(re.search(r"latency after the deadline: min \d+, mean (\d+)", text).group(1))
    assert out.hrtimer["hrtimer-cycle"] == pytest.approx(total / count - delta)
    assert out.hrtimer["hrtimer-latency"] == mean
    assert out.measures == {}           # it prints no bench: lines
    assert out.exit_counts["MSR_WRITE"] == count


def test_parse_panic_and_garbage():
    out = run_bench.parse_serial(PANIC_SERIAL.read_text())
    assert out.panic and out.panic.startswith("exitplan: PANIC:") and not out.complete
    assert out.measures == {}
    junk = ("bench: ticks are Bochs instruction counts, not cycles\n"
            "bench: cpuid abc 2000\nbench: cpuid 12\nbench:cpuid 1 2\n"
            "xbench: cpuid 1 2\nbench: rdtsc-pair-64 7 100\nbench: cr8 99 100\r\n")
    out = run_bench.parse_serial(junk)
    assert list(out.measures) == ["cr8"] and out.measures["cr8"].ticks == 99
    assert out.rdtsc_pair == {"rdtsc-pair-64": 7} and out.notes_line


def test_refused_profile():
    out = run_bench.parse_serial("exitplan: profile 'overcommit' refused: this CPU lacks "
                                 "pause_loop_exiting\n")
    assert out.refused and not out.measures


def test_reason_kind_mapping():
    out = run_bench.parse_serial(serial("default", "bench"))
    costs, used = run_bench.reason_costs(out)
    assert used["IO_INSTRUCTION"] == ["in-fw_cfg", "out-fw_cfg"]
    assert costs["IO_INSTRUCTION"] == pytest.approx(
        (out.measures["in-fw_cfg"].ticks + out.measures["out-fw_cfg"].ticks) / 2)
    assert used["CPUID"] == ["cpuid"] and used["EPT_VIOLATION"] == ["mmio-read-test-page"]
    assert "PAUSE_INSTRUCTION" not in costs      # not one exit per PAUSE
    for pattern, kinds in ((r"(mov-(to|from)-)?cr8(-.+)?", ["mov-to-cr8", "mov-from-cr8"]),
                           (r"(mov-(to|from)-)?dr[0-7]?(-.+)?", ["mov-to-dr7"])):
        assert all(re.fullmatch(pattern, k) for k in kinds)


# ---------------------------------------------------------------- results.md

def test_markdown_format(results):
    res, out, profiles = results
    md = (out / "results.md").read_text()
    lines = md.splitlines()
    assert lines[0] == "# exitplan exit costs on Bochs"
    assert NOT_CYCLES.search("\n".join(lines[:4])), "the note must open the report"
    assert NOT_CYCLES.search(lines[-1]), "and close it"
    for section in ("## Ticks per exit kind and profile",
                    "## Weighted mean exit cost under each profile's exit mix",
                    "## EFER: atomic against manual, same guest", "## Runs"):
        assert section in lines

    table = _md_table(lines, "## Ticks per exit kind and profile")
    assert table[0][:4] == ["profile", "role", "dispatch", "EFER"]
    assert table[0][4:] == BENCH_KINDS + ["hrtimer-cycle", "hrtimer-latency"]
    names = [r[0] for r in table[2:]]
    for p in profiles:
        assert p in names, f"profile {p} has no row"
    assert all(v in names for v in VARIANTS)
    # P~table and P~kvm have rows; the timing builds' guest numbers do not.
    assert all(v in names for v in untimed_dispatch_labels(profiles))
    assert not any(n.endswith("@timing") for n in names)
    assert "*reference: KVM (Linux 6.1 kvm_intel)*" in names
    kvm = table[2 + names.index("*reference: KVM (Linux 6.1 kvm_intel)*")]
    assert kvm[4] == "961" and kvm[5] == "952"
    roles = {r[0]: r[1] for r in table[2:]}
    assert roles["table-only"] == "baseline: table only"
    assert roles["kvm-order"] == "baseline: KVM's order"
    assert roles["default-efer-manual"] == "variant: default, EFER manual"
    assert roles["default~table"] == "variant: default, dispatch table only"
    assert roles["default~kvm"] == "variant: default, dispatch in KVM's chain"
    runs = _md_table(lines, "## Runs")
    want = [(lb, g) for lb in profiles + VARIANTS for g in run_bench.GUESTS]
    want += [(dispatchcmp.label(b, d, t), g)
             for b, d, t, guests in run_bench.dispatch_variant_specs(profiles) for g in guests]
    assert [(r[0], r[1]) for r in runs[2:]] == want
    assert all(r[2] == "ok" for r in runs[2:])


def test_weighted_tables(results):
    res, out, profiles = results
    lines = (out / "results.md").read_text().splitlines()
    for title in ("## Weighted mean exit cost under each profile's exit mix",
                  "## The same without HLT (its round trip includes the timer wait)"):
        t = _md_table(lines, title)
        assert t[0] == ["profile \\ mix"] + profiles + [run_bench.MEASURED_MIX]
        body = t[2:-1]
        assert [r[0] for r in body] == profiles + VARIANTS
        for r in body:
            bold = [i for i, c in enumerate(r[1:]) if c.startswith("**")]
            own = [profiles.index(r[0])] if r[0] in profiles else []
            assert bold == own, "only the own mix is bold"
        assert t[-1][0] == "*coverage*"
        assert all(re.fullmatch(r"\d+%", c) for c in t[-1][1:])


def test_own_mix_table(results):
    res, out, profiles = results
    lines = (out / "results.md").read_text().splitlines()
    t = _md_table(lines, "## Each profile on its own mix, against the baselines")
    assert t[0] == ["profile", "coverage", "own mix", "table-only", "kvm-order",
                    "vs table-only", "vs kvm-order"]
    assert [r[0] for r in t[2:]] == profiles
    assert all(re.fullmatch(r"\d+%", r[1]) for r in t[2:])
    table_row = t[2 + profiles.index("table-only")]
    assert table_row[5] == "1.000" and table_row[2] == table_row[3]
    kvm_row = t[2 + profiles.index("kvm-order")]
    assert kvm_row[6] == "1.000" and kvm_row[2] == kvm_row[4]


def test_measured_mix(results):
    """The hrtimer guest's counted exits, under the hrtimer profile."""
    res, out, profiles = results
    mm = [m for m in res.mixes if m.profile == run_bench.MEASURED_MIX]
    assert len(mm) == 1
    counts = run_bench.parse_serial(serial("hrtimer", "hrtimer")).exit_counts
    assert {r: int(w) for r, w in mm[0].reasons} == counts
    assert "under hrtimer" in mm[0].source_kind


def test_partial_run_is_not_weighed():
    """A run cut off halfway keeps its cells but does not shrink the reasons
    the complete runs are weighed over."""
    profiles = ["default", "table-only"]
    runs = run_bench.runs_from_serial(FIXTURES, profiles)
    full = run_bench.analyse(runs, run_bench.load_mixes(profiles), "x", {})
    text = serial("table-only", "bench")
    cut = text[:text.index("PASS: bench-vmcall-nop")]
    for r in runs:
        if r.variant.label == "table-only" and r.guest == "bench":
            r.output, r.status = run_bench.parse_serial(cut), "timeout"
    res = run_bench.analyse(runs, run_bench.load_mixes(profiles), "x", {})
    assert res.common_reasons == full.common_reasons
    assert ("table-only", "default") not in res.weighted
    row = next(r for r in res.rows if r.label == "table-only")
    assert set(row.ticks) >= {"cpuid", "vmcall-nop"} and "mmio-read-test-page" not in row.ticks


def test_weighted_mean_arithmetic(results):
    """Recompute one cell from the CSV costs and the profile's YAML."""
    res, out, profiles = results
    rows = {r["profile"]: r for r in csv.DictReader(open(out / "results.csv"))}
    mix = exitmix.load_mix(REPO / "profiles" / "default.yaml")
    shares = mix.shares()
    cost = {"CPUID": float(rows["table-only"]["cpuid"]),
            "VMCALL": float(rows["table-only"]["vmcall-nop"]),
            "MSR_READ": float(rows["table-only"]["rdmsr-apic-base"]),
            "MSR_WRITE": float(rows["table-only"]["wrmsr-tsc-deadline"]),
            "IO_INSTRUCTION": (float(rows["table-only"]["in-fw_cfg"])
                               + float(rows["table-only"]["out-fw_cfg"])) / 2,
            "HLT": float(rows["table-only"]["hlt-apic-timer"]),
            "EPT_VIOLATION": float(rows["table-only"]["mmio-read-test-page"])}
    assert sorted(res.common_reasons) == sorted(cost)
    cov = sum(shares[r] for r in cost if r in shares)
    want = sum(shares[r] * c for r, c in cost.items() if r in shares) / cov
    got = {(r["profile"], r["mix"]): r for r in csv.DictReader(open(out / "weighted.csv"))}
    cell = got[("table-only", "default")]
    assert float(cell["mean_ticks"]) == pytest.approx(want, abs=0.06)
    assert float(cell["coverage"]) == pytest.approx(cov, abs=1e-4)


def test_efer_table(results):
    """default against its two variants, kind by kind, with the differences."""
    res, out, profiles = results
    assert list(run_bench.EFER_VARIANTS) == VARIANTS
    assert res.efer_labels == ["default"] + VARIANTS
    lines = (out / "results.md").read_text().splitlines()
    t = _md_table(lines, "## EFER: atomic against manual, same guest")
    switches = [run_bench.EFER_VARIANTS[v][0] for v in VARIANTS]
    assert t[0] == (["kind", "default (atomic)"] + [f"{v} ({s})" for v, s in zip(VARIANTS, switches)]
                    + [f"{s} - atomic" for s in switches])
    assert [r[0] for r in t[2:]] == res.kinds
    for r in t[2:]:
        a, ll, man = (float(x) for x in r[1:4])
        assert r[4] == f"{ll - a:+.0f}" and r[5] == f"{man - a:+.0f}"


def test_efer_variant_missing(tmp_path):
    """A variant whose run failed: no column for it, and the report says so."""
    profiles = ["default"]
    runs = [r for r in run_bench.runs_from_serial(FIXTURES, profiles)
            if r.variant.label != "default-efer-manual"]
    for r in runs:
        if r.variant.label == "default-efer-loadlist" and r.guest == "bench":
            r.output, r.status = run_bench.parse_serial(PANIC_SERIAL.read_text()), "panic"
    res = run_bench.analyse(runs, run_bench.load_mixes(profiles), "corei7_skylake_x", {})
    assert res.efer_labels == []
    lines = run_bench.render_markdown(res).splitlines()
    i = lines.index("## EFER: atomic against manual, same guest")
    section = "\n".join(lines[i:lines.index("## Runs")])
    assert "| kind |" not in section
    assert "Not measured (see Runs): `default-efer-loadlist`, `default-efer-manual`." in section


# ---------------------------------------------------------------- CSV, plot

def test_results_csv(results):
    res, out, profiles = results
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    assert head[:7] == ["profile", "role", "source", "dispatch", "efer", "cpu", "unit"]
    assert head[7:-1] == BENCH_KINDS + ["hrtimer-cycle", "hrtimer-latency"]
    assert head[-1] == "status"
    body = [dict(zip(head, r)) for r in rows[1:]]
    assert all(len(r) == len(head) for r in rows)
    assert [r["profile"] for r in body if r["source"] == "measured"] == \
        profiles + VARIANTS + untimed_dispatch_labels(profiles)
    assert sum(r["source"] == "reference" for r in body) == len(run_bench.REFERENCES)
    for r in body:
        assert NOT_CYCLES.search(r["unit"])
        assert r["cpu"] == "corei7_skylake_x"
        if r["source"] == "measured":
            for k in BENCH_KINDS:
                float(r[k])             # every kind measured, as a number
            assert r["status"] in ("bench: ok; hrtimer: ok", "bench: ok")


def test_weighted_csv(results):
    res, out, profiles = results
    with open(out / "weighted.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["profile", "mix", "own_mix", "mean_ticks", "coverage",
                             "mean_ticks_without_hlt", "coverage_without_hlt", "reasons", "unit"]
    mixes = profiles + [run_bench.MEASURED_MIX]
    assert {(r["profile"], r["mix"]) for r in rows} == \
        {(p, m) for p in profiles + VARIANTS for m in mixes}
    assert all(r["own_mix"] == str(int(r["profile"] == r["mix"])) for r in rows)
    assert all(0 < float(r["coverage"]) <= 1 for r in rows)


def test_plot(results):
    pytest.importorskip("matplotlib")
    res, out, profiles = results
    png = (out / "exit-costs.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------- the central comparison

def test_variant_names():
    for base, d, t in (("default", "table", False), ("pipe-pingpong", "kvm", True),
                       ("kvm-order", None, True), ("hrtimer", "kvm", False)):
        lb = dispatchcmp.label(base, d, t)
        assert dispatchcmp.parse_label(lb) == (base, d, t)
        name = dispatchcmp.file_name(base, d, t)
        assert re.fullmatch(r"[a-z][a-z0-9-]*", name), "a valid profile name"
    assert dispatchcmp.parse_label("default") is None
    assert dispatchcmp.parse_label("default-efer-manual") is None
    assert dispatchcmp.subjects(["default", "kvm-order", "table-only", "x"]) == ["default", "x"]


def _load_profile(name):
    with open(REPO / "profiles" / f"{name}.yaml", "rb") as f:
        return dispatchcmp.yaml.load(f, Loader=dispatchcmp._ProfileLoader)


def test_variant_doc_changes_only_the_dispatch():
    order = dispatchcmp.kvm_order(REPO)
    assert order == _load_profile("kvm-order")["dispatch"]["direct"]["order"]
    for p in subjects(sorted(f.stem for f in (REPO / "profiles").glob("*.yaml"))):
        doc = _load_profile(p)
        for d in (None,) + dispatchcmp.DISPATCHES:
            for timing in (False, True):
                v = dispatchcmp.variant_doc(doc, p, d, timing, order)
                assert v["profile"] == dispatchcmp.file_name(p, d, timing)
                assert v.get("statistics") == ("timing" if timing else doc.get("statistics"))
                if d == "table":
                    assert v["dispatch"]["policy"] == "table" and "direct" not in v["dispatch"]
                elif d == "kvm":
                    assert v["dispatch"]["direct"] == {"order": order}
                else:
                    assert v["dispatch"] == doc["dispatch"]
                # Everything else as P has it; the mix gains only zero weights.
                for key in doc:
                    if key not in ("profile", "description", "dispatch", "statistics",
                                   "exit_mix"):
                        assert v[key] == doc[key], (p, d, key)
                mix, vmix = doc["exit_mix"]["reasons"], v["exit_mix"]["reasons"]
                assert {r: w for r, w in vmix.items() if r in mix} == mix
                assert all(vmix[r] == 0 for r in vmix if r not in mix)
        assert doc["dispatch"] == _load_profile(p)["dispatch"], "the source is not modified"


def test_off_stays_a_string(tmp_path):
    """`statistics: off` must reach the generator as "off", not False."""
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "x.yaml").write_text("profile: x\nstatistics: off\n")
    with open(tmp_path / "profiles" / "x.yaml", "rb") as f:
        doc = dispatchcmp.yaml.load(f, Loader=dispatchcmp._ProfileLoader)
    assert doc["statistics"] == "off"
    assert "statistics: 'off'" in dispatchcmp.yaml.safe_dump(doc)


def test_make_variant_generates(tmp_path):
    """The generator accepts a kvm variant and its chain is KVM's order."""
    order = dispatchcmp.kvm_order(REPO)
    ypath, gdir = dispatchcmp.make_variant(REPO, tmp_path, "hrtimer", "kvm", False, order)
    assert ypath == tmp_path / "profiles" / "hrtimer--kvm.yaml"
    assert ypath.read_text().startswith("# Generated by tests/bench/run_bench.py")
    assert dispatchcmp.chain(gdir) == order
    assert not (REPO / "profiles" / "hrtimer--kvm.yaml").exists()


STATS_TWO_VCPUS = """junk
# exitplan-stats-begin
exitplan_stats:
  version: 1
  profile: x--timing
  level: timing
  tsc_overhead: 3
  vcpus:
    - id: 0
      exits: 12
      reasons:
        HLT: {count: 10, ticks: 530}
        CPUID: {count: 2, ticks: 200}
# exitplan-stats-end
# exitplan-stats-begin
exitplan_stats:
  version: 1
  level: timing
  tsc_overhead: 3
  vcpus:
    - id: 1
      exits: 5
      reasons:
        HLT: {count: 5, ticks: 265}
        OTHER: {count: 0}
# exitplan-stats-end
# exitplan-stats-begin
exitplan_stats:
  level: counts
  vcpus:
    - id: 0
      reasons:
        HLT: {count: 99}
# exitplan-stats-end
"""


def test_hv_costs_pool_vcpus_and_subtract_the_overhead():
    docs = dispatchcmp.parse_stats_docs(STATS_TWO_VCPUS)
    assert len(docs) == 3
    c = dispatchcmp.hv_costs({"g": docs})
    assert c["HLT"].count == 15 and c["HLT"].per_exit == pytest.approx((795 - 3 * 15) / 15)
    assert c["CPUID"].per_exit == pytest.approx(97)
    assert "OTHER" not in c and c["HLT"].guests == ["g"]
    assert run_bench.parse_serial(STATS_TWO_VCPUS).stats_docs == docs


def test_timing_fixture_has_ticks():
    """A recorded timing build's document: every reason has count and
    ticks, and tsc_overhead is stated."""
    lb = dispatchcmp.label("hrtimer", None, True)
    docs = run_bench.parse_serial(serial(lb, "hrtimer")).stats_docs
    assert docs and all(d["level"] == "timing" and "tsc_overhead" in d for d in docs)
    for d in docs:
        for r, e in d["vcpus"][0]["reasons"].items():
            assert set(e) == {"count", "ticks"}, r


def test_path_lengths_from_objdump():
    asm = OBJDUMP.read_text()
    numbers = exitmix.exit_reason_names(REPO / "spec")
    # The chain in the generated order, from the CMP immediates.
    imms = [int(x, 16) for x in re.findall(r"cmp\s+\$0x([0-9a-f]+),%si\n[^\n]*\bje\b", asm)]
    by_num = {n: r for r, n in numbers.items()}
    chain = [by_num[i] for i in imms]
    pl = dispatchcmp.path_lengths(asm, chain, numbers)
    assert pl is not None and set(pl) == set(chain) | {"*table"}
    steps = [pl[r] for r in chain]
    assert all(b - a == 2 for a, b in zip(steps, steps[1:])), "CMP+JE per link"
    assert pl["*table"] > steps[-1]
    # Reason 0 (EXCEPTION_NMI) compiles to TEST %si,%si, not CMP $0x0.
    zero = [r for r, n in numbers.items() if n == 0][0]
    asm0 = re.sub(r"cmp\s+\$0x%x,%%si" % numbers[chain[0]], "test   %si,%si", asm, count=1)
    pl0 = dispatchcmp.path_lengths(asm0, [zero] + chain[1:], numbers)
    assert pl0 is not None and pl0[zero] == pl[chain[0]]
    # A chain it does not find in that order: no count rather than a wrong one.
    assert dispatchcmp.path_lengths(asm, chain[::-1], numbers) is None
    assert dispatchcmp.path_lengths("", chain, numbers) is None
    by = dispatchcmp.lengths_by_reason(pl, ["PAUSE_INSTRUCTION"])
    assert by["PAUSE_INSTRUCTION"] == pl["*table"] and all(by[r] == pl[r] for r in chain)


def test_best_chain_length():
    """The length model on a chain of one link, A, after a 5-instruction
    prefix (A costs 5 + 2 + 1), before a table part of 10."""
    pl = {"A": 8, "*table": 5 + 2 + 10}
    m, costs, order = dispatchcmp.best_chain_length(["A"], pl, {"A": 0.5, "B": 0.5})
    assert order == ["A", "B"]
    # m = 0: both through the table (15); m = 1: A 8, B 17; m = 2: A 8, B 10.
    assert costs == {0: pytest.approx(15.0), 1: pytest.approx(12.5), 2: pytest.approx(9.0)}
    assert m == 2
    # A rare first link is not worth its compare for everyone else.
    m, costs, _ = dispatchcmp.best_chain_length(["A"], pl, {"A": 0.001, "B": 0.001, "C": 0.998})
    assert m == 0 or costs[m] <= costs[1]
    assert costs[1] > costs[0]
    # The measured counts of P's own chain are used as they are.
    m, costs, _ = dispatchcmp.best_chain_length(["A"], {"A": 9, "*table": 17}, {"A": 1.0})
    assert costs[1] == pytest.approx(9.0)
    assert dispatchcmp.best_chain_length(["A"], {"A": 3}, {"A": 1}) is None
    assert dispatchcmp.best_chain_length([], {"*table": 3}, {"A": 1}) is None


def test_central_table(results):
    res, out, profiles = results
    lines = (out / "results.md").read_text().splitlines()
    assert lines.index(CENTRAL) < lines.index("## Ticks per exit kind and profile"), \
        "the central comparison comes first"
    t = _md_table(lines, CENTRAL)
    assert t[0] == ["profile", "P's chain", "coverage of P's mix", "P", "P~table", "P~kvm",
                    "P / P~table", "P / P~kvm", "verdict"]
    body = [r for r in t[2:] if not r[0].startswith("*")]
    refs = [r for r in t[2:] if r[0].startswith("*")]
    assert [r[0] for r in body] == subjects(profiles)
    assert [r[0] for r in refs] == [f"*{b}*" for b in dispatchcmp.BASELINES if b in profiles]
    for r in body:
        assert re.fullmatch(r"\d+% \(\d+% guest \+ \d+% hv\)", r[2])
        p, tab, kvm = (float(x) for x in r[3:6])
        # The ratios are of the unrounded means: within the cells' rounding.
        assert float(r[6]) == pytest.approx(p / tab, abs=0.002)
        assert float(r[7]) == pytest.approx(p / kvm, abs=0.002)
        assert re.fullmatch(r"beats both|loses to (table|KVM's chain)( and KVM's chain)?"
                            r"|ties (table|KVM's chain)( and KVM's chain)?", r[8]), r[8]
    # The verdict follows from the ratios of the unrounded means.
    for c, r in zip(res.comparisons, body):
        lost = [lb for lb in c.labels[1:] if c.ratio(lb) > 1 + dispatchcmp.TIE]
        tied = [lb for lb in c.labels[1:] if abs(c.ratio(lb) - 1) <= dispatchcmp.TIE]
        assert r[8] == c.verdict()
        assert r[8].startswith("loses") == bool(lost)
        assert r[8] == "beats both" or lost or tied
    section = "\n".join(lines[lines.index(CENTRAL):lines.index("## Ticks per exit kind and profile")])
    assert NOT_CYCLES.search(section)


def test_central_per_reason_tables(results):
    res, out, profiles = results
    lines = (out / "results.md").read_text().splitlines()
    for c in res.comparisons:
        head = next(i for i, l in enumerate(lines) if l.startswith(f"**{c.subject}** (mean P "))
        t = _md_table(lines[head:], lines[head])
        assert t[0][:10] == ["reason", "share", "source", "in P", "in P~kvm", "P", "P~table",
                             "P~kvm", "P - P~table", "P - P~kvm"]
        weighed = [r for r in t[2:] if not r[2].startswith("not weighed")]
        assert [r[0] for r in weighed] == [r.reason for r in c.reasons]
        for r in weighed:
            assert re.fullmatch(r"(guest|hv) \(.+\)", r[2])
            src = r[2].split()[0]
            assert r[0] in (dispatchcmp.GUEST_REASONS if src == "guest" else dispatchcmp.HV_REASONS)
            assert re.fullmatch(r"#\d+|table( after \d+)?", r[3])
            assert r[8] == f"{float(r[5]) - float(r[6]):+.1f}"
        # Coverage: the weighed shares, of the mix as the profile states it.
        shares = exitmix.load_mix(REPO / "profiles" / f"{c.subject}.yaml").shares()
        assert c.coverage == pytest.approx(sum(shares[r.reason] for r in c.reasons))
        # The mean is the share-weighted mean of the rows.
        for lb in c.labels:
            want = sum(r.share * r.ticks[lb] for r in c.reasons) / c.coverage
            assert c.means[lb] == pytest.approx(want)


def test_dispatch_csv(results):
    res, out, profiles = results
    with open(out / "dispatch.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["profile", "build", "variant", "reason", "share", "source",
                             "position", "ticks", "instructions", "mean_coverage",
                             "ratio_to_build", "verdict", "unit"]
    means = [r for r in rows if r["reason"] == "*mean"]
    assert [(r["profile"], r["variant"]) for r in means] == \
        [(p, v) for p in subjects(profiles) for v in ("P", "P~table", "P~kvm")]
    assert all(NOT_CYCLES.search(r["unit"]) for r in rows)
    assert all(r["verdict"] for r in means if r["variant"] == "P")


def test_central_without_variants(tmp_path):
    """Runs without the dispatch variants (--no-dispatch-variants): the
    section says so, and the rest of the report is unchanged."""
    profiles = ["default", "table-only"]
    runs = [r for r in run_bench.runs_from_serial(FIXTURES, profiles)
            if not dispatchcmp.parse_label(r.variant.label)]
    res = run_bench.analyse(runs, run_bench.load_mixes(profiles), "x", {})
    assert res.comparisons == []
    md = run_bench.render_markdown(res).splitlines()
    i = md.index(CENTRAL)
    assert md[i + 2].startswith("No profile was compared")


# ---------------------------------------------------------------- exit mixes

def test_apportion_is_exact_and_close():
    mix = exitmix.load_mix(REPO / "profiles" / "default.yaml")
    for n in (1, 7, 1000, 1 << 20):
        counts = exitmix.apportion(mix, n)
        assert sum(c for _, c in counts) == n
        total = mix.total
        for (r, c), (_, w) in zip(counts, mix.reasons):
            assert abs(Fraction(c) - w * n / total) < 1


def test_mix_rejects_unknown_reason(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("profile: bad\nexit_mix:\n  source: {kind: estimate, basis: x}\n"
                   "  unit: share\n  reasons: {CPUID_TYPO: 1}\n")
    with pytest.raises(exitmix.MixError, match="CPUID_TYPO"):
        exitmix.load_mix(bad, exitmix.exit_reason_names(REPO / "spec"))
    bad.write_text("profile: bad\nexit_mix:\n  source: {kind: estimate, basis: x}\n"
                   "  unit: share\n  reasons: {CPUID: 0}\n")
    with pytest.raises(exitmix.MixError, match="no reason with a weight"):
        exitmix.load_mix(bad)


def test_bench_data_rejects_bad_profile(tmp_path):
    (tmp_path / "profiles").mkdir()
    (tmp_path / "spec").symlink_to(REPO / "spec")
    (tmp_path / "profiles" / "bad.yaml").write_text(
        "profile: bad\nexit_mix:\n  source: {kind: estimate, basis: x}\n"
        "  unit: count\n  reasons: {HALT: 3}\n")
    p = subprocess.run([sys.executable, str(HERE / "host" / "bench_data.py"), "--root",
                        str(tmp_path), "--out-c", str(tmp_path / "d.c"), "bad"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert "bad.yaml" in p.stderr and "HALT" in p.stderr
    assert not (tmp_path / "d.c").exists()


# ---------------------------------------------------------------- host microbenchmark

def test_host_microbenchmark_smoke(tmp_path):
    """Builds every profile's dispatch twice and runs one short pass: the
    report has its shape; the numbers are not looked at."""
    build = os.path.relpath(BUILD, REPO) if BUILD.is_relative_to(REPO) else str(BUILD)
    p = subprocess.run(["make", "--no-print-directory", "-s", f"BUILD={build}", "bench-host-build"],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    csv_path = tmp_path / "host.csv"
    p = subprocess.run([str(BUILD / "bench" / "host" / "dispatch-bench"), "--smoke",
                        "--csv", str(csv_path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    md = p.stdout
    assert md.startswith("# Host microbenchmark of the generated VM-exit dispatch")
    assert "Smoke run" in md
    profiles = sorted(f.stem for f in (REPO / "profiles").glob("*.yaml"))
    own = _md_table(md.splitlines(), "## Each profile's dispatch on its own exit mix")
    assert own[0][:6] == ["dispatch", "chain", "stats", "ns", "ns retpoline", "retpoline / plain"]
    assert [r[0] for r in own[2:]] == profiles
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * len(profiles) * len(profiles)
    assert {(r["dispatch"], r["retpoline"], r["mix"]) for r in rows} == \
        {(d, k, m) for d in profiles for k in ("0", "1") for m in profiles}
    for r in rows:
        assert r["own_mix"] == str(int(r["dispatch"] == r["mix"]))
        assert float(r["ns_per_dispatch"]) > 0
        assert r["passes"] == "1"
    table = {(r["dispatch"], r["retpoline"], r["mix"]): r for r in rows}
    for k in ("0", "1"):
        for m in profiles:
            if "table-only" in profiles:
                assert float(table[("table-only", k, m)]["vs_table-only"]) == 1.0
            if "kvm-order" in profiles:
                assert float(table[("kvm-order", k, m)]["vs_kvm-order"]) == 1.0


def _md_table(lines, heading):
    """The first Markdown table after the heading, as lists of cells."""
    i = lines.index(heading)
    while not lines[i].startswith("|"):
        i += 1
    rows = []
    while i < len(lines) and lines[i].startswith("|"):
        rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
        i += 1
    return rows


def test_table_helpers(tmp_path):
    """tests/bench/table.py, which the workload sections share."""
    class R:
        def __init__(self, status):
            self.status = status
    assert table.head(["a", "b"]) == ["| a | b |", "|---|---|"]
    assert table.cell(None, str) == ""
    assert table.cell(R("timeout"), lambda r: "never") == "timeout"
    assert table.cell(R("ok"), lambda r: "12 (11)") == "12 (11)"
    exits = {"HLT": 3, "CPUID": 9, "VMCALL": 1}
    assert table.mix(exits) == "CPUID 9, HLT 3, VMCALL 1"
    assert table.mix(exits, 2) == "CPUID 9, HLT 3, ..."
    assert table.mix(exits, 3) == "CPUID 9, HLT 3, VMCALL 1"
    assert table.mix({}) == table.mix({}, 6) == "no statistics"
    table.write_csv(tmp_path / "t.csv", "x,y", [[1, None], ["a", ""]])
    assert (tmp_path / "t.csv").read_text() == "x,y\n1,\na,\n"
