"""Oracle tests: every metric against scikit-learn / fairlearn on masked per-group subsets.

Random data (numpy Generator, fixed seeds) in several shapes: 2–5 groups, K = 2..6
classes, group sizes 30–2000, integer or string labels, integer or string group
names, and one sparse design where some groups lack some classes. For each group
the oracle calls scikit-learn/fairlearn on that group's rows only; fairpolicy
must agree to 1e-12 on per-group values, per-class gaps and headline values.
A few strategies with no library counterpart (total-variation ``micro``,
``one-vs-rest``, prevalence ``weighted``) are checked against plain pandas.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    demographic_parity_ratio,
    equal_opportunity_difference,
    equalized_odds_difference,
    equalized_odds_ratio,
    false_negative_rate,
    false_positive_rate,
    selection_rate,
)
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    precision_recall_fscore_support,
    precision_score,
    recall_score,
)

from fairpolicy.policy.schema import Control
from fairpolicy.results import Finding
from fairpolicy.stats import INTERSECTION_SEP

TOL = 1e-12
NAN = float("nan")

BINARY_KEYS = (
    "demographic_parity_diff",
    "demographic_parity_ratio",
    "equal_opportunity_diff",
    "equalized_odds_diff",
    "equalized_odds_ratio",
    "average_odds_diff",
    "predictive_parity_diff",
    "fpr_diff",
    "fnr_diff",
    "accuracy_diff",
)

#: (control id, metric key, params) evaluated on every case
MULTICLASS_CONTROLS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("mdp_max", "multiclass_demographic_parity", {"aggregation": "max"}),
    ("mdp_macro", "multiclass_demographic_parity", {"aggregation": "macro"}),
    ("meo", "multiclass_equal_opportunity", {}),
    ("macro_eo", "macro_equal_opportunity_multiclass", {}),
    ("wdp_macro", "weighted_demographic_parity_multiclass", {"strategy": "macro"}),
    ("wdp_weighted", "weighted_demographic_parity_multiclass", {"strategy": "weighted"}),
    ("wdp_micro", "weighted_demographic_parity_multiclass", {"strategy": "micro"}),
    ("wdp_ovr", "weighted_demographic_parity_multiclass", {"strategy": "one-vs-rest"}),
    ("micro_eo", "micro_equalized_odds_multiclass", {}),
    ("ppm_macro", "predictive_parity_multiclass", {"strategy": "macro"}),
    ("ppm_weighted", "predictive_parity_multiclass", {"strategy": "weighted"}),
    ("conf_wga", "multiclass_confusion_metrics", {"value": "worst_group_accuracy"}),
    ("conf_gap", "multiclass_confusion_metrics", {"value": "accuracy_gap"}),
    ("conf_rec", "multiclass_confusion_metrics", {"value": "min_class_recall"}),
    ("conf_prec", "multiclass_confusion_metrics", {"value": "min_class_precision"}),
    ("wf1", "weighted_f1_gap", {}),
    ("mf1", "macro_f1_gap", {}),
    ("pcf1", "per_class_f1_gap", {}),
)

STRING_CLASSES = ("zebra", "apple", "mango", "kiwi", "fig", "date")
#: string binary labels whose sorted order puts the positive class first (index 0)
BINARY_STRINGS = ("denied", "approved")
POSITIVE_STRING = "approved"
STRING_GROUPS = ("grp B", "grp A", "Ωmega", "z-3", "m/é")
INT_GROUPS = (10, 2, 33, 4, 5)  # sorted as text: "10" < "2" < "33" < "4" < "5"


@dataclass(frozen=True)
class Case:
    name: str
    seed: int
    n_groups: int
    k: int
    sizes: tuple[int, int]
    str_labels: bool = False
    str_groups: bool = False
    #: Dirichlet concentration of each group's class mix (small = sparse classes)
    alpha: float = 2.0

    @property
    def positive(self) -> Any:
        return POSITIVE_STRING if self.str_labels else 1


CASES = (
    Case("bin_2g", 1, 2, 2, (30, 2000)),
    Case("bin_3g_str", 2, 3, 2, (30, 500), str_labels=True, str_groups=True),
    Case("bin_5g_intgroups", 3, 5, 2, (30, 300)),
    Case("bin_4g_large", 11, 4, 2, (800, 2000), str_groups=True),
    Case("mc_3g_k3", 4, 3, 3, (100, 2000)),
    Case("mc_4g_k4_str", 5, 4, 4, (30, 800), str_labels=True, str_groups=True),
    Case("mc_5g_k6_sparse", 6, 5, 6, (30, 120), alpha=0.3),
    # classes missing from most groups: some per-class gaps are not comparable at all
    Case("mc_3g_k6_very_sparse", 36, 3, 6, (30, 60), alpha=0.1),
    Case("mc_2g_k5", 7, 2, 5, (500, 2000)),
    Case("mc_4g_k6_str", 8, 4, 6, (30, 2000), str_labels=True, alpha=0.5),
    Case("mc_3g_k2", 9, 3, 2, (30, 400), str_groups=True),
)


def make_data(case: Case) -> pd.DataFrame:
    rng = np.random.default_rng(case.seed)
    if case.str_labels:
        names: Sequence[Any] = BINARY_STRINGS if case.k == 2 else STRING_CLASSES[: case.k]
    else:
        names = list(range(case.k))
    group_names = STRING_GROUPS if case.str_groups else INT_GROUPS
    frames = []
    for g in range(case.n_groups):
        n = int(rng.integers(case.sizes[0], case.sizes[1] + 1))
        p_true = rng.dirichlet(np.full(case.k, case.alpha))
        y_t = rng.choice(case.k, size=n, p=p_true)
        correct = rng.random(n) < rng.uniform(0.3, 0.95)
        noise = rng.choice(case.k, size=n, p=rng.dirichlet(np.full(case.k, case.alpha)))
        y_p = np.where(correct, y_t, noise)
        frames.append(
            pd.DataFrame(
                {
                    "y_true": [names[i] for i in y_t],
                    "y_pred": [names[i] for i in y_p],
                    "grp": [group_names[g]] * n,
                }
            )
        )
    df = pd.concat(frames, ignore_index=True)
    return df.sample(frac=1.0, random_state=case.seed).reset_index(drop=True)


# ---------------------------------------------------------------------------
# helpers


def assert_matches(ours: Any, oracle: Any, where: str = "") -> None:
    """Recursive comparison; an oracle NaN means "undefined", i.e. ours is None."""
    if isinstance(oracle, dict):
        assert set(ours) == set(oracle), f"{where}: keys {sorted(ours)} != {sorted(oracle)}"
        for k in oracle:
            assert_matches(ours[k], oracle[k], f"{where}[{k}]")
    elif isinstance(oracle, list | tuple | np.ndarray):
        assert len(ours) == len(oracle), f"{where}: length {len(ours)} != {len(oracle)}"
        for i, (a, b) in enumerate(zip(ours, oracle, strict=True)):
            assert_matches(a, b, f"{where}[{i}]")
    elif oracle is None or (isinstance(oracle, float) and math.isnan(oracle)):
        assert ours is None, f"{where}: ours {ours!r}, oracle undefined"
    else:
        assert ours is not None, f"{where}: ours is None, oracle {oracle!r}"
        assert abs(ours - float(oracle)) <= TOL, f"{where}: ours {ours!r} != oracle {oracle!r}"


def by_group(df: pd.DataFrame, fn: Callable[[pd.DataFrame], Any], col: str = "grp") -> dict:
    return {str(g): fn(sub) for g, sub in df.groupby(col, sort=False)}


def gap_of(values: dict[str, float]) -> float:
    v = [x for x in values.values() if not math.isnan(x)]
    return max(v) - min(v) if len(v) >= 2 else NAN


def class_gaps(mat: np.ndarray) -> np.ndarray:
    """Per-class max − min over the groups (rows) where the cell is not NaN."""
    out = np.full(mat.shape[1], NAN)
    for j in range(mat.shape[1]):
        col = mat[:, j][~np.isnan(mat[:, j])]
        if col.size >= 2:
            out[j] = col.max() - col.min()
    return out


def finding_groups(f: Finding) -> dict[str, Any]:
    return {g.group: g.value for g in f.groups}


Run = tuple[Case, pd.DataFrame, dict[str, Finding]]


@pytest.fixture(scope="module")
def run_case(
    control: Callable[..., Control], evaluate_many: Callable[..., Any]
) -> Callable[[Case], Run]:
    """``run_case(case)``: one ``check`` per case with every applicable control (memoised)."""
    cache: dict[str, Run] = {}

    def run(case: Case) -> Run:
        if case.name not in cache:
            df = make_data(case)
            common = {"positive_label": POSITIVE_STRING} if case.str_labels else {}
            controls = [
                control(key, "grp", {**common, **params}, control_id=cid)
                for cid, key, params in MULTICLASS_CONTROLS
            ]
            if case.k == 2:
                controls += [control(key, "grp", common, control_id=key) for key in BINARY_KEYS]
            res = evaluate_many(controls, df)
            findings = {f.control_id: f for f in res.findings}
            for f in findings.values():
                assert f.status != "error", f"{f.control_id}: {f.message}"
            cache[case.name] = (case, df, findings)
        return cache[case.name]

    return run


BINARY_CASES = [c for c in CASES if c.k == 2]
each_case = pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
each_binary_case = pytest.mark.parametrize("case", BINARY_CASES, ids=[c.name for c in BINARY_CASES])


def classes_of(f: Finding, df: pd.DataFrame) -> list[Any]:
    """Our class labels (strings) mapped back to the DataFrame's label values."""
    values = {str(v): v for v in pd.unique(df[["y_true", "y_pred"]].to_numpy().ravel())}
    return [values[c] for c in f.classes]


