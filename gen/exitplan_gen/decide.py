# SPDX-License-Identifier: GPL-2.0-only
"""The decisions a profile implies: the dispatch chain, the control bits
with their origins, the gates, the MSR switching and bitmaps, and the I/O
traps.  Pure data for the templates and for `explain`."""

import math
from dataclasses import replace

from . import costmodel
from .errors import GenError
from .plan import (AtomicMsr, BitGroup, ControlPlan, CostModel, CpuidFastLeaf, DirectReason,
                   DispatchPlan, FastHandler, FastPlan, Gate, GateChoice, HandledReason, IoGrant,
                   ManualMsr, MsrPlan, MsrRule, Plan, PausePlan, RequiredFeature, StatsClaim)
from .spec import CTL_FIELD_ORDER
from .validate import pct

# Profile keys that decide a control bit, and the controls each sets.
# Names are checked against spec/vmx_controls.yaml when used.
EXECUTION_CONTROLS = {
    "hlt_exiting": ["proc_based.HLT_EXITING"],
    "cr8_exiting": ["proc_based.CR8_LOAD_EXITING", "proc_based.CR8_STORE_EXITING"],
    "mov_dr_exiting": ["proc_based.MOV_DR_EXITING"],
    "rdtsc_exiting": ["proc_based.RDTSC_EXITING"],
}
PAUSE_LOOP_FEATURE = "pause_loop_exiting"
PREEMPTION_TIMER_FEATURE = "preemption_timer"
PAUSE_CHOICES = {
    # mode: (choice macro suffix, printed description, controls)
    "loop": ("LOOP", "PAUSE-loop exiting", ["proc_based2.PAUSE_LOOP_EXITING"]),
    "exit": ("EXIT", "plain PAUSE exiting", ["proc_based.PAUSE_EXITING"]),
    "none": ("NONE", "no PAUSE exiting", []),
}
MSR_SWITCH_WORDS = {
    "atomic": "atomic",
    "manual": "manual WRMSR",
    "load_list": "MSR-load lists",
}
# Bits of an MSR that every VM entry and VM exit load by themselves, so a
# manual switch must leave them as they are: without "load IA32_EFER",
# entry loads EFER.LME and EFER.LMA from "IA-32e mode guest" and exit from
# "host address-space size" (SDM 26.3.2.1, 27.5.1), and a WRMSR that
# cleared LME in the 64-bit host would fault (#GP).  KVM ignores the same
# two bits when it switches EFER by hand.  Macro names from spec/arch.yaml.
TRANSITION_OWNED_BITS = {
    "IA32_EFER": ("EFER_LME", "EFER_LMA"),
}
ACCESS_INTERCEPT = {
    "passthrough": "MSR_INTERCEPT_NONE",
    "trap": "MSR_INTERCEPT_RW",
    "trap_writes": "MSR_INTERCEPT_WRITE",
    "trap_reads": "MSR_INTERCEPT_READ",
}
ACCESS_WORDS = {
    "passthrough": "RDMSR and WRMSR run without an exit",
    "trap": "RDMSR and WRMSR exit",
    "trap_writes": "WRMSR exits, RDMSR runs without an exit",
    "trap_reads": "RDMSR exits, WRMSR runs without an exit",
}


class Bits:
    """Control bits per field, in groups that each say where they come from."""

    def __init__(self):
        self.groups = {k: [] for k in CTL_FIELD_ORDER}

    def add(self, origin, controls):
        by_field = {}
        for c in controls:
            by_field.setdefault(c.field.key, []).append(c)
        for key, ctls in by_field.items():
            have = {c.ref for g in self.groups[key] for c in g.controls}
            ctls = sorted({c.ref: c for c in ctls if c.ref not in have}.values(), key=lambda c: c.bit)
            if ctls:
                self.groups[key].append(BitGroup(origin=origin, controls=ctls))

    def fields(self, spec):
        """[(control field, [groups])] for fields with bits, in SDM order."""
        return [(spec.control_fields[k], self.groups[k]) for k in CTL_FIELD_ORDER if self.groups[k]]

    def all(self):
        return [c for k in CTL_FIELD_ORDER for g in self.groups[k] for c in g.controls]


