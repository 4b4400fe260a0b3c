# SPDX-License-Identifier: GPL-2.0-only
"""A profile: loaded, checked against spec/profile.schema.json, then
checked for meaning against spec/, and normalised for decide.py.

Every rejection is one GenError at the offending node.
"""

import hashlib
import textwrap
import math
from fractions import Fraction
import os

from .errors import GenError, suggest
from .loader import load_file
from .schema import validate as schema_validate
from .spec import Obj

SHARE_TOLERANCE = 1e-6
U32_MAX = 0xffffffff

# KVM's defaults (arch/x86/kvm/vmx/vmx.c: ple_gap, ple_window).
DEFAULT_PLE_GAP = 128
DEFAULT_PLE_WINDOW = 4096
# The scheduler's defaults (runtime/vm/sched.h says the same): a slice of
# 200000 ticks is about 2.5 ms of Bochs at 80 M instructions/s, well above
# a VM exit's few hundred ticks; 64 PAUSE exits are about a PLE_Window of
# spinning at Bochs's cost per PAUSE exit.
DEFAULT_SCHED_SLICE = 200000
# A woken vCPU preempts the running one only after that has run this long
# of its turn (CFS's wakeup granularity): about a VMCS switch's cost;
# runtime/vm/sched.h says why not more.
DEFAULT_WAKE_GRANULARITY = 2000
DEFAULT_PAUSE_YIELD_AFTER = 64
PAUSE_YIELD_AFTER_MAX = 0xffff

# Writes reach the hardware MSR without an exit under these access modes;
# reads under these.
WRITES_PASS = ("passthrough", "trap_reads")
READS_PASS = ("passthrough", "trap_writes")



def _check_supported(err, spec, feature, at, key):
    """Refuse a feature whose controls the runtime cannot honour
    (spec/runtime.yaml unsupported_controls): refused here, not at boot."""
    unsupported = {c.ref for c in spec.runtime.unsupported}
    for c in feature.controls:
        if c.ref in unsupported:
            raise err(at, f"feature {feature.name} sets {c.ref}, which the runtime does not "
                          f"support: it {spec.runtime.why[c.ref]} (spec/runtime.yaml "
                          "unsupported_controls)", key=key)

def pct(x):
    """A share as a percentage with one decimal, as the generated comments print it."""
    if 0 < x < 0.0005:
        return "<0.1%"
    return f"{x * 100:.1f}%"


class Profile(Obj):
    pass


def load_profile(path, spec, schema):
    """Load and check the profile at path (shown in messages as given)."""
    doc, raw = load_file(path)
    return check_profile(doc, raw, spec, schema)


def check_profile(doc, raw, spec, schema):
    """Check a loaded profile (doc, from the bytes raw): the schema, then
    its meaning.  from-stats checks the text it is about to write with it."""
    if doc.value is None:
        raise GenError(doc.path, 1, 1, "the profile is empty")
    schema_validate(doc, schema)
    return _semantic(doc, raw, spec)


def _semantic(doc, raw, spec):
    v = doc.value
    err = doc.error
    p = Profile(path=doc.path, doc=doc, sha256=hashlib.sha256(raw).hexdigest())
    _name(p, v, err, doc)
    _exit_mix(p, v, err, spec)
    _dispatch(p, v, err, spec)
    p.stats = v.get("statistics", "counts")
    _fast_cpuid(p, v, err, spec)
    p.apic = v.get("apic", "passthrough")
    p.interrupts = v.get("interrupts", "exit")
    required_names = _features(p, v.get("features", {}), doc, err, spec)

    # --- execution --------------------------------------------------------
    x = v.get("execution", {})
    p.hlt_exiting = x.get("hlt_exiting", True)
    p.cr8_exiting = x.get("cr8_exiting", False)
    p.mov_dr_exiting = x.get("mov_dr_exiting", False)
    p.rdtsc_exiting = x.get("rdtsc_exiting", False)
    _pause(p, x, err, required_names)
    _preemption_timer(p, x, err)
    _scheduler(p, x, err)
    _io(p, x, err, spec)

    # --- MSRs -------------------------------------------------------------
    _msrs(p, v.get("msrs", {}), doc, err, spec, required_names)
    _apic_virtual(p, err)
    _fast_msrs_io(p, v.get("fast", {}), err, spec)
    _x2apic_eoi(p, err)
    _interrupts_direct(p, err)

    # That every required feature is used is checked in decide.py, which
    # knows what each profile key turns on.
    return p


