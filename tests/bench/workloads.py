# SPDX-License-Identifier: GPL-2.0-only
"""Workloads in make bench: the same guest work on bare Bochs and under the
hypervisor builds of the same run, side by side (docs/BENCH.md, "Workloads").

The exit-cost tables (run_bench.py) time one exit at a time; a workload
is many exits in the shape a real program makes them.  Today: pipe
ping-pong (tests/guest/pingpong) between two vCPUs, each halting until
the other's IPI wakes it.  Every number is Bochs ticks: retired
instructions (the emulated TSC advances one per instruction), so they are
deterministic path lengths, not cycles.

For each setting (bare Bochs, every profile and its ~table/~kvm dispatch
variants, pipe-pingpong with the other `apic:` choice, pipe-pingpong-direct
with the guest owning its CPU's interrupts) the hot case runs;
the settings that matter most for the workload run every case (xAPIC,
spinning instead of HLT, 4 vCPUs).  The timing builds of pipe-pingpong
and pipe-pingpong-direct (statistics: timing) give the hypervisor's ticks per exit reason, from
which its share of one round trip is summed.
"""
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import dispatchcmp
import table

BARE = "bare Bochs"
BARE_DIR = "bare"


@dataclass(frozen=True)
class Case:
    name: str
    guest: str
    args: str
    ncpu: int
    words: str


# The hot case first: the one every setting runs.
CASES: Tuple[Case, ...] = (
    Case("x2apic", "pingpong", "n=200 x2apic", 2,
         "HLT until the IPI, ICR through x2APIC MSR 0x830"),
    Case("xapic", "pingpong", "n=200", 2, "HLT until the IPI, ICR on the xAPIC page"),
    Case("spin", "pingpong", "n=200 spin x2apic", 2,
         "spinning on the token: no IPI, no HLT (the floor of the handover)"),
    Case("x2apic-4", "pingpong", "n=200 x2apic", 4, "as x2apic, on 4 vCPUs (two of them idle)"),
)
HOT_CASE = CASES[0].name

# The workload's own profile: it, its variants and the other apic: choice
# run every case; the other profiles only the hot one.
SUBJECT = "pipe-pingpong"
APIC_VARIANT = f"{SUBJECT}+passthrough"
APIC_EDIT = (r"^apic:[ \t]*intercept-icr[ \t]*$", "apic: passthrough")
# The workload with its vCPUs owning their CPUs' interrupts (interrupts:
# direct, profiles/pipe-pingpong-direct.yaml): every case, and its timing
# build, beside the subject's in the same run.
DIRECT = f"{SUBJECT}-direct"
WORKLOAD_PROFILES = (SUBJECT, DIRECT)

# The exits of one hop (ICR write, the IPI's arrival -- the hardware's
# interrupt, or under apic: intercept-icr the hypervisor's kick NMI --, HLT,
# the interrupt window when the IPI lands with interrupts off, xAPIC page
# writes), whose handling is the hypervisor's share of the round trip.
HOT_REASONS = ("MSR_WRITE", "EPT_VIOLATION", "EXTERNAL_INTERRUPT", "EXCEPTION_NMI",
               "INTERRUPT_WINDOW", "HLT")
# Issue #10's aim for that share on skylake_x with statistics off.
SHARE_GOAL = 400

RTT_RE = re.compile(r"^pingpong: round trip ticks: mean (\d+) min (\d+) p50 (\d+) p99 (\d+) "
                    r"max (\d+)[ \t]*$", re.M)
SEND_RE = re.compile(r"^pingpong: IPI send ticks: mean (\d+)", re.M)
ROUNDS_RE = re.compile(r"^pingpong: (\d+) round trips \(\+(\d+) warm-up\)", re.M)
SUMMARY_RE = re.compile(r"^guest (\S+): (\d+) passed, (\d+) failed[ \t]*$", re.M)
PANIC_RE = re.compile(r"^exitplan: (PANIC|profile '[^']*' refused): .*$", re.M)