def _waivers(p):
    """The spec/runtime.yaml `unless` settings the profile has."""
    return {"interrupts: direct"} if p.interrupts == "direct" else set()


def _controls(spec, refs):
    return [spec.control_ref(r) for r in refs]


def _choice_set(controls):
    """{field key: [controls]} of one gate choice, SDM field order."""
    out = {}
    for c in sorted(controls, key=lambda c: (CTL_FIELD_ORDER.index(c.field.key), c.bit)):
        out.setdefault(c.field.key, []).append(c)
    return [(k, out[k]) for k in CTL_FIELD_ORDER if k in out]


def decide(p, spec):
    fast = _fast(p, spec)
    dispatch = _dispatch(p, spec, fast.handler)
    controls = _features_and_controls(p, spec)
    msrs = _msrs(p, spec, controls.msr_gates)
    return Plan.of(p, spec, _io(p, spec), fast, dispatch, controls, msrs)


# --- fast handlers -----------------------------------------------------------
def _cpuid_fast(p, spec):
    """The leaves the table answers, each by its spec/arch.yaml name where
    it has one (the first listed)."""
    names = {}
    for a in spec.arch_values:
        if a.name.startswith("CPUID_") and isinstance(a.value, int):
            names.setdefault(a.value, a.name)
    return [CpuidFastLeaf(leaf=e.leaf, sdm=e.sdm, index=i, c=names.get(e.leaf, f"{e.leaf:#x}"))
            for i, e in enumerate(p.cpuid_fast)]


def _fast_handlers(spec, cpuid_fast, msr_fast_read, msr_fast_write, io_fast):
    """[FastHandler]: the reasons whose handler the profile specialises."""
    fast = []
    if cpuid_fast:
        fast.append(FastHandler(reason=spec.reason["CPUID"], handler="handle_cpuid_fast",
                                general=spec.handlers["CPUID"],
                                why=f"fast.cpuid_leaves lists {len(cpuid_fast)} "
                                    f"{'leaves' if len(cpuid_fast) != 1 else 'leaf'} "
                                    f"({', '.join(f'{e.leaf:#x}' for e in cpuid_fast)}) whose answer "
                                    "depends on neither ECX nor the guest: answered from a table "
                                    "built at boot, the rest by handle_cpuid()"))
    for reason, lst, fn, what in (
            ("MSR_READ", msr_fast_read, "handle_msr_read_fast", "RDMSR"),
            ("MSR_WRITE", msr_fast_write, "handle_msr_write_fast", "WRMSR")):
        if lst:
            fast.append(FastHandler(reason=spec.reason[reason], handler=fn, general=spec.handlers[reason],
                                    why=f"fast.msrs: the {what} of {', '.join(e.msr.name for e in lst)} "
                                        "decoded by a switch generated from the profile's list and "
                                        "answered directly (arch/vmx/msr_io_fast.h, the answer msr.c "
                                        "uses too), every other MSR by the general handler"))
    if io_fast:
        fast.append(FastHandler(reason=spec.reason["IO_INSTRUCTION"], handler="handle_io_instruction_fast",
                                general=spec.handlers["IO_INSTRUCTION"],
                                why="fast.io_ports: "
                                    + ", ".join(f"{e.access.upper()} of {e.size} byte{'s' if e.size > 1 else ''} "
                                                f"at {e.port:#x}" for e in io_fast)
                                    + " decoded by one switch on the exit qualification (port, direction, "
                                      "size, not string) and answered directly; every other I/O exit by "
                                      "the general handler"))
    return fast