def _name(p, v, err, doc):
    """The name (the file's) and the description."""
    stem = os.path.basename(doc.path)
    stem = stem[:-5] if stem.endswith(".yaml") else stem
    if v["profile"] != stem:
        raise err(("profile",), f"profile name '{v['profile']}' does not match the file name '{stem}.yaml'")
    p.name = v["profile"]
    p.description = " ".join(v["description"].split())
    p.description_lines = textwrap.wrap(p.description.replace("*/", "* /"), width=70)


def _exit_mix(p, v, err, spec):
    """The exit mix: p.mix in frequency order, p.share by reason name."""
    mix = v["exit_mix"]
    src = mix["source"]
    p.source = src
    if src["kind"] == "measured":
        missing = [k for k in ("guest", "cpu", "date", "exits") if k not in src]
        if missing:
            raise err(("exit_mix", "source"),
                      f"exit_mix.source: a measured mix needs guest, cpu, date and exits; "
                      f"missing {', '.join(missing)}")
    else:
        extra = [k for k in ("guest", "cpu", "date", "exits") if k in src]
        if extra:
            raise err(("exit_mix", "source", extra[0]),
                      f"exit_mix.source: '{extra[0]}' describes a measurement, but kind is 'estimate'",
                      key=True)
    p.unit = mix["unit"]
    reasons = mix["reasons"]
    for name in reasons:
        if name not in spec.reason:
            raise err(("exit_mix", "reasons", name),
                      f"unknown exit reason '{name}'{suggest(name, spec.reason)}", key=True)
    if p.unit == "count":
        for name, n in reasons.items():
            if not isinstance(n, int) and not (isinstance(n, float) and n.is_integer()):
                raise err(("exit_mix", "reasons", name),
                          f"exit_mix.reasons.{name}: a count must be a whole number, not {n:g}")
        total = sum(int(n) for n in reasons.values())
        if total == 0:
            raise err(("exit_mix", "reasons"), "exit_mix.reasons: the counts add up to 0")
        if "exits" in src and src["exits"] != total:
            raise err(("exit_mix", "source", "exits"),
                      f"exit_mix.source.exits is {src['exits']} but the counts add up to {total}")
        shares = {k: int(n) / total for k, n in reasons.items()}
    else:
        for name, s in reasons.items():
            if not math.isfinite(s) or s > 1:
                raise err(("exit_mix", "reasons", name),
                          f"exit_mix.reasons.{name}: a share must be between 0 and 1, not {s:g}")
        total = math.fsum(reasons.values())
        if abs(total - 1.0) > SHARE_TOLERANCE:
            raise err(("exit_mix", "reasons"),
                      f"exit_mix.reasons: the shares add up to {total:.6g}, not 1")
        shares = dict(reasons)
    # Frequency order; ties broken by exit-reason number.
    p.mix = sorted((Obj(reason=spec.reason[k], value=reasons[k], share=shares[k])
                    for k in reasons), key=lambda m: (-m.share, m.reason.number))
    p.share = {m.reason.name: m.share for m in p.mix}
    # Exact shares for the cost model (costmodel.py): counts as the
    # fractions they are, shares as the exact value of the float written.
    for m in p.mix:
        m.exact = Fraction(int(m.value), total) if p.unit == "count" else Fraction(m.value)


