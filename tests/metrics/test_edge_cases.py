"""Edge cases are explicit outcomes, never a silent number (DESIGN.md §4)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score, recall_score

from fairpolicy.policy.schema import Control
from fairpolicy.results import Finding
from fairpolicy.stats import UNKNOWN_GROUP

TOL = 1e-12


def block(group: Any, pairs: Sequence[tuple[Any, Any, int]], col: str = "grp") -> pd.DataFrame:
    """Rows of one group from (y_true, y_pred, count) triples."""
    rows = [(t, p) for t, p, c in pairs for _ in range(c)]
    return pd.DataFrame(
        {"y_true": [t for t, _ in rows], "y_pred": [p for _, p in rows], col: group}
    )


def frame(*blocks: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(blocks, ignore_index=True)


def by_group(f: Finding) -> dict[str, float | None]:
    return {g.group: g.value for g in f.groups}


def excluded(f: Finding) -> dict[str, Any]:
    return {e.group: e for e in f.excluded_groups}


# ---------------------------------------------------------------------------
# undefined rates


# A: TPR 30/40, FPR 5/20;  B: TPR 20/40, FPR 2/20;  C: no actual positives, FPR 12/60
NO_POSITIVES = frame(
    block("A", [(1, 1, 30), (1, 0, 10), (0, 1, 5), (0, 0, 15)]),
    block("B", [(1, 1, 20), (1, 0, 20), (0, 1, 2), (0, 0, 18)]),
    block("C", [(0, 1, 12), (0, 0, 48)]),
)


def test_group_without_positives_is_excluded_from_tpr_gap(
    evaluate: Callable[..., Finding],
) -> None:
    f = evaluate("equal_opportunity_diff", NO_POSITIVES, "grp")
    assert f.status in ("pass", "fail")
    assert f.value == pytest.approx(30 / 40 - 20 / 40, abs=TOL)
    assert by_group(f) == pytest.approx({"A": 0.75, "B": 0.5, "C": None})
    ex = excluded(f)
    assert set(ex) == {"C"}
    assert ex["C"].n == 60
    assert "no actual positives" in ex["C"].reason


def test_odds_metrics_use_each_rate_on_its_own_comparable_groups(
    evaluate: Callable[..., Finding],
) -> None:
    """C has no TPR but has an FPR: it is left out of the TPR gap only."""
    tpr_gap = 0.75 - 0.5
    fpr_gap = 5 / 20 - 2 / 20  # A 0.25, B 0.10, C 0.20
    f = evaluate("equalized_odds_diff", NO_POSITIVES, "grp")
    assert f.value == pytest.approx(max(tpr_gap, fpr_gap), abs=TOL)
    assert f.details["tpr"]["C"] is None
    assert f.details["fpr"]["C"] == pytest.approx(0.2, abs=TOL)
    assert "C" in excluded(f)
    f = evaluate("average_odds_diff", NO_POSITIVES, "grp")
    assert f.value == pytest.approx((tpr_gap + fpr_gap) / 2, abs=TOL)


def test_group_without_predicted_positives_is_excluded_from_ppv_gap(
    evaluate: Callable[..., Finding],
) -> None:
    data = frame(
        block("A", [(1, 1, 30), (0, 1, 10), (0, 0, 20)]),
        block("B", [(1, 1, 10), (0, 1, 10), (1, 0, 20)]),
        block("C", [(1, 0, 20), (0, 0, 20)]),
    )
    f = evaluate("predictive_parity_diff", data, "grp")
    assert f.value == pytest.approx(0.75 - 0.5, abs=TOL)
    assert "no predicted positives" in excluded(f)["C"].reason


def test_only_one_comparable_group_is_inconclusive(evaluate: Callable[..., Finding]) -> None:
    data = frame(
        block("A", [(1, 1, 30), (1, 0, 10), (0, 0, 20)]),
        block("B", [(0, 1, 10), (0, 0, 50)]),
    )
    f = evaluate("equal_opportunity_diff", data, "grp")
    assert f.value is None
    assert f.status == "inconclusive"
    assert "only 1 group" in (f.reason or "")
    assert "B" in excluded(f)
    assert "inconclusive" in f.message


def test_one_group_left_after_min_samples_is_inconclusive(
    evaluate: Callable[..., Finding],
) -> None:
    data = frame(
        block("A", [(1, 1, 40), (0, 0, 40)]),
        block("B", [(1, 1, 5), (0, 0, 5)]),
    )
    f = evaluate("demographic_parity_diff", data, "grp")
    assert f.value is None
    assert f.status == "inconclusive"
    assert "min_samples=30" in (f.reason or "")
    assert excluded(f)["B"].n == 10


def test_a_dimension_with_a_single_group_is_an_error(evaluate: Callable[..., Finding]) -> None:
    """Fewer than two groups in the data at all is a binding error, not inconclusive."""
    data = block("A", [(1, 1, 40), (0, 0, 40)])
    f = evaluate("demographic_parity_diff", data, "grp")
    assert f.status == "error"
    assert f.value is None
    assert "one group" in f.message


def test_ratio_with_every_selection_rate_zero_is_inconclusive(
    evaluate_many: Callable[..., Any], control: Callable[..., Control]
) -> None:
    data = frame(
        block("A", [(1, 0, 20), (0, 0, 20)]),
        block("B", [(1, 0, 10), (0, 0, 30)]),
    )
    res = evaluate_many(
        [
            control("demographic_parity_ratio", "grp", control_id="ratio"),
            control("demographic_parity_diff", "grp", control_id="diff"),
        ],
        data,
    )
    ratio, diff = res.findings
    assert ratio.value is None
    assert ratio.status == "inconclusive"
    assert "0/0" in (ratio.reason or "")
    assert by_group(ratio) == {"A": 0.0, "B": 0.0}
    # the difference is well defined: parity at zero
    assert diff.value == 0.0
    assert diff.status == "pass"
    # NaN is never written: undefined values are null with a reason
    out = json.loads(res.to_json())
    assert out["findings"][0]["value"] is None
    assert out["findings"][0]["reason"]


# ---------------------------------------------------------------------------
# min_samples and missing groups


def _sized(groups: dict[str, int]) -> pd.DataFrame:
    """Each group: half positives predicted right, the other half negatives predicted 1."""
    blocks = [
        block(g, [(1, 1, n - n // 2), (0, 1, n // 4), (0, 0, n // 2 - n // 4)])
        for g, n in groups.items()
    ]
    return frame(*blocks)


def test_groups_under_min_samples_are_excluded_with_their_n(
    evaluate: Callable[..., Finding],
) -> None:
    data = _sized({"small": 40, "mid": 60, "big": 80})
    f = evaluate("demographic_parity_diff", data, "grp", min_samples=50)
    ex = excluded(f)
    assert set(ex) == {"small"}
    assert ex["small"].n == 40
    assert "min_samples=50" in ex["small"].reason
    assert {g.group: g.n for g in f.groups} == {"mid": 60, "big": 80}
    assert f.min_samples == 50
    expected = evaluate(
        "demographic_parity_diff", data[data["grp"] != "small"], "grp", min_samples=50
    )
    assert f.value == expected.value


@pytest.mark.parametrize(("n", "kept"), [(29, False), (30, True)])
def test_default_min_samples_is_30_inclusive(
    n: int, kept: bool, evaluate: Callable[..., Finding]
) -> None:
    data = _sized({"edge": n, "other": 100, "third": 100})
    f = evaluate("accuracy_diff", data, "grp")
    assert ("edge" in {g.group for g in f.groups}) is kept
    assert ("edge" in excluded(f)) is not kept


def test_missing_dimension_is_an_excluded_unknown_group(
    evaluate: Callable[..., Finding],
) -> None:
    data = _sized({"F": 60, "M": 80})
    data["grp"] = data["grp"].astype(object)
    data.loc[[0, 5, 70], "grp"] = None
    data.loc[[10, 90], "grp"] = ""
    data.loc[[11], "grp"] = "   "
    f = evaluate("demographic_parity_diff", data, "grp")
    ex = excluded(f)
    assert set(ex) == {UNKNOWN_GROUP}
    assert ex[UNKNOWN_GROUP].n == 6
    assert "missing" in ex[UNKNOWN_GROUP].reason
    assert sum(g.n for g in f.groups) == len(data) - 6
    known = data[data["grp"].fillna("").str.strip() != ""]
    assert f.value == evaluate("demographic_parity_diff", known, "grp").value


def test_missing_dimension_in_csv(tmp_path: Path, evaluate: Callable[..., Finding]) -> None:
    data = _sized({"F": 60, "M": 80})
    data["grp"] = data["grp"].astype(object)
    data.loc[[3, 4, 100], "grp"] = None
    path = tmp_path / "data.csv"
    data.to_csv(path, index=False)
    assert ",\n" in path.read_text()  # empty trailing field
    f = evaluate("demographic_parity_diff", path, "grp")
    assert excluded(f)[UNKNOWN_GROUP].n == 3
    assert f.value == evaluate("demographic_parity_diff", data, "grp").value


# ---------------------------------------------------------------------------
# per-class metrics


def _recall_matrix(df: pd.DataFrame, labels: list[int]) -> dict[str, list[float]]:
    return {
        str(g): list(
            recall_score(
                s["y_true"], s["y_pred"], labels=labels, average=None, zero_division=float("nan")
            )
        )
        for g, s in df.groupby("grp")
    }


MISSING_CLASS = frame(
    block("A", [(0, 0, 20), (0, 1, 5), (1, 1, 15), (1, 2, 5), (2, 2, 10), (2, 0, 10)]),
    block("B", [(0, 0, 10), (0, 2, 10), (1, 1, 25), (1, 0, 5), (2, 2, 18), (2, 1, 2)]),
    # C has no true class 2 (it is predicted, so precision for 2 is defined)
    block("C", [(0, 0, 25), (0, 2, 5), (1, 1, 10), (1, 0, 10)]),
)


def test_group_lacking_a_class_is_an_undefined_cell(evaluate: Callable[..., Finding]) -> None:
    f = evaluate("multiclass_equal_opportunity", MISSING_CLASS, "grp")
    cells = f.details["undefined_cells"]
    assert [(c["group"], c["class"]) for c in cells] == [("C", "2")]
    assert "recall is undefined" in cells[0]["reason"]
    assert f.details["per_group"]["C"][2] is None
    # class 2 is still compared between A and B
    rec = _recall_matrix(MISSING_CLASS, [0, 1, 2])
    gap2 = abs(rec["A"][2] - rec["B"][2])
    assert f.details["per_class_gap"][2] == pytest.approx(gap2, abs=TOL)
    mat = np.array(list(rec.values()))
    gaps = np.nanmax(mat, axis=0) - np.nanmin(mat, axis=0)
    assert f.value == pytest.approx(max(gaps), abs=TOL)
    macro = evaluate("macro_equal_opportunity_multiclass", MISSING_CLASS, "grp")
    assert macro.value == pytest.approx(gaps.mean(), abs=TOL)
    assert macro.details["undefined_cells"] == cells


def test_class_defined_in_one_group_only_is_not_compared(
    evaluate: Callable[..., Finding],
) -> None:
    data = frame(
        block("A", [(0, 0, 30), (1, 1, 20), (1, 0, 10), (2, 2, 5)]),
        block("B", [(0, 0, 20), (0, 1, 20), (1, 1, 20)]),
    )
    f = evaluate("multiclass_equal_opportunity", data, "grp")
    assert f.details["per_class_gap"][2] is None
    assert f.details["per_class_gap"][:2] == pytest.approx([0.5, 1 / 3], abs=TOL)
    assert f.value == pytest.approx(0.5, abs=TOL)


def test_no_class_comparable_is_inconclusive(evaluate: Callable[..., Finding]) -> None:
    data = frame(
        block("A", [(0, 0, 30), (0, 1, 10)]),
        block("B", [(1, 1, 30), (1, 0, 10)]),
    )
    f = evaluate("multiclass_equal_opportunity", data, "grp")
    assert f.value is None
    assert f.status == "inconclusive"
    assert "for any class" in (f.reason or "")
    assert f.details["per_class_gap"] == [None, None]


def test_macro_f1_ignores_a_class_absent_from_a_group(evaluate: Callable[..., Finding]) -> None:
    """Class 2 occurs in neither the labels nor the predictions of group B.

    fairpolicy averages B's F1 over the classes B has (scikit-learn's default label
    set), so B is not penalised with an F1 of 0 for a class it never saw. Forcing
    ``labels=range(K), zero_division=0`` would average that 0 in.
    """
    data = frame(
        block("A", [(0, 0, 20), (0, 1, 5), (1, 1, 15), (1, 2, 5), (2, 2, 10), (2, 0, 5)]),
        block("B", [(0, 0, 25), (0, 1, 5), (1, 1, 20), (1, 0, 10)]),
    )
    f = evaluate("macro_f1_gap", data, "grp")
    per_class = f.details["per_group_per_class_f1"]
    assert per_class["B"][2] is None
    b = data[data["grp"] == "B"]
    default = f1_score(b["y_true"], b["y_pred"], average="macro")
    forced = f1_score(b["y_true"], b["y_pred"], labels=[0, 1, 2], average="macro", zero_division=0)
    assert by_group(f)["B"] == pytest.approx(default, abs=TOL)
    assert forced == pytest.approx(default * 2 / 3, abs=TOL)
    assert by_group(f)["B"] != pytest.approx(forced)
    a = data[data["grp"] == "A"]
    assert by_group(f)["A"] == pytest.approx(
        f1_score(a["y_true"], a["y_pred"], average="macro"), abs=TOL
    )
    # per-class F1 gap: class 2 is compared on A only -> not comparable
    pc = evaluate("per_class_f1_gap", data, "grp")
    assert pc.details["per_class_gap"][2] is None
    assert ("B", "2") in {(c["group"], c["class"]) for c in pc.details["undefined_cells"]}
