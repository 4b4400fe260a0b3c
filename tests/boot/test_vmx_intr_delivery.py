# SPDX-License-Identifier: GPL-2.0-only
"""Interrupts and NMIs taken at the instruction boundary where hardware
takes them (tests/guest/handlers/intr_checks.c, issue 25), under every
APIC model: passthrough (default), intercept-icr (pipe-pingpong),
virtual (apic-virtual), and interrupts: direct (pipe-pingpong-direct).
The same checks pass on bare Bochs (tests/guest/bochs-bare.sh
build/guest/handlers.elf "interrupts-only firmware-pic").

What each would have caught (kvm-unit-tests' eventinj, vmexit and
realmode under exitplan at ef44998):
- intr-firmware-timer-wakes-hlt: the guest's 8254 ran from the
  firmware's state, but vCPU 0 armed its first IR0 only at the guest's
  first access to the 8259s or the 8254, which a guest that keeps the
  firmware's timer never makes (realmode's `sti; hlt` was never woken);
- intr-self-ipi-sti-window, intr-two-pending-in-order (and their x2APIC
  twins): an injection where the last one was had to wait one guest
  instruction (the interrupt-storm step), so a self-IPI sent with IF=0
  came after the CLI that follows `sti; nop` every other time, and the
  second of two pending ones after the next test (eventinj's vec 32/33,
  vmexit's self_ipi_sti_nop);
- intr-self-ipi-sti-hlt: the same across `sti; hlt`;
- intr-8259-pending-sti-hlt: the 8259's INT held back by the STI shadow
  waited for an interrupt-window exit, which never wakes a HLT on Bochs
  (realmode's sti_inhibit hung);
- intr-nmi-nested-after-iret, intr-nmi-iret-in-handler: without virtual
  NMIs no exit came at the guest's IRET, so an NMI sent from the NMI
  handler waited for some later exit (eventinj's two NMI checks)."""
import pytest

import bootlib

PROFILES = ["default", "pipe-pingpong", "apic-virtual", "pipe-pingpong-direct"]
CHECKS = ["intr-firmware-timer-wakes-hlt", "intr-self-ipi-sti-window", "intr-two-pending-in-order", "intr-self-ipi-sti-hlt",
          "intr-8259-pending-sti-hlt", "intr-nmi-nested-after-iret", "intr-nmi-iret-in-handler",
          "intr-self-ipi-sti-window-x2apic", "intr-two-pending-in-order-x2apic",
          "intr-x2apic-eoi-nonzero-gp"]


@pytest.fixture(scope="module")
def runs(boot_out):
    out = boot_out / "vmx-intr-delivery"
    guest = bootlib.build_guest("handlers")
    isos = [bootlib.build_iso(bootlib.build_hv(p), guest, out / f"{p}.iso",
                              guest_args="interrupts-only firmware-pic") for p in PROFILES]
    results = bootlib.run_parallel([
        lambda i=iso, p=p: bootlib.run_bochs(i, bootlib.DEFAULT_CPU, out / f"{p}.serial")
        for iso, p in zip(isos, PROFILES)])
    return dict(zip(PROFILES, results))


@pytest.mark.parametrize("profile", PROFILES)
def test_interrupts_on_time(runs, profile):
    r = runs[profile]
    for c in CHECKS:
        r.expect(rf"^PASS: {c}$")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(rf"^guest handlers: {len(CHECKS)} passed, 0 failed$")
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())
