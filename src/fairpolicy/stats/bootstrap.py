"""Bootstrap confidence intervals on the sufficient statistics: percentile, BCa (with its
cell jackknife) and the simultaneous band for gaps and ratios over groups.

The replicates are drawn by :mod:`fairpolicy.stats.resample`; every statistic is the
metric's own ``spec.fn`` evaluated on a resampled ``GroupStats``.

Undefined replicates. A replicate counts as undefined when the metric has no
value (``None`` or not finite) or compares a different set of groups than the
data does (a group whose rate is defined on the data but not in the replicate —
the gap would then be a different statistic). Undefined replicates are dropped.
There is no interval when a group's value is missing from more than 5 % of the
replicates — it rests on fewer than about 3 rows, since a value resting on d rows
is missing from ≈ e^−d of them — and ``reason`` names each such group with that
count (:func:`_lost_reason`); otherwise when more than 5 % are undefined for any
other reason (``reason`` says how many): an interval on the survivors would be biased.

Gaps and ratios over groups. A value that is max − min, min ÷ max, min or max of
per-group values (or the max/mean/min of two such gaps, the odds metrics) — checked on
the data and on every replicate — gets the simultaneous sup-t band of
:mod:`fairpolicy.stats.bands` projected onto it (``method`` "band"), whatever method was
asked: percentile and BCa intervals of these non-smooth statistics exclude the truth at
ties (``docs/statistics.md``). Every other interval is widened to contain the point
estimate when it lies beside it (with a note). ``Replicates.rows`` (``resample: rows``):
group sizes vary, Multinomial(N, n_g / N), instead of being fixed.

Quantiles. ``numpy.quantile`` with its default ``linear`` method (Hyndman & Fan
type 7) on the defined replicate values — the definition ``scipy.stats.bootstrap``
uses. Percentile interval: the α/2 and 1 − α/2 quantiles, α = 1 − level.

BCa (Efron & Tibshirani 1993, ch. 14; ``scipy.stats.bootstrap(method="BCa")``).
z0 = Φ⁻¹(share of replicates below the point estimate, ties counting one half).
The acceleration is the stratified (multi-sample) jackknife scipy uses:
per group g with n_g rows, U_i = (n_g − 1)(θ̄_g − θ_(i)),
a = Σ_g Σ_i U_i³ / n_g³ / (6 (Σ_g Σ_i U_i² / n_g²)^{3/2}). Leaving one row out of
a cell changes one count, so every row of a cell has the same θ_(i): each
non-empty cell (count cell, or joint score cell) is one metric evaluation
weighted by its count — the result equals the row jackknife exactly. When the
kept groups hold more than ``JACKKNIFE_MAX`` cells (continuous scores: about
one cell per row), groups with too many cells use the grouped jackknife of
Efron & Narasimhan (2020, ``bcaboot::bcajack``): their rows are split at random
(seeded) into M_g equal blocks and one block is left out at a time, with M_g in
place of n_g above (it estimates the same sums). A BCa interval falls back to
the percentile interval, with ``note`` saying why and ``method`` =
"percentile", when a leave-one-out value is undefined, z0 is infinite (every
replicate on one side of the point) or a·(z0 ± z) ≥ 1. A jackknife with zero
spread gives a = 0. Per-group intervals (``Interval.groups``) use the same
method on the per-group values, with their own z0 and acceleration from the
same leave-one-out evaluations.

Two-group gaps under BCa. |θ_a − θ_b| is not a smooth function where the two
values cross: within a few standard errors of 0 the replicates fold above the
point, z0 turns negative and plain BCa shifts the interval below the true gap
(``benchmarks/ci_coverage.py`` measured 0.85–0.90 coverage at 1.4–2.4 s.e.). When
the metric is the gap of exactly two groups — on the data, on every replicate and
on every leave-one-out value — BCa is computed on the smooth signed difference
s·(θ_a − θ_b), with s the sign on the data, and the interval is folded through |·|
(the note says so; reached only with ``band=False``, since such gaps get the band).
BCa is never used on more than two groups: it falls back to the percentile interval
with the reason.

Cost. The draw is vectorised; evaluating the metric is a Python loop over the
replicates calling ``spec.fn``: measured 30–90 µs per replicate for count
metrics (independent of the rows), 80–130 µs for score metrics with ~500 score
cells, 0.35 ms (binary AUC) and 1.1 ms (one-vs-rest AUC, K = 3) with 6,500
distinct continuous scores. BCa adds one evaluation per non-empty cell (at most
about ``JACKKNIFE_MAX``); the permutation test P evaluations, and P per group
for the per-group p-values when there are more than two groups.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.exact import level_percent
from fairpolicy.stats import bands, rate_forms
from fairpolicy.stats import jackknife as jk
from fairpolicy.stats.groups import GroupStats
from fairpolicy.stats.jackknife import Jackknife, acceleration, jackknife
from fairpolicy.stats.resample import (
    UNDEFINED_LIMIT,
    Replicates,
    compared_groups,
    needed,
    read_value,
    replicate_groups,
    unavailable,
    undefined_reason,
)
from fairpolicy.stats.tails import WIDEN
from fairpolicy.stats.values import MetricValue, Statistic

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

METHODS = ("percentile", "bca")

_NORMAL = NormalDist()


def _lost_reason(rv: ReplicateValues, total: int) -> str | None:
    """Why there is no interval when some groups' values are missing from too many
    replicates, named per group; None when every group keeps its value in all but
    ``UNDEFINED_LIMIT`` of them.

    A group's value is undefined in a replicate when the replicate draws none of the rows
    its value rests on (a TPR's actual positives, a PPV's predicted positives, …). With d
    such rows among the group's n, that happens with probability (1 − d/n)^n ≈ e^−d, so
    the limit of 5 % is the count rule "d ≥ 3" (e^−3 ≈ 0.05), measured on the replicates
    so that it holds for every metric, whatever rows define its per-group value."""
    bad = {g: k for g, k in rv.lost.items() if k > UNDEFINED_LIMIT * total}
    if not bad:
        return None
    listed = "; ".join(
        f"'{g}' has no value in {k} of {total} replicates (about {_rows_behind(k, total)} "
        "of its rows define it)"
        for g, k in bad.items()
    )
    return (
        f"too few rows behind the value of {len(bad)} group(s): {listed}. A resample that "
        "draws none of them leaves the group's value undefined; an interval needs about 3 "
        f"or more such rows per group (fewer than {UNDEFINED_LIMIT:.0%} of resamples missing "
        "them all). Collect more rows for these groups, exclude them (min_samples), or "
        "merge them with others"
    )


def _rows_behind(lost: int, total: int) -> str:
    """The d with e^−d = lost / total, rounded: how many rows a value rests on."""
    share = lost / total
    if share >= 1.0:
        return "0"
    d = -math.log(share)
    return f"{d:.0f}" if d >= 1 else "1"


# ---------------------------------------------------------------------------
# confidence intervals


@dataclass(frozen=True)
class Interval:
    low: float | None
    high: float | None
    level: float
    method: str  # "percentile" | "bca" | "band" | "score"
    resamples: int
    seed: int
    valid: int  # replicates whose value was defined
    reason: str | None = None  # why low/high are None (e.g. too many undefined replicates)
    groups: dict[str, tuple[float, float]] | None = None  # per-group CI of the per-group values
    #: set when the interval is a fallback (BCa → percentile) or otherwise qualified
    note: str | None = None
    #: BCa's bias correction and acceleration, when BCa was used
    z0: float | None = None
    acceleration: float | None = None
    #: a score interval's exact Clopper–Pearson box at the same level
    #: (:func:`fairpolicy.stats.sequential.exact_box`; a multi-class gap over classes, band or
    #: score: :func:`fairpolicy.stats.sequential.exact_class_box`), when asked
    #: (``exact_box=True``); under survey weights Hoeffding's box instead (``box_kind``):
    #: what confirms (or, for an unresolved band, makes) a sequential alarm
    box: tuple[float, float] | None = None
    #: how :attr:`box` was built: None, Clopper–Pearson (whole counts); "hoeffding": Hoeffding
    #: intervals on Kish's effective rows (survey weights,
    #: :func:`fairpolicy.stats.sequential.hoeffding_box`)
    box_kind: str | None = None


@dataclass(frozen=True)
class ReplicateValues:
    """The metric on every replicate: NaN where the replicate does not count."""

    values: FloatArray  # (B,)
    groups: FloatArray  # (B, len(compared)) per-group values
    compared: tuple[str, ...]
    undefined: int
    differ: int
    base: MetricValue  # the metric on the data (kept groups)
    #: per candidate :class:`~fairpolicy.stats.bands.Form` of the value (max − min or
    #: min ÷ max over per-group values), the (B, coordinates) per-group values of each
    #: replicate; a row is NaN where the replicate's value is not that form of them
    forms: dict[bands.Form, FloatArray] = dataclasses.field(default_factory=dict)
    #: per compared group, the replicates in which its value is undefined
    lost: dict[str, int] = dataclasses.field(default_factory=dict)


def replicate_values(
    spec: Statistic,
    stats: GroupStats,
    keep: NDArray[np.bool_],
    params: Mapping[str, Any],
    reps: Replicates,
) -> ReplicateValues:
    """``spec.fn`` on each replicate restricted to the ``keep`` groups (a loop over B)."""
    stats = needed(spec, stats)
    mask = np.asarray(keep, dtype=bool)
    idx = np.flatnonzero(mask).astype(np.int64)
    base_stats = stats.select(mask)
    base = spec.fn(base_stats, params)
    compared = compared_groups(base)
    n_b = reps.resamples
    if spec.batch is not None and stats.scores is None and stats.positive is not None:
        return _batch_values(spec, base_stats, base, compared, reps, idx)
    values = np.full(n_b, np.nan)
    groups = np.full((n_b, len(compared)), np.nan)
    forms = {f: bands.layout_of(f, base) for f in bands.candidates(base)}
    coords = {f: np.full((n_b, sum(map(len, lay))), np.nan) for f, lay in forms.items()}
    undefined = differ = 0
    lost = dict.fromkeys(compared, 0)
    for b in range(n_b):
        mv = spec.fn(replicate_groups(base_stats, stats, reps, b, idx), params)
        got = read_value(mv, compared)
        if isinstance(got, str):
            for g in set(compared) - set(compared_groups(mv)):
                lost[g] += 1
        if got == "undefined":
            undefined += 1
        elif got == "groups":
            differ += 1
        elif not isinstance(got, str):
            values[b], groups[b] = got
            for f, lay in forms.items():
                row = bands.matches(f, mv, lay)
                if row is not None:
                    coords[f][b] = row
    return ReplicateValues(values, groups, compared, undefined, differ, base, coords, lost)


def _batch_values(
    spec: Statistic,
    base_stats: GroupStats,
    base: MetricValue,
    compared: tuple[str, ...],
    reps: Replicates,
    idx: IntArray,
) -> ReplicateValues:
    """All replicates at once through the metric's vectorised twin (``spec.batch``).

    Same bookkeeping as the loop: a replicate whose value is undefined, or whose set of
    groups with a defined value differs from the data's, does not count.
    """
    assert spec.batch is not None and base_stats.positive is not None
    vals, per, defined = spec.batch(reps.counts[:, idx], base_stats.positive)
    base_defined = np.array([gv.value is not None for gv in base.groups], dtype=bool)
    nan = ~np.isfinite(vals)
    other = ~nan & (defined != base_defined).any(axis=1)
    keep = ~nan & ~other
    values = np.where(keep, vals, np.nan)
    groups = np.full((len(vals), len(compared)), np.nan)
    groups[keep] = per[keep][:, base_defined]
    coords: dict[bands.Form, FloatArray] = {}
    for form in bands.candidates(base):
        if form.parts != ("groups",) or not groups.shape[1]:
            continue
        hi, lo = groups.max(axis=1, initial=-np.inf), groups.min(axis=1, initial=np.inf)
        if form.reduce == "gap":
            rebuilt = hi - lo
        elif form.reduce in ("min", "max"):
            rebuilt = lo if form.reduce == "min" else hi
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                rebuilt = np.where((lo >= 0) & (hi > 0), lo / hi, np.nan)
        tol = 1e-9 * np.maximum(1.0, np.abs(values))
        same = keep & (np.abs(rebuilt - values) <= tol)
        coords[form] = np.where(same[:, None], groups, np.nan)
    gone = (~defined & base_defined).sum(axis=0)
    lost = {g: int(gone[i]) for i, g in enumerate(base_stats.groups) if base_defined[i]}
    return ReplicateValues(
        values, groups, compared, int(nan.sum()), int(other.sum()), base, coords, lost
    )


def _quantiles(v: FloatArray, lo: float, hi: float) -> tuple[float, float]:
    q = np.quantile(v, [lo, hi])
    return float(q[0]), float(q[1])


def bca_levels(
    values: FloatArray, point: float, acceleration: float, level: float
) -> tuple[float, float, float] | str:
    """(α₁, α₂, z0) of the BCa interval, or why BCa is not defined here.

    z0 = Φ⁻¹(#{θ* < θ̂}/B + #{θ* = θ̂}/(2B)); α_i = Φ(z0 + (z0 + z_i)/(1 − a(z0 + z_i)))
    with z_1 = Φ⁻¹(α/2), z_2 = −z_1 (Efron & Tibshirani 1993, eq. 14.10).
    """
    b = len(values)
    share = (float(np.count_nonzero(values < point)) + float(np.count_nonzero(values <= point))) / (
        2 * b
    )
    if share <= 0.0 or share >= 1.0:
        return "every replicate lies on one side of the point estimate (z0 is infinite)"
    z0 = _NORMAL.inv_cdf(share)
    z = _NORMAL.inv_cdf((1.0 - level) / 2.0)
    out = []
    for zi in (z, -z):
        num = z0 + zi
        den = 1.0 - acceleration * num
        if den <= 0.0:
            return f"the acceleration a = {acceleration:.3g} is too large for this level"
        out.append(_NORMAL.cdf(z0 + num / den))
    return out[0], out[1], z0


def confidence(
    spec: Statistic,
    stats: GroupStats,
    keep: np.ndarray,
    params: dict[str, Any],
    point: float,
    reps: Replicates,
    level: float,
    method: str,
    band: bool = True,
    exact_box: bool = False,
) -> Interval:
    """CI of spec.fn on the groups where `keep` is true (the runner's min_samples/min_share
    exclusion; apply it to each replicate with stats.select(keep) — selection commutes with the
    stratified draw). `point` is the value on the original data (for BCa's bias correction).
    BCa's acceleration comes from a jackknife computed from cells: leaving one row out of a
    (group, y_true, y_pred) cell changes one count, so each non-empty cell is one jackknife
    value weighted by its count — never a loop over rows.

    A value that is max − min or min ÷ max of per-group values (on the data and on every
    replicate: most gap and ratio metrics) gets the simultaneous band of
    :mod:`fairpolicy.stats.bands` whatever ``method`` asks (``band=False`` forces the
    asked method: the tests of the percentile and BCa machinery). BCa is used only on two
    compared groups (a smooth statistic, or the signed difference of a two-group gap);
    otherwise it falls back to the percentile interval with the reason. Without the band,
    the percentile/BCa quantiles are read at tails ÷ :data:`WIDEN` (unless ``band=False``).
    Every interval
    contains the point estimate: a percentile or BCa interval beside it is widened to it,
    with a note. ``exact_box``: a score interval also carries its exact box (:attr:`Interval.box`;
    the ``sequential`` window gate's confirmation)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level}")
    n_b = reps.resamples

    def none(reason: str, valid: int = 0) -> Interval:
        return Interval(None, None, level, method, n_b, reps.seed, valid, reason=reason)

    why = unavailable(spec, stats) or reps.reason
    if why is not None:
        return none(why)
    stats = needed(spec, stats)
    rv = replicate_values(spec, stats, keep, params, reps)
    ok = ~np.isnan(rv.values)
    valid = int(ok.sum())
    why = _lost_reason(rv, n_b) or undefined_reason(
        rv.undefined, rv.differ, n_b, "bootstrap replicates"
    )
    box = _class_box(rv, point, level, method, reps, valid, stats.select(keep)) if band else None
    if why is not None or valid == 0:
        # a multi-class gap whose cells are lost in too many replicates: the score box
        kept = stats.select(keep)
        if box is not None:
            return _exact_class(box, spec.key, rv, kept, level, exact_box)
        return none(why or "no replicate has a value", valid)
    v = rv.values[ok]
    gv = rv.groups[ok]
    alpha = (1.0 - level) / 2.0
    points = [gvv.value for gvv in rv.base.groups if gvv.value is not None]
    widened: str | None = None
    if band:
        got = _band(spec, rv, ok, point, level, method, reps, valid, stats.select(keep), exact_box)
        if got is not None:
            return _exact_class(got, spec.key, rv, stats.select(keep), level, exact_box)
        if box is not None:  # never the percentile fallback: it cannot cover a gap of 0
            return _exact_class(box, spec.key, rv, stats.select(keep), level, exact_box)
        small = _too_small(stats.select(keep), method)
        if small is not None:
            return none(small, valid)
        alpha /= WIDEN
        widened = (
            f"quantiles at the {1.0 - 2.0 * alpha:.3g} level for the reported {level:.3g} "
            f"(tails ÷ {WIDEN:g}: the {method} interval of this statistic under-covers "
            "its upper end at small n; conservative)"
        )

    def percentile(note: str | None = None) -> Interval:
        note = "; ".join(x for x in (widened, note) if x) or None
        lo, hi = _quantiles(v, alpha, 1.0 - alpha)
        groups = {
            name: _quantiles(gv[:, i], alpha, 1.0 - alpha) for i, name in enumerate(rv.compared)
        }
        held = _holding(
            Interval(lo, hi, level, "percentile", n_b, reps.seed, valid, groups=groups, note=note),
            point,
        )
        return _floored(spec, stats.select(keep), held, band)

    if method == "percentile":
        return percentile()
    if len(rv.compared) > 2:
        return percentile(
            f"BCa not available: the value has {len(rv.compared)} groups, and BCa is offered "
            "only on at most two: over more groups most values are a maximum or minimum over "
            "them, which is not the smooth statistic BCa's bias correction and acceleration "
            "assume; percentile interval reported"
        )
    jack = jackknife(spec, stats, keep, params, rv.compared, reps.seed)
    if isinstance(jack, str):
        return percentile(f"BCa not available ({jack}); percentile interval reported")
    signed = _signed_gap(point, points, v, gv, jack)
    if signed is not None:
        v_used, point_used, jack_values = signed
    else:
        v_used, point_used, jack_values = v, point, None
    a = acceleration(jack, jack_values)
    levels = bca_levels(v_used, point_used, a, 1.0 - 2.0 * alpha)
    if isinstance(levels, str):
        return percentile(f"BCa not available ({levels}); percentile interval reported")
    lo, hi = _quantiles(v_used, levels[0], levels[1])
    if signed is not None:
        lo, hi = _fold(lo, hi)
    groups: dict[str, tuple[float, float]] = {}
    for i, name in enumerate(rv.compared):
        lv = bca_levels(
            gv[:, i], float(points[i]), acceleration(jack, jack.groups[:, i]), 1.0 - 2.0 * alpha
        )
        groups[name] = (
            _quantiles(gv[:, i], alpha, 1.0 - alpha)
            if isinstance(lv, str)
            else _quantiles(gv[:, i], lv[0], lv[1])
        )
    notes = [widened] if widened else []
    if signed is not None:
        notes.append(
            f"BCa of the signed difference {rv.compared[0]} − {rv.compared[1]} (sign fixed by "
            "the data), folded through |·|"
        )
    if jack.grouped:
        notes.append(
            "BCa acceleration from a grouped jackknife (random blocks of rows; more than "
            f"{jk.JACKKNIFE_MAX} cells)"
        )
    note = "; ".join(notes) or None
    return _floored(
        spec,
        stats.select(keep),
        _holding(
            Interval(
                lo,
                hi,
                level,
                "bca",
                n_b,
                reps.seed,
                valid,
                groups=groups,
                note=note,
                z0=levels[2],
                acceleration=a,
            ),
            point,
        ),
        band,
    )


#: the smallest group (rows) on which a percentile or BCa interval is given: below it their
#: tails do not hold their level even widened (``theil_index`` at 2 × 10 rows: 12 % wrong
#: PASS, at 2 × 30: 3.0–5.0 %; docs/statistics.md), so there is no interval, with the reason
MIN_ROWS = 40

#: between-group entropy indices: 0 exactly when every group has the same mean benefit
_BETWEEN = ("between_group_generalized_entropy_index", "between_group_theil_index")


def _too_small(kept: GroupStats, method: str) -> str | None:
    """Why a percentile/BCa interval is not given on ``kept`` (None: it is)."""
    rows = np.asarray(kept.rows_n)
    if not len(rows) or int(rows.min()) >= MIN_ROWS:
        return None
    small = [g for g, r in zip(kept.groups, rows.tolist(), strict=True) if r < MIN_ROWS]
    shown = ", ".join(f"'{g}'" for g in small[:5]) + (" …" if len(small) > 5 else "")
    return (
        f"no {method} interval under {MIN_ROWS} rows per group ({shown} has fewer): the "
        "bootstrap's tails of this statistic do not hold their level there (docs/statistics.md, "
        "'Issue 28, second part')"
    )


def _floored(spec: Statistic, kept: GroupStats, iv: Interval, band: bool) -> Interval:
    """A between-group entropy index's interval with its low end at 0 when the groups'
    mean benefits are not shown to differ: Šidák-adjusted normal intervals of each group's
    mean benefit (b = ŷ − y + 1 ∈ {0, 1, 2}) share a point. The index is 0 exactly when
    the means are equal; then, with probability ≥ the level, every interval holds the
    common mean and the low end is 0 — so the truth 0 is covered at least as often as
    the level, which the bootstrap's percentiles of this statistic (biased upward, 0 a
    boundary) are not (coverage 0.13–0.35 at parity)."""
    if not band or spec.key not in _BETWEEN or iv.low is None or iv.low <= 0.0:
        return iv
    if kept.num_classes != 2 or kept.positive is None:
        return iv
    pos = kept.positive
    c = np.asarray(kept.counts, dtype=np.float64)
    neg = 1 - pos
    # benefit 0: false negative, 2: false positive, 1: correct
    fn, fp = c[:, pos, neg], c[:, neg, pos]
    tot = c.sum(axis=(1, 2))
    if (tot <= 0).any():
        return iv
    mean = (tot - fn + fp) / tot  # (0·fn + 1·correct + 2·fp) / n
    second = (tot - fn - fp + 4 * fp) / tot
    var = np.maximum(second - mean * mean, 0.0)
    rows = np.maximum(np.asarray(kept.rows_n, dtype=np.float64), 1.0)
    z = _NORMAL.inv_cdf(0.5 + iv.level ** (1.0 / len(tot)) / 2.0)
    half = z * np.sqrt(var / rows)
    if float((mean - half).max()) > float((mean + half).min()):
        return iv  # the groups' mean benefits are shown to differ
    why = (
        "low end at 0: the groups' mean benefits are not shown to differ (Šidák-adjusted "
        f"normal intervals of the {len(tot)} means share a point), and the index is 0 when "
        "they are equal"
    )
    return dataclasses.replace(iv, low=0.0, note=f"{iv.note}; {why}" if iv.note else why)


def _holding(iv: Interval, point: float) -> Interval:
    """``iv`` widened to contain the point estimate, with a note when it had to be.

    A percentile or BCa interval of a skewed or non-smooth statistic can lie entirely
    beside the point (its replicates sit on one side of it); a decision on such an
    interval would contradict the value it reports. Widening only makes it more
    conservative."""
    if iv.low is None or iv.high is None or iv.low <= point <= iv.high:
        return iv
    lo, hi = min(iv.low, point), max(iv.high, point)
    why = (
        f"the {iv.method} interval [{iv.low:.6g}, {iv.high:.6g}] lay beside the point "
        f"estimate {point:.6g} and was widened to it"
    )
    return dataclasses.replace(iv, low=lo, high=hi, note=f"{iv.note}; {why}" if iv.note else why)


def _band(
    spec: Statistic,
    rv: ReplicateValues,
    ok: NDArray[np.bool_],
    point: float,
    level: float,
    method: str,
    reps: Replicates,
    valid: int,
    kept: GroupStats,
    exact_box: bool = False,
) -> Interval | None:
    """The simultaneous-band interval when the value is a max − min / min ÷ max / min / max
    form of per-group values on the data and on every defined replicate; None otherwise.
    A form of binary rates gets the score interval of :mod:`fairpolicy.stats.rate_forms`
    (``method`` "score") instead of the band."""
    for form, coords in rv.forms.items():
        c = bands.usable(form, coords[ok])
        if c is None:
            continue
        layout = bands.layout_of(form, rv.base)
        scored = rate_forms.score_interval(
            form, rv.base, kept, layout, level, bands.shown_part(form, rv.base)
        )
        if scored is not None:
            s_lo, s_hi, s_groups, s_note = scored
            asked = " (BCa was asked)" if method == "bca" else ""
            box = _exact_box(form, rv.base, kept, layout, level) if exact_box else None
            return Interval(
                min(s_lo, point),
                max(s_hi, point),
                level,
                "score",
                reps.resamples,
                reps.seed,
                valid,
                groups=s_groups,
                note=s_note + asked,
                box=box,
                box_kind="hoeffding" if box is not None and kept.survey is not None else None,
            )
        parts = bands.parts_of(rv.base, form) or []
        pts = np.array([parts[i][g] for i, lay in enumerate(layout) for g in lay], np.float64)
        n = bands.rows_behind(form, rv.base, layout)
        unit = bool(
            spec.value_range[0] >= 0.0
            and spec.value_range[1] <= (len(form.parts) if form.combine == "sum" else 1.0)
            and not np.any((c < 0.0) | (c > 1.0))  # NaN: a value lost in a replicate
            and np.all((pts >= 0.0) & (pts <= 1.0))
        )
        if unit:
            rng, floor = (0.0, 1.0), 1.0 / n
        elif form.reduce == "ratio":
            rng, floor = (0.0, math.inf), np.zeros(len(n))
        else:
            rng, floor = (-math.inf, math.inf), np.zeros(len(n))
        bd = bands.sup_t(c, pts, level, floor, rng)
        if unit and form.cellwise and rv.base.cell_rows is not None:
            # a multi-class rate: at least its score (exact at 0 or m) interval of its own
            # denominator at the band's critical value
            lo_j, hi_j = rate_forms.hull_rates(
                bd.low.tolist(), bd.high.tolist(), pts.tolist(), n.tolist(), bd.critical
            )
            bd = bands.Band(np.array(lo_j), np.array(hi_j), bd.critical, bd.se)
        lo, hi = bands.project(form, bd, [len(lay) for lay in layout], layout)
        if form.pairwise:  # the box ignores Σ_p R[t, p] = 1: keep to the metric's range
            lo = max(lo, spec.value_range[0])
            hi = min(hi, spec.value_range[1])
        lo, hi = min(lo, point), max(hi, point)
        if form.pairwise:  # each group's own value (its worst pair) over the box
            names, low, high = bands.pairwise_box(bd, layout)
            groups = bands.pairwise_bounds(form, names, low, high)[1]
        else:
            shown = bands.shown_part(form, rv.base)
            start = sum(len(lay) for lay in layout[:shown])
            groups = {
                g: (float(bd.low[start + i]), float(bd.high[start + i]))
                for i, g in enumerate(layout[shown])
            }
        asked = " (BCa was asked)" if method == "bca" else ""
        note = (
            f"simultaneous {level_percent(level)}% sup-t band of the {len(pts)} per-group values "
            f"(critical value {bd.critical:.3g} standard errors), projected onto "
            f"{form.describe()}: percentile and BCa intervals are not valid for this "
            f"non-smooth statistic{asked}; conservative"
        )
        return Interval(
            lo, hi, level, "band", reps.resamples, reps.seed, valid, groups=groups, note=note
        )
    return None


def _exact_box(
    form: bands.Form,
    mv: MetricValue,
    kept: GroupStats,
    layout: Sequence[Sequence[str]],
    level: float,
) -> tuple[float, float] | None:
    """The exact Clopper–Pearson box of a score interval's rates at ``level``
    (:func:`fairpolicy.stats.sequential.exact_box`); under survey weights (Kish's effective
    counts are not binomial) the Hoeffding box
    (:func:`fairpolicy.stats.sequential.hoeffding_box`); None when the counts are
    otherwise not whole."""
    from fairpolicy.stats.sequential import exact_box, hoeffding_box

    props = rate_forms.proportions_of(form, mv, kept, layout)
    if props is None:
        return None
    if kept.survey is not None:
        return hoeffding_box(form.reduce, props, level, form.combine)
    if any(q.x != round(q.x) or q.m != round(q.m) for part in props for q in part):
        return None
    return exact_box(form.reduce, props, level, form.combine)


def _exact_class(
    iv: Interval, key: str, rv: ReplicateValues, kept: GroupStats, level: float, exact_box: bool
) -> Interval:
    """``iv`` carrying the exact Clopper–Pearson box of a multi-class gap over classes
    (:func:`fairpolicy.stats.sequential.exact_class_box`; Hoeffding's under survey weights)
    as its :attr:`Interval.box`, when asked (``exact_box``) and the value is such a form of
    binomial rates; else ``iv``."""
    if not exact_box or iv.box is not None:
        return iv
    from fairpolicy.stats.sequential import exact_class_box

    for form in bands.candidates(rv.base):
        got = exact_class_box(form, rv.base, kept, level, key)
        if got is not None:
            kind = "hoeffding" if kept.survey is not None else None
            return dataclasses.replace(iv, box=got, box_kind=kind)
    return iv


def _class_box(
    rv: ReplicateValues,
    point: float,
    level: float,
    method: str,
    reps: Replicates,
    valid: int,
    kept: GroupStats,
) -> Interval | None:
    """The Šidák score box of a multi-class gap over classes
    (:func:`fairpolicy.stats.rate_forms.class_box`), for when the band cannot be built (a
    (group, class) cell lost in more than 5 % of the replicates); None when the value is
    not such a form on the data."""
    for form in bands.candidates(rv.base):
        got = rate_forms.class_box(form, rv.base, kept, level)
        if got is None:
            continue
        lo, hi, groups, note = got
        asked = " (BCa was asked)" if method == "bca" else ""
        return Interval(
            lo,
            hi,
            level,
            "score",
            reps.resamples,
            reps.seed,
            valid,
            groups=groups,
            note=note + "; a (group, class) cell rests on too few rows for the band" + asked,
        )
    return None


def _signed_gap(
    point: float, points: Sequence[float | None], v: FloatArray, gv: FloatArray, jack: Jackknife
) -> tuple[FloatArray, float, FloatArray] | None:
    """(replicates, point, jackknife values) of the signed difference s·(θ_a − θ_b) when the
    metric is the gap |θ_a − θ_b| of two groups on the data, on every replicate and on every
    leave-one-out value; None otherwise.

    |θ_a − θ_b| is not smooth where the two values cross, which is where BCa fails (its z0
    turns negative as the replicates fold above the point; ``benchmarks/ci_coverage.py``
    measured 0.85–0.90 coverage at 1.4–2.4 standard errors). The signed difference with the
    sign s of the data's difference is smooth; BCa is computed on it and the interval [L, U]
    folded through |·| (:func:`_fold`), which contains |θ_a − θ_b| whenever [L, U] contains
    s·(θ_a − θ_b).
    """
    if len(points) != 2 or gv.shape[1] != 2 or jack.groups.shape[1] != 2:
        return None
    a, b = float(points[0] or 0.0), float(points[1] or 0.0)
    tol = 1e-9 * max(1.0, abs(a), abs(b))
    if abs(point - abs(a - b)) > tol:
        return None
    diff = gv[:, 0] - gv[:, 1]
    jdiff = jack.groups[:, 0] - jack.groups[:, 1]
    if not (
        np.allclose(v, np.abs(diff), rtol=0.0, atol=tol)
        and np.allclose(jack.values, np.abs(jdiff), rtol=0.0, atol=tol)
    ):
        return None
    sign = 1.0 if a >= b else -1.0
    return sign * diff, point, sign * jdiff


def _fold(lo: float, hi: float) -> tuple[float, float]:
    """The image of [lo, hi] under |·|."""
    if lo >= 0.0:
        return lo, hi
    if hi <= 0.0:
        return -hi, -lo
    return 0.0, max(-lo, hi)
