# SPDX-License-Identifier: GPL-2.0-only
"""The decisions a profile implies: the dispatch chain, the control bits
with their origins, the gates, the MSR switching and bitmaps, and the I/O
traps.  Pure data for the templates and for `explain`."""

import math

from . import costmodel
from .errors import GenError
from .spec import CTL_FIELD_ORDER, Obj
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
                self.groups[key].append(Obj(origin=origin, controls=ctls))

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
    plan = Obj(profile=p, spec=spec)
    _fast(plan, p, spec)
    _dispatch(plan, p, spec)
    _features_and_controls(plan, p, spec)
    _msrs(plan, p, spec)
    _io(plan, p, spec)
    return plan


# --- fast handlers -----------------------------------------------------------
def _fast(plan, p, spec):
    """The reasons whose handler the profile specialises, and the function
    the dispatch calls for each reason (spec/handlers.yaml's otherwise)."""
    # A leaf by its spec/arch.yaml name where it has one (the first listed).
    names = {}
    for a in spec.arch_values:
        if a.name.startswith("CPUID_") and isinstance(a.value, int):
            names.setdefault(a.value, a.name)
    plan.cpuid_fast = [Obj(leaf=e.leaf, sdm=e.sdm, index=i, c=names.get(e.leaf, f"{e.leaf:#x}"))
                       for i, e in enumerate(p.cpuid_fast)]
    plan.handler = dict(spec.handlers)
    plan.fast = []
    if plan.cpuid_fast:
        plan.handler["CPUID"] = "handle_cpuid_fast"
        plan.fast.append(Obj(reason=spec.reason["CPUID"], handler="handle_cpuid_fast",
                             general=spec.handlers["CPUID"],
                             why=f"fast.cpuid_leaves lists {len(plan.cpuid_fast)} "
                                 f"{'leaves' if len(plan.cpuid_fast) != 1 else 'leaf'} "
                                 f"({', '.join(f'{e.leaf:#x}' for e in plan.cpuid_fast)}) whose answer "
                                 "depends on neither ECX nor the guest: answered from a table "
                                 "built at boot, the rest by handle_cpuid()"))
    plan.msr_fast_read = [e for e in p.msr_fast if e.read]
    plan.msr_fast_write = [e for e in p.msr_fast if e.write]
    plan.io_fast = p.io_fast
    _fast_stats_slots(plan)
    for reason, lst, fn, what in (
            ("MSR_READ", plan.msr_fast_read, "handle_msr_read_fast", "RDMSR"),
            ("MSR_WRITE", plan.msr_fast_write, "handle_msr_write_fast", "WRMSR")):
        if lst:
            plan.handler[reason] = fn
            plan.fast.append(Obj(reason=spec.reason[reason], handler=fn, general=spec.handlers[reason],
                                 why=f"fast.msrs: the {what} of {', '.join(e.msr.name for e in lst)} "
                                     "decoded by a switch generated from the profile's list and "
                                     "answered directly (arch/vmx/msr_io_fast.h, the answer msr.c "
                                     "uses too), every other MSR by the general handler"))
    if plan.io_fast:
        plan.handler["IO_INSTRUCTION"] = "handle_io_instruction_fast"
        plan.fast.append(Obj(reason=spec.reason["IO_INSTRUCTION"], handler="handle_io_instruction_fast",
                             general=spec.handlers["IO_INSTRUCTION"],
                             why="fast.io_ports: "
                                 + ", ".join(f"{e.access.upper()} of {e.size} byte{'s' if e.size > 1 else ''} "
                                             f"at {e.port:#x}" for e in plan.io_fast)
                                 + " decoded by one switch on the exit qualification (port, direction, "
                                   "size, not string) and answered directly; every other I/O exit by "
                                   "the general handler"))


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


