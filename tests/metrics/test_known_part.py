"""Odds metrics with one part undefined: the value lies in a known range, and a range that
violates the control throughout is a certain FAIL (never an inconclusive that
``--inconclusive pass`` would pass)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy import check

CASES = {
    # metric: (operator, threshold that the known part violates, one it does not)
    "equalized_odds_diff": ("<", "0.1", "0.9"),
    "average_odds_diff": ("<", "0.2", "0.9"),
    "equalized_odds_ratio": (">=", "0.8", "0.1"),
}


def _policy(metric: str, op: str, t: str) -> list[dict[str, object]]:
    props = {
        "metric_key": metric,
        "threshold": t,
        "operator": op,
        "input.target": "y_true",
        "input.prediction": "y_pred",
        "input.dimension": "sex",
    }
    return [{"control-id": "c", "props": [{"name": k, "value": v} for k, v in props.items()]}]


def _rows(tp_a: int, tp_b: int, negatives_b: list[int]) -> str:
    """A: 50 positives (tp_a predicted 1), 50 negatives (none predicted 1); B: 100 positives
    (tp_b predicted 1) and the given negatives' predictions (none: B's FPR is undefined)."""
    rows = ["y_true,y_pred,sex"]
    rows += [f"1,{int(i < tp_a)},A" for i in range(50)] + ["0,0,A"] * 50
    rows += [f"1,{int(i < tp_b)},B" for i in range(100)]
    rows += [f"0,{p},B" for p in negatives_b]
    return "\n".join(rows) + "\n"


@pytest.mark.parametrize("metric", list(CASES))
def test_a_known_part_that_violates_is_a_fail(metric: str, tmp_path: Path) -> None:
    op, violated, open_ = CASES[metric]
    data = tmp_path / "d.csv"
    data.write_text(_rows(40, 10, []))  # TPR 0.8 vs 0.1: gap 0.7, ratio 0.125; FPR unknown
    for inconclusive in ("pass", "fail"):
        res = check(_policy(metric, op, violated), str(data), inconclusive=inconclusive)
        (f,) = res.findings
        assert f.status == "fail" and res.exit_code == 1, f.message
        assert f.value is None and "throughout" in f.message
    # a threshold the known part satisfies leaves the control truly inconclusive
    (f,) = check(_policy(metric, op, open_), str(data)).findings
    assert f.status == "inconclusive", f.message


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    metric=st.sampled_from(list(CASES)),
    tp_a=st.integers(1, 50),
    tp_b=st.integers(1, 100),
    negatives=st.lists(st.integers(0, 1), min_size=1, max_size=40),
)
def test_the_range_holds_the_value_once_the_part_is_known(
    tmp_path: Path, metric: str, tp_a: int, tp_b: int, negatives: list[int]
) -> None:
    """The range stated without B's negatives contains the value once they are added (the
    TPR part is unchanged by them)."""
    op, _, open_ = CASES[metric]
    before, after = tmp_path / "before.csv", tmp_path / "after.csv"
    before.write_text(_rows(tp_a, tp_b, []))
    after.write_text(_rows(tp_a, tp_b, negatives))
    res = check(_policy(metric, op, open_), str(before), deterministic=True)
    (f,) = res.findings
    known = f.details.get("tpr_gap", f.details.get("tpr_ratio"))
    assert f.value is None and known is not None
    low, high = {
        "equalized_odds_diff": (known, 1.0),
        "average_odds_diff": (known / 2, (known + 1) / 2),
        "equalized_odds_ratio": (0.0, known),
    }[metric]
    (g,) = check(_policy(metric, op, open_), str(after), deterministic=True).findings
    if g.value is not None:
        assert low - 1e-12 <= g.value <= high + 1e-12, (metric, known, g.value)