def _fast(p, spec):
    """The reasons whose handler the profile specialises, and the function
    the dispatch calls for each reason (spec/handlers.yaml's otherwise)."""
    cpuid_fast = _cpuid_fast(p, spec)
    msr_fast_read = [e for e in p.msr_fast if e.read]
    msr_fast_write = [e for e in p.msr_fast if e.write]
    io_fast = p.io_fast
    fast = _fast_handlers(spec, cpuid_fast, msr_fast_read, msr_fast_write, io_fast)
    handler = dict(spec.handlers)
    for f in fast:
        handler[f.reason.name] = f.handler
    claims, slot = _fast_stats_slots(msr_fast_read, msr_fast_write, io_fast)
    return FastPlan(cpuid_fast=cpuid_fast, handler=handler, fast=fast, msr_fast_read=msr_fast_read,
                    msr_fast_write=msr_fast_write, io_fast=io_fast, stats_table_keys=EXIT_STATS_KEYS,
                    stats_claims=claims, stats_slot=slot)


# The slots of struct exit_stats_table (arch/vmx/exit_stats.h): EXIT_STATS_KEYS
# of them, a key's home slot its low bits, linear probing; the generated
# code asserts the size (msr_io_fast.c), and tests/gen/test_c_interfaces.py
# runs _claim() and the C table on the same keys.
EXIT_STATS_KEYS = 32
X2APIC_FIRST, X2APIC_LAST = 0x800, 0x8ff	# direct-indexed in exit_stats.h, no table slot


def _claim(keys):
    """{key: slot}: the slots the keys take, in this order, in an empty table,
    as exit_stats_table_count_slow() would claim them."""
    if len(keys) > EXIT_STATS_KEYS:	# the probing below would never end
        raise ValueError(f"{len(keys)} keys for a table of {EXIT_STATS_KEYS}")
    used, slots = set(), {}
    for key in keys:
        i = key & (EXIT_STATS_KEYS - 1)
        while i in used:
            i = (i + 1) & (EXIT_STATS_KEYS - 1)
        used.add(i)
        slots[key] = i
    return slots


def _fast_stats_slots(msr_fast_read, msr_fast_write, io_fast):
    """The breakdown slot of each listed MSR (not x2APIC: those are counted
    in a direct array) and port, claimed at boot and after a statistics
    reset (PROFILE_STATS_CLAIM_FAST_KEYS), so that the fast handler counts
    its constant key with one increment of a constant slot.  Returns
    ([StatsClaim], {table: {key: slot}})."""
    claims, slot = [], {}
    for table, keys in (("msr_read", [e.msr.index for e in msr_fast_read]),
                        ("msr_write", [e.msr.index for e in msr_fast_write]),
                        ("io", [e.port for e in io_fast])):
        keys = [k for k in dict.fromkeys(keys) if not X2APIC_FIRST <= k <= X2APIC_LAST]
        slots = _claim(keys)
        slot[table] = slots
        claims += [StatsClaim(table=table, key=k, slot=s) for k, s in slots.items()]
    return claims, slot


# --- dispatch --------------------------------------------------------------
def _cost_model(p, handled):
    """direct: auto: as many reasons as lower the expected cost."""
    n, costs = costmodel.optimal_length([m.exact for m in handled], p.direct_value, p.stats)
    return CostModel(n=n, costs=costs, cap=p.direct_value, candidates=handled, stats=p.stats,
                     marginal=[costmodel.marginal([m.exact for m in handled], k, p.stats)
                               for k in range(1, len(handled) + 1)],
                     expected=f"{float(costs[n]):.1f}", table=f"{float(costs[0]):.1f}")


def _direct_reasons(p, handled, model):
    """The mix entries the dispatch calls directly, in chain order."""
    if p.policy != "direct":
        return []
    if p.direct_mode == "count":
        return handled[:p.direct_value]
    if p.direct_mode == "coverage":
        direct = []
        for m in handled:
            direct.append(m)
            acc = math.fsum(d.share for d in direct)
            # Tolerate float rounding: 0.95 reached as 0.9499999999.
            if acc + 1e-9 >= p.direct_value:
                break
        return direct
    if p.direct_mode == "auto":
        return handled[:model.n]
    by_name = {m.reason.name: m for m in p.mix}
    return [by_name[n] for n in p.direct_value]


