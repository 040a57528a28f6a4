"""holisticai's multi-class pairwise metrics and Venturalitica's intersectional disparity.

Anchors:

- ``reference.json`` (holisticai 1.0.14): reproduced here by ``hai_*`` — a direct
  transcription of holisticai's ``_multiclass.py`` (confusion tensor [group, pred,
  true] + 1e-32, normalised over predictions per true class) — and matched by
  fairpolicy to 1e-12 in ``test_reference.py`` (MAPPINGS) and below.
- random data (2–5 groups, K = 2..5): fairpolicy against ``hai_*`` when every class
  occurs in every group, and against a pandas re-implementation of fairpolicy's
  rule (absent true classes left out per pair) when some do not.
- hand-computed small cases written out in full.
- intersectional_disparity: pandas ``groupby`` accuracy over the combined columns.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.metrics import holistic
from fairpolicy.metrics.registry import REGISTRY, lookup
from fairpolicy.results import Finding
from fairpolicy.stats import INTERSECTION_SEP, GroupStats

TOL = 1e-12
SP = "multiclass_statistical_parity"
EO = "multiclass_equality_of_opportunity"
AO = "multiclass_average_odds"
TPD = "multiclass_true_positive_difference"
PAIRWISE = (SP, EO, AO, TPD)
#: holisticai function name -> our key
HAI_NAMES = {
    "multiclass_statistical_parity": SP,
    "multiclass_equality_of_opp": EO,
    "multiclass_average_odds": AO,
    "multiclass_true_rates": TPD,
}
AGGS = ("max", "mean")


# ---------------------------------------------------------------------------
# holisticai 1.0.14 ``bias/metrics/_multiclass.py``, transcribed (numpy only)


def _hai_tensor(df: pd.DataFrame, dim: str) -> tuple[np.ndarray, np.ndarray, int]:
    groups = sorted(df[dim].unique())
    classes = sorted(set(df["y_true"]) | set(df["y_pred"]))
    k = len(classes)
    gi = {g: i for i, g in enumerate(groups)}
    ci = {c: i for i, c in enumerate(classes)}
    tens = np.zeros((len(groups), k, k))  # [group, predicted, true]
    freq = np.zeros((len(groups), k))
    for g, p, t in zip(df[dim], df["y_pred"], df["y_true"], strict=True):
        tens[gi[g], ci[p], ci[t]] += 1
        freq[gi[g], ci[p]] += 1
    return tens, freq, k


def hai(df: pd.DataFrame, dim: str, name: str, aggregation: str) -> float:
    """holisticai's multiclass_* metric on a frame with columns y_true, y_pred, ``dim``."""
    tens, freq, k = _hai_tensor(df, dim)
    tens = tens + 1e-32
    norm = tens.sum(axis=1)
    sr = freq / freq.sum(axis=1).reshape(-1, 1) + 1e-32
    g = len(tens)
    dist = np.zeros((g, g))
    for a in range(g):
        ma = tens[a] / norm[a, :]
        for b in range(a + 1, g):
            mb = tens[b] / norm[b, :]
            if name == "multiclass_equality_of_opp":
                dist[a, b] = np.sum(np.abs(ma - mb)) / (2 * k)
            elif name == "multiclass_average_odds":
                dist[a, b] = np.abs((ma - mb).sum(axis=1)).sum() / (2 * k)
            elif name == "multiclass_true_rates":
                dist[a, b] = np.abs(np.diag(ma - mb)).mean()
            else:
                dist[a, b] = np.abs(sr[a] - sr[b]).sum() / 2
    if aggregation == "max":
        return float(np.max(dist))
    return float(np.sum(dist) / (g * (g - 1) / 2))


# ---------------------------------------------------------------------------
# fairpolicy's rule, re-implemented with pandas (absent true classes left out per pair)


