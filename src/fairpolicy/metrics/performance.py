"""Overall performance and data checks, so Venturalitica policies port unchanged.

These are not gaps. The performance scores (``accuracy_score``,
``precision_score``, ``recall_score``, ``f1_score``) are computed on the pooled
confusion table of the *compared* rows — every group that passed the
``min_samples`` rule; rows with a missing dimension value and excluded groups
are not counted — and each group's own score is shown per group. The data
checks read only the labels (``class_imbalance``, ``group_min_positive_rate``)
or only the group sizes (``min_group_share``, ``group_size``).

A control that binds only ``input.target`` (no prediction) is counted target
against target, so ``counts[g, t, t]`` holds the class counts; the label
metrics read the target axis only, so a bound prediction changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any, Literal

import numpy as np

from fairpolicy.metrics.base import (
    FloatArray,
    GroupValue,
    MetricValue,
    exact_rates,
    exact_stats,
    is_integral,
    safe_rate,
)
from fairpolicy.metrics.binary import group_rate, rate_parts
from fairpolicy.metrics.families import AVERAGES as AVERAGES
from fairpolicy.stats import GroupStats, IntArray

Which = Literal["precision", "recall", "f1"]


def _best(stats: GroupStats, values: list[float | None]) -> str | None:
    """The group with the lowest defined value (the worst for a higher-is-better score)."""
    defined = [(v, i) for i, v in enumerate(values) if v is not None]
    return stats.groups[min(defined)[1]] if defined else None


def _group_values(stats: GroupStats, values: list[float | None]) -> tuple[GroupValue, ...]:
    n = stats.n
    return tuple(GroupValue(g, int(n[i]), values[i]) for i, g in enumerate(stats.groups))


# ---------------------------------------------------------------------------
# performance


def _per_class(c: IntArray, which: Which) -> tuple[FloatArray, Any]:
    """Per-class precision/recall/F1 of one K×K table and where each is defined."""
    tp = np.diagonal(c).astype(np.float64)
    pred = c.sum(axis=0).astype(np.float64)
    true = c.sum(axis=1).astype(np.float64)
    if which == "precision":
        return safe_rate(tp, pred)
    if which == "recall":
        return safe_rate(tp, true)
    return safe_rate(2 * tp, pred + true)


_UNDEF = {
    "precision": "it is never predicted",
    "recall": "it never occurs in the labels",
    "f1": "it occurs neither in the labels nor in the predictions",
}


def _score(
    c: IntArray, which: Which, average: str, pos: int | None, classes: tuple[str, ...]
) -> tuple[float | None, str | None, list[str]]:
    """(score, reason if undefined, classes counted as 0 under zero_division=0)."""
    k = c.shape[0]
    if c.sum() == 0:
        return None, "no rows", []
    values, defined = _per_class(c, which)
    if average == "binary":
        if k > 2:
            return (
                None,
                f"average='binary' needs two classes, but there are K={k} "
                f"{list(classes[:8])}; set average to macro, micro or weighted",
                [],
            )
        if k < 2:
            return (
                None,
                f"only the class {list(classes)} occurs in the labels and predictions, and "
                "average='binary' needs two classes; set average to macro, micro or weighted",
                [],
            )
        if pos is None:
            return (
                None,
                f"average='binary' needs the positive class, and none of the labels "
                f"{list(classes)} is known to be it; set positive_label to one of them, "
                "or average to macro, micro or weighted",
                [],
            )
        if not defined[pos]:
            return None, f"the positive class '{classes[pos]}' has no {which}: {_UNDEF[which]}", []
        return float(values[pos]), None, []
    if average == "micro":
        # every row has exactly one true and one predicted class: Σ TP / n
        return float(np.trace(c)) / float(c.sum()), None, []
    present = (c.sum(axis=0) + c.sum(axis=1)) > 0  # scikit-learn's default label set
    zeroed = [classes[i] for i in np.flatnonzero(present & ~defined)]
    filled = np.where(defined, values, 0.0)
    if average == "macro":
        return float(filled[present].mean()), None, zeroed
    support = c.sum(axis=1).astype(np.float64)
    return float((filled * support).sum() / support.sum()), None, zeroed


def _performance(stats: GroupStats, params: Mapping[str, Any], which: Which) -> MetricValue:
    average = str(params.get("average", "binary"))
    pos = stats.positive  # positive_label, else label 1 (set by the binding for K = 2)
    pooled = stats.counts.sum(axis=0)
    value, reason, zeroed = _score(pooled, which, average, pos, stats.classes)
    per_group = [
        _score(stats.counts[i], which, average, pos, stats.classes)
        for i in range(len(stats.groups))
    ]
    details: dict[str, Any] = {
        "average": average,
        "rows": int(pooled.sum()),
        "classes": list(stats.classes),
    }
    if average == "binary" and pos is not None:
        details["positive_class"] = stats.classes[pos]
    if zeroed:
        details["zero_division_classes"] = zeroed
        details["zero_division"] = (
            f"{which} of these classes is 0/0 ({_UNDEF[which]}); each is averaged in as 0, "
            "as scikit-learn does with zero_division=0"
        )
    reasons = {g: per_group[i][1] for i, g in enumerate(stats.groups) if per_group[i][1]}
    if reasons:
        details["undefined_groups"] = reasons
    values = [v for v, _, _ in per_group]
    groups = _group_values(stats, values)
    if value is None:
        return MetricValue(None, groups, (), details, reason=reason)
    return MetricValue(value, groups, (), details, worst_group=_best(stats, values))


def accuracy_score(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Accuracy of the compared rows.

    value = Σ_k C[k, k] / n     over the pooled confusion table C of the compared rows

    Equals scikit-learn ``accuracy_score`` on those rows (and Venturalitica's
    ``accuracy_score``, which uses every row of the file). Per-group values are
    each group's accuracy.
    """
    pooled = stats.counts.sum(axis=0)
    per = stats.counts
    values: list[float | None] = [
        float(np.trace(per[i])) / float(per[i].sum()) if per[i].sum() else None
        for i in range(len(stats.groups))
    ]
    details = {"rows": int(pooled.sum()), "classes": list(stats.classes)}
    groups = _group_values(stats, values)
    if pooled.sum() == 0:
        return MetricValue(None, groups, (), details, reason="no rows")
    value = float(np.trace(pooled)) / float(pooled.sum())
    return MetricValue(value, groups, (), details, worst_group=_best(stats, values))


