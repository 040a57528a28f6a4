"""LL144 bounds of the intersection under the ``category`` reading when a column category
can cross ``min_share`` (docs/ll144.md, "The intersection when a column category moves").

A cell is kept iff each of its column categories is, and a column category's kept status
depends on the unknowns placed in *any* of its cells. The bounds of
``fairpolicy.metrics.ll144`` are valid here (the kept cells lie between K₀, the cells whose
categories are all always kept, and K₁, those whose categories can all be kept). This
module names allocations that *attain* them: for every cell, a few candidate allocations of
the unknowns to the finest cells are evaluated exactly, the kept sets re-derived by
:meth:`~fairpolicy.metrics.ll144_enum.Layout.exact`. When the best candidate equals the
proven bound, the bound is attained (sharp); otherwise it stays a valid bound, flagged.
For the greatest ratio a tighter proven bound than K₀'s fixed one is used (the one of
``greatest_ratios``, with c's room below ``need`` taken over its column categories).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from fairpolicy.metrics.ll144_enum import Layout

#: the most (candidates × cells) numbers one cell's candidate table may hold
MAX_TABLE = 2_000_000

#: m(A) for A = 0…units of categories (n, s): numerators and denominators
Tops = Callable[[Sequence[int], Sequence[int], int], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class End:
    """One end of a cell's ratio: the proven bound, whether an allocation (``at``: add_n,
    add_s per finest cell) attains it."""

    bound: Fraction
    attained: bool
    at: tuple[list[int], list[int]] | None


def _sequence(n: Sequence[int], s: Sequence[int], units: int) -> np.ndarray:
    """The greedy's picks (index per unit): each unselected unknown to the category with
    the currently highest rate (floats order it; the allocations are evaluated exactly)."""
    picks = np.zeros(units, dtype=np.int64)
    add = [0] * len(n)
    heap = [(-s[i] / n[i], i) for i in range(len(n))]
    heapq.heapify(heap)
    for k in range(units):
        _, i = heapq.heappop(heap)
        add[i] += 1
        picks[k] = i
        heapq.heappush(heap, (-s[i] / (n[i] + add[i]), i))
    return picks


def _prefix(picks: np.ndarray, parts: int, counts: np.ndarray) -> np.ndarray:
    """Rows: the greedy's placement after ``counts[r]`` units (per category)."""
    cum = np.zeros((len(picks) + 1, parts), dtype=np.int64)
    if len(picks):
        np.add.at(cum[1:], (np.arange(len(picks)), picks), 1)
        cum = np.cumsum(cum, axis=0)
    out: np.ndarray = cum[counts]
    return out


def _best(
    lay: Layout,
    li: int,
    c: int,
    add_n: np.ndarray,
    add_s: np.ndarray,
    lowest: bool,
) -> tuple[Fraction, tuple[list[int], list[int]]] | None:
    """The exact extreme of cell c's ratio over the candidate allocations (rows): floats
    locate it, exact fractions decide among those within 1e-12."""
    if not len(add_n):
        return None
    ratios, _ = lay.batch(add_n, add_s)
    col = ratios[li][:, c]
    ok = np.isfinite(col)
    if not ok.any():
        return None
    best = float(col[ok].min() if lowest else col[ok].max())
    near = np.flatnonzero(ok & (np.abs(col - best) <= 1e-12 * max(abs(best), 1e-300)))
    found: list[tuple[Fraction, tuple[list[int], list[int]]]] = []
    for i in near[:64].tolist():
        at = (add_n[i].tolist(), add_s[i].tolist())
        x = lay.exact(*at)[0][li][c]
        if x is not None:
            found.append((x, at))
    if not found:
        return None
    return (min if lowest else max)(found, key=lambda t: t[0])


