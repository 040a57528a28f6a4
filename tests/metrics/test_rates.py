"""The RATES family (metrics/rates.py): error-rate gaps, generalized entropy, disparity, LL144.

Oracles are plain numpy on the rows (aif360's formulas written out on the benefit
vector b = ŷ − y + 1; per-group rates on masked subsets), hand-computed tables
written out below, and the anchor libraries' numbers in ``reference.json``
(mapped in ``test_reference.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.policy.schema import Control
from fairpolicy.results import Finding, Results

TOL = 1e-12


def random_binary(seed: int, groups: dict[str, int], unknown: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for i, (g, n) in enumerate(groups.items()):
        y = rng.integers(0, 2, n)
        flip = rng.random(n) < 0.15 + 0.1 * i
        frames.append(pd.DataFrame({"y_true": y, "y_pred": np.where(flip, 1 - y, y), "g": g}))
    df = pd.concat(frames, ignore_index=True)
    df["g"] = df["g"].astype(object)
    if unknown:
        df.loc[rng.choice(len(df), unknown, replace=False), "g"] = None
    return df


# ---------------------------------------------------------------------------
# generalized entropy: aif360's formulas on the rows


def ge_rows(b: np.ndarray, alpha: float) -> float:
    """aif360 ``generalized_entropy_index`` on a benefit vector, written out."""
    mu = b.mean()
    if alpha == 1:
        r = b / mu
        return float(np.mean(np.where(r > 0, r * np.log(np.where(r > 0, r, 1.0)), 0.0)))
    if alpha == 0:
        return float(-np.mean(np.log(b / mu)))
    return float(np.mean((b / mu) ** alpha - 1) / (alpha * (alpha - 1)))


def benefits(df: pd.DataFrame) -> np.ndarray:
    return (df["y_pred"] - df["y_true"] + 1).to_numpy(dtype=float)


DF3 = random_binary(7, {"a": 300, "b": 500, "c": 200}, unknown=25)


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0, 3.0, 1.5])
def test_generalized_entropy_matches_aif360_formula_on_rows(
    alpha: float, run: Callable[..., Finding]
) -> None:
    f = run("generalized_entropy_index", DF3, params={"alpha": alpha})
    known = DF3[DF3["g"].notna()]  # rows with a missing group are not compared
    assert f.value == pytest.approx(ge_rows(benefits(known), alpha), abs=TOL)
    per_group = {g.group: g.value for g in f.groups}
    for name, rows in known.groupby("g"):
        assert per_group[name] == pytest.approx(ge_rows(benefits(rows), alpha), abs=TOL)
    # between-group component: every benefit replaced by its group's mean
    b = benefits(known)
    means = known.assign(b=b).groupby("g")["b"].transform("mean").to_numpy()
    assert f.details["between_group"] == pytest.approx(ge_rows(means, alpha), abs=TOL)
    between = run("between_group_generalized_entropy_index", DF3, params={"alpha": alpha})
    assert between.value == pytest.approx(ge_rows(means, alpha), abs=TOL)


def test_generalized_entropy_decomposes_into_between_and_within(
    run: Callable[..., Finding],
) -> None:
    """GE(α) = GE_between + Σ_g (n_g/n)·(μ_g/μ)^α·GE_g (the additive decomposition)."""
    for alpha in (0.5, 1.0, 2.0, 3.0):
        f = run("generalized_entropy_index", DF3, params={"alpha": alpha})
        n = sum(g.n for g in f.groups)
        mu = f.details["mean_benefit"]
        within = sum(
            (g.n / n) * (f.details["mean_benefit_by_group"][g.group] / mu) ** alpha * g.value
            for g in f.groups
        )
        assert f.value == pytest.approx(f.details["between_group"] + within, abs=TOL)
        assert f.details["within_group"] == pytest.approx(within, abs=TOL)


def test_theil_is_ge_at_alpha_1_and_between_theil(run: Callable[..., Finding]) -> None:
    theil = run("theil_index", DF3)
    ge1 = run("generalized_entropy_index", DF3, params={"alpha": 1.0})
    assert theil.value == ge1.value
    assert theil.worst_group == max(theil.groups, key=lambda g: g.value).group
    bt = run("between_group_theil_index", DF3)
    assert bt.value == theil.details["between_group"]


def test_alias_generalized_entropy_error(run: Callable[..., Finding]) -> None:
    a = run("generalized_entropy_error", DF3)
    b = run("generalized_entropy_index", DF3)
    assert a.value == b.value


def test_mean_log_deviation_without_false_negatives(run: Callable[..., Finding]) -> None:
    """α = 0 is finite when no benefit is 0; α < 0 too."""
    df = DF3.assign(y_pred=np.maximum(DF3["y_pred"], DF3["y_true"]))  # no false negatives
    known = df[df["g"].notna()]
    for alpha in (0.0, -0.5):
        f = run("generalized_entropy_index", df, params={"alpha": alpha})
        assert f.value == pytest.approx(ge_rows(benefits(known), alpha), abs=TOL)


@pytest.mark.parametrize("alpha", [0.0, -1.0])
def test_alpha_at_most_0_with_a_false_negative_is_none_not_inf(
    alpha: float, run: Callable[..., Finding]
) -> None:
    f = run("generalized_entropy_index", DF3, params={"alpha": alpha})
    assert f.value is None and f.status == "inconclusive"
    assert "benefit 0" in (f.reason or "")
    assert all(g.value is None for g in f.groups)


def test_every_row_a_false_negative_is_undefined(run: Callable[..., Finding]) -> None:
    df = pd.DataFrame({"y_true": [1] * 6, "y_pred": [0] * 6, "g": list("aaabbb")})
    for key in ("theil_index", "generalized_entropy_index", "between_group_theil_index"):
        f = run(key, df)
        assert f.value is None and f.status == "inconclusive", key
        assert "false negative" in (f.reason or ""), key


def test_generalized_entropy_hand_case(run: Callable[..., Finding]) -> None:
    """4 rows: FN (b=0), TP (1), TN (1), FP (2): μ = 1, GE(2) = ((0+1+1+4)/4 − 1)/2 = 0.25,
    Theil = (2·ln 2)/4."""
    df = pd.DataFrame(
        {"y_true": [1, 1, 0, 0] * 2, "y_pred": [0, 1, 0, 1] * 2, "g": list("aaaabbbb")}
    )
    assert run("generalized_entropy_index", df).value == pytest.approx(0.25, abs=TOL)
    assert run("theil_index", df).value == pytest.approx(2 * math.log(2) / 4, abs=TOL)
    assert run("between_group_theil_index", df).value == pytest.approx(0.0, abs=TOL)


def tutorial_theil_index(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """The fairness-metrics tutorial's snippet as written: benefit 1 for a true positive, else 0."""
    benefits = ((y_pred == 1) & (y_true == 1)).astype(float)
    if benefits.sum() == 0 or benefits.mean() == 0:
        return 0.0
    mu = benefits.mean()
    n = len(benefits)
    theil = 0.0
    for b in benefits:
        if b > 0:
            theil += (b / mu) * np.log(b / mu)
    return float(theil / n)