# ---------------------------------------------------------------------------
# binary metrics


@each_binary_case
def test_binary_rates_and_gaps(case: Case, run_case: Callable[[Case], Run]) -> None:
    _, df, fs = run_case(case)
    pos = case.positive
    yt01 = (df["y_true"] == pos).astype(int).to_numpy()
    yp01 = (df["y_pred"] == pos).astype(int).to_numpy()
    d = df.assign(t=yt01, p=yp01)

    def rate(fn: Callable[[np.ndarray, np.ndarray], float]) -> dict[str, float]:
        return by_group(d, lambda s: float(fn(s["t"].to_numpy(), s["p"].to_numpy())))

    oracle = {
        "selection_rate": rate(lambda t, p: selection_rate(t, p)),
        "tpr": rate(lambda t, p: recall_score(t, p, zero_division=np.nan)),
        "fpr": rate(lambda t, p: false_positive_rate(t, p)),
        "fnr": rate(lambda t, p: false_negative_rate(t, p)),
        "ppv": rate(lambda t, p: precision_score(t, p, zero_division=np.nan)),
        "accuracy": rate(lambda t, p: accuracy_score(t, p)),
    }
    # every rate is defined on these seeds, so fairlearn's own functions apply
    for name, vals in oracle.items():
        assert not any(math.isnan(v) for v in vals.values()), f"{case.name}: {name} undefined"

    for key, rate_name in (
        ("demographic_parity_diff", "selection_rate"),
        ("equal_opportunity_diff", "tpr"),
        ("fpr_diff", "fpr"),
        ("fnr_diff", "fnr"),
        ("predictive_parity_diff", "ppv"),
        ("accuracy_diff", "accuracy"),
    ):
        f = fs[key]
        assert_matches(finding_groups(f), oracle[rate_name], f"{case.name}/{key}/groups")
        assert_matches(f.value, gap_of(oracle[rate_name]), f"{case.name}/{key}")

    sr = oracle["selection_rate"]
    assert_matches(fs["demographic_parity_ratio"].value, min(sr.values()) / max(sr.values()))
    tpr_gap, fpr_gap = gap_of(oracle["tpr"]), gap_of(oracle["fpr"])
    assert_matches(fs["equalized_odds_diff"].value, max(tpr_gap, fpr_gap))
    assert_matches(fs["average_odds_diff"].value, (tpr_gap + fpr_gap) / 2)
    ratios = [min(v.values()) / max(v.values()) for v in (oracle["tpr"], oracle["fpr"])]
    assert_matches(fs["equalized_odds_ratio"].value, min(ratios))

    # fairlearn's own group metrics (between_groups)
    sf = df["grp"].astype(str)
    fl = {
        "demographic_parity_diff": demographic_parity_difference(yt01, yp01, sensitive_features=sf),
        "demographic_parity_ratio": demographic_parity_ratio(yt01, yp01, sensitive_features=sf),
        "equal_opportunity_diff": equal_opportunity_difference(yt01, yp01, sensitive_features=sf),
        "equalized_odds_diff": equalized_odds_difference(yt01, yp01, sensitive_features=sf),
        "average_odds_diff": equalized_odds_difference(
            yt01, yp01, sensitive_features=sf, agg="mean"
        ),
        "equalized_odds_ratio": equalized_odds_ratio(yt01, yp01, sensitive_features=sf),
    }
    for key, expected in fl.items():
        assert_matches(fs[key].value, float(expected), f"{case.name}/fairlearn/{key}")

    # MetricFrame over sklearn metrics gives the same per-group values
    mf = MetricFrame(
        metrics={
            "accuracy": accuracy_score,
            "ppv": partial(precision_score, zero_division=0),
        },
        y_true=yt01,
        y_pred=yp01,
        sensitive_features=sf,
    )
    assert_matches(fs["accuracy_diff"].value, float(mf.difference()["accuracy"]))
    assert_matches(fs["predictive_parity_diff"].value, float(mf.difference()["ppv"]))
    assert_matches(finding_groups(fs["accuracy_diff"]), mf.by_group["accuracy"].to_dict())


