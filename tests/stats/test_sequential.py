"""The ``sequential`` window gate's statistics (issue 30 item 2, fairpolicy.stats.sequential):
the alpha-spending closed forms (exact, with fractions), the levels' rounding, the
bootstrap resolution rule, the alarm against the project's decision, and the horizon
false-alarm rate — exactly by enumeration at small n, and by simulation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from fairpolicy.decide import violated_throughout
from fairpolicy.policy.schema import Control, Operator, Threshold
from fairpolicy.stats import proportions as pr
from fairpolicy.stats import rate_forms as rf
from fairpolicy.stats import sequential as sq

ALPHAS = [Fraction(1, 20), 0.05, Fraction(1, 3), 0.01, Fraction(999, 1000)]


# ---------------------------------------------------------------- spending, exactly


@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("horizon", [1, 7, 52, 365])
def test_spending_sums_to_the_closed_form_exactly(alpha: float | Fraction, horizon: int) -> None:
    a = alpha if isinstance(alpha, Fraction) else Fraction(repr(alpha))
    total = Fraction(0)
    assert sq.spent_exact(0, alpha, horizon) == 0
    for t in range(1, 300):
        step = sq.spending(t, alpha, horizon)
        assert step == a * horizon / ((t + horizon - 1) * (t + horizon))
        total += step
        assert total == sq.spent_exact(t, alpha, horizon) == a * t / (t + horizon)
        assert total < a
    assert sq.spent_exact(horizon, alpha, horizon) == a / 2  # half of α by window H


def test_default_spending_is_the_52_week_one() -> None:
    a = Fraction(1, 20)
    assert sq.spending(1, 0.05) == a * 52 / (52 * 53) == a / 53
    assert sq.spending(52, 0.05) == a * 52 / (103 * 104)
    assert sq.spent(52, 0.05) == 0.025
    assert sq.spent(1, 0.05) == float(a / 53)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_levels_round_towards_the_strict_side(alpha: float | Fraction) -> None:
    for t in [*range(1, 120), 10**3, 10**5, 12345677]:
        a_t = sq.spending(t, alpha)
        lv, lv2, tail = (
            sq.window_level(t, alpha),
            sq.fold_end_level(t, alpha),
            sq.window_alpha(t, alpha),
        )
        assert Fraction(lv) >= 1 - a_t  # never a lower level than 1 − α_t
        assert Fraction(math.nextafter(lv, 0.0)) < 1 - a_t  # and the nearest double that is
        assert Fraction(lv2) >= 1 - 2 * a_t
        assert Fraction(math.nextafter(lv2, 0.0)) < 1 - 2 * a_t
        assert Fraction(tail) <= a_t < Fraction(math.nextafter(tail, 1.0))


def test_monotone_in_the_window() -> None:
    levels = [sq.window_level(t, 0.05) for t in range(1, 2000)]
    assert all(a < b for a, b in itertools.pairwise(levels))
    spent = [sq.spent(t, 0.05) for t in range(0, 2000)]
    assert all(a < b < 0.05 for a, b in itertools.pairwise(spent))
    tails = [sq.window_alpha(t, 0.05) for t in range(1, 2000)]
    assert all(a > b > 0 for a, b in itertools.pairwise(tails))
    assert all(sq.fold_end_level(t, 0.05) < sq.window_level(t, 0.05) for t in range(1, 200))
    # a stricter α spends less in every window
    assert all(sq.spending(t, 0.01) < sq.spending(t, 0.05) for t in range(1, 200))


@pytest.mark.parametrize("t", [10**9, 10**30, 10**400])
def test_huge_window_numbers(t: int) -> None:
    a_t = sq.spending(t, 0.05)
    assert 0 < a_t < Fraction(1, 10**17)
    assert sq.window_level(t, 0.05) == 1.0  # rounded up: never below 1 − α_t
    assert 0.0 <= sq.window_alpha(t, 0.05) <= a_t
    assert sq.spent(t, 0.05) <= 0.05
    assert sq.spent_exact(t, 0.05) < Fraction(1, 20)
    # a level of 1.0 resolves with no method: the window cannot alarm
    for method in ("score", "band", "percentile", "bca"):
        r = sq.resolution(method, sq.window_level(t, 0.05), 10**12)
        assert not r.ok and r.reason is not None and "cannot alarm" in r.reason


def test_finest_tail_a_score_interval_resolves() -> None:
    assert sq.resolution("score", sq.window_level(10**5, 0.05)).ok  # α_t ≈ 2.6e-10
    assert not sq.resolution("score", sq.window_level(10**7, 0.05)).ok  # α_t ≈ 2.6e-14


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1", None])
def test_bad_window_numbers(bad: object) -> None:
    with pytest.raises(ValueError, match="window number"):
        sq.window_level(bad, 0.05)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window number"):
        sq.spending(bad, 0.05)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "bad", [0, 1, -0.1, 1.5, math.nan, math.inf, True, "0.05", None, Fraction(1)]
)
def test_bad_alphas(bad: object) -> None:
    with pytest.raises(ValueError, match="alpha"):
        sq.window_level(1, bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="alpha"):
        sq.spent(3, bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [0, -52, 2.0, True])
def test_bad_horizons(bad: object) -> None:
    with pytest.raises(ValueError, match="horizon"):
        sq.window_level(1, 0.05, bad)  # type: ignore[arg-type]


def test_bad_spent_counts() -> None:
    for bad in (-1, 1.0, False):
        with pytest.raises(ValueError, match="number of windows"):
            sq.spent(bad, 0.05)  # type: ignore[arg-type]


# ---------------------------------------------------------------- resolution


@pytest.mark.parametrize("method", ["band", "percentile", "bca"])
def test_bootstrap_resolution_boundary(method: str) -> None:
    for t in (1, 13, 52):
        lv = sq.window_level(t, 0.05)
        need = sq.resamples_for(method, lv)
        assert need * sq.tail_read(method, lv) >= sq.MIN_TAIL_REPLICATES
        assert (need - 1) * sq.tail_read(method, lv) < sq.MIN_TAIL_REPLICATES
        assert sq.resolution(method, lv, need).ok
        r = sq.resolution(method, lv, need - 1)
        assert not r.ok and r.resamples_needed == need
        assert r.reason is not None and f"{need:,} resamples" in r.reason
        assert not sq.resolution(method, lv, None).ok
        assert "no bootstrap replicates" in (sq.resolution(method, lv, 0).reason or "")


def test_bootstrap_needs_at_window_52() -> None:
    lv = sq.window_level(52, 0.05)  # α_t = 1/4120
    assert sq.resamples_for("band", lv) == pytest.approx(41_200, rel=1e-3)
    # a percentile interval reads (1 − level)/2 ÷ WIDEN: ten times finer
    assert sq.resamples_for("percentile", lv) == pytest.approx(412_000, rel=1e-3)
    # the default 1000 replicates resolve neither; the 95 % level they do
    assert not sq.resolution("band", lv, 1000).ok
    assert sq.resolution("band", 0.95, 1000).ok
    assert sq.resolution("score", lv).ok


def test_bad_resolution_arguments() -> None:
    with pytest.raises(ValueError, match="unknown interval method"):
        sq.resolution("wald", 0.99)
    for bad in (0.0, -0.5, 1.5, math.nan, True):
        with pytest.raises(ValueError, match="level"):
            sq.resolution("score", bad)


def test_fold_end_level_is_not_what_the_gate_uses() -> None:
    for t in (1, 52, 1000):
        assert sq.fold_end_level(t, 0.05) < sq.window_level(t, 0.05)
        assert Fraction(sq.fold_end_level(t, 0.05)) >= 1 - 2 * sq.spending(t, 0.05)
    assert sq.needs_box("score")
    assert not sq.needs_box("band") and not sq.needs_box("percentile")


# ---------------------------------------------------------------- the exact box


@settings(max_examples=150, deadline=None)
@given(
    xs=st.lists(st.tuples(st.integers(0, 40), st.integers(1, 40)), min_size=2, max_size=4),
    level=st.sampled_from([0.5, 0.95, 0.999]),
    reduce=st.sampled_from(["gap", "ratio", "min", "max"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_exact_box_projects_the_box(
    xs: list[tuple[int, int]], level: float, reduce: str, seed: int
) -> None:
    """Every rate vector inside the box of Clopper–Pearson intervals has its value inside
    [low, high], and the ends are attained (by a corner, or by equal rates)."""
    props = [pr.Proportion(float(min(x, m)), float(m)) for x, m in xs]
    low, high = sq.exact_box(reduce, [props], level)
    each = 1.0 - pr.sidak(level, len(props))
    box = [pr.clopper_pearson(q.x, q.m, each) for q in props]
    rng = np.random.default_rng(seed)
    pts = rng.uniform([a for a, _ in box], [b for _, b in box], size=(400, len(box)))
    corners = np.array(list(itertools.product(*box)))
    pts = np.vstack([pts, corners])
    # every rate pulled towards the smallest upper end: the rates as close as the box lets
    # them be (all equal when the intervals share a point)
    lo_, hi_ = np.array([a for a, _ in box]), np.array([b for _, b in box])
    pts = np.vstack([pts, np.clip(hi_.min(), lo_, hi_)])

    def value(p: np.ndarray) -> float:
        if reduce == "gap":
            return float(p.max() - p.min())
        if reduce == "ratio":
            return float(p.min() / p.max()) if p.max() > 0 else 1.0
        return float(p.min() if reduce == "min" else p.max())

    vals = [value(p) for p in pts]
    assert low - 1e-12 <= min(vals) and max(vals) <= high + 1e-12
    assert max(vals) >= high - 1e-9  # both ends attained
    assert min(vals) <= low + 1e-9


def test_exact_box_coverage_is_exact_at_small_n() -> None:
    """Each group's Clopper–Pearson interval at the Šidák share covers its rate with
    probability ≥ that share for every p (exact sums), so the box covers ≥ level."""
    level, n = 0.99, 12
    each = 1.0 - pr.sidak(level, 2)
    ivs = [pr.clopper_pearson(float(x), float(n), each) for x in range(n + 1)]
    for p in np.linspace(0.001, 0.999, 181):
        pmf = binom.pmf(np.arange(n + 1), n, p)
        cover = sum(w for w, (a, b) in zip(pmf, ivs, strict=True) if a <= p <= b)
        assert cover >= 1.0 - each - 1e-12


def test_bad_exact_box_arguments() -> None:
    one = [pr.Proportion(3.0, 10.0)]
    with pytest.raises(ValueError, match="two groups"):
        sq.exact_box("gap", [one], 0.95)
    with pytest.raises(ValueError, match="reduce"):
        sq.exact_box("sum", [one * 2], 0.95)
    with pytest.raises(ValueError, match="level"):
        sq.exact_box("gap", [one * 2], 1.0)


def test_confirmed_is_the_hull() -> None:
    assert sq.confirmed((0.2, 0.3), (0.1, 0.35)) == (0.1, 0.35)
    assert sq.confirmed((0.2, 0.3), (None, None)) == (None, None)
    assert sq.confirmed((None, 0.3), (0.1, 0.2)) == (None, None)
    # the hull violates only when both do
    assert sq.sequential_alarm([sq.confirmed((0.11, 0.2), (0.09, 0.3))], 0.1, "<=") is None
    assert sq.sequential_alarm([sq.confirmed((0.11, 0.2), (0.105, 0.3))], 0.1, "<=") == 0


# ---------------------------------------------------------------- the alarm


def test_first_alarm_index() -> None:
    ivs: list[tuple[float | None, float | None]] = [
        (0.05, 0.2),  # straddles
        (None, None),  # no interval / unresolved
        (0.2, None),
        (math.nan, 0.5),
        (0.1, 0.3),  # touches 0.1: satisfies <= 0.1 at its low end
        (0.1000001, 0.3),  # wholly above
        (0.5, 0.6),
    ]
    assert sq.sequential_alarm(ivs, 0.1, "<=") == 5
    assert sq.sequential_alarm(ivs, 0.1, "<") == 4
    assert sq.sequential_alarm(ivs[:5], 0.1, "<=") is None
    assert sq.sequential_alarm([], 0.1, "<=") is None
    assert sq.sequential_alarm([(0.5, 0.7)], 0.8, ">=") == 0
    assert sq.sequential_alarm([(0.5, 0.8)], 0.8, ">=") is None
    assert sq.sequential_alarm([(0.5, 0.8)], 0.8, ">") == 0


def test_alarm_operators_and_thresholds() -> None:
    band = Threshold(low=0.8, high=1.25)
    assert sq.sequential_alarm([(0.9, 1.3), (0.5, 0.79)], band, "between") == 1
    assert sq.sequential_alarm([(1.25, 2.0)], band, "between") is None  # inclusive
    assert sq.sequential_alarm([(0.0, 0.09), (0.0, 0.2)], 0.1, "==") == 0
    assert sq.sequential_alarm([(0.1, 0.1)], 0.1, "!=") is None  # as decide: never shown
    assert sq.sequential_alarm([(2, 3)], 1, "<=") == 0  # int threshold
    assert sq.sequential_alarm([(0.11, 0.2)], (Fraction(1, 10), Fraction(1, 10)), "<=") == 0
    written = Threshold(value=0.1, text="0.1000000000000000000001")
    assert sq.sequential_alarm([(0.2, 0.3)], written, "<=") == 0


def test_bad_alarm_arguments() -> None:
    with pytest.raises(ValueError, match="unknown operator"):
        sq.sequential_alarm([(0.1, 0.2)], 0.1, "=>")
    with pytest.raises(ValueError, match="low > high"):
        sq.sequential_alarm([(0.3, 0.2)], 0.1, "<=")
    with pytest.raises(ValueError, match="threshold"):
        sq.sequential_alarm([(0.3, 0.4)], True, "<=")


def _control(op: Operator, threshold: Threshold) -> Control:
    return Control(
        control_id="c",
        metric_key="demographic_parity_diff",
        metric_key_as_written="demographic_parity_diff",
        threshold=threshold,
        operator=op,
        inputs={"target": "y", "prediction": "p", "dimension": "g"},
    )


_ENDS = st.one_of(
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from([0.1, 0.8, 1.25, 0.0, 0.1 + 1e-17, 0.30000000000000004]),
)


@settings(max_examples=400, deadline=None)
@given(
    a=_ENDS,
    b=_ENDS,
    op=st.sampled_from(list(Operator)),
    value=st.sampled_from([0.1, 0.8, 0.0, 1.25, -0.5]),
    text=st.sampled_from([None, "0.09999999999999999999", "0.1000000000000000000001"]),
)
def test_violates_is_the_projects_ci_lower_fail(
    a: float, b: float, op: Operator, value: float, text: str | None
) -> None:
    """The alarm at one window is exactly the project's ``ci_lower`` fail of that interval
    (decide.violated_throughout), exact thresholds included."""
    low, high = min(a, b), max(a, b)
    if op is Operator.BETWEEN:
        th = Threshold(low=min(value, 0.8), high=max(value, 1.25))
    elif text is not None and value == 0.1:
        th = Threshold(value=value, text=text)
    else:
        th = Threshold(value=value)
    expect = violated_throughout(low, high, _control(op, th))
    assert sq.violates(low, high, th, op.value) is expect
    assert (sq.sequential_alarm([(low, high)], th, op.value) == 0) is expect


# ---------------------------------------------------------------- the horizon error rate

THR = Fraction(1, 10)


def _lower_alarms(x1: int, x2: int, n: int, level: float) -> bool:
    props = [[pr.Proportion(float(x1), float(n)), pr.Proportion(float(x2), float(n))]]
    return sq.violates(*rf.bounds("gap", "one", props, level), THR, "<=")


def _exact_window_alarm(n: int, p1: float, p2: float, level: float) -> float:
    x = np.arange(n + 1)
    w = np.outer(binom.pmf(x, n, p1), binom.pmf(x, n, p2))
    return float(
        sum(w[i, j] for i in range(n + 1) for j in range(n + 1) if _lower_alarms(i, j, n, level))
    )


@pytest.mark.parametrize(("p1", "p2"), [(0.55, 0.45), (0.6, 0.5)])
def test_exact_union_bound_at_the_threshold(p1: float, p2: float) -> None:
    """By enumeration (no Monte Carlo): at a true DP gap exactly at the threshold, each
    window's alarm probability is ≤ α_t (at both levels), so the horizon's is ≤ α spent;
    the same interval at a fixed 95 % level every week (``any`` + ci_lower) spends far
    more than α over 52 weeks."""
    n, alpha = 20, 0.05
    seq_sum = fold_sum = 0.0
    for t in range(1, 53, 3):
        a_t = float(sq.spending(t, alpha))
        one = _exact_window_alarm(n, p1, p2, sq.window_level(t, alpha))
        two = _exact_window_alarm(n, p1, p2, sq.fold_end_level(t, alpha))
        assert one <= two <= a_t
        seq_sum, fold_sum = seq_sum + one, fold_sum + two
    assert fold_sum <= float(sq.spent_exact(52, alpha))
    fixed = _exact_window_alarm(n, p1, p2, 0.95)
    assert 1 - (1 - fixed) ** 52 > alpha  # what spending guards against


def test_simulated_horizon_false_alarms_within_alpha() -> None:
    """52 weekly windows, 1000 rows per group, true DP gap exactly at the threshold (0.55
    vs 0.45, ``<= 0.1``), R = 400: the sequential gate (score interval at window_level,
    confirmed by the exact box) and the score interval alone both keep the horizon
    false-alarm rate ≤ α within 3 Monte Carlo s.e.; ``any`` with the 95 % ci_lower rule is
    far above α."""
    n, alpha, runs, windows = 1000, 0.05, 400, 52
    rng = np.random.default_rng(20261128)
    levels = [sq.window_level(t, alpha) for t in range(1, windows + 1)]
    gate = alone = fixed = 0
    for _ in range(runs):
        xs = rng.binomial(n, [0.55, 0.45], size=(windows, 2))
        scores: list[tuple[float | None, float | None]] = []
        confirmed: list[tuple[float | None, float | None]] = []
        for (a, b), lv in zip(xs, levels, strict=True):
            props = [[pr.Proportion(float(a), n), pr.Proportion(float(b), n)]]
            iv = rf.bounds("gap", "one", props, lv)
            scores.append(iv)
            confirmed.append(sq.confirmed(iv, sq.exact_box("gap", props, lv)))
        alone += sq.sequential_alarm(scores, THR, "<=") is not None
        gate += sq.sequential_alarm(confirmed, THR, "<=") is not None
        for a, b in xs[:26]:  # half the horizon is enough to show it
            if _lower_alarms(int(a), int(b), n, 0.95):
                fixed += 1
                break
    se = math.sqrt(alpha * (1 - alpha) / runs)
    assert gate <= alone
    assert alone / runs <= alpha + 3 * se
    assert fixed / runs > alpha + 3 * se


def _ratio_alarm_at_a_boundary_rate(n: int, m2: int, t: int, box: bool) -> float:
    """P(window t alarms) for ``min ÷ max >= 0.8`` when group 2's true rate is 1 (seen as
    m2/m2 every window) and group 1's is 0.8, exactly (enumerating x1)."""
    level = sq.window_level(t, 0.05)
    total = 0.0
    for x1, w in enumerate(binom.pmf(np.arange(n + 1), n, 0.8)):
        props = [[pr.Proportion(float(x1), float(n)), pr.Proportion(float(m2), float(m2))]]
        iv: tuple[float | None, float | None] = rf.bounds("ratio", "one", props, level)
        if box:
            iv = sq.confirmed(iv, sq.exact_box("ratio", props, level))
        total += w * (sq.sequential_alarm([iv], Fraction(4, 5), ">=") == 0)
    return total


