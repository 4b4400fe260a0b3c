# SPDX-License-Identifier: GPL-2.0-only
"""The isolation guest's attacks through the platform
(tests/guest/isolation/platform_attacks.c) are contained, reported, and
the hypervisor's own report still ends the run, read from its own
channel (port 0xE9, bootlib.BootResult.hv), which the guest cannot write.

- smm: D_OPEN in the i440FX SMRAM register and a write to APM port 0xb2
  (an SMI): the register reads as before, the APM ports are denied.
- dma: the IDE controller as a bus master, an ATAPI READ(10) of the CD
  into the guest's memory: the function is hidden, its bus-master
  registers and the ATA ports are denied, nothing is written.
- pci-config: the PIIX4 PM base moved, its decoding turned off, S1 at the
  moved base: nothing moves, the PM timer still counts, the machine
  neither sleeps nor resets.
- bochs-ports: Bochs's debugger port, its BIOS panic port and the magic
  breakpoint: Bochs keeps running.
- uart-garble: COM1 left in loopback with the FIFOs off, 5-bit words and
  DLAB set: the hypervisor's report still arrives whole on COM1.
- forged-status: the verdict lines on COM1, on port 0xE9 and through PUTS,
  then isa-debug-exit with the value whose status would wrap to
  VMM_GUEST_FAULT: the verdict is the hypervisor's (0x7ffffffd).
Each attack runs in a boot of its own, so that each report is its own
(a dropped PCI write is reported once per boot)."""
import re

import pytest

import bootlib

# attack: (PASS lines, hypervisor report lines on port 0xE9)
NONFATAL = {
    "smm": (["smm-smram-closed", "smm-apm-denied"],
            [r"^exitplan: guest PCI configuration write dropped: 00:00\.0 offset 0x72, 1 byte\(s\) 0x4a "
             r"\(read-only function\); later ones are not reported$",
             r"^exitplan: guest write of 0x5a to port 0xb3 denied \(APM control and status: "
             r"a write to 0xb2 raises an SMI\)$"]),
    "dma": (["dma-ide-hidden", "dma-no-transfer", "dma-bm-registers-denied"],
            [r"^exitplan: guest PCI configuration write dropped: 00:01\.1 offset 0x4, 2 byte\(s\) 0x5 "
             r"\(no such function for the guest\)"]),
    "pci-config": (["pci-config-pm-base", "pci-config-pm-enable", "pci-config-command",
                    "pci-config-pm-timer", "pci-config-moved-sleep"],
                   [r"^exitplan: guest PCI configuration write dropped: 00:01\.3 offset 0x40, "
                    r"4 byte\(s\) 0xc801 \(read-only function\)"]),
    "bochs-ports": (["bochs-ports"],
                    [r"^exitplan: guest write of 0x8a00 to port 0x8a00 denied \(Bochs's debugger ports\)$",
                     r"^exitplan: guest write of 0x4d2 to port 0x400 denied \(Bochs's BIOS debug ports"]),
}
FATAL = ["uart-garble", "forged-status"]
# outl(0xf4, 0xfffffffe): bits 31:30 dropped, (0x3ffffffe << 1) | 1.
FORGED_STATUS = 0x7ffffffd


@pytest.fixture(scope="module")
def runs(hv_elf, boot_out):
    isolation = bootlib.build_guest("isolation")
    status = bootlib.build_guest("status")
    out = boot_out / "vmx-isolation-platform"
    boots = [(a, isolation, f"attack={a}") for a in list(NONFATAL) + FATAL]
    boots += [("status-wrap", status, f"code={0xfffffffe:#x}"),
              ("status-shutdown-wrap", status, f"via=shutdown code={0xfffffffd:#x}")]
    isos = [bootlib.build_iso(hv_elf, guest, out / f"{name}.iso", guest_args=args)
            for name, guest, args in boots]
    results = bootlib.run_parallel([
        lambda i=iso, name=name: bootlib.run_bochs(i, bootlib.DEFAULT_CPU, out / f"{name}.serial")
        for iso, (name, _, _) in zip(isos, boots)])
    return dict(zip([name for name, _, _ in boots], results))


def bochs_ended_by_guest(r):
    """Lines of Bochs's log that say the guest reached the emulator: a
    BIOS panic, a second hardware reset, a message through port 0x402."""
    lines = r.log.splitlines()
    found = [l for l in lines if re.search(r"BIOS panic|magic break|escaped", l, re.I)]
    resets = [l for l in lines if "cpu hardware reset" in l]
    return found + (resets if len(resets) != 1 else [])


@pytest.mark.parametrize("attack", list(NONFATAL))
def test_nonfatal_platform_attack_contained(runs, attack):
    r = runs[attack]
    passes, reports = NONFATAL[attack]
    r.expect(rf"^isolation: attacking {re.escape(attack)} \(")
    assert not r.find(r"^(FAIL|SKIP): "), r.describe()
    for name in passes:
        r.expect(rf"^PASS: {re.escape(name)}$")
    # Reported by the hypervisor, on its own channel.
    for pattern in reports:
        r.expect_hv(pattern)
    r.expect(rf"^guest isolation: {len(passes)} passed, 0 failed$")
    r.expect_hv(r"^exitplan: guest exit status 1$")
    assert r.hv.splitlines()[-1] == "exitplan: exit status 1", r.describe()
    r.expect_clean_exit(1)
    assert not bochs_ended_by_guest(r), "\n".join(bochs_ended_by_guest(r))
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_uart_garbled_by_guest_still_carries_the_report(runs):
    r = runs["uart-garble"]
    r.expect(r"^isolation: attacking uart-garble \(")
    # Whole lines on COM1, after the guest left the UART unusable.
    r.expect(r"^exitplan: guest exit status 1$")
    assert r.lines and r.lines[-1] == "exitplan: exit status 1", r.describe()
    r.expect_hv(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit(1)


def test_forged_status_is_not_the_verdict(runs):
    r = runs["forged-status"]
    r.expect(r"^isolation: attacking forged-status \(")
    # The guest did print the forgery on COM1, and through PUTS...
    assert len(r.findall(r"^exitplan: exit status 0$")) == 2, r.describe()
    forged = r.expect(r"^exitplan: exit status 0$")
    real = r.expect(rf"^exitplan: guest exit status {FORGED_STATUS}$")
    assert forged.start() < real.start(), r.describe()
    # ...but the hypervisor's channel has only the hypervisor's words.
    assert not re.search(r"^exitplan: (guest )?exit status 0$", r.hv, re.M), r.hv
    r.expect_hv(r"^exitplan: guest write of 0x65 to port 0xe9 denied \(the debug console, "
                r"the hypervisor's verdict channel\)$")
    r.expect_hv(rf"^exitplan: guest exit status {FORGED_STATUS}$")
    assert r.exit_status == FORGED_STATUS, r.describe()
    r.expect_clean_exit(FORGED_STATUS)


@pytest.mark.parametrize("run", ["status-wrap", "status-shutdown-wrap"])
def test_guest_status_never_aliases_vmm_codes(runs, run):
    """isa-debug-exit and SHUTDOWN statuses are never negative, so never
    one of the hypervisor's VMM_* results (runtime/vm/vmm.h)."""
    r = runs[run]
    r.expect_hv(rf"^exitplan: guest exit status {FORGED_STATUS}$")
    r.expect_clean_exit(FORGED_STATUS)
