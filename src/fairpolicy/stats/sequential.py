"""The ``sequential`` window gate (issue 30 item 2): alpha spending over windows.

A monitor evaluates a control in window t = 1, 2, … (weeks, days). The ``sequential``
gate raises an alarm at the first window whose interval lies wholly on the violating
side of the threshold, where window t's interval is computed at the level
1 − α_t, with

    α_t = α · H / ((t + H − 1)(t + H)),   H = :data:`HORIZON` (52 by default),

so that the first T windows spend Σ_{s ≤ T} α_s = α · T / (T + H) (a telescoping sum:
H/((s+H−1)(s+H)) = H·(1/(s+H−1) − 1/(s+H))), which is below α for every T and tends to
α as T → ∞. Half of α is spent by window H, and window 1 gets α/(H + 1).

Why the horizon false-alarm probability is ≤ α however many windows are looked at
(the proof sketch; docs/statistics.md, "The sequential window gate", has it in full):
a false alarm is an alarm at a window t whose *own* true value θ_t satisfies the
control. The interval wholly violates the threshold and θ_t satisfies it, so the
interval misses θ_t — an event of probability ≤ α_t (the interval's coverage at level
1 − α_t, conditional on the earlier windows when window t's rows are drawn afresh).
By the union bound, P(some false alarm among windows 1..T) ≤ Σ α_t < α, for every T
and for T = ∞, whatever the θ_t are and however they drift (each window's interval
covers its own θ_t; no independence between windows is needed, and the monitor may
stop at any data-dependent time). Confidence sequences (Howard et al. 2021) were not
used: they cover one constant (or the running mean of the θ_t), not each window's own
value, so under drift they answer another question.

Which level. :func:`window_level` is the *two-sided* level 1 − α_t: the argument above
needs only the interval's coverage, not how its misses split between the sides, so it
holds for every interval method and every end. The alarm reads one end only, and a
gap's lower end is already built at 1 − (1 − L)/2 (:mod:`fairpolicy.stats.rate_forms`),
so the one-sided level :func:`fold_end_level` (1 − 2α_t) would do *if* the score family
held its coverage at such levels; exact enumeration shows Koopman's ratio interval does
not at a boundary rate, so the gate does not use it (docs/statistics.md measures it).

Score alarms are confirmed. At the extreme levels the gate uses (z ≈ 3.3–4.5), a score
interval's tails are asymptotic and measurably wrong at small counts and at rates near 0
or 1 (up to 255 α_t for one Wilson rate; exact enumeration, docs/statistics.md), so a
window of a score-interval control alarms only when the exact box of Clopper–Pearson
intervals (:func:`exact_box`, valid at every n) lies on the violating side too
(:func:`needs_box`, :func:`confirmed`): the gate's error bound then holds at every sample
size, not only asymptotically.

Numbering. t is the window's place from the monitor's first window (not "the k-th window
shown"), and a window's interval is computed once its window is closed: recomputing it from
the same rows is not a new look (the interval is deterministic; bootstrap draws are
seeded), but recomputing it after late rows arrive is, and the spending does not pay for
it.

Resolution. The level must be one the window's interval can actually resolve: a score
interval (``method`` "score") is computed in closed form at any level, but a bootstrap
interval is read from B replicates, and a tail finer than about 1/B is just the
replicates' range. :func:`resolution` says whether a method with B replicates resolves a
level; a window that does not cannot alarm (INCONCLUSIVE, naming the resamples needed):
pass it to :func:`sequential_alarm` as ``(None, None)``.

Every control can alarm (docs/statistics.md, "Every control can alarm"). A multi-class
gap over classes reads :func:`exact_class_box` (Clopper–Pearson per (group, class) cell,
Bonferroni, projected); under survey weights the boxes are Hoeffding's on Kish's
effective rows (:func:`hoeffding_box`), valid at every level conditionally on the weights.

This module imports only :mod:`fairpolicy.exact` at import time (and, when called, the
constant :data:`fairpolicy.stats.tails.WIDEN`, :mod:`fairpolicy.stats.proportions`,
:mod:`fairpolicy.stats.bands` and numpy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Protocol, cast

from fairpolicy.exact import Bound, Op, compare, decimal_fraction, float_bound

if TYPE_CHECKING:
    from fairpolicy.stats.bands import Form
    from fairpolicy.stats.groups import GroupStats
    from fairpolicy.stats.proportions import Proportion
    from fairpolicy.stats.values import MetricValue

#: H of the spending function: the window by which half of α is spent (52 weekly
#: windows: one year). Σ_{s ≤ T} α_s = α·T/(T + H).
HORIZON = 52

#: a bootstrap quantile at tail q from B replicates (numpy's type 7) has an expected tail
#: mass q + (1 − 2q)/(B + 1): its Monte Carlo excess is at most 1/(q·(B + 1)) of q. A level
#: resolves when at least this many replicates lie beyond the tail (excess ≤ 10 %).
MIN_TAIL_REPLICATES = 10

#: the finest tail a level carries: 1 − level is a difference of doubles near 1, exact to
#: about 1e-16; below 1e-12 the level would not say α_t to four digits
FINEST_TAIL = 1e-12

#: the interval methods (``ConfidenceInterval.method``) and whether they resample
SCORE_METHODS = frozenset({"score"})
BOOTSTRAP_METHODS = frozenset({"percentile", "bca", "band"})

_OPS = frozenset({"<", "<=", ">", ">=", "==", "!=", "between"})


class HasBounds(Protocol):
    """A policy threshold (:class:`fairpolicy.policy.schema.Threshold`): its exact bounds."""

    def bounds(self) -> tuple[Bound, Bound]: ...


ThresholdLike = Bound | int | tuple[Bound, Bound] | HasBounds


# ---------------------------------------------------------------- the spending


def _window(t: int) -> int:
    if isinstance(t, bool) or not isinstance(t, int) or t < 1:
        raise ValueError(f"the window number must be an integer ≥ 1 (1 is the first), got {t!r}")
    return t


def _horizon(horizon: int) -> int:
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise ValueError(f"the spending horizon H must be an integer ≥ 1, got {horizon!r}")
    return horizon


def _alpha(alpha: float | Fraction) -> Fraction:
    """α as an exact rational: a Fraction itself, a float its shortest decimal (0.05 is
    1/20); it must lie strictly between 0 and 1."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, Fraction)):
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    if isinstance(alpha, float) and not math.isfinite(alpha):
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    a = alpha if isinstance(alpha, Fraction) else decimal_fraction(float(alpha))
    if not 0 < a < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return a


