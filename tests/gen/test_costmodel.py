# SPDX-License-Identifier: GPL-2.0-only
"""dispatch.direct.auto and the cost model behind it (costmodel.py): the
optimum for hand-made mixes, that a chain of 0 still generates valid C,
determinism, and that COMPARE, DIRECT, TABLE and STATS_LINK, STATS_TABLE are what the
compiled dispatch executes: generated exit_dispatch.c compiled with the
hypervisor's own flags (runtime/runtime.mk HV_CFLAGS), vmx_dispatch_exit
disassembled with objdump and walked instruction by instruction along the
path one exit reason takes."""

import re
import shutil
import subprocess
from fractions import Fraction

import pytest

from conftest import ROOT, run_gen

from exitplan_gen import costmodel

DIRECT_AUTO = "dispatch:\n  policy: direct\n  direct: {auto: true}\n"


def chain(generator, path):
    plan, = generator.plans([str(path)])
    return [d.reason.name for d in plan.direct], plan


def brute_force(shares, cap=None, stats="off"):
    """The optimum by the model's definition, written out separately:
    every length, every reason's cost summed, the shortest of the cheapest."""
    link, table = costmodel.STATS_LINK[stats], costmodel.STATS_TABLE[stats]
    best = None
    last = len(shares) if cap is None else min(cap, len(shares))
    for n in range(last + 1):
        cost = Fraction(0)
        for k, s in enumerate(shares, 1):
            if k <= n:
                cost += s * (costmodel.COMPARE * k + costmodel.DIRECT + link)
            else:
                cost += s * (costmodel.COMPARE * n + costmodel.TABLE + table)
        # Reasons outside `shares` (no handler, not in the mix) take the table.
        cost += (1 - sum(shares, Fraction(0))) * (costmodel.COMPARE * n + costmodel.TABLE + table)
        if best is None or cost < best[1]:
            best = (n, cost)
    return best


# --- the optimum ---------------------------------------------------------------
def test_small_share_left_out(generator, write_profile):
    """HLT's 2% saves it 11 instructions (0.22 per exit) but a third link
    adds 2 to the 18% behind it (0.36): out, and CPUID after it too."""
    path = write_profile("t", "EXTERNAL_INTERRUPT: 0.5, MSR_WRITE: 0.3, HLT: 0.02, CPUID: 0.01, "
                         "APIC_ACCESS: 0.17", DIRECT_AUTO)
    names, plan = chain(generator, path)
    assert names == ["EXTERNAL_INTERRUPT", "MSR_WRITE"]
    assert plan.model.costs[2] < plan.model.costs[3] < plan.model.costs[4]
    assert brute_force([Fraction(x) for x in (0.5, 0.3, 0.02, 0.01)])[0] == 2


def test_equal_shares(generator, write_profile):
    """Four equal shares, all handled: every link pays (the last saves its
    reason 11 and no exit passes it); the order is by exit-reason number."""
    path = write_profile("t", "MSR_WRITE: 0.25, HLT: 0.25, CPUID: 0.25, IO_INSTRUCTION: 0.25",
                         DIRECT_AUTO)
    names, plan = chain(generator, path)
    assert names == ["CPUID", "HLT", "IO_INSTRUCTION", "MSR_WRITE"]
    assert plan.model.n == brute_force([Fraction(1, 4)] * 4)[0] == 4


def test_equal_shares_beside_unhandled(generator, write_profile):
    """Equal small shares beside a large unhandled one: each link would add
    2 to the 70% that always passes the chain, more than 11 x 10% saves."""
    path = write_profile("t", "APIC_ACCESS: 0.7, HLT: 0.1, CPUID: 0.1, MSR_READ: 0.1", DIRECT_AUTO)
    names, plan = chain(generator, path)
    assert names == []
    assert plan.model.n == brute_force([Fraction(1, 10)] * 3)[0] == 0


def test_single_dominant_reason(generator, write_profile):
    """One link for 90%; CPUID's 1% saves 0.11 per exit but a second link
    adds 2 to the 9% behind it (0.18); HLT would need CPUID first."""
    path = write_profile("t", "EXTERNAL_INTERRUPT: 0.9, HLT: 0.01, CPUID: 0.01, APIC_ACCESS: 0.08",
                         DIRECT_AUTO)
    names, _ = chain(generator, path)
    assert names == ["EXTERNAL_INTERRUPT"]


