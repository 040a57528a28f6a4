"""Score and exact intervals of proportions and of their differences and ratios.

Used for the gaps and ratios of binary rates over groups (demographic parity, TPR/FPR/
PPV/… gaps and ratios, the odds metrics) instead of a bootstrap band: each group's rate
is a proportion x/m of its own denominator m (TPR: the actual positives; PPV: the
predicted positives; selection rate: the group's rows), and for proportions the score
methods below are both valid at small m and much tighter than a band projected through
a box (``docs/statistics.md``).

- :func:`wilson` — Wilson (1927) score interval of one proportion;
- :func:`clopper_pearson` — the exact interval (Clopper & Pearson 1934), used at the
  boundary (x = 0 or x = m), where it is the honest floor: 9/9 gives [0.664, 1] at 95 %;
- :func:`rate_interval` — Wilson inside, Clopper–Pearson at the boundary;
- :func:`newcombe` — Newcombe's (1998) hybrid score interval (his method 10) of a
  difference p₁ − p₂ of independent proportions;
- :func:`koopman` — Koopman's (1984) asymptotic score interval of a ratio p₁ / p₂ (the
  constrained maximum likelihood of Miettinen & Nurminen 1985, without their n/(n − 1)
  variance factor), solved by bisection on log R;
- :func:`gap_bounds` / :func:`ratio_bounds` — simultaneous intervals of all pairwise
  differences (ratios) at the Šidák level ``level ** (1 / pairs)``, projected onto
  max − min (min ÷ max). With two groups this is the interval of the signed difference
  folded through |·| (of the ratio, mapped through min(R, 1/R)).

Weights. Under frequency weights x and m are the weighted counts (a row of weight w is
w rows). Under survey weights the rate is a ratio of weighted sums and its precision is
that of the effective number of rows behind it, Kish's m_eff = (Σw)² / Σw² over the
denominator's rows; the intervals use (p̂·m_eff, m_eff) (:func:`rate_counts`).

Nothing here resamples; scipy is imported only by :func:`clopper_pearson`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.groups import GroupStats

FloatArray = NDArray[np.float64]
_NORMAL = NormalDist()

#: the binary rates whose per-group values are proportions x/m of the count table:
#: (numerator cells, denominator cells) as (actual positive?, predicted positive?) pairs
RATE_CELLS: dict[str, tuple[frozenset[tuple[bool, bool]], frozenset[tuple[bool, bool]]]] = {}
_ALL = frozenset({(True, True), (True, False), (False, True), (False, False)})
_ACT = frozenset({(True, True), (True, False)})
_NEG = frozenset({(False, True), (False, False)})
_PRED = frozenset({(True, True), (False, True)})
_PNEG = frozenset({(True, False), (False, False)})
RATE_CELLS.update(
    {
        "selection_rate": (_PRED, _ALL),
        "tpr": (frozenset({(True, True)}), _ACT),
        "fnr": (frozenset({(True, False)}), _ACT),
        "fpr": (frozenset({(False, True)}), _NEG),
        "tnr": (frozenset({(False, False)}), _NEG),
        "ppv": (frozenset({(True, True)}), _PRED),
        "fdr": (frozenset({(False, True)}), _PRED),
        "npv": (frozenset({(False, False)}), _PNEG),
        "for": (frozenset({(True, False)}), _PNEG),
        "accuracy": (frozenset({(True, True), (False, False)}), _ALL),
        "error_rate": (frozenset({(True, False), (False, True)}), _ALL),
        "prev": (_ACT, _ALL),
    }
)


def z_of(level: float) -> float:
    """The two-sided normal critical value of ``level``."""
    return _NORMAL.inv_cdf(0.5 + level / 2.0)


def wilson(x: float, m: float, z: float) -> tuple[float, float]:
    """Wilson's score interval of x/m at critical value z (m > 0; x may be fractional)."""
    p = x / m
    z2 = z * z
    centre = (p + z2 / (2 * m)) / (1 + z2 / m)
    half = z / (1 + z2 / m) * math.sqrt(max(0.0, p * (1 - p) / m + z2 / (4 * m * m)))
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(x: float, m: float, alpha: float) -> tuple[float, float]:
    """The exact two-sided 1 − alpha interval of x/m (Beta quantiles; x, m may be real)."""
    from scipy.special import betaincinv

    lo = 0.0 if x <= 0 else float(betaincinv(x, m - x + 1, alpha / 2))
    hi = 1.0 if x >= m else float(betaincinv(x + 1, m - x, 1 - alpha / 2))
    return lo, hi


