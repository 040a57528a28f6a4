"""Regression metrics (the fairness-metrics tutorial) against pandas/scikit-learn per-group oracles.

Each metric goes through the real pipeline (numeric binding → per-group sums →
metric) and must agree with a per-group oracle computed on the masked rows:
pandas ``groupby`` means and scikit-learn ``mean_absolute_error`` /
``root_mean_squared_error``, to 1e-12 (relative where values are large). The
fairness-metrics tutorial's own ``regression_fairness_metrics`` (copied below) must agree on two
groups; a hand-computed case pins the formulas; undefined cases are explicit.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mean_absolute_error, root_mean_squared_error

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.metrics.regression import mae_parity, mean_prediction_parity
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.results import Finding
from fairpolicy.runner import check
from fairpolicy.stats import UNKNOWN_GROUP, GroupStats, RegressionStats

TOL = 1e-12
KEYS = ("mean_prediction_parity", "residual_parity", "mae_parity", "rmse_parity")


def reg_control(key: str, cid: str | None = None, min_samples: int = 1, **inputs: str) -> Control:
    bound = {"target": "y", "prediction": "yhat", "dimension": "g", **inputs}
    return Control(
        control_id=cid or key,
        metric_key=key,
        metric_key_as_written=key,
        threshold=Threshold(value=1.0),
        operator=Operator.LT,
        inputs=bound,
        params={},
        min_samples=min_samples,
    )


def run(df: pd.DataFrame, min_samples: int = 1) -> dict[str, Finding]:
    controls = tuple(reg_control(k, min_samples=min_samples) for k in KEYS)
    res = check(Policy(form="list", controls=controls), df)
    return {f.control_id: f for f in res.findings}


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def by_group(f: Finding) -> dict[str, float | None]:
    return {g.group: g.value for g in f.groups}


# ---------------------------------------------------------------------------
# oracle: pandas groupby + scikit-learn per group


def oracle(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    """statistic -> {group: value}, each from the group's own rows."""
    out: dict[str, dict[str, float]] = {
        "mean_prediction_parity": {},
        "residual_parity": {},
        "mae_parity": {},
        "rmse_parity": {},
    }
    for g, rows in df.groupby("g"):
        y, yhat = rows["y"].to_numpy(), rows["yhat"].to_numpy()
        out["mean_prediction_parity"][str(g)] = float(rows["yhat"].mean())
        out["residual_parity"][str(g)] = float((rows["y"] - rows["yhat"]).mean())
        out["mae_parity"][str(g)] = float(mean_absolute_error(y, yhat))
        out["rmse_parity"][str(g)] = float(root_mean_squared_error(y, yhat))
    return out


def random_frame(seed: int, n_groups: int, scale: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(30, 600, n_groups)
    frames = []
    for i, n in enumerate(sizes):
        y = rng.normal(scale * (1 + 0.1 * i), scale * 0.2, n)
        yhat = y * rng.uniform(0.9, 1.1) + rng.normal(scale * 0.01 * i, scale * 0.1, n)
        frames.append(pd.DataFrame({"y": y, "yhat": yhat, "g": f"G{i}"}))
    return pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=seed)


CASES = [
    (1, 2, 1.0),
    (2, 3, 50.0),
    (3, 4, 1e5),  # salaries: relative tolerance matters
    (4, 5, 1e-3),
]


@pytest.mark.parametrize(("seed", "n_groups", "scale"), CASES)
def test_against_pandas_and_sklearn(seed: int, n_groups: int, scale: float) -> None:
    df = random_frame(seed, n_groups, scale)
    found = run(df)
    want = oracle(df)
    for key in KEYS:
        f = found[key]
        assert f.status in ("pass", "fail"), f.message
        per = want[key]
        got = by_group(f)
        assert set(got) == set(per)
        for g, v in per.items():
            assert close(got[g], v), (key, g, got[g], v)
        assert close(f.value, max(per.values()) - min(per.values())), key
        assert {g.group: g.n for g in f.groups} == df["g"].value_counts().to_dict()


# ---------------------------------------------------------------------------
# The fairness-metrics tutorial's own function (copied verbatim from the tutorial, two groups)


def regression_fairness_metrics(
    y_true: np.ndarray, y_pred: np.ndarray, protected_attr: np.ndarray
) -> dict[str, Any]:
    """Compute fairness metrics for regression predictions."""
    y_true = np.array(y_true)
    y_pred = np.array(y_pred)
    protected_attr = np.array(protected_attr)
    groups = np.unique(protected_attr)
    results: dict[str, Any] = {"groups": {}}
    for g in groups:
        mask = protected_attr == g
        g_true, g_pred = y_true[mask], y_pred[mask]
        residuals = g_true - g_pred
        results["groups"][g] = {
            "mean_prediction": g_pred.mean(),
            "mean_true": g_true.mean(),
            "mean_residual": residuals.mean(),
            "mae": np.abs(residuals).mean(),
            "rmse": np.sqrt((residuals**2).mean()),
            "std_prediction": g_pred.std(),
            "n": mask.sum(),
        }
    g0, g1 = groups[0], groups[1]
    results["mean_prediction_parity"] = abs(
        results["groups"][g0]["mean_prediction"] - results["groups"][g1]["mean_prediction"]
    )
    results["residual_parity"] = abs(
        results["groups"][g0]["mean_residual"] - results["groups"][g1]["mean_residual"]
    )
    results["mae_parity"] = abs(results["groups"][g0]["mae"] - results["groups"][g1]["mae"])
    return results


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_tutorial_function_on_two_groups(seed: int) -> None:
    df = random_frame(seed, 2, 30.0)
    seed_out = regression_fairness_metrics(df["y"], df["yhat"], df["g"])
    found = run(df)
    for key in ("mean_prediction_parity", "residual_parity", "mae_parity"):
        assert close(found[key].value, float(seed_out[key])), key
    rmse = [seed_out["groups"][g]["rmse"] for g in ("G0", "G1")]
    assert close(found["rmse_parity"].value, float(abs(rmse[0] - rmse[1])))


