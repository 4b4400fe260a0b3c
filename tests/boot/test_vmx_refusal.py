# SPDX-License-Identifier: GPL-2.0-only
"""A CPU that cannot run the profile is refused at boot with a message that
names the missing feature, and the machine powers off cleanly:
- Bochs core2_penryn_t9600 has VMX but no EPT: "refused ... lacks ept";
- QEMU (TCG) and Bochs p4_prescott_celeron_336 have no VMX at all:
  "VT-x not available ... vmx".
Neither may launch a guest, panic or hang."""
import pytest

import bootlib


@pytest.fixture(scope="module")
def refusal_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("handlers")
    iso = bootlib.build_iso(hv_elf, guest, boot_out / "vmx-refusal" / "refusal.iso",
                            guest_args="quick")
    out = boot_out / "vmx-refusal"
    penryn, p4, qemu = bootlib.run_parallel([
        lambda: bootlib.run_bochs(iso, "core2_penryn_t9600", out / "penryn.serial"),
        lambda: bootlib.run_bochs(iso, "p4_prescott_celeron_336", out / "p4.serial"),
        lambda: bootlib.run_qemu(iso, out / "qemu.serial"),
    ])
    return {"penryn": penryn, "p4": p4, "qemu": qemu}


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


@pytest.mark.parametrize("run", ["qemu", "p4"])
def test_no_vmx_refused_naming_vmx(refusal_runs, run):
    r = refusal_runs[run]
    r.expect(r"^exitplan: VT-x not available: CPUID\.1:ECX\.VMX is 0 .*\bvmx\b")
    _no_guest(r)
    r.expect_clean_exit()