def oracle(df: pd.DataFrame, dim: str, key: str, aggregation: str) -> float | None:
    classes = sorted(set(df["y_true"]) | set(df["y_pred"]))
    groups = sorted(df[dim].unique())
    sr, rows = {}, {}
    for g in groups:
        sub = df[df[dim] == g]
        sr[g] = sub["y_pred"].value_counts(normalize=True).reindex(classes, fill_value=0.0)
        rows[g] = pd.crosstab(sub["y_true"], sub["y_pred"], normalize="index").reindex(
            columns=classes, fill_value=0.0
        )
    dists = []
    for a, b in itertools.combinations(groups, 2):
        if key == SP:
            dists.append(0.5 * float((sr[a] - sr[b]).abs().sum()))
            continue
        common = sorted(set(rows[a].index) & set(rows[b].index))
        if not common:
            continue
        diff = rows[a].loc[common] - rows[b].loc[common]
        if key == EO:
            d = float((0.5 * diff.abs().sum(axis=1)).mean())
        elif key == AO:
            d = 0.5 * float(diff.mean(axis=0).abs().sum())
        else:
            d = float(np.mean([abs(diff.loc[c, c]) for c in common]))
        dists.append(d)
    if not dists:
        return None
    return max(dists) if aggregation == "max" else float(np.mean(dists))


def frame_from_counts(counts: dict[str, list[list[int]]]) -> pd.DataFrame:
    """Rows realising counts[group][true][pred]."""
    recs = []
    for g, mat in counts.items():
        for t, row in enumerate(mat):
            for p, c in enumerate(row):
                recs += [(t, p, g)] * c
    return pd.DataFrame(recs, columns=["y_true", "y_pred", "grp"])


def random_frame(rng: np.random.Generator, n_groups: int, k: int, n: int) -> pd.DataFrame:
    grp = rng.choice([f"g{i}" for i in range(n_groups)], n)
    y_true = rng.integers(0, k, n)
    skill = {f"g{i}": rng.uniform(0.3, 0.9) for i in range(n_groups)}
    keep = rng.random(n) < np.array([skill[g] for g in grp])
    y_pred = np.where(keep, y_true, rng.integers(0, k, n))
    return pd.DataFrame({"y_true": y_true, "y_pred": y_pred, "grp": grp})


def every_class_in_every_group(df: pd.DataFrame, dim: str) -> bool:
    k = len(set(df["y_true"]) | set(df["y_pred"]))
    return bool((df.groupby(dim)["y_true"].nunique() == k).all())


Evaluate = Callable[..., Finding]


# ---------------------------------------------------------------------------
# reference.json: the transcription reproduces holisticai, and so does fairpolicy


REF_CASES = [
    ("binary_2g", "sex"),
    ("multiclass_3", "grp"),
    ("multiclass_6_2site", "site"),
    ("multiclass_6_2site", "sex"),
]


@pytest.mark.parametrize(("fixture", "dim"), REF_CASES)
def test_transcription_reproduces_reference(
    fixture: str, dim: str, fixtures_dir: Path, reference: dict[str, Any]
) -> None:
    df = pd.read_csv(fixtures_dir / f"{fixture}.csv")
    for name, agg in itertools.product(HAI_NAMES, AGGS):
        ref = reference[fixture][f"holisticai:{name}[p_attr={dim},aggregation_fun={agg}]"]
        assert abs(hai(df, dim, name, agg) - ref["value"]) <= TOL, (name, agg)


@pytest.mark.parametrize(("fixture", "dim"), REF_CASES)
def test_reference_fixtures_have_every_class_in_every_group(
    fixture: str, dim: str, fixtures_dir: Path, evaluate: Evaluate, reference: dict[str, Any]
) -> None:
    """The precondition of the exact MAPPINGS: no undefined cell, every pair compares K classes."""
    df = pd.read_csv(fixtures_dir / f"{fixture}.csv")
    assert every_class_in_every_group(df, dim)
    for key in (EO, AO, TPD):
        f = evaluate(key, df, dim)
        assert "undefined_cells" not in f.details
        assert {p["classes_compared"] for p in f.details["pairs"]} == {len(f.classes)}
        name = next(n for n, k in HAI_NAMES.items() if k == key)
        ref = reference[fixture][f"holisticai:{name}[p_attr={dim},aggregation_fun=max]"]
        assert abs(f.value - ref["value"]) <= TOL


