# SPDX-License-Identifier: GPL-2.0-only
"""The exit path split into its parts, counted from `objdump -d` of the
built image (docs/BENCH.md, "Where the instructions go").

A bench guest round trip (Bochs ticks = retired instructions) is

  stub        vmx_exit_stub (arch/vmx/exit_entry.S) from HOST_RIP up to and
              including its CALL: the eight PUSHes, the exit-reason VMREAD
  dispatch    vmx_dispatch_exit to the JMP into the handler
              (dispatchcmp.path_lengths: decided by the reason alone)
  msr switch  only on the hooks stub (vcpu->exit_hooks: manual MSR
              switching or timing): vmx_exit_stub_hooks' JMP and
              vmx_handle_exit around its call of the dispatch, which
              branches on the MSR values, so it is given as the shortest
              and longest path through it (0 on the plain stub)
  resume      from the return into the stub to VMRESUME: the action
              test, the eight POPs, the NMI check
  handler     the rest: the handler with everything it calls, the VM exit
              and VM entry themselves and what the guest's RDTSC pair
              leaves.  The only part not counted from objdump: a
              handler's path depends on the guest's registers and the
              VMCS, which the image alone does not say.

Every count is of the shape the code compiles to today; anything else
(a stub whose resume path is not straight-line, a loop in
vmx_handle_exit) gives None, no count rather than a wrong one.
"""
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import dispatchcmp

_INSN_RE = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")
_TARGET_RE = re.compile(r"^([0-9a-f]+)\s+<([^>+]+)(?:\+0x[0-9a-f]+)?>")

PARTS = ("stub", "dispatch", "msr switch", "resume", "handler")

Insn = Tuple[int, str, str]     # address, mnemonic, operands


def disassemble(elf: Path, symbols: List[str]) -> Dict[str, str]:
    """symbol -> its objdump -d text (symbols objdump did not find are left out)."""
    out = {}
    for s in symbols:
        try:
            p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--disassemble={s}",
                                str(elf)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
        except OSError:
            return {}
        if p.returncode == 0 and parse(p.stdout):
            out[s] = p.stdout
    return out


def parse(asm: str) -> List[Insn]:
    """The instructions of objdump text, padding included: a path counts
    a NOP only if it runs through it."""
    insns = []
    for line in asm.splitlines():
        m = _INSN_RE.match(line)
        if m and not m.group(2).startswith("(bad)"):
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    return insns


def _target(ops: str) -> Optional[Tuple[int, str]]:
    m = _TARGET_RE.match(ops)
    return (int(m.group(1), 16), m.group(2)) if m else None


def _is_cond(mn: str) -> bool:
    return mn.startswith("j") and mn != "jmp"


def stub_parts(asm: str, callee: str = "vmx_dispatch_exit") -> Optional[Dict[str, int]]:
    """{"stub": instructions from the entry to the CALL of `callee`, both
    included; "resume": from the instruction after it to VMRESUME, both
    included}, the resume path taking no conditional branch and
    following unconditional JMPs within the stub (the one to .Lhandled
    of the hooks path)."""
    insns = parse(asm)
    at = {a: i for i, (a, _, _) in enumerate(insns)}
    call = next((i for i, (_, mn, ops) in enumerate(insns)
                 if mn == "call" and (_target(ops) or (0, ""))[1] == callee), None)
    if call is None:
        return None
    i, n, seen = call + 1, 0, set()
    while i < len(insns) and i not in seen:
        seen.add(i)
        _, mn, ops = insns[i]
        n += 1
        if mn == "vmresume":
            return {"stub": call + 1, "resume": n}
        if mn == "jmp":
            t = _target(ops)
            if t is None or t[0] not in at:
                return None
            i = at[t[0]]
        elif mn in ("ret", "call") or mn.startswith("vmlaunch"):
            return None
        else:
            i += 1
    return None


