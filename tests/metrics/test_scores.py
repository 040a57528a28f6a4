"""Score metrics (``fairpolicy.metrics.scores``): oracles, reference values, edges.

- Oracles: random data with tied scores (and scores on the calibration bin
  edges), 2–4 groups, K = 2..5, against scikit-learn (``roc_auc_score``,
  ``brier_score_loss``, ``f1_score``), scipy (``ks_2samp``), numpy means and the
  anchor libraries' ECE loops written out (fmm_fairness ``_calibration_error``,
  eval-toolkit ``expected_calibration_error``), all to 1e-12.
- Reference values from ``tests/reference/reference.json`` (fmm, eval-toolkit,
  scikit-learn), including fmm v0.1's ``samd_fairness_score`` recomputed from our
  component values.
- Edges: single-class groups, a class missing on K > 2, fewer than two groups,
  scores outside [0, 1], binary-only metrics on K = 3, the composite's site grouping.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp
from sklearn.metrics import brier_score_loss, f1_score, roc_auc_score

from fairpolicy.data.sources import read_table
from fairpolicy.evaluator import Evaluator
from fairpolicy.metrics import scores
from fairpolicy.metrics.registry import REGISTRY, lookup
from fairpolicy.planning import plan_controls
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.results import Finding
from fairpolicy.runner import check
from fairpolicy.stats import GroupStats

TOL = 1e-12
FIXTURES = Path(__file__).resolve().parents[1] / "reference"
BIN, MC3, MC6 = "binary_2g", "multiclass_3", "multiclass_6_2site"

BINARY_SCORE_KEYS = (
    "auc_gap",
    "brier_gap",
    "score_parity",
    "score_ks_statistic",
    "balance_positive_class",
    "balance_negative_class",
    "calibration_gap",
    "calibration_parity",
)
KAWARE_KEYS = ("multi_class_auc_gap", "inter_site_auc_variance")
V02 = {"f1_site": 0.35, "site": 0.20, "eo": 0.20, "dp": 0.10, "cal": 0.15}
V01 = {"site": 0.40, "eo": 0.30, "dp": 0.15, "cal": 0.15}


# ---------------------------------------------------------------------------
# running controls


def make(
    key: str,
    dim: str = "grp",
    *,
    score: str = "y_score",
    params: Mapping[str, Any] | None = None,
    min_samples: int = 1,
    cid: str | None = None,
    **inputs: str,
) -> Control:
    return Control(
        control_id=cid or key,
        metric_key=key,
        metric_key_as_written=key,
        threshold=Threshold(value=0.1),
        operator=Operator.LT,
        inputs={"target": "y_true", "prediction": "y_pred", "dimension": dim, "score": score}
        | inputs,
        params=dict(params or {}),
        min_samples=min_samples,
    )


def run(data: Any, *controls: Control) -> list[Finding]:
    return list(check(Policy(form="list", controls=tuple(controls)), data).findings)


def one(data: Any, key: str, dim: str = "grp", **kw: Any) -> Finding:
    f = run(data, make(key, dim, **kw))[0]
    return f


def groups_of(f: Finding) -> dict[str, float | None]:
    return {g.group: g.value for g in f.groups}


def close(a: float | None, b: float) -> bool:
    return a is not None and math.isfinite(a) and abs(a - b) <= TOL


def assert_gap(f: Finding, per_group: Mapping[str, float]) -> None:
    """Per-group values equal the oracle's and the value is their max − min."""
    assert f.status in ("pass", "fail"), f.message
    ours = groups_of(f)
    assert set(ours) == set(per_group)
    for g, v in per_group.items():
        assert close(ours[g], v), f"{f.metric_key} {g}: {ours[g]!r} != {v!r}"
    assert close(f.value, max(per_group.values()) - min(per_group.values()))


def bound_stats(data: Any, control: Control) -> GroupStats:
    """The statistics the runner hands a metric, before the min_samples selection."""
    cols = [c for r, c in control.inputs.items() if r != "score"]
    frame = data if isinstance(data, pd.DataFrame) else pd.read_csv(data)
    cols += [c for c in frame.columns if str(c).startswith(control.inputs["score"])]
    strings = [control.inputs["dimension"], control.inputs.get("site", "")]
    table = read_table(data, cols, string_columns=[s for s in strings if s])
    plans = plan_controls(Policy(form="list", controls=(control,)), table)
    assert plans[0].error is None, plans[0].error
    return Evaluator(table).group_stats(plans[0], plans)