def _dispatch(p, spec, handler):
    handled = [m for m in p.mix if m.reason.name in spec.handlers]
    model = _cost_model(p, handled) if p.policy == "direct" and p.direct_mode == "auto" else None
    cum = 0.0
    direct = []
    for m in _direct_reasons(p, handled, model):
        cum = math.fsum([cum, m.share])
        direct.append(DirectReason(reason=m.reason, share=m.share, cumulative=cum,
                                   handler=handler[m.reason.name]))
    direct_names = {d.reason.name for d in direct}
    share = p.share
    # Every reason the runtime handles, by number: the table and the switch.
    all_handled = [HandledReason(reason=r, handler=handler[r.name], share=share.get(r.name),
                                 direct=r.name in direct_names)
                   for r in spec.exit_reasons if r.name in spec.handlers]
    table = [h for h in all_handled if not h.direct]
    unhandled = [m for m in p.mix if m.reason.name not in spec.handlers]
    return DispatchPlan(model=model, direct=direct, direct_share=cum, handled=all_handled,
                        table=table, table_share=math.fsum(h.share or 0.0 for h in table),
                        unhandled=unhandled, unhandled_share=math.fsum(m.share for m in unhandled))


# --- features, control bits and gates -------------------------------------
class _Controls:
    """What the profile requires of the CPU, step by step: the features
    (each with the keys that need it), the required and optional control
    bits, and the gates (in declaration order)."""

    def __init__(self, p, spec):
        self.p, self.spec = p, spec
        self.required = {}		# feature name -> [origins]
        self.req = Bits()
        self.opt = Bits()
        self.gates = []
        self.pause = None

    def need(self, feature, origin):
        self.required.setdefault(feature.name, [])
        if origin not in self.required[feature.name]:
            self.required[feature.name].append(origin)

    def runtime(self):
        spec = self.spec
        for f in spec.runtime.features:
            self.need(f, "runtime")
        waived = _waivers(self.p)
        self.req.add("runtime (spec/runtime.yaml)",
                     [c for c in spec.runtime.required if spec.runtime.unless.get(c.ref) not in waived])
        self.opt.add("runtime (spec/runtime.yaml)", spec.runtime.optional)

    def features_required(self):
        driven = self.spec.gated_features
        for r in self.p.require:
            self.need(r.feature, "features.require")
            if r.feature.name not in driven:
                self.req.add(f"features.require: {r.feature.name}", r.feature.controls)

    def execution(self):
        for key, refs in EXECUTION_CONTROLS.items():
            if getattr(self.p, key):
                self.req.add(f"execution.{key}", _controls(self.spec, refs))

    def preemption_timer(self):
        p, spec = self.p, self.spec
        if p.ptimer is not None:
            self.need(spec.feature[PREEMPTION_TIMER_FEATURE], "execution.preemption_timer")
            ctls = list(spec.feature[PREEMPTION_TIMER_FEATURE].controls)
            if p.ptimer.save:
                save = spec.control_ref("vm_exit.SAVE_VMX_PREEMPTION_TIMER")
                ctls.append(save)
                for f in spec.needs_for([save]):
                    self.need(f, "execution.preemption_timer.save_on_exit")
            self.req.add("execution.preemption_timer", ctls)
        elif PREEMPTION_TIMER_FEATURE in {r.feature.name for r in p.require}:
            r = next(r for r in p.require if r.feature.name == PREEMPTION_TIMER_FEATURE)
            raise p.doc.error(r.path, "features.require names preemption_timer but "
                                      "execution.preemption_timer is not enabled")

    def atomic_msrs(self):
        """MSRs switched atomically: their entry/exit controls, as a pair."""
        for e in self.p.msrs:
            if e.switch != "atomic":
                continue
            a = e.msr.atomic
            # Load on entry and (where the VMCS has a host field) on exit, as a
            # pair; IA32_DEBUGCTL has no exit load: every VM exit clears it.
            ctls = [c for c in (a.entry_load, a.exit_load) if c is not None]
            if e.writes_pass:
                # The guest changes the MSR without exiting: save it on exit
                # (validate.py refused the MSRs without a save control).
                ctls.append(a.exit_save)
            if e.fallback is None:
                self.need(a.feature, f"msrs.{e.msr.name}")
                self.req.add(f"msrs.{e.msr.name}: switch atomic", ctls)
                continue
            gname = e.msr.gate_name
            self.gates.append(Gate(
                name=gname, macro=gname.upper(), origin=f"msrs.{e.msr.name}", msr=e.msr,
                choices=[GateChoice(name="atomic", macro="ATOMIC", description=MSR_SWITCH_WORDS["atomic"],
                                    needs=[a.feature], set=_choice_set(ctls)),
                         GateChoice(name=e.fallback, macro=e.fallback.upper(),
                                    description=MSR_SWITCH_WORDS[e.fallback], needs=[], set=[],
                                    manual=e.fallback == "manual")]))

    def pause_exiting(self):
        p, spec = self.p, self.spec
        if p.pause is None:
            return
        chain = p.pause.chain
        choices = []
        for mode in chain:
            suffix, words, refs = PAUSE_CHOICES[mode]
            ctls = _controls(spec, refs)
            # pause_loop_exiting for loop, pause_exiting for exit.
            choices.append(GateChoice(name=mode, macro=suffix, description=words,
                                      needs=spec.needs_for(ctls), set=_choice_set(ctls)))
        if len(chain) > 1:
            self.gates.append(Gate(name="pause", macro="PAUSE", origin="execution.pause", choices=choices))
        else:
            # No fallback: the mode is simply what the profile runs with.
            only = choices[0]
            for f in only.needs:
                self.need(f, "execution.pause")
            self.req.add(f"execution.pause: {only.description}", [c for _, cs in only.set for c in cs])
        self.pause = PausePlan(mode=p.pause.mode, chain=chain, uses_loop="loop" in chain,
                               ple_gap=p.pause.ple_gap, ple_window=p.pause.ple_window)

    def check_required_used(self):
        """A feature features.require names must be one the profile uses."""
        p, driven = self.p, self.spec.gated_features
        for r in p.require:
            name = r.feature.name
            if name in driven and name not in self.required and name not in (PAUSE_LOOP_FEATURE,):
                raise p.doc.error(r.path, f"features.require names {name}, but {driven[name]} "
                                          "does not use it")
            if name == PAUSE_LOOP_FEATURE and (p.pause is None or p.pause.mode != "loop"):
                raise p.doc.error(r.path, "features.require names pause_loop_exiting but "
                                          "execution.pause does not use PAUSE-loop exiting")

    def features_preferred(self):
        for g in self.p.prefer:
            f = g.feature
            self.gates.append(Gate(
                name=f.name, macro=f.name.upper(), origin=f"features.prefer.{f.name}",
                choices=[GateChoice(name=f.name, macro="USE", description=f.description, needs=[f],
                                    set=_choice_set(f.controls)),
                         GateChoice(name="none", macro="NONE", description=f"without {f.description}",
                                    needs=[], set=[])]))

    def numbered_gates(self):
        """The gates with their indices, each choice's set[] without the
        bits required anyway: it lists only what the choice adds."""
        if len(self.gates) > self.spec.max_gates:
            raise GenError(self.p.path, 1, 1, f"the profile declares {len(self.gates)} gates; the runtime "
                                              f"supports at most {self.spec.max_gates} (VMX_MAX_GATES)")
        req_refs = {c.ref for c in self.req.all()}

        def adds(choice_set):
            kept = [(k, [ctl for ctl in ctls if ctl.ref not in req_refs]) for k, ctls in choice_set]
            return [(k, ctls) for k, ctls in kept if ctls]

        return [replace(g, index=i, choices=[replace(c, index=j, set=adds(c.set))
                                             for j, c in enumerate(g.choices)])
                for i, g in enumerate(self.gates)]

    def plan(self):
        gates = self.numbered_gates()
        return ControlPlan(required_features=[RequiredFeature(feature=f, origins=self.required[f.name])
                                              for f in self.spec.features if f.name in self.required],
                           required_bits=self.req, optional_bits=self.opt, gates=gates,
                           msr_gates={g.msr.name: g for g in gates if g.msr is not None},
                           pause=self.pause)


