# SPDX-License-Identifier: GPL-2.0-only
"""The bench guest's interrupt paths (tests/guest/bench/intr.c) run under
exitplan and print what make bench parses (tests/bench/intrpaths.py):
every kind's line with a sane figure, its exits by reason, every
interrupt handled.  Under the default
profile (the physical APIC passed through, its ICR and EOI trapped) and
apic: virtual (the model in runtime/devices/vlapic.c); the IPI to another CPU
in a run of its own on two CPUs.  No timing is asserted: a figure must
only be there, be a number of ticks a path can take (more than nothing,
less than a HLT's wait), and come with the exits a path must take (the
ICR write exits in every profile)."""
import re

import pytest

import bootlib

ITERS = 50
ARGS = f"iters={ITERS} warmup=5"
PROFILES = ["default", "apic-virtual"]
ROUND_TRIPS = ["intr-self-ipi-xapic-sti-nop", "intr-self-ipi-xapic-sti-hlt",
               "intr-self-ipi-x2apic-sti-nop", "intr-self-ipi-x2apic-sti-hlt",
               "intr-eoi-xapic", "intr-eoi-x2apic", "intr-tsc-deadline-arm",
               "intr-tsc-deadline-immediate"]
GAPS = ["intr-tsc-deadline-fire", "intr-pit-fire"]
# Sent through the ICR, which every profile traps: at least one exit each.
MUST_EXIT = [k for k in ROUND_TRIPS if "self-ipi" in k]
# Far above any path, far below a timer's wait of many thousand ticks.
SANE_MAX = 50000


@pytest.fixture(scope="module")
def runs(boot_out):
    out = boot_out / "bench-intr"
    guest = bootlib.build_guest("bench")
    keys, jobs = [], []
    for p in PROFILES:
        hv = bootlib.build_hv(p)
        for case, args, ncpu in (("bench", ARGS, 1), ("ipi-other", "ipi-other iters=20", 2)):
            if case == "ipi-other" and p != "default":
                continue
            iso = bootlib.build_iso(hv, guest, out / f"{p}-{case}.iso", guest_args=args)
            keys.append((p, case))
            jobs.append(lambda i=iso, s=out / f"{p}-{case}.serial", n=ncpu:
                        bootlib.run_bochs(i, bootlib.DEFAULT_CPU, s, ncpu=n))
    return dict(zip(keys, bootlib.run_parallel(jobs)))


def kind_line(r, kind, iters=ITERS):
    m = r.expect(rf"^bench: {re.escape(kind)} (\d+) {iters}$")
    return int(m.group(1))


def exits_of(r, kind, what):
    m = r.expect(rf"^bench-exits: {re.escape(kind)} in {ITERS} {what}:((?: [A-Z0-9_]+=\d+)*| none)$")
    words = m.group(1).split()
    return {} if words == ["none"] else {w.split("=")[0]: int(w.split("=")[1]) for w in words}


def late_line(r, kind):
    return r.find(rf"^bench-info: {re.escape(kind)}: (\d+) of (\d+) self-IPIs taken after "
                  r"the STI window$")


@pytest.mark.parametrize("profile", PROFILES)
def test_round_trips(runs, profile):
    r = runs[(profile, "bench")]
    for kind in ROUND_TRIPS:
        if kind.endswith("sti-hlt") and late_line(r, kind.replace("sti-hlt", "sti-nop")):
            # Not run: a HLT after STI would wait (the guest SKIPs it, saying so).
            r.expect(rf"^SKIP: bench-{re.escape(kind)} ")
            continue
        ticks = kind_line(r, kind)
        assert 0 < ticks < SANE_MAX, f"{kind}: {ticks} ticks\n{r.describe()}"
        exits = exits_of(r, kind, "round trips")
        assert "VMCALL" not in exits, f"{kind}: the STATS_READs are left out: {exits}"
        if kind in MUST_EXIT:
            assert sum(exits.values()) >= ITERS, f"{kind}: {exits}\n{r.describe()}"


@pytest.mark.parametrize("profile", PROFILES)
def test_gaps(runs, profile):
    r = runs[(profile, "bench")]
    for kind in GAPS:
        ticks = kind_line(r, kind)
        assert 0 < ticks < SANE_MAX, f"{kind}: {ticks} ticks\n{r.describe()}"
        exits_of(r, kind, "gaps with their arming and EOI")


@pytest.mark.parametrize("profile", PROFILES)
def test_self_ipis_in_the_sti_window(runs, profile):
    """Every self-IPI taken in the window after STI, as hardware takes it
    (vmexit.flat's self_ipi_sti_nop and sti_hlt): none late, and so the
    `sti; hlt` kinds ran (tests/boot/test_vmx_intr_delivery.py has the
    checks of the class)."""
    r = runs[(profile, "bench")]
    for kind in MUST_EXIT:
        late = late_line(r, kind)
        assert late is None, late.group(0)
        kind_line(r, kind)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_interrupt_handled(runs, profile):
    """Every self-IPI handled (how many late: bench-info), every deadline
    and IRQ 0 came."""
    r = runs[(profile, "bench")]
    for name in ["intr-self-ipi-xapic-sti-nop-irqs", "intr-self-ipi-x2apic-sti-nop-irqs",
                 "intr-tsc-deadline-irqs", "intr-pit-irqs"]:
        r.expect(rf"^PASS: bench-{name}$")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(r"^guest bench: \d+ passed, 0 failed$")
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_ipi_to_other_cpu(runs):
    r = runs[("default", "ipi-other")]
    m = r.expect(r"^bench: intr-ipi-other-hlt (\d+) 20$")
    assert 0 < int(m.group(1)) < SANE_MAX, r.describe()
    r.expect(r"^PASS: bench-intr-ipi-other-irqs$")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect_clean_exit()
