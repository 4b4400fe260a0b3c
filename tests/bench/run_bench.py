#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The exit-cost benchmark on Bochs: every profile, one run, one report.

    tests/bench/run_bench.py [--out build/bench] [--cpu corei7_skylake_x]
                             [--profiles a,b,...] [--jobs 2] [--timeout 300]
    tests/bench/run_bench.py --from-serial DIR    re-analyse recorded runs

Builds every profile's hypervisor (plus bench-only variants of the
default profile with IA32_EFER switched through the MSR-load lists and by
hand), boots the bench guest
and the hrtimer guest under each on Bochs, two at a time, then the
workloads (workloads.py: pipe ping-pong on 2 and 4 CPUs) on bare Bochs
and under the same builds, the overcommit workload (overcommit.py: a
ticket spinlock at 1:1, 2:1 and 3:1 vCPUs per CPU, each with PAUSE-loop,
plain or no PAUSE exiting), the Linux workloads (linux.py: the initramfs
programs under their linux-* profiles and on bare Bochs), parses what the
guests print, and writes to
--out:

  results.md      ticks per exit kind per profile; each profile's weighted
                  mean exit cost under its own exit mix and the others';
                  EFER atomic against manual; reference values; the runs
  results.csv     the ticks table, one row per profile (and reference)
  weighted.csv    the weighted means, one row per (profile, mix)
  workloads.csv   the workloads' round trips, one row per (setting, case)
  overcommit.csv  the overcommit workload's totals, one row per (v:p, PAUSE handling)
  linux.csv       the Linux workloads, one row per (workload, setting)
                  (results.md also includes host.md, the host microbenchmark's
                  report, when `make bench-host` left one in --out)
  exit-costs.png  the ticks table as grouped bars
  runs/LABEL/GUEST.{iso,serial,bochs.log}   what each run printed
  workloads/SETTING/CASE.serial            what each workload run printed
  overcommit/RATIO-MODE.serial             what each overcommit run printed
  linux/WORKLOAD-SETTING.serial            what each Linux run printed

Bochs ticks are retired-instruction counts (the emulated TSC advances one
tick per instruction): deterministic path lengths, not cycles.  docs/BENCH.md
explains the numbers.  Exit status: 0 when every run produced its numbers,
1 when some did not (the report is still written and says which), 2 on
bad arguments or input.
"""
import argparse
import csv
import datetime
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "bench"))
import dispatchcmp  # noqa: E402
import exitmix  # noqa: E402
import exitpath  # noqa: E402
import intrpaths  # noqa: E402
import linux  # noqa: E402
import overcommit  # noqa: E402
import workloads  # noqa: E402

TICKS_NOTE = ("Bochs ticks are retired-instruction counts (deterministic path lengths), "
              "not cycles: the emulated TSC advances one tick per instruction, and no "
              "cache, TLB or branch-predictor cost is modelled.")
UNIT = "Bochs ticks (retired instructions, not cycles)"

GUESTS = ("bench", "hrtimer")

# Without exit statistics the bench guest calls a kind that costs fewer
# ticks than this above its RDTSC pair "did not exit" (tests/guest/bench);
# the same rule decides here whether a kind measured an exit.
NO_EXIT_TICKS = 20

# Exit reason -> the bench guest's kinds (full match) whose round trip is
# that exit.  Several kinds of one reason are averaged (IN and OUT).  The
# kind names are the guest's (tests/guest/bench/main.c, docs/GUESTS.md).
REASON_KINDS: List[Tuple[str, str]] = [
    ("CPUID", r"cpuid"),
    ("VMCALL", r"vmcall(-.+)?"),
    ("MSR_READ", r"rdmsr(-.+)?"),
    ("MSR_WRITE", r"wrmsr(-.+)?"),
    ("IO_INSTRUCTION", r"(in|out)(-.+)?"),
    ("HLT", r"hlt(-.+)?"),
    ("PAUSE_INSTRUCTION", r"pause(-.+)?"),
    ("EPT_VIOLATION", r"mmio(-.+)?"),
    ("CR_ACCESS", r"(mov-(to|from)-)?cr8(-.+)?"),
    ("DR_ACCESS", r"(mov-(to|from)-)?dr[0-7]?(-.+)?"),
    ("PREEMPTION_TIMER", r"preemption(-timer)?(-.+)?"),
    ("EXTERNAL_INTERRUPT", r"(external-interrupt|ext-?int|irq)(-.+)?"),
]

# Round trips that include waiting for a timer: the HLT kind is HLT exit,
# timer interrupt exit and injection *plus* the wait for the APIC timer.
# The weighted means are given with and without them.
WAITING_REASONS = ("HLT",)

# Reference values (ticks, measured from the guest in the same emulator),
# copied from docs/PLATFORM.md: not measured by this run.
# kind regex -> value, so they land in the column of the matching kind.
REFERENCES = [
    ("reference: KVM (Linux 6.1 kvm_intel)",
     "PLATFORM.md: Linux KVM measured the same way in the same emulator; "
     "the port read goes out to KVM's userspace VMM",
     [(r"cpuid", "961"), (r"vmcall(-.+)?", "952"), (r"in(-.+)?", "3089")]),
    ("reference: minimal hand-written handler",
     "PLATFORM.md: floors measured with minimal hand-written handlers",
     [(r"cpuid", "71-75"), (r"vmcall(-.+)?", "63-71"), (r"rdmsr(-.+)?", "60"),
      (r"wrmsr(-.+)?", "61-63"), (r"out(-.+)?", "59-63")]),
]

# Kinds derived from the hrtimer guest's own lines (it prints no `bench:`).
HRTIMER_KINDS = ("hrtimer-cycle", "hrtimer-latency")

# Bench-only variants of the default profile that differ only in how
# IA32_EFER is switched: label -> (switch, in words).  The default profile
# itself takes the atomic switch ("load IA32_EFER") where the CPU has it.
EFER_VARIANTS = {
    "default-efer-loadlist": ("load_list", "the VM-entry/VM-exit MSR-load lists"),
    "default-efer-manual": ("manual", "WRMSR on the exit path and before entry"),
}

# The workload guest whose counted exits become one more mix to weigh
# with, run under the profile of the same name where there is one.
MEASURED_GUEST = "hrtimer"
MEASURED_MIX = f"measured:{MEASURED_GUEST}"


# ---------------------------------------------------------------- parsing

@dataclass
class Measure:
    kind: str
    ticks: float
    iterations: int
    exits: Optional[int] = None         # from bench-info, when counted
    exit_reason: Optional[str] = None

    def exits_once(self) -> bool:
        """Did each round trip take exactly one exit?  Counted when the
        hypervisor keeps statistics, else the guest's own tick rule."""
        if self.exits is not None:
            return self.exits == self.iterations
        return self.ticks >= NO_EXIT_TICKS


@dataclass
class GuestOutput:
    guest: Optional[str] = None
    measures: Dict[str, Measure] = field(default_factory=dict)   # in print order
    skipped: Dict[str, str] = field(default_factory=dict)
    failures: List[str] = field(default_factory=list)
    passed: Optional[int] = None
    failed: Optional[int] = None
    rdtsc_pair: Dict[str, float] = field(default_factory=dict)
    gates: Dict[str, str] = field(default_factory=dict)
    refused: Optional[str] = None
    panic: Optional[str] = None
    exit_counts: Dict[str, int] = field(default_factory=dict)
    stats_profile: Optional[str] = None
    hrtimer: Dict[str, float] = field(default_factory=dict)
    notes_line: bool = False            # the guest said ticks are not cycles
    stats_docs: List[dict] = field(default_factory=list)   # docs/STATS.md, one per vCPU
    paths: Dict[str, "intrpaths.PathMeasure"] = field(default_factory=dict)  # intr-* kinds

    @property
    def complete(self) -> bool:
        return self.passed is not None


_NUM = r"(\d+(?:\.\d+)?)"
BENCH_RE = re.compile(r"^bench: ([A-Za-z0-9_.-]+) " + _NUM + r" (\d+)[ \t]*$", re.M)
INFO_RE = re.compile(r"^bench-info: (\S+) caused (\d+) ([A-Z0-9_]+) exits in (\d+) round trips[ \t]*$",
                     re.M)
SKIP_RE = re.compile(r"^SKIP: bench-(\S+)(?: \((.*)\))?[ \t]*$", re.M)
FAIL_RE = re.compile(r"^FAIL: .*$", re.M)
SUMMARY_RE = re.compile(r"^guest (\S+): (\d+) passed, (\d+) failed[ \t]*$", re.M)
GATE_RE = re.compile(r"^gate ([A-Za-z0-9_]+): (.*?)[ \t]*$", re.M)
REFUSED_RE = re.compile(r"^exitplan: profile '[^']*' refused: .*$", re.M)
PANIC_RE = re.compile(r"^exitplan: PANIC: .*$", re.M)
HRT_HEAD_RE = re.compile(r"^hrtimer: (\d+) timers, (\d+) ticks apart, (.*)$", re.M)
HRT_FIRED_RE = re.compile(r"^hrtimer: (\d+) timers fired[ \t]*$", re.M)
HRT_TOTAL_RE = re.compile(r"^hrtimer: (\d+) ticks in all[ \t]*$", re.M)
HRT_LAT_RE = re.compile(r"^hrtimer: wake-up latency after the deadline: min (\d+), mean (\d+), "
                        r"max (\d+) ticks[ \t]*$", re.M)


