# SPDX-License-Identifier: GPL-2.0-only
"""The overcommit guest (tests/guest/overcommit): every vCPU spins with
PAUSE on one ticket lock, k acquisitions each.

One vCPU per CPU: 2 vCPUs on 2 CPUs with PAUSE-loop exiting
(corei7_skylake_x) and with the fallback to plain PAUSE exiting
(corei7_sandy_bridge_2600k has no PLE), both under the default profile,
whose pause gate falls back, and under the overcommit profile, which
requires PLE.

More vCPUs than CPUs (issue 11; arch/vmx/vcpu_switch.c, runtime/vm/sched.c):
4 vCPUs on 2 CPUs and 3 on 1 under the overcommit profile (apic:
virtual, PAUSE-loop exiting), and 4 on 2 under apic-virtual on
corei7_sandy_bridge_2600k, which falls back to plain PAUSE exiting (the
scheduler yields after pause_yield_after of them).  The guest must see
the vCPU count in its MADT; every vCPU must finish its share (none
starved); the scheduler's report must add up (each CPU's spin yields are
its vCPUs'); the SMP guest's checks (IPIs of every shape, NMI, INIT and
STARTUP, the virtual APIC's timer) must pass on 4 vCPUs on 2 CPUs and 3
on 1.  A profile without apic: virtual is refused more vCPUs than CPUs.
The sleeping lock (lock=sleep: waiters halt, the unlocker wakes the next
one with an IPI) at 4 on 2: exclusive and fair too, every vCPU blocks on
HLT and is woken by the virtual APIC's IPIs.

Checked too: the guest's mutual exclusion, the line naming the PAUSE
mode the boot got (the gate's, or without a gate exitplan's own), and,
with plain PAUSE exiting, that every vCPU's spinning shows up as PAUSE
exits of its own in the statistics.  Ticks per acquisition are printed,
never judged."""
import re

import pytest
import yaml

import bootlib

ACQUISITIONS = 50
PLE_LINE = "exitplan: pause: PAUSE-loop exiting (the profile's only choice)"
# name: (profile, CPU model, CPUs, vCPUs, the line saying which PAUSE handling the boot got)
RUNS = {
    "ple-2": ("default", "corei7_skylake_x", 2, 2,
              "gate pause: PAUSE-loop exiting (pause_loop_exiting)"),
    "pause-exiting-2": ("default", "corei7_sandy_bridge_2600k", 2, 2,
                        "gate pause: plain PAUSE exiting (no pause_loop_exiting)"),
    # PLE required, no gate: the boot says so all the same.
    "overcommit-ple-2": ("overcommit", "corei7_skylake_x", 2, 2, PLE_LINE),
    # Several vCPUs per CPU.
    "overcommit-4on2": ("overcommit", "corei7_skylake_x", 2, 4, PLE_LINE),
    "overcommit-3on1": ("overcommit", "corei7_skylake_x", 1, 3, PLE_LINE),
    "pause-exiting-4on2": ("apic-virtual", "corei7_sandy_bridge_2600k", 2, 4,
                           "gate pause: plain PAUSE exiting (no pause_loop_exiting)"),
    "sleep-4on2": ("overcommit", "corei7_skylake_x", 2, 4, PLE_LINE),
}
# The guest's lock option for a run (default: spinning).
LOCK = {"sleep-4on2": "sleep"}
SHARED = [n for n, r in RUNS.items() if r[3] > r[2]]
# The SMP guest with vCPUs sharing CPUs: name: (CPUs, vCPUs, guest arguments).
SMP_RUNS = {
    "smp-4on2": (2, 4, ""),
    "smp-3on1-x2apic": (1, 3, "x2apic"),
}
DOC_RE = re.compile(r"^# exitplan-stats-begin\n(.*?)^# exitplan-stats-end$", re.M | re.S)


def hv_args(ncpu, nvcpu):
    return f"vcpus={nvcpu}" if nvcpu != ncpu else ""


