# SPDX-License-Identifier: GPL-2.0-only
"""The isolation guest's attacks on the hypervisor are contained and
reported, and the hypervisor stays up: it prints its report and powers
off by itself (an exit-status line, no panic, no hang).

The attacks are read from the guest's own table (tests/guest/isolation/
main.c), so a new attack is tested without editing this file: each fatal
one gets a boot of its own and must be stopped by the hypervisor (EPT
violation naming hypervisor memory, the triple fault, a reset request) or
end as the guest powering off (ACPI S5, Bochs's shutdown port), never by
the machine itself resetting or powering off; the non-fatal ones run
together and must all be refused inside the guest.

The non-fatal ones run again on a 2-CPU machine, where init-sipi and
nmi-ap have a target: the guest sends INIT, STARTUP, STARTUP, then an NMI,
to the other CPU, which runs the guest's vCPU 1 (every CPU is in VMX
operation, the guest's ICR writes are intercepted and INIT/STARTUP
emulated): the STARTUP starts vCPU 1 inside VMX and EPT, so the code
never runs outside the hypervisor, and the NMI reaches the vCPU as a
virtual NMI; the hypervisor stays up."""
import re

import pytest

import bootlib

GUEST_SRC = bootlib.REPO / "tests" / "guest" / "isolation" / "main.c"
ATTACKS = re.findall(r'^\s*\{ "([a-z0-9-]+)", (attack_\w+), (true|false) \},$',
                     GUEST_SRC.read_text(), re.M)
# The fatal platform attacks end with a report of their own kind:
# test_vmx_isolation_platform.py checks them.
PLATFORM_SRC = GUEST_SRC.with_name("platform_attacks.c")
PLATFORM_FNS = set(re.findall(r"^void (attack_\w+)\(void\)$", PLATFORM_SRC.read_text(), re.M))
# The silent ones end only at the hypervisor's deadline:
# test_vmx_isolation_silent.py boots them with one.
SILENT_FNS = set(re.findall(r"^void (attack_\w+)\(void\)$",
                            GUEST_SRC.with_name("silent_attacks.c").read_text(), re.M))
FATAL = [name for name, fn, fatal in ATTACKS
         if fatal == "true" and fn not in PLATFORM_FNS | SILENT_FNS]
NONFATAL = [name for name, _, fatal in ATTACKS if fatal == "false"]

# What the hypervisor must say about each fatal attack.
RESET_REPORT = (r"^exitplan: guest requested a reset \(.+\)$\n(?:.*\n)*"
                r"exitplan: guest stopped: reset requested through ")
STOP_REPORT = {
    "triple-fault": r"^exitplan: guest stopped: triple fault",
    "reset-kbc": RESET_REPORT + r"keyboard controller command 0xfe",
    "reset-92": RESET_REPORT + r"port 0x92 fast reset",
    "reset-cf9": RESET_REPORT + r"reset control register 0xcf9 \(0x6\)",
    # tests/guest/isolation/cpu_attacks.c (test_vmx_isolation_cpu.py checks the details)
    "mmio-exec-vga": r"^exitplan: guest stopped: EPT violation: instruction fetch from MMIO",
    "mmio-exec-ioapic": r"^exitplan: guest stopped: EPT violation: instruction fetch from the I/O "
                        r"APIC page",
    # tests/guest/isolation/mmio_attacks.c (test_vmx_isolation_mmio.py checks the details)
    "mmio-unemulated": r"^exitplan: guest stopped: read of an unclaimed address at GPA 0xd0000000 by "
                       r"an instruction exitplan does not emulate",
    "ioapic-byte": r"^exitplan: guest stopped: I/O APIC write of 1 byte\(s\) at GPA 0xfec00000",
    "apic-stack": r"^exitplan: guest stopped: delivery of event 0x[0-9a-f]+ touched the local APIC page",
}
# Attacks that are the guest powering off: exit status 0 (runtime/devices/platform.h).
POWER_OFF_REPORT = {
    "acpi-s5": r"^exitplan: guest powered off \(ACPI S5 through PM1a_CNT\)$",
    "bochs-shutdown": r"^exitplan: guest powered off \(\"Shutdown\" to Bochs's port 0x8900\)$",
}
ESCAPE_NCPU = 2
HV_MEMORY_REPORT = r"^exitplan: guest stopped: EPT violation: (read|write) of hypervisor memory"