def test_statistical_parity_is_total_variation_not_mean_absolute_deviation(
    fixtures_dir: Path, reference: dict[str, Any], evaluate: Evaluate
) -> None:
    """holisticai says "mean absolute deviation"; holisticai computes ½ Σ_p |·| (TV).

    The issue's wording (total variation) and the reference numbers agree; the
    literal (1/K) Σ_p |·| reading agrees only when K = 2 and is wrong for K = 3.
    """
    for fixture, dim, k in (("multiclass_3", "grp", 3), ("binary_2g", "sex", 2)):
        df = pd.read_csv(fixtures_dir / f"{fixture}.csv")
        ref = reference[fixture][
            f"holisticai:multiclass_statistical_parity[p_attr={dim},aggregation_fun=max]"
        ]["value"]
        sr = pd.crosstab(df[dim], df["y_pred"], normalize="index").to_numpy()
        pairs = list(itertools.combinations(range(len(sr)), 2))
        tv = max(0.5 * np.abs(sr[a] - sr[b]).sum() for a, b in pairs)
        mad = max(np.abs(sr[a] - sr[b]).mean() for a, b in pairs)
        assert abs(tv - ref) <= TOL
        assert abs(evaluate(SP, df, dim, {"aggregation": "max"}).value - ref) <= TOL
        if k == 2:
            assert abs(mad - ref) <= TOL
        else:
            assert abs(mad - ref) > 1e-3


# ---------------------------------------------------------------------------
# random data: 2-5 groups, K = 2..5


@pytest.mark.parametrize(
    ("seed", "n_groups", "k"),
    [(1, 2, 2), (2, 3, 3), (3, 4, 4), (4, 5, 5), (5, 5, 2), (6, 2, 5), (7, 3, 4)],
)
def test_random_data_matches_holisticai_and_pandas(
    seed: int, n_groups: int, k: int, evaluate_many: Callable[..., Any], control: Any
) -> None:
    rng = np.random.default_rng(seed)
    df = random_frame(rng, n_groups, k, 400 * n_groups)
    assert every_class_in_every_group(df, "grp")
    combos = [(key, agg) for key in PAIRWISE for agg in AGGS]
    res = evaluate_many(
        [
            control(key, "grp", {"aggregation": agg}, control_id=f"{key}|{agg}")
            for key, agg in combos
        ],
        df,
    )
    fs = {f.control_id: f for f in res.findings}
    hai_of = {v: n for n, v in HAI_NAMES.items()}
    for key, agg in combos:
        ours = fs[f"{key}|{agg}"].value
        assert ours is not None
        assert abs(ours - hai(df, "grp", hai_of[key], agg)) <= TOL, (key, agg)
        assert abs(ours - oracle(df, "grp", key, agg)) <= TOL, (key, agg)
        assert 0.0 <= ours <= 1.0
    for agg in AGGS:
        # averaging rows before the distance can only shrink it (triangle inequality)
        assert fs[f"{AO}|{agg}"].value <= fs[f"{EO}|{agg}"].value + TOL
    for key in PAIRWISE:
        assert fs[f"{key}|mean"].value <= fs[f"{key}|max"].value + TOL
    if k == 2:  # one column of a 2×2 row fixes the other: EO is the mean TPR gap
        assert abs(fs[f"{EO}|max"].value - fs[f"{TPD}|max"].value) <= TOL


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_random_data_with_absent_classes_matches_pandas_rule(
    seed: int, evaluate_many: Callable[..., Any], control: Any
) -> None:
    """Some groups lack some true classes: ours leaves them out per pair (pandas oracle)
    and differs from holisticai, which fills those rows with 1/K."""
    rng = np.random.default_rng(seed)
    n_groups, k = int(rng.integers(3, 6)), int(rng.integers(3, 6))
    df = random_frame(rng, n_groups, k, 300 * n_groups)
    for g in rng.choice(sorted(df["grp"].unique()), 2, replace=False):
        gone = rng.choice(k, int(rng.integers(1, k - 1)), replace=False)
        df = df[~((df["grp"] == g) & df["y_true"].isin(gone))]
    assert not every_class_in_every_group(df, "grp")
    combos = [(key, agg) for key in PAIRWISE for agg in AGGS]
    res = evaluate_many(
        [
            control(key, "grp", {"aggregation": agg}, control_id=f"{key}|{agg}")
            for key, agg in combos
        ],
        df,
    )
    fs = {f.control_id: f for f in res.findings}
    hai_of = {v: n for n, v in HAI_NAMES.items()}
    differs = 0
    for key, agg in combos:
        f = fs[f"{key}|{agg}"]
        expected = oracle(df, "grp", key, agg)
        assert f.value is not None and expected is not None
        assert abs(f.value - expected) <= TOL, (key, agg)
        differs += abs(f.value - hai(df, "grp", hai_of[key], agg)) > 1e-9
        if key != SP:
            absent = {
                (g, str(c))
                for g, sub in df.groupby("grp")
                for c in range(k)
                if c not in set(sub["y_true"])
            }
            listed = {(c["group"], c["class"]) for c in f.details["undefined_cells"]}
            assert listed == absent
    assert differs >= 4  # the (E, A, T) metrics move away from holisticai's filled rows