# ---------------------------------------------------------------------------
# a hand-computed case

# a: y = 1, 2, 3; ŷ = 1, 1, 1 → r = 0, 1, 2: mean ŷ 1, mean r 1, MAE 1, RMSE √(5/3)
# b: y = 2, 2;    ŷ = 3, 1    → r = −1, 1:  mean ŷ 2, mean r 0, MAE 1, RMSE 1
# c: y = 0, 0;    ŷ = 0, −6   → r = 0, 6:   mean ŷ −3, mean r 3, MAE 3, RMSE √18
HAND = pd.DataFrame(
    {
        "y": [1, 2, 3, 2, 2, 0, 0],
        "yhat": [1, 1, 1, 3, 1, 0, -6],
        "g": ["a", "a", "a", "b", "b", "c", "c"],
    }
)


def test_hand_computed_values() -> None:
    found = run(HAND)
    mp, rp, mae, rmse = (found[k] for k in KEYS)
    assert by_group(mp) == {"a": 1.0, "b": 2.0, "c": -3.0}
    assert mp.value == 5.0 and mp.worst_group == "c"
    assert by_group(rp) == {"a": 1.0, "b": 0.0, "c": 3.0}
    assert rp.value == 3.0 and rp.worst_group == "c"
    assert by_group(mae) == {"a": 1.0, "b": 1.0, "c": 3.0}
    assert mae.value == 2.0 and mae.worst_group == "c"
    assert close(by_group(rmse)["a"], math.sqrt(5 / 3))
    assert close(rmse.value, math.sqrt(18) - 1.0)
    assert rmse.worst_group == "c"
    assert mp.details["max_group"] == "b" and mp.details["min_group"] == "c"


def test_residual_worst_group_is_the_most_biased_either_way() -> None:
    # a over-predicted by 4 on average, b under-predicted by 1, c exact
    df = pd.DataFrame(
        {"y": [0, 0, 1, 1, 5, 5], "yhat": [4, 4, 0, 0, 5, 5], "g": ["a", "a", "b", "b", "c", "c"]}
    )
    f = run(df)["residual_parity"]
    assert by_group(f) == {"a": -4.0, "b": 1.0, "c": 0.0}
    assert f.value == 5.0
    assert f.worst_group == "a"


# ---------------------------------------------------------------------------
# undefined cases and exclusions


def test_infinite_values_are_an_error_not_a_number() -> None:
    """±inf in a bound numeric column stops the control at binding (fail closed)."""
    df = pd.concat(
        [HAND, pd.DataFrame({"y": [1.0, 2.0], "yhat": [np.inf, 0.0], "g": ["d", "d"]})],
        ignore_index=True,
    )
    for key, f in run(df).items():
        assert f.status == "error", key
        assert f.value is None and "infinite" in f.message


def test_small_and_unknown_groups_are_excluded_and_reported() -> None:
    rng = np.random.default_rng(5)
    df = random_frame(21, 2, 10.0)
    tiny = pd.DataFrame({"y": rng.normal(size=5), "yhat": rng.normal(size=5) + 100, "g": "tiny"})
    unknown = pd.DataFrame({"y": [1.0, 2.0], "yhat": [50.0, 60.0], "g": [None, None]})
    full = pd.concat([df, tiny, unknown], ignore_index=True)
    found = run(full, min_samples=30)
    plain = run(df)
    for key in KEYS:
        f = found[key]
        assert close(f.value, plain[key].value), key
        excluded = {e.group: e for e in f.excluded_groups}
        assert excluded["tiny"].n == 5 and "min_samples" in excluded["tiny"].reason
        assert excluded[UNKNOWN_GROUP].n == 2


def test_stats_without_rows_are_undefined_not_zero() -> None:
    sums = np.array([[1.0, 2.0, -1.0, 1.0, 1.0, 1.0, 4.0], [0.0] * 7])
    stats = GroupStats(
        dimension=("g",),
        groups=("a", "b"),
        classes=(),
        counts=np.zeros((2, 0, 0), dtype=np.int64),
        sizes=np.array([1, 0], dtype=np.int64),
        regression=RegressionStats(sums),
    )
    mv = mean_prediction_parity(stats, {})
    assert mv.value is None and mv.reason
    assert [(e.group, e.reason) for e in mv.excluded] == [("b", "group has no rows")]
    assert mae_parity(stats, {}).value is None


def test_text_target_is_an_error() -> None:
    df = HAND.assign(y=HAND["y"].astype(str) + "x")
    f = run(df)["mae_parity"]
    assert f.status == "error" and "numbers" in f.message


@pytest.mark.parametrize("key", KEYS)
def test_spec(key: str) -> None:
    spec = REGISTRY[key]
    assert spec.kind == "regression" and spec.tasks == ("regression",)
    assert spec.inputs == ("target", "prediction", "dimension")
    assert spec.value_range == (0.0, float("inf")) and spec.ideal == 0.0
    assert spec.better == "lower"
    assert "value = max_g" in spec.formula


def test_evaluate_fixture_style(control: Callable[..., Control]) -> None:
    """The shared conftest control builder binds target/prediction columns by name."""
    c = control("mae_parity", "g", target="y", prediction="yhat", min_samples=1)
    res = check(Policy(form="list", controls=(c,)), HAND)
    assert res.findings[0].value == 2.0
