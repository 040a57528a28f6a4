"""Simultaneous (sup-t) confidence bands for per-group values, projected onto gaps and ratios.

Why. ``max_g θ_g − min_g θ_g`` and ``min_g θ_g / max_g θ_g`` are not smooth where two
groups tie at an extreme (in particular at a true gap of 0): the plug-in estimate is
biased away from parity, its bootstrap distribution is not centred on it, and percentile
and BCa intervals of it under-cover badly (``benchmarks/ci_coverage.py`` measured 0 %
coverage at a true gap of 0 with three groups). A confidence statement about the vector
(θ_1, …, θ_G) does not have that problem: if every θ_g lies in its band, then
``max − min`` of the true values lies between the smallest and the largest ``max − min``
the band allows — the projection is conservative by construction, whatever the ties.

Band. For each per-group value j with point estimate θ̂_j and bootstrap standard error
s_j (the standard deviation of its replicates), the studentised maximum of each
replicate is T*_b = max_j |θ*_bj − θ̂_j| / s_j and the critical value c is the ``level``
quantile of T* (Montiel Olea & Plagborg-Møller 2019, "Simultaneous confidence bands:
theory, implementation, and an application to SVARs", the sup-t band; Hothorn, Bretz &
Westfall 2008 for the max-t idea). The band is θ̂_j ± c·s_j, clipped to the metric's range.
Its simultaneous coverage is asymptotically ``level`` when the per-group estimators are
jointly asymptotically normal (true for rates, F1, AUC …: smooth functions of per-group
means, each group resampled independently).

A value whose replicates do not vary (a rate of 0 or 1 in the sample: every resample
repeats it) would get a band of width 0; its standard error is floored at
width/n (width = the metric's value range, n the rows the value rests on: the group's
rows, or for a multi-class rate its denominator, :func:`rows_behind`), so its half-width
is c/n of the range, close to the "rule of three" 3/n for a proportion seen 0 times out
of n.

Projection (L_j, U_j = the band):

- gap of one vector: [max(0, max_j L_j − min_j U_j), max_{i≠j} (U_i − L_j)];
- ratio (values ≥ 0): [min_{i≠j} L_i / U_j, min(1, min_j U_j / max_j L_j)]
  (1 when every band reaches the largest lower end);

  each is the exact range of the statistic over the box (``tests/stats/test_bands.py``
  checks it against a brute force);
- the smallest (largest) per-group value: [min_j L_j, min_j U_j] ([max_j L_j, max_j U_j]);
- several vectors combined by ``max`` (equalized odds), ``mean`` (average odds),
  ``min`` (equalized-odds ratio) or ``sum``: the combination is non-decreasing in each
  part, so the bounds are the combination of the parts' bounds; the band is joint over
  all parts;
- per-class values (``parts == ("classes",)``: the (group × class) matrix a multi-class
  metric shows in ``details["per_group"]``, one part per class): the gap of each class
  compared by at least two groups, combined by ``max`` (worst class) or ``mean`` (macro);
  a class with fewer than two defined groups is not compared (as in the metric). The
  band is joint over every (group, class) value, so it covers all of them at once and the
  projection covers the max (mean) over classes — whichever class is worst. (Banding
  only the values of the class that is worst on the data would not: on a replicate
  another class can be the worst, and the true worst class need not be the observed one.)
- ``sum`` of the same part twice (``micro_equalized_odds_multiclass``: accuracy gap +
  error-rate gap = 2 × the accuracy gap): the sum of the bounds, exact because both
  parts are the same coordinates.

- holisticai's pairwise multi-class distances (``parts == ("cells",)``: the (group ×
  cell) rates behind ``details["per_group"]`` — prediction rates S_g(p), recalls
  TPR_g(t) or normalised confusion rows R_g[t, p]): the value is the max (mean) over
  pairs of groups of a distance d(g, h) that is a sum of |differences| of coordinates
  (``tv``: ½ Σ_p |ΔS(p)|; ``abs_mean``: mean_t |ΔTPR(t)|; ``tv_rows``: mean_t ½ Σ_p
  |ΔR[t, p]|) or ½ Σ_p |mean_t ΔR[t, p]| (``avg_rows``). Over the box, |x − y| with
  x ∈ [L_x, U_x], y ∈ [L_y, U_y] ranges over [max(0, L_x − U_y, L_y − U_x),
  max(U_x − L_y, U_y − L_x)], and a mean of differences of distinct coordinates over the
  interval of means; a sum of terms in distinct coordinates ranges over the sum of their
  ranges. So each pair's bounds are exact for the box up to the simplex constraints
  (Σ_p R[t, p] = 1, which the box ignores: conservative), and the max (mean) over pairs is
  non-decreasing in every pair, so its bounds are the max (mean) of the pairs' bounds
  (the max's bounds are exact given the pairs'). Each group's own value (its worst pair)
  gets the same projection over its pairs.

The point estimate lies in the band, so it lies in the projection: the interval always
contains it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.values import MetricValue

FloatArray = NDArray[np.float64]

Reduce = Literal["gap", "ratio", "min", "max", "tv", "abs_mean", "tv_rows", "avg_rows"]
#: the pairwise distances of holisticai's multi-class metrics (see the module docstring)
PAIRWISE: tuple[Reduce, ...] = ("tv", "abs_mean", "tv_rows", "avg_rows")
Combine = Literal["one", "max", "mean", "min", "sum"]

#: detail keys holding per-group values of the parts of a combined metric (odds metrics)
_PARTS = ("tpr", "fpr")
#: ``Form.parts`` of per-class values: one part per class of ``details["per_group"]``
CLASSES = "classes"
#: ``Form.parts`` of pairwise forms: one part per cell (class, or (true, predicted) class
#: pair) of ``details["per_group"]``
CELLS = "cells"
#: relative tolerance when a metric value is matched to a reduction of its per-group values
_TOL = 1e-9


@dataclass(frozen=True)
class Form:
    """How a metric value is made of per-group values: ``combine`` over ``parts`` of
    ``reduce`` (max − min or min / max) over the groups of each part."""

    reduce: Reduce
    combine: Combine
    #: "groups" (MetricValue.groups), detail keys ("tpr", "fpr") or :data:`CLASSES`
    parts: tuple[str, ...]

    @property
    def per_class(self) -> bool:
        return self.parts == (CLASSES,)

    @property
    def pairwise(self) -> bool:
        return self.parts == (CELLS,)

    @property
    def cellwise(self) -> bool:
        """Coordinates are (group, cell) values, some of which a replicate may lose."""
        return self.per_class or self.pairwise

    def describe(self) -> str:
        if self.pairwise:
            dist = {
                "tv": "½ Σ_p |S_g(p) − S_h(p)|",
                "abs_mean": "mean_t |TPR_g(t) − TPR_h(t)|",
                "tv_rows": "mean_t ½ Σ_p |R_g[t, p] − R_h[t, p]|",
                "avg_rows": "½ Σ_p |mean_t (R_g[t, p] − R_h[t, p])|",
            }[self.reduce]
            return f"the {self.combine} over pairs of groups of {dist}"
        what = {"gap": "max − min", "ratio": "min ÷ max", "min": "min", "max": "max"}[self.reduce]
        if self.combine == "one":
            return f"{what} of the per-group values"
        if self.per_class:
            how = "mean" if self.combine == "mean" else self.combine
            return f"the {how} over the classes of the {what} of each class's per-group values"
        if self.combine == "sum" and len(set(self.parts)) == 1:
            return f"{len(self.parts)} × the {what} of the per-group values"
        parts = " and ".join(p.upper() for p in self.parts)
        return f"the {self.combine} of the {what} of {parts} over the groups"


def parts_of(mv: MetricValue, form: Form) -> list[dict[str, float | None]] | None:
    """The per-group values of each part of ``form`` in ``mv``, or None if it lacks one."""
    if form.per_class:
        return _class_parts(mv)
    if form.pairwise:
        return _cell_parts(mv, rows=form.reduce in ("tv_rows", "avg_rows"))
    out: list[dict[str, float | None]] = []
    for p in form.parts:
        if p == "groups":
            out.append({g.group: g.value for g in mv.groups})
            continue
        d = mv.details.get(p)
        if not isinstance(d, Mapping):
            return None
        out.append({str(k): (None if v is None else float(v)) for k, v in d.items()})
    return out


def _class_parts(mv: MetricValue) -> list[dict[str, float | None]] | None:
    """One {group: value} per class from ``details["per_group"]`` ({group: [value per
    class]}, as the multi-class metrics show it); None when the details have no such
    matrix (a list of numbers or None of one length per group)."""
    per_group, classes = mv.details.get("per_group"), mv.details.get("classes")
    if not isinstance(per_group, Mapping) or not isinstance(classes, list) or not classes:
        return None
    k = len(classes)
    out: list[dict[str, float | None]] = [{} for _ in range(k)]
    for g, row in per_group.items():
        if not isinstance(row, list) or len(row) != k:
            return None
        for j, v in enumerate(row):
            if v is not None and not isinstance(v, int | float):
                return None
            out[j][str(g)] = None if v is None else float(v)
    return out


def _cell_parts(mv: MetricValue, rows: bool) -> list[dict[str, float | None]] | None:
    """One {group: value} per cell from ``details["per_group"]``: per group a list of K
    numbers (or None), or with ``rows`` a list of K rows of K numbers (a row None when
    undefined), flattened row by row; None when the details are not of that shape."""
    per_group, classes = mv.details.get("per_group"), mv.details.get("classes")
    if not isinstance(per_group, Mapping) or not isinstance(classes, list) or not classes:
        return None
    k = len(classes)
    out: list[dict[str, float | None]] = [{} for _ in range(k * k if rows else k)]
    for g, vec in per_group.items():
        if not isinstance(vec, list) or len(vec) != k:
            return None
        flat: list[Any] = []
        for item in vec:
            if not rows:
                flat.append(item)
            elif item is None:
                flat += [None] * k
            elif isinstance(item, list) and len(item) == k:
                flat += item
            else:
                return None
        for j, v in enumerate(flat):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
                return None
            out[j][str(g)] = None if v is None else float(v)
    return out


def _finite(v: float | None) -> float:
    return float(v) if v is not None and math.isfinite(v) else math.nan


def _pair_bounds(
    form: Form, k: int, lo_a: FloatArray, hi_a: FloatArray, lo_b: FloatArray, hi_b: FloatArray
) -> tuple[float, float] | None:
    """[min, max] of d(g, h) over the box (point values: lo = hi); None: no common class.
    NaN marks a (group, cell) value that is not defined."""
    rows = form.reduce in ("tv_rows", "avg_rows")
    if rows:
        common = np.isfinite(lo_a).reshape(k, k).all(axis=1)
        common &= np.isfinite(lo_b).reshape(k, k).all(axis=1)
    else:
        common = np.isfinite(lo_a) & np.isfinite(lo_b)
        if form.reduce == "tv" and not common.all():
            return None  # a prediction-rate vector is defined entirely or not at all
    if not common.any():
        return None
    # |x − y| over x ∈ [lo_a, hi_a], y ∈ [lo_b, hi_b], per coordinate
    small = np.maximum(0.0, np.maximum(lo_a - hi_b, lo_b - hi_a))
    large = np.maximum(hi_a - lo_b, hi_b - lo_a)
    if form.reduce == "tv":
        return 0.5 * float(small.sum()), 0.5 * float(large.sum())
    if form.reduce == "abs_mean":
        return float(small[common].mean()), float(large[common].mean())
    if form.reduce == "tv_rows":
        s_rows = 0.5 * small.reshape(k, k).sum(axis=1)
        l_rows = 0.5 * large.reshape(k, k).sum(axis=1)
        return float(s_rows[common].mean()), float(l_rows[common].mean())
    # avg_rows: A_p = mean_t (R_g[t, p] − R_h[t, p]) over the common true classes ranges
    # over [mean_t (L_g − U_h), mean_t (U_g − L_h)] (distinct coordinates per t)
    d_lo = (lo_a - hi_b).reshape(k, k)[common].mean(axis=0)
    d_hi = (hi_a - lo_b).reshape(k, k)[common].mean(axis=0)
    a_small = np.maximum(0.0, np.maximum(d_lo, -d_hi))
    a_large = np.maximum(np.abs(d_lo), np.abs(d_hi))
    return 0.5 * float(a_small.sum()), 0.5 * float(a_large.sum())


def pairwise_bounds(
    form: Form, groups: Sequence[str], low: FloatArray, high: FloatArray
) -> tuple[tuple[float, float] | None, dict[str, tuple[float, float]]]:
    """[min, max] of the pairwise ``form`` over the box [low, high] ((G, cells) arrays, NaN
    where a (group, cell) value is undefined), and each group's own [min, max] (its pairs
    combined the same way); (None, …) when no pair has a common class."""
    cells = low.shape[1]
    k = math.isqrt(cells) if form.reduce in ("tv_rows", "avg_rows") else cells
    how: Combine = "mean" if form.combine == "mean" else "max"
    mine: dict[int, list[tuple[float, float]]] = {i: [] for i in range(len(groups))}
    pairs: list[tuple[float, float]] = []
    for a in range(len(groups)):
        for b in range(a + 1, len(groups)):
            got = _pair_bounds(form, k, low[a], high[a], low[b], high[b])
            if got is not None:
                pairs.append(got)
                mine[a].append(got)
                mine[b].append(got)

    def comb(xs: list[tuple[float, float]]) -> tuple[float, float]:
        return combine([x[0] for x in xs], how), combine([x[1] for x in xs], how)

    own = {groups[i]: comb(xs) for i, xs in mine.items() if xs}
    return (comb(pairs) if pairs else None), own


def _reduce(values: Sequence[float], how: Reduce) -> float | None:
    if len(values) < (1 if how in ("min", "max") else 2):
        return None
    hi, lo = max(values), min(values)
    if how in ("min", "max"):
        return lo if how == "min" else hi
    if how == "gap":
        return hi - lo
    if lo < 0 or hi <= 0:
        return None
    return lo / hi


def combine(values: Sequence[float], how: Combine) -> float:
    """``how`` of the parts' values (``one``: the only part)."""
    if how == "max":
        return max(values)
    if how == "min":
        return min(values)
    if how == "mean":
        return sum(values) / len(values)
    if how == "sum":
        return sum(values)
    return values[0]


