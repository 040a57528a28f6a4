"""Regression group-fairness metrics (seed 004) from per-group sums.

Every metric here is a pure function of ``stats.regression.sums`` — per group
(Σy, Σŷ, Σr, Σ|r|, Σr², Σy², Σŷ²) with the residual r = y − ŷ — and the group
sizes ``stats.n``. Each compares one per-group statistic across groups as
max − min over the comparable groups. Seed 004 writes |stat_g0 − stat_g1| for
exactly two groups; for two groups max − min is the same number, and for more
groups it is fairlearn's ``between_groups`` convention (the largest pairwise
difference). Values are in the units of the target (squared units never
appear: RMSE is compared, not MSE), so thresholds are data-specific.

A group's statistic is undefined, and the group excluded with the reason, when
it has no rows or when its sums are not finite (an infinite value in the
target or prediction, or float64 overflow of Σr²); never NaN.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

import numpy as np

from fairpolicy.errors import MetricError
from fairpolicy.metrics.base import BoolArray, FloatArray, MetricValue, gap, safe_rate
from fairpolicy.stats import GroupStats

Statistic = Literal["mean_prediction", "mean_residual", "mae", "rmse"]

#: column of ``RegressionStats.sums`` behind each statistic
_COLUMN: dict[Statistic, int] = {"mean_prediction": 1, "mean_residual": 2, "mae": 3, "rmse": 4}

_NO_ROWS = "group has no rows"
_NOT_FINITE = (
    "group's sums are not finite (an infinite target/prediction value, or float64 overflow)"
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
    sums = stats.regression.sums
    values, defined = safe_rate(sums[:, _COLUMN[statistic]], stats.n)
    if statistic == "rmse":
        values = np.sqrt(np.maximum(values, 0.0))
    finite = np.isfinite(values) & np.isfinite(sums).all(axis=1)
    values = np.where(finite, values, 0.0)
    return values, defined & finite


def _gap(
    stats: GroupStats, statistic: Statistic, worst: Literal["min", "max", "abs"]
) -> MetricValue:
    values, defined = group_statistic(stats, statistic)
    reason = _NO_ROWS
    if not defined.all():
        no_rows = stats.n == 0
        reason = _NO_ROWS if bool(no_rows[~defined].all()) else _NOT_FINITE
    mv = gap(
        stats,
        values,
        defined,
        reason,
        worst="max" if worst == "abs" else worst,
        details={"statistic": statistic},
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

    Seed 004: |mean_ŷ_g0 − mean_ŷ_g1|; max − min is the multi-group form
    (fairlearn's between_groups). The worst group named is the one with the
    lowest mean prediction (the disadvantaged one when the prediction is a
    benefit such as a salary or a loan amount; for a risk score read
    ``max_group`` in the details). Undefined for a group with non-finite sums.
    """
    return _gap(stats, "mean_prediction", "min")


def residual_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Residual parity: the gap in mean residual (signed bias) between groups.

    r = y − ŷ;  mean_r_g = Σ_{rows of g} r / n_g   (> 0: g is under-predicted)
    value = max_g mean_r_g − min_g mean_r_g        (0 = parity; range [0, ∞), target units)

    Seed 004: |mean_r_g0 − mean_r_g1|, generalised to max − min. Per-group values
    are the signed mean residuals; the worst group is the one whose mean residual
    is farthest from 0 (the most biased, in either direction). Undefined for a
    group with non-finite sums.
    """
    return _gap(stats, "mean_residual", "abs")


def mae_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """MAE parity: the gap in mean absolute error between groups.

    MAE_g = Σ_{rows of g} |y − ŷ| / n_g             (= sklearn mean_absolute_error on g's rows)
    value = max_g MAE_g − min_g MAE_g               (0 = parity; range [0, ∞), target units)

    Seed 004: |MAE_g0 − MAE_g1|, generalised to max − min. The worst group is
    the one with the largest MAE. Undefined for a group with non-finite sums.
    """
    return _gap(stats, "mae", "max")


def rmse_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """RMSE parity: the gap in root mean squared error between groups.

    RMSE_g = √(Σ_{rows of g} (y − ŷ)² / n_g)        (= sklearn root_mean_squared_error on g)
    value = max_g RMSE_g − min_g RMSE_g             (0 = parity; range [0, ∞), target units)

    Seed 004 reports the per-group RMSE (its parity is the same max − min
    reduction as the other gaps). The worst group is the one with the largest
    RMSE. Undefined for a group whose Σr² is not finite (overflow).
    """
    return _gap(stats, "rmse", "max")
