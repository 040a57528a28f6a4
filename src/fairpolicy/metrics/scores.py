"""Score metrics: AUC, calibration (ECE), Brier, score distributions, SaMD composite.

Every metric here is a pure function of the exact per-group score distributions
in ``stats.scores`` (:class:`~fairpolicy.stats.ScoreStats`): for group g and
score column j, the sorted distinct scores v and, per score, how many rows of
each true class carry it. Nothing is re-read from rows; ties are exact.

Score columns. A single column (``y_score``) holds P(positive class). With K
columns (``y_score_0..y_score_{K-1}``) column k holds P(class k), and a binary
metric reads the column of the positive class. K-aware metrics (fmm-fairness-eval) on
K = 2 use the positive class the binding resolved; if it resolved none (a
K-aware control does not set ``positive_label``) the positive class is the
second class label in sorted order (label ``1`` for 0/1 labels, as fmm-fairness-eval's
``y_score = P(class = 1)``).

Notation per group g and a class of interest c (the positive class, or class k
for one-vs-rest): over the distinct scores v_1 < … < v_m, P_i and N_i are the
rows of class c and of the other classes at v_i, P = Σ P_i, N = Σ N_i, n = P + N.

- AUC(g) = Σ_i P_i · (Σ_{l<i} N_l + N_i / 2) / (P · N)     (ties count one half;
  equals ``sklearn.metrics.roc_auc_score``). Undefined when P = 0 or N = 0: the
  group is excluded with the reason, never scored 0.5.
- Scores read as probabilities (ECE, Brier, mean scores) must lie in [0, 1]; a
  group with a score outside [0, 1] is excluded from those metrics with the
  reason (the binding already warns about such scores).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from fairpolicy.metrics import binary, f1
from fairpolicy.metrics.base import (
    BoolArray,
    Excluded,
    FloatArray,
    GroupValue,
    MetricValue,
    gap,
    too_few_groups,
)
from fairpolicy.metrics.families import DEFAULT_BINS as DEFAULT_BINS
from fairpolicy.metrics.families import N_BINS_PARAM as N_BINS_PARAM
from fairpolicy.stats import GroupStats, ScoreStats

IntArray = NDArray[np.int64]


_SINGLE_CLASS = "group has only one class ({present}), so its AUC is undefined"
_OUT_OF_RANGE = "{k} score(s) outside [0, 1]; this metric reads scores as probabilities"


# ---------------------------------------------------------------------------
# per-group score distributions


@dataclass(frozen=True)
class ScoreDist:
    """One group's score distribution for one column: class of interest vs the rest."""

    values: FloatArray  # sorted distinct scores
    pos: IntArray  # rows of the class of interest at each score
    neg: IntArray  # rows of every other class at each score

    @property
    def n(self) -> int:
        return int(self.pos.sum() + self.neg.sum())

    @property
    def total(self) -> IntArray:
        out: IntArray = self.pos + self.neg
        return out

    def out_of_range(self) -> int:
        """Rows whose score lies outside [0, 1]."""
        bad = (self.values < 0.0) | (self.values > 1.0)
        return int(self.total[bad].sum())


def score_dist(scores: ScoreStats, g: int, column: int, cls: int) -> ScoreDist:
    counts = scores.counts[g][column]
    pos = counts[:, cls].astype(np.int64)
    neg = counts.sum(axis=1).astype(np.int64) - pos
    return ScoreDist(scores.values[g][column], pos, neg)


def _auc(d: ScoreDist) -> float | None:
    """Exact ROC AUC of the class of interest (ties count 1/2); None if one class is absent."""
    p, n = int(d.pos.sum()), int(d.neg.sum())
    if p == 0 or n == 0:
        return None
    pos = d.pos.astype(np.float64)
    neg = d.neg.astype(np.float64)
    below = np.cumsum(neg) - neg  # negatives strictly below each score
    return float(np.dot(pos, below + 0.5 * neg) / (float(p) * float(n)))


#: a score within this many bin widths below an edge k/n_bins counts as on the edge: the
#: double nearest a decimal such as 0.3 lies up to ~1e-16 below it, and s·n_bins adds one
#: rounding, so 1e-12 separates every score written with up to 12 decimals from the edge
BIN_EDGE_TOLERANCE = 1e-12


