# SPDX-License-Identifier: GPL-2.0-only
"""Starting the other CPUs (runtime/host/smp.c, selftest=smp), those the ACPI
MADT lists or, with smp_broadcast, all by broadcast: every AP comes
online with its own id, APIC ID, TSS, GS base and stack, answers a call
from the boot CPU, and the borrowed trampoline page is given back."""
import re

import pytest

import bootlib

# One CPU: test_boot_basic.py's self-test run.
# ("broadcast", n): Bochs again, but waking the APs without the MADT.
CONFIGS = [("bochs", 2), ("bochs", 4), ("qemu", 2), ("broadcast", 2)]


@pytest.fixture(scope="module")
def smp_runs(hv_elf, boot_out):
    # Any file will do as the module: the VMM does not run in a self-test.
    iso = bootlib.build_iso(hv_elf, hv_elf, boot_out / "selftest-smp.iso",
                            hv_args="selftest=smp")
    iso_bc = bootlib.build_iso(hv_elf, hv_elf, boot_out / "selftest-smp-broadcast.iso",
                               hv_args="selftest=smp smp_broadcast")
    jobs = []
    for emu, n in CONFIGS:
        serial = boot_out / f"smp-{emu}-{n}.serial"
        if emu == "qemu":
            jobs.append(lambda s=serial, n=n: bootlib.run_qemu(iso, s, ncpu=n))
        else:
            jobs.append(lambda s=serial, n=n, i=(iso_bc if emu == "broadcast" else iso):
                        bootlib.run_bochs(i, bootlib.DEFAULT_CPU, s, ncpu=n))
    return dict(zip(CONFIGS, bootlib.run_parallel(jobs)))


@pytest.mark.parametrize("config", CONFIGS, ids=[f"{e}-{n}cpu" for e, n in CONFIGS])
def test_all_cpus_come_online(smp_runs, config):
    r = smp_runs[config]
    n = config[1]
    if config[0] == "broadcast":
        r.expect(r"^exitplan: no MADT \(or smp_broadcast\): starting the other CPUs by "
                 r"broadcast$")
    else:
        r.expect(r"^exitplan: the MADT lists %d CPUs$" % n)
    r.expect(r"^exitplan: %d CPUs? online$" % n)
    online = r.findall(r"^exitplan: CPU (\d+) online \(APIC ID (\d+)\)$")
    assert sorted(int(i) for i, _ in online) == list(range(1, n)), r.describe()

    probes = re.findall(r"^selftest: smp cpu (\d+): id (\d+) apic (\d+) tr (\w+) gs (\w+) "
                        r"rsp (\w+) (ok|WRONG)$", r.serial, re.M)
    assert [int(p[0]) for p in probes] == list(range(n)), r.describe()
    assert all(p[6] == "ok" for p in probes), r.describe()
    # Distinct APIC IDs, per-CPU areas and stacks.
    for col in (2, 4, 5):
        assert len({p[col] for p in probes}) == n, r.describe()
    assert "trampoline page was not restored" not in r.serial
    r.expect(r"^selftest: smp ok: %d CPUs$" % n)
    r.expect_clean_exit(0)


@pytest.fixture(scope="module")
def smppanic_run(hv_elf, boot_out):
    iso = bootlib.build_iso(hv_elf, hv_elf, boot_out / "selftest-smppanic.iso",
                            hv_args="selftest=smppanic")
    return bootlib.run_bochs(iso, bootlib.DEFAULT_CPU, boot_out / "smppanic.serial", ncpu=2)


def test_two_cpus_panic_at_once(smppanic_run):
    """CPU 1 panics and CPU 0 panics while it does (selftest=smppanic): the
    first to panic ends the run with its whole report; the other halts
    (runtime/host/panic.c) instead of powering off in the middle of it with a
    "nested panic"."""
    r = smppanic_run
    assert not r.timed_out, r.describe()
    assert r.panicked, r.describe()
    assert r.exit_status is None, r.describe()
    assert "nested panic" not in r.hv, r.describe()
    heads = re.findall(r"^exitplan: PANIC: selftest panic on CPU (\d)$", r.hv, re.M)
    assert len(heads) == 1, r.describe()
    tail = r.hv[r.hv.index("exitplan: PANIC: "):].splitlines()
    assert re.fullmatch(r"  on CPU %s, called from 0x[0-9a-f]{16}, RSP [0-9a-f]{16}" % heads[0],
                        tail[1]), r.describe()
    assert re.fullmatch(r"  CR0 [0-9a-f]{16}  CR3 [0-9a-f]{16}  CR4 [0-9a-f]{16}", tail[2]), \
        r.describe()
    assert tail[3] == "  code addresses on the stack (? = maybe stale):", r.describe()
    assert all(re.fullmatch(r"   (?: \? [0-9a-f]+)+", l) for l in tail[4:]), r.describe()
