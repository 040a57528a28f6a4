"""Overall performance and data checks (metrics/performance.py) against scikit-learn / numpy.

The performance scores are computed on the compared rows (rows with a missing
group value are not compared), so each oracle calls scikit-learn on exactly
those rows, with its default label set and ``zero_division=0``; per-group
values call it on each group's rows.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from fairpolicy.results import Finding
from fairpolicy.runner import check
from tests.helpers import control as yaml_control
from tests.helpers import write_policy

TOL = 1e-12
SKLEARN = {"precision_score": precision_score, "recall_score": recall_score, "f1_score": f1_score}


def make(
    seed: int, k: int, sizes: dict[str, int], unknown: int = 10, labels: Any = None
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for i, (g, n) in enumerate(sizes.items()):
        y = rng.integers(0, k, n)
        wrong = rng.random(n) < 0.2 + 0.1 * i
        p = np.where(wrong, rng.integers(0, k, n), y)
        frames.append(pd.DataFrame({"y_true": y, "y_pred": p, "g": g}))
    df = pd.concat(frames, ignore_index=True)
    if labels is not None:
        df["y_true"] = [labels[v] for v in df["y_true"]]
        df["y_pred"] = [labels[v] for v in df["y_pred"]]
    df["g"] = df["g"].astype(object)
    df.loc[rng.choice(len(df), unknown, replace=False), "g"] = None
    return df


def sk(fn: Callable[..., float], y: Any, p: Any, **kw: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fn(y, p, **kw))


DATA = {
    "binary": make(1, 2, {"a": 200, "b": 350, "c": 120}),
    "k3": make(2, 3, {"a": 300, "b": 250}),
    "k5": make(3, 5, {"x": 400, "y": 150, "z": 90}),
    "text3": make(4, 3, {"a": 200, "b": 200}, labels=["cat", "dog", "emu"]),
}


@pytest.mark.parametrize("data", sorted(DATA))
@pytest.mark.parametrize("key", sorted(SKLEARN))
@pytest.mark.parametrize("average", ["binary", "macro", "micro", "weighted"])
def test_precision_recall_f1_match_sklearn(
    data: str, key: str, average: str, run: Callable[..., Finding]
) -> None:
    df = DATA[data]
    f = run(key, df, params={"average": average})
    known = df[df["g"].notna()]
    binary_ok = data == "binary"
    if average == "binary" and not binary_ok:
        assert f.value is None and f.status == "inconclusive"
        assert "average='binary' needs two classes" in (f.reason or "")
        return
    kw: dict[str, Any] = {"average": average, "zero_division": 0}
    assert f.value == pytest.approx(
        sk(SKLEARN[key], known["y_true"], known["y_pred"], **kw), abs=TOL
    )
    for g in f.groups:
        rows = known[known["g"] == g.group]
        assert g.value == pytest.approx(
            sk(SKLEARN[key], rows["y_true"], rows["y_pred"], **kw), abs=TOL
        )
    assert f.worst_group == min(f.groups, key=lambda g: g.value).group


@pytest.mark.parametrize("data", sorted(DATA))
def test_accuracy_matches_sklearn(data: str, run: Callable[..., Finding]) -> None:
    df = DATA[data]
    f = run("accuracy_score", df)
    known = df[df["g"].notna()]
    assert f.value == pytest.approx(accuracy_score(known["y_true"], known["y_pred"]), abs=TOL)
    assert f.details["rows"] == len(known)
    for g in f.groups:
        rows = known[known["g"] == g.group]
        assert g.value == pytest.approx(accuracy_score(rows["y_true"], rows["y_pred"]), abs=TOL)


def test_micro_average_is_accuracy(run: Callable[..., Finding]) -> None:
    df = DATA["k5"]
    acc = run("accuracy_score", df).value
    for key in SKLEARN:
        assert run(key, df, params={"average": "micro"}).value == pytest.approx(acc, abs=TOL)


def test_zero_division_classes_count_as_zero_and_are_named(run: Callable[..., Finding]) -> None:
    """Class 2 is never predicted: its precision is 0/0, averaged in as 0 (sklearn's
    zero_division=0) and named in details."""
    df = DATA["k3"].assign(y_pred=lambda d: d["y_pred"].replace(2, 0))
    known = df[df["g"].notna()]
    for avg in ("macro", "weighted"):
        f = run("precision_score", df, params={"average": avg})
        want = sk(precision_score, known["y_true"], known["y_pred"], average=avg, zero_division=0)
        assert f.value == pytest.approx(want, abs=TOL)
        assert f.details["zero_division_classes"] == ["2"]


def test_binary_without_predicted_positives_is_undefined_not_zero(
    run: Callable[..., Finding],
) -> None:
    df = pd.DataFrame({"y_true": [0, 1, 1, 0] * 3, "y_pred": [0] * 12, "g": list("aabb") * 3})
    f = run("precision_score", df)
    assert f.value is None and f.status == "inconclusive"
    assert "has no precision" in (f.reason or "")
    assert run("recall_score", df).value == 0.0  # defined: positives exist, none found
    # only one class anywhere and it is not label 1: no positive class to score
    only0 = df.assign(y_true=0)
    f = run("f1_score", only0)
    assert f.value is None and "needs two classes" in (f.reason or "")


def test_positive_label_picks_the_binary_class(run: Callable[..., Finding]) -> None:
    df = DATA["binary"]
    known = df[df["g"].notna()]
    for key, fn in SKLEARN.items():
        f = run(key, df, params={"positive_label": "0"})
        want = sk(fn, known["y_true"], known["y_pred"], pos_label=0, zero_division=0)
        assert f.value == pytest.approx(want, abs=TOL), key


def test_text_labels_need_an_average_other_than_binary(run: Callable[..., Finding]) -> None:
    df = make(5, 2, {"a": 100, "b": 100}, labels=["no", "yes"])
    f = run("recall_score", df)
    assert f.value is None and "set positive_label" in (f.reason or "")
    known = df[df["g"].notna()]
    f = run("recall_score", df, params={"positive_label": "no"})
    want = sk(recall_score, known["y_true"], known["y_pred"], pos_label="no")
    assert f.value == pytest.approx(want, abs=TOL) and f.details["positive_class"] == "no"
    f = run("recall_score", df, params={"average": "macro"})
    assert f.value == pytest.approx(
        sk(recall_score, known["y_true"], known["y_pred"], average="macro"), abs=TOL
    )


def test_a_declared_class_that_never_occurs_is_not_averaged(run: Callable[..., Finding]) -> None:
    """num_classes=4 on labels 0..2: scikit-learn's default label set (classes present in
    the labels or predictions) is used, so class 3 is not averaged in as 0."""
    df = DATA["k3"]
    known = df[df["g"].notna()]
    f = run("f1_score", df, params={"average": "macro", "num_classes": 4})
    assert f.details["classes"] == ["0", "1", "2", "3"]
    assert f.value == pytest.approx(
        sk(f1_score, known["y_true"], known["y_pred"], average="macro"), abs=TOL
    )


def test_reference_fixture_overall_accuracy(
    fixtures_dir: Path, run: Callable[..., Finding]
) -> None:
    df = pd.read_csv(fixtures_dir / "multiclass_6_2site.csv")
    f = run("accuracy_score", df, "site")
    assert f.value == pytest.approx(accuracy_score(df["y_true"], df["y_pred"]), abs=TOL)


# ---------------------------------------------------------------------------
# data checks on the labels


@pytest.mark.parametrize("data", sorted(DATA))
def test_class_imbalance_oracle(data: str, run: Callable[..., Finding]) -> None:
    df = DATA[data]
    f = run("class_imbalance", df, inputs={"target": "y_true"})
    counts = df.loc[df["g"].notna(), "y_true"].value_counts()
    assert f.value == pytest.approx(counts.min() / counts.max(), abs=TOL)
    assert f.details["class_counts"] == {str(k): int(v) for k, v in counts.items()}
    for g in f.groups:
        c = df.loc[df["g"] == g.group, "y_true"].value_counts()
        assert g.value == pytest.approx(c.min() / c.max(), abs=TOL)
    # binding the prediction as well changes nothing: only the target axis is read
    both = run("class_imbalance", df)
    assert both.value == f.value and both.details == f.details


def test_class_imbalance_edge_cases(run: Callable[..., Finding]) -> None:
    one = pd.DataFrame({"y_true": [1] * 8, "g": list("aabbaabb")})
    f = run("class_imbalance", one, inputs={"target": "y_true"})
    assert f.value == 0.0 and "only one class" in f.details["note"]  # Venturalitica's 0.0
    df = DATA["k3"]
    f = run("class_imbalance", df, params={"num_classes": 4}, inputs={"target": "y_true"})
    assert f.value == 0.0 and f.details["class_counts"]["3"] == 0  # a declared class is absent


def test_group_min_positive_rate_oracle(run: Callable[..., Finding]) -> None:
    df = DATA["binary"]
    f = run("group_min_positive_rate", df, inputs={"target": "y_true"})
    prev = df[df["g"].notna()].groupby("g")["y_true"].mean()
    assert {g.group: g.value for g in f.groups} == pytest.approx(prev.to_dict(), abs=TOL)
    assert f.value == pytest.approx(prev.min(), abs=TOL) and f.worst_group == prev.idxmin()
    assert f.details["positive_class"] == "1"


def test_group_min_positive_rate_positive_label(run: Callable[..., Finding]) -> None:
    df = make(6, 2, {"a": 100, "b": 80}, labels=["no", "yes"])
    f = run(
        "group_min_positive_rate", df, params={"positive_label": "no"}, inputs={"target": "y_true"}
    )
    prev = (df[df["g"].notna()]["y_true"] == "no").groupby(df["g"]).mean()
    assert f.value == pytest.approx(prev.min(), abs=TOL)
    f = run("group_min_positive_rate", df, inputs={"target": "y_true"})
    assert f.status == "error" and "positive_label" in f.message


def test_group_min_positive_rate_on_three_classes_names_class_imbalance(
    run: Callable[..., Finding],
) -> None:
    f = run("group_min_positive_rate", DATA["k3"], inputs={"target": "y_true"})
    assert f.status == "error" and "class_imbalance" in f.message


# ---------------------------------------------------------------------------
# data checks on the group sizes


SIZES = pd.DataFrame({"g": ["a"] * 60 + ["b"] * 25 + ["c"] * 10 + [None] * 5})


def test_min_group_share_and_group_size(run: Callable[..., Finding]) -> None:
    f = run("min_group_share", SIZES, inputs={})
    assert f.value == pytest.approx(0.10, abs=TOL) and f.worst_group == "c"
    assert {g.group: g.value for g in f.groups} == pytest.approx({"a": 0.6, "b": 0.25, "c": 0.1})
    # N counts the unknown rows; the share is also reported exactly (10/100)
    assert f.details == {"rows": 100, "unknown_n": 5, "exact_value": "1/10"}
    f = run("group_size", SIZES, inputs={})
    assert f.value == 10.0 and f.worst_group == "c"
    assert {g.group: g.value for g in f.groups} == {"a": 60.0, "b": 25.0, "c": 10.0}


def test_size_checks_see_groups_under_min_samples(run: Callable[..., Finding]) -> None:
    """A data check measures group sizes itself: min_samples drops no group (else a
    10-row group would vanish and a size floor would pass wrongly)."""
    f = run("group_size", SIZES, inputs={}, min_samples=30)
    assert f.value == 10.0
    f = run("min_group_share", SIZES, inputs={}, min_samples=30)
    assert f.value == pytest.approx(0.10, abs=TOL)


# ---------------------------------------------------------------------------
# Venturalitica policies port unchanged


def test_venturalitica_style_policy(tmp_path: Path) -> None:
    df = DATA["k3"].dropna(subset=["g"])
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    policy = write_policy(
        tmp_path,
        yaml_control("acc", "accuracy_score", "0.5", ">=", dimension="g"),
        yaml_control("f1", "f1_score", "0.5", ">=", dimension="g", average="macro"),
        yaml_control("ci", "class_imbalance", "0.5", ">=", dimension="g"),
        yaml_control("rec", "recall_score", "0.99", ">=", dimension="g", average="weighted"),
    )
    res = check(policy, data)
    by_id = {f.control_id: f for f in res.findings}
    assert by_id["acc"].value == pytest.approx(accuracy_score(df["y_true"], df["y_pred"]), abs=TOL)
    assert by_id["f1"].value == pytest.approx(
        sk(f1_score, df["y_true"], df["y_pred"], average="macro"), abs=TOL
    )
    assert [by_id[k].status for k in ("acc", "f1", "ci", "rec")] == ["pass", "pass", "pass", "fail"]
