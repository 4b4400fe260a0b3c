# SPDX-License-Identifier: GPL-2.0-only
"""spec/*.yaml: the architectural data, loaded and cross-checked.

Every inconsistency (a duplicate name or number, a reference to something
not defined, a value out of range) fails hard with file:line:col, as Xen's
gen-cpuid.py does: the generator never guesses.
"""

import hashlib
import os
import re

from .errors import GenError, suggest
from .loader import load_file

C_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# The struct vmx_caps field (arch/vmx/vmx_controls.h) that holds each
# capability MSR.  The one place the generator maps MSR names to C fields.
CAPS_FIELDS = {
    "IA32_VMX_BASIC": "basic",
    "IA32_VMX_PINBASED_CTLS": "pinbased",
    "IA32_VMX_PROCBASED_CTLS": "procbased",
    "IA32_VMX_EXIT_CTLS": "exit",
    "IA32_VMX_ENTRY_CTLS": "entry",
    "IA32_VMX_MISC": "misc",
    "IA32_VMX_CR0_FIXED0": "cr0_fixed0",
    "IA32_VMX_CR0_FIXED1": "cr0_fixed1",
    "IA32_VMX_CR4_FIXED0": "cr4_fixed0",
    "IA32_VMX_CR4_FIXED1": "cr4_fixed1",
    "IA32_VMX_VMCS_ENUM": "vmcs_enum",
    "IA32_VMX_PROCBASED_CTLS2": "procbased2",
    "IA32_VMX_EPT_VPID_CAP": "ept_vpid_cap",
    "IA32_VMX_TRUE_PINBASED_CTLS": "true_pinbased",
    "IA32_VMX_TRUE_PROCBASED_CTLS": "true_procbased",
    "IA32_VMX_TRUE_EXIT_CTLS": "true_exit",
    "IA32_VMX_TRUE_ENTRY_CTLS": "true_entry",
    "IA32_VMX_VMFUNC": "vmfunc",
}

# CPUID registers struct vmx_caps holds, by (leaf, register).
CPUID_FIELDS = {
    (1, "ecx"): "cpuid_1_ecx",
    (1, "edx"): "cpuid_1_edx",
}

# The C enum vmx_ctl_field member of each control field key.
CTL_FIELD_ENUM = {
    "pin_based": "VMX_PIN_BASED",
    "proc_based": "VMX_PROC_BASED",
    "proc_based2": "VMX_PROC_BASED2",
    "vm_exit": "VMX_EXIT",
    "vm_entry": "VMX_ENTRY",
}
CTL_FIELD_ORDER = list(CTL_FIELD_ENUM)

# How the runtime answers a reserved port (spec/runtime.yaml reserved_io_ports).
IO_HANDLING = ("emulated", "filtered", "denied")
# The profile settings a runtime-required control may be waived for
# (spec/runtime.yaml required_controls `unless`), as the profile spells them.
RUNTIME_WAIVERS = ("interrupts: direct",)
MECHANISMS = ("atomic", "load_list", "manual", "passthrough", "trap")


# How a trapped RDMSR/WRMSR is answered (spec/msrs.yaml `answer`).
MSR_ANSWERS = ("emulated", "executed", "vmcs", "read_only", "executed_if_shown")
# The answers msr.c takes from the generated table (msr_table.c); the
# emulated and executed_if_shown ones are its own code.
MSR_TABLE_ANSWERS = ("vmcs", "executed", "read_only")
# vcpu_arch_state.resident_msrs has a bit per resident MSR.
MAX_RESIDENT_MSRS = 32
MSR_KEYS = ("name", "index", "last", "sdm", "policy", "mechanisms", "aliases", "answer",
            "resident", "vmcs")


class Obj:
    """A plain record whose attributes are set from keyword arguments."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return f"{type(self).__name__}({self.__dict__!r})"


class SpecFile:
    """One loaded spec file with helpers to check its entries."""

    def __init__(self, root, name):
        self.rel = f"spec/{name}"
        self.doc, self.raw = load_file(os.path.join(root, self.rel) if root != "." else self.rel)
        self.doc.path = self.rel
        self.sha256 = hashlib.sha256(self.raw).hexdigest()

    def err(self, path, message, key=False):
        return self.doc.error(path, message, key=key)

    def top(self, key, kind):
        value = self.doc.value
        if not isinstance(value, dict) or key not in value:
            raise self.err((), f"expected a top-level '{key}'")
        if not isinstance(value[key], kind):
            raise self.err((key,), f"'{key}' must be a {'list' if kind is list else 'mapping'}")
        return value[key]

    def field(self, path, entry, name, kinds, required=True, default=None):
        """entry[name], checked to be of one of the Python types kinds."""
        if not isinstance(entry, dict):
            raise self.err(path, "expected a mapping")
        if name not in entry:
            if required:
                raise self.err(path, f"missing '{name}'")
            return default
        value = entry[name]
        if isinstance(value, bool) and bool not in kinds:
            raise self.err(path + (name,), f"'{name}' must not be true/false")
        if not isinstance(value, kinds):
            raise self.err(path + (name,), f"'{name}' has the wrong type ({type(value).__name__})")
        return value

    def ident(self, path, entry, name="name"):
        value = self.field(path, entry, name, (str,))
        if not C_IDENT.match(value):
            raise self.err(path + (name,), f"'{value}' is not a C identifier")
        return value


def _msr_mechanisms(sf, p, e, name, policy):
    """An MSR's `mechanisms`: known, each once, none without policy."""
    mechs = sf.field(p, e, "mechanisms", (list,))
    seen = {}
    for j, mech in enumerate(mechs):
        if mech not in MECHANISMS + ("vmcs_always",):
            raise sf.err(p + ("mechanisms", j), f"unknown mechanism '{mech}'"
                         f"{suggest(mech, MECHANISMS + ('vmcs_always',))}")
        _unique(sf, seen, mech, p + ("mechanisms", j), "mechanism")
    if not policy and mechs:
        raise sf.err(p + ("mechanisms",), f"{name} has policy: false, so it offers no mechanisms")
    if policy and not mechs:
        raise sf.err(p + ("mechanisms",), f"{name} has policy: true but offers no mechanism")
    return mechs


