"""Score intervals for gaps and ratios of binary rates over groups (``method`` "score").

A metric whose value is max − min, min ÷ max, min or max of per-group binary rates (its
``details["rate"]``, or the TPR and FPR parts of the odds metrics) — the form checked on
the data and on every bootstrap replicate by :mod:`fairpolicy.stats.bands` — gets its
interval from the groups' counts instead of the bootstrap band:

- gap: Newcombe hybrid score intervals of every pairwise difference (two groups: the one
  difference, folded through |·|); the lower end from the Šidák family at ``1 − α/2``
  (below), the upper end from each pair's interval at ``level``: the largest upper end
  is at least the true extreme pair's, so it is wrong only when that one pair's is
  (one-sided ≤ α/2; Šidák over the parts when the metric averages them);
- ratio: Koopman score intervals of every pairwise ratio, mapped through min(R, 1/R);
  the upper end from the family at ``1 − α/2``, the lower end per comparison (as above);
- min / max: per-group Wilson (Clopper–Pearson at 0 or m) intervals, Šidák over groups;
- the odds metrics (max, mean or min of the TPR and FPR parts): every part's pairwise
  intervals in one Šidák family, combined like the parts (the combinations are
  non-decreasing in each part).

Šidák's inequality (Šidák 1967) makes the family hold jointly with probability at least
``level`` for asymptotically normal estimates, whatever their correlation; the TPR and FPR
parts rest on disjoint rows.

The fold. |d| (or min(R, 1/R)) folds the signed statistic at 0 (at 1): at a true gap of 0
the folded interval excludes the truth whenever the signed one misses on *either* side,
so a 1 − α interval would wrongly FAIL (``ci_lower``) with probability α, not α/2. The
end at the fold therefore comes from the family at 1 − α/2 and the other end from the
family at 1 − α: each one-sided error is at most α/2, coverage at least 1 − α, and
``ci_upper``'s end (a gap's upper end) is exactly Newcombe's, so its power to prove
compliance is his. Each rate uses its own denominator (and the effective rows
under survey weights: :func:`fairpolicy.stats.proportions.rate_counts`). Measured in
``docs/statistics.md`` (``benchmarks/interval_grid.py``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np

from fairpolicy.stats import proportions as pr
from fairpolicy.stats.bands import Combine, Form, parts_of
from fairpolicy.stats.bands import combine as combine_values
from fairpolicy.stats.groups import GroupStats
from fairpolicy.stats.values import MetricValue

_TOL = 1e-9


def rates_of(form: Form, mv: MetricValue) -> list[str] | None:
    """The binary rate of each part of ``form`` (None: not a form of binary rates)."""
    if form.cellwise or form.combine == "sum" or "reference_rule" in mv.details:
        # a ratio to a reference group (disparity_ratio) is not min ÷ max in the
        # population even where it coincides on the data (a reference rate of m/m)
        return None
    if form.parts == ("groups",):
        rate = mv.details.get("rate")
        return [rate] if isinstance(rate, str) and rate in pr.RATE_CELLS else None
    if all(p in pr.RATE_CELLS for p in form.parts):
        return list(form.parts)
    return None


def proportions_of(
    form: Form, mv: MetricValue, stats: GroupStats, layout: Sequence[Sequence[str]]
) -> list[list[pr.Proportion]] | None:
    """Per part, the laid-out groups' rates as proportions, when every per-group value the
    metric shows is exactly that rate of ``stats`` (else None: not a rate form here)."""
    rates = rates_of(form, mv)
    parts = parts_of(mv, form)
    if rates is None or parts is None or len(parts) != len(layout):
        return None
    index = {g: i for i, g in enumerate(stats.groups)}
    out: list[list[pr.Proportion]] = []
    for rate, part, names in zip(rates, parts, layout, strict=True):
        props = pr.rate_counts(stats, rate)
        if props is None:
            return None
        row: list[pr.Proportion] = []
        for g in names:
            v = part.get(g)
            if g not in index or v is None:
                return None
            p = props[index[g]]
            if p.m <= 0 or abs(p.p - v) > _TOL * max(1.0, abs(v)):
                return None
            row.append(p)
        out.append(row)
    return out


def family_size(form: Form, props: Sequence[Sequence[pr.Proportion]]) -> int:
    if form.reduce in ("min", "max"):
        return sum(len(p) for p in props)
    return sum(len(pr.pairs(len(p))) for p in props)


def bounds(
    reduce: str, combine: str, props: Sequence[Sequence[pr.Proportion]], level: float
) -> tuple[float, float]:
    """[low, high] of ``combine`` over the parts of ``reduce`` (gap, ratio, min, max) of the
    parts' rates: one Šidák family over every comparison of every part."""
    family = sum(len(p) if reduce in ("min", "max") else len(pr.pairs(len(p))) for p in props)
    each = pr.sidak(level, family)
    # the end at the fold (a gap's lower end, a ratio's upper end) from the family at
    # 1 − α/2: at a true gap of 0 (ratio 1) a miss on either side of the signed
    # difference lands on that end, so at 1 − α it would be wrong there 2 × α/2 = α of
    # the time; the other end keeps 1 − α (its miss is one-sided, ≤ α/2)
    wide = pr.sidak(1.0 - (1.0 - level) / 2.0, family)
    # the end away from the fold (a gap's upper end, a ratio's lower end) is wrong only when
    # the comparison of the true extreme pair is (the largest upper end is at least that
    # pair's): the per-comparison level — Šidák over the parts only when they are
    # averaged or summed, where any part's miss moves the combination (issue 28)
    single = pr.sidak(level, len(props) if combine in ("mean", "sum") else 1)
    lows, highs = [], []
    for part in props:
        got = {}
        for name, lvl in (("normal", each), ("wide", wide), ("single", single)):
            z = pr.z_of(lvl)
            if reduce == "gap":
                got[name] = pr.gap_bounds(part, z)
            elif reduce == "ratio":
                got[name] = pr.ratio_bounds(part, z)
            else:
                got[name] = pr.extreme_bounds(part, z, reduce)
        lows.append(
            got["wide" if reduce == "gap" else "single" if reduce == "ratio" else "normal"][0]
        )
        highs.append(
            got["wide" if reduce == "ratio" else "single" if reduce == "gap" else "normal"][1]
        )
    how = cast(Combine, combine)
    return combine_values(lows, how), combine_values(highs, how)


