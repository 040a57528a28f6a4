"""The interval of the change of a gap of binary rates between two runs (stats/change.py).

Oracles: statsmodels' Newcombe interval (``confint_proportions_2indep``) with the MOVER
written out by hand; the sign rule's one-sided errors computed exactly in the normal
limit (closed form, equal standard errors); a binomial simulation against the signed
Wald interval of the change; and ``baseline.compare`` end to end.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

import fairpolicy
from fairpolicy.baseline import compare
from fairpolicy.stats import change as ch
from fairpolicy.stats import proportions as pr

N = NormalDist()
Z95 = N.inv_cdf(0.975)


def _newcombe_sm(x1: int, m1: int, x2: int, m2: int, alpha: float) -> tuple[float, float]:
    from statsmodels.stats.proportion import confint_proportions_2indep

    lo, hi = confint_proportions_2indep(x1, m1, x2, m2, method="newcomb", alpha=alpha)
    return float(lo), float(hi)


@given(
    hst.integers(5, 195),
    hst.integers(5, 195),
    hst.integers(5, 195),
    hst.integers(5, 195),
)
@settings(max_examples=60, deadline=None)
def test_two_groups_matches_hand_mover_of_statsmodels_newcombe(
    a: int, b: int, c: int, d: int
) -> None:
    new = [pr.Proportion(a, 200), pr.Proportion(b, 200)]
    old = [pr.Proportion(c, 200), pr.Proportion(d, 200)]
    low, high = ch.gap_change(new, old, 0.95)
    dn, do = (a - b) / 200, (c - d) / 200

    def ends(alpha: float) -> tuple[float, float]:
        ln, un = _newcombe_sm(a, 200, b, 200, alpha)
        lo_, uo = _newcombe_sm(c, 200, d, 200, alpha)
        l1 = (dn - do) - math.hypot(dn - ln, uo - do)
        u1 = (dn - do) + math.hypot(un - dn, do - lo_)
        l2 = (dn + do) - math.hypot(dn - ln, do - lo_)
        u2 = (dn + do) + math.hypot(un - dn, uo - do)
        return max(min(l1, l2), min(-u2, -u1)), max(min(u1, u2), min(-l2, -l1))

    assert low == pytest.approx(ends(0.05)[0], abs=1e-6)
    assert high == pytest.approx(ends(0.025)[1], abs=1e-6)
    assert low <= abs(dn) - abs(do) <= high


def _low_rule(s1: float, s2: float, r: float, c: float) -> bool:
    """The low end's claim C > c, written as the intersection–union test."""
    return (s1 - r > c and s2 - r > c) or (-s1 - r > c and -s2 - r > c)


@given(
    hst.floats(-1, 1),
    hst.floats(-1, 1),
    hst.floats(0.01, 0.3),
    hst.floats(0.01, 0.3),
    hst.floats(-0.5, 0.5),
)
def test_low_end_is_the_intersection_union_test(
    dn: float, do: float, sn: float, so: float, c: float
) -> None:
    new = (dn, dn - Z95 * sn, dn + Z95 * sn)
    old = (do, do - Z95 * so, do + Z95 * so)
    low, _ = ch.abs_change(new, old, new, old)
    r = Z95 * math.hypot(sn, so)
    if abs(low - c) > 1e-9:
        assert (low > c) == _low_rule(dn - do, dn + do, r, c)


@given(
    hst.floats(-0.5, 0.5),
    hst.floats(-0.5, 0.5),
    hst.floats(0.001, 0.2),
    hst.floats(0.001, 0.2),
)
@settings(max_examples=300, deadline=None)
def test_with_wald_parts_the_low_end_is_the_wald_interval_of_the_change(
    dn: float, do: float, sn: float, so: float
) -> None:
    """The "Wald interval of the change" of a gap metric, |δ̂ₙ| − |δ̂ₒ| − z·√(σₙ² + σₒ²),
    is this module's low end with Wald parts (min(s₁, s₂) = δₙ − |δₒ|): the benchmark's
    ``abs Wald`` column and ``counts`` differ only by Newcombe vs Wald parts."""
    new = (dn, dn - Z95 * sn, dn + Z95 * sn)
    old = (do, do - Z95 * so, do + Z95 * so)
    low, _ = ch.abs_change(new, old, new, old)
    assert low == pytest.approx(abs(dn) - abs(do) - Z95 * math.hypot(sn, so), abs=1e-12)


