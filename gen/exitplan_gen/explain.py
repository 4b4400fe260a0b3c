# SPDX-License-Identifier: GPL-2.0-only
"""`exitplan-gen explain PROFILE`: the profile's decisions in words."""

import textwrap

from . import costmodel
from .decide import ACCESS_WORDS, MSR_SWITCH_WORDS
from .validate import pct


def _wrap(text, indent="  "):
    return textwrap.fill(" ".join(text.split()), width=78, initial_indent=indent,
                         subsequent_indent=indent) + "\n"


def _explain_auto(w, plan):
    """Why the cost model (costmodel.py) keeps each candidate in or out."""
    m = plan.model
    n = m.n
    if not plan.direct:
        w(_wrap("  (none: the table alone is cheapest under this mix)"))
    st = m.stats

    def ins(x):
        return f"{float(x):.1f}"

    w(_wrap(f"Cost model (gen/exitplan_gen/costmodel.py, instructions from the entry "
            f"of vmx_dispatch_exit() to the handler's jump): link k costs "
            f"{costmodel.COMPARE}k + {costmodel.DIRECT + costmodel.STATS_LINK[st]}, the table "
            f"behind a chain of n {costmodel.COMPARE}n + {costmodel.TABLE + costmodel.STATS_TABLE[st]}"
            f"{' (the exit counted in both)' if st != 'off' else ''}. Expected per exit: "
            f"{ins(m.costs[n])} with this chain of {n}, {ins(m.costs[0])} with the table alone."))
    w(_wrap("Expected per exit by chain length: " +
            ", ".join(f"{k}: {ins(c)}" for k, c in enumerate(m.costs)) + "."))
    for k, c in enumerate(m.candidates, 1):
        if c.exact == 0:
            why = "out: not seen in the mix, a link would only cost the exits that pass it"
        elif k <= n:
            why = (f"in at #{k}: {costmodel.link_cost(k, st)} instructions to its handler "
                   f"(the table alone: {costmodel.table_cost(0, st)}); a chain of {k} "
                   f"expects {ins(m.costs[k])} per exit, of {k - 1} {ins(m.costs[k - 1])}")
            if m.marginal[k - 1] <= 0:
                why += ("; on its own it does not pay, but the links after it "
                        "make up for it")
        elif m.cap is not None and k > m.cap:
            why = f"out: beyond max {m.cap}"
        else:
            best = min(m.costs[k:]) if k < len(m.costs) else None
            why = (f"out: the best chain reaching it (length {k} or more) costs {ins(best)} "
                   f"per exit against {ins(m.costs[n])}; a link saves it "
                   f"{costmodel.table_cost(0, st) - costmodel.link_cost(1, st)} but adds "
                   f"{costmodel.COMPARE} to every exit that passes it")
        w(_wrap(f"{c.reason.name} {pct(c.share)}: {why}.", indent="    "))


def _explain_fast(w, plan):
    """Which reasons got a fast handler (decide.py _fast) and why."""
    if not plan.fast:
        w("Fast handlers: none (the profile lists no fast.cpuid_leaves, fast.msrs or fast.io_ports).\n")
        return
    w("Fast handlers (the profile's fast key):\n")
    for f in plan.fast:
        w(_wrap(f"{f.reason.name} -> {f.handler}() instead of {f.general}(): {f.why}.", "  "))
    if plan.msr_fast_read:
        w(_wrap(f"RDMSR of an MSR not listed: {costmodel.msr_fast_miss(len(plan.msr_fast_read))} "
                "instructions before handle_msr_read() (gen/exitplan_gen/costmodel.py).", "    "))
    if plan.msr_fast_write:
        w(_wrap(f"WRMSR of an MSR not listed: "
                f"{costmodel.msr_fast_miss(len(plan.msr_fast_write))} instructions "
                "before handle_msr_write().", "    "))
    if plan.io_fast:
        w(_wrap(f"An I/O exit not listed: {costmodel.io_fast_miss(len(plan.io_fast))} instructions "
                "before handle_io_instruction().", "    "))
    n = len(plan.cpuid_fast)
    if not n:
        return
    for e in plan.cpuid_fast:
        w(f"    leaf {e.leaf:#010x}  {costmodel.cpuid_fast_hit(e.index + 1):2} instructions in the "
          f"handler  ({e.sdm})\n")
    w(_wrap(f"Any other leaf: {costmodel.cpuid_fast_miss(n)} instructions before handle_cpuid() "
            f"(gen/exitplan_gen/costmodel.py). The table is filled at boot by cpuid_answer(), "
            f"the general handler's own answer code, so what it hides stays hidden.", "    "))