# ---------------------------------------------------------------------------
# random data


def binary_frame(seed: int, n_groups: int, decimals: int = 1) -> pd.DataFrame:
    """Binary labels, scores rounded to ``decimals`` (ties; with 1 decimal every
    score sits on a calibration bin edge, 0.0 and 1.0 included)."""
    rng = np.random.default_rng(seed)
    frames = []
    for g in range(n_groups):
        n = int(rng.integers(30, 120))
        y = rng.integers(0, 2, n)
        noise = rng.normal(0.0, 0.15 + 0.1 * g, n)
        s = np.clip(0.25 + 0.5 * y + noise, 0.0, 1.0).round(decimals)
        frames.append(pd.DataFrame({"y_true": y, "y_pred": (s >= 0.5).astype(int), "y_score": s}))
        frames[-1]["grp"] = f"g{g}"
    df = pd.concat(frames, ignore_index=True)
    df["y_score_1"] = df["y_score"]
    df["y_score_0"] = 1.0 - df["y_score"]
    return df


def multiclass_frame(seed: int, k: int, n_groups: int) -> pd.DataFrame:
    """K classes, probabilities on a 1/10 grid (ties), every class in every group."""
    rng = np.random.default_rng(seed)
    frames = []
    for g in range(n_groups):
        n = int(rng.integers(60, 150))
        y = np.concatenate([np.arange(k), rng.integers(0, k, n - k)])
        p = np.full((n, k), 1.0) + (3.0 - 0.6 * g) * np.eye(k)[y]
        probs = np.array([rng.multinomial(10, row / row.sum()) for row in p]) / 10.0
        frame = pd.DataFrame({"y_true": y, "y_pred": probs.argmax(axis=1), "grp": f"g{g}"})
        for j in range(k):
            frame[f"y_score_{j}"] = probs[:, j]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def by_group(df: pd.DataFrame, dim: str = "grp") -> dict[str, pd.DataFrame]:
    return {str(g): sub for g, sub in df.groupby(dim)}


def decimal_edges(n_bins: int) -> np.ndarray:
    """The bin edges k/n_bins, each the double nearest the decimal (fairpolicy's documented
    rule). The libraries use ``np.linspace``, whose 0.3 edge is 0.30000000000000004 and
    which so puts a score of exactly 0.3, 0.6 or 0.7 in the bin below; fairpolicy departs
    from them there (``metrics show`` says so; ``test_scores_on_every_edge`` checks it)."""
    return np.arange(n_bins + 1) / n_bins


def fmm_ece(y: np.ndarray, s: np.ndarray, n_bins: int = 10) -> float:
    """fmm_fairness.metrics._calibration_error (v0.1), written out (with decimal edges)."""
    bins = decimal_edges(n_bins)
    ece, n = 0.0, len(y)
    for i in range(n_bins):
        lo, hi = bins[i], bins[i + 1]
        mask = (s >= lo) & (s < hi) if i < n_bins - 1 else (s >= lo) & (s <= hi)
        if mask.sum() == 0:
            continue
        ece += (mask.sum() / n) * abs(float(y[mask].mean()) - float(s[mask].mean()))
    return float(ece)


