"""The shape of ``fairpolicy.data`` (issue 17): read from the code's own imports.

Every import counts, also the ones inside functions and under ``TYPE_CHECKING``: a lazy
import still ties two modules together. The invariants:

- no circle among the modules of ``data/``;
- ``data/`` imports nothing from a higher layer (the runner modules, ``plan``, ``cli``,
  the package's ``__init__``, ``decide``, ``outputs``, ``formatters``, ``ssp``);
- no module takes another module's private (``_name``) names;
- no module is over 900 lines;
- only ``data/sources/__init__.py`` (``open_source``) names the DuckDB and Spark modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_import_graph import layers

DATA = Path(__file__).resolve().parents[2] / "src" / "fairpolicy" / "data"

#: modules of layers above ``data`` (L4), or beside it in L4 but not below it (the layer
#: table is written once, in docs/architecture.md)
HIGHER = tuple(
    f"fairpolicy.{name}"
    for name, layer in layers().items()
    if layer > 4 or (layer == 4 and name != "data")
)


def _module_name(path: Path) -> str:
    rel = path.relative_to(DATA.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(DATA.rglob("*.py"))}


def _imports(path: Path, name: str) -> list[tuple[str, list[str]]]:
    """(module imported, names taken from it) for every import statement in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            out.append((target, [alias.name for alias in node.names]))
    return out


def _edges() -> dict[str, set[str]]:
    """Module → the ``fairpolicy.data`` modules it imports (a package's submodule named in
    ``from package import submodule`` counts as that submodule)."""
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for target, names in _imports(path, name):
            hits = [f"{target}.{n}" for n in names if f"{target}.{n}" in modules]
            if not hits and target in modules:
                hits = [target]
            edges[name] |= {h for h in hits if h != name}
    return edges


def test_the_layout_is_read() -> None:
    """The oracle sees the package: the sources, the binding and their edges."""
    edges = _edges()
    assert "fairpolicy.data.sources.duckdb" in edges
    assert "fairpolicy.data.bind.labels" in edges
    assert "fairpolicy.data.sources.base" in edges["fairpolicy.data.sources.duckdb"]
    assert "fairpolicy.data.bind.scores" in edges["fairpolicy.data.bind.labels"]


def test_no_import_circle_in_data() -> None:
    edges = _edges()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                circle = [*stack[stack.index(nxt) :], nxt]
                pytest.fail("import circle: " + " -> ".join(circle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


@pytest.mark.parametrize("name", sorted(_modules()))
def test_module_shape(name: str) -> None:
    path = _modules()[name]
    lines = path.read_text(encoding="utf-8").count("\n")
    assert lines <= 900, f"{path.name}: {lines} lines (at most 900)"
    for target, names in _imports(path, name):
        assert not target.startswith(HIGHER), f"{name} imports {target}, a higher layer"
        if target.startswith("fairpolicy") and target != name:
            private = [n for n in names if n.startswith("_") and not n.startswith("__")]
            assert not private, f"{name} takes private {private} from {target}"
        engine = target.endswith((".sources.duckdb", ".sources.spark"))
        if engine:
            assert name in (
                "fairpolicy.data.sources",
                "fairpolicy.data.sources.duckdb",
                "fairpolicy.data.sources.spark",
            ), f"{name} imports the engine module {target}: only open_source() picks one"