# ---------------------------------------------------------------------------
# hand-computed cases

#: counts[group][true][pred], K = 3
A = [[2, 1, 1], [0, 3, 1], [1, 1, 2]]  # rows /4: [.5,.25,.25] [0,.75,.25] [.25,.25,.5]
B = [[3, 1, 0], [1, 2, 1], [0, 0, 4]]  # rows /4: [.75,.25,0] [.25,.5,.25] [0,0,1]
# d(A, B):
#   SP: S_A = (3, 5, 4)/12, S_B = (4, 3, 5)/12 -> ½ (1 + 2 + 1)/12 = 1/6
#   EO: row TVs .25, .25, .5 -> mean 1/3
#   AO: mean row diff (A − B) = (−.25, .5, −.25)/3 -> ½ · 1/3 = 1/6
#   TPD: |.5−.75|, |.75−.5|, |.5−1| -> mean 1/3
HAND_AB = {SP: Fraction(1, 6), EO: Fraction(1, 3), AO: Fraction(1, 6), TPD: Fraction(1, 3)}


@pytest.mark.parametrize("key", PAIRWISE)
def test_hand_computed_two_groups(key: str, evaluate: Evaluate) -> None:
    df = frame_from_counts({"A": A, "B": B})
    for agg in AGGS:
        f = evaluate(key, df, "grp", {"aggregation": agg}, min_samples=1)
        assert f.status in ("pass", "fail")
        assert abs(f.value - float(HAND_AB[key])) <= TOL
        assert f.details["worst_pair"] == ["A", "B"]
        (pair,) = f.details["pairs"]
        assert pair["groups"] == ["A", "B"] and pair["classes_compared"] == 3
        # the pair's float and the reported value (the exact rational, rounded) agree
        assert abs(pair["value"] - f.value) <= TOL
        assert Fraction(f.details["exact_value"]) == HAND_AB[key]
        # two groups: both are equally far from each other, so no single worst group
        assert f.worst_group is None
        assert {g.group: g.value for g in f.groups} == {"A": pair["value"], "B": pair["value"]}