def _dispatch(p, v, err, spec):
    """dispatch: the policy, its direct mode, the unexpected-exit handler."""
    d = v["dispatch"]
    p.policy = d["policy"]
    p.direct_mode = None
    p.direct_value = None
    if "direct" in d:
        if p.policy != "direct":
            raise err(("dispatch", "direct"),
                      f"dispatch.direct is only meaningful with policy direct, not {p.policy}", key=True)
        dd = d["direct"]
        if "auto" in dd:
            # The schema allows max only beside auto and auto beside no other mode.
            p.direct_mode, p.direct_value = "auto", dd.get("max")
        else:
            (mode, value), = dd.items()
            p.direct_mode, p.direct_value = mode, value
    elif p.policy == "direct":
        raise err(("dispatch",), "dispatch: policy direct needs direct: {count: N}, {coverage: F}, "
                                 "{order: [...]} or {auto: true}")
    handled = [m for m in p.mix if m.reason.name in spec.handlers]
    if p.direct_mode == "count" and p.direct_value > len(handled):
        raise err(("dispatch", "direct", "count"),
                  f"dispatch.direct.count is {p.direct_value} but exit_mix has only "
                  f"{len(handled)} reason{'s' if len(handled) != 1 else ''} with a runtime handler")
    if p.direct_mode == "coverage":
        c = p.direct_value
        if not (0 < c <= 1):
            raise err(("dispatch", "direct", "coverage"),
                      f"dispatch.direct.coverage must be more than 0 and at most 1, not {c:g}")
        reach = math.fsum(m.share for m in handled)
        if reach + 1e-9 < c:
            raise err(("dispatch", "direct", "coverage"),
                      f"dispatch.direct.coverage {c:g} cannot be reached: reasons with a runtime "
                      f"handler make up only {pct(reach)} of exit_mix")
    if p.direct_mode == "order":
        _direct_order(p, err, spec)
    p.direct_words = ""
    if p.direct_mode == "order":
        p.direct_words = ", explicit order"
    elif p.direct_mode == "auto":
        p.direct_words = ", auto" + (f", max {p.direct_value}" if p.direct_value is not None else "")
    elif p.direct_mode is not None:
        p.direct_words = f", {p.direct_mode} {p.direct_value:g}"
    p.unexpected = d.get("unexpected_handler", "handle_unexpected_exit")
    if p.unexpected not in spec.unexpected_handlers:
        raise err(("dispatch", "unexpected_handler"),
                  f"unknown handler '{p.unexpected}'{suggest(p.unexpected, spec.unexpected_handlers)}")


def _direct_order(p, err, spec):
    """dispatch.direct.order: known reasons, each once, with a handler and a share."""
    seen = {}
    for i, name in enumerate(p.direct_value):
        at = ("dispatch", "direct", "order", i)
        if name not in spec.reason:
            raise err(at, f"unknown exit reason '{name}'{suggest(name, spec.reason)}")
        if name in seen:
            raise err(at, f"dispatch.direct.order lists {name} twice")
        seen[name] = i
        if name not in spec.handlers:
            raise err(at, f"exit reason {name} has no runtime handler in spec/handlers.yaml, "
                          "so it cannot be called directly")
        if name not in p.share:
            raise err(at, f"dispatch.direct.order names {name}, which exit_mix.reasons does not list "
                          "(give it a share, even 0)")


def _fast_cpuid(p, v, err, spec):
    """fast.cpuid_leaves: leaves a boot-time table may answer, each once."""
    p.cpuid_fast = []
    seen = {}
    for i, leaf in enumerate(v.get("fast", {}).get("cpuid_leaves", [])):
        at = ("fast", "cpuid_leaves", i)
        if leaf not in spec.cpuid_fast_leaves:
            raise err(at, f"fast.cpuid_leaves: CPUID leaf {leaf:#x} cannot be answered from a table: "
                          "its answer depends on ECX or on the guest, or nobody has checked that it "
                          f"does not (spec/handlers.yaml cpuid_fast_leaves lists "
                          f"{', '.join(f'{x:#x}' for x in spec.cpuid_fast_leaves)})")
        if leaf in seen:
            raise err(at, f"fast.cpuid_leaves lists leaf {leaf:#x} twice")
        seen[leaf] = i
        p.cpuid_fast.append(spec.cpuid_fast_leaves[leaf])


def _features(p, f, doc, err, spec):
    """features.require and features.prefer; returns the required names."""
    p.require = []
    for i, name in enumerate(f.get("require", [])):
        if name not in spec.feature:
            raise err(("features", "require", i), f"unknown feature '{name}'{suggest(name, spec.feature)}")
        _check_supported(err, spec, spec.feature[name], ("features", "require", i), False)
        p.require.append(Obj(feature=spec.feature[name], path=("features", "require", i)))
    required_names = {r.feature.name for r in p.require}
    p.prefer = []
    for name, g in sorted(f.get("prefer", {}).items(), key=lambda kv: doc.key_mark(("features", "prefer", kv[0]))):
        at = ("features", "prefer", name)
        if name not in spec.feature:
            raise err(at, f"unknown feature '{name}'{suggest(name, spec.feature)}", key=True)
        if name in required_names:
            raise err(at, f"feature {name} is both required and preferred: a required feature "
                          "has no fallback", key=True)
        feat = spec.feature[name]
        if feat in spec.runtime.features:
            raise err(at, f"feature {name} is required by the runtime (spec/runtime.yaml), "
                          "so preferring it changes nothing", key=True)
        if name in spec.gated_features:
            raise err(at, f"feature {name} is decided by {spec.gated_features[name]}; "
                          "declare its fallback there", key=True)
        if not feat.controls:
            raise err(at, f"feature {name} sets no VMX control, so preferring it changes nothing", key=True)
        _check_supported(err, spec, feat, at, True)
        p.prefer.append(Obj(feature=feat, fallback=g["fallback"], path=at))
    return required_names