def test_table_alone_wins_generates_valid_c(generator, write_profile, tmp_path):
    """n = 0: no chain, a comment saying so, and C that compiles."""
    path = write_profile("none", "APIC_ACCESS: 0.9, HLT: 0.05, CPUID: 0.05", DIRECT_AUTO)
    names, plan = chain(generator, path)
    assert names == [] and plan.model.n == 0
    out = tmp_path / "out"
    r = run_gen("--out", out, "gen", path)
    assert r.returncode == 0, r.stderr
    c = (out / "none" / "exit_dispatch.c").read_text()
    assert "if (basic_reason ==" not in c
    assert "No chain: no direct call saves its reason more than its compare" in c
    assert "expected 19.0\n\t * instructions per exit to reach the handler; the table alone: 19.0." in c
    assert "/* [EXIT_REASON_HLT] called directly above */" not in c
    assert "[EXIT_REASON_HLT]" in c
    _compile(out, "none", tmp_path / "none.o")


def test_max_caps_the_chain(generator, write_profile):
    reasons = "MSR_WRITE: 0.4, HLT: 0.3, CPUID: 0.2, IO_INSTRUCTION: 0.1"
    full, _ = chain(generator, write_profile("a", reasons, DIRECT_AUTO))
    assert full == ["MSR_WRITE", "HLT", "CPUID", "IO_INSTRUCTION"]
    capped, plan = chain(generator, write_profile("b", reasons, DIRECT_AUTO.replace(
        "{auto: true}", "{auto: true, max: 2}")))
    assert capped == ["MSR_WRITE", "HLT"]
    assert len(plan.model.costs) == 3
    zero, _ = chain(generator, write_profile("c", reasons, DIRECT_AUTO.replace(
        "{auto: true}", "{auto: true, max: 0}")))
    assert zero == []


def test_counts_are_exact(generator, write_profile):
    """A count mix where a second link exactly breaks even: CPUID's 2 of 22
    exits save 11 each (22/22) and the 11 unhandled exits pay 2 more each
    (22/22).  In exact arithmetic that is a tie, and the shorter chain wins;
    floats could tip it either way."""
    # Statistics off: the counters' costs (STATS_LINK, STATS_TABLE) would move the tie.
    text = write_profile("t", "HLT: 9, CPUID: 2, APIC_ACCESS: 11",
                         DIRECT_AUTO + "statistics: off\n").read_text()
    path = write_profile("t", "HLT: 9, CPUID: 2, APIC_ACCESS: 11",
                         DIRECT_AUTO + "statistics: off\n")
    path.write_text(text.replace("unit: share", "unit: count"))
    names, plan = chain(generator, path)
    assert plan.model.costs[1] == plan.model.costs[2]
    assert names == ["HLT"]
    n, cost = brute_force([Fraction(9, 22), Fraction(2, 22)])
    assert plan.model.n == n == 1 and plan.model.costs[n] == cost


@pytest.mark.parametrize("profile", sorted(p.stem for p in (ROOT / "profiles").glob("*.yaml")))
def test_shipped_mixes_against_brute_force(generator, profile):
    """For every shipped mix, auto's choice equals the brute-force optimum."""
    plan, = generator.plans([profile])
    handled = [m for m in plan.profile.mix if m.reason.name in generator.spec.handlers]
    stats = plan.profile.stats
    n, costs = costmodel.optimal_length([m.exact for m in handled], stats=stats)
    bn, bcost = brute_force([m.exact for m in handled], stats=stats)
    assert (n, costs[n]) == (bn, bcost)


def test_auto_is_deterministic(write_profile, tmp_path):
    path = write_profile("t", "MSR_WRITE: 0.25, HLT: 0.25, CPUID: 0.25, IO_INSTRUCTION: 0.15, "
                         "APIC_ACCESS: 0.1", DIRECT_AUTO)
    outs = []
    for seed in ("0", "1", "4242"):
        out = tmp_path / f"o{seed}"
        r = run_gen("--out", out, "gen", path, env={"PYTHONHASHSEED": seed})
        assert r.returncode == 0, r.stderr
        outs.append((out / "t" / "exit_dispatch.c").read_text())
    assert outs[0] == outs[1] == outs[2]


