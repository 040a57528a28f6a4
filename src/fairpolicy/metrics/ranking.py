"""Ranking group-fairness metrics (fairness-metrics tutorial) from the group of each ranked item.

``stats.ranking.order[j]`` is the group index of the item at 0-based position
j (the runner sorts by the ``rank`` column ascending, or by ``score``
descending; ties keep row order). Below, positions are 1-based: i = j + 1.

Conventions shared by every metric here:

- Position discount (the fairness-metrics tutorial's "logarithmic discount"): w_i = 1 / log2(i + 1),
  so the top item weighs 1, the second 0.63, the tenth 0.29.
- Items that are not compared — missing dimension value, or a group excluded
  (e.g. under ``min_samples``) — carry group −1. They still occupy their
  positions: the discount and the "top k" are positional, so an excluded item
  at the top pushes every compared item down. They are left out of every group
  distribution.
- Group distributions are over the compared items: Q(g) = n_g / Σ_h n_h over
  the whole ranking, and P_i(g) = c_g(i) / Σ_h c_h(i) where c_g(i) counts group
  g's items among the top i positions. A prefix holding no compared item has
  no distribution (see each metric for what that means).

The fairness-metrics tutorial's code handles one binary attribute (proportion of group 1 against
group 0); every metric here is its G-group generalisation, stated in its
docstring. With no excluded items and two groups they coincide with the tutorial's
code wherever it is a faithful implementation of the named metric (exposure
ratio, attention parity, skew); the tutorial's "NDKL (simplified)" is a different
quantity (see :func:`ndkl`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from fairpolicy.errors import MetricError, Problem
from fairpolicy.metrics.base import (
    FloatArray,
    GroupValue,
    MetricValue,
    ratio,
    safe_rate,
)
from fairpolicy.metrics.families import DEFAULT_K as DEFAULT_K
from fairpolicy.metrics.families import TOP_K as TOP_K
from fairpolicy.stats import GroupStats, IntArray


def position_weights(n: int) -> FloatArray:
    """w_i = 1 / log2(i + 1) for the 1-based positions i = 1..n."""
    w: FloatArray = 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))
    return w


def _order(stats: GroupStats) -> IntArray:
    if stats.ranking is None:
        raise MetricError(
            "a ranking metric was given no ranking statistics (bind input.rank or input.score)."
        )
    return stats.ranking.order


def _population(order: IntArray, n_groups: int) -> tuple[IntArray, FloatArray]:
    """(items per compared group in the ranking, Q(g) = n_g / Σ n_h)."""
    counts: IntArray = np.bincount(order[order >= 0], minlength=n_groups).astype(np.int64)
    return counts, counts / counts.sum()


def _named(stats: GroupStats, values: FloatArray) -> dict[str, float]:
    return {g: float(values[i]) for i, g in enumerate(stats.groups)}


def parse_k(text: Any) -> list[int]:
    """The cut-offs of a ``k`` parameter: '10' or '5,10,20' → sorted distinct positive ints."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        ks = sorted({int(p) for p in parts})
    except ValueError:
        ks = []
    if not ks or ks[0] < 1:
        raise MetricError(
            Problem(
                f"parameter k='{text}' is not a comma-separated list of positive whole numbers.",
                key="k",
                hint="write e.g. k: '10' or k: '5,10,20'.",
            )
        )
    return ks


# ---------------------------------------------------------------------------
# exposure


