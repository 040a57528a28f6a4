"""fmm-fairness-eval's (fmm_fairness v0.2) F1 family, K-aware.

Per group g and class k, from the group's confusion table C_g:

    TP = C_g[k, k],  FP = Σ_t C_g[t, k] − TP,  FN = Σ_p C_g[k, p] − TP
    F1_k(g) = 2·TP / (2·TP + FP + FN)

F1_k(g) is undefined only when class k occurs neither in the labels nor in the
predictions of group g (2·TP + FP + FN = 0). A class that is present but never
predicted correctly has F1 = 0, as in scikit-learn.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.metrics.base import (
    BoolArray,
    FloatArray,
    MetricValue,
    exact_matrix,
    exact_parts,
    exact_stats,
    gap,
    safe_rate,
)
from fairpolicy.metrics.multiclass import per_class_summary
from fairpolicy.stats import GroupStats

_F1_UNDEFINED = "class occurs neither in the labels nor the predictions of this group"


def f1_parts(stats: GroupStats) -> tuple[NDArray[Any], NDArray[Any]]:
    """(G, K) integer (2·TP, 2·TP + FP + FN): the numerators and denominators of F1."""
    c = stats.counts
    tp = np.diagonal(c, axis1=1, axis2=2)
    fp = c.sum(axis=1) - tp
    fn = c.sum(axis=2) - tp
    return 2 * tp, 2 * tp + fp + fn


def per_class_f1(stats: GroupStats) -> tuple[FloatArray, BoolArray]:
    """(G, K) matrix of F1_k(g) and where it is defined."""
    return safe_rate(*f1_parts(stats))


def _exact_f1(stats: GroupStats, ok: BoolArray, how: str) -> list[Fraction | None] | None:
    """Each group's exact weighted (``how="weighted"``) or macro F1, None where undefined."""
    ex = exact_stats(stats)  # whole counts, or the exact sums of fractional weights
    if ex is None:
        return None
    stats = ex
    num, den = f1_parts(stats)
    cells = exact_matrix(num, den, ok)
    if cells is None:
        return None
    support = stats.counts.sum(axis=2).tolist()
    out: list[Fraction | None] = []
    for i, row in enumerate(cells):
        present = [(k, x) for k, x in enumerate(row) if x is not None]
        if how == "weighted":
            total = sum(support[i])
            out.append(
                sum((Fraction(support[i][k], total) * x for k, x in present), Fraction(0))
                if total > 0
                else None
            )
        else:
            mean = sum((x for _, x in present), Fraction(0)) / len(present) if present else None
            out.append(mean)
    return out


def weighted_f1_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Support-weighted F1 gap across groups.

    weighted_F1(g) = Σ_k (support(k | g) / N(g)) · F1_k(g)
    value = max_g weighted_F1(g) − min_g weighted_F1(g)

    Equals scikit-learn ``f1_score(average="weighted")`` per group (a class
    with no support in g carries weight 0), then fairlearn's max − min.
    """
    f1, ok = per_class_f1(stats)
    support = stats.counts.sum(axis=2).astype(np.float64)  # (G, K)
    n = support.sum(axis=1)
    w, _ = safe_rate(support, n[:, None])
    values = (w * np.where(ok, f1, 0.0)).sum(axis=1)
    return gap(
        stats,
        values,
        n > 0,
        "group has no rows",
        worst="min",
        details={"per_group_per_class_f1": _matrix(stats, f1, ok), "classes": list(stats.classes)},
        exact=_exact_f1(stats, ok, "weighted"),
    )


def macro_f1_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Macro F1 gap across groups.

    macro_F1(g) = mean of F1_k(g) over the classes k that occur in group g's
    labels or predictions (scikit-learn's default label set for the group)
    value = max_g macro_F1(g) − min_g macro_F1(g)

    Deliberate choice at the edge: a class absent from a group's labels *and*
    predictions has no F1 there and is not averaged in as 0. scikit-learn with
    ``labels=range(K), zero_division=0`` would count it as 0 and penalise the
    group for a class it never saw; with every class present the two agree.
    """
    f1, ok = per_class_f1(stats)
    count = ok.sum(axis=1)
    values, defined = safe_rate(np.where(ok, f1, 0.0).sum(axis=1), count)
    return gap(
        stats,
        values,
        defined,
        "group has no rows",
        worst="min",
        details={"per_group_per_class_f1": _matrix(stats, f1, ok), "classes": list(stats.classes)},
        exact=_exact_f1(stats, ok, "macro"),
    )


def per_class_f1_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Per-class F1 gaps and the worst of them.

    per_class_gap[k] = max_g F1_k(g) − min_g F1_k(g)   (over groups where F1_k is defined)
    value = max_k per_class_gap[k]    — "which single class drives the disparity"

    ``details`` carries ``per_group`` (the length-K F1 vector of each group),
    ``per_class_gap`` and ``worst_class``.
    """
    f1, ok = per_class_f1(stats)
    return per_class_summary(
        stats, f1, ok, _F1_UNDEFINED, "max", exact=exact_parts(f1_parts, stats)
    )


def _matrix(stats: GroupStats, values: FloatArray, ok: BoolArray) -> dict[str, list[float | None]]:
    return {
        g: [float(values[i, j]) if ok[i, j] else None for j in range(stats.num_classes)]
        for i, g in enumerate(stats.groups)
    }
