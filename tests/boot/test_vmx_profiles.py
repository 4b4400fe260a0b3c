# SPDX-License-Identifier: GPL-2.0-only
"""Every profile boots the handlers guest on the four Bochs CPU models the
project targets; every handler check passes, and the gate lines (or the
refusal) are what the profile and the model imply.

The expectations are derived, not copied: which features a model has
comes from its capability MSRs (tests/data/vmx-caps/MODEL.yaml)
evaluated with the detection rules of spec/features.yaml; which gates a
profile has and which features it requires come from profiles/*.yaml
and spec/runtime.yaml.  A model missing a required feature must refuse
the profile naming a missing feature; otherwise each gate line must name
features the model has, or after "no" one it lacks."""
import re
import sys

import pytest
import yaml

import bootlib

sys.path.insert(0, str(bootlib.REPO / "spec"))
import vmxcaps  # noqa: E402

REPO = bootlib.REPO
CAPS_DIR = REPO / "tests" / "data" / "vmx-caps"
MODELS = ["corei7_skylake_x", "corei7_sandy_bridge_2600k", "corei7_haswell_4770",
          "corei7_icelake_u"]
PROFILES = sorted(p.stem for p in (REPO / "profiles").glob("*.yaml"))
GUEST_ARGS = "quick"
# The handlers guest's task switches that succeed (tests/guest/handlers/
# task_checks.c), to and from 32-bit and 16-bit TSSs: each a TASK_SWITCH
# exit the hypervisor emulates.
TASK_CHECKS = ["task-jmp", "task-jmp-back", "task-call-gate", "task-iret", "task-int-gate",
               "task-exception-error-code", "task-ext-interrupt-gate", "task-nmi-gate",
               "task-debug-trap", "task-vm86", "task16-jmp", "task16-call", "task16-iret",
               "task16-exception-error-code"]


def _yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


SPEC_FEATURES = {f["name"]: f for f in _yaml(REPO / "spec" / "features.yaml")["features"]}
SPEC_CONTROLS = {c["key"]: c for c in _yaml(REPO / "spec" / "vmx_controls.yaml")["control_fields"]}
SPEC_MSRS = {m["name"]: m for m in _yaml(REPO / "spec" / "msrs.yaml")["msrs"]}
SPEC_RUNTIME = _yaml(REPO / "spec" / "runtime.yaml")


class ModelCaps:
    """One CPU model's capability MSRs, and spec/features.yaml's detection
    rules evaluated on them by spec/vmxcaps.py (SDM Vol. 3D Appendix A)."""

    def __init__(self, model):
        self.data = _yaml(CAPS_DIR / f"{model}.yaml")

    def has(self, feature):
        present = vmxcaps.feature_present(self.data, SPEC_CONTROLS, SPEC_FEATURES[feature])
        # None: a CPUID rule; the caps files hold MSRs only, and every
        # model listed has VMX.
        return True if present is None else present


def profile_expectations(name):
    """(required features, {gate name: the feature its first choice needs})."""
    p = _yaml(REPO / "profiles" / f"{name}.yaml")
    required = [f["feature"] for f in SPEC_RUNTIME["required_features"]]
    required += (p.get("features") or {}).get("require", [])
    gates = {}
    for feature in ((p.get("features") or {}).get("prefer") or {}):
        gates[feature] = feature
    for msr, pol in ((p.get("msrs") or {}).items()):
        if isinstance(pol, dict) and pol.get("switch") == "atomic" and pol.get("fallback"):
            gates[msr.removeprefix("IA32_").lower()] = SPEC_MSRS[msr]["vmcs"]["feature"]
    pause = (p.get("execution") or {}).get("pause")
    if isinstance(pause, dict) and pause.get("mode") == "loop" and pause.get("fallback"):
        # "loop" is PAUSE-loop exiting (spec/profile.schema.json).
        gates["pause"] = "pause_loop_exiting"
    return required, gates


@pytest.fixture(scope="module")
def matrix(boot_out):
    """Build every profile once and boot each on each model, two at a time."""
    guest = bootlib.build_guest("handlers")
    isos = {}
    for prof in PROFILES:
        hv = bootlib.build_hv(prof)
        isos[prof] = bootlib.build_iso(hv, guest, boot_out / "vmx-profiles" / f"{prof}.iso",
                                       guest_args=GUEST_ARGS)
    jobs, keys = [], []
    for prof in PROFILES:
        for model in MODELS:
            serial = boot_out / "vmx-profiles" / f"{prof}-{model}.serial"
            jobs.append(lambda i=isos[prof], m=model, s=serial: bootlib.run_bochs(i, m, s))
            keys.append((prof, model))
    return dict(zip(keys, bootlib.run_parallel(jobs)))


def test_caps_evaluator_knows_the_models():
    """Sanity of the evaluator on facts PLATFORM.md states."""
    assert ModelCaps("corei7_skylake_x").has("pause_loop_exiting")
    assert not ModelCaps("corei7_sandy_bridge_2600k").has("pause_loop_exiting")
    assert not ModelCaps("core2_penryn_t9600").has("ept")
    assert all(ModelCaps(m).has("ept") and ModelCaps(m).has("load_ia32_efer") for m in MODELS)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("profile", PROFILES)
