#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn the recorded VMX capability MSRs of every Bochs CPU model
(tests/data/vmx-caps/MODEL.yaml) into a C table of struct vmx_caps for the
unit tests.

    caps2c.py OUTPUT.c [--spec SPEC_DIR] CAPS.yaml...

An MSR a model does not report (IA32_VMX_PROCBASED_CTLS2, EPT_VPID_CAP or
VMFUNC on older models) is 0, as struct vmx_caps documents.  With --spec,
every recorded index is checked against spec/msrs.yaml.

CPUID: the recordings hold no CPUID values, so cpuid_1_ecx is derived, and
only where that is certain (bit positions from spec/features.yaml):
  - VMX: set for every model.  The IA32_VMX_* MSRs can be read only when
    CPUID.01H:ECX.VMX is 1 (SDM Vol. 3D A.1), and each recording has them.
  - x2APIC and TSC deadline: set as PLATFORM.md reports them for the models
    it checked (PLATFORM_CPUID below); 0 for every other model, which may
    well have them.  Tests must not draw conclusions about these features
    on the unchecked models.
cpuid_1_edx stays 0.
"""
import os
import sys

import yaml

# MSR name -> struct vmx_caps field: the generator's map, the one place
# that pairs them (it also writes the runtime's RDMSR code from it).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gen"))
from exitplan_gen.spec import CAPS_FIELDS as FIELDS  # noqa: E402

# Recorded, but not part of struct vmx_caps.
IGNORED = {"IA32_FEATURE_CONTROL"}
# CPUID features PLATFORM.md ("Interrupts, timers and SMP") verified per model.
PLATFORM_CPUID = {
    "corei7_skylake_x": {"x2apic", "tsc_deadline"},
    "corei7_haswell_4770": {"x2apic", "tsc_deadline"},
    "corei7_icelake_u": {"x2apic", "tsc_deadline"},
    "tigerlake": {"x2apic", "tsc_deadline"},
    "corei7_sandy_bridge_2600k": {"tsc_deadline"},	# "no x2APIC"
}
# Every VMX model reports these; a recording without them is truncated.
MANDATORY = ["IA32_VMX_BASIC", "IA32_VMX_PINBASED_CTLS", "IA32_VMX_PROCBASED_CTLS",
             "IA32_VMX_EXIT_CTLS", "IA32_VMX_ENTRY_CTLS", "IA32_VMX_MISC"]


def fail(path, msg):
    sys.exit(f"caps2c: {path}: {msg}")


def load_yaml(path):
    with open(path) as f:
        return yaml.load(f, Loader=yaml.CSafeLoader)


def spec_msr_indices(spec_dir):
    """MSR name -> index from spec/msrs.yaml, to cross-check the recordings."""
    path = os.path.join(spec_dir, "msrs.yaml")
    if not os.path.exists(path):
        return {}
    return {m["name"]: m["index"] for m in load_yaml(path).get("msrs", [])}


def spec_cpuid_1_ecx_bits(spec_dir):
    """Feature name -> bit of CPUID.01H:ECX, from spec/features.yaml."""
    path = os.path.join(spec_dir, "features.yaml")
    bits = {}
    for f in load_yaml(path).get("features", []):
        cpuid = f.get("detect", {}).get("cpuid")
        if cpuid and cpuid["leaf"] == 1 and cpuid["reg"] == "ecx":
            bits[f["name"]] = cpuid["bit"]
    return bits


def cpuid_1_ecx(model, ecx_bits):
    want = {"vmx"} | PLATFORM_CPUID.get(model, set())
    value = 0
    for name in sorted(want):
        if name not in ecx_bits:
            sys.exit(f"caps2c: spec/features.yaml has no CPUID.01H:ECX feature {name!r}")
        value |= 1 << ecx_bits[name]
    return value


def load(path, spec_index):
    with open(path) as f:
        doc = yaml.load(f, Loader=yaml.CSafeLoader)
    if not isinstance(doc, dict) or "model" not in doc or "msrs" not in doc:
        fail(path, "expected a mapping with 'model' and 'msrs'")
    model = doc["model"]
    if not isinstance(model, str) or not model.isidentifier():
        fail(path, f"model {model!r} is not a plain name")
    caps = {}
    for name, rec in doc["msrs"].items():
        if name in IGNORED:
            continue
        if name not in FIELDS:
            fail(path, f"unknown MSR {name}: add it to caps2c.py and struct vmx_caps")
        value, index = rec.get("value"), rec.get("index")
        if not isinstance(value, int) or not 0 <= value < 1 << 64:
            fail(path, f"{name}: value {value!r} is not a 64-bit integer")
        if name in spec_index and spec_index[name] != index:
            fail(path, f"{name}: index {index:#x} but spec/msrs.yaml says {spec_index[name]:#x}")
        caps[FIELDS[name]] = value
    for name in MANDATORY:
        if FIELDS[name] not in caps:
            fail(path, f"{name} missing")
    return model, caps


def main():
    if len(sys.argv) < 5 or sys.argv[2] != "--spec":
        sys.exit("usage: caps2c.py OUTPUT.c --spec SPEC_DIR CAPS.yaml...")
    out, spec_dir, args = sys.argv[1], sys.argv[3], sys.argv[4:]
    spec_index = spec_msr_indices(spec_dir)
    ecx_bits = spec_cpuid_1_ecx_bits(spec_dir)
    models = sorted((load(p, spec_index) + (p,) for p in args), key=lambda m: m[0])
    for model, caps, _ in models:
        caps["cpuid_1_ecx"] = cpuid_1_ecx(model, ecx_bits)
    names = [m[0] for m in models]
    if len(set(names)) != len(names):
        sys.exit("caps2c: two recordings name the same model")

    lines = [
        "/* Generated by tests/unit/caps2c.py from tests/data/vmx-caps; do not edit. */",
        '#include "vmx_caps_data.h"',
        "",
        "const struct vmx_caps_model vmx_caps_models[] = {",
    ]
    for model, caps, path in models:
        lines.append(f"\t{{ /* {os.path.basename(path)} */")
        lines.append(f'\t\t.model = "{model}",')
        lines.append("\t\t.caps = {")
        for field in list(FIELDS.values()) + ["cpuid_1_ecx"]:
            if field in caps:
                width = 10 if field == "cpuid_1_ecx" else 18
                suffix = "u" if field == "cpuid_1_ecx" else "ull"
                lines.append(f"\t\t\t.{field} = {caps[field]:#0{width}x}{suffix},")
        lines.append("\t\t},")
        lines.append("\t},")
    lines.append("};")
    lines.append("")
    lines.append(f"const unsigned int vmx_caps_n_models = {len(models)};")
    text = "\n".join(lines) + "\n"
    # Write-then-rename: a failed run never leaves a half table behind.
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