@pytest.mark.parametrize("key", PAIRWISE)
def test_hand_computed_aggregation_over_three_groups(key: str, evaluate: Evaluate) -> None:
    """C is a copy of A: d(A, C) = 0, d(B, C) = d(A, B) = x; max = x, mean = 2x/3."""
    df = frame_from_counts({"A": A, "B": B, "C": A})
    x = HAND_AB[key]
    f_max = evaluate(key, df, "grp", {"aggregation": "max"}, min_samples=1)
    f_mean = evaluate(key, df, "grp", {"aggregation": "mean"}, min_samples=1)
    assert abs(f_max.value - float(x)) <= TOL
    assert abs(f_mean.value - float(2 * x / 3)) <= TOL
    assert f_max.worst_group == f_mean.worst_group == "B"
    assert [p["value"] for p in f_max.details["pairs"]] == pytest.approx(
        [float(x), 0.0, float(x)], abs=TOL
    )
    # per group: its worst pair (max) or its mean pair distance (mean)
    assert {g.group: g.value for g in f_max.groups} == pytest.approx(
        {"A": float(x), "B": float(x), "C": float(x)}, abs=TOL
    )
    assert {g.group: g.value for g in f_mean.groups} == pytest.approx(
        {"A": float(x / 2), "B": float(x), "C": float(x / 2)}, abs=TOL
    )


def test_default_aggregation_is_max() -> None:
    """The gate takes the worst pair unless told otherwise (holisticai defaults to mean)."""
    for key in PAIRWISE:
        assert REGISTRY[key].resolve_params({}) == {"aggregation": "max"}
        assert REGISTRY[key].param("aggregation").choices == ("max", "mean")


def test_aliases_name_holisticai_functions() -> None:
    assert lookup("multiclass_equality_of_opp").key == EO
    assert lookup("multiclass_true_rates").key == TPD


# B without any row of true class 2
B_NO_2 = [[3, 1, 0], [1, 2, 1], [0, 0, 0]]
# ours, classes {0, 1} compared: EO (.25 + .25)/2 = 1/4; TPD (.25 + .25)/2 = 1/4;
#   AO: mean row diff over t in {0, 1} = (−.25, .125, .125) -> ½ · .5 = 1/4
#   SP: S_B = (4, 3, 1)/8 vs (3, 5, 4)/12 -> ½ (6 + 1 + 5)/24 = 1/4 (unaffected: a real rate)
# holisticai fills B's row 2 with (1/3, 1/3, 1/3): TV to (.25, .25, .5) is 1/6, so
#   EO = (.25 + .25 + 1/6)/3 = 2/9; TPD = (.25 + .25 + 1/6)/3 = 2/9;
#   AO: mean diff over 3 rows = (−7/36, 2/36, 5/36) -> 7/36
ABSENT_OURS = {SP: Fraction(1, 4), EO: Fraction(1, 4), AO: Fraction(1, 4), TPD: Fraction(1, 4)}
ABSENT_HAI = {SP: Fraction(1, 4), EO: Fraction(2, 9), AO: Fraction(7, 36), TPD: Fraction(2, 9)}


@pytest.mark.parametrize("key", PAIRWISE)
def test_absent_class_is_left_out_not_filled(key: str, evaluate: Evaluate) -> None:
    df = frame_from_counts({"A": A, "B": B_NO_2})
    hai_name = next(n for n, k in HAI_NAMES.items() if k == key)
    assert abs(hai(df, "grp", hai_name, "max") - float(ABSENT_HAI[key])) <= TOL
    f = evaluate(key, df, "grp", min_samples=1)
    assert abs(f.value - float(ABSENT_OURS[key])) <= TOL
    if key == SP:
        assert f.value == pytest.approx(float(ABSENT_HAI[key]), abs=TOL)
        assert "undefined_cells" not in f.details
        return
    assert abs(f.value - float(ABSENT_HAI[key])) > 0.02
    assert f.details["pairs"][0]["classes_compared"] == 2
    [cell] = f.details["undefined_cells"]
    assert (cell["group"], cell["class"]) == ("B", "2")
    assert "true class" in cell["reason"]
    assert f.details["per_group"]["B"][2] is None
    assert f.details["worst_pair_per_class"]["2"] is None or key == AO


