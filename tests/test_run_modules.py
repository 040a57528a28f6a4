"""The split of the run (issue 17): planning → evaluator → evaluation → runner, with
assemble below them all, each under 900 lines, none importing another's private names,
and the CLI importing no private name of the modules it dispatches to."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "fairpolicy"

#: lowest first: a module may import only the ones before it (and itself)
ORDER = ["assemble", "planning", "evaluator", "evaluation", "runner"]
MAX_LINES = 900


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) of every ``from fairpolicy... import`` in ``path``,
    including those inside functions and under TYPE_CHECKING."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
    return out


@pytest.mark.parametrize("name", [*ORDER, "cli", "outputs", "plan"])
def test_module_size(name: str) -> None:
    lines = (SRC / f"{name}.py").read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name}.py has {lines} lines"


@pytest.mark.parametrize("name", ORDER)
def test_run_layers(name: str) -> None:
    higher = {f"fairpolicy.{m}" for m in ORDER[ORDER.index(name) + 1 :]}
    wrong = [m for m, _ in _imports(SRC / f"{name}.py") if m in higher]
    assert not wrong, f"{name}.py imports the higher run module(s) {wrong}"


@pytest.mark.parametrize("name", [*ORDER, "cli", "plan", "outputs", "ssp"])
def test_no_private_imports(name: str) -> None:
    private = [
        f"{m}.{n}"
        for m, names in _imports(SRC / f"{name}.py")
        if m.startswith("fairpolicy")
        for n in names
        if n.startswith("_") and not n.startswith("__")
    ]
    if name == "ssp":  # ssp's use of policy.convert's writers is not the run's to change
        private = [p for p in private if not p.startswith("fairpolicy.policy.convert.")]
    assert not private, f"{name}.py imports private names {private}"


def test_cli_imports_nothing_from_the_run_but_check() -> None:
    """The CLI dispatches: it calls ``check`` and the results' helpers, never the
    planning or evaluation internals."""
    used = {
        (m, n)
        for m, names in _imports(SRC / "cli.py")
        if m in {f"fairpolicy.{x}" for x in ORDER}
        for n in names
    }
    assert used <= {("fairpolicy.runner", "check"), ("fairpolicy.assemble", "is_deterministic")}