def bin_index(values: FloatArray, n_bins: int) -> NDArray[np.intp]:
    """The bin of each score in [0, 1] under the documented rule: ``n_bins`` equal-width
    bins [k/n, (k+1)/n), the last one closed [lo, 1].

    The edges are the exact decimals k/n, not ``np.linspace`` floats: ``linspace`` puts
    the 0.3 edge at 0.30000000000000004, so a score written 0.3 (or 0.6, 0.7) would land
    in the bin below. Here bin = floor(s·n + BIN_EDGE_TOLERANCE), clipped to the last bin.
    """
    with np.errstate(invalid="ignore"):
        k = np.floor(np.asarray(values, dtype=np.float64) * n_bins + BIN_EDGE_TOLERANCE)
    return np.clip(k, 0, n_bins - 1).astype(np.intp)


def _ece(d: ScoreDist, n_bins: int) -> float:
    """ECE with ``n_bins`` equal-width bins on [0, 1]: [lo, hi), the last bin [lo, 1]
    (edges exactly k/n_bins, see :func:`bin_index`).

    value = Σ_b (n_b / n) · |pos_b / n_b − mean score in b|; scores in [0, 1].
    """
    idx = bin_index(d.values, n_bins)
    tot = d.total.astype(np.float64)
    n_b = np.bincount(idx, weights=tot, minlength=n_bins)
    pos_b = np.bincount(idx, weights=d.pos.astype(np.float64), minlength=n_bins)
    sum_b = np.bincount(idx, weights=d.values * tot, minlength=n_bins)
    ok = n_b > 0
    n = float(tot.sum())
    terms = (n_b[ok] / n) * np.abs(pos_b[ok] / n_b[ok] - sum_b[ok] / n_b[ok])
    return float(terms.sum())


def _brier(d: ScoreDist) -> float:
    """Mean squared distance between the score and the 0/1 outcome."""
    v = d.values
    total = np.dot(d.pos.astype(np.float64), (1.0 - v) ** 2) + np.dot(
        d.neg.astype(np.float64), v**2
    )
    return float(total / d.n)


def _mean(values: FloatArray, counts: IntArray) -> float | None:
    m = int(counts.sum())
    return None if m == 0 else float(np.dot(values, counts.astype(np.float64)) / m)


def _ks(a: ScoreDist, b: ScoreDist) -> float:
    """Two-sample Kolmogorov–Smirnov statistic max_x |F_a(x) − F_b(x)| (scipy's ks_2samp)."""
    grid = np.union1d(a.values, b.values)

    def cdf(d: ScoreDist) -> FloatArray:
        cum = np.concatenate(([0], np.cumsum(d.total)))
        out: FloatArray = cum[np.searchsorted(d.values, grid, side="right")] / d.n
        return out

    return float(np.max(np.abs(cdf(a) - cdf(b))))


# ---------------------------------------------------------------------------
# which column and class


def score_stats(stats: GroupStats) -> ScoreStats:
    if stats.scores is None:
        raise ValueError("score statistics are missing: the metric must declare needs_scores")
    return stats.scores


def _positive(stats: GroupStats) -> int:
    """The positive class index (fmm-fairness-eval: class 1 when the binding resolved none)."""
    return stats.positive if stats.positive is not None else 1


def binary_column(stats: GroupStats) -> tuple[int | None, int, str | None]:
    """(score column of P(positive), positive class, reason when no column fits)."""
    sc = score_stats(stats)
    p = _positive(stats)
    j = len(sc.columns)
    if j == 1:
        return 0, p, None
    if j == stats.num_classes:
        return p, p, None
    return (
        None,
        p,
        f"{j} score columns {list(sc.columns)} for K={stats.num_classes} classes: "
        "bind one column with P(positive) or one column per class",
    )


def _score_details(stats: GroupStats, column: int | None, p: int) -> dict[str, Any]:
    sc = score_stats(stats)
    return {
        "score_column": None if column is None else sc.columns[column],
        "positive_class": stats.classes[p] if p < stats.num_classes else None,
    }


def _no_column(stats: GroupStats, reason: str) -> MetricValue:
    return MetricValue(
        None,
        tuple(GroupValue(g, int(stats.n[i]), None) for i, g in enumerate(stats.groups)),
        reason=reason,
    )


def _present(stats: GroupStats, g: int) -> str:
    counts = stats.counts[g].sum(axis=1)
    return ", ".join(f"'{stats.classes[k]}'" for k in np.flatnonzero(counts)) or "no rows"


