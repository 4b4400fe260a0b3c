# SPDX-License-Identifier: GPL-2.0-only
"""Helpers for exitplan's boot tests: build the hypervisor and an ISO,
boot it in Bochs or QEMU with a timeout, and hand back what it printed.

A run is judged by what the hypervisor printed, never by the emulator's
exit status (Bochs exits 1 on power-off and sometimes crashes afterwards).
The verdict (the exit-status line, a panic) is read only from the
hypervisor's own channel, port 0xE9 (Bochs's port_e9_hack on its stdout,
QEMU's debugcon file), which the guest cannot write: the guest owns COM1,
so a line on COM1 may be forged (docs/THREAT-MODEL.md).  `serial` is COM1,
where the guest's output and the hypervisor's are interleaved.

    hv = bootlib.build_hv("default")
    iso = bootlib.build_iso(hv, guest_elf, out_dir / "x.iso", guest_args="quick")
    r = bootlib.run_bochs(iso, "corei7_skylake_x", out_dir / "skx.serial")
    r.expect(r"^exitplan: guest exit status 0$")    # COM1
    r.expect_clean_exit(0)                          # the verdict, from port 0xE9

Independent runs can go in parallel (2 cores here): run_parallel() takes
a list of zero-argument callables and returns their results in order.
Whatever asks for them (run_parallel's threads, the pytest-xdist workers
`make test-boot` starts), at most EMULATOR_SLOTS emulators run at once,
and one `make` at a time: both are file locks under BUILD, so they hold
across processes.
"""
import concurrent.futures
import contextlib
import fcntl
import os
import re
import shlex
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

import e9filter

REPO = Path(__file__).resolve().parents[2]
BOOT_DIR = REPO / "tests" / "boot"
BUILD = Path(os.environ.get("EXITPLAN_BUILD", REPO / "build"))
if not BUILD.is_absolute():
    BUILD = REPO / BUILD
DEFAULT_CPU = os.environ.get("EXITPLAN_CPU", "corei7_skylake_x")
# Generous per-run limit: a boot to the first line takes 2 s; exit-heavy
# guests a few more.  A hang shows up as timed_out, not as a stuck suite.
BOOT_TIMEOUT = int(os.environ.get("EXITPLAN_BOOT_TIMEOUT", "120"))
# Extra arguments for every `make` call (e.g. HV_C_SRCS=... to build a
# subset while another part is being written).
MAKE_ARGS = shlex.split(os.environ.get("EXITPLAN_MAKE_ARGS", ""))
MAX_PARALLEL = int(os.environ.get("EXITPLAN_BOOT_JOBS", str(os.cpu_count() or 2)))
# Emulators at once, in every process of the suite: one per core, so that
# a boot's wall-clock timeout measures the boot, not a crowded machine.
EMULATOR_SLOTS = MAX_PARALLEL
LOCK_DIR = BUILD / "boot-locks"

# The last line of every complete run (runtime/init/main.c), and a panic, read
# from the hypervisor's channel only (BootResult.hv).
EXIT_STATUS_RE = re.compile(r"^exitplan: exit status (-?\d+)$", re.M)
PANIC_RE = re.compile(r"^exitplan: PANIC: .*$", re.M)
# Bochs's own lines on its stdout, around what port 0xE9 carries.
BOCHS_NOISE_RE = e9filter.NOISE


class BootError(Exception):
    pass


# Emulator runs of this process and their wall time, for the suite's
# budget (conftest.py prints them).
STATS = {"runs": 0, "seconds": 0.0}
_stats_lock = threading.Lock()


def _lock_file(name: str):
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    return open(LOCK_DIR / name, "a")


@contextlib.contextmanager
def _make_lock():
    """One make at a time in the suite: two makes of the same target in
    one tree would write the same files."""
    with _lock_file("make") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def emulator_slot():
    """Wait for one of EMULATOR_SLOTS slots (flock: per open file, so
    threads of one process exclude each other as processes do)."""
    while True:
        for i in range(EMULATOR_SLOTS):
            f = _lock_file(f"emulator-{i}")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                continue
            try:
                yield i
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
                f.close()
            return
        time.sleep(0.1)


