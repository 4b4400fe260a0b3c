# SPDX-License-Identifier: GPL-2.0-only
"""A recorded CPU model's VMX capability MSRs (tests/data/vmx-caps/MODEL.yaml)
read as the SDM says (Vol. 3D A.2, A.3): a control may be 1 when its bit
is set in the high half of its capability MSR (allowed-1) and must be 1
when its bit is set in the low half (allowed-0); with IA32_VMX_BASIC[55]
the TRUE_* MSRs are the ones that count; the secondary processor-based
controls exist only when "activate secondary controls" may be 1 (A.3.3).

The one Python reading of that rule, for spec/check_spec.py and the boot
tests (tests/boot/test_vmx_profiles.py).  The hypervisor's own is
arch/vmx/vmx_controls.c, the unit tests' tests/unit/unit_util.c.

`fields` is spec/vmx_controls.yaml's control_fields by key, `model` a
parsed MODEL.yaml."""

IA32_VMX_BASIC_TRUE_CTLS = 55       # SDM Vol. 3D A.1


def cap_value(model, name):
    """The recorded value of MSR `name`; 0 when the model does not report it."""
    m = model["msrs"].get(name)
    return m["value"] if m else 0


def uses_true_msrs(model):
    return bool(cap_value(model, "IA32_VMX_BASIC") >> IA32_VMX_BASIC_TRUE_CTLS & 1)


def _bit(fields, key, name):
    return next(c["bit"] for c in fields[key]["controls"] if c["name"] == name)


def allowed(model, fields, key):
    """(allowed-0, allowed-1) of control field `key`: the bits that must be
    1, and the bits that may be 1."""
    f = fields[key]
    msr = f["capability_msr"]
    if f.get("true_capability_msr") and uses_true_msrs(model):
        msr = f["true_capability_msr"]
    if key == "proc_based2":
        act = _bit(fields, "proc_based", "ACTIVATE_SECONDARY_CONTROLS")
        if not allowed(model, fields, "proc_based")[1] >> act & 1:
            return 0, 0
    v = cap_value(model, msr)
    return v & 0xffffffff, v >> 32


def allowed1(model, fields, ref):
    """May control `ref` ("proc_based.HLT_EXITING") be 1 on this model?"""
    key, _, name = ref.partition(".")
    return bool(allowed(model, fields, key)[1] >> _bit(fields, key, name) & 1)


def detect(model, fields, rule):
    """One detection rule of spec/features.yaml: True/False, or None for a
    CPUID rule (the recordings hold MSRs only)."""
    if "controls" in rule:
        return all(allowed1(model, fields, c) for c in rule["controls"])
    if "msr" in rule:
        return bool(cap_value(model, rule["msr"]) >> rule["bit"] & 1)
    if "cpuid" in rule:
        return None
    raise ValueError(f"unknown detection rule {rule}")


def feature_present(model, fields, feature):
    """Does the model have `feature` (a features.yaml entry): its detect
    rule and every `also` rule hold; None when one is a CPUID rule."""
    results = [detect(model, fields, r) for r in [feature["detect"]] + feature.get("also", [])]
    if None in results:
        return None
    return all(results)