@dataclass
class Result:
    setting: str
    case: Case
    status: str                       # ok | timeout | failed checks | incomplete | error: ...
    rtt: Dict[str, int] = field(default_factory=dict)     # mean, min, p50, p99, max
    send: Optional[int] = None
    rounds: int = 0                   # timed + warm-up: what the statistics cover
    stats_docs: List[dict] = field(default_factory=list)
    serial: Optional[Path] = None


def parse(setting: str, case: Case, text: str, timed_out: bool = False,
          serial: Optional[Path] = None) -> Result:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    r = Result(setting, case, "", serial=serial)
    m = RTT_RE.search(text)
    if m:
        r.rtt = dict(zip(("mean", "min", "p50", "p99", "max"), map(int, m.groups())))
    m = SEND_RE.search(text)
    r.send = int(m.group(1)) if m else None
    m = ROUNDS_RE.search(text)
    r.rounds = int(m.group(1)) + int(m.group(2)) if m else 0
    r.stats_docs = dispatchcmp.parse_stats_docs(text)
    summary, bad = SUMMARY_RE.search(text), PANIC_RE.search(text)
    r.status = ("panic" if bad else "timeout" if timed_out else
                "incomplete" if not summary or not r.rtt else
                "failed checks" if int(summary.group(3)) else "ok")
    return r


# ---------------------------------------------------------------- the runs

def cases_for(setting: str) -> Tuple[Case, ...]:
    return CASES if setting in (BARE, APIC_VARIANT) + WORKLOAD_PROFILES else CASES[:1]


def settings_from(elf_dir: Path, profiles: List[str]) -> List[Tuple[str, Path]]:
    """(label, elf) of the builds run_bench booted that the workload runs
    under: every profile, its ~table and ~kvm variants, and the timing
    builds of the subject and of DIRECT (their statistics give the
    per-reason ticks); the EFER
    variants differ only where this workload does not look."""
    out = []
    for p in profiles:
        for d in (None,) + dispatchcmp.DISPATCHES:
            for timing in (False, True):
                if timing and p not in WORKLOAD_PROFILES:
                    continue
                lb = dispatchcmp.label(p, d, timing)
                elf = elf_dir / f"{lb}.elf"
                if elf.is_file():
                    out.append((lb, elf))
    return out


def apic_variant_text(root: Path) -> str:
    """profiles/pipe-pingpong.yaml with the other apic: choice, renamed."""
    src = (root / "profiles" / f"{SUBJECT}.yaml").read_text()
    text, n1 = re.subn(rf"^profile:[ \t]*{re.escape(SUBJECT)}[ \t]*$",
                       f"profile: {APIC_VARIANT.replace('+', '-')}", src, count=1, flags=re.M)
    text, n2 = re.subn(APIC_EDIT[0], APIC_EDIT[1], text, count=1, flags=re.M)
    if n1 != 1 or n2 != 1:
        raise dispatchcmp.VariantError(f"profiles/{SUBJECT}.yaml: no `profile: {SUBJECT}` line "
                                       "or no `apic: intercept-icr` to turn into passthrough")
    return ("# Generated by tests/bench/workloads.py from profiles/pipe-pingpong.yaml:\n"
            "# the same profile with `apic: passthrough`.  Not a profile to use.\n" + text)


def build_apic_variant(root: Path, out: Path, gen_out: Path,
                       build: Callable[[str], Path]) -> Tuple[str, Path]:
    """(APIC_VARIANT, its elf): generated into @gen_out, built with
    @build(make's PROFILE=), as run_bench builds its other variants."""
    name = APIC_VARIANT.replace("+", "-")
    _, gdir = dispatchcmp.write_and_generate(root, out, name, apic_variant_text(root), gen_out)
    return APIC_VARIANT, build(os.path.relpath(gdir, root / "generated"))


def serial_path(out: Path, setting: str, case: Case) -> Path:
    return out / "workloads" / (BARE_DIR if setting == BARE else setting) / f"{case.name}.serial"


