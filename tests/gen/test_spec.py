# SPDX-License-Identifier: GPL-2.0-only
"""spec/ is cross-checked: an inconsistency fails hard with file:line:col."""

import shutil

import pytest

from conftest import ROOT, run_gen


@pytest.fixture
def root(tmp_path):
    """A copy of the checkout's spec/ and profiles/ to break."""
    shutil.copytree(ROOT / "spec", tmp_path / "spec")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def break_spec(root, name, old, new):
    path = root / "spec" / name
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("name, old, new, message", [
    ("exit_reasons.yaml", "{number: 12, name: HLT,", "{number: 10, name: HLT,",
     "duplicate exit reason number 10 (first at line"),
    ("exit_reasons.yaml", "name: CPUID,", "name: HLT,", "duplicate exit reason name 'HLT' (first at line"),
    ("handlers.yaml", "  CPUID:                handle_cpuid", "  CPUIDX:               handle_cpuid",
     "unknown exit reason 'CPUIDX' (did you mean CPUID?)"),
    ("features.yaml", "proc_based2.ENABLE_VPID]}}", "proc_based2.ENABLE_VPIDD]}}",
     "unknown control 'proc_based2.ENABLE_VPIDD' (did you mean proc_based2.ENABLE_VPID?)"),
    ("runtime.yaml", "- msr: IA32_APIC_BASE", "- msr: IA32_APIC_BASSE",
     "unknown MSR 'IA32_APIC_BASSE' (did you mean IA32_APIC_BASE?)"),
    ("msrs.yaml", "feature: load_ia32_efer}", "feature: load_efer}",
     "unknown feature 'load_efer' (did you mean load_ia32_efer?)"),
    # Default deny: a port is granted or reserved, never both.
    ("runtime.yaml", "- first: 0xb2", "- first: 0x80", "port range 0x80..0xb3 overlaps 0x80..0x80"),
    ("runtime.yaml", "how: denied", "how: deny", "unknown handling 'deny' (did you mean denied?)"),
    # A runtime-required control is waived only by a setting the generator knows.
    ("runtime.yaml", 'unless: "interrupts: direct"', 'unless: "interrupts: directly"',
     "'unless' must be one of interrupts: direct (on a required control only), not "
     "'interrupts: directly'"),
])
def test_spec_inconsistency_fails_hard(root, name, old, new, message):
    path = break_spec(root, name, old, new)
    r = run_gen("--root", root, "--out", root / "out", "gen")
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(f"spec/{name}:"), r.stderr
    assert message in r.stderr
    # The position is that of the broken node: the line we changed.
    line = int(r.stderr.split(":")[1])
    assert new in path.read_text().splitlines()[line - 1]
    assert not (root / "out").exists()


@pytest.mark.parametrize("reason, number", [("INVALID_STATE", 33), ("MSR_LOAD_FAIL", 34),
                                            ("MCE_DURING_VMENTRY", 41)])
def test_entry_failure_reason_with_a_handler_is_refused(root, reason, number):
    """The exit stub does not test exit-reason bit 31: a failed VM entry is
    reported because its basic reason (33, 34, 41) has no handler."""
    path = break_spec(root, "handlers.yaml", "  CPUID:                handle_cpuid\n",
                      f"  CPUID:                handle_cpuid\n  {reason}: handle_cpuid\n")
    r = run_gen("--root", root, "--out", root / "out", "gen")
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("spec/handlers.yaml:"), r.stderr
    assert (f"{reason} ({number}) is reported only by a failed VM entry (SDM Vol. 3C 26.8) "
            "and must have no handler") in r.stderr
    line = int(r.stderr.split(":")[1])
    assert path.read_text().splitlines()[line - 1].startswith(f"  {reason}:")
    assert not (root / "out").exists()


def test_entry_failure_reasons_are_33_34_41():
    """The SDM's three (Vol. 3C 26.8), marked in spec/exit_reasons.yaml."""
    import yaml
    doc = yaml.safe_load((ROOT / "spec" / "exit_reasons.yaml").read_text())
    assert sorted(e["number"] for e in doc["exit_reasons"] if e.get("entry_failure")) == [33, 34, 41]


def test_vmxcaps_reads_allowed_settings_as_the_sdm_says():
    """spec/vmxcaps.py, the tests' one reading of the capability MSRs:
    TRUE_* count when IA32_VMX_BASIC[55] is set, and the secondary
    controls exist only when they can be activated (SDM Vol. 3D A.2, A.3.3)."""
    import sys
    import yaml
    sys.path.insert(0, str(ROOT / "spec"))
    import vmxcaps
    fields = {f["key"]: f for f in
              yaml.safe_load((ROOT / "spec" / "vmx_controls.yaml").read_text())["control_fields"]}
    hlt = next(c["bit"] for c in fields["proc_based"]["controls"] if c["name"] == "HLT_EXITING")
    act = next(c["bit"] for c in fields["proc_based"]["controls"]
               if c["name"] == "ACTIVATE_SECONDARY_CONTROLS")

    def model(basic, proc, true_proc, proc2):
        return {"msrs": {"IA32_VMX_BASIC": {"value": basic},
                         "IA32_VMX_PROCBASED_CTLS": {"value": proc},
                         "IA32_VMX_TRUE_PROCBASED_CTLS": {"value": true_proc},
                         "IA32_VMX_PROCBASED_CTLS2": {"value": proc2}}}

    both = (1 << (32 + hlt)) | (1 << (32 + act)) | (1 << hlt)
    true_without_hlt = 1 << (32 + act)
    m = model(1 << 55, both, true_without_hlt, 0xff << 32)
    assert not vmxcaps.allowed1(m, fields, "proc_based.HLT_EXITING")
    assert vmxcaps.allowed(m, fields, "proc_based") == (0, true_without_hlt >> 32)
    m = model(0, both, true_without_hlt, 0xff << 32)
    assert vmxcaps.allowed1(m, fields, "proc_based.HLT_EXITING")
    assert vmxcaps.allowed(m, fields, "proc_based")[0] == 1 << hlt
    assert vmxcaps.allowed(m, fields, "proc_based2") == (0, 0xff)
    m = model(0, 1 << (32 + hlt), 0, 0xff << 32)
    assert vmxcaps.allowed(m, fields, "proc_based2") == (0, 0)
    assert vmxcaps.detect(m, fields, {"cpuid": {"leaf": 1, "reg": "ecx", "bit": 5}}) is None


def test_cpuid_fast_leaves_exclude_the_guest_dependent_ones(generator):
    """spec/handlers.yaml cpuid_fast_leaves: never a leaf whose answer
    follows ECX, the guest or the controls (handle_cpuid() in
    arch/vmx/cpuid.c): 1 (APIC ID, OSXSAVE), 4, 7, 0BH, 0DH, 0FH, 10H,
    12H, 14H, 17H, 18H, 1FH (subleaves), 80000001H (RDTSCP)."""
    listed = set(generator.spec.cpuid_fast_leaves)
    assert 0x0 in listed
    for leaf in (0x1, 0x4, 0x7, 0xb, 0xd, 0xf, 0x10, 0x12, 0x14, 0x17, 0x18, 0x1f, 0x80000001):
        assert leaf not in listed, f"CPUID leaf {leaf:#x} depends on ECX or the guest"
