# SPDX-License-Identifier: GPL-2.0-only
"""SMP guests: one vCPU per CPU (runtime/vm/vm.c, arch/vmx/apic.c).

The SMP guest (tests/guest/smp) starts its APs with INIT-SIPI-SIPI, runs
the per-CPU checks on each, and checks IPIs of every shape, NMI, INIT of
a running AP, a second SIPI and a SIPI to nobody; here on 2 and 4 vCPUs,
on corei7_skylake_x (xAPIC and x2APIC) and corei7_sandy_bridge_2600k
(no x2APIC).  Each run ends with every vCPU's state and statistics: the
statistics document has one section per vCPU whose counts add up.

The ping-pong guest (tests/guest/pingpong) bounces a token between two
vCPUs, each sending a fixed IPI and halting until the other's wakes it,
to completion under both `apic:` choices: passthrough (profile default)
and intercept-icr (profile pipe-pingpong).  Timing is printed, never
judged.

The ICR's dangerous delivery modes never reach the hardware (issue 7):
an SMI IPI is dropped and reported, an NMI to itself arrives as a virtual
NMI, a byte write to the APIC page and a move of the APIC window are
refused, and an INIT to itself on one vCPU stops the machine with a
report instead of resetting the CPU after VMXOFF.

A LOCKed read-modify-write of the I/O APIC is atomic against the other
vCPUs (arch/vmx/mmio.c's device lock): with ioapic-rmw every CPU adds
to one redirection entry at once and no add is lost."""
import re

import pytest
import yaml

import bootlib

SKYLAKE = "corei7_skylake_x"
SANDY = "corei7_sandy_bridge_2600k"

# name: (CPU model, vCPUs, guest arguments)
RUNS = {
    "skylake-2": (SKYLAKE, 2, ""),
    # ioapic-rmw: every CPU LOCK ADDs to one I/O APIC entry at once; none is lost.
    "skylake-4-x2apic": (SKYLAKE, 4, "x2apic ioapic-rmw"),
    "sandy-2-each": (SANDY, 2, "start=each ioapic-rmw"),
    "sandy-4": (SANDY, 4, ""),
    # The last AP ends deaf to kicks (APIC off): the preemption-timer
    # watchdog still takes the stop to it.
    "skylake-2-deaf": (SKYLAKE, 2, "ap-deaf"),
    "skylake-1": (SKYLAKE, 1, ""),
    "init-self": (SKYLAKE, 1, "init-self"),
}
SMP_RUNS = [n for n, (_, ncpu, _) in RUNS.items() if ncpu > 1]
PINGPONG_ROUNDS = 100
# name: (profile, CPU model, guest arguments)
PINGPONG = {
    "passthrough-xapic": ("default", SKYLAKE, f"n={PINGPONG_ROUNDS}"),
    "passthrough-sandy": ("default", SANDY, f"n={PINGPONG_ROUNDS} shape=logical"),
    "intercept-x2apic": ("pipe-pingpong", SKYLAKE, f"n={PINGPONG_ROUNDS} x2apic"),
    "intercept-all-but-self": ("pipe-pingpong", SKYLAKE, f"n={PINGPONG_ROUNDS} shape=all-but-self"),
    "intercept-spin": ("pipe-pingpong", SKYLAKE, f"n={PINGPONG_ROUNDS} spin"),
}
DOC_RE = re.compile(r"^# exitplan-stats-begin\n(.*?)^# exitplan-stats-end$", re.M | re.S)


@pytest.fixture(scope="module")
def smp_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("smp")
    out = boot_out / "vmx-smp"
    jobs = []
    for name, (cpu, ncpu, args) in RUNS.items():
        iso = bootlib.build_iso(hv_elf, guest, out / f"{name}.iso", guest_args=args)
        jobs.append(lambda i=iso, c=cpu, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, c, s, ncpu=n))
    return dict(zip(RUNS, bootlib.run_parallel(jobs, max_workers=2)))


