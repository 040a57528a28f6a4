"""Survey-weighted controls can alarm under the ``sequential`` window gate (issue 30).

Kish's effective counts are not binomial, so a survey-weighted window has no exact
Clopper–Pearson box; it gets Hoeffding's box instead
(:func:`fairpolicy.stats.sequential.hoeffding_box`): each weighted rate p̂ ± √(log(2k/α)/(2m))
on Kish's effective rows m = (Σw)²/Σw², valid at every level conditionally on the weights
(outcomes independent given them). The oracle here is the formula written out; the
validity is checked on seeded draws with unequal weights and row-varying probabilities.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpolicy.runner import check
from fairpolicy.stats.proportions import Proportion
from fairpolicy.stats.sequential import hoeffding_box, window_level
from tests.helpers import control, write_policy

WEEKS = ("2024-01-01", "2024-01-08", "2024-01-15")  # Mondays


def weighted_rows(week: str, rates: dict[str, float], n: int, seed: int) -> pd.DataFrame:
    """``n`` rows per group in the week; group g selected with probability ``rates[g]``;
    weights uniform on [0.5, 3] (unequal: Kish's rows are fewer than the rows)."""
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp(week, tz="UTC")
    parts = []
    for g, p in rates.items():
        parts.append(
            pd.DataFrame(
                {
                    "ts": t0 + pd.to_timedelta(rng.integers(0, 7 * 86400, n), unit="s"),
                    "sex": g,
                    "y_true": rng.integers(0, 2, n),
                    "y_pred": (rng.random(n) < p).astype(np.int64),
                    "w": rng.uniform(0.5, 3.0, n),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def test_hoeffding_box_equals_the_formula() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        m = rng.uniform(3, 400, 3)
        p = rng.uniform(0, 1, 3)
        level = window_level(int(rng.integers(1, 200)), 0.05)
        props = [Proportion(float(a * b), float(b)) for a, b in zip(p, m, strict=True)]
        h = [math.sqrt(math.log(2 * 3 / (1 - level)) / (2 * b)) for b in m]
        lo = [max(0.0, a - e) for a, e in zip(p, h, strict=True)]
        hi = [min(1.0, a + e) for a, e in zip(p, h, strict=True)]
        want_gap = (
            max(0.0, max(lo) - min(hi)),
            max(hi[i] - lo[j] for i in range(3) for j in range(3) if i != j),
        )
        assert hoeffding_box("gap", [props], level) == pytest.approx(want_gap, abs=1e-12)
        assert hoeffding_box("min", [props], level) == pytest.approx((min(lo), min(hi)))
        assert hoeffding_box("max", [props], level) == pytest.approx((max(lo), max(hi)))


def test_hoeffding_rate_interval_covers_the_weighted_rate() -> None:
    """Fixed unequal weights, each row its own probability θ_i: the interval of one rate at
    level 0.8 misses θ̄ = Σwθ/Σw in at most 20 % of seeded draws (Hoeffding is
    conservative: far fewer), and at the gate's window-1 level never in 4,000 draws."""
    rng = np.random.default_rng(11)
    n = 40
    w = rng.uniform(0.2, 5.0, n)
    theta = rng.uniform(0.0, 1.0, n)
    target = float((w * theta).sum() / w.sum())
    m_eff = float(w.sum() ** 2 / (w * w).sum())
    draws = rng.random((4000, n)) < theta
    p_hat = (draws * w).sum(axis=1) / w.sum()
    for level, bound in ((0.8, 0.2), (window_level(1, 0.05), 0.0)):
        miss = 0
        for p in p_hat:
            lo, hi = hoeffding_box("min", [[Proportion(float(p) * m_eff, m_eff)]], level)
            miss += not lo <= target <= hi
        assert miss / len(p_hat) <= bound, (level, miss)


def _policy(tmp_path: Path, threshold: str, op: str = "<") -> Path:
    return write_policy(
        tmp_path,
        control(
            "dp",
            threshold=threshold,
            operator=op,
            min_samples="10",
            input__weight="w",
            weight_kind="survey",
        ),
    )


def test_a_strongly_violating_survey_weighted_control_fails_the_default_gate(
    tmp_path: Path,
) -> None:
    df = pd.concat(
        [weighted_rows(w, {"F": 0.9, "M": 0.2}, 300, i) for i, w in enumerate(WEEKS)],
        ignore_index=True,
    )
    res = check(str(_policy(tmp_path, "0.3")), df, window="ts=1w")
    f = res.findings[0]
    assert f.status == "fail", f.message
    assert "Hoeffding box" in f.message and res.exit_code == 1
    assert res.windows is not None
    first = res.windows.windows[0].findings[0]
    alarm = first.details["alarm_interval"]
    assert alarm["used"] == "score+hoeffding" and alarm["low"] > 0.3
    assert first.ci is not None and first.ci.exact_box_kind == "hoeffding"
    assert first.value is not None and alarm["low"] <= first.value <= alarm["high"]
    assert "NaN" not in res.to_json()


def test_a_survey_weighted_control_at_the_threshold_does_not_alarm(tmp_path: Path) -> None:
    """True gap exactly at the threshold (0.6 − 0.3 = 0.3, compliant under <=), three
    windows: no alarm (the gate passes, or warns on a window violating by its own rule)."""
    df = pd.concat(
        [weighted_rows(w, {"F": 0.6, "M": 0.3}, 300, 30 + i) for i, w in enumerate(WEEKS)],
        ignore_index=True,
    )
    res = check(str(_policy(tmp_path, "0.3", "<=")), df, window="ts=1w")
    f = res.findings[0]
    assert f.status in ("pass", "warn") and "no sequential alarm" in f.message, f.message
    assert res.windows is not None
    for w in res.windows.windows:
        assert w.findings[0].details["alarm_interval"]["used"] == "score+hoeffding"
