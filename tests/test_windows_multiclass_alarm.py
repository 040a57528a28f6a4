"""Multi-class controls can alarm under the ``sequential`` window gate (issue 30).

A multi-class gap over classes (the max or mean over classes of each class's max − min
over groups) has no binomial score interval of its own: its window interval is a bootstrap
band (which 1000 resamples cannot resolve at the window's level 1 − α_t) or the Šidák
score box. Its alarm reads the exact box of Clopper–Pearson intervals of every (group,
class) rate at the Bonferroni level, projected onto the metric
(:func:`fairpolicy.stats.sequential.exact_class_box`). The oracle here is written with
scipy's Beta quantiles and a brute-force projection over the box's corners; the
false-alarm bound is checked by exact enumeration.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binom

from fairpolicy.runner import check
from fairpolicy.stats.bands import CLASSES, Form
from fairpolicy.stats.sequential import class_projection, window_level
from tests.helpers import control, write_policy

WEEKS = ("2024-01-01", "2024-01-08", "2024-01-15")  # Mondays
KEY = "multiclass_equal_opportunity"  # the max over classes of each class's recall gap


def week_rows(week: str, n: int, acc: dict[str, float], seed: int) -> pd.DataFrame:
    """``n`` rows per group in the week starting ``week``, 3 classes; group g predicts the
    true class with probability ``acc[g]`` (else a uniformly drawn other class)."""
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp(week, tz="UTC")
    parts = []
    for g, a in acc.items():
        y = rng.integers(0, 3, n)
        wrong = (y + rng.integers(1, 3, n)) % 3
        parts.append(
            pd.DataFrame(
                {
                    "ts": t0 + pd.to_timedelta(rng.integers(0, 7 * 86400, n), unit="s"),
                    "sex": g,
                    "y_true": y,
                    "y_pred": np.where(rng.random(n) < a, y, wrong),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def cp(x: int, m: int, a: float) -> tuple[float, float]:
    lo = 0.0 if x == 0 else float(beta.ppf(a / 2, x, m - x + 1))
    hi = 1.0 if x == m else float(beta.ppf(1 - a / 2, x + 1, m - x))
    return lo, hi


def brute_projection(
    x: list[list[int]], m: list[list[int]], level: float, combine: str
) -> tuple[float, float]:
    """x[c][g] of m[c][g]: the box's corners (the max − min of a class over its box is
    attained at the ends of each cell's interval), the combine over classes of each."""
    k = sum(len(r) for r in x)
    a = (1.0 - level) / k
    lows, highs = [], []
    for xs, ms in zip(x, m, strict=True):
        ivs = [cp(xi, mi, a) for xi, mi in zip(xs, ms, strict=True)]
        gaps = [max(c) - min(c) for c in itertools.product(*ivs)]
        # the smallest gap over the box: the rates may also meet inside it
        lo = max(0.0, max(i[0] for i in ivs) - min(i[1] for i in ivs))
        lows.append(lo)
        highs.append(max(gaps))
    f = max if combine == "max" else (lambda v: sum(v) / len(v))
    return f(lows), f(highs)


@pytest.mark.parametrize("combine", ["max", "mean"])
def test_class_projection_equals_the_beta_oracle(combine: str) -> None:
    rng = np.random.default_rng(7)
    form = Form("gap", combine, (CLASSES,))  # type: ignore[arg-type]
    for _ in range(25):
        m = rng.integers(1, 40, size=(3, 2)).tolist()
        x = [[int(rng.integers(0, mi + 1)) for mi in row] for row in m]
        level = window_level(int(rng.integers(1, 60)), 0.05)
        flat_x, flat_m = [v for r in x for v in r], [v for r in m for v in r]
        got = class_projection(form, flat_x, flat_m, [2, 2, 2], level)
        assert got == pytest.approx(brute_projection(x, m, level, combine), abs=1e-9)


def test_no_false_alarm_beyond_alpha_t_by_exact_enumeration() -> None:
    """Two groups × two classes, 6 true rows per cell: every outcome enumerated. With the
    true max-over-classes recall gap exactly at the threshold (compliant under <=), the
    exact box lies wholly above it with probability ≤ α_t at every window level, for every
    configuration of rates tried (class 1 at the threshold, class 2 below it)."""
    form = Form("gap", "max", (CLASSES,))
    m = 6
    for t in (1, 52):
        level = window_level(t, 0.05)
        alpha_t = 1.0 - level
        for p_low, gap2 in ((0.0, 0.1), (0.3, 0.0)):
            thr = 0.4
            rates = [p_low, p_low + thr, 0.5, 0.5 + gap2 / 2]
            pmf = [binom.pmf(np.arange(m + 1), m, p) for p in rates]
            false_alarm = 0.0
            for xs in itertools.product(range(m + 1), repeat=4):
                lo, _ = class_projection(form, list(xs), [m] * 4, [2, 2], level)
                if lo > thr:
                    false_alarm += float(np.prod([pmf[i][xi] for i, xi in enumerate(xs)]))
            assert false_alarm <= alpha_t, (t, rates, false_alarm, alpha_t)