def evaluate(form: Form, parts: Sequence[Mapping[str, float | None]]) -> float | None:
    """The metric value ``form`` rebuilds from per-group values (None: not defined)."""
    if form.pairwise:
        groups = list(parts[0]) if parts else []
        values = np.array(
            [[_finite(part.get(g)) for part in parts] for g in groups], dtype=np.float64
        ).reshape(len(groups), len(parts))
        got = pairwise_bounds(form, groups, values, values)[0]
        return None if got is None else got[0]
    reduced = []
    for part in parts:
        vals = [v for v in part.values() if v is not None and math.isfinite(v)]
        r = _reduce(vals, form.reduce)
        if r is None:
            if form.per_class:  # a class with too few defined groups is not compared
                continue
            return None
        reduced.append(r)
    return combine(reduced, form.combine) if reduced else None


def candidates(mv: MetricValue) -> list[Form]:
    """The forms that rebuild ``mv.value`` from its per-group values (possibly several:
    the replicates decide between them)."""
    if mv.value is None or not math.isfinite(mv.value):
        return []
    out: list[Form] = []
    options: list[Form] = []
    agg, kind = mv.details.get("aggregation"), mv.details.get("pair_distance")
    if isinstance(mv.details.get("pairs"), list) and agg in ("max", "mean") and kind in PAIRWISE:
        # the metric names its distance: two distances can agree on one sample (and on
        # every replicate of it) yet bound the truth differently
        options.append(Form(kind, agg, (CELLS,)))
    options += [Form("gap", c, (CLASSES,)) for c in ("max", "mean")]
    if all(isinstance(mv.details.get(p), Mapping) for p in _PARTS):
        options += [Form("gap", c, _PARTS) for c in ("max", "mean")]
        options.append(Form("ratio", "min", _PARTS))
    options += [Form(r, "one", ("groups",)) for r in ("gap", "ratio", "min", "max")]
    options.append(Form("gap", "sum", ("groups", "groups")))
    for form in options:
        if out and out[0].cellwise and not form.cellwise:
            # the per-group values shown are those of the class that is worst on the
            # data: banding them alone would miss the other classes (see the module doc)
            break
        parts = parts_of(mv, form)
        if parts is None:
            continue
        got = evaluate(form, parts)
        if got is not None and abs(got - mv.value) <= _TOL * max(1.0, abs(mv.value)):
            out.append(form)
    return out


