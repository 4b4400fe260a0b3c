# SPDX-License-Identifier: GPL-2.0-only
"""The local APIC's modes under each `apic:` choice (issue 9 item 4): the
handlers guest's apic-mode checks (tests/guest/handlers/apic_mode_checks.c)
take the APIC xAPIC -> x2APIC -> disabled -> xAPIC -> x2APIC, with the
forbidden transitions #GP, CPUID.01H:EDX.APIC following the enable bit
and IPIs taken in every enabled mode.

Under `apic: passthrough` and `apic: intercept-icr` the physical APIC
stays in x2APIC mode once the guest has put it there (Bochs 2.7's APIC
dies otherwise), and the second xAPIC mode is emulated on its MSRs: the
xAPIC page is then not mapped, and its reads exit as EPT violations
too (so bytes 4-15 of a register's slot, loaded plainly there, read 0
from exitplan: apic-mode-xapic-again-unaligned-zero).  Under
`apic: virtual` the model does it all.

The SMP guest with `apic-cycle` on 2 vCPUs: every CPU's APIC goes
xAPIC -> x2APIC -> disabled -> xAPIC before its setup, then every IPI
shape (physical, flat logical, shorthands, NMI, INIT and STARTUP) is
sent and taken between such APICs.  One boot per profile and guest, two
at a time."""
import pytest
import yaml

import bootlib

SKYLAKE = "corei7_skylake_x"
# profile: its `apic:` choice
PROFILES = {"default": "passthrough", "pipe-pingpong": "intercept-icr",
            "apic-virtual": "virtual"}
CHECKS = [
    "apic-mode-xapic-to-x2apic", "apic-mode-x2apic-self-ipi", "apic-mode-x2apic-to-xapic-gp",
    "apic-mode-x2apic-to-invalid-gp", "apic-mode-x2apic-to-disabled", "apic-mode-disabled-cpuid",
    "apic-mode-disabled-x2apic-msr-gp", "apic-mode-disabled-mmio",
    "apic-mode-disabled-to-x2apic-gp", "apic-mode-disabled-to-invalid-gp",
    "apic-mode-relocate-gp", "apic-mode-disabled-to-xapic", "apic-mode-xapic-again-id", "apic-mode-xapic-again-version",
    "apic-mode-xapic-again-x2apic-msr-gp", "apic-mode-xapic-again-ldr-dfr",
    "apic-mode-xapic-again-tpr", "apic-mode-xapic-again-unaligned-zero",
    "apic-mode-xapic-again-self-ipi",
    "apic-mode-xapic-again-physical-ipi", "apic-mode-xapic-again-logical-ipi",
    "apic-mode-x2apic-again", "apic-mode-x2apic-again-self-ipi",
]


SMP_CHECKS = ["ipi-physical-each-ap", "ipi-self", "ipi-all-excluding-self",
              "ipi-all-including-self", "ipi-physical-broadcast", "ipi-logical",
              "nmi-wakes-cli-hlt", "init-stops-running-ap", "init-sipi-restarts-ap",
              "ipi-after-restart"]


@pytest.fixture(scope="module")
def smp_runs(boot_out):
    guest = bootlib.build_guest("smp")
    out = boot_out / "vmx-apic-modes"
    jobs = []
    for prof in PROFILES:
        iso = bootlib.build_iso(bootlib.build_hv(prof), guest, out / f"smp-{prof}.iso",
                                guest_args="apic-cycle")
        jobs.append(lambda i=iso, s=out / f"smp-{prof}.serial":
                    bootlib.run_bochs(i, SKYLAKE, s, ncpu=2))
    return dict(zip(PROFILES, bootlib.run_parallel(jobs, max_workers=2)))


@pytest.fixture(scope="module")
def runs(boot_out):
    guest = bootlib.build_guest("handlers")
    out = boot_out / "vmx-apic-modes"
    jobs = []
    for prof in PROFILES:
        iso = bootlib.build_iso(bootlib.build_hv(prof), guest, out / f"{prof}.iso",
                                guest_args="apic-modes-only")
        jobs.append(lambda i=iso, s=out / f"{prof}.serial": bootlib.run_bochs(i, SKYLAKE, s))
    return dict(zip(PROFILES, bootlib.run_parallel(jobs, max_workers=2)))


def test_profiles_have_the_apic_choice():
    for prof, apic in PROFILES.items():
        p = yaml.safe_load((bootlib.REPO / "profiles" / f"{prof}.yaml").read_text())
        assert p.get("apic", "passthrough") == apic, prof


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_apic_mode_cycle(runs, profile):
    r = runs[profile]
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^SKIP"), r.describe()
    for check in CHECKS:
        r.expect(rf"^PASS: {check}$")
    r.expect(rf"^guest handlers: {len(CHECKS)} passed, 0 failed$")
    r.expect_clean_exit(1)


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_smp_ipis_after_the_cycle(smp_runs, profile):
    r = smp_runs[profile]
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^SKIP: apic-cycle"), r.describe()
    r.expect(r"^smp: 2 CPUs in the MADT, fw_cfg says 2, xAPIC mode$")
    for check in SMP_CHECKS:
        r.expect(rf"^PASS: {check}$")
    r.expect(r"^guest smp: \d+ passed, 0 failed$")
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit(1)
