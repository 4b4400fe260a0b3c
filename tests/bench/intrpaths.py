# SPDX-License-Identifier: GPL-2.0-only
"""The interrupt paths in make bench (docs/BENCH.md, "Interrupt paths").

The bench guest (tests/guest/bench/intr.c) times, after its exit kinds,
the paths an interrupt takes: self-IPIs in xAPIC and x2APIC mode taken in
the window after STI (`sti; nop`, `sti; hlt`), an EOI, the TSC deadline
armed, passed and fired, and the 8254's IRQ 0 through the 8259s; with the
`ipi-other` option on two CPUs, an IPI to the other CPU halted in HLT and
back.  Each kind is `intr-*`:

  bench: intr-KIND <ticks> <iterations>
  bench-exits: intr-KIND in <n> round trips: REASON=count ...
  bench-exits: intr-KIND in <n> gaps with their arming and EOI: REASON=count ...
  bench-info: intr-KIND: <late> of <sent> self-IPIs taken after the STI window

A round trip's exits all fall inside its timed part, so make bench splits
it into the parts of the exit path (exitpath.split_many): each exit's
stub, dispatch, msr switch and resume counted from objdump, the rest the
handlers', the injections and the VM exits and entries themselves.  A
gap (`*-fire`: from the last RDTSC of a loop to the handler's first) is
the interrupt's delivery as the guest sees it; its exits are counted with
those of its arming and EOI, outside the gap, and it is given whole.

This module boots what the exit-cost runs do not: the bench guest on bare
Bochs (one CPU), and the `ipi-other` run on two CPUs bare and under every
profile's build.  Bochs ticks are retired instructions, not cycles.
"""
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

BARE = "bare Bochs"
BARE_DIR = "bare"
PREFIX = "intr-"
IPI_GUEST_ARGS = "ipi-other"
IPI_CASE = "ipi-other"
BENCH_CASE = "bench"

_NUM = r"(\d+(?:\.\d+)?)"
BENCH_RE = re.compile(r"^bench: (intr-[A-Za-z0-9_.-]+) " + _NUM + r" (\d+)[ \t]*$", re.M)
EXITS_RE = re.compile(r"^bench-exits: (intr-\S+) in (\d+) (round trips|gaps with their arming "
                      r"and EOI):((?: [A-Z0-9_]+=\d+)*| none)[ \t]*$", re.M)
LATE_RE = re.compile(r"^bench-info: (intr-\S+): (\d+) of (\d+) self-IPIs taken after the STI "
                     r"window[ \t]*$", re.M)
SUMMARY_RE = re.compile(r"^guest (\S+): (\d+) passed, (\d+) failed[ \t]*$", re.M)

# The order of the report's rows: the guest's, with the IPI run's last.
KINDS = ["intr-self-ipi-xapic-sti-nop", "intr-self-ipi-xapic-sti-hlt",
         "intr-self-ipi-x2apic-sti-nop", "intr-self-ipi-x2apic-sti-hlt",
         "intr-eoi-xapic", "intr-eoi-x2apic", "intr-tsc-deadline-arm",
         "intr-tsc-deadline-immediate", "intr-tsc-deadline-fire", "intr-pit-fire",
         "intr-ipi-other-hlt"]


def is_path(kind: str) -> bool:
    return kind.startswith(PREFIX)


@dataclass
class PathMeasure:
    kind: str
    ticks: float
    iterations: int
    gap: bool = False
    exits: Optional[Dict[str, int]] = None      # by reason, over `iterations`
    late: int = 0

    def exits_per_trip(self) -> Optional[Dict[str, float]]:
        if self.exits is None:
            return None
        return {r: c / self.iterations for r, c in self.exits.items()}

    def exits_words(self) -> str:
        per = self.exits_per_trip()
        if per is None:
            return ""
        if not per:
            return "none"
        return ", ".join(f"{r} {v:g}" for r, v in per.items())