def _explain_profile(w, plan):
    """The profile, its description and where its exit mix comes from."""
    p = plan.profile
    w(f"Profile {p.name} ({p.path})\n")
    w(_wrap(p.description))
    src = p.source
    w("\nExit mix: ")
    if src["kind"] == "measured":
        w(f"measured on {src['cpu']} running {src['guest']}, {src['date']}, {src['exits']} exits.\n")
    else:
        w("estimated.\n")
    w(_wrap(f"Basis: {src['basis']}"))


def _explain_dispatch(w, plan):
    """The dispatch: the direct chain, the table, the unhandled reasons."""
    p = plan.profile
    # Dispatch.
    w(f"\nDispatch: policy {p.policy}")
    if p.policy == "direct":
        w(f", direct {p.direct_mode}")
        if p.direct_mode not in ("order", "auto"):
            w(f" {p.direct_value:g}")
        if p.direct_mode == "auto" and p.direct_value is not None:
            w(f", max {p.direct_value}")
        w(".\n")
        if p.direct_mode == "count":
            why = f"the {p.direct_value} most frequent reasons with a runtime handler"
        elif p.direct_mode == "coverage":
            why = (f"the most frequent reasons with a runtime handler until together "
                   f"they reach {pct(p.direct_value)} of all exits")
        elif p.direct_mode == "auto":
            why = ("the most frequent reasons with a runtime handler, as many as lower "
                   "the expected dispatch cost under this mix")
        else:
            why = "the reasons the profile lists, in its order"
        if p.direct_mode != "order":
            why += "; ties broken by exit-reason number"
        w(_wrap(f"Called directly ({why}), so the hot path has no indirect call:"))
        for i, d in enumerate(plan.direct, 1):
            w(f"  {i:2}. {d.reason.name:<22} {pct(d.share):>6}  cumulative {pct(d.cumulative):>6}"
              f"  -> {d.handler}()\n")
        if p.direct_mode == "coverage":
            w(_wrap(f"The chain stops at {pct(plan.direct_share)}, the first point at or above "
                    f"{pct(p.direct_value)}."))
        if p.direct_mode == "auto":
            _explain_auto(w, plan)
    elif p.policy == "table":
        w(".\n")
        w(_wrap("No direct calls: every exit goes through the bounds-checked, speculation-safe "
                "handler table."))
    else:
        w(".\n")
        w(_wrap("A C switch over every handled reason; the compiler picks jump table or compares."))
    if p.policy != "switch":
        table_in_mix = [h for h in plan.table if h.share]
        line = f"Through vmx_exit_table: {len(plan.table)} handled reasons, {pct(plan.table_share)} of the mix"
        if table_in_mix:
            line += ": " + ", ".join(f"{h.reason.name} {pct(h.share)}" for h in table_in_mix)
        w(_wrap(line + "."))
    if plan.unhandled:
        w(_wrap("No runtime handler (to " + p.unexpected + "(), which stops the guest): " +
                ", ".join(f"{m.reason.name} {pct(m.share)}" for m in plan.unhandled) + "."))
    else:
        w(f"  Any other reason goes to {p.unexpected}(), which reports it and stops the guest.\n")