def _pause(p, x, err, required_names):
    pause = x.get("pause")
    if pause is None:
        p.pause = None
        return
    at = ("execution", "pause")
    mode = pause["mode"]
    chain = [mode]
    for i, fb in enumerate(pause.get("fallback", [])):
        if fb == mode:
            raise err(at + ("fallback", i), f"execution.pause.fallback '{fb}' is the preferred mode itself")
        if fb in chain:
            raise err(at + ("fallback", i), f"execution.pause.fallback repeats '{fb}'")
        if chain[-1] == "none":
            raise err(at + ("fallback", i), f"execution.pause.fallback '{fb}' is unreachable: "
                                            "'none' needs no CPU feature")
        chain.append(fb)
    if "fallback" in pause and mode != "loop":
        # Only PAUSE-loop exiting depends on a CPU feature that may be absent.
        raise err(at + ("fallback",), f"execution.pause.fallback is only meaningful for mode loop: "
                                      f"mode '{mode}' needs no optional CPU feature", key=True)
    if "fallback" in pause and "pause_loop_exiting" in required_names:
        raise err(at + ("fallback",), "execution.pause.fallback contradicts features.require: "
                                      "pause_loop_exiting is required, so there is nothing to fall back from",
                  key=True)
    for k in ("ple_gap", "ple_window"):
        if k in pause:
            if "loop" not in chain:
                raise err(at + (k,), f"execution.pause.{k} is set but PAUSE-loop exiting is not used "
                                     f"(mode '{mode}')", key=True)
            if not 0 <= pause[k] <= U32_MAX:
                raise err(at + (k,), f"execution.pause.{k} {pause[k]} does not fit the 32-bit "
                                     f"{'PLE_Gap' if k == 'ple_gap' else 'PLE_Window'} field")
    if "pause_loop_exiting" in required_names and mode != "loop":
        raise err(at + ("mode",), f"features.require names pause_loop_exiting but execution.pause.mode is '{mode}'")
    p.pause = Obj(mode=mode, chain=chain, path=at,
                  ple_gap=pause.get("ple_gap", DEFAULT_PLE_GAP),
                  ple_window=pause.get("ple_window", DEFAULT_PLE_WINDOW))


def _preemption_timer(p, x, err):
    t = x.get("preemption_timer")
    at = ("execution", "preemption_timer")
    if t is None or not t["enabled"]:
        for k in ("value", "save_on_exit"):
            if t is not None and k in t:
                raise err(at + (k,), f"execution.preemption_timer.{k} is set but the timer is not enabled",
                          key=True)
        p.ptimer = None
        return
    if "value" not in t:
        raise err(at, "execution.preemption_timer: an enabled timer needs a value")
    if not 0 < t["value"] <= U32_MAX:
        raise err(at + ("value",), f"execution.preemption_timer.value {t['value']} does not fit the "
                                   "32-bit VMX-preemption timer value (1..0xffffffff)")
    p.ptimer = Obj(value=t["value"], save=t.get("save_on_exit", False), path=at)


def _scheduler(p, x, err):
    """execution.scheduler: the slice, the wake granularity and the PAUSE count, defaults
    when absent."""
    s = x.get("scheduler", {})
    at = ("execution", "scheduler")
    if "slice" in s and not 0 < s["slice"] <= U32_MAX:
        raise err(at + ("slice",), f"execution.scheduler.slice {s['slice']} does not fit the "
                                   "32-bit VMX-preemption timer value (1..0xffffffff)")
    if "wake_granularity" in s and not 0 <= s["wake_granularity"] <= U32_MAX:
        raise err(at + ("wake_granularity",), f"execution.scheduler.wake_granularity "
                                              f"{s['wake_granularity']} is not in 0..0xffffffff")
    if "pause_yield_after" in s:
        if not 0 < s["pause_yield_after"] <= PAUSE_YIELD_AFTER_MAX:
            raise err(at + ("pause_yield_after",), f"execution.scheduler.pause_yield_after "
                                                   f"{s['pause_yield_after']} is not in 1..{PAUSE_YIELD_AFTER_MAX}")
        if p.pause is None or "exit" not in p.pause.chain:
            raise err(at + ("pause_yield_after",), "execution.scheduler.pause_yield_after is set but "
                                                   "PAUSE exiting is never used (execution.pause has no "
                                                   "mode or fallback 'exit')", key=True)
    p.sched = Obj(slice=s.get("slice", DEFAULT_SCHED_SLICE),
                  wake_granularity=s.get("wake_granularity", DEFAULT_WAKE_GRANULARITY),
                  pause_yield_after=s.get("pause_yield_after", DEFAULT_PAUSE_YIELD_AFTER), path=at)