def _largest(
    sel: int,
    rows: int,
    terms: Sequence[tuple[int, int, bool]],
    tops_s: np.ndarray,
    tops_d: np.ndarray,
) -> Fraction:
    """max over ``terms`` (j, A, capped) of f(j)/m(A), capped at 1 where flagged: floats
    locate it, exact fractions decide."""
    j = np.array([x[0] for x in terms], dtype=np.int64)
    a = np.array([x[1] for x in terms], dtype=np.int64)
    cap = np.array([x[2] for x in terms], dtype=bool)
    v = ((sel + j) / (rows + j)) / (tops_s[a] / tops_d[a])
    v = np.where(cap, np.minimum(v, 1.0), v)
    best = float(v.max())
    near = np.flatnonzero(v >= best - 1e-12 * max(best, 1e-300))[:64].tolist()
    found = []
    for i in near:
        x = Fraction(sel + int(j[i]), rows + int(j[i])) / Fraction(
            int(tops_s[a[i]]), int(tops_d[a[i]])
        )
        found.append(min(x, Fraction(1)) if cap[i] else x)
    return max(found)


def possible_cells(lay: Layout, unknown: int) -> list[bool]:
    """The cells some allocation can keep (each column category always kept or
    crossable): every allocation's kept cells lie in this set K₁."""
    status = _status(lay, unknown)
    return [
        all(
            status[cj][0][int(lay.maps[cj][i])] or status[cj][1][int(lay.maps[cj][i])]
            for cj in range(lay.columns)
        )
        for i in range(len(lay.cell_n))
    ]


def _status(lay: Layout, unknown: int) -> list[tuple[list[bool], list[bool]]]:
    """Per column: (always kept, crossable) per category."""
    out = []
    for cj in range(lay.columns):
        n, _ = lay.level_counts(cj)
        out.append(
            ([x >= lay.need for x in n], [x < lay.need <= x + unknown for x in n]),
        )
    return out


