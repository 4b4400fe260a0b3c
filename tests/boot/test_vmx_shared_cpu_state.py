# SPDX-License-Identifier: GPL-2.0-only
"""What VMX does not switch survives vCPUs sharing a CPU (issue 11;
arch/vmx/vcpu_switch.c, spec/msrs.yaml `resident`).

The SMP guest's cpu-state-kept check: every vCPU writes DR0-DR3, DR6 and
the MSRs exitplan executes for it without switching them (the SYSCALL
MSRs, KERNEL_GS_BASE, TSC_AUX; IA32_XSS where the CPU has a supervisor
state component), spins on PAUSE until every other vCPU has written its
own -- on one CPU the others run meanwhile -- and reads them back.
Without the save on switch-out and the load on switch-in the vCPUs of a
CPU see each other's values.  3 vCPUs on 1 CPU under the overcommit
profile (PAUSE-loop exiting, apic: virtual), the boot test_vmx_overcommit
runs at 4 on 2 checks it too."""
import pytest

import bootlib

NCPU, NVCPU = 1, 3


@pytest.fixture(scope="module")
def run(boot_out):
    smp = bootlib.build_guest("smp")
    out = boot_out / "vmx-shared-cpu-state"
    iso = bootlib.build_iso(bootlib.build_hv("overcommit"), smp, out / "smp-3on1.iso",
                            hv_args=f"vcpus={NVCPU}")
    return bootlib.run_bochs(iso, "corei7_skylake_x", out / "smp-3on1.serial", ncpu=NCPU)


def test_each_vcpu_keeps_its_debug_registers_and_msrs(run):
    r = run
    r.expect(r"^smp: %d CPUs in the MADT" % NVCPU)
    kept = r.findall(r"^PASS: cpu-state-kept$")
    assert len(kept) == NVCPU, r.describe()
    assert not r.find(r"^FAIL"), r.describe()
    r.expect_clean_exit(1)
