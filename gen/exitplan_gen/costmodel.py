# SPDX-License-Identifier: GPL-2.0-only
"""The dispatch cost model: instructions from the entry of
vmx_dispatch_exit() to the jump into a reason's handler, in the shape
templates/profile/exit_dispatch.c.j2 compiles to with the hypervisor's
flags (runtime/runtime.mk HV_CFLAGS, -O2).  The one place these numbers
live; tests/gen/test_costmodel.py compiles generated code and checks them
against `objdump -d` (within one instruction).  Bochs counts retired
instructions, so this is also what docs/BENCH.md measures as dispatch.

  the chain's k-th link (1-based): k compares of CMP + Jcc, then the
      direct JMP to the handler (a tail call)            COMPARE * k + DIRECT
      statistics counter (counts, timing): the reason is a constant
      there, one ADD to its slot of vcpu->stats.count[]   + STATS_LINK
  the table after a chain of n: n failed compares, the bounds check
      (CMP, JA), array_index_nospec()'s mask, the load, the NULL test and
      the indirect JMP                                   COMPARE * n + TABLE
      statistics counter: clamp the reason to the OTHER slot (MOV, CMP,
      CMOVBE, MOVZX) and ADD                              + STATS_TABLE

A reason missing from the mix or without a handler takes the table path
too (the NULL entry then goes to the unexpected handler).  With
statistics on, a link costs its reason one more and the table path five
more, so a counting profile's chain may come out a link longer."""

from fractions import Fraction

COMPARE = 2		# CMP + Jcc per chain link passed
DIRECT = 1		# the tail-call JMP of a chain link
TABLE = 14		# bounds check, nospec mask, load, NULL test, JMP *%rax
STATS_LINK = {"off": 0, "counts": 1, "timing": 1}
STATS_TABLE = {"off": 0, "counts": 5, "timing": 5}


def link_cost(k, stats="off"):
    """Instructions to reach the k-th link's handler, its count included."""
    return COMPARE * k + DIRECT + STATS_LINK[stats]


def table_cost(n, stats="off"):
    """Instructions for the table behind a chain of n, its count included."""
    return COMPARE * n + TABLE + STATS_TABLE[stats]


def expected_cost(shares, n, stats="off"):
    """Expected dispatch instructions per exit when the first n of `shares`
    (the frequency-ordered handled reasons' shares of all exits, as
    Fractions) are called directly and everything else, whatever its
    share, goes through the table."""
    chained = sum(shares[:n], Fraction(0))
    cost = sum((s * link_cost(k, stats) for k, s in enumerate(shares[:n], 1)), Fraction(0))
    return cost + (1 - chained) * table_cost(n, stats)


def optimal_length(shares, cap=None, stats="off"):
    """(n, [expected cost for each n from 0 to the cap]): the chain length
    with the lowest expected cost, the shortest of equal ones (fewer
    compares and less code for the same cost).  Exact arithmetic, so equal
    shares tie exactly and the choice is the same on every host."""
    last = len(shares) if cap is None else min(cap, len(shares))
    costs = [expected_cost(shares, n, stats) for n in range(last + 1)]
    best = min(range(len(costs)), key=lambda n: (costs[n], n))
    return best, costs


def marginal(shares, n, stats="off"):
    """What the n-th link (1-based) saves on its own reason against the
    table behind a chain of n - 1, minus what it costs every exit that
    still goes past it to the table: expected_cost(n - 1) - expected_cost(n)."""
    return expected_cost(shares, n - 1, stats) - expected_cost(shares, n, stats)


# --- fast handlers ----------------------------------------------------------
# The CPUID fast handler (templates/profile/cpuid_fast.c.j2), counted from
# its entry.  The dispatch reaches it as it reaches any handler (its link's
# JMP or the table's), so the chain the model above chooses does not
# change with it; these say what a CPUID exit then costs in the handler.
# tests/gen/test_costmodel.py checks them against objdump too.
#
#   a listed leaf, the k-th (1-based): k compares of the guest's EAX
#       in memory (CMPL, JE), the answer's four loads and four stores, vmx_skip_
#       instruction() with no interrupt shadow to clear (three encodings,
#       three VMREADs, ADD, VMWRITE, TEST, Jcc), XOR, RET; every leaf has
#       its own copy of the answer (cpuid_fast_reply() inlined, so its
#       count is a constant slot), so no JMP into shared code
#                   CPUID_FAST_ENTRY + COMPARE * k + CPUID_FAST_ANSWER
#   any other leaf, behind n listed: n failed compares and the JMP into
#       handle_cpuid()             CPUID_FAST_ENTRY + COMPARE * n + DIRECT
CPUID_FAST_ENTRY = 0
CPUID_FAST_ANSWER = 20


def cpuid_fast_hit(k):
    """Instructions of handle_cpuid_fast() answering its k-th listed leaf."""
    return CPUID_FAST_ENTRY + COMPARE * k + CPUID_FAST_ANSWER


def cpuid_fast_miss(n):
    """Instructions of handle_cpuid_fast() before handle_cpuid(), n leaves listed."""
    return CPUID_FAST_ENTRY + COMPARE * n + DIRECT


# The MSR and I/O fast handlers (templates/profile/msr_io_fast.c.j2),
# counted from their entry; reached from the dispatch as any handler.
#
#   an MSR not listed, behind n listed in that direction: n compares of
#       the guest's ECX, the JMP into the general handler
#                   COMPARE * n + DIRECT                     msr_fast_miss(n)
#       (WRMSR too: the answer takes EAX and EDX as halves, loaded after the compare)
#   an I/O exit not listed, behind n listed accesses: the qualification's
#       VMREAD (encoding, VMREAD, AND of the switched bits), n compares, the
#       JMP into handle_io_instruction()
#                   IO_FAST_ENTRY + COMPARE * n + DIRECT     io_fast_miss(n)
#   an RDMSR of a listed MSR, the k-th: k compares, its answer (for
#       IA32_APIC_BASE the vcpu->arch load, the value, the EDX:EAX split
#       and two stores: 7), vmx_skip_instruction(), XOR, RET
#                   COMPARE * k + MSR_FAST_ANSWER[msr] + MSR_FAST_SKIP    msr_fast_read_hit()
IO_FAST_ENTRY = 3
MSR_FAST_SKIP = 12		# vmx_skip_instruction() with no shadow to clear (10), XOR, RET
MSR_FAST_ANSWER = {"IA32_APIC_BASE": 7}	# the answer, its split and its stores


def msr_fast_miss(n):
    """Instructions of handle_msr_*_fast() before the general handler, n MSRs
    listed: the same for RDMSR and WRMSR, whose answers take EAX and EDX as halves."""
    return COMPARE * n + DIRECT


def io_fast_miss(n):
    """Instructions of handle_io_instruction_fast() before handle_io_instruction()."""
    return IO_FAST_ENTRY + COMPARE * n + DIRECT


def msr_fast_read_hit(name, k=1):
    """Instructions of handle_msr_read_fast() answering the k-th listed MSR `name`."""
    return COMPARE * k + MSR_FAST_ANSWER[name] + MSR_FAST_SKIP
