# SPDX-License-Identifier: GPL-2.0-only
"""Linux workloads in make bench (issue 12, docs/BENCH.md "Linux"): the
initramfs programs (tests/linux/ep-*.c) run by the project's kernel under
exitplan, each under the profile measured from it (profiles/linux-*.yaml),
and the same programs with the same arguments on bare Bochs (GRUB boots
the kernel itself: tests/linux/bochs-bare.sh), side by side, from one run.

Each program prints one line "workload NAME: n=N mean=M p50=P p99=Q
ticks" (tests/linux/workloads.py parses it).  Ticks are TSC ticks:
under Bochs, retired instructions, so deterministic path lengths, not
cycles.  Bare Bochs's CPUID claims a 3.5 GHz TSC that counts
instructions; exitplan reports the rate it measured (about 10 MHz,
CPUID 15H/16H).  So that a 1 ms hrtimer period is the same number of
ticks on both, the bare kernel gets tsc_early_khz=BARE_TSC_KHZ; the
table shows the rate each Linux detected.  Never a pass/fail test.
"""
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import dispatchcmp
import table

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

def _load_linux_workloads():
    """tests/linux/workloads.py under its own name: tests/bench/workloads.py
    is `workloads` here (run_bench's, hv_job), and must stay so."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("linux_workloads",
                                                  REPO / "tests" / "linux" / "workloads.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


linux_workloads = _load_linux_workloads()

BARE = "bare Bochs"
# exitplan's CPUID 15H on Bochs says ~10.002 MHz (docs/LINUX.md); the bare
# kernel is told 10 MHz, which is what its 1 ms periods are made of.
BARE_TSC_KHZ = 10000
# The bare kernel idles with HLT, as under exitplan (whose CPUID hides
# MONITOR/MWAIT).  With Bochs's MWAIT a cross-CPU wake-up can wait for
# the next tick (docs/PLATFORM.md): ping-pong's round trip was one 4 ms
# jiffy, 39984 ticks p50, against 6540 with idle=halt.
BARE_EXTRA = f"tsc_early_khz={BARE_TSC_KHZ} idle=halt"


@dataclass(frozen=True)
class Workload:
    name: str           # the table's row
    prog: str           # exitplan.run=PROG
    args: str           # exitplan.args= ("" for the program's defaults)
    profile: str        # the profile it runs under in exitplan
    ncpu: int           # CPUs of the emulated machine (both settings)
    nvcpu: int          # vCPUs under exitplan (more than ncpu: scheduled)
    # Bare Bochs also on this many CPUs (overcommit: as many as the guest's
    # vCPUs, the machine Linux sees under exitplan); 0: only on ncpu.
    bare_also: int = 0

    def bare_ncpus(self) -> Tuple[int, ...]:
        return (self.ncpu,) + ((self.bare_also,) if self.bare_also else ())


# The same runs as tests/boot/test_linux.py.  Overcommit: 8 spinning
# threads; under exitplan 4 vCPUs on the 2 CPUs; bare on the same 2 CPUs
# and on 4 (what the guest sees: the price of overcommit itself).
WORKLOADS: Tuple[Workload, ...] = (
    Workload("hrtimer", "hrtimer", "", "linux-hrtimer", 2, 2),
    Workload("pipe ping-pong", "pingpong", "", "linux-pipe-pingpong", 2, 2),
    Workload("overcommit", "spinlock", "8,2000", "linux-overcommit", 2, 4, bare_also=4),
)
WHAT = {"hrtimer": "ticks between timerfd wake-ups (1 ms period, 50 periods)",
        "pingpong": "round trip of one byte through two pipes, CPUs 0 and 1 (200)",
        "spinlock": "ticks per lock acquisition (8 threads x 2000)"}

TSC_RE = re.compile(r"^tsc: Detected (\d+\.\d+) MHz (?:processor|TSC)\r?$", re.M)
EXITED_RE = re.compile(r"^linux-init: (\S+) exited with status (\d+)\r?$", re.M)


@dataclass
class Result:
    workload: Workload
    setting: str                       # BARE or the profile
    ncpu: int                          # CPUs of this run's machine
    status: str                        # ok | timeout | failed (status N) | incomplete | error: ...
    row: Optional[Dict[str, object]] = None   # n, mean, p50, p99
    tsc_mhz: Optional[str] = None             # what Linux detected
    exits: Dict[str, int] = field(default_factory=dict)   # the whole run, all vCPUs


def cmdline(base: str, w: Workload, bare: bool) -> str:
    c = f"{base} exitplan.run={w.prog}" + (f" exitplan.args={w.args}" if w.args else "")
    return c + (f" {BARE_EXTRA}" if bare else "")


def parse(w: Workload, setting: str, text: str, timed_out: bool = False,
          ncpu: int = 0) -> Result:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    r = Result(w, setting, ncpu or w.ncpu, "")
    rows = [x for x in linux_workloads.parse(text) if x["workload"] == w.prog]
    r.row = rows[-1] if rows else None
    tsc = TSC_RE.findall(text)
    r.tsc_mhz = tsc[-1] if tsc else None
    for doc in dispatchcmp.parse_stats_docs(text):
        for v in doc.get("vcpus", []):
            for reason, e in (v.get("reasons") or {}).items():
                r.exits[reason] = r.exits.get(reason, 0) + int(e.get("count", 0))
    ex = [int(s) for p, s in EXITED_RE.findall(text) if p == w.prog]
    r.status = ("timeout" if timed_out else
                "incomplete" if not ex or r.row is None else
                f"failed (status {ex[-1]})" if ex[-1] else "ok")
    return r


def slug(w: Workload) -> str:
    return w.prog if w.prog != "spinlock" else "overcommit"


def serial_path(out: Path, w: Workload, bare: bool, ncpu: int = 0) -> Path:
    """ncpu: a bare run's CPUs, when not w.ncpu (bare4: on 4)."""
    tag = w.profile if not bare else "bare" + (str(ncpu) if ncpu and ncpu != w.ncpu else "")
    return out / "linux" / f"{slug(w)}-{tag}.serial"


