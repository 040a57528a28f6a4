"""Binary group-fairness metrics from per-group (tp, fp, fn, tn).

Every difference here is fairlearn's ``between_groups`` convention: the
maximum minus the minimum of a per-group rate over all comparable groups
(so it is ≥ 0 and defined for any number of groups); every ratio is the
minimum over the maximum. A group on which the rate is undefined (no actual
positives for TPR, no predicted positives for PPV, ...) is excluded from that
comparison and listed with the reason. These metrics need exactly two classes;
on K > 2 the runner stops with an error naming the multi-class replacement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from fairpolicy.metrics.base import (
    BatchFn,
    BoolArray,
    FloatArray,
    MetricValue,
    exact_parts,
    gap,
    ratio,
    safe_rate,
)
from fairpolicy.stats import GroupStats

Rate = Literal[
    "selection_rate",
    "tpr",
    "fpr",
    "fnr",
    "ppv",
    "accuracy",
    "tnr",
    "fdr",
    "for",
    "npv",
    "error_rate",
    "prev",
]

#: the unfavourable end of each rate, used to name the worst group
_WORST: dict[Rate, Literal["min", "max"]] = {
    "selection_rate": "min",
    "tpr": "min",
    "fpr": "max",
    "fnr": "max",
    "ppv": "min",
    "accuracy": "min",
    "tnr": "min",
    "fdr": "max",
    "for": "max",
    "npv": "min",
    "error_rate": "max",
    "prev": "min",
}

UNDEFINED: dict[Rate, str] = {
    "selection_rate": "group has no rows",
    "tpr": "group has no actual positives, so its true positive rate is undefined",
    "fpr": "group has no actual negatives, so its false positive rate is undefined",
    "fnr": "group has no actual positives, so its false negative rate is undefined",
    "ppv": "group has no predicted positives, so its precision (PPV) is undefined",
    "accuracy": "group has no rows",
    "tnr": "group has no actual negatives, so its true negative rate is undefined",
    "fdr": "group has no predicted positives, so its false discovery rate is undefined",
    "for": "group has no predicted negatives, so its false omission rate is undefined",
    "npv": "group has no predicted negatives, so its negative predictive value is undefined",
    "error_rate": "group has no rows",
    "prev": "group has no rows",
}


def group_rate(stats: GroupStats, rate: Rate) -> tuple[FloatArray, BoolArray]:
    """Per-group rate and its defined-mask from the binary confusion counts.

    ``prev`` is the prevalence of the positive class in the *labels*,
    P(Y = 1 | A = g) — a property of the data, not of the predictions.
    """
    if stats.positive is None:
        raise ValueError("positive class not set")
    return rate_of_counts(stats.counts, stats.positive, rate)


def rate_of_counts(
    counts: NDArray[np.int64], positive: int, rate: Rate
) -> tuple[FloatArray, BoolArray]:
    """The rate for confusion tables ``counts[..., y_true, y_pred]`` (any leading axes:
    groups, or bootstrap replicates × groups), with its defined-mask."""
    return safe_rate(*rate_parts(counts, positive, rate))


def rate_parts(
    counts: NDArray[np.int64], positive: int, rate: Rate
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The rate's (numerator, denominator) counts, as :func:`rate_of_counts` divides them."""
    tp = counts[..., positive, positive]
    fn = counts[..., positive, :].sum(axis=-1) - tp
    fp = counts[..., :, positive].sum(axis=-1) - tp
    tn = counts.sum(axis=(-2, -1)) - tp - fn - fp
    n = tp + fp + fn + tn
    num, den = {
        "selection_rate": (tp + fp, n),
        "tpr": (tp, tp + fn),
        "fpr": (fp, fp + tn),
        "fnr": (fn, tp + fn),
        "ppv": (tp, tp + fp),
        "accuracy": (tp + tn, n),
        "tnr": (tn, fp + tn),
        "fdr": (fp, tp + fp),
        "for": (fn, fn + tn),
        "npv": (tn, fn + tn),
        "error_rate": (fp + fn, n),
        "prev": (tp + fn, n),
    }[rate]
    return num, den