def parse(text: str) -> Dict[str, PathMeasure]:
    """The intr-* kinds a bench guest printed, in print order."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    out: Dict[str, PathMeasure] = {}
    for m in BENCH_RE.finditer(text):
        # A gap (`*-fire`) says so in its exits line too; bare Bochs prints none.
        out[m.group(1)] = PathMeasure(m.group(1), float(m.group(2)), int(m.group(3)),
                                      gap=m.group(1).endswith("-fire"))
    for m in EXITS_RE.finditer(text):
        pm = out.get(m.group(1))
        if pm is None or int(m.group(2)) != pm.iterations:
            continue
        pm.gap = m.group(3) != "round trips"
        pm.exits = {}
        for word in m.group(4).split():
            if word != "none":
                r, c = word.split("=")
                pm.exits[r] = int(c)
    for m in LATE_RE.finditer(text):
        if m.group(1) in out:
            out[m.group(1)].late = int(m.group(2))
    return out


# ---------------------------------------------------------------- runs

@dataclass
class Result:
    setting: str                # BARE or a build's label
    case: str                   # BENCH_CASE or IPI_CASE
    status: str
    paths: Dict[str, PathMeasure] = field(default_factory=dict)
    serial: Optional[Path] = None


def status_of(text: str, timed_out: bool) -> str:
    m = SUMMARY_RE.search(text)
    if re.search(r"^exitplan: PANIC: ", text, re.M):
        return "panic"
    if timed_out:
        return "timeout"
    if not m:
        return "incomplete"
    return "failed checks" if int(m.group(3)) else "ok"


def result(setting: str, case: str, text: str, timed_out: bool,
           serial: Optional[Path] = None) -> Result:
    if text.startswith("error: "):
        return Result(setting, case, text, serial=serial)
    return Result(setting, case, status_of(text, timed_out), parse(text), serial)


def serial_path(out: Path, setting: str, case: str) -> Path:
    d = BARE_DIR if setting == BARE else setting
    return out / "intr" / d / f"{case}.serial"


def run_all(bootlib, root: Path, out: Path, settings: List[Tuple[str, Path]], cpu: str,
            jobs: int, timeout: int, bench_args: str = "") -> List[Result]:
    """The bench guest bare on one CPU; the IPI run bare and under every
    (label, ELF) of @settings on two.  Bare boots go through
    tests/guest/bochs-bare.sh, as the workloads' (workloads.py)."""
    import workloads
    guest = bootlib.build_guest("bench")
    todo, meta = [], []
    plan = [(BARE, None, BENCH_CASE, bench_args, 1), (BARE, None, IPI_CASE, IPI_GUEST_ARGS, 2)]
    plan += [(lb, elf, IPI_CASE, IPI_GUEST_ARGS, 2) for lb, elf in settings]
    for setting, elf, case, args, ncpu in plan:
        serial = serial_path(out, setting, case)
        serial.parent.mkdir(parents=True, exist_ok=True)
        meta.append((setting, case, serial))
        if elf is None:
            c = workloads.Case(case, "bench", args, ncpu, "")
            todo.append(workloads._bare_job(root, guest, c, cpu, serial, timeout))
        else:
            iso = bootlib.build_iso(elf, guest, serial.with_suffix(".iso"), guest_args=args)
            todo.append(workloads.hv_job(bootlib, iso, cpu, serial, timeout, ncpu))
    done = bootlib.run_parallel(todo, max_workers=jobs)
    return [result(s, c, text, timed_out, serial)
            for (s, c, serial), (text, timed_out) in zip(meta, done)]


def from_serial(dir_: Path) -> List[Result]:
    """Runs recorded earlier: DIR/intr/SETTING/CASE.serial."""
    base = dir_ / "intr"
    if not base.is_dir():
        return []
    out = []
    for d in sorted(p for p in base.iterdir() if p.is_dir()):
        setting = BARE if d.name == BARE_DIR else d.name
        for case in (BENCH_CASE, IPI_CASE):
            f = d / f"{case}.serial"
            if f.is_file():
                out.append(result(setting, case, f.read_text(errors="replace"), False, f))
    out.sort(key=lambda r: (r.setting != BARE, r.setting, r.case))
    return out


# ---------------------------------------------------------------- report

def fmt(v: Optional[float]) -> str:
    return "-" if v is None else f"{v:g}"


