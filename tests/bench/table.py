# SPDX-License-Identifier: GPL-2.0-only
"""The table and CSV helpers the workload sections share (linux.py,
workloads.py, overcommit.py): a Markdown row, a header with its rule, a
result's cell, an exit mix, a CSV file."""
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional


def row(cells: Iterable[str]) -> str:
    """A Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def head(cells: List[str]) -> List[str]:
    """A Markdown table's header row and the rule below it."""
    return [row(cells), "|" + "---|" * len(cells)]


def cell(r, ok: Callable[[object], str]) -> str:
    """A result's cell: empty without one, its status unless "ok", else ok(r)."""
    if r is None:
        return ""
    return r.status if r.status != "ok" else ok(r)


def mix(exits: Dict[str, int], most: Optional[int] = None) -> str:
    """An exit mix, "REASON count, ...", most frequent first; past MOST, "...";
    "no statistics" when there is none."""
    top = sorted(exits.items(), key=lambda kv: -kv[1])
    text = ", ".join(f"{k} {v}" for k, v in top[:most]) + \
        (", ..." if most is not None and len(top) > most else "")
    return text or "no statistics"


def write_csv(path: Path, header: str, rows: Iterable[Iterable[object]]) -> None:
    """HEADER, then one line a row; None is an empty field."""
    lines = [header] + [",".join("" if v is None else str(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
