# SPDX-License-Identifier: GPL-2.0-only
"""The generator's own shape (issue 26): the plan decide() hands the
templates is typed and frozen, and no function of gen/ runs long."""

import ast
import dataclasses

import pytest

from conftest import ROOT

MAX_FUNCTION_LINES = 80
SOURCES = sorted((ROOT / "gen" / "exitplan_gen").glob("*.py")) + [ROOT / "gen" / "exitplan-gen"]


def test_no_long_function():
    """A function over MAX_FUNCTION_LINES lines is split into named steps."""
    long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}() is {n} lines")
    assert not long, "\n".join(long)


@pytest.fixture(scope="module")
def plans():
    from exitplan_gen.main import Generator
    gen = Generator(str(ROOT))
    return gen.plans([])


def _records(value, seen):
    """Every dataclass instance reachable from value through the plan's
    own records, lists, tuples and dicts (not into the spec's objects)."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if dataclasses.is_dataclass(value):
        yield value
        for f in dataclasses.fields(value):
            if f.name not in ("profile", "spec"):
                yield from _records(getattr(value, f.name), seen)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _records(v, seen)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _records(v, seen)


def test_plan_is_typed_and_frozen(plans):
    from exitplan_gen.plan import Plan
    assert plans
    for plan in plans:
        assert type(plan) is Plan
        records = list(_records(plan, set()))
        # The gates, the MSR switching, the dispatch: records, not bags.
        assert len({type(r).__name__ for r in records}) >= 6, plan.profile.name
        for r in records:
            assert r.__dataclass_params__.frozen, type(r).__name__
        with pytest.raises(dataclasses.FrozenInstanceError):
            plan.gates = []
