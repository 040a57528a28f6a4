"""Score and exact intervals of proportions (stats/proportions.py, stats/rate_forms.py).

Oracles: Newcombe (1998) Table II (method 10), statsmodels' ``confint_proportions_2indep``
(Newcombe; score ratio without the MN correction = Koopman), the exact Clopper–Pearson
limit of 9/9 and a brute-force count of coverage on binomial samples.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import proportions as pr
from fairpolicy.stats import resample as rs

Z95 = pr.z_of(0.95)

#: Newcombe 1998, Table II, method 10 (hybrid score), 95 %
NEWCOMBE_TABLE_II = [
    ((56, 70, 48, 80), (0.0524, 0.3339)),
    ((9, 10, 3, 10), (0.1705, 0.8090)),
    ((6, 7, 2, 7), (0.0582, 0.8062)),
    ((5, 56, 0, 29), (-0.0381, 0.1926)),
    ((0, 10, 0, 20), (-0.1611, 0.2775)),
    ((0, 10, 0, 10), (-0.2775, 0.2775)),
    ((10, 10, 0, 20), (0.6791, 1.0000)),
    ((10, 10, 0, 10), (0.6075, 1.0000)),
]


@pytest.mark.parametrize(("counts", "expected"), NEWCOMBE_TABLE_II)
def test_newcombe_matches_his_table_ii(
    counts: tuple[int, int, int, int], expected: tuple[float, float]
) -> None:
    lo, hi = pr.newcombe(*counts, Z95)
    assert lo == pytest.approx(expected[0], abs=5e-5)
    assert hi == pytest.approx(expected[1], abs=5e-5)


def test_a_rate_seen_nine_of_nine_times_gets_the_exact_lower_end() -> None:
    lo, hi = pr.rate_interval(9, 9, Z95)
    assert lo == pytest.approx(0.025 ** (1 / 9), abs=1e-9) and hi == 1.0  # 0.6637
    assert pr.rate_interval(0, 9, Z95) == pytest.approx((0.0, 1 - 0.025 ** (1 / 9)))


def _binary(tables: list[tuple[int, int, int, int]]) -> GroupStats:
    """(tp, fn, fp, tn) per group."""
    counts = np.array([[[tn, fp], [fn, tp]] for tp, fn, fp, tn in tables], dtype=np.int64)
    return GroupStats(("g",), tuple(f"g{i}" for i in range(len(tables))), ("0", "1"), counts, 1)


def test_tpr_nine_of_nine_in_a_gap_is_not_floored_by_the_groups_rows() -> None:
    """The issue's case: a TPR of 9/9 in a group of 100 rows got the band [0.917, 1]
    (floor from the 100 rows); its own denominator is 9, Clopper–Pearson [0.664, 1]."""
    st = _binary([(9, 0, 5, 86), (20, 10, 6, 64)])
    spec = REGISTRY["equal_opportunity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    keep = np.ones(2, bool)
    iv = bs.confidence(spec, st, keep, {}, point, rs.draw(st, 200, 3), 0.95, "percentile")
    assert iv.method == "score" and iv.groups is not None and iv.low is not None
    lo, hi = iv.groups["g0"]
    assert lo <= 0.0251 ** (1 / 9) and hi == 1.0
    # the gap: Newcombe of 9/9 − 20/30 folded; its upper end at 95 %, its lower end (at the
    # fold) at 97.5 % (one comparison)
    hi95 = pr.folded(*pr.newcombe(9, 9, 20, 30, Z95))[1]
    lo975 = pr.folded(*pr.newcombe(9, 9, 20, 30, pr.z_of(0.975)))[0]
    assert (iv.low, iv.high) == pytest.approx((lo975, hi95))


def _statsmodels() -> object:
    return pytest.importorskip("statsmodels.stats.proportion")


@settings(max_examples=80, deadline=None)
@given(
    m1=hst.integers(1, 400),
    m2=hst.integers(1, 400),
    f1=hst.floats(0, 1),
    f2=hst.floats(0, 1),
)
def test_newcombe_and_koopman_match_statsmodels(m1: int, m2: int, f1: float, f2: float) -> None:
    sp = _statsmodels()
    x1, x2 = round(f1 * m1), round(f2 * m2)
    lo, hi = pr.newcombe(x1, m1, x2, m2, Z95)
    ref = sp.confint_proportions_2indep(  # type: ignore[attr-defined]
        x1, m1, x2, m2, method="newcomb", compare="diff"
    )
    assert lo == pytest.approx(float(ref[0]), abs=1e-6)
    assert hi == pytest.approx(float(ref[1]), abs=1e-6)
    if x1 == 0 or x2 == 0 or x1 == m1 or x2 == m2:
        return  # statsmodels' ratio root-finder warns / differs at the boundary
    rlo, rhi = pr.koopman(x1, m1, x2, m2, Z95)
    with np.errstate(all="ignore"):
        rref = sp.confint_proportions_2indep(  # type: ignore[attr-defined]
            x1, m1, x2, m2, method="score", compare="ratio", correction=False
        )
    assert rlo == pytest.approx(float(rref[0]), rel=1e-4)
    assert rhi == pytest.approx(float(rref[1]), rel=1e-4)


def test_koopman_at_zero_counts() -> None:
    assert pr.koopman(0, 10, 0, 20, Z95) == (0.0, math.inf)
    lo, hi = pr.koopman(0, 10, 5, 20, Z95)
    assert lo == 0.0 and 1.0 < hi < 1.5
    lo, hi = pr.koopman(3, 10, 0, 20, Z95)
    assert hi == math.inf and lo == pytest.approx(1.7049, abs=1e-3)
    assert pr.min_max_ratio(0.0, math.inf) == (0.0, 1.0)
    assert pr.min_max_ratio(1.2, 2.0) == pytest.approx((0.5, 1 / 1.2))
    assert pr.min_max_ratio(0.5, 0.8) == (0.5, 0.8)


def _coverage(
    rates: list[float], n: int, reduce: str, sims: int, threshold: float, seed: int
) -> tuple[float, float]:
    """(coverage, share of lower ends above ``threshold`` (gap) or upper ends below it
    (ratio)) of the score method on binomial samples."""
    rng = np.random.default_rng(seed)
    truth = max(rates) - min(rates) if reduce == "gap" else min(rates) / max(rates)
    family = len(pr.pairs(len(rates)))
    z = pr.z_of(pr.sidak(0.95, family))
    z_wide = pr.z_of(pr.sidak(0.975, family))  # the end at the fold (stats/rate_forms.py)
    hits = wrong = fail = 0
    for _ in range(sims):
        props = [pr.Proportion(float(rng.binomial(n, p)), float(n)) for p in rates]
        if reduce == "gap":
            lo, hi = pr.gap_bounds(props, z_wide)[0], pr.gap_bounds(props, z)[1]
            wrong += hi < threshold  # ci_upper passes "gap < threshold" wrongly
            fail += lo > truth
        else:
            if all(p.x == 0 for p in props):
                continue
            lo, hi = pr.ratio_bounds(props, z)[0], pr.ratio_bounds(props, z_wide)[1]
            wrong += lo > threshold  # ci_upper passes "ratio > threshold" wrongly
            fail += hi < truth
        hits += lo <= truth <= hi
    assert fail / sims <= 0.025 + 2 * 0.005  # one-sided: wrong FAIL
    return hits / sims, wrong / sims


@pytest.mark.parametrize("groups", [2, 3, 5])
def test_pairwise_gap_covers_a_true_gap_of_zero_and_at_the_threshold(groups: int) -> None:
    """1000 samples per case (MC s.e. of 0.95: 0.007; of 0.025: 0.005)."""
    cov, _ = _coverage([0.1] * groups, 30, "gap", 1000, 0.0, 1)
    assert cov >= 0.95
    rates = [0.75] + [0.95] * (groups - 1)  # true gap 0.2: a wrong PASS below 0.2
    cov, wrong = _coverage(rates, 100, "gap", 1000, 0.2, 2)
    assert cov >= 0.94 and wrong <= 0.025 + 2 * 0.005


def test_pairwise_ratio_does_not_pass_at_four_fifths() -> None:
    cov, wrong = _coverage([0.4, 0.5], 50, "ratio", 1000, 0.8, 3)
    assert cov >= 0.94 and wrong <= 0.025 + 2 * 0.005


@pytest.mark.parametrize("groups", [3, 5, 8])
def test_pairwise_newcombe_is_narrower_than_the_sidak_wilson_box(groups: int) -> None:
    """The box: per-group Wilson intervals at level^(1/G), gap bounds [max L − min U,
    max U − min L]; the pairwise Šidák–Newcombe bounds are valid and narrower."""
    rng = np.random.default_rng(groups)
    for _ in range(20):
        n = int(rng.integers(50, 1000))
        props = [pr.Proportion(float(rng.binomial(n, 0.3)), float(n)) for _ in range(groups)]
        zb = pr.z_of(pr.sidak(0.95, groups))
        box = [pr.wilson(p.x, p.m, zb) for p in props]
        box_hi = max(b for _, b in box) - min(a for a, _ in box)
        zp = pr.z_of(pr.sidak(0.95, len(pr.pairs(groups))))
        _lo, hi = pr.gap_bounds(props, zp)
        assert hi < box_hi


def test_survey_weights_use_kish_effective_rows() -> None:
    """Whole-number survey weights 2 and 4: the rate is a ratio of weighted sums; its
    precision is that of (Σw)²/Σw² rows, not of the weight total."""
    from fairpolicy.stats.survey import build_survey_stats

    y = np.array([1, 1, 1, 1, 0, 0, 1, 1, 0, 0])
    p = np.array([1, 1, 0, 0, 0, 1, 1, 0, 0, 1])
    g = np.array([0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    w = np.array([2.0, 4.0, 2.0, 4.0, 2.0, 4.0, 2.0, 2.0, 4.0, 4.0])
    st = build_survey_stats(y, p, ("0", "1"), {"g": (g, ["a", "b"])}, [("g",)], 1, None, w)[("g",)]
    props = pr.rate_counts(st, "tpr")
    assert props is not None
    a = props[0]  # actual positives of a: weights 2, 4, 2, 4 → TPR (2 + 4)/12 = 0.5
    assert a.p == pytest.approx(0.5)
    assert a.m == pytest.approx(12.0**2 / 40.0)  # 3.6 effective rows (4 data rows)
    sel = props[1]  # b: positives weigh 2, 2 → m_eff = 2
    assert sel.m == pytest.approx(2.0) and sel.p == pytest.approx(0.5)
