#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""What the unit tests expect of one profile's generated code, derived
here straight from the profile and spec/ as the schema documents them,
independently of the generator (gen/), so that the tests check it rather
than repeat it.

    profile_facts.py OUTPUT.h PROFILE.yaml SPEC_DIR

Writes a header with:
  UNIT_DISPATCH_HAS_TABLE   1 unless the dispatch policy is switch
  UNIT_DIRECT_COUNT         number of reasons with a direct call
  UNIT_DIRECT_REASONS(X)    X(EXIT_REASON_...) for each, most frequent first
  UNIT_RUNTIME_GRANTED_PORTS(X)  X(first, last) for spec/runtime.yaml's granted ports
  UNIT_RUNTIME_RESERVED_PORTS(X) X(first, last) for its reserved ports (always trapped)
  UNIT_PROFILE_GRANTED_PORTS(X)  X(first, last) for the profile's execution.io.grant
  UNIT_RUNTIME_TRAPPED_MSRS(X)   X(first, last) for spec/runtime.yaml's MSRs
  UNIT_HANDLER_FUNCS(X)          X(fn) for each handler function, once
  UNIT_SPEC_HANDLERS(X)          X(EXIT_REASON_..., fn) as spec/handlers.yaml says
  UNIT_FAST_HANDLERS(X)          X(EXIT_REASON_..., fn): the profile's fast (CPUID, MSR, I/O)
                                 handlers, which the dispatch calls instead
  UNIT_MSR_DEFAULT_INTERCEPT     the profile's msrs.default as MSR_INTERCEPT_*
  UNIT_PROFILE_MSRS(X)           X(first, last, intercept, manual, gated) for
                                 each MSR the profile names
"""
import math
import os
import re
import sys
from fractions import Fraction

import yaml


def load(path):
    with open(path) as f:
        return yaml.load(f, Loader=yaml.CSafeLoader)


def fail(msg):
    sys.exit(f"profile_facts: {msg}")


def direct_reasons(profile, handlers, numbers):
    """The direct-call chain the schema's dispatch.direct describes."""
    dispatch = profile["dispatch"]
    if dispatch["policy"] != "direct":
        return []
    mix = profile["exit_mix"]
    reasons = mix["reasons"]
    total = math.fsum(reasons.values()) if mix["unit"] == "count" else 1.0
    share = {name: value / total for name, value in reasons.items()}
    # Most frequent first, ties by exit-reason number; only handled reasons.
    handled = sorted((n for n in reasons if n in handlers),
                     key=lambda n: (-share[n], numbers[n]))
    direct = dispatch.get("direct")
    if not direct:
        fail("dispatch policy direct without dispatch.direct")
    if "order" in direct:
        return list(direct["order"])
    if "count" in direct:
        return handled[:direct["count"]]
    if direct.get("auto"):
        return auto_chain(handled, reasons, mix["unit"], direct.get("max"))
    # coverage: the fewest most frequent whose shares reach the target.
    chain = []
    for name in handled:
        chain.append(name)
        if math.fsum(share[n] for n in chain) + 1e-9 >= direct["coverage"]:
            break
    return chain