def _fast_stats_slots(plan):
    """The breakdown slot of each listed MSR (not x2APIC: those are counted
    in a direct array) and port, claimed at boot and after a statistics
    reset (PROFILE_STATS_CLAIM_FAST_KEYS), so that the fast handler counts
    its constant key with one increment of a constant slot."""
    plan.stats_table_keys = EXIT_STATS_KEYS
    plan.stats_claims = []
    plan.stats_slot = {}	# table -> {key: slot}
    for table, keys in (("msr_read", [e.msr.index for e in plan.msr_fast_read]),
                        ("msr_write", [e.msr.index for e in plan.msr_fast_write]),
                        ("io", [e.port for e in plan.io_fast])):
        keys = [k for k in dict.fromkeys(keys) if not X2APIC_FIRST <= k <= X2APIC_LAST]
        slots = _claim(keys)
        plan.stats_slot[table] = slots
        plan.stats_claims += [Obj(table=table, key=k, slot=s) for k, s in slots.items()]


# --- dispatch --------------------------------------------------------------
def _dispatch(plan, p, spec):
    handled = [m for m in p.mix if m.reason.name in spec.handlers]
    direct = []
    plan.model = None
    if p.policy == "direct":
        if p.direct_mode == "count":
            direct = handled[:p.direct_value]
        elif p.direct_mode == "coverage":
            acc = 0.0
            for m in handled:
                direct.append(m)
                acc = math.fsum(d.share for d in direct)
                # Tolerate float rounding: 0.95 reached as 0.9499999999.
                if acc + 1e-9 >= p.direct_value:
                    break
        elif p.direct_mode == "auto":
            n, costs = costmodel.optimal_length([m.exact for m in handled], p.direct_value,
                                                p.stats)
            direct = handled[:n]
            plan.model = Obj(n=n, costs=costs, cap=p.direct_value, candidates=handled,
                             stats=p.stats,
                             marginal=[costmodel.marginal([m.exact for m in handled], k, p.stats)
                                       for k in range(1, len(handled) + 1)])
            plan.model.expected = f"{float(costs[n]):.1f}"
            plan.model.table = f"{float(costs[0]):.1f}"
        else:
            by_name = {m.reason.name: m for m in p.mix}
            direct = [by_name[n] for n in p.direct_value]
    cum = 0.0
    plan.direct = []
    for m in direct:
        cum = math.fsum([cum, m.share])
        plan.direct.append(Obj(reason=m.reason, share=m.share, cumulative=cum,
                               handler=plan.handler[m.reason.name]))
    plan.direct_share = cum
    direct_names = {d.reason.name for d in plan.direct}
    share = p.share
    # Every reason the runtime handles, by number: the table and the switch.
    plan.handled = [Obj(reason=r, handler=plan.handler[r.name], share=share.get(r.name),
                        direct=r.name in direct_names)
                    for r in spec.exit_reasons if r.name in spec.handlers]
    plan.table = [h for h in plan.handled if not h.direct]
    plan.table_share = math.fsum(h.share or 0.0 for h in plan.table)
    plan.unhandled = [m for m in p.mix if m.reason.name not in spec.handlers]
    plan.unhandled_share = math.fsum(m.share for m in plan.unhandled)


