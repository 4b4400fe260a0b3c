# SPDX-License-Identifier: GPL-2.0-only
"""A profile's execution.io.grant that overlaps an I/O BAR of a PCI
function is refused at boot, naming the function (issue 24, part 5): the
guest owns no PCI function, and Bochs's IDE controller (00:01.1) decodes
its bus-master registers at 0xc000-0xc00f, where Bochs's BIOS put BAR4 --
writing them starts DMA anywhere in memory, the hypervisor included.  The
generator cannot know where firmware put a BAR (it refuses the ports
spec/runtime.yaml reserves, tests/gen); the hypervisor reads the BARs at
boot (runtime/devices/pci.c: pci_io_bars()) and compares.  A grant clear of every
BAR (the second parallel port, 0x278-0x27f) still boots."""
import pytest

import bootlib

GRANT = r'execution:\n  io:\n    grant: [{port: %s, last: %s, why: "%s"}]\n'


@pytest.fixture(scope="module")
def runs(boot_out):
    out = boot_out / "vmx-io-grant-pci"
    guest = bootlib.build_guest("status")
    variants = {
        # One port into the block is enough: 0xc00f..0xc010.
        "bm": ("grant-ide-bm", "0xc00f", "0xc010", "test: the last IDE bus-master port"),
        "lpt2": ("grant-lpt2", "0x278", "0x27f", "test: a port no PCI function decodes"),
    }
    isos = {}
    for key, (name, first, last, why) in variants.items():
        hv = bootlib.build_profile_variant(
            "default", name, [(r"^execution:\n", GRANT % (first, last, why))], out / name,
            f"an execution.io.grant of {first}..{last}")
        isos[key] = bootlib.build_iso(hv, guest, out / f"{name}.iso")
    return dict(zip(isos, bootlib.run_parallel([
        lambda k=k: bootlib.run_bochs(isos[k], bootlib.DEFAULT_CPU, out / f"{k}.serial")
        for k in isos])))


def test_grant_over_the_ide_bus_master_bar_refused(runs):
    r = runs["bm"]
    r.expect_hv(r"^exitplan: profile 'grant-ide-bm' grants ports 0xc00f\.\.0xc010, which overlap "
                r"I/O BAR 4 \(ports 0xc000\.\.0xc00f\) of PCI function 00:01\.1 \(vendor 8086 "
                r"device 7010, class 010180\), which the guest does not own: a device's registers "
                r"can start DMA into the hypervisor: refusing$")
    assert not r.find(r"^exitplan: launching the guest"), r.describe()
    assert r.expect_clean_exit() == -1, r.describe()       # VMM_REFUSED
    assert r.hv.splitlines()[-1] == "exitplan: exit status -1", r.describe()


def test_grant_clear_of_every_bar_boots(runs):
    r = runs["lpt2"]
    assert not r.find(r"which overlap I/O BAR"), r.describe()
    r.expect(r"^exitplan: launching the guest")
    r.expect_clean_exit()
