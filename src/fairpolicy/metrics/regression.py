"""Regression group-fairness metrics (the fairness-metrics tutorial) from per-group sums.

Every metric here is a pure function of ``stats.regression.sums`` — per group
(Σy, Σŷ, Σr, Σ|r|, Σr², Σy², Σŷ²) with the residual r = y − ŷ — and the group
sizes ``stats.n``. Each compares one per-group statistic across groups as
max − min over the comparable groups. The fairness-metrics tutorial writes |stat_g0 − stat_g1| for
exactly two groups; for two groups max − min is the same number, and for more
groups it is fairlearn's ``between_groups`` convention (the largest pairwise
difference). Values are in the units of the target (squared units never
appear: RMSE is compared, not MSE), so thresholds are data-specific.

Each metric reads only the sum it needs (mean prediction Σŷ, mean residual Σr,
MAE Σ|r|, RMSE Σr²), so a square that overflows cannot make an MAE undefined.
A group with no rows is excluded with the reason. A sum the metric needs that
overflows float64 (values beyond ~1e154 for RMSE's squares, sums beyond ~1e308)
is an error (exit 2) naming the sum, never an excluded group or an inconclusive
result; infinite input values are refused when the data is bound.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from fairpolicy.errors import MetricError, Problem
from fairpolicy.metrics.base import BoolArray, FloatArray, MetricValue, gap, safe_rate
from fairpolicy.stats import GroupStats

Statistic = Literal["mean_prediction", "mean_residual", "mae", "rmse"]

#: column of ``RegressionStats.sums`` behind each statistic
_COLUMN: dict[Statistic, int] = {"mean_prediction": 1, "mean_residual": 2, "mae": 3, "rmse": 4}

_NO_ROWS = "group has no rows"

#: what each statistic sums, for the overflow message
_SUM_NAME: dict[Statistic, str] = {
    "mean_prediction": "Σŷ (the predictions)",
    "mean_residual": "Σ(y − ŷ) (the residuals)",
    "mae": "Σ|y − ŷ| (the absolute residuals)",
    "rmse": "Σ(y − ŷ)² (the squared residuals)",
}


def _overflow(stats: GroupStats, statistic: Statistic, groups: list[str]) -> MetricError:
    shown = ", ".join(f"'{g}'" for g in groups[:5]) + (" …" if len(groups) > 5 else "")
    return MetricError(
        Problem(
            f"the sum {_SUM_NAME[statistic]} of group(s) {shown} in "
            f"'{','.join(stats.dimension)}' overflows a 64-bit float (its values are too "
            f"large{' to square' if statistic == 'rmse' else ''}), so {statistic} cannot be "
            "computed; a result here would be a guess.",
            hint="rescale input.target and input.prediction by the same factor (e.g. "
            "express amounts in millions) and scale the threshold to match.",
        )
    )


def group_statistic(stats: GroupStats, statistic: Statistic) -> tuple[FloatArray, BoolArray]:
    """Per-group statistic and its defined-mask, from the sums and the group sizes.

    mean_prediction = Σŷ/n, mean_residual = Σr/n, mae = Σ|r|/n, rmse = √(Σr²/n).
    """
    if stats.regression is None:
        raise MetricError(
            "a regression metric was given no regression statistics (bind numeric "
            "input.target and input.prediction)."
        )
    column = stats.regression.sums[:, _COLUMN[statistic]]
    bad = (stats.n > 0) & ~np.isfinite(column)
    if bad.any():
        raise _overflow(stats, statistic, [stats.groups[i] for i in np.flatnonzero(bad)])
    with np.errstate(over="ignore"):
        values, defined = safe_rate(column, stats.n)
    if statistic == "rmse":
        values = np.sqrt(np.maximum(values, 0.0))
    return values, defined


def _gap(
    stats: GroupStats, statistic: Statistic, worst: Literal["min", "max", "abs"]
) -> MetricValue:
    values, defined = group_statistic(stats, statistic)
    mv = gap(
        stats,
        values,
        defined,
        _NO_ROWS,
        worst="max" if worst == "abs" else worst,
        details={"statistic": statistic},
    )
    if mv.value is not None and not np.isfinite(mv.value):  # max − min beyond 1.8e308
        raise MetricError(
            Problem(
                f"the {statistic} gap across '{','.join(stats.dimension)}' overflows a 64-bit "
                "float (the group statistics are near ±1e308).",
                hint="rescale input.target and input.prediction by the same factor and "
                "scale the threshold to match.",
            )
        )
    if worst == "abs" and mv.value is not None:
        ok = np.flatnonzero(defined)
        far = int(ok[np.argmax(np.abs(values[ok]))])
        mv = dataclasses.replace(mv, worst_group=stats.groups[far])
    return mv


def mean_prediction_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Mean prediction parity: the gap in average predicted value between groups.

    mean_ŷ_g = Σ_{rows of g} ŷ / n_g
    value = max_g mean_ŷ_g − min_g mean_ŷ_g        (0 = parity; range [0, ∞), target units)

    The fairness-metrics tutorial: |mean_ŷ_g0 − mean_ŷ_g1|; max − min is the multi-group form
    (fairlearn's between_groups). The worst group named is the one with the
    lowest mean prediction (the disadvantaged one when the prediction is a
    benefit such as a salary or a loan amount; for a risk score read
    ``max_group`` in the details). A sum that overflows is an error.
    """
    return _gap(stats, "mean_prediction", "min")


def residual_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Residual parity: the gap in mean residual (signed bias) between groups.

    r = y − ŷ;  mean_r_g = Σ_{rows of g} r / n_g   (> 0: g is under-predicted)
    value = max_g mean_r_g − min_g mean_r_g        (0 = parity; range [0, ∞), target units)

    The fairness-metrics tutorial: |mean_r_g0 − mean_r_g1|, generalised to max − min. Per-group
    values are the signed mean residuals; the worst group is the one whose mean residual
    is farthest from 0 (the most biased, in either direction). A sum that overflows
    is an error.
    """
    return _gap(stats, "mean_residual", "abs")


def mae_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """MAE parity: the gap in mean absolute error between groups.

    MAE_g = Σ_{rows of g} |y − ŷ| / n_g             (= sklearn mean_absolute_error on g's rows)
    value = max_g MAE_g − min_g MAE_g               (0 = parity; range [0, ∞), target units)

    The fairness-metrics tutorial: |MAE_g0 − MAE_g1|, generalised to max − min. The worst group is
    the one with the largest MAE. A sum that overflows is an error.
    """
    return _gap(stats, "mae", "max")


def rmse_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """RMSE parity: the gap in root mean squared error between groups.

    RMSE_g = √(Σ_{rows of g} (y − ŷ)² / n_g)        (= sklearn root_mean_squared_error on g)
    value = max_g RMSE_g − min_g RMSE_g             (0 = parity; range [0, ∞), target units)

    The fairness-metrics tutorial reports the per-group RMSE (its parity is the same max − min
    reduction as the other gaps). The worst group is the one with the largest
    RMSE. A Σr² that overflows (residuals beyond ~1e154) is an error, not a
    guess; MAE, mean residual and mean prediction need no squares.
    """
    return _gap(stats, "rmse", "max")
