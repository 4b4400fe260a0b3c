# SPDX-License-Identifier: GPL-2.0-only
"""An idle CPU halts (issue 11; arch/vmx/vmx_run.c vmx_cpu_idle(),
ap_park.c vmx_idle_*()).

When every vCPU on a CPU is blocked and none has a timer armed, the CPU
halts in root operation with interrupts off until vmm_kick()'s NMI,
instead of spinning; with a blocked vCPU's timer armed it halts until
the deadline, on the physical APIC's TSC-deadline timer (ap_park.c
vmx_idle_halt_until()), or a kick.  The scheduler's report says how
often each CPU did which:

    exitplan: scheduler: CPU 1 idle: 12 halts until a kick, 0 halts until a blocked vCPU's timer, 0 polls

The overcommit guest's sleeping lock (lock=sleep: waiters halt, the
unlocker wakes the next with an IPI) at 4 vCPUs on 2 CPUs leaves CPUs
idle: they must halt, and the guest must still complete, fair and
exclusive; so must the spinning lock.  3 vCPUs on 1 CPU: nobody else can
kick the CPU, it never halts idle until a kick.  The hrtimer guest (its
TSC-deadline timer, then HLT, 200 times) on vCPU 0 of 2 on 1 CPU: the
CPU halts until each deadline and never polls, and every timer
interrupt comes."""
import re

import pytest

import bootlib

ACQUISITIONS = 50
IDLE_RE = re.compile(r"^exitplan: scheduler: CPU (\d+) idle: (\d+) halts until a kick, "
                     r"(\d+) halts until a blocked vCPU's timer, (\d+) polls$", re.M)
# name: (CPUs, vCPUs, guest arguments)
RUNS = {
    "sleep-4on2": (2, 4, f"k={ACQUISITIONS} lock=sleep"),
    "spin-4on2": (2, 4, f"k={ACQUISITIONS}"),
    "sleep-3on1": (1, 3, f"k={ACQUISITIONS} lock=sleep"),
    "hrtimer-2on1": (1, 2, "count=200"),
}
GUEST = {"hrtimer-2on1": "hrtimer"}


@pytest.fixture(scope="module")
def runs(boot_out):
    guests = {g: bootlib.build_guest(g) for g in {"overcommit", *GUEST.values()}}
    hv = bootlib.build_hv("overcommit")
    out = boot_out / "vmx-sched-idle"
    jobs = []
    for name, (ncpu, nvcpu, args) in RUNS.items():
        iso = bootlib.build_iso(hv, guests[GUEST.get(name, "overcommit")], out / f"{name}.iso",
                                hv_args=f"vcpus={nvcpu}", guest_args=args)
        jobs.append(lambda i=iso, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, "corei7_skylake_x", s, ncpu=n))
    return dict(zip(RUNS, bootlib.run_parallel(jobs, max_workers=2)))


def idle_of(r):
    return [tuple(map(int, m)) for m in IDLE_RE.findall(r.serial)]


@pytest.mark.parametrize("name", [n for n in RUNS if n not in GUEST])
def test_guest_completes(runs, name):
    r = runs[name]
    _, nvcpu, _ = RUNS[name]
    r.expect(r"^PASS: mutual-exclusion$")
    assert len(r.findall(r"^PASS: vcpu-got-its-share$")) == nvcpu, r.describe()
    assert not r.find(r"^FAIL"), r.describe()
    r.expect_clean_exit(1)


def test_idle_cpus_halt(runs):
    r = runs["sleep-4on2"]
    idle = idle_of(r)
    assert [c[0] for c in idle] == [0, 1], r.describe()
    assert sum(c[1] for c in idle) > 0, idle


def test_one_cpu_never_halts_idle(runs):
    idle = idle_of(runs["sleep-3on1"])
    assert [c[0] for c in idle] == [0], idle
    assert idle[0][1] == 0, idle


def test_idle_cpu_halts_until_a_blocked_vcpus_timer(runs):
    """vCPU 0 waits for its TSC-deadline timer in HLT, vCPU 1 for a STARTUP
    that never comes: the CPU is idle with a timer armed, and halts until
    its deadline instead of polling (a kick could not come: one CPU)."""
    r = runs["hrtimer-2on1"]
    r.expect(r"^guest hrtimer: 2 passed, 0 failed$")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect_clean_exit(1)
    idle = idle_of(r)
    assert [c[0] for c in idle] == [0], r.describe()
    _, kick_halts, timer_halts, polls = idle[0]
    assert timer_halts >= 100 and polls == 0 and kick_halts == 0, idle
