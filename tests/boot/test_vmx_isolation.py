# SPDX-License-Identifier: GPL-2.0-only
"""The isolation guest's attacks on the hypervisor are contained and
reported, and the hypervisor stays up: it prints its report and powers
off by itself (an exit-status line, no panic, no hang).

The attacks are read from the guest's own table (tests/guest/isolation/
main.c), so a new attack is tested without editing this file: each fatal
one gets a boot of its own and must be stopped by the hypervisor (EPT
violation naming hypervisor memory, or the triple fault); the non-fatal
ones run together and must all be refused inside the guest."""
import re

import pytest

import bootlib

GUEST_SRC = bootlib.REPO / "tests" / "guest" / "isolation" / "main.c"
ATTACKS = re.findall(r'^\s*\{ "([a-z0-9-]+)", attack_\w+, (true|false) \},$',
                     GUEST_SRC.read_text(), re.M)
FATAL = [name for name, fatal in ATTACKS if fatal == "true"]
NONFATAL = [name for name, fatal in ATTACKS if fatal == "false"]

# What the hypervisor must say about each fatal attack.
STOP_REPORT = {
    "triple-fault": r"^exitplan: guest stopped: triple fault",
}
HV_MEMORY_REPORT = r"^exitplan: guest stopped: EPT violation: (read|write) of hypervisor memory"


@pytest.fixture(scope="module")
def isolation_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("isolation")
    out = boot_out / "vmx-isolation"
    args = [f"attack={a}" for a in FATAL] + ["attack=all-nonfatal"]
    isos = [bootlib.build_iso(hv_elf, guest, out / f"{a.split('=')[1]}.iso", guest_args=a)
            for a in args]
    runs = bootlib.run_parallel([
        lambda i=iso, a=a: bootlib.run_bochs(i, bootlib.DEFAULT_CPU,
                                             out / f"{a.split('=')[1]}.serial")
        for iso, a in zip(isos, args)])
    return dict(zip([a.split("=")[1] for a in args], runs))


def test_attack_table_found():
    assert FATAL and NONFATAL, f"no attacks parsed from {GUEST_SRC}"


@pytest.mark.parametrize("attack", FATAL)
def test_fatal_attack_contained(isolation_runs, attack):
    r = isolation_runs[attack]
    r.expect(rf"^isolation: attacking {re.escape(attack)}\b")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(STOP_REPORT.get(attack, HV_MEMORY_REPORT))
    if attack not in STOP_REPORT:
        # The report names the guest-physical address, inside the region.
        m = r.expect(r"^exitplan: EPT violation: guest (?:read|write|fetch) of GPA (0x[0-9a-f]+) "
                     r"at RIP 0x[0-9a-f]+, qualification 0x[0-9a-f]+")
        assert 0x4000000 <= int(m.group(1), 16) < 0x6000000, r.describe()
    assert not r.find(r"^exitplan: guest exit status"), r.describe()
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_nonfatal_attacks_refused(isolation_runs):
    r = isolation_runs["all-nonfatal"]
    for attack in NONFATAL:
        r.expect(rf"^isolation: attacking {re.escape(attack)}\b")
    m = r.expect(r"^guest isolation: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) >= len(NONFATAL) and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
