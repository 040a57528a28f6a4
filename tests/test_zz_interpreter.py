"""No test depends on packages outside the interpreter that runs it (issue 27).

The README's second command runs the suite in whatever Python the newcomer has, nearly
always a virtual environment. A test that reaches past that interpreter (a venv made with
``--system-site-packages`` from ``sys.executable``, which inside a venv is the *base*
interpreter; ``python3`` from ``PATH``; the base prefix) passes with the system Python and
fails in a venv, and CI only saw the system Python. Two guards:

- statically, no test spawns another interpreter or borrows another interpreter's
  packages (as code: a string argument or an attribute, not a docstring explaining it);
- at run time (this file is collected last, and ``tests/conftest.py`` repeats it at the
  end of every test process, each pytest-xdist worker too), every module imported so far
  comes from this interpreter's own paths, the repository or a temporary folder a test
  made.
"""

from __future__ import annotations

import ast
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# spawning or borrowing another interpreter: each of these passed with the system Python
# and failed in a venv, or would. Found as code (a string argument, an attribute), not in
# docstrings or comments that explain them.
FORBIDDEN = {
    "--system-site-packages": "a venv that sees the base interpreter's packages, not this one's",
    "sys.base_prefix": "the base interpreter, which a venv does not run",
    "sys.base_exec_prefix": "the base interpreter, which a venv does not run",
    "sys._base_executable": "the base interpreter, which a venv does not run",
    "python3": "the python3 on PATH, which need not be the interpreter running the tests",
}
# files that may name these, and why
ALLOWED = {
    "tests/test_zz_interpreter.py": "this guard",
    "tests/test_project.py": "asserts that .ci/run never uses --system-site-packages",
}


def _sources() -> list[Path]:
    files = ROOT.joinpath("tests").rglob("*.py")
    return sorted(p for p in files if p.relative_to(ROOT).as_posix() not in ALLOWED)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, its classes and functions."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                out.add(id(value))
    return out


def _borrowing(paths: list[Path], base: Path) -> list[str]:
    found: list[tuple[str, int, str]] = []
    for path in paths:
        tree = ast.parse(path.read_text("utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if id(node) in docs:
                    continue
                needle = node.value.strip()
            elif isinstance(node, ast.Attribute):
                needle = ast.unparse(node)
            else:
                continue
            if needle in FORBIDDEN:
                where = f"{path.relative_to(base)}:{node.lineno}"
                found.append((where, node.lineno, f"{where}: {needle} ({FORBIDDEN[needle]})"))
    return [text for _, _, text in sorted(found)]


def test_no_test_spawns_or_borrows_another_interpreter() -> None:
    found = _borrowing(_sources(), ROOT)
    assert not found, "tests reach past their own interpreter:\n" + "\n".join(found)


def _own_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = [Path(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    roots += [ROOT, Path(tempfile.gettempdir())]
    return [r.resolve() for r in roots]


def modules_from_outside() -> list[str]:
    """Every imported module whose file lies outside this interpreter's own paths (also
    run by ``tests/conftest.py`` at the end of every test process)."""
    roots = _own_roots()
    outside = []
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file or file.startswith("<"):
            continue  # built-in, frozen or namespace module
        path = Path(file).resolve()
        if not any(path.is_relative_to(root) for root in roots):
            outside.append(f"{name}: {path}")
    return outside


def test_every_imported_module_comes_from_this_interpreter() -> None:
    outside = modules_from_outside()
    assert not outside, (
        f"modules imported from outside {sys.executable}'s own paths "
        f"({', '.join(map(str, _own_roots()))}):\n" + "\n".join(outside)
    )


def test_the_guard_sees_a_borrowed_interpreter(tmp_path: Path) -> None:
    """The static guard is not vacuous: the fixture that broke the venv run is caught."""
    fixture = tmp_path / "test_fixture.py"
    fixture.write_text(
        "import subprocess, sys\n"
        'subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "v"])\n'
    )
    assert _borrowing([fixture], tmp_path) == [
        f"test_fixture.py:2: --system-site-packages ({FORBIDDEN['--system-site-packages']})"
    ]
    fixture.write_text(
        '"""A docstring may explain --system-site-packages."""\n'
        "import subprocess, sys\n"
        'subprocess.run(["python3", "-c", "print(sys.base_prefix)"])\n'
        "print(sys.base_prefix)\n"
    )
    assert [f.split(" (")[0] for f in _borrowing([fixture], tmp_path)] == [
        "test_fixture.py:3: python3",
        "test_fixture.py:4: sys.base_prefix",
    ]
