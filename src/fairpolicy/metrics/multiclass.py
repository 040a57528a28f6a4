"""Venturalitica's seven multi-class metrics, from per-group K×K confusion tables.

Notation: ``C_g[t, p]`` is the count of rows of group g with true class t and
predicted class p; ``n_g`` the group size. Per group and class:

- prediction rate  ``SR_g(c) = Σ_t C_g[t, c] / n_g``
- recall (TPR)     ``TPR_g(c) = C_g[c, c] / Σ_p C_g[c, p]``   (undefined if no true c in g)
- precision (PPV)  ``PPV_g(c) = C_g[c, c] / Σ_t C_g[t, c]``   (undefined if g never predicts c)

A (group, class) cell whose rate is undefined is left out of that class's
comparison and listed in ``details["undefined_cells"]``; a class is compared
only when at least two groups have a defined rate for it. Nothing is filled in:
where holisticai would invent a uniform 1/K rate, fairpolicy reports the cell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.metrics.base import (
    BoolArray,
    FloatArray,
    GroupValue,
    MetricValue,
    class_gaps,
    exact_matrix,
    exact_parts,
    exact_stats,
    gap,
    is_integral,
    safe_rate,
    too_few_groups,
    undefined_cells,
)
from fairpolicy.metrics.families import CONFUSION_VALUES as CONFUSION_VALUES
from fairpolicy.stats import GroupStats

_REASON = {
    "sr": "group has no rows",
    "tpr": "no row of this group has this true class, so its recall is undefined",
    "ppv": "this group is never predicted this class, so its precision is undefined",
}


def _hits(stats: GroupStats) -> tuple[NDArray[Any], NDArray[Any]]:
    """(correct predictions, rows) per group: the parts of each group's accuracy."""
    c = stats.counts
    return np.trace(c, axis1=1, axis2=2), c.sum(axis=(1, 2))


def _class_weights(stats: GroupStats) -> NDArray[Any] | None:
    """The predicted-class totals that weigh the class gaps, exactly (None: no exact
    counts)."""
    ex = exact_stats(stats)
    return None if ex is None else ex.counts.sum(axis=(0, 1))


def prediction_parts(stats: GroupStats) -> tuple[NDArray[Any], NDArray[Any]]:
    """(numerators, denominators) of :func:`prediction_rates`."""
    c = stats.counts
    num = c.sum(axis=1)
    return num, np.broadcast_to(c.sum(axis=(1, 2))[:, None], num.shape)


def recall_parts(stats: GroupStats) -> tuple[NDArray[Any], NDArray[Any]]:
    """(numerators, denominators) of :func:`recalls`."""
    c = stats.counts
    return np.diagonal(c, axis1=1, axis2=2), c.sum(axis=2)


def precision_parts(stats: GroupStats) -> tuple[NDArray[Any], NDArray[Any]]:
    """(numerators, denominators) of :func:`precisions`."""
    c = stats.counts
    return np.diagonal(c, axis1=1, axis2=2), c.sum(axis=1)


def prediction_rates(stats: GroupStats) -> tuple[FloatArray, BoolArray]:
    """(G, K) matrix of SR_g(c) = P(Ŷ = c | A = g)."""
    return safe_rate(*prediction_parts(stats))


def recalls(stats: GroupStats) -> tuple[FloatArray, BoolArray]:
    """(G, K) matrix of TPR_g(c) = P(Ŷ = c | Y = c, A = g)."""
    return safe_rate(*recall_parts(stats))


def precisions(stats: GroupStats) -> tuple[FloatArray, BoolArray]:
    """(G, K) matrix of PPV_g(c) = P(Y = c | Ŷ = c, A = g)."""
    return safe_rate(*precision_parts(stats))


def _exact_summary(
    cells: list[list[Fraction | None]],
    idx: NDArray[np.intp],
    aggregate: str,
    weights: NDArray[Any] | None,
) -> Fraction | None:
    """The exact aggregate of the per-class gaps of the classes ``idx``."""
    gaps: list[Fraction] = []
    for k in idx.tolist():
        col = [x for row in cells if (x := row[k]) is not None]
        gaps.append(max(col) - min(col))
    if aggregate == "max":
        return max(gaps)
    if aggregate == "mean":
        return sum(gaps, Fraction(0)) / len(gaps)
    if weights is None or not is_integral(weights):
        return None
    w = [int(weights[k]) for k in idx.tolist()]
    if sum(w) <= 0:
        return Fraction(0)
    return sum((wk * g for wk, g in zip(w, gaps, strict=True)), Fraction(0)) / sum(w)


