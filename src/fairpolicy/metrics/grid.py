"""Error bounds of score metrics computed on an engine's score grid.

The DuckDB and Spark engines round every score in [0, 1] to the nearest multiple
of ``g = 10**-decimals`` before aggregating (scores outside [0, 1] are kept as they
are). Rounding moves a score by at most ``h = g / 2`` and keeps the order of any two
scores (it may only make them equal). Each function below bounds
``|value on the grid − exact value|`` from the grid statistics alone; the runner
records it as ``details["score_grid"]["max_error"]`` and never lets a control pass
when the threshold lies within that distance of the value. The formulas are stated
in ``docs/engines.md``; ``tests/data/test_engines.py`` checks them against the
exact (embedded) values.

Notation: for one group, ``pos(v)`` / ``neg(v)`` are the rows of the class of
interest / of the other classes whose grid score is ``v``; P, N their totals, n = P + N.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from fairpolicy.metrics.base import MetricValue
from fairpolicy.stats import GroupStats, group_name

if TYPE_CHECKING:
    from fairpolicy.metrics import scores as sc

#: slack for the floating-point rounding of the grid values themselves
SLACK = 1e-12

Bound = Callable[[GroupStats, Mapping[str, Any], MetricValue, float], float | None]


def _tie_auc(d: sc.ScoreDist) -> float:
    """|ΔAUC| ≤ Σ_v pos(v)·neg(v) / (2·P·N): only a positive–negative pair sharing a grid
    cell can change its contribution (from 0 or 1 to ½)."""
    p, n = float(d.pos.sum()), float(d.neg.sum())
    if p == 0 or n == 0:
        return 0.0
    return float(np.dot(d.pos.astype(np.float64), d.neg.astype(np.float64)) / (2.0 * p * n))


def _auc_errors(stats: GroupStats) -> list[float]:
    """Per group, the bound on its (K-aware) AUC: binary, or the mean over classes of the
    one-vs-rest bounds on K > 2."""
    from fairpolicy.metrics import scores as sc

    scores = sc.score_stats(stats)
    k = stats.num_classes
    out = []
    for g in range(len(stats.groups)):
        if k <= 2:
            column, p, _ = sc.binary_column(stats)
            out.append(0.0 if column is None else _tie_auc(sc.score_dist(scores, g, column, p)))
        elif len(scores.columns) == k:
            out.append(float(np.mean([_tie_auc(sc.score_dist(scores, g, c, c)) for c in range(k)])))
        else:
            out.append(0.0)
    return out


def _defined(mv: MetricValue, stats: GroupStats) -> list[int]:
    """Indices of the groups with a per-group value."""
    have = {gv.group for gv in mv.groups if gv.value is not None}
    return [i for i, g in enumerate(stats.groups) if g in have]


def _gap(errors: list[float], idx: list[int]) -> float:
    """max − min moves by at most the two largest per-group errors (≤ 2 × the largest)."""
    top = sorted((errors[i] for i in idx), reverse=True)[:2]
    return float(sum(top)) if len(top) == 2 else 2.0 * float(sum(top))


def auc_gap(stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float) -> float:
    return _gap(_auc_errors(stats), _defined(mv, stats))


def inter_site_auc_variance(
    stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float
) -> float:
    """Var(a + δ) − Var(a) = 2·Cov(a, δ) + Var(δ), so with |δ| ≤ ε:
    |ΔVar| ≤ 2·sd(a)·ε + ε², and sd(a) ≤ sd(a + δ) + ε."""
    idx = _defined(mv, stats)
    eps = max((_auc_errors(stats)[i] for i in idx), default=0.0)
    values = np.array([gv.value for gv in mv.groups if gv.value is not None], dtype=np.float64)
    sd = float(values.std()) if len(values) else 0.0
    return 2.0 * (sd + eps) * eps + eps * eps


def _edge_rows(d: sc.ScoreDist, n_bins: int, h: float) -> int:
    """Rows whose grid score lies within h of an interior bin edge: only they can change
    bin (edges 0 and 1 bound the first and last bin on both sides)."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)[1:-1]
    if not len(edges) or not len(d.values):
        return 0
    near = np.min(np.abs(d.values[:, None] - edges[None, :]), axis=1) <= h + SLACK
    inside = (d.values >= 0.0) & (d.values <= 1.0)
    return int(d.total[near & inside].sum())


def _ece_errors(stats: GroupStats, params: Mapping[str, Any], h: float) -> list[float]:
    """ECE = Σ_b |Σ_{i∈b} (y_i − s_i)| / n: shifts within a bin move it by ≤ h; a row that
    changes bin moves two terms by ≤ 1 each. Per group: h + 2·m / n, m = rows near an
    interior edge."""
    from fairpolicy.metrics import scores as sc

    column, p, _ = sc.binary_column(stats)
    if column is None:
        return [0.0] * len(stats.groups)
    n_bins = sc.n_bins_param(params)
    scores = sc.score_stats(stats)
    out = []
    for g in range(len(stats.groups)):
        d = sc.score_dist(scores, g, column, p)
        out.append(0.0 if d.n == 0 else h + 2.0 * _edge_rows(d, n_bins, h) / d.n)
    return out


