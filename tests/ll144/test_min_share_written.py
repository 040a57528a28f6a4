"""``min_share`` is decided on the decimal written (issue 26 item 2's class, on the 2 % rule):
``0.020000000000000000001`` keeps out a category holding exactly 2 % of the rows, which the
double 0.02 kept in (and the comparator with it)."""

from __future__ import annotations

from pathlib import Path

import pytest

import fairpolicy
from tests.helpers import control, write_csv, write_policy


def _data(tmp: Path) -> Path:
    rows = ["y_true,y_pred,race"]
    for g, n, k in (("A", 49, 20), ("B", 49, 20), ("C", 2, 2)):  # C: exactly 2 % of rows
        rows += [f"0,{1 if i < k else 0},{g}" for i in range(n)]
    return write_csv(tmp, "\n".join(rows) + "\n")


@pytest.mark.parametrize(
    ("written", "status", "kept_c"),
    [
        ("0.02", "fail", True),  # C holds exactly 2 %: kept, and it is the comparator
        ("0.020000000000000000001", "pass", False),  # its double is 0.02: decided as written
        ("0.019999999999999999999", "fail", True),
    ],
)
def test_min_share_is_decided_as_written(
    tmp_path: Path, written: str, status: str, kept_c: bool
) -> None:
    pol = write_policy(
        tmp_path,
        control(
            "ir",
            "impact_ratio",
            threshold="0.8",
            operator=">=",
            dimension="race",
            min_share=written,
            min_samples=1,
        ),
    )
    f = fairpolicy.check(str(pol), str(_data(tmp_path))).findings[0]
    assert f.status == status, f.message
    (level,) = [lv for lv in f.details["levels"] if lv["level"] == "race"]
    (c,) = [cat for cat in level["categories"] if cat["category"] == "C"]
    assert c["excluded"] is (not kept_c)
    if len(written) > 6:
        assert f"min_share={written}" in f.message
