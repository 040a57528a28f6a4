"""Score metrics resample the same cells on every engine (issue 19, item 5).

DuckDB and Spark aggregate scores on the grid of 10**-score_decimals; the embedded engine
reads them exactly. Its bootstrap used to resample its exact per-row cells while the engines
resampled grid cells, so with the same seed the intervals differed by far more than the
grid's error bound and a ``ci_upper`` control could pass on one engine and be inconclusive
on another. Now every engine resamples (and permutes) the grid cells, so the same seed gives
identical intervals, per-group intervals and p-values, and — the interval being widened by
the same grid bound everywhere — the same interval-based verdict. Point values stay exact on
the embedded engine.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.results import Finding, Results
from fairpolicy.runner import check
from tests.data.test_engines import ENGINES, spark_session  # noqa: F401 (a fixture)
from tests.helpers import control, write_policy


def _frame(n: int, seed: int) -> pd.DataFrame:
    """Continuous scores (about one exact cell per row, far fewer grid cells), three groups,
    a binary score column and three class-probability columns."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.clip(0.25 * y + rng.uniform(0, 0.75, n), 0, 1)
    k3 = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), k3] += 1.2
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return pd.DataFrame(
        {
            "y_true": y,
            "y_pred": (s > 0.5).astype(int),
            "grp": rng.choice(["F", "M", "X"], n),
            "s": s,
            "k_true": k3,
            "k_pred": prob.argmax(axis=1),
            "p_0": prob[:, 0],
            "p_1": prob[:, 1],
            "p_2": prob[:, 2],
        }
    )


def _controls(threshold: str = "0.9") -> list[dict[str, Any]]:
    binary = {"input__score": "s", "dimension": "grp", "threshold": threshold}
    multi = {"target": "k_true", "prediction": "k_pred", "dimension": "grp"}
    return [
        control("auc", "auc_gap", **binary),
        control("ks", "score_ks_statistic", **binary),
        control("brier", "brier_gap", **binary),
        control("ece", "calibration_gap", **binary),
        control("bal", "balance_positive_class", **binary),
        control("ovr", "multi_class_auc_gap", threshold, input__score="p", **multi),
    ]


@pytest.fixture
def other_engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "spark":
        request.getfixturevalue("spark_session")
    return name


def _resampled(f: Finding) -> tuple[Any, ...]:
    assert f.ci is not None and f.p_value is not None
    return (
        f.ci.model_dump(),
        [(g.group, g.ci_low, g.ci_high) for g in f.groups],
        f.p_value.model_dump(),
    )


def _run(policy: Path, data: Any, on: str, **kw: Any) -> Results:
    options: dict[str, Any] = {"bootstrap": 150, "p_value": 39, "seed": 5, **kw}
    return check(policy, data, engine=on, deterministic=True, **options)


@pytest.mark.parametrize("other_engine", ENGINES, indirect=True)
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_same_seed_gives_identical_score_intervals_on_every_engine(
    other_engine: str, method: str, tmp_path: Path
) -> None:
    df = _frame(800, 3)
    csv, parquet = tmp_path / "d.csv", tmp_path / "d.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet, index=False)
    policy = write_policy(tmp_path, *_controls())
    base = _run(policy, csv, "embedded", ci_method=method)
    runs = [
        _run(policy, df, "embedded", ci_method=method),  # a pandas DataFrame
        _run(policy, csv, other_engine, ci_method=method),
        _run(policy, parquet, other_engine, ci_method=method),
    ]
    for other in runs:
        assert other.run.options["score_decimals"] == 4
        for a, b in zip(base.findings, other.findings, strict=True):
            assert a.ci is not None and a.ci.low is not None, (a.control_id, a.ci)
            assert _resampled(a) == _resampled(b), a.control_id
            assert a.status == b.status
            assert a.ci.note is not None and "score grid of 10^-4" in a.ci.note


def _bound(f: Finding) -> float:
    """The grid bound the interval is widened by (stated in the interval's note)."""
    assert f.ci is not None and f.ci.note is not None
    return float(f.ci.note.split("±")[1].split()[0])


@pytest.mark.parametrize("other_engine", ENGINES, indirect=True)
def test_an_interval_verdict_never_depends_on_the_engine(other_engine: str, tmp_path: Path) -> None:
    """Thresholds at, just inside and just outside each interval end and its widening by
    the grid bound: ci_upper and ci_lower give the same status on both engines every time
    (one policy holds every threshold; its controls share one set of replicates)."""
    df = _frame(800, 8)
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    probe = _run(write_policy(tmp_path, *_controls()), csv, "embedded", p_value=0)
    controls = []
    for f in probe.findings:
        if f.control_id not in ("auc", "ks", "ovr"):
            continue
        assert f.ci is not None and f.ci.low is not None and f.ci.high is not None
        e = _bound(f)
        for i, end in enumerate((f.ci.low, f.ci.high)):
            for j, shift in enumerate((-1.5 * e, -0.5 * e, 0.0, 0.5 * e, 1.5 * e, 1e-3)):
                t = f"{max(end + shift, 1e-9):.12g}"
                c = next(c for c in _controls(t) if c["control-id"] == f.control_id)
                controls.append({**c, "control-id": f"{f.control_id}-{i}-{j}"})
    policy = write_policy(tmp_path, *controls, name="many.yaml")
    seen = set()
    for decision in ("ci_upper", "ci_lower"):
        a = _run(policy, csv, "embedded", decision=decision, p_value=0)
        b = _run(policy, csv, other_engine, decision=decision, p_value=0)
        for fa, fb in zip(a.findings, b.findings, strict=True):
            assert fa.ci == fb.ci, fa.control_id
            assert fa.status == fb.status, (fa.control_id, decision, fa.reason, fb.reason)
            seen.add(fa.status)
    # the thresholds reached every outcome the intervals allow: a gap's simultaneous band
    # may reach 0 (no `<` threshold can then prove a violation, so no fail)
    can_fail = any(f.ci is not None and (f.ci.low or 0) > 1e-9 for f in probe.findings)
    assert {"pass", "inconclusive", *(["fail"] if can_fail else [])} <= seen


def test_the_embedded_point_stays_exact_and_the_interval_is_widened(tmp_path: Path) -> None:
    """The grid only shapes the resampling: the embedded point value is the exact one, and
    ci_upper passes only when the interval widened by the grid bound clears the threshold."""
    df = _frame(1500, 3)
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    res = _run(write_policy(tmp_path, *_controls()), csv, "embedded")
    f = res.findings[0]
    assert f.ci is not None and f.ci.high is not None and f.ci.note is not None
    assert "score_grid" not in f.details  # the point value is exact
    bound = _bound(f)
    assert 0 < bound < 1e-3
    inside = f"{f.ci.high + bound / 4:.12g}"  # above the interval, within its widening
    pol = write_policy(
        tmp_path, control("auc", "auc_gap", inside, input__score="s", dimension="grp")
    )
    got = _run(pol, csv, "embedded", decision="ci_upper").findings[0]
    assert got.status == "inconclusive", got.reason
    clear = f"{f.ci.high + 2 * bound:.12g}"
    pol = write_policy(
        tmp_path, control("auc", "auc_gap", clear, input__score="s", dimension="grp")
    )
    assert _run(pol, csv, "embedded", decision="ci_upper").findings[0].status == "pass"
    assert math.isfinite(bound)