def calibration_gap(
    stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float
) -> float:
    return _gap(_ece_errors(stats, params, h), _defined(mv, stats))


def mean_score_gap(
    stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float
) -> float:
    """A mean of scores moves by at most h; the gap of two means by 2h."""
    return 2.0 * h


def brier_gap(stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float) -> float:
    """|(s + δ − y)² − (s − y)²| = |δ|·|2(s − y) + δ| ≤ h·(2 + h) per row (s, y in [0, 1])."""
    return 2.0 * h * (2.0 + h)


def score_ks_statistic(
    stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float
) -> float:
    """On the grid each CDF is the exact CDF read at the end of a grid cell, so for each
    pair |ΔKS| ≤ the largest share of either group's rows in one grid cell (scores in
    [0, 1]; other scores are not rounded)."""
    from fairpolicy.metrics import scores as sc

    column, p, _ = sc.binary_column(stats)
    if column is None:
        return 0.0
    scores = sc.score_stats(stats)
    shares = []
    for g in range(len(stats.groups)):
        d = sc.score_dist(scores, g, column, p)
        inside = (d.values >= 0.0) & (d.values <= 1.0)
        shares.append(float(d.total[inside].max()) / d.n if d.n and inside.any() else 0.0)
    top = sorted(shares, reverse=True)[:1]
    return top[0] if top else 0.0


def samd_fairness_score(
    stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float
) -> float:
    """1 − clip(Σ_t w_t·term_t) moves by at most Σ_t w_t·(the term's bound): the site term
    2·sd(site AUC) by 2·max ε (sd is 1-Lipschitz in the largest change), the calibration
    term by its gap bound; the F1, EO and DP terms are counts, exact."""
    weights = mv.details.get("weights", {})
    total = 0.0
    site = stats.secondary
    if site is not None and site.scores is not None and weights.get("site"):
        eps = max(_auc_errors(site), default=0.0)
        total += float(weights["site"]) * 2.0 * eps
    if weights.get("cal"):
        idx = list(range(len(stats.groups)))
        total += float(weights["cal"]) * _gap(_ece_errors(stats, {"n_bins": 10}, h), idx)
    return total


def scoring_impact_ratio(
    stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, h: float
) -> float | None:
    """Rows change side of the median only within 2g of it: the median moves by ≤ h and
    each score by ≤ h, so a row with |s − M| > 2h keeps ``s > M``. A category's scoring
    rate then moves by e_c ≤ m_c / n_c (m_c its rows within 4h of the grid median), and
    IR_c = ScR_c / max ScR by ≤ (e_c + IR_c·E) / (max ScR − E), E = the largest e over
    the level's kept categories; the value (the smallest IR) by the largest of these."""
    scores = stats.scores
    levels = mv.details.get("levels")
    median = mv.details.get("median_score")
    if scores is None or len(scores.columns) != 1 or not levels or median is None:
        return 0.0
    near = np.zeros(len(stats.groups))
    for g in range(len(stats.groups)):
        v, c = scores.values[g][0], scores.counts[g][0].sum(axis=1)
        inside = (v >= 0.0) & (v <= 1.0)
        near[g] = float(c[inside & (np.abs(v - float(median)) <= 4.0 * h + SLACK)].sum())
    keys = [tuple(k) for k in stats.group_keys] or [(g,) for g in stats.groups]
    worst = 0.0
    for level in levels:
        cols = [stats.dimension.index(c) for c in str(level["level"]).split(",")]
        if "highest_rate" not in level:
            continue
        share: dict[str, float] = {}
        for g, key in enumerate(keys):
            name = group_name(tuple(key[i] for i in cols))
            share[name] = share.get(name, 0.0) + near[g]
        kept = [c for c in level["categories"] if not c["excluded"] and c["n"]]
        errs = {c["category"]: share.get(c["category"], 0.0) / c["n"] for c in kept}
        big = max(errs.values(), default=0.0)
        top = float(level["highest_rate"])
        if top - big <= 0:
            return math.inf
        for c in kept:
            ir = c["impact_ratio"] or 0.0
            worst = max(worst, (errs[c["category"]] + ir * big) / (top - big))
    return worst


#: metric key → bound on |value on the grid − exact value|
BOUNDS: dict[str, Bound] = {
    "auc_gap": auc_gap,
    "multi_class_auc_gap": auc_gap,
    "inter_site_auc_variance": inter_site_auc_variance,
    "calibration_gap": calibration_gap,
    "calibration_parity": calibration_gap,
    "score_parity": mean_score_gap,
    "balance_positive_class": mean_score_gap,
    "balance_negative_class": mean_score_gap,
    "brier_gap": brier_gap,
    "score_ks_statistic": score_ks_statistic,
    "samd_fairness_score": samd_fairness_score,
    "scoring_impact_ratio": scoring_impact_ratio,
}


def grid_error(
    key: str, stats: GroupStats, params: Mapping[str, Any], mv: MetricValue, decimals: int
) -> float:
    """The bound for metric ``key`` on the compared groups' grid statistics ``stats``."""
    h = 0.5 * 10.0 ** (-decimals)
    bound = BOUNDS[key](stats, params, mv, h)
    return math.inf if bound is None else float(bound) + SLACK