def test_explain_says_why(write_profile):
    path = write_profile("t", "EXTERNAL_INTERRUPT: 0.5, MSR_WRITE: 0.3, HLT: 0.02, CPUID: 0.01, "
                         "APIC_ACCESS: 0.17", DIRECT_AUTO)
    r = run_gen("explain", path)
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())
    assert "Dispatch: policy direct, direct auto." in text
    # Statistics counts (the default): a link counts its exit with one
    # increment (2k + 1 + 1), the table path with five (14 + 5).
    assert "MSR_WRITE 30.0%: in at #2: 6 instructions to its handler (the table alone: 19)" in text
    assert "HLT 2.0%: out: the best chain reaching it (length 3 or more) costs 8.5 per exit " \
           "against 8.4" in text
    assert "Expected per exit by chain length: 0: 19.0, 1: 12.5, 2: 8.4, 3: 8.5, 4: 8.7." in text


# --- the constants against the compiled code ---------------------------------------
def _hv_cflags():
    """HV_CFLAGS as runtime/runtime.mk sets it (continuation lines joined)."""
    text = (ROOT / "runtime" / "runtime.mk").read_text().replace("\\\n", " ")
    m = re.search(r"^HV_CFLAGS\s*:?=(.*)$", text, re.M)
    assert m, "runtime/runtime.mk: no HV_CFLAGS"
    flags = m.group(1).split()
    assert "-O2" in flags
    return flags


def _compile(out, profile, obj, source="exit_dispatch.c"):
    inc = ["-I", str(ROOT),
           "-I", str(out / "common"), "-I", str(out / profile)]
    r = subprocess.run(["gcc", *_hv_cflags(), *inc, "-c", str(out / profile / source),
                        "-o", str(obj)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$")
RELOC = re.compile(r"^\s*[0-9a-f]+:\s+R_X86_64_\S+\s+(\S+?)(?:[-+]0x[0-9a-f]+)?\s*$")


def _disassemble(obj, function="vmx_dispatch_exit"):
    """{address: [mnemonic, operands, relocation symbol]} of function."""
    r = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", "-M", "att", str(obj)],
                       capture_output=True, text=True, check=True)
    insns, inside, last = {}, False, None
    for line in r.stdout.splitlines():
        if re.match(rf"^[0-9a-f]+ <{function}>:", line):
            inside = True
            continue
        if not inside:
            continue
        if re.match(r"^[0-9a-f]+ <", line):
            break
        m = RELOC.match(line)
        if m and last is not None:
            insns[last][2] = m.group(1)
            continue
        m = INSN.match(line)
        if m:
            last = int(m.group(1), 16)
            insns[last] = [m.group(2), m.group(3), None]
    assert insns, f"no {function} in the object"
    return insns


def _path_length(insns, reason):
    """Instructions executed from the entry to the jump into a handler
    for basic exit reason `reason`, the handler's table entry non-NULL.
    Understands the shapes the template compiles to: compares of the
    reason with an immediate and their conditional jumps, a NULL test of
    the loaded handler, direct and indirect jumps; anything else is
    straight-line.  Returns (count, how it ended)."""
    addrs = sorted(insns)
    pc, count, flags = addrs[0], 0, None
    for _ in range(200):
        mnem, ops, sym = insns[pc]
        count += 1
        nxt = addrs[addrs.index(pc) + 1] if addrs.index(pc) + 1 < len(addrs) else None
        m = re.match(r"\$0x([0-9a-f]+),%(si|esi|ax|eax|cx|ecx|di|edi)$", ops)
        if mnem.startswith("cmp") and m:
            flags = ("cmp", reason, int(m.group(1), 16))
        elif mnem.startswith("cmp"):
            flags = None	# the clamp of the statistics slot: no jump reads it
        elif mnem.startswith("test") and re.match(r"%(\w+),%\1$", ops):
            flags = ("nonnull",)
        if mnem.startswith("j"):
            target = re.match(r"([0-9a-f]+)", ops)
            if mnem == "jmp":
                if ops.startswith("*"):
                    return count, "indirect"
                if sym is not None and not sym.startswith("."):
                    return count, sym
                pc = int(target.group(1), 16)
                continue
            assert flags is not None, f"{mnem} at {pc:#x} after no compare the walk understands"
            if flags[0] == "nonnull":
                taken = {"je": False, "jne": True}[mnem]
            else:
                _, a, b = flags
                taken = {"je": a == b, "jne": a != b, "ja": a > b, "jbe": a <= b,
                         "jb": a < b, "jae": a >= b}[mnem]
            if taken:
                if sym is not None and not sym.startswith("."):
                    return count, sym
                pc = int(target.group(1), 16)
                continue
        elif mnem in ("ret", "call"):
            return count, mnem
        pc = nxt
        assert pc is not None, "ran off the end of vmx_dispatch_exit"
    raise AssertionError("no handler reached in 200 instructions")


CHAIN = ["EXTERNAL_INTERRUPT", "MSR_WRITE", "HLT", "IO_INSTRUCTION", "EPT_VIOLATION"]


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed: "
                    "cannot count the compiled dispatch's instructions")
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
@pytest.mark.parametrize("stats", ["counts", "off", "timing"])
def test_constants_match_compiled_code(generator, write_profile, tmp_path, stats):
    """(a) the first chain reason, (b) the k-th, (c) a table reason, each
    within one instruction of the model, statistics prefix included."""
    reasons = ", ".join(f"{n}: 0.15" for n in CHAIN) + ", VMCALL: 0.125, CPUID: 0.125"
    path = write_profile("cm", reasons, "dispatch:\n  policy: direct\n  direct: {count: 5}\n"
                         f"statistics: {stats}\n")
    out = tmp_path / "out"
    r = run_gen("--out", out, "gen", path)
    assert r.returncode == 0, r.stderr
    obj = tmp_path / "cm.o"
    _compile(out, "cm", obj)
    insns = _disassemble(obj)
    num = {n: generator.spec.reason[n].number for n in CHAIN + ["VMCALL", "CPUID"]}
    handler = generator.spec.handlers
    order, _ = chain(generator, path)		# equal shares: by exit-reason number
    assert sorted(order) == sorted(CHAIN)
    n = len(order)
    for k, name in ((1, order[0]), (3, order[2]), (n, order[-1])):
        got, how = _path_length(insns, num[name])
        assert how == handler[name], f"{name} ended at {how}"
        assert abs(got - costmodel.link_cost(k, stats)) <= 1, \
            f"{name} at #{k}: {got} instructions, the model says {costmodel.link_cost(k, stats)}"
    for name in ("VMCALL", "CPUID"):
        got, how = _path_length(insns, num[name])
        assert how == "indirect", f"{name} ended at {how}"
        assert abs(got - costmodel.table_cost(n, stats)) <= 1, \
            f"{name} through the table after {n}: {got}, the model says {costmodel.table_cost(n, stats)}"