def test_pair_without_common_class_is_left_out(evaluate: Evaluate) -> None:
    """C has only true class 2, B has none: the pair (B, C) is undefined, not 0."""
    c_only_2 = [[0, 0, 0], [0, 0, 0], [1, 1, 2]]
    df = frame_from_counts({"A": A, "B": B_NO_2, "C": c_only_2})
    f = evaluate(EO, df, "grp", {"aggregation": "mean"}, min_samples=1)
    pairs = {tuple(p["groups"]): p for p in f.details["pairs"]}
    assert pairs[("B", "C")]["value"] is None and pairs[("B", "C")]["classes_compared"] == 0
    assert "share no class" in pairs[("B", "C")]["reason"]
    # d(A, B) = 1/4 (above); d(A, C) = TV of row 2 only: C's row is A's -> 0
    assert pairs[("A", "C")]["classes_compared"] == 1
    assert abs(pairs[("A", "C")]["value"] - 0.0) <= TOL
    assert abs(f.value - (0.25 + 0.0) / 2) <= TOL
    assert f.details["pairs_compared"] == 2


def test_no_comparable_pair_is_inconclusive(evaluate: Evaluate) -> None:
    only_0 = [[4, 1, 0], [0, 0, 0], [0, 0, 0]]
    only_1 = [[0, 0, 0], [2, 3, 0], [0, 0, 0]]
    only_2 = [[0, 0, 0], [0, 0, 0], [0, 1, 4]]
    df = frame_from_counts({"A": only_0, "B": only_1, "C": only_2})
    for key in (EO, AO, TPD):
        f = evaluate(key, df, "grp", min_samples=1)
        assert f.value is None and f.status == "inconclusive"
        assert "no pair" in (f.reason or "")
        assert {e.group for e in f.excluded_groups} == {"A", "B", "C"}
        assert all("no class in common" in e.reason for e in f.excluded_groups)
    # statistical parity needs no true label: defined
    assert evaluate(SP, df, "grp", min_samples=1).value is not None


@pytest.mark.parametrize(
    ("key", "a", "b"),
    [
        (SP, [[5, 0], [5, 0]], [[0, 5], [0, 5]]),  # disjoint predictions
        (EO, [[5, 0], [0, 5]], [[0, 5], [5, 0]]),  # always right vs always wrong
        (AO, [[5, 0], [5, 0]], [[0, 5], [0, 5]]),
        (TPD, [[5, 0], [0, 5]], [[0, 5], [5, 0]]),
    ],
)
def test_value_range_upper_bound_is_reached(
    key: str, a: list[list[int]], b: list[list[int]], evaluate: Evaluate
) -> None:
    """Each distance is a (mean of) total-variation distance(s): at most 1, and 1 is reached."""
    f = evaluate(key, frame_from_counts({"A": a, "B": b}), "grp", min_samples=1)
    assert f.value == pytest.approx(1.0, abs=TOL)
    assert REGISTRY[key].value_range == (0.0, 1.0)


def test_two_groups_relations_to_existing_metrics(fixtures_dir: Path, evaluate: Evaluate) -> None:
    df = pd.read_csv(fixtures_dir / "multiclass_6_2site.csv")
    for dim in ("site", "sex"):
        micro = evaluate("weighted_demographic_parity_multiclass", df, dim, {"strategy": "micro"})
        assert abs(evaluate(SP, df, dim).value - micro.value) <= TOL
        macro_eo = evaluate("macro_equal_opportunity_multiclass", df, dim)
        assert abs(evaluate(TPD, df, dim).value - macro_eo.value) <= TOL