def _gap_with_reasons(
    stats: GroupStats,
    values: list[float | None],
    reasons: list[str | None],
    worst: Literal["min", "max"],
    details: dict[str, Any],
) -> MetricValue:
    """max − min over groups with a value; each excluded group keeps its own reason."""
    defined: BoolArray = np.array([v is not None for v in values], dtype=bool)
    arr: FloatArray = np.array([0.0 if v is None else v for v in values], dtype=np.float64)
    mv = gap(stats, arr, defined, "", worst=worst, details=details)
    n = stats.n
    excluded = tuple(
        Excluded(g, int(n[i]), reasons[i] or "undefined")
        for i, g in enumerate(stats.groups)
        if not defined[i]
    )
    return dataclasses.replace(mv, excluded=excluded)


# ---------------------------------------------------------------------------
# per-group values shared by several metrics


def _binary_auc(
    stats: GroupStats, column: int, p: int
) -> tuple[list[float | None], list[str | None]]:
    sc = score_stats(stats)
    values: list[float | None] = []
    reasons: list[str | None] = []
    for g in range(len(stats.groups)):
        auc = _auc(score_dist(sc, g, column, p))
        values.append(auc)
        reasons.append(
            None if auc is not None else _SINGLE_CLASS.format(present=_present(stats, g))
        )
    return values, reasons


def kaware_auc(
    stats: GroupStats,
) -> tuple[list[float | None], list[str | None], dict[str, Any], str | None]:
    """Per-group AUC as fmm-fairness-eval defines it: binary on K = 2, one-vs-rest macro on K > 2.

    Returns (values, per-group reasons, details, reason the whole metric is undefined).
    """
    sc = score_stats(stats)
    k = stats.num_classes
    if k <= 2:
        column, p, why = binary_column(stats)
        if column is None:
            return [], [], {}, why
        values, reasons = _binary_auc(stats, column, p)
        return values, reasons, {"average": "binary", **_score_details(stats, column, p)}, None
    if len(sc.columns) != k:
        return (
            [],
            [],
            {},
            f"one-vs-rest AUC needs one score column per class: K={k} classes but "
            f"{len(sc.columns)} score column(s) {list(sc.columns)}",
        )
    values = []
    reasons = []
    per_class: dict[str, list[float | None]] = {}
    for g, name in enumerate(stats.groups):
        row = [_auc(score_dist(sc, g, c, c)) for c in range(k)]
        per_class[name] = row
        if any(a is None for a in row):
            support = stats.counts[g].sum(axis=1)
            absent = [stats.classes[c] for c in range(k) if support[c] == 0]
            values.append(None)
            reasons.append(
                f"class(es) {absent} absent from this group, so its one-vs-rest AUC is undefined"
                if absent
                else _SINGLE_CLASS.format(present=_present(stats, g))
            )
        else:
            values.append(float(np.mean([a for a in row if a is not None])))
            reasons.append(None)
    details = {
        "average": "ovr-macro",
        "classes": list(stats.classes),
        "score_columns": list(sc.columns),
        "per_group_per_class_auc": per_class,
    }
    return values, reasons, details, None


def _probability_groups(
    stats: GroupStats, column: int, p: int
) -> tuple[list[ScoreDist | None], list[str | None]]:
    """Each group's distribution of P(positive), or None with why (scores outside [0, 1])."""
    sc = score_stats(stats)
    dists: list[ScoreDist | None] = []
    reasons: list[str | None] = []
    for g in range(len(stats.groups)):
        d = score_dist(sc, g, column, p)
        bad = d.out_of_range()
        if d.n == 0:
            dists.append(None)
            reasons.append("group has no rows")
        elif bad:
            dists.append(None)
            reasons.append(_OUT_OF_RANGE.format(k=bad))
        else:
            dists.append(d)
            reasons.append(None)
    return dists, reasons


def n_bins_param(params: Mapping[str, Any]) -> int:
    n_bins = int(params.get("n_bins", DEFAULT_BINS))
    if n_bins < 1:
        raise ValueError(f"n_bins must be at least 1, got {n_bins}")
    return n_bins