def eval_toolkit_ece(y: np.ndarray, s: np.ndarray, n_bins: int = 10) -> float:
    """eval_toolkit.metrics.expected_calibration_error (1.12), written out (with decimal
    edges)."""
    edges = decimal_edges(n_bins)
    idx = np.clip(np.digitize(s, edges, right=False) - 1, 0, n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        mask = idx == b
        if not mask.any():
            continue
        ece += (mask.sum() / len(y)) * abs(float(np.mean(s[mask])) - float(np.mean(y[mask])))
    return float(ece)


CASES = [(seed, g, d) for seed, g, d in ((1, 2, 1), (2, 3, 2), (3, 4, 1), (4, 3, 3), (5, 2, 2))]


# ---------------------------------------------------------------------------
# oracles: binary score metrics


@pytest.mark.parametrize(("seed", "n_groups", "decimals"), CASES)
def test_binary_score_metrics_match_the_oracles(seed: int, n_groups: int, decimals: int) -> None:
    df = binary_frame(seed, n_groups, decimals)
    found = {f.metric_key: f for f in run(df, *(make(k) for k in BINARY_SCORE_KEYS))}
    parts = by_group(df)
    y = {g: sub["y_true"].to_numpy() for g, sub in parts.items()}
    s = {g: sub["y_score"].to_numpy() for g, sub in parts.items()}

    assert_gap(found["auc_gap"], {g: roc_auc_score(y[g], s[g]) for g in parts})
    assert_gap(found["brier_gap"], {g: brier_score_loss(y[g], s[g]) for g in parts})
    assert_gap(found["score_parity"], {g: float(np.mean(s[g])) for g in parts})
    assert_gap(found["balance_positive_class"], {g: float(np.mean(s[g][y[g] == 1])) for g in parts})
    assert_gap(found["balance_negative_class"], {g: float(np.mean(s[g][y[g] == 0])) for g in parts})
    assert_gap(found["calibration_gap"], {g: fmm_ece(y[g], s[g]) for g in parts})
    assert_gap(found["calibration_parity"], {g: eval_toolkit_ece(y[g], s[g]) for g in parts})

    ks = found["score_ks_statistic"]
    names = sorted(parts)
    pair = {
        (a, b): float(ks_2samp(s[a], s[b], method="asymp").statistic)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    }
    assert ks.value == max(pair.values())  # exact: the same integer counts divided
    for g, v in groups_of(ks).items():
        assert v == max(d for ab, d in pair.items() if g in ab)
    assert {(p["a"], p["b"]): p["ks"] for p in ks.details["pairs"]} == pair


@pytest.mark.parametrize("n_bins", [1, 3, 7, 10, 20])
def test_calibration_bins_match_both_anchor_loops(n_bins: int) -> None:
    df = binary_frame(11, 3, decimals=2)
    f, p = run(
        df,
        make("calibration_gap", params={"n_bins": n_bins}),
        make("calibration_parity", params={"n_bins": n_bins}),
    )
    parts = by_group(df)
    fmm = {
        g: fmm_ece(t["y_true"].to_numpy(), t["y_score"].to_numpy(), n_bins)
        for g, t in parts.items()
    }
    etk = {
        g: eval_toolkit_ece(t["y_true"].to_numpy(), t["y_score"].to_numpy(), n_bins)
        for g, t in parts.items()
    }
    assert_gap(f, fmm)
    assert_gap(p, etk)
    assert f.details["n_bins"] == n_bins


def test_binary_metrics_read_the_positive_class_column() -> None:
    """K score columns: a binary metric reads the positive class's column."""
    df = binary_frame(7, 3, decimals=2)
    single = {f.metric_key: f for f in run(df, *(make(k) for k in BINARY_SCORE_KEYS))}
    pair = {
        f.metric_key: f
        for f in run(df, *(make(k, score="y_score_0,y_score_1") for k in BINARY_SCORE_KEYS))
    }
    for key in BINARY_SCORE_KEYS:
        assert pair[key].value is not None and single[key].value is not None
        assert close(pair[key].value, single[key].value), key
        assert pair[key].details["score_column"] == "y_score_1"
    # positive_label 0: the column of class 0, and class 0 is the positive outcome
    f = one(df, "auc_gap", score="y_score_0,y_score_1", params={"positive_label": "0"})
    assert f.details["score_column"] == "y_score_0"
    assert_gap(
        f,
        {g: roc_auc_score(t["y_true"] == 0, t["y_score_0"]) for g, t in by_group(df).items()},
    )


# ---------------------------------------------------------------------------
# oracles: K-aware AUC


@pytest.mark.parametrize(
    ("seed", "k", "n_groups"), [(1, 2, 2), (2, 3, 3), (3, 4, 4), (4, 5, 2), (5, 3, 4)]
)
def test_kaware_auc_matches_sklearn(seed: int, k: int, n_groups: int) -> None:
    df = multiclass_frame(seed, k, n_groups)
    gap_f, var_f = run(df, *(make(key) for key in KAWARE_KEYS))
    cols = [f"y_score_{j}" for j in range(k)]
    auc = {}
    for g, t in by_group(df).items():
        y, p = t["y_true"].to_numpy(), t[cols].to_numpy()
        if k == 2:
            auc[g] = roc_auc_score(y, p[:, 1])
        else:
            auc[g] = roc_auc_score(y, p, multi_class="ovr", average="macro", labels=range(k))
    assert_gap(gap_f, auc)
    assert gap_f.details["average"] == ("binary" if k == 2 else "ovr-macro")
    assert groups_of(var_f) == groups_of(gap_f)
    assert close(var_f.value, float(np.var(list(auc.values()))))
    if k > 2:
        for g, row in gap_f.details["per_group_per_class_auc"].items():
            t = by_group(df)[g]
            for j, v in enumerate(row):
                assert close(v, roc_auc_score(t["y_true"] == j, t[f"y_score_{j}"]))


def test_kaware_auc_on_a_single_binary_score_column() -> None:
    df = binary_frame(3, 3, decimals=2)
    f = one(df, "multi_class_auc_gap")
    assert f.details["score_column"] == "y_score"
    assert_gap(f, {g: roc_auc_score(t["y_true"], t["y_score"]) for g, t in by_group(df).items()})


# ---------------------------------------------------------------------------
# a small case written out by hand


def hand_frame() -> pd.DataFrame:
    rows = [
        # group A: AUC = (1 + 0.5 + 2) / 4 = 0.875 (the tie at 0.4 counts one half)
        ("A", 0, 0.2),
        ("A", 0, 0.4),
        ("A", 1, 0.4),
        ("A", 1, 0.8),
        # group B: positives 0.25, 0.95 each beat 0.0 only: AUC = 2 / 4 = 0.5
        ("B", 0, 0.0),
        ("B", 1, 0.25),
        ("B", 1, 0.95),
        ("B", 0, 1.0),
    ]
    df = pd.DataFrame(rows, columns=["grp", "y_true", "y_score"])
    df["y_pred"] = (df["y_score"] >= 0.5).astype(int)
    return df


def test_hand_computed_case() -> None:
    df = hand_frame()
    got = {f.metric_key: f for f in run(df, *(make(k) for k in BINARY_SCORE_KEYS))}
    assert groups_of(got["auc_gap"]) == {"A": 0.875, "B": 0.5}
    assert close(got["auc_gap"].value, 0.375)
    # ECE, 10 bins. A: bins 2 (0.2, y 0), 4 (0.4 ×2, one positive), 8 (0.8, y 1):
    #   (0.2 + 2·|0.5 − 0.4| + 0.2) / 4 = 0.15
    # B: bin 0 (0.0, y 0) → 0; bin 2 (0.25, y 1) → 0.75; last bin [0.9, 1] holds 0.95
    #   and 1.0 (one positive): 2·|0.5 − 0.975| = 0.95  →  (0.75 + 0.95) / 4 = 0.425
    #   (the fairness-metrics tutorial's half-open last bin would drop 1.0: (0.75 + 0.05) / 4 = 0.2)
    ece = {"A": 0.15, "B": 0.425}
    for key in ("calibration_gap", "calibration_parity"):
        assert all(close(groups_of(got[key])[g], v) for g, v in ece.items()), key
        assert close(got[key].value, 0.275)
        assert got[key].worst_group == "B"
    # Brier: A (0.04 + 0.16 + 0.36 + 0.04) / 4 = 0.15; B (0 + 0.5625 + 0.0025 + 1) / 4
    assert close(groups_of(got["brier_gap"])["A"], 0.15)
    assert close(groups_of(got["brier_gap"])["B"], 1.565 / 4)
    assert close(groups_of(got["score_parity"])["A"], 0.45)
    assert close(groups_of(got["score_parity"])["B"], 0.55)
    assert close(groups_of(got["balance_positive_class"])["B"], 0.6)
    assert close(groups_of(got["balance_negative_class"])["B"], 0.5)
    # KS: |F_A − F_B| is largest at 0.8 (A: 4/4, B: 2/4)
    assert close(got["score_ks_statistic"].value, 0.5)


# ---------------------------------------------------------------------------
# edges


def with_single_class_group(df: pd.DataFrame) -> pd.DataFrame:
    extra = pd.DataFrame({"y_true": 0, "y_pred": 0, "y_score": np.linspace(0.05, 0.6, 40)})
    extra["grp"] = "onlyneg"
    extra["y_score_1"], extra["y_score_0"] = extra["y_score"], 1 - extra["y_score"]
    return pd.concat([df, extra], ignore_index=True)


def test_a_single_class_group_has_no_auc_and_is_excluded() -> None:
    df = with_single_class_group(binary_frame(5, 2, decimals=2))
    keys = ("auc_gap", "multi_class_auc_gap", "inter_site_auc_variance", "balance_positive_class")
    for f in run(df, *(make(k) for k in keys)):
        assert f.status in ("pass", "fail"), f.message
        assert groups_of(f)["onlyneg"] is None, f.metric_key
        (ex,) = [e for e in f.excluded_groups if e.group == "onlyneg"]
        assert ex.n == 40
        word = "positives" if f.metric_key == "balance_positive_class" else "one class"
        assert word in ex.reason, ex.reason
        rest = {g: v for g, v in groups_of(f).items() if v is not None}
        assert len(rest) == 2
    # AUC is never 0.5 for it; the gap is over the two other groups
    f = one(df, "auc_gap")
    rest = [v for v in groups_of(f).values() if v is not None]
    assert close(f.value, max(rest) - min(rest))


def test_calibration_parity_excludes_single_class_groups_calibration_gap_keeps_them() -> None:
    df = with_single_class_group(binary_frame(5, 2, decimals=2))
    gap_f, parity = run(df, make("calibration_gap"), make("calibration_parity"))
    t = df[df["grp"] == "onlyneg"]
    assert close(
        groups_of(gap_f)["onlyneg"], fmm_ece(t["y_true"].to_numpy(), t["y_score"].to_numpy())
    )
    assert groups_of(parity)["onlyneg"] is None
    (ex,) = [e for e in parity.excluded_groups if e.group == "onlyneg"]
    assert "only one class" in ex.reason
    both = {g: v for g, v in groups_of(parity).items() if v is not None}
    assert both == {g: groups_of(gap_f)[g] for g in both}


def test_fewer_than_two_groups_with_an_auc_is_inconclusive() -> None:
    df = with_single_class_group(binary_frame(5, 2, decimals=2))
    df = df[df["grp"] != "g1"]  # g0 and the single-class group are left
    for key in ("auc_gap", "multi_class_auc_gap", "inter_site_auc_variance"):
        f = one(df, key)
        assert f.value is None and f.status == "inconclusive", key
        assert "at least 2" in (f.reason or ""), f.reason
        assert [e.group for e in f.excluded_groups] == ["onlyneg"]


def test_groups_under_min_samples_leave_one_group_inconclusive() -> None:
    df = binary_frame(5, 2, decimals=2)
    small = df["grp"].value_counts().min()
    for key in (*BINARY_SCORE_KEYS, *KAWARE_KEYS):
        f = one(df, key, min_samples=int(small) + 1)
        assert f.value is None and f.status == "inconclusive", key
        assert "min_samples" in (f.reason or "")


def test_a_group_missing_a_class_has_no_one_vs_rest_auc() -> None:
    df = multiclass_frame(8, 3, 3)
    df = df[~((df["grp"] == "g2") & (df["y_true"] == 1))]
    f = one(df, "multi_class_auc_gap")
    assert groups_of(f)["g2"] is None
    (ex,) = f.excluded_groups
    assert ex.group == "g2" and "['1'] absent" in ex.reason
    assert f.details["per_group_per_class_auc"]["g2"][1] is None
    cols = [f"y_score_{j}" for j in range(3)]
    ok = {
        g: roc_auc_score(t["y_true"], t[cols], multi_class="ovr", average="macro", labels=range(3))
        for g, t in by_group(df).items()
        if g != "g2"
    }
    assert close(f.value, max(ok.values()) - min(ok.values()))


def test_scores_outside_unit_interval_exclude_the_group_from_probability_metrics() -> None:
    df = binary_frame(9, 3, decimals=2)
    df.loc[df.index[df["grp"] == "g2"][:3], "y_score"] = 1.5
    res = check(Policy(form="list", controls=tuple(make(k) for k in BINARY_SCORE_KEYS)), df)
    assert any("outside [0, 1]" in w for w in res.warnings)
    for f in res.findings:
        v = groups_of(f)["g2"]
        if f.metric_key in ("auc_gap", "score_ks_statistic"):  # rank-based: defined
            assert v is not None, f.metric_key
        else:
            assert v is None, f.metric_key
            (ex,) = [e for e in f.excluded_groups if e.group == "g2"]
            assert "3 score(s) outside [0, 1]" in ex.reason


@pytest.mark.parametrize("key", ["calibration_gap", "calibration_parity", "auc_gap", "brier_gap"])
def test_binary_only_score_metrics_on_three_classes_name_the_replacement(key: str) -> None:
    f = one(multiclass_frame(2, 3, 2), key)
    assert f.status == "error" and f.value is None
    assert "K=3" in f.message
    for r in REGISTRY[key].multiclass_replacement:
        assert r in f.message
    if key.startswith("calibration"):
        assert set(REGISTRY[key].multiclass_replacement) == {
            "weighted_f1_gap",
            "macro_f1_gap",
            "per_class_f1_gap",
        }


def test_one_vs_rest_needs_one_score_column_per_class() -> None:
    df = multiclass_frame(2, 3, 2)
    f = one(df, "multi_class_auc_gap", score="y_score_0,y_score_1", params={"num_classes": 3})
    assert f.value is None and f.status == "inconclusive"
    assert "one score column per class" in (f.reason or "")


def test_registry_declarations() -> None:
    for key in (*BINARY_SCORE_KEYS, *KAWARE_KEYS, "samd_fairness_score"):
        spec = REGISTRY[key]
        assert spec.needs_scores and "score" in spec.inputs
        assert ("multiclass" in spec.tasks) == (key in (*KAWARE_KEYS, "samd_fairness_score"))
    assert REGISTRY["samd_fairness_score"].secondary_role == "site"
    assert "site" in REGISTRY["samd_fairness_score"].inputs
    assert REGISTRY["inter_site_auc_variance"].value_range == (0.0, 0.25)
    for alias, key in {
        "ece_gap": "calibration_parity",
        "auc_parity": "auc_gap",
        "brier_parity": "brier_gap",
        "multiclass_auc_gap": "multi_class_auc_gap",
    }.items():
        assert lookup(alias) is REGISTRY[key]


# ---------------------------------------------------------------------------
# reference.json


def ref_value(reference: dict[str, Any], fixture: str, key: str) -> Any:
    return reference[fixture][key]["value"]


def test_reference_fmm_and_eval_toolkit_calibration(reference: dict[str, Any]) -> None:
    data = FIXTURES / f"{BIN}.csv"
    gap_f, parity = run(
        data,
        make("calibration_gap", "sex", min_samples=20),
        make("calibration_parity", "sex", params={"n_bins": 10}),
    )
    assert close(gap_f.value, ref_value(reference, BIN, "fmm:calibration_gap[sex]"))
    per = ref_value(reference, BIN, "fmm:calibration_gap.per_group[sex]")
    assert all(close(groups_of(gap_f)[g], v) for g, v in per.items())
    assert close(parity.value, ref_value(reference, BIN, "eval_toolkit:ece_gap[sex,n_bins=10]"))
    per = ref_value(
        reference, BIN, "eval_toolkit:expected_calibration_error.by_group[sex,n_bins=10]"
    )
    assert all(close(groups_of(parity)[g], v) for g, v in per.items())


def test_reference_auc(reference: dict[str, Any]) -> None:
    data = FIXTURES / f"{BIN}.csv"
    auc, kaware, var = run(
        data,
        make("auc_gap", "sex"),
        make("multi_class_auc_gap", "sex"),
        make("inter_site_auc_variance", "site"),
    )
    per = ref_value(reference, BIN, "sklearn:roc_auc_score.by_group[sex]")
    assert_gap(auc, per)
    assert_gap(kaware, per)
    assert close(var.value, ref_value(reference, BIN, "fmm:inter_site_auc_variance[site]"))
    per = ref_value(reference, BIN, "fmm:inter_site_auc_variance.per_group[site]")
    assert all(close(groups_of(var)[g], v) for g, v in per.items())

    for fixture, dim in ((MC3, "grp"), (MC6, "site"), (MC6, "sex")):
        f = one(FIXTURES / f"{fixture}.csv", "multi_class_auc_gap", dim)
        assert close(f.value, ref_value(reference, fixture, f"sklearn:multi_class_auc_gap[{dim}]"))
        per = ref_value(reference, fixture, f"sklearn:roc_auc_score_ovr_macro.by_group[{dim}]")
        assert_gap(f, per)
    f = one(FIXTURES / f"{MC6}.csv", "inter_site_auc_variance", "site")
    assert close(f.value, ref_value(reference, MC6, "sklearn:inter_site_auc_variance[site]"))


# ---------------------------------------------------------------------------
# the composite (fmm-fairness-eval v0.2)


def samd_control(dim: str = "sex", site: str = "site", **kw: Any) -> Control:
    return make("samd_fairness_score", dim, site=site, **kw)


def samd_direct(data: Any, dim: str = "sex") -> Any:
    c = samd_control(dim)
    return scores.samd_fairness_score(bound_stats(data, c), {})


def test_samd_v02_binary_from_components_and_v01_reference(reference: dict[str, Any]) -> None:
    data = FIXTURES / f"{BIN}.csv"
    mv = samd_direct(data)
    comp = mv.details["components"]
    assert mv.details["weights"] == V02

    # each term is the registry metric of the same name (or sklearn) on the same data
    eo, dp, cal, var, wf1 = run(
        data,
        make("equal_opportunity_diff", "sex"),
        make("demographic_parity_diff", "sex"),
        make("calibration_gap", "sex"),
        make("inter_site_auc_variance", "site"),
        make("weighted_f1_gap", "site"),
    )
    assert close(comp["eo"], eo.value or math.nan)
    assert close(comp["dp"], dp.value or math.nan)
    assert close(comp["cal"], cal.value or math.nan)
    assert close(comp["site"], 2.0 * math.sqrt(var.value or math.nan))
    frame = pd.read_csv(data)
    per_site = {
        s: f1_score(t["y_true"], t["y_pred"], average="weighted") for s, t in frame.groupby("site")
    }
    assert close(comp["f1_site"], max(per_site.values()) - min(per_site.values()))
    assert close(wf1.value, comp["f1_site"])

    # fmm v0.1 (reference.json): four terms, its weights, from our component values
    r = reference[BIN]["fmm:samd_fairness_score"]
    assert r["params"]["weights"] == V01
    v01 = 1.0 - sum(V01[t] * comp[t] for t in V01)
    assert close(v01, r["value"])
    for ours, theirs in (
        ("site", "site_term"),
        ("eo", "eo_mean"),
        ("dp", "dp_mean"),
        ("cal", "cal_mean"),
    ):
        assert close(comp[ours], r["params"]["components"][theirs])

    # ours, v0.2: five terms, fmm-fairness-eval's weights
    assert close(mv.value, 1.0 - sum(V02[t] * comp[t] for t in V02))
    assert close(mv.value, 1.0 - mv.details["deduction"])
    assert mv.value != pytest.approx(r["value"], abs=1e-6)  # a different version, say so


def test_samd_multiclass_renormalises_to_f1_site_and_site(reference: dict[str, Any]) -> None:
    mv = samd_direct(FIXTURES / f"{MC6}.csv")
    w = mv.details["weights"]
    assert close(w["f1_site"], 0.35 / 0.55) and close(w["site"], 0.20 / 0.55)
    assert w["eo"] == w["dp"] == w["cal"] == 0.0
    comp = mv.details["components"]
    assert comp["eo"] is None and comp["dp"] is None and comp["cal"] is None
    f1_site = ref_value(reference, MC6, "fairlearn:MetricFrame.difference[weighted_f1,sf=site]")
    var = ref_value(reference, MC6, "sklearn:inter_site_auc_variance[site]")
    auc_range = ref_value(reference, MC6, "sklearn:multi_class_auc_gap[site]")
    assert close(comp["site"], 2.0 * math.sqrt(var))
    assert close(comp["site"], auc_range)  # two sites: 2·sqrt(variance) = range
    expected = 1.0 - (0.35 * f1_site + 0.20 * 2.0 * math.sqrt(var)) / 0.55
    assert close(mv.value, expected)


def test_samd_without_site_grouping_is_undefined() -> None:
    c = samd_control()
    st = bound_stats(FIXTURES / f"{BIN}.csv", c).with_extras(secondary=None)
    mv = scores.samd_fairness_score(st, {})
    assert mv.value is None and "input.site" in (mv.reason or "")


def test_samd_with_an_undefined_term_is_undefined() -> None:
    """Two sites, one of them single-class: no site AUC variance, so no score."""
    df = binary_frame(4, 2, decimals=2).rename(columns={"grp": "sex"})
    df["site"] = np.where(df["y_true"].to_numpy() == 0, "S1", "S2")
    mv = samd_direct(df)
    assert mv.value is None
    assert "site:" in (mv.reason or "") and "at least 2" in (mv.reason or "")
    assert {e["site"] for e in mv.details["site_excluded"]} >= {"S1", "S2"}


@pytest.mark.parametrize("fixture", [BIN, MC6])
def test_samd_through_the_runner(fixture: str) -> None:
    data = FIXTURES / f"{fixture}.csv"
    f = run(data, samd_control(min_samples=30))[0]
    mv = samd_direct(data)
    assert f.status in ("pass", "fail"), f.message
    assert close(f.value, mv.value)
    assert f.details["components"] == mv.details["components"]
    # a composite has no per-group value; the groups are listed with their sizes
    assert {g.group: g.value for g in f.groups} == {"F": None, "M": None}
    assert sum(g.n for g in f.groups) == len(pd.read_csv(data))


@pytest.mark.parametrize("n_bins", [2, 4, 5, 8, 10, 20, 25, 50, 100])
def test_scores_on_every_edge(n_bins: int) -> None:
    """A score written as the decimal k/n_bins lies in bin k (the documented [lo, hi)),
    a score 1e-9 below it in bin k − 1, and 1.0 in the last bin."""
    from decimal import Decimal

    from fairpolicy.metrics.scores import bin_index

    ks = np.arange(n_bins + 1)
    written = np.array([float(str(Decimal(int(k)) / Decimal(n_bins))) for k in ks])
    assert (bin_index(written, n_bins) == np.minimum(ks, n_bins - 1)).all()
    below = written[1:] - 1e-9
    assert (bin_index(below, n_bins) == ks[1:] - 1).all()
    # linspace's edges, which the libraries use, put some decimal edges in the bin below
    lib = np.clip(np.digitize(written, np.linspace(0, 1, n_bins + 1)) - 1, 0, n_bins - 1)
    if n_bins == 10:
        assert (lib != np.minimum(ks, n_bins - 1)).sum() == 3  # 0.3, 0.6, 0.7


def test_decile_scores_bin_upward_in_the_ece() -> None:
    """COMPAS-like decile scores: every score sits on an edge; the ECE uses bin k for k/10."""
    from fairpolicy.metrics.scores import ScoreDist, _ece

    values = np.round(np.arange(11) / 10, 1)
    pos = np.array([0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1])
    d = ScoreDist(values=values, pos=pos, neg=1 - pos)
    expected = (
        sum(abs(float(p) - float(v)) for p, v in zip(pos, values, strict=True))
        - abs(float(pos[-1]) - 1.0)
        - abs(float(pos[-2]) - 0.9)
    )
    # bins 0..8 hold one score each; the last bin holds 0.9 and 1.0
    last = abs((pos[-1] + pos[-2]) / 2 - 0.95) * 2
    assert _ece(d, 10) == pytest.approx((expected + last) / 11)