def matches(form: Form, mv: MetricValue, layout: Sequence[Sequence[str]]) -> FloatArray | None:
    """The per-group values of ``mv`` laid out as ``layout`` (per part, the groups defined on
    the data) when ``form`` rebuilds ``mv.value`` from exactly those; None otherwise."""
    if mv.value is None or not math.isfinite(mv.value):
        return None
    parts = parts_of(mv, form)
    if parts is None:
        return None
    if len(parts) != len(layout):
        return None
    flat: list[float] = []
    for part, names in zip(parts, layout, strict=True):
        defined = [g for g, v in part.items() if v is not None and math.isfinite(v)]
        # per-class forms: a (group, class) value lost in this replicate is NaN
        lost = defined != list(names)
        if lost and (not form.cellwise or not set(defined) <= set(names)):
            return None
        flat.extend(
            float(v) if (v := part.get(g)) is not None and math.isfinite(v) else math.nan
            for g in names
        )
    got = evaluate(form, parts)
    if got is None or abs(got - mv.value) > _TOL * max(1.0, abs(mv.value)):
        return None
    return np.array(flat, dtype=np.float64)


#: per-class forms: the largest share of replicates in which a (group, class) value may be
#: undefined (it is left out of those replicates), as for a group's value
#: (``bootstrap.UNDEFINED_LIMIT``)
MISSING_SHARE = 0.05


