"""A check parses its policy file once (issue 17, a lean start): the prefetch and the load
both call ``read_document``; the second gets a deep copy of the first parse, keyed by the
file's content hash, so an edited file is parsed afresh and no caller sees another's edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from fairpolicy.policy import oscal
from fairpolicy.runner import check

POLICY = (
    "- control-id: dp\n  props:\n"
    "  - {name: metric_key, value: demographic_parity_diff}\n"
    "  - {name: threshold, value: '0.9'}\n  - {name: operator, value: '<'}\n"
    "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
    "  - {name: input.dimension, value: sex}\n"
)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = oscal.parse_text

    def parse(text: str, file: str | None, *, json_fallback: bool = False) -> object:
        calls.append(text)
        return real(text, file, json_fallback=json_fallback)

    monkeypatch.setattr(oscal, "parse_text", parse)
    monkeypatch.setattr(oscal, "_PARSED", {})
    return calls


def test_a_check_parses_its_policy_once(tmp_path: Path, counted: list[str]) -> None:
    data = tmp_path / "d.csv"
    data.write_text("y_true,y_pred,sex\n" + "1,1,F\n0,1,M\n1,1,F\n0,0,M\n" * 20)
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY)
    first = check(str(policy), str(data))
    assert counted == [POLICY]
    policy.write_text(POLICY.replace("'0.9'", "'0.1'"))  # same size, new content (gap 0.5)
    second = check(str(policy), str(data))
    assert len(counted) == 2  # content changed: parsed afresh
    assert first.exit_code == 0 and second.exit_code == 1


def test_callers_get_independent_copies_with_line_numbers(
    tmp_path: Path, counted: list[str]
) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(POLICY)
    a, sha_a = oscal.read_document(policy)
    a[0]["control-id"] = "changed"
    a[0]["props"].clear()
    b, sha_b = oscal.read_document(policy)
    assert len(counted) == 1 and sha_a == sha_b
    assert b[0]["control-id"] == "dp" and len(b[0]["props"]) == 6
    assert oscal.line_of(b[0]) == 1 and oscal.line_of(b[0]["props"][1]) == 4


def test_a_parse_error_is_never_remembered(tmp_path: Path, counted: list[str]) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text("- control-id: dp\n  props: [\n")
    for _ in range(2):
        with pytest.raises(oscal.PolicyError):
            oscal.read_document(policy)
    assert len(counted) == 2
