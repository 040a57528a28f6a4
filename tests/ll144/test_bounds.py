"""LL144 allocation bounds (fairpolicy.metrics.ll144) against brute-force enumeration."""

from __future__ import annotations

import itertools
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.metrics.ll144 import Category, all_ratios, rate_bounds, ratio_bounds


def _compositions(total: int, parts: int):
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first, *rest)


def allocations(k: int, unknown: int, unknown_selected: int | None):
    """Every allocation ((k_c, j_c) per category) of the unknowns."""
    totals = [unknown_selected] if unknown_selected is not None else range(unknown + 1)
    for su in totals:
        for sel in _compositions(su, k):
            for unsel in _compositions(unknown - su, k):
                yield [(s + u, s) for s, u in zip(sel, unsel, strict=True)]


@st.composite
def tables(draw):
    k = draw(st.integers(2, 4))
    cats = []
    for _ in range(k):
        n = draw(st.integers(1, 6))
        cats.append(Category(n, draw(st.integers(0, n)), draw(st.booleans())))
    if sum(c.kept for c in cats) < 2:
        cats[0] = Category(cats[0].n, cats[0].selected, True)
        cats[1] = Category(cats[1].n, cats[1].selected, True)
    unknown = draw(st.integers(0, 4 if k < 4 else 3))
    su = draw(st.one_of(st.none(), st.integers(0, unknown)))
    return cats, unknown, su


@settings(max_examples=3000, deadline=None)
@given(tables())
def test_bounds_equal_brute_force(case) -> None:
    cats, unknown, su = case
    rates: list[list[Fraction]] = [[] for _ in cats]
    ratios: list[list[Fraction]] = [[] for _ in cats]
    for alloc in allocations(len(cats), unknown, su):
        for i, (c, (k, j)) in enumerate(zip(cats, alloc, strict=True)):
            rates[i].append(Fraction(c.selected + j, c.n + k))
        for i, r in enumerate(all_ratios(cats, alloc)):
            if r is not None:
                ratios[i].append(r)
    for i, c in enumerate(cats):
        assert rate_bounds(c, unknown, su) == (min(rates[i]), max(rates[i]))
        got = ratio_bounds(cats, i, unknown, su)
        want = (min(ratios[i]), max(ratios[i])) if ratios[i] else None
        assert got == want, (cats, unknown, su, i)


@given(st.integers(1, 50), st.data())
def test_rate_closed_form_when_the_unknowns_selection_is_unknown(n: int, data) -> None:
    s = data.draw(st.integers(0, n))
    u = data.draw(st.integers(0, 50))
    lo, hi = rate_bounds(Category(n, s, True), u, None)
    assert (lo, hi) == (Fraction(s, n + u), Fraction(s + u, n + u))
    # k = 0 (no unknown in the category) lies inside: S/n is never an extreme beyond them
    assert lo <= Fraction(s, n) <= hi
