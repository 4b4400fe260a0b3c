# SPDX-License-Identifier: GPL-2.0-only
"""The central comparison of `make bench`: each profile's generated
dispatch against the plain table and KVM's fixed chain, *everything else
equal*, weighted with the profile's own exit mix.

For a subject profile P (every profiles/*.yaml except the baselines
table-only and kvm-order) run_bench.py builds bench-only variants that
differ from P in one thing each (docs/BENCH.md):

  P~table          dispatch: {policy: table}
  P~kvm            dispatch: {policy: direct, direct: {order: <kvm-order.yaml's>}}
  P@timing, P~table@timing, P~kvm@timing
                   the same three with statistics: timing, whose exit
                   statistics document gives per-reason hypervisor ticks

The variants are written to OUT/profiles/NAME.yaml (never profiles/) and
generated into OUT/gen/NAME with `gen/exitplan-gen --out`.  Profile names
must be [a-z0-9-] and equal the file name, so on disk a variant is
P--table, P--kvm--timing ...; reports use the labels above.

Costs per exit reason come from two sources, and each reason takes the
same source in all three builds, so their difference is the dispatch's:
  guest    the bench guest's own round trips (RDTSC around the exiting
           instruction) for what a guest can time by itself;
  hv       the hypervisor's per-reason ticks at statistics: timing (exit
           stub entry to the VMRESUME after), minus the document's
           tsc_overhead per exit, for reasons whose round trip a guest
           cannot isolate (HLT includes the timer wait; external interrupts
           and timer exits are not caused by one instruction).
A guest round trip also holds the VM exit and entry and the RDTSC pair's
leftovers; an hv figure does not, so the two sources are not comparable
with each other, only across the three builds.
"""
import copy
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import yaml

import exitmix

BASELINES = ("table-only", "kvm-order")
DISPATCHES = ("table", "kvm")           # P~table, P~kvm

# Reasons costed from the bench guest's round trips, and the hypervisor's
# timing for the rest (docs/BENCH.md).
GUEST_REASONS = ("CPUID", "VMCALL", "MSR_READ", "MSR_WRITE", "IO_INSTRUCTION", "EPT_VIOLATION")
HV_REASONS = ("HLT", "EXTERNAL_INTERRUPT", "PREEMPTION_TIMER", "INTERRUPT_WINDOW",
              "PAUSE_INSTRUCTION")

# Within this fraction the two means are called a tie: the hv-timed
# reasons move by a tick or so between runs (when a timer interrupt lands).
TIE = 0.005

_LABEL_RE = re.compile(r"^(?P<base>[a-z][a-z0-9-]*?)(?:~(?P<d>table|kvm))?(?P<t>@timing)?$")
_CHAIN_RE = re.compile(r"^\s*if \(basic_reason == EXIT_REASON_([A-Z0-9_]+)\)", re.M)
_STATS_DOC_RE = re.compile(r"^# exitplan-stats-begin\n(.*?)^# exitplan-stats-end", re.M | re.S)


class VariantError(Exception):
    pass


class _ProfileLoader(yaml.SafeLoader):
    """YAML 1.2 booleans (only true/false) and no implicit timestamps, as
    gen/exitplan_gen/loader.py reads profiles: `statistics: off` stays the
    string "off" through the round trip (safe_dump then quotes it)."""


_ProfileLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v
        if tag not in ("tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_ProfileLoader.add_implicit_resolver("tag:yaml.org,2002:bool", re.compile(r"^(?:true|false)$"),
                                     list("tf"))


# ---------------------------------------------------------------- names

def label(base: str, dispatch: Optional[str] = None, timing: bool = False) -> str:
    return base + (f"~{dispatch}" if dispatch else "") + ("@timing" if timing else "")


def file_name(base: str, dispatch: Optional[str] = None, timing: bool = False) -> str:
    """The variant's profile name (= its YAML file's and generated dir's)."""
    return base + (f"--{dispatch}" if dispatch else "") + ("--timing" if timing else "")


