# SPDX-License-Identifier: GPL-2.0-only
"""The exit statistics are right (docs/STATS.md).

The stats guest (tests/guest/stats) resets its vCPU's statistics, causes
exits whose numbers it knows exactly (each times its option n), checks
them itself with STATS_READ and ends through isa-debug-exit; exitplan then
prints its statistics document.  Four boots on the default CPU model, two
at a time:
- counts: the default profile (`statistics: counts`), stats guest n=1;
- timing: a test-only variant of the default profile with
  `statistics: timing`, generated into the build directory (never into
  profiles/), stats guest n=2;
- off: the vmexit-bench profile (`statistics: off`), stats guest n=1;
- hrtimer: the hrtimer guest under the hrtimer profile, whose MSR writes
  are exactly one IA32_TSC_DEADLINE write per timer.

The document is read with yaml.safe_load and checked exactly: per vCPU the
per-reason counts add up to `exits`; the reasons and every breakdown hold
precisely the exits the guest caused, plus only those the profile causes
on its own (VMX-preemption timer expiries, which the guest cannot count).
Tick values are never pass/fail material, only their presence.  Each
vCPU's event counters (`events:`, and the human `exitplan: events:` line)
are there at every level and say the same in both places."""
import re

import pytest
import yaml

import bootlib

REPO = bootlib.REPO
TIMING_VARIANT = "vmx-test-stats-timing"
HRTIMER_COUNT = 100

# The stats guest's workload per unit of n (tests/guest/stats/main.c).
PER_N = {"cpuid_basic": 37, "cpuid_hv": 13, "vmcall_nop": 23, "out_sel": 11,
         "in_data": 7, "rdmsr": 5, "wrmsr": 3}
# Its STATS_READ calls after the workload: CPUID, IO_INSTRUCTION,
# MSR_READ, MSR_WRITE, the slot above the SDM's range, VMCALL.
STATS_READ_CALLS = 6
# Ports that are not in spec/ (docs/GUESTS.md): fw_cfg and isa-debug-exit.
FW_CFG_PORT_SEL, FW_CFG_PORT_DATA, DEBUG_EXIT_PORT = 0x510, 0x511, 0xf4
# What every guest's start-up (tests/guest/lib) does on ports it does not
# own, each an exit under default deny: the probe of port 0xE9 (it reads
# all ones, so the guest prints on COM1 alone) and masking both 8259s.
# (The stats guest resets its counts after them.)
GUEST_START_IO = {0xe9: 1, 0x21: 1, 0xa1: 1}

# The event counters of each vCPU (arch/vmx/vmx_report.c), in the document
# and on the line after the table.
EVENTS = ("nmis_in_root", "kicks_in_root", "storm_steps")
EVENTS_RE = (r"^exitplan: events: (\d+) NMIs in root operation given to the guest, "
             r"(\d+) kicks taken in root operation, (\d+) interrupt-storm steps$")

DOC_RE = re.compile(r"^# exitplan-stats-begin\n(.*?)^# exitplan-stats-end$", re.M | re.S)


def _spec(name):
    return yaml.safe_load((REPO / "spec" / name).read_text())


def _find_named(node, name):
    """The first mapping with `name: name` anywhere in a loaded spec file."""
    if isinstance(node, dict):
        if node.get("name") == name:
            return node
        node = list(node.values())
    if isinstance(node, list):
        for v in node:
            hit = _find_named(v, name)
            if hit is not None:
                return hit
    return None


# Architectural numbers and the hypercall ABI, from spec/ (their one source).
HYPERCALL = {h["name"]: h["number"] for h in _spec("hypercalls.yaml")["hypercalls"]}
MSR_IA32_APIC_BASE = _find_named(_spec("msrs.yaml"), "IA32_APIC_BASE")["index"]
MSR_IA32_TSC_DEADLINE = _find_named(_spec("msrs.yaml"), "IA32_TSC_DEADLINE")["index"]
CPUID_HYPERVISOR_BASE = _find_named(_spec("arch.yaml"), "CPUID_HYPERVISOR_BASE")["value"]


def stats_guest_expected(n):
    """The document a stats guest run with n must produce: reasons and
    breakdowns, as exact counts."""
    p = {k: v * n for k, v in PER_N.items()}
    return {
        "reasons": {
            "CPUID": p["cpuid_basic"] + p["cpuid_hv"],
            "VMCALL": p["vmcall_nop"] + STATS_READ_CALLS,
            # The last exit: the OUT to isa-debug-exit that ends the guest.
            "IO_INSTRUCTION": p["out_sel"] + p["in_data"] + 1,
            "MSR_READ": p["rdmsr"],
            "MSR_WRITE": p["wrmsr"],
        },
        "cpuid": {0x0: p["cpuid_basic"], CPUID_HYPERVISOR_BASE: p["cpuid_hv"]},
        "hypercall": {HYPERCALL["NOP"]: p["vmcall_nop"],
                      HYPERCALL["STATS_READ"]: STATS_READ_CALLS},
        "io": {FW_CFG_PORT_SEL: p["out_sel"], FW_CFG_PORT_DATA: p["in_data"],
               DEBUG_EXIT_PORT: 1},
        "msr_read": {MSR_IA32_APIC_BASE: p["rdmsr"]},
        "msr_write": {MSR_IA32_APIC_BASE: p["wrmsr"]},
    }