def _features_and_controls(p, spec):
    c = _Controls(p, spec)
    c.runtime()
    c.features_required()
    c.execution()
    c.preemption_timer()
    c.atomic_msrs()
    c.pause_exiting()
    c.check_required_used()
    c.features_preferred()
    return c.plan()


# --- MSRs --------------------------------------------------------------------
def _manual_msrs(p, spec, msr_gates):
    """The MSRs switched by hand, always or when their gate falls back, by
    index: their slot in the per-vCPU arrays."""
    manual = []
    for e in sorted(p.msrs, key=lambda e: e.msr.index):
        gate = msr_gates.get(e.msr.name)
        if e.switch != "manual" and gate is None:
            continue
        owned = TRANSITION_OWNED_BITS.get(e.msr.name, ())
        for macro in owned:
            if macro not in spec.arch_macros:
                raise GenError("spec/arch.yaml", None, None,
                               f"no {macro}, which the manual switch of {e.msr.name} leaves alone")
        how = f"gate {gate.name}: {MSR_SWITCH_WORDS['manual']}" if gate else "switch manual"
        manual.append(ManualMsr(entry=e, msr=e.msr, gate=gate, save=e.writes_pass, owned=list(owned),
                                slot=len(manual), words=f"{how}, {e.access}"))
    return manual


