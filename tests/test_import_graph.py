"""The import graph of ``src/fairpolicy``: no cycles, no import from a lower layer to a
higher one, no module over 900 lines.

The graph is built with :mod:`ast` from the source, without importing anything: every
``import`` and ``from … import`` at module level and inside functions and classes (a
function-level import still runs, just later), relative imports resolved, ``from pkg
import name`` counted as an import of the submodule ``pkg.name`` when that is a module
and of ``pkg`` otherwise. Imports under ``if TYPE_CHECKING:`` never run, so they are left
out of both rules (annotations may name a higher layer's types). The package root is
layer L6 like any other module: the version lives in the leaf ``fairpolicy.version``.

The layers are written down once, in ``docs/architecture.md`` (the table under "Layers"),
and parsed here, so the document and the test cannot drift apart.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PKG = SRC / "fairpolicy"
DOC = REPO / "docs" / "architecture.md"

MAX_LINES = 900

#: Edges that exist today and break a rule; removed when issue 17's splits land.
#: The test fails when one of them no longer exists, so the list only shrinks.
KNOWN: dict[tuple[str, str], str] = {}

#: Modules over MAX_LINES today; removed when issue 17's splits land (same rule: the test
#: fails when a listed module is no longer over the limit).
KNOWN_LONG: set[str] = set()


# ---------------------------------------------------------------- the layers, from the doc


def layers() -> dict[str, int]:
    """``{top-level name: layer}`` from the table in docs/architecture.md: rows
    ``| L<n> | `a`, `b` | …``."""
    out: dict[str, int] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\|\s*L(\d)\s*\|([^|]*)\|", line)
        if m:
            for name in re.findall(r"`([\w.]+)`", m.group(2)):
                assert name not in out, f"{name} is in two layers of {DOC.name}"
                out[name] = int(m.group(1))
    assert out, f"no layer table found in {DOC}"
    return out


# ---------------------------------------------------------------- the graph


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement except those under ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _imports_in(child)
            continue
        yield from _imports_in(node)


def _imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _imports(node)


def edges(mods: dict[str, Path]) -> dict[tuple[str, str], int]:
    """``{(importer, imported): first line}`` for imports inside the package."""
    out: dict[tuple[str, str], int] = {}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = name.split(".")
                    if not is_pkg:
                        base = base[:-1]
                    base = base[: len(base) - (node.level - 1)]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                for alias in node.names:
                    sub = f"{stem}.{alias.name}"
                    if sub in mods:
                        targets.append(sub)
                    else:
                        targets.append(stem)
            for target in targets:
                while target and target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]  # import a.b.c where c is a name
                if target in mods and target != name:
                    out.setdefault((name, target), node.lineno)
    return out


def layer_of(module: str, table: dict[str, int]) -> int | None:
    parts = module.split(".")
    if module == "fairpolicy":
        return table.get("fairpolicy")
    for i in range(len(parts), 1, -1):
        key = ".".join(parts[1:i])
        if key in table:
            return table[key]
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One concrete cycle per strongly connected component with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    comps: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    out = []
    for comp in comps:
        members = set(comp)
        start = comp[0]
        # shortest path back to start inside the component (BFS)
        prev: dict[str, str] = {}
        frontier = [start]
        found = None
        while frontier and found is None:
            nxt = []
            for v in frontier:
                for w in sorted(graph.get(v, ())):
                    if w not in members:
                        continue
                    if w == start:
                        found = v
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found:
                    break
            frontier = nxt
        path = [start]
        v = found
        while v is not None and v != start:
            path.insert(1, v)
            v = prev.get(v)
        out.append([*path, start])
    return out


# ---------------------------------------------------------------- the tests

MODS = modules()
EDGES = edges(MODS)


def live_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for a, b in EDGES:
        if (a, b) not in KNOWN:
            graph.setdefault(a, set()).add(b)
    return graph


def test_every_module_has_a_layer() -> None:
    table = layers()
    missing = sorted(m for m in MODS if layer_of(m, table) is None)
    assert not missing, (
        f"modules in no layer of {DOC.relative_to(REPO)} (add them to the table): {missing}"
    )


def test_no_import_cycles() -> None:
    found = cycles(live_graph())
    lines = []
    for cycle in found:
        steps = itertools.pairwise(cycle)
        at = ", ".join(f"{MODS[a].relative_to(REPO)}:{EDGES[(a, b)]}" for a, b in steps)
        lines.append(f"  {' -> '.join(cycle)}  (imports at {at})")
    assert not found, "import cycles (one per strongly connected set):\n" + "\n".join(lines)


def test_no_import_from_a_lower_layer_to_a_higher_one() -> None:
    table = layers()
    bad = []
    for (a, b), line in sorted(EDGES.items()):
        la, lb = layer_of(a, table), layer_of(b, table)
        if la is not None and lb is not None and lb > la and (a, b) not in KNOWN:
            bad.append(f"  {a} (L{la}) -> {b} (L{lb})  at {MODS[a].relative_to(REPO)}:{line}")
    assert not bad, "imports from a lower layer to a higher one:\n" + "\n".join(bad)


def test_known_edges_still_exist() -> None:
    """So the allow-list is emptied as the splits land: a listed edge that is gone fails."""
    gone = sorted(e for e in KNOWN if e not in EDGES)
    assert not gone, f"remove these from KNOWN in {Path(__file__).name}: {gone}"


def test_no_module_over_900_lines() -> None:
    lengths = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODS.items()}
    long = sorted(m for m, n in lengths.items() if n > MAX_LINES and m not in KNOWN_LONG)
    assert not long, f"modules over {MAX_LINES} lines: " + ", ".join(
        f"{m} ({lengths[m]})" for m in long
    )
    fixed = sorted(m for m in KNOWN_LONG if lengths.get(m, 0) <= MAX_LINES)
    assert not fixed, f"remove these from KNOWN_LONG in {Path(__file__).name}: {fixed}"


# ---------------------------------------------------------------- the checker itself


def test_checker_finds_a_planted_cycle_and_violation(tmp_path: Path) -> None:
    """The graph builder on a toy package: a relative-import cycle, a function-level
    import, a TYPE_CHECKING import (ignored) and ``from pkg import submodule``."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    [cycle] = cycles(graph)
    assert cycle[0] == cycle[-1] and set(cycle) == {"a", "b", "c"}
    src = tmp_path / "fairpolicy"
    (src / "sub").mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "sub" / "__init__.py").write_text("from . import low\n")
    (src / "sub" / "low.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high import X\n"
        "def f():\n    from ..high import y\n"
    )
    (src / "high.py").write_text("from fairpolicy.sub import low\n")
    global SRC
    old = SRC
    SRC = tmp_path
    try:
        mods = {module_name(p): p for p in sorted(src.rglob("*.py"))}
        found = edges(mods)
    finally:
        SRC = old
    assert set(found) == {
        ("fairpolicy.sub", "fairpolicy.sub.low"),
        ("fairpolicy.sub.low", "fairpolicy.high"),
        ("fairpolicy.high", "fairpolicy.sub.low"),
    }
    table = {"sub": 0, "high": 1}
    assert layer_of("fairpolicy.sub.low", table) == 0
    assert layer_of("fairpolicy.high", table) == 1


def test_known_long_modules_exist() -> None:
    missing = sorted(name for name in KNOWN_LONG if name not in MODS)
    assert not missing, f"{missing} are in KNOWN_LONG but are not modules"


def test_version_matches_pyproject() -> None:
    import tomllib

    from fairpolicy.version import __version__

    meta = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert meta["project"]["version"] == __version__