# Exits a profile causes whatever the guest does: the default profile runs
# the VMX-preemption timer with a period, so an expiry may fall anywhere.
ASYNC_REASONS = {"PREEMPTION_TIMER"}

# name: (profile, guest, guest args, expected document or None)
RUNS = {
    "counts": ("default", "stats", "n=1", "counts"),
    "timing": (TIMING_VARIANT, "stats", "n=2", "timing"),
    "off": ("vmexit-bench", "stats", "n=1", None),
    "hrtimer": ("hrtimer", "hrtimer", f"count={HRTIMER_COUNT}", "counts"),
}


def build_timing_variant(out):
    """profiles/default.yaml with `statistics: timing`, built into out."""
    return bootlib.build_profile_variant(
        "default", TIMING_VARIANT,
        [(r"^statistics:[ \t]*counts[ \t]*$", "statistics: timing")],
        out, "tests/boot/test_vmx_stats.py")


@pytest.fixture(scope="module")
def stats_runs(boot_out):
    out = boot_out / "vmx-stats"
    hvs = {prof: bootlib.build_hv(prof) for prof in ("default", "vmexit-bench", "hrtimer")}
    hvs[TIMING_VARIANT] = build_timing_variant(out)
    guests = {g: bootlib.build_guest(g) for g in ("stats", "hrtimer")}
    jobs = []
    for name, (prof, guest, args, _) in RUNS.items():
        iso = bootlib.build_iso(hvs[prof], guests[guest], out / f"{name}.iso", guest_args=args)
        jobs.append(lambda i=iso, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, bootlib.DEFAULT_CPU, s))
    # Two at a time: the machine has two cores.
    return dict(zip(RUNS, bootlib.run_parallel(jobs, max_workers=2)))


def stats_document(r):
    """The one statistics document of a run, loaded, and the run itself
    checked to have ended cleanly."""
    r.expect_clean_exit()
    docs = DOC_RE.findall(r.serial)
    assert len(docs) == 1, f"{len(docs)} statistics documents\n{r.describe()}"
    doc = yaml.safe_load(docs[0])
    assert isinstance(doc, dict) and set(doc) == {"exitplan_stats"}, docs[0]
    return doc["exitplan_stats"]


def summary_table(r):
    """The human-readable table before the document: {reason: count}, total."""
    m = r.expect(r"^exitplan: exits by reason \(profile '[^']*'\):\n((?:  .*\n)*?)"
                 r"      total +(\d+)$")
    rows = {}
    for line in m.group(1).splitlines():
        f = re.match(r"^ +(\d+) (\S+) +(\d+)", line)
        assert f, f"unparsable summary line {line!r}"
        rows[f.group(2)] = int(f.group(3))
    return rows, int(m.group(2))


def check_document_shape(st, name):
    """Fields and consistency every document must have, whatever the guest."""
    prof, guest, args, level = RUNS[name]
    assert st["version"] == 1
    assert st["profile"] == prof
    assert st["level"] == level
    assert st["guest"] == guest
    assert st["guest_args"] == args
    assert isinstance(st["cpu"], str) and st["cpu"].strip()
    vcpus = st["vcpus"]
    assert isinstance(vcpus, list) and [v["id"] for v in vcpus] == [0], vcpus
    for v in vcpus:
        reasons = v["reasons"]
        assert isinstance(reasons, dict) and reasons, v
        for rname, e in reasons.items():
            assert isinstance(e["count"], int) and e["count"] > 0, (rname, e)
        # The first point: the per-reason counts add up to the total.
        assert sum(e["count"] for e in reasons.values()) == v["exits"], v
        for table in ("msr_read", "msr_write", "io", "cpuid", "hypercall"):
            t = v[table]
            assert isinstance(t, dict), (table, t)
            assert all(isinstance(c, int) and c > 0 for c in t.values()), (table, t)
            assert "other" not in t, f"{table} overflowed its table: {t}"
        # Each breakdown covers its reason's exits one for one.
        for table, rname in (("msr_read", "MSR_READ"), ("msr_write", "MSR_WRITE"),
                             ("io", "IO_INSTRUCTION"), ("cpuid", "CPUID"),
                             ("hypercall", "VMCALL")):
            got = sum(v[table].values())
            want = reasons.get(rname, {"count": 0})["count"]
            assert got == want, f"{table} sums to {got}, {rname} count is {want}: {v}"
        ev = v["events"]
        assert set(ev) == set(EVENTS), ev
        assert all(isinstance(c, int) and c >= 0 for c in ev.values()), ev
        if level == "timing":
            for rname, e in reasons.items():
                assert isinstance(e.get("ticks"), int) and e["ticks"] > 0, (rname, e)
        else:
            for rname, e in reasons.items():
                assert set(e) == {"count"}, (rname, e)
    if level == "timing":
        assert isinstance(st.get("tsc_overhead"), int), st
    else:
        assert "tsc_overhead" not in st, st


