# SPDX-License-Identifier: GPL-2.0-only
"""CPUID and the MSRs agree by rule (spec/msrs.yaml cpuid_msrs, issue 9):
a feature the guest is shown has every MSR behind it answered, a hidden
one has none answered and no profile may give one to the guest; the
hidden bits reach C as masks (generated/common/msr_index.h)."""

import shutil

import pytest

from conftest import ROOT, run_gen


@pytest.fixture
def root(tmp_path):
    shutil.copytree(ROOT / "spec", tmp_path / "spec")
    shutil.copytree(ROOT / "profiles", tmp_path / "profiles")
    return tmp_path


def edit(path, old, new):
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def rejected(root, name, new_text_on_line):
    r = run_gen("--root", root, "--out", root / "out", "gen")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith(f"{name}:"), r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    line = int(r.stderr.split(":")[1])
    assert new_text_on_line in (root / name).read_text().splitlines()[line - 1], r.stderr
    assert not (root / "out").exists()
    return r.stderr


def test_shown_feature_with_an_unanswered_msr_is_refused(root):
    """PDCM shown while IA32_PERF_CAPABILITIES has no answer: a guest that
    trusts CPUID would read it and get #GP (what issue 9 found)."""
    edit(root / "spec/msrs.yaml", "cpuid: {leaf: 0x1, reg: ecx, bit: 15}, guest: hidden,",
         "cpuid: {leaf: 0x1, reg: ecx, bit: 15}, guest: shown,")
    err = rejected(root, "spec/msrs.yaml", "IA32_PERF_CAPABILITIES")
    assert ("PDCM (CPUID.01H:ECX[15]) is shown to the guest, but IA32_PERF_CAPABILITIES behind it "
            "has no answer") in err


def test_shown_leaf_with_unanswered_msrs_is_refused(root):
    edit(root / "spec/msrs.yaml", "cpuid: {leaf: 0xa}, guest: hidden,", "cpuid: {leaf: 0xa}, guest: shown,")
    err = rejected(root, "spec/msrs.yaml", "IA32_PMC")
    assert "ARCH_PERFMON (CPUID leaf 0AH) is shown to the guest, but IA32_PMC behind it" in err


def test_hidden_feature_with_an_answered_msr_is_refused(root):
    """TSC_DEADLINE hidden while IA32_TSC_DEADLINE is still emulated."""
    edit(root / "spec/msrs.yaml", "cpuid: {leaf: 0x1, reg: ecx, bit: 24}, guest: shown,",
         "cpuid: {leaf: 0x1, reg: ecx, bit: 24}, guest: hidden, why: test,")
    err = rejected(root, "spec/msrs.yaml", "IA32_TSC_DEADLINE")
    assert ("TSC_DEADLINE (CPUID.01H:ECX[24]) is hidden from the guest, but IA32_TSC_DEADLINE "
            "behind it is answered (emulated)") in err


@pytest.mark.parametrize("old, new, message", [
    ("msrs: [IA32_PERF_CAPABILITIES],", "msrs: [IA32_PERF_CAPABILITY],",
     "unknown MSR 'IA32_PERF_CAPABILITY' (did you mean IA32_PERF_CAPABILITIES?)"),
    ("cpuid: {leaf: 0x1, reg: ecx, bit: 15}", "cpuid: {leaf: 0x1, reg: ecx}",
     "give both reg and bit, or neither"),
    ("cpuid: {leaf: 0x1, reg: ecx, bit: 15}", "cpuid: {leaf: 0x1, reg: ecx, bit: 24}",
     "duplicate CPUID location"),
    ("- {feature: PAT,          cpuid: {leaf: 0x1, reg: edx, bit: 16}, guest: shown,",
     "- {feature: PAT,          cpuid: {leaf: 0x1, reg: edx, bit: 16}, guest: shwn,",
     "guest must be 'shown' or 'hidden'"),
])
def test_malformed_rule_is_refused(root, old, new, message):
    edit(root / "spec/msrs.yaml", old, new)
    err = rejected(root, "spec/msrs.yaml", new.splitlines()[-1].strip()[:20])
    assert message in err


def test_unknown_answer_is_refused(root):
    edit(root / "spec/msrs.yaml", "- {name: IA32_MCG_CAP, answer: emulated,",
         "- {name: IA32_MCG_CAP, answer: readonly,")
    err = rejected(root, "spec/msrs.yaml", "answer: readonly")
    assert "unknown answer 'readonly' (did you mean read_only?)" in err


def test_profile_cannot_give_a_hidden_feature_msr_to_the_guest(root):
    """IA32_PERF_GLOBAL_CTRL is a profile MSR, but behind the hidden PMU."""
    edit(root / "profiles/default.yaml", "\nmsrs:\n",
         "\nmsrs:\n  IA32_PERF_GLOBAL_CTRL: {switch: atomic, access: trap}\n")
    r = run_gen("--root", root, "--out", root / "out", "gen", root / "profiles/default.yaml")
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert ("IA32_PERF_GLOBAL_CTRL is behind ARCH_PERFMON (CPUID leaf 0AH), which exitplan hides "
            "from the guest") in r.stderr


def test_hidden_bits_reach_c():
    text = (ROOT / "generated/common/msr_index.h").read_text()
    # MONITOR 3, EST 7, TM2 8, PDCM 15
    assert "#define CPUID_HIDE_1_ECX\t\t\t0x00008188u" in text
    assert "#define CPUID_HIDE_1_EDX\t\t\t0x20400000u" in text      # ACPI 22, TM 29
    assert "#define CPUID_HIDE_6_ECX\t\t\t0x00000009u" in text      # APERFMPERF 0, EPB 3
    assert "#define CPUID_HIDDEN_LEAF_MONITOR_MWAIT\t\t0x5u" in text
    assert "#define CPUID_HIDDEN_LEAF_ARCH_PERFMON\t\t0xau" in text
    assert "#define MSR_IA32_PERF_CAPABILITIES\t\t0x345u" in text