# The MSRs the virtual local APIC (runtime/devices/vlapic.c) answers: every access must exit.
VLAPIC_MSRS = ("IA32_APIC_BASE", "IA32_X2APIC", "IA32_TSC_DEADLINE")


def _apic_virtual(p, err):
    """apic: virtual: the model needs its timer's clock, HLT and its MSRs."""
    if p.apic != "virtual":
        return
    at = ("apic",)
    if p.ptimer is None or not p.ptimer.save:
        raise err(at, "apic: virtual needs execution.preemption_timer enabled with save_on_exit: "
                      "the virtual APIC's timer runs on the VMX-preemption timer, which must keep "
                      "counting across exits")
    if not p.hlt_exiting:
        raise err(at, "apic: virtual needs execution.hlt_exiting: a halted vCPU is woken by its "
                      "virtual APIC, which a HLT that does not exit never consults")
    if not p.cr8_exiting:
        raise err(at, "apic: virtual needs execution.cr8_exiting: in 64-bit mode MOV to CR8 "
                      "writes the TPR, which must be the virtual APIC's, not the host's")
    named = {m.msr.name: m for m in p.msrs}
    for name in VLAPIC_MSRS:
        m = named.get(name)
        access = m.access if m is not None else p.msr_default
        if access != "trap":
            raise err(m.path + ("access",) if m is not None else at,
                      f"apic: virtual emulates {name}: its access must be 'trap', not '{access}'")


def _x2apic_eoi(p, err):
    """IA32_X2APIC_EOI passed through: only where the guest owns the
    physical APIC (apic: passthrough).  Under intercept-icr the hypervisor
    delivers IPIs with its own kick vector, under virtual the APIC is
    runtime/devices/vlapic.c's: an EOI must reach the hypervisor there."""
    for m in p.msrs:
        if m.msr.name == "IA32_X2APIC_EOI" and m.access != "trap" and p.apic != "passthrough":
            raise err(m.path + ("access",), f"IA32_X2APIC_EOI may be passed through only with apic: "
                                            f"passthrough, not apic: {p.apic}: there the EOI is the "
                                            "hypervisor's to see")


def _interrupts_direct(p, err):
    """interrupts: direct: the guest's IDT takes the physical interrupts of
    its CPU, so nothing else may need them there.  Refused where the
    hypervisor itself must see an interrupt first."""
    if p.interrupts != "direct":
        return
    at = ("interrupts",)
    if p.apic == "virtual":
        raise err(at, "interrupts: direct needs apic: passthrough, not apic: virtual: the "
                      "physical local APIC is the host's there, and its kicks and the guests' "
                      "device interrupts must exit to reach the virtual APICs")
    if p.apic == "intercept-icr":
        raise err(at, "interrupts: direct needs apic: passthrough, not apic: intercept-icr: "
                      "the hypervisor would inject the guest's fixed IPIs past the guest's own "
                      "APIC (its TPR, ISR and EOI), which takes every other interrupt directly")
    if p.ptimer is None:
        raise err(at, "interrupts: direct needs execution.preemption_timer enabled: with no "
                      "interrupt exit it is the watchdog that gets a vCPU out of the guest (a "
                      "guest halted with interrupts off, or a kick the guest blocked)")


def msr_access(p, spec, msr):
    """How the profile's MSR bitmap treats @msr: the runtime's trapped
    MSRs always trap; a named MSR (or a named range holding it) as the
    profile says; any other MSR is intercepted (decide.py _msrs)."""
    for t in spec.runtime.msrs:
        if t.msr.index <= msr.index <= (t.msr.last if t.msr.last is not None else t.msr.index):
            return "trap"
    best = None
    for e in p.msrs:
        last = e.msr.last if e.msr.last is not None else e.msr.index
        if e.msr.index <= msr.index <= last and (best is None or e.msr.last is None):
            best = e
    return best.access if best is not None else "trap"