def test_tutorial_snippet_benefit_gives_another_number(
    fixtures_dir: Any, reference: dict[str, Any], run: Callable[..., Finding]
) -> None:
    """fairpolicy follows aif360's benefit (b = ŷ − y + 1), which reference.json's aif360
    and holisticai numbers use; the fairness-metrics tutorial's snippet (b = 1 if TP) is a
    different index."""
    df = pd.read_csv(fixtures_dir / "binary_2g.csv")
    ours = run("theil_index", df, dimension="sex", min_samples=30)
    aif = reference["binary_2g"]["aif360.sklearn:generalized_entropy_error[alpha=1]"]["value"]
    assert ours.value == pytest.approx(aif, abs=TOL)
    seed = tutorial_theil_index(df["y_true"].to_numpy(), df["y_pred"].to_numpy())
    assert abs(seed - ours.value) > 0.5  # ln(n / #TP) ≈ 1.07 vs 0.048
    tp = int(((df["y_true"] == 1) & (df["y_pred"] == 1)).sum())
    assert seed == pytest.approx(math.log(len(df) / tp), abs=TOL)  # its closed form
    # and the snippet's silent 0.0 when there is no true positive: ours is a number
    no_tp = pd.DataFrame(
        {"y_true": [0, 0, 1, 1] * 2, "y_pred": [1, 0, 0, 0] * 2, "g": list("aaaabbbb")}
    )
    assert tutorial_theil_index(no_tp["y_true"].to_numpy(), no_tp["y_pred"].to_numpy()) == 0.0
    f = run("theil_index", no_tp)
    assert f.value == pytest.approx(ge_rows(benefits(no_tp), 1.0), abs=TOL) and f.value > 0