def hooks_parts(stub_hooks_asm: str, stub_asm: str, handle_exit_asm: str
                ) -> Optional[Dict[str, Tuple[int, int]]]:
    """The hooks stub: {"stub": (n, n) its SAVE and JMP plus the plain
    stub's instructions up to the CALL of vmx_handle_exit,
    "msr switch": (shortest, longest) path through vmx_handle_exit minus
    the dispatch it calls, "resume": (n, n) back to VMRESUME}."""
    hooks = parse(stub_hooks_asm)
    if not hooks or hooks[-1][1] != "jmp":
        return None
    plain = stub_parts(stub_asm, "vmx_handle_exit")
    span = path_span(handle_exit_asm, "vmx_dispatch_exit")
    if plain is None or span is None:
        return None
    # The hooks stub jumps to .Lhooks: the CALL of vmx_handle_exit.
    return {"stub": (len(hooks) + 1,) * 2, "msr switch": span, "resume": (plain["resume"],) * 2}


def path_span(asm: str, callee: str) -> Optional[Tuple[int, int]]:
    """(shortest, longest) instruction count from the function's entry to
    a return from it (RET, or a tail JMP out of it), passing through one
    CALL of `callee` (not counted: it is the dispatch, a part of its own),
    over every branch outcome.  None when the function has a loop or
    never calls `callee`."""
    insns = parse(asm)
    if not insns:
        return None
    at = {a: i for i, (a, _, _) in enumerate(insns)}
    memo: Dict[Tuple[int, bool], Optional[Tuple[int, int]]] = {}
    on_stack = set()

    class Loop(Exception):
        pass

    def walk(i: int, called: bool) -> Optional[Tuple[int, int]]:
        key = (i, called)
        if key in memo:
            return memo[key]
        if key in on_stack:
            raise Loop
        if i >= len(insns):
            return None
        on_stack.add(key)
        _, mn, ops = insns[i]
        t = _target(ops) if mn.startswith("j") or mn == "call" else None
        succ: List[Tuple[int, bool]] = []
        cost = 1
        end = False
        if mn == "ret" or (mn == "jmp" and t is not None and t[0] not in at):
            end = True          # a return, or a tail call out of the function
        elif mn == "call" and t is not None and t[1] == callee:
            cost = 0
            succ = [(i + 1, True)]
        elif mn == "jmp":
            if t is None:
                raise Loop      # indirect: not this function's shape
            succ = [(at[t[0]], called)]
        elif _is_cond(mn) and t is not None and t[0] in at:
            succ = [(i + 1, called), (at[t[0]], called)]
        else:
            succ = [(i + 1, called)]
        if end:
            r = (1, 1) if called else None
        else:
            spans = [s for s in (walk(j, c) for j, c in succ) if s is not None]
            r = (cost + min(s[0] for s in spans), cost + max(s[1] for s in spans)) \
                if spans else None
        on_stack.discard(key)
        memo[key] = r
        return r

    try:
        return walk(0, False)
    except Loop:
        return None


@dataclass
class Split:
    """One exit kind's round trip by part; (lo, hi) where a part has a range."""
    kind: str
    reason: str
    ticks: float
    parts: Dict[str, Tuple[float, float]]

    def words(self, part: str) -> str:
        lo, hi = self.parts[part]
        return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def split(kind: str, reason: str, ticks: float, dispatch: int,
          path: Dict[str, Tuple[int, int]]) -> Split:
    """The round trip `ticks` of `kind` into its parts: `path` from
    stub_parts (plain) or hooks_parts, `dispatch` from
    dispatchcmp.path_lengths; the handler is what is left."""
    parts = {p: (float(v[0]), float(v[1])) for p, v in path.items()}
    parts.setdefault("msr switch", (0.0, 0.0))
    parts["dispatch"] = (float(dispatch), float(dispatch))
    counted = [parts[p] for p in ("stub", "dispatch", "msr switch", "resume")]
    # The most the others count leaves the least for the handler, and back.
    parts["handler"] = (ticks - sum(c[1] for c in counted), ticks - sum(c[0] for c in counted))
    return Split(kind, reason, ticks, parts)