# ---------------------------------------------------------------------------
# multi-class metrics (run on K = 2 too)


def _per_group_matrix(
    df: pd.DataFrame, labels: list[Any], fn: Callable[..., np.ndarray]
) -> tuple[list[str], np.ndarray]:
    names, rows = [], []
    for g, s in df.groupby("grp", sort=False):
        names.append(str(g))
        rows.append(fn(s["y_true"], s["y_pred"], labels=labels, average=None, zero_division=np.nan))
    return names, np.asarray(rows, dtype=np.float64)


def _as_dict(names: list[str], mat: np.ndarray) -> dict[str, list[float]]:
    return {g: list(mat[i]) for i, g in enumerate(names)}


@each_case
def test_per_class_selection_rates(case: Case, run_case: Callable[[Case], Run]) -> None:
    _, df, fs = run_case(case)
    f = fs["mdp_max"]
    labels = classes_of(f, df)
    mf = MetricFrame(
        metrics={str(c): partial(selection_rate, pos_label=c) for c in labels},
        y_true=df["y_true"],
        y_pred=df["y_pred"],
        sensitive_features=df["grp"].astype(str),
    )
    per_group = {g: [float(mf.by_group.loc[g, str(c)]) for c in labels] for g in mf.by_group.index}
    diffs = [float(mf.difference()[str(c)]) for c in labels]
    assert_matches(f.details["per_group"], per_group, f"{case.name}/per_group")
    assert_matches(f.details["per_class_gap"], diffs, f"{case.name}/per_class_gap")
    assert_matches(f.value, max(diffs))
    assert_matches(fs["mdp_macro"].value, sum(diffs) / len(diffs))
    assert_matches(fs["wdp_macro"].value, max(diffs))