# ---------------------------------------------------------------------------
# error-rate gaps


RATE_ORACLES: dict[str, tuple[str, Callable[[np.ndarray, np.ndarray], float | None]]] = {
    "fdr_diff": ("max", lambda y, p: ((p == 1) & (y == 0)).sum() / (p == 1).sum()),
    "for_diff": ("max", lambda y, p: ((p == 0) & (y == 1)).sum() / (p == 0).sum()),
    "npv_diff": ("min", lambda y, p: ((p == 0) & (y == 0)).sum() / (p == 0).sum()),
    "tnr_diff": ("min", lambda y, p: ((p == 0) & (y == 0)).sum() / (y == 0).sum()),
    "error_rate_diff": ("max", lambda y, p: (p != y).mean()),
}


@pytest.mark.parametrize("key", sorted(RATE_ORACLES))
def test_error_rate_gaps_on_masked_subsets(key: str, run: Callable[..., Finding]) -> None:
    worst, oracle = RATE_ORACLES[key]
    f = run(key, DF3)
    known = DF3[DF3["g"].notna()]
    rates = {
        name: float(oracle(rows["y_true"].to_numpy(), rows["y_pred"].to_numpy()))
        for name, rows in known.groupby("g")
    }
    got = {g.group: g.value for g in f.groups}
    assert got == pytest.approx(rates, abs=TOL)
    assert f.value == pytest.approx(max(rates.values()) - min(rates.values()), abs=TOL)
    pick = max if worst == "max" else min
    assert f.worst_group == pick(rates, key=rates.__getitem__)


def test_complementary_gaps_coincide(run: Callable[..., Finding]) -> None:
    pairs = [
        ("fdr_diff", "predictive_parity_diff"),
        ("npv_diff", "for_diff"),
        ("tnr_diff", "fpr_diff"),
        ("error_rate_diff", "accuracy_diff"),
    ]
    for a, b in pairs:
        assert run(a, DF3).value == pytest.approx(run(b, DF3).value, abs=TOL), (a, b)


def test_calibration_diff_is_the_ppv_gap(run: Callable[..., Finding]) -> None:
    """The fairness-metrics tutorial's Calibration Diff |PPV_0 − PPV_1| = predictive_parity_diff."""
    f = run("calibration_diff", DF3)
    assert f.value == run("predictive_parity_diff", DF3).value
    known = DF3[DF3["g"].notna()]
    ppv = [r.loc[r["y_pred"] == 1, "y_true"].mean() for _, r in known.groupby("g")]
    assert f.value == pytest.approx(max(ppv) - min(ppv), abs=TOL)


def test_calibration_diff_matches_the_tutorial_snippet(
    fixtures_dir: Any, run: Callable[..., Finding]
) -> None:
    """The tutorial's compute_classification_fairness_metrics: ppv_diff = |PPV_g0 − PPV_g1|."""
    df = pd.read_csv(fixtures_dir / "binary_2g.csv")
    ppv = {}
    for g, rows in df.groupby("sex"):
        pred_pos = rows["y_pred"] == 1
        ppv[g] = rows.loc[pred_pos, "y_true"].mean() if pred_pos.sum() > 0 else 0
    f = run("calibration_diff", df, dimension="sex", min_samples=30)
    assert f.value == pytest.approx(abs(ppv["F"] - ppv["M"]), abs=TOL)


