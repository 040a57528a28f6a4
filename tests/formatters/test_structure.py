"""Issue 17 invariants for ``formatters`` (layer L4) and ``metrics`` (layer L2).

Read from the source with ``ast`` (nothing is imported), so a later edit that grows a
module past 900 lines, imports a higher layer (also lazily, inside a function) or takes
another module's private ``_name`` fails here with the file and the line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.test_import_graph import layers

SRC = Path(__file__).resolve().parents[2] / "src" / "fairpolicy"
MAX_LINES = 900

#: the layer of each top-level package/module (written once, in docs/architecture.md)
LAYER = layers()
AREAS = ("formatters", "metrics")
FILES = [p for area in AREAS for p in sorted((SRC / area).rglob("*.py"))]


def _ids(p: Path) -> str:
    return str(p.relative_to(SRC))


def _imports(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """(line, absolute fairpolicy module, imported names) of every import, nested ones too."""
    out: list[tuple[int, str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names]
    return [t for t in out if t[1] == "fairpolicy" or t[1].startswith("fairpolicy.")]


def test_the_areas_have_modules() -> None:
    assert len(FILES) > 10


@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_module_under_900_lines(path: Path) -> None:
    n = len(path.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"{_ids(path)} has {n} lines (limit {MAX_LINES}): split it"


@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_imports_only_own_layer_or_lower(path: Path) -> None:
    own = LAYER[path.relative_to(SRC).parts[0]]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for line, module, names in _imports(tree):
        parts = module.split(".")
        targets = [parts[1]] if len(parts) > 1 else names
        for top in targets:
            assert top in LAYER, f"{_ids(path)}:{line} imports unknown fairpolicy.{top}"
            assert LAYER[top] <= own, (
                f"{_ids(path)}:{line} imports fairpolicy.{top} (layer L{LAYER[top]}) "
                f"from layer L{own}"
            )


@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_no_private_names_from_other_modules(path: Path) -> None:
    """``from fairpolicy.x import _name`` and ``mod._name`` on an imported module are
    refused; a private helper *module* of the same package (``formatters._ci``) is fine."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    for line, module, names in _imports(tree):
        for name in names:
            submodule = (SRC.joinpath(*module.split(".")[1:]) / f"{name}.py").exists()
            if submodule:
                modules.add(name)
                continue
            assert not name.startswith("_"), f"{_ids(path)}:{line} imports {module}.{name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            modules.update(a.asname or a.name for a in node.names if a.asname)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            raise AssertionError(f"{_ids(path)}:{node.lineno} uses {node.value.id}.{node.attr}")