def score_interval(
    form: Form,
    mv: MetricValue,
    stats: GroupStats,
    layout: Sequence[Sequence[str]],
    level: float,
    shown: int,
) -> tuple[float, float, dict[str, tuple[float, float]], str] | None:
    """(low, high, per-group intervals, note) of the score method for ``form``, or None
    when the value is not a gap/ratio/min/max of binary rates of ``stats``."""
    props = proportions_of(form, mv, stats, layout)
    if props is None or form.reduce not in ("gap", "ratio", "min", "max"):
        return None
    if any(len(p) < (1 if form.reduce in ("min", "max") else 2) for p in props):
        return None
    family = family_size(form, props)
    each = pr.sidak(level, family)
    lo, hi = bounds(form.reduce, form.combine, props, level)
    # per-group intervals of the part shown: simultaneous over every laid-out rate
    coords = sum(len(p) for p in props)
    zg = pr.z_of(pr.sidak(level, coords))
    groups = {
        g: pr.rate_interval(p.x, p.m, zg) for g, p in zip(layout[shown], props[shown], strict=True)
    }
    weighted = " (Kish effective rows under survey weights)" if stats.survey is not None else ""
    method = {
        "gap": "Newcombe hybrid score interval(s) of the difference of rates",
        "ratio": "Koopman score interval(s) of the ratio of rates",
        "min": "Wilson score intervals of the rates",
        "max": "Wilson score intervals of the rates",
    }[form.reduce]
    two = form.reduce in ("gap", "ratio") and all(len(p) == 2 for p in props)
    what = (
        "of the two groups, folded through |·|"
        if two and form.reduce == "gap"
        else "of the two groups, mapped to min ÷ max"
        if two
        else "of every pair of groups"
        if form.reduce in ("gap", "ratio")
        else "of every group"
    )
    note = (
        f"{method} {what}, each rate from its own denominator{weighted}"
        + (f", {family} comparisons at the Šidák level {each:.4g}" if family > 1 else "")
        + (
            "; the lower end at the level 1 − α/2 (it is where both sides' misses land at a "
            "true gap of 0)"
            + (
                "; the upper end per comparison (only the true extreme pair's miss moves it)"
                if family > 1
                else ""
            )
            if form.reduce == "gap"
            else "; the upper end at the level 1 − α/2 (it is where both sides' misses land "
            "at a true ratio of 1)"
            + (
                "; the lower end per comparison (only the true extreme pair's miss moves it)"
                if family > 1
                else ""
            )
            if form.reduce == "ratio"
            else ""
        )
        + f", projected onto {form.describe()}"
    )
    return lo, hi, groups, note