def batch(
    rate: Rate, reduce: Literal["gap", "ratio"]
) -> Callable[[NDArray[np.int64], int], tuple[FloatArray, FloatArray, BoolArray]]:
    """A vectorised twin of :func:`rate_gap` / :func:`rate_ratio` for bootstrap replicates.

    ``fn(counts (B, G, K, K), positive) -> (values (B,), per-group (B, G), defined (B, G))``,
    NaN where a replicate's value is undefined; computed with the same operations as the
    per-replicate path, so the numbers are identical (a test holds them equal).
    """

    def fn(counts: NDArray[np.int64], positive: int) -> tuple[FloatArray, FloatArray, BoolArray]:
        values, defined = rate_of_counts(counts, positive, rate)
        hi = np.where(defined, values, -np.inf).max(axis=1)
        lo = np.where(defined, values, np.inf).min(axis=1)
        ok = defined.sum(axis=1) >= 2
        if reduce == "gap":
            out = np.where(ok, hi - lo, np.nan)
        else:
            ok &= hi > 0
            out = np.where(ok, lo / np.where(ok, hi, 1.0), np.nan)
        return out, values, defined

    return fn


def _exact_parts(stats: GroupStats, rate: Rate) -> tuple[NDArray[Any], NDArray[Any]] | None:
    """The rate's exact (numerators, denominators): from whole counts, or the exact sums
    of fractional sample weights (:func:`exact_stats`); None when there are none."""
    if stats.positive is None:
        raise ValueError("positive class not set")
    positive = stats.positive
    return exact_parts(lambda ex: rate_parts(ex.counts, positive, rate), stats)


def rate_gap(stats: GroupStats, rate: Rate) -> MetricValue:
    values, defined = group_rate(stats, rate)
    return gap(
        stats,
        values,
        defined,
        UNDEFINED[rate],
        worst=_WORST[rate],
        details={"rate": rate},
        exact=_exact_parts(stats, rate),
    )


def rate_ratio(stats: GroupStats, rate: Rate) -> MetricValue:
    values, defined = group_rate(stats, rate)
    return ratio(
        stats,
        values,
        defined,
        UNDEFINED[rate],
        details={"rate": rate},
        exact=_exact_parts(stats, rate),
    )


def demographic_parity_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Demographic (statistical) parity difference.

    SR_g = P(Ŷ = 1 | A = g) = (TP_g + FP_g) / n_g
    value = max_g SR_g − min_g SR_g          (0 = parity; range [0, 1])

    Equals fairlearn ``demographic_parity_difference`` (between_groups) and
    |aif360 ``statistical_parity_difference``| for two groups.
    """
    return rate_gap(stats, "selection_rate")


def demographic_parity_ratio(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Demographic parity ratio (disparate impact, the "four-fifths" ratio).

    value = min_g SR_g / max_g SR_g          (1 = parity; range [0, 1])

    Equals fairlearn ``demographic_parity_ratio`` (between_groups). aif360's
    ``disparate_impact`` is unprivileged/privileged and can exceed 1; ours is
    symmetric (min over max) and so never does. Undefined if every SR_g is 0.
    """
    return rate_ratio(stats, "selection_rate")


def equal_opportunity_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Equal opportunity difference: the true positive rate gap.

    TPR_g = TP_g / (TP_g + FN_g)              (undefined if group g has no positives)
    value = max_g TPR_g − min_g TPR_g

    Equals fairlearn ``equal_opportunity_difference`` when every group has an actual
    positive. Deliberate difference: a group without one is excluded and listed here;
    fairlearn counts its TPR as 0, so with such a group fairlearn's value differs.
    """
    return rate_gap(stats, "tpr")


def fpr_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """False positive rate difference.

    FPR_g = FP_g / (FP_g + TN_g)              (undefined if group g has no negatives)
    value = max_g FPR_g − min_g FPR_g
    """
    return rate_gap(stats, "fpr")


def fnr_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """False negative rate difference.

    FNR_g = FN_g / (TP_g + FN_g) = 1 − TPR_g  (undefined if group g has no positives)
    value = max_g FNR_g − min_g FNR_g         (numerically equal to the TPR gap)
    """
    return rate_gap(stats, "fnr")


def predictive_parity_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Predictive parity difference: the precision (PPV) gap.

    PPV_g = TP_g / (TP_g + FP_g)              (undefined if group g predicts no positives)
    value = max_g PPV_g − min_g PPV_g

    The fairness-metrics tutorial calls this "Calibration Diff" |PPV_0 − PPV_1| (its key
    ``calibration_diff`` computes the same value); Venturalitica's
    ``predictive_parity`` key computes the same gap. The fairness-metrics tutorial's snippet sets
    PPV = 0 for a group without predicted positives; here that group is
    excluded and listed instead.
    """
    return rate_gap(stats, "ppv")


