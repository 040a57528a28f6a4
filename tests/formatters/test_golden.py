"""Golden files: the whole text, JSON and OSCAL (assessment results and plan) output for the
shipped examples.

Timestamps are pinned with SOURCE_DATE_EPOCH (which also makes the OSCAL UUIDs
content-derived) and paths are relative to the repository.
Regenerate after an intended change with ``FAIRPOLICY_UPDATE_GOLDEN=1 pytest tests/formatters``
and review the diff.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from fairpolicy.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"

CASES = {
    "dermatology": ("examples/dermatology/policy.yaml", "examples/dermatology/predictions.csv", 1),
    "credit": ("examples/credit/policy.yaml", "examples/credit/predictions.csv", 0),
}


#: format → golden file suffix
SUFFIX = {
    "text": ".text.txt",
    "json": ".json",
    "oscal": ".oscal.json",
    "oscal-ap": ".oscal-ap.json",
    "junit": ".junit.xml",
    "sarif": ".sarif",
    "github": ".github.txt",
    "markdown": ".md",
    "html": ".html",
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("fmt", list(SUFFIX))
def test_golden(name: str, fmt: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01T00:00:00Z
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)  # -o github would append to it
    policy, data, code = CASES[name]
    out = io.StringIO()
    argv = ["check", policy, data]
    if fmt != "text":
        argv += ["-o", fmt]
    assert main(argv, stdout=out) == code
    text = out.getvalue()
    golden = GOLDEN / f"{name}{SUFFIX[fmt]}"
    if os.environ.get("FAIRPOLICY_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text(), f"{golden.name} differs; see the module docstring"