def test_group_without_predicted_negatives_is_excluded_from_for(
    run: Callable[..., Finding],
) -> None:
    df = pd.DataFrame(
        {
            "y_true": [0, 1, 0, 1, 1, 0, 1, 1, 0],
            "y_pred": [0, 0, 1, 1, 1, 1, 1, 1, 1],
            "g": list("aaaabbbbb"),
        }
    )
    f = run("for_diff", df)
    assert f.value is None and f.status == "inconclusive"
    assert [e.group for e in f.excluded_groups] == ["b"]
    assert "no predicted negatives" in f.excluded_groups[0].reason


# ---------------------------------------------------------------------------
# disparity to a reference group

#: selection rates a 0.2 (n=50), b 0.5 (n=100), c 0.6 (n=40), d 0.25 (n=20)
SEL = pd.DataFrame(
    {
        "y_true": [0] * 210,
        "y_pred": [1] * 10
        + [0] * 40
        + [1] * 50
        + [0] * 50
        + [1] * 24
        + [0] * 16
        + [1] * 5
        + [0] * 15,
        "g": ["a"] * 50 + ["b"] * 100 + ["c"] * 40 + ["d"] * 20,
    }
)


def test_disparity_ratio_majority_reference_and_log_worst(run: Callable[..., Finding]) -> None:
    f = run("disparity_ratio", SEL)
    assert f.details["reference_group"] == "b"  # the largest group
    ratios = {"a": 0.4, "b": 1.0, "c": 1.2, "d": 0.5}
    assert {g.group: g.value for g in f.groups} == pytest.approx(ratios, abs=TOL)
    assert f.details["rates"] == pytest.approx({"a": 0.2, "b": 0.5, "c": 0.6, "d": 0.25})
    # farthest from 1 in log terms: |ln 0.4| = 0.92 > |ln 0.5| > |ln 1.2|
    assert f.value == pytest.approx(0.4, abs=TOL) and f.worst_group == "a"


def test_disparity_ratio_worst_can_be_above_one(run: Callable[..., Finding]) -> None:
    """Reference a (0.2): c/a = 3 is farther from 1 (ln 3 = 1.10) than any ratio below 1."""
    f = run("disparity_ratio", SEL, params={"reference_group": "a"})
    assert f.value == pytest.approx(3.0, abs=TOL) and f.worst_group == "c"
    # rates a 0.4, b 0.5 (reference), c 0.65: ratios 0.8 and 1.3, and
    # |ln 1.3| = 0.262 > |ln 0.8| = 0.223, so 1.3 is the worse one
    df = pd.DataFrame(
        {
            "y_true": 0,
            "y_pred": [1] * 4 + [0] * 6 + [1] * 10 + [0] * 10 + [1] * 13 + [0] * 7,
            "g": ["a"] * 10 + ["b"] * 20 + ["c"] * 20,
        }
    )
    f = run("disparity_ratio", df, params={"reference_group": "b"})
    assert {g.group: g.value for g in f.groups} == pytest.approx({"a": 0.8, "b": 1.0, "c": 1.3})
    assert f.value == pytest.approx(1.3, abs=TOL) and f.worst_group == "c"
    # reference a (0.4): b 1.25, c 1.625 -> c
    f = run("disparity_ratio", df, params={"reference_group": "a"})
    assert f.value == pytest.approx(1.625, abs=TOL) and f.worst_group == "c"


def test_disparity_ratio_min_and_max_references(run: Callable[..., Finding]) -> None:
    lo = run("disparity_ratio", SEL, params={"reference_group": "min"})
    assert lo.details["reference_group"] == "a" and lo.value == pytest.approx(3.0, abs=TOL)
    hi = run("disparity_ratio", SEL, params={"reference_group": "max"})
    assert hi.details["reference_group"] == "c"
    assert hi.value == pytest.approx(0.2 / 0.6, abs=TOL) and hi.worst_group == "a"


