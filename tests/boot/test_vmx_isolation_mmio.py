# SPDX-License-Identifier: GPL-2.0-only
"""The isolation guest's attacks through device MMIO
(tests/guest/isolation/mmio_attacks.c) are contained, reported on the
hypervisor's own channel (port 0xE9, bootlib.BootResult.hv), and the
hypervisor's report still ends the run.

- ioapic: I/O APIC redirection entries with delivery mode SMI, INIT,
  NMI, ExtINT and reserved read back masked; the IOAPIC ID cannot be
  changed; the version register, the IOREGSEL latch and a fixed entry
  are what hardware gives (runtime/devices/ioapic.c).
- lvt: local APIC LVT entries (thermal, performance counter) with delivery
  mode SMI, INIT and a reserved one read back masked, the first reported;
  a masked fixed entry reads back as written (arch/vmx/apic.c).
- hpet: the HPET is absent (its registers read all ones), and timer 0 in
  FSB delivery aimed at a guest word writes nothing (arch/vmx/ioapic_exits.c).
- unclaimed: loads of every size from an address nothing claims (a hole
  in the PCI range) read all ones, merged into the register as hardware
  merges them, and stores there change nothing; the VGA window and the
  VBE framebuffer, which no profile grants, are the same under exitplan
  (EPT maps only what the runtime grants, arch/vmx/ept.c; the rest is
  answered by arch/vmx/ept_exits.c); the first write is reported.
- mmio-unemulated: CALL through a pointer in the PCI hole, which exitplan
  does not emulate on MMIO, stops the guest with a report naming all
  the instruction's bytes (15 fetched) and the hypervisor's report ends
  the run.
- apic-unaligned: XADD loads of 1, 2 and 4 bytes at xAPIC page bytes no
  register holds (bytes 4-15 of a 16-byte slot: 0x84, 0x88, 0x8c, 0x24)
  read 0 and the run goes on to the hypervisor's report: exitplan reads
  the physical APIC only at a register's own offset (arch/vmx/apic.c;
  Bochs's APIC panics on the others).  The same loads under apic: virtual
  are test_vmx_vlapic.py's.
- ioapic-byte: a byte write to IOREGSEL stops the guest with a report,
  and Bochs keeps running to the hypervisor's report.
- apic-stack: INT3 with the stack in the local APIC page: the delivery's
  push exits (IDT-vectoring information valid) and stops the guest with
  a report, instead of the instruction at RIP being emulated as an APIC
  write (arch/vmx/ept_exits.c).
- mmio-exec-ioapic (test_vmx_isolation_cpu.py) covers the fetch."""
import re

import pytest

import bootlib

# attack: (PASS lines, hypervisor report lines on port 0xE9)
NONFATAL = {
    "ioapic": (["ioapic-version", "ioapic-ioregsel", "ioapic-fixed-entry", "ioapic-smi-masked",
                "ioapic-init-masked", "ioapic-nmi-masked", "ioapic-extint-masked",
                "ioapic-reserved-masked", "ioapic-id-kept"],
               [r"^exitplan: guest I/O APIC redirection entry 23 written masked: delivery mode SMI "
                r"\(low dword 0x246\) is not the guest's; later ones are not reported$"]),
    "lvt": (["lvt-fixed-entry", "lvt-thermal-smi-masked", "lvt-perf-init-masked",
             "lvt-perf-reserved-masked"],
            [r"^exitplan: guest local APIC LVT entry 0x330 written masked: delivery mode SMI "
             r"\(0x247\) is not the guest's; later ones are not reported$"]),
    "hpet": (["hpet-absent", "hpet-fsb-no-write"],
             [r"^exitplan: guest write of 0 to the HPET at 0xfed00010 dropped \(the HPET is not "
              r"the guest's: FSB delivery writes any address\); later ones are not reported$"]),
    "unclaimed": (["unclaimed-read", "unclaimed-write", "vga-not-granted", "lfb-not-granted"],
                  [r"^exitplan: guest write of 0x5a5a5a5a to GPA 0xd0000000 dropped \(no device "
                   r"the guest is granted claims it\); later ones are not reported$"]),
    "apic-unaligned": (["apic-unaligned-reads-zero", "apic-unaligned-tpr-kept"], []),
}
FATAL = ["mmio-unemulated", "ioapic-byte", "apic-stack"]