def predicted_share(stats: GroupStats) -> FloatArray:
    """P(Ŷ = c) over all compared rows: the class weights of the ``weighted`` strategies."""
    pooled: FloatArray = stats.counts.sum(axis=(0, 1)).astype(np.float64)
    total = pooled.sum()
    return pooled / total if total > 0 else pooled


Parts = Callable[[GroupStats], tuple[NDArray[Any], NDArray[Any]]]


def row_table(stats: GroupStats) -> GroupStats:
    """``stats`` with its count table replaced by the data rows per cell: itself unless
    fractional sample weights hold the weighted sums (then the rows behind each cell,
    from the survey units)."""
    if stats.survey is None:
        return stats
    import dataclasses

    k = stats.num_classes
    table = np.stack(
        [
            np.bincount(cell, weights=rows, minlength=k * k)[: k * k]
            for cell, _, rows in stats.survey.units
        ]
    ).reshape(-1, k, k)
    return dataclasses.replace(
        stats, counts=np.rint(table).astype(np.int64), survey=None, exact_counts=None
    )


def per_class_summary(
    stats: GroupStats,
    values: FloatArray,
    defined: BoolArray,
    undefined_reason: str,
    aggregate: str,
    weights: FloatArray | None = None,
    exact: tuple[NDArray[Any], NDArray[Any]] | None = None,
    exact_weights: NDArray[Any] | None = None,
    parts: Parts | None = None,
) -> MetricValue:
    """Reduce a (G, K) per-group-per-class rate matrix to one number.

    ``aggregate``: ``max`` (worst class gap), ``mean`` (unweighted mean of the
    defined class gaps) or ``weighted`` (Σ_c w_c·gap_c over defined classes,
    weights renormalised over those classes). ``exact``: the matrix's integer
    (numerators, denominators) and ``exact_weights`` the integer class weights (counts),
    for the exact value (``MetricValue.exact``). ``parts``: the function that gave
    ``exact``, for the rows behind each rate (``MetricValue.cell_rows``) under fractional
    sample weights, whose exact sums are not rows (issue 28); without it there are none.
    """
    gaps, ok = class_gaps(values, defined)
    details: dict[str, Any] = {
        "classes": list(stats.classes),
        "per_class_gap": [float(g) if k else None for g, k in zip(gaps, ok, strict=True)],
        "per_group": {
            stats.groups[i]: [
                float(values[i, j]) if defined[i, j] else None for j in range(stats.num_classes)
            ]
            for i in range(len(stats.groups))
        },
        "aggregation": aggregate,
    }
    cells = undefined_cells(stats, defined, undefined_reason)
    if cells:
        details["undefined_cells"] = cells
    n = stats.n
    if not ok.any():
        groups = tuple(GroupValue(g, int(n[i]), None) for i, g in enumerate(stats.groups))
        return MetricValue(
            None,
            groups,
            details=details,
            reason=too_few_groups(stats, int(defined.any(axis=1).sum())) + " for any class",
        )
    idx = np.flatnonzero(ok)
    worst_class = int(idx[np.argmax(gaps[idx])])
    details["worst_class"] = stats.classes[worst_class]
    if aggregate == "max":
        value = float(gaps[idx].max())
    elif aggregate == "mean":
        value = float(gaps[idx].mean())
    else:
        assert weights is not None
        w = weights[idx]
        value = float((w * gaps[idx]).sum() / w.sum()) if w.sum() > 0 else 0.0
        details["class_weights"] = [float(x) for x in weights]
    matrix = exact_matrix(exact[0], exact[1], defined) if exact is not None else None
    exact_value = (
        _exact_summary(matrix, idx, aggregate, exact_weights) if matrix is not None else None
    )
    # per-group values shown: each group's rate on the class driving the gap
    col, col_ok = values[:, worst_class], defined[:, worst_class]
    shown = gap(stats, col, col_ok, undefined_reason)
    details.update({k: v for k, v in shown.details.items() if k in ("max_group", "min_group")})
    rows = None
    # under fractional weights the exact denominators are sums of the weights scaled to
    # integers (stats.exactsum), not rows: the rows come from the survey units instead
    weighted = stats.survey is not None or stats.exact_counts is not None
    behind = exact[1] if exact is not None and not weighted else None
    if weighted and exact is not None and parts is not None and stats.survey is not None:
        behind = parts(row_table(stats))[1]  # the rows, not the weights' exact sums
    if behind is not None:
        den = np.broadcast_to(np.asarray(behind), values.shape)
        rows = {g: [int(x) for x in den[i]] for i, g in enumerate(stats.groups)}
    return MetricValue(
        value,
        shown.groups,
        (),
        details,
        worst_group=shown.worst_group,
        exact=exact_value,
        cell_rows=rows,
    )


