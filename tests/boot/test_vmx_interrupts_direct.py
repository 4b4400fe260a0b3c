# SPDX-License-Identifier: GPL-2.0-only
"""interrupts: direct (profile pipe-pingpong-direct): each vCPU alone on its
CPU takes that CPU's interrupts through its own IDT, HLT does not exit,
the hypervisor kicks with NMIs and its watchdog is the VMX-preemption
timer.

The ping-pong guest (tests/guest/pingpong) completes on 2 and 4 vCPUs with
no EXTERNAL_INTERRUPT, HLT or INTERRUPT_WINDOW exit left, only its ICR
writes (fast path, generated msr_io_fast.c) and the EOIs gone; the run's
end reaches the other player through a kick NMI (an EXCEPTION_NMI exit), and the hypervisor's report is the run's last
word.  The SMP guest (tests/guest/smp) passes every check under it on 2
vCPUs (x2APIC: logical IPIs are the hypervisor's to deliver there, Bochs
2.7's LDR bug, so kicks and posted vectors are exercised) and 4 (xAPIC,
ICR writes through the read-only APIC page), among them an NMI waking
`cli; hlt`, INIT and STARTUP of a running AP (kicks to a CPU waiting in
root operation).  An AP deaf to interrupts (APIC software-disabled) is
still stopped at the end (NMIs reach it).  Timing is printed, never
judged."""
import re

import pytest
import yaml

import bootlib

PROFILE = "pipe-pingpong-direct"
SKYLAKE = "corei7_skylake_x"
ROUNDS = 50
# name: (vCPUs, guest arguments)
PINGPONG = {
    "x2apic-2": (2, f"n={ROUNDS} x2apic"),
    "x2apic-4": (4, f"n={ROUNDS} x2apic"),
}
# A vCPU's event counters (arch/vmx/vmx_report.c), after its exit table.
EVENTS_RE = (r"^exitplan: events \(vCPU (\d+)\): (\d+) NMIs in root operation given to the "
             r"guest, (\d+) kicks taken in root operation, (\d+) interrupt-storm steps$")
EVENTS = ("nmis_in_root", "kicks_in_root", "storm_steps")
DOC_RE = re.compile(r"^# exitplan-stats-begin\n(.*?)^# exitplan-stats-end$", re.M | re.S)


def boot_cases(boot_out, guest_name, cases):
    """Boot @guest_name under PROFILE once per case {name: (vCPUs, guest arguments)}."""
    guest = bootlib.build_guest(guest_name)
    hv = bootlib.build_hv(PROFILE)
    out = boot_out / "vmx-interrupts-direct"
    jobs = []
    for name, (ncpu, args) in cases.items():
        iso = bootlib.build_iso(hv, guest, out / f"{name}.iso", guest_args=args)
        jobs.append(lambda i=iso, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, SKYLAKE, s, ncpu=n))
    return dict(zip(cases, bootlib.run_parallel(jobs, max_workers=2)))


def check_events(r, st, ncpu):
    """Every vCPU's events line is there and says what its document entry
    says.  How many kicks land while their CPU is in root operation is the
    emulator's timing: only that they are counted, as numbers."""
    lines = {int(m[0]): dict(zip(EVENTS, map(int, m[1:]))) for m in r.findall(EVENTS_RE)}
    assert sorted(lines) == list(range(ncpu)), r.describe()
    for v in st["vcpus"]:
        assert v["events"] == lines[v["id"]], (v["id"], v["events"], lines[v["id"]])


@pytest.fixture(scope="module")
def pingpong_runs(boot_out):
    return boot_cases(boot_out, "pingpong", PINGPONG)