def test_a_strongly_violating_multiclass_control_fails_the_default_gate(tmp_path: Path) -> None:
    df = pd.concat(
        [week_rows(w, 600, {"F": 0.95, "M": 0.35}, i) for i, w in enumerate(WEEKS)],
        ignore_index=True,
    )
    pol = write_policy(tmp_path, control("eo", metric=KEY, threshold="0.2", min_samples="10"))
    res = check(str(pol), df, window="ts=1w")
    f = res.findings[0]
    assert f.status == "fail", f.message
    assert "exact Clopper–Pearson box of the (group, class) rates" in f.message
    assert res.exit_code == 1
    assert res.windows is not None
    first = res.windows.windows[0].findings[0]
    assert first.ci is not None and first.ci.method == "band" and first.ci.exact_box is not None
    alarm = first.details["alarm_interval"]
    assert alarm["used"] == "exact" and alarm["low"] > 0.2
    assert alarm["low"] == first.ci.exact_box[0]
    # the exact box contains the window's value
    assert first.value is not None
    assert alarm["low"] <= first.value <= alarm["high"]
    assert json.loads(json.dumps(res.to_dict()))  # no NaN in the JSON


def test_a_compliant_multiclass_control_does_not_alarm(tmp_path: Path) -> None:
    """Both groups equally accurate: the true gap is 0, under a threshold of 0.1."""
    df = pd.concat(
        [week_rows(w, 150, {"F": 0.7, "M": 0.7}, 10 + i) for i, w in enumerate(WEEKS)],
        ignore_index=True,
    )
    pol = write_policy(tmp_path, control("eo", metric=KEY, threshold="0.1", min_samples="10"))
    res = check(str(pol), df, window="ts=1w")
    f = res.findings[0]
    assert f.status in ("pass", "warn"), f.message
    assert "no sequential alarm" in f.message
    assert res.windows is not None
    for w in res.windows.windows:
        assert w.findings[0].details["alarm_interval"]["used"] == "exact"


def hoeffding_recall_box(df: pd.DataFrame, level: float) -> tuple[float, float]:
    """The oracle of the survey-weighted box of the max-over-classes recall gap: per
    (group, class), the weighted recall over the group's rows of that true class, ± the
    Hoeffding half-width on their Kish rows (Σw)²/Σw², Bonferroni over the cells; the box
    projected by its ends."""
    cells = []
    for c in range(3):
        for g in ("F", "M"):
            d = df[(df["sex"] == g) & (df["y_true"] == c)]
            w = d["w"].to_numpy()
            p = float((w * (d["y_pred"] == c)).sum() / w.sum())
            cells.append((c, p, float(w.sum() ** 2 / (w * w).sum())))
    log_term = np.log(2 * len(cells) / (1 - level))
    lows, highs = [], []
    for c in range(3):
        ivs = [
            (max(0.0, p - np.sqrt(log_term / (2 * m))), min(1.0, p + np.sqrt(log_term / (2 * m))))
            for cc, p, m in cells
            if cc == c
        ]
        (a0, b0), (a1, b1) = ivs
        lows.append(max(0.0, a0 - b1, a1 - b0))
        highs.append(max(b0 - a1, b1 - a0))
    return max(lows), max(highs)


def test_survey_weighted_multiclass_controls_alarm_on_the_hoeffding_box(tmp_path: Path) -> None:
    """Under survey weights the exact denominators are weight sums scaled to integers
    (about 2^60); they were read as a cell's rows and overflowed the band's float floor
    (OverflowError, a traceback) as soon as the control had an interval — as every window
    of the default gate has. Now the (group, class) weighted recalls get Hoeffding
    intervals on their Kish rows, and a strong violation alarms on them."""
    df = pd.concat(
        [week_rows(w, 900, {"F": 0.95, "M": 0.35}, 20 + i) for i, w in enumerate(WEEKS[:2])],
        ignore_index=True,
    )
    df["w"] = np.random.default_rng(3).uniform(0.5, 2.0, len(df))
    pol = write_policy(
        tmp_path,
        control(
            "eo",
            metric=KEY,
            threshold="0.2",
            min_samples="10",
            input__weight="w",
            weight_kind="survey",
            ci="200",
        ),
    )
    plain = check(str(pol), df).findings[0]  # no OverflowError
    assert plain.ci is not None and plain.ci.low is not None
    res = check(str(pol), df, window="ts=1w")
    assert res.windows is not None
    w = res.windows.windows[0].findings[0]
    assert w.ci is not None and w.ci.exact_box_kind == "hoeffding" and w.ci.exact_box
    week = df[df["ts"] < pd.Timestamp(WEEKS[1], tz="UTC")]
    want = hoeffding_recall_box(week, window_level(1, 0.05))
    assert w.ci.exact_box == pytest.approx(list(want), abs=1e-9)
    alarm = w.details["alarm_interval"]
    assert alarm["used"] == "hoeffding" and alarm["low"] > 0.2
    f = res.findings[0]
    assert f.status == "fail" and "Hoeffding box of the (group, class)" in f.message


@pytest.mark.parametrize("key", ["per_class_f1_gap", "multiclass_statistical_parity"])
def test_per_class_values_that_are_not_binomial_rates_get_no_box(tmp_path: Path, key: str) -> None:
    """F1 = 2TP/(2TP + FP + FN) is a ratio of whole counts but no binomial proportion, and
    a pairwise distance may equal a per-class gap on the data without being one by
    definition: neither gets a Clopper–Pearson box (nor, so, an alarm from one)."""
    df = week_rows(WEEKS[0], 150, {"F": 0.95, "M": 0.35}, 40)
    pol = write_policy(tmp_path, control("c", metric=key, threshold="0.05", min_samples="10"))
    res = check(str(pol), df, window="ts=1w")
    assert res.windows is not None
    w = res.windows.windows[0].findings[0]
    assert w.ci is not None and w.ci.exact_box is None
    assert w.details["alarm_interval"]["used"] is None
