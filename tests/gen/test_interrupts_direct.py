# SPDX-License-Identifier: GPL-2.0-only
"""interrupts: direct (a vCPU alone on its CPU takes that CPU's interrupts
through its own IDT): the controls it generates, the runtime control it
waives, the macro the runtime reads, and what explain says it removes.
Its refusals are in the bad corpus (tests/gen/bad/*interrupts*)."""

import re

import pytest

from conftest import ROOT, run_gen


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("direct")
    r = run_gen("--out", out, "gen", "-q")
    assert r.returncode == 0, r.stderr
    return out


def required(out, profile, field):
    """The bits of one control field of .required in vmcs_setup.c."""
    s = (out / profile / "vmcs_setup.c").read_text().split(".required = {")[1].split("},")[0]
    m = re.search(r"\[%s\] =(.*?)(?:\[VMX_|\Z)" % field, s, re.S)
    return set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", m.group(1))) if m else set()


def test_direct_drops_interrupt_exiting_and_sets_nmi_exiting(out):
    pin = required(out, "pipe-pingpong-direct", "VMX_PIN_BASED")
    # Kicks are NMIs; injected NMIs virtual ones (the guest's IRET unblocks them).
    assert {"PIN_BASED_NMI_EXITING", "PIN_BASED_VIRTUAL_NMIS"} <= pin, pin
    assert "PIN_BASED_EXTERNAL_INTERRUPT_EXITING" not in pin, pin
    assert "CPU_BASED_HLT_EXITING" not in required(out, "pipe-pingpong-direct", "VMX_PROC_BASED")
    h = (out / "pipe-pingpong-direct" / "profile.h").read_text()
    assert re.search(r"^#define PROFILE_INTERRUPTS_DIRECT\t+1$", h, re.M), h


@pytest.mark.parametrize("profile", ["default", "pipe-pingpong", "apic-virtual"])
def test_exit_keeps_interrupt_exiting(out, profile):
    pin = required(out, profile, "VMX_PIN_BASED")
    assert "PIN_BASED_EXTERNAL_INTERRUPT_EXITING" in pin, pin
    # NMI exiting and virtual NMIs are the runtime's in every profile
    # (spec/runtime.yaml): the kicks are NMIs wherever the guest owns the
    # physical APIC's vectors, and the NMI window says when the guest's
    # IRET ends its NMI blocking.
    assert {"PIN_BASED_NMI_EXITING", "PIN_BASED_VIRTUAL_NMIS"} <= pin, pin
    h = (out / profile / "profile.h").read_text()
    assert re.search(r"^#define PROFILE_INTERRUPTS_DIRECT\t+0$", h, re.M), h


def test_runtime_table_marks_the_waived_control(out):
    """vmx_runtime_controls_ok() skips it under interrupts: direct only."""
    c = (out / "common" / "runtime_controls.c").read_text()
    req = c.split("vmx_runtime_required_controls[] = {")[1].split("};")[0]
    waived = re.findall(r"\{ VMX_\w+, (\w+), \"[^\"]*\", true \}", req)
    assert waived == ["PIN_BASED_EXTERNAL_INTERRUPT_EXITING"], req
    caps = (ROOT / "arch" / "vmx" / "vmx_caps.c").read_text()
    assert "c->unless_interrupts_direct && exitplan_profile.interrupts_direct" in caps


def test_explain_says_which_exits_go():
    r = run_gen("explain", "profiles/pipe-pingpong-direct.yaml")
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "(interrupts: direct):" in text
    for words in ("the EXTERNAL_INTERRUPT exits are gone", "INTERRUPT_WINDOW exits",
                  "HLT exits are gone too", "ICR writes still exit", "kicks a CPU with an NMI"):
        assert words in text, words
    r = run_gen("explain", "profiles/pipe-pingpong.yaml")
    assert "(interrupts: exit):" in " ".join(r.stdout.split())