# --- the CPUID fast handler against its compiled code ------------------------------
def _fast_path_length(insns, leaf):
    """Instructions of handle_cpuid_fast() for a CPUID of `leaf`, no
    interrupt shadow to clear, to its RET or its jump into handle_cpuid():
    (count, "ret" or the symbol).  The key is EAX, the guest's leaf:
    compares of the saved EAX in memory (or of EAX) with an immediate
    and TEST %eax,%eax."""
    return _switch_path_length(insns, leaf, r"\$0x([0-9a-f]+),(%eax|\(%rdi\))$",
                               zero_test="%eax,%eax")


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_cpuid_fast_constants_match_compiled_code(write_profile, tmp_path):
    """handle_cpuid_fast() with three leaves listed: each listed leaf's
    path to RET within one instruction of costmodel.cpuid_fast_hit() (gcc
    may share the answers' tails behind a JMP), and an unlisted leaf's path
    to handle_cpuid() exactly cpuid_fast_miss(): the compares are asm goto,
    a CMPL of the saved EAX and a JE each, no load of EAX first."""
    leaves = [0x0, 0x80000000, 0x80000002]
    path = write_profile("cf", "CPUID: 0.5, HLT: 0.5",
                         "dispatch:\n  policy: direct\n  direct: {count: 1}\nstatistics: off\n"
                         "fast:\n  cpuid_leaves: [0x0, 0x80000000, 0x80000002]\n")
    out = tmp_path / "out"
    r = run_gen("--out", out, "gen", path)
    assert r.returncode == 0, r.stderr
    obj = tmp_path / "cf.o"
    _compile(out, "cf", obj, "cpuid_fast.c")
    insns = _disassemble(obj, "handle_cpuid_fast")
    for k, leaf in enumerate(leaves, 1):
        got, how = _fast_path_length(insns, leaf)
        assert how == "ret", f"leaf {leaf:#x} ended at {how}"
        assert abs(got - costmodel.cpuid_fast_hit(k)) <= 1, \
            f"leaf {leaf:#x} at #{k}: {got} instructions, the model says {costmodel.cpuid_fast_hit(k)}"
    got, how = _fast_path_length(insns, 0x1)
    assert how == "handle_cpuid", f"leaf 0x1 ended at {how}"
    assert got == costmodel.cpuid_fast_miss(len(leaves)), \
        f"leaf 0x1: {got} instructions, the model says {costmodel.cpuid_fast_miss(len(leaves))}"


