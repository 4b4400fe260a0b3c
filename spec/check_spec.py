#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Consistency checks of spec/*.yaml, independent of the generator.

Checks what a typo in the architectural data would break: duplicate names
and numbers, bit positions out of range, VMCS encodings whose width/type
bits disagree with the declared width/kind, references between the files
(controls, features, VMCS fields, MSRs, exit reasons), and the control
bits against the real capability MSR values in tests/data/vmx-caps: the
must-be-one bits of every model must be exactly the bits marked default1,
and no model may allow a bit the spec does not define.

Usage: spec/check_spec.py [--caps DIR] [--matrix] [--self-test]
  --matrix     also print which features each vmx-caps model has.
  --self-test  plant known mistakes in a copy of spec/ and check that
               each one is reported.
Exits 1 on the first file with inconsistencies, after listing them all.
"""

import argparse
import glob
import os
import re
import sys

import yaml

from vmxcaps import cap_value, feature_present

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC_FILES = ("exit_reasons.yaml", "vmx_controls.yaml", "vmcs_fields.yaml", "msrs.yaml",
              "features.yaml", "arch.yaml", "handlers.yaml", "runtime.yaml", "hypercalls.yaml")
spec_dir = HERE
DEFAULT_CAPS = os.path.join(os.path.dirname(HERE), "tests", "data", "vmx-caps")
C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
FEATURE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
MECHANISMS = {"atomic", "vmcs_always", "load_list", "manual", "passthrough", "trap"}
MSR_KEYS = {"name", "index", "last", "sdm", "policy", "mechanisms", "aliases", "answer", "resident", "vmcs"}
MSR_ANSWERS = {"emulated", "executed", "vmcs", "read_only", "executed_if_shown"}
VMCS_WIDTH = {0: 16, 1: 64, 2: 32, 3: "natural"}
VMCS_KIND = {0: "control", 1: "read_only", 2: "guest", 3: "host"}
CPUID_REGS = {"eax", "ebx", "ecx", "edx"}

errors = []


def err(where, msg):
    errors.append(f"{where}: {msg}")


def safe_load(stream):
    """yaml.safe_load through libyaml, as the generator reads (it is 10 times
    faster than PyYAML's own parser, and --self-test parses spec/ 19 times)."""
    return yaml.load(stream, Loader=yaml.CSafeLoader)


def load(name):
    with open(os.path.join(spec_dir, name)) as f:
        text = f.read()
    if not text.startswith("#"):
        err(name, "must start with a comment saying what it is and which SDM section it follows")
    return safe_load(text)


def unique(where, seen, value, what):
    if value in seen:
        err(where, f"duplicate {what} {value!r}")
    seen.add(value)


def check_exit_reasons(doc):
    names, numbers = set(), set()
    out = {}
    for i, e in enumerate(doc["exit_reasons"]):
        w = f"exit_reasons.yaml[{i}]"
        if not {"number", "name", "sdm", "qualification", "instruction_length"} <= set(e) <= \
                {"number", "name", "sdm", "qualification", "instruction_length", "entry_failure"}:
            err(w, f"keys {sorted(e)}")
        if e.get("entry_failure", True) is not True:
            err(w, "entry_failure is given only where true")
        if not C_IDENT.match(str(e.get("name"))):
            err(w, f"name {e.get('name')!r} is not a C identifier")
        if not isinstance(e.get("number"), int) or not 0 <= e["number"] <= 0xffff:
            err(w, "number must be a 16-bit basic exit reason")
        for k in ("qualification", "instruction_length"):
            if not isinstance(e.get(k), bool):
                err(w, f"{k} must be true or false")
        unique(w, names, e.get("name"), "name")
        unique(w, numbers, e.get("number"), "number")
        out[e.get("name")] = e
    nums = [e["number"] for e in doc["exit_reasons"]]
    if nums != sorted(nums):
        err("exit_reasons.yaml", "entries are not in ascending order")
    return out


def check_controls(doc):
    controls = {}
    fields = {}
    keys = ["pin_based", "proc_based", "proc_based2", "vm_exit", "vm_entry"]
    seen_keys = []
    for i, f in enumerate(doc["control_fields"]):
        w = f"vmx_controls.yaml[{f.get('key', i)}]"
        seen_keys.append(f.get("key"))
        for k in ("vmcs_field", "capability_msr", "c_prefix", "sdm", "controls"):
            if k not in f:
                err(w, f"missing {k}")
        if "true_capability_msr" not in f:
            err(w, "missing true_capability_msr (null when there is none)")
        names, bits = set(), set()
        for c in f["controls"]:
            cw = f"{w}.{c.get('name')}"
            if not C_IDENT.match(str(c.get("name"))):
                err(cw, "name is not a C identifier")
            if not isinstance(c.get("bit"), int) or not 0 <= c["bit"] <= 31:
                err(cw, f"bit {c.get('bit')!r} outside 0..31")
            if not c.get("sdm"):
                err(cw, "missing sdm wording")
            if str(c.get("name")).startswith("RESERVED") and not c.get("default1"):
                err(cw, "a RESERVED_n entry must be default1")
            unique(cw, names, c.get("name"), "control name")
            unique(cw, bits, c.get("bit"), "bit")
            controls[f"{f['key']}.{c['name']}"] = (f, c)
        fields[f["key"]] = f
    if seen_keys != keys:
        err("vmx_controls.yaml", f"control fields must be {keys} in this order, got {seen_keys}")
    macros = set()
    for ref, (f, c) in controls.items():
        unique(f"vmx_controls.yaml {ref}", macros, f["c_prefix"] + c["name"], "C macro")
    return fields, controls


def check_vmcs_fields(doc):
    names, encs = set(), set()
    out = {}
    for i, f in enumerate(doc["vmcs_fields"]):
        w = f"vmcs_fields.yaml[{f.get('name', i)}]"
        e = f.get("encoding")
        unique(w, names, f.get("name"), "name")
        unique(w, encs, e, "encoding")
        if not isinstance(e, int) or not 0 <= e <= 0x7fff:
            err(w, f"encoding {e!r} out of range")
            continue
        if e & 1:
            err(w, f"encoding {e:#06x} is a 'high' access encoding; list the full (even) one")
        if e & (1 << 12):
            err(w, f"encoding {e:#06x} has reserved bit 12 set")
        if VMCS_WIDTH[(e >> 13) & 3] != f.get("width"):
            err(w, f"width {f.get('width')!r} but encoding {e:#06x} says {VMCS_WIDTH[(e >> 13) & 3]}")
        if VMCS_KIND[(e >> 10) & 3] != f.get("kind"):
            err(w, f"kind {f.get('kind')!r} but encoding {e:#06x} says {VMCS_KIND[(e >> 10) & 3]}")
        out[f["name"]] = f
    return out


def check_control_refs(fields, vmcs):
    for key, f in fields.items():
        if f["vmcs_field"] not in vmcs:
            err(f"vmx_controls.yaml[{key}]", f"vmcs_field {f['vmcs_field']} not in vmcs_fields.yaml")


def check_msr_vmcs(w, m, mech, vmcs, controls):
    """An MSR's vmcs: given exactly when a mechanism needs it, its fields
    and controls known, and what atomic and vmcs_always need of it."""
    want_vmcs = "atomic" in mech or "vmcs_always" in mech
    v = m.get("vmcs")
    if want_vmcs != (v is not None):
        err(w, "vmcs: is required exactly when atomic or vmcs_always is offered")
    if v is not None:
        if set(v) != {"guest_field", "host_field", "entry_control", "exit_load_control",
                      "exit_save_control", "feature"}:
            err(w, f"vmcs keys {sorted(v)}")
        for k in ("guest_field", "host_field"):
            if v.get(k) is not None and v[k] not in vmcs:
                err(w, f"vmcs.{k} {v[k]} not in vmcs_fields.yaml")
        if v.get("guest_field") is None:
            err(w, "vmcs.guest_field is required")
        for k in ("entry_control", "exit_load_control", "exit_save_control"):
            if v.get(k) is not None and v[k] not in controls:
                err(w, f"vmcs.{k} {v[k]} is not a control")
        if "atomic" in mech and (v.get("entry_control") is None or v.get("feature") is None):
            err(w, "atomic needs an entry control and a feature")
        if "vmcs_always" in mech and any(v.get(k) for k in ("entry_control", "exit_load_control",
                                                              "exit_save_control", "feature")):
            err(w, "vmcs_always switching has no controls and needs no feature")


def check_msrs(doc, vmcs, controls):
    names, out = set(), {}
    ranges = []
    for i, m in enumerate(doc["msrs"]):
        w = f"msrs.yaml[{m.get('name', i)}]"
        unique(w, names, m.get("name"), "name")
        for a in m.get("aliases", []):
            unique(w, names, a, "name (alias)")
        if not C_IDENT.match(str(m.get("name"))):
            err(w, "name is not a C identifier")
        idx, last = m.get("index"), m.get("last", m.get("index"))
        if not isinstance(idx, int) or not 0 <= idx <= 0xffffffff:
            err(w, f"index {idx!r} out of range")
            continue
        if not isinstance(last, int) or last < idx or last > 0xffffffff:
            err(w, f"last {last!r} must be >= index")
        if not isinstance(m.get("policy"), bool):
            err(w, "policy must be true or false")
        if set(m) - MSR_KEYS:
            err(w, f"unknown keys {sorted(set(m) - MSR_KEYS)}")
        if m.get("answer") is not None and m["answer"] not in MSR_ANSWERS:
            err(w, f"answer {m['answer']!r} must be one of {sorted(MSR_ANSWERS)}")
        if m.get("answer") == "vmcs" and not (m.get("vmcs") or {}).get("guest_field"):
            err(w, "answer vmcs needs vmcs.guest_field to answer from")
        # The runtime keeps resident MSRs in the CPU and executes their
        # trapped accesses (vcpu_switch.c): single MSRs answered executed.
        if "resident" in m and m["resident"] is not True:
            err(w, "resident is given only where true")
        if m.get("resident") and (m.get("answer") not in ("executed", "executed_if_shown") or "last" in m):
            err(w, "a resident MSR must be a single MSR the runtime executes")
        mech = m.get("mechanisms")
        if not isinstance(mech, list) or set(mech) - MECHANISMS or len(set(mech)) != len(mech):
            err(w, f"mechanisms {mech!r} must be a list from {sorted(MECHANISMS)}")
            mech = []
        if m.get("policy") and not mech:
            err(w, "a policy MSR needs at least one mechanism")
        if not m.get("policy") and mech:
            err(w, "a non-policy MSR offers no mechanisms")
        if "passthrough" in mech and "trap" not in mech:
            err(w, "an MSR that can be passed through can also be trapped")
        # SDM 26.4 / 28.6: these may not be in the MSR-load/store lists.
        if "load_list" in mech and (idx in (0xc0000100, 0xc0000101) or (idx <= 0x8ff and last >= 0x800)):
            err(w, "FS/GS base and the x2APIC range cannot be in the VM-entry/exit MSR lists")
        check_msr_vmcs(w, m, mech, vmcs, controls)
        out[m["name"]] = m
        for a in m.get("aliases", []):
            out[a] = m
        ranges.append((idx, last, m["name"]))
    # Overlaps are allowed only as a named register inside a named range.
    for a in ranges:
        for b in ranges:
            if a is b or a[1] < b[0] or b[1] < a[0]:
                continue
            inside = (a[0] >= b[0] and a[1] <= b[1]) or (b[0] >= a[0] and b[1] <= a[1])
            if not inside or (a[0] == b[0] and a[1] == b[1]):
                err("msrs.yaml", f"{a[2]} and {b[2]} overlap")
    if sum(1 for m in doc["msrs"] if m.get("resident")) > 32:
        err("msrs.yaml", "more than 32 resident MSRs (a bit each in vcpu_arch_state.resident_msrs)")
    return out


def check_detect(w, d, controls, msrs):
    if not isinstance(d, dict) or len(d) not in (1, 2):
        err(w, f"detect {d!r} must be one of controls/msr+bit/cpuid")
        return
    if "controls" in d:
        if len(d) != 1 or not d["controls"]:
            err(w, "controls: a non-empty list, alone")
        for c in d["controls"]:
            if c not in controls:
                err(w, f"unknown control {c}")
    elif "msr" in d:
        if set(d) != {"msr", "bit"}:
            err(w, "msr detection needs exactly msr and bit")
        if d["msr"] not in msrs:
            err(w, f"unknown MSR {d['msr']}")
        if not isinstance(d.get("bit"), int) or not 0 <= d["bit"] <= 63:
            err(w, f"bit {d.get('bit')!r} outside 0..63")
    elif "cpuid" in d:
        c = d["cpuid"]
        if len(d) != 1 or set(c) != {"leaf", "reg", "bit"} or c["reg"] not in CPUID_REGS \
                or not 0 <= c["bit"] <= 31:
            err(w, f"cpuid {c!r} must be {{leaf, reg: e[abcd]x, bit: 0..31}}")
    else:
        err(w, f"detect {d!r} must be one of controls/msr+bit/cpuid")


def check_features(doc, controls, msrs):
    out = {}
    for i, f in enumerate(doc["features"]):
        w = f"features.yaml[{f.get('name', i)}]"
        if not FEATURE_NAME.match(str(f.get("name"))):
            err(w, "name must be lower-case snake_case (it is printed and matched)")
        if f.get("name") in out:
            err(w, "duplicate feature")
        if not f.get("sdm"):
            err(w, "missing sdm")
        check_detect(w, f.get("detect"), controls, msrs)
        for a in f.get("also", []):
            check_detect(w + ".also", a, controls, msrs)
        out[f["name"]] = f
    for name, m in msrs.items():
        feat = (m.get("vmcs") or {}).get("feature")
        if feat is not None and feat not in out:
            err(f"msrs.yaml[{name}]", f"vmcs.feature {feat} not in features.yaml")
    # A feature of an atomic MSR must cover every control that switching uses.
    for name, m in msrs.items():
        v = m.get("vmcs")
        if not v or not v.get("feature") or v["feature"] not in out:
            continue
        need = {v[k] for k in ("entry_control", "exit_load_control", "exit_save_control") if v[k]}
        f = out[v["feature"]]
        have = {c for d in [f["detect"]] + f.get("also", []) for c in d.get("controls", [])}
        if need - have:
            err(f"msrs.yaml[{name}]", f"feature {v['feature']} does not detect {sorted(need - have)}")
    return out


def check_arch(doc):
    prefixes = set()
    macros = set()
    for g in doc.get("groups", []):
        w = f"arch.yaml[{g.get('name')}]"
        unique(w, prefixes, g.get("c_prefix"), "c_prefix")
        width = g.get("width", 64)
        names = set()
        for b in g.get("bits", []):
            bw = f"{w}.{b.get('name')}"
            if not C_IDENT.match(str(b.get("name"))):
                err(bw, "name is not a C identifier")
            unique(bw, names, b.get("name"), "name")
            lo = b.get("bit")
            hi = b.get("last", lo)
            if not isinstance(lo, int) or not isinstance(hi, int) or not 0 <= lo <= hi < width:
                err(bw, f"bit {lo!r}..{hi!r} outside 0..{width - 1}")
            if not b.get("sdm"):
                err(bw, "missing sdm")
            unique(bw, macros, g["c_prefix"] + b["name"], "C macro")
            for vname, vval in (b.get("values") or {}).items():
                if not C_IDENT.match(str(vname)):
                    err(bw, f"value name {vname!r} is not a C identifier")
                if not isinstance(vval, int) or not 0 <= vval < (1 << (hi - lo + 1)):
                    err(bw, f"value {vname}={vval!r} does not fit bits {lo}..{hi}")
                unique(bw, macros, g["c_prefix"] + b["name"] + "_" + vname, "C macro")
    for v in doc.get("values", []):
        w = f"arch.yaml values[{v.get('name')}]"
        if not C_IDENT.match(str(v.get("name"))) or not isinstance(v.get("value"), int):
            err(w, "needs a C identifier name and an integer value")
        if not v.get("sdm"):
            err(w, "missing sdm")
        unique(w, macros, v.get("name"), "C macro")


def arch_macros(doc):
    """Every C name arch.yaml makes, as the generator emits them."""
    out = []
    for g in doc.get("groups", []):
        for b in g.get("bits", []):
            name = g["c_prefix"] + b["name"]
            out.append(name)
            if "last" in b:
                out += [name + "_SHIFT", name + "_MASK"]
            out += [name + "_" + v for v in (b.get("values") or {})]
    out += [v["name"] for v in doc.get("values", [])]
    return out


def check_c_names(reasons, fields, vmcs, msrs, features, arch):
    """The generated headers share one C namespace: no name twice."""
    seen = {}
    names = [("exit reason", "EXIT_REASON_" + r) for r in reasons]
    names += [("control", f["c_prefix"] + c["name"]) for f in fields.values() for c in f["controls"]]
    names += [("VMCS field", n) for n in vmcs]
    names += [("MSR", "MSR_" + n) for n in msrs]
    names += [("MSR range", "MSR_" + n + s) for n, m in msrs.items() if "last" in m
              for s in ("_FIRST", "_LAST")]
    names += [("feature", "VMX_FEATURE_" + n.upper()) for n in features]
    names += [("arch", n) for n in arch]
    for what, n in names:
        if n in seen and seen[n] != what:
            err("C names", f"{n} is both a {seen[n]} and a {what}")
        elif n in seen and what != "MSR":
            err("C names", f"{what} {n} defined twice")
        seen[n] = what


def check_handlers(doc, reasons):
    h = doc.get("handlers")
    if not isinstance(h, dict) or not h:
        err("handlers.yaml", "handlers: must be a non-empty mapping")
        return
    for reason, fn in h.items():
        if reason not in reasons:
            err("handlers.yaml", f"unknown exit reason {reason}")
        if not C_IDENT.match(str(fn)) or not fn.startswith("handle_"):
            err("handlers.yaml", f"{reason}: handler {fn!r} must be a handle_* C identifier")
        if fn == "handle_unexpected_exit":
            err("handlers.yaml", f"{reason}: unhandled reasons are simply not listed")
        if reasons.get(reason, {}).get("entry_failure"):
            err("handlers.yaml", f"{reason}: a VM-entry failure reason must have no handler "
                "(the exit stub relies on it reaching handle_unexpected_exit)")


def check_runtime(doc, features, controls, msrs):
    for f in doc.get("required_features", []):
        name = f["feature"] if isinstance(f, dict) else f
        if name not in features:
            err("runtime.yaml", f"required feature {name} not in features.yaml")
        if isinstance(f, dict) and not f.get("why"):
            err("runtime.yaml", f"required feature {name}: say why")
    for c in doc.get("required_controls", []) + doc.get("optional_controls", []):
        if c.get("control") not in controls:
            err("runtime.yaml", f"required control {c.get('control')} unknown")
        if not c.get("why"):
            err("runtime.yaml", f"required control {c.get('control')}: say why")
    for p in doc.get("trapped_io_ports", []):
        if not 0 <= p.get("first", -1) <= p.get("last", -1) <= 0xffff or not p.get("why"):
            err("runtime.yaml", f"trapped I/O range {p!r}")
    for m in doc.get("trapped_msrs", []):
        if m.get("msr") not in msrs or not m.get("why"):
            err("runtime.yaml", f"trapped MSR {m!r}")


def check_hypercalls(doc):
    abi = doc.get("abi", {})
    regs = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"}
    if abi.get("number") not in regs or abi.get("result") not in regs \
            or not set(abi.get("args", [])) <= regs or not isinstance(abi.get("unknown_result"), int):
        err("hypercalls.yaml", f"abi {abi!r}")
    errs = {e.get("name"): e.get("value") for e in doc.get("errors", [])}
    for e in doc.get("errors", []):
        if not C_IDENT.match(str(e.get("name"))) or not isinstance(e.get("value"), int) \
                or e["value"] >= 0 or not e.get("doc"):
            err("hypercalls.yaml", f"error {e!r}: a name, a negative value and a doc")
    if len(set(errs.values())) != len(errs):
        err("hypercalls.yaml", "two errors share a value")
    if errs.get("ENOSYS") != abi.get("unknown_result"):
        err("hypercalls.yaml", "abi.unknown_result must be the ENOSYS error")
    if not isinstance(abi.get("version"), int) or abi["version"] < 1:
        err("hypercalls.yaml", "abi.version must be a positive integer")
    names, numbers = set(), set()
    for h in doc.get("hypercalls", []):
        w = f"hypercalls.yaml[{h.get('name')}]"
        unique(w, names, h.get("name"), "name")
        unique(w, numbers, h.get("number"), "number")
        if not C_IDENT.match(str(h.get("name"))) or not isinstance(h.get("number"), int):
            err(w, "name and number")
        if len(h.get("args", [])) > len(abi.get("args", [])):
            err(w, "more arguments than the ABI has registers")
        if not h.get("doc"):
            err(w, "missing doc")


def check_caps(capsdir, fields, features, matrix):
    models = []
    for p in sorted(glob.glob(os.path.join(capsdir, "*.yaml"))):
        with open(p) as f:
            models.append(safe_load(f))
    for model in models:
        w = f"vmx-caps/{model['model']}"
        for key, f in fields.items():
            v = cap_value(model, f["capability_msr"])
            lo, hi = v & 0xffffffff, v >> 32
            d1 = sum(1 << c["bit"] for c in f["controls"] if c.get("default1"))
            defined = sum(1 << c["bit"] for c in f["controls"])
            if key != "proc_based2" and lo != d1:
                err(w, f"{f['capability_msr']} must-be-one bits {lo:#x} != default1 bits {d1:#x}")
            if key == "proc_based2" and lo:
                err(w, f"{f['capability_msr']} has must-be-one bits {lo:#x}")
            if hi & ~defined:
                err(w, f"{f['capability_msr']} allows undefined bits {hi & ~defined:#x}")
            if lo & ~hi:
                err(w, f"{f['capability_msr']} requires bits it does not allow: {lo & ~hi:#x}")
            if f.get("true_capability_msr") and (cap_value(model, "IA32_VMX_BASIC") >> 55) & 1:
                t = cap_value(model, f["true_capability_msr"])
                if (t & 0xffffffff) & ~d1:
                    err(w, f"{f['true_capability_msr']} requires non-default1 bits")
                if (t >> 32) != hi:
                    err(w, f"{f['true_capability_msr']} allowed-1 differs from {f['capability_msr']}")
    if matrix:
        names = [m["model"] for m in models]
        print(f"{'feature':42}" + " ".join(f"{n[:6]:>6}" for n in names))
        for name, f in features.items():
            row = []
            for model in models:
                r = feature_present(model, fields, f)
                row.append("     ?" if r is None else ("     1" if r else "     ."))
            print(f"{name:42}" + " ".join(row))


def run_checks(directory, caps, matrix=False):
    """All checks of the spec files in directory; returns the errors."""
    global spec_dir
    spec_dir = directory
    del errors[:]
    reasons = check_exit_reasons(load("exit_reasons.yaml"))
    fields, controls = check_controls(load("vmx_controls.yaml"))
    vmcs = check_vmcs_fields(load("vmcs_fields.yaml"))
    check_control_refs(fields, vmcs)
    msrs = check_msrs(load("msrs.yaml"), vmcs, controls)
    for f in fields.values():
        for k in ("capability_msr", "true_capability_msr"):
            if f.get(k) and f[k] not in msrs:
                err(f"vmx_controls.yaml[{f['key']}]", f"{k} {f[k]} not in msrs.yaml")
    features = check_features(load("features.yaml"), controls, msrs)
    rest = {"arch.yaml": check_arch, "handlers.yaml": lambda d: check_handlers(d, reasons),
            "runtime.yaml": lambda d: check_runtime(d, features, controls, msrs),
            "hypercalls.yaml": check_hypercalls}
    for name, fn in rest.items():
        fn(load(name))
    check_c_names(reasons, fields, vmcs, msrs, features, arch_macros(load("arch.yaml")))
    if caps and os.path.isdir(caps):
        check_caps(caps, fields, features, matrix)
    return list(errors)


# Each mutation plants one mistake of the kind the checker exists for, by
# replacing text that must occur exactly once; the checker must report it
# with a message containing the expected words.
MUTATIONS = [
    ("duplicate control bit", "vmx_controls.yaml",
     'bit: 6, sdm: "Activate VMX-preemption timer"', 'bit: 5, sdm: "Activate VMX-preemption timer"',
     "duplicate bit"),
    ("control bit out of range", "vmx_controls.yaml",
     "{name: NOTIFY_VM_EXITING,        bit: 31,", "{name: NOTIFY_VM_EXITING,        bit: 32,",
     "outside 0..31"),
    ("real control marked default1", "vmx_controls.yaml",
     'bit: 7,  sdm: "HLT exiting"}', 'bit: 7,  sdm: "HLT exiting", default1: true}',
     "must-be-one bits"),
    ("default1 bit missing", "vmx_controls.yaml",
     '      - {name: RESERVED_26,              bit: 26, sdm: "Reserved (default1)", default1: true}\n', "",
     "must-be-one bits"),
    ("duplicate exit reason number", "exit_reasons.yaml",
     "{number: 10, name: CPUID,", "{number: 12, name: CPUID,", "duplicate number"),
    ("VMCS width disagrees with encoding", "vmcs_fields.yaml",
     "encoding: 0x681e, width: natural", "encoding: 0x681e, width: 64", "encoding 0x681e says natural"),
    ("VMCS high encoding", "vmcs_fields.yaml",
     "encoding: 0x2806, width: 64", "encoding: 0x2807, width: 64", "'high' access encoding"),
    ("unknown feature of an atomic MSR", "msrs.yaml",
     "feature: load_ia32_efer}", "feature: load_efer}", "not in features.yaml"),
    ("FS base in the MSR-load lists", "msrs.yaml",
     "index: 0xc0000100\n    sdm: \"Map of BASE Address of FS\"\n    policy: true\n    mechanisms: [vmcs_always, passthrough, trap]",
     "index: 0xc0000100\n    sdm: \"Map of BASE Address of FS\"\n    policy: true\n    mechanisms: [vmcs_always, load_list, passthrough, trap]",
     "cannot be in the VM-entry/exit MSR lists"),
    ("resident MSR that the runtime emulates", "msrs.yaml",
     "{name: IA32_TSC_ADJUST, answer: emulated,", "{name: IA32_TSC_ADJUST, answer: emulated, resident: true,",
     "a resident MSR must be a single MSR the runtime executes"),
    ("misspelt MSR key", "msrs.yaml",
     "{name: IA32_STAR, answer: executed, resident: true,", "{name: IA32_STAR, answer: executed, residnet: true,",
     "unknown keys ['residnet']"),
    ("feature misses a control its MSR switching uses", "features.yaml",
     "vm_exit.LOAD_IA32_EFER, vm_exit.SAVE_IA32_EFER]", "vm_exit.LOAD_IA32_EFER]",
     "does not detect"),
    ("unknown control in a feature", "features.yaml",
     "detect: {controls: [proc_based2.ENABLE_EPT]}}", "detect: {controls: [proc_based2.ENABLE_EPTS]}}",
     "unknown control"),
    ("arch bit outside its register", "arch.yaml",
     '{name: PG, bit: 31, sdm: "Paging"}', '{name: PG, bit: 64, sdm: "Paging"}', "outside 0..63"),
    ("arch value that does not fit its field", "arch.yaml",
     "values: {UC: 0, WC: 1, WT: 4, WP: 5, WB: 6}", "values: {UC: 0, WC: 1, WT: 4, WP: 5, WB: 8}",
     "does not fit"),
    ("generated C name collision", "arch.yaml",
     '  - {name: X86_EXC_DE, value: 0,', '  - {name: EXIT_REASON_CPUID, value: 10, sdm: "x"}\n  - {name: X86_EXC_DE, value: 0,',
     "EXIT_REASON_CPUID is both"),
    ("handler for a VM-entry failure reason", "handlers.yaml",
     "  CPUID:                handle_cpuid\n",
     "  CPUID:                handle_cpuid\n  INVALID_STATE:        handle_cpuid\n",
     "a VM-entry failure reason must have no handler"),
    ("handler for an unknown exit reason", "handlers.yaml",
     "  CPUID:                handle_cpuid", "  CPUID_LEAF:           handle_cpuid", "unknown exit reason"),
    ("unknown required feature", "runtime.yaml",
     "  - feature: ept\n", "  - feature: ept2\n", "not in features.yaml"),
    ("unknown result that is not ENOSYS", "hypercalls.yaml",
     "{name: ENOSYS, value: -1000,", "{name: ENOSYS, value: -999,", "unknown_result"),
]


def self_test(caps):
    """Run every mutation on a copy of spec/; fail if one goes unnoticed."""
    import shutil
    import tempfile

    if run_checks(HERE, caps):
        print("self-test: spec/ itself has errors; fix them first", file=sys.stderr)
        return 1
    failed = 0
    for title, name, old, new, expect in MUTATIONS:
        with tempfile.TemporaryDirectory() as tmp:
            for f in SPEC_FILES:
                shutil.copy(os.path.join(HERE, f), tmp)
            path = os.path.join(tmp, name)
            with open(path) as f:
                text = f.read()
            if text.count(old) != 1:
                print(f"self-test: {title}: the text to mutate occurs {text.count(old)} times in {name}",
                      file=sys.stderr)
                failed += 1
                continue
            with open(path, "w") as f:
                f.write(text.replace(old, new))
            try:
                found = run_checks(tmp, caps)
            except Exception as e:	# a crash is not a report
                found = [f"checker crashed: {type(e).__name__}: {e}"]
        if any(expect in e for e in found):
            print(f"self-test: ok: {title}")
        else:
            print(f"self-test: MISSED: {title} (expected '{expect}', got {found})", file=sys.stderr)
            failed += 1
    print(f"self-test: {len(MUTATIONS) - failed}/{len(MUTATIONS)} planted mistakes caught")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--caps", default=DEFAULT_CAPS)
    ap.add_argument("--matrix", action="store_true")
    ap.add_argument("--self-test", action="store_true",
                    help="plant known mistakes in a copy of spec/ and check that each is caught")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.caps)
    if not glob.glob(os.path.join(args.caps, "*.yaml")):
        print(f"spec: {args.caps}: no capability-MSR recordings (MODEL.yaml) to check against",
              file=sys.stderr)
        return 1
    found = run_checks(HERE, args.caps, args.matrix)
    for e in found:
        print("spec: " + e, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