def multiclass_demographic_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Multi-class demographic parity (one-vs-rest prediction-rate gaps).

    gap_c = max_g SR_g(c) − min_g SR_g(c)
    aggregation=max   (default): value = max_c gap_c
    aggregation=macro:           value = (1/K) Σ_c gap_c

    Matches Venturalitica's ``multiclass_demographic_parity`` for both
    aggregations whenever every predicted class occurs in the labels, and fairlearn's
    per-class selection-rate differences (max_k). Deliberate difference: a class the model
    predicts but the labels never contain counts here (its rate gap is a disparity);
    Venturalitica takes its classes from the labels only, so leaves it out.

    Interval (``ci``): the simultaneous sup-t band over every (group, class) prediction
    rate SR_g(c), projected onto the max (macro: mean) over classes of max − min
    (docs/statistics.md, "multi-class metrics"). Not the percentile interval, which lies
    above the truth near a gap of 0.
    """
    values, defined = prediction_rates(stats)
    agg = "max" if params.get("aggregation", "max") == "max" else "mean"
    return per_class_summary(
        stats,
        values,
        defined,
        _REASON["sr"],
        agg,
        exact=exact_parts(prediction_parts, stats),
        parts=prediction_parts,
    )


def multiclass_equal_opportunity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Multi-class equal opportunity: the worst per-class recall (TPR) gap.

    gap_c = max_g TPR_g(c) − min_g TPR_g(c),  value = max_c gap_c

    A group with no true rows of class c is left out of gap_c only.
    Matches Venturalitica's ``multiclass_equal_opportunity``.

    Interval (``ci``): the simultaneous sup-t band over every (group, class) recall
    TPR_g(c), projected onto the max over classes of max − min (docs/statistics.md,
    "multi-class metrics"). Not the percentile interval, which lies above the truth near
    a gap of 0.
    """
    values, defined = recalls(stats)
    return per_class_summary(
        stats,
        values,
        defined,
        _REASON["tpr"],
        "max",
        exact=exact_parts(recall_parts, stats),
        parts=recall_parts,
    )


