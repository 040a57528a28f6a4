"""No test depends on packages outside the interpreter that runs it (issue 27).

The README's second command runs the suite in whatever Python the newcomer has, nearly
always a virtual environment. A test that reaches past that interpreter (a venv made with
``--system-site-packages`` from ``sys.executable``, which inside a venv is the *base*
interpreter; ``python3`` from ``PATH``; the base prefix) passes with the system Python and
fails in a venv, and CI only saw the system Python. Two guards:

- statically, no test, benchmark or script the tests run spawns another interpreter or
  borrows another interpreter's packages;
- at run time (this file is collected last), every module imported so far comes from this
  interpreter's own paths, the repository or a temporary folder a test made.
"""

from __future__ import annotations

import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# spawning or borrowing another interpreter: each of these passed with the system Python
# and failed in a venv, or would
FORBIDDEN = {
    "--system-site-packages": "a venv that sees the base interpreter's packages, not this one's",
    "sys.base_prefix": "the base interpreter, which a venv does not run",
    "sys._base_executable": "the base interpreter, which a venv does not run",
    "getsitepackages": "another interpreter's site-packages, guessed",
    '"python3"': "the python3 on PATH, which need not be the interpreter running the tests",
    "'python3'": "the python3 on PATH, which need not be the interpreter running the tests",
}
# files that may name these, and why
ALLOWED = {
    "tests/test_zz_interpreter.py": "this guard",
}


def _sources() -> list[Path]:
    files = [*ROOT.joinpath("tests").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.sh")]
    return sorted(p for p in files if p.relative_to(ROOT).as_posix() not in ALLOWED)


def _borrowing(paths: list[Path], base: Path) -> list[str]:
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            found += [
                f"{path.relative_to(base)}:{number}: {needle} ({why})"
                for needle, why in FORBIDDEN.items()
                if needle in line
            ]
    return found


def test_no_test_spawns_or_borrows_another_interpreter() -> None:
    found = _borrowing(_sources(), ROOT)
    assert not found, "tests reach past their own interpreter:\n" + "\n".join(found)


def _own_roots() -> list[Path]:
    paths = sysconfig.get_paths()
    roots = [Path(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    roots += [ROOT, Path(tempfile.gettempdir())]
    return [r.resolve() for r in roots]


def test_every_imported_module_comes_from_this_interpreter() -> None:
    roots = _own_roots()
    outside = []
    for name, module in sorted(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file or file.startswith("<"):
            continue  # built-in, frozen or namespace module
        path = Path(file).resolve()
        if not any(path.is_relative_to(root) for root in roots):
            outside.append(f"{name}: {path}")
    assert not outside, (
        f"modules imported from outside {sys.executable}'s own paths "
        f"({', '.join(map(str, roots))}):\n" + "\n".join(outside)
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
