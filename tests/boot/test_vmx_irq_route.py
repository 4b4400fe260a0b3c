# SPDX-License-Identifier: GPL-2.0-only
"""The guest's 8254 interrupts follow its routing (issue 11;
arch/vmx/legacy_irq.c): the SMP guest's irq-route option sends channel
0's IRQ 0 to its last AP -- through the I/O APIC pin the MADT's
override names, in physical and in logical destination mode, then
through the 8259 to that AP's LINT0 in ExtINT mode -- with 4 vCPUs on 2
CPUs (the last AP, vCPU 3, lives on CPU 1 and is switched out when the
interrupt comes), in xAPIC and in x2APIC mode (the I/O APIC's 8-bit
destination matched against the x2APIC IDs).  The AP must take the
interrupts and no other vCPU any.

Under the passthrough APIC models (default: the guest's own APICs;
pipe-pingpong-direct: its CPUs' interrupts too) the pin is emulated as
well, the host's 8254 behind it kept masked: irq-route=ioapic, 2 vCPUs
on 2 CPUs, takes the I/O APIC's half (the guest's LINT0 is its physical
APIC's there, unseen by the hypervisor).  Without the emulated pin the
AP would get the host's 8254 at the firmware's rate, an interrupt
source the guest was never given."""
import pytest

import bootlib

SKYLAKE = "corei7_skylake_x"
# name: (profile, CPUs, vCPUs, guest arguments)
RUNS = {
    "4on2-xapic": ("overcommit", 2, 4, "irq-route"),
    "4on2-x2apic": ("overcommit", 2, 4, "irq-route x2apic"),
    "passthrough-xapic": ("default", 2, 2, "irq-route=ioapic"),
    "direct-x2apic": ("pipe-pingpong-direct", 2, 2, "irq-route=ioapic x2apic"),
}
CHECKS = ["irq-route-ioapic-silent", "irq-route-ioapic-physical", "irq-route-ioapic-logical", "irq-route-extint"]


@pytest.fixture(scope="module")
def runs(boot_out):
    smp = bootlib.build_guest("smp")
    out = boot_out / "vmx-irq-route"
    jobs = []
    for name, (profile, ncpu, nvcpu, args) in RUNS.items():
        iso = bootlib.build_iso(bootlib.build_hv(profile), smp, out / f"{name}.iso",
                                hv_args=f"vcpus={nvcpu}", guest_args=args)
        jobs.append(lambda i=iso, n=ncpu, s=out / f"{name}.serial":
                    bootlib.run_bochs(i, SKYLAKE, s, ncpu=n))
    return dict(zip(RUNS, bootlib.run_parallel(jobs, max_workers=2)))


@pytest.mark.parametrize("name", sorted(RUNS))
def test_pit_reaches_the_vcpu_it_is_routed_to(runs, name):
    r = runs[name]
    _, _, nvcpu, args = RUNS[name]
    r.expect(r"^smp: routing the 8254's IRQ 0 \(I/O APIC pin \d+\) to APIC ID %d$" % (nvcpu - 1))
    for check in CHECKS:
        if check == "irq-route-extint" and "irq-route=ioapic" in args:
            r.expect(r"^SKIP: %s" % check)
        else:
            r.expect(r"^PASS: %s$" % check)
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(r"^guest smp: \d+ passed, 0 failed$")
    r.expect_clean_exit(1)