@pytest.mark.parametrize("name", sorted(PINGPONG))
def test_pingpong_completes_without_interrupt_exits(pingpong_runs, name):
    r = pingpong_runs[name]
    ncpu, _ = PINGPONG[name]
    r.expect(r"^gate interrupts: direct: ")
    r.expect(r"^PASS: pingpong-ap-started$")
    r.expect(r"^PASS: pingpong-rounds$")
    m = r.expect(r"^pingpong: round trip ticks: mean (\d+) min (\d+) p50 (\d+) p99 (\d+) max (\d+)$")
    mean, lo, p50, p99, hi = (int(x) for x in m.groups())
    assert lo <= p50 <= p99 <= hi and lo <= mean <= hi, m.group(0)
    r.expect(r"^guest pingpong: 2 passed, 0 failed$")
    r.expect_clean_exit(1)
    # The hypervisor's report is the last word: no guest output after it.
    assert r.lines[-1] == "exitplan: exit status 1", r.describe()
    st = yaml.safe_load(DOC_RE.findall(r.serial)[0])["exitplan_stats"]
    assert st["profile"] == PROFILE
    assert len(st["vcpus"]) == ncpu
    rounds = ROUNDS + 20		# the guest's default warm-up
    for v in st["vcpus"]:
        reasons = v["reasons"] or {}	# the idle vCPUs wait for a STARTUP: no exit
        assert sum(e["count"] for e in reasons.values()) == v["exits"], v
        for gone in ("EXTERNAL_INTERRUPT", "HLT"):
            assert gone not in reasons, (gone, v)
        # The firmware's 8254 runs from the first entry, as on hardware
        # (emulated: vpit.c); one tick may come before vCPU 0 masks its
        # 8259s, and waits for its window.  None in the rounds.
        window = reasons.get("INTERRUPT_WINDOW", {}).get("count", 0)
        assert window <= (1 if v["id"] == 0 else 0), v
        # The EOI is the guest's own APIC's: no exit for it.
        assert 0x80b not in v.get("msr_write", {}), v
    # The two players send one ICR write per hop each; the idle vCPUs none.
    for v in st["vcpus"][:2]:
        assert v["msr_write"][0x830] >= rounds, v
    # The run's end reached the other player as a kick NMI.
    assert st["vcpus"][1]["reasons"].get("EXCEPTION_NMI", {}).get("count", 0) >= 1, st["vcpus"][1]
    check_events(r, st, ncpu)
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


# name: (vCPUs, guest arguments)
SMP = {
    "smp-2-x2apic": (2, "x2apic"),
    "smp-4": (4, ""),
    "smp-2-deaf": (2, "ap-deaf"),
}


@pytest.fixture(scope="module")
def smp_runs(boot_out):
    return boot_cases(boot_out, "smp", SMP)


@pytest.mark.parametrize("name", sorted(SMP))
def test_smp_guest_passes(smp_runs, name):
    r = smp_runs[name]
    ncpu, args = SMP[name]
    r.expect(r"^gate interrupts: direct: ")
    r.expect(r"^smp: %d CPUs in the MADT, fw_cfg says %d, %s mode$" %
             (ncpu, ncpu, "x2APIC" if "x2apic" in args else "xAPIC"))
    assert not r.find(r"^FAIL"), r.describe()
    assert len(r.findall(r"^PASS: ap-started$")) == ncpu - 1, r.describe()
    for check in ("ipi-physical-each-ap", "ipi-self", "ipi-all-excluding-self",
                  "ipi-all-including-self", "ipi-physical-broadcast", "ipi-logical",
                  "nmi-wakes-cli-hlt", "init-stops-running-ap", "init-sipi-restarts-ap",
                  "second-sipi-ignored", "sipi-to-absent-cpu-dropped", "ipi-after-restart"):
        r.expect(rf"^PASS: {check}$")
    if "deaf" in args:
        r.expect(r"^PASS: ap-deaf$")
    r.expect(r"^guest smp: \d+ passed, 0 failed$")
    r.expect(r"^exitplan: vCPU 0 ended the run$")
    ends = r.findall(r"^exitplan: vCPU (\d+): (\S+)(?: \(in HLT\))? when it stopped; (.*)$")
    assert [int(e[0]) for e in ends] == list(range(ncpu)), r.describe()
    assert all(e[2] == "stopped with the machine (vCPU 0 stopped it)" for e in ends[1:]), ends
    r.expect_clean_exit(1)
    assert r.lines[-1] == "exitplan: exit status 1", r.describe()
    st = yaml.safe_load(DOC_RE.findall(r.serial)[0])["exitplan_stats"]
    for v in st["vcpus"]:
        assert "EXTERNAL_INTERRUPT" not in (v["reasons"] or {}), v
    check_events(r, st, ncpu)
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())
