"""holisticai's multi-class pairwise metrics and Venturalitica's intersectional disparity.

Notation: ``C_g[t, p]`` is the count of rows of group g with true class t and
predicted class p, K the number of classes. Per group:

- prediction-rate vector   ``S_g(p) = Σ_t C_g[t, p] / n_g``
- normalised confusion row ``R_g[t, p] = C_g[t, p] / Σ_q C_g[t, q] = P(Ŷ = p | Y = t, A = g)``
  (each true class's row sums to 1; holisticai's ``confusion_tensor`` normalised
  over the predictions of each true class)

The four holisticai metrics compute a distance ``d(g, h)`` for every pair of
compared groups and aggregate the pairs with ``aggregation``:

- ``max`` (default): value = max over pairs of d(g, h)   (the worst pair)
- ``mean``:          value = mean over pairs of d(g, h)

Every distance is a total-variation distance ½ Σ |·| between probability
vectors, or a mean of such, so each lies in [0, 1]. holisticai's text calls the
distances "mean absolute deviation"; holisticai's code (and its reference values,
reproduced to 1e-12) uses ½ Σ_p |·| for vectors and Σ |·| / (2K) for K×K matrices,
i.e. the total-variation distance and its mean over true classes. That is what
is implemented here (not (1/K) Σ_p |·|, which differs for K > 2).

Classes absent from a group's labels — deliberate difference from holisticai:
holisticai adds 1e-32 to every count, so the row of a true class that a group
never has becomes a uniform 1/K row, an invented rate that enters the distance.
Here such a (group, class) row is undefined: it is listed in
``details["undefined_cells"]``, and for every pair involving that group the
class is left out of the comparison, the class average being taken over the
K' classes present in both groups of the pair (``classes_compared`` per pair).
A pair sharing no true class (K' = 0) is undefined and left out of the
aggregation (listed with value None); a group with no defined pair is excluded.
When every class occurs in every group the values equal holisticai's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction
from itertools import combinations
from typing import Any

import numpy as np

from fairpolicy.metrics.base import (
    BoolArray,
    Excluded,
    FloatArray,
    GroupValue,
    MetricValue,
    exact_stats,
    gap,
    is_integral,
    safe_rate,
    too_few_groups,
    undefined_cells,
)
from fairpolicy.metrics.families import PAIR_AGGREGATION as PAIR_AGGREGATION
from fairpolicy.stats import INTERSECTION_SEP, GroupStats

_NO_TRUE = "no row of this group has this true class, so its normalised confusion row is undefined"
_NO_ROWS = "group has no rows"

#: d(a, b, common classes) for one pair of groups
Distance = Callable[[int, int, BoolArray], float]
#: the same distance as an exact rational (from integer counts)
ExactDistance = Callable[[int, int, BoolArray], Fraction]


def _exact_rows(stats: GroupStats) -> list[list[list[Fraction] | None]] | None:
    """R_g[t, p] as Fractions (None for a true class t without rows in g), or None when
    there are no exact counts (whole counts, or the exact sums of fractional weights)."""
    ex = exact_stats(stats)
    if ex is None:
        return None
    c = ex.counts
    if not is_integral(c):
        return None
    out: list[list[list[Fraction] | None]] = []
    for g in c.tolist():
        out.append([[Fraction(x, sum(row)) for x in row] if sum(row) else None for row in g])
    return out


def _exact_shares(stats: GroupStats) -> list[list[Fraction] | None] | None:
    """S_g(p) = P(Ŷ = p | A = g) as Fractions (None for a group without rows)."""
    ex = exact_stats(stats)
    if ex is None:
        return None
    c = ex.counts
    if not is_integral(c):
        return None
    pred = c.sum(axis=1).tolist()
    return [[Fraction(x, sum(row)) for x in row] if sum(row) else None for row in pred]


def _half_abs_sum(xs: list[Fraction]) -> Fraction:
    return sum((abs(x) for x in xs), Fraction(0)) / 2


def _mean(xs: list[Fraction]) -> Fraction:
    return sum(xs, Fraction(0)) / len(xs)


#: per-class contributions of one pair, for the worst pair's breakdown
PerClass = Callable[[int, int, BoolArray], list[float | None]]


def confusion_rows(stats: GroupStats) -> tuple[FloatArray, BoolArray]:
    """(G, K, K) rows R_g[t, p] = P(Ŷ = p | Y = t, A = g) and the (G, K) mask of defined rows."""
    c = stats.counts
    rows, defined = safe_rate(c, c.sum(axis=2)[:, :, None])
    return rows, defined[:, :, 0]


def _prediction_rates(stats: GroupStats) -> tuple[FloatArray, BoolArray]:
    c = stats.counts
    return safe_rate(c.sum(axis=1), c.sum(axis=(1, 2))[:, None])


def _opt_list(values: FloatArray, defined: BoolArray) -> list[float | None]:
    return [float(v) if ok else None for v, ok in zip(values, defined, strict=True)]


def _pairwise(
    stats: GroupStats,
    params: Mapping[str, Any],
    defined: BoolArray,
    distance: Distance,
    per_class: PerClass,
    cell_reason: str,
    details: dict[str, Any],
    exact_distance: ExactDistance | None = None,
    cell_rows: FloatArray | None = None,
    pair_distance: str | None = None,
) -> MetricValue:
    """Aggregate d(g, h) over the pairs of groups (see the module docstring).

    ``defined[g, t]`` says whether group g's row/rate for class t exists; a pair
    compares the classes defined in both groups and is undefined when there is none.
    ``exact_distance``: d as an exact rational, for the exact value. ``pair_distance``:
    which distance d is (``stats/bands.py``'s name, shown as ``details["pair_distance"]``;
    the band's projection depends on it). ``cell_rows``:
    (G, cells) rows behind each value of ``details["per_group"]`` (flattened row by row),
    the floor of its standard error in the simultaneous band (``stats/bands.py``).
    """
    agg = "mean" if params.get("aggregation", "max") == "mean" else "max"
    names, n = stats.groups, stats.n
    g_count = len(names)
    dist = np.full((g_count, g_count), np.nan)
    pairs: list[dict[str, Any]] = []
    for a, b in combinations(range(g_count), 2):
        common = defined[a] & defined[b]
        k_common = int(common.sum())
        entry: dict[str, Any] = {"groups": [names[a], names[b]], "classes_compared": k_common}
        if k_common == 0:
            entry["value"] = None
            entry["reason"] = "the two groups share no class with a defined rate"
        else:
            d = distance(a, b, common)
            dist[a, b] = dist[b, a] = d
            entry["value"] = d
        pairs.append(entry)
    out = dict(details, aggregation=agg, pairs=pairs)
    if pair_distance is not None:
        out["pair_distance"] = pair_distance
    cells = undefined_cells(stats, defined, cell_reason)
    if cells:
        out["undefined_cells"] = cells

    has_pair = ~np.isnan(dist)
    per_group: list[float | None] = []
    for g in range(g_count):
        row = dist[g][has_pair[g]]
        per_group.append(
            None if row.size == 0 else float(row.max() if agg == "max" else row.mean())
        )
    groups = tuple(GroupValue(nm, int(n[i]), per_group[i]) for i, nm in enumerate(names))
    excluded = tuple(
        Excluded(
            nm,
            int(n[i]),
            _NO_ROWS
            if not defined[i].any()
            else "no class in common with any other compared group",
        )
        for i, nm in enumerate(names)
        if per_group[i] is None
    )
    defined_pairs = [p for p in pairs if p["value"] is not None]
    if not defined_pairs:
        compared = sum(v is not None for v in per_group)
        return MetricValue(
            None, groups, excluded, out, reason=too_few_groups(stats, compared) + " (no pair)"
        )
    values = np.array([p["value"] for p in defined_pairs])
    worst = defined_pairs[int(np.argmax(values))]
    a, b = (names.index(x) for x in worst["groups"])
    out["worst_pair"] = list(worst["groups"])
    out["worst_pair_per_class"] = dict(
        zip(stats.classes, per_class(a, b, defined[a] & defined[b]), strict=True)
    )
    out["pairs_compared"] = len(defined_pairs)
    value = float(values.max() if agg == "max" else values.mean())
    exact: Fraction | None = None
    if exact_distance is not None:
        # for the maximum only the pairs that could be it (within 1e-9 of the float
        # maximum; float distances err by ~1e-16) need their exact distance
        best = float(values.max())
        candidates = [p for p in defined_pairs if agg == "mean" or float(p["value"]) >= best - 1e-9]
        ds = []
        for p in candidates:
            ga, gb = (names.index(x) for x in p["groups"])
            ds.append(exact_distance(ga, gb, defined[ga] & defined[gb]))
        exact = max(ds) if agg == "max" else _mean(ds)
    # the group furthest from the others on average; none when that is a tie (two groups)
    means = np.array(
        [dist[g][has_pair[g]].mean() if has_pair[g].any() else -1.0 for g in range(g_count)]
    )
    top = np.flatnonzero(means == means.max())
    worst_group = names[int(top[0])] if top.size == 1 else None
    rows_behind = None
    if cell_rows is not None:
        rows_behind = {nm: [round(float(x)) for x in cell_rows[i]] for i, nm in enumerate(names)}
    return MetricValue(
        value,
        groups,
        excluded,
        out,
        worst_group=worst_group,
        exact=exact,
        cell_rows=rows_behind,
    )


def _true_rows(stats: GroupStats, cells_per_class: int) -> FloatArray:
    """(G, K × cells_per_class): each class's true rows in the group, repeated per cell."""
    per_class: FloatArray = stats.counts.sum(axis=2)
    return np.repeat(per_class, cells_per_class, axis=1)


def _tv(x: FloatArray, y: FloatArray) -> float:
    return 0.5 * float(np.abs(x - y).sum())


def multiclass_statistical_parity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Multi-class statistical parity (holisticai ``multiclass_statistical_parity``).

    S_g(p) = P(Ŷ = p | A = g)
    d(g, h) = ½ Σ_p |S_g(p) − S_h(p)|      (total-variation distance, in [0, 1])
    value = max over pairs d(g, h)  (aggregation=max, default)
          | mean over pairs d(g, h)  (aggregation=mean)

    Only a group without rows is undefined (never in practice: groups come
    from rows). A class a group is never predicted has rate 0 — a real rate.
    Equals holisticai to 1e-12 for both aggregations; with two groups it equals
    ``weighted_demographic_parity_multiclass`` (strategy=micro).
    """
    rates, ok = _prediction_rates(stats)
    defined: BoolArray = ok & ok.all(axis=1, keepdims=True)

    def distance(a: int, b: int, common: BoolArray) -> float:
        return _tv(rates[a], rates[b])

    def per_class(a: int, b: int, common: BoolArray) -> list[float | None]:
        return [float(x) for x in np.abs(rates[a] - rates[b])]

    details = {
        "classes": list(stats.classes),
        "per_group": {g: _opt_list(rates[i], ok[i]) for i, g in enumerate(stats.groups)},
    }
    shares = _exact_shares(stats)

    def exact_distance(a: int, b: int, common: BoolArray) -> Fraction:
        assert shares is not None
        sa, sb = shares[a], shares[b]
        assert sa is not None and sb is not None
        return _half_abs_sum([x - y for x, y in zip(sa, sb, strict=True)])

    return _pairwise(
        stats,
        params,
        defined,
        distance,
        per_class,
        _NO_ROWS,
        details,
        exact_distance if shares is not None else None,
        np.repeat(stats.counts.sum(axis=(1, 2))[:, None], stats.num_classes, axis=1),
        "tv",
    )


def _matrix_details(stats: GroupStats, rows: FloatArray, defined: BoolArray) -> dict[str, Any]:
    return {
        "classes": list(stats.classes),
        "per_group": {
            g: [
                [float(x) for x in rows[i, t]] if defined[i, t] else None
                for t in range(stats.num_classes)
            ]
            for i, g in enumerate(stats.groups)
        },
    }


def multiclass_equality_of_opportunity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Multi-class equality of opportunity (holisticai ``multiclass_equality_of_opp``).

    R_g[t, p] = P(Ŷ = p | Y = t, A = g)   (confusion matrix normalised per true class)
    d(g, h) = (1/K') Σ_{t ∈ T_gh} ½ Σ_p |R_g[t, p] − R_h[t, p]|
    value = max over pairs d(g, h)  (aggregation=max, default)
          | mean over pairs d(g, h)  (aggregation=mean)

    T_gh = the K' true classes occurring in both g and h: d is the mean over
    true classes of the total-variation distance between the groups' predicted-
    class distributions, in [0, 1]. With every class in every group (K' = K)
    this is holisticai's Σ |R_g − R_h| / (2K), reproduced to 1e-12; holisticai
    fills an absent class's row with 1/K instead of leaving it out. With K = 2
    it equals ``multiclass_true_positive_difference``.
    """
    rows, defined = confusion_rows(stats)

    def tv_rows(a: int, b: int) -> FloatArray:
        diff: FloatArray = 0.5 * np.abs(rows[a] - rows[b]).sum(axis=1)
        return diff

    def distance(a: int, b: int, common: BoolArray) -> float:
        return float(tv_rows(a, b)[common].mean())

    def per_class(a: int, b: int, common: BoolArray) -> list[float | None]:
        return _opt_list(tv_rows(a, b), common)

    details = _matrix_details(stats, rows, defined)
    details["per_class_of"] = "true class: total-variation distance of its normalised row"
    erows = _exact_rows(stats)

    def exact_distance(a: int, b: int, common: BoolArray) -> Fraction:
        assert erows is not None
        per_t = []
        for t in np.flatnonzero(common).tolist():
            ra, rb = erows[a][t], erows[b][t]
            assert ra is not None and rb is not None
            per_t.append(_half_abs_sum([x - y for x, y in zip(ra, rb, strict=True)]))
        return _mean(per_t)

    return _pairwise(
        stats,
        params,
        defined,
        distance,
        per_class,
        _NO_TRUE,
        details,
        exact_distance if erows is not None else None,
        _true_rows(stats, stats.num_classes),
        "tv_rows",
    )


def multiclass_average_odds(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Multi-class average odds (holisticai ``multiclass_average_odds``).

    R_g[t, p] = P(Ŷ = p | Y = t, A = g)
    Ā_gh(p) = (1/K') Σ_{t ∈ T_gh} (R_g[t, p] − R_h[t, p])   (rows averaged over true classes)
    d(g, h) = ½ Σ_p |Ā_gh(p)|
    value = max over pairs d(g, h)  (aggregation=max, default)
          | mean over pairs d(g, h)  (aggregation=mean)

    T_gh = the K' true classes occurring in both groups. d is the total-variation
    distance between the two groups' class-averaged predicted-class distributions,
    in [0, 1] and never above ``multiclass_equality_of_opportunity``. With every
    class in every group this is holisticai's |Σ_t (R_g − R_h)|·1 / (2K),
    reproduced to 1e-12 (holisticai fills an absent class's row with 1/K).
    """
    rows, defined = confusion_rows(stats)

    def avg_diff(a: int, b: int, common: BoolArray) -> FloatArray:
        diff: FloatArray = (rows[a][common] - rows[b][common]).mean(axis=0)
        return diff

    def distance(a: int, b: int, common: BoolArray) -> float:
        return 0.5 * float(np.abs(avg_diff(a, b, common)).sum())

    def per_class(a: int, b: int, common: BoolArray) -> list[float | None]:
        return [float(x) for x in np.abs(avg_diff(a, b, common))]

    details = _matrix_details(stats, rows, defined)
    details["per_class_of"] = "predicted class: |difference of the class-averaged rates|"
    erows = _exact_rows(stats)

    def exact_distance(a: int, b: int, common: BoolArray) -> Fraction:
        assert erows is not None
        ts = np.flatnonzero(common).tolist()
        k = stats.num_classes
        avg = []
        for p in range(k):
            diffs = []
            for t in ts:
                ra, rb = erows[a][t], erows[b][t]
                assert ra is not None and rb is not None
                diffs.append(ra[p] - rb[p])
            avg.append(_mean(diffs))
        return _half_abs_sum(avg)

    return _pairwise(
        stats,
        params,
        defined,
        distance,
        per_class,
        _NO_TRUE,
        details,
        exact_distance if erows is not None else None,
        _true_rows(stats, stats.num_classes),
        "avg_rows",
    )


def multiclass_true_positive_difference(
    stats: GroupStats, params: Mapping[str, Any]
) -> MetricValue:
    """Multi-class true positive difference (holisticai ``multiclass_true_rates``).

    TPR_g(t) = R_g[t, t] = P(Ŷ = t | Y = t, A = g)
    d(g, h) = (1/K') Σ_{t ∈ T_gh} |TPR_g(t) − TPR_h(t)|
    value = max over pairs d(g, h)  (aggregation=max, default)
          | mean over pairs d(g, h)  (aggregation=mean)

    T_gh = the K' classes occurring as true class in both groups; d in [0, 1].
    With every class in every group this is holisticai's mean |diag(R_g − R_h)|,
    reproduced to 1e-12 (holisticai gives an absent class a recall of 1/K).
    With two groups it equals ``macro_equal_opportunity_multiclass``.
    """
    rows, defined = confusion_rows(stats)
    tpr = np.diagonal(rows, axis1=1, axis2=2)

    def distance(a: int, b: int, common: BoolArray) -> float:
        return float(np.abs(tpr[a] - tpr[b])[common].mean())

    def per_class(a: int, b: int, common: BoolArray) -> list[float | None]:
        return _opt_list(np.abs(tpr[a] - tpr[b]), common)

    details = {
        "classes": list(stats.classes),
        "per_group": {g: _opt_list(tpr[i], defined[i]) for i, g in enumerate(stats.groups)},
    }
    erows = _exact_rows(stats)

    def exact_distance(a: int, b: int, common: BoolArray) -> Fraction:
        assert erows is not None
        diffs = []
        for t in np.flatnonzero(common).tolist():
            ra, rb = erows[a][t], erows[b][t]
            assert ra is not None and rb is not None
            diffs.append(abs(ra[t] - rb[t]))
        return _mean(diffs)

    return _pairwise(
        stats,
        params,
        defined,
        distance,
        per_class,
        _NO_TRUE,
        details,
        exact_distance if erows is not None else None,
        _true_rows(stats, 1),
        "abs_mean",
    )


def _slice_keys(stats: GroupStats) -> list[tuple[str, ...] | None]:
    """Each slice's value in every dimension column."""
    if len(stats.group_keys) == len(stats.groups):
        return list(stats.group_keys)
    out: list[tuple[str, ...] | None] = []
    for name in stats.groups:
        parts = tuple(name.split(INTERSECTION_SEP))
        out.append(parts if len(parts) == len(stats.dimension) else None)
    return out


def intersectional_disparity(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Intersectional disparity (Venturalitica ``calc_intersectional_metrics``).

    Slices are the groups of the combined dimension columns (``gender,age_group``
    → "F & young", ...). With ACC_s = Σ_c C_s[c, c] / n_s:

    value = max_s ACC_s − min_s ACC_s     (in [0, 1])

    over the slices with at least ``min_samples`` rows (smaller slices are
    excluded and listed by the runner). ``details``: ``worst_slice`` (lowest
    accuracy), ``best_slice`` (highest), ``slice_details`` {slice: {accuracy, n,
    values: {column: value}}}. Fewer than two slices → no value (inconclusive).
    One dimension column is allowed: the slices are then its groups.
    """
    c = stats.counts
    hits, rows = np.trace(c, axis1=1, axis2=2), c.sum(axis=(1, 2))
    acc, ok = safe_rate(hits, rows)
    n = stats.n
    slice_details: dict[str, dict[str, Any]] = {}
    for i, (g, key) in enumerate(zip(stats.groups, _slice_keys(stats), strict=True)):
        slice_details[g] = {
            "accuracy": float(acc[i]) if ok[i] else None,
            "n": int(n[i]),
            "values": None if key is None else dict(zip(stats.dimension, key, strict=True)),
        }
    details: dict[str, Any] = {"dimension": list(stats.dimension), "slice_details": slice_details}
    ex = exact_stats(stats)
    exact = None
    if ex is not None:
        e = ex.counts
        exact = (np.trace(e, axis1=1, axis2=2), e.sum(axis=(1, 2)))
    mv = gap(stats, acc, ok, _NO_ROWS, worst="min", details=details, exact=exact)
    if mv.value is None:
        return mv
    out = dict(mv.details)
    out["worst_slice"] = out.pop("min_group")
    out["best_slice"] = out.pop("max_group")
    return MetricValue(
        mv.value, mv.groups, mv.excluded, out, worst_group=mv.worst_group, exact=mv.exact
    )