def _explain_ipis(w, plan):
    """Statistics, and how an interprocessor interrupt is delivered and what it costs."""
    p = plan.profile
    w(f"\nStatistics: {p.stats}: ")
    w({"off": "the dispatch does no accounting at all.\n",
       "counts": "the dispatch counts every exit by reason in vcpu->stats.\n",
       "timing": "the dispatch counts every exit by reason; the runtime adds TSC ticks per reason.\n"}
      [p.stats])

    w(f"\nInterprocessor interrupts (apic: {p.apic}):\n")
    # passthrough: how the target takes the IPI, and what it costs, is interrupts:'s.
    arrival, cost = (("the target's guest takes it through its IDT, with no exit (interrupts: "
                      "direct)", "the sender's exit alone") if p.interrupts == "direct" else
                     ("the target takes it as one EXTERNAL_INTERRUPT exit",
                      "the sender's exit and the target's interrupt exit"))
    w(_wrap({
        "passthrough": "every ICR write exits (MSR_WRITE of the x2APIC ICR, or an EPT_VIOLATION "
                       "on the read-only xAPIC page); a checked fixed IPI is then written to the "
                       f"real ICR, and {arrival}. INIT, STARTUP and NMI are emulated, SMI "
                       f"dropped. Cost per IPI: {cost}; the guest can address any physical CPU "
                       "the destination names.",
        "intercept-icr": "every ICR write exits (MSR_WRITE of the x2APIC ICR, or an "
                         "EPT_VIOLATION on the read-only xAPIC page) and the hypervisor delivers "
                         "each fixed IPI itself: it decodes the destination, posts the vector to "
                         "each target vCPU and kicks its CPU with an NMI, which it takes as an "
                         "EXCEPTION_NMI exit and injects the vector (every physical vector is "
                         "the guest's: no vector could carry the kick). The same exits as "
                         "passthrough plus the decode and the posting in the handler; no guest "
                         "IPI reaches a CPU that is not one of its vCPUs.",
        "virtual": "each vCPU has a virtual local APIC (runtime/devices/vlapic.c) and the physical one "
                   "stays the host's. Its cost in exits: every x2APIC register access is an "
                   "MSR_READ or MSR_WRITE (0x800-0x8ff trapped), every xAPIC register access, "
                   "read or write, an EPT_VIOLATION (the APIC page is not mapped), so each "
                   "interrupt costs at least its EOI's exit; its timer is the VMX-preemption "
                   "timer (PREEMPTION_TIMER exits); an interrupt the guest cannot take at once "
                   "opens an INTERRUPT_WINDOW exit. Fixed IPIs are posted to the target's "
                   "virtual IRR and its CPU kicked (EXTERNAL_INTERRUPT there).",
    }[p.apic]))


def _explain_interrupts(w, plan):
    """What a physical interrupt on a vCPU's CPU does."""
    p = plan.profile
    w(f"\nPhysical interrupts on a vCPU's CPU (interrupts: {p.interrupts}):\n")
    if p.interrupts == "direct":
        hlt = ("" if p.hlt_exiting else "; with execution.hlt_exiting off, HLT exits are gone "
               "too: the guest halts on its CPU and the real interrupt wakes it")
        w(_wrap("direct: no external-interrupt exiting, so the EXTERNAL_INTERRUPT exits are gone: "
                "the guest's IDT takes its CPU's interrupts (its timer, the IPIs sent to it) "
                "without an exit, and the INTERRUPT_WINDOW exits that waited for it to take "
                "one injected go with them; its EOIs reach its own APIC (an MSR_WRITE only "
                "where the profile traps IA32_X2APIC_EOI)" + hlt + ". ICR writes still exit "
                "and are checked (apic: passthrough). The hypervisor kicks a CPU with an NMI "
                "(NMI exiting: one EXCEPTION_NMI exit per kick: a stop, INIT, STARTUP, an "
                "emulated NMI), and the VMX-preemption timer is the watchdog."))
    else:
        w(_wrap("exit: every physical interrupt is an EXTERNAL_INTERRUPT exit, acknowledged "
                "on exit and injected into the guest" + (
                    " (or, the kick vector, taken by the hypervisor: the physical APIC is "
                    "its alone)." if p.apic == "virtual" else
                    ", whatever its vector: the hypervisor's kicks are NMIs (one "
                    "EXCEPTION_NMI exit each).")))


def _explain_controls(w, plan):
    """Required features, the gates and the control bits."""
    spec = plan.spec
    # Features.
    w("\nRequired features (the profile is refused at boot without them):\n")
    for r in plan.required_features:
        w(f"  {r.feature.name:<24} {r.feature.sdm}  [{', '.join(r.origins)}]\n")

    # Gates.
    if plan.gates:
        w("\nGates (first choice the CPU supports is taken; boot prints which):\n")
        for g in plan.gates:
            w(f"  gate {g.name} ({g.origin}):\n")
            for c in g.choices:
                needs = ", ".join(f.name for f in c.needs) or "nothing"
                sets = ", ".join(ctl.macro for _, ctls in c.set for ctl in ctls) or "no control bits"
                w(f"    {c.index + 1}. {c.description}: needs {needs}; sets {sets}\n")
    else:
        w("\nGates: none; nothing is preferred with a fallback.\n")

    # Control bits.
    w("\nControl bits required (the profile is refused if the CPU cannot set one):\n")
    for cf, groups in plan.required_bits.fields(spec):
        for g in groups:
            for c in g.controls:
                w(f"  {c.macro:<40} {c.sdm}  [{g.origin}]\n")
    if plan.optional_bits.all():
        w("Control bits optional (set when the CPU allows them):\n")
        for cf, groups in plan.optional_bits.fields(spec):
            for g in groups:
                for c in g.controls:
                    w(f"  {c.macro:<40} {c.sdm}  [{g.origin}]\n")