def hull_rates(
    low: Sequence[float],
    high: Sequence[float],
    points: Sequence[float],
    rows: Sequence[float],
    critical: float,
) -> tuple[list[float], list[float]]:
    """Band ends widened to the score (exact at 0 or m) interval of each rate x = p·m of m
    rows at the band's critical value: the floor of a rate seen as 0 or m times."""
    z = critical if math.isfinite(critical) and critical > 0 else pr.z_of(0.95)
    lo, hi = list(low), list(high)
    for j, (p, m) in enumerate(zip(points, rows, strict=True)):
        if m <= 0 or not (0.0 <= p <= 1.0):
            continue
        a, b = pr.rate_interval(p * m, m, z)
        lo[j] = min(lo[j], a)
        hi[j] = max(hi[j], b)
    return lo, hi


def holds(x: float, op: str, threshold: float) -> bool:
    return {
        "<": x < threshold,
        "<=": x <= threshold,
        ">": x > threshold,
        ">=": x >= threshold,
    }[op]


def decided_share(
    rates: Sequence[float],
    m: int,
    reduce: str,
    op: str,
    threshold: float,
    level: float,
    sims: int,
    seed: int,
    prove: str,
) -> float:
    """The share of ``sims`` samples (x_g ~ Binomial(m, p_g)) whose score interval proves
    compliance (``prove`` "ci_upper": the whole interval satisfies ``op threshold``) or
    the violation ("ci_lower": none of it does)."""
    import numpy as np

    rng = np.random.default_rng((seed, m))
    draws = rng.binomial(m, np.asarray(rates, dtype=np.float64), size=(sims, len(rates)))
    hits = 0
    for row in draws:
        if reduce == "ratio" and not row.any():
            continue  # no value: undecided
        props = [pr.Proportion(float(x), float(m)) for x in row]
        lo, hi = bounds(reduce, "one", [props], level)
        if prove == "ci_upper":
            hits += holds(lo, op, threshold) and holds(hi, op, threshold)
        else:
            hits += not holds(lo, op, threshold) and not holds(hi, op, threshold)
    return hits / sims


