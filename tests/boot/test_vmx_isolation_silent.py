# SPDX-License-Identifier: GPL-2.0-only
"""Guests that never end (tests/guest/isolation/silent_attacks.c) still
end in the hypervisor's own report: its `deadline=N` option stops every
vCPU N TSC ticks after the launch and prints the same report as any other
end, the exit-status line last, on COM1 and on its own channel (issue 24,
part 4).

- silent-hlt: CLI; HLT on every CPU (2 CPUs; and 3 vCPUs sharing 1 CPU
  under apic: virtual).
- silent-idle: STI; HLT on every CPU with no interrupt source: the vCPUs
  sleep in the guest, or (sharing a CPU) their CPU idles in root.
- silent-spin: CLI, then a loop without exits (also under vmexit-bench,
  whose profile leaves the VMX-preemption timer off: borrowed for the
  deadline).
- silent-pit: the 8254 at divisor 1 with interrupts on, forever.
- silent-apic-storm: a periodic APIC timer with initial count 1, forever.
Each of them, without the deadline, runs until the emulator is killed."""
import re

import pytest

import bootlib

DEADLINE = 50_000_000
DEADLINE_RE = (rf"^exitplan: guest stopped: the hypervisor's deadline passed: "
               rf"deadline={DEADLINE} TSC ticks after the launch, and the guest had not ended")
NO_PROGRESS_RE = r"^exitplan: guest stopped: .*(halted for good|no vCPU is left running)"
VMM_GUEST_FAULT = -3

# name: (profile, attack, NCPU, hypervisor options besides the deadline)
BOOTS = {
    "hlt-2cpu": ("default", "silent-hlt", 2, ""),
    "hlt-shared": ("apic-virtual", "silent-hlt", 1, "vcpus=3"),
    "idle-2cpu": ("default", "silent-idle", 2, ""),
    "idle-shared": ("apic-virtual", "silent-idle", 1, "vcpus=3"),
    "spin": ("default", "silent-spin", 1, ""),
    "spin-no-timer": ("vmexit-bench", "silent-spin", 1, ""),
    "pit": ("default", "silent-pit", 1, ""),
    "apic-storm": ("default", "silent-apic-storm", 1, ""),
}


@pytest.fixture(scope="module")
def runs(boot_out):
    isolation = bootlib.build_guest("isolation")
    out = boot_out / "vmx-isolation-silent"
    hvs = {p: bootlib.build_hv(p) for p in sorted({b[0] for b in BOOTS.values()})}
    isos = {name: bootlib.build_iso(hvs[profile], isolation, out / f"{name}.iso",
                                    hv_args=f"deadline={DEADLINE // 1_000_000}M {extra}".strip(),
                                    guest_args=f"attack={attack}")
            for name, (profile, attack, _, extra) in BOOTS.items()}
    results = bootlib.run_parallel([
        lambda name=name: bootlib.run_bochs(isos[name], bootlib.DEFAULT_CPU,
                                            out / f"{name}.serial", ncpu=BOOTS[name][2])
        for name in BOOTS])
    return dict(zip(BOOTS, results))


def report_is_last_word(r):
    """The full end report (statistics, where the profile keeps them,
    every vCPU's line, the cause), then the exit-status line, last on
    both channels."""
    r.expect_clean_exit(VMM_GUEST_FAULT)
    r.expect(r"^(# exitplan-stats-end|exitplan: exit statistics are off in profile '\S+')$")
    assert r.lines[-1] == f"exitplan: exit status {VMM_GUEST_FAULT}", r.describe()
    assert r.hv.splitlines()[-1] == f"exitplan: exit status {VMM_GUEST_FAULT}", r.describe()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


@pytest.mark.parametrize("name", list(BOOTS))
def test_silent_guest_ends_in_the_report(runs, name):
    r = runs[name]
    _, attack, _, extra = BOOTS[name]
    r.expect(rf"^exitplan: deadline: the guest is stopped {DEADLINE} TSC ticks after its launch "
             rf"\(deadline=50M\)$")
    r.expect(rf"^isolation: attacking {re.escape(attack)} \(")
    if attack == "silent-hlt":
        # No vCPU can wake another: the machine stops at once, or at the deadline.
        assert r.find(DEADLINE_RE) or r.find(NO_PROGRESS_RE), r.describe()
    else:
        r.expect_hv(DEADLINE_RE)
        # Every vCPU was stopped, each with its line (printed with more than one).
        nvcpus = int(extra.split("=")[1]) if extra.startswith("vcpus=") else BOOTS[name][2]
        if nvcpus > 1:
            stopped = r.findall(r"^exitplan: vCPU \d+: .*; stopped")
            assert len(stopped) == nvcpus, r.describe()
    report_is_last_word(r)


@pytest.fixture(scope="module")
def bad_option(hv_elf, boot_out):
    out = boot_out / "vmx-isolation-silent"
    iso = bootlib.build_iso(hv_elf, bootlib.build_guest("status"), out / "bad-deadline.iso",
                            hv_args="deadline=12X")
    return bootlib.run_bochs(iso, bootlib.DEFAULT_CPU, out / "bad-deadline.serial")


def test_bad_deadline_refused(bad_option):
    bad_option.expect_hv(r"^exitplan: deadline=12X: not a count of TSC ticks \(digits, then k, "
                         r"M or G\): refusing$")
    assert bad_option.exit_status is not None and bad_option.exit_status < 0, \
        bad_option.describe()
    assert not bad_option.find(r"^exitplan: launching the guest"), bad_option.describe()