# --- the MSR and I/O fast handlers against their compiled code -----------------------
def _switch_path_length(insns, key, cmp_re=r"\$0x([0-9a-f]+),", zero_test=None):
    """Instructions from the entry for a switch on `key` (the guest's ECX,
    the masked I/O qualification, or with `cmp_re` and `zero_test` EAX),
    no interrupt shadow to clear, to RET or to a jump into another
    function: (count, "ret" or the symbol).  Understands compares of the
    key with an immediate (`cmp_re`: register or the saved ECX in memory),
    TEST of the key with itself (`zero_test`) and the TEST of the STI/MOV-SS
    bits (not taken)."""
    addrs = sorted(insns)
    pc, count, flags = addrs[0], 0, None
    for _ in range(200):
        mnem, ops, sym = insns[pc]
        count += 1
        i = addrs.index(pc)
        nxt = addrs[i + 1] if i + 1 < len(addrs) else None
        m = re.match(cmp_re, ops)
        if mnem.startswith("cmp") and m:
            flags = ("cmp", key, int(m.group(1), 16))
        elif zero_test and mnem.startswith("test") and ops == zero_test:
            flags = ("cmp", key, 0)
        elif mnem.startswith("test") and re.match(r"\$0x3,", ops):
            flags = ("shadow",)
        if mnem.startswith("j"):
            target = re.match(r"([0-9a-f]+)", ops)
            if mnem == "jmp":
                if sym is not None and not sym.startswith("."):
                    return count, sym
                pc = int(target.group(1), 16)
                continue
            assert flags is not None, f"{mnem} at {pc:#x} after no compare the walk understands"
            if flags[0] == "shadow":
                taken = {"je": True, "jne": False}[mnem]
            else:
                _, a, b = flags
                taken = {"je": a == b, "jne": a != b, "ja": a > b, "jbe": a <= b,
                         "jb": a < b, "jae": a >= b, "jg": a > b, "jle": a <= b}[mnem]
            if taken:
                if sym is not None and not sym.startswith("."):
                    return count, sym
                pc = int(target.group(1), 16)
                continue
        elif mnem == "ret":
            return count, mnem
        pc = nxt
        assert pc is not None, "ran off the end"
    raise AssertionError("no end reached in 200 instructions")


@pytest.mark.skipif(shutil.which("objdump") is None, reason="objdump (binutils) is not installed")
@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_msr_io_fast_constants_match_compiled_code(write_profile, tmp_path):
    """vmexit-bench's fast.msrs and fast.io_ports: RDMSR IA32_APIC_BASE's
    path to RET, and an unlisted MSR's and I/O exit's path to the general
    handler, each within one instruction of costmodel.py."""
    path = write_profile("mf", "MSR_READ: 0.4, MSR_WRITE: 0.3, IO_INSTRUCTION: 0.3",
                         "dispatch:\n  policy: direct\n  direct: {count: 1}\nstatistics: off\n"
                         "fast:\n  msrs: [IA32_APIC_BASE, IA32_TSC_DEADLINE]\n"
                         "  io_ports: [0x510, 0x511]\n")
    out = tmp_path / "out"
    r = run_gen("--out", out, "gen", path)
    assert r.returncode == 0, r.stderr
    obj = tmp_path / "mf.o"
    _compile(out, "mf", obj, "msr_io_fast.c")
    rd = _disassemble(obj, "handle_msr_read_fast")
    got, how = _switch_path_length(rd, 0x1b)
    assert how == "ret", f"RDMSR 0x1b ended at {how}"
    want = costmodel.msr_fast_read_hit("IA32_APIC_BASE")
    assert abs(got - want) <= 1, f"RDMSR IA32_APIC_BASE: {got} instructions, the model says {want}"
    got, how = _switch_path_length(rd, 0x277)
    assert how == "handle_msr_read" and abs(got - costmodel.msr_fast_miss(1)) <= 1, (got, how)
    wr = _disassemble(obj, "handle_msr_write_fast")
    got, how = _switch_path_length(wr, 0x277)
    assert how == "handle_msr_write" and abs(got - costmodel.msr_fast_miss(1)) <= 1, \
        (got, how)
    io = _disassemble(obj, "handle_io_instruction_fast")
    got, how = _switch_path_length(io, 0x3f80000)	# OUT of a byte to 0x3f8
    assert how == "handle_io_instruction" and abs(got - costmodel.io_fast_miss(2)) <= 1, (got, how)
