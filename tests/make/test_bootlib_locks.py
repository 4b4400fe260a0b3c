# SPDX-License-Identifier: GPL-2.0-only
"""tests/boot/bootlib.py's emulator slots and make lock: `make test-boot`
runs modules in several pytest-xdist processes, each with run_parallel
threads, and still at most EMULATOR_SLOTS emulators may run at once (a
boot's timeout is wall-clock) and one make at a time.  Host only: the
"emulator" here is a sleep."""
import importlib.util
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def load_bootlib(monkeypatch, build: Path, slots: int):
    """A bootlib of its own, its locks under BUILD."""
    monkeypatch.setenv("EXITPLAN_BUILD", str(build))
    monkeypatch.setenv("EXITPLAN_BOOT_JOBS", str(slots))
    monkeypatch.syspath_prepend(str(REPO / "tests" / "boot"))
    spec = importlib.util.spec_from_file_location("bootlib_under_test",
                                                  REPO / "tests" / "boot" / "bootlib.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# A process that holds one slot for HOLD seconds and prints when it had it.
CHILD = """
import sys, time
sys.path.insert(0, {boot!r})
import importlib.util, os
os.environ["EXITPLAN_BUILD"] = {build!r}
os.environ["EXITPLAN_BOOT_JOBS"] = "{slots}"
spec = importlib.util.spec_from_file_location("b", {bootlib!r})
b = importlib.util.module_from_spec(spec); spec.loader.exec_module(b)
with b.emulator_slot():
    start = time.monotonic()
    time.sleep({hold})
    print(start, time.monotonic())
"""


def peak_inside(b, guard, jobs: int, hold: float) -> int:
    """How many of @jobs threads (bootlib's run_parallel) were inside
    @guard() at once at the most, each holding it @hold seconds."""
    inside, peak, lock = [0], [0], threading.Lock()

    def job():
        with guard():
            with lock:
                inside[0] += 1
                peak[0] = max(peak[0], inside[0])
            time.sleep(hold)
            with lock:
                inside[0] -= 1
        return True

    assert b.run_parallel([job] * jobs, max_workers=jobs) == [True] * jobs
    return peak[0]


def test_threads_never_hold_more_slots_than_there_are(monkeypatch, tmp_path):
    b = load_bootlib(monkeypatch, tmp_path, 2)
    assert b.EMULATOR_SLOTS == 2
    assert peak_inside(b, b.emulator_slot, 6, 0.3) == 2


def test_processes_share_the_slots(tmp_path):
    """Three processes, one slot: their holds never overlap."""
    src = CHILD.format(boot=str(REPO / "tests" / "boot"), build=str(tmp_path), slots=1,
                       bootlib=str(REPO / "tests" / "boot" / "bootlib.py"), hold=0.4)
    procs = [subprocess.Popen([sys.executable, "-c", src], stdout=subprocess.PIPE, text=True)
             for _ in range(3)]
    spans = sorted(tuple(map(float, p.communicate(timeout=60)[0].split())) for p in procs)
    assert all(p.returncode == 0 for p in procs)
    for (_, end), (start, _) in zip(spans, spans[1:]):
        assert start >= end


def test_timed_run_counts_the_run_not_the_wait(monkeypatch, tmp_path):
    b = load_bootlib(monkeypatch, tmp_path, 1)
    out = b.run_parallel([lambda: b.timed_run(["sleep", "0.3"]).returncode] * 3,
                         max_workers=3)
    assert out == [0, 0, 0]
    assert b.STATS["runs"] == 3
    # Three 0.3 s runs one after another: each counted once, the queue not.
    assert 0.85 < b.STATS["seconds"] < 1.5


def test_one_make_at_a_time(monkeypatch, tmp_path):
    b = load_bootlib(monkeypatch, tmp_path, 2)
    assert peak_inside(b, b._make_lock, 4, 0.1) == 1
