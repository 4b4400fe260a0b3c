# SPDX-License-Identifier: GPL-2.0-only
"""The fuzz guest (tests/guest/fuzz/, docs/GUESTS.md) under exitplan: random
exiting instructions with random operands, seeded.  For every seed the
hypervisor neither panics nor hangs, and its own exit-status report is the
last line of the run.  A seed without `stops` must also have run every
instruction (`PASS: fuzz-seed-N`): a guest that died early would otherwise
pass for a hypervisor that survived it.  A `stops` seed ends early by
design (a reset, a power-off, SHUTDOWN, HLT with IF=0, a read of the
hypervisor's memory), and exitplan must say so in its report.

`make test` runs the few seeds below; `make fuzz SEEDS=1-200
ITERATIONS=50000 [FUZZ_ARGS=stops] [NCPU=2] [VCPUS=3]` runs as many as
asked, through the same checks (EXITPLAN_FUZZ_SEEDS, _ITERATIONS, _ARGS,
_NCPU, _VCPUS).  With more than one vCPU the guest fuzzes on every vCPU
at once (its `smp` option), with bursts of WRMSRs the CPU refuses among
them, so that CPUs fault in the hypervisor at the same time (issue 24:
a fault handler slot shared by all CPUs panicked it); more vCPUs than
CPUs run under the overcommit profile.  A failing seed is rerun
exactly by `make run GUEST=fuzz GUEST_ARGS="seed=N iterations=M trace"`
(with NCPU=, VCPUS=, PROFILE= as the case says), which prints every
instruction the BSP runs before it runs."""
import os
import re
from typing import NamedTuple

import pytest

import bootlib

class Case(NamedTuple):
    seed: int
    args: str = ""
    ncpu: int = 1
    vcpus: int = 0		# 0: one per CPU

    @property
    def smp(self):
        return max(self.ncpu, self.vcpus) > 1

    @property
    def profile(self):
        # More vCPUs than CPUs needs apic: virtual.
        return "overcommit" if self.vcpus > self.ncpu else None


# Three complete runs and one that ends itself on one vCPU; then every
# vCPU at once: 2 on 2 CPUs, 3 on 1.
DEFAULT_CASES = [Case(1), Case(2), Case(3), Case(5, "stops"),
                 Case(1, ncpu=2), Case(2, ncpu=1, vcpus=3)]
DEFAULT_ITERATIONS = 2000


def parse_seeds(text):
    """'1-5,9' -> [1, 2, 3, 4, 5, 9]."""
    seeds = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        seeds.extend(range(int(first), int(last or first) + 1))
    return seeds


def cases():
    if "EXITPLAN_FUZZ_SEEDS" not in os.environ:
        return DEFAULT_CASES, DEFAULT_ITERATIONS
    args = os.environ.get("EXITPLAN_FUZZ_ARGS", "").strip()
    ncpu = int(os.environ.get("EXITPLAN_FUZZ_NCPU") or 1)
    vcpus = int(os.environ.get("EXITPLAN_FUZZ_VCPUS") or 0)
    return ([Case(s, args, ncpu, vcpus) for s in parse_seeds(os.environ["EXITPLAN_FUZZ_SEEDS"])],
            int(os.environ.get("EXITPLAN_FUZZ_ITERATIONS", DEFAULT_ITERATIONS)))


CASES, ITERATIONS = cases()


def case_id(case):
    """seed5-stops, seed2-3on1: a test id, and the name of its ISO and serial files."""
    name = f"seed{case.seed}" + ("-" + re.sub(r"[^A-Za-z0-9]+", "-", case.args) if case.args else "")
    if case.smp:
        name += f"-{max(case.vcpus, case.ncpu)}on{case.ncpu}"
    return name


def guest_args(case):
    return (f"seed={case.seed} iterations={ITERATIONS}" + (f" {case.args}" if case.args else "") +
            (" smp" if case.smp else ""))


def rerun(case):
    return ("make run GUEST=fuzz" + (f" PROFILE={case.profile}" if case.profile else "") +
            (f" NCPU={case.ncpu}" if case.ncpu > 1 else "") +
            (f" VCPUS={case.vcpus}" if case.vcpus else "") +
            f" GUEST_ARGS=\"{guest_args(case)} trace\"")


@pytest.fixture(scope="module")
def fuzz_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("fuzz")
    out = boot_out / "vmx-fuzz"
    # A boot takes about 8 s, 2000 instructions about 6 s more on Bochs;
    # the limit is generous, a hang still ends as timed_out.
    timeout = 60 + ITERATIONS // 50

    def run(case):
        elf = bootlib.build_hv(case.profile) if case.profile else hv_elf
        iso = bootlib.build_iso(elf, guest, out / f"{case_id(case)}.iso",
                                hv_args=f"vcpus={case.vcpus}" if case.vcpus else "",
                                guest_args=guest_args(case))
        # Every vCPU runs the whole stream: more of them on a CPU take longer.
        r = bootlib.run_bochs(iso, bootlib.DEFAULT_CPU, out / f"{case_id(case)}.serial",
                              timeout=timeout * max(1, case.vcpus // case.ncpu), ncpu=case.ncpu)
        # 10 MB each, and make fuzz may run hundreds: keep only the ISOs
        # of runs that did not end with a report, to boot them again.
        if r.exit_status is not None and not r.panicked:
            iso.unlink()
        return r

    return dict(zip(CASES, bootlib.run_parallel([lambda c=c: run(c) for c in CASES])))


def verdict_is_last_line(r):
    """The hypervisor's exit-status report is the last line of its own
    channel (port 0xE9, where bootlib reads the verdict) and of COM1:
    nothing the guest did came after it."""
    last = [text.rstrip("\n").rsplit("\n", 1)[-1] for text in (r.hv, r.serial)]
    return r.exit_status is not None and all(bootlib.EXIT_STATUS_RE.fullmatch(l) for l in last)


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_hypervisor_survives_the_fuzzer(fuzz_runs, case):
    seed, args = case.seed, case.args
    r = fuzz_runs[case]
    again = f"rerun it: {rerun(case)} (every instruction printed before it runs)"
    r.expect(rf"^fuzz: seed {seed}, {ITERATIONS} instructions")
    try:
        r.expect_clean_exit()
    except AssertionError as e:
        raise AssertionError(f"{e}\n{again}") from None
    assert verdict_is_last_line(r), f"the exit-status report is not the last line\n{r.describe()}\n{again}"
    if "stops" in args.split():
        # Ended by the guest or by the fuzzer's last instruction; either
        # way exitplan reported how.
        assert r.find(r"^exitplan: (guest stopped: |guest exit status |guest powered off)") or \
            r.find(rf"^PASS: fuzz-seed-{seed}$"), r.describe()
    else:
        assert r.find(rf"^PASS: fuzz-seed-{seed}$"), \
            f"the guest did not run all {ITERATIONS} instructions\n{r.describe()}\n{again}"
        if case.smp:
            n = max(case.vcpus, case.ncpu)
            assert r.find(rf"^PASS: fuzz-seed-{seed}-cpus-{n}$"), \
                f"not every vCPU ran all {ITERATIONS} instructions\n{r.describe()}\n{again}"
            # The APs' streams ran and faulted in the hypervisor: each
            # burst WRMSR's #GP came back to the guest.
            assert len(r.findall(r"^fuzz: CPU with APIC ID \d+: %d instructions done$" % ITERATIONS)) == n - 1
            assert not r.find(r"^FAIL: fuzz-wrmsr-canonical"), r.describe()
        r.expect(r"^exitplan: guest exit status 1$")	# outl(0xf4, 0): (0 << 1) | 1
