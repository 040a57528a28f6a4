"""The stats package is layer L1 (issue 17): it imports nothing above it, its modules are
small, they do not reach into each other's private names, and the value types that moved
down from ``metrics.base`` are the very same objects there."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import fairpolicy.stats
from tests.test_import_graph import layers

STATS = Path(fairpolicy.stats.__file__).parent
MODULES = sorted(STATS.glob("*.py"))
#: layer L0 and L1: what a stats module may import from fairpolicy (the layer table is
#: written once, in docs/architecture.md)
ALLOWED = {name for name, layer in layers().items() if layer <= 1}
FORBIDDEN = tuple(sorted(name for name, layer in layers().items() if layer > 1))


def _fairpolicy_imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """Every ``fairpolicy`` import anywhere in the module (lazy ones in functions too):
    (line, module, imported names)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "fairpolicy" or node.module.startswith("fairpolicy."):
                out.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("fairpolicy."):
                    out.append((node.lineno, a.name, []))
    return out


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_stats_imports_only_its_layer_or_lower(path: Path) -> None:
    for line, module, names in _fairpolicy_imports(path):
        parts = module.split(".")
        top = parts[1] if len(parts) > 1 else (names[0] if names else "")
        assert top in ALLOWED, f"{path.name}:{line} imports {module} {names} (layer above L1)"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_stats_modules_do_not_import_private_names(path: Path) -> None:
    for line, module, names in _fairpolicy_imports(path):
        private = [n for n in names if n.startswith("_")]
        assert not private, f"{path.name}:{line} imports private {private} from {module}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_stats_modules_are_under_900_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= 900, f"{path.name} has {lines} lines"


def test_stats_init_only_reexports() -> None:
    """Its statements are re-exports: imports, ``__all__``, and the lazy re-exports (names
    under ``if TYPE_CHECKING:``, the ``_LAZY`` table of names to modules, the module
    ``__getattr__`` that imports them)."""
    tree = ast.parse((STATS / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        is_doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        names = (
            [t.id for t in node.targets if isinstance(t, ast.Name)]
            if isinstance(node, ast.Assign)
            else []
        )
        is_all = names == ["__all__"]
        is_lazy_table = names == ["_LAZY"] or (
            isinstance(node, ast.AnnAssign) and ast.unparse(node.target) == "_LAZY"
        )
        is_import = isinstance(node, ast.ImportFrom | ast.Import)
        is_typing = isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        if is_typing:
            assert all(isinstance(n, ast.ImportFrom) for n in node.body), ast.dump(node)[:80]
        is_getattr = isinstance(node, ast.FunctionDef) and node.name == "__getattr__"
        assert is_doc or is_all or is_lazy_table or is_import or is_typing or is_getattr, ast.dump(
            node
        )[:80]


def test_lazy_reexports_are_the_modules_objects() -> None:
    """A name re-exported lazily is the very object of its module, and every name of
    ``__all__`` can be read."""
    import importlib

    stats = importlib.import_module("fairpolicy.stats")
    for name, module in stats._LAZY.items():
        assert getattr(stats, name) is getattr(
            importlib.import_module(f"fairpolicy.stats.{module}"), name
        )
    for name in stats.__all__:
        assert getattr(stats, name) is not None
    with pytest.raises(AttributeError):
        _ = stats.no_such_name


def test_importing_the_package_leaves_the_score_regression_and_ranking_modules() -> None:
    code = (
        "import sys, fairpolicy.stats\n"
        "from fairpolicy.stats import GroupStats, build_group_stats\n"
        "print(' '.join(m for m in sys.modules if m.startswith('fairpolicy.stats.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=STATS.parents[2],
        env={"PYTHONPATH": str(STATS.parents[1])},
    ).stdout.split()
    assert "fairpolicy.stats.groups" in out
    assert not {"fairpolicy.stats.scores", "fairpolicy.stats.regression"} & set(out), out
    assert "fairpolicy.stats.ranking" not in out


def test_importing_all_of_stats_loads_no_higher_layer() -> None:
    """At run time too (a fresh interpreter): every stats module, lazy package imports
    included, loads no module of a higher layer."""
    mods = [f"fairpolicy.stats.{p.stem}" for p in MODULES if p.stem != "__init__"]
    code = (
        "import importlib, sys\n"
        f"for m in {mods!r}: importlib.import_module(m)\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('fairpolicy.')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=STATS.parents[2],
        env={"PYTHONPATH": str(STATS.parents[1])},
    ).stdout.split()
    assert set(mods) <= set(out)
    above = [m for m in out if m.split(".")[1] in FORBIDDEN]
    assert not above, above


def test_value_types_are_the_same_objects_in_metrics_base() -> None:
    from fairpolicy.metrics import base
    from fairpolicy.stats import values

    for name in ("MetricValue", "GroupValue", "Excluded", "Stratum", "MetricFn", "BatchFn"):
        assert getattr(base, name) is getattr(values, name), name