def _bare_job(root: Path, linux_dir: Path, ncpu: int, line: str, cpu: str, serial: Path,
              timeout: int):
    def job():
        try:
            p = subprocess.run([str(root / "tests" / "linux" / "bochs-bare.sh"), str(serial),
                                line, cpu, str(ncpu), str(timeout)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "LINUX_DIR": str(linux_dir)},
                               timeout=timeout + 120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"error: bochs-bare.sh: {e}", False
        if p.returncode not in (0, 124):
            return f"error: bochs-bare.sh failed ({p.returncode}): {p.stdout[-300:]}", False
        return serial.read_text(errors="replace") if serial.exists() else "", p.returncode == 124
    return job


def run_all(bootlib, root: Path, out: Path, elf_of: Callable[[str], Path], cpu: str, jobs: int,
            timeout: int) -> List[Result]:
    """Every workload under its profile (elf_of(profile)) and bare, @jobs at a time.
    The kernel and initramfs are the worktree's (REPO/build/linux, make linux-guest)."""
    import workloads as bench_workloads
    bootlib.make("linux-guest")
    linux_dir = REPO / "build" / "linux"
    mk = (REPO / "tests" / "linux" / "linux.mk").read_text()
    base = re.search(r"^LINUX_CMDLINE := (.*)$", mk, re.M).group(1).strip()
    todo, meta = [], []
    for w in WORKLOADS:
        serial = serial_path(out, w, False)
        serial.parent.mkdir(parents=True, exist_ok=True)
        iso = serial.with_suffix(".iso")
        p = subprocess.run([str(REPO / "tests" / "boot" / "mkiso.sh"), str(iso),
                            str(elf_of(w.profile)), str(linux_dir / "bzImage"),
                            f"vcpus={w.nvcpu}" if w.nvcpu != w.ncpu else "",
                            cmdline(base, w, False), str(linux_dir / "initramfs.cpio.gz")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode:
            raise bootlib.BootError(f"mkiso.sh: {p.stdout[-600:]}")
        todo.append(bench_workloads.hv_job(bootlib, iso, cpu, serial, timeout, w.ncpu))
        meta.append((w, w.profile, w.ncpu))
        for n in w.bare_ncpus():
            todo.append(_bare_job(REPO, linux_dir, n, cmdline(base, w, True), cpu,
                                  serial_path(out, w, True, n), timeout))
            meta.append((w, BARE, n))
    done = bootlib.run_parallel(todo, max_workers=jobs)
    return [Result(w, s, n, text) if text.startswith("error: ") else parse(w, s, text, t, n)
            for (w, s, n), (text, t) in zip(meta, done)]


def from_serial(out: Path) -> List[Result]:
    """Results recorded earlier under OUT/linux/."""
    res = []
    for w in WORKLOADS:
        for bare, n in [(False, w.ncpu)] + [(True, n) for n in w.bare_ncpus()]:
            p = serial_path(out, w, bare, n)
            if p.exists():
                res.append(parse(w, BARE if bare else w.profile, p.read_text(errors="replace"),
                                 ncpu=n))
    return res


def _cell(r: Optional[Result]) -> str:
    return table.cell(r, lambda r: f"{r.row['mean']} / {r.row['p50']} / {r.row['p99']}")


def render(results: List[Result]) -> List[str]:
    """The Linux section of results.md (its lines)."""
    if not results:
        return []
    by = {(r.workload.name, r.setting == BARE, r.ncpu): r for r in results}
    L = ["## Workloads: Linux programs, under exitplan and on bare Bochs (Bochs ticks)", "",
         "The project's kernel (docs/LINUX.md) and initramfs, /init running one program "
         "(tests/linux/ep-*.c, `exitplan.run=`), under exitplan with the profile measured "
         "from that program, and the same kernel, initramfs and command line booted by GRUB "
         f"on bare Bochs (tests/linux/bochs-bare.sh; plus {BARE_EXTRA}: a 1 ms period is as "
         "many ticks as under exitplan's CPUID 15H, and the idle is HLT, as exitplan's CPUID "
         "leaves it; Bochs's MWAIT can make a wake-up wait for the tick).  Cells: mean / "
         "p50 / p99 of the program's own line.  Bochs ticks are retired instructions (the "
         "emulated TSC advances one per instruction): deterministic path lengths, not "
         "cycles.", "",
         *table.head(["workload", "what", "profile", "CPUs (vCPUs)", "exitplan", "bare Bochs",
                      "exitplan - bare (mean)", "ratio (mean)"])]
    for w in WORKLOADS:
        hv = by.get((w.name, False, w.ncpu))
        for n in w.bare_ncpus():
            bare = by.get((w.name, True, n))
            if hv is None and bare is None:
                continue
            diff = ratio = ""
            if hv and bare and hv.status == "ok" and bare.status == "ok":
                a, b = hv.row["mean"], bare.row["mean"]
                diff, ratio = f"{a - b:+d}", (f"{a / b:.2f}" if b else "")
            cpus = f"{w.ncpu}" + (f" ({w.nvcpu})" if w.nvcpu != w.ncpu else "")
            if n != w.ncpu:
                cpus += f"; bare on {n}"
            L.append(table.row([w.name, WHAT[w.prog], f"`{w.profile}`", cpus, _cell(hv),
                                _cell(bare), diff, ratio]))
    L += ["", "TSC rate each Linux detected (MHz), and the exits of each exitplan run "
          "(boot included, all vCPUs; its statistics document):", ""]
    for r in results:
        if r.setting == BARE:
            on = f" on {r.ncpu} CPUs" if r.ncpu != r.workload.ncpu else ""
            L.append(f"- {r.workload.name}, bare{on}: tsc {r.tsc_mhz or '?'} MHz")
            continue
        L.append(f"- {r.workload.name}, `{r.setting}`: tsc {r.tsc_mhz or '?'} MHz; "
                 f"{sum(r.exits.values())} exits: {table.mix(r.exits, 6)}")
    L.append("")
    return L


def write_csv(results: List[Result], path: Path) -> None:
    table.write_csv(path, "workload,program,setting,ncpu,nvcpu,status,n,mean,p50,p99,tsc_mhz,exits",
                    [[r.workload.name, r.workload.prog, r.setting, r.ncpu,
                      r.workload.nvcpu if r.setting != BARE else r.ncpu, r.status,
                      *((r.row or {}).get(k, "") for k in ("n", "mean", "p50", "p99")),
                      r.tsc_mhz or "", sum(r.exits.values())] for r in results])


def main(argv=None) -> int:
    """The Linux workloads alone: python3 tests/bench/linux.py [--out DIR]."""
    import argparse
    sys.path.insert(0, str(REPO / "tests" / "boot"))
    import bootlib
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--out", type=Path, default=REPO / "build" / "bench")
    ap.add_argument("--cpu", default="corei7_skylake_x")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--from-serial", action="store_true", help="re-read OUT/linux/*.serial")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    results = (from_serial(out) if args.from_serial else
               run_all(bootlib, REPO, out, bootlib.build_hv, args.cpu, args.jobs, args.timeout))
    print("\n".join(render(results)))
    write_csv(results, out / "linux.csv")
    return 0 if results and all(r.status == "ok" for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
