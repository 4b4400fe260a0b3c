# SPDX-License-Identifier: GPL-2.0-only
"""tests/bench/exitpath.py: the exit path's parts counted from objdump
text (recorded in fixtures/objdump/vmexit-bench-*.txt from
build/vmexit-bench/exitplan.elf), and their place in the bench report.
No timing is asserted."""
import re
import sys
from pathlib import Path
from types import SimpleNamespace

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import dispatchcmp  # noqa: E402
import exitmix  # noqa: E402
import exitpath  # noqa: E402
import run_bench  # noqa: E402

OBJ = HERE / "fixtures" / "objdump"


def fixture(symbol):
    return (OBJ / f"vmexit-bench-{symbol}.txt").read_text()


def test_plain_stub_and_resume():
    p = exitpath.stub_parts(fixture("vmx_exit_stub"))
    # SAVE_GUEST_REGS (eight PUSHes, MOV %rsp,%rdi), the field's MOV, VMREAD, CALL.
    assert p["stub"] == 12
    # The action's MOV, eight POPs, CMPQ, JNE (action and NMI in one test), VMRESUME.
    assert p["resume"] == 12
    # One POP fewer is one instruction fewer: the count follows the code.
    fewer = fixture("vmx_exit_stub").replace("pop    %r9\n", "", 1)
    assert exitpath.stub_parts(fewer)["resume"] == 11
    # No CALL of the dispatch: no count.
    assert exitpath.stub_parts(fixture("vmx_exit_stub_hooks")) is None


def test_hooks_stub():
    h = exitpath.hooks_parts(fixture("vmx_exit_stub_hooks"), fixture("vmx_exit_stub"),
                             fixture("vmx_handle_exit"))
    assert h["stub"] == (11, 11)            # SAVE_GUEST_REGS, JMP .Lhooks, CALL
    assert h["resume"] == (13, 13)          # JMP .Lhandled, then the plain resume
    lo, hi = h["msr switch"]
    # The reason's VMREAD, both EFER compares and the dispatch's action test at least.
    assert 10 < lo < hi


def test_path_span_diamond_and_loop():
    diamond = """
   0:	test   %eax,%eax
   2:	je     8 <f+0x8>
   4:	add    $0x1,%eax
   6:	add    $0x1,%eax
   8:	call   100 <vmx_dispatch_exit>
   d:	ret
"""
    # Taken: TEST, JE, RET = 3; not taken: 5.  The CALL itself is the dispatch's.
    assert exitpath.path_span(diamond, "vmx_dispatch_exit") == (3, 5)
    loop = diamond.replace("add    $0x1,%eax\n   6:", "jmp    0 <f>\n   6:", 1)
    assert exitpath.path_span(loop, "vmx_dispatch_exit") is None
    # A path that returns without calling the dispatch is not an exit path.
    assert exitpath.path_span("   0:\tret\n", "vmx_dispatch_exit") is None


def test_split_leaves_the_rest_to_the_handler():
    path = exitpath.plain_path(fixture("vmx_exit_stub"))
    sp = exitpath.split("cpuid", "CPUID", 70, 7, path)
    assert sp.parts["handler"] == (70 - 12 - 7 - 12, 70 - 12 - 7 - 12)
    assert sp.parts["msr switch"] == (0, 0)
    hooks = exitpath.hooks_parts(fixture("vmx_exit_stub_hooks"), fixture("vmx_exit_stub"),
                                 fixture("vmx_handle_exit"))
    sh = exitpath.split("cpuid", "CPUID", 100, 7, hooks)
    lo, hi = hooks["msr switch"]
    assert sh.parts["handler"] == (100 - 11 - 7 - 13 - hi, 100 - 11 - 7 - 13 - lo)
    assert sh.words("msr switch") == f"{lo}-{hi}"


def test_dispatch_part_is_the_chain_position():
    numbers = exitmix.exit_reason_names(REPO / "spec")
    asm = fixture("vmx_dispatch_exit")
    imms = [int(x, 16) for x in re.findall(r"cmp\s+\$0x([0-9a-f]+),%si\n[^\n]*\bje\b", asm)]
    by_num = {n: r for r, n in numbers.items()}
    pl = dispatchcmp.path_lengths(asm, [by_num[i] for i in imms], numbers)
    # CPUID is third in vmexit-bench's chain: three CMP+JE, then the JMP.
    assert pl["CPUID"] == 7 and pl["IO_INSTRUCTION"] == 3


def test_uses_hooks():
    assert not exitpath.uses_hooks({"statistics": "off"}, "gate efer: atomic (load_ia32_efer)\n")
    assert exitpath.uses_hooks({"statistics": "timing"}, "")
    assert exitpath.uses_hooks({"msrs": {"IA32_EFER": {"switch": "manual"}}}, "")
    assert exitpath.uses_hooks({}, "gate efer: manual (no load_ia32_efer)\n")


def test_report_section():
    path = exitpath.plain_path(fixture("vmx_exit_stub"))
    res = SimpleNamespace(exit_parts={"vmexit-bench": [
        exitpath.split("cpuid", "CPUID", 70, 7, path),
        exitpath.split("in-fw_cfg", "IO_INSTRUCTION", 124, 3, path)]})
    md = "\n".join(run_bench.render_exit_parts(res))
    assert "## Where the instructions go" in md
    assert "| kind | reason | ticks | stub | dispatch | msr switch | resume | handler |" in md
    assert "| cpuid | CPUID | 70 | 12 | 7 | 0 | 12 | 39 |" in md
    assert "| in-fw_cfg | IO_INSTRUCTION | 124 | 12 | 3 | 0 | 12 | 97 |" in md
    assert run_bench.render_exit_parts(SimpleNamespace(exit_parts={})) == []