@pytest.mark.parametrize("name", SMP_RUNS)
def test_smp_guest_passes(smp_runs, name):
    r = smp_runs[name]
    _, ncpu, args = RUNS[name]
    r.expect(r"^exitplan: %d vCPUs: vCPU 0 at the multiboot entry, %d waiting for STARTUP "
             r"\(one per CPU\)$" % (ncpu, ncpu - 1))
    r.expect(r"^smp: %d CPUs in the MADT, fw_cfg says %d, %s mode$" %
             (ncpu, ncpu, "x2APIC" if "x2apic" in args else "xAPIC"))
    assert not r.find(r"^FAIL"), r.describe()
    # Every AP came up once and ran its checks; every IPI shape was checked.
    assert len(r.findall(r"^PASS: ap-started$")) == ncpu - 1, r.describe()
    if "x2apic" in args:
        # Bochs 2.7's x2APIC LDR reads 0; exitplan answers the SDM's value.
        assert len(r.findall(r"^PASS: ap-x2apic-ldr$")) == ncpu - 1, r.describe()
    for check in ("aps-entered-once", "ipi-physical-each-ap", "ipi-self", "ipi-all-excluding-self",
                  "ipi-all-including-self", "ipi-physical-broadcast", "ipi-logical",
                  "nmi-wakes-cli-hlt", "init-stops-running-ap", "init-sipi-restarts-ap",
                  "second-sipi-ignored", "sipi-to-absent-cpu-dropped", "ipi-after-restart"):
        r.expect(rf"^PASS: {check}$")
    # An SMI IPI to the first AP, before its STARTUP and running: dropped, said so.
    r.expect(r"^PASS: smi-ipi-parked-ap$")
    r.expect(r"^PASS: smi-ipi-running-ap$")
    assert len(r.findall(r"^exitplan: vCPU 0: SMI IPI \(vector 0, targets 0x2\) dropped")) == 2, \
        r.describe()
    if "ioapic-rmw" in args:
        r.expect(r"^PASS: ioapic-lock-rmw-atomic$")
    r.expect(r"^guest smp: \d+ passed, 0 failed$")
    assert not r.find(r"hung"), r.describe()
    r.expect(r"^exitplan: vCPU 0 ended the run$")
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit(1)
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


@pytest.mark.parametrize("name", SMP_RUNS)
def test_every_vcpu_reported(smp_runs, name):
    """One statistics section and one end line per vCPU; counts add up."""
    r = smp_runs[name]
    ncpu = RUNS[name][1]
    docs = DOC_RE.findall(r.serial)
    assert len(docs) == 1, r.describe()
    st = yaml.safe_load(docs[0])["exitplan_stats"]
    assert [v["id"] for v in st["vcpus"]] == list(range(ncpu)), st["vcpus"]
    for v in st["vcpus"]:
        assert sum(e["count"] for e in v["reasons"].values()) == v["exits"], v
        # The human table of the same vCPU says the same.
        m = r.expect(r"^exitplan: exits by reason \(profile 'default', vCPU %d\):\n"
                     r"((?:  .*\n)*?)      total +(\d+)$" % v["id"])
        assert int(m.group(2)) == v["exits"], (m.group(0), v)
    # Every AP took exits of its own: the ICR writes and HLTs of its checks.
    for v in st["vcpus"][1:]:
        assert v["reasons"].get("HLT", {}).get("count", 0) > 0, v
    ends = r.findall(r"^exitplan: vCPU (\d+): (\S+)(?: \(in HLT\))? when it stopped; (.*)$")
    assert [int(e[0]) for e in ends] == list(range(ncpu)), r.describe()
    assert ends[0][2] == "guest exit status 1", ends[0]
    assert all(e[2] == "stopped with the machine (vCPU 0 stopped it)" for e in ends[1:]), ends
    # The machine's verdict is still the last line.
    assert r.lines[-1] == "exitplan: exit status 1", r.describe()


def test_icr_delivery_modes_contained(smp_runs):
    """SMI dropped (and said so), NMI to itself virtual, byte write and APIC
    base move refused, all on one vCPU."""
    r = smp_runs["skylake-1"]
    r.expect(r"^exitplan: vCPU 0: SMI IPI \(vector 0, targets 0x1\) dropped$")
    for check in ("smi-ipi-survived", "self-nmi-delivered", "apic-byte-write", "apic-base-move"):
        r.expect(rf"^PASS: {check}$")
    r.expect(r"^SKIP: smp \(one CPU\)$")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect_clean_exit(1)