def cost_constants():
    """COMPARE, DIRECT and TABLE as gen/exitplan_gen/costmodel.py states
    them (read as text: the numbers' one home, not the generator's code)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                        "gen", "exitplan_gen", "costmodel.py")
    with open(path) as f:
        text = f.read()
    out = []
    for name in ("COMPARE", "DIRECT", "TABLE"):
        m = re.search(rf"^{name} = (\d+)\b", text, re.M)
        if not m:
            fail(f"{path}: no '{name} = N'")
        out.append(int(m.group(1)))
    return out


def auto_chain(handled, reasons, unit, cap):
    """dispatch.direct.auto: of the prefixes of the frequency-ordered
    handled reasons (at most `cap`), the one with the lowest expected
    instructions per exit, the shortest of equal ones; each reason in the
    chain at position k pays COMPARE*k + DIRECT, every other exit
    COMPARE*n + TABLE.  Exact fractions, as the schema promises exact ties."""
    compare, direct_jmp, table = cost_constants()
    if unit == "count":
        total = sum(int(v) for v in reasons.values())
        exact = {n: Fraction(int(v), total) for n, v in reasons.items()}
    else:
        exact = {n: Fraction(v) for n, v in reasons.items()}
    limit = len(handled) if cap is None else min(cap, len(handled))
    best_n, best_cost = None, None
    for n in range(limit + 1):
        chained = handled[:n]
        cost = Fraction(0)
        for k, name in enumerate(chained, 1):
            cost += exact[name] * (compare * k + direct_jmp)
        rest = 1 - sum((exact[name] for name in chained), Fraction(0))
        cost += rest * (compare * n + table)
        if best_cost is None or cost < best_cost:
            best_n, best_cost = n, cost
    return handled[:best_n]


def runtime_traps(spec_dir, msr_index):
    """(granted ports, reserved ports, msrs): the port ranges spec/runtime.yaml
    grants and those it always traps, and the MSRs it always traps."""
    runtime = load(os.path.join(spec_dir, "runtime.yaml"))
    granted = [(p["first"], p.get("last", p["first"])) for p in runtime["granted_io_ports"]]
    ports = [(p["first"], p.get("last", p["first"])) for p in runtime["reserved_io_ports"]]
    msrs = []
    for m in runtime["trapped_msrs"]:
        if m["msr"] not in msr_index:
            fail(f"spec/runtime.yaml traps {m['msr']}, which spec/msrs.yaml does not define")
        msrs.append(msr_index[m["msr"]])
    if not granted or not ports or not msrs:
        fail("spec/runtime.yaml grants or traps no port or no MSR: format changed?")
    return granted, ports, msrs


# The profile's access words (schema: msrs.NAME.access, msrs.default).
INTERCEPT = {
    "passthrough": "MSR_INTERCEPT_NONE",
    "trap": "MSR_INTERCEPT_RW",
    "trap_writes": "MSR_INTERCEPT_WRITE",
    "trap_reads": "MSR_INTERCEPT_READ",
}


def profile_msrs(profile, msr_index):
    """(default intercept, [(first, last, intercept, switch, fallback)])."""
    msrs = dict(profile.get("msrs") or {})
    default = msrs.pop("default", "trap")
    out = []
    for name, policy in msrs.items():
        if name not in msr_index:
            fail(f"profile names MSR {name}, which spec/msrs.yaml does not define")
        first, last = msr_index[name]
        out.append((first, last, INTERCEPT[policy["access"]], policy["switch"],
                    policy.get("fallback", "none")))
    return INTERCEPT[default], out

def main():
    if len(sys.argv) != 4:
        sys.exit("usage: profile_facts.py OUTPUT.h PROFILE.yaml SPEC_DIR")
    out, profile_path, spec_dir = sys.argv[1:]
    profile = load(profile_path)
    handlers = load(os.path.join(spec_dir, "handlers.yaml"))["handlers"]
    numbers = {r["name"]: r["number"] for r in load(os.path.join(spec_dir, "exit_reasons.yaml"))["exit_reasons"]}
    msr_index = {}
    for m in load(os.path.join(spec_dir, "msrs.yaml"))["msrs"]:
        msr_index[m["name"]] = (m["index"], m.get("last", m["index"]))

    chain = direct_reasons(profile, handlers, numbers)
    for name in chain:
        if name not in handlers:
            fail(f"{profile_path}: direct reason {name} has no handler")
    granted, ports, msrs = runtime_traps(spec_dir, msr_index)
    grants = [(g["port"], g.get("last", g["port"]))
              for g in profile.get("execution", {}).get("io", {}).get("grant", [])]
    default_intercept, named = profile_msrs(profile, msr_index)

    lines = [
        f"/* Generated by tests/unit/profile_facts.py from {profile_path}; do not edit. */",
        "#ifndef EXITPLAN_TEST_PROFILE_FACTS_H",
        "#define EXITPLAN_TEST_PROFILE_FACTS_H",
        "",
        f"#define UNIT_DISPATCH_HAS_TABLE {0 if profile['dispatch']['policy'] == 'switch' else 1}",
        f"#define UNIT_DIRECT_COUNT {len(chain)}",
        "#define UNIT_DIRECT_REASONS(X) \\",
    ]
    lines += [f"\tX(EXIT_REASON_{n}) \\" for n in chain]
    lines.append("\t/* end */")
    for macro, ranges in (("UNIT_RUNTIME_GRANTED_PORTS", granted),
                          ("UNIT_RUNTIME_RESERVED_PORTS", ports),
                          ("UNIT_PROFILE_GRANTED_PORTS", grants)):
        lines.append(f"#define {macro}(X) \\")
        lines += [f"\tX({a:#x}, {b:#x}) \\" for a, b in ranges]
        lines.append("\t/* end */")
    lines.append("#define UNIT_RUNTIME_TRAPPED_MSRS(X) \\")
    lines += [f"\tX({a:#x}u, {b:#x}u) \\" for a, b in msrs]
    lines.append("\t/* end */")
    # The profile's fast handlers (fast.cpuid_leaves): the dispatch calls
    # them instead of spec/handlers.yaml's.
    fast = {}
    if profile.get("fast", {}).get("cpuid_leaves"):
        fast["CPUID"] = "handle_cpuid_fast"
    # fast.msrs and fast.io_ports (msr_io_fast.c): a direction gets a fast
    # handler when one of the listed MSRs has a fast answer for it.
    msr_fast = {e["msr"]: e for e in load(os.path.join(spec_dir, "handlers.yaml")).get("msr_fast", [])}
    listed = [msr_fast[n] for n in profile.get("fast", {}).get("msrs", []) if n in msr_fast]
    if any(e["read"] for e in listed):
        fast["MSR_READ"] = "handle_msr_read_fast"
    if any(e["write"] for e in listed):
        fast["MSR_WRITE"] = "handle_msr_write_fast"
    if profile.get("fast", {}).get("io_ports"):
        fast["IO_INSTRUCTION"] = "handle_io_instruction_fast"
    lines.append("/* Every handler function of spec/handlers.yaml and the profile's fast ones, once. */")
    lines.append("#define UNIT_HANDLER_FUNCS(X) \\")
    lines += [f"\tX({fn}) \\" for fn in sorted(set(handlers.values()) | set(fast.values()))]
    lines.append("\t/* end */")
    lines.append("/* The profile's fast handlers: X(reason, fn), called instead of spec/handlers.yaml's. */")
    lines.append("#define UNIT_FAST_HANDLERS(X) \\")
    lines += [f"\tX(EXIT_REASON_{r}, {fn}) \\" for r, fn in sorted(fast.items(), key=lambda rf: numbers[rf[0]])]
    lines.append("\t/* end */")
    lines.append("/* spec/handlers.yaml itself: X(reason, fn) */")
    lines.append("#define UNIT_SPEC_HANDLERS(X) \\")
    lines += [f"\tX(EXIT_REASON_{r}, {fn}) \\" for r, fn in sorted(handlers.items(), key=lambda rf: numbers[rf[0]])]
    lines.append("\t/* end */")
    lines.append(f"#define UNIT_MSR_DEFAULT_INTERCEPT {default_intercept}")
    lines.append("/* X(first, last, intercept, switch is manual, manual is the fallback of atomic) */")
    lines.append("#define UNIT_PROFILE_MSRS(X) \\")
    for first, last, intercept, switch, fallback in named:
        lines.append(f"\tX({first:#x}u, {last:#x}u, {intercept}, {int(switch == 'manual')}, "
                     f"{int(switch == 'atomic' and fallback == 'manual')}) \\")
    lines.append("\t/* end */")
    lines += ["", "#endif", ""]
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