def _msr_rules(p, spec):
    """The MSR bitmap, rule by rule."""
    rules = []
    # Ranges before single MSRs, so a single MSR's rule overrides its range's.
    named = sorted(p.msrs, key=lambda e: (e.msr.last is None, e.msr.index))
    for e in named:
        m = e.msr
        rules.append(MsrRule(first=m.index, last=m.last if m.last is not None else m.index,
                             first_c=m.first_macro, last_c=m.last_macro,
                             intercept=ACCESS_INTERCEPT[e.access],
                             comment=f"msrs.{m.name}: {e.access}"))
    # The runtime's MSRs last: nothing a profile says can open them.
    for t in sorted(spec.runtime.msrs, key=lambda t: t.msr.index):
        m = t.msr
        rules.append(MsrRule(first=m.index, last=m.last if m.last is not None else m.index,
                             first_c=m.first_macro, last_c=m.last_macro,
                             intercept="MSR_INTERCEPT_RW", comment=f"runtime: {m.name}: {t.why}"))
    return rules


def _msrs(p, spec, msr_gates):
    return MsrPlan(manual_msrs=_manual_msrs(p, spec, msr_gates),
                   load_list=sorted((e for e in p.msrs if e.switch == "load_list"), key=lambda e: e.msr.index),
                   atomic_msrs=[AtomicMsr(entry=e, msr=e.msr, gate=msr_gates.get(e.msr.name))
                                for e in p.msrs if e.switch == "atomic"],
                   msr_rules=_msr_rules(p, spec))


# --- I/O ---------------------------------------------------------------------
def _io(p, spec):
    """The ports the guest owns: the runtime's grants and the profile's.
    The I/O bitmaps trap every other port (default deny)."""
    ranges = [IoGrant(first=r.first, last=r.last, comment=f"runtime: {r.short}", why=r.why)
              for r in spec.runtime.io_grants]
    ranges += [IoGrant(first=r.first, last=r.last, comment=f"execution.io: {r.why}", why=r.why)
               for r in p.io]
    return sorted(ranges, key=lambda r: r.first)


def describe_mix_share(share):
    return pct(share)
