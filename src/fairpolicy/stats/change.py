"""The interval of the change of a gap of binary rates between two runs (issue 28, item 7).

Two releases are two independent samples. A gap is G = max_ij |δ_ij| with δ_ij = p_i − p_j
the signed difference of two groups' rates; the change of a baseline is
C = G_new − G_old (positive: worse). Combining the two runs' *stored* intervals of G
(``fairpolicy.baseline.mover``) loses power twice: each stored interval is simultaneous
over all pairs and its end at the fold (|·|) is at the level 1 − α/2. Here the change is
built from the groups' counts instead, with signed Newcombe intervals.

**Two groups.** Write s₁ = δₙ − δₒ and s₂ = δₙ + δₒ. Then

    C = |δₙ| − |δₒ| = max(min(s₁, s₂), min(−s₂, −s₁)),

non-decreasing in each of s₁, s₂, −s₂, −s₁ taken as separate arguments, so bounds of the
four give bounds of C. Each of s₁, s₂ gets the MOVER interval (Zou & Donner 2008) of the
two runs' signed Newcombe intervals (independent samples):

    low  = max(min(L₁, L₂), min(−U₂, −U₁))
    high = max(min(U₁, U₂), min(−L₂, −L₁))

The low end is an intersection–union test (Berger 1982): C > c needs *both* s₁ > c and
s₂ > c (δₙ > 0), or both −s₁ > c and −s₂ > c (δₙ < 0); for c ≥ 0 the two branches need
opposite signs of δₙ, so the one-sided error of every claim "C > c ≥ 0" (the only claim a
rule makes: ``regressed`` needs low > δ ≥ 0) is at most α/2 in the normal limit
(``tests/stats/test_change.py`` checks it exactly on a grid: ≤ 0.025 + 2e-6). Its power
is that of the signed Wald interval whenever the baseline's sign is clear (from a baseline
gap of 0.05 or 0.10 the two flag a +0.10 regression at 2 × 1000 rows equally often),
and the product of two such tests at a baseline gap of exactly 0 (≈ 0.885² ≈ 0.78 against
0.885 there). No test valid for the change of |gap| reaches the signed interval's 0.885
there: by a Neyman–Pearson bound against the least-favourable null points δₒ = ±δₙ ≈
0.054, none exceeds 0.802 at 2 × 1000 rows (docs/statistics.md, "Issue 28, third
part"); with Wald parts in place of the MOVER this low end *is* the Wald interval of
|δₙ| − |δₒ| (min(s₁, s₂) = δₙ − |δₒ|). The low end of an *improvement* to a new gap
near 0 (C < 0) can miss with probability up to α (both branches' errors add); no rule
reads it.

The high end reads the four bounds at the family level 1 − α/2: whichever of U₁, U₂ is
smaller bounds C, and both are tight when δₒ ≈ 0, so their errors add; halving each keeps
the one-sided error ≤ α/2. (``ci_upper`` reads the high end to prove a change ≤ δ.)

Why not the signed Wald interval of δₙ − δₒ alone: it is an interval of s₁, not of the
change of |gap|. A release whose gap merely changed sign (δₒ = −0.05, δₙ = +0.05: C = 0)
is flagged by it 89 % of the time at 2 × 1000 rows.

**Three or more groups.** C = max_p min_q (|δₙ_p| − |δₒ_q|) over the new run's pairs p and
the old run's pairs q (non-decreasing in each term): low = max_p min_q low_pq and high =
max_p min_q high_pq. The low end is wrong only if, for some p, the term of the true
minimising q is wrong: Bonferroni over the K_new pairs of the new run; the high end only if
the term of the true maximising p and the (random) minimising q is: Bonferroni over the
K_old pairs of the old run. Groups need not be the same in both runs.

Only unweighted count tables (row counts) are read here; weighted runs, ratios, the odds
metrics and bootstrap intervals keep the MOVER of the stored intervals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from fairpolicy.stats.proportions import Proportion, newcombe, pairs

__all__ = ["abs_change", "diff_mover", "gap_change", "rates_from_counts", "sum_mover"]

_NORMAL = NormalDist()

Signed = tuple[float, float, float]  # (estimate, low, high) of a signed difference


def _z(two_sided: float) -> float:
    return _NORMAL.inv_cdf(0.5 + two_sided / 2.0)


def diff_mover(a: Signed, b: Signed) -> tuple[float, float]:
    """MOVER interval of a − b from independent intervals of a and b at one level."""
    (x, lx, ux), (y, ly, uy) = a, b
    d = x - y
    return d - math.hypot(x - lx, uy - y), d + math.hypot(ux - x, y - ly)


def sum_mover(a: Signed, b: Signed) -> tuple[float, float]:
    """MOVER interval of a + b from independent intervals of a and b at one level."""
    (x, lx, ux), (y, ly, uy) = a, b
    s = x + y
    return s - math.hypot(x - lx, y - ly), s + math.hypot(ux - x, uy - y)


def _ends(new: Signed, old: Signed) -> tuple[float, float]:
    """(low, high) of |δₙ| − |δₒ| from the four bounds of s₁ = δₙ − δₒ, s₂ = δₙ + δₒ."""
    l1, u1 = diff_mover(new, old)
    l2, u2 = sum_mover(new, old)
    return max(min(l1, l2), min(-u2, -u1)), max(min(u1, u2), min(-l2, -l1))


def abs_change(
    new_low: Signed, old_low: Signed, new_high: Signed, old_high: Signed
) -> tuple[float, float]:
    """(low, high) of |δₙ| − |δₒ|: the low end from the signed intervals ``*_low`` (at
    the level 1 − α), the high end from ``*_high`` (at 1 − α/2)."""
    return _ends(new_low, old_low)[0], _ends(new_high, old_high)[1]


def _signed(a: Proportion, b: Proportion, z: float) -> Signed:
    lo, hi = newcombe(a.x, a.m, b.x, b.m, z)
    return a.p - b.p, lo, hi


def gap_change(
    new: Sequence[Proportion], old: Sequence[Proportion], level: float
) -> tuple[float, float] | None:
    """(low, high) of (max − min of the new run's rates) − (the same of the old run's) at
    ``level``, from each group's count x of m (see the module docstring); None when a run
    has fewer than two groups or a group with no denominator."""
    if len(new) < 2 or len(old) < 2 or any(p.m <= 0 for p in (*new, *old)):
        return None
    alpha = 1.0 - level
    pn, po = pairs(len(new)), pairs(len(old))
    # low end: Bonferroni over the new run's pairs, each bound two-sided 1 − α/K_new
    z_low = _z(1.0 - alpha / len(pn))
    # high end: Bonferroni over the old run's pairs, each bound two-sided 1 − α/(2·K_old)
    z_high = _z(1.0 - alpha / (2.0 * len(po)))
    n_low = [_signed(new[i], new[j], z_low) for i, j in pn]
    o_low = [_signed(old[i], old[j], z_low) for i, j in po]
    n_high = [_signed(new[i], new[j], z_high) for i, j in pn]
    o_high = [_signed(old[i], old[j], z_high) for i, j in po]
    low = max(min(_ends(a, b)[0] for b in o_low) for a in n_low)
    high = max(min(_ends(a, b)[1] for b in o_high) for a in n_high)
    return low, high


_TOL = 1e-9


def rates_from_counts(
    counts: dict[str, list[list[int | float]]],
    rate: str,
    values: dict[str, float | None],
    gap: float,
) -> list[Proportion] | None:
    """Each group's ``rate`` as x of m from a finding's binary count tables
    (``counts[group][y_true][y_pred]``), when every group's recorded value is that rate
    for one choice of the positive class and ``gap`` is their max − min; else None (not a
    gap of that rate, fractional or multi-class counts)."""
    from fairpolicy.stats.proportions import RATE_CELLS

    cells = RATE_CELLS.get(rate)
    if cells is None or len(counts) < 2 or set(counts) != set(values):
        return None
    tables = list(counts.values())
    if any(len(t) != 2 or any(len(r) != 2 for r in t) for t in tables):
        return None
    if any(float(c) != int(c) or c < 0 for t in tables for r in t for c in r):
        return None  # a weighted table: its precision is not its counts'
    found: list[list[Proportion]] = []
    for pos in (0, 1):
        props: list[Proportion] = []
        for g, t in counts.items():
            x, m = (
                sum(float(t[a][b]) for a in (0, 1) for b in (0, 1) if (a == pos, b == pos) in c)
                for c in cells
            )
            v = values[g]
            if m <= 0 or v is None or abs(x / m - v) > _TOL * max(1.0, abs(v)):
                break
            props.append(Proportion(x, m))
        else:
            ps = [p.p for p in props]
            if abs(max(ps) - min(ps) - gap) <= _TOL * max(1.0, abs(gap)):
                found.append(props)
    if not found or (len(found) == 2 and found[0] != found[1]):
        return None  # two readings of the positive class that disagree: not decidable
    return found[0]