def usable(form: Form, coords: FloatArray) -> FloatArray | None:
    """The replicates' coordinates the band is built on (NaN: a coordinate undefined in a
    replicate), or None when ``form`` does not hold on enough of them.

    A per-group form must hold on every replicate. A per-class form may miss a few
    coordinates: a (group, class) cell resting on a handful of rows is undefined in a
    replicate that draws none of them (that class is then compared over the other
    groups). Such a coordinate counts in the band where it is defined, if it is
    undefined in at most :data:`MISSING_SHARE` of the replicates — the rule for a group's
    value (a cell resting on fewer than about 3 rows gets no band)."""
    if not len(coords):
        return None
    miss = np.isnan(coords)
    if not miss.any():
        return coords
    if not form.cellwise or (miss.mean(axis=0) > MISSING_SHARE).any():
        return None
    return coords


def layout_of(form: Form, mv: MetricValue) -> list[list[str]]:
    """Per part, the groups whose value is defined on the data (the band's coordinates)."""
    parts = parts_of(mv, form) or []
    return [[g for g, v in p.items() if v is not None and math.isfinite(v)] for p in parts]


def rows_behind(form: Form, mv: MetricValue, layout: Sequence[Sequence[str]]) -> FloatArray:
    """Per coordinate of the band, the rows its value rests on (at least 1): for per-class
    forms the rate's denominator when the metric says it (``MetricValue.cell_rows``: a
    class's true rows for a recall), otherwise the group's rows. The standard-error floor
    is 1 / that, so a rate of 0 or 1 seen on m rows gets a half-width of c/m, near the
    "rule of three" 3/m."""
    sizes = {g.group: g.n for g in mv.groups}
    cells = mv.cell_rows if form.cellwise else None
    out: list[float] = []
    for j, names in enumerate(layout):
        for g in names:
            row = cells.get(g) if cells is not None else None
            m = row[j] if row is not None and j < len(row) else sizes.get(g, 1)
            out.append(float(max(1, m)))
    return np.array(out, dtype=np.float64)