def macro_equal_opportunity_multiclass(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Macro equal opportunity: the unweighted mean of the per-class recall gaps.

    gap_c = max_g TPR_g(c) − min_g TPR_g(c),  value = (1/K') Σ_c gap_c

    over the K' classes with at least two comparable groups. Deliberate
    difference: Venturalitica's documentation (and its code) returns max_c gap_c
    under this name, which is ``multiclass_equal_opportunity``; a "macro"
    metric here is a true macro mean, so it is ≤ that maximum.

    Interval (``ci``): the simultaneous sup-t band over every (group, class) recall
    TPR_g(c), projected onto the mean over classes of max − min (docs/statistics.md,
    "multi-class metrics"). Not the percentile interval, which lies above the truth near
    a gap of 0.
    """
    values, defined = recalls(stats)
    return per_class_summary(
        stats,
        values,
        defined,
        _REASON["tpr"],
        "mean",
        exact=exact_parts(recall_parts, stats),
        parts=recall_parts,
    )


def weighted_demographic_parity_multiclass(
    stats: GroupStats, params: Mapping[str, Any]
) -> MetricValue:
    """Demographic parity with a configurable strategy across classes.

    With SR_g(c) = P(Ŷ = c | A = g) and gap_c = max_g SR_g(c) − min_g SR_g(c), value is:

    - ``macro`` (default): max_c gap_c — the worst class (Venturalitica's definition;
      equals ``multiclass_demographic_parity``; matches Venturalitica).
    - ``weighted``: Σ_c P(Ŷ = c)·gap_c — class gaps weighted by the overall
      predicted-class share (the target is not used; matches Venturalitica).
    - ``micro``: max over group pairs (g, h) of the total-variation distance
      ½ Σ_c |SR_g(c) − SR_h(c)| between whole prediction distributions.
    - ``one-vs-rest``: max over classes c and groups g of
      |P(Ŷ = c | A = g) − P(Ŷ = c | A ≠ g)|: each group against everyone else.

    Interval (``ci``): for ``macro``, the simultaneous sup-t band over every (group,
    class) prediction rate projected onto the max over classes of max − min; the other
    strategies (their class weights or group pairs vary from sample to sample) get the
    percentile interval read at tails ÷ 5 (docs/statistics.md).
    """
    strategy = params.get("strategy", "macro")
    values, defined = prediction_rates(stats)
    parts = exact_parts(prediction_parts, stats)
    if strategy == "macro":
        return per_class_summary(
            stats, values, defined, _REASON["sr"], "max", exact=parts, parts=prediction_parts
        )
    if strategy == "weighted":
        return per_class_summary(
            stats,
            values,
            defined,
            _REASON["sr"],
            "weighted",
            weights=predicted_share(stats),
            exact=parts,
            exact_weights=_class_weights(stats),
        )
    base = per_class_summary(stats, values, defined, _REASON["sr"], "max")
    if base.value is None:
        return base
    details = dict(base.details, strategy=strategy)
    if strategy == "micro":
        ok = np.flatnonzero(defined.all(axis=1))
        best, pair = -1.0, ("", "")
        for a_i, a in enumerate(ok):
            for b in ok[a_i + 1 :]:
                tv = 0.5 * float(np.abs(values[a] - values[b]).sum())
                if tv > best:
                    best, pair = tv, (stats.groups[a], stats.groups[b])
        details["worst_pair"] = list(pair)
        return MetricValue(best, base.groups, base.excluded, details, worst_group=pair[1])
    # one-vs-rest: group vs complement
    c = stats.counts
    pred = c.sum(axis=1).astype(np.float64)  # (G, K) predicted counts
    n = pred.sum(axis=1)
    rest = pred.sum(axis=0)[None, :] - pred
    rest_n = n.sum() - n
    rest_rate, rest_ok = safe_rate(rest, rest_n[:, None])
    diff = np.abs(values - rest_rate)
    cell_ok = defined & rest_ok
    diff = np.where(cell_ok, diff, -1.0)
    gi, ci = np.unravel_index(int(np.argmax(diff)), diff.shape)
    details["worst_cell"] = {"group": stats.groups[gi], "class": stats.classes[ci]}
    return MetricValue(
        float(diff[gi, ci]), base.groups, base.excluded, details, worst_group=stats.groups[gi]
    )


def micro_equalized_odds_multiclass(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Venturalitica's "micro equalized odds": accuracy gap plus error-rate gap.

    ACC_g = Σ_c C_g[c, c] / n_g,  ERR_g = 1 − ACC_g
    value = (max_g ACC_g − min_g ACC_g) + (max_g ERR_g − min_g ERR_g)
          = 2 · (max_g ACC_g − min_g ACC_g)

    What it measures, exactly: twice the overall-accuracy gap between groups
    (range [0, 2]). Despite the name it does not look at per-class TPR or FPR;
    use ``multiclass_equal_opportunity`` or ``multiclass_equality_of_opportunity``
    for that. Kept because Venturalitica's documentation and code define it so.

    Interval (``ci``): the simultaneous sup-t band over the groups' accuracies,
    projected onto 2 × (max − min) (docs/statistics.md, "multi-class metrics").
    """
    c = stats.counts
    hits, n = np.trace(c, axis1=1, axis2=2), c.sum(axis=(1, 2))
    acc, ok = safe_rate(hits, n)
    mv = gap(stats, acc, ok, "group has no rows", worst="min", exact=exact_parts(_hits, stats))
    if mv.value is None:
        return mv
    details = dict(mv.details, accuracy_gap=mv.value, error_rate_gap=mv.value)
    exact = 2 * mv.exact if mv.exact is not None else None
    return MetricValue(
        2 * mv.value,
        mv.groups,
        mv.excluded,
        details,
        worst_group=mv.worst_group,
        exact=exact,
    )


def predictive_parity_multiclass(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Multi-class predictive parity: per-class precision (PPV) gaps.

    gap_c = max_g PPV_g(c) − min_g PPV_g(c)   (a group that never predicts c is left out)
    value, strategy=macro (default): max_c gap_c   (Venturalitica: "the maximum across classes")
    value, strategy=weighted:        Σ_c P(Ŷ = c)·gap_c / Σ_c P(Ŷ = c) over comparable classes

    Interval (``ci``): the simultaneous sup-t band over every (group, class) precision
    PPV_g(c) (strategy macro), projected onto the max over classes of max − min
    (docs/statistics.md, "multi-class metrics"). Not the percentile interval, which lies
    above the truth near a gap of 0.
    """
    values, defined = precisions(stats)
    parts = exact_parts(precision_parts, stats)
    if params.get("strategy", "macro") == "weighted":
        return per_class_summary(
            stats,
            values,
            defined,
            _REASON["ppv"],
            "weighted",
            weights=predicted_share(stats),
            exact=parts,
            exact_weights=_class_weights(stats),
        )
    return per_class_summary(
        stats, values, defined, _REASON["ppv"], "max", exact=parts, parts=precision_parts
    )


def multiclass_confusion_metrics(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Per-class precision/recall (all compared rows) and per-group accuracy.

    A diagnostic: ``details`` holds ``per_class_metrics`` {class: {precision,
    recall, support}} and ``per_group_performance`` {group: {accuracy, n}}.
    The thresholdable number is chosen with ``value``:

    - ``worst_group_accuracy`` (default): min_g ACC_g  (higher is better)
    - ``accuracy_gap``: max_g ACC_g − min_g ACC_g
    - ``min_class_recall``: min_c recall(c) over classes with support
    - ``min_class_precision``: min_c precision(c) over predicted classes
    """
    c = stats.counts
    pooled = c.sum(axis=0)
    tp = np.diagonal(pooled).astype(np.float64)
    rec, rec_ok = safe_rate(tp, pooled.sum(axis=1))
    prec, prec_ok = safe_rate(tp, pooled.sum(axis=0))
    acc, acc_ok = safe_rate(np.trace(c, axis1=1, axis2=2), c.sum(axis=(1, 2)))
    exact_acc = exact_parts(_hits, stats)
    mv = gap(stats, acc, acc_ok, "group has no rows", worst="min", exact=exact_acc)
    n = stats.n
    details: dict[str, Any] = {
        "per_class_metrics": {
            k: {
                "precision": float(prec[j]) if prec_ok[j] else None,
                "recall": float(rec[j]) if rec_ok[j] else None,
                "support": int(pooled[j].sum()),
            }
            for j, k in enumerate(stats.classes)
        },
        "per_group_performance": {
            g: {"accuracy": float(acc[i]) if acc_ok[i] else None, "n": int(n[i])}
            for i, g in enumerate(stats.groups)
        },
        "value": params.get("value", "worst_group_accuracy"),
    }
    which = details["value"]
    value: float | None
    reason = None
    # the exact rational of each choice (counts are integers, or exact weight sums): the
    # decision and a baseline change compare it, as for every count metric
    exact: Fraction | None = None
    ex = exact_stats(stats)
    if which == "worst_group_accuracy":
        value = float(acc[acc_ok].min()) if acc_ok.any() else None
        if value is not None and exact_acc is not None:
            exact = _exact_min(*exact_acc, acc_ok)
    elif which == "accuracy_gap":
        value, reason, exact = mv.value, mv.reason, mv.exact
    elif which == "min_class_recall":
        value = float(rec[rec_ok].min()) if rec_ok.any() else None
        if value is not None and ex is not None:
            p = ex.counts.sum(axis=0)
            exact = _exact_min(np.diagonal(p), p.sum(axis=1), rec_ok)
    else:
        value = float(prec[prec_ok].min()) if prec_ok.any() else None
        if value is not None and ex is not None:
            p = ex.counts.sum(axis=0)
            exact = _exact_min(np.diagonal(p), p.sum(axis=0), prec_ok)
    if value is None and reason is None:
        reason = f"no class or group has a defined {which}"
    if exact is not None:
        value = float(exact)
    return MetricValue(value, mv.groups, mv.excluded, details, reason, mv.worst_group, exact=exact)


def _exact_min(num: NDArray[Any], den: NDArray[Any], ok: NDArray[Any]) -> Fraction:
    """min of num/den over the entries where ``ok``, exactly."""
    return min(Fraction(int(a), int(b)) for a, b, k in zip(num, den, ok, strict=True) if k)