def test_disparity_ratio_undefined_cases(run: Callable[..., Finding]) -> None:
    f = run("disparity_ratio", SEL, params={"reference_group": "zz"})
    assert f.value is None and "'zz' is not among the compared groups" in (f.reason or "")
    zero = SEL.assign(y_pred=np.where(SEL["g"] == "b", 0, SEL["y_pred"]))
    f = run("disparity_ratio", zero)
    assert f.value is None and "divides by 0" in (f.reason or "")
    # a group whose rate is undefined is excluded; the majority group undefined -> None
    f = run("disparity_ratio", SEL, params={"rate": "tpr"})  # no actual positives anywhere
    assert f.value is None and f.status == "inconclusive"
    assert {e.group for e in f.excluded_groups} == {"a", "b", "c", "d"}


def test_disparity_ratio_ppr_is_the_share_of_predicted_positives(
    run: Callable[..., Finding],
) -> None:
    f = run("disparity_ratio", SEL, params={"rate": "ppr"})
    pp = {"a": 10, "b": 50, "c": 24, "d": 5}
    share = {g: v / 89 for g, v in pp.items()}
    assert f.details["rates"] == pytest.approx(share, abs=TOL)
    assert sum(f.details["rates"].values()) == pytest.approx(1.0, abs=TOL)
    assert {g.group: g.value for g in f.groups} == pytest.approx(
        {g: v / 50 for g, v in pp.items()}, abs=TOL
    )


def test_disparity_ratio_synonyms(run: Callable[..., Finding]) -> None:
    for a, b in (("pprev", "selection_rate"), ("precision", "ppv")):
        fa = run("disparity_ratio", DF3, params={"rate": a})
        fb = run("disparity_ratio", DF3, params={"rate": b})
        assert fa.value == fb.value and fa.details["rates"] == fb.details["rates"]


def test_disparity_ratio_between_band(
    control: Callable[..., Control], evaluate_many: Callable[..., Results]
) -> None:
    """The Aequitas band as a control: 0.8 <= worst ratio <= 1.25."""
    from fairpolicy.policy.schema import Operator, Threshold

    c = control("disparity_ratio", "g", min_samples=1).model_copy(
        update={"operator": Operator.BETWEEN, "threshold": Threshold(low=0.8, high=1.25)}
    )
    f = evaluate_many([c], SEL).findings[0]
    assert f.status == "fail" and f.value == pytest.approx(0.4)
    fair = SEL[SEL["g"].isin(["b", "c"])]  # ratios 1.0 and 1.2
    assert evaluate_many([c], fair).findings[0].status == "pass"


# ---------------------------------------------------------------------------
# NYC Local Law 144 impact ratio


def ll144_table() -> pd.DataFrame:
    """100 rows: (sex, race, n, selected) cells plus 3 rows with sex missing.

    M & W 40 (20), M & B 30 (12), F & W 20 (8), F & B 6 (1), F & A 1 (1), ? & W 3 (1).
    """
    cells = [("M", "W", 40, 20), ("M", "B", 30, 12), ("F", "W", 20, 8), ("F", "B", 6, 1)]
    cells += [("F", "A", 1, 1), (None, "W", 3, 1)]
    rows = []
    for sex, race, n, sel in cells:
        rows += [{"sex": sex, "race": race, "selected": int(i < sel)} for i in range(n)]
    df = pd.DataFrame(rows)
    df["sex"] = df["sex"].astype(object)
    return df


LL144_INPUTS = {"target": "selected"}


