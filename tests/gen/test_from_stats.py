# SPDX-License-Identifier: GPL-2.0-only
"""exitplan-gen from-stats: the statistics document (docs/STATS.md) to a
profile.  The round trip (a document built from a profile's mix gives back
the same mix and the same chain), the policies and text of the base kept,
the chain following measured frequencies, the corpus of bad documents
(tests/gen/bad-stats/, each with its exact message on its first line) and
bad command lines, nothing written on error, determinism, make profile."""

import datetime
import os
import re
import subprocess

import pytest
import yaml

from conftest import ROOT, run_gen, snapshot

PROFILES = sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml"))
BAD = sorted((ROOT / "tests" / "gen" / "bad-stats").iterdir())
BRAND = "Intel(R) Core(TM) i7-7800X CPU @ 3.50GHz"


def stats_document(vcpus, *, profile="default", level="counts", guest="hrtimer", guest_args="",
                   cpu=BRAND):
    """The document as exitplan prints it; vcpus: one {reason: count} per vCPU."""
    out = ["# exitplan-stats-begin", "exitplan_stats:", "  version: 1", f"  profile: {profile}",
           f"  level: {level}", f'  cpu: "{cpu}"', f"  guest: {guest}", f'  guest_args: "{guest_args}"']
    if level == "timing":
        out.append("  tsc_overhead: 24")
    out.append("  vcpus:")
    for i, counts in enumerate(vcpus):
        out += [f"    - id: {i}", f"      exits: {sum(counts.values())}", "      reasons:"]
        for name, n in counts.items():
            ticks = f", ticks: {n * 70}" if level == "timing" else ""
            out.append(f"        {name}: {{count: {n}{ticks}}}")
        # The breakdowns, with hex keys, as printed; a profile ignores them.
        out += ["      msr_read:  {0x1b: 3}", "      msr_write: {0x6e0: 2000, other: 1}",
                "      io:        {0x510: 1, 0xf4: 1}", "      cpuid:     {0x0: 2, 0x40000000: 1}",
                "      hypercall: {0: 1, 5: 2}",
                # The event counters (docs/STATS.md): read past, as the breakdowns.
                "      events: {nmis_in_root: 1, kicks_in_root: 2, storm_steps: 3}"]
    out.append("# exitplan-stats-end")
    return out


def serial_log(vcpus, **kw):
    """A serial log around the document, with CR LF line ends as a UART has."""
    lines = ["exitplan: booting", "gate efer: atomic (load_ia32_efer)", "guest: tick 1000"]
    lines += stats_document(vcpus, **kw)
    lines += ["exitplan: exit status 0 (via=shutdown)"]
    return "".join(line + "\r\n" for line in lines)


def split_counts(mix, parts=2):
    """mix spread over parts vCPUs, unevenly, plus an OTHER and a zero count."""
    vcpus = [dict() for _ in range(parts)]
    for i, (name, n) in enumerate(sorted(mix.items())):
        first = n * (i % 3 + 1) // 4
        vcpus[0][name] = first
        vcpus[-1][name] = vcpus[-1].get(name, 0) + n - first
    vcpus[0]["WBINVD"] = 0
    vcpus[-1]["OTHER"] = 7
    return vcpus


def from_stats(tmp_path, log_text, base, name, *extra, log_name="serial.log"):
    log = tmp_path / log_name
    log.write_text(log_text)
    out = tmp_path / "profiles" / f"{name}.yaml"
    out.parent.mkdir(exist_ok=True)
    r = run_gen("from-stats", log, "--base", base, "--name", name, "--out", out, *extra)
    return r, out


def base_with(tmp_path, profile, direct):
    """profiles/PROFILE.yaml as a base with its dispatch.direct replaced."""
    text = (ROOT / "profiles" / f"{profile}.yaml").read_text()
    assert "  direct: {auto: true}\n" in text
    path = tmp_path / "bases" / f"{profile}.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text.replace("  direct: {auto: true}\n", f"  direct: {direct}\n"))
    return path


def plan_of(generator, path):
    return generator.plan(str(path), str(path))