def test_init_to_self_is_reported(smp_runs):
    """INIT to itself puts the only vCPU in wait-for-SIPI: nobody is left to
    start it, so the machine stops with a report (no CPU reset)."""
    r = smp_runs["init-self"]
    r.expect(r"^smp: sending INIT to myself \(APIC ID 0\)$")
    r.expect(r"^exitplan: guest stopped: no vCPU is left running: each waits for a STARTUP "
             r"IPI or halted with interrupts off$")
    r.expect_clean_exit(-3)


@pytest.fixture(scope="module")
def pingpong_runs(boot_out):
    guest = bootlib.build_guest("pingpong")
    hvs = {p: bootlib.build_hv(p) for p in {prof for prof, _, _ in PINGPONG.values()}}
    out = boot_out / "vmx-pingpong"
    jobs = []
    for name, (prof, cpu, args) in PINGPONG.items():
        iso = bootlib.build_iso(hvs[prof], guest, out / f"{name}.iso", guest_args=args)
        jobs.append(lambda i=iso, c=cpu, s=out / f"{name}.serial": bootlib.run_bochs(i, c, s, ncpu=2))
    return dict(zip(PINGPONG, bootlib.run_parallel(jobs, max_workers=2)))


@pytest.mark.parametrize("name", sorted(PINGPONG))
def test_pingpong_completes(pingpong_runs, name):
    r = pingpong_runs[name]
    prof, _, args = PINGPONG[name]
    r.expect(r"^PASS: pingpong-ap-started$")
    r.expect(r"^PASS: pingpong-rounds$")
    m = r.expect(r"^pingpong: round trip ticks: mean (\d+) min (\d+) p50 (\d+) p99 (\d+) max (\d+)$")
    mean, lo, p50, p99, hi = (int(x) for x in m.groups())
    assert lo <= p50 <= p99 <= hi and lo <= mean <= hi, m.group(0)
    r.expect(r"^guest pingpong: 2 passed, 0 failed$")
    r.expect_clean_exit(1)
    st = yaml.safe_load(DOC_RE.findall(r.serial)[0])["exitplan_stats"]
    assert st["profile"] == prof
    rounds = PINGPONG_ROUNDS + 20      # the guest's default warm-up
    for v in st["vcpus"]:
        reasons = v["reasons"]
        assert sum(e["count"] for e in reasons.values()) == v["exits"], v
        if "spin" in args:
            # Nobody halts to wait (the AP's one HLT is its end, cli; hlt).
            assert reasons.get("HLT", {}).get("count", 0) <= 1, v
            assert "EXTERNAL_INTERRUPT" not in reasons, v
            continue
        # Each side halts once per round and is woken by one exit: the IPI's
        # own (passthrough: the hardware delivers it), or the kick NMI's
        # (intercept-icr posts it; the vectors are the guest's, apic.c).
        wake = "EXCEPTION_NMI" if prof == "pipe-pingpong" else "EXTERNAL_INTERRUPT"
        assert reasons["HLT"]["count"] >= rounds, v
        assert reasons[wake]["count"] >= rounds, v
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_deaf_ap_stopped_by_kick_nmi(boot_out):
    """An AP spinning with its APIC software-disabled, under a profile
    without the VMX-preemption timer (vmexit-bench): the stop's kick is an
    NMI, which a software-disabled APIC still accepts (SDM Vol. 3A
    11.4.7.2) and which exits whatever the guest does, so the AP's vCPU
    stops with the machine at once: the physical INIT the boot CPU keeps
    for a vCPU deaf to its kick is not needed, no vCPU hangs, and the
    hypervisor's report ends the run."""
    hv = bootlib.build_hv("vmexit-bench")
    out = boot_out / "vmx-smp"
    iso = bootlib.build_iso(hv, bootlib.build_guest("smp"), out / "deaf-no-timer.iso",
                            guest_args="ap-deaf")
    r = bootlib.run_bochs(iso, SKYLAKE, out / "deaf-no-timer.serial", ncpu=2)
    r.expect(r"^PASS: ap-deaf$")
    assert not r.find(r"INIT to CPU"), r.describe()
    assert not r.find(r"taken back by an INIT signal"), r.describe()
    r.expect(r"^exitplan: vCPU 1: \S+ when it stopped; stopped with the machine "
             r"\(vCPU 0 stopped it\)$")
    assert not r.find(r"hung"), r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit(1)
    assert r.lines[-1] == "exitplan: exit status 1", r.describe()