@pytest.fixture(scope="module")
def isolation_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("isolation")
    out = boot_out / "vmx-isolation"
    # (name, guest arguments, CPUs)
    boots = ([(a, f"attack={a}", 1) for a in FATAL] + [("all-nonfatal", "attack=all-nonfatal", 1)] +
             [(f"all-nonfatal-{ESCAPE_NCPU}cpu", "attack=all-nonfatal", ESCAPE_NCPU)])
    isos = [bootlib.build_iso(hv_elf, guest, out / f"{name}.iso", guest_args=args)
            for name, args, _ in boots]
    runs = bootlib.run_parallel([
        lambda i=iso, name=name, n=n: bootlib.run_bochs(i, bootlib.DEFAULT_CPU,
                                                        out / f"{name}.serial", ncpu=n)
        for iso, (name, _, n) in zip(isos, boots)])
    return dict(zip([name for name, _, _ in boots], runs))


def test_attack_table_found():
    assert FATAL and NONFATAL, f"no attacks parsed from {GUEST_SRC}"


@pytest.mark.parametrize("attack", FATAL)
def test_fatal_attack_contained(isolation_runs, attack):
    r = isolation_runs[attack]
    r.expect(rf"^isolation: attacking {re.escape(attack)}\b")
    assert not r.find(r"^FAIL"), r.describe()
    if attack in POWER_OFF_REPORT:
        r.expect(POWER_OFF_REPORT[attack])
        r.expect(r"^exitplan: guest exit status 0$")
        r.expect_clean_exit(0)
        assert not r.vmx_failures(), "\n".join(r.vmx_failures())
        return
    r.expect(STOP_REPORT.get(attack, HV_MEMORY_REPORT))
    if attack not in STOP_REPORT:
        # The report names the guest-physical address, inside the region.
        m = r.expect(r"^exitplan: EPT violation: guest (?:read|write|fetch) of GPA (0x[0-9a-f]+) "
                     r"at RIP 0x[0-9a-f]+, qualification 0x[0-9a-f]+")
        start, end = r.hv_region()
        assert start <= int(m.group(1), 16) < end, r.describe()
    assert not r.find(r"^exitplan: guest exit status"), r.describe()
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_nonfatal_attacks_refused(isolation_runs):
    r = isolation_runs["all-nonfatal"]
    for attack in NONFATAL:
        r.expect(rf"^isolation: attacking {re.escape(attack)}\b")
    m = r.expect(r"^guest isolation: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) >= len(NONFATAL) and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()


def test_other_cpu_runs_only_as_a_vcpu(isolation_runs):
    """The guest's INIT-SIPI-SIPI to the other CPU starts its vCPU 1 there
    (the code sees the hypervisor bit), never the bare CPU, and its NMI
    there does not take the hypervisor down."""
    r = isolation_runs[f"all-nonfatal-{ESCAPE_NCPU}cpu"]
    r.expect(r"^exitplan: 2 vCPUs: vCPU 0 at the multiboot entry, 1 waiting for STARTUP "
             r"\(one per CPU\)$")
    for attack in ("init-sipi", "nmi-ap"):
        r.expect(rf"^isolation: attacking {attack}\b")
        r.expect(rf"^PASS: {attack}$")
    r.expect(r"^isolation: init-sipi started APIC ID 1 as a vCPU of this guest$")
    assert not r.find(r"escaped"), r.describe()
    # vCPU 1 ran the code (its CPUID) and halted; the machine's stop took it out.
    r.expect(r"^exitplan: exits by reason \(profile 'default', vCPU 1\):$")
    r.expect(r"^exitplan: vCPU 1: .* stopped with the machine \(vCPU 0 stopped it\)$")
    m = r.expect(r"^guest isolation: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) >= len(NONFATAL) and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


# Functions allowed an indirect jump through a table: the generated
# dispatch (its index clamped with array_index_nospec) and the host's own
# interrupt entry (indexed by the vector the CPU delivered).
INDIRECT_JUMP_OWNERS = {"vmx_dispatch_exit", "interrupt_dispatch"}


def test_no_guest_indexed_jump_table_in_the_image(hv_elf):
    """A switch on a guest-chosen value (hypercall number, fw_cfg key, a
    register number from the exit qualification) compiled to a jump table
    is an indirect jump behind a bounds compare the CPU may mispredict
    (Spectre v1); the image is built with -fno-jump-tables."""
    import subprocess
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(hv_elf)],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    owners, func = set(), None
    for line in asm.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            func = m.group(1)
        elif re.search(r"\tjmp\s+\*0x[0-9a-f]+\(,%r\w+,8\)", line):
            owners.add(func)
    assert owners <= INDIRECT_JUMP_OWNERS, f"jump tables in {sorted(owners - INDIRECT_JUMP_OWNERS)}"