# --- the round trip -----------------------------------------------------------
@pytest.mark.parametrize("base", PROFILES)
def test_round_trip_reproduces_the_mix_and_chain(base, tmp_path, generator):
    """Counts proportional to the base's mix, printed by two vCPUs, come
    back as the same mix (proportions equal), give the same direct chain
    and the same dispatch code, and keep every policy of the base."""
    base_plan = generator.plan(f"profiles/{base}.yaml", str(ROOT / "profiles" / f"{base}.yaml"))
    p = base_plan.profile
    if p.unit == "count":		# a measured profile: its own counts
        counts = {m.reason.name: int(m.value) for m in p.mix}
    else:				# 100000 exits: every shipped share is a whole count
        counts = {m.reason.name: round(m.share * 100000) for m in p.mix}
        assert sum(counts.values()) == 100000
    total = sum(counts.values())
    measured = {k: n for k, n in counts.items() if n}
    r, out = from_stats(tmp_path, serial_log(split_counts(measured)), base, f"{base}-measured",
                        "--date", "2026-11-29", "--cpu", "corei7_skylake_x")
    assert r.returncode == 0, r.stderr
    new_plan = plan_of(generator, out)
    q = new_plan.profile

    assert q.unit == "count"
    assert q.source["kind"] == "measured"
    assert q.source["exits"] == total
    assert (q.source["guest"], q.source["cpu"], q.source["date"]) == ("hrtimer", "corei7_skylake_x",
                                                                      "2026-11-29")
    # The mix: every measured reason with its count; zero counts and OTHER
    # left out, except reasons an explicit order names.
    order_zeros = {n for n in (p.direct_value if p.direct_mode == "order" else []) if not counts[n]}
    assert {m.reason.name: m.value for m in q.mix} == {**measured, **{n: 0 for n in order_zeros}}
    for m in q.mix:
        assert m.share == pytest.approx(p.share[m.reason.name], abs=1e-12)
    assert "Left out: 7 exits with a reason above VMX_EXIT_REASON_MAX (OTHER)" in out.read_text()

    assert [d.reason.name for d in new_plan.direct] == [d.reason.name for d in base_plan.direct]
    # Everything but the name and the mix is the base's.
    old_v, new_v = dict(p.doc.value), dict(q.doc.value)
    for v in (old_v, new_v):
        del v["exit_mix"], v["profile"]
    assert new_v == old_v
    # The chain in C: the dispatch differs only in the profile's name and
    # the percentages (identical here) -- so not at all once normalised.
    from exitplan_gen.render import render_profile
    a = render_profile(base_plan)["exit_dispatch.c"]
    b = render_profile(new_plan)["exit_dispatch.c"]

    def normalised(c_text, name):
        """Without the banner (profile checksums) and the profile's name."""
        c_text = re.sub(r"/\*\n \* Generated by.*?\*/\n", "", c_text, flags=re.S)
        return c_text.replace(f"'{name}'", "'P'")
    assert normalised(a, p.name) == normalised(b, q.name)