def test_impact_ratio_hand_checked_intersection(run: Callable[..., Finding]) -> None:
    f = run("impact_ratio", ll144_table(), "sex,race", inputs=LL144_INPUTS)
    d = f.details
    assert d["rows"] == 100 and d["unknown_n"] == 3 and d["min_share"] == 0.02
    levels = {lv["level"]: lv for lv in d["levels"]}
    assert list(levels) == ["sex", "race", "sex,race"]

    sex = {c["category"]: c for c in levels["sex"]["categories"]}
    assert (sex["M"]["n"], sex["M"]["selected"], sex["F"]["n"], sex["F"]["selected"]) == (
        70,
        32,
        27,
        10,
    )
    assert levels["sex"]["highest_category"] == "M"
    assert sex["F"]["impact_ratio"] == pytest.approx((10 / 27) / (32 / 70), abs=TOL)
    assert sex["M"]["impact_ratio"] == 1.0

    race = {c["category"]: c for c in levels["race"]["categories"]}
    # A holds 1 % of the rows: reported, kept out of the highest rate and the value
    assert race["A"]["excluded"] and race["A"]["share"] == pytest.approx(0.01)
    assert race["A"]["rate"] == 1.0 and race["A"]["impact_ratio"] == pytest.approx(1 / (28 / 60))
    assert levels["race"]["highest_category"] == "W"
    assert race["B"]["impact_ratio"] == pytest.approx((13 / 36) / (28 / 60), abs=TOL)
    assert levels["race"]["min_impact_ratio"] == pytest.approx((13 / 36) / (28 / 60), abs=TOL)

    cells = {c["category"]: c for c in levels["sex,race"]["categories"]}
    assert cells["F & A"]["excluded"] and not cells["F & B"]["excluded"]
    assert levels["sex,race"]["highest_category"] == "M & W"
    assert {k: c["impact_ratio"] for k, c in cells.items()} == pytest.approx(
        {"F & A": 2.0, "F & B": 1 / 3, "F & W": 0.8, "M & B": 0.8, "M & W": 1.0}, abs=TOL
    )
    # the value: the lowest kept ratio across the three levels
    assert f.value == pytest.approx(1 / 3, abs=TOL)
    assert f.worst_group == "F & B" and d["worst"] == {"level": "sex,race", "category": "F & B"}
    # per-group values are the intersection cells; the cell under 2 % is listed as excluded
    assert {g.group: g.value for g in f.groups} == pytest.approx(
        {"F & B": 1 / 3, "F & W": 0.8, "M & B": 0.8, "M & W": 1.0}, abs=TOL
    )
    excl = {e.group: e for e in f.excluded_groups}
    assert excl["F & A"].n == 1 and "min_share=0.02" in excl["F & A"].reason
    assert excl["(missing)"].n == 3 and excl["(missing)"].missing


def test_impact_ratio_sees_cells_under_min_samples(run: Callable[..., Finding]) -> None:
    """With the default min_samples=30 the F cells (27 rows in all) must still count:
    dropping them would leave M & W vs M & B (0.8) and pass a >= 0.8 control wrongly."""
    f = run("impact_ratio", ll144_table(), "sex,race", inputs=LL144_INPUTS, min_samples=30)
    assert f.value == pytest.approx(1 / 3, abs=TOL)


def test_impact_ratio_single_column_and_min_share(run: Callable[..., Finding]) -> None:
    df = ll144_table()
    f = run("impact_ratio", df, "race", inputs=LL144_INPUTS)
    assert [lv["level"] for lv in f.details["levels"]] == ["race"]
    # race alone: the 3 rows with sex missing are W rows here (63 W, 29 selected)
    assert f.details["rows"] == 100 and f.details["unknown_n"] == 0
    assert f.value == pytest.approx((13 / 36) / (29 / 63), abs=TOL) and f.worst_group == "B"
    # min_share 0: the 1-row category A now sets the highest rate (1.0)
    f = run("impact_ratio", df, "race", params={"min_share": 0.0}, inputs=LL144_INPUTS)
    assert f.value == pytest.approx(13 / 36, abs=TOL)