def run_all(bootlib, root: Path, out: Path, settings: List[Tuple[str, Path]], cpu: str,
            jobs: int, timeout: int) -> List[Result]:
    """Boot every (setting, case) pair, @jobs at a time: bare Bochs
    through tests/guest/bochs-bare.sh, the builds as the exit-cost runs."""
    guests = {c.guest: bootlib.build_guest(c.guest) for c in CASES}
    todo, meta = [], []
    for label, elf in [(BARE, None)] + settings:
        for c in cases_for(label):
            serial = serial_path(out, label, c)
            serial.parent.mkdir(parents=True, exist_ok=True)
            meta.append((label, c, serial))
            if elf is None:
                todo.append(_bare_job(root, guests[c.guest], c, cpu, serial, timeout))
                continue
            iso = bootlib.build_iso(elf, guests[c.guest], serial.with_suffix(".iso"),
                                    guest_args=c.args)
            todo.append(hv_job(bootlib, iso, cpu, serial, timeout, c.ncpu))
    done = bootlib.run_parallel(todo, max_workers=jobs)
    results = []
    for (label, c, serial), (text, timed_out) in zip(meta, done):
        if text.startswith("error: "):
            results.append(Result(label, c, text, serial=serial))
        else:
            results.append(parse(label, c, text, timed_out, serial))
    return results