def timed_run(cmd, **kwargs):
    """An emulator run, in a slot; its time (not the wait) counts."""
    with emulator_slot():
        start = time.monotonic()
        try:
            return subprocess.run(cmd, **kwargs)
        finally:
            with _stats_lock:
                STATS["runs"] += 1
                STATS["seconds"] += time.monotonic() - start


def make(*targets: str, **variables: str) -> None:
    """Run make in the repository with VAR=value arguments; raise with
    make's output when it fails."""
    # Spell BUILD as the Makefile does (relative) so that the targets in
    # the dependency files match those of a `make` from the shell.
    build = os.path.relpath(BUILD, REPO) if BUILD.is_relative_to(REPO) else str(BUILD)
    cmd = ["make", "--no-print-directory", "-s", f"-j{os.cpu_count() or 2}", f"BUILD={build}"]
    cmd += [f"{k}={v}" for k, v in variables.items()] + MAKE_ARGS + list(targets)
    with _make_lock():
        p = subprocess.run(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    if p.returncode != 0:
        raise BootError(f"{' '.join(cmd)} failed:\n{p.stdout[-6000:]}")


def build_hv(profile: str = "default") -> Path:
    """Build build/PROFILE/exitplan.elf (incrementally) and return it."""
    make("build", PROFILE=profile)
    elf = BUILD / profile / "exitplan.elf"
    if not elf.is_file():
        raise BootError(f"make build did not produce {elf}")
    return elf


def build_profile_variant(base: str, name: str, edits, out: Path, why: str) -> Path:
    """A test-only copy of profiles/BASE.yaml named NAME, with @edits
    applied, generated and built under @out (never into profiles/ or
    generated/); returns its exitplan.elf.

    @edits is a list of (pattern, replacement): each pattern is a
    multi-line regex that must match exactly once, so a change to the
    base profile's shape fails loudly instead of testing something else.
    """
    text = (REPO / "profiles" / f"{base}.yaml").read_text()
    edits = [(rf"^profile:[ \t]*{re.escape(base)}[ \t]*$", f"profile: {name}")] + list(edits)
    for pattern, replacement in edits:
        text, n = re.subn(pattern, replacement, text, count=1, flags=re.M)
        if n != 1:
            raise BootError(f"profiles/{base}.yaml changed shape: no match for {pattern!r}")
    (out / "profiles").mkdir(parents=True, exist_ok=True)
    yaml_path = out / "profiles" / f"{name}.yaml"
    yaml_path.write_text(f"# Test-only variant of profiles/{base}.yaml ({why}).\n" + text)
    gen_out = out / "gen"
    p = subprocess.run(["/usr/bin/python3", str(REPO / "gen" / "exitplan-gen"), "--root", str(REPO),
                        "--out", str(gen_out), "gen", "-q", str(yaml_path)],
                       cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise BootError(f"generating {yaml_path} failed:\n{p.stdout}")
    gdir = gen_out / name
    build = out / "build"
    common = " ".join(str(c) for c in sorted((REPO / "generated" / "common").glob("*.c")))
    srcs = " ".join(str(c) for c in sorted(gdir.glob("*.c")))
    with _make_lock():
        p = subprocess.run(["make", "--no-print-directory", "-s", f"-j{os.cpu_count() or 2}",
                            f"BUILD={build}", f"PROFILE={name}", f"GEN_COMMON_SRCS={common}",
                            f"GEN_PROFILE_SRCS={srcs}", f"GEN_PROFILE_DIR={gdir}", "build"],
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise BootError(f"building {name} failed:\n{p.stdout[-4000:]}")
    return build / name / "exitplan.elf"


def build_guest(name: str) -> Path:
    """Build build/guest/NAME.elf with tests/guest/guest.mk's rule."""
    elf = BUILD / "guest" / f"{name}.elf"
    make(os.path.relpath(elf, REPO) if elf.is_relative_to(REPO) else str(elf))
    if not elf.is_file():
        raise BootError(f"make did not produce {elf}")
    return elf


def build_iso(hv_elf: Path, guest_elf: Path, iso: Path, hv_args: str = "",
              guest_args: str = "") -> Path:
    """A GRUB ISO that multiboots hv_elf with guest_elf as its module.
    Rebuilt only when an input changed (tests/boot/mkiso.sh)."""
    iso = Path(iso)
    iso.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([str(BOOT_DIR / "mkiso.sh"), str(iso), str(hv_elf), str(guest_elf),
                        hv_args, guest_args],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise BootError(f"mkiso.sh failed:\n{p.stdout}")
    return iso


@dataclass
class BootResult:
    """What one boot printed.  `serial` is COM1 with CR LF turned into LF
    (the guest's output and the hypervisor's); `hv` is the hypervisor's
    channel, port 0xE9, which only the hypervisor can write."""
    emulator: str
    cpu: str
    serial_path: Path
    serial: str
    timed_out: bool
    log_path: Optional[Path] = None
    log: str = ""
    lines: List[str] = field(default_factory=list)
    hv_path: Optional[Path] = None
    hv: str = ""

    @property
    def exit_status(self) -> Optional[int]:
        """N from "exitplan: exit status N" on the hypervisor's channel,
        or None if the run never got there.  A guest printing that line on
        COM1 changes nothing."""
        m = EXIT_STATUS_RE.findall(self.hv)
        return int(m[-1]) if m else None

    @property
    def panicked(self) -> bool:
        return PANIC_RE.search(self.hv) is not None

    def vmx_failures(self) -> List[str]:
        """Bochs's explanation of failed VM entries and VMX instructions."""
        return [l for l in self.log.splitlines() if "VMENTER FAIL" in l or "VMFAIL" in l]

    def describe(self, tail: int = 40) -> str:
        """A summary for assertion messages: how the run ended, the last
        lines of the serial output, and anything Bochs complained about."""
        head = (f"{self.emulator} cpu={self.cpu} serial={self.serial_path}"
                f"{' log=' + str(self.log_path) if self.log_path else ''}"
                f"{' TIMED OUT' if self.timed_out else ''}")
        out = [head, "--- serial (last %d lines) ---" % tail] + self.lines[-tail:]
        out += ["--- hypervisor channel, port 0xE9 (last 5 lines) ---"] + self.hv.splitlines()[-5:]
        complaints = [l for l in self.log.splitlines()
                      if re.search(r"\d{11}[ep]\[|VMENTER FAIL|VMFAIL", l)
                      and "shutdown requested" not in l]    # the normal power-off
        if complaints:
            out += ["--- emulator errors ---"] + complaints[-20:]
        return "\n".join(out)

    def find(self, pattern: str, flags: int = re.M) -> Optional[re.Match]:
        return re.search(pattern, self.serial, flags)

    def findall(self, pattern: str, flags: int = re.M) -> list:
        return re.findall(pattern, self.serial, flags)

    def hv_region(self) -> Tuple[int, int]:
        """The hypervisor region [start, end) as the boot printed it (it
        moves itself to the top of RAM below 4 GiB: runtime/host/reloc.c)."""
        m = self.expect(r"^exitplan: hypervisor region \[([0-9a-f]+), ([0-9a-f]+)\)")
        return int(m.group(1), 16), int(m.group(2), 16)

    def expect(self, pattern: str, flags: int = re.M) -> re.Match:
        """The first match of a (multiline) regex, or AssertionError with
        the run's description."""
        m = self.find(pattern, flags)
        if not m:
            raise AssertionError(f"no match for {pattern!r}\n{self.describe()}")
        return m

    def expect_hv(self, pattern: str, flags: int = re.M) -> re.Match:
        """expect() on the hypervisor's channel: a line only it can have written."""
        m = re.search(pattern, self.hv, flags)
        if not m:
            raise AssertionError(f"no match for {pattern!r} on port 0xE9\n{self.describe()}")
        return m

    def expect_clean_exit(self, status: Optional[int] = None) -> int:
        """The run ended on its own with an exit-status line, no panic,
        (and with the given status); returns the status."""
        if self.timed_out:
            raise AssertionError(f"run timed out\n{self.describe()}")
        if self.panicked:
            raise AssertionError(f"hypervisor panicked\n{self.describe()}")
        st = self.exit_status
        if st is None:
            raise AssertionError(f"no exit-status line\n{self.describe()}")
        if status is not None and st != status:
            raise AssertionError(f"exit status {st}, expected {status}\n{self.describe()}")
        return st


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def hv_channel(emulator: str, path: Path) -> str:
    """What the hypervisor wrote to port 0xE9: QEMU's debugcon file as is;
    Bochs's stdout without Bochs's own lines."""
    text = _read(path).replace("\r\n", "\n").replace("\r", "\n")
    if emulator == "bochs":
        text = "".join(l for l in text.splitlines(keepends=True) if not BOCHS_NOISE_RE.match(l))
    return text


def _result(emulator: str, cpu: str, serial: Path, log: Optional[Path],
            timed_out: bool, hv_path: Path) -> BootResult:
    text = _read(serial).replace("\r\n", "\n").replace("\r", "\n")
    return BootResult(emulator=emulator, cpu=cpu, serial_path=serial, serial=text,
                      timed_out=timed_out, log_path=log,
                      log=_read(log) if log else "", lines=text.splitlines(),
                      hv_path=hv_path, hv=hv_channel(emulator, hv_path))


def _beside(serial: Path, suffix: str) -> Path:
    """SERIAL's sibling NAME.suffix for NAME.serial (the scripts' naming)."""
    stem = serial.name[:-len(".serial")] if serial.name.endswith(".serial") else serial.name
    return serial.with_name(stem + suffix)


def read_result(emulator: str, cpu: str, serial: Path, log: Optional[Path] = None,
                timed_out: bool = False) -> BootResult:
    """A BootResult from the files a run left (scripts/run-verdict.py
    judges `make run` with it): COM1 in SERIAL, the hypervisor's channel
    beside it (NAME.stdout from Bochs, NAME.e9 from QEMU)."""
    serial = Path(serial)
    return _result(emulator, cpu, serial, Path(log) if log else None, timed_out,
                   _beside(serial, ".stdout" if emulator == "bochs" else ".e9"))


def run_bochs(iso: Path, cpu: str = DEFAULT_CPU, serial: Optional[Path] = None,
              timeout: int = BOOT_TIMEOUT, ncpu: int = 1, megs: int = 0,
              env: Optional[Dict[str, str]] = None) -> BootResult:
    """Boot iso in Bochs with the given CPU model; COM1 to serial
    (default: beside the ISO), bochs.log beside it; megs: the RAM in MiB
    (run-bochs.sh's default if 0); env: more of run-bochs.sh's variables
    (RUN_BOCHS_RC, RUN_BOCHS_MAGIC_BREAK: tests/bench/trace_path.py)."""
    iso = Path(iso)
    serial = Path(serial) if serial else iso.with_name(f"{iso.stem}-{cpu}.serial")
    serial.parent.mkdir(parents=True, exist_ok=True)
    p = timed_run([str(BOOT_DIR / "run-bochs.sh"), str(iso), cpu, str(serial),
                str(timeout), str(ncpu)],
               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
               env=dict(os.environ, **(env or {}), **({"BOCHS_MEGS": str(megs)} if megs else {}))
               if megs or env else None)
    if p.returncode not in (0, 124):
        raise BootError(f"run-bochs.sh failed ({p.returncode}):\n{p.stdout}")
    log = serial.with_name(serial.name[:-len(".serial")] + ".bochs.log") \
        if serial.name.endswith(".serial") else Path(str(serial) + ".bochs.log")
    return _result("bochs", cpu, serial, log, p.returncode == 124, _beside(serial, ".stdout"))


def run_qemu(iso: Path, serial: Optional[Path] = None, timeout: int = BOOT_TIMEOUT,
             cpu: str = "qemu64", ncpu: int = 1) -> BootResult:
    """Boot iso in QEMU (TCG, no VT-x) with a QEMU CPU model."""
    iso = Path(iso)
    serial = Path(serial) if serial else iso.with_name(f"{iso.stem}-qemu.serial")
    env = dict(os.environ, QEMU_CPU=cpu, QEMU_SMP=str(ncpu))
    p = timed_run([str(BOOT_DIR / "run-qemu.sh"), str(iso), str(serial), str(timeout)],
               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    if p.returncode not in (0, 124):
        raise BootError(f"run-qemu.sh failed ({p.returncode}):\n{p.stdout}")
    return _result("qemu", cpu, serial, None, p.returncode == 124, _beside(serial, ".e9"))


def run_parallel(jobs: List[Callable[[], BootResult]],
                 max_workers: int = MAX_PARALLEL) -> List[BootResult]:
    """Run independent boots at the same time, results in job order.  The
    emulators are separate processes, so threads are enough."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max_workers) as pool:
        return [f.result() for f in [pool.submit(job) for job in jobs]]
