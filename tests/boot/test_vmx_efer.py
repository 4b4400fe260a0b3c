# SPDX-License-Identifier: GPL-2.0-only
"""IA32_EFER and long mode, with EFER switched both ways.

Every CPU model the project targets has "load IA32_EFER", so the manual
fallback (WRMSR on the exit path) never runs in the profile boots.  This
test builds a variant of the default profile with IA32_EFER switched by
hand -- generated into the build directory with the generator's --out,
never into profiles/ -- and boots, with it and with the default profile:
- the handlers guest (every check, EFER's included);
- the bench guest with `cr8`, which at the end enables PAE paging with
  EFER.LME and must find itself in IA-32e mode (EFER.LMA), then leaves
  through isa-debug-exit from 64-bit code."""

import pytest

import bootlib

VARIANT = "vmx-test-efer-manual"
GUESTS = {"handlers": "quick", "bench": "iters=20 warmup=5 cr8 nointr"}


def build_manual_variant(out):
    """The default profile with IA32_EFER switched by hand, built into out."""
    return bootlib.build_profile_variant(
        "default", VARIANT,
        [(r"^([ \t]+IA32_EFER:[ \t]*)\{[^}\n]*\}", r"\g<1>{switch: manual, access: trap}")],
        out, "tests/boot/test_vmx_efer.py")


@pytest.fixture(scope="module")
def efer_runs(hv_elf, boot_out):
    out = boot_out / "vmx-efer"
    hvs = {"atomic": hv_elf, "manual": build_manual_variant(out)}
    guests = {g: bootlib.build_guest(g) for g in GUESTS}
    keys, jobs = [], []
    for mode, hv in hvs.items():
        for g, args in GUESTS.items():
            iso = bootlib.build_iso(hv, guests[g], out / f"{mode}-{g}.iso", guest_args=args)
            keys.append((mode, g))
            jobs.append(lambda i=iso, s=out / f"{mode}-{g}.serial":
                        bootlib.run_bochs(i, bootlib.DEFAULT_CPU, s))
    return dict(zip(keys, bootlib.run_parallel(jobs)))


@pytest.mark.parametrize("mode", ["atomic", "manual"])
def test_efer_gate_line(efer_runs, mode):
    r = efer_runs[(mode, "handlers")]
    if mode == "atomic":
        r.expect(r"^gate efer: .*\(load_ia32_efer\)$")
    else:
        # Switched by hand unconditionally: no gate to report.
        assert not r.find(r"^gate efer:"), r.describe()


@pytest.mark.parametrize("mode", ["atomic", "manual"])
def test_handlers_pass(efer_runs, mode):
    r = efer_runs[(mode, "handlers")]
    m = r.expect(r"^guest handlers: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) > 0 and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()


@pytest.mark.parametrize("mode", ["atomic", "manual"])
def test_guest_enters_long_mode(efer_runs, mode):
    r = efer_runs[(mode, "bench")]
    r.expect(r"^PASS: bench-long-mode$")
    assert not r.find(r"^FAIL"), r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())