def greatest_cells(
    lay: Layout, unknown: int, unknown_selected: int | None, tops: Tops
) -> list[End | None]:
    """For every cell of the intersection (the last level), its greatest ratio's proven
    bound and whether a candidate allocation attains it (None: not covered — fewer than
    two cells always kept, or none of them but c with a selected applicant, or too many
    candidates)."""
    li = len(lay.maps) - 1
    n, s = list(lay.cell_n), list(lay.cell_s)
    cells, u, su = len(n), unknown, unknown_selected
    status = _status(lay, u)
    cats = [[(cj, int(lay.maps[cj][i])) for cj in range(lay.columns)] for i in range(cells)]

    def is_always(cat: tuple[int, int]) -> bool:
        return status[cat[0]][0][cat[1]]

    def is_cross(cat: tuple[int, int]) -> bool:
        return status[cat[0]][1][cat[1]]

    def room(cat: tuple[int, int]) -> int:
        cn, _ = lay.level_counts(cat[0])
        return lay.need - cn[cat[1]] - 1

    k0 = [all(is_always(x) for x in cats[i]) for i in range(cells)]
    # cells where units change no column category's status: some category never kept,
    # the others always kept or never kept
    sinks = [i for i in range(cells) if not k0[i] and not any(is_cross(x) for x in cats[i])]
    out: list[End | None] = []
    units = u if su is None else u - su
    for c in range(cells):
        idx = [d for d in range(cells) if d != c and k0[d]]
        if sum(k0) < 2 or not any(s[d] > 0 for d in idx) or (u + 1) * cells > MAX_TABLE:
            out.append(None)
            continue
        tops_s, tops_d = tops([n[d] for d in idx], [s[d] for d in idx], units)

        cr = [x for x in cats[c] if is_cross(x)]
        never = any(not is_always(x) and not is_cross(x) for x in cats[c])
        can_in = not never
        can_out = not k0[c]
        big_room = u if never else max((room(x) for x in cr), default=u)
        safe_room = min((room(x) for x in cr), default=u)
        # the proven bound (docs/ll144.md): out — c keeps at most big_room unknowns;
        # in — capped at 1
        terms: list[tuple[int, int, bool]] = []  # (selected to c, greedy units, capped)
        if su is None:
            if can_out:
                terms += [(j, u - j, False) for j in range(min(u, big_room) + 1)]
            if can_in:
                terms += [(j, u - j, True) for j in range(u + 1)]
        else:
            if can_out:
                terms.append((min(su, big_room), units, False))
            if can_in:
                terms.append((su, units, True))
        bound = _largest(s[c], n[c], terms, tops_s, tops_d)
        # candidate allocations: c takes b selected (and e unselected), the greedy places
        # A unselected ones among the always-kept others, other selected ones go to sinks
        # (else where they raise a rate least)
        picks = _sequence([n[d] for d in idx], [s[d] for d in idx], units)
        rows: list[tuple[int, int, int]] = []
        if su is None:
            top_b = u if can_in else min(u, safe_room)
            rows = [(b, 0, u - b) for b in range(top_b + 1)]
        else:
            rows.append((min(su, safe_room) if can_out else su, 0, units))
            if can_in and cr:
                e = max(0, max(room(x) + 1 for x in cr) - su)
                if e <= units:
                    rows.append((su, e, units - e))
            elif can_in:
                rows.append((su, 0, units))
        add_n = np.zeros((len(rows), cells), dtype=np.int64)
        add_s = np.zeros_like(add_n)
        placed = _prefix(picks, len(idx), np.array([a for _, _, a in rows], dtype=np.int64))
        for r, (b, e, _) in enumerate(rows):
            add_n[r, c] += b + e
            add_s[r, c] += b
            add_n[r, idx] += placed[r]
            left = 0 if su is None else su - b
            for d in sinks:
                if d != c and left:
                    add_n[r, d] += left
                    add_s[r, d] += left
                    left = 0
            if left:  # they do not fit out of K: each where it raises a rate least
                heap = [
                    ((s[d] + int(add_s[r, d]) + 1) / (n[d] + int(add_n[r, d]) + 1), d) for d in idx
                ]
                heapq.heapify(heap)
                for _ in range(left):
                    _, d = heapq.heappop(heap)
                    add_n[r, d] += 1
                    add_s[r, d] += 1
                    rate = (s[d] + int(add_s[r, d]) + 1) / (n[d] + int(add_n[r, d]) + 1)
                    heapq.heappush(heap, (rate, d))
        got = _best(lay, li, c, add_n, add_s, lowest=False)
        if got is None:
            out.append(End(bound, False, None))
            continue
        if got[0] > bound:  # cannot happen (docs/ll144.md); never report a wrong bound
            out.append(None)
            continue
        out.append(End(bound, got[0] == bound, got[1]))
    return out


def least_cells(
    lay: Layout, unknown: int, unknown_selected: int | None, lows: Sequence[Fraction | None]
) -> list[End | None]:
    """The least ratio of every cell of the intersection under the category reading.

    With two columns (docs/ll144.md proves it), the least is the least over these
    allocations, so it is exact and attained (``End.bound`` is it, ``attained`` true): for
    each other cell e whose categories can all be kept, x selected unknowns (S_U, or each
    0…U when free) and i unselected ones to e; to each crossable category of e that c is
    not in, the fewest unselected ones (on one other cell of it) that bring it to ``need``;
    every other unselected one to c — and every unknown to c. With more columns, or more
    candidates than :data:`MAX_TABLE` allows, the candidates only show whether the fixed-K₁
    bound ``lows[c]`` is attained."""
    li = len(lay.maps) - 1
    n = list(lay.cell_n)
    cells, u, su = len(n), unknown, unknown_selected
    status = _status(lay, u)
    col_n = [lay.level_counts(cj)[0] for cj in range(lay.columns)]
    cats = [[(cj, int(lay.maps[cj][i])) for cj in range(lay.columns)] for i in range(cells)]
    k1 = [all(status[cj][0][k] or status[cj][1][k] for cj, k in cats[i]) for i in range(cells)]
    size = (u + 1) * (u + 2) // 2 if su is None else u - su + 1
    exact = lay.columns == 2 and size * cells * cells <= MAX_TABLE
    gx = gi = pool = np.zeros(0, dtype=np.int64)
    if exact:  # the (x, i) grid: x selected and i unselected unknowns to the comparator
        if su is None:
            gx = np.repeat(np.arange(u + 1), np.arange(u + 1, 0, -1))
            gi = np.concatenate([np.arange(u - x + 1) for x in range(u + 1)])
        else:
            gx = np.full(size, su, dtype=np.int64)
            gi = np.arange(size, dtype=np.int64)
        pool = (u - gx if su is None else np.full(size, u - su)) - gi
    out: list[End | None] = []
    for c in range(cells):
        low = lows[c]
        if low is None:
            out.append(None)
            continue
        blocks_n, blocks_s = [], []
        for e in range(cells):
            if e == c or not k1[e]:
                continue
            if exact:
                block = _through(lay, cats, col_n, status, c, e, gx, gi, pool)
            else:
                block = _topped(lay, cats, col_n, status, c, e, u, su)
            if block is not None:
                blocks_n.append(block[0])
                blocks_s.append(block[1])
        whole_n = np.zeros((1, cells), dtype=np.int64)
        whole_n[0, c] = u
        whole_s = np.zeros_like(whole_n)
        whole_s[0, c] = u if su is None else su
        blocks_n.append(whole_n)
        blocks_s.append(whole_s)
        got = _best(lay, li, c, np.vstack(blocks_n), np.vstack(blocks_s), lowest=True)
        if got is None:
            out.append(End(low, False, None))
            continue
        if got[0] < low:  # cannot happen (K₁'s bound is valid); keep to what is proven
            out.append(None)
            continue
        out.append(End(got[0], True, got[1]) if exact else End(low, got[0] == low, got[1]))
    return out