@pytest.mark.parametrize(("n", "m2", "t"), [(30, 60, 1000), (44, 88, 52), (37, 74, 200)])
def test_ratio_alarms_need_the_exact_box(n: int, m2: int, t: int) -> None:
    """Koopman's score interval alone alarms more often than α_t at a boundary rate
    (the gate would be invalid); confirmed by the exact box, it stays within α_t."""
    a_t = float(sq.spending(t, 0.05))
    assert _ratio_alarm_at_a_boundary_rate(n, m2, t, box=False) > 1.5 * a_t
    assert _ratio_alarm_at_a_boundary_rate(n, m2, t, box=True) <= a_t


def _gap_alarm_at_a_small_rate(n1: int, n2: int, p1: float, t: int, box: bool) -> float:
    """P(window t alarms) for ``gap <= p1`` when group 1's true rate is p1 and group 2's
    is 0 (seen as 0 of n2 every window), exactly (enumerating x1)."""
    level, thr = sq.window_level(t, 0.05), Fraction(repr(p1))
    total = 0.0
    for x1, w in enumerate(binom.pmf(np.arange(n1 + 1), n1, p1)):
        props = [[pr.Proportion(float(x1), float(n1)), pr.Proportion(0.0, float(n2))]]
        iv: tuple[float | None, float | None] = rf.bounds("gap", "one", props, level)
        if box:
            iv = sq.confirmed(iv, sq.exact_box("gap", props, level))
        total += w * (sq.sequential_alarm([iv], thr, "<=") == 0)
    return total


