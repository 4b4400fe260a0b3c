# SPDX-License-Identifier: GPL-2.0-only
"""arch/vmx holds VMX (issue 26), read from the objects, not the names.

An object of arch/vmx touches VMX when its code has a VMX instruction
(objdump: VMREAD, VMWRITE, VMLAUNCH, VMRESUME, VMPTRLD, VMPTRST, VMCLEAR,
INVEPT, INVVPID, VMXON, VMXOFF) or it defines or needs a symbol of the
VMCS, EPT, VMX-bitmap or VMX-capability family (nm), in either build
that test_call_graph.py reads (default, apic-virtual: their union is
every shipped profile's code).  At most three do not, each named here
with why it stays: a new one fails, and so does an entry that touches
VMX now (drop it).
"""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"
PROFILES = ("default", "apic-virtual")

NOT_VMX = {
    "ap_park": "the idle CPUs' halt and the kick that ends it: VMX's kick IPI and NMI "
               "(apic.c) and the vCPUs' places (vcpu_switch.c) are what it reads",
    "vcpu_switch": "several vCPUs on a CPU: the scheduler's decisions acted on, and what "
                   "the CPU holds of a guest outside the VMCS saved at a switch",
    "vmx_report": "the report at the end of a run, read from struct vcpu's VMX state",
}
MAX_NOT_VMX = 3

VMX_INSN = re.compile(r"\b(vmread|vmwrite|vmlaunch|vmresume|vmptrld|vmptrst|vmclear|invept|"
                      r"invvpid|vmxon|vmxoff)\b")
VMX_SYMBOL = re.compile(r"(ept|vmcs|bitmap|vmx_ctl|vmx_caps|vmx_feature)", re.I)


@pytest.fixture(scope="module")
def objdirs():
    dirs = []
    for p in PROFILES:
        r = subprocess.run(["make", "-s", "--no-print-directory", "build", f"PROFILE={p}"],
                           cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, r.stdout[-4000:]
        dirs.append(BUILD / p / "obj" / "arch" / "vmx")
    return dirs


def touches_vmx(obj: Path) -> bool:
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(obj)], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    if VMX_INSN.search(dis):
        return True
    syms = subprocess.run(["nm", str(obj)], check=True, stdout=subprocess.PIPE, text=True).stdout
    return any(VMX_SYMBOL.search(line.split()[-1]) for line in syms.splitlines() if line.split())


def not_vmx(objdirs):
    names = sorted(p.stem for p in (REPO / "arch" / "vmx").glob("*.[cS]"))
    out = []
    for n in names:
        objs = [d / f"{n}.o" for d in objdirs if (d / f"{n}.o").exists()]
        assert objs, f"arch/vmx/{n}: no object in {PROFILES}"
        if not any(touches_vmx(o) for o in objs):
            out.append(n)
    return out


def test_arch_vmx_holds_vmx(objdirs):
    found = not_vmx(objdirs)
    new = [n for n in found if n not in NOT_VMX]
    gone = [n for n in NOT_VMX if n not in found]
    assert not new, (f"arch/vmx files that touch no VMCS field, VMX instruction, EPT or VMX "
                     f"bitmap: {new}; their concern is another room's (runtime/)")
    assert not gone, f"NOT_VMX entries that touch VMX now (drop them): {gone}"
    assert len(found) <= MAX_NOT_VMX


def test_the_measure_sees_vmx():
    # The exit stub and the VMCS setup are VMX by any measure.
    for name in ("exit_entry", "vmx"):
        for p in PROFILES:
            o = BUILD / p / "obj" / "arch" / "vmx" / f"{name}.o"
            if o.exists():
                assert touches_vmx(o), f"{o}: the measure misses its VMX"