@pytest.fixture(scope="module")
def runs(hv_elf, boot_out):
    guest = bootlib.build_guest("overcommit")
    smp = bootlib.build_guest("smp")
    out = boot_out / "vmx-overcommit"
    jobs = []
    for name, (profile, cpu, ncpu, nvcpu, _) in RUNS.items():
        elf = hv_elf if profile == "default" else bootlib.build_hv(profile)
        iso = bootlib.build_iso(elf, guest, out / f"{name}.iso", hv_args=hv_args(ncpu, nvcpu),
                                guest_args=f"k={ACQUISITIONS}" +
                                (f" lock={LOCK[name]}" if name in LOCK else ""))
        jobs.append(lambda i=iso, c=cpu, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, c, s, ncpu=n))
    for name, (ncpu, nvcpu, args) in SMP_RUNS.items():
        iso = bootlib.build_iso(bootlib.build_hv("overcommit"), smp, out / f"{name}.iso",
                                hv_args=hv_args(ncpu, nvcpu), guest_args=args)
        jobs.append(lambda i=iso, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, "corei7_skylake_x", s, ncpu=n))
    # A profile with the physical APIC (default: passthrough) cannot share a CPU.
    iso = bootlib.build_iso(hv_elf, guest, out / "refused.iso", hv_args="vcpus=2")
    jobs.append(lambda i=iso, s=out / "refused.serial":
                bootlib.run_bochs(i, "corei7_skylake_x", s, ncpu=1))
    names = list(RUNS) + list(SMP_RUNS) + ["refused"]
    return dict(zip(names, bootlib.run_parallel(jobs, max_workers=2)))


@pytest.mark.parametrize("name", RUNS)
def test_lock_is_exclusive_and_fair(runs, name):
    r = runs[name]
    _, _, ncpu, nvcpu, gate = RUNS[name]
    r.expect(r"^%s$" % re.escape(gate))
    lock = "sleeping" if LOCK.get(name) == "sleep" else "spinning"
    r.expect(r"^overcommit: %d CPUs in the MADT, %d acquisitions each, %s lock$"
             % (nvcpu, ACQUISITIONS, lock))
    r.expect(r"^PASS: all-vcpus-arrived$")
    r.expect(r"^PASS: mutual-exclusion$")
    assert len(r.findall(r"^PASS: vcpu-got-its-share$")) == nvcpu, r.describe()
    assert not r.find(r"^FAIL"), r.describe()
    for v in range(nvcpu):
        r.expect(r"^overcommit: vCPU %d: %d acquisitions \(\d+ at half time\)" % (v, ACQUISITIONS))
    r.expect(r"^overcommit: %d vCPUs x %d acquisitions: \d+ ticks, \d+ ticks per acquisition$"
             % (nvcpu, ACQUISITIONS))
    r.expect_clean_exit(1)


def test_sleeping_lock_blocks_and_wakes(runs):
    """lock=sleep: the waiters halt (every vCPU blocks on HLT and gives up
    its CPU) and the unlockers' IPIs wake them."""
    r = runs["sleep-4on2"]
    m = r.expect(r"^overcommit: sleeping lock: (\d+) wake-up IPIs$")
    assert int(m.group(1)) > 0, r.describe()
    vcpus = [tuple(map(int, v)) for v in SCHED_VCPU_RE.findall(r.serial)]
    assert len(vcpus) == 4 and all(v[4] > 0 for v in vcpus), vcpus
    # A waiter woken while its CPU runs a sibling takes the CPU (wakeup preemption, sched.h).
    wakes = [int(n) for n in WAKE_PREEMPT_RE.findall(r.serial)]
    assert len(wakes) == 2 and sum(wakes) > 0, r.describe()


def stats_of(r):
    docs = DOC_RE.findall(r.serial)
    assert len(docs) == 1, r.describe()
    return yaml.safe_load(docs[0])["exitplan_stats"]


def test_pause_exits_are_each_vcpus_own(runs):
    """With plain PAUSE exiting every spinning vCPU exits on PAUSE, and its
    statistics section says so; the counts add up per vCPU."""
    for name in ("pause-exiting-2", "pause-exiting-4on2"):
        r = runs[name]
        st = stats_of(r)
        assert [v["id"] for v in st["vcpus"]] == list(range(RUNS[name][3])), st["vcpus"]
        for v in st["vcpus"]:
            assert sum(e["count"] for e in v["reasons"].values()) == v["exits"], v
            assert v["reasons"].get("PAUSE_INSTRUCTION", {}).get("count", 0) > 0, v


