# SPDX-License-Identifier: GPL-2.0-only
"""The virtual local APIC (`apic: virtual`, profile apic-virtual):
runtime/devices/vlapic.c attached by arch/vmx/vlapic_exits.c.

The guests that use the APIC pass with every APIC access emulated: the
SMP guest (every IPI shape, NMI, INIT, SIPI) on 1 and 2 vCPUs in xAPIC
and x2APIC mode, the ping-pong guest (fixed IPIs and HLT wake-ups) in
both modes, the hrtimer guest (the TSC-deadline timer, now the model's,
on the VMX-preemption timer), the handler checks and the isolation
guest's loads of xAPIC page bytes no register holds (they read 0).  Each run prints
the gate line, and its statistics show the APIC's accesses exiting: the
xAPIC page's as EPT violations (it is not mapped), the x2APIC
registers' as MSR exits.  One boot per case, two at a time."""
import re

import pytest
import yaml

import bootlib

PROFILE = "apic-virtual"
SKYLAKE = "corei7_skylake_x"
GATE = (r"^gate apic: virtual: a virtual local APIC per vCPU; x2APIC MSRs and the xAPIC page "
        r"at 0xfee00000 emulated, its timer on the VMX-preemption timer \(preemption_timer\)$")
DOC_RE = re.compile(r"^# exitplan-stats-begin\n(.*?)^# exitplan-stats-end$", re.M | re.S)

# name: (guest, vCPUs, guest arguments, the guest's verdict line)
RUNS = {
    "smp-1": ("smp", 1, "", r"^guest smp: \d+ passed, 0 failed$"),
    "smp-2-xapic": ("smp", 2, "", r"^guest smp: \d+ passed, 0 failed$"),
    "smp-2-x2apic": ("smp", 2, "x2apic", r"^guest smp: \d+ passed, 0 failed$"),
    "pingpong-xapic": ("pingpong", 2, "n=50", r"^guest pingpong: 2 passed, 0 failed$"),
    "pingpong-x2apic": ("pingpong", 2, "n=50 x2apic", r"^guest pingpong: 2 passed, 0 failed$"),
    "hrtimer": ("hrtimer", 1, "count=200", r"^guest hrtimer: 2 passed, 0 failed$"),
    "handlers": ("handlers", 1, "", r"^guest handlers: \d+ passed, 0 failed$"),
    # xAPIC page bytes no register holds read 0 (test_vmx_isolation_mmio.py's attack).
    "apic-unaligned": ("isolation", 1, "attack=apic-unaligned",
                       r"^guest isolation: 2 passed, 0 failed$"),
}


@pytest.fixture(scope="module")
def runs(boot_out):
    hv = bootlib.build_hv(PROFILE)
    guests = {g: bootlib.build_guest(g) for g, _, _, _ in RUNS.values()}
    out = boot_out / "vmx-vlapic"
    jobs = []
    for name, (guest, ncpu, args, _) in RUNS.items():
        iso = bootlib.build_iso(hv, guests[guest], out / f"{name}.iso", guest_args=args)
        jobs.append(lambda i=iso, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, SKYLAKE, s, ncpu=n))
    return dict(zip(RUNS, bootlib.run_parallel(jobs, max_workers=2)))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_guest_passes_on_virtual_apic(runs, name):
    r = runs[name]
    guest, ncpu, args, verdict = RUNS[name]
    r.expect(GATE)
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(verdict)
    r.expect_clean_exit(1)
    st = yaml.safe_load(DOC_RE.findall(r.serial)[0])["exitplan_stats"]
    assert st["profile"] == PROFILE
    assert len(st["vcpus"]) == ncpu
    reasons = {}
    for v in st["vcpus"]:
        assert sum(e["count"] for e in v["reasons"].values()) == v["exits"], v
        for k, e in v["reasons"].items():
            reasons[k] = reasons.get(k, 0) + e["count"]
    if "x2apic" in args:
        # The registers are MSRs: each EOI at least is a WRMSR exit.
        assert reasons.get("MSR_WRITE", 0) > 0, reasons
    elif guest in ("smp", "pingpong", "hrtimer"):
        # The xAPIC page is not mapped: every register access is an EPT violation.
        assert reasons.get("EPT_VIOLATION", 0) > 0, reasons
    if guest == "hrtimer":
        # The model's TSC-deadline timer fires on the VMX-preemption timer.
        assert reasons.get("PREEMPTION_TIMER", 0) >= 200, reasons
