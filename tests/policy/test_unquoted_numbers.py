"""An unquoted number in a YAML or JSON policy is decided as the decimal written, as a
quoted one is (issue 26 item 2, its sibling in the parsers): the YAML and JSON readers
turned ``0.09999999999999999999`` into the double 0.1 before the exact decision could see
it, so ``<= 0.09999999999999999999`` passed an exact 1/10 when written without quotes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fairpolicy
from fairpolicy.policy.oscal import written_number
from tests.helpers import write_csv

GAP_TENTH = "y_true,y_pred,sex\n" + "".join(
    f"{i % 2},{1 if i < k else 0},{g}\n" for g, k in (("F", 12), ("M", 8)) for i in range(40)
)


def _controls(threshold: float | str, operator: str) -> list[dict[str, object]]:
    props = {
        "metric_key": "demographic_parity_diff",
        "threshold": threshold,
        "operator": operator,
        "input.target": "y_true",
        "input.prediction": "y_pred",
        "input.dimension": "sex",
    }
    return [{"control-id": "dp", "props": [{"name": k, "value": v} for k, v in props.items()]}]


@pytest.mark.parametrize("form", ["yaml", "json"])
@pytest.mark.parametrize(
    ("written", "operator", "status"),
    [
        ("0.09999999999999999999", "<=", "fail"),  # its double is 0.1, its decimal is not
        ("0.1", "<=", "pass"),
        ("0.10", "<", "fail"),
        ("0.1000000000000000000001", "<", "pass"),
        ("1e-400", ">=", "pass"),  # its double is 0: printed as written
        ("1e-400", "<=", "fail"),
    ],
)
def test_unquoted_thresholds_are_decided_as_written(
    tmp_path: Path, form: str, written: str, operator: str, status: str
) -> None:
    data = write_csv(tmp_path, GAP_TENTH)
    marker = "THRESHOLD"
    if form == "json":
        text = json.dumps(_controls(marker, operator)).replace(f'"{marker}"', written)
    else:
        text = (
            "- control-id: dp\n  props:\n"
            "  - {name: metric_key, value: demographic_parity_diff}\n"
            f"  - {{name: threshold, value: {written}}}\n"
            f'  - {{name: operator, value: "{operator}"}}\n'
            "  - {name: input.target, value: y_true}\n"
            "  - {name: input.prediction, value: y_pred}\n"
            "  - {name: input.dimension, value: sex}\n"
        )
    assert f"value: {written}" in text or f'"value": {written}' in text  # unquoted
    policy = tmp_path / f"policy.{form}"
    policy.write_text(text)
    finding = fairpolicy.check(str(policy), str(data)).findings[0]
    assert finding.status == status, finding.message
    if written not in ("0.1", "0.10"):
        assert finding.threshold_written == written


def test_written_number_keeps_only_what_a_double_cannot_say() -> None:
    assert written_number("0.1", 0.1) == 0.1
    assert written_number("0.10", 0.1) == 0.1
    assert written_number("2.5e-3", 0.0025) == 0.0025
    assert written_number("0.09999999999999999999", 0.1) == "0.09999999999999999999"
    assert written_number("1e-400", 0.0) == "1e-400"
    assert written_number("1e-99999999", 0.0) == "1e-99999999"  # no huge integer built