def _through(
    lay: Layout,
    cats: list[list[tuple[int, int]]],
    col_n: list[list[int]],
    status: list[tuple[list[bool], list[bool]]],
    c: int,
    e: int,
    gx: np.ndarray,
    gi: np.ndarray,
    pool: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The two-column candidates through comparator e (rows over the (x, i) grid)."""
    cells = len(lay.cell_n)
    a_c = pool.copy()
    add_n = np.zeros((len(gx), cells), dtype=np.int64)
    add_s = np.zeros_like(add_n)
    add_n[:, e] = gx + gi
    add_s[:, e] = gx
    ok = pool >= 0
    shared: list[int] = []  # crossable categories of e that c is in: checked last
    for cj, k in cats[e]:
        if status[cj][0][k]:
            continue
        lack = lay.need - col_n[cj][k]
        if cats[c][cj] == (cj, k):
            shared.append(lack)
            continue
        waste = np.maximum(0, lack - gx - gi)
        spots = [d for d in range(cells) if cats[d][cj] == (cj, k) and d not in (c, e)]
        if spots:
            add_n[:, spots[0]] += waste
        else:
            ok &= waste == 0
        a_c = a_c - waste
    ok &= a_c >= 0
    for lack in shared:  # the category holds e's and c's unknowns
        ok &= gx + gi + a_c >= lack
    if not ok.any():
        return None
    add_n[:, c] += a_c
    return add_n[ok], add_s[ok]


def _topped(
    lay: Layout,
    cats: list[list[tuple[int, int]]],
    col_n: list[list[int]],
    status: list[tuple[list[bool], list[bool]]],
    c: int,
    e: int,
    u: int,
    su: int | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Fewer candidates (any number of columns): e takes x selected and the fewest
    unselected unknowns that bring its crossable categories in on its own rows."""
    cells = len(lay.cell_n)
    xs = np.arange(u + 1) if su is None else np.array([su])
    lack = max([0] + [lay.need - col_n[cj][k] for cj, k in cats[e] if not status[cj][0][k]])
    extra = np.maximum(0, lack - xs)
    left = (u - su - extra) if su is not None else (u - xs - extra)
    ok = left >= 0
    if not ok.any():
        return None
    an = np.zeros((int(ok.sum()), cells), dtype=np.int64)
    as_ = np.zeros_like(an)
    an[:, e] = (xs + extra)[ok]
    as_[:, e] = xs[ok]
    an[:, c] += left[ok]
    return an, as_
