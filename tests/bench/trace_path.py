#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where one round trip's instructions go, function by function.

Boots the bench guest under a profile in Bochs with `trace=KIND`: the
guest executes Bochs's magic breakpoint (`xchg %bx,%bx`) just before
KIND's timed round trips, and Bochs's built-in debugger then traces the
next STEPS instructions, each with its address.  The hypervisor's are
named from the image's symbols (it runs relocated: its link base is
__image_start, its run base the start of the region it reports at boot);
the guest's are shown as GUEST.  Bochs's TSC counts retired instructions,
so these counts are the path's ticks, as make bench measures them.

    tests/bench/trace_path.py --profile default --kind intr-tsc-deadline-fire
    make trace-path PROFILE=default KIND=intr-tsc-deadline-fire

prints each run of consecutive instructions in one function, and the
totals per function; --listing prints every instruction.  A development
tool: its run enables the magic breakpoint, which no test does
(tests/boot/bochsrc.in).
"""
import argparse
import bisect
import collections
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "boot"))

# "(0).[91400618] [0x000000103bfb] 0008:0000000000103bfb (unk. ctxt): jmp .-269 ; e9f3feffff"
TRACE_RE = re.compile(r"^\(\d+\)\.\[(\d+)\] \[0x([0-9a-f]+)\] [0-9a-f]+:([0-9a-f]+) \([^)]*\): (.*?)\s*;")
# The hypervisor's own region, from its EPT line at boot.
REGION_RE = re.compile(r"hypervisor \[(0x[0-9a-f]+), (0x[0-9a-f]+)\)")


def symbols(elf: Path) -> Tuple[List[int], List[str], int]:
    """Function symbols of the image, sorted, and its link base."""
    out = subprocess.run(["nm", "-n", str(elf)], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    addrs, names, base = [], [], None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        if parts[2] == "__image_start":
            base = int(parts[0], 16)
        if parts[1] in "tTwW":
            addrs.append(int(parts[0], 16))
            names.append(parts[2])
    if base is None:
        raise SystemExit(f"{elf}: no __image_start symbol")
    return addrs, names, base


class Namer:
    """Names an address: a hypervisor function, or GUEST."""

    def __init__(self, addrs: List[int], names: List[str], link_base: int,
                 run_start: int, run_end: int):
        self.addrs, self.names = addrs, names
        self.offset = run_start - link_base
        self.start, self.end = run_start, run_end

    def __call__(self, linear: int) -> str:
        if not self.start <= linear < self.end:
            return "GUEST"
        i = bisect.bisect_right(self.addrs, linear - self.offset) - 1
        return self.names[i] if i >= 0 else "?"


def parse_trace(text: str) -> List[Tuple[int, str]]:
    """(linear address, instruction) of each traced instruction, in order."""
    return [(int(m.group(3), 16), m.group(4)) for m in map(TRACE_RE.match, text.splitlines())
            if m]


def runs(named: List[str]) -> List[Tuple[str, int]]:
    """Consecutive instructions in one function, collapsed: (name, count)."""
    out: List[Tuple[str, int]] = []
    for n in named:
        if out and out[-1][0] == n:
            out[-1] = (n, out[-1][1] + 1)
        else:
            out.append((n, 1))
    return out


def totals(named: List[str]) -> Dict[str, int]:
    return dict(collections.Counter(named).most_common())


def report(named: List[str]) -> str:
    lines = ["runs (instructions, function; GUEST is the guest's):"]
    lines += [f"{n:7d}  {name}" for name, n in runs(named)]
    hv = sum(1 for n in named if n != "GUEST")
    lines += ["", f"totals: {len(named)} instructions, {hv} in the hypervisor "
              f"(Bochs ticks = retired instructions)"]
    lines += [f"{n:7d}  {name}" for name, n in totals(named).items()]
    return "\n".join(lines)


def boot(profile: str, kind: str, steps: int, cpu: str, guest_args: str,
         out: Path) -> Tuple[Path, str, str]:
    """Build, boot with the trace on; the ELF, the serial and Bochs's stdout."""
    import bootlib
    hv = bootlib.build_hv(profile)
    guest = bootlib.build_guest("bench")
    iso = bootlib.build_iso(hv, guest, out / "trace.iso", "", f"trace={kind} {guest_args}".strip())
    rc = out / "trace.rc"
    rc.write_text(f"c\ntrace on\ns {steps}\nquit\n")
    r = bootlib.run_bochs(iso, cpu, out / "trace.serial", timeout=900,
                          env={"RUN_BOCHS_RC": str(rc), "RUN_BOCHS_MAGIC_BREAK": "1"})
    return hv, r.serial, (out / "trace.stdout").read_text(errors="replace")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="default")
    ap.add_argument("--kind", required=True, help="a bench guest kind, e.g. intr-tsc-deadline-fire")
    ap.add_argument("--steps", type=int, default=4000, help="instructions to trace")
    ap.add_argument("--cpu", default="corei7_skylake_x")
    ap.add_argument("--guest-args", default="iters=20 warmup=5")
    ap.add_argument("--out", type=Path, help="keep the run's files here")
    ap.add_argument("--listing", action="store_true", help="every instruction, named")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="trace-path."))
    out.mkdir(parents=True, exist_ok=True)
    elf, serial, stdout = boot(args.profile, args.kind, args.steps, args.cpu, args.guest_args, out)
    region = REGION_RE.search(serial)
    if not region:
        raise SystemExit(f"no hypervisor region in {out / 'trace.serial'}: did it boot?")
    trace = parse_trace(stdout)
    if not trace:
        raise SystemExit(f"no trace in {out / 'trace.stdout'}: is {args.kind!r} a kind the "
                         "bench guest times under this profile?")
    addrs, names, link = symbols(elf)
    name = Namer(addrs, names, link, int(region.group(1), 16), int(region.group(2), 16))
    named = [name(a) for a, _ in trace]
    if args.listing:
        for (a, insn), n in zip(trace, named):
            print(f"{n:32s} {a:#014x}  {insn}")
        print()
    print(f"trace-path: {args.kind} under {args.profile} on {args.cpu}, the first "
          f"{len(trace)} instructions after the mark ({out})")
    print(report(named))
    return 0


if __name__ == "__main__":
    sys.exit(main())