def accuracy_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Accuracy difference.

    ACC_g = (TP_g + TN_g) / n_g
    value = max_g ACC_g − min_g ACC_g
    """
    return rate_gap(stats, "accuracy")


def _both(stats: GroupStats) -> tuple[MetricValue, MetricValue]:
    return rate_gap(stats, "tpr"), rate_gap(stats, "fpr")


def _combine(
    stats: GroupStats,
    a: MetricValue,
    b: MetricValue,
    value: float | None,
    exact: Fraction | None = None,
) -> MetricValue:
    """Merge the TPR and FPR parts of an odds metric into one MetricValue."""
    excluded = {e.group: e for e in (*a.excluded, *b.excluded)}
    reason = a.reason or b.reason
    if reason is not None and (a.value is None) != (b.value is None):
        # one part is known: say so, so that an undefined value is not read as "no signal"
        known, name = (a, "TPR") if a.value is not None else (b, "FPR")
        other = "FPR" if name == "TPR" else "TPR"
        reason = (
            f"the {other} part is undefined ({reason}); the {name} part alone is {known.value:.6g}"
        )
    # per-group values shown are those of the component with the larger gap
    main = a if (b.value is None or (a.value is not None and a.value >= b.value)) else b
    details = {
        "tpr": {g.group: g.value for g in a.groups},
        "fpr": {g.group: g.value for g in b.groups},
        "tpr_gap": a.value,
        "fpr_gap": b.value,
        "driven_by": "tpr" if main is a else "fpr",
    }
    return MetricValue(
        value if reason is None else None,
        main.groups,
        tuple(excluded.values()),
        details,
        reason=reason,
        worst_group=main.worst_group,
        exact=exact if reason is None else None,
    )


def equalized_odds_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Equalized odds difference: the larger of the TPR gap and the FPR gap.

    value = max(max_g TPR_g − min_g TPR_g,  max_g FPR_g − min_g FPR_g)

    Equals fairlearn ``equalized_odds_difference`` (agg="worst_case") when every
    group has actual positives and actual negatives. Deliberate difference: a group
    without them is excluded from that rate and listed; fairlearn counts its TPR or
    FPR as 0. Undefined if either gap has fewer than two comparable groups; then the
    value lies in [known gap, 1], and a control that range violates throughout fails
    (else it is inconclusive).
    """
    a, b = _both(stats)
    value = max(a.value, b.value) if a.value is not None and b.value is not None else None
    exact = max(a.exact, b.exact) if a.exact is not None and b.exact is not None else None
    known = _known_part(a, b)  # the max is at least the known gap
    bounds = None if known is None else (known, 1.0)
    return dataclasses.replace(_combine(stats, a, b, value, exact), bounds=bounds)


def _known_part(a: MetricValue, b: MetricValue) -> float | None:
    """The value of the one part that is defined when the other is not (else None)."""
    if (a.value is None) == (b.value is None):
        return None
    return a.value if a.value is not None else b.value