def _row(cells) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def render(profile_paths: Dict[str, Dict[str, PathMeasure]], runs: List[Result],
           parts: Dict[str, Dict[str, object]]) -> List[str]:
    """results.md's section: every kind's ticks bare and under each build
    (@profile_paths: label -> the bench run's intr-* kinds; @runs: this
    module's), then per build each round trip split into its parts
    (@parts: label -> kind -> exitpath.Split)."""
    table: Dict[str, Dict[str, PathMeasure]] = {lb: dict(p) for lb, p in profile_paths.items()}
    bare: Dict[str, PathMeasure] = {}
    notes = []
    for r in runs:
        if r.status != "ok":
            notes.append(f"{r.setting} / {r.case}: {r.status}")
        dst = bare if r.setting == BARE else table.setdefault(r.setting, {})
        dst.update(r.paths)
    kinds = [k for k in KINDS if k in bare or any(k in p for p in table.values())]
    kinds += sorted({k for p in [bare] + list(table.values()) for k in p if k not in kinds})
    if not kinds:
        return []
    labels = [lb for lb in table if table[lb]]
    L = ["## Interrupt paths", "",
         "The bench guest's interrupt paths (tests/guest/bench/intr.c), in Bochs ticks "
         "(retired instructions, not cycles), on bare Bochs and under each build. `sti-nop`, "
         "`sti-hlt`: a self-IPI sent with IF=0 and taken in the window after STI, the "
         "handler's EOI included; `eoi`: an EOI with nothing in service; "
         "`tsc-deadline-arm`: WRMSR of a deadline far ahead; `tsc-deadline-immediate`: a "
         "deadline already passed, until the handler ran; `*-fire`: the gap an interrupt "
         "leaves in a loop reading the TSC (TSC deadline; the 8254's IRQ 0 through the "
         "8259s); `ipi-other-hlt`: a fixed IPI to the other CPU halted in HLT until its "
         "handler's store is seen (a run of its own on two CPUs). `-`: not measured.", ""]
    L.append(_row(["kind", BARE] + labels))
    L.append(_row(["---"] + ["---:"] * (1 + len(labels))))
    for k in kinds:
        cells = [k, fmt(bare[k].ticks if k in bare else None)]
        for lb in labels:
            pm = table[lb].get(k)
            cells.append(fmt(pm.ticks if pm else None) + (f" ({pm.late} late)" if pm and pm.late
                                                          else ""))
        L.append(_row(cells))
    L.append("")
    late = [f"{lb}: {k} {pm.late}" for lb in labels for k, pm in table[lb].items() if pm.late]
    if late:
        L += ["Self-IPIs taken after the STI window, not in it as hardware takes them "
              "(`(n late)`): " + "; ".join(late) + ".", ""]
    for lb in labels:
        sp = parts.get(lb) or {}
        rows = [(k, table[lb][k]) for k in kinds if k in table[lb] and table[lb][k].exits]
        if not rows:
            continue
        L += [f"**{lb}**: exits per round trip (the guest's STATS_READ) and the round trip "
              "by part (stub, dispatch, msr switch, resume: objdump, once per exit; handler: "
              "the rest, injections and the VM exits and entries included); gaps whole.", ""]
        head = ["kind", "ticks", "bare", "over bare", "exits per round trip"]
        L.append(_row(head + ["stub", "dispatch", "msr switch", "resume", "handler"]))
        L.append(_row(["---", "---:", "---:", "---:", "---"] + ["---:"] * 5))
        for k, pm in rows:
            b = bare.get(k)
            over = fmt(pm.ticks - b.ticks) if b else "-"
            s = sp.get(k)
            split = [s.words(p) for p in ("stub", "dispatch", "msr switch", "resume",
                                          "handler")] if s else ["-"] * 5
            words = pm.exits_words() + (" (with the arming and EOI)" if pm.gap else "")
            L.append(_row([k, fmt(pm.ticks), fmt(b.ticks) if b else "-", over, words] + split))
        L.append("")
    if notes:
        L += ["Runs without their numbers: " + "; ".join(notes) + ".", ""]
    return L


def write_csv(profile_paths: Dict[str, Dict[str, PathMeasure]], runs: List[Result],
              path: Path) -> None:
    """intr.csv: setting, kind, ticks, iterations, gap, late, exits (REASON=count ...)."""
    import csv
    rows = []
    for r in runs:
        for pm in r.paths.values():
            rows.append((r.setting, pm))
    for lb, ps in profile_paths.items():
        rows += [(lb, pm) for pm in ps.values()]
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["setting", "kind", "ticks", "iterations", "gap", "late", "exits"])
        for setting, pm in rows:
            w.writerow([setting, pm.kind, f"{pm.ticks:g}", pm.iterations, int(pm.gap), pm.late,
                        " ".join(f"{r}={c}" for r, c in (pm.exits or {}).items())])