def test_details_are_json_and_name_the_classes(fixtures_dir: Path, evaluate: Evaluate) -> None:
    df = pd.read_csv(fixtures_dir / "multiclass_3.csv")
    for key in PAIRWISE:
        f = evaluate(key, df, "grp", {"aggregation": "mean"})
        json.dumps(f.details, allow_nan=False)
        assert f.details["aggregation"] == "mean"
        assert set(f.details["worst_pair_per_class"]) == {"0", "1", "2"}
        assert len(f.details["pairs"]) == 3
    # SP per-group rates are holisticai's frequency matrix (also mapped in test_reference)
    sp = evaluate(SP, df, "grp")
    sr = pd.crosstab(df["grp"], df["y_pred"], normalize="index")
    for g, row in sp.details["per_group"].items():
        assert row == pytest.approx(list(sr.loc[g]), abs=TOL)


# ---------------------------------------------------------------------------
# intersectional_disparity (Venturalitica)

ID = "intersectional_disparity"


def _slice_name(key: Any) -> str:
    key = key if isinstance(key, tuple) else (key,)
    return INTERSECTION_SEP.join(str(v) for v in key)


def pandas_slices(df: pd.DataFrame, cols: list[str]) -> pd.DataFrame:
    correct = (df["y_true"] == df["y_pred"]).rename("acc")
    out = correct.groupby([df[c] for c in cols]).agg(["mean", "size"])
    out.index = [_slice_name(k) for k in out.index]
    return out


def test_intersectional_hand_computed(evaluate: Evaluate) -> None:
    rows = (
        # gender, age, [(y_true, y_pred) ...]
        [("F", "old", 0, 0)] * 3
        + [("F", "old", 1, 0)] * 1  # 3/4
        + [("F", "young", 1, 1)] * 2
        + [("F", "young", 0, 1)] * 2  # 2/4
        + [("M", "old", 2, 2)] * 4  # 4/4
        + [("M", "young", 0, 0)] * 1
        + [("M", "young", 0, 2)] * 3  # 1/4
    )
    df = pd.DataFrame(rows, columns=["gender", "age", "y_true", "y_pred"])
    f = evaluate(ID, df, "gender,age", min_samples=1)
    assert f.value == pytest.approx(1.0 - 0.25, abs=TOL)
    assert f.details["worst_slice"] == "M & young" == f.worst_group
    assert f.details["best_slice"] == "M & old"
    assert f.details["dimension"] == ["gender", "age"]
    assert f.details["slice_details"] == {
        "F & old": {"accuracy": 0.75, "n": 4, "values": {"gender": "F", "age": "old"}},
        "F & young": {"accuracy": 0.5, "n": 4, "values": {"gender": "F", "age": "young"}},
        "M & old": {"accuracy": 1.0, "n": 4, "values": {"gender": "M", "age": "old"}},
        "M & young": {"accuracy": 0.25, "n": 4, "values": {"gender": "M", "age": "young"}},
    }
    # min_samples: a slice under it is excluded by the runner and listed
    small = pd.concat([df, pd.DataFrame([("X", "old", 0, 0)], columns=df.columns)])
    f = evaluate(ID, small, "gender,age", min_samples=2)
    assert [(e.group, e.n) for e in f.excluded_groups] == [("X & old", 1)]
    assert "min_samples" in f.excluded_groups[0].reason
    assert "X & old" not in f.details["slice_details"]
    assert f.value == pytest.approx(0.75, abs=TOL)