def _ece_per_group(
    stats: GroupStats, params: Mapping[str, Any], *, single_class: bool
) -> tuple[list[float | None], list[str | None], dict[str, Any], str | None]:
    column, p, why = binary_column(stats)
    if column is None:
        return [], [], {}, why
    n_bins = n_bins_param(params)
    dists, reasons = _probability_groups(stats, column, p)
    values: list[float | None] = []
    for g, d in enumerate(dists):
        if d is not None and not single_class and (d.pos.sum() == 0 or d.neg.sum() == 0):
            values.append(None)
            reasons[g] = (
                f"group has only one class ({_present(stats, g)}); calibration parity "
                "compares groups that contain both outcomes"
            )
        else:
            values.append(None if d is None else _ece(d, n_bins))
    details = {
        "n_bins": n_bins,
        "bins": "equal-width on [0, 1]: [lo, hi), the last bin [lo, 1]",
        **_score_details(stats, column, p),
    }
    return values, reasons, details, None


# ---------------------------------------------------------------------------
# fmm-fairness-eval (fmm_fairness v0.2): K-aware AUC, calibration, composite


def multi_class_auc_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """AUC gap across groups, K-aware (fmm_fairness v0.2 ``multi_class_auc_gap``).

    AUC(g) = binary ROC AUC of P(positive) on K = 2;
             one-vs-rest macro AUC on K > 2: mean_k AUC_k(g), where AUC_k(g) ranks
             rows of class k against the rest by score column k
             (= ``roc_auc_score(y, P, multi_class="ovr", average="macro")``)
    value = max_g AUC(g) − min_g AUC(g)

    Undefined: a group with a single class (K = 2) or missing any class (K > 2)
    has no AUC and is excluded with the reason; fewer than two groups left →
    no value. On K > 2 every class needs its own score column.
    """
    values, reasons, details, why = kaware_auc(stats)
    if why is not None:
        return _no_column(stats, why)
    return _gap_with_reasons(stats, values, reasons, "min", details)