SCHED_VCPU_RE = re.compile(r"^exitplan: scheduler: vCPU (\d+) on CPU (\d+): (\d+) turns, "
                           r"(\d+) preemptions, (\d+) blocks, (\d+) spin yields$", re.M)
WAKE_PREEMPT_RE = re.compile(r"^exitplan: scheduler: CPU \d+: (\d+) wakeup preemptions$", re.M)
SCHED_CPU_RE = re.compile(r"^exitplan: scheduler: CPU (\d+): (\d+) VMCS switches, "
                          r"(\d+) PAUSE-loop yields, (\d+) plain-PAUSE yields$", re.M)


@pytest.mark.parametrize("name", SHARED)
def test_scheduler_shares_the_cpus(runs, name):
    """vCPU i lives on CPU i mod p; every vCPU got turns; each CPU switched
    VMCSs and its spin yields are its vCPUs' (PAUSE-loop yields under PLE,
    plain-PAUSE yields without); the statistics add up per vCPU."""
    r = runs[name]
    _, _, ncpu, nvcpu, gate = RUNS[name]
    r.expect(r"^exitplan: %d vCPUs: vCPU 0 at the multiboot entry, %d waiting for STARTUP "
             r"\(scheduled\)$" % (nvcpu, nvcpu - 1))
    vcpus = [tuple(map(int, m)) for m in SCHED_VCPU_RE.findall(r.serial)]
    cpus = [tuple(map(int, m)) for m in SCHED_CPU_RE.findall(r.serial)]
    assert [(v[0], v[1]) for v in vcpus] == [(i, i % ncpu) for i in range(nvcpu)], r.describe()
    assert [c[0] for c in cpus] == list(range(ncpu)), r.describe()
    ple = "PAUSE-loop" in gate
    for cpu, switches, ple_yields, pause_yields in cpus:
        mine = [v for v in vcpus if v[1] == cpu]
        assert switches > 0, r.describe()
        assert all(v[2] > 0 for v in mine), mine
        assert sum(v[5] for v in mine) == ple_yields + pause_yields, (mine, cpus)
        assert (pause_yields if ple else ple_yields) == 0, cpus
    st = stats_of(r)
    assert [v["id"] for v in st["vcpus"]] == list(range(nvcpu)), st["vcpus"]
    for v in st["vcpus"]:
        assert sum(e["count"] for e in v["reasons"].values()) == v["exits"], v


@pytest.mark.parametrize("name", SMP_RUNS)
def test_smp_guest_on_shared_cpus(runs, name):
    """The SMP guest's checks with vCPUs sharing CPUs: its MADT and fw_cfg
    say the vCPU count, each AP its own APIC ID (CPUID too), IPIs of every
    shape wake halted vCPUs wherever they are, each keeps its debug
    registers and unswitched MSRs."""
    r = runs[name]
    ncpu, nvcpu, _ = SMP_RUNS[name]
    r.expect(r"^smp: %d CPUs in the MADT, fw_cfg says %d" % (nvcpu, nvcpu))
    r.expect(r"^PASS: madt-matches-fw_cfg$")
    assert len(r.findall(r"^PASS: ap-apic-id$")) == nvcpu - 1, r.describe()
    # DR0-DR3, DR6 and the executed MSRs are each vCPU's own (vcpu_switch.c).
    assert len(r.findall(r"^PASS: cpu-state-kept$")) == nvcpu, r.describe()
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(r"^guest smp: \d+ passed, 0 failed$")
    r.expect_clean_exit(1)


def test_more_vcpus_than_cpus_needs_a_virtual_apic(runs):
    r = runs["refused"]
    r.expect(r"^exitplan: vcpus=2 on 1 CPU needs `apic: virtual` .*profile 'default' has "
             r"apic: passthrough: refusing$")
