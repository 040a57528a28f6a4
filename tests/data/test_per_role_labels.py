"""Target and prediction with different label vocabularies (issue 16).

Credit data often has ``outcome ∈ {repaid, default}`` and ``decision ∈ {approve, deny}``.
``positive_label.target`` / ``positive_label.prediction`` name each column's positive
label; the shared ``positive_label`` stays. Properties: for every binary count metric in
the registry, the value with per-role labels equals the value on the same data coded
1/0 (and fairlearn's where it has the metric), on every engine and input type; without
the props the run stops saying the two columns use different labels and showing both
props — never a silent number.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import fairpolicy
from fairpolicy.metrics.registry import REGISTRY
from tests.data.test_engines import spark_session as spark_session

#: binary count metrics (no scores): the ones a per-role vocabulary applies to
BINARY = sorted(
    k
    for k, s in REGISTRY.items()
    if k == s.key
    and s.kind == "classification"
    and "multiclass" not in s.tasks
    and not s.needs_scores
    and "prediction" in s.inputs
)


def frame(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M", "X"], n)
    y = rng.random(n) < 0.55
    p = rng.random(n) < np.where(sex == "F", 0.45, 0.6)
    return pd.DataFrame(
        {
            "outcome": np.where(y, "repaid", "default"),
            "decision": np.where(p, "approve", "deny"),
            "y": y.astype(int),
            "p": p.astype(int),
            "sex": sex,
        }
    )


def control(key: str, target: str, prediction: str, **props: str) -> dict[str, Any]:
    base = {
        "metric_key": key,
        "threshold": "0.5",
        "operator": "<",
        "input.target": target,
        "input.prediction": prediction,
        "input.dimension": "sex",
        "min_samples": "1",
        **props,
    }
    if REGISTRY[key].value_range[1] == 1.0 and "ratio" in key:
        base["operator"] = ">="
    return {"control-id": "c", "props": [{"name": k, "value": v} for k, v in base.items()]}


ROLES = {"positive_label.target": "repaid", "positive_label.prediction": "approve"}


@pytest.mark.parametrize("key", BINARY)
def test_per_role_labels_equal_the_coded_run_for_every_binary_metric(key: str) -> None:
    df = frame(1)
    coded = fairpolicy.check([control(key, "y", "p")], df).findings[0]
    named = fairpolicy.check([control(key, "outcome", "decision", **ROLES)], df).findings[0]
    assert named.status == coded.status, (named, coded)
    if coded.value is None:
        assert named.value is None
    else:
        assert named.value == coded.value


def test_fairlearn_oracle_and_every_engine_and_input(tmp_path: Path) -> None:
    from fairlearn.metrics import demographic_parity_ratio, equal_opportunity_difference

    df = frame(2)
    y, p = df["y"], df["p"]
    expect = {
        "demographic_parity_ratio": demographic_parity_ratio(y, p, sensitive_features=df.sex),
        "equal_opportunity_diff": equal_opportunity_difference(y, p, sensitive_features=df.sex),
    }
    csv, parquet = tmp_path / "d.csv", tmp_path / "d.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet)
    policy = [control(k, "outcome", "decision", **ROLES) for k in expect]
    for i, c in enumerate(policy):
        c["control-id"] = f"c{i}"
    runs = [(str(csv), "embedded"), (str(csv), "duckdb"), (str(parquet), "embedded"), (df, "auto")]
    for data, engine in runs:
        got = fairpolicy.check(policy, data, engine=engine)
        for f, key in zip(got.findings, expect, strict=True):
            assert f.value == pytest.approx(expect[key], abs=1e-12), (engine, key)


def test_shared_positive_label_covers_the_role_not_named() -> None:
    df = frame(3)
    df["decision"] = np.where(df["p"] == 1, "repaid", "default")  # same vocabulary
    one = fairpolicy.check(
        [control("equal_opportunity_diff", "outcome", "decision", positive_label="repaid")], df
    ).findings[0]
    split = fairpolicy.check(
        [
            control(
                "equal_opportunity_diff",
                "outcome",
                "decision",
                **{"positive_label.target": "repaid", "positive_label": "repaid"},
            )
        ],
        df,
    ).findings[0]
    assert one.value == split.value is not None


def test_different_vocabularies_without_the_props_name_both(tmp_path: Path) -> None:
    got = fairpolicy.check([control("demographic_parity_diff", "outcome", "decision")], frame(4))
    f = got.findings[0]
    assert f.status == "error" and got.exit_code == 2
    text = f"{f.message} {f.reason}"
    assert "use different labels" in text
    assert "positive_label.target" in text and "positive_label.prediction" in text
    assert "default or repaid" in text and "approve or deny" in text


@pytest.mark.parametrize(
    ("props", "fragment"),
    [
        (
            {"positive_label.target": "repayed", "positive_label.prediction": "approve"},
            "is not one of the labels",
        ),
        ({"positive_label.target": "repaid"}, "has no positive label"),
    ],
)
def test_a_wrong_or_missing_role_label_is_an_error(props: dict[str, str], fragment: str) -> None:
    got = fairpolicy.check(
        [control("equal_opportunity_diff", "outcome", "decision", **props)], frame(5)
    )
    f = got.findings[0]
    assert got.exit_code == 2 and fragment in f"{f.message} {f.reason}"


def test_per_role_labels_on_a_multiclass_metric_are_refused() -> None:
    got = fairpolicy.check([control("weighted_f1_gap", "outcome", "decision", **ROLES)], frame(6))
    f = got.findings[0]
    assert got.exit_code == 2 and "apply to binary metrics" in f"{f.message} {f.reason}"


@pytest.mark.skipif(
    importlib.util.find_spec("pyspark") is None or shutil.which("java") is None,
    reason="pyspark or java missing",
)
def test_per_role_labels_on_spark(tmp_path: Path, spark_session: Any) -> None:
    df = frame(7)
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    policy = [control("equalized_odds_diff", "outcome", "decision", **ROLES)]
    coded = fairpolicy.check([control("equalized_odds_diff", "y", "p")], df).findings[0]
    got = fairpolicy.check(policy, str(csv), engine="spark").findings[0]
    assert got.value == pytest.approx(coded.value, abs=1e-12)


def test_numeric_role_labels_however_written() -> None:
    """A float column of whole numbers next to a text column: `1.0` and `1` name the same
    label; `0.5` names none (exit 2, never truncated to a class)."""
    df = frame(8)
    df["y_float"] = df["y"].astype(float)
    props = {"positive_label.prediction": "approve"}
    one = fairpolicy.check(
        [
            control(
                "equal_opportunity_diff",
                "y_float",
                "decision",
                **props,
                **{"positive_label.target": "1.0"},
            )
        ],
        df,
    ).findings[0]
    coded = fairpolicy.check([control("equal_opportunity_diff", "y", "p")], df).findings[0]
    assert one.value == coded.value is not None
    half = fairpolicy.check(
        [
            control(
                "equal_opportunity_diff",
                "y_float",
                "decision",
                **props,
                **{"positive_label.target": "0.5"},
            )
        ],
        df,
    )
    assert half.exit_code == 2