def shown_part(form: Form, mv: MetricValue) -> int:
    """The part whose per-group band is reported as the per-group intervals: the part
    that drives the value (``details["driven_by"]``, or the worst class)."""
    if form.per_class:
        classes, worst = mv.details.get("classes"), mv.details.get("worst_class")
        return classes.index(worst) if isinstance(classes, list) and worst in classes else 0
    driven = mv.details.get("driven_by")
    return form.parts.index(driven) if driven in form.parts else 0


@dataclass(frozen=True)
class Band:
    low: FloatArray  # per coordinate
    high: FloatArray
    critical: float  # c: the band is θ̂ ± c·s
    se: FloatArray


def sup_t(
    replicates: FloatArray,
    points: FloatArray,
    level: float,
    floor: FloatArray,
    value_range: tuple[float, float],
) -> Band:
    """The sup-t band θ̂_j ± c·s_j of the coordinates (columns of ``replicates`` (B, m))."""
    reps = np.asarray(replicates, dtype=np.float64)
    pts = np.asarray(points, dtype=np.float64)
    # NaN: a coordinate undefined in a replicate (per-class forms, see :func:`usable`); it
    # counts where it is defined
    defined = np.isfinite(reps).sum(axis=0)
    if reps.shape[0] >= 2 and (defined >= 2).all():
        sd = np.nanstd(reps, axis=0, ddof=1)
    else:
        sd = np.zeros(reps.shape[1])
    se = np.maximum(sd, np.asarray(floor, dtype=np.float64))
    tiny = se <= 0.0
    se = np.where(tiny, 1.0, se)  # a coordinate with no spread and no floor: width 0
    t = np.nan_to_num(np.abs(reps - pts) / se, nan=0.0)
    t[:, tiny] = 0.0
    stat = t.max(axis=1) if t.shape[1] else np.zeros(reps.shape[0])
    crit = float(np.quantile(stat, level, method="higher")) if len(stat) else 0.0
    half = np.where(tiny, 0.0, crit * se)
    lo = np.maximum(pts - half, value_range[0])
    hi = np.minimum(pts + half, value_range[1])
    # the band always holds the point (clipping at a range the point lies in keeps it)
    lo = np.minimum(lo, pts)
    hi = np.maximum(hi, pts)
    return Band(lo, hi, crit, np.where(tiny, 0.0, se))