def spending(t: int, alpha: float | Fraction, horizon: int = HORIZON) -> Fraction:
    """α_t = α·H/((t + H − 1)(t + H)), exactly: the share of α window t spends."""
    t, h, a = _window(t), _horizon(horizon), _alpha(alpha)
    return a * h / ((t + h - 1) * (t + h))


def spent_exact(t: int, alpha: float | Fraction, horizon: int = HORIZON) -> Fraction:
    """Σ_{s=1..t} α_s = α·t/(t + H), exactly (t = 0: nothing spent yet)."""
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        raise ValueError(f"the number of windows must be an integer ≥ 0, got {t!r}")
    h, a = _horizon(horizon), _alpha(alpha)
    return a * t / (t + h)


def spent(t: int, alpha: float | Fraction, horizon: int = HORIZON) -> float:
    """α spent over windows 1..t: α·t/(t + H) (< α for every t)."""
    return float(spent_exact(t, alpha, horizon))


def _down(x: Fraction) -> float:
    """The largest double ≤ x (x ≥ 0)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _up(x: Fraction) -> float:
    """The smallest double ≥ x (x ≤ 1)."""
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


def window_alpha(t: int, alpha: float | Fraction, horizon: int = HORIZON) -> float:
    """α_t as a double, rounded down (a smaller tail: never more than α_t spent)."""
    return _down(spending(t, alpha, horizon))


def window_level(t: int, alpha: float | Fraction, horizon: int = HORIZON) -> float:
    """The two-sided level 1 − α_t of window t's interval, rounded up (never below
    1 − α_t). Valid for every interval method and either end; 1.0 once α_t is below
    double precision (about t > 10⁸ at α = 0.05): :func:`resolution` then refuses it."""
    return _up(1 - spending(t, alpha, horizon))


def fold_end_level(t: int, alpha: float | Fraction, horizon: int = HORIZON) -> float:
    """1 − 2α_t, rounded up: measured, **not used** by the gate. A score interval's end at
    the fold (a gap's lower end, a ratio's upper end) is built by
    :func:`fairpolicy.stats.rate_forms.bounds` from the family at 1 − (1 − L)/2, so at
    L = 1 − 2α_t it would miss its side with probability ≤ α_t *if* the family's coverage
    held at that level. It does not hold at extreme levels (:func:`needs_box`; Koopman's
    ratio at a boundary rate: 1.3 α_t at 80 rows per group, window 1), and the exact box
    confirming an alarm is two-sided, so the gate keeps the two-sided :func:`window_level`."""
    return _up(1 - 2 * spending(t, alpha, horizon))


# ---------------------------------------------------------------- resolution


@dataclass(frozen=True)
class Resolution:
    """Whether a window's interval can resolve the level asked, and if not why."""

    ok: bool
    #: None when ``ok``; else one sentence for the INCONCLUSIVE window
    reason: str | None = None
    #: the replicates a bootstrap method would need (None: resampling is not the issue)
    resamples_needed: int | None = None