_AVERAGE_DOC = """
    ``average`` as in scikit-learn: ``binary`` (default; the score of the
    positive class — ``positive_label``, else label 1 — needs K = 2),
    ``micro`` (Σ TP / n = accuracy), ``macro`` (unweighted mean over the classes
    that occur in the labels or predictions), ``weighted`` (mean weighted by
    each class's support). A class whose score is 0/0 is averaged in as 0
    (scikit-learn's zero_division=0) and named in ``details``; with
    ``average="binary"`` a 0/0 score is undefined (None, with the reason)
    instead of a silent 0. Per-group values are each group's own score.
"""


def precision_score(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Precision of the compared rows.

    precision_k = C[k, k] / Σ_t C[t, k]
    value = precision of the positive class, or its micro/macro/weighted average
    """
    return _performance(stats, params, "precision")


def recall_score(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Recall of the compared rows.

    recall_k = C[k, k] / Σ_p C[k, p]
    value = recall of the positive class, or its micro/macro/weighted average
    """
    return _performance(stats, params, "recall")


def f1_score(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """F1 score of the compared rows.

    F1_k = 2·C[k, k] / (Σ_t C[t, k] + Σ_p C[k, p])
    value = F1 of the positive class, or its micro/macro/weighted average
    """
    return _performance(stats, params, "f1")


for _fn in (precision_score, recall_score, f1_score):
    _fn.__doc__ = (_fn.__doc__ or "").rstrip() + "\n" + _AVERAGE_DOC


# ---------------------------------------------------------------------------
# data checks on the labels


def class_imbalance(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Class imbalance of the target: the smallest class count over the largest.

    N_k = number of compared rows whose TRUE class is k, for every class k of the binding
    value = min_k N_k / max_k N_k        (1 = balanced, 0 = a class is absent)

    Venturalitica's ``class_imbalance`` (min/max of the target's value counts).
    Differences: it counts every row of the file and only the classes that
    occur; fairpolicy counts the compared rows and every class of the binding
    (a class declared with ``num_classes`` or seen only in a bound prediction
    counts with N_k = 0, so the value is 0). With a single class in the
    labels the value is 0, as in Venturalitica. Per-group values are each
    group's own min/max class ratio.
    """
    per_class = stats.counts.sum(axis=2)  # (G, K): true-class counts
    pooled = per_class.sum(axis=0)
    details: dict[str, Any] = {
        "class_counts": {c: int(v) for c, v in zip(stats.classes, pooled, strict=True)},
    }
    values: list[float | None] = [
        float(row.min()) / float(row.max()) if len(row) > 1 and row.max() > 0 else 0.0
        for row in per_class
    ]
    groups = _group_values(stats, values)
    if pooled.sum() == 0:
        return MetricValue(None, groups, (), details, reason="no rows")
    if len(pooled) < 2:
        details["note"] = f"only one class ({stats.classes[0]!r}) occurs, the worst imbalance"
        return MetricValue(0.0, groups, (), details, worst_group=_best(stats, values))
    details["minority_class"] = stats.classes[int(np.argmin(pooled))]
    details["majority_class"] = stats.classes[int(np.argmax(pooled))]
    value = float(pooled.min()) / float(pooled.max())
    return MetricValue(value, groups, (), details, worst_group=_best(stats, values))


def group_min_positive_rate(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """The lowest rate of the positive class in the target across groups.

    P_g = P(Y = positive | A = g) = (TP_g + FN_g) / n_g      (the labels, not predictions)
    value = min_g P_g

    Venturalitica's ``group_min_positive_rate``. Differences: the positive class
    is ``positive_label`` (default 1) where Venturalitica takes the largest label
    value of each group; Venturalitica's ``age_bucket_method`` (quantile buckets of
    a numeric dimension) is not supported — bucket the column before the check.
    P_g equals Aequitas' ``prev``.
    """
    values, defined = group_rate(stats, "prev")
    per: list[float | None] = [
        float(v) if ok else None for v, ok in zip(values, defined, strict=True)
    ]
    assert stats.positive is not None
    c = stats.counts
    pooled_pos = int(c[:, stats.positive, :].sum())
    details: dict[str, Any] = {
        "positive_class": stats.classes[stats.positive],
        "overall": pooled_pos / int(c.sum()) if c.sum() else None,
    }
    groups = _group_values(stats, per)
    if not defined.any():
        return MetricValue(None, groups, (), details, reason="no group has rows")
    worst = _best(stats, per)
    ex = exact_stats(stats)  # whole counts, or the exact sums of fractional weights
    parts = None if ex is None else rate_parts(ex.counts, stats.positive, "prev")
    rates = exact_rates(parts, np.flatnonzero(defined))
    exact = min(rates) if rates else None
    return MetricValue(
        float(values[defined].min()), groups, (), details, worst_group=worst, exact=exact
    )


# ---------------------------------------------------------------------------
# data checks on the group sizes (EU AI Act Art. 10 data governance)


def min_group_share(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """The smallest group's share of the rows.

    N = rows of every group + rows with a missing dimension value (all rows read)
    value = min_g n_g / N

    Per-group shares are the group values. A data check sees every group:
    ``min_samples`` excludes no group here (a small group is exactly what a
    representation check must catch). Rows with a missing dimension value
    count in N but are no group of their own.
    """
    n = stats.n.astype(np.float64)
    total = float(n.sum()) + stats.unknown_total
    shares = [float(v) / total for v in n]
    details = {"rows": int(stats.rows_n.sum()) + stats.unknown_n, "unknown_n": stats.unknown_n}
    ex = exact_stats(stats)  # whole counts, or the exact sums of fractional weights
    exact = None
    if ex is not None and is_integral(ex.n) and len(ex.n):
        sizes = [int(x) for x in np.asarray(ex.n).tolist()]
        if sum(sizes) + ex.unknown_n > 0:
            exact = Fraction(min(sizes), sum(sizes) + ex.unknown_n)
    return MetricValue(
        float(min(shares)),
        _group_values(stats, list(shares)),
        (),
        details,
        worst_group=_best(stats, list(shares)),
        exact=exact,
    )


def group_size(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """The size of the smallest group.

    value = min_g n_g

    Per-group sizes are the group values. A data check sees every group:
    ``min_samples`` excludes no group here, so a size floor goes in the
    threshold (``group_size >= 100``). Rows with a missing dimension value are
    no group (their count is ``details["unknown_n"]``). Under fractional (survey) sample
    weights the size is the group's rows, the evidence behind its values, not its total
    weight (``min_group_share`` weighs the shares).
    """
    n = [float(v) for v in stats.rows_n]
    details = {"unknown_n": stats.unknown_n}
    return MetricValue(
        float(min(n)),
        _group_values(stats, list(n)),
        (),
        details,
        worst_group=_best(stats, list(n)),
    )
