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
ITERATIONS=50000 [FUZZ_ARGS=stops]` runs as many as asked, through the
same checks (EXITPLAN_FUZZ_SEEDS, EXITPLAN_FUZZ_ITERATIONS,
EXITPLAN_FUZZ_ARGS).  A failing seed is rerun exactly by
`make run GUEST=fuzz GUEST_ARGS="seed=N iterations=M trace"`, which prints
every instruction before it runs."""
import os
import re

import pytest

import bootlib

# (seed, guest arguments): three complete runs and one that ends itself.
DEFAULT_SEEDS = [(1, ""), (2, ""), (3, ""), (5, "stops")]
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
        return DEFAULT_SEEDS, DEFAULT_ITERATIONS
    args = os.environ.get("EXITPLAN_FUZZ_ARGS", "").strip()
    return ([(s, args) for s in parse_seeds(os.environ["EXITPLAN_FUZZ_SEEDS"])],
            int(os.environ.get("EXITPLAN_FUZZ_ITERATIONS", DEFAULT_ITERATIONS)))


CASES, ITERATIONS = cases()


def case_id(case):
    """seed5-stops: a test id, and the name of its ISO and serial files."""
    seed, args = case
    return f"seed{seed}" + ("-" + re.sub(r"[^A-Za-z0-9]+", "-", args) if args else "")


def guest_args(seed, args):
    return f"seed={seed} iterations={ITERATIONS}" + (f" {args}" if args else "")


@pytest.fixture(scope="module")
def fuzz_runs(hv_elf, boot_out):
    guest = bootlib.build_guest("fuzz")
    out = boot_out / "vmx-fuzz"
    # A boot takes about 8 s, 2000 instructions about 6 s more on Bochs;
    # the limit is generous, a hang still ends as timed_out.
    timeout = 60 + ITERATIONS // 50

    def run(case):
        iso = bootlib.build_iso(hv_elf, guest, out / f"{case_id(case)}.iso",
                                guest_args=guest_args(*case))
        r = bootlib.run_bochs(iso, bootlib.DEFAULT_CPU, out / f"{case_id(case)}.serial",
                              timeout=timeout)
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
    seed, args = case
    r = fuzz_runs[case]
    again = (f"rerun it: make run GUEST=fuzz GUEST_ARGS=\"{guest_args(seed, args)} trace\" "
             "(every instruction printed before it runs)")
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
        r.expect(r"^exitplan: guest exit status 1$")	# outl(0xf4, 0): (0 << 1) | 1