def _bare_job(root: Path, guest: Path, case: Case, cpu: str, serial: Path, timeout: int):
    """The guest multibooted by GRUB itself, no hypervisor; its serial
    output is what bochs-bare.sh prints (exit status: the guest's, 124 on
    a timeout)."""
    def job():
        env = dict(os.environ, BOCHS_NCPU=str(case.ncpu), BOCHS_TIMEOUT=str(timeout))
        try:
            p = subprocess.run([str(root / "tests" / "guest" / "bochs-bare.sh"), str(guest),
                                case.args, cpu], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env,
                               timeout=timeout + 120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"error: bochs-bare.sh: {e}", False
        serial.write_text(p.stdout)
        return p.stdout, p.returncode == 124
    return job


def hv_job(bootlib, iso, cpu, serial, timeout, ncpu):
    """One boot of ISO under exitplan for run_parallel: (serial text or
    'error: ...', timed out).  Also overcommit.py's."""
    def job():
        try:
            r = bootlib.run_bochs(iso, cpu, serial, timeout=timeout, ncpu=ncpu)
        except bootlib.BootError as e:
            return f"error: {str(e).splitlines()[0]}", False
        return r.serial, r.timed_out
    return job


def from_serial(dir_: Path) -> List[Result]:
    """Results recorded earlier under DIR/SETTING/CASE.serial."""
    results = []
    if not dir_.is_dir():
        return results
    for sdir in sorted(p for p in dir_.iterdir() if p.is_dir()):
        setting = BARE if sdir.name == BARE_DIR else sdir.name
        for c in cases_for(setting):
            serial = sdir / f"{c.name}.serial"
            if serial.exists():
                results.append(parse(setting, c, serial.read_text(errors="replace"),
                                     serial=serial))
    # Bare first, then in the order the exit-cost tables list the builds.
    results.sort(key=lambda r: r.setting != BARE)
    return results


# ---------------------------------------------------------------- analysis

def hv_share(r: Result) -> Optional[Tuple[float, Dict[str, Tuple[float, float]]]]:
    """From a timing build's statistics: (the hypervisor's ticks per round
    trip over HOT_REASONS, {reason: (exits per round trip, ticks per exit)}),
    both vCPUs together; None without timing statistics."""
    costs = dispatchcmp.hv_costs({r.case.guest: r.stats_docs})
    if not costs or not r.rounds:
        return None
    per = {k: (costs[k].count / r.rounds, costs[k].per_exit) for k in HOT_REASONS if k in costs}
    return sum(n * t for n, t in per.values()), per


def _cell(r: Optional[Result]) -> str:
    return table.cell(r, lambda r: f"{r.rtt['mean']} ({r.rtt['p50']})")


def render(results: List[Result]) -> List[str]:
    """The Workloads section of results.md (its lines)."""
    if not results:
        return []
    by: Dict[Tuple[str, str], Result] = {(r.setting, r.case.name): r for r in results}
    settings = list(dict.fromkeys(r.setting for r in results))
    bare = by.get((BARE, HOT_CASE))
    bare_mean = bare.rtt["mean"] if bare and bare.status == "ok" else None
    L = ["## Workloads: pipe ping-pong (Bochs ticks)", "",
         "The same guest (tests/guest/pingpong) on bare Bochs and under each build of this "
         "run: two vCPUs hand a token over through shared memory; each side sends the other "
         "a fixed IPI and halts until the other's IPI wakes it.  Bochs ticks are retired "
         "instructions (the emulated TSC advances one per instruction): deterministic path "
         "lengths, not cycles.  Each cell: mean round trip (p50), over 200 round trips after "
         "20 warm-up ones.", ""]
    for c in CASES:
        L.append(f"- `{c.name}`: {c.words}; `{c.args}`, {c.ncpu} CPUs.")
    L += ["", "The hypervisor's share is the mean round trip less bare Bochs's in the hot case "
          f"(`{HOT_CASE}`); a hop is half a round trip.  Spin-to-HLT is what halting and the "
          "IPI add to a round trip beyond handing the token over (`xapic` or `x2apic` less "
          "`spin`, same setting).", ""]
    L += table.head(["setting"] + [f"`{c.name}`" for c in CASES] +
                    ["hypervisor's share", "per hop", "IPI send", "spin-to-HLT"])
    for s in settings:
        hot = by.get((s, HOT_CASE))
        spin = by.get((s, "spin"))
        share = hop = send = s2h = ""
        if hot and hot.status == "ok":
            if bare_mean is not None and s != BARE:
                share = str(hot.rtt["mean"] - bare_mean)
                hop = f"{(hot.rtt['mean'] - bare_mean) / 2:.0f}"
            send = "" if hot.send is None else str(hot.send)
            if spin and spin.status == "ok":
                s2h = str(hot.rtt["mean"] - spin.rtt["mean"])
        L.append(table.row([f"`{s}`" if s != BARE else s] +
                           [_cell(by.get((s, c.name))) for c in CASES] + [share, hop, send, s2h]))
    L.append("")
    timed = [(r, hv_share(r)) for r in results if r.case.name == HOT_CASE and "@timing" in r.setting]
    timed = [(r, h) for r, h in timed if h is not None]
    if timed:
        L += ["### The hypervisor's ticks per round trip, by exit reason (statistics: timing)", "",
              "From the timing builds' statistics documents, both vCPUs, the timing's own "
              "cost (tsc_overhead) taken off each exit: exits per round trip x ticks per exit.  "
              f"Issue #10 aims at under {SHARE_GOAL} ticks per round trip for these exits on "
              "skylake_x (a target for this table, not a pass/fail test).", ""]
        L += table.head(["build"] + list(HOT_REASONS) + ["per round trip"])
        for r, (total, per) in timed:
            cells = [f"{per[k][0]:.2f} x {per[k][1]:.0f}" if k in per else "" for k in HOT_REASONS]
            L.append(table.row([f"`{r.setting}`"] + cells + [f"{total:.0f}"]))
        L.append("")
    bad = [f"`{r.setting}`/{r.case.name}: {r.status}" for r in results if r.status != "ok"]
    if bad:
        L += ["Without their numbers: " + ", ".join(bad) + ".", ""]
    return L


def write_csv(results: List[Result], path: Path) -> None:
    table.write_csv(path, "setting,case,ncpu,status,mean,min,p50,p99,max,ipi_send",
                    [[r.setting, r.case.name, r.case.ncpu, r.status,
                      *(r.rtt.get(k, "") for k in ("mean", "min", "p50", "p99", "max")), r.send]
                     for r in results])
