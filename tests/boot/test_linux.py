# SPDX-License-Identifier: GPL-2.0-only
"""Linux as a guest (docs/LINUX.md): the project's kernel (Debian's
linux-source, tinyconfig + tests/linux/kernel.config, cached under
build/linux by `make linux-guest`, which `make test-boot` runs first)
and its initramfs boot under exitplan by the Linux boot protocol on 1, 2
and 4 vCPUs.  Each run must reach /init, which reports the CPUs online,
the clocksource, the APIC mode and the console; Linux must have started
every CPU (through the emulated INIT/SIPI); and the run must end with the
hypervisor's verdict on port 0xE9: the guest's isa-debug-exit code 0,
written by /init's ep-exit.  The same command line as `make run
GUEST=linux` (tests/linux/linux.mk's LINUX_CMDLINE)."""
import re
import sys
import subprocess

import pytest

import bootlib

LINUX_DIR = bootlib.BUILD / "linux"
NCPUS = (1, 2, 4)
# /init ends with poweroff -f: ACPI S5, guest exit status 0 (runtime/devices/platform.h).
SUCCESS = 0


def linux_cmdline() -> str:
    mk = (bootlib.REPO / "tests" / "linux" / "linux.mk").read_text()
    return re.search(r"^LINUX_CMDLINE := (.*)$", mk, re.M).group(1).strip()