def _fast_msrs_io(p, f, err, spec):
    """fast.msrs and fast.io_ports: only what spec/handlers.yaml has a fast
    answer for, and only what the profile traps (a fast handler for an
    access that never exits is a mistake in the profile)."""
    p.msr_fast = []
    seen = {}
    for i, name in enumerate(f.get("msrs", [])):
        at = ("fast", "msrs", i)
        if name not in spec.msr:
            raise err(at, f"fast.msrs: unknown MSR '{name}'{suggest(name, spec.msr)}")
        msr = spec.msr[name]
        if msr.name not in spec.msr_fast:
            raise err(at, f"fast.msrs: {msr.name} has no fast handler (spec/handlers.yaml msr_fast "
                          f"lists {', '.join(spec.msr_fast) or 'none'})")
        if msr.name in seen:
            raise err(at, f"fast.msrs lists {msr.name} twice")
        seen[msr.name] = i
        fm = spec.msr_fast[msr.name]
        access = msr_access(p, spec, msr)
        read = fm.read and access in ("trap", "trap_reads")
        write = fm.write and access in ("trap", "trap_writes")
        if not read and not write:
            raise err(at, f"fast.msrs: {msr.name} is not trapped in the direction its fast handler "
                          f"answers ({'RDMSR' if fm.read else 'WRMSR'}; msrs: {access}): it never exits")
        if p.apic == "virtual" and msr.name in VLAPIC_MSRS:
            raise err(at, f"fast.msrs: under apic: virtual {msr.name} is the virtual APIC's "
                          "(vlapic_exits.c), not a fast handler's")
        p.msr_fast.append(Obj(msr=msr, read=read, write=write, sdm=fm.sdm))
    p.io_fast = []
    seen = {}
    for i, port in enumerate(f.get("io_ports", [])):
        at = ("fast", "io_ports", i)
        if port not in spec.io_fast_ports:
            raise err(at, f"fast.io_ports: port {port:#x} has no fast handler (spec/handlers.yaml "
                          f"io_fast_ports lists {', '.join(f'{x:#x}' for x in spec.io_fast_ports)})")
        if port in seen:
            raise err(at, f"fast.io_ports lists port {port:#x} twice")
        seen[port] = i
        for r in list(spec.runtime.io_grants) + list(p.io):
            if r.first <= port <= r.last:
                raise err(at, f"fast.io_ports: port {port:#x} is granted to the guest "
                              f"({ports(r.first, r.last)}): it never exits")
        p.io_fast.append(spec.io_fast_ports[port])


def ports(first, last):
    return f"port {first:#x}" if first == last else f"port range {first:#x}..{last:#x}"


def _io(p, x, err, spec):
    """execution.io.grant: ports the profile gives the guest on top of the
    runtime's (every other port exits: default deny).  None may be a port
    the runtime reserves or already grants."""
    ranges = []
    for i, r in enumerate(x.get("io", {}).get("grant", [])):
        at = ("execution", "io", "grant", i)
        first, last = r["port"], r.get("last", r["port"])
        for k, val in (("port", first), ("last", last)):
            if not 0 <= val <= 0xffff:
                raise err(at + (k,), f"port {val:#x} is outside the I/O space 0..0xffff")
        if last < first:
            raise err(at + ("last",), f"port range {first:#x}..{last:#x} is reversed")
        ranges.append(Obj(first=first, last=last, why=r["why"], origin="profile", path=at))
    for r in ranges:
        for o in spec.runtime.io_reserved:
            if r.first <= o.last and o.first <= r.last:
                raise err(r.path, f"{ports(r.first, r.last)} overlaps the runtime's {ports(o.first, o.last)} "
                                  f"({o.short}), which spec/runtime.yaml reserves: no profile may grant it")
        for o in spec.runtime.io_grants:
            if r.first <= o.last and o.first <= r.last:
                raise err(r.path, f"{ports(r.first, r.last)} overlaps the runtime's {ports(o.first, o.last)} "
                                  f"({o.short}), which spec/runtime.yaml already grants")
    for i, a in enumerate(ranges):
        for b in ranges[:i]:
            if a.first <= b.last and b.first <= a.last:
                raise err(a.path, f"{ports(a.first, a.last)} overlaps the {ports(b.first, b.last)} "
                                  f"at line {p.doc.mark(b.path)[0]}")
    p.io = ranges