def split_many(kind: str, ticks: float, exits: Dict[str, float], dispatch: Dict[str, int],
               path: Dict[str, Tuple[int, int]]) -> Split:
    """A round trip of several exits (an interrupt path: exits per round
    trip by reason, @exits) into the same parts: stub, msr switch and
    resume once per exit, the dispatch per reason (@dispatch: reason ->
    instructions, "*table" for a reason outside the chain), the handler
    the rest: the handlers, the injections, the VM exits and entries."""
    n = sum(exits.values())
    parts = {p: (float(v[0]) * n, float(v[1]) * n) for p, v in path.items()}
    parts.setdefault("msr switch", (0.0, 0.0))
    d = sum(c * dispatch.get(r, dispatch["*table"]) for r, c in exits.items())
    parts["dispatch"] = (d, d)
    counted = [parts[p] for p in ("stub", "dispatch", "msr switch", "resume")]
    parts["handler"] = (ticks - sum(c[1] for c in counted), ticks - sum(c[0] for c in counted))
    return Split(kind, " + ".join(f"{r} {c:g}" for r, c in exits.items()), ticks, parts)


def plain_path(stub_asm: str) -> Optional[Dict[str, Tuple[int, int]]]:
    p = stub_parts(stub_asm)
    return {k: (v, v) for k, v in p.items()} if p else None


def exit_path(elf: Path, hooks: bool) -> Optional[Dict[str, Tuple[int, int]]]:
    """The stub, msr switch and resume parts of the image at `elf`, for
    a vCPU on the hooks stub or the plain one."""
    asm = disassemble(elf, ["vmx_exit_stub", "vmx_exit_stub_hooks", "vmx_handle_exit"])
    if "vmx_exit_stub" not in asm:
        return None
    if not hooks:
        return plain_path(asm["vmx_exit_stub"])
    if "vmx_exit_stub_hooks" not in asm or "vmx_handle_exit" not in asm:
        return None
    return hooks_parts(asm["vmx_exit_stub_hooks"], asm["vmx_exit_stub"], asm["vmx_handle_exit"])


def uses_hooks(profile_doc: dict, serial: str) -> bool:
    """Whether the booted vCPU took the hooks stub (arch/vmx/vmx.c,
    vmx_exit_needs_hooks()): statistics timing, an MSR switched by hand
    without a gate, or a gate that fell back to "manual" (the boot log's
    "gate NAME: manual" line)."""
    if str(profile_doc.get("statistics", "off")) == "timing":
        return True
    for name, m in (profile_doc.get("msrs") or {}).items():
        if name != "default" and isinstance(m, dict) and m.get("switch") == "manual":
            return True
    return re.search(r"^gate \S+: manual\b", serial, re.M) is not None


def splits_many(elf: Path, hooks: bool, costs: List[Tuple[str, float, Dict[str, float]]],
                chain: List[str], numbers: Dict[str, int]) -> List[Split]:
    """split_many for each (kind, ticks, exits per round trip); [] when the
    image is not in the shape these counts expect."""
    path = exit_path(elf, hooks)
    d = dispatchcmp.disassemble(elf)
    pl = dispatchcmp.path_lengths(d, chain, numbers) if d else None
    if path is None or pl is None:
        return []
    return [split_many(k, t, e, pl, path) for k, t, e in costs]


def splits(elf: Path, hooks: bool, costs: List[Tuple[str, str, float]],
           chain: List[str], numbers: Dict[str, int]) -> List[Split]:
    """Split each (kind, reason, ticks) of `costs`; [] when the image is
    not in the shape these counts expect."""
    path = exit_path(elf, hooks)
    d = dispatchcmp.disassemble(elf)
    pl = dispatchcmp.path_lengths(d, chain, numbers) if d else None
    if path is None or pl is None:
        return []
    return [split(k, r, t, pl.get(r, pl["*table"]), path) for k, r, t in costs]
