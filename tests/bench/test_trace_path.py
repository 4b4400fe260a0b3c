# SPDX-License-Identifier: GPL-2.0-only
"""trace_path.py's reading of a Bochs debugger trace (no Bochs run)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import trace_path  # noqa: E402

# Lines as Bochs 2.7's debugger prints them with `trace on`: the guest's
# loop, then the hypervisor (linked at 0x4000000, run at 0xf600000).
TRACE = """\
Next at t=91400618
(0) [0x000000103bfb] 0008:0000000000103bfb (unk. ctxt): jmp .-269  (0x00103af3)   ; e9f3feffff
Tracing enabled for CPU0
(0).[91400618] [0x000000103bfb] 0008:0000000000103bfb (unk. ctxt): jmp .-269  (0x00103af3)   ; e9f3feffff
(0).[91400619] [0x000000103af3] 0008:0000000000103af3 (unk. ctxt): wrmsr                     ; 0f30
(0).[91400620] [0x00000f628eb5] 0008:000000000f628eb5 (unk. ctxt): push r9                   ; 4151
(0).[91400621] [0x00000f628eb7] 0008:000000000f628eb7 (unk. ctxt): push r8                   ; 4150
(0).[91400622] [0x00000f627bb0] 0008:000000000f627bb0 (unk. ctxt): cmp si, 0x0001            ; 6683fe01
(0).[91400623] [0x00000f628ec0] 0008:000000000f628ec0 (unk. ctxt): vmresume                  ; 0f01c3
(0).[91400624] [0x000000103af5] 0008:0000000000103af5 (unk. ctxt): nop                       ; 90
"""

SYMS = ([0x4027bb0, 0x4028eb5, 0x4028ec0], ["vmx_dispatch_exit", "vmx_exit_stub", "vmx_nmi_check_end"])


def named():
    trace = trace_path.parse_trace(TRACE)
    name = trace_path.Namer(*SYMS, link_base=0x4000000, run_start=0xf600000, run_end=0xfff0000)
    return trace, [name(a) for a, _ in trace]


def test_parse_takes_only_traced_instructions():
    trace, _ = named()
    assert len(trace) == 7
    assert trace[0] == (0x103bfb, "jmp .-269  (0x00103af3)")
    assert trace[3][1] == "push r8"


def test_names_follow_the_relocation():
    _, n = named()
    assert n == ["GUEST", "GUEST", "vmx_exit_stub", "vmx_exit_stub", "vmx_dispatch_exit",
                 "vmx_nmi_check_end", "GUEST"]


def test_runs_and_totals():
    _, n = named()
    assert trace_path.runs(n) == [("GUEST", 2), ("vmx_exit_stub", 2), ("vmx_dispatch_exit", 1),
                                  ("vmx_nmi_check_end", 1), ("GUEST", 1)]
    assert trace_path.totals(n)["GUEST"] == 3
    text = trace_path.report(n)
    assert "7 instructions, 4 in the hypervisor" in text


def test_region_line_is_the_hypervisors():
    line = ("exitplan: EPT: 8 table pages; 0 MiB in 1-GiB, 244 MiB in 2-MiB; hypervisor "
            "[0xf600000, 0xfff0000) and MMIO test page 0xfeb00000 not mapped")
    m = trace_path.REGION_RE.search(line)
    assert m and (int(m.group(1), 16), int(m.group(2), 16)) == (0xf600000, 0xfff0000)