def _exact_errors(tn: float, to: float) -> tuple[float, float]:
    """Exact one-sided errors in the normal limit with σₙ = σₒ = 1 (ŝ₁ = δ̂ₙ − δ̂ₒ and
    ŝ₂ = δ̂ₙ + δ̂ₒ independent, each N(s, 2)): P(low > C) and P(high < C) of the rule of
    :func:`ch.abs_change` at 95 % (low) and the 97.5 % family (high)."""
    s, sd = (tn - to, tn + to), math.sqrt(2.0)
    cc = abs(tn) - abs(to)

    def below(i: int, t: float) -> float:  # P(ŝᵢ < t)
        return N.cdf((t - s[i]) / sd)

    def between(i: int, a: float, b: float) -> float:  # P(a < ŝᵢ < b)
        return max(0.0, below(i, b) - below(i, a))

    r = Z95 * sd
    # low > C ⟺ (ŝ₁ > C + r ∧ ŝ₂ > C + r) ∨ (ŝ₁ < −C − r ∧ ŝ₂ < −C − r)
    e = [1.0 - below(i, cc + r) for i in (0, 1)]
    f = [below(i, -cc - r) for i in (0, 1)]
    both = [between(i, cc + r, -cc - r) for i in (0, 1)]
    lo_err = e[0] * e[1] + f[0] * f[1] - both[0] * both[1]
    rh = N.inv_cdf(1 - 0.025 / 2) * sd
    # high < C ⟺ (ŝ₁ < C − rh ∨ ŝ₂ < C − rh) ∧ (ŝ₁ > rh − C ∨ ŝ₂ > rh − C)
    not_a = [1.0 - below(i, cc - rh) for i in (0, 1)]
    not_b = [below(i, rh - cc) for i in (0, 1)]
    neither = [between(i, cc - rh, rh - cc) for i in (0, 1)]
    hi_err = 1.0 - not_a[0] * not_a[1] - not_b[0] * not_b[1] + neither[0] * neither[1]
    return lo_err, hi_err


def test_sign_rule_errors_exact_in_the_normal_limit() -> None:
    grid = np.linspace(-6, 6, 49)
    worst_low = worst_high = 0.0
    for tn in grid:
        for to in grid:
            lo_err, hi_err = _exact_errors(float(tn), float(to))
            if abs(tn) - abs(to) >= 0:
                worst_low = max(worst_low, lo_err)
            worst_high = max(worst_high, hi_err)
    assert worst_low <= 0.025 + 2e-6
    assert worst_high <= 0.025 + 2e-6


def test_sign_rule_exact_errors_agree_with_the_code() -> None:
    """The closed form above is the code's rule: a Monte Carlo of abs_change agrees."""
    rng = np.random.default_rng(3)
    sims = 4000
    for tn, to in ((0.0, 0.0), (3.0, 0.0), (4.0, 4.0), (0.0, 2.0), (-1.5, 2.5)):
        zn, zo = rng.standard_normal(sims), rng.standard_normal(sims)
        cc = abs(tn) - abs(to)
        zl, zh = Z95, N.inv_cdf(1 - 0.025 / 2)
        lo_n = hi_n = 0
        for a, b in zip(tn + zn, to + zo, strict=True):
            low = ch.abs_change((a, a - zl, a + zl), (b, b - zl, b + zl), (a,) * 3, (b,) * 3)[0]
            high = ch.abs_change((a,) * 3, (b,) * 3, (a, a - zh, a + zh), (b, b - zh, b + zh))[1]
            lo_n += low > cc
            hi_n += high < cc
        lo_e, hi_e = _exact_errors(tn, to)
        se = math.sqrt(0.03 * 0.97 / sims)
        assert abs(lo_n / sims - lo_e) < 4 * se + 1e-3
        assert abs(hi_n / sims - hi_e) < 4 * se + 1e-3


def _draw(rates: list[float], m: int, rng: np.random.Generator) -> list[pr.Proportion]:
    return [pr.Proportion(float(rng.binomial(m, p)), float(m)) for p in rates]


def test_binomial_unchanged_release_covers_and_regression_matches_wald() -> None:
    """2 × 1000 rows: an unchanged release (gap 0.05 both times) — the change's interval
    covers 0 at ≥ 95 %; a +0.10 regression from a baseline gap of 0.05 is flagged (low > 0)
    as often as by the signed Wald interval of the change, within Monte Carlo error."""
    rng = np.random.default_rng(11)
    sims, m = 300, 1000
    cover = 0
    for _ in range(sims):
        low, high = ch.gap_change(_draw([0.5, 0.45], m, rng), _draw([0.5, 0.45], m, rng), 0.95)
        cover += low <= 0.0 <= high
    assert cover / sims >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / sims)
    ours = wald = 0
    for _ in range(sims):
        new, old = _draw([0.5, 0.35], m, rng), _draw([0.5, 0.45], m, rng)
        ours += ch.gap_change(new, old, 0.95)[0] > 0.0
        d = (new[0].p - new[1].p) - (old[0].p - old[1].p)
        var = sum(p.p * (1 - p.p) / p.m for p in (*new, *old))
        wald += d - Z95 * math.sqrt(var) > 0.0
    assert ours / sims >= wald / sims - 2 * math.sqrt(0.25 / sims)
    assert ours / sims > 0.8