def rate_interval(x: float, m: float, z: float) -> tuple[float, float]:
    """Wilson inside (0 < x < m); Clopper–Pearson at x = 0 or x = m (at the same z)."""
    if m <= 0:
        return 0.0, 1.0
    if 0 < x < m:
        return wilson(x, m, z)
    return clopper_pearson(x, m, 2.0 * (1.0 - _NORMAL.cdf(z)))


def newcombe(x1: float, m1: float, x2: float, m2: float, z: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10) of p₁ − p₂ at critical value z."""
    p1, p2 = x1 / m1, x2 / m2
    l1, u1 = wilson(x1, m1, z)
    l2, u2 = wilson(x2, m2, z)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, lo), min(1.0, hi)


def _ratio_score(x1: float, m1: float, x2: float, m2: float, r: float) -> float:
    """The score statistic of H0: p₁/p₂ = r (Koopman 1984; Miettinen & Nurminen 1985's
    constrained maximum likelihood, without the n/(n − 1) factor), signed."""
    n = m1 + m2
    a = n * r
    b = -(m1 * r + x1 + m2 + x2 * r)
    c = x1 + x2
    disc = max(0.0, b * b - 4 * a * c)
    p2 = (-b - math.sqrt(disc)) / (2 * a)
    p1 = p2 * r
    var = p1 * (1 - p1) / m1 + r * r * p2 * (1 - p2) / m2
    num = x1 / m1 - r * x2 / m2
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def koopman(x1: float, m1: float, x2: float, m2: float, z: float) -> tuple[float, float]:
    """Koopman's score interval of R = p₁ / p₂ at critical value z: the R whose score
    statistic lies within ±z ([0, ∞] when both counts are 0)."""
    if x1 <= 0 and x2 <= 0:
        return 0.0, math.inf
    est = math.inf if x2 <= 0 else (x1 / m1) / (x2 / m2)

    def solve(lo: float, hi: float, target: float) -> float:
        # the statistic decreases in r; bisection on log r
        for _ in range(200):
            mid = math.sqrt(lo * hi)
            if _ratio_score(x1, m1, x2, m2, mid) > target:
                lo = mid
            else:
                hi = mid
            if hi / lo < 1 + 1e-12:
                break
        return math.sqrt(lo * hi)

    tiny, huge = 1e-12, 1e12
    low = 0.0 if x1 <= 0 else solve(tiny, min(est, huge), z)
    high = math.inf if x2 <= 0 else solve(max(est, tiny), huge, -z)
    if high >= huge * 0.999:
        high = math.inf
    return low, high


def folded(lo: float, hi: float) -> tuple[float, float]:
    """The image of [lo, hi] under |·|."""
    if lo >= 0.0:
        return lo, hi
    if hi <= 0.0:
        return -hi, -lo
    return 0.0, max(-lo, hi)


def min_max_ratio(lo: float, hi: float) -> tuple[float, float]:
    """The image of [lo, hi] (an interval of p₁/p₂) under R ↦ min(R, 1/R)."""

    def f(r: float) -> float:
        if r <= 0 or math.isinf(r):
            return 0.0
        return min(r, 1.0 / r)

    bottom = min(f(lo), f(hi))
    top = 1.0 if lo <= 1.0 <= hi else max(f(lo), f(hi))
    return bottom, top


@dataclass(frozen=True)
class Proportion:
    """A group's rate as a proportion: x of m (effective counts under survey weights)."""

    x: float
    m: float

    @property
    def p(self) -> float:
        return self.x / self.m