@each_case
def test_per_class_recall_gaps(case: Case, run_case: Callable[[Case], Run]) -> None:
    _, df, fs = run_case(case)
    f = fs["meo"]
    labels = classes_of(f, df)
    names, rec = _per_group_matrix(df, labels, recall_score)
    gaps = class_gaps(rec)
    assert_matches(f.details["per_group"], _as_dict(names, rec), f"{case.name}/recall")
    assert_matches(f.details["per_class_gap"], gaps, f"{case.name}/recall gaps")
    assert_matches(f.value, np.nanmax(gaps))
    assert_matches(fs["macro_eo"].value, np.nanmean(gaps))
    undefined = {(c["group"], c["class"]) for c in f.details.get("undefined_cells", [])}
    expected = {
        (g, str(labels[j])) for i, g in enumerate(names) for j in np.flatnonzero(np.isnan(rec[i]))
    }
    assert undefined == expected


@each_case
def test_per_class_precision_gaps(case: Case, run_case: Callable[[Case], Run]) -> None:
    _, df, fs = run_case(case)
    f = fs["ppm_macro"]
    labels = classes_of(f, df)
    names, prec = _per_group_matrix(df, labels, precision_score)
    gaps = class_gaps(prec)
    assert_matches(f.details["per_group"], _as_dict(names, prec), f"{case.name}/precision")
    assert_matches(f.details["per_class_gap"], gaps, f"{case.name}/precision gaps")
    assert_matches(f.value, np.nanmax(gaps))
    # weighted: class gaps weighted by the pooled predicted-class share
    share = df["y_pred"].value_counts(normalize=True).reindex(labels, fill_value=0.0).to_numpy()
    ok = ~np.isnan(gaps)
    assert_matches(fs["ppm_weighted"].value, float((share[ok] * gaps[ok]).sum() / share[ok].sum()))


