# SPDX-License-Identifier: GPL-2.0-only
"""The plan: what decide.py concludes from a profile, and all that the
templates (render.py) and `explain` read.  Typed records, frozen once
made; equality is identity, as the templates compare them.

The spec's and the profile's own records (spec.py, validate.py) are
referred to as they are (`Any` below): the plan is the decisions."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional

# frozen: a decision is made once; eq=False: compared (and hashed) by
# identity, so a record with lists in it can still be a dict key.
record = dataclass(frozen=True, eq=False)


# --- fast handlers -----------------------------------------------------------
@record
class CpuidFastLeaf:
    """A CPUID leaf answered from the boot-time table (fast.cpuid_leaves)."""
    leaf: int
    sdm: str
    index: int		# its slot in the table
    c: str		# the leaf in C: its spec/arch.yaml macro, else the number


@record
class FastHandler:
    """An exit reason whose handler the profile specialises."""
    reason: Any		# spec exit reason
    handler: str	# the fast handler's C name
    general: str	# the general handler it falls back to
    why: str


@record
class StatsClaim:
    """A statistics table slot a fast handler's key takes at boot."""
    table: str		# msr_read, msr_write or io
    key: int
    slot: int


@record
class FastPlan:
    cpuid_fast: list[CpuidFastLeaf]
    handler: dict[str, str]		# exit reason name -> the function the dispatch calls
    fast: list[FastHandler]
    msr_fast_read: list[Any]		# profile fast.msrs entries
    msr_fast_write: list[Any]
    io_fast: list[Any]			# profile fast.io_ports entries
    stats_table_keys: int
    stats_claims: list[StatsClaim]
    stats_slot: dict[str, dict[int, int]]	# table -> {key: slot}


# --- dispatch ------------------------------------------------------------------
@record
class CostModel:
    """direct: auto's choice under the cost model (costmodel.py)."""
    n: int				# reasons called directly
    costs: list[Any]			# expected instructions with k direct calls
    cap: Optional[int]
    candidates: list[Any]		# profile mix entries with a handler
    stats: str
    marginal: list[Any]
    expected: str			# costs[n], printed
    table: str				# costs[0], printed


@record
class DirectReason:
    """A reason the dispatch calls directly, in chain order."""
    reason: Any
    share: float
    cumulative: float
    handler: str


@record
class HandledReason:
    """A reason the runtime handles (the table and the switch)."""
    reason: Any
    handler: str
    share: Optional[float]
    direct: bool


@record
class DispatchPlan:
    model: Optional[CostModel]
    direct: list[DirectReason]
    direct_share: float
    handled: list[HandledReason]
    table: list[HandledReason]
    table_share: float
    unhandled: list[Any]		# profile mix entries without a handler
    unhandled_share: float


# --- features, control bits and gates --------------------------------------------
@record
class BitGroup:
    """Control bits of one field, with the profile key or spec they come from."""
    origin: str
    controls: list[Any]			# spec controls, by bit


@record
class GateChoice:
    name: str
    macro: str
    description: str
    needs: list[Any]			# spec features
    set: list[tuple[str, list[Any]]]	# [(control field key, [controls])]: what it adds
    manual: bool = False		# the fallback of an atomic MSR switch is by hand
    index: int = 0


@record
class Gate:
    """A choice made at boot: the first the CPU supports is taken."""
    name: str
    macro: str
    origin: str
    choices: list[GateChoice]
    msr: Any = None			# the spec MSR an atomic-switch gate is for
    index: int = 0


@record
class PausePlan:
    mode: str
    chain: list[str]
    uses_loop: bool
    ple_gap: Any
    ple_window: Any


@record
class RequiredFeature:
    feature: Any
    origins: list[str]


@record
class ControlPlan:
    required_features: list[RequiredFeature]
    required_bits: Any			# decide.Bits
    optional_bits: Any			# decide.Bits
    gates: list[Gate]
    msr_gates: dict[str, Gate]		# MSR name -> its atomic-switch gate
    pause: Optional[PausePlan]


# --- MSRs and I/O ----------------------------------------------------------------
@record
class ManualMsr:
    """An MSR switched by hand (always, or when its gate falls back)."""
    entry: Any				# profile msrs entry
    msr: Any
    gate: Optional[Gate]
    save: bool				# guest writes do not exit: read it back on exit
    owned: list[str]			# bits VM entry/exit load themselves (arch macros)
    slot: int
    words: str


@record
class AtomicMsr:
    entry: Any
    msr: Any
    gate: Optional[Gate]


@record
class MsrRule:
    """An MSR bitmap rule, applied in order."""
    first: int
    last: int
    first_c: str
    last_c: str
    intercept: str
    comment: str


@record
class MsrPlan:
    manual_msrs: list[ManualMsr]
    load_list: list[Any]		# profile msrs entries, by index
    atomic_msrs: list[AtomicMsr]
    msr_rules: list[MsrRule]


@record
class IoGrant:
    """Ports the guest owns (no exit)."""
    first: int
    last: int
    comment: str
    why: str


# --- the whole -------------------------------------------------------------------
@record
class Plan(FastPlan, DispatchPlan, ControlPlan, MsrPlan):
    """Every part's decisions under one name, as the templates and
    `explain` read them (plan.direct, plan.gates, ...), with the profile
    and the spec they were made from."""
    profile: Any
    spec: Any
    io_grants: list[IoGrant]

    @classmethod
    def of(cls, profile, spec, io_grants, *parts):
        """The plan of the parts decide.py's steps made."""
        kw = {f.name: getattr(part, f.name) for part in parts for f in fields(part)}
        return cls(profile=profile, spec=spec, io_grants=io_grants, **kw)