def inter_site_auc_variance(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Population variance of the per-group (per-site) AUC, K-aware (fmm_fairness v0.2).

    AUC(g) = as in ``multi_class_auc_gap`` (binary AUC on K = 2, one-vs-rest
             macro AUC on K > 2)
    value = (1/G) Σ_g (AUC(g) − mean AUC)²     (``numpy.var``, ddof = 0; range [0, 0.25])

    Bind ``input.dimension`` to the site column. Groups without an AUC (one
    class, or a class missing on K > 2) are excluded with the reason; fewer than
    two groups left → no value (fmm-fairness-eval v0.1 reported 0.0 there). The worst group is
    the site with the lowest AUC.
    """
    values, reasons, details, why = kaware_auc(stats)
    if why is not None:
        return _no_column(stats, why)
    base = _gap_with_reasons(stats, values, reasons, "min", details)
    if base.value is None:
        return base
    aucs = np.array([v for v in values if v is not None], dtype=np.float64)
    d = dict(base.details)
    d["auc_range"] = base.value
    return dataclasses.replace(base, value=float(np.var(aucs)), details=d)


def calibration_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Calibration gap: ECE per group, max − min (fmm_fairness ``calibration_gap``).

    Bins: ``n_bins`` (default 10) equal-width bins on [0, 1], each [lo, hi) and
    the last one closed [lo, 1], so a score of exactly 1.0 is counted. The edges
    are the exact decimals k/n_bins (a score within 1e-12 bin widths below an edge
    counts as on it). Deliberate difference from fmm_fairness: its edges are
    ``np.linspace`` floats (0.30000000000000004), so a score of exactly 0.3, 0.6 or
    0.7 (decile scores such as COMPAS's) falls in the bin below there and in the
    bin it names here; other scores bin identically.
    ECE(g) = Σ_b (n_b / n_g) · |pos_b / n_b − mean score in b|
             (pos_b: rows of the positive class in bin b; empty bins add nothing)
    value = max_g ECE(g) − min_g ECE(g)

    Binary only (fmm-fairness-eval: the CLI does not ingest per-class operating thresholds);
    on K > 2 the runner stops naming weighted_f1_gap, macro_f1_gap, per_class_f1_gap.
    A single-class group keeps its ECE (fmm-fairness-eval computes it); a group with a score
    outside [0, 1] is excluded with the reason.
    """
    values, reasons, details, why = _ece_per_group(stats, params, single_class=True)
    if why is not None:
        return _no_column(stats, why)
    return _gap_with_reasons(stats, values, reasons, "max", details)


#: fmm-fairness-eval (v0.2) default weights of samd_fairness_score
SAMD_WEIGHTS = {"f1_site": 0.35, "site": 0.20, "eo": 0.20, "dp": 0.10, "cal": 0.15}
_SAMD_BINARY_TERMS = ("eo", "dp", "cal")


def samd_fairness_score(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Composite SaMD fairness score, fmm_fairness v0.2 (higher is fairer).

    Terms (``dimension`` = the demographic attribute, ``site`` = the site column):
      F1_SITE = weighted_f1_gap across sites
      SITE    = min(1, 2 · sqrt(Var_site AUC(site)))   — AUC K-aware as in
                ``inter_site_auc_variance`` (population variance); with two sites
                this is exactly max − min of the per-site AUC
      EO      = equal_opportunity_diff across ``dimension``        (binary only)
      DP      = demographic_parity_diff across ``dimension``       (binary only)
      CAL     = calibration_gap (10 bins) across ``dimension``     (binary only)
    Weights (fmm-fairness-eval v0.2): w_f1_site 0.35, w_site 0.20, w_eo 0.20, w_dp 0.10, w_cal 0.15.
    On K > 2 the binary-only weights are 0 and {w_f1_site, w_site} are renormalised
    to sum to 1 (0.35/0.55, 0.20/0.55).
    value = 1 − clip(Σ_t w_t · term_t, 0, 1)

    fmm-fairness-eval v0.1 had four terms (w_site 0.40, w_eo 0.30, w_dp 0.15, w_cal 0.15, no
    F1_SITE); ``details["components"]`` holds every term so either can be
    recomputed. fmm-fairness-eval averages EO/DP/CAL over several demographic attributes; here
    the control's one ``dimension`` is the attribute (write one control per
    attribute). Undefined: a term with a non-zero weight that is undefined makes
    the score undefined (never a silent 0 gap, which fmm-fairness-eval v0.1 used); the terms'
    excluded groups are listed with the term's name. Per-group values are not
    defined for a composite (the groups are listed for their sizes).
    """
    groups = tuple(GroupValue(g, int(stats.n[i]), None) for i, g in enumerate(stats.groups))
    site = stats.secondary
    if site is None:
        return MetricValue(
            None,
            groups,
            reason="samd_fairness_score needs the site grouping (input.site); none was supplied",
        )
    k = stats.num_classes
    binary_terms = k <= 2
    if binary_terms:
        stats = stats.with_extras(positive=_positive(stats))
        site = site.with_extras(positive=_positive(site))
    weights = dict(SAMD_WEIGHTS)
    if not binary_terms:
        kept = weights["f1_site"] + weights["site"]
        weights = {t: (w / kept if t in ("f1_site", "site") else 0.0) for t, w in weights.items()}

    components: dict[str, float | None] = {}
    reasons: dict[str, str] = {}
    excluded: list[Excluded] = []
    details: dict[str, Any] = {
        "version": "fmm_fairness v0.2",
        "weights": weights,
        "site_n": {g: int(n) for g, n in zip(site.groups, site.n, strict=True)},
    }

    def term(name: str, label: str, mv: MetricValue, on_dimension: bool) -> None:
        components[name] = mv.value
        if mv.value is None:
            reasons[name] = mv.reason or "undefined"
        for e in mv.excluded:
            if on_dimension:
                excluded.append(Excluded(e.group, e.n, f"{label}: {e.reason}"))
            else:
                details.setdefault("site_excluded", []).append(
                    {"term": label, "site": e.group, "n": e.n, "reason": e.reason}
                )

    term("f1_site", "weighted_f1_gap across sites", f1.weighted_f1_gap(site, {}), False)
    site_auc = inter_site_auc_variance(site, {})
    term("site", "inter-site AUC", site_auc, False)
    if site_auc.value is not None:
        components["site"] = min(1.0, 2.0 * float(np.sqrt(site_auc.value)))
        details["site_auc"] = {g.group: g.value for g in site_auc.groups}
        details["site_auc_variance"] = site_auc.value
    if binary_terms:
        term("eo", "equal_opportunity_diff", binary.equal_opportunity_diff(stats, {}), True)
        term("dp", "demographic_parity_diff", binary.demographic_parity_diff(stats, {}), True)
        cal = calibration_gap(stats, {"n_bins": DEFAULT_BINS})
        term("cal", "calibration_gap", cal, True)
    else:
        for t in _SAMD_BINARY_TERMS:
            components[t] = None
    details["components"] = components
    missing = [t for t, w in weights.items() if w > 0 and components.get(t) is None]
    if missing:
        details["component_reasons"] = reasons
        why = "; ".join(f"{t}: {reasons.get(t, 'undefined')}" for t in missing)
        return MetricValue(
            None,
            groups,
            tuple(excluded),
            details,
            reason=f"a term of the composite is undefined — {why}",
        )
    raw = sum(w * (components[t] or 0.0) for t, w in weights.items() if w > 0)
    details["deduction"] = raw
    return MetricValue(1.0 - min(1.0, max(0.0, raw)), groups, tuple(excluded), details)


# ---------------------------------------------------------------------------
# eval-toolkit's calibration parity (its "Fairness & subgroup slicing" guide)


def calibration_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Calibration parity as eval-toolkit computes it: per-group ECE, max − min.

    ECE(g) = eval_toolkit.metrics.expected_calibration_error: ``n_bins`` (default
             10) equal-width bins, bin index = clip(digitize(s, edges) − 1, 0,
             n_bins − 1), i.e. [lo, hi) with a score of 1.0 in the last bin;
             Σ_b (n_b / n_g) · |mean score in b − positive rate in b|
    value = max_g ECE(g) − min_g ECE(g)

    Differs from ``calibration_gap`` (fmm-fairness-eval) only at the edges, as eval-toolkit does:
    a group with a single class is excluded ("single-class" in eval-toolkit), and
    groups under min_samples (eval-toolkit: n < 30, the runner's default) are
    excluded. The bin convention is the same as fmm-fairness-eval's (both left-closed, last
    bin closed), so the per-group ECE values coincide. Deliberate difference from
    eval-toolkit (and fmm-fairness-eval): their edges are ``np.linspace`` floats, so a score of
    exactly 0.3, 0.6 or 0.7 falls in the bin below; here the edges are the exact
    decimals k/n_bins (a score within 1e-12 bin widths below an edge counts as on
    it), so such a score lies in the bin [lo, hi) names. A score outside [0, 1]
    excludes its group (eval-toolkit raises). eval-toolkit's example calls the
    debiased L2 equal-mass ECE; that estimator splits tied scores by row order,
    so it is not a function of the score distribution and is not offered.
    The fairness-metrics tutorial's snippet uses half-open bins everywhere (a score of 1.0 falls in
    no bin); fairpolicy keeps 1.0 in the last bin.
    """
    values, reasons, details, why = _ece_per_group(stats, params, single_class=False)
    if why is not None:
        return _no_column(stats, why)
    return _gap_with_reasons(stats, values, reasons, "max", details)


# ---------------------------------------------------------------------------
# the fairness-metrics tutorial's probabilistic metrics (binary, score = P(positive))


def _prob_metric(
    stats: GroupStats,
    per_group: Any,
    worst: Literal["min", "max"],
    extra: dict[str, Any] | None = None,
) -> MetricValue:
    """A gap of ``per_group(dist) -> (value | None, reason)`` over probability groups."""
    column, p, why = binary_column(stats)
    if column is None:
        return _no_column(stats, why or "no score column")
    dists, reasons = _probability_groups(stats, column, p)
    values: list[float | None] = []
    for g, d in enumerate(dists):
        if d is None:
            values.append(None)
            continue
        v, r = per_group(d)
        values.append(v)
        if v is None:
            reasons[g] = r
    return _gap_with_reasons(
        stats, values, reasons, worst, {**_score_details(stats, column, p), **(extra or {})}
    )


def score_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Mean-score parity (fairness-metrics tutorial ``score_parity.mean_diff``), any groups.

    mean(g) = mean of P(positive) over the rows of group g
    value = max_g mean(g) − min_g mean(g)

    The fairness-metrics tutorial takes |mean_0 − mean_1| for two groups; this is the same number
    there.
    A group with a score outside [0, 1] is excluded with the reason.
    """
    return _prob_metric(stats, lambda d: (_mean(d.values, d.total), "group has no rows"), "min")


def balance_positive_class(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Positive-class balance (Kleinberg et al.; fairness-metrics tutorial ``balance_positive``).

    B⁺(g) = mean P(positive) over the rows of group g whose true class is positive
    value = max_g B⁺(g) − min_g B⁺(g)

    A group with no actual positives has no B⁺ and is excluded with the reason
    (the fairness-metrics tutorial returns None for it).
    """
    return _prob_metric(
        stats,
        lambda d: (
            _mean(d.values, d.pos),
            "group has no actual positives, so its mean score among positives is undefined",
        ),
        "min",
    )


def balance_negative_class(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Negative-class balance (Kleinberg et al.; fairness-metrics tutorial ``balance_negative``).

    B⁻(g) = mean P(positive) over the rows of group g whose true class is negative
    value = max_g B⁻(g) − min_g B⁻(g)

    A group with no actual negatives has no B⁻ and is excluded with the reason.
    The worst group is the one whose negatives get the highest scores.
    """
    return _prob_metric(
        stats,
        lambda d: (
            _mean(d.values, d.neg),
            "group has no actual negatives, so its mean score among negatives is undefined",
        ),
        "max",
    )


def brier_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Brier-score gap (the fairness-metrics tutorial's ``brier_parity``), any number of groups.

    Brier(g) = (1/n_g) Σ_rows (s − 1[y = positive])²   (= sklearn ``brier_score_loss``)
    value = max_g Brier(g) − min_g Brier(g)

    A single-class group keeps its Brier score (it is defined); a group with a
    score outside [0, 1] is excluded with the reason.
    """
    return _prob_metric(stats, lambda d: (_brier(d), "group has no rows"), "max")


def auc_gap(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Binary AUC gap (the fairness-metrics tutorial's ``auc_parity``), any number of groups.

    AUC(g) = ROC AUC of P(positive) within group g (ties count one half;
             = sklearn ``roc_auc_score``)
    value = max_g AUC(g) − min_g AUC(g)

    A group with a single class has no AUC (the fairness-metrics tutorial returns None for it):
    it is excluded with the reason, never scored 0.5. The tutorial then drops the parity
    silently; here fewer than two groups with an AUC → no value, inconclusive.
    """
    column, p, why = binary_column(stats)
    if column is None:
        return _no_column(stats, why or "no score column")
    values, reasons = _binary_auc(stats, column, p)
    return _gap_with_reasons(stats, values, reasons, "min", _score_details(stats, column, p))


def score_ks_statistic(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Kolmogorov–Smirnov distance between groups' score distributions (fairness-metrics tutorial).

    KS(a, b) = max_x |F_a(x) − F_b(x)|, F_g the empirical CDF of P(positive) in
               group g (= ``scipy.stats.ks_2samp(s_a, s_b).statistic``)
    value = max over pairs of groups of KS(a, b)   (two groups: the tutorial's statistic)

    Per-group value: the group's largest KS distance to any other group;
    ``details["pairs"]`` lists every pair and ``details["max_pair"]`` the most
    distant one (no worst group: a distance has no unfavourable side). Any
    real-valued score works (the statistic only compares the distributions).
    """
    column, p, why = binary_column(stats)
    if column is None:
        return _no_column(stats, why or "no score column")
    sc = score_stats(stats)
    dists = [score_dist(sc, g, column, p) for g in range(len(stats.groups))]
    ok = [i for i, d in enumerate(dists) if d.n > 0]
    details = _score_details(stats, column, p)
    n = stats.n
    excluded = tuple(
        Excluded(g, int(n[i]), "group has no rows")
        for i, g in enumerate(stats.groups)
        if i not in ok
    )
    if len(ok) < 2:
        groups = tuple(GroupValue(g, int(n[i]), None) for i, g in enumerate(stats.groups))
        return MetricValue(None, groups, excluded, details, reason=too_few_groups(stats, len(ok)))
    best: dict[int, float] = {}
    pairs: list[tuple[str, str, float]] = []
    for x, i in enumerate(ok):
        for j in ok[x + 1 :]:
            d = _ks(dists[i], dists[j])
            pairs.append((stats.groups[i], stats.groups[j], d))
            best[i] = max(best.get(i, 0.0), d)
            best[j] = max(best.get(j, 0.0), d)
    top = max(pairs, key=lambda r: r[2])  # the first of ties, in group order
    details = {
        **details,
        "pairs": [{"a": a, "b": b, "ks": d} for a, b, d in pairs],
        "max_pair": [top[0], top[1]],
    }
    groups = tuple(GroupValue(g, int(n[i]), best.get(i)) for i, g in enumerate(stats.groups))
    # a distance has no unfavourable end: no worst group, the pair is in details
    return MetricValue(top[2], groups, excluded, details)