def tail_read(method: str, level: float) -> float:
    """The finest tail a ``method`` interval at ``level`` reads from its replicates:

    - ``band``: the level quantile of the sup-t statistic, tail 1 − level;
    - ``percentile`` and ``bca``: the (1 − level)/2 quantiles, divided by
      :data:`fairpolicy.stats.tails.WIDEN` (the runner reads a percentile/BCa
      interval of a non-band statistic at tails ÷ WIDEN). BCa moves its tails by z0 and
      the acceleration; the nominal tail is what is checked;
    - ``score``: 1 − level (computed in closed form; no replicates).
    """
    one = 1.0 - level
    if method in ("percentile", "bca"):
        from fairpolicy.stats.tails import WIDEN

        return one / 2.0 / WIDEN
    if method in ("band", "score"):
        return one
    raise ValueError(
        f"unknown interval method {method!r}: one of {sorted(SCORE_METHODS | BOOTSTRAP_METHODS)}"
    )


def resamples_for(method: str, level: float) -> int:
    """The bootstrap replicates at which ``method`` resolves ``level``: at least
    :data:`MIN_TAIL_REPLICATES` beyond its finest tail."""
    return math.ceil(MIN_TAIL_REPLICATES / tail_read(method, level))


def resolution(method: str, level: float, resamples: int | None = None) -> Resolution:
    """Whether an interval of ``method`` with ``resamples`` bootstrap replicates resolves
    ``level``. A score interval does at any level (up to :data:`FINEST_TAIL`); a
    bootstrap interval needs B·tail ≥ :data:`MIN_TAIL_REPLICATES` for its finest tail
    (:func:`tail_read`): at week 52 of a 5 % gate (α_t ≈ 2.4e-4) a band needs about
    41,000 replicates and a percentile interval about 410,000."""
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level <= 1:
        raise ValueError(f"level must lie in (0, 1], got {level!r}")
    tail = tail_read(method, float(level))
    if 1.0 - level < FINEST_TAIL:
        return Resolution(
            False,
            f"the window's level {level!r} leaves a tail below {FINEST_TAIL:g}, finer than a "
            "double-precision level carries: the window cannot alarm",
        )
    if method in SCORE_METHODS:
        return Resolution(True)
    need = resamples_for(method, level)
    have = 0 if resamples is None else resamples
    if have >= need:
        return Resolution(True)
    got = (
        "no bootstrap replicates"
        if have <= 0
        else f"{have} bootstrap replicates put {have * tail:.3g} beyond it"
    )
    return Resolution(
        False,
        f"the {method} interval at the window's level {level:.6g} reads a tail of {tail:.3g}; "
        f"{got}, and resolving it takes at least {MIN_TAIL_REPLICATES}: the window cannot "
        f"alarm (it needs at least {need:,} resamples)",
        need,
    )


