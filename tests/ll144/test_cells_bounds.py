"""The intersection under the category reading when a column category can cross
min_share (fairpolicy.metrics.ll144_cells), against brute force over every allocation.

The least ratio of every cell is exact (two columns); the greatest is a proven bound,
flagged attained when a named allocation reaches it. Each named allocation is evaluated
here independently (the kept sets re-derived from the column shares)."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.metrics.ll144 import Category, _fixed, _tops, layout_of
from fairpolicy.metrics.ll144_cells import greatest_cells, least_cells, possible_cells
from tests.ll144.test_sharp_bounds import _levels, _oracle


def _ratio(cells, names, add, share, total, target):
    """The cell ``target``'s ratio after ``add`` (per cell, in ``names`` order)."""
    moved = {k: (cells[k][0] + a, cells[k][1] + j) for k, a, j in zip(names, *add, strict=True)}
    col_n: list[dict[str, int]] = [{}, {}]
    for (a, b), (n, _) in moved.items():
        col_n[0][a] = col_n[0].get(a, 0) + n
        col_n[1][b] = col_n[1].get(b, 0) + n
    kept = {k: all(Fraction(col_n[c][k[c]], total) >= share for c in range(2)) for k in moved}
    kr = [Fraction(s, n) for k, (n, s) in moved.items() if kept[k]]
    if len(kr) < 2 or max(kr) == 0:
        return None
    n, s = moved[target]
    return Fraction(s, n) / max(kr)


@st.composite
def tables(draw):
    names = [(a, b) for a in "FM" for b in "XYZ"[: draw(st.integers(2, 3))]]
    cells = {}
    for k in names:
        n = draw(st.integers(1, 7))
        cells[k] = (n, draw(st.integers(0, n)))
    u = draw(st.integers(1, 3))
    su = draw(st.one_of(st.none(), st.integers(0, u)))
    share = Fraction(draw(st.integers(1, 9)), 20)
    return cells, u, su, share


@settings(max_examples=600, deadline=None)
@given(tables())
def test_cell_bounds_equal_brute_force_and_name_their_allocations(case) -> None:
    cells, u, su, share = case
    total = sum(n for n, _ in cells.values()) + u
    levels = _levels(cells)
    lay = layout_of(levels, "highest_above_min_share", "category", share, total)
    assert lay is not None
    li = len(levels) - 1
    if not lay.moves(li, u) or sum(lay.kept_now(li)) < 2:
        return
    per, _, _ = _oracle(cells, u, su, "highest_above_min_share", "category", share)
    names = sorted(cells)
    n, s = list(lay.cell_n), list(lay.cell_s)
    k1 = possible_cells(lay, u)
    lows = _fixed([Category(a, b, k) for a, b, k in zip(n, s, k1, strict=True)], u, su)
    low_ends = least_cells(lay, u, su, [None if r is None else r[0] for r in lows])
    high_ends = greatest_cells(lay, u, su, _tops)
    for i, key in enumerate(names):
        want = per[-1].get(" & ".join(key))
        lo, hi = low_ends[i], high_ends[i]
        if want is None:  # no allocation compares the cell
            assert lo is None or lo.at is None
            continue
        # the least: exact and attained, always (two columns)
        assert lo is not None and lo.attained and lo.bound == want[0], (case, key, lo, want)
        assert lo.at is not None and _ratio(cells, names, lo.at, share, total, key) == want[0]
        if hi is None:
            continue
        assert hi.bound >= want[1], (case, key, hi, want)  # valid
        if hi.attained:
            assert hi.bound == want[1], (case, key, hi, want)
            assert hi.at is not None
            assert _ratio(cells, names, hi.at, share, total, key) == want[1]
