"""The fairness-metrics tutorial's other binary metrics, Aequitas disparity ratios and NYC LL144.

Three families, all from the per-group binary confusion counts (TP, FP, FN, TN):

- error-rate gaps (max − min over groups, fairlearn's convention): FDR, FOR,
  NPV, TNR and error rate, with the same exclusion rules as ``binary.py``;
- individual-fairness indices (Theil, generalized entropy) over the compared
  rows, with aif360's benefit b_i = ŷ_i − y_i + 1 ∈ {0, 1, 2}, so they are exact
  functions of the counts: b = 0 for a false negative, 1 for a correct
  prediction, 2 for a false positive;
- ratios to a reference group: Aequitas' disparity (``disparity_ratio``) and
  NYC Local Law 144's impact ratio per category and intersection
  (``impact_ratio``, ``scoring_impact_ratio``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from fractions import Fraction
from typing import Any, Literal, cast

import numpy as np

from fairpolicy.errors import MetricError
from fairpolicy.exact import exact_number, threshold_text
from fairpolicy.metrics.base import (
    Excluded,
    FloatArray,
    GroupValue,
    MetricValue,
    exact_stats,
    is_integral,
    safe_rate,
    too_few_groups,
)
from fairpolicy.metrics.binary import UNDEFINED, Rate, group_rate, rate_gap, rate_parts
from fairpolicy.metrics.families import DISPARITY_RATES as DISPARITY_RATES
from fairpolicy.stats import INTERSECTION_SEP, GroupStats, group_name

# ---------------------------------------------------------------------------
# error-rate gaps


def calibration_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """The fairness-metrics tutorial's "Calibration Diff", the precision (PPV) gap.

    PPV_g = TP_g / (TP_g + FP_g)              (undefined if group g predicts no positives)
    value = max_g PPV_g − min_g PPV_g         (the fairness-metrics tutorial: |PPV_0 − PPV_1|)

    The same value as ``predictive_parity_diff``; kept as a key of its own
    because the fairness-metrics tutorial and its selection guide (lending) name it. It is not a
    score-calibration metric: for calibration of predicted probabilities see
    ``calibration_gap`` / ``calibration_parity``. The fairness-metrics tutorial's snippet sets
    PPV = 0 for a group without predicted positives; that group is excluded
    and listed here instead.
    """
    return rate_gap(stats, "ppv")


def fdr_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """False discovery rate difference.

    FDR_g = FP_g / (TP_g + FP_g) = 1 − PPV_g   (undefined if group g predicts no positives)
    value = max_g FDR_g − min_g FDR_g          (numerically equal to the PPV gap)

    Equals |aif360 ``false_discovery_rate_difference``| for two groups.
    """
    return rate_gap(stats, "fdr")


def for_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """False omission rate difference.

    FOR_g = FN_g / (FN_g + TN_g) = 1 − NPV_g   (undefined if group g predicts no negatives)
    value = max_g FOR_g − min_g FOR_g

    Equals |aif360 ``false_omission_rate_difference``| for two groups.
    """
    return rate_gap(stats, "for")


def npv_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Negative predictive value difference.

    NPV_g = TN_g / (FN_g + TN_g)               (undefined if group g predicts no negatives)
    value = max_g NPV_g − min_g NPV_g          (numerically equal to the FOR gap)
    """
    return rate_gap(stats, "npv")


def tnr_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """True negative rate (specificity) difference.

    TNR_g = TN_g / (FP_g + TN_g) = 1 − FPR_g   (undefined if group g has no actual negatives)
    value = max_g TNR_g − min_g TNR_g          (numerically equal to the FPR gap)

    Equals |holisticai ``true_negative_rate_diff``| for two groups.
    """
    return rate_gap(stats, "tnr")