def average_odds_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Average odds difference: the mean of the TPR gap and the FPR gap.

    value = ((max TPR − min TPR) + (max FPR − min FPR)) / 2

    Equals fairlearn ``equalized_odds_difference(agg="mean")`` and, for two
    groups, aif360 ``average_abs_odds_difference`` (the sign-free version of
    aif360's ``average_odds_difference``), when every group has actual positives and
    negatives. Deliberate difference: a group without them is excluded from that rate
    and listed; fairlearn counts its TPR or FPR as 0. With one gap undefined the value lies
    in [known / 2, (known + 1) / 2]; a control that range violates throughout fails.
    """
    a, b = _both(stats)
    value = (a.value + b.value) / 2 if a.value is not None and b.value is not None else None
    exact = (a.exact + b.exact) / 2 if a.exact is not None and b.exact is not None else None
    known = _known_part(a, b)  # the unknown gap lies in [0, 1]
    bounds = None if known is None else (known / 2, (known + 1) / 2)
    return dataclasses.replace(_combine(stats, a, b, value, exact), bounds=bounds)


def equalized_odds_sum(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Equalized odds as a sum of gaps: the TPR gap plus the FPR gap.

    value = (max_g TPR_g − min_g TPR_g) + (max_g FPR_g − min_g FPR_g)   (0 = parity, ≤ 2)

    What Venturalitica's ``equalized_odds_ratio`` computes (``calc_equalized_odds_ratio``:
    despite its name, a difference); a policy read in Venturalitica's dialect evaluates
    ``equalized_odds_ratio`` with this. Twice ``average_odds_diff``. A group without
    actual positives (negatives) is left out of the TPR (FPR) gap and listed, as
    Venturalitica skips it. Undefined if either gap has fewer than two comparable groups
    (Venturalitica returns 0.0 there); then the value lies in [known, known + 1].
    """
    a, b = _both(stats)
    value = a.value + b.value if a.value is not None and b.value is not None else None
    exact = a.exact + b.exact if a.exact is not None and b.exact is not None else None
    known = _known_part(a, b)
    bounds = None if known is None else (known, known + 1.0)
    return dataclasses.replace(_combine(stats, a, b, value, exact), bounds=bounds)


def equalized_odds_ratio(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Equalized odds ratio, fairlearn's meaning: the smaller of the TPR and FPR ratios.

    value = min(min_g TPR_g / max_g TPR_g,  min_g FPR_g / max_g FPR_g)   (1 = parity)

    Equals fairlearn ``equalized_odds_ratio`` (agg="worst_case"). When every
    compared group's rate of one kind is 0 (e.g. no group has a false positive),
    that ratio is 0/0: the groups are equal on it, so the value is the other ratio
    (fairlearn agrees); undefined only when both are 0/0, or when either rate has
    fewer than two comparable groups (then the value lies in [0, the known ratio], and a
    control that range violates throughout fails). Deliberate difference: a group without actual
    positives (negatives) is excluded from the TPR (FPR) ratio and listed; fairlearn
    counts that rate as 0, which makes its ratio 0. Note:
    Venturalitica's key of the same name returns the *sum of the TPR and FPR
    gaps* (a difference, ideal 0): a policy read in Venturalitica's dialect evaluates
    it as ``equalized_odds_sum``.
    """
    a = rate_ratio(stats, "tpr")
    b = rate_ratio(stats, "fpr")
    a_zero, b_zero = (bool(m.details.get("all_zero")) for m in (a, b))
    parts = [m for m, zero in ((a, a_zero), (b, b_zero)) if not zero]
    value: float | None
    exact: Fraction | None
    if not parts or any(m.value is None for m in parts):
        value, exact = None, None
    else:
        value = min(m.value for m in parts if m.value is not None)
        exacts = [m.exact for m in parts]
        exact = min(e for e in exacts if e is not None) if None not in exacts else None
    ignore = {"tpr": a_zero and not b_zero, "fpr": b_zero and not a_zero}
    merged = _combine(
        stats,
        a if not ignore["tpr"] else dataclasses.replace(a, reason=None),
        b if not ignore["fpr"] else dataclasses.replace(b, reason=None),
        value,
        exact,
    )
    details = dict(merged.details)
    details.update({"tpr_ratio": a.value, "fpr_ratio": b.value})
    details.pop("tpr_gap")
    details.pop("fpr_gap")
    for rate, skipped in ignore.items():
        if skipped:
            details[f"{rate}_ratio_note"] = (
                f"every compared group's {rate.upper()} is 0 (0/0 ratio, the groups are equal "
                "on it); the value is the other ratio"
            )
    if value is not None:
        driver = next(m for m in parts if m.value == value)
        details["driven_by"] = "tpr" if driver is a else "fpr"
    # one ratio known, the other undefined for want of comparable groups (not 0/0): the
    # minimum is at most the known ratio
    known = None if merged.value is not None else _known_part(*parts) if len(parts) == 2 else None
    return MetricValue(
        merged.value,
        a.groups if details["driven_by"] == "tpr" else b.groups,
        merged.excluded,
        details,
        reason=merged.reason,
        worst_group=(a if details["driven_by"] == "tpr" else b).worst_group,
        exact=merged.exact,
        bounds=None if known is None else (0.0, known),
    )


#: the single-rate metrics' vectorised twins, used by the bootstrap (see :func:`batch`)
BATCH: dict[Callable[..., MetricValue], BatchFn] = {
    demographic_parity_diff: batch("selection_rate", "gap"),
    demographic_parity_ratio: batch("selection_rate", "ratio"),
    equal_opportunity_diff: batch("tpr", "gap"),
    fpr_diff: batch("fpr", "gap"),
    fnr_diff: batch("fnr", "gap"),
    predictive_parity_diff: batch("ppv", "gap"),
    accuracy_diff: batch("accuracy", "gap"),
}