def rate_counts(stats: GroupStats, rate: str) -> list[Proportion] | None:
    """Per group of ``stats``, the rate ``rate`` as x of m: weighted counts, or under survey
    weights Kish's effective rows (p̂·m_eff, m_eff); None when not a binary count table
    (or an unknown rate). A group whose denominator is 0 gets m = 0."""
    cells = RATE_CELLS.get(rate)
    if cells is None or stats.positive is None or stats.num_classes != 2 or not stats.classes:
        return None
    pos = stats.positive
    k = stats.num_classes

    def mask(which: frozenset[tuple[bool, bool]]) -> NDArray[np.bool_]:
        out = np.zeros((k, k), dtype=bool)
        for t in range(k):
            for q in range(k):
                out[t, q] = ((t == pos), (q == pos)) in which
        return out

    num_m, den_m = mask(cells[0]), mask(cells[1])
    counts = np.asarray(stats.counts, dtype=np.float64)
    num = (counts * num_m).sum(axis=(1, 2))
    den = (counts * den_m).sum(axis=(1, 2))
    out: list[Proportion] = []
    for g in range(len(stats.groups)):
        if den[g] <= 0:
            out.append(Proportion(0.0, 0.0))
            continue
        if stats.survey is None:
            out.append(Proportion(float(num[g]), float(den[g])))
            continue
        cell, weight, rows = stats.survey.units[g]
        inside = den_m.reshape(-1)[np.asarray(cell, dtype=np.int64)]
        w, r = np.asarray(weight, np.float64)[inside], np.asarray(rows, np.float64)[inside]
        s1, s2 = float((w * r).sum()), float((w * w * r).sum())
        m_eff = s1 * s1 / s2 if s2 > 0 else 0.0
        out.append(Proportion(float(num[g] / den[g]) * m_eff, m_eff))
    return out


def sidak(level: float, family: int) -> float:
    """The per-comparison level whose ``family`` intervals hold jointly with ``level``."""
    return float(level ** (1.0 / max(1, family)))


def pairs(n: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def gap_bounds(props: Sequence[Proportion], z: float) -> tuple[float, float]:
    """Bounds of max − min of the true rates from Newcombe intervals of every pairwise
    difference at critical value z (the caller's Šidák-adjusted level): the true gap is the
    largest |p_i − p_j|, so it lies in [max_ij folded lower, max_ij folded upper]."""
    lows, highs = [], []
    for i, j in pairs(len(props)):
        a, b = props[i], props[j]
        lo, hi = folded(*newcombe(a.x, a.m, b.x, b.m, z))
        lows.append(lo)
        highs.append(hi)
    return max(lows), max(highs)


def ratio_bounds(props: Sequence[Proportion], z: float) -> tuple[float, float]:
    """Bounds of min ÷ max of the true rates from Koopman intervals of every pairwise ratio:
    min ÷ max = the smallest min(R_ij, 1/R_ij), so it lies in [min_ij lower, min_ij upper]."""
    lows, highs = [], []
    for i, j in pairs(len(props)):
        a, b = props[i], props[j]
        lo, hi = min_max_ratio(*koopman(a.x, a.m, b.x, b.m, z))
        lows.append(lo)
        highs.append(hi)
    return min(lows), min(highs)


def extreme_bounds(props: Sequence[Proportion], z: float, which: str) -> tuple[float, float]:
    """Bounds of the smallest (``min``) or largest (``max``) true rate from per-group
    intervals at critical value z (Šidák over the groups)."""
    ivs = [rate_interval(p.x, p.m, z) for p in props]
    lo = [a for a, _ in ivs]
    hi = [b for _, b in ivs]
    return (min(lo), min(hi)) if which == "min" else (max(lo), max(hi))
