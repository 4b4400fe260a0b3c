# SPDX-License-Identifier: GPL-2.0-only
"""The isolation guest's CPU attacks (tests/guest/isolation/cpu_attacks.c)
are contained and reported, and the hypervisor's own report still ends
the run (an exit-status line, no panic, no hang):

- nmi-root: NMIs to the guest's own APIC through the trapped x2APIC ICR
  are raised while the CPU is in VMX root operation (the WRMSR's exit);
  the hypervisor emulates them as virtual NMIs (apic.c), so no physical
  NMI arrives there (the report's nmis_in_root stays 0), and each reaches
  the guest's NMI handler, none the hypervisor's panic.
- reserved-xcr0: XSETBV of reserved XCR0 combinations (half of the MPX or
  AMX pair, x87 clear, XCR 1) is the guest's #GP, never the host's.
- interrupt-storm: a periodic APIC timer with a tiny count; the guest's
  own loop still ends (each injection where the last one was first lets
  the guest retire an instruction, events.c: the report's storm_steps is
  not 0), and the run ends by itself.
- mmio-exec-vga, mmio-exec-ioapic: a jump into device memory is an EPT
  violation that stops the guest with a report naming the fetch: VGA
  memory is mapped without execute permission, the I/O APIC page not at
  all (its accesses are emulated, arch/vmx/ioapic_exits.c)."""
import pytest

import bootlib

EVENTS_RE = (r"^exitplan: events: (\d+) NMIs in root operation given to the guest, "
             r"(\d+) kicks taken in root operation, (\d+) interrupt-storm steps$")
NONFATAL = ["nmi-root", "reserved-xcr0", "interrupt-storm"]
FATAL = {
    "mmio-exec-vga": 0xa0000,
    "mmio-exec-ioapic": 0xfec00000,
}


@pytest.fixture(scope="module")
def cpu_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("isolation")
    out = boot_out / "vmx-isolation-cpu"
    names = NONFATAL + list(FATAL)
    isos = [bootlib.build_iso(hv_elf, guest, out / f"{name}.iso", guest_args=f"attack={name}")
            for name in names]
    runs = bootlib.run_parallel([
        lambda i=iso, name=name: bootlib.run_bochs(i, bootlib.DEFAULT_CPU, out / f"{name}.serial")
        for iso, name in zip(isos, names)])
    return dict(zip(names, runs))


@pytest.mark.parametrize("attack", NONFATAL)
def test_cpu_attack_refused(cpu_runs, attack):
    r = cpu_runs[attack]
    r.expect(rf"^isolation: attacking {attack}\b")
    r.expect(rf"^PASS: {attack}$")
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^exitplan: PANIC"), r.describe()
    if attack == "interrupt-storm":
        # How many interrupts came depends on the emulator's timing: only that some did.
        m = r.expect(r"^isolation: interrupt-storm: 500 loops done under (\d+) interrupts$")
        assert int(m.group(1)) > 0, r.describe()
    # The hypervisor's event counters (arch/vmx/vmx_report.c, docs/STATS.md).
    m = r.expect(EVENTS_RE)
    nmis, kicks, steps = (int(x) for x in m.groups())
    assert kicks == 0, m.group(0)		# no interrupts: direct, so no kick NMI
    if attack == "interrupt-storm":
        # Injections landed where the last one had: the guest was given steps.
        assert steps > 0, m.group(0)
    if attack == "nmi-root":
        # The ICR's NMIs are emulated, virtual NMIs (apic.c): no physical
        # NMI arrived in root operation for events.c to hand on.
        assert nmis == 0, m.group(0)
    r.expect(r"^guest isolation: 1 passed, 0 failed$")
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


@pytest.mark.parametrize("attack", sorted(FATAL))
def test_mmio_execute_stopped(cpu_runs, attack):
    r = cpu_runs[attack]
    gpa = FATAL[attack]
    r.expect(rf"^isolation: attacking {attack}\b")
    if attack == "mmio-exec-ioapic":
        where = "the I/O APIC page"
    else:
        where = "MMIO"
        r.expect(rf"^exitplan: EPT violation: guest fetch of GPA {gpa:#x} at RIP {gpa:#x}, ")
    r.expect_hv(rf"^exitplan: guest stopped: EPT violation: instruction fetch from {where} at GPA "
                rf"{gpa:#x} \(RIP {gpa:#x}\): device memory is not executable$")
    assert not r.find(r"^exitplan: guest exit status"), r.describe()
    assert not r.find(r"^FAIL"), r.describe()
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_long_mode_checks_under_vmexit_bench(boot_out):
    """IA-32e mode under a profile with CR8 exiting (vmexit-bench): a
    64-bit MOV CR8 with bits 63:4 set is the guest's #GP, never the
    host's, and in compatibility mode MOV CR0,EAX takes EAX alone, stale
    RAX[63:32] or not; `or %eax,0x1000(%r12)` on the local APIC's TPR and
    REX.W forms where no device answers are emulated as the CPU runs them
    (tests/guest/bench/lm64.S; all pass on bare Bochs)."""
    hv = bootlib.build_hv("vmexit-bench")
    guest = bootlib.build_guest("bench")
    out = boot_out / "vmx-isolation-cpu"
    iso = bootlib.build_iso(hv, guest, out / "lm64.iso", guest_args="iters=20 warmup=5 cr8 nointr")
    r = bootlib.run_bochs(iso, bootlib.DEFAULT_CPU, out / "lm64.serial")
    r.expect(r"^PASS: bench-long-mode$")
    r.expect(r"^PASS: lm64-cr8-reserved-gp$")
    r.expect(r"^PASS: lm64-compat-cr0-eax$")
    r.expect(r"^PASS: lm64-mmio-or$")
    r.expect(r"^PASS: lm64-mmio-unclaimed$")
    assert not r.find(r"^FAIL"), r.describe()
    assert not r.find(r"^exitplan: PANIC"), r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