def pairwise_box(
    band: Band, layout: Sequence[Sequence[str]]
) -> tuple[list[str], FloatArray, FloatArray]:
    """The band of a pairwise form as (groups, low, high) (G, cells) arrays, NaN where a
    (group, cell) value is not a coordinate (undefined on the data)."""
    groups: list[str] = []
    for names in layout:
        groups += [g for g in names if g not in groups]
    index = {g: i for i, g in enumerate(groups)}
    low = np.full((len(groups), len(layout)), np.nan)
    high = np.full((len(groups), len(layout)), np.nan)
    start = 0
    for j, names in enumerate(layout):
        for i, g in enumerate(names):
            low[index[g], j] = band.low[start + i]
            high[index[g], j] = band.high[start + i]
        start += len(names)
    return groups, low, high


def project(
    form: Form, band: Band, sizes: Sequence[int], layout: Sequence[Sequence[str]] = ()
) -> tuple[float, float]:
    """[smallest, largest] value of the metric over the box ``band`` (parts of ``sizes``;
    a pairwise form needs the ``layout``: the groups of each part)."""
    if form.pairwise:
        groups, low, high = pairwise_box(band, layout)
        got = pairwise_bounds(form, groups, low, high)[0]
        if got is None:
            raise ValueError("a pairwise form needs a pair of groups with a common class")
        return got
    lows, highs = [], []
    start = 0
    for m in sizes:
        lo, hi = band.low[start : start + m], band.high[start : start + m]
        start += m
        if m < (1 if form.reduce in ("min", "max") else 2):
            continue  # a class compared by fewer than two groups (per-class forms only)
        off = ~np.eye(len(lo), dtype=bool)  # pairs of two different groups
        if form.reduce == "gap":
            lows.append(max(0.0, float(lo.max() - hi.min())))
            highs.append(float((hi[:, None] - lo[None, :])[off].max()))
        elif form.reduce == "min":
            lows.append(float(lo.min()))
            highs.append(float(hi.min()))
        elif form.reduce == "max":
            lows.append(float(lo.max()))
            highs.append(float(hi.max()))
        else:
            lo = np.maximum(lo, 0.0)
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                q = np.where(hi[None, :] > 0, lo[:, None] / hi[None, :], 0.0)
            lows.append(float(q[off].min()))
            bottom = float(lo.max())
            highs.append(1.0 if bottom <= float(hi.min()) else float(hi.min()) / bottom)
    return combine(lows, form.combine), combine(highs, form.combine)