def test_the_base_text_is_kept_outside_exit_mix(tmp_path):
    """Comments and layout of the base survive; only profile: and the
    exit_mix block change (plus the header naming the base)."""
    r, out = from_stats(tmp_path, serial_log([{"HLT": 5, "MSR_WRITE": 10}]), "default", "mine",
                        "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    base = (ROOT / "profiles" / "default.yaml").read_text().split("\n")
    new = out.read_text().split("\n")
    assert new[:2] == ["# from-stats: profile 'mine' is profiles/default.yaml with the exit mix measured by a run",
                       "# from-stats: (exit_mix.source); regenerate it with `make profile`, do not edit the mix."]
    new = new[2:]
    b0, n0 = base.index("exit_mix:"), new.index("exit_mix:")
    assert b0 == n0
    assert new[:b0] == [line.replace("profile: default", "profile: mine") for line in base[:b0]]
    b1, n1 = base.index("dispatch:"), new.index("dispatch:")
    assert new[n1:] == base[b1:]
    block = "\n".join(new[n0:n1])
    assert "    kind: measured" in block
    assert "    MSR_WRITE: 10\n    HLT: 5" in block		# frequency order
    assert "    cpu: \"" + BRAND + "\"" in block		# no --cpu: the brand string
    assert "OTHER" not in block


def test_regenerating_in_place_is_idempotent(tmp_path):
    """A measured profile regenerated from the same log under its own name
    (as profiles/hrtimer.yaml is) comes out byte for byte the same, and an
    earlier header is neither repeated nor lost."""
    log = serial_log([{"HLT": 5, "MSR_WRITE": 10, "PREEMPTION_TIMER": 9, "EXTERNAL_INTERRUPT": 9,
                       "INTERRUPT_WINDOW": 1, "CPUID": 2}])
    r, first = from_stats(tmp_path, log, "hrtimer", "timer", "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    header = first.read_text().split("\n")[:2]
    texts = []
    for _ in range(2):
        r, again = from_stats(tmp_path, log, str(first), "timer", "--date", "2026-11-29")
        assert r.returncode == 0, r.stderr
        texts.append(again.read_text())
    assert texts[0] == texts[1]
    assert texts[0].split("\n")[:2] == header and texts[0].count("# from-stats:") == 2
    assert "every other setting kept as it was." in " ".join(texts[0].split())


def test_chain_follows_the_measured_frequencies(tmp_path, generator):
    """default's coverage 0.95 over an hrtimer-like measurement: the chain
    is the measured order, cut where 95% is reached (50+25+12+10 = 97%)."""
    log = serial_log([{"MSR_WRITE": 5000, "PREEMPTION_TIMER": 2500, "EXTERNAL_INTERRUPT": 1200,
                       "HLT": 1000, "CPUID": 200, "IO_INSTRUCTION": 100}])
    r, out = from_stats(tmp_path, log, base_with(tmp_path, "default", "{coverage: 0.95}"),
                        "timer-measured", "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    plan = plan_of(generator, out)
    assert [d.reason.name for d in plan.direct] == ["MSR_WRITE", "PREEMPTION_TIMER", "EXTERNAL_INTERRUPT", "HLT"]
    assert plan.direct_share == pytest.approx(0.97)
    # hrtimer's count 5 over the same numbers: ties none, fifth is CPUID.
    r, out = from_stats(tmp_path, log, base_with(tmp_path, "hrtimer", "{count: 5}"),
                        "timer-five", "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    assert [d.reason.name for d in plan_of(generator, out).direct] == \
        ["MSR_WRITE", "PREEMPTION_TIMER", "EXTERNAL_INTERRUPT", "HLT", "CPUID"]
    # hrtimer's own auto over the same numbers: all six are handled, so
    # every link pays.
    r, out = from_stats(tmp_path, log, "hrtimer", "timer-auto", "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    assert [d.reason.name for d in plan_of(generator, out).direct] == \
        ["MSR_WRITE", "PREEMPTION_TIMER", "EXTERNAL_INTERRUPT", "HLT", "CPUID", "IO_INSTRUCTION"]


def test_vcpus_are_summed_and_a_timing_document_is_read(tmp_path, generator):
    log = serial_log([{"HLT": 3, "CPUID": 1}, {"HLT": 1, "CPUID": 5}, {"VMCALL": 2}], level="timing")
    r, out = from_stats(tmp_path, log, "table-only", "three", "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    q = plan_of(generator, out).profile
    assert {m.reason.name: m.value for m in q.mix} == {"CPUID": 6, "HLT": 4, "VMCALL": 2}
    assert q.source["exits"] == 12
    assert "on 3 vCPUs, summed" in " ".join(q.source["basis"].split())


def test_bare_yaml_document_and_one_document_per_vcpu(tmp_path, generator):
    """A bare YAML file is read as it is; a log with a document per vCPU
    (as exitplan prints them) is summed over all of them."""
    bare = "\n".join(stats_document([{"HLT": 2}])[1:-1]) + "\n"
    r, out = from_stats(tmp_path, bare, "table-only", "bare", "--date", "2026-11-29", log_name="stats.yaml")
    assert r.returncode == 0, r.stderr
    assert [m.reason.name for m in plan_of(generator, out).profile.mix] == ["HLT"]
    second = serial_log([{"CPUID": 4, "HLT": 1}]).replace("- id: 0", "- id: 1")
    r, out = from_stats(tmp_path, serial_log([{"HLT": 2}]) + second, "table-only", "twice",
                        "--date", "2026-11-29")
    assert r.returncode == 0, r.stderr
    q = plan_of(generator, out).profile
    assert {m.reason.name: m.value for m in q.mix} == {"CPUID": 4, "HLT": 3}
    assert "on 2 vCPUs, summed" in " ".join(q.source["basis"].split())


def test_note_and_default_date(tmp_path):
    r, out = from_stats(tmp_path, serial_log([{"HLT": 2}]), "vmexit-bench", "bench-measured",
                        "--note", "Measured with a counting variant of vmexit-bench.")
    assert r.returncode == 0, r.stderr
    v = yaml.safe_load(out.read_text())
    assert str(v["exit_mix"]["source"]["date"]) == datetime.date.today().isoformat()
    assert v["exit_mix"]["source"]["basis"].endswith("Measured with a counting variant of vmexit-bench.")
    assert v["statistics"] == "off" or v["statistics"] is False	# YAML 1.1 readers see a boolean


def test_stdout(tmp_path):
    log = tmp_path / "serial.log"
    log.write_text(serial_log([{"HLT": 2}]))
    r = run_gen("from-stats", log, "--base", "default", "--name", "x", "--date", "2026-11-29", "--out", "-")
    assert r.returncode == 0, r.stderr
    assert "profile: x\n" in r.stdout and "    HLT: 2\n" in r.stdout
    assert not (ROOT / "profiles" / "x.yaml").exists()


# --- determinism ---------------------------------------------------------------
def test_deterministic(tmp_path):
    """The same inputs give the same bytes, under any hash seed, and a
    second run leaves the file (and its mtime) alone."""
    log = tmp_path / "serial.log"
    log.write_text(serial_log(split_counts({"HLT": 40, "MSR_WRITE": 40, "CPUID": 20, "EXTERNAL_INTERRUPT": 40})))
    texts = []
    for seed in ("0", "1", "12345"):
        out = tmp_path / seed / "d.yaml"
        out.parent.mkdir()
        r = run_gen("from-stats", log, "--base", "default", "--name", "d", "--date", "2026-11-29",
                    "--out", out, env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        texts.append(out.read_bytes())
    assert texts[0] == texts[1] == texts[2]
    before = os.stat(out).st_mtime_ns
    r = run_gen("from-stats", log, "--base", "default", "--name", "d", "--date", "2026-11-29", "--out", out)
    assert r.returncode == 0 and r.stdout == ""
    assert os.stat(out).st_mtime_ns == before


# --- errors ---------------------------------------------------------------------
def expected(path):
    first = path.read_text().split("\n", 1)[0]
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: MESSAGE'"
    return first[len("# expect: "):]


def test_corpus_is_large_enough():
    assert len(BAD) >= 12


@pytest.fixture
def main_in_process(generator, monkeypatch):
    import exitplan_gen.main as main_mod
    monkeypatch.setattr(main_mod, "Spec", lambda root: generator.spec)
    monkeypatch.chdir(ROOT)
    return main_mod.main


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_document(path, tmp_path, main_in_process, capsys):
    """Each is refused with exactly its line, status 2, nothing written."""
    out = tmp_path / "x.yaml"
    rc = main_in_process(["from-stats", str(path.relative_to(ROOT)), "--base", "default", "--name", "x",
                          "--out", str(out)])
    so, se = capsys.readouterr()
    assert rc == 2, se
    assert so == ""
    assert se == expected(path) + "\n"
    assert not out.exists() and list(tmp_path.iterdir()) == []


GOOD_LOG = serial_log([{"HLT": 5, "MSR_WRITE": 10, "CPUID": 1}])

BAD_COMMANDS = [
    # (arguments after LOG, the message)
    (["--base", "nope", "--name", "x"],
     "profiles/nope.yaml: cannot read: No such file or directory (--base nope)"),
    (["--base", "default", "--name", "Timer_1"],
     "exitplan-gen from-stats: --name 'Timer_1' must be lower-case letters, digits and dashes, "
     "starting with a letter"),
    (["--base", "default", "--name", "x", "--out", "{tmp}/y.yaml"],
     "{tmp}/y.yaml: a profile named 'x' must be written to x.yaml (the file name is the profile's name)"),
    (["--base", "default", "--name", "x", "--date", "2026-02-30"],
     "exitplan-gen from-stats: --date '2026-02-30' is not a date written YYYY-MM-DD"),
    (["--base", "default", "--name", "x", "--cpu", " "],
     "exitplan-gen from-stats: --cpu is empty"),
    # The base calls 5 reasons directly; the run saw 3.
    (["--base", "{tmp}/count-five.yaml", "--name", "x"],
     "{tmp}/count-five.yaml:9:19: dispatch.direct.count is 5 but exit_mix has only 3 reasons with a "
     "runtime handler (with the exit mix measured in {tmp}/serial.log)"),
    # A base that is itself invalid is reported as gen would.
    (["--base", "tests/gen/bad/semantic-shares-sum.yaml", "--name", "x"],
     "tests/gen/bad/semantic-shares-sum.yaml:7:12: exit_mix.reasons: the shares add up to 0.9, not 1"),
]


COUNT_FIVE = """\
# A base whose policy five measured reasons would be needed for.
profile: count-five
description: Five reasons called directly.
exit_mix:
  source: {kind: estimate, basis: "test"}
  unit: share
  reasons: {HLT: 0.2, MSR_WRITE: 0.2, CPUID: 0.2, VMCALL: 0.2, IO_INSTRUCTION: 0.2}
dispatch:
  direct: {count: 5}
  policy: direct
"""


@pytest.mark.parametrize("args,message", BAD_COMMANDS, ids=[m.split(":")[0][-20:] + str(i)
                                                          for i, (_, m) in enumerate(BAD_COMMANDS)])
def test_bad_command(args, message, tmp_path, main_in_process, capsys):
    log = tmp_path / "serial.log"
    log.write_text(GOOD_LOG)
    (tmp_path / "count-five.yaml").write_text(COUNT_FIVE)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "x.yaml")]
    before = snapshot(tmp_path)
    rc = main_in_process(["from-stats", str(log), *args])
    so, se = capsys.readouterr()
    assert rc == 2, se
    assert so == ""
    assert se == message.replace("{tmp}", str(tmp_path)) + "\n"
    assert snapshot(tmp_path) == before


def test_bad_input_by_the_command(tmp_path):
    """As a real process: status 2, one line, no traceback, nothing written
    (not even profiles/NAME.yaml in the checkout, the default output)."""
    path = ROOT / "tests" / "gen" / "bad-stats" / "unknown-reason.log"
    r = run_gen("from-stats", path.relative_to(ROOT), "--base", "hrtimer", "--name", "from-stats-test")
    assert r.returncode == 2
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert r.stderr == expected(path) + "\n"
    assert not (ROOT / "profiles" / "from-stats-test.yaml").exists()


# --- make profile -----------------------------------------------------------------
def test_make_profile(tmp_path):
    """make profile in a copy of the generator's inputs: writes
    profiles/NAME.yaml and generated/NAME/, leaves the other profiles'
    output alone, and `check` is clean afterwards."""
    import shutil
    work = tmp_path / "work"
    for d in ("gen", "spec", "profiles", "generated"):
        shutil.copytree(ROOT / d, work / d, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "Makefile").write_text("PYTHON := /usr/bin/python3\nPROFILE ?= default\nBUILD := build\n"
                                   "PROFILES := $(sort $(basename $(notdir $(wildcard profiles/*.yaml))))\n"
                                   "include gen/gen.mk\n")
    log = tmp_path / "run it.serial"		# a space: make quotes what it passes on
    log.write_text(serial_log([{"HLT": 50, "MSR_WRITE": 100, "PREEMPTION_TIMER": 60, "CPUID": 3}]))
    before = snapshot(work / "generated")
    five = base_with(tmp_path, "hrtimer", "{count: 5}")
    r = subprocess.run(["make", "-s", "profile", f"FROM={log}", "NAME=timer", f"BASE={five}",
                        "CPU_MODEL=corei7_skylake_x", "DATE=2026-11-29", "NOTE=It's a test."],
                       cwd=work, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, "hrtimer's count 5 cannot be met by 4 reasons"
    assert "dispatch.direct.count is 5 but exit_mix has only 4" in r.stderr
    assert not (work / "profiles" / "timer.yaml").exists()
    r = subprocess.run(["make", "-s", "profile", f"FROM={log}", "NAME=timer", "BASE=default",
                        "CPU_MODEL=corei7_skylake_x", "DATE=2026-11-29", "NOTE=It's a test."],
                       cwd=work, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    text = (work / "profiles" / "timer.yaml").read_text()
    assert "    cpu: corei7_skylake_x\n" in text and "It's a test." in text
    after = snapshot(work / "generated")
    assert {k: v for k, v in after.items() if not k.startswith("timer/")} == before
    assert "if (basic_reason == EXIT_REASON_MSR_WRITE)" in (work / "generated" / "timer" / "exit_dispatch.c").read_text()
    assert run_gen("check", cwd=work).returncode == 0
    r = subprocess.run(["make", "-s", "profile"], cwd=work, capture_output=True, text=True)
    assert r.returncode == 2 and "usage: make profile FROM=serial.log NAME=x" in r.stderr