def parse_serial(text: str) -> GuestOutput:
    """What a guest (bench or hrtimer) and the hypervisor printed."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out = GuestOutput()
    for m in BENCH_RE.finditer(text):
        kind, ticks, iters = m.group(1), float(m.group(2)), int(m.group(3))
        if re.fullmatch(r"rdtsc-pair(-.+)?", kind):
            # The timing's own cost (rdtsc-pair-64: in IA-32e mode), already
            # subtracted from every kind.
            out.rdtsc_pair[kind] = ticks
            continue
        if intrpaths.is_path(kind):
            continue            # an interrupt path, several exits: its own section
        out.measures[kind] = Measure(kind, ticks, iters)
    out.paths = intrpaths.parse(text)
    out.notes_line = re.search(r"^bench: ticks are .*not cycles", text, re.M) is not None
    for m in INFO_RE.finditer(text):
        meas = out.measures.get(m.group(1))
        if meas is not None and int(m.group(4)) == meas.iterations:
            meas.exits, meas.exit_reason = int(m.group(2)), m.group(3)
    for m in SKIP_RE.finditer(text):
        out.skipped[m.group(1)] = m.group(2) or ""
    out.failures = FAIL_RE.findall(text)
    m = SUMMARY_RE.search(text)
    if m:
        out.guest, out.passed, out.failed = m.group(1), int(m.group(2)), int(m.group(3))
    for m in GATE_RE.finditer(text):
        out.gates[m.group(1)] = m.group(2)
    m = REFUSED_RE.search(text)
    out.refused = m.group(0) if m else None
    m = PANIC_RE.search(text)
    out.panic = m.group(0) if m else None
    # Exit counts from the statistics document (docs/STATS.md), summed
    # over vCPUs; the table the hypervisor prints before it is for people.
    out.stats_docs = dispatchcmp.parse_stats_docs(text)
    for d in out.stats_docs:
        out.stats_profile = out.stats_profile or d.get("profile")
        for v in d.get("vcpus") or []:
            for reason, e in ((v or {}).get("reasons") or {}).items():
                if isinstance(e, dict) and e.get("count"):
                    out.exit_counts[reason] = out.exit_counts.get(reason, 0) + int(e["count"])
    _parse_hrtimer(text, out)
    return out


def _parse_hrtimer(text: str, out: GuestOutput) -> None:
    """hrtimer-cycle: ticks per timer beyond the programmed delta (arming
    WRMSR, HLT, the timer's exit, injection, return to the guest);
    hrtimer-latency: mean ticks from the deadline to the guest running."""
    head, fired = HRT_HEAD_RE.search(text), HRT_FIRED_RE.search(text)
    total, lat = HRT_TOTAL_RE.search(text), HRT_LAT_RE.search(text)
    if not (head and fired and total):
        return
    count, delta = int(head.group(1)), int(head.group(2))
    if count == 0 or int(fired.group(1)) != count:
        return
    out.hrtimer["count"] = count
    out.hrtimer["delta"] = delta
    # One-shot mode runs on the APIC clock, not the TSC: no cycle figure.
    if "TSC-deadline" in head.group(3):
        out.hrtimer["hrtimer-cycle"] = int(total.group(1)) / count - delta
    if lat:
        out.hrtimer["hrtimer-latency"] = float(lat.group(2))


# ---------------------------------------------------------------- the runs

@dataclass
class Variant:
    """One hypervisor build: a profile, an EFER variant of default, or a
    dispatch/timing variant of a profile (dispatchcmp)."""
    label: str
    yaml_path: Path
    role: str
    make_profile: str           # PROFILE= for make
    dispatch: str = ""
    efer: str = ""
    guests: Tuple[str, ...] = GUESTS
    chain: Optional[List[str]] = None   # the generated direct-call chain

    @property
    def is_dispatch_variant(self) -> bool:
        return dispatchcmp.parse_label(self.label) is not None

    @property
    def is_timing(self) -> bool:
        p = dispatchcmp.parse_label(self.label)
        return p is not None and p[2]


@dataclass
class Run:
    variant: Variant
    guest: str
    status: str                 # ok | timeout | refused | panic | incomplete | failed checks | error: ...
    output: GuestOutput
    serial: Optional[Path] = None


def describe_profile(yaml_path: Path, generated_dir: Path) -> Tuple[str, str]:
    """(dispatch, efer) in words, from the profile and its generated profile.h."""
    doc = exitmix.load_yaml(yaml_path)
    d = doc.get("dispatch") or {}
    policy = d.get("policy", "?")
    dispatch = policy
    try:
        h = (generated_dir / "profile.h").read_text()
        m = re.search(r"^#define PROFILE_DIRECT_REASONS\s+(\d+)", h, re.M)
        if m and policy == "direct":
            dispatch = f"direct, {m.group(1)} in the chain"
    except OSError:
        pass
    efer = ((doc.get("msrs") or {}).get("IA32_EFER") or {})
    sw = efer.get("switch", "?")
    if efer.get("fallback"):
        sw += f" (fallback {efer['fallback']})"
    return dispatch, sw


def role_of(label: str) -> str:
    if label == "table-only":
        return "baseline: table only"
    if label == "kvm-order":
        return "baseline: KVM's order"
    if label in EFER_VARIANTS:
        return f"variant: default, EFER {EFER_VARIANTS[label][0]}"
    p = dispatchcmp.parse_label(label)
    if p:
        base, d, timing = p
        what = {"table": "dispatch table only", "kvm": "dispatch in KVM's chain", None: ""}[d]
        if timing:
            what += (", " if what else "") + "statistics timing"
        return f"variant: {base}, {what}"
    return "generated chain"


def make_efer_variant(out: Path, label: str, root: Path = REPO,
                      gen_out: Optional[Path] = None) -> Tuple[Path, Path]:
    """The default profile with IA32_EFER switched as EFER_VARIANTS[label]
    says, written to OUT/profiles/ (never to profiles/) and generated into
    OUT/gen/ with the generator's --out.  Returns (yaml, generated dir)."""
    switch, words = EFER_VARIANTS[label]
    src = (root / "profiles" / "default.yaml").read_text()
    text, n1 = re.subn(r"^profile:[ \t]*default[ \t]*$", f"profile: {label}", src,
                       count=1, flags=re.M)
    text, n2 = re.subn(r"^([ \t]+IA32_EFER:[ \t]*)\{[^}\n]*\}",
                       r"\g<1>{switch: " + switch + ", access: trap}", text, count=1, flags=re.M)
    if n1 != 1 or n2 != 1:
        raise BenchError("profiles/default.yaml: no `profile: default` line or no "
                         f"`IA32_EFER: {{...}}` policy to turn into {label}")
    text = ("# Generated by tests/bench/run_bench.py from profiles/default.yaml for the\n"
            f"# EFER comparison: IA32_EFER switched through {words}.\n"
            "# Not a profile to use; do not copy into profiles/.\n" + text)
    try:
        return dispatchcmp.write_and_generate(root, out, label, text, gen_out or out / "gen")
    except dispatchcmp.VariantError as e:
        raise BenchError(str(e)) from None


class BenchError(Exception):
    pass


def snapshot_head(tree: Path) -> str:
    """OUT/tree: the committed tree (git archive HEAD), so that every build
    of the run sees one state of the sources, whatever others are editing
    (and however half-done it is) in the working tree.  Returns HEAD's
    short hash."""
    if tree.exists():
        shutil.rmtree(tree)
    tree.mkdir(parents=True)
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, check=True,
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    arch = subprocess.Popen(["git", "archive", "--format=tar", "HEAD"], cwd=REPO,
                            stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=arch.stdout, check=True)
    arch.stdout.close()
    if arch.wait() != 0:
        raise BenchError("git archive HEAD failed")
    return rev


def run_all(args, out: Path) -> List[Run]:
    """Build everything, boot every (variant, guest) pair, parse."""
    global BUILD_ROOT, BUILT_FROM
    sys.path.insert(0, str(REPO / "tests" / "boot"))
    import bootlib

    if args.tree == "head":
        BUILD_ROOT = out / "tree"
        rev = snapshot_head(BUILD_ROOT)
        BUILT_FROM = (f"commit {rev} (a snapshot of HEAD in {_rel(BUILD_ROOT)}; the working "
                      "tree's uncommitted changes are not measured)")
    else:
        BUILD_ROOT = REPO
        BUILT_FROM = "the working tree"
    root = BUILD_ROOT
    # Variants are generated where `make build PROFILE=../build/bench/gen/NAME`
    # run in the tree that builds them finds them.
    gen_out = out / "gen" if root == REPO else root / "build" / "bench" / "gen"
    variants = []
    for p in args.profiles:
        y = root / "profiles" / f"{p}.yaml"
        d, e = describe_profile(y, root / "generated" / p)
        variants.append(Variant(p, y, role_of(p), p, d, e, GUESTS,
                                dispatchcmp.chain(root / "generated" / p)))
    for label in (EFER_VARIANTS if args.efer_variants and "default" in args.profiles else ()):
        try:
            ypath, gdir = make_efer_variant(out, label, root, gen_out)
        except BenchError as e:
            # The other numbers are still worth having; the report says
            # which variant is missing.
            print(f"run_bench: no {label} variant: {e}", file=sys.stderr)
            continue
        # runtime.mk builds from generated/$(PROFILE) into $(BUILD)/$(PROFILE):
        # a PROFILE of ../OUT/gen/NAME points both at OUT/gen/NAME when BUILD is
        # a directory of the checkout's top level, as it is by default.
        mp = os.path.relpath(gdir, root / "generated")
        d, e = describe_profile(ypath, gdir)
        variants.append(Variant(label, ypath, role_of(label), mp, d, e))
    if args.dispatch_variants:
        variants += make_dispatch_variants(args.profiles, out, root, gen_out)
    return _boot_variants(args, out, bootlib, variants)


def run_workloads(args, out: Path) -> List[workloads.Result]:
    """The workloads under every build run_all left in OUT/elf, on bare
    Bochs, and under the workload's profile with the other apic: choice."""
    import bootlib
    settings = workloads.settings_from(out / "elf", args.profiles)
    if workloads.SUBJECT in args.profiles:
        gen_out = out / "gen" if BUILD_ROOT == REPO else BUILD_ROOT / "build" / "bench" / "gen"
        try:
            lb, elf = workloads.build_apic_variant(BUILD_ROOT, out, gen_out,
                                                   lambda mp: build_hv(bootlib, mp))
            settings.insert(1 + next((i for i, (s, _) in enumerate(settings)
                                      if s == workloads.SUBJECT), -1), (lb, elf))
        except (dispatchcmp.VariantError, bootlib.BootError) as e:
            print(f"run_bench: no {workloads.APIC_VARIANT} variant: {e}", file=sys.stderr)
    print(f"run_bench: workloads under {len(settings)} builds and bare Bochs", file=sys.stderr)
    return workloads.run_all(bootlib, BUILD_ROOT, out, settings, args.cpu, args.jobs,
                             args.timeout)


def run_overcommit(args, out: Path) -> List[overcommit.Result]:
    """The overcommit workload (overcommit.py) at 1:1, 2:1, 3:1 with each PAUSE handling."""
    import bootlib
    gen_out = out / "gen" if BUILD_ROOT == REPO else BUILD_ROOT / "build" / "bench" / "gen"
    try:
        return overcommit.run_all(bootlib, BUILD_ROOT, out, gen_out,
                                  lambda mp: build_hv(bootlib, mp), args.cpu, args.jobs,
                                  args.timeout)
    except (dispatchcmp.VariantError, bootlib.BootError) as e:
        print(f"run_bench: no overcommit workload: {e}", file=sys.stderr)
        return []


def run_intr(args, out: Path) -> List[intrpaths.Result]:
    """The interrupt paths' own boots (intrpaths.py): the bench guest on
    bare Bochs, the IPI to another CPU bare and under every profile's
    build this run made (OUT/elf/PROFILE.elf)."""
    import bootlib
    settings = [(p, out / "elf" / f"{p}.elf") for p in args.profiles
                if (out / "elf" / f"{p}.elf").is_file()]
    try:
        return intrpaths.run_all(bootlib, BUILD_ROOT, out, settings, args.cpu, args.jobs,
                                 args.timeout, args.guest_args["bench"])
    except (bootlib.BootError, OSError) as e:
        print(f"run_bench: no interrupt-path runs: {e}", file=sys.stderr)
        return []


def run_linux(args, out: Path) -> List[linux.Result]:
    """The Linux workloads (linux.py): each program under its linux-* profile
    (the ELF this run built, OUT/elf/PROFILE.elf) and on bare Bochs."""
    import bootlib

    def elf_of(profile: str) -> Path:
        elf = out / "elf" / f"{profile}.elf"
        return elf if elf.is_file() else build_hv(bootlib, profile)
    try:
        return linux.run_all(bootlib, BUILD_ROOT, out, elf_of, args.cpu, args.jobs, args.timeout)
    except (bootlib.BootError, OSError) as e:
        print(f"run_bench: no Linux workloads: {e}", file=sys.stderr)
        return []


def dispatch_variant_specs(profiles: List[str]):
    """[(base, dispatch, timing, guests)] for the central comparison: per
    subject P, P~table and P~kvm (bench guest: the guest-timed costs) and
    P, P~table, P~kvm at statistics timing (both guests: the hypervisor's
    per-reason ticks); the baselines get a timing build too, so that their
    own-mix means can be listed beside the subjects'."""
    specs = []
    for p in profiles:
        if p in dispatchcmp.BASELINES:
            specs.append((p, None, True, GUESTS))
            continue
        for d in dispatchcmp.DISPATCHES:
            specs.append((p, d, False, ("bench",)))
        for d in (None,) + dispatchcmp.DISPATCHES:
            specs.append((p, d, True, GUESTS))
    return specs


def make_dispatch_variants(profiles: List[str], out: Path, root: Path = REPO,
                           gen_out: Optional[Path] = None) -> List[Variant]:
    try:
        order = dispatchcmp.kvm_order(root)
    except dispatchcmp.VariantError as e:
        print(f"run_bench: no dispatch variants: {e}", file=sys.stderr)
        return []
    variants = []
    for base, d, timing, guests in dispatch_variant_specs(profiles):
        lb = dispatchcmp.label(base, d, timing)
        try:
            ypath, gdir = dispatchcmp.make_variant(root, out, base, d, timing, order, gen_out)
        except dispatchcmp.VariantError as e:
            print(f"run_bench: no {lb} variant: {e}", file=sys.stderr)
            continue
        mp = os.path.relpath(gdir, root / "generated")
        dd, e = describe_profile(ypath, gdir)
        variants.append(Variant(lb, ypath, role_of(lb), mp, dd, e, guests,
                                dispatchcmp.chain(gdir)))
    return variants


# The tree the hypervisors are built in (run_all): the checkout, or a
# snapshot of HEAD under OUT/tree; and the words for the report.
BUILD_ROOT: Path = REPO
BUILT_FROM = ""


def build_hv(bootlib, make_profile: str) -> Path:
    """make build PROFILE=... in BUILD_ROOT; the ELF it made."""
    if BUILD_ROOT == REPO:
        return bootlib.build_hv(make_profile)
    cmd = ["make", "--no-print-directory", "-s", f"-j{os.cpu_count() or 2}", "BUILD=build",
           f"PROFILE={make_profile}", "build"]
    p = subprocess.run(cmd, cwd=BUILD_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    elf = BUILD_ROOT / "build" / make_profile / "exitplan.elf"
    if p.returncode != 0 or not elf.is_file():
        raise bootlib.BootError(f"{' '.join(cmd)} in {BUILD_ROOT} failed:\n{p.stdout[-6000:]}")
    return elf

def build_all(bootlib, variants: List[Variant], out: Path):
    """Build every variant, copying each ELF to OUT/elf/LABEL.elf at once,
    since build/PROFILE is shared with everyone's `make build`.  All of
    them come from one tree (BUILD_ROOT: a snapshot of HEAD unless --tree
    worktree), so a profile and its variants differ only where they are
    meant to.  Returns ({label: elf}, {label: error})."""
    elfs, errors = {}, {}
    for v in variants:
        try:
            hv = build_hv(bootlib, v.make_profile)
        except bootlib.BootError as e:
            errors[v.label] = e
            continue
        dst = out / "elf" / f"{v.label}.elf"
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(hv, dst)
        elfs[v.label] = dst
    return elfs, errors


def _boot_variants(args, out: Path, bootlib, variants: List[Variant]) -> List[Run]:
    guest_elfs = {g: bootlib.build_guest(g) for g in GUESTS}
    elfs, errors = build_all(bootlib, variants, out)
    jobs, meta = [], []
    for v in variants:
        if v.label in errors:
            e = errors[v.label]
            for g in v.guests:
                meta.append((v, g, None))
                jobs.append(_failed_job(f"error: build failed: {str(e).splitlines()[0]}"))
            print(f"run_bench: {v.label}: build failed:\n{e}", file=sys.stderr)
            continue
        for g in v.guests:
            rdir = out / "runs" / v.label
            iso = bootlib.build_iso(elfs[v.label], guest_elfs[g], rdir / f"{g}.iso",
                                    guest_args=args.guest_args[g])
            serial = rdir / f"{g}.serial"
            meta.append((v, g, serial))
            jobs.append(_boot_job(bootlib, iso, args.cpu, serial, args.timeout))
    print(f"run_bench: {len(jobs)} boots on Bochs {args.cpu}, {args.jobs} at a time",
          file=sys.stderr)
    results = bootlib.run_parallel(jobs, max_workers=args.jobs)
    runs = []
    for (v, g, serial), r in zip(meta, results):
        runs.append(classify(v, g, r, serial))
        print(f"run_bench: {v.label} / {g}: {runs[-1].status}", file=sys.stderr)
    return runs


def _failed_job(status: str):
    return lambda: status


def _boot_job(bootlib, iso, cpu, serial, timeout):
    def job():
        try:
            return bootlib.run_bochs(iso, cpu, serial, timeout=timeout)
        except bootlib.BootError as e:
            return f"error: {str(e).splitlines()[0]}"
    return job


def classify(v: Variant, guest: str, r, serial: Optional[Path]) -> Run:
    """A Run from a BootResult (or an error string)."""
    if isinstance(r, str):
        return Run(v, guest, r, GuestOutput(), serial)
    out = parse_serial(r.serial)
    return Run(v, guest, run_status(out, r.timed_out), out, serial)


def run_status(out: GuestOutput, timed_out: bool = False) -> str:
    """How a run ended, first cause first."""
    return ("refused" if out.refused else "panic" if out.panic else
            "timeout" if timed_out else "incomplete" if not out.complete else
            "failed checks" if out.failed else "ok")


def runs_from_serial(dir_: Path, profiles: List[str]) -> List[Run]:
    """Runs recorded earlier: DIR/LABEL/GUEST.serial (the layout run_all
    writes under runs/); variants in profile order, then the EFER ones."""
    labels = [p for p in profiles if (dir_ / p).is_dir()]
    labels += [v for v in EFER_VARIANTS if (dir_ / v).is_dir() and v not in labels]
    guests_of = {lb: GUESTS for lb in labels}
    for base, d, timing, guests in dispatch_variant_specs(profiles):
        lb = dispatchcmp.label(base, d, timing)
        if (dir_ / lb).is_dir():
            labels.append(lb)
            guests_of[lb] = guests
    # Where run_all generated: OUT/gen, or in the snapshot OUT/tree.
    tree = dir_.parent / "tree"
    root = tree if (tree / "generated").is_dir() else REPO
    gen = root / "build" / "bench" / "gen" if root != REPO else dir_.parent / "gen"
    runs = []
    for label in labels:
        y = root / "profiles" / f"{label}.yaml"
        gdir = root / "generated" / label
        if label in EFER_VARIANTS:
            y = dir_.parent / "profiles" / f"{label}.yaml"
            gdir = gen / label
        parsed = dispatchcmp.parse_label(label)
        if parsed:
            name = dispatchcmp.file_name(*parsed)
            y = dir_.parent / "profiles" / f"{name}.yaml"
            gdir = gen / name
        d, e = describe_profile(y, gdir) if y.exists() else ("?", "?")
        if label in EFER_VARIANTS and not y.exists():
            e = EFER_VARIANTS[label][0]
        ch = dispatchcmp.chain(gdir)
        if parsed and not y.exists():
            # Recorded elsewhere (the test's fixtures): what a variant of
            # its kind is, from its base profile and kvm-order.yaml.
            base, disp, _ = parsed
            bgen = REPO / "generated" / base
            d, e = describe_profile(REPO / "profiles" / f"{base}.yaml", bgen)
            ch = {"table": [], "kvm": None, None: dispatchcmp.chain(bgen)}[disp]
            if disp == "kvm":
                ch = dispatchcmp.kvm_order(REPO)
            if disp:
                d = "table" if disp == "table" else f"direct, {len(ch)} in the chain"
        v = Variant(label, y, role_of(label), os.path.relpath(gdir, REPO / "generated"), d, e,
                    guests_of[label], ch)
        for g in guests_of[label]:
            serial = dir_ / label / f"{g}.serial"
            if not serial.exists():
                runs.append(Run(v, g, "error: no recorded output", GuestOutput(), serial))
                continue
            out = parse_serial(serial.read_text(errors="replace"))
            runs.append(Run(v, g, run_status(out), out, serial))
    return runs


# ---------------------------------------------------------------- analysis

@dataclass
class Row:
    label: str
    role: str
    source: str                 # measured | reference
    dispatch: str
    efer: str
    status: str
    ticks: Dict[str, object]    # kind -> float (measured) or str (reference)
    note: str = ""


@dataclass
class Results:
    cpu: str
    date: str
    commit: str
    guest_args: Dict[str, str]
    kinds: List[str]
    rows: List[Row]
    mixes: List[exitmix.ExitMix]
    reason_kinds: Dict[str, List[str]]          # reasons weighted -> kinds used
    common_reasons: List[str]                   # measured in every complete row
    weighted: Dict[Tuple[str, str], Tuple[float, float]]          # (row, mix) -> (mean, coverage)
    weighted_nowait: Dict[Tuple[str, str], Tuple[float, float]]
    excluded: List[str]                         # kinds not counted as one exit each, and why
    runs: List[Run]
    comparisons: List[dispatchcmp.Comparison] = field(default_factory=list)
    kvm_order: List[str] = field(default_factory=list)
    built_from: str = ""
    baseline_means: Dict[str, Tuple[float, float]] = field(default_factory=dict)  # own mix, same method
    path_lengths: Dict[str, Dict[str, int]] = field(default_factory=dict)  # label -> reason -> instr
    efer_labels: List[str] = field(default_factory=list)   # default, then variants measured
    exit_parts: Dict[str, List[exitpath.Split]] = field(default_factory=dict)  # label -> kinds
    host_md: str = ""                           # build/bench/host.md, if there
    workloads: List[str] = field(default_factory=list)     # its section's lines (workloads.py)
    intr_paths: Dict[str, Dict[str, intrpaths.PathMeasure]] = field(default_factory=dict)
    intr_parts: Dict[str, Dict[str, exitpath.Split]] = field(default_factory=dict)
    intr: List[str] = field(default_factory=list)          # its section (intrpaths.py)


def reason_costs(out: GuestOutput) -> Tuple[Dict[str, float], Dict[str, List[str]]]:
    """reason -> mean ticks of its kinds that took one exit per round trip."""
    costs, used = {}, {}
    for reason, pattern in REASON_KINDS:
        kinds = [k for k, m in out.measures.items()
                 if re.fullmatch(pattern, k) and m.exits_once()]
        if kinds:
            costs[reason] = sum(out.measures[k].ticks for k in kinds) / len(kinds)
            used[reason] = kinds
    return costs, used


def weighted_mean(costs: Dict[str, float], mix: exitmix.ExitMix,
                  reasons: List[str]) -> Tuple[float, float]:
    """(mean ticks over the mix's reasons in `reasons`, their share of the mix)."""
    shares = mix.shares()
    covered = [r for r in reasons if r in shares and r in costs]
    cov = sum(shares[r] for r in covered)
    if cov == 0:
        return float("nan"), 0.0
    return sum(shares[r] * costs[r] for r in covered) / cov, cov


def measured_mix(runs: List[Run], guest: str = MEASURED_GUEST) -> Optional[exitmix.ExitMix]:
    """The exits a workload guest caused, from the hypervisor's statistics:
    the run under the profile named like the guest, else the first
    complete run that counted them."""
    cands = [r for r in runs if r.guest == guest and r.status == "ok" and r.output.exit_counts]
    cands.sort(key=lambda r: r.variant.label != guest)
    if not cands:
        return None
    r = cands[0]
    reasons = [(k, Fraction(v)) for k, v in r.output.exit_counts.items() if v > 0]
    if not reasons:
        return None
    return exitmix.ExitMix(profile=MEASURED_MIX, path=r.serial or Path(guest), unit="count",
                           source_kind=f"measured: {guest} guest under {r.variant.label}",
                           reasons=reasons)


def analyse(runs: List[Run], mixes: List[exitmix.ExitMix], cpu: str,
            guest_args: Dict[str, str], commit: str = "", date: str = "",
            build: Optional[Path] = None, elf_dir: Optional[Path] = None) -> Results:
    """build: make's BUILD directory, to count the dispatch's instructions
    in the built ELFs (left out when None); elf_dir: where run_all copied
    the ELFs it booted (OUT/elf), looked at first."""
    by_label: Dict[str, Dict[str, Run]] = {}
    for r in runs:
        by_label.setdefault(r.variant.label, {})[r.guest] = r

    # Kind columns: the bench guest's kinds in the order it printed them
    # (first run that has them), then the hrtimer guest's derived kinds.
    kinds: List[str] = []
    for r in runs:
        if r.guest == "bench":
            kinds += [k for k in r.output.measures if k not in kinds]
    for r in runs:
        if r.guest == "hrtimer":
            kinds += [k for k in r.output.measures if k not in kinds]
    kinds += [k for k in HRTIMER_KINDS
              if any(k in r.output.hrtimer for r in runs) and k not in kinds]

    rows, costs, excluded = [], {}, []
    reason_kinds: Dict[str, List[str]] = {}
    dv_costs: Dict[str, Dict[str, float]] = {}      # every complete bench run
    dv_kinds: Dict[str, Dict[str, List[str]]] = {}
    for label, per_guest in by_label.items():
        v = next(iter(per_guest.values())).variant
        b = per_guest.get("bench")
        if b is not None and b.status == "ok" and b.output.measures:
            dv_costs[label], dv_kinds[label] = reason_costs(b.output)
        if v.is_timing:
            # Its guest numbers carry the timing's own cost: only its
            # statistics document is used (the central comparison).
            continue
        ticks: Dict[str, object] = {}
        statuses = []
        for g in GUESTS:
            r = per_guest.get(g)
            if r is None:
                continue
            statuses.append(f"{g}: {r.status}")
            ticks.update({k: m.ticks for k, m in r.output.measures.items()})
            ticks.update({k: r.output.hrtimer[k] for k in HRTIMER_KINDS if k in r.output.hrtimer})
        # Only a complete run is weighed: a partial one (a timeout halfway)
        # would shrink the reasons every row is weighed over.  The dispatch
        # variants are weighed in the central comparison, not here.
        if b is not None and b.status == "ok" and b.output.measures and not v.is_dispatch_variant:
            costs[label], used = reason_costs(b.output)
            for reason, ks in used.items():
                reason_kinds.setdefault(reason, [])
                reason_kinds[reason] += [k for k in ks if k not in reason_kinds[reason]]
            for k, m in b.output.measures.items():
                if not m.exits_once():
                    why = (f"{m.exits} {m.exit_reason} exits in {m.iterations} round trips"
                           if m.exits is not None else f"{m.ticks:g} ticks: no exit")
                    excluded.append(f"{label}: {k} ({why})")
        rows.append(Row(label, v.role, "measured", v.dispatch, v.efer, "; ".join(statuses), ticks))

    for name, note, values in REFERENCES:
        ticks = {}
        for pattern, value in values:
            for k in kinds:
                if re.fullmatch(pattern, k) and k not in ticks:
                    ticks[k] = value
                    break
        rows.append(Row(name, "reference", "reference", "", "", "", ticks, note))

    mm = measured_mix(runs)
    if mm is not None:
        mixes = list(mixes) + [mm]

    # Weigh every row with the same reasons, or the means are not comparable.
    common = [reason for reason, _ in REASON_KINDS
              if costs and all(reason in c for c in costs.values())]
    nowait = [r for r in common if r not in WAITING_REASONS]
    weighted, weighted_nowait = {}, {}
    for label, c in costs.items():
        for mix in mixes:
            weighted[(label, mix.profile)] = weighted_mean(c, mix, common)
            weighted_nowait[(label, mix.profile)] = weighted_mean(c, mix, nowait)
    comparisons, baseline_means = central_comparison(runs, by_label, mixes, dv_costs, dv_kinds)
    efer_labels = []
    if "default" in costs:
        efer_labels = ["default"] + [v for v in EFER_VARIANTS if v in costs]
        if len(efer_labels) == 1:
            efer_labels = []
    return Results(cpu=cpu, date=date, commit=commit, guest_args=guest_args, kinds=kinds,
                   rows=rows, mixes=mixes, reason_kinds=reason_kinds, common_reasons=common,
                   weighted=weighted, weighted_nowait=weighted_nowait, excluded=excluded,
                   runs=runs, efer_labels=efer_labels, comparisons=comparisons,
                   baseline_means=baseline_means, kvm_order=_kvm_order_or_empty(),
                   path_lengths=count_dispatch_paths(comparisons, by_label, build, elf_dir),
                   exit_parts=split_exit_paths(by_label, build, elf_dir),
                   intr_paths=intr_paths(by_label),
                   intr_parts=split_intr_paths(by_label, build, elf_dir))


def booted_elf(build: Path, v, lb: str, elf_dir: Optional[Path]) -> Path:
    """The image run @lb booted: OUT/elf/LABEL.elf where this run kept it,
    else the build's."""
    if elf_dir is not None and (elf_dir / f"{lb}.elf").is_file():
        return elf_dir / f"{lb}.elf"
    return build / v.make_profile / "exitplan.elf"


def run_uses_hooks(r: Run) -> bool:
    """Whether @r's image took the hooks stub (exitpath.uses_hooks())."""
    serial = r.serial.read_text(errors="replace") if r.serial and r.serial.is_file() else ""
    return exitpath.uses_hooks(exitmix.load_yaml(r.variant.yaml_path), serial)


def intr_paths(by_label: Dict[str, Dict[str, Run]]) -> Dict[str, Dict[str, intrpaths.PathMeasure]]:
    """label -> the bench run's interrupt paths, for every profile run
    (not the dispatch and timing variants)."""
    out = {}
    for lb, runs_ in by_label.items():
        b = runs_.get("bench")
        if b is not None and b.output.paths and not b.variant.is_dispatch_variant:
            out[lb] = b.output.paths
    return out


def split_intr_paths(by_label: Dict[str, Dict[str, Run]], build: Optional[Path],
                     elf_dir: Optional[Path] = None) -> Dict[str, Dict[str, exitpath.Split]]:
    """label -> kind -> the interrupt path's round trip split into the
    parts of the exit path, once per exit it counted (exitpath.split_many);
    gaps and kinds without counted exits are not split."""
    if build is None:
        return {}
    try:
        numbers = exitmix.exit_reason_names(REPO / "spec")
    except (OSError, KeyError):
        return {}
    out = {}
    for lb, runs_ in by_label.items():
        b = runs_.get("bench")
        if b is None or b.variant.is_dispatch_variant or b.variant.chain is None:
            continue
        costs = [(k, pm.ticks, pm.exits_per_trip()) for k, pm in b.output.paths.items()
                 if not pm.gap and pm.exits]
        elf = booted_elf(build, b.variant, lb, elf_dir)
        if not costs or not elf.is_file():
            continue
        sp = exitpath.splits_many(elf, run_uses_hooks(b), costs, b.variant.chain, numbers)
        if sp:
            out[lb] = {x.kind: x for x in sp}
    return out


def split_exit_paths(by_label: Dict[str, Dict[str, Run]], build: Optional[Path],
                     elf_dir: Optional[Path] = None) -> Dict[str, List[exitpath.Split]]:
    """label -> the bench guest's one-exit kinds split into the parts of
    the exit path (exitpath.py), for every profile run (not the dispatch
    and timing variants) whose ELF objdump can read in the expected shape."""
    if build is None:
        return {}
    try:
        numbers = exitmix.exit_reason_names(REPO / "spec")
    except (OSError, KeyError):
        return {}
    out = {}
    for lb, runs_ in by_label.items():
        b = runs_.get("bench")
        if b is None or b.status != "ok" or b.variant.is_dispatch_variant:
            continue
        v = b.variant
        elf = booted_elf(build, v, lb, elf_dir)
        if not elf.is_file() or v.chain is None:
            continue
        hooks = run_uses_hooks(b)
        costs = []
        for reason, pattern in REASON_KINDS:
            if reason in dispatchcmp.HV_REASONS:
                continue        # its round trip holds more than one exit
            costs += [(k, reason, m.ticks) for k, m in b.output.measures.items()
                      if re.fullmatch(pattern, k) and m.exits_once()]
        parts = exitpath.splits(elf, hooks, costs, v.chain, numbers)
        if parts:
            out[lb] = parts
    return out


def count_dispatch_paths(comparisons, by_label, build: Optional[Path],
                         elf_dir: Optional[Path] = None) -> Dict[str, Dict[str, int]]:
    """label -> reason -> instructions of the dispatch to its handler, for
    the compared (non-timing) builds whose ELF objdump can read in the
    expected shape (dispatchcmp.path_lengths)."""
    if build is None:
        return {}
    try:
        numbers = exitmix.exit_reason_names(REPO / "spec")
    except (OSError, KeyError):
        return {}
    out = {}
    for c in comparisons:
        reasons = [r.reason for r in c.reasons]
        for lb in c.labels:
            runs_ = by_label.get(lb, {})
            v = next(iter(runs_.values())).variant if runs_ else None
            if v is None or v.chain is None:
                continue
            asm = dispatchcmp.disassemble(booted_elf(build, v, lb, elf_dir))
            pl = dispatchcmp.path_lengths(asm, v.chain, numbers) if asm else None
            if pl:
                out[lb] = dispatchcmp.lengths_by_reason(pl, reasons)
    return out


def _kvm_order_or_empty() -> List[str]:
    try:
        return dispatchcmp.kvm_order(REPO)
    except (dispatchcmp.VariantError, OSError):
        return []


def central_comparison(runs: List[Run], by_label: Dict[str, Dict[str, Run]],
                       mixes: List[exitmix.ExitMix], dv_costs, dv_kinds):
    """Per subject profile P: P, P~table and P~kvm under P's own mix
    (dispatchcmp.compare), and each baseline profile under its own mix
    by the same method."""
    def hv_of(lb):
        """Per-reason hypervisor ticks from LB@timing's complete runs."""
        per_guest = by_label.get(lb + "@timing", {})
        return dispatchcmp.hv_costs({g: r.output.stats_docs for g, r in per_guest.items()
                                     if r.status == "ok"})

    def chain_of(lb):
        for r in by_label.get(lb, {}).values():
            return r.variant.chain
        return None

    comparisons, baseline_means = [], {}
    profile_mixes = {m.profile: m for m in mixes}
    for label_ in by_label:
        if dispatchcmp.parse_label(label_) or label_ not in profile_mixes:
            continue
        mix = profile_mixes[label_]
        if label_ in dispatchcmp.BASELINES:
            c = dispatchcmp.compare(label_, mix, dv_costs, dv_kinds, {label_: hv_of(label_)},
                                    {label_: chain_of(label_)}, labels=[label_])
            if label_ in c.means:
                baseline_means[label_] = (c.means[label_], c.coverage)
            continue
        labels = [label_] + [dispatchcmp.label(label_, d) for d in dispatchcmp.DISPATCHES]
        if not any(lb in by_label for lb in labels[1:]):
            continue            # run without its variants (--no-dispatch-variants)
        hv = {lb: hv_of(lb) for lb in labels}
        comparisons.append(dispatchcmp.compare(label_, mix, dv_costs, dv_kinds, hv,
                                               {lb: chain_of(lb) for lb in labels}))
    return comparisons, baseline_means


# ---------------------------------------------------------------- writers

def fmt_ticks(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    return f"{v:.0f}" if abs(v - round(v)) < 0.05 else f"{v:.1f}"


def _md_row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def render_markdown(res: Results) -> str:
    L = []
    L.append("# exitplan exit costs on Bochs")
    L.append("")
    L.append(f"> **{TICKS_NOTE}**")
    L.append("")
    L.append(f"CPU model: Bochs `{res.cpu}`. Guests: "
             + ", ".join(f"`{g}` ({res.guest_args.get(g) or 'default arguments'})" for g in GUESTS)
             + (f". Commit `{res.commit}`" if res.commit else "")
             + (f", {res.date}" if res.date else "") + "."
             + (f" Hypervisors built from {res.built_from}." if res.built_from else ""))
    L.append("Each number is ticks per round trip as the guest measured it (RDTSC before and "
             "after, the cost of the RDTSC pair subtracted), averaged over the iterations "
             "the guest ran. `-`: not measured (the kind did not exit under that profile, "
             "the guest skipped it, or the run failed; see Runs).")
    L.append("")

    L += render_central(res)
    L += render_exit_parts(res)
    L += res.intr

    L.append("## Ticks per exit kind and profile")
    L.append("")
    head = ["profile", "role", "dispatch", "EFER"] + res.kinds
    L.append(_md_row(head))
    L.append(_md_row(["---"] * 4 + ["---:"] * len(res.kinds)))
    for row in res.rows:
        name = row.label if row.source == "measured" else f"*{row.label}*"
        L.append(_md_row([name, row.role, row.dispatch or "", row.efer or ""]
                         + [fmt_ticks(row.ticks.get(k)) for k in res.kinds]))
    L.append("")
    L.append("Kinds: `hlt-*` is a HLT woken by the local APIC timer, so it includes the "
             "wait for the timer; `hrtimer-cycle` is the hrtimer guest's ticks per timer "
             "beyond the programmed TSC deadline (arming WRMSR, HLT, the timer's exit, "
             "injection), `hrtimer-latency` its mean ticks from the deadline to running "
             "again; `pause` is per PAUSE instruction, and PAUSE-loop exiting exits once "
             "per spin window, not per PAUSE.")
    refs = [r for r in res.rows if r.source == "reference"]
    if refs:
        L.append("")
        L.append("Rows in *italics* are reference values copied from "
                 "docs/PLATFORM.md, not measured by this run: "
                 + "; ".join(f"*{r.label}*: {r.note}" for r in refs) + ".")
    L.append("")

    for title, table, reasons in (
            ("## Weighted mean exit cost under each profile's exit mix", res.weighted,
             res.common_reasons),
            ("## The same without HLT (its round trip includes the timer wait)",
             res.weighted_nowait,
             [r for r in res.common_reasons if r not in WAITING_REASONS])):
        L.append(title)
        L.append("")
        if not table:
            L.append("No profile produced exit costs to weigh.")
            L.append("")
            continue
        L.append("Rows: the hypervisor (profile) that ran the bench guest; columns: "
                 "the exit mix the costs are weighted with (profiles/NAME.yaml "
                 "`exit_mix`). **Bold**: a profile under its own mix. Weighted over "
                 f"the reasons every run measured ({', '.join(reasons) or 'none'}); "
                 "reasons without a measured kind are left out and the weights "
                 "renormalised; the coverage row gives the share of each mix that was "
                 "weighted.")
        L.append("")
        measured = [m for m in res.mixes if m.profile == MEASURED_MIX]
        if measured:
            L.append(f"`{MEASURED_MIX}`: the exits the {MEASURED_GUEST} guest caused, "
                     f"counted by the hypervisor ({measured[0].source_kind}).")
            L.append("")
        L.append(_md_row(["profile \\ mix"] + [m.profile for m in res.mixes]))
        L.append(_md_row(["---"] + ["---:"] * len(res.mixes)))
        labels = [r.label for r in res.rows if r.source == "measured"]
        for label in labels:
            cells = []
            for m in res.mixes:
                mean, _ = table.get((label, m.profile), (float("nan"), 0))
                c = "-" if mean != mean else f"{mean:.0f}"
                cells.append(f"**{c}**" if m.profile == label and c != "-" else c)
            if any(c != "-" for c in cells):
                L.append(_md_row([label] + cells))
        cov = []
        for m in res.mixes:
            covs = {table[k][1] for k in table if k[1] == m.profile}
            cov.append(f"{100 * max(covs):.0f}%" if covs else "-")
        L.append(_md_row(["*coverage*"] + cov))
        L.append("")

    if res.reason_kinds:
        L.append("Exit reason -> the kinds whose ticks stand for it: "
                 + "; ".join(f"{r} -> {', '.join(ks)}" for r, ks in res.reason_kinds.items())
                 + ". A kind counts only where each round trip took exactly one exit "
                 "(counted by the hypervisor's statistics, or, with statistics off, "
                 f"at least {NO_EXIT_TICKS} ticks).")
        L.append("")
    if res.excluded:
        L.append("Not counted as one exit per round trip: " + "; ".join(res.excluded) + ".")
        L.append("")

    own = _own_mix_rows(res)
    if own:
        L.append("## Each profile on its own mix, against the baselines")
        L.append("")
        L.append("The weighted means without HLT from the table above: each profile's "
                 "hypervisor under its own exit mix, and the two baselines under the same "
                 "mix. Below 1: the profile's own build is cheaper for its workload. "
                 "These are whole profiles, which differ in more than the dispatch (MSR "
                 "policies, statistics level): the dispatch alone is compared in the first "
                 "section. "
                 "Coverage: the share of the mix those means stand for; a low one "
                 "compares few of the workload's exits.")
        L.append("")
        L.append(_md_row(["profile", "coverage", "own mix", "table-only", "kvm-order",
                          "vs table-only", "vs kvm-order"]))
        L.append(_md_row(["---"] + ["---:"] * 6))
        for label, cov, mine, table, kvm in own:
            L.append(_md_row([label, f"{100 * cov:.0f}%", f"{mine:.0f}",
                              "-" if table is None else f"{table:.0f}",
                              "-" if kvm is None else f"{kvm:.0f}",
                              "-" if table is None else f"{mine / table:.3f}",
                              "-" if kvm is None else f"{mine / kvm:.3f}"]))
        L.append("")

    L.append("## EFER: atomic against manual, same guest")
    L.append("")
    L.append("`default` switches IA32_EFER with the VM-entry/VM-exit \"load IA32_EFER\" "
             "controls where the CPU has them (its gate line is under Runs); each variant "
             "is the same profile with only `IA32_EFER: {switch: ...}` changed, generated "
             "into the build directory for this comparison: "
             + "; ".join(f"`{v}`: {words}" for v, (_, words) in EFER_VARIANTS.items()) + ".")
    L.append("")
    missing = [v for v in EFER_VARIANTS if v not in res.efer_labels]
    if res.efer_labels:
        rows = [next(r for r in res.rows if r.label == lb) for lb in res.efer_labels]
        switch = ["atomic"] + [EFER_VARIANTS[lb][0] for lb in res.efer_labels[1:]]
        L.append(_md_row(["kind"] + [f"{lb} ({s})" for lb, s in zip(res.efer_labels, switch)]
                         + [f"{s} - atomic" for s in switch[1:]]))
        L.append(_md_row(["---"] + ["---:"] * (2 * len(rows) - 1)))
        for k in res.kinds:
            vals = [r.ticks.get(k) for r in rows]
            if all(isinstance(x, (int, float)) for x in vals):
                L.append(_md_row([k] + [fmt_ticks(x) for x in vals]
                                 + [f"{x - vals[0]:+.0f}" for x in vals[1:]]))
        L.append("")
        if "fallback" in rows[0].efer:
            L.append(f"`default` declares a fallback ({rows[0].efer}), so its exit path "
                     "reads the gate's choice on every exit and before every entry; the "
                     "variants, fixed to one mechanism, have no such test.")
            L.append("")
        L.append("In Bochs a WRMSR to EFER is one instruction and the MSR-load lists are "
                 "processed by VM entry and exit themselves; on hardware a WRMSR to EFER "
                 "also flushes the TLB, which is why KVM prefers the atomic switch. The "
                 "differences here are path lengths only.")
        L.append("")
    if missing:
        L.append("Not measured (see Runs): " + ", ".join(f"`{v}`" for v in missing) + ".")
        L.append("")

    L += res.workloads

    if res.host_md:
        L.append("## Host microbenchmark of the dispatch (nanoseconds, not Bochs ticks)")
        L.append("")
        L.append("From `make bench-host` (host.md, host.csv beside this file): the generated "
                 "dispatch alone, timed on the build machine's CPU.")
        L.append("")
        # Its headings one level down, under this one.
        L += [("#" + l if l.startswith("#") else l)
              for l in res.host_md.splitlines() if not l.startswith("# ")]
        L.append("")

    L.append("## Runs")
    L.append("")
    L.append(_md_row(["profile", "guest", "status", "gates", "serial"]))
    L.append(_md_row(["---"] * 5))
    for r in res.runs:
        gates = "; ".join(f"{k}: {v}" for k, v in r.output.gates.items())
        extra = r.output.refused or r.output.panic or ""
        if r.output.failures:
            extra = "; ".join(r.output.failures[:3])
        status = r.status + (f" ({extra})" if extra else "")
        L.append(_md_row([r.variant.label, r.guest, status, gates or "-",
                          f"`{_rel(r.serial)}`" if r.serial else "-"]))
    L.append("")
    L.append(f"*{TICKS_NOTE}*")
    L.append("")
    return "\n".join(L)


def _fmt(v: Optional[float], nd: int = 1) -> str:
    return "-" if v is None else f"{v:.{nd}f}"


def central_rows(res: Results):
    """The side-by-side table's rows (also weighted.csv's `central`)."""
    rows = []
    for c in res.comparisons:
        p, t, k = c.labels
        rows.append([c.subject, dispatchcmp.chain_words(c.chains.get(p)),
                     f"{100 * c.coverage:.0f}% ({100 * c.guest_share:.0f}% guest + "
                     f"{100 * c.hv_share:.0f}% hv)",
                     _fmt(c.means.get(p)), _fmt(c.means.get(t)), _fmt(c.means.get(k)),
                     _fmt(c.ratio(t), 3), _fmt(c.ratio(k), 3), c.verdict()])
    return rows


def render_central(res: Results) -> List[str]:
    L = ["## Each profile's dispatch against the table and KVM's chain, everything else equal",
         ""]
    if not res.comparisons:
        L += ["No profile was compared (run without --no-dispatch-variants).", ""]
        return L
    L.append("For every profile P (the baselines table-only and kvm-order are not subjects), "
             "two bench-only variants identical to P except the dispatch: `P~table` "
             "(`dispatch: {policy: table}`) and `P~kvm` (a direct chain in KVM's fixed order, "
             "read from profiles/kvm-order.yaml: "
             + ", ".join(res.kvm_order or ["?"]) + "). Same MSR policies, statistics level, "
             "controls, guests and CPU model, so the difference is the dispatch alone. "
             "Each cell is the mean cost of one exit weighted with **P's own exit mix** "
             "(profiles/P.yaml), in Bochs ticks (retired instructions, not cycles), over the "
             "reasons measured under all three builds; *coverage* is their share of P's mix. "
             "Costs per reason: *guest* = the bench guest's round trip (CPUID, VMCALL, RDMSR, "
             "WRMSR, IN/OUT, MMIO = EPT_VIOLATION); *hv* = the hypervisor's own per-reason "
             "ticks from a `statistics: timing` build of the same variant (P@timing ...) "
             "running the hrtimer and bench guests, `tsc_overhead` subtracted per exit "
             "(docs/STATS.md), for exits a guest cannot time by itself (HLT, whose round trip "
             "includes the timer wait; EXTERNAL_INTERRUPT, PREEMPTION_TIMER, "
             "INTERRUPT_WINDOW, PAUSE_INSTRUCTION). A reason has the same source in all three "
             "columns. Ratio below 1: P's own dispatch is cheaper; within "
             f"{100 * dispatchcmp.TIE:.1f}% it is called a tie.")
    L.append("")
    L.append(_md_row(["profile", "P's chain", "coverage of P's mix", "P", "P~table", "P~kvm",
                      "P / P~table", "P / P~kvm", "verdict"]))
    L.append(_md_row(["---", "---", "---:"] + ["---:"] * 5 + ["---"]))
    for row in central_rows(res):
        L.append(_md_row(row))
    for b in dispatchcmp.BASELINES:
        if b in res.baseline_means:
            m, cov = res.baseline_means[b]
            L.append(_md_row([f"*{b}*", "*reference: the baseline profile itself*",
                              f"{100 * cov:.0f}%", _fmt(m), "", "", "", "",
                              "*own mix, same method; not a subject*"]))
    L.append("")
    L.append("*Bochs ticks are retired-instruction counts, not cycles.*")
    L.append("")

    L.append("### Per reason: where the dispatch finds the handler, and what it costs")
    L.append("")
    L.append("Position: `#k` = the k-th compare of the direct-call chain; `table after n` = "
             "n failed compares, then the bounds-checked table and an indirect call. A "
             "chain compare is two instructions (CMP, Jcc), so by the instruction count a "
             "reason at `#k` costs 2k + 1 (the direct JMP) against the table's fixed path, "
             "and a reason missing from a chain of n pays 2n more than the table. "
             "Differences are P minus the variant, in ticks.")
    if res.path_lengths:
        L.append("Instructions: the dispatch's own path to the handler, counted from "
                 "`objdump -d` of each build's vmx_dispatch_exit (P / P~table / P~kvm).")
    L.append("")
    for c in res.comparisons:
        p, t, k = c.labels
        L.append(f"**{c.subject}** (mean P {_fmt(c.means.get(p))}, P~table "
                 f"{_fmt(c.means.get(t))}, P~kvm {_fmt(c.means.get(k))}; {c.verdict()})")
        L.append("")
        head = ["reason", "share", "source", "in P", "in P~kvm", "P", "P~table", "P~kvm",
                "P - P~table", "P - P~kvm"]
        pl = [res.path_lengths.get(lb) for lb in c.labels]
        if all(pl):
            head.append("instructions P / P~table / P~kvm")
        L.append(_md_row(head))
        L.append(_md_row(["---", "---:", "---", "---", "---"] + ["---:"] * (len(head) - 5)))
        for r in c.reasons:
            cells = [r.reason, f"{100 * r.share:.1f}%", f"{r.source} ({r.detail})",
                     dispatchcmp.position(c.chains.get(p), r.reason),
                     dispatchcmp.position(c.chains.get(k), r.reason),
                     _fmt(r.ticks[p]), _fmt(r.ticks[t]), _fmt(r.ticks[k]),
                     f"{r.ticks[p] - r.ticks[t]:+.1f}", f"{r.ticks[p] - r.ticks[k]:+.1f}"]
            if all(pl):
                cells.append(" / ".join(str(x.get(r.reason, "?")) for x in pl))
            L.append(_md_row(cells))
        for reason, share, why in c.missing:
            L.append(_md_row([reason, f"{100 * share:.1f}%", f"not weighed: {why}"]
                             + [""] * (len(head) - 3)))
        L.append("")
        if all(pl) and c.reasons:
            L += _dispatch_words(c, pl)
    return L


def render_exit_parts(res: Results) -> List[str]:
    """Where each kind's instructions go, per profile (exitpath.py)."""
    if not res.exit_parts:
        return []
    L = ["## Where the instructions go: the exit path by part", "",
         "Each one-exit kind's round trip (Bochs ticks = retired instructions) split into "
         "the parts of the exit path: stub (exit_entry.S to its CALL), dispatch "
         "(vmx_dispatch_exit to the handler's JMP), msr switch (the hooks stub's "
         "vmx_handle_exit around the dispatch, shortest-longest path; 0 on the plain stub), "
         "resume (back to VMRESUME), each counted from `objdump -d` of the image that ran; "
         "handler is the rest: the handler and what it calls, the VM exit and entry, and "
         "the guest's RDTSC pair's leftovers.", ""]
    for lb, splits in res.exit_parts.items():
        L.append(f"**{lb}**")
        L.append("")
        L.append(_md_row(["kind", "reason", "ticks"] + list(exitpath.PARTS)))
        L.append(_md_row(["---", "---"] + ["---:"] * (1 + len(exitpath.PARTS))))
        for sp in splits:
            L.append(_md_row([sp.kind, sp.reason, fmt_ticks(sp.ticks)]
                             + [sp.words(p) for p in exitpath.PARTS]))
        L.append("")
    return L


def _dispatch_words(c: dispatchcmp.Comparison, pl) -> List[str]:
    """The dispatch alone, in instructions, under P's mix; and the links of
    P's chain that cost more than the table would."""
    p, t, k = c.labels
    instr = {lb: sum(r.share * x[r.reason] for r in c.reasons) / c.coverage
             for lb, x in zip(c.labels, pl)}
    out = [f"Dispatch alone (objdump), weighted like the means: P {instr[p]:.1f}, "
           f"P~table {instr[t]:.1f}, P~kvm {instr[k]:.1f} instructions per exit; "
           f"P - P~table = {instr[p] - instr[t]:+.1f} instructions against "
           f"{c.means[p] - c.means[t]:+.1f} ticks measured, P - P~kvm = "
           f"{instr[p] - instr[k]:+.1f} against {c.means[p] - c.means[k]:+.1f}."]
    ch = c.chains.get(p) or []

    def table(r):
        return pl[1].get(r, pl[1]["*table"])
    dear = [f"{r} (#{ch.index(r) + 1}, {pl[0][r]} against {table(r)})"
            for r in ch if r in pl[0] and pl[0][r] > table(r)]
    if dear:
        out[-1] += (" Links that cost their reason more than P~table's path: "
                    + ", ".join(dear) + ".")
    best = dispatchcmp.best_chain_length(ch, pl[0], c.mix_shares())
    if best is not None:
        m, costs, order = best
        n = len(ch)
        if m == n:
            out[-1] += (f" By these counts {n} links is the best length for P's whole mix "
                        f"({costs[n]:.2f} instructions per exit): a shorter chain sends the "
                        "dropped reasons through the table after the remaining compares, a "
                        "longer one makes every reason left out pay two more.")
        elif m < n:
            out[-1] += (f" By these counts the dispatch would be cheapest under P's whole mix "
                        f"with the first {m} links ({costs[m]:.2f} instructions per exit "
                        f"against {costs[n]:.2f} with {n}): the generator should stop the "
                        "chain there.")
        else:
            out[-1] += (f" By these counts (a link two instructions, the table part of the "
                        f"path {pl[0]['*table'] - pl[0][ch[0]] + 3 - 2 * n}) the dispatch "
                        f"would be cheapest under P's whole mix with {m} links, adding "
                        + ", ".join(order[n:m]) + f" ({costs[m]:.2f} instructions per exit "
                        f"against {costs[n]:.2f} with {n}): the chain the generator chose "
                        "is shorter than this mix pays for.")
    return out + [""]


def _own_mix_rows(res: Results):
    """[(profile, coverage, its mean on its own mix, table-only's,
    kvm-order's)], without HLT."""
    def mean(label, mix):
        m = res.weighted_nowait.get((label, mix), (float("nan"), 0))[0]
        return None if m != m else m

    rows = []
    for mix in res.mixes:
        mine = mean(mix.profile, mix.profile)
        if mine is not None:
            cov = res.weighted_nowait[(mix.profile, mix.profile)][1]
            rows.append((mix.profile, cov, mine, mean("table-only", mix.profile),
                         mean("kvm-order", mix.profile)))
    return rows


def _rel(p: Path) -> str:
    try:
        return os.path.relpath(p, REPO)
    except ValueError:
        return str(p)


def write_csv(res: Results, path: Path) -> None:
    """One row per profile run (and reference): the ticks of every kind."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["profile", "role", "source", "dispatch", "efer", "cpu", "unit"]
                   + res.kinds + ["status"])
        for row in res.rows:
            w.writerow([row.label, row.role, row.source, row.dispatch, row.efer, res.cpu, UNIT]
                       + ["" if row.ticks.get(k) is None else
                          (row.ticks[k] if isinstance(row.ticks[k], str) else f"{row.ticks[k]:g}")
                          for k in res.kinds]
                       + [row.status])


def write_weighted_csv(res: Results, path: Path) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["profile", "mix", "own_mix", "mean_ticks", "coverage",
                    "mean_ticks_without_hlt", "coverage_without_hlt", "reasons", "unit"])
        for (label, mix), (mean, cov) in res.weighted.items():
            m2, c2 = res.weighted_nowait[(label, mix)]
            w.writerow([label, mix, int(label == mix),
                        "" if mean != mean else f"{mean:.1f}", f"{cov:.4f}",
                        "" if m2 != m2 else f"{m2:.1f}", f"{c2:.4f}",
                        " ".join(res.common_reasons), UNIT])


def write_dispatch_csv(res: Results, path: Path) -> None:
    """The central comparison: one row per (profile, build, reason), and a
    row with reason `*mean` per build for the weighted mean."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["profile", "build", "variant", "reason", "share", "source", "position",
                    "ticks", "instructions", "mean_coverage", "ratio_to_build", "verdict", "unit"])
        for c in res.comparisons:
            for lb, variant in zip(c.labels, ("P", "P~table", "P~kvm")):
                pl = res.path_lengths.get(lb, {})
                for r in c.reasons:
                    w.writerow([c.subject, lb, variant, r.reason, f"{r.share:.4f}", r.source,
                                dispatchcmp.position(c.chains.get(lb), r.reason),
                                f"{r.ticks[lb]:.1f}", pl.get(r.reason, ""), "", "", "", UNIT])
                m = c.means.get(lb)
                ratio = c.ratio(lb) if variant != "P" else None
                w.writerow([c.subject, lb, variant, "*mean", "", "", "",
                            "" if m is None else f"{m:.1f}", "", f"{c.coverage:.4f}",
                            "" if ratio is None else f"{ratio:.4f}",
                            c.verdict() if variant == "P" else "", UNIT])


def plot(res: Results, path: Path) -> Optional[str]:
    """Grouped bars: per kind, one bar per profile (references hatched).
    Returns None, or why there is no plot."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"no matplotlib ({e})"
    # The profiles and EFER variants; the dispatch variants have a panel
    # of their own (the central comparison) below.
    measured = [r for r in res.rows if r.source == "measured"
                and not dispatchcmp.parse_label(r.label)
                and any(isinstance(v, (int, float)) for v in r.ticks.values())]
    if not measured:
        return "nothing measured"
    waits = [k for k in res.kinds if k.startswith("hlt") or k.startswith("hrtimer")]
    panels = [("exits", [k for k in res.kinds if k not in waits]), ("timer round trips", waits)]
    panels = [(t, ks) for t, ks in panels if ks]
    central = [c for c in res.comparisons if c.means]
    fig = plt.figure(figsize=(7 + 1.1 * len(res.kinds), 11 if central else 6))
    gs = fig.add_gridspec(2 if central else 1, len(panels),
                          width_ratios=[max(1, len(ks)) for _, ks in panels],
                          height_ratios=[1, 0.8] if central else [1])
    axes = [[fig.add_subplot(gs[0, i]) for i in range(len(panels))]]
    refs = [r for r in res.rows if r.source == "reference"]
    series = measured + refs
    cmap = plt.get_cmap("tab10")
    hatches = ["//", "..", "xx", "\\\\"]
    for ax, (title, ks) in zip(axes[0], panels):
        width = 0.8 / max(1, len(series))
        # Scale to what was measured; a reference far above (KVM's 961) is
        # cut at the top and labelled with its value.
        top = 1.25 * max([v for r in measured for k in ks
                          for v in [r.ticks.get(k)] if isinstance(v, (int, float))] or [1])
        for i, row in enumerate(series):
            xs, ys = [], []
            for j, k in enumerate(ks):
                v = row.ticks.get(k)
                if isinstance(v, str):       # a reference range "71-75": its top
                    v = float(v.split("-")[-1])
                if isinstance(v, (int, float)):
                    xs.append(j - 0.4 + width * (i + 0.5))
                    ys.append(v)
            if not xs:
                continue
            ref = row.source == "reference"
            if ref:
                h = hatches[refs.index(row) % len(hatches)]
                ax.bar(xs, [min(y, top) for y in ys], width, label=row.label, color="white",
                       edgecolor="black", hatch=h)
                for x, y in zip(xs, ys):
                    if y > top:
                        ax.annotate(f"{y:.0f}", (x, top), xytext=(0, -2), textcoords="offset points",
                                    ha="center", va="top", rotation=90, fontsize="x-small",
                                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none"))
            else:
                ax.bar(xs, ys, width, label=row.label, color=cmap(i % 10))
        ax.set_ylim(0, top)
        ax.set_xticks(range(len(ks)))
        ax.set_xticklabels(ks, rotation=30, ha="right")
        ax.set_ylabel("Bochs ticks per round trip (instructions)")
        ax.set_title(title)
        ax.grid(axis="y", alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=min(5, len(labels)), fontsize="small",
               bbox_to_anchor=(0.5, 0.955 if central else 0.93))
    if central:
        _plot_central(fig.add_subplot(gs[1, :]), central)
    fig.suptitle(f"exitplan exit costs on Bochs {res.cpu}: ticks are Bochs retired-instruction "
                 "counts, not cycles", fontsize="medium")
    fig.tight_layout(rect=(0, 0, 1, 0.90 if central else 0.85))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return None


def _plot_central(ax, comparisons) -> None:
    """Per profile P: P, P~table and P~kvm under P's own exit mix, the
    ratios to P written above the variants' bars."""
    names = ["P (generated)", "P~table", "P~kvm"]
    colours = ["tab:blue", "tab:gray", "tab:orange"]
    width = 0.26
    for i, (name, colour) in enumerate(zip(names, colours)):
        xs, ys = [], []
        for j, c in enumerate(comparisons):
            v = c.means.get(c.labels[i])
            if v is not None:
                xs.append(j + (i - 1) * width)
                ys.append(v)
        ax.bar(xs, ys, width, label=name, color=colour)
        if i:
            for j, c in enumerate(comparisons):
                r = c.ratio(c.labels[i])
                if r is not None:
                    ax.annotate(f"P/{name}\n{r:.3f}", (j + (i - 1) * width, c.means[c.labels[i]]),
                                xytext=(0, 2), textcoords="offset points", ha="center",
                                va="bottom", fontsize="x-small")
    ax.set_xlim(-0.6, max(len(comparisons), 3) - 0.4)
    ax.set_xticks(range(len(comparisons)))
    ax.set_xticklabels([f"{c.subject}\n{c.verdict()}\ncoverage {100 * c.coverage:.0f}%"
                        for c in comparisons], fontsize="small")
    ax.set_ylabel("weighted mean ticks per exit (instructions)")
    ax.set_title("Each profile's dispatch against the table and KVM's chain, everything else "
                 "equal, under the profile's own exit mix (guest round trips + hypervisor "
                 "timing)", fontsize="small")
    top = max(v for c in comparisons for v in c.means.values())
    ax.set_ylim(0, 1.25 * top)
    ax.legend(fontsize="small", loc="upper right")
    ax.grid(axis="y", alpha=0.3)


def write_all(res: Results, out: Path) -> List[Path]:
    out.mkdir(parents=True, exist_ok=True)
    md = out / "results.md"
    md.write_text(render_markdown(res))
    write_csv(res, out / "results.csv")
    write_weighted_csv(res, out / "weighted.csv")
    write_dispatch_csv(res, out / "dispatch.csv")
    written = [md, out / "results.csv", out / "weighted.csv", out / "dispatch.csv"]
    why = plot(res, out / "exit-costs.png")
    if why:
        print(f"run_bench: no plot: {why}", file=sys.stderr)
    else:
        written.append(out / "exit-costs.png")
    return written


# ---------------------------------------------------------------- main

def load_mixes(profiles: List[str]) -> List[exitmix.ExitMix]:
    names = exitmix.exit_reason_names(REPO / "spec")
    return [exitmix.load_mix(REPO / "profiles" / f"{p}.yaml", names) for p in profiles]


def git_commit() -> str:
    p = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=REPO,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.environ.get("EXITPLAN_BUILD", "build"),
                    help="the build directory (make's BUILD)")
    ap.add_argument("--out", type=Path, default=None, help="default: BUILD/bench")
    ap.add_argument("--cpu", default="corei7_skylake_x", help="Bochs CPU model")
    ap.add_argument("--profiles", default=None,
                    help="comma-separated profile names (default: every profiles/*.yaml)")
    ap.add_argument("--jobs", type=int, default=2, help="Bochs runs at a time")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per Bochs run")
    ap.add_argument("--bench-args", default="cr8",
                    help="the bench guest's command line (cr8: also time MOV CR8 in 64-bit mode)")
    ap.add_argument("--hrtimer-args", default="", help="the hrtimer guest's command line")
    ap.add_argument("--no-efer-variants", dest="efer_variants", action="store_false",
                    help="skip the default profile's EFER load-list and manual variants")
    ap.add_argument("--no-dispatch-variants", dest="dispatch_variants", action="store_false",
                    help="skip the central comparison's P~table, P~kvm and timing variants")
    ap.add_argument("--no-workloads", dest="workloads", action="store_false",
                    help="skip the workloads (pipe ping-pong on bare Bochs and every build)")
    ap.add_argument("--no-linux", dest="linux", action="store_false",
                    help="skip the Linux workloads (linux.py: under exitplan and bare Bochs)")
    ap.add_argument("--no-intr-runs", dest="intr_runs", action="store_false",
                    help="skip the interrupt paths' own boots (intrpaths.py: the bench guest "
                         "bare, the IPI to another CPU bare and under every profile)")
    ap.add_argument("--tree", choices=("head", "worktree"), default="head",
                    help="build from a snapshot of HEAD (default: one consistent tree while "
                         "others edit) or from the working tree")
    ap.add_argument("--from-serial", type=Path, default=None,
                    help="analyse DIR/LABEL/GUEST.serial recorded earlier instead of running")
    args = ap.parse_args(argv)
    os.environ["EXITPLAN_BUILD"] = args.build
    out = args.out or (Path(args.build) / "bench")
    if not out.is_absolute():
        out = Path.cwd() / out
    all_profiles = sorted(p.stem for p in (REPO / "profiles").glob("*.yaml"))
    args.profiles = args.profiles.split(",") if args.profiles else all_profiles
    for p in args.profiles:
        if p not in all_profiles:
            ap.error(f"no profiles/{p}.yaml")
    if args.jobs < 1 or args.timeout < 1:
        ap.error("--jobs and --timeout must be positive")
    args.guest_args = {"bench": args.bench_args, "hrtimer": args.hrtimer_args}
    try:
        mixes = load_mixes(args.profiles)
        if args.from_serial:
            runs = runs_from_serial(args.from_serial, args.profiles)
        else:
            runs = run_all(args, out)
    except (BenchError, exitmix.MixError) as e:
        print(f"run_bench: {e}", file=sys.stderr)
        return 2
    build = Path(args.build)
    res = analyse(runs, mixes, args.cpu, args.guest_args,
                  commit=BUILT_FROM.split()[1] if BUILT_FROM.startswith("commit ") else git_commit(),
                  date=datetime.date.today().isoformat(),
                  build=build if build.is_absolute() else REPO / build,
                  elf_dir=(args.from_serial.resolve().parent if args.from_serial else out) / "elf")
    res.built_from = BUILT_FROM
    ir: List[intrpaths.Result] = []
    if args.from_serial:
        ir = intrpaths.from_serial(args.from_serial.parent)
    elif args.intr_runs:
        ir = run_intr(args, out)
    res.intr = intrpaths.render(res.intr_paths, ir, res.intr_parts)
    if ir or res.intr_paths:
        intrpaths.write_csv(res.intr_paths, ir, out / "intr.csv")
    wl: List[workloads.Result] = []
    if args.from_serial:
        wl = workloads.from_serial(args.from_serial.parent / "workloads")
    elif args.workloads:
        wl = run_workloads(args, out)
    res.workloads = workloads.render(wl)
    if wl:
        workloads.write_csv(wl, out / "workloads.csv")
    oc: List[overcommit.Result] = []
    if args.from_serial:
        oc = overcommit.from_serial(args.from_serial.parent)
    elif args.workloads and overcommit.SUBJECT in args.profiles:
        oc = run_overcommit(args, out)
    res.workloads += overcommit.render(oc)
    if oc:
        overcommit.write_csv(oc, out / "overcommit.csv")
    lx: List[linux.Result] = []
    if args.from_serial:
        lx = linux.from_serial(args.from_serial.parent)
    elif args.workloads and args.linux and all(w.profile in args.profiles
                                                for w in linux.WORKLOADS):
        lx = run_linux(args, out)
    res.workloads += linux.render(lx)
    if lx:
        linux.write_csv(lx, out / "linux.csv")
    host_md = out / "host.md"
    if host_md.exists():
        res.host_md = host_md.read_text()
    for p in write_all(res, out):
        print(f"run_bench: wrote {_rel(p)}", file=sys.stderr)
    bad = [f"{r.variant.label}/{r.guest}: {r.status}" for r in runs if r.status != "ok"]
    bad += [f"workload {r.setting}/{r.case.name}: {r.status}" for r in wl if r.status != "ok"]
    bad += [f"interrupt path {r.setting}/{r.case}: {r.status}" for r in ir if r.status != "ok"]
    bad += [f"overcommit {r.ratio}/{r.mode}: {r.status}" for r in oc if r.status != "ok"]
    bad += [f"linux {r.workload.name}/{r.setting}: {r.status}" for r in lx if r.status != "ok"]
    if bad:
        print("run_bench: runs without their numbers: " + ", ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