def _explain_pause_sched(w, plan):
    """PAUSE exiting, the scheduler, the VMX-preemption timer."""
    p = plan.profile
    if plan.pause is not None:
        w("\nPAUSE: " + " -> ".join(plan.pause.chain))
        if plan.pause.uses_loop:
            w(f"; PLE_Gap {plan.pause.ple_gap}, PLE_Window {plan.pause.ple_window} ticks")
        w(".\n")
    w(f"Scheduler (vCPUs sharing a CPU): slice {p.sched.slice} ticks"
      f", wake granularity {p.sched.wake_granularity} ticks"
      + (f"; yield after {p.sched.pause_yield_after} PAUSE exits"
         if plan.pause is not None and "exit" in plan.pause.chain else "") + ".\n")
    if p.ptimer is not None:
        w(f"VMX-preemption timer: value {p.ptimer.value}"
          f"{', saved on exit (counts down across exits)' if p.ptimer.save else ', reloaded on every entry'}.\n")


def _explain_msrs(w, plan):
    """Each MSR the profile names, and the runtime's own."""
    p, spec = plan.profile, plan.spec
    # MSRs.
    w("\nMSRs:\n")
    w(f"  default: {p.msr_default}: {ACCESS_WORDS[p.msr_default]} for every MSR not named below.\n")
    for e in p.msrs:
        m = e.msr
        offers = ", ".join(m.mechanisms)
        if e.switch == "none":
            how = "not switched"
            if "vmcs_always" in m.mechanisms:
                how += " (every VM entry and exit loads it from the VMCS anyway)"
        elif e.switch == "atomic":
            a = m.atomic
            how = (f"switched atomically by {a.entry_load.macro}"
                   f"{' / ' + a.exit_load.macro if a.exit_load else ''}"
                   f"{' and saved by ' + a.exit_save.macro if e.writes_pass and a.exit_save else ''}")
            if e.fallback:
                how += f", else {MSR_SWITCH_WORDS[e.fallback]} (gate {m.gate_name}, needs {a.feature.name})"
            else:
                how += f" (requires {a.feature.name})"
        elif e.switch == "manual":
            how = ("switched by hand: RDMSR of the guest value on exit, WRMSR of the host value"
                   if e.writes_pass else "switched by hand: WRMSR on exit and before entry")
        else:
            how = "switched by the VM-entry/VM-exit MSR-load lists"
        w(textwrap.fill(f"{m.name}: {how}; {ACCESS_WORDS[e.access]}. Legal: spec/msrs.yaml "
                        f"offers {offers}.", width=78, initial_indent="  ",
                        subsequent_indent="      ") + "\n")
    for t in spec.runtime.msrs:
        w(f"  {t.msr.name}: always trapped by the runtime{': ' + t.why if t.why else ''}.\n")


def _explain_io(w, plan):
    """The ports the guest owns and how every other one is answered."""
    spec = plan.spec
    w("\nI/O ports the guest owns (IN/OUT pass through, no exit):\n")
    for r in plan.io_grants:
        w(f"  {_port_words(r):<16} {r.comment}\n")
    w("\nEvery other port exits (default deny).  The runtime answers these itself:\n")
    for how in ("emulated", "filtered"):
        for r in sorted((r for r in spec.runtime.io_reserved if r.how == how), key=lambda r: r.first):
            w(f"  {_port_words(r):<16} {how}: {r.short}\n")
    w("These are denied, and no profile may grant them:\n")
    for r in sorted((r for r in spec.runtime.io_reserved if r.how == "denied"), key=lambda r: r.first):
        w(f"  {_port_words(r):<16} {r.short}\n")
    w("Any other port reads all ones and ignores writes, as an unclaimed ISA port does.\n")


def _port_words(r):
    return f"{r.first:#06x}" if r.first == r.last else f"{r.first:#06x}-{r.last:#06x}"


def explain(plan):
    """The profile's decisions in words (exitplan-gen explain)."""
    out = []
    w = out.append
    _explain_profile(w, plan)
    _explain_dispatch(w, plan)
    w("\n")
    _explain_fast(w, plan)
    _explain_ipis(w, plan)
    _explain_interrupts(w, plan)
    _explain_controls(w, plan)
    _explain_pause_sched(w, plan)
    _explain_msrs(w, plan)
    _explain_io(w, plan)
    return "".join(out)