def parse_label(lb: str) -> Optional[Tuple[str, Optional[str], bool]]:
    """(base, dispatch or None, timing) of a variant label; None for a
    plain profile name or anything else."""
    m = _LABEL_RE.match(lb)
    if not m or not (m.group("d") or m.group("t")):
        return None
    return m.group("base"), m.group("d"), bool(m.group("t"))


def subjects(profiles: List[str]) -> List[str]:
    return [p for p in profiles if p not in BASELINES]


# ---------------------------------------------------------------- variants

def kvm_order(repo: Path) -> List[str]:
    """KVM's chain, as profiles/kvm-order.yaml states it (not retyped here)."""
    doc = exitmix.load_yaml(repo / "profiles" / "kvm-order.yaml")
    order = (((doc or {}).get("dispatch") or {}).get("direct") or {}).get("order")
    if not order:
        raise VariantError("profiles/kvm-order.yaml has no dispatch.direct.order")
    return list(order)


def variant_doc(doc: dict, base: str, dispatch: Optional[str], timing: bool,
                order: List[str]) -> dict:
    """P's profile document with only the dispatch and/or the statistics
    level changed."""
    v = copy.deepcopy(doc)
    v["profile"] = file_name(base, dispatch, timing)
    old = v.get("dispatch") or {}
    new = {}
    if dispatch == "table":
        new = {"policy": "table"}
    elif dispatch == "kvm":
        new = {"policy": "direct", "direct": {"order": list(order)}}
        # The generator wants every chained reason in the mix; a weight of
        # 0 changes no share (kvm-order.yaml does the same for EPT_MISCONFIG).
        reasons = v["exit_mix"].setdefault("reasons", {})
        for r in order:
            reasons.setdefault(r, 0)
    else:
        new = dict(old)
    if dispatch and "unexpected_handler" in old:
        new["unexpected_handler"] = old["unexpected_handler"]
    v["dispatch"] = new
    if timing:
        v["statistics"] = "timing"
    what = []
    if dispatch == "table":
        what.append("dispatch through the table only")
    elif dispatch == "kvm":
        what.append("dispatch in KVM's fixed chain (profiles/kvm-order.yaml)")
    if timing:
        what.append("statistics: timing")
    v["description"] = (f"Bench-only variant of profiles/{base}.yaml, identical but for: "
                        + "; ".join(what) + ".")
    return v


def make_variant(repo: Path, out: Path, base: str, dispatch: Optional[str], timing: bool,
                 order: List[str], gen_out: Optional[Path] = None) -> Tuple[Path, Path]:
    """Write OUT/profiles/NAME.yaml and generate GEN_OUT/NAME (default
    OUT/gen) with the generator of the tree `repo`.  Returns (yaml path,
    generated dir)."""
    gen_out = gen_out or out / "gen"
    with open(repo / "profiles" / f"{base}.yaml", "rb") as f:
        doc = yaml.load(f, Loader=_ProfileLoader)
    name = file_name(base, dispatch, timing)
    text = ("# Generated by tests/bench/run_bench.py from profiles/" + base + ".yaml for the\n"
            "# dispatch comparison (docs/BENCH.md).  Not a profile to use; do not copy\n"
            "# into profiles/.\n"
            + yaml.safe_dump(variant_doc(doc, base, dispatch, timing, order),
                             sort_keys=False, default_flow_style=None, width=100))
    return write_and_generate(repo, out, name, text, gen_out)