@each_case
def test_f1_family(case: Case, run_case: Callable[[Case], Run]) -> None:
    _, df, fs = run_case(case)
    labels = classes_of(fs["pcf1"], df)

    def per_group(**kw: Any) -> dict[str, float]:
        return by_group(df, lambda s: float(f1_score(s["y_true"], s["y_pred"], **kw)))

    # weighted F1: sklearn's default label set; classes only predicted carry weight 0
    weighted = per_group(average="weighted", zero_division=0)
    assert_matches(finding_groups(fs["wf1"]), weighted, f"{case.name}/weighted F1")
    assert_matches(fs["wf1"].value, gap_of(weighted))
    # macro F1: averaged over the classes present in the group's labels or predictions,
    # which is sklearn's default (no `labels=`)
    macro = per_group(average="macro", zero_division=0)
    assert_matches(finding_groups(fs["mf1"]), macro, f"{case.name}/macro F1")
    assert_matches(fs["mf1"].value, gap_of(macro))
    # per-class F1: NaN (undefined) only where the class is absent from labels and predictions
    names, f1 = _per_group_matrix(df, labels, f1_score)
    gaps = class_gaps(f1)
    pc = fs["pcf1"]
    assert_matches(pc.details["per_group"], _as_dict(names, f1), f"{case.name}/per-class F1")
    assert_matches(pc.details["per_class_gap"], gaps)
    assert_matches(pc.value, np.nanmax(gaps))
    assert_matches(fs["mf1"].details["per_group_per_class_f1"], _as_dict(names, f1))
    assert_matches(fs["wf1"].details["per_group_per_class_f1"], _as_dict(names, f1))


@each_case
def test_accuracy_family(case: Case, run_case: Callable[[Case], Run]) -> None:
    _, df, fs = run_case(case)
    acc = by_group(df, lambda s: float(accuracy_score(s["y_true"], s["y_pred"])))
    assert_matches(finding_groups(fs["micro_eo"]), acc, f"{case.name}/accuracy")
    assert_matches(fs["micro_eo"].value, 2 * gap_of(acc))
    assert_matches(fs["conf_wga"].value, min(acc.values()))
    assert_matches(fs["conf_gap"].value, gap_of(acc))
    perf = fs["conf_wga"].details["per_group_performance"]
    assert_matches({g: v["accuracy"] for g, v in perf.items()}, acc)
    n = df.groupby("grp").size()
    assert {g: v["n"] for g, v in perf.items()} == {str(g): int(c) for g, c in n.items()}

    # pooled per-class precision/recall over every compared row
    labels = classes_of(fs["conf_wga"], df)
    p, r, _, support = precision_recall_fscore_support(
        df["y_true"], df["y_pred"], labels=labels, average=None, zero_division=np.nan
    )
    per_class = fs["conf_wga"].details["per_class_metrics"]
    assert_matches([per_class[str(c)]["precision"] for c in labels], p)
    assert_matches([per_class[str(c)]["recall"] for c in labels], r)
    assert [per_class[str(c)]["support"] for c in labels] == [int(s) for s in support]
    assert_matches(fs["conf_rec"].value, np.nanmin(r))
    assert_matches(fs["conf_prec"].value, np.nanmin(p))