def _msr_atomic_check(sf, p, msr):
    """An MSR offering atomic names what VM entry and exit switch it with."""
    v = msr.vmcs
    if v is None or v.entry_control is None or v.feature_name is None or v.guest_field is None:
        raise sf.err(p, f"{msr.name} offers atomic but its vmcs: lacks guest_field, "
                        "entry_control or feature")
    if v.entry_control.field.key != "vm_entry":
        raise sf.err(v.path + ("entry_control",), "entry_control must be a vm_entry control")
    for k in ("exit_load_control", "exit_save_control"):
        c = getattr(v, k)
        if c is not None and c.field.key != "vm_exit":
            raise sf.err(v.path + (k,), f"{k} must be a vm_exit control")


def _msr_resident(sf, p, e, name, answer, last):
    """An MSR's `resident` flag (spec/msrs.yaml): only a single MSR whose
    trapped accesses the runtime executes can stay in the CPU."""
    resident = sf.field(p, e, "resident", (bool,), required=False, default=False)
    if resident and answer not in ("executed", "executed_if_shown"):
        raise sf.err(p + ("resident",), f"{name} is resident but its answer is "
                     f"{answer or 'none'}: only an MSR the runtime executes keeps the guest's "
                     "value in the CPU")
    if resident and last is not None:
        raise sf.err(p + ("resident",), f"{name} is a range: only a single MSR can be resident")
    return resident


def _unique(sf, seen, value, path, what):
    if value in seen:
        raise sf.err(path, f"duplicate {what} {value!r} (first at line {sf.doc.mark(seen[value])[0]})")
    seen[value] = path


