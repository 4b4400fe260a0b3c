# SPDX-License-Identifier: GPL-2.0-only
"""The generator's modules import each other without a circle (main.py
is the command line: it imports the commands, nothing imports it)."""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "gen" / "exitplan_gen"


def _imports():
    graph = {}
    for f in sorted(PKG.glob("*.py")):
        deps = set()
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
        graph[f.stem] = deps
    return graph


def _cycle(graph):
    """One import circle as a list of modules, or None."""
    state = {}

    def visit(m, path):
        state[m] = "open"
        for d in sorted(graph.get(m, ())):
            if state.get(d) == "open":
                return path[path.index(d):] + [d] if d in path else [m, d]
            if d not in state:
                c = visit(d, path + [d])
                if c:
                    return c
        state[m] = "done"
        return None

    for m in sorted(graph):
        if m not in state:
            c = visit(m, [m])
            if c:
                return c
    return None


def test_no_import_circle():
    graph = _imports()
    assert "fromstats" in graph and "main" in graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_nothing_imports_main():
    assert [m for m, deps in _imports().items() if "main" in deps] == []


def test_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