# --- features, control bits and gates -------------------------------------
def _features_and_controls(plan, p, spec):
    required = {}		# feature name -> [origins]

    def need(feature, origin):
        required.setdefault(feature.name, [])
        if origin not in required[feature.name]:
            required[feature.name].append(origin)

    req = Bits()
    opt = Bits()
    gates = []

    for f in spec.runtime.features:
        need(f, "runtime")
    waived = _waivers(p)
    req.add("runtime (spec/runtime.yaml)",
            [c for c in spec.runtime.required if spec.runtime.unless.get(c.ref) not in waived])
    opt.add("runtime (spec/runtime.yaml)", spec.runtime.optional)

    driven = spec.gated_features
    for r in p.require:
        need(r.feature, "features.require")
        if r.feature.name not in driven:
            req.add(f"features.require: {r.feature.name}", r.feature.controls)

    # Execution keys.
    for key, refs in EXECUTION_CONTROLS.items():
        if getattr(p, key):
            req.add(f"execution.{key}", _controls(spec, refs))

    if p.ptimer is not None:
        need(spec.feature[PREEMPTION_TIMER_FEATURE], "execution.preemption_timer")
        ctls = list(spec.feature[PREEMPTION_TIMER_FEATURE].controls)
        if p.ptimer.save:
            save = spec.control_ref("vm_exit.SAVE_VMX_PREEMPTION_TIMER")
            ctls.append(save)
            for f in spec.needs_for([save]):
                need(f, "execution.preemption_timer.save_on_exit")
        req.add("execution.preemption_timer", ctls)
    elif PREEMPTION_TIMER_FEATURE in {r.feature.name for r in p.require}:
        r = next(r for r in p.require if r.feature.name == PREEMPTION_TIMER_FEATURE)
        raise p.doc.error(r.path, "features.require names preemption_timer but "
                                  "execution.preemption_timer is not enabled")

    # MSRs switched atomically: their entry/exit controls, as a pair.
    plan.msr_gates = {}
    for e in p.msrs:
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
        origin = f"msrs.{e.msr.name}: switch atomic"
        if e.fallback is None:
            need(a.feature, f"msrs.{e.msr.name}")
            req.add(origin, ctls)
        else:
            gname = e.msr.gate_name
            gates.append(Obj(name=gname, macro=gname.upper(), origin=f"msrs.{e.msr.name}",
                             msr=e.msr,
                             choices=[Obj(name="atomic", macro="ATOMIC", description=MSR_SWITCH_WORDS["atomic"],
                                          needs=[a.feature], set=_choice_set(ctls)),
                                      Obj(name=e.fallback, macro=e.fallback.upper(),
                                          description=MSR_SWITCH_WORDS[e.fallback], needs=[], set=[],
                                          manual=e.fallback == "manual")]))
            plan.msr_gates[e.msr.name] = gates[-1]
    plan.pause = None
    if p.pause is not None:
        chain = p.pause.chain
        choices = []
        for mode in chain:
            suffix, words, refs = PAUSE_CHOICES[mode]
            ctls = _controls(spec, refs)
            # pause_loop_exiting for loop, pause_exiting for exit.
            choices.append(Obj(name=mode, macro=suffix, description=words, needs=spec.needs_for(ctls),
                               set=_choice_set(ctls)))
        if len(chain) > 1:
            gates.append(Obj(name="pause", macro="PAUSE", origin="execution.pause", choices=choices))
        else:
            # No fallback: the mode is simply what the profile runs with.
            only = choices[0]
            for f in only.needs:
                need(f, "execution.pause")
            req.add(f"execution.pause: {only.description}", [c for _, cs in only.set for c in cs])
        plan.pause = Obj(mode=p.pause.mode, chain=chain,
                         uses_loop="loop" in chain, ple_gap=p.pause.ple_gap, ple_window=p.pause.ple_window)

    for r in p.require:
        name = r.feature.name
        if name in driven and name not in required and name not in (PAUSE_LOOP_FEATURE,):
            raise p.doc.error(r.path, f"features.require names {name}, but {driven[name]} "
                                      "does not use it")
        if name == PAUSE_LOOP_FEATURE and (p.pause is None or p.pause.mode != "loop"):
            raise p.doc.error(r.path, "features.require names pause_loop_exiting but "
                                      "execution.pause does not use PAUSE-loop exiting")

    for g in p.prefer:
        f = g.feature
        gates.append(Obj(name=f.name, macro=f.name.upper(), origin=f"features.prefer.{f.name}",
                         choices=[Obj(name=f.name, macro="USE", description=f.description, needs=[f],
                                      set=_choice_set(f.controls)),
                                  Obj(name="none", macro="NONE", description=f"without {f.description}",
                                      needs=[], set=[])]))

    if len(gates) > plan.spec.max_gates:
        raise GenError(p.path, 1, 1, f"the profile declares {len(gates)} gates; the runtime "
                                     f"supports at most {plan.spec.max_gates} (VMX_MAX_GATES)")
    for i, g in enumerate(gates):
        g.index = i
        for j, c in enumerate(g.choices):
            c.index = j

    # A bit required anyway need not be set by a gate choice: drop it there,
    # so that a choice's set[] lists only what the choice adds.
    req_refs = {c.ref for c in req.all()}
    for g in gates:
        for c in g.choices:
            c.set = [(k, [ctl for ctl in ctls if ctl.ref not in req_refs]) for k, ctls in c.set]
            c.set = [(k, ctls) for k, ctls in c.set if ctls]

    plan.required_features = [Obj(feature=f, origins=required[f.name])
                              for f in spec.features if f.name in required]
    plan.required_bits = req
    plan.optional_bits = opt
    plan.gates = gates