@pytest.mark.parametrize(("n1", "n2", "p1", "t"), [(50, 400, 0.05, 52), (50, 400, 0.02, 1000)])
def test_gap_alarms_need_the_exact_box_at_small_rates(n1: int, n2: int, p1: float, t: int) -> None:
    """Newcombe's interval alone alarms more often than α_t at a small rate (Wilson's
    lower limit of a few events is too high at z ≈ 3.8); confirmed, within α_t."""
    a_t = float(sq.spending(t, 0.05))
    assert _gap_alarm_at_a_small_rate(n1, n2, p1, t, box=False) > 1.5 * a_t
    assert _gap_alarm_at_a_small_rate(n1, n2, p1, t, box=True) <= a_t


def test_one_rate_alarms_need_the_exact_box() -> None:
    """``max <= 0.02`` with one group at exactly 0.02 and 20 rows, window 1000: Wilson's
    lower limit of a few events is far too high at z ≈ 4.5 — the score interval alone
    alarms over 100 α_t; confirmed by the exact Clopper–Pearson interval, within α_t."""
    t, n, p = 1000, 20, 0.02
    level, thr, a_t = sq.window_level(t, 0.05), Fraction(1, 50), float(sq.spending(t, 0.05))
    alone = boxed = 0.0
    for x, w in enumerate(binom.pmf(np.arange(n + 1), n, p)):
        props = [[pr.Proportion(float(x), float(n))]]
        iv: tuple[float | None, float | None] = rf.bounds("max", "one", props, level)
        alone += w * sq.violates(*rf.bounds("max", "one", props, level), thr, "<=")
        iv = sq.confirmed(iv, sq.exact_box("max", props, level))
        boxed += w * (sq.sequential_alarm([iv], thr, "<=") == 0)
    assert alone > 100 * a_t
    assert boxed <= a_t
