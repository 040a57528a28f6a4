"""The exact greatest impact ratios of one level whose 2 % kept set moves
(fairpolicy.metrics.ll144.greatest_ratios), against brute force over every allocation.

The oracle re-derives the kept set of every allocation (a category is kept iff it is
always kept, or it can cross ``need`` and holds at least ``need`` rows after the
allocation) in exact fractions, independently of the module under test."""

from __future__ import annotations

import math
from fractions import Fraction
from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.metrics import ll144_enum
from fairpolicy.metrics.ll144 import Greatest, greatest_allocation, greatest_ratios
from tests.ll144.test_bounds import allocations
from tests.ll144.test_sharp_bounds import _oracle, _run


def _ratios(n, s, kept, cross, need, add_n, add_s):
    nn = [a + b for a, b in zip(n, add_n, strict=True)]
    ss = [a + b for a, b in zip(s, add_s, strict=True)]
    k = [al or (cr and x >= need) for al, cr, x in zip(kept, cross, nn, strict=True)]
    rates = [Fraction(a, b) for a, b in zip(ss, nn, strict=True)]
    kr = [r for r, kk in zip(rates, k, strict=True) if kk]
    if len(kr) < 2 or max(kr) == 0:
        return None
    return [r / max(kr) for r in rates]


def _brute_max(n, s, kept, cross, need, u, su):
    best: list[Fraction | None] = [None] * len(n)
    for alloc in allocations(len(n), u, su):
        r = _ratios(n, s, kept, cross, need, [k for k, _ in alloc], [j for _, j in alloc])
        for i, x in enumerate(r or []):
            cur = best[i]
            best[i] = x if cur is None or x > cur else cur
    return best


@st.composite
def levels(draw):
    cats = draw(st.integers(2, 4))
    n = [draw(st.integers(1, 7)) for _ in range(cats)]
    s = [draw(st.integers(0, x)) for x in n]
    u = draw(st.integers(0, 5 if cats < 4 else 3))
    su = draw(st.one_of(st.none(), st.integers(0, u)))
    need = draw(st.integers(1, 9))
    kept = [x >= need for x in n]
    cross = [x < need <= x + u for x in n]
    return n, s, kept, cross, need, u, su


@settings(max_examples=2000, deadline=None)
@given(levels())
def test_greatest_ratios_equal_brute_force_and_are_attained(case) -> None:
    """Where a greatest ratio is claimed attained it equals the brute-force maximum and
    the allocation it names gives exactly that ratio; elsewhere it is a valid bound. A
    category is left uncovered (None) only without two always-kept categories, or when
    no always-kept other one has a selected applicant and c is not an always-kept category
    that can have one."""
    n, s, kept, cross, need, u, su = case
    want = _brute_max(*case)
    got = greatest_ratios(*case)
    for c, g in enumerate(got):
        pos = any(kept[d] and s[d] > 0 for d in range(len(n)) if d != c)
        positive = kept[c] and s[c] + (u if su is None else su) > 0
        assert (g is None) == (sum(kept) < 2 or not (pos or positive)), (case, c)
        if g is None:
            continue
        assert want[c] is not None and g.value >= want[c], (case, c, g, want[c])
        add_n, add_s = greatest_allocation(*case, c, g)
        if not g.attained:
            # only a crossable category, kept out, with more selected unknowns than fit
            # below min_share anywhere else: the one case the proof leaves open
            assert cross[c] and not kept[c] and su is not None
            assert not any(not kept[d] and not cross[d] for d in range(len(n)) if d != c)
            continue
        assert g.value == want[c], (case, c, g, want[c])
        assert sum(add_n) == u and all(0 <= j <= k for j, k in zip(add_s, add_n, strict=True))
        assert su is None or sum(add_s) == su
        r = _ratios(n, s, kept, cross, need, add_n, add_s)
        assert r is not None and r[c] == g.value, (case, c, g, add_n, add_s)


def test_a_small_category_kept_out_has_a_ratio_above_one() -> None:
    """C (1 of 1; need 2 rows) stays out only with no unknown: its rate stays 1, and the
    two unknowns, unselected (S_U free), lower B to 8/19: the greatest ratio is 19/8.
    The fixed-K reading (both unknowns to C, selected: 3/3 ÷ 8/17 = 17/8 < 19/8, but C is
    then kept and its ratio capped at 1) is not how the maximum arises."""
    n, s, need = [20, 17, 1], [5, 8, 1], 2
    kept, cross = [True, True, False], [False, False, True]
    got = greatest_ratios(n, s, kept, cross, need, 2, None)[2]
    assert got is not None and got.attained
    assert got.value == Fraction(19, 8) == _brute_max(n, s, kept, cross, need, 2, None)[2]
    assert (got.to_c_selected, got.to_c_unselected, got.greedy_units) == (0, 0, 2)
    # observed S_U = 2: C stays out only with no unknown, so both selected unknowns join
    # A or B. The bound 1 ÷ 8/17 is attained: they go to A (7/22), B stays the comparator
    obs = greatest_ratios(n, s, kept, cross, need, 2, 2)[2]
    assert obs is not None and obs.attained
    assert obs.value == _brute_max(n, s, kept, cross, need, 2, 2)[2] == Fraction(17, 8)
    assert greatest_allocation(n, s, kept, cross, need, 2, 2, 2, obs) == ([2, 0, 0], [2, 0, 0])


def test_a_bound_left_open_is_valid_and_flagged() -> None:
    """Observed S_U = 2 of 4: the crossable C (1 row, need 2) stays out only with no
    unknown, and no category can hold the 2 selected unknowns out of the kept set: they
    must join A or B and raise the comparator. Its least is then at least m(2) = 4/9 (the
    greedy's unselected unknowns) and at least the pooled rate of A and B with them,
    8/17: the bound 1 ÷ 8/17 = 17/8. The true greatest is 2 (the comparator 1/2), so the
    bound is valid but not attained, and flagged."""
    n, s, need = [6, 7, 1], [2, 4, 1], 2
    kept, cross = [True, True, False], [False, False, True]
    g = greatest_ratios(n, s, kept, cross, need, 4, 2)[2]
    want = _brute_max(n, s, kept, cross, need, 4, 2)[2]
    assert g is not None and not g.attained
    assert (g.value, want) == (Fraction(17, 8), Fraction(2))
    # without the pooled rate the bound would be 1 ÷ 4/9 = 9/4
    assert g.value < Fraction(9, 4)


def test_a_moving_column_above_the_cap_is_now_sharp() -> None:
    """The single moving column of test_sharp_bounds (C crosses min_share with the
    unknowns): above the cap both ends of every ratio are now attained."""
    cells = {("A",): (20, 5), ("B",): (17, 8), ("C",): (1, 1)}
    case = (cells, 2, 1, "highest_above_min_share", "category", Fraction(1, 20))
    per, _, _ = _oracle(*case)
    with patch.object(ll144_enum, "ENUMERATION_CAP", 0):
        levels, info = _run(*case)
    assert info["method"].startswith("each level on its own")
    assert levels[0]["bounds_sharp"] and info["sharp"] and "bounds_note" not in levels[0]
    for c in levels[0]["categories"]:
        lo, hi = per[0][c["category"]]
        assert (c["ratio_low"], c["ratio_high"]) == (float(lo), float(hi))


def test_greatest_is_a_frozen_record() -> None:
    g = Greatest(Fraction(1), True, 0, 0, 0)
    assert g.value == 1 and math.isfinite(float(g.value))