# --- MSRs --------------------------------------------------------------------
def _msrs(plan, p, spec):
    manual = []
    load_list = []
    atomic = []
    for e in p.msrs:
        gate = plan.msr_gates.get(e.msr.name)
        if e.switch == "manual" or gate is not None:
            owned = TRANSITION_OWNED_BITS.get(e.msr.name, ())
            for macro in owned:
                if macro not in spec.arch_macros:
                    raise GenError("spec/arch.yaml", None, None,
                                   f"no {macro}, which the manual switch of {e.msr.name} leaves alone")
            manual.append(Obj(entry=e, msr=e.msr, gate=gate, save=e.writes_pass, owned=list(owned)))
        if e.switch == "load_list":
            load_list.append(e)
        if e.switch == "atomic":
            atomic.append(Obj(entry=e, msr=e.msr, gate=gate))
    manual.sort(key=lambda m: m.msr.index)
    load_list.sort(key=lambda e: e.msr.index)
    for i, m in enumerate(manual):
        m.slot = i
        how = f"gate {m.gate.name}: {MSR_SWITCH_WORDS['manual']}" if m.gate else "switch manual"
        m.words = f"{how}, {m.entry.access}"
    plan.manual_msrs = manual
    plan.load_list = load_list
    plan.atomic_msrs = atomic

    rules = []
    # Ranges before single MSRs, so a single MSR's rule overrides its range's.
    named = sorted(p.msrs, key=lambda e: (e.msr.last is None, e.msr.index))
    for e in named:
        m = e.msr
        rules.append(Obj(first=m.index, last=m.last if m.last is not None else m.index,
                         first_c=m.first_macro, last_c=m.last_macro,
                         intercept=ACCESS_INTERCEPT[e.access],
                         comment=f"msrs.{m.name}: {e.access}"))
    # The runtime's MSRs last: nothing a profile says can open them.
    for t in sorted(spec.runtime.msrs, key=lambda t: t.msr.index):
        m = t.msr
        rules.append(Obj(first=m.index, last=m.last if m.last is not None else m.index,
                         first_c=m.first_macro, last_c=m.last_macro,
                         intercept="MSR_INTERCEPT_RW", comment=f"runtime: {m.name}: {t.why}"))
    plan.msr_rules = rules


# --- I/O ---------------------------------------------------------------------
def _io(plan, p, spec):
    """The ports the guest owns: the runtime's grants and the profile's.
    The I/O bitmaps trap every other port (default deny)."""
    ranges = [Obj(first=r.first, last=r.last, comment=f"runtime: {r.short}", why=r.why)
              for r in spec.runtime.io_grants]
    ranges += [Obj(first=r.first, last=r.last, comment=f"execution.io: {r.why}", why=r.why)
               for r in p.io]
    plan.io_grants = sorted(ranges, key=lambda r: r.first)


def describe_mix_share(share):
    return pct(share)