@pytest.mark.parametrize("seed", [31, 32])
def test_intersectional_matches_pandas_groupby_on_random_data(
    seed: int, evaluate: Evaluate
) -> None:
    rng = np.random.default_rng(seed)
    n, k = 4000, 4
    df = pd.DataFrame(
        {
            "gender": rng.choice(["F", "M", "X"], n, p=[0.48, 0.48, 0.04]),
            "age_group": rng.choice(["young", "mid", "elderly"], n),
            "region": rng.choice(["N", "S"], n, p=[0.9, 0.1]),
            "y_true": rng.integers(0, k, n),
        }
    )
    df["y_pred"] = np.where(rng.random(n) < 0.6, df["y_true"], rng.integers(0, k, n))
    cols = ["gender", "age_group", "region"]
    f = evaluate(ID, df, ",".join(cols), min_samples=30)
    ref = pandas_slices(df, cols)
    big, small = ref[ref["size"] >= 30], ref[ref["size"] < 30]
    assert len(small) > 0 and len(big) > 2
    assert {e.group: e.n for e in f.excluded_groups} == dict(small["size"])
    assert {g.group: g.value for g in f.groups} == pytest.approx(dict(big["mean"]), abs=TOL)
    assert f.value == pytest.approx(big["mean"].max() - big["mean"].min(), abs=TOL)
    assert f.details["worst_slice"] == big["mean"].idxmin()
    assert f.details["best_slice"] == big["mean"].idxmax()
    for name, d in f.details["slice_details"].items():
        assert d["n"] == big.loc[name, "size"]
        assert d["values"] == dict(zip(cols, name.split(INTERSECTION_SEP), strict=True))


def test_intersectional_on_reference_fixture(fixtures_dir: Path, evaluate: Evaluate) -> None:
    df = pd.read_csv(fixtures_dir / "multiclass_6_2site.csv")
    f = evaluate(ID, df, "site,sex")
    ref = pandas_slices(df, ["site", "sex"])
    assert (ref["size"] >= 30).all()
    assert {g.group: g.value for g in f.groups} == pytest.approx(dict(ref["mean"]), abs=TOL)
    assert f.value == pytest.approx(ref["mean"].max() - ref["mean"].min(), abs=TOL)
    assert f.details["worst_slice"] == ref["mean"].idxmin()
    assert f.details["best_slice"] == ref["mean"].idxmax()
    # one column: the slices are its groups, the value the accuracy gap
    gap = evaluate("multiclass_confusion_metrics", df, "site", {"value": "accuracy_gap"})
    assert evaluate(ID, df, "site").value == pytest.approx(gap.value, abs=TOL)


def _stats(keys: tuple[tuple[str, ...], ...] | tuple[()], names: tuple[str, ...]) -> GroupStats:
    counts = np.array([[[3, 1], [0, 4]], [[2, 2], [2, 2]]], dtype=np.int64)
    return GroupStats(
        dimension=("dept", "sex"),
        groups=names,
        classes=("0", "1"),
        counts=counts,
        group_keys=keys,
    )


def test_intersectional_reads_group_keys() -> None:
    """Column values come from ``group_keys`` (a value may itself contain " & ");
    without keys they are split from the names when that is unambiguous."""
    keys = (("R & D", "F"), ("Sales", "M"))
    names = tuple(INTERSECTION_SEP.join(k) for k in keys)
    mv = holistic.intersectional_disparity(_stats(keys, names), {})
    assert mv.value == pytest.approx(7 / 8 - 1 / 2, abs=TOL)
    assert mv.details["slice_details"]["R & D & F"]["values"] == {"dept": "R & D", "sex": "F"}
    no_keys = holistic.intersectional_disparity(_stats((), names), {})
    assert no_keys.value == mv.value
    assert no_keys.details["slice_details"]["R & D & F"]["values"] is None  # ambiguous
    assert no_keys.details["slice_details"]["Sales & M"]["values"] == {"dept": "Sales", "sex": "M"}


def test_intersectional_needs_two_slices(evaluate: Evaluate) -> None:
    df = pd.DataFrame(
        {"a": ["x"] * 40 + ["y"] * 5, "b": ["u"] * 45, "y_true": [0] * 45, "y_pred": [0] * 45}
    )
    f = evaluate(ID, df, "a,b")
    assert f.value is None and f.status == "inconclusive"