def exposure_ratio(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Exposure ratio: per-capita position-discounted exposure, min over max.

    w_i = 1 / log2(i + 1) for 1-based position i
    exposure_g = Σ_{items of g} w_{pos(item)} / n_g          (mean exposure of g's items)
    value = min_g exposure_g / max_g exposure_g             (1 = parity; range (0, 1])

    The fairness-metrics tutorial computes this for a binary attribute (min/max of the two
    per-capita exposures); min over max across all compared groups is its G-group form.
    Items of excluded groups keep their positions (and so their exposure is
    simply not compared). Never 0/0: every weight is positive. The worst group
    is the one with the least exposure per item.
    """
    order = _order(stats)
    g = len(stats.groups)
    w = position_weights(len(order))
    keep = order >= 0
    total = np.asarray(np.bincount(order[keep], weights=w[keep], minlength=g), dtype=np.float64)
    counts = np.bincount(order[keep], minlength=g)
    values, defined = safe_rate(total, counts)
    details = {
        "discount": "1/log2(position+1)",
        "positions": len(order),
        "total_exposure": _named(stats, total),
    }
    return ratio(stats, values, defined, "group has no ranked item", details=details)


# ---------------------------------------------------------------------------
# divergence along the ranking


def _prefix_kl(
    order: IntArray, n_groups: int, cutoffs: IntArray, log: Callable[[FloatArray], FloatArray]
) -> tuple[FloatArray, FloatArray, np.ndarray, FloatArray]:
    """KL(P_i ‖ Q) at each cut-off i (1-based prefix length).

    Returns (kl, shares (G, len(cutoffs)) of P_i, defined mask — the prefix
    holds at least one compared item —, Q). ``log`` fixes the unit. Terms with
    P_i(g) = 0 contribute 0 (0·log 0 = 0); Q(g) > 0 for every compared group.
    """
    _, q = _population(order, n_groups)
    compared = np.cumsum(order >= 0)[cutoffs - 1]
    defined = compared > 0
    kl = np.zeros(len(cutoffs), dtype=np.float64)
    shares = np.zeros((n_groups, len(cutoffs)), dtype=np.float64)
    for g in range(n_groups):
        c = np.cumsum(order == g)[cutoffs - 1]
        p = np.divide(c, compared, out=np.zeros(len(cutoffs)), where=defined)
        shares[g] = p
        pos = p > 0
        kl[pos] += p[pos] * log(p[pos] / q[g])
    # KL ≥ 0; clip the last-bit rounding of nearly equal distributions
    return np.maximum(kl, 0.0), shares, defined, q


def _discounted_kl(
    stats: GroupStats,
    cutoffs: IntArray,
    discount: FloatArray,
    log: Callable[[FloatArray], FloatArray],
    details: dict[str, Any],
) -> MetricValue:
    """(1/Z) Σ_i discount_i · KL(P_i ‖ Q) over the cut-offs whose prefix holds a compared item."""
    order = _order(stats)
    kl, shares, defined, q = _prefix_kl(order, len(stats.groups), cutoffs, log)
    skipped = int((~defined).sum())
    details = {
        **details,
        "population_share": _named(stats, q),
        "prefixes_without_compared_items": skipped,
    }
    if not defined.any():
        return MetricValue(
            None,
            details=details,
            reason="no cut-off prefix of the ranking holds an item of a compared group",
        )
    d = discount[defined]
    z = float(d.sum())
    value = float((d * kl[defined]).sum() / z)
    # per group: discount-weighted mean share over the prefixes, minus the population share
    top_share = (shares[:, defined] * d).sum(axis=1) / z
    deviation = top_share - q
    n = stats.n
    groups = tuple(
        GroupValue(g, int(n[i]), float(deviation[i])) for i, g in enumerate(stats.groups)
    )
    details.update({"z": z, "weighted_top_share": _named(stats, top_share)})
    worst = stats.groups[int(np.argmin(deviation))]
    return MetricValue(value, groups, details=details, worst_group=worst)


def ndkl(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Normalised discounted KL divergence (NDKL, Geyik, Ambler & Kenthapadi, KDD 2019).

    Q(g)   = share of group g among all compared ranked items
    P_i(g) = share of group g among the compared items in the top i positions
    KL(P‖Q) = Σ_g P(g) · ln(P(g) / Q(g))                  (nats; 0·ln 0 = 0)
    Z = Σ_{i=1..N} 1 / log2(i + 1)
    value = (1/Z) Σ_{i=1..N} (1 / log2(i + 1)) · KL(P_i ‖ Q)   (0 = every prefix
            matches the population; range [0, ∞), lower is fairer)

    This is the standard definition (Geyik et al.'s Eq. 4), for any number of
    groups, with the desired distribution Q set to the ranking's own group
    distribution. It is FairRankTune's ``NDKL`` except that FairRankTune adds
    ε = 1e-7 to P and Q; we use 0·ln 0 = 0 exactly. N counts every ranked
    position; a prefix with no compared item (e.g. the top item belongs to an
    excluded group) has no P_i and is left out of both the sum and Z.

    The fairness-metrics tutorial's snippet labelled "NDKL (simplified)" is a different quantity:
    Σ_i (w_i / Σ_j w_j) · (−ln Q(group of item i)), a position-weighted
    cross-entropy of single items under Q. It is never 0 for two or more groups
    and for Q = (½, ½) it equals ln 2 for every ranking, so it cannot detect
    any ordering bias there. We do not reproduce it.

    Per-group values (explanatory): the group's discount-weighted mean share
    of the prefixes minus Q(g) — negative means under-represented near the
    top; the worst group is the most under-represented.
    """
    n = len(_order(stats))
    cutoffs = np.arange(1, n + 1, dtype=np.int64)
    details = {"discount": "1/log2(i+1)", "log": "natural", "positions": n}
    return _discounted_kl(stats, cutoffs, position_weights(n), np.log, details)


def rkl(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Ranking KL divergence rKL (Yang & Stoyanovich, "Measuring Fairness in Ranked
    Outputs", SSDBM 2017), at cut-offs i = s, 2s, 3s, … ≤ N (s = ``step``, default 10).

    P_i, Q as for NDKL (shares among the compared items of the top i / of all)
    KL(P‖Q) = Σ_g P(g) · log2(P(g) / Q(g))                (bits; 0·log 0 = 0)
    Z = Σ_{cut-offs i} 1 / log2(i)
    value = (1/Z) Σ_{cut-offs i} KL(P_i ‖ Q) / log2(i)    (0 = fair; range [0, ∞))

    Differences from the paper and its reference code (DataResponsibly/FairRank,
    ``measures.py``), all deliberate: the paper divides by a normaliser Z equal
    to the largest value any ranking of the same group sizes could reach
    (which the reference code estimates from randomly generated "unfair"
    rankings, for one binary protected group); that has no closed form for G
    groups, so Z here is the sum of the discounts — value is the
    discount-weighted mean KL over the cut-offs, a deterministic number. The
    reference code clamps proportions of 0 or 1 to 0.001; we use 0·log 0 = 0
    exactly. The reference code discounts by log2(i + 1); we keep the paper's
    log2(i). Details give ``max_kl`` = −log2 min_g Q(g), the largest KL any
    prefix can have, so value / max_kl is a [0, 1] score.

    ``step`` must be at least 2 (an error otherwise: 1/log2(1) is undefined).
    Undefined (None) when the ranking has fewer than ``step`` items (no
    cut-off). Cut-offs whose prefix holds no compared item are left out of the
    sum and Z. Per-group values: as for NDKL, over the cut-offs.
    """
    step = int(params.get("step", 10))
    if step < 2:  # the discount 1/log2(i) is undefined at i = 1
        raise MetricError(
            Problem(
                f"parameter step={step} must be at least 2 (the discount 1/log2(i) is "
                "undefined at i = 1).",
                key="step",
                hint="use the default step: 10, as Yang & Stoyanovich do.",
            )
        )
    order = _order(stats)
    n = len(order)
    cutoffs = np.arange(step, n + 1, step, dtype=np.int64)
    if cutoffs.size == 0:
        return MetricValue(
            None,
            details={"step": step, "positions": n},
            reason=f"the ranking has {n} item(s), fewer than step={step}: no cut-off to measure",
        )
    details: dict[str, Any] = {
        "discount": "1/log2(i)",
        "log": "base 2",
        "step": step,
        "positions": n,
        "cutoffs": [int(c) for c in cutoffs],
        "max_kl": float(-np.log2(_population(order, len(stats.groups))[1].min())),
    }
    discount = 1.0 / np.log2(cutoffs.astype(np.float64))
    return _discounted_kl(stats, cutoffs, discount, np.log2, details)


# ---------------------------------------------------------------------------
# representation in the top k


def _top_k_shares(
    stats: GroupStats, params: Mapping[str, Any]
) -> tuple[list[int], FloatArray, IntArray, FloatArray] | MetricValue:
    """(ks, Q, counts in each top k (len(ks), G), shares P(g | top k)) or an undefined value."""
    ks = parse_k(params.get("k", DEFAULT_K))
    order = _order(stats)
    n = len(order)
    g = len(stats.groups)
    _, q = _population(order, g)
    if ks[-1] > n:
        return MetricValue(
            None,
            details={"k": ks, "positions": n},
            reason=f"k={ks[-1]} exceeds the {n} ranked item(s); the top {ks[-1]} is not defined",
        )
    counts = np.zeros((len(ks), g), dtype=np.int64)
    for j, k in enumerate(ks):
        top = order[:k]
        counts[j] = np.bincount(top[top >= 0], minlength=g)
    compared = counts.sum(axis=1)
    if (compared == 0).any():
        k = ks[int(np.flatnonzero(compared == 0)[0])]
        return MetricValue(
            None,
            details={"k": ks, "positions": n},
            reason=f"the top {k} position(s) hold no item of a compared group",
        )
    return ks, q, counts, counts / compared[:, None]


def attention_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Attention parity at k: how far each group's share of the top k is from its
    share of the whole ranking.

    P(g | top k) = c_g(k) / Σ_h c_h(k)    (share among the compared items in the top k)
    P(g)         = n_g / Σ_h n_h          (share among all compared ranked items)
    diff_g@k = P(g | top k) − P(g)
    value = max_{k ∈ K} max_g |diff_g@k|  (0 = parity; range [0, 1])

    K is the ``k`` parameter, one cut-off or a comma list ("5,10,20", the
    default, as the fairness-metrics tutorial's ``k_values``); value is the worst over K. The
    tutorial's code reports |P(group 1 | top k) − P(group 1)| for a binary attribute,
    which is this value for two groups; the max over groups is its G-group
    form. (The fairness-metrics tutorial's table writes the same ideal as P(top k | g) equal across
    groups, which holds exactly when every diff_g@k is 0.) Per-group values are
    max_k |diff_g@k|; signed differences per k are in the details.

    Undefined (None) if a k exceeds the number of ranked items, or if a top k
    holds no item of a compared group.
    """
    got = _top_k_shares(stats, params)
    if isinstance(got, MetricValue):
        return got
    ks, q, _, shares = got
    diff = shares - q  # (len(ks), G)
    per_group = np.abs(diff).max(axis=0)
    per_k = np.abs(diff).max(axis=1)
    worst = int(np.argmax(per_group))
    n = stats.n
    details = {
        "k": ks,
        "worst_k": ks[int(np.argmax(per_k))],
        "population_share": _named(stats, q),
        "per_k": {
            str(k): {
                "value": float(per_k[j]),
                "top_k_share": _named(stats, shares[j]),
                "difference": _named(stats, diff[j]),
            }
            for j, k in enumerate(ks)
        },
    }
    groups = tuple(
        GroupValue(g, int(n[i]), float(per_group[i])) for i, g in enumerate(stats.groups)
    )
    return MetricValue(
        float(per_group.max()), groups, details=details, worst_group=stats.groups[worst]
    )


def skew(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Skew at k, reported as the minimum skew (Geyik et al. 2019's MinSkew@k).

    skew_g@k = ln( P(g | top k) / P(g) )   (P as for attention_parity: shares among
                                            compared items; < 0 = under-represented)
    value = min_{k ∈ K} min_g skew_g@k     (0 = every group at least at its share;
                                            range (−∞, 0], higher is fairer)

    The value is never above 0 (the shares in the top k sum to 1, so some group
    is at or below its population share). A threshold such as ``>= -0.223`` =
    ln 0.8 asks every group to hold at least four fifths of its population
    share of every top k. The fairness-metrics tutorial reports ln(P(group 1 | top k) / P(group 1))
    for a binary attribute and writes 0 when a share is 0; the minimum over
    groups is the G-group form, and a group with no item in a top k has skew
    ln 0 = −∞, which is not a number we can write: the value is then None
    (inconclusive) with a reason naming the group and k — fail closed rather
    than the tutorial's silent 0. Per-group values are min_k skew_g@k (None for a
    group absent from some top k); per-k skews and MaxSkew are in the details.

    Undefined (None) also if a k exceeds the number of ranked items, or if a
    top k holds no item of a compared group.
    """
    got = _top_k_shares(stats, params)
    if isinstance(got, MetricValue):
        return got
    ks, q, counts, shares = got
    present = counts > 0
    sk = np.log(np.divide(shares, q, out=np.ones_like(shares), where=present))
    per_k: dict[str, Any] = {}
    for j, k in enumerate(ks):
        vals = {g: (float(sk[j, i]) if present[j, i] else None) for i, g in enumerate(stats.groups)}
        per_k[str(k)] = {
            "skew": vals,
            "min_skew": float(sk[j].min()) if present[j].all() else None,
            "max_skew": float(sk[j][present[j]].max()),
            "top_k_share": _named(stats, shares[j]),
        }
    details: dict[str, Any] = {"k": ks, "population_share": _named(stats, q), "per_k": per_k}
    n = stats.n
    all_present = np.asarray(present.all(axis=0), dtype=bool)
    per_group = np.where(all_present, np.where(present, sk, np.inf).min(axis=0), 0.0)
    groups = tuple(
        GroupValue(g, int(n[i]), float(per_group[i]) if all_present[i] else None)
        for i, g in enumerate(stats.groups)
    )
    if not all_present.all():
        i = int(np.flatnonzero(~all_present)[0])
        k = ks[int(np.flatnonzero(~present[:, i])[0])]
        absent = [stats.groups[x] for x in np.flatnonzero(~all_present)]
        return MetricValue(
            None,
            groups,
            details=details,
            reason=f"group '{stats.groups[i]}' has no item in the top {k}, so its skew "
            f"ln(0 / P(g)) is −∞ (group(s) absent from a top k: {', '.join(absent)})",
            worst_group=stats.groups[i],
        )
    worst = int(np.argmin(per_group))
    details["worst_k"] = ks[int(np.argmin(sk.min(axis=1)))]
    return MetricValue(
        float(per_group.min()), groups, details=details, worst_group=stats.groups[worst]
    )