def write_and_generate(repo: Path, out: Path, name: str, text: str,
                       gen_out: Path) -> Tuple[Path, Path]:
    """Write @text to OUT/profiles/NAME.yaml (only when it changed, so the
    generated files keep their timestamps) and generate GEN_OUT/NAME with
    the generator of the tree @repo.  Returns (yaml path, generated dir)."""
    ydir = out / "profiles"
    ydir.mkdir(parents=True, exist_ok=True)
    ypath = ydir / f"{name}.yaml"
    if not ypath.exists() or ypath.read_text() != text:
        ypath.write_text(text)
    p = subprocess.run([sys.executable, str(repo / "gen" / "exitplan-gen"), "--root", str(repo),
                        "--out", str(gen_out), "gen", "-q", str(ypath)],
                       cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise VariantError(f"exitplan-gen could not generate {ypath}:\n{p.stdout}")
    return ypath, gen_out / name


def chain(generated_dir: Path) -> Optional[List[str]]:
    """The direct-call chain of a generated exit_dispatch.c, in order
    ([] for a table-only dispatch, None when there is no file)."""
    try:
        return _CHAIN_RE.findall((generated_dir / "exit_dispatch.c").read_text())
    except OSError:
        return None


# ---------------------------------------------------------------- hv timing

def parse_stats_docs(text: str) -> List[dict]:
    """Every statistics document in a serial log (one per vCPU); a
    document that does not parse is skipped."""
    docs = []
    for m in _STATS_DOC_RE.finditer(text):
        try:
            d = yaml.safe_load(m.group(1))
        except yaml.YAMLError:
            continue
        if isinstance(d, dict) and isinstance(d.get("exitplan_stats"), dict):
            docs.append(d["exitplan_stats"])
    return docs


@dataclass
class HvCost:
    count: int = 0
    ticks: int = 0              # with tsc_overhead already taken off each exit
    guests: List[str] = field(default_factory=list)

    @property
    def per_exit(self) -> float:
        return self.ticks / self.count


def hv_costs(docs_by_guest: Dict[str, List[dict]]) -> Dict[str, HvCost]:
    """reason -> ticks per exit over every vCPU of every timing-level
    document given (pooled by count), tsc_overhead subtracted per exit as
    docs/STATS.md says."""
    acc: Dict[str, HvCost] = {}
    for guest, docs in docs_by_guest.items():
        for d in docs:
            if d.get("level") != "timing":
                continue
            ovh = int(d.get("tsc_overhead") or 0)
            for v in d.get("vcpus") or []:
                for reason, e in ((v or {}).get("reasons") or {}).items():
                    if not isinstance(e, dict) or "ticks" not in e or not e.get("count"):
                        continue
                    c = acc.setdefault(reason, HvCost())
                    c.count += int(e["count"])
                    c.ticks += int(e["ticks"]) - ovh * int(e["count"])
                    if guest not in c.guests:
                        c.guests.append(guest)
    return acc


# ---------------------------------------------------------------- comparison

@dataclass
class ReasonCost:
    reason: str
    share: float
    source: str                             # guest | hv
    ticks: Dict[str, float]                 # "P", "P~table", "P~kvm" labels -> ticks
    detail: str = ""                        # kinds or guests it came from


@dataclass
class Comparison:
    subject: str
    labels: List[str]                       # [P, P~table, P~kvm]
    chains: Dict[str, Optional[List[str]]]  # label -> chain
    reasons: List[ReasonCost]               # weighed (measured in all three)
    missing: List[Tuple[str, float, str]]   # (reason, share, why not weighed)
    means: Dict[str, float]                 # label -> weighted mean
    coverage: float
    guest_share: float                      # of the mix, costed by the guest
    hv_share: float

    def mix_shares(self) -> Dict[str, float]:
        """Every reason of P's mix, weighed or not."""
        out = {r.reason: r.share for r in self.reasons}
        out.update({r: sh for r, sh, _ in self.missing})
        return out

    def ratio(self, other: str) -> Optional[float]:
        a, b = self.means.get(self.labels[0]), self.means.get(other)
        return None if a is None or b is None or b == 0 else a / b

    def verdict(self) -> str:
        if self.labels[0] not in self.means:
            return "not measured"
        lost, tied, absent = [], [], []
        for lb, name in zip(self.labels[1:], ("table", "KVM's chain")):
            r = self.ratio(lb)
            if r is None:
                absent.append(name)
            elif r > 1 + TIE:
                lost.append(name)
            elif r >= 1 - TIE:
                tied.append(name)
        if lost:
            return "loses to " + " and ".join(lost)
        if tied:
            return "ties " + " and ".join(tied)
        if absent:
            return "beats what was measured; missing " + ", ".join(absent)
        return "beats both"


def compare(subject: str, mix: exitmix.ExitMix, guest_costs: Dict[str, Dict[str, float]],
            guest_kinds: Dict[str, Dict[str, List[str]]], hv: Dict[str, Dict[str, HvCost]],
            chains: Dict[str, Optional[List[str]]],
            labels: Optional[List[str]] = None) -> Comparison:
    """P, P~table, P~kvm (or just `labels`) on P's mix.  guest_costs /
    guest_kinds: label -> reason -> ticks / kinds (the bench guest's, from
    run_bench); hv: label of the plain build -> reason -> HvCost from its
    @timing runs.  Only reasons measured under every label are weighed."""
    if labels is None:
        labels = [subject, label(subject, "table"), label(subject, "kvm")]
    shares = mix.shares()
    reasons, missing = [], []
    for reason, share in sorted(shares.items(), key=lambda kv: -kv[1]):
        if reason in GUEST_REASONS:
            src, have = "guest", {lb: guest_costs.get(lb, {}).get(reason) for lb in labels}
        elif reason in HV_REASONS:
            src = "hv"
            have = {lb: (hv.get(lb, {}).get(reason).per_exit
                         if hv.get(lb, {}).get(reason) else None) for lb in labels}
        else:
            missing.append((reason, share, "no guest causes it on its own and no timing source"))
            continue
        absent = [lb for lb in labels if have[lb] is None]
        if absent:
            missing.append((reason, share, "not measured under " + ", ".join(absent)))
            continue
        if src == "guest":
            detail = ", ".join(guest_kinds.get(subject, {}).get(reason, []))
        else:
            c = hv[subject][reason]
            detail = f"{'+'.join(c.guests)}, {c.count} exits"
        reasons.append(ReasonCost(reason, share, src, have, detail))
    cov = sum(r.share for r in reasons)
    means = {}
    if cov > 0:
        for lb in labels:
            means[lb] = sum(r.share * r.ticks[lb] for r in reasons) / cov
    return Comparison(subject, labels, chains, reasons, missing, means, cov,
                      sum(r.share for r in reasons if r.source == "guest"),
                      sum(r.share for r in reasons if r.source == "hv"))


def chain_words(ch: Optional[List[str]]) -> str:
    if ch is None:
        return "?"
    return f"{len(ch)} direct" if ch else "table only"


def position(ch: Optional[List[str]], reason: str) -> str:
    """Where a reason's handler is found: '#k' in the chain (k compares),
    or 'table after n' compares."""
    if ch is None:
        return "?"
    if reason in ch:
        return f"#{ch.index(reason) + 1}"
    return f"table after {len(ch)}" if ch else "table"


# ---------------------------------------------------------------- objdump

_INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")


def disassemble(elf: Path, symbol: str = "vmx_dispatch_exit") -> Optional[str]:
    try:
        p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={symbol}",
                            str(elf)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    except OSError:
        return None
    return p.stdout if p.returncode == 0 else None


def path_lengths(asm: str, ch: List[str], numbers: Dict[str, int]) -> Optional[Dict[str, int]]:
    """Instructions vmx_dispatch_exit executes before it reaches a handler:
    {chained reason: its count, "*table": the count for a reason found in
    the table}, from `objdump -d` text.  Only for the shape the generated
    C compiles to (GCC -O2): the chain as CMP $reason / JE to a direct JMP
    handle_*, in the generated order, then straight-line code up to one
    indirect JMP/CALL through the table.  Anything else (a compiler that
    turned the chain into a jump table or a search tree) returns None: no
    count rather than a wrong one."""
    insns = []
    for line in asm.splitlines():
        m = _INSN_RE.match(line)
        if m and not m.group(2).startswith("(bad)"):
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    if not insns:
        return None
    at = {addr: i for i, (addr, _, _) in enumerate(insns)}
    conds = [i for i, (_, mn, _) in enumerate(insns) if mn.startswith("j") and mn != "jmp"]
    indirect = [i for i, (_, mn, ops) in enumerate(insns)
                if mn in ("jmp", "call") and ops.startswith("*")]
    if len(conds) < len(ch) or len(indirect) != 1:
        return None
    out: Dict[str, int] = {}
    for reason, i in zip(ch, conds):
        _, mn, ops = insns[i]
        _, pmn, pops = insns[i - 1] if i else (0, "", "")
        if pmn == "cmp":
            imm = re.match(r"^\$0x([0-9a-f]+),", pops)
            value = int(imm.group(1), 16) if imm else None
        elif pmn == "test":
            # TEST %si,%si: how GCC compares with 0 (EXCEPTION_NMI).
            regs = pops.split(",")
            value = 0 if len(regs) == 2 and regs[0] == regs[1] else None
        else:
            value = None
        if mn != "je" or value is None or value != numbers.get(reason):
            return None
        tgt = re.match(r"^([0-9a-f]+)\b", ops)
        j = at.get(int(tgt.group(1), 16)) if tgt else None
        # With statistics counting, GCC may put the reason's constant
        # counter slot's ADD before the JMP (one instruction more).
        extra = 0
        if j is not None and insns[j][1] == "addq" and insns[j][2].startswith("$0x1,") \
                and j + 1 < len(insns):
            j, extra = j + 1, 1
        if j is None or insns[j][1] != "jmp" or "<handle_" not in insns[j][2]:
            return None
        out[reason] = i + 2 + extra  # up to and including the JE, (the ADD,) the JMP
    if ch and indirect[0] < conds[len(ch) - 1]:
        return None
    out["*table"] = indirect[0] + 1
    return out


def lengths_by_reason(pl: Dict[str, int], reasons: List[str]) -> Dict[str, int]:
    """Every chained reason's count, "*table", and the table path's count
    under the name of each other reason in `reasons`."""
    out = dict(pl)
    out.update({r: pl.get(r, pl["*table"]) for r in reasons})
    return out


# Instructions per exit below which another chain length is not called better.
MIN_GAIN = 0.01


def best_chain_length(ch: List[str], pl: Dict[str, int], shares: Dict[str, float]
                      ) -> Optional[Tuple[int, Dict[int, float], List[str]]]:
    """The chain length that makes the dispatch cheapest under the mix
    `shares`, by the instruction counts `pl` of P's build (path_lengths):
    the chain is cut to, or extended to, its first m reasons in the order
    P's chain, then the mix's other reasons by share.  The counts of P's
    own chain are the measured ones (each link two more than the last);
    a link beyond it is modelled the same way, and a reason left to the
    table costs the table part of P's path after m compares.  Returns
    (best m, {m: mean instructions per exit}, that order), or None."""
    if not ch or "*table" not in pl or any(r not in pl for r in ch):
        return None
    total = sum(shares.values())
    if total <= 0:
        return None
    n = len(ch)
    prefix = pl[ch[0]] - 3              # the dispatch before the first CMP
    table = pl["*table"] - prefix - 2 * n   # from the last JE to the handler
    order = list(ch) + [r for r, _ in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))
                        if r not in ch]
    costs = {}
    for m in range(len(order) + 1):
        pos = {r: i + 1 for i, r in enumerate(order[:m])}
        costs[m] = sum(sh * (pl[r] if r in pos and pos[r] <= n else
                             prefix + 2 * pos[r] + 1 if r in pos else
                             prefix + 2 * m + table)
                       for r, sh in shares.items()) / total
    best = min(costs, key=lambda m: (costs[m], m))
    if costs[n] - costs[best] < MIN_GAIN:
        best = n                        # not worth a change to the profile
    return best, costs, order