@pytest.mark.parametrize("name", ["counts", "timing", "hrtimer"])
def test_document_consistent(stats_runs, name):
    r = stats_runs[name]
    st = stats_document(r)
    check_document_shape(st, name)
    # The summary table says the same as the document.
    rows, total = summary_table(r)
    v = st["vcpus"][0]
    assert rows == {k: e["count"] for k, e in v["reasons"].items()}, (rows, v["reasons"])
    assert total == v["exits"]
    # So does the events line after it.
    m = r.expect(EVENTS_RE)
    assert dict(zip(EVENTS, map(int, m.groups()))) == v["events"], (m.group(0), v["events"])


@pytest.mark.parametrize("name", ["counts", "timing"])
def test_stats_guest_passes(stats_runs, name):
    r = stats_runs[name]
    n = int(RUNS[name][2].split("=")[1])
    for check in ("cpuid", "io", "msr-read", "msr-write", "other", "vmcall"):
        r.expect(rf"^PASS: stats-count-{check}$")
    m = r.expect(r"^guest stats: (\d+) passed, (\d+) failed$")
    assert int(m.group(2)) == 0 and not r.find(r"^FAIL"), r.describe()
    # The guest accounts for its STATS_READ calls as this test does.
    r.expect(rf"^stats: {STATS_READ_CALLS} STATS_READ calls;")
    r.expect(rf"^stats: n={n}: {PER_N['cpuid_basic'] * n} CPUID leaf 0x0,")
    r.expect(r"^exitplan: guest exit status 1$")


@pytest.mark.parametrize("name", ["counts", "timing"])
def test_stats_guest_exact_counts(stats_runs, name):
    st = stats_document(stats_runs[name])
    n = int(RUNS[name][2].split("=")[1])
    want = stats_guest_expected(n)
    v = st["vcpus"][0]
    got = {k: e["count"] for k, e in v["reasons"].items()}
    extra = {k: c for k, c in got.items() if k not in want["reasons"]}
    assert set(extra) <= ASYNC_REASONS, \
        f"exits the guest did not cause: {extra} (all: {got})"
    assert {k: c for k, c in got.items() if k in want["reasons"]} == want["reasons"], \
        f"reasons {got}, expected {want['reasons']} plus any of {sorted(ASYNC_REASONS)}"
    for table in ("cpuid", "hypercall", "io", "msr_read", "msr_write"):
        assert v[table] == want[table], f"{table}: {v[table]}, expected {want[table]}"
    # One vCPU, no interrupt, no NMI: none of the events happened.
    assert v["events"] == dict.fromkeys(EVENTS, 0), v["events"]


def test_statistics_off(stats_runs):
    r = stats_runs["off"]
    r.expect_clean_exit()
    assert "# exitplan-stats-begin" not in r.serial and \
        "# exitplan-stats-end" not in r.serial, r.describe()
    assert not r.find(r"^exitplan: exits by reason"), r.describe()
    r.expect(r"^exitplan: exit statistics are off in profile 'vmexit-bench'$")
    # The event counters are kept at every level, and reported.
    m = r.expect(EVENTS_RE)
    assert tuple(map(int, m.groups())) == (0, 0, 0), m.group(0)
    # The guest still ran its workload, and only the count checks skipped.
    r.expect(r"^SKIP: stats-count \(exit statistics are off in this profile")
    r.expect(r"^PASS: stats-vmcall-nop$")
    r.expect(r"^PASS: stats-fw_cfg-signature$")
    assert not r.find(r"^PASS: stats-count"), r.describe()
    m = r.expect(r"^guest stats: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) > 0 and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")


def test_hrtimer_msr_writes_exact(stats_runs):
    """The hrtimer guest writes IA32_TSC_DEADLINE once per timer and no
    other MSR, and ends with one OUT to isa-debug-exit (after the start-up's
    denied ports): the MSR_WRITE and IO_INSTRUCTION counts and their
    breakdowns are exact."""
    r = stats_runs["hrtimer"]
    r.expect(rf"^hrtimer: {HRTIMER_COUNT} timers, .*TSC-deadline mode$")
    r.expect(rf"^hrtimer: {HRTIMER_COUNT} timers fired$")
    st = stats_document(r)
    v = st["vcpus"][0]
    assert v["reasons"]["MSR_WRITE"]["count"] == HRTIMER_COUNT, v
    assert v["msr_write"] == {MSR_IA32_TSC_DEADLINE: HRTIMER_COUNT}, v
    assert v["reasons"]["IO_INSTRUCTION"]["count"] == 1 + sum(GUEST_START_IO.values()), v
    assert v["io"] == {DEBUG_EXIT_PORT: 1, **GUEST_START_IO}, v
    assert v["hypercall"] == {} and "VMCALL" not in v["reasons"], v