def linux_iso(iso, hv_elf, cmdline, hv_args=""):
    """An ISO of exitplan (hv_elf, its options hv_args) with the project's kernel and initramfs."""
    kernel, initrd = LINUX_DIR / "bzImage", LINUX_DIR / "initramfs.cpio.gz"
    iso.parent.mkdir(parents=True, exist_ok=True)
    p = subprocess.run([str(bootlib.BOOT_DIR / "mkiso.sh"), str(iso), str(hv_elf), str(kernel),
                        hv_args, cmdline, str(initrd)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, p.stdout
    return iso


@pytest.fixture(scope="module")
def linux_runs(hv_elf, boot_out):
    # Cached: returns at once when test-boot's make linux-guest built it.
    bootlib.make("linux-guest")
    iso = linux_iso(boot_out / "linux" / "linux.iso", hv_elf, linux_cmdline())
    jobs = [lambda n=n: bootlib.run_bochs(iso, serial=iso.with_name(f"linux-{n}cpu.serial"),
                                          ncpu=n)
            for n in NCPUS]
    return dict(zip(NCPUS, bootlib.run_parallel(jobs)))


@pytest.mark.parametrize("ncpu", NCPUS)
def test_linux_boots_to_init(linux_runs, ncpu):
    r = linux_runs[ncpu]
    r.expect_clean_exit(SUCCESS)
    # The loader: the boot protocol, the kernel at 1 MiB (tinyconfig is not
    # relocatable), the initrd placed.
    r.expect(r"^exitplan: guest 'linux': boot protocol 2\.\d+, \d+ KiB kernel at 0x100000 "
             r"\(needs \d+ KiB\), initrd [1-9]\d* KiB at 0x[0-9a-f]+,")
    # Linux saw its command line, started every CPU and ran /init.
    r.expect(r"^Command line: .*console=ttyS0")
    # Its TSC rate is the one exitplan measured, from CPUID 15H/16H (no
    # tsc_early_khz=): Linux prints the TSC line only where it differs
    # from the processor's (16H, whole MHz).
    hz = int(r.expect(r"^exitplan: TSC (\d+) Hz: CPUID 15H/16H say so").group(1))
    khz = [int(m) * 1000 + int(k) for m, k in
           r.findall(r"^tsc: Detected (\d+)\.(\d{3}) MHz (?:processor|TSC)\r?$")]
    assert khz and khz[-1] == hz // 1000, r.describe()
    # ACPI mode: ACPI_ENABLE to SMI_CMD is emulated (no SMI, no 3 s wait).
    r.expect(r"^exitplan: guest wrote 0xf1 to SMI_CMD 0xb2: ACPI mode on \(SCI_EN emulated, no SMI\)")
    assert not r.find(r"Hardware did not enter ACPI mode"), r.describe()
    r.expect(rf"^smp: Brought up 1 node, {ncpu} CPUs?$")
    r.expect(r"^Run /init as init process")
    r.expect(r"^linux-init: started, kernel 6\.")
    online = "0" if ncpu == 1 else f"0-{ncpu - 1}"
    r.expect(rf"^linux-init: cpus online {online} \({ncpu} in cpuinfo\)$")
    r.expect(r"^linux-init: clocksource tsc$")
    r.expect(r"^linux-init: apic mode xapic$")
    r.expect(r"^linux-init: console ttyS0$")
    r.expect(r"^linux-init: done, powering off\r?$")
    # ACPI's interpreter is up (the DSDT loaded: PCI_Config regions need
    # CONFIG_PCI) and Linux powers off through \_S5, as on a machine.
    r.expect(r"^ACPI: Interpreter enabled")
    assert not r.find(r"^ACPI (Error|Warning)"), r.describe()
    # The verdict is the hypervisor's, on its own channel.
    r.expect_hv(r"guest powered off \(ACPI S5 through PM1a_CNT\)")
    r.expect_hv(r"guest exit status 0$")
    assert not r.find(r"^Kernel panic"), r.describe()
    # Every MSR Linux reads or writes unguarded is answered as hardware
    # would (spec/msrs.yaml): no "unchecked MSR access error".
    assert not r.find(r"unchecked MSR access error"), r.describe()


# The workloads as Linux programs on 2 vCPUs (tests/linux/ep-*.c), each
# under the profile measured from it (profiles/linux-*.yaml); the
# spinlock one under the default profile.  And the overcommit one: the
# spinlock program with 8 threads on 4 vCPUs on 2 CPUs (the scheduler,
# apic: virtual) under profiles/linux-overcommit.yaml.
# (test id, program, profile, CPUs, vCPUs, exitplan.args)
WORKLOADS = (("hrtimer", "hrtimer", "linux-hrtimer", 2, 2, ""),
             ("pingpong", "pingpong", "linux-pipe-pingpong", 2, 2, ""),
             ("spinlock", "spinlock", "default", 2, 2, ""),
             ("overcommit", "spinlock", "linux-overcommit", 2, 4, "8,2000"))
OVERCOMMIT_THREADS, OVERCOMMIT_N = 8, 2000


@pytest.fixture(scope="module")
def workload_runs(boot_out):
    bootlib.make("linux-guest")
    jobs = []
    for name, prog, profile, ncpu, nvcpu, args in WORKLOADS:
        cmdline = f"{linux_cmdline()} exitplan.run={prog}" + (f" exitplan.args={args}" if args else "")
        iso = linux_iso(boot_out / "linux" / f"linux-{name}.iso", bootlib.build_hv(profile),
                        cmdline, hv_args=f"vcpus={nvcpu}" if nvcpu != ncpu else "")
        jobs.append(lambda iso=iso, name=name, ncpu=ncpu, nvcpu=nvcpu: bootlib.run_bochs(
            iso, serial=iso.with_name(f"linux-{name}-{nvcpu}vcpu-{ncpu}cpu.serial"), ncpu=ncpu))
    return dict(zip([w[0] for w in WORKLOADS], bootlib.run_parallel(jobs)))


@pytest.mark.parametrize("name,prog,profile", [w[:3] for w in WORKLOADS])
def test_linux_workload_runs(workload_runs, name, prog, profile):
    r = workload_runs[name]
    r.expect_clean_exit(SUCCESS)
    r.expect_hv(rf"^exitplan \S+ \(profile {re.escape(profile)}\)")
    r.expect(rf"^linux-init: running {prog}( [0-9 ]+)?\r?$")
    r.expect(rf"^linux-init: {prog} exited with status 0\r?$")
    sys.path.insert(0, str(bootlib.REPO / "tests" / "linux"))
    import workloads
    rows = [row for row in workloads.parse(r.serial) if row["workload"] == prog]
    assert len(rows) == 1 and rows[0]["n"] > 0 and rows[0]["mean"] > 0, r.describe()
    # ep-drain: the console had sent everything before the power off.
    r.expect(r"^linux-init: done, powering off\r?$")
    r.expect_hv(r"guest powered off \(ACPI S5 through PM1a_CNT\)")


SCHED_VCPU_RE = re.compile(r"^exitplan: scheduler: vCPU (\d+) on CPU (\d+): (\d+) turns, ", re.M)


def test_linux_overcommit_every_thread_progresses(workload_runs):
    """Linux on 4 vCPUs on 2 CPUs: it finds its 4 CPUs, each vCPU has its
    turns on CPU i mod 2, and every one of the 8 threads takes the lock
    its 2000 times (a thread starved by a lock holder that is never run
    again would hang the run instead)."""
    r = workload_runs["overcommit"]
    r.expect_hv(r"^exitplan: scheduler: 4 vCPUs on 2 CPUs")
    r.expect(r"^smp: Brought up 1 node, 4 CPUs$")
    r.expect(r"^linux-init: cpus online 0-3 \(4 in cpuinfo\)$")
    threads = [tuple(map(int, m)) for m in
               re.findall(r"^spinlock thread (\d+): (\d+) acquisitions, ", r.serial, re.M)]
    assert threads == [(i, OVERCOMMIT_N) for i in range(OVERCOMMIT_THREADS)], r.describe()
    vcpus = [tuple(map(int, m)) for m in SCHED_VCPU_RE.findall(r.serial)]
    assert [(v, c) for v, c, _ in vcpus] == [(i, i % 2) for i in range(4)], r.describe()
    assert all(turns > 0 for _, _, turns in vcpus), r.describe()


def test_workload_lines_parse():
    """The workloads' result lines (tests/linux/ep-workload.h) as rows: no boot."""
    sys.path.insert(0, str(bootlib.REPO / "tests" / "linux"))
    import workloads
    text = ("linux-init: running pingpong\r\n"
            "workload pingpong: n=200 mean=7441 p50=6850 p99=9000 ticks\r\n"
            "workload hrtimer: n=50 mean=10015 p50=10010 p99=10400 ticks\n"
            "workload spinlock: n=4 mean=138 p50=ticks\n")
    rows = workloads.parse(text)
    assert [r["workload"] for r in rows] == ["pingpong", "hrtimer"]
    assert rows[0] == {"workload": "pingpong", "n": 200, "mean": 7441, "p50": 6850, "p99": 9000}