def test_profile_on_model(matrix, profile, model):
    r = matrix[(profile, model)]
    caps = ModelCaps(model)
    required, gates = profile_expectations(profile)
    missing = [f for f in required if not caps.has(f)]

    if missing:
        m = r.expect(rf"^exitplan: profile '{re.escape(profile)}' refused: "
                     r"this CPU lacks (\S+)$")
        assert m.group(1) in missing, r.describe()
        assert not r.find(r"^exitplan: launching the guest"), r.describe()
        r.expect_clean_exit()
        return

    assert not r.find(r"refused"), r.describe()
    # EPT: the hypervisor and the MMIO test page are left out of the guest's map.
    r.expect(r"^exitplan: EPT: .*hypervisor \[%#x, %#x\) and MMIO test page "
             r"0xfeb00000 not mapped$" % r.hv_region())
    printed = dict(re.findall(r"^gate (\S+): (.*)$", r.serial, re.M))
    for gate, feature in gates.items():
        assert gate in printed, f"no gate line for {gate}\n{r.describe()}"
    for gate, text in printed.items():
        m = re.search(r"\((no )?([a-z0-9_]+(?:, [a-z0-9_]+)*)\)$", text)
        assert m, f"gate line without its feature: {gate}: {text}"
        for feature in m.group(2).split(", "):
            if m.group(1):
                assert not caps.has(feature), f"{model} has {feature}: gate {gate}: {text}"
            else:
                assert caps.has(feature), f"{model} lacks {feature}: gate {gate}: {text}"
        if gate in gates:
            # The preferred choice is taken exactly when the model has its feature.
            assert bool(m.group(1)) == (not caps.has(gates[gate])), f"gate {gate}: {text}"

    m = r.expect(r"^guest handlers: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) > 0 and int(m.group(2)) == 0, r.describe()
    assert not r.find(r"^FAIL"), r.describe()
    for check in TASK_CHECKS:
        r.expect(rf"^PASS: {check}$")
    # The exit summary, then the status: the handlers guest leaves
    # through isa-debug-exit with code 0.
    stats = _yaml(REPO / "profiles" / f"{profile}.yaml").get("statistics", "counts")
    if stats in ("off", False):  # YAML 1.1 reads a bare off as false
        r.expect(r"^exitplan: exit statistics are off")
    else:
        r.expect(r"^exitplan: exits by reason")
        r.expect(r"^ +\d+ CPUID +\d+")
        r.expect(r"^ +9 TASK_SWITCH +\d+")
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
    assert not r.vmx_failures(), "\n".join(r.vmx_failures())


def test_handlers_with_2_gib(boot_out):
    """With 2 GiB of RAM the hypervisor moves to its top (issue 9 item 2):
    the guest's map shows RAM from 1 MiB to the region in one range, and
    every handler check passes."""
    guest = bootlib.build_guest("handlers")
    iso = bootlib.build_iso(bootlib.build_hv("default"), guest,
                            boot_out / "vmx-profiles" / "default-2g.iso", guest_args=GUEST_ARGS)
    r = bootlib.run_bochs(iso, "corei7_skylake_x", boot_out / "vmx-profiles" / "default-2g.serial",
                          megs=2048)
    start, end = r.hv_region()
    assert 0x7f000000 < end <= 0x80000000 and start % (2 << 20) == 0, r.describe()
    r.expect(r"^multiboot: mmap \[0x000100000, 0x%09x\) type 1$" % start)
    r.expect(r"^PASS: multiboot-mmap-one-ram-range$")
    m = r.expect(r"^guest handlers: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) > 0 and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()


def test_handlers_with_ram_above_4_gib(boot_out):
    """With 6 GiB Bochs's BIOS maps 3 GiB below the PCI hole and the rest
    above 4 GiB (2 GiB: it remaps nothing of the hole).  The hypervisor
    still goes to the top of RAM below 4 GiB, the guest's map shows RAM
    from 1 MiB to the region in one range and the RAM above 4 GiB whole,
    EPT maps that too, and every handler check passes."""
    guest = bootlib.build_guest("handlers")
    iso = bootlib.build_iso(bootlib.build_hv("default"), guest,
                            boot_out / "vmx-profiles" / "default-6g.iso", guest_args=GUEST_ARGS)
    r = bootlib.run_bochs(iso, "corei7_skylake_x", boot_out / "vmx-profiles" / "default-6g.serial",
                          megs=6144)
    high = re.search(r"^  mem \[0000000100000000-([0-9a-f]{16})\] available$", r.serial, re.M)
    assert high, r.describe()
    high_end = int(high.group(1), 16) + 1
    assert high_end > 0x100000000, r.describe()
    start, end = r.hv_region()
    assert 0xbf000000 < end <= 0xc0000000 and start % (2 << 20) == 0, r.describe()
    r.expect(r"^multiboot: mmap \[0x000100000, 0x%09x\) type 1$" % start)
    r.expect(r"^multiboot: mmap \[0x100000000, 0x%09x\) type 1$" % high_end)
    r.expect(r"^PASS: multiboot-mmap-one-ram-range$")
    m = r.expect(r"^guest handlers: (\d+) passed, (\d+) failed$")
    assert int(m.group(1)) > 0 and int(m.group(2)) == 0, r.describe()
    r.expect(r"^exitplan: guest exit status 1$")
    r.expect_clean_exit()