def error_rate_diff(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Error rate difference.

    ERR_g = (FP_g + FN_g) / n_g = 1 − ACC_g
    value = max_g ERR_g − min_g ERR_g          (numerically equal to the accuracy gap)

    Equals |aif360 ``error_rate_difference``| for two groups.
    """
    return rate_gap(stats, "error_rate")


# ---------------------------------------------------------------------------
# generalized entropy (individual fairness)

#: the benefit levels b ∈ {0, 1, 2}: false negative, correct, false positive
_BENEFITS = np.array([0.0, 1.0, 2.0])


def _benefit_counts(stats: GroupStats) -> FloatArray:
    """(G, 3) counts of rows with benefit 0 (FN), 1 (TP or TN), 2 (FP)."""
    tp, fp, fn, tn = stats.binary()
    return np.stack([fn, tp + tn, fp], axis=1).astype(np.float64)


def _ge(values: FloatArray, weights: FloatArray, alpha: float) -> tuple[float | None, str | None]:
    """GE(α) of a distribution of benefits (``values`` with row counts ``weights``).

    Returns (value, None) or (None, reason). ``weights`` may hold zeros.
    """
    n = float(weights.sum())
    if n <= 0:
        return None, "no rows"
    mu = float((weights * values).sum()) / n
    if mu <= 0:
        return None, "every benefit is 0 (every row is a false negative), so the mean is 0"
    present = weights > 0
    r = values[present] / mu
    w = weights[present]
    zeros = int(w[r == 0].sum())
    if alpha == 1:
        pos = r > 0
        return float((w[pos] * r[pos] * np.log(r[pos])).sum()) / n, None
    if alpha <= 0 and zeros:
        kind = "log(b/μ)" if alpha == 0 else f"(b/μ)^{alpha:g}"
        return None, (
            f"alpha={alpha:g} takes {kind}, and {zeros} row(s) have benefit 0 (false "
            "negatives), so the index is +∞ (aif360 returns inf); there is no finite value"
        )
    if alpha == 0:
        return -float((w * np.log(r)).sum()) / n, None
    with np.errstate(over="ignore"):
        value = (float((w * r**alpha).sum()) / n - 1.0) / (alpha * (alpha - 1.0))
    if not math.isfinite(value):
        return None, f"GE(alpha={alpha:g}) overflows a 64-bit float on these benefits"
    return value, None


def _alpha(params: Mapping[str, Any], default: float) -> float:
    a = float(params.get("alpha", default))
    if not math.isfinite(a):
        raise MetricError(f"alpha must be a finite number, got {a}.")
    return a


def _entropy(stats: GroupStats, alpha: float, between_only: bool) -> MetricValue:
    counts = _benefit_counts(stats)  # (G, 3)
    pooled = counts.sum(axis=0)
    n_g = counts.sum(axis=1)
    mu_g, has_rows = safe_rate(counts @ _BENEFITS, n_g)
    total, reason = _ge(_BENEFITS, pooled, alpha)
    between, b_reason = _ge(mu_g[has_rows], n_g[has_rows], alpha)
    per_group = [_ge(_BENEFITS, counts[i], alpha) for i in range(len(stats.groups))]
    n = stats.n
    groups = tuple(GroupValue(g, int(n[i]), per_group[i][0]) for i, g in enumerate(stats.groups))
    mu = float(pooled @ _BENEFITS) / float(pooled.sum()) if pooled.sum() > 0 else None
    details: dict[str, Any] = {
        "alpha": alpha,
        "benefit": "b = y_pred - y_true + 1 (aif360): 0 = false negative, 1 = correct, "
        "2 = false positive",
        "benefit_counts": {str(int(b)): int(c) for b, c in zip(_BENEFITS, pooled, strict=True)},
        "mean_benefit": mu,
        "mean_benefit_by_group": {
            g: (float(mu_g[i]) if has_rows[i] else None) for i, g in enumerate(stats.groups)
        },
        "between_group": between,
        "within_group": (total - between if total is not None and between is not None else None),
        "per_group_reasons": {
            g: per_group[i][1] for i, g in enumerate(stats.groups) if per_group[i][1]
        },
    }
    if alpha == 2 and total is not None and not between_only:
        # GE(2) = CV²/2: the coefficient of variation of the benefits (aif360's)
        details["coefficient_of_variation"] = math.sqrt(2.0 * total)
    value, why = (between, b_reason) if between_only else (total, reason)
    defined = [(v, i) for i, (v, _) in enumerate(per_group) if v is not None]
    worst = stats.groups[max(defined)[1]] if defined and not between_only else None
    if value is None:
        return MetricValue(None, groups, (), details, reason=why)
    return MetricValue(value, groups, (), details, worst_group=worst)


def generalized_entropy_index(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Generalized entropy index GE(α) of the benefits of the compared rows (aif360).

    b_i = ŷ_i − y_i + 1 ∈ {0, 1, 2} (FN → 0, TP/TN → 1, FP → 2), μ = mean_i b_i
    value = 1/(n·α(α−1)) · Σ_i [(b_i/μ)^α − 1]     for α ∉ {0, 1}
    value = 1/n · Σ_i (b_i/μ)·ln(b_i/μ)            for α = 1 (Theil index; 0·ln 0 = 0)
    value = −1/n · Σ_i ln(b_i/μ)                   for α = 0 (mean log deviation)

    An individual-fairness index over every compared row (unknown-group and
    excluded rows are not counted), computed exactly from the counts. Equals
    aif360 ``generalized_entropy_index`` / ``generalized_entropy_error`` and
    holisticai ``generalized_entropy_index`` for α ≠ 0. Deliberate difference at
    α = 0: fairpolicy returns the textbook mean log deviation above; aif360 and
    holisticai compute −1/n · Σ_i ln(b_i/μ) / μ (an extra division by μ), which is
    that value divided by μ. Undefined (None, with the reason)
    when μ = 0 (every row a false negative) or when α ≤ 0 and some row has
    b = 0: aif360 returns ∞ there, fairpolicy never reports an infinite value.
    Per-group values are each group's own GE(α); ``details`` carry the
    between-group component (each row's benefit replaced by its group's mean)
    and the within-group remainder; for α = 2 also the coefficient of variation
    of the benefits, √(2·GE(2)) (aif360 ``coefficient_of_variation``).

    The fairness-metrics tutorial's snippet uses another benefit, b_i = 1 if TP else 0, and returns
    0.0 when there is no true positive; that is a different number (see the tests).
    """
    return _entropy(stats, _alpha(params, 2.0), between_only=False)


def theil_index(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Theil index: the generalized entropy index with α = 1 (aif360's benefit).

    b_i = ŷ_i − y_i + 1 ∈ {0, 1, 2}, μ = mean_i b_i
    value = 1/n · Σ_i (b_i/μ)·ln(b_i/μ)            (0·ln 0 = 0; range [0, ln n])

    Equals aif360 ``theil_index`` and holisticai ``theil_index``. Undefined if
    μ = 0 (every compared row is a false negative). The fairness-metrics tutorial's snippet defines
    the benefit as 1 for a true positive and 0 otherwise and gives another
    number; fairpolicy follows aif360 so the value matches the anchor libraries.
    """
    return _entropy(stats, 1.0, between_only=False)


def between_group_generalized_entropy_index(
    stats: GroupStats, params: Mapping[str, Any]
) -> MetricValue:
    """Between-group generalized entropy index (aif360).

    μ_g = mean benefit of group g (b = ŷ − y + 1), μ = mean over all compared rows
    value = GE(α) of the vector in which every row's benefit is replaced by μ_g
          = 1/(n·α(α−1)) · Σ_g n_g·[(μ_g/μ)^α − 1]   (α ∉ {0, 1}; α = 1, 0 as in GE)

    Equals aif360 ``between_group_generalized_entropy_index`` over all the
    compared groups (aif360's ClassificationMetric uses the privileged and
    unprivileged groups; with two groups covering every row they coincide).
    """
    return _entropy(stats, _alpha(params, 2.0), between_only=True)


def between_group_theil_index(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Between-group Theil index: the between-group GE index with α = 1 (aif360).

    value = 1/n · Σ_g n_g·(μ_g/μ)·ln(μ_g/μ)

    Equals aif360 ``between_group_theil_index``.
    """
    return _entropy(stats, 1.0, between_only=True)


# ---------------------------------------------------------------------------
# Aequitas disparity to a reference group

_SYNONYM: dict[str, Rate] = {"pprev": "selection_rate", "precision": "ppv"}

REFERENCE_RULES = ("majority", "min", "max")


def _disparity_rates(stats: GroupStats, rate: str) -> tuple[FloatArray, Any, str]:
    """Per-group rate, defined-mask and undefined reason for ``disparity_ratio``."""
    if rate == "ppr":
        tp, fp, _, _ = stats.binary()
        pp = (tp + fp).astype(np.float64)
        vals, ok = safe_rate(pp, np.full_like(pp, pp.sum()))
        return vals, ok, "no group has a predicted positive, so shares of them are undefined"
    r = cast(Rate, _SYNONYM.get(rate, rate))
    vals, ok = group_rate(stats, r)
    return vals, ok, UNDEFINED[r]


def _disparity_exact(stats: GroupStats, rate: str, ok: Any) -> list[Fraction | None] | None:
    """The exact per-group rates of :func:`_disparity_rates` (None where undefined), or
    None when the counts are not integers."""
    ex = exact_stats(stats)  # whole counts, or the exact sums of fractional weights
    if ex is None:
        return None
    if rate == "ppr":
        tp, fp, _, _ = ex.binary()
        num = tp + fp
        den = np.full_like(num, num.sum())
    else:
        assert stats.positive is not None
        r = cast(Rate, _SYNONYM.get(rate, rate))
        num, den = rate_parts(ex.counts, stats.positive, r)
    if not is_integral(num, den):
        return None
    nums, dens = np.asarray(num).tolist(), np.asarray(den).tolist()
    pairs = enumerate(zip(nums, dens, strict=True))
    return [Fraction(a, b) if ok[i] else None for i, (a, b) in pairs]


def _log_distance(d: Fraction) -> Fraction | None:
    """max(D, 1/D): orders ratios as |ln D| does, exactly; None for D = 0 (infinitely far)."""
    return None if d == 0 else max(d, 1 / d)


def disparity_ratio(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Aequitas disparity: each group's rate divided by a reference group's rate.

    R_g = the chosen per-group rate (``rate``: selection_rate = pprev, ppr, tpr,
          tnr, fpr, fnr, fdr, for, ppv = precision, npv, accuracy, error_rate, prev)
    D_g = R_g / R_ref
    value = D_w for the worst group w = argmax_g |ln D_g|
            (the ratio farthest from 1 on a log scale, so 0.5 and 2 are equally far;
            a ratio of 0 is infinitely far; ties go to the first group by name)

    Thresholded with ``between`` (Aequitas' band: 0.8 ≤ D ≤ 1.25 for every group
    ⇔ 0.8 ≤ value ≤ 1.25). ``reference_group``: ``majority`` (the largest
    compared group — Aequitas' ``get_disparity_major_group``; ties go to the
    first by name), ``min`` / ``max`` (the group with the lowest / highest
    rate — Aequitas' ``min_metric``), or a group name. ``ppr`` is Aequitas'
    share of all predicted positives, PP_g / Σ_h PP_h over the compared groups;
    ``pprev`` is the selection rate; ``prev`` is P(Y = 1 | g) of the labels.

    Undefined (None, with the reason): the reference group's rate is undefined
    or 0 (every ratio would divide by 0), the named group is not among the
    compared groups, or fewer than two groups have a defined rate. Groups with
    an undefined rate are excluded and listed. Per-group D_g are the group
    values; per-group rates are in ``details["rates"]``.

    Intervals: with ``rate: ppr`` the value depends on the groups' shares of the rows,
    which the default stratified bootstrap holds fixed (coverage 0.945, wrong FAIL of
    ``decision: ci_lower`` 4.5 % in ``benchmarks/ci_groups.py``); write ``resample:
    rows`` (or ``--resample rows``) so the shares vary as in a new sample (coverage
    0.980, wrong FAIL 2.0 %). With ``majority`` as reference, which group that is can
    also change between samples: the same advice applies.
    """
    rate = str(params.get("rate", "selection_rate"))
    ref_rule = str(params.get("reference_group", "majority"))
    values, defined, undefined_reason = _disparity_rates(stats, rate)
    n = stats.n
    excluded = tuple(
        Excluded(g, int(n[i]), undefined_reason)
        for i, g in enumerate(stats.groups)
        if not defined[i]
    )
    rates = {g: (float(values[i]) if defined[i] else None) for i, g in enumerate(stats.groups)}
    details: dict[str, Any] = {"rate": rate, "reference_rule": ref_rule, "rates": rates}

    def undefined(reason: str) -> MetricValue:
        groups = tuple(GroupValue(g, int(n[i]), None) for i, g in enumerate(stats.groups))
        return MetricValue(None, groups, excluded, details, reason=reason)

    ok = np.flatnonzero(defined)
    if ok.size < 2:
        return undefined(too_few_groups(stats, int(ok.size)))
    if ref_rule == "majority":
        ref = int(np.argmax(n))  # first largest, groups are sorted by name
    elif ref_rule == "min":
        ref = int(ok[np.argmin(values[ok])])
    elif ref_rule == "max":
        ref = int(ok[np.argmax(values[ok])])
    elif ref_rule in stats.groups:
        ref = stats.groups.index(ref_rule)
    else:
        return undefined(
            f"reference_group '{ref_rule}' is not among the compared groups "
            f"{list(stats.groups)} (absent from the data, or excluded); use majority, min, "
            "max or a compared group's name"
        )
    ref_name = stats.groups[ref]
    details["reference_group"] = ref_name
    if not defined[ref]:
        return undefined(
            f"the reference group '{ref_name}' has no defined {rate}: {undefined_reason}"
        )
    ref_value = float(values[ref])
    details["reference_rate"] = ref_value
    if ref_value == 0:
        return undefined(
            f"the reference group '{ref_name}' has {rate} = 0, so every ratio divides by 0"
        )
    ratios = values / ref_value
    details["ratios"] = {
        g: (float(ratios[i]) if defined[i] else None) for i, g in enumerate(stats.groups)
    }
    with np.errstate(divide="ignore"):
        distance = np.where(
            ratios[ok] > 0, np.abs(np.log(np.where(ratios[ok] > 0, ratios[ok], 1.0))), np.inf
        )
    worst = int(ok[int(np.argmax(distance))])
    exact_rates = _disparity_exact(stats, rate, defined)
    exact: Fraction | None = None
    if exact_rates is not None:
        ref_exact = exact_rates[ref]
        assert ref_exact is not None and ref_exact != 0
        d = {i: x / ref_exact for i in ok.tolist() if (x := exact_rates[i]) is not None}
        # the farthest from 1, decided exactly (first by name on a tie, as above)
        worst = next((i for i in d if d[i] == 0), -1)
        if worst < 0:
            far = {i: _log_distance(v) for i, v in d.items()}
            top = max(v for v in far.values() if v is not None)
            worst = next(i for i, v in far.items() if v == top)
        exact = d[worst]
    groups = tuple(
        GroupValue(g, int(n[i]), float(ratios[i]) if defined[i] else None)
        for i, g in enumerate(stats.groups)
    )
    value = float(ratios[worst])
    return MetricValue(
        value, groups, excluded, details, worst_group=stats.groups[worst], exact=exact
    )


# ---------------------------------------------------------------------------
# NYC Local Law 144 impact ratio

Mode = Literal["selection", "scoring"]


def _keys(stats: GroupStats) -> list[tuple[str, ...]] | None:
    """Each group's value per dimension column (from ``group_keys``, else its name)."""
    d = len(stats.dimension)
    if len(stats.group_keys) == len(stats.groups):
        return [tuple(k) for k in stats.group_keys]
    if d == 1:
        return [(g,) for g in stats.groups]
    out = [tuple(g.split(INTERSECTION_SEP)) for g in stats.groups]
    if any(len(k) != d for k in out):
        return None
    return out


def _weighted_median(values: FloatArray, weights: FloatArray) -> float:
    """The median of the multiset holding ``weights[i]`` copies of ``values[i]`` (numpy's)."""
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w)
    total = int(cum[-1])
    lo = float(v[np.searchsorted(cum, (total - 1) // 2, side="right")])
    hi = float(v[np.searchsorted(cum, total // 2, side="right")])
    return (lo + hi) / 2.0


def _count(x: float) -> int | Fraction:
    """A count as an int, or under fractional sample weights the exact rational of the
    float sum of weights (so shares and ratios are still compared without rounding)."""
    return int(x) if float(x).is_integer() else Fraction(float(x))


def _shown(x: int | Fraction) -> int | float:
    """A count as printed: an int, or a fractional count (a weighted sum, such as rate ×
    count of a published table) as :func:`written_decimal` of it — 969.22 for 0.86 ×
    1127, not 969.2200000000001. Only the printed count is rounded; the ratios are
    decided on the exact sums (docs/ll144.md, "Printed counts")."""
    if isinstance(x, int):
        return x
    return float(written_decimal(x))


#: the relative distance within which a fractional count is read as a shorter decimal:
#: 2⁻⁴⁰ ≈ 9.1e-13, the error of about 2,000 double roundings (products and sums)
WRITTEN_RADIUS = Decimal(2) ** -40


def written_decimal(x: Fraction | float) -> Decimal:
    """The shortest decimal (at most 15 places) within 2⁻⁴⁰·|x| of ``x``. When ``x`` is
    the double sum of a few products rate × count whose written decimals sum to D, D is
    within that distance, and any other decimal as short is at least one unit of D's last
    place away; so this is D whenever that unit exceeds 2·2⁻⁴⁰·|x| (3-decimal rates: sums
    up to about 5·10⁸)."""
    exact = Decimal(x.numerator) / Decimal(x.denominator) if isinstance(x, Fraction) else Decimal(x)
    radius = WRITTEN_RADIUS * abs(exact)
    for digits in range(16):
        d = round(exact, digits)
        if abs(d - exact) <= radius:
            return d.normalize() if d != d.to_integral_value() else d.quantize(Decimal(1))
    return round(exact, 15)


def _level(
    name: str,
    keys: Sequence[tuple[str, ...]],
    cols: tuple[int, ...],
    n: FloatArray,
    hits: FloatArray,
    total: float,
    rule: ShareRule,
    exact: tuple[list[int], list[int], int] | None = None,
) -> tuple[dict[str, Any], Fraction | None]:
    """Impact ratios of one level (a column, or the intersection of all columns), and
    the exact lowest kept impact ratio (None when undefined).

    Counts are integers, so shares and ratios are decided exactly: a category holding
    exactly ``min_share`` of the rows is kept, and the lowest ratio is exact. ``rule``
    says which categories are kept out (the comparator and its ``min_share`` reading)."""
    # the exact counts decide (under fractional sample weights the exact weight sums,
    # :attr:`GroupStats.exact_table`); the shown ones are the table's
    e_n, e_hits, e_total = (
        exact
        if exact is not None
        else ([_count(x) for x in n], [_count(x) for x in hits], _count(total))
    )
    agg: dict[tuple[str, ...], list[int | Fraction]] = {}
    for i, k in enumerate(keys):
        cell = agg.setdefault(tuple(k[c] for c in cols), [0, 0, 0, 0])
        cell[0] += _count(n[i])
        cell[1] += _count(hits[i])
        cell[2] += e_n[i]
        cell[3] += e_hits[i]
    exact_rate: dict[str, Fraction] = {}
    cats: list[dict[str, Any]] = []
    for key in sorted(agg):
        size, hit, e_size, e_hit = agg[key]
        category = INTERSECTION_SEP.join(key)
        exact_rate[category] = Fraction(e_hit) / e_size
        cats.append(
            {
                "category": group_name(key),
                "n": _shown(size),
                "selected": _shown(hit),
                "share": float(Fraction(e_size) / Fraction(e_total)),
                "rate": float(exact_rate[category]),
                "excluded": rule.out(cols, key, Fraction(e_size) / Fraction(e_total)),
                "impact_ratio": None,
            }
        )
    kept = [c for c in cats if not c["excluded"]]
    level: dict[str, Any] = {"level": name, "categories": cats}
    if len(kept) < 2:
        level["reason"] = (
            f"{len(kept)} category(ies) kept under {rule.describe()}; "
            "at least 2 are needed to compare"
        )
        return level, None
    top = max(kept, key=lambda c: exact_rate[c["category"]])
    top_rate = exact_rate[top["category"]]
    level["highest_category"] = top["category"]
    level["highest_rate"] = top["rate"]
    if top_rate == 0:
        level["reason"] = "no category has a selected row, so every impact ratio is 0/0"
        return level, None
    ratios = {c["category"]: exact_rate[c["category"]] / top_rate for c in cats}
    for c in cats:
        c["impact_ratio"] = float(ratios[c["category"]])
    low = min(kept, key=lambda c: ratios[c["category"]])
    level["min_impact_ratio"] = low["impact_ratio"]
    level["lowest_category"] = low["category"]
    return level, ratios[low["category"]]


#: the comparators of an LL144 impact ratio (``comparator``)
COMPARATORS = ("highest_above_min_share", "highest")
#: how ``min_share`` reads an intersection cell (``min_share_scope``)
SHARE_SCOPES = ("category", "cell")


class ShareRule:
    """Which categories are kept out of the comparator and the value.

    ``comparator: highest``: none (every category; the highest rate of all is the
    comparator). ``highest_above_min_share``: a column's category holding less than
    ``min_share`` of the rows (unknowns included) is kept out; an intersection cell is
    kept out when one of its categories is (``min_share_scope: category``, how published
    audits read the rules' 2 % exclusion of race/ethnicity and sex categories) or when the
    cell itself holds less than ``min_share`` (``min_share_scope: cell``)."""

    def __init__(self, comparator: str, min_share: float | str, scope: str, columns: int) -> None:
        self.comparator, self.scope = comparator, scope
        #: as written (text when its double says another decimal), and its exact decimal
        self.min_share = threshold_text(min_share)
        self.floor = exact_number(min_share)
        self.columns = columns
        #: (column index, category value) kept out at its column's level
        self.small: set[tuple[int, str]] = set()

    def out(self, cols: tuple[int, ...], key: tuple[str, ...], share: Fraction) -> bool:
        if self.comparator == "highest":
            return False
        if len(cols) == 1:
            below = share < self.floor
            if below:
                self.small.add((cols[0], key[0]))
            return below
        if self.scope == "cell":
            return share < self.floor
        return any((c, v) in self.small for c, v in zip(cols, key, strict=True))

    def describe(self) -> str:
        if self.comparator == "highest":
            return "comparator highest (the highest rate of all categories)"
        scope = (
            ""
            if self.columns == 1
            else "; an intersection cell kept out when one of its categories is"
            if self.scope == "category"
            else "; each intersection cell read on its own share"
        )
        return (
            f"comparator highest_above_min_share (the highest rate of the categories holding "
            f"at least min_share={self.min_share} of the rows{scope})"
        )

    def reading(self) -> str:
        """The short reading printed beside each ratio."""
        if self.comparator == "highest":
            return "comparator: highest"
        tail = f", min_share_scope: {self.scope}" if self.columns > 1 else ""
        return f"comparator: highest_above_min_share (min_share={self.min_share}{tail})"


def _impact(stats: GroupStats, params: Mapping[str, Any], mode: Mode) -> MetricValue:
    written_share = params.get("min_share", 0.02)
    min_share = float(exact_number(written_share))
    comparator = str(params.get("comparator", "highest_above_min_share"))
    scope = str(params.get("min_share_scope", "category"))
    rule = ShareRule(comparator, written_share, scope, len(stats.dimension))
    n = stats.n.astype(np.float64)
    details: dict[str, Any] = {
        "mode": mode,
        "min_share": min_share,
        "comparator": comparator,
        "min_share_scope": scope,
        "reading": rule.reading(),
        "unknown_n": stats.unknown_n,
    }
    no_values = tuple(GroupValue(g, int(n[i]), None) for i, g in enumerate(stats.groups))
    if mode == "selection":
        assert stats.positive is not None
        hits = stats.counts[:, :, stats.positive].sum(axis=1).astype(np.float64)
        details["positive_class"] = stats.classes[stats.positive]
    else:
        sc = stats.scores
        if sc is None or len(sc.columns) != 1:
            cols = [] if sc is None else list(sc.columns)
            return MetricValue(
                None,
                no_values,
                details=details,
                reason=f"the scoring rate needs exactly one score column; bound: {cols}",
            )
        vals = np.concatenate([v[0] for v in sc.values])
        wts = np.concatenate([c[0].sum(axis=1) for c in sc.counts]).astype(np.float64)
        median = _weighted_median(vals, wts)
        hits = np.array(
            [
                float(c[0].sum(axis=1)[v[0] > median].sum())
                for v, c in zip(sc.values, sc.counts, strict=True)
            ]
        )
        details["median_score"] = median
    keys = _keys(stats)
    if keys is None:
        return MetricValue(
            None,
            no_values,
            details=details,
            reason=f"a group name contains '{INTERSECTION_SEP.strip()}', so the intersection "
            f"of {list(stats.dimension)} cannot be split back into its columns",
        )
    total = float(n.sum()) + stats.unknown_total
    details["rows"] = int(stats.rows_n.sum()) + stats.unknown_n
    d = len(stats.dimension)
    plan: list[tuple[str, tuple[int, ...]]] = [(stats.dimension[i], (i,)) for i in range(d)]
    if d > 1:
        plan.append((",".join(stats.dimension), tuple(range(d))))
    sums = None
    ex = exact_stats(stats) if mode == "selection" and stats.survey is not None else None
    if ex is not None:  # fractional sample weights: the exact weight sums decide
        assert stats.positive is not None
        e_n = [int(x) for x in ex.counts.sum(axis=(1, 2)).tolist()]
        e_hits = [int(x) for x in ex.counts[:, :, stats.positive].sum(axis=1).tolist()]
        sums = (e_n, e_hits, sum(e_n) + ex.unknown_n)
    measured = [_level(name, keys, cols, n, hits, total, rule, sums) for name, cols in plan]
    levels = [lv for lv, _ in measured]
    exact_min = {lv["level"]: e for lv, e in measured}
    details["levels"] = levels
    details["bounds"] = _bounds(stats, levels, mode, params, rule, total)
    # the finest level's categories are the stats groups, in the same order
    finest = {c["category"]: c for c in levels[-1]["categories"]}
    groups, excluded = [], []
    for i, g in enumerate(stats.groups):
        name = group_name(keys[i])
        c = finest[name]
        if c["excluded"]:
            ratio = "undefined" if c["impact_ratio"] is None else f"{c['impact_ratio']:.4g}"
            excluded.append(
                Excluded(
                    g,
                    int(n[i]),
                    f"kept out under {rule.reading()} ({c['share']:.2%} of the {int(total)} "
                    "rows; LL144 lets an auditor exclude a category under 2 %); its rate "
                    f"{c['rate']:.4g} and impact ratio {ratio} are reported in details",
                )
            )
        else:
            groups.append(GroupValue(g, int(n[i]), c["impact_ratio"]))
    compared = [lv for lv in levels if "min_impact_ratio" in lv]
    if not compared:
        reasons = "; ".join(f"{lv['level']}: {lv['reason']}" for lv in levels)
        return MetricValue(None, tuple(groups), tuple(excluded), details, reason=reasons)
    worst = min(compared, key=lambda lv: exact_min[lv["level"]] or 0)
    details["worst"] = {"level": worst["level"], "category": worst["lowest_category"]}
    exact = exact_min[worst["level"]]
    return MetricValue(
        float(worst["min_impact_ratio"]),
        tuple(groups),
        tuple(excluded),
        details,
        worst_group=worst["lowest_category"],
        exact=exact,
    )


def _bounds(
    stats: GroupStats,
    levels: list[dict[str, Any]],
    mode: Mode,
    params: Mapping[str, Any],
    rule: ShareRule,
    total: float,
) -> dict[str, Any]:
    """The allocation bounds of every category (fairpolicy.metrics.ll144)."""
    from fairpolicy.metrics.ll144 import add_bounds

    unknown = stats.unknown_total
    if not unknown:
        return {"unknown": 0}
    observed = str(params.get("unknown_selection", "observed")) == "observed"
    known = None
    uc = stats.unknown_counts
    if observed and mode == "selection" and uc is not None and stats.positive is not None:
        known = float(uc[:, stats.positive].sum())
    whole = stats.survey is None
    return add_bounds(
        levels, unknown, known, whole, mode, rule.comparator, rule.scope, rule.floor, total
    )


def impact_ratio(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """NYC Local Law 144 impact ratio (selection rates), per column and intersection.

    SR_c = selected_c / n_c for each category c (selected = predicted positive;
           with no input.prediction bound, the target column is the selection)
    IR_c = SR_c / max_{c' kept} SR_c'
    value = min over levels and kept categories of IR_c

    Levels: each column of ``input.dimension`` (categories are sums over the
    intersectional cells) and, for two or more columns, their intersection.
    A category holding less than ``min_share`` (default 0.02, LL144's 2 %) of
    the rows N = compared rows + rows with a missing dimension value is *kept
    out* of the highest rate and of the value, but still reported (count, rate
    and ratio) in ``details["levels"]``; such intersection cells are listed as
    excluded. The unknown-category count is ``details["unknown_n"]``.

    Undefined (None, with the reason) when no level has two kept categories,
    or the highest kept selection rate is 0 everywhere. LL144's 2 % rule
    replaces ``min_samples``: the spec sets ``min_samples_applies=False`` so
    every intersectional cell reaches the metric and the marginals and N are
    sums over all of them (a runner that still drops small cells would bias
    them; set ``min_samples: 1`` there). Rows missing any dimension column are
    unknown at every level (bind one column per control to count them).
    """
    return _impact(stats, params, "selection")


def scoring_impact_ratio(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """NYC Local Law 144 impact ratio on scoring rates, per column and intersection.

    m = the median score of all compared rows (numpy's median; one score column)
    ScR_c = #(rows of c with score > m) / n_c
    IR_c = ScR_c / max_{c' kept} ScR_c'
    value = min over levels and kept categories of IR_c

    Levels, the ``min_share`` exclusion, unknown rows and the caveats are as
    in ``impact_ratio``. The target column is bound only because every
    classification binding reads one; the scoring rate does not use it.
    Undefined when more than one score column is bound, no level has two kept
    categories, or no row scores above the median.
    """
    return _impact(stats, params, "scoring")