class Spec:
    """All of spec/: exit reasons, controls, VMCS fields, MSRs, features,
    architectural bits, handlers, the runtime's needs, hypercalls."""

    # VMX_MAX_GATES of arch/vmx/vmx_controls.h; vmcs_setup.c asserts it.
    max_gates = 16

    FILES = ("exit_reasons.yaml", "vmx_controls.yaml", "vmcs_fields.yaml", "msrs.yaml",
             "features.yaml", "arch.yaml", "handlers.yaml", "runtime.yaml", "hypercalls.yaml")

    def __init__(self, root="."):
        self.root = root
        self.files = {}
        for name in self.FILES:
            self.files[name] = SpecFile(root, name)
        self._exit_reasons(self.files["exit_reasons.yaml"])
        self._controls(self.files["vmx_controls.yaml"])
        self._vmcs_fields(self.files["vmcs_fields.yaml"])
        self._msrs(self.files["msrs.yaml"])
        self._features(self.files["features.yaml"])
        self._arch(self.files["arch.yaml"])
        self._handlers(self.files["handlers.yaml"])
        self._runtime(self.files["runtime.yaml"])
        self._hypercalls(self.files["hypercalls.yaml"])

    def sources(self, *names):
        """[(rel path, sha256)] of the named spec files."""
        return [(self.files[n].rel, self.files[n].sha256) for n in names]

    # --- exit reasons -------------------------------------------------
    def _exit_reasons(self, sf):
        entries = sf.top("exit_reasons", list)
        names, numbers = {}, {}
        self.exit_reasons = []
        for i, e in enumerate(entries):
            p = ("exit_reasons", i)
            name = sf.ident(p, e)
            number = sf.field(p, e, "number", (int,))
            if not 0 <= number <= 0xffff:
                raise sf.err(p + ("number",), f"exit reason number {number} is not a 16-bit basic reason")
            _unique(sf, names, name, p + ("name",), "exit reason name")
            _unique(sf, numbers, number, p + ("number",), "exit reason number")
            self.exit_reasons.append(Obj(
                name=name, number=number,
                sdm=sf.field(p, e, "sdm", (str,)),
                qualification=sf.field(p, e, "qualification", (bool,)),
                instruction_length=sf.field(p, e, "instruction_length", (bool,)),
                entry_failure=sf.field(p, e, "entry_failure", (bool,), required=False,
                                       default=False),
                enum="EXIT_REASON_" + name))
            r = self.exit_reasons[-1]
            r.info_flags = ((["EXIT_INFO_QUALIFICATION"] if r.qualification else []) +
                            (["EXIT_INFO_INSTRUCTION_LENGTH"] if r.instruction_length else []))
        if not self.exit_reasons:
            raise sf.err(("exit_reasons",), "no exit reasons")
        self.exit_reasons.sort(key=lambda r: r.number)
        self.reason = {r.name: r for r in self.exit_reasons}
        self.exit_reason_max = self.exit_reasons[-1].number

    # --- control fields -------------------------------------------------
    def _controls(self, sf):
        entries = sf.top("control_fields", list)
        self.control_fields = {}
        self.control = {}		# "field.NAME" -> control
        self.control_by_macro = {}
        keys = {}
        for i, e in enumerate(entries):
            p = ("control_fields", i)
            key = sf.field(p, e, "key", (str,))
            if key not in CTL_FIELD_ENUM:
                raise sf.err(p + ("key",), f"unknown control field key '{key}'{suggest(key, CTL_FIELD_ENUM)}")
            _unique(sf, keys, key, p + ("key",), "control field")
            cap = sf.field(p, e, "capability_msr", (str,))
            true_cap = sf.field(p, e, "true_capability_msr", (str, type(None)), required=False)
            for k, v in (("capability_msr", cap), ("true_capability_msr", true_cap)):
                if v is not None and v not in CAPS_FIELDS:
                    raise sf.err(p + (k,), f"'{v}' has no field in struct vmx_caps"
                                 f"{suggest(v, CAPS_FIELDS)}")
            prefix = sf.field(p, e, "c_prefix", (str,))
            cf = Obj(key=key, enum=CTL_FIELD_ENUM[key], vmcs_field=sf.ident(p, e, "vmcs_field"),
                     capability_msr=cap, true_capability_msr=true_cap, c_prefix=prefix,
                     sdm=sf.field(p, e, "sdm", (str,)), controls=[], path=p)
            names, bits = {}, {}
            for j, c in enumerate(sf.field(p, e, "controls", (list,))):
                q = p + ("controls", j)
                name = sf.ident(q, c)
                bit = sf.field(q, c, "bit", (int,))
                if not 0 <= bit <= 31:
                    raise sf.err(q + ("bit",), f"bit {bit} is outside a 32-bit control field")
                _unique(sf, names, name, q + ("name",), f"{key} control")
                _unique(sf, bits, bit, q + ("bit",), f"{key} bit")
                ctl = Obj(field=cf, name=name, bit=bit, macro=prefix + name,
                          sdm=sf.field(q, c, "sdm", (str,)),
                          default1=sf.field(q, c, "default1", (bool,), required=False, default=False),
                          ref=f"{key}.{name}")
                cf.controls.append(ctl)
                self.control[ctl.ref] = ctl
                if ctl.macro in self.control_by_macro:
                    raise sf.err(q + ("name",), f"C macro {ctl.macro} defined twice")
                self.control_by_macro[ctl.macro] = ctl
            cf.controls.sort(key=lambda c: c.bit)
            self.control_fields[key] = cf
        for key in CTL_FIELD_ORDER:
            if key not in self.control_fields:
                raise sf.err(("control_fields",), f"control field '{key}' is missing")
        self.secondary_activate = self.lookup_control(
            sf, ("control_fields",), "proc_based.ACTIVATE_SECONDARY_CONTROLS")

    def lookup_control(self, sf, path, ref):
        """The control named 'field.NAME' (or by C macro), or a GenError at path."""
        if ref in self.control:
            return self.control[ref]
        if ref in self.control_by_macro:
            return self.control_by_macro[ref]
        raise sf.err(path, f"unknown control '{ref}'{suggest(ref, list(self.control) + list(self.control_by_macro))}")

    # --- VMCS fields ----------------------------------------------------
    def _vmcs_fields(self, sf):
        entries = sf.top("vmcs_fields", list)
        names, encodings = {}, {}
        self.vmcs_fields = []
        for i, e in enumerate(entries):
            p = ("vmcs_fields", i)
            name = sf.ident(p, e)
            enc = sf.field(p, e, "encoding", (int,))
            if not 0 <= enc <= 0xffffffff:
                raise sf.err(p + ("encoding",), f"encoding {enc:#x} is not 32-bit")
            _unique(sf, names, name, p + ("name",), "VMCS field")
            _unique(sf, encodings, enc, p + ("encoding",), "VMCS encoding")
            width = sf.field(p, e, "width", (int, str))
            if width not in (16, 32, 64, "natural"):
                raise sf.err(p + ("width",), f"width {width!r} is not 16, 32, 64 or natural")
            kind = sf.field(p, e, "kind", (str,))
            kinds = ("control", "read_only", "guest", "host")
            if kind not in kinds:
                raise sf.err(p + ("kind",), f"kind '{kind}' is not one of {', '.join(kinds)}"
                             f"{suggest(kind, kinds)}")
            self.vmcs_fields.append(Obj(name=name, encoding=enc, width=width, kind=kind,
                                        sdm=sf.field(p, e, "sdm", (str,), required=False, default="")))
        self.vmcs_fields.sort(key=lambda f: f.encoding)
        self.vmcs_field = {f.name: f for f in self.vmcs_fields}
        for cf in self.control_fields.values():
            if cf.vmcs_field not in self.vmcs_field:
                cfs = self.files["vmx_controls.yaml"]
                raise cfs.err(cf.path + ("vmcs_field",),
                              f"VMCS field '{cf.vmcs_field}' is not in spec/vmcs_fields.yaml"
                              f"{suggest(cf.vmcs_field, self.vmcs_field)}")

    # --- MSRs -------------------------------------------------------------
    def _msrs(self, sf):
        entries = sf.top("msrs", list)
        names, singles = {}, {}
        self.msrs = []
        self.msr = {}			# name or alias -> msr
        for i, e in enumerate(entries):
            msr = self._msr(sf, ("msrs", i), e, names, singles)
            self.msrs.append(msr)
            self.msr[msr.name] = msr
            for a in msr.aliases:
                self.msr[a] = msr
        # In the file's order: the runtime's lookup table and save/load order.
        self.msr_answers = [m for m in self.msrs if m.answer in MSR_TABLE_ANSWERS]
        self.resident_msrs = [m for m in self.msrs if m.resident]
        # The most MSRs a profile can switch by hand: struct vcpu's room for them.
        self.manual_msrs_max = sum(1 for m in self.msrs if "manual" in m.mechanisms)
        if len(self.resident_msrs) > MAX_RESIDENT_MSRS:
            raise sf.err(self.resident_msrs[-1].path + ("resident",),
                         f"{len(self.resident_msrs)} resident MSRs: the runtime keeps a bit per "
                         f"MSR in 32 bits, so at most {MAX_RESIDENT_MSRS}")
        self.msrs.sort(key=lambda m: (m.index, m.last is not None))
        self.policy_msrs = sorted(m.name for m in self.msrs if m.policy)
        self._cpuid_msrs(sf)

    def _msr(self, sf, p, e, names, singles):
        """One spec/msrs.yaml entry, checked (names and singles: the names
        and single indices seen so far)."""
        name = sf.ident(p, e)
        _unique(sf, names, name, p + ("name",), "MSR name")
        for k in e:
            if k not in MSR_KEYS:
                raise sf.err(p + (k,), f"unknown key '{k}' in an MSR{suggest(str(k), MSR_KEYS)}",
                             key=True)
        index = sf.field(p, e, "index", (int,))
        last = sf.field(p, e, "last", (int, type(None)), required=False)
        for k, val in (("index", index), ("last", last)):
            if val is not None and not 0 <= val <= 0xffffffff:
                raise sf.err(p + (k,), f"MSR index {val:#x} is not 32-bit")
        if last is not None and last <= index:
            raise sf.err(p + ("last",), f"range {index:#x}..{last:#x} is empty or reversed")
        if last is None:
            _unique(sf, singles, index, p + ("index",), "MSR index")
        policy = sf.field(p, e, "policy", (bool,))
        mechs = _msr_mechanisms(sf, p, e, name, policy)
        aliases = sf.field(p, e, "aliases", (list,), required=False, default=[])
        answer = sf.field(p, e, "answer", (str,), required=False)
        if answer is not None and answer not in MSR_ANSWERS:
            raise sf.err(p + ("answer",), f"unknown answer '{answer}'{suggest(answer, MSR_ANSWERS)}")
        resident = _msr_resident(sf, p, e, name, answer, last)
        msr = Obj(name=name, index=index, last=last, policy=policy, mechanisms=list(mechs),
                  answer=answer, resident=resident,
                  sdm=sf.field(p, e, "sdm", (str,)), aliases=[], path=p, atomic=None, vmcs=None,
                  macro=f"MSR_{name}" if last is None else f"MSR_{name}_FIRST",
                  first_macro=f"MSR_{name}" if last is None else f"MSR_{name}_FIRST",
                  last_macro=f"MSR_{name}" if last is None else f"MSR_{name}_LAST",
                  gate_name=name[5:].lower() if name.startswith("IA32_") else name.lower())
        for j, a in enumerate(aliases):
            if not isinstance(a, str) or not C_IDENT.match(a):
                raise sf.err(p + ("aliases", j), "an alias must be a C identifier")
            _unique(sf, names, a, p + ("aliases", j), "MSR name")
            msr.aliases.append(a)
        vmcs = sf.field(p, e, "vmcs", (dict,), required=False)
        if vmcs is not None:
            msr.vmcs = self._msr_vmcs(sf, p + ("vmcs",), vmcs)
        if answer == "vmcs" and (msr.vmcs is None or msr.vmcs.guest_field is None):
            raise sf.err(p + ("answer",), f"{name} is answered from the VMCS but names no "
                                          "vmcs: guest_field to answer from")
        if "atomic" in mechs:
            _msr_atomic_check(sf, p, msr)
        return msr

    def _msr_vmcs(self, sf, q, vmcs):
        """An MSR's `vmcs:` at q: its fields and controls, looked up."""
        out = Obj(path=q)
        for k in ("guest_field", "host_field"):
            fname = sf.field(q, vmcs, k, (str, type(None)))
            if fname is not None and fname not in self.vmcs_field:
                raise sf.err(q + (k,), f"VMCS field '{fname}' is not in spec/vmcs_fields.yaml"
                             f"{suggest(fname, self.vmcs_field)}")
            setattr(out, k, fname)
        for k in ("entry_control", "exit_load_control", "exit_save_control"):
            ref = sf.field(q, vmcs, k, (str, type(None)))
            setattr(out, k, None if ref is None else self.lookup_control(sf, q + (k,), ref))
        out.feature_name = sf.field(q, vmcs, "feature", (str, type(None)))
        for k in vmcs:
            if k not in ("guest_field", "host_field", "entry_control", "exit_load_control",
                         "exit_save_control", "feature"):
                raise sf.err(q + (k,), f"unknown key '{k}' in vmcs", key=True)
        return out

    def _cpuid_msrs(self, sf):
        """The rule that CPUID and the MSRs agree: a feature the guest is
        shown has every MSR behind it answered; one it is not shown has
        none answered (#GP, as without the feature)."""
        self.cpuid_msrs = []
        self.cpuid_hidden_masks = {}	# (leaf, reg) -> mask of hidden bits
        self.cpuid_hidden_leaves = []	# (feature, leaf)
        seen, bits = {}, {}
        for i, e in enumerate(sf.top("cpuid_msrs", list)):
            p = ("cpuid_msrs", i)
            feature = sf.ident(p, e, "feature")
            _unique(sf, seen, feature, p + ("feature",), "CPUID feature")
            for k in e:
                if k not in ("feature", "cpuid", "guest", "msrs", "why"):
                    raise sf.err(p + (k,), f"unknown key '{k}' in a cpuid_msrs entry", key=True)
            loc = sf.field(p, e, "cpuid", (dict,))
            q = p + ("cpuid",)
            leaf = sf.field(q, loc, "leaf", (int,))
            reg = sf.field(q, loc, "reg", (str,), required=False)
            bit = sf.field(q, loc, "bit", (int,), required=False)
            if not 0 <= leaf <= 0xffffffff:
                raise sf.err(q + ("leaf",), f"CPUID leaf {leaf:#x} is not 32-bit")
            if (reg is None) != (bit is None):
                raise sf.err(q, "give both reg and bit, or neither (the whole leaf)")
            if reg is not None and reg not in ("eax", "ebx", "ecx", "edx"):
                raise sf.err(q + ("reg",), f"'{reg}' is not eax, ebx, ecx or edx")
            if bit is not None and not 0 <= bit < 32:
                raise sf.err(q + ("bit",), f"bit {bit} does not fit a 32-bit register")
            where = (f"CPUID.{leaf:02X}H:{reg.upper()}[{bit}]" if reg else f"CPUID leaf {leaf:02X}H")
            _unique(sf, bits, (leaf, reg, bit), q, "CPUID location")
            guest = sf.field(p, e, "guest", (str,))
            if guest not in ("shown", "hidden"):
                raise sf.err(p + ("guest",), f"guest must be 'shown' or 'hidden', not '{guest}'")
            msrs = []
            for j, name in enumerate(sf.field(p, e, "msrs", (list,))):
                r = p + ("msrs", j)
                if not isinstance(name, str) or name not in self.msr:
                    raise sf.err(r, f"unknown MSR {name!r}{suggest(str(name), self.msr)}")
                msr = self.msr[name]
                if guest == "shown" and msr.answer is None:
                    raise sf.err(r, f"{feature} ({where}) is shown to the guest, but {msr.name} behind "
                                    "it has no answer: a trapped access would be #GP where the CPU "
                                    "answers; give it an answer (and its emulation) or hide the feature")
                if guest == "hidden" and msr.answer is not None:
                    raise sf.err(r, f"{feature} ({where}) is hidden from the guest, but {msr.name} behind "
                                    f"it is answered ({msr.answer}): a CPU without the feature raises "
                                    "#GP; drop the answer or show the feature")
                msrs.append(msr)
                msr.cpuid_feature = Obj(name=feature, where=where, guest=guest)
            why = sf.field(p, e, "why", (str,), required=guest == "hidden")
            self.cpuid_msrs.append(Obj(feature=feature, leaf=leaf, reg=reg, bit=bit, where=where,
                                       guest=guest, msrs=msrs, why=why, path=p))
            if guest == "hidden":
                if reg is None:
                    self.cpuid_hidden_leaves.append((feature, leaf))
                else:
                    self.cpuid_hidden_masks[(leaf, reg)] = \
                        self.cpuid_hidden_masks.get((leaf, reg), 0) | (1 << bit)
        for (leaf, reg) in list(self.cpuid_hidden_masks):
            if any(hl == leaf for _, hl in self.cpuid_hidden_leaves):
                raise sf.err(("cpuid_msrs",), f"CPUID leaf {leaf:02X}H is hidden whole and bit by bit")

    # --- features ---------------------------------------------------------
    def _features(self, sf):
        entries = sf.top("features", list)
        names = {}
        self.features = []
        for i, e in enumerate(entries):
            p = ("features", i)
            name = self._feature_name(sf, p, e)
            _unique(sf, names, name, p + ("name",), "feature")
            for k in e:
                if k not in ("name", "sdm", "detect", "also", "description"):
                    raise sf.err(p + (k,), f"unknown key '{k}' in a feature", key=True)
            detect = sf.field(p, e, "detect", (dict,))
            f = Obj(name=name, enum="VMX_FEATURE_" + name.upper(), sdm=sf.field(p, e, "sdm", (str,)),
                    path=p, index=len(self.features))
            f.description = sf.field(p, e, "description", (str,), required=False, default=f.sdm)
            f.detect_kind, f.controls, f.bits = self._condition(sf, p + ("detect",), detect)
            f.all_controls = list(f.controls)
            for j, cond in enumerate(sf.field(p, e, "also", (list,), required=False, default=[])):
                _, ctls, bits = self._condition(sf, p + ("also", j), cond)
                f.all_controls += [c for c in ctls if c not in f.all_controls]
                f.bits += [b for b in bits if b not in f.bits]
            f.c_checks = self._c_checks(f)
            self.features.append(f)
        self.feature = {f.name: f for f in self.features}
        # Atomic MSR features must exist; a feature that detects exactly one
        # control is the one a gate choice setting that control needs.
        msrs_sf = self.files["msrs.yaml"]
        for m in self.msrs:
            if m.vmcs is not None and m.vmcs.feature_name is not None:
                if m.vmcs.feature_name not in self.feature:
                    raise msrs_sf.err(m.vmcs.path + ("feature",),
                                      f"unknown feature '{m.vmcs.feature_name}'"
                                      f"{suggest(m.vmcs.feature_name, self.feature)}")
                m.vmcs.feature = self.feature[m.vmcs.feature_name]
            if "atomic" in m.mechanisms:
                v = m.vmcs
                m.atomic = Obj(feature=v.feature, entry_load=v.entry_control,
                               exit_load=v.exit_load_control, exit_save=v.exit_save_control,
                               guest_field=v.guest_field, host_field=v.host_field)
        self.feature_of_control = {}
        for f in self.features:
            if len(f.controls) == 1:
                self.feature_of_control.setdefault(f.controls[0].ref, f)
        # Features a profile key decides (with its own fallback syntax).
        self.gated_features = {}
        for m in self.msrs:
            if m.atomic is not None:
                self.gated_features.setdefault(m.atomic.feature.name, f"msrs.{m.name}")
        for name, key in (("pause_loop_exiting", "execution.pause"),
                          ("preemption_timer", "execution.preemption_timer")):
            if name not in self.feature:
                raise sf.err(("features",), f"feature '{name}' is missing; the generator needs it for {key}")
            self.gated_features[name] = key

    def _condition(self, sf, q, detect):
        """(kind, controls, [(caps field, bit)]) of one detect condition."""
        if not isinstance(detect, dict) or len(detect) == 0:
            raise sf.err(q, "a condition must be one of {controls: [...]}, {msr: NAME, bit: N}, {cpuid: {...}}")
        if "controls" in detect:
            kind = "controls"
        elif "msr" in detect:
            kind = "msr"
        elif "cpuid" in detect:
            kind = "cpuid"
        else:
            k = next(iter(detect))
            raise sf.err(q + (k,), f"unknown detect kind '{k}'{suggest(k, ('controls', 'msr', 'cpuid'))}",
                         key=True)
        allowed = {"controls": ("controls",), "msr": ("msr", "bit"), "cpuid": ("cpuid",)}[kind]
        for k in detect:
            if k not in allowed:
                raise sf.err(q + (k,), f"unexpected key '{k}' in a {kind} condition", key=True)
        if kind == "controls":
            refs = sf.field(q, detect, "controls", (list,))
            if not refs:
                raise sf.err(q + ("controls",), "controls is empty")
            ctls = []
            for j, ref in enumerate(refs):
                if not isinstance(ref, str):
                    raise sf.err(q + ("controls", j), "expected field.CONTROL")
                ctls.append(self.lookup_control(sf, q + ("controls", j), ref))
            return kind, ctls, []
        if kind == "msr":
            msr = sf.field(q, detect, "msr", (str,))
            if msr not in CAPS_FIELDS:
                raise sf.err(q + ("msr",), f"'{msr}' has no field in struct vmx_caps{suggest(msr, CAPS_FIELDS)}")
            bit = sf.field(q, detect, "bit", (int,))
            if not 0 <= bit <= 63:
                raise sf.err(q + ("bit",), f"bit {bit} is outside a 64-bit MSR")
            return kind, [], [(CAPS_FIELDS[msr], bit, msr)]
        c = sf.field(q, detect, "cpuid", (dict,))
        r = q + ("cpuid",)
        leaf = sf.field(r, c, "leaf", (int,))
        reg = sf.field(r, c, "reg", (str,))
        bit = sf.field(r, c, "bit", (int,))
        if (leaf, reg) not in CPUID_FIELDS:
            raise sf.err(r, f"CPUID.{leaf:#x}:{reg} is not in struct vmx_caps "
                            f"(it holds {', '.join(f'{lf:#x}:{rg}' for lf, rg in CPUID_FIELDS)})")
        if not 0 <= bit <= 31:
            raise sf.err(r + ("bit",), f"bit {bit} is outside a 32-bit register")
        return kind, [], [(CPUID_FIELDS[(leaf, reg)], bit, f"CPUID.{leaf:02X}H:{reg.upper()}")]

    def _c_checks(self, f):
        """The C conditions (ANDed) under which the CPU has feature f."""
        by_field = {}
        ctls = list(f.all_controls)
        if any(c.field.key == "proc_based2" for c in ctls) and self.secondary_activate not in ctls:
            # The secondary controls exist only if they can be activated.
            ctls.insert(0, self.secondary_activate)
        for c in ctls:
            by_field.setdefault(c.field.key, []).append(c)
        out = []
        for key in CTL_FIELD_ORDER:
            if key in by_field:
                cap = CAPS_FIELDS[self.control_fields[key].capability_msr]
                bits = " | ".join(c.macro for c in sorted(by_field[key], key=lambda c: c.bit))
                out.append(f"allowed1(caps->{cap}, {bits})")
        for field, bit, _ in f.bits:
            out.append(f"((caps->{field} >> {bit}) & 1)")
        return out

    def _feature_name(self, sf, p, e):
        name = sf.field(p, e, "name", (str,))
        if not re.match(r"^[a-z][a-z0-9_]*$", name):
            raise sf.err(p + ("name",), f"feature name '{name}' must be lower case with underscores")
        return name

    def control_ref(self, ref):
        """A control the generator itself names; missing means spec/ changed."""
        if ref not in self.control:
            sf = self.files["vmx_controls.yaml"]
            raise sf.err(("control_fields",), f"the generator needs control '{ref}', which is missing")
        return self.control[ref]

    def needs_for(self, controls):
        """Features a gate choice setting these controls needs."""
        out = []
        for c in controls:
            f = self.feature_of_control.get(c.ref)
            if f is not None and f not in out:
                out.append(f)
        return out

    # --- handlers ---------------------------------------------------------
    def _handlers(self, sf):
        value = sf.doc.value
        handlers = sf.top("handlers", dict)
        self.handlers = {}
        for name, fn in handlers.items():
            p = ("handlers", name)
            if name not in self.reason:
                raise sf.err(p, f"unknown exit reason '{name}'{suggest(name, self.reason)}", key=True)
            if not isinstance(fn, str) or not C_IDENT.match(fn):
                raise sf.err(p, f"handler of {name} must be a C function name")
            # arch/vmx/exit_entry.S does not test exit-reason bit 31: a failed
            # VM entry is reported because its basic reason has no handler.
            if self.reason[name].entry_failure:
                raise sf.err(p, f"{name} ({self.reason[name].number}) is reported only by a failed "
                             f"VM entry (SDM Vol. 3C 26.8) and must have no handler: the exit "
                             f"stub relies on it reaching handle_unexpected_exit(), which "
                             f"reports the failed entry", key=True)
            # One function may serve several reasons (handle_invalid_op).
            self.handlers[name] = fn
        self.unexpected_handlers = {"handle_unexpected_exit"}
        if isinstance(value, dict) and "unexpected" in value:
            u = value["unexpected"]
            if not isinstance(u, str) or not C_IDENT.match(u):
                raise sf.err(("unexpected",), "unexpected must be a C function name")
            self.unexpected_handlers.add(u)
        self.handler_list = [(r, self.handlers[r.name]) for r in self.exit_reasons if r.name in self.handlers]
        # Each function once, in the order of its first reason.
        self.handler_functions = []
        for _, fn in self.handler_list:
            if fn not in self.handler_functions:
                self.handler_functions.append(fn)
        # CPUID leaves whose answer a profile may take from a boot-time table.
        self.cpuid_fast_leaves = {}
        leaves = value.get("cpuid_fast_leaves", []) if isinstance(value, dict) else []
        if not isinstance(leaves, list):
            raise sf.err(("cpuid_fast_leaves",), "'cpuid_fast_leaves' must be a list")
        seen = {}
        for i, e in enumerate(leaves):
            p = ("cpuid_fast_leaves", i)
            leaf = sf.field(p, e, "leaf", (int,))
            sdm = sf.field(p, e, "sdm", (str,))
            if not 0 <= leaf <= 0xffffffff:
                raise sf.err(p + ("leaf",), f"CPUID leaf {leaf:#x} is not 32 bits")
            _unique(sf, seen, leaf, p + ("leaf",), "CPUID leaf")
            self.cpuid_fast_leaves[leaf] = Obj(leaf=leaf, sdm=sdm)
        # MSRs and ports a profile may give a fast handler (fast.msrs, fast.io_ports).
        self.msr_fast = {}
        for i, e in enumerate(value.get("msr_fast", []) if isinstance(value, dict) else []):
            p = ("msr_fast", i)
            name = sf.field(p, e, "msr", (str,))
            if name not in getattr(self, "msr", {}):
                raise sf.err(p + ("msr",), f"unknown MSR '{name}'{suggest(name, getattr(self, 'msr', {}))}")
            m = self.msr[name]
            self.msr_fast[m.name] = Obj(msr=m, read=sf.field(p, e, "read", (bool,)),
                                        write=sf.field(p, e, "write", (bool,)),
                                        sdm=sf.field(p, e, "sdm", (str,)))
        self.io_fast_ports = {}
        for i, e in enumerate(value.get("io_fast_ports", []) if isinstance(value, dict) else []):
            p = ("io_fast_ports", i)
            port = sf.field(p, e, "port", (int,))
            access = sf.field(p, e, "access", (str,))
            size = sf.field(p, e, "size", (int,))
            if not 0 <= port <= 0xffff:
                raise sf.err(p + ("port",), f"port {port:#x} is outside the I/O space 0..0xffff")
            if access not in ("in", "out"):
                raise sf.err(p + ("access",), f"access '{access}' is neither 'in' nor 'out'")
            if size not in (1, 2, 4):
                raise sf.err(p + ("size",), f"size {size} is not 1, 2 or 4")
            if port in self.io_fast_ports:
                raise sf.err(p + ("port",), f"port {port:#x} is listed twice")
            self.io_fast_ports[port] = Obj(port=port, access=access, size=size,
                                           sdm=sf.field(p, e, "sdm", (str,)))

    # --- architectural bits -------------------------------------------------
    def _arch(self, sf):
        groups = sf.top("groups", list)
        macros = {}
        self.arch_groups = []
        for i, g in enumerate(groups):
            p = ("groups", i)
            prefix = sf.field(p, g, "c_prefix", (str,))
            width = sf.field(p, g, "width", (int,), required=False, default=64)
            if width not in (32, 64):
                raise sf.err(p + ("width",), f"width {width} is not 32 or 64")
            one = "1u" if width == 32 else "1ull"
            suffix = "u" if width == 32 else "ull"
            grp = Obj(name=sf.field(p, g, "name", (str,)), sdm=sf.field(p, g, "sdm", (str,)),
                      width=width, defines=[])
            used = {}
            for j, b in enumerate(sf.field(p, g, "bits", (list,))):
                q = p + ("bits", j)
                name = sf.ident(q, b)
                bit = sf.field(q, b, "bit", (int,))
                last = sf.field(q, b, "last", (int,), required=False, default=bit)
                if not 0 <= bit <= last < width:
                    raise sf.err(q, f"bits {bit}..{last} do not fit a {width}-bit {grp.name}")
                # Fields may overlap: some registers have alternative
                # layouts (the ICR destination in xAPIC and x2APIC mode).
                if name in used:
                    raise sf.err(q + ("name",), f"{grp.name} defines {name} twice")
                used[name] = bit
                sdm = sf.field(q, b, "sdm", (str,))
                values = sf.field(q, b, "values", (dict,), required=False, default={})
                base = prefix + name
                if last == bit and not values:
                    grp.defines.append((base, f"({one} << {bit})", sdm))
                else:
                    mask = ((1 << (last - bit + 1)) - 1) << bit
                    grp.defines.append((base + "_SHIFT", str(bit), sdm))
                    grp.defines.append((base + "_MASK", f"0x{mask:x}{suffix}", f"bits {last}:{bit}"))
                    for vname, v in values.items():
                        if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < (1 << (last - bit + 1)):
                            raise sf.err(q + ("values", vname), f"value {v!r} does not fit bits {last}:{bit}")
                        grp.defines.append((f"{base}_{vname}", f"({v}{suffix} << {bit})", None))
            for m, _, _ in grp.defines:
                _unique(sf, macros, m, p, "C macro")
            self.arch_groups.append(grp)
        # Every macro arch_bits.h defines, for the generator's own references.
        self.arch_macros = set(macros)
        self.arch_values = []
        for i, v in enumerate(sf.top("values", list)):
            p = ("values", i)
            name = sf.ident(p, v)
            _unique(sf, macros, name, p + ("name",), "C macro")
            value = sf.field(p, v, "value", (int,))
            self.arch_values.append(Obj(name=name, value=value, literal=_literal(sf, p + ("value",), value),
                                        sdm=sf.field(p, v, "sdm", (str,))))


    # --- what the runtime needs in every profile ---------------------------
    def _runtime(self, sf):
        rt = sf.doc.value
        if not isinstance(rt, dict):
            raise sf.err((), "expected a mapping")
        keys = ("required_features", "required_controls", "optional_controls",
                "unsupported_controls", "granted_io_ports", "reserved_io_ports", "trapped_msrs")
        for k in rt:
            if k not in keys:
                raise sf.err((k,), f"unknown key '{k}'{suggest(k, keys)}", key=True)
        self.runtime = Obj(features=[], required=[], optional=[], unsupported=[], io_grants=[],
                           io_reserved=[], msrs=[], why={}, unless={})
        seen = {}
        for i, e in enumerate(sf.top("required_features", list)):
            p = ("required_features", i)
            name = sf.field(p, e, "feature", (str,))
            if name not in self.feature:
                raise sf.err(p + ("feature",), f"unknown feature '{name}'{suggest(name, self.feature)}")
            _unique(sf, seen, name, p + ("feature",), "feature")
            self.runtime.features.append(self.feature[name])
            self.runtime.why[name] = sf.field(p, e, "why", (str,))
        seen = {}
        for key, dest in (("required_controls", self.runtime.required),
                          ("optional_controls", self.runtime.optional),
                          ("unsupported_controls", self.runtime.unsupported)):
            for i, e in enumerate(sf.field((), rt, key, (list,), required=False, default=[])):
                p = (key, i)
                ref = sf.field(p, e, "control", (str,))
                ctl = self.lookup_control(sf, p + ("control",), ref)
                _unique(sf, seen, ctl.ref, p + ("control",), "control")
                dest.append(ctl)
                self.runtime.why[ctl.ref] = sf.field(p, e, "why", (str,))
                unless = sf.field(p, e, "unless", (str,), required=False)
                if unless is not None and (key != "required_controls" or
                                           unless not in RUNTIME_WAIVERS):
                    raise sf.err(p + ("unless",), f"'unless' must be one of "
                                                  f"{', '.join(RUNTIME_WAIVERS)} (on a required "
                                                  f"control only), not '{unless}'")
                self.runtime.unless[ctl.ref] = unless
        # Default deny: the granted ranges pass through, everything else
        # exits; the reserved ranges always exit and say how they are answered.
        self.runtime.io_grants = self._port_ranges(sf, "granted_io_ports", ())
        self.runtime.io_reserved = self._port_ranges(sf, "reserved_io_ports", IO_HANDLING,
                                                     self.runtime.io_grants)
        seen = {}
        for i, e in enumerate(sf.top("trapped_msrs", list)):
            p = ("trapped_msrs", i)
            name = sf.field(p, e, "msr", (str,))
            if name not in self.msr:
                raise sf.err(p + ("msr",), f"unknown MSR '{name}'{suggest(name, self.msr)}")
            _unique(sf, seen, name, p + ("msr",), "MSR")
            why = sf.field(p, e, "why", (str,))
            self.runtime.msrs.append(Obj(msr=self.msr[name], why=why))

    def _port_ranges(self, sf, key, hows, others=()):
        """A list of {first, last, [how,] why} port ranges, none overlapping
        another or one of @others.  @hows: the values `how` may take, ()
        for a list without it."""
        ranges = []
        for i, e in enumerate(sf.top(key, list)):
            p = (key, i)
            first = sf.field(p, e, "first", (int,))
            last = sf.field(p, e, "last", (int,), required=False, default=first)
            if not 0 <= first <= last <= 0xffff:
                raise sf.err(p, f"port range {first:#x}..{last:#x} is reversed or outside 0..0xffff")
            for o in list(others) + ranges:
                if first <= o.last and o.first <= last:
                    raise sf.err(p, f"port range {first:#x}..{last:#x} overlaps {o.first:#x}..{o.last:#x}")
            how = None
            if hows:
                how = sf.field(p, e, "how", (str,))
                if how not in hows:
                    raise sf.err(p + ("how",), f"unknown handling '{how}'{suggest(how, hows)}")
            why = sf.field(p, e, "why", (str,))
            ranges.append(Obj(first=first, last=last, how=how, why=why, short=why.split(":")[0]))
        return ranges

    # --- hypercalls ---------------------------------------------------------
    def _hypercalls(self, sf):
        abi = sf.top("abi", dict)
        version = sf.field(("abi",), abi, "version", (int,))
        self.hypercall_abi = Obj(version=version,
                                 instruction=sf.field(("abi",), abi, "instruction", (str,)),
                                 number=sf.field(("abi",), abi, "number", (str,)),
                                 args=sf.field(("abi",), abi, "args", (list,)),
                                 result=sf.field(("abi",), abi, "result", (str,)))
        names = {}
        self.hypercall_errors = []
        for i, e in enumerate(sf.top("errors", list)):
            p = ("errors", i)
            name = sf.ident(p, e)
            _unique(sf, names, name, p + ("name",), "hypercall name")
            value = sf.field(p, e, "value", (int,))
            if value >= 0:
                raise sf.err(p + ("value",), f"error {name} must be negative")
            self.hypercall_errors.append(Obj(name=name, value=value, doc=sf.field(p, e, "doc", (str,))))
        numbers = {}
        self.hypercalls = []
        for i, e in enumerate(sf.top("hypercalls", list)):
            p = ("hypercalls", i)
            name = sf.ident(p, e)
            _unique(sf, names, name, p + ("name",), "hypercall name")
            number = sf.field(p, e, "number", (int,))
            if not 0 <= number <= 0x7fffffff:
                raise sf.err(p + ("number",), f"hypercall number {number} is not a non-negative 32-bit value")
            _unique(sf, numbers, number, p + ("number",), "hypercall number")
            args = sf.field(p, e, "args", (list,))
            if len(args) > len(self.hypercall_abi.args):
                raise sf.err(p + ("args",), f"{name} takes {len(args)} arguments; the ABI passes "
                                            f"{len(self.hypercall_abi.args)}")
            self.hypercalls.append(Obj(name=name, number=number, args=args, doc=sf.field(p, e, "doc", (str,))))
        self.hypercalls.sort(key=lambda h: h.number)


def _literal(sf, path, value):
    """The number as the spec file writes it (0x020 stays 0x020)."""
    line, col = sf.doc.mark(path)
    text = sf.doc.text.splitlines()[line - 1][col - 1:]
    m = re.match(r"(0x[0-9a-fA-F_]+|[0-9_]+)", text)
    if m and int(m.group(1).replace("_", ""), 0) == value:
        return m.group(1).replace("_", "")
    return str(value)
