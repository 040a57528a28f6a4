"""Shipped text names real sources, and tests stay inside the repository.

A user has no "seed 000": every piece of text the project ships (README, docs, policy packs,
examples, source code with its messages and docstrings, `--help`, `metrics show`) names the
real source (fmm-fairness-eval, holisticai, eval-toolkit, Venturalitica, the fairness-metrics
tutorial, the papers), cited in docs/references.md. Tests use the vendored copies only: no
test reads, or names in a skip reason or message, a folder outside the repository.
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fairpolicy.cli import _parser, main
from fairpolicy.metrics.docs import GUIDE
from fairpolicy.metrics.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()

#: "seed 000", "Seed-003", "seed003", "seed_004", "seed 003's": an internal name for a source
#: document. (A random seed is written "seed 20261122" or "--seed N", never "seed 0…".)
SEED_NAME = re.compile(r"seed[\s_-]*0", re.IGNORECASE)


def _repository_files() -> list[Path]:
    """Every file of the repository (tracked, or new and not ignored); the working tree
    when git is not available (an unpacked source archive)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            check=True,
        ).stdout.decode()
        paths = [ROOT / p for p in out.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = [p for p in ROOT.rglob("*") if ".git" not in p.relative_to(ROOT).parts]
    return sorted(p for p in paths if p.is_file())


def _text_files() -> Iterator[tuple[Path, str]]:
    for path in _repository_files():
        try:
            text = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue  # binary (Parquet, images)
        if "\0" not in text:
            yield path, text


def _seed_names(text: str) -> list[str]:
    return [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {text[m.start() : m.end() + 12]!r}"
        for m in SEED_NAME.finditer(text)
    ]


def test_no_seed_names_in_any_file() -> None:
    """Shipped text (README, CHANGELOG, docs, policies, examples, src, schemas) and the tests
    with their golden outputs: no "seed 0…"; this file alone spells the pattern."""
    found = {
        path.relative_to(ROOT).as_posix(): hits
        for path, text in _text_files()
        if path.resolve() != THIS and (hits := _seed_names(text))
    }
    assert found == {}, f"name the real source (see docs/references.md), not a seed: {found}"


def test_the_walk_sees_the_shipped_files() -> None:
    """The walk above really covers the product: a broken file listing cannot pass it."""
    seen = {p.relative_to(ROOT).as_posix() for p, _ in _text_files()}
    for must in (
        "README.md",
        "CHANGELOG.md",
        "docs/metrics.md",
        "docs/references.md",
        "src/fairpolicy/metrics/scores.py",
        "src/fairpolicy/cli.py",
        "policies/samd-multisite/catalog.json",
        "examples/dermatology/policy.yaml",
        "tests/formatters/golden/dermatology.html",
    ):
        assert must in seen, must


def test_the_pattern_catches_every_spelling() -> None:
    for bad in ("seed 000", "Seed 003's", "seed-003", "seed003", "SEED_004", "seed  001"):
        assert _seed_names(f"as in {bad} above"), bad
    for fine in ("--seed 20261122", "seed 20261122", "ci-seed", "seeds recorded", "seed=7"):
        assert not _seed_names(fine), fine


def _help_texts() -> Iterator[tuple[str, str]]:
    parser = _parser()
    yield "fairpolicy --help", parser.format_help()
    for action in parser._subparsers._group_actions if parser._subparsers else ():
        for name, sub in getattr(action, "choices", {}).items():
            yield f"fairpolicy {name} --help", sub.format_help()


def test_help_names_real_sources() -> None:
    texts = dict(_help_texts())
    assert {"fairpolicy --help", "fairpolicy check --help", "fairpolicy metrics --help"} <= set(
        texts
    )
    bad = {where: _seed_names(text) for where, text in texts.items() if _seed_names(text)}
    assert bad == {}


@pytest.mark.parametrize("key", sorted(REGISTRY))
def test_metrics_show_names_real_sources(key: str) -> None:
    out = io.StringIO()
    assert main(["metrics", "show", key], stdout=out) == 0
    text = out.getvalue()
    assert key in text
    assert _seed_names(text) == [], text


def test_metrics_lists_name_real_sources() -> None:
    texts = []
    for argv in (["metrics"], *(["metrics", "--for", c] for c in sorted(GUIDE))):
        out = io.StringIO()
        assert main(argv, stdout=out) == 0
        texts.append(out.getvalue())
    assert all(_seed_names(t) == [] for t in texts)


def test_every_source_is_cited_with_a_link() -> None:
    refs = (ROOT / "docs" / "references.md").read_text(encoding="utf-8")
    for source in ("fmm-fairness-eval", "holisticai", "eval-toolkit", "Venturalitica"):
        section = refs.split(f"**{source}**", 1)
        assert len(section) == 2, source
        assert "<https://" in section[1].split("\n\n", 1)[0], source
    assert "**The fairness-metrics tutorial**" in refs
    for paper in ("Kleinberg", "Hardt", "Geyik", "Yang", "Speicher", "Saleiro"):
        assert paper in refs, paper


# ---------------------------------------------------------------- tests stay in the repository


def _test_modules() -> list[Path]:
    return sorted((ROOT / "tests").rglob("*.py"))


#: a string that names a place outside the repository: a parent folder, the machine's shared
#: material, or an absolute home/work path
OUTSIDE = re.compile(r"(^|[\s'\"(/])\.\./|\bshared/(reference|seeds)\b|^/(work|home|tmp)/")


def _skip_reasons(tree: ast.AST) -> Iterator[ast.AST]:
    """The reason expressions of pytest.skip(...), pytest.mark.skipif(..., reason=...),
    pytest.importorskip(..., reason=...) and pytest.xfail(...)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if node.func.attr in ("skip", "xfail") and node.args:
            yield node.args[0]
        if node.func.attr in ("skip", "skipif", "xfail", "importorskip"):
            yield from (k.value for k in node.keywords if k.arg in ("reason", "msg"))


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]


def _names_outside(node: ast.AST) -> bool:
    """A reason mentions an outside folder if a literal part says so, or if it formats a path
    built from the repository root's parent."""
    if any(OUTSIDE.search(s) for s in _strings(node)):
        return True
    return any(
        isinstance(n, ast.Attribute)
        and n.attr == "parent"
        and isinstance(n.value, ast.Name)
        and n.value.id == "ROOT"
        for n in ast.walk(node)
    )


def test_no_skip_reason_names_a_folder_outside_the_repository() -> None:
    bad = []
    for path in _test_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bad += [
            f"{path.relative_to(ROOT)}:{node.lineno}"
            for node in _skip_reasons(tree)
            if _names_outside(node)
        ]
    assert bad == []


def test_no_test_reads_outside_the_repository() -> None:
    """Neither ``ROOT.parent`` (the folder holding the repository) nor a ``parents[n]`` above
    the root is used, nor a path into the machine's shared material: tests read only
    the vendored copies, so a clean clone runs every test and nothing skips for a missing
    sibling folder."""
    bad = []
    for path in _test_modules():
        if path.resolve() == THIS:
            continue  # its self-tests spell out what the checks flag
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "parent"
                and isinstance(node.value, ast.Name)
                and node.value.id == "ROOT"
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if (  # Path(__file__).resolve().parents[n] above the repository root
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Attribute)
                and node.value.attr == "parents"
                and isinstance(node.slice, ast.Constant)
                and isinstance(node.slice.value, int)
                and not path.resolve().parents[node.slice.value].is_relative_to(ROOT)
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.search(r"\bshared/(reference|seeds)\b|^/work/", node.value)
            ):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bad == []


def test_the_outside_checks_can_fail() -> None:
    """The two AST checks flag what they are meant to flag."""
    skip = ast.parse("pytest.skip(f\"{ROOT.parent / 'x'} not present\")")
    assert [n for n in _skip_reasons(skip) if _names_outside(n)]
    skip = ast.parse('pytest.mark.skipif(True, reason="needs ../shared/seeds")')
    assert [n for n in _skip_reasons(skip) if _names_outside(n)]
    fine = ast.parse('pytest.mark.skipif(True, reason="duckdb is not installed")')
    assert not [n for n in _skip_reasons(fine) if _names_outside(n)]