def rows_needed(
    rates: Sequence[float],
    reduce: str,
    op: str,
    threshold: float,
    level: float,
    probability: float,
    share: float,
    sims: int,
    seed: int,
    max_rows: int,
    prove: str,
) -> tuple[int | None, float]:
    """(the smallest rows per group at which :func:`decided_share` reaches
    ``probability`` — doubling from 8, then bisection to 1 % —, its share); (None, the
    share at ``max_rows``) when not reached."""

    def prob(n: int) -> float:
        m = max(1, round(n * share))
        return decided_share(rates, m, reduce, op, threshold, level, sims, seed, prove)

    n, p = 8, prob(8)
    while p < probability:
        if n >= max_rows:
            return None, p
        n = min(max_rows, n * 2)
        p = prob(n)
    low, high = max(1, n // 2), n
    while high - low > max(1, high // 100):
        mid = (low + high) // 2
        if prob(mid) >= probability:
            high = mid
        else:
            low = mid
    return high, prob(high)


def class_box(
    form: Form, mv: MetricValue, stats: GroupStats, level: float
) -> tuple[float, float, dict[str, tuple[float, float]], str] | None:
    """(low, high, per-group intervals of the shown class, note) of the Šidák score box of a
    multi-class metric's per-(group, class) rates, projected onto the max (mean) over
    classes of each class's max − min (issue 28, item 6); None when ``form`` is not such a
    form of rates x/m of the count table (survey weights, or no per-cell denominator).

    Each (group, class) rate gets Wilson's interval of its own denominator (Clopper–
    Pearson at 0 or m) at the Šidák level ``level ** (1 / cells)``: jointly they hold with
    probability ≥ ``level`` (independent groups; within a group the classes' rates rest
    on disjoint or multinomial rows, and Šidák's inequality holds for them asymptotically),
    and the projection of the box covers the max (mean) over classes whatever class is
    worst. Needs no resampling, so a cell on a handful of rows never loses the interval
    (the band needs every cell in 95 % of the replicates)."""
    from fairpolicy.stats import bands

    if not form.per_class or form.reduce != "gap" or form.combine not in ("max", "mean"):
        return None
    if mv.cell_rows is None or stats.survey is not None:
        return None
    layout = bands.layout_of(form, mv)
    parts = bands.parts_of(mv, form)
    if parts is None or not any(len(names) >= 2 for names in layout):
        return None
    pts = [float(parts[j][g] or 0.0) for j, names in enumerate(layout) for g in names]
    rows = bands.rows_behind(form, mv, layout).tolist()
    xs = [p * m for p, m in zip(pts, rows, strict=True)]
    if any(not 0.0 <= p <= 1.0 or abs(x - round(x)) > 1e-6 for p, x in zip(pts, xs, strict=True)):
        return None  # not a proportion of whole rows
    each = pr.sidak(level, len(pts))
    z = pr.z_of(each)
    ivs = [pr.rate_interval(float(round(x)), m, z) for x, m in zip(xs, rows, strict=True)]
    low = np.array([a for a, _ in ivs], dtype=np.float64)
    high = np.array([b for _, b in ivs], dtype=np.float64)
    box = bands.Band(low, high, z, np.zeros(len(pts)))
    lo, hi = bands.project(form, box, [len(names) for names in layout], layout)
    value = float(mv.value) if mv.value is not None else lo
    shown = bands.shown_part(form, mv)
    start = sum(len(names) for names in layout[:shown])
    groups = {
        g: (float(low[start + i]), float(high[start + i])) for i, g in enumerate(layout[shown])
    }
    note = (
        f"Šidák score box: Wilson score interval of each of the {len(pts)} (group, class) "
        "rates from its own denominator (Clopper–Pearson at 0 or m) at the Šidák level "
        f"{each:.4g}, projected onto {form.describe()}"
    )
    return min(lo, value), max(hi, value), groups, note


def parity_bias(form: Form, mv: MetricValue, sims: int = 2000, seed: int = 28) -> float | None:
    """The expected value of a multi-class max (mean)-over-classes gap when every group
    has the same rate in each class (the pooled rate of its cells) — its bias at parity,
    where the truth is 0: the max over classes of noisy gaps is biased upward at small n.
    Simulated (``sims`` binomial draws of every (group, class) cell of its own
    denominator; seeded, so the same data give the same number); None when not a form of
    whole-row rates."""
    from fairpolicy.stats import bands

    if not form.per_class or form.reduce != "gap" or mv.cell_rows is None:
        return None
    layout = bands.layout_of(form, mv)
    parts = bands.parts_of(mv, form)
    if parts is None:
        return None
    rng = np.random.default_rng(seed)
    gaps = []
    for j, names in enumerate(layout):
        if len(names) < 2:
            continue
        m = np.array([float(mv.cell_rows[g][j]) for g in names])
        x = np.array([float(parts[j][g] or 0.0) for g in names]) * m
        if (m <= 0).any():
            return None
        pooled = float(x.sum() / m.sum())
        draws = rng.binomial(m.astype(np.int64), pooled, size=(sims, len(names))) / m
        gaps.append(draws.max(axis=1) - draws.min(axis=1))
    if not gaps:
        return None
    table = np.stack(gaps, axis=1)
    stat = table.max(axis=1) if form.combine == "max" else table.mean(axis=1)
    return float(stat.mean())