def _msrs(p, m, doc, err, spec, required_names):
    p.msr_default = m.get("default", "trap")
    p.msrs = []
    names = sorted((k for k in m if k != "default"), key=lambda k: doc.key_mark(("msrs", k)))
    runtime_trapped = {t.msr.name: t for t in spec.runtime.msrs}
    canonical = {}
    for name in names:
        at = ("msrs", name)
        e = m[name]
        if name not in spec.msr:
            raise err(at, f"unknown MSR '{name}'{suggest(name, spec.policy_msrs)}", key=True)
        msr = spec.msr[name]
        if msr.name in canonical:
            raise err(at, f"{name} is {msr.name}, already named at line {doc.key_mark(canonical[msr.name])[0]}",
                      key=True)
        canonical[msr.name] = at
        if not msr.policy:
            raise err(at, f"{name} is not an MSR a profile may name: the runtime owns it "
                          "(spec/msrs.yaml)", key=True)
        offers = ", ".join(msr.mechanisms) or "nothing"
        switch, access = e["switch"], e["access"]
        if name in runtime_trapped and access != "trap":
            raise err(at + ("access",), f"{name} is trapped by the runtime (spec/runtime.yaml); "
                                        f"a profile cannot make it '{access}'")
        if switch != "none" and switch not in msr.mechanisms:
            raise err(at + ("switch",), f"{name} cannot be switched '{switch}': spec/msrs.yaml offers {offers}")
        if switch != "none" and msr.last is not None:
            raise err(at + ("switch",), f"{name} is a range of MSRs; only single MSRs can be switched")
        if access != "passthrough" and "trap" not in msr.mechanisms:
            raise err(at + ("access",), f"{name} cannot be accessed '{access}': spec/msrs.yaml offers "
                                        f"{offers}, not trap")
        if access != "trap" and "passthrough" not in msr.mechanisms:
            raise err(at + ("access",), f"{name} cannot be accessed '{access}': spec/msrs.yaml offers "
                                        f"{offers}, not passthrough")
        switchable = [x for x in ("atomic", "load_list", "manual") if x in msr.mechanisms]
        if access != "trap" and switch == "none" and switchable:
            raise err(at + ("access",), f"{name} cannot be accessed '{access}' without switching: the "
                                        f"guest would reach the host's value; spec/msrs.yaml offers "
                                        f"{', '.join(switchable)} to switch it")
        if switch == "atomic" and access in WRITES_PASS and msr.atomic.exit_save is None:
            raise err(at + ("access",), f"{name}: switch atomic with access '{access}' would lose the "
                                        "guest's writes: no VM-exit control saves it; trap its writes")
        fallback = e.get("fallback")
        if fallback is not None:
            fat = at + ("fallback",)
            if fallback == switch:
                raise err(fat, f"{name}: fallback '{fallback}' is the preferred switch itself")
            if switch != "atomic":
                raise err(fat, f"{name}: a fallback is only meaningful for switch atomic; "
                               f"'{switch}' needs no optional CPU feature")
            if fallback not in msr.mechanisms:
                raise err(fat, f"{name} cannot fall back to '{fallback}': spec/msrs.yaml offers {offers}")
            if fallback != "manual":
                raise err(fat, f"{name}: an atomic switch can only fall back to 'manual' "
                               "(the one mechanism that needs neither a CPU feature nor a VMCS list)")
            feat = msr.atomic.feature
            if feat.name in required_names:
                raise err(fat, f"{name}: fallback contradicts features.require: {feat.name} is required, "
                               "so there is nothing to fall back from")
        hidden = getattr(msr, "cpuid_feature", None)
        if hidden is not None and hidden.guest == "hidden" and (access != "trap" or switch != "none"):
            raise err(at, f"{name} is behind {hidden.name} ({hidden.where}), which exitplan hides from "
                          "the guest (spec/msrs.yaml cpuid_msrs): it must stay trapped and unswitched "
                          "(the guest gets #GP, as on a CPU without the feature)", key=True)
        p.msrs.append(Obj(msr=msr, switch=switch, access=access, fallback=fallback, path=at,
                          writes_pass=access in WRITES_PASS, reads_pass=access in READS_PASS))