def test_impact_ratio_reads_the_prediction_when_bound(run: Callable[..., Finding]) -> None:
    df = ll144_table().assign(y_true=0)
    f = run("impact_ratio", df, "sex", inputs={"target": "y_true", "prediction": "selected"})
    assert f.value == pytest.approx((10 / 27) / (32 / 70), abs=TOL)
    # target only: the target is the selection (here all 0 -> undefined)
    f = run("impact_ratio", df, "sex", inputs={"target": "y_true"})
    assert f.value is None and "0/0" in (f.reason or "")


def test_impact_ratio_level_with_one_kept_category(run: Callable[..., Finding]) -> None:
    """A level where only one category holds >= 2 % is reported but not compared."""
    df = ll144_table()
    df = df[~((df["sex"] == "F") & (df["race"] != "A"))]  # F keeps only its 1 row
    f = run("impact_ratio", df, "sex,race", inputs=LL144_INPUTS)
    levels = {lv["level"]: lv for lv in f.details["levels"]}
    assert "at least 2 are needed" in levels["sex"]["reason"]
    assert "min_impact_ratio" in levels["race"]


def test_scoring_impact_ratio_hand_case(run: Callable[..., Finding]) -> None:
    """Scores a: 1 2 3 4, b: 2 3 3 5 6 -> median 3 (9 values); above: a 1/4, b 2/5."""
    df = pd.DataFrame(
        {
            "y": [0, 1] * 4 + [0],
            "s": [1, 2, 3, 4, 2, 3, 3, 5, 6],
            "g": list("aaaabbbbb"),
        }
    )
    f = run("scoring_impact_ratio", df, inputs={"target": "y", "score": "s"})
    assert f.details["median_score"] == 3.0
    assert f.value == pytest.approx(0.25 / 0.4, abs=TOL) and f.worst_group == "a"
    # an even count: the median is the mean of the two middle scores (numpy's)
    df2 = pd.concat([df, pd.DataFrame({"y": [1], "s": [10], "g": ["b"]})], ignore_index=True)
    f = run("scoring_impact_ratio", df2, inputs={"target": "y", "score": "s"})
    assert f.details["median_score"] == float(np.median(df2["s"])) == 3.0
    assert f.value == pytest.approx(0.25 / 0.5, abs=TOL)


def test_scoring_impact_ratio_median_oracle(run: Callable[..., Finding]) -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "y": rng.integers(0, 2, 400),
            "s": rng.integers(0, 20, 400) / 20,
            "sex": rng.choice(["F", "M"], 400),
            "race": rng.choice(["A", "B", "W"], 400, p=[0.15, 0.35, 0.5]),
        }
    )
    f = run("scoring_impact_ratio", df, "sex,race", inputs={"target": "y", "score": "s"})
    med = float(np.median(df["s"]))
    assert f.details["median_score"] == med
    rates = {}
    for col in ("sex", "race"):
        rates.update((df["s"] > med).groupby(df[col]).mean().to_dict())
    cells = (df["s"] > med).groupby(df["sex"] + " & " + df["race"]).mean()
    expect = min(
        min(v / max(r.values()) for v in r.values())
        for r in (
            {k: rates[k] for k in ("F", "M")},
            {k: rates[k] for k in ("A", "B", "W")},
            cells.to_dict(),
        )
    )
    assert f.value == pytest.approx(expect, abs=TOL)


def test_impact_ratio_intersection_marginals_oracle(run: Callable[..., Finding]) -> None:
    """Marginals summed from the cells equal per-column pandas group-bys."""
    rng = np.random.default_rng(11)
    df = pd.DataFrame(
        {
            "sel": rng.integers(0, 2, 600),
            "sex": rng.choice(["F", "M"], 600),
            "race": rng.choice(["A", "B", "W"], 600),
        }
    )
    f = run("impact_ratio", df, "sex,race", inputs={"target": "sel"})
    for lv in f.details["levels"][:2]:
        rate = df.groupby(lv["level"])["sel"].mean()
        got = {c["category"]: c["rate"] for c in lv["categories"]}
        assert got == pytest.approx(rate.to_dict(), abs=TOL)
        assert lv["min_impact_ratio"] == pytest.approx(rate.min() / rate.max(), abs=TOL)
