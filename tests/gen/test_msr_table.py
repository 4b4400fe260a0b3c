# SPDX-License-Identifier: GPL-2.0-only
"""The runtime's MSR lists come from spec/msrs.yaml alone (issue 26): the
generator emits how each trapped MSR is answered and which stay resident
across a vCPU switch (generated/common/msr_table.c); arch/vmx keeps only
the semantics, and a bad entry is refused with its position."""

import re
import shutil

import pytest
import yaml

from conftest import ROOT, run_gen

TABLE_C = ROOT / "generated/common/msr_table.c"
HOW = {"vmcs": "MSR_ANSWER_VMCS", "executed": "MSR_ANSWER_EXECUTED", "read_only": "MSR_ANSWER_READ_ONLY"}


def spec_msrs():
    return yaml.safe_load((ROOT / "spec/msrs.yaml").read_text())["msrs"]


def macro(m, end):
    if "last" not in m:
        return f"MSR_{m['name']}"
    return f"MSR_{m['name']}_{end}"


def c_array(name):
    text = TABLE_C.read_text()
    body = re.search(rf"\b{name}\[[A-Z_]+\] = {{\n(.*?)\n}};", text, re.S)
    assert body, f"{name}[] not found in {TABLE_C}"
    return [line.strip().rstrip(",") for line in body.group(1).splitlines()]


def test_answer_table_is_the_spec_in_its_order():
    want = [f"{{ {macro(m, 'FIRST')}, {macro(m, 'LAST')}, {HOW[m['answer']]}, "
            f"{m['vmcs']['guest_field'] if m['answer'] == 'vmcs' else 0} }}"
            for m in spec_msrs() if m.get("answer") in HOW]
    assert c_array("msr_answers") == want


def test_answer_table_is_what_msr_c_had_by_hand():
    """The hand list it replaced (msr_allow[], before issue 26), in its
    order: the lookup's path for each MSR, and for one not in it, is
    unchanged.  IA32_XSS (executed_if_shown) is msr.c's own."""
    names = [e.split(",")[0].lstrip("{ ") for e in c_array("msr_answers")]
    assert names == ["MSR_IA32_SYSENTER_CS", "MSR_IA32_SYSENTER_ESP", "MSR_IA32_SYSENTER_EIP",
                     "MSR_IA32_FS_BASE", "MSR_IA32_GS_BASE", "MSR_IA32_DEBUGCTL",
                     "MSR_IA32_STAR", "MSR_IA32_LSTAR", "MSR_IA32_CSTAR", "MSR_IA32_FMASK",
                     "MSR_IA32_KERNEL_GS_BASE", "MSR_IA32_TSC_AUX", "MSR_IA32_SPEC_CTRL",
                     "MSR_IA32_PRED_CMD", "MSR_IA32_FLUSH_CMD", "MSR_IA32_X2APIC_FIRST"]


def test_resident_list_is_the_spec_in_save_load_order():
    want = [macro(m, "FIRST") for m in spec_msrs() if m.get("resident")]
    assert c_array("msr_resident") == want
    # The eight vmx_resident_msrs[] held, in the same order.
    assert want == ["MSR_IA32_STAR", "MSR_IA32_LSTAR", "MSR_IA32_CSTAR", "MSR_IA32_FMASK",
                    "MSR_IA32_KERNEL_GS_BASE", "MSR_IA32_TSC_AUX", "MSR_IA32_SPEC_CTRL",
                    "MSR_IA32_XSS"]
    h = (ROOT / "generated/common/msr_table.h").read_text()
    assert f"#define MSR_RESIDENT_COUNT\t{len(want)}\n" in h


@pytest.mark.parametrize("path", ["arch/vmx/msr.c", "arch/vmx/vcpu_switch.c"])
def test_no_hand_written_msr_list(path):
    """arch/vmx keeps the semantics: no file-scope array initialised with
    MSR indices (MSR_* names between braces), as msr_allow[] and
    vmx_resident_msrs[] were, grows back by hand.  (A function's own
    table, as mtrr_setup()'s fixed MTRRs in their storage order, is
    semantics.)"""
    text = (ROOT / path).read_text()
    for m in re.finditer(r"^(?:static )?const [^;=]*\[[^\]]*\]\s*=\s*\{(.*?)^\};", text, re.S | re.M):
        assert not re.search(r"\bMSR_[A-Z0-9_]+\b", m.group(1)), \
            f"{path}: a hand-written MSR list; list it in spec/msrs.yaml (answer:, resident:)"


@pytest.fixture
def root(tmp_path):
    shutil.copytree(ROOT / "spec", tmp_path / "spec")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


@pytest.mark.parametrize("old, new, message", [
    # Only an MSR whose trapped accesses the runtime executes stays in the CPU.
    ("{name: IA32_TSC_ADJUST, answer: emulated,", "{name: IA32_TSC_ADJUST, answer: emulated, resident: true,",
     "IA32_TSC_ADJUST is resident but its answer is emulated"),
    ("{name: IA32_PMC,            index: 0xc1,", "{name: IA32_PMC, resident: true, index: 0xc1,",
     "IA32_PMC is resident but its answer is none"),
    ("{name: IA32_X2APIC, answer: executed,", "{name: IA32_X2APIC, answer: executed, resident: true,",
     "IA32_X2APIC is a range: only a single MSR can be resident"),
    ("{name: IA32_STAR, answer: executed, resident: true,", "{name: IA32_STAR, answer: executed, resident: yes,",
     "'resident' has the wrong type (str)"),
    ("{name: IA32_STAR, answer: executed, resident: true,", "{name: IA32_STAR, answer: executed, residnet: true,",
     "unknown key 'residnet' in an MSR (did you mean resident?)"),
    ("{name: IA32_PRED_CMD, answer: executed,", "{name: IA32_PRED_CMD, answer: vmcs,",
     "IA32_PRED_CMD is answered from the VMCS but names no vmcs: guest_field"),
])
def test_bad_msr_entry_is_refused(root, old, new, message):
    path = root / "spec/msrs.yaml"
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))
    r = run_gen("--root", root, "--out", root / "out", "gen")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("spec/msrs.yaml:"), r.stderr
    assert message in r.stderr
    line = int(r.stderr.split(":")[1])
    assert new.split(",")[0] in path.read_text().splitlines()[line - 1]
    assert not (root / "out").exists()
