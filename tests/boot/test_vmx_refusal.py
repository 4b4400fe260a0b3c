# SPDX-License-Identifier: GPL-2.0-only
"""A CPU that cannot run the profile is refused at boot with a message that
names the missing feature, and the machine powers off cleanly:
- Bochs core2_penryn_t9600 has VMX but no EPT: "refused ... lacks ept";
- QEMU (TCG) has no VMX at all: "VT-x not available ... vmx".
Neither may launch a guest, panic or hang."""
import pytest

import bootlib


@pytest.fixture(scope="module")
def refusal_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("handlers")
    iso = bootlib.build_iso(hv_elf, guest, boot_out / "vmx-refusal" / "refusal.iso",
                            guest_args="quick")
    out = boot_out / "vmx-refusal"
    penryn, qemu = bootlib.run_parallel([
        lambda: bootlib.run_bochs(iso, "core2_penryn_t9600", out / "penryn.serial"),
        lambda: bootlib.run_qemu(iso, out / "qemu.serial"),
    ])
    return {"penryn": penryn, "qemu": qemu}


def _no_guest(r):
    assert not r.find(r"^exitplan: launching the guest"), r.describe()
    assert not r.find(r"^guest handlers:"), r.describe()
    assert not r.find(r"^gate "), r.describe()


def test_penryn_refused_naming_ept(refusal_runs):
    r = refusal_runs["penryn"]
    r.expect(r"^exitplan: VMX: revision ")
    r.expect(r"^exitplan: profile '[a-z0-9-]+' refused: this CPU lacks ept$")
    _no_guest(r)
    r.expect_clean_exit()


def test_qemu_refused_naming_vmx(refusal_runs):
    r = refusal_runs["qemu"]
    r.expect(r"^exitplan: VT-x not available: CPUID\.1:ECX\.VMX is 0 .*\bvmx\b")
    _no_guest(r)
    r.expect_clean_exit()