def test_a_gap_that_only_changed_sign_is_not_a_regression() -> None:
    """δₒ = −0.05, δₙ = +0.05: |gap| unchanged. The signed Wald interval flags it almost
    always; this interval does not (at most α/2)."""
    rng = np.random.default_rng(5)
    sims, m = 300, 1000
    flagged = 0
    for _ in range(sims):
        new, old = _draw([0.5, 0.45], m, rng), _draw([0.45, 0.5], m, rng)
        flagged += ch.gap_change(new, old, 0.95)[0] > 0.0
    assert flagged / sims <= 0.025 + 2 * math.sqrt(0.025 * 0.975 / sims)


def test_three_groups_covers_and_groups_may_differ() -> None:
    rng = np.random.default_rng(8)
    sims, m = 200, 300
    cover = 0
    for _ in range(sims):
        new = _draw([0.3, 0.4, 0.35], m, rng)
        old = _draw([0.3, 0.4, 0.35, 0.32], m, rng)  # a fourth group in the baseline
        low, high = ch.gap_change(new, old, 0.95)
        cover += low <= 0.0 <= high
    assert cover / sims >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / sims)


def test_no_interval_without_two_groups_or_a_denominator() -> None:
    one = [pr.Proportion(3, 10)]
    two = [pr.Proportion(3, 10), pr.Proportion(0, 0)]
    ok = [pr.Proportion(3, 10), pr.Proportion(4, 10)]
    assert ch.gap_change(one, ok, 0.95) is None
    assert ch.gap_change(ok, two, 0.95) is None


def test_rates_from_counts_reads_the_positive_class_and_refuses_weights() -> None:
    counts: dict[str, list[list[int | float]]] = {
        "A": [[30, 20], [10, 40]],
        "B": [[40, 10], [20, 30]],
    }
    got = ch.rates_from_counts(counts, "selection_rate", {"A": 0.6, "B": 0.4}, 0.2)
    assert got == [pr.Proportion(60, 100), pr.Proportion(40, 100)]
    tpr = ch.rates_from_counts(counts, "tpr", {"A": 0.8, "B": 0.6}, 0.2)
    assert tpr == [pr.Proportion(40, 50), pr.Proportion(30, 50)]
    assert ch.rates_from_counts(counts, "selection_rate", {"A": 0.6, "B": 0.5}, 0.1) is None
    frac: dict[str, list[list[int | float]]] = {
        "A": [[30, 20.5], [10, 40]],
        "B": [[40, 10], [20, 30]],
    }
    assert ch.rates_from_counts(frac, "selection_rate", {"A": 60.5 / 100.5, "B": 0.4}, 0.2) is None


POLICY = [
    {
        "control-id": "dp",
        "props": [
            {"name": "metric_key", "value": "demographic_parity_diff"},
            {"name": "threshold", "value": "0.3"},
            {"name": "operator", "value": "<"},
            {"name": "input.target", "value": "y_true"},
            {"name": "input.prediction", "value": "y_pred"},
            {"name": "input.dimension", "value": "g"},
            {"name": "decision", "value": "ci_upper"},
        ],
    }
]


def _frame(rates: dict[str, float], n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    parts = [
        pd.DataFrame(
            {
                "g": g,
                "y_true": rng.integers(0, 2, n),
                "y_pred": (rng.random(n) < p).astype(int),
            }
        )
        for g, p in rates.items()
    ]
    return pd.concat(parts, ignore_index=True)


def test_compare_uses_the_counts_and_flags_a_regression() -> None:
    old = fairpolicy.check(POLICY, _frame({"A": 0.5, "B": 0.45}, 1000, 1), bootstrap=50, seed=1)
    new = fairpolicy.check(POLICY, _frame({"A": 0.5, "B": 0.30}, 1000, 2), bootstrap=50, seed=1)
    both = compare(
        new, old, path="old.json", sha256="0" * 64, max_regression=0.0, allow_policy_change=True
    )
    c = both.findings[0].change
    assert c is not None and c.low is not None and c.high is not None
    fo, fn = old.findings[0], new.findings[0]
    props = [
        ch.rates_from_counts(
            r.counts, "selection_rate", {g.group: g.value for g in r.groups}, r.value or 0.0
        )
        for r in (fn, fo)
    ]
    assert props[0] is not None and props[1] is not None
    low, high = ch.gap_change(props[0], props[1], 0.95)
    assert (c.low, c.high) == (low, high)
    assert c.verdict == "regressed"
    # the stored intervals' MOVER sees less of the regression (its low end combines the
    # new run's folded end at 1 − α/2)
    from fairpolicy.baseline import mover

    assert fn.ci is not None and fo.ci is not None
    assert fn.ci.low is not None and fn.ci.high is not None
    assert fo.ci.low is not None and fo.ci.high is not None
    assert fn.value is not None and fo.value is not None
    m_low, m_high = mover(fn.value, fn.ci.low, fn.ci.high, fo.value, fo.ci.low, fo.ci.high)
    assert low > m_low
    assert m_high > 0
