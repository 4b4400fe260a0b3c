#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The verdict line that ends `make run`: how the run ended, in words.

    run-verdict.py --serial FILE --emulator bochs|qemu --cpu MODEL
                   [--timed-out] [--timeout SECONDS]

Reads the serial log through tests/boot/bootlib.py (the boot tests'
reading of a run, so both judge a run alike), writes the statistics
document, when the run printed one, beside the log as NAME.stats.yaml,
and prints one line:

    run: PASS: guest handlers: 141 passed, 0 failed; exit status 1 = ...; serial ...

PASS means the guest reported success (isa-debug-exit code 0, or a
SHUTDOWN hypercall / power-off with status 0).  Exits 0 on PASS, else 1.
"""
import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "boot"))
import bootlib  # noqa: E402

# runtime/vm/vmm.h: vmm_run()'s negative results.
VMM_RESULTS = {
    -1: "exitplan refused to run (no VT-x, or the profile cannot run on this CPU)",
    -2: "exitplan's setup failed before the guest ran",
    -3: "the guest was stopped by exitplan",
}
STATS_BEGIN = "# exitplan-stats-begin"
STATS_END = "# exitplan-stats-end"
# The test guests' summary (tests/guest/lib/main.c), and kvm-unit-tests'.
GUEST_SUMMARY_RE = re.compile(r"^guest \S+: \d+ passed, \d+ failed$|^SUMMARY: .*$", re.M)


def meaning(status):
    """(passed, what the exit status means)."""
    if status in VMM_RESULTS:
        return False, VMM_RESULTS[status]
    if status < 0:
        return False, "an exit status exitplan does not define"
    if status & 1:
        # isa-debug-exit: the guest wrote code to port 0xf4; (code << 1) | 1.
        code = status >> 1
        return code == 0, (f"the guest's isa-debug-exit code {code}"
                           f" ({'success' if code == 0 else 'failure'})")
    return status == 0, (f"the guest stopped with status {status} by SHUTDOWN hypercall or"
                         f" power-off ({'success' if status == 0 else 'failure'})")


def stats_document(serial: str):
    """The statistics document(s) between the marker lines, or None."""
    docs, inside = [], None
    for line in serial.splitlines():
        if line.strip() == STATS_BEGIN:
            inside = [line]
        elif inside is not None:
            inside.append(line)
            if line.strip() == STATS_END:
                docs.append("\n".join(inside) + "\n")
                inside = None
    return "".join(docs) if docs else None


def detail(r: "bootlib.BootResult", pattern: str):
    """The last match on the hypervisor's channel (port 0xE9): a line on
    COM1 may be the guest's forgery."""
    m = re.findall(pattern, r.hv, re.M)
    return m[-1].strip() if m else None


def verdict(r: "bootlib.BootResult", timeout=None, stats_path=None):
    """(passed, the verdict line) for one run."""
    parts = []
    summary = GUEST_SUMMARY_RE.findall(r.serial)
    if summary:
        parts.append(summary[-1])
    status = r.exit_status
    if r.timed_out:
        ok = False
        parts.append(f"TIMED OUT after {timeout} s" if timeout else "TIMED OUT")
    elif r.panicked:
        ok = False
        parts.append(bootlib.PANIC_RE.findall(r.hv)[-1])
    elif status is None:
        ok = False
        parts.append("the run ended without exitplan's exit-status line")
    else:
        ok, what = meaning(status)
        why = None
        if status == -3:
            why = detail(r, r"^exitplan: guest stopped: (.*)$")
        elif status == -1:
            why = detail(r, r"^exitplan: (profile '.*' refused: .*|VT-x not available: .*)$")
        parts.append(f"exit status {status} = {what}" + (f": {why}" if why else ""))
    parts.append(f"serial {r.serial_path}")
    if stats_path:
        parts.append(f"statistics {stats_path}")
    return ok, f"run: {'PASS' if ok else 'FAIL'}: " + "; ".join(parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--serial", required=True, type=Path)
    ap.add_argument("--emulator", default="bochs")
    ap.add_argument("--cpu", default="")
    ap.add_argument("--timed-out", action="store_true")
    ap.add_argument("--timeout", type=int)
    args = ap.parse_args(argv)

    log = None
    if args.emulator == "bochs" and args.serial.name.endswith(".serial"):
        log = args.serial.with_name(args.serial.name[:-len(".serial")] + ".bochs.log")
    r = bootlib.read_result(args.emulator, args.cpu, args.serial, log, args.timed_out)
    stats_path = None
    doc = stats_document(r.serial)
    base = args.serial.with_suffix("") if args.serial.suffix == ".serial" else args.serial
    stats_file = base.with_name(base.name + ".stats.yaml")
    if doc:
        stats_file.write_text(doc)
        stats_path = stats_file
    elif stats_file.exists():
        stats_file.unlink()	# an earlier run's, not this one's
    ok, line = verdict(r, args.timeout, stats_path)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