# ---------------------------------------------------------------- the exact box


def exact_box(
    reduce: str, parts: Sequence[Sequence[Proportion]], level: float, combine: str = "one"
) -> tuple[float, float]:
    """[low, high] of ``combine`` over the parts of ``reduce`` ("gap": max − min, "ratio":
    min ÷ max, "min", "max") of the true rates, from a box of exact Clopper–Pearson
    intervals of every (part, group) rate, each at the Šidák level ``level ** (1 / k)``
    (k rates).

    Valid at every sample size and level, not asymptotically: a Clopper–Pearson interval
    of x ~ Binomial(m, p) covers p with probability ≥ its level for every p and m
    (Clopper & Pearson 1934), the rates of different groups (and the TPR and FPR parts)
    rest on disjoint rows, so the box covers every rate at once with probability
    ≥ Π level^(1/k) = ``level``, and then the true value lies in the projection. With
    whole counts only (under survey weights the effective counts are not binomial).
    Wider than the score interval: :func:`confirmed` uses it to confirm a score alarm,
    whose extreme tails are not trusted (:func:`needs_box`)."""
    from fairpolicy.stats import proportions as pr

    if reduce not in ("gap", "ratio", "min", "max"):
        raise ValueError(f"reduce must be gap, ratio, min or max, got {reduce!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    k = sum(len(p) for p in parts)
    if k == 0 or any(len(p) < (1 if reduce in ("min", "max") else 2) for p in parts):
        raise ValueError(
            f"{reduce} needs {'one group' if reduce in ('min', 'max') else 'two groups'} per part"
        )
    alpha_each = 1.0 - pr.sidak(level, k)
    return project_box(
        reduce,
        [
            [(0.0, 1.0) if q.m <= 0 else pr.clopper_pearson(q.x, q.m, alpha_each) for q in part]
            for part in parts
        ],
        combine,
    )


def hoeffding_box(
    reduce: str, parts: Sequence[Sequence[Proportion]], level: float, combine: str = "one"
) -> tuple[float, float]:
    """:func:`exact_box` under survey weights: each (part, group) weighted rate p̂ (x/m of
    :func:`fairpolicy.stats.proportions.rate_counts`: m is Kish's effective rows
    (Σw)²/Σw²) gets Hoeffding's interval p̂ ± √(log(2k/(1 − level)) / (2m)), k rates
    (Bonferroni), projected like :func:`exact_box`.

    Valid at every sample size and level, conditionally on the rows' weights: with the
    outcomes y_i independent given the weights w_i, Σ w_i(y_i − θ_i) is a sum of
    independent terms each in a range of length w_i, so Hoeffding's inequality (Hoeffding
    1963, Theorem 2) gives P(|p̂ − θ̄| ≥ h) ≤ 2·exp(−2h²(Σw)²/Σw²) = 2·exp(−2h²m), where
    θ̄ = Σ w_i θ_i / Σ w_i is the weighted rate of the window's rows' outcome
    probabilities — the quantity the Kish score interval estimates under the same model.
    No bound on the weights is needed for it; a population rate with random unbounded
    weights has no finite-sample interval at all (Bahadur & Savage 1956)."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    k = sum(len(p) for p in parts)
    if k == 0:
        raise ValueError(f"{reduce} needs at least one rate")
    log_term = math.log(2.0 * k / (1.0 - level))
    ivs = []
    for part in parts:
        row = []
        for q in part:
            if q.m <= 0:
                row.append((0.0, 1.0))
                continue
            p, h = q.x / q.m, math.sqrt(log_term / (2.0 * q.m))
            row.append((max(0.0, p - h), min(1.0, p + h)))
        ivs.append(row)
    return project_box(reduce, ivs, combine)


def project_box(
    reduce: str, parts: Sequence[Sequence[tuple[float, float]]], combine: str = "one"
) -> tuple[float, float]:
    """[low, high] of ``combine`` over the parts of ``reduce`` (gap, ratio, min, max) of
    rates each known to lie in its interval ``parts[j][g]``: the range of the metric over
    the box."""
    from fairpolicy.stats.bands import Combine
    from fairpolicy.stats.bands import combine as combine_values

    if reduce not in ("gap", "ratio", "min", "max"):
        raise ValueError(f"reduce must be gap, ratio, min or max, got {reduce!r}")
    lows, highs = [], []
    for ivs in parts:
        lo = [a for a, _ in ivs]
        hi = [b for _, b in ivs]
        others = [(i, j) for i in range(len(ivs)) for j in range(len(ivs)) if i != j]
        # the extremes need two different groups; equal rates need a common point
        if reduce == "gap":
            lows.append(max(0.0, max(lo) - min(hi)))
            highs.append(max(hi[i] - lo[j] for i, j in others))
        elif reduce == "ratio":
            lows.append(min(lo[i] / hi[j] if hi[j] > 0 else 1.0 for i, j in others))
            highs.append(1.0 if max(lo) <= min(hi) else min(hi) / max(lo))
        elif reduce == "min":
            lows.append(min(lo))
            highs.append(min(hi))
        else:
            lows.append(max(lo))
            highs.append(max(hi))
    how = cast("Combine", combine)
    return combine_values(lows, how), combine_values(highs, how)


#: the multi-class metrics whose per-(group, class) values are binomial proportions x/m of
#: their cell's rows (``MetricValue.cell_rows``): prediction rates (of the group's rows),
#: recalls (of the class's true rows) and precisions (of the class's predicted rows: given
#: which rows are predicted c, each one's true class is an independent draw). Not F1
#: (2TP/(2TP + FP + FN) is no binomial proportion) nor the pairwise distances.
#: Each key's per-class denominator: the group's rows, the class's true rows (recall)
#: or its predicted rows (precision).
BINOMIAL_CLASS_RATES: dict[str, str] = {
    "multiclass_demographic_parity": "group",
    "weighted_demographic_parity_multiclass": "group",
    "multiclass_equal_opportunity": "true",
    "macro_equal_opportunity_multiclass": "true",
    "predictive_parity_multiclass": "predicted",
}


def exact_class_box(
    form: Form, mv: MetricValue, stats: GroupStats, level: float, key: str
) -> tuple[float, float] | None:
    """[low, high] of a multi-class gap over classes (the max or mean over classes of each
    class's max − min over groups: the forms of
    :func:`fairpolicy.stats.rate_forms.class_box`) from a box of exact Clopper–Pearson
    intervals of every laid-out (group, class) rate x/m of its own denominator, each at
    the Bonferroni level 1 − (1 − ``level``)/k (k cells), projected onto the metric
    (:func:`fairpolicy.stats.bands.project`); None when ``form`` is not such a form of
    binomial rates of the count table: metric ``key`` not in
    :data:`BINOMIAL_CLASS_RATES`, an aggregation over classes other than the form's
    (``weighted``), no per-cell denominator. Under survey weights the cells get Hoeffding
    intervals on Kish's effective rows instead (:func:`hoeffding_box`'s argument), so the
    box is valid conditionally on the weights.

    Valid at every sample size and level: each cell's x given its m is Binomial(m, p)
    (rows drawn independently), so its Clopper–Pearson interval misses p with probability
    ≤ (1 − level)/k whatever m is, and by the union bound the box misses some rate with
    probability ≤ 1 − level — no independence between cells is needed (a group's classes
    share its rows: multinomial, where Šidák's product is not proven). When every rate
    lies in the box, the true value lies in its projection. The alarm of a multi-class
    window reads it (:func:`fairpolicy.decide.alarm_interval`)."""
    from fairpolicy.stats import bands

    if not form.per_class or form.reduce != "gap" or form.combine not in ("max", "mean"):
        return None
    if key not in BINOMIAL_CLASS_RATES or mv.details.get("aggregation") != form.combine:
        return None  # not binomial rates, or the value is not this form by definition
    if not 0 < level < 1:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    layout = bands.layout_of(form, mv)
    parts = bands.parts_of(mv, form)
    if parts is None or not any(len(names) >= 2 for names in layout):
        return None
    pts = [float(parts[j][g] or 0.0) for j, names in enumerate(layout) for g in names]
    if stats.survey is not None:
        return _survey_class_box(form, mv, stats, layout, pts, level, BINOMIAL_CLASS_RATES[key])
    if mv.cell_rows is None:
        return None
    rows = bands.rows_behind(form, mv, layout).tolist()
    xs = [p * m for p, m in zip(pts, rows, strict=True)]
    if any(not 0.0 <= p <= 1.0 or abs(x - round(x)) > 1e-6 for p, x in zip(pts, xs, strict=True)):
        return None  # not a proportion of whole rows
    return class_projection(
        form, [round(x) for x in xs], [round(m) for m in rows], [len(n) for n in layout], level
    )


def _survey_class_box(
    form: Form,
    mv: MetricValue,
    stats: GroupStats,
    layout: Sequence[Sequence[str]],
    pts: Sequence[float],
    level: float,
    denominator: str,
) -> tuple[float, float] | None:
    """:func:`exact_class_box` under survey weights: each (group, class) weighted rate gets
    Hoeffding's interval on the Kish effective rows of its denominator (the weights of the
    group's rows, of its rows of true class c, or of its rows predicted c), Bonferroni
    over the cells, projected onto ``form`` (the argument of :func:`hoeffding_box`)."""
    import numpy as np

    from fairpolicy.stats import bands

    assert stats.survey is not None
    classes = mv.details.get("classes")
    if not isinstance(classes, list) or [str(c) for c in classes] != list(stats.classes):
        return None
    k_cls = len(stats.classes)
    index = {g: i for i, g in enumerate(stats.groups)}
    ivs: list[tuple[float, float]] = []
    log_term = math.log(2.0 * len(pts) / (1.0 - level))
    at = 0
    for j, names in enumerate(layout):
        for g in names:
            if g not in index:
                return None
            cell, weight, rows = stats.survey.units[index[g]]
            c = np.asarray(cell, dtype=np.int64)
            inside = (
                np.ones(len(c), dtype=bool)
                if denominator == "group"
                else c // k_cls == j
                if denominator == "true"
                else c % k_cls == j
            )
            w = np.asarray(weight, np.float64)[inside]
            r = np.asarray(rows, np.float64)[inside]
            s1, s2 = float((w * r).sum()), float((w * w * r).sum())
            p = pts[at]
            at += 1
            if s2 <= 0 or not 0.0 <= p <= 1.0:
                return None
            h = math.sqrt(log_term / (2.0 * s1 * s1 / s2))
            ivs.append((max(0.0, p - h), min(1.0, p + h)))
    box = bands.Band(
        np.array([a for a, _ in ivs], dtype=np.float64),
        np.array([b for _, b in ivs], dtype=np.float64),
        math.nan,
        np.zeros(len(ivs)),
    )
    return bands.project(form, box, [len(names) for names in layout])


def class_projection(
    form: Form, x: Sequence[int], m: Sequence[int], sizes: Sequence[int], level: float
) -> tuple[float, float]:
    """The core of :func:`exact_class_box`: the (group, class) rates x/m laid out class by
    class (``sizes``: the groups of each class), each with its Clopper–Pearson interval at
    1 − (1 − ``level``)/k, projected onto ``form``."""
    import numpy as np

    from fairpolicy.stats import bands
    from fairpolicy.stats import proportions as pr

    alpha_each = (1.0 - level) / len(x)
    ivs = [
        (0.0, 1.0) if mi <= 0 else pr.clopper_pearson(float(xi), float(mi), alpha_each)
        for xi, mi in zip(x, m, strict=True)
    ]
    box = bands.Band(
        np.array([a for a, _ in ivs], dtype=np.float64),
        np.array([b for _, b in ivs], dtype=np.float64),
        math.nan,
        np.zeros(len(ivs)),
    )
    return bands.project(form, box, sizes)


def needs_box(method: str) -> bool:
    """Whether a window's alarm must be confirmed by :func:`exact_box`: for every score
    interval. At the extreme levels the gate uses (z ≈ 3.3–4.5) the score intervals' tails
    are not what the level says where counts are small or rates near 0 or 1 — exact
    enumeration (docs/statistics.md): Koopman's ratio with one true rate 1 alarms up to
    5.2 α_t per window (30 vs 60 rows), a horizon of 0.065 > α over 1000 windows;
    Newcombe's gap at rates 0.05 vs 0 with 50 vs 400 rows 3.1 α_t at week 52; a single
    Wilson rate at p = 0.02, 20 rows, 255 α_t. Confirmed by the exact box none exceeds
    α_t. Bootstrap intervals cannot be confirmed this way (their statistics are not
    binomial rates); their validity stays asymptotic (and :func:`resolution` applies)."""
    return method in SCORE_METHODS


def confirmed(
    score: tuple[float | None, float | None],
    box: tuple[float | None, float | None],
) -> tuple[float | None, float | None]:
    """The interval the alarm reads when a score alarm needs confirmation: the hull of the
    score interval and the exact box (it lies wholly on the violating side only when both
    do), so a false alarm needs the exact box to miss — probability ≤ 1 − level, at every
    sample size."""
    if None in score or None in box:
        return (None, None)
    s_lo, s_hi = cast("tuple[float, float]", score)
    b_lo, b_hi = cast("tuple[float, float]", box)
    return (min(s_lo, b_lo), max(s_hi, b_hi))


# ---------------------------------------------------------------- the alarm


def _bounds(threshold: ThresholdLike) -> tuple[Bound, Bound]:
    if isinstance(threshold, bool):
        raise ValueError(f"a threshold must be a number, got {threshold!r}")
    if isinstance(threshold, int):
        return Fraction(threshold), Fraction(threshold)
    if isinstance(threshold, (float, Fraction)):
        return threshold, threshold
    if isinstance(threshold, tuple):
        low, high = threshold
        return low, high
    return threshold.bounds()


def violates(low: float, high: float, threshold: ThresholdLike, op: str) -> bool:
    """Whether no value in [low, high] satisfies ``op threshold``: exactly the project's
    ``ci_lower`` fail (:func:`fairpolicy.decide.violated_throughout`), with the threshold's
    exact decimals compared by :func:`fairpolicy.exact.compare` (``between`` inclusive;
    ``==`` violated when the interval excludes the target; ``!=`` never shown violated
    by an interval)."""
    if op not in _OPS:
        raise ValueError(f"unknown operator {op!r}: one of {sorted(_OPS)}")
    t_lo, t_hi = _bounds(threshold)
    if op == "between":
        return high < float_bound(t_lo) or low > float_bound(t_hi)
    target = float_bound(t_lo)
    if op == "==":
        return not (low <= target <= high)
    if op == "!=":
        return False
    how = cast(Op, op)
    return not compare(low, how, t_lo) and not compare(high, how, t_lo)


def sequential_alarm(
    intervals: Sequence[tuple[float | None, float | None]],
    threshold: ThresholdLike,
    op: str,
) -> int | None:
    """The 0-based index into ``intervals`` of the first window whose interval lies wholly
    on the violating side of ``op threshold`` (:func:`violates`), else None.

    ``intervals[i]`` is window t = i + 1's interval, computed at :func:`window_level`
    (t, α) — the caller computes it (for a score interval, :func:`confirmed` of it and the
    :func:`exact_box` at the same level); this function only reads
    it. A window without an interval, or one its method cannot resolve
    (:func:`resolution`), is passed as ``(None, None)`` and never alarms; a NaN end
    counts as no interval. An interval with low > high is refused (ValueError)."""
    if op not in _OPS:
        raise ValueError(f"unknown operator {op!r}: one of {sorted(_OPS)}")
    for i, (low, high) in enumerate(intervals):
        if low is None or high is None or math.isnan(low) or math.isnan(high):
            continue
        if low > high:
            raise ValueError(f"window {i + 1}'s interval [{low!r}, {high!r}] has low > high")
        if violates(low, high, threshold, op):
            return i
    return None
