"""Regression sums: accurate under large offsets, and overflow that only the metrics
needing the overflowing sum see (issue 19, item 7)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from fairpolicy.errors import MetricError
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.runner import check
from fairpolicy.stats import GroupStats, build_regression_stats, group_sums
from tests.data.test_engines import needs_spark
from tests.data.test_engines import spark_session as spark_session  # the fixture
from tests.helpers import control, write_csv, write_policy


def _fsum_by_group(g: np.ndarray, x: np.ndarray, n: int, w: np.ndarray | None) -> list[float]:
    terms = x if w is None else x * w  # integer weights: each product is exact below 2^53
    return [math.fsum(terms[g == k].tolist()) for k in range(n)]


@settings(max_examples=200, deadline=None)
@given(
    offset=st.sampled_from([0.0, 1e3, 1e9, -1e9, 1e12]),
    noise=hnp.arrays(np.float64, st.integers(1, 400), elements=st.floats(-1, 1)),
    groups=st.integers(1, 4),
    weighted=st.booleans(),
)
def test_group_sums_are_within_ulps_of_the_correctly_rounded_sum(
    offset: float, noise: np.ndarray, groups: int, weighted: bool
) -> None:
    x = offset + noise
    g = np.arange(len(x)) % groups
    w = (np.arange(len(x)) % 3 + 1).astype(np.float64) if weighted else None
    ours = group_sums(g, x, groups, w)
    exact = _fsum_by_group(g, x, groups, w)
    for k in range(groups):
        # the shifted sum's error is that of the spread (|noise| ≤ 1), not of the offset
        bound = 4 * math.ulp(abs(exact[k])) + 1e-12 * len(x)
        assert abs(ours[k] - exact[k]) <= bound, (k, ours[k], exact[k])


def test_large_offset_means_are_exact_to_the_ulp() -> None:
    """Values ~1e9: a plain bincount loses ~1e-6 of the mean; the shifted sum does not."""
    rng = np.random.default_rng(7)
    x = 1e9 + rng.random(1_000_000)
    g = np.zeros(len(x), dtype=np.int64)
    exact = math.fsum(x.tolist())
    naive = float(np.bincount(g, weights=x)[0])
    ours = float(group_sums(g, x, 1)[0])
    assert abs(ours - exact) / len(x) <= math.ulp(1e9)
    assert abs(naive - exact) / len(x) > abs(ours - exact) / len(x)  # the old way was worse


def _stats(y: np.ndarray, yhat: np.ndarray) -> GroupStats:
    n = len(y) // 2
    g = np.repeat([0, 1], n)
    reg = build_regression_stats(g, 2, y, yhat)
    return GroupStats(
        ("sex",),
        ("F", "M"),
        (),
        np.zeros((2, 0, 0), dtype=np.int64),
        sizes=np.array([n, n]),
        regression=reg,
    )


def test_squares_overflow_only_the_metrics_that_need_them() -> None:
    y = np.full(100, 1e160)
    yhat = y + np.repeat([1e150, 3e150], 50)
    st = _stats(y, yhat)
    assert st.regression is not None and np.isinf(st.regression.sums[:, 5]).all()  # Σy²
    mae = REGISTRY["mae_parity"].fn(st, {})
    mean = REGISTRY["mean_prediction_parity"].fn(st, {})
    rmse = REGISTRY["rmse_parity"].fn(st, {})  # residuals ~1e150: squares fit
    assert mae.value == pytest.approx(2e150) and rmse.value == pytest.approx(2e150)
    assert mean.value == pytest.approx(2e150)


def test_an_overflowing_sum_the_metric_needs_is_an_error() -> None:
    y = np.repeat([1e160, 2e160], 50)
    yhat = -y
    st = _stats(y, yhat)
    with pytest.raises(MetricError, match="overflows a 64-bit float"):
        REGISTRY["rmse_parity"].fn(st, {})
    assert REGISTRY["mae_parity"].fn(st, {}).value == pytest.approx(2e160)


@pytest.mark.parametrize("engine", ["embedded", "duckdb", pytest.param("spark", marks=needs_spark)])
def test_offset_means_agree_across_engines(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    """Values ~1e9 (a plain sum loses ~1e-6 of the mean): every engine's mean gap is the
    math.fsum truth to a few ulps — embedded shifts per group, DuckDB uses fsum, Spark
    sums deviations from a per-group window mean."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    elif engine == "duckdb":
        pytest.importorskip("duckdb")
    rng = np.random.default_rng(3)
    rows = ["y,p,sex"]
    for name, bias in (("F", 0.0), ("M", 0.25)):
        for _ in range(2000):
            y = 1e9 + float(rng.random())
            rows.append(f"{y!r},{y + bias + float(rng.random()) * 1e-3!r},{name}")
    data = write_csv(tmp_path, "\n".join(rows) + "\n")
    pol = write_policy(
        tmp_path,
        control(metric="mean_prediction_parity", target="y", prediction="p", threshold="1"),
    )
    res = check(pol, data, engine=engine, deterministic=True)
    (f,) = res.findings
    values = [[float(v) for v in line.split(",")[:2]] for line in rows[1:]]
    by = {"F": [], "M": []}  # type: dict[str, list[float]]
    for line, (_, p) in zip(rows[1:], values, strict=True):
        by[line.rsplit(",", 1)[1]].append(p)
    exact = math.fsum(by["M"]) / 2000 - math.fsum(by["F"]) / 2000
    assert f.value is not None
    assert abs(f.value - exact) <= 4 * math.ulp(1e9), (f.value, exact)
