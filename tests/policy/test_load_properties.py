"""Property: the policy loader (and ``fairpolicy validate``) never raises anything but
fairpolicy's own errors, whatever the document — random structures, mutated valid
policies, or their text with syntax characters inserted. A longer run of the same
strategies: ``python benchmarks/fuzz_loader.py``."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from fairpolicy.errors import FairpolicyError
from fairpolicy.policy.load import load_policy
from fairpolicy.policy.schema import Policy
from fairpolicy.policy.validate import validate_files
from tests.strategies import json_values, mutated_policies, policy_texts, scratch_dirs

FUZZ = settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def load(source: Any, **kw: Any) -> Policy | FairpolicyError:
    try:
        return load_policy(source, **kw)
    except FairpolicyError as exc:
        assert exc.problems and all(p.message for p in exc.problems)
        assert "Traceback" not in exc.render()
        return exc


@FUZZ
@given(json_values)
def test_random_structures(doc: Any) -> None:
    load(doc)


@FUZZ
@given(mutated_policies())
def test_mutated_valid_policies(case: tuple[Any, Path]) -> None:
    doc, base = case
    load(doc, base_dir=base)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    return scratch_dirs(tmp_path_factory.mktemp("fuzz"))


@FUZZ
@given(case=policy_texts())
def test_mutated_policy_text_and_validate(
    case: tuple[str, str, Path], scratch: dict[Path, Path]
) -> None:
    text, suffix, base = case
    path = scratch[base] / f"fuzzed{suffix}"  # beside (copies of) its imports
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    load(path)
    out = io.StringIO()
    assert validate_files([str(path)], out) in (0, 2)
    assert "Traceback" not in out.getvalue()


# ---------------------------------------------------------------- what the fuzzer found


def test_trestle_oscal_version_error_is_a_policy_error() -> None:
    """trestle re-raises a validation error that touches oscal-version as TrestleError."""
    doc = {
        "profile": {
            "uuid": "cc139c4d-025e-4bb0-a9b2-6478b38f3d29",
            "metadata": {"last-modified": "2026-05-21T09:00:00+00:00", "version": "1"},
            "imports": [{"href": "catalog.json", "include-all": {}}],
        }
    }
    exc = load(doc, strict=True)  # by default one warning, see test_lenient_oscal.py
    assert isinstance(exc, FairpolicyError)
    assert "not valid OSCAL" in exc.render() and "oscal-version" in exc.render()


def test_control_character_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("- control-id: c1\n  title: a\x1db\n")
    exc = load(path)
    assert isinstance(exc, FairpolicyError)
    assert "control character U+001D (line 2)" in exc.render()


def test_nul_in_the_path() -> None:
    exc = load("a\x00b.yaml")
    assert isinstance(exc, FairpolicyError) and "NUL" in exc.render()