@each_case
def test_demographic_parity_strategies(case: Case, run_case: Callable[[Case], Run]) -> None:
    """Strategies without a library counterpart, against pandas crosstabs."""
    _, df, fs = run_case(case)
    labels = classes_of(fs["wdp_micro"], df)
    ct = pd.crosstab(df["grp"].astype(str), df["y_pred"]).reindex(columns=labels, fill_value=0)
    sr = ct.div(ct.sum(axis=1), axis=0)
    gaps = (sr.max() - sr.min()).to_numpy()
    # weighted: Σ_c P(Ŷ = c) · gap_c
    share = (ct.sum() / ct.to_numpy().sum()).to_numpy()
    assert_matches(fs["wdp_weighted"].value, float((share * gaps).sum()))
    # micro: the largest total-variation distance between two groups' prediction mixes
    rows = sr.to_numpy()
    tv = [
        0.5 * np.abs(rows[a] - rows[b]).sum()
        for a in range(len(rows))
        for b in range(a + 1, len(rows))
    ]
    assert_matches(fs["wdp_micro"].value, max(tv))
    # one-vs-rest: |P(Ŷ = c | A = g) − P(Ŷ = c | A ≠ g)|
    ovr = []
    for g in ct.index:
        rest = ct.drop(index=g).sum()
        ovr.append(np.abs(sr.loc[g].to_numpy() - (rest / rest.sum()).to_numpy()).max())
    assert_matches(fs["wdp_ovr"].value, max(ovr))


# ---------------------------------------------------------------------------
# intersectional dimensions


@pytest.mark.parametrize("seed", [21, 22, 23])
def test_intersectional_groups_match_pandas_groupby(
    seed: int, control: Callable[..., Control], evaluate_many: Callable[..., Any]
) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    k = 3
    df = pd.DataFrame(
        {
            "y_true": rng.integers(0, k, n),
            "a": rng.choice(["F", "M", "X"], n, p=[0.45, 0.45, 0.1]),
            "b": rng.choice([1, 2, 3, 4], n),
        }
    )
    df["y_pred"] = np.where(rng.random(n) < 0.7, df["y_true"], rng.integers(0, k, n))
    df["bin_t"] = (df["y_true"] == 1).astype(int)
    df["bin_p"] = (df["y_pred"] == 1).astype(int)
    bin_kw = {"target": "bin_t", "prediction": "bin_p", "min_samples": 1}
    res = evaluate_many(
        [
            control("demographic_parity_diff", "a,b", control_id="dp", **bin_kw),
            control("equal_opportunity_diff", "a,b", control_id="eo", **bin_kw),
            control("multiclass_equal_opportunity", "a,b", control_id="meo", min_samples=1),
            control("micro_equalized_odds_multiclass", "a,b", control_id="acc", min_samples=1),
            control("weighted_f1_gap", "b,a", control_id="wf1_ba", min_samples=1),
        ],
        df,
    )
    fs = {f.control_id: f for f in res.findings}
    grouped = df.groupby(["a", "b"])

    def name(key: tuple[Any, ...]) -> str:
        return INTERSECTION_SEP.join(str(v) for v in key)

    sr = {name(k): float(s["bin_p"].mean()) for k, s in grouped}
    tpr = {name(k): float(recall_score(s["bin_t"], s["bin_p"])) for k, s in grouped}
    acc = {name(k): float(accuracy_score(s["y_true"], s["y_pred"])) for k, s in grouped}
    sizes = {name(k): len(s) for k, s in grouped}
    assert_matches(finding_groups(fs["dp"]), sr)
    assert_matches(fs["dp"].value, gap_of(sr))
    assert_matches(finding_groups(fs["eo"]), tpr)
    assert_matches(fs["eo"].value, gap_of(tpr))
    assert_matches(finding_groups(fs["acc"]), acc)
    assert {g.group: g.n for g in fs["acc"].groups} == sizes
    rec = {
        name(key): list(recall_score(s["y_true"], s["y_pred"], labels=[0, 1, 2], average=None))
        for key, s in grouped
    }
    assert_matches(fs["meo"].details["per_group"], rec)
    # the column order of the dimension names the groups ("b & a")
    wf1 = {
        INTERSECTION_SEP.join((str(b), str(a))): float(
            f1_score(s["y_true"], s["y_pred"], average="weighted", zero_division=0)
        )
        for (a, b), s in grouped
    }
    assert_matches(finding_groups(fs["wf1_ba"]), wf1)