@pytest.fixture(scope="module")
def runs(hv_elf, boot_out):
    guest = bootlib.build_guest("isolation")
    out = boot_out / "vmx-isolation-mmio"
    names = list(NONFATAL) + FATAL
    isos = [bootlib.build_iso(hv_elf, guest, out / f"{name}.iso", guest_args=f"attack={name}")
            for name in names]
    results = bootlib.run_parallel([
        lambda i=iso, name=name: bootlib.run_bochs(i, bootlib.DEFAULT_CPU, out / f"{name}.serial")
        for iso, name in zip(isos, names)])
    return dict(zip(names, results))


def test_device_pages_not_mapped(runs):
    r = runs["ioapic"]
    # The I/O APIC's address is the one Bochs's MADT gives.
    r.expect_hv(r"^exitplan: EPT: the I/O APIC page 0xfec00000 \(MADT\) and the HPET page "
                r"0xfed00000( \(ACPI HPET table\))? are emulated, not mapped$")


def test_unclaimed_write_reported_once(runs):
    r = runs["unclaimed"]
    assert len(re.findall(r"^exitplan: guest write of .* dropped \(no device", r.hv, re.M)) == 1, r.hv


@pytest.mark.parametrize("attack", list(NONFATAL))
def test_mmio_attack_contained(runs, attack):
    r = runs[attack]
    passes, reports = NONFATAL[attack]
    r.expect(rf"^isolation: attacking {re.escape(attack)} \(")
    assert not r.find(r"^(FAIL|SKIP): "), r.describe()
    for name in passes:
        r.expect(rf"^PASS: {re.escape(name)}$")
    for pattern in reports:
        r.expect_hv(pattern)
    r.expect(rf"^guest isolation: {len(passes)} passed, 0 failed$")
    r.expect_hv(r"^exitplan: guest exit status 1$")
    assert r.hv.splitlines()[-1] == "exitplan: exit status 1", r.describe()
    r.expect_clean_exit(1)
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_ioapic_refusal_reported_once(runs):
    r = runs["ioapic"]
    assert len(re.findall(r"^exitplan: guest I/O APIC redirection entry", r.hv, re.M)) == 1, r.hv


def test_lvt_refusal_reported_once(runs):
    r = runs["lvt"]
    assert len(re.findall(r"^exitplan: guest local APIC LVT entry", r.hv, re.M)) == 1, r.hv


def test_ioapic_byte_write_stops_the_guest(runs):
    r = runs["ioapic-byte"]
    r.expect(r"^isolation: attacking ioapic-byte \(")
    r.expect_hv(r"^exitplan: guest stopped: I/O APIC write of 1 byte\(s\) at GPA 0xfec00000 "
                r"\(RIP 0x[0-9a-f]+\): only aligned 32-bit accesses are defined \(82093AA\)$")
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^exitplan: guest exit status"), r.describe()
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_unemulated_instruction_stops_the_guest(runs):
    r = runs["mmio-unemulated"]
    r.expect(r"^isolation: attacking mmio-unemulated \(")
    # CALL m32 (FF /2) with a disp32 of 0xd0000000: all 15 bytes fetched, then the parenthesis.
    r.expect_hv(r"^exitplan: guest stopped: read of an unclaimed address at GPA 0xd0000000 by an "
                r"instruction exitplan does not emulate \(RIP 0x[0-9a-f]+, bytes ff 15 00 00 00 d0"
                r"( [0-9a-f]{2}){9}\)$")
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^exitplan: guest exit status"), r.describe()
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_event_delivery_onto_the_apic_page_stops_the_guest(runs):
    r = runs["apic-stack"]
    r.expect(r"^isolation: attacking apic-stack \(")
    r.expect_hv(r"^exitplan: guest stopped: delivery of event 0x[0-9a-f]+ touched the local APIC "
                r"page at GPA 0xfee003f[0-9a-f] \(RIP 0x[0-9a-f]+\)$")
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^exitplan: guest exit status"), r.describe()
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())
