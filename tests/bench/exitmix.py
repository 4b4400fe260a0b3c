# SPDX-License-Identifier: GPL-2.0-only
"""Profiles' exit mixes, as the benchmarks use them.

A profile's `exit_mix` (spec/profile.schema.json) gives each basic exit
reason a share (unit: share) or a count (unit: count).  Both benchmarks
only need relative weights: the host microbenchmark apportions them to a
fixed number of exits, run_bench.py weights measured exit costs with them.

Read with PyYAML directly rather than through gen/exitplan_gen, whose
internals are not an interface; the reason names are checked against
spec/exit_reasons.yaml so that a typo fails here, with the file named,
rather than silently weighting nothing.
"""
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class MixError(Exception):
    pass


@dataclass
class ExitMix:
    profile: str                 # the profile's `profile:` name
    path: Path
    unit: str                    # share | count
    source_kind: str             # estimate | measured
    reasons: List[Tuple[str, Fraction]]   # in file order, weights > 0 only

    @property
    def total(self) -> Fraction:
        return sum((w for _, w in self.reasons), Fraction(0))

    def shares(self) -> Dict[str, float]:
        """Each reason's fraction of all exits (sums to 1)."""
        t = self.total
        return {r: float(w / t) for r, w in self.reasons}


def load_yaml(path: Path):
    with open(path, "rb") as f:
        return yaml.load(f, Loader=_Loader)


def exit_reason_names(spec_dir: Path) -> Dict[str, int]:
    """name -> number from spec/exit_reasons.yaml (numbers only for checks
    and sorting here; C gets them from the generated header)."""
    doc = load_yaml(Path(spec_dir) / "exit_reasons.yaml")
    return {e["name"]: int(e["number"]) for e in doc["exit_reasons"]}


def load_mix(path: Path, reason_names: Optional[Dict[str, int]] = None) -> ExitMix:
    path = Path(path)
    doc = load_yaml(path)
    if not isinstance(doc, dict) or "exit_mix" not in doc:
        raise MixError(f"{path}: no exit_mix")
    name = doc.get("profile") or path.stem
    mix = doc["exit_mix"]
    unit = mix.get("unit")
    if unit not in ("share", "count"):
        raise MixError(f"{path}: exit_mix.unit is {unit!r}, not share or count")
    source_kind = (mix.get("source") or {}).get("kind", "estimate")
    reasons = []
    for reason, value in (mix.get("reasons") or {}).items():
        if reason_names is not None and reason not in reason_names:
            raise MixError(f"{path}: exit_mix.reasons: {reason} is not in spec/exit_reasons.yaml")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise MixError(f"{path}: exit_mix.reasons.{reason}: {value!r} is not a number >= 0")
        # The decimal the author wrote, exactly (0.31, not its binary double).
        w = Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
        if w > 0:
            reasons.append((reason, w))
    if not reasons:
        raise MixError(f"{path}: exit_mix has no reason with a weight above 0")
    return ExitMix(profile=name, path=path, unit=unit, source_kind=source_kind,
                   reasons=reasons)


def apportion(mix: ExitMix, n: int) -> List[Tuple[str, int]]:
    """Whole numbers of exits per reason summing to n, each as close to its
    share of n as possible (largest remainder; ties go to the reason listed
    first).  Exact arithmetic, so the result is the same everywhere."""
    total = mix.total
    quotas = [(r, w * n / total) for r, w in mix.reasons]
    counts = {r: int(q) for r, q in quotas}   # floor: q >= 0
    left = n - sum(counts.values())
    order = sorted(range(len(quotas)),
                   key=lambda i: (-(quotas[i][1] - int(quotas[i][1])), i))
    for i in order[:left]:
        counts[quotas[i][0]] += 1
    return [(r, counts[r]) for r, _ in mix.reasons]
