"""NYC Local Law 144: sharp bounds of selection rates and impact ratios when some
applicants' category is unknown (docs/ll144.md has the proofs).

One level (a column, or the intersection) has categories c with n_c applicants, S_c of
them selected, and a fixed set K of categories kept for the comparator. U applicants have
no category; S_U of them were selected (``observed``) or S_U is unknown too (``free``:
any 0..U). An *allocation* gives each category c some k_c of the unknowns (Σ k_c = U),
j_c ≤ k_c of them selected (Σ j_c = S_U when S_U is observed). Then

    r_c = (S_c + j_c) / (n_c + k_c),    IR_c = r_c / max_{d ∈ K} r_d.

:func:`rate_bounds` and :func:`ratio_bounds` return, for every category, min and max of
r_c and of IR_c over every allocation (where IR_c is defined), as exact fractions, for a
*fixed* kept set K. The shares are of all rows, unknowns included, so an allocation can
bring a kept-out category across ``min_share`` and change K and the comparator:
:func:`add_bounds` re-derives K per allocation — by visiting every allocation
(``ll144_enum``) when there are few enough, else level by level (exact where K cannot
move; on a single level where it can, the least ratios by ``ll144_enum.least_ratios`` and
the greatest by :func:`greatest_ratios`; on the intersection under the category reading,
attained where a named allocation of ``ll144_cells`` reaches them; elsewhere valid but
flagged ``sharp: false``). Rates and ratios are those of whole applicants: the bounds need
whole counts.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from fairpolicy.metrics.ll144_cells import End, greatest_cells, least_cells, possible_cells
from fairpolicy.metrics.ll144_enum import (
    Layout,
    count_allocations,
    enumerate_bounds,
    least_ratios,
    single_level,
)

#: the most candidate allocations (C²·(U+1) when the unknowns' selection is free) the
#: exact least ratios of a level visit; above it the low ends are valid bounds
LEAST_WORK = 4_000_000
#: above this many unknown rows the bounds are not computed (the greedy allocation is
#: O(U log K) per category in Python)
MAX_UNKNOWN = 200_000


@dataclass(frozen=True)
class Category:
    n: int
    selected: int
    kept: bool


def rate_bounds(
    c: Category, unknown: int, unknown_selected: int | None
) -> tuple[Fraction, Fraction]:
    """min and max of r_c = (S + j) / (n + k) over 0 ≤ j ≤ k ≤ U (``unknown_selected``
    None), or over j ≤ S_U and k − j ≤ U − S_U (observed S_U).

    (S + j)/(n + j) rises with j and S/(n + k) falls with k (S ≤ n), so the extremes put
    every selected unknown (every unknown, when S_U is free) into c, or every unselected
    one: max = (S + S_U)/(n + S_U), min = S/(n + U − S_U); free: (S + U)/(n + U) and
    S/(n + U). k = 0 (no unknown in c) gives S/n, which lies between them."""
    s, n = c.selected, c.n
    if unknown_selected is None:
        return Fraction(s, n + unknown), Fraction(s + unknown, n + unknown)
    return Fraction(s, n + unknown - unknown_selected), Fraction(
        s + unknown_selected, n + unknown_selected
    )


def _fr(s: int, n: int) -> Fraction:
    return Fraction(s, n)


def _greedy_tops(cats: Sequence[Category], units: int) -> tuple[np.ndarray, np.ndarray]:
    """m(A) for A = 0..units as (numerators, denominators): the least possible highest rate
    of ``cats`` after A unselected applicants are added to them. Greedy: each goes to the
    category with the currently highest rate; the optimal allocations are nested in A
    (docs/ll144.md), so the greedy is optimal for every A at once. Floats order the heap;
    near ties are settled exactly."""
    tops_s = np.zeros(units + 1, dtype=np.int64)
    tops_d = np.ones(units + 1, dtype=np.int64)
    if not cats:
        return tops_s, tops_d
    add = [0] * len(cats)
    heap = [(-c.selected / c.n, i) for i, c in enumerate(cats)]
    heapq.heapify(heap)

    def record(step: int) -> None:
        best = -heap[0][0]
        i = heap[0][1]
        if len(heap) > 1 and -min(heap[1:3])[0] >= best * (1 - 1e-12):  # a near tie
            cand = [j for key, j in heap if -key >= best * (1 - 1e-12)]
            i = max(cand, key=lambda j: Fraction(cats[j].selected, cats[j].n + add[j]))
        tops_s[step], tops_d[step] = cats[i].selected, cats[i].n + add[i]

    record(0)
    for step in range(1, units + 1):
        _, i = heapq.heappop(heap)
        add[i] += 1
        heapq.heappush(heap, (-cats[i].selected / (cats[i].n + add[i]), i))
        record(step)
    return tops_s, tops_d


def _tops(n: Sequence[int], s: Sequence[int], units: int) -> tuple[np.ndarray, np.ndarray]:
    """m(A), A = 0…units, of always-kept categories (n, s): :func:`_greedy_tops`."""
    return _greedy_tops([Category(a, b, True) for a, b in zip(n, s, strict=True)], units)


def _pick(
    values: np.ndarray, exact: Callable[[int], Fraction | None], lowest: bool
) -> Fraction | None:
    """The exact extreme of ``values`` (NaN: undefined there): floats locate the candidates
    (the indices within 1e-12 of the float extreme; of many equal floats, such as a run of
    ratios of 1, the first 64), exact fractions decide among them."""
    ok = np.isfinite(values)
    if not ok.any():
        return None
    best = float(values[ok].min() if lowest else values[ok].max())
    near = np.flatnonzero(ok & (np.abs(values - best) <= 1e-12 * max(abs(best), 1e-300)))
    found = [e for i in near[:64] if (e := exact(int(i))) is not None]
    if not found:
        return None
    return min(found) if lowest else max(found)


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def ratio_bounds(
    cats: Sequence[Category], c: int, unknown: int, unknown_selected: int | None
) -> tuple[Fraction, Fraction] | None:
    """min and max of IR_c over every allocation where it is defined (None: nowhere).

    min: every unselected unknown goes to c and every selected one to the one kept
    category d ≠ c whose rate it raises most (free S_U: a of the unknowns to c unselected,
    U − a to d selected, every a tried). max: every selected unknown goes to c and the
    unselected ones lower the other kept categories' highest rate as far as they can (the
    greedy of :func:`_greedy_tops`; free S_U: b to c selected, U − b to the others, every
    b tried); when every other kept category has no selected applicant, one selected
    unknown must join the largest of them for the ratio to be defined. docs/ll144.md
    proves that no other allocation does better."""
    me = cats[c]
    others = [d for i, d in enumerate(cats) if i != c and d.kept]
    if not others and not me.kept:
        return None
    u, su = unknown, unknown_selected
    # the minimum: a unselected to c, the rest (selected) to the best kept d != c
    a = np.arange(u + 1) if su is None else np.array([u - su])
    to_d = u - a if su is None else np.array([su])

    def low_at(i: int) -> Fraction | None:
        num = Fraction(me.selected, me.n + int(a[i]))
        t = int(to_d[i])
        rest = [Fraction(d.selected + t, d.n + t) for d in others]
        den = max([*rest, *([num] if me.kept else [])], default=Fraction(0))
        return None if den == 0 else num / den

    num_f = me.selected / (me.n + a)
    den_f = np.zeros(len(a))
    for d in others:
        den_f = np.maximum(den_f, (d.selected + to_d) / (d.n + to_d))
    if me.kept:
        den_f = np.maximum(den_f, num_f)
    low = _pick(_divide(num_f, den_f), low_at, lowest=True)
    # the maximum: b selected to c, the rest (unselected) lowering the others
    units = u if su is None else u - su
    tops_s, tops_d = _greedy_tops(others, units)
    b = np.arange(u + 1) if su is None else np.array([su])
    rest_units = u - b if su is None else np.array([u - su])

    def high_at(i: int) -> Fraction | None:
        bi = int(b[i])
        num = Fraction(me.selected + bi, me.n + bi)
        if not others:
            return Fraction(1) if num > 0 else None
        m = Fraction(int(tops_s[rest_units[i]]), int(tops_d[rest_units[i]]))
        den = max(m, num) if me.kept else m
        return None if den == 0 else num / den

    num_f = (me.selected + b) / (me.n + b)
    if others:
        m_f = tops_s[rest_units] / tops_d[rest_units]
        den_f = np.maximum(m_f, num_f) if me.kept else m_f
    else:
        den_f = num_f
    high = _pick(_divide(num_f, den_f), high_at, lowest=False)
    if others and all(d.selected == 0 for d in others):
        # the others' rates are 0 unless a selected unknown joins one: the comparator is
        # then one selected applicant in the largest other category, with every unselected
        # unknown beside it (the smallest positive rate it can have)
        big = max(d.n for d in others)
        if su is not None:
            tries = [(su - 1, u - su)] if su else []
        else:
            tries = [(bb, u - bb - 1) for bb in range(u)]
        if tries:
            bs = np.array([t[0] for t in tries])
            unsel = np.array([t[1] for t in tries])

            def zero_at(i: int) -> Fraction:
                num = Fraction(me.selected + int(bs[i]), me.n + int(bs[i]))
                den = Fraction(1, big + 1 + int(unsel[i]))
                return num / (max(num, den) if me.kept else den)

            nf = (me.selected + bs) / (me.n + bs)
            df = 1.0 / (big + 1 + unsel)
            z = _pick(nf / (np.maximum(nf, df) if me.kept else df), zero_at, lowest=False)
            if z is not None and (high is None or z > high):
                high = z
    if low is None and high is None:
        return None
    lo = low if low is not None else high
    hi = high if high is not None else low
    assert lo is not None and hi is not None
    return lo, hi


@dataclass(frozen=True)
class Greatest:
    """The greatest IR_c of a category on one level whose kept set moves, and the
    allocation that attains it (docs/ll144.md, "exact greatest ratios"): ``to_c_selected``
    selected and ``to_c_unselected`` unselected unknowns to c, ``greedy_units`` unselected
    ones placed by the greedy of :func:`_greedy_tops` among the always-kept others, every
    other selected unknown to a category that stays kept out. ``attained`` is false only
    when those selected unknowns cannot all stay out (then ``value`` is a valid bound)."""

    value: Fraction
    attained: bool
    to_c_selected: int
    to_c_unselected: int
    greedy_units: int


def greatest_ratios(
    n: Sequence[int],
    s: Sequence[int],
    kept: Sequence[bool],
    cross: Sequence[bool],
    need: int,
    unknown: int,
    unknown_selected: int | None,
) -> list[Greatest | None]:
    """The exact greatest impact ratio of every category of one level over every
    allocation, when the kept set moves: a category is kept iff it is ``kept`` (always)
    or ``cross`` and holds at least ``need`` rows after the allocation. None for a
    category the proof does not cover: fewer than two always-kept categories, or no
    always-kept category other than c with a selected applicant.

    With m(A) the greedy's least highest rate of the always-kept others after A
    unselected unknowns and f(b, e) = (S_c + b)/(n_c + b + e), the candidates are
    f(b, 0)/m(U − b) for every b (S_U free; capped at 1 where c is kept: always, or
    crossable with n_c + b ≥ need), and, S_U observed, f(S_U, 0)/m(U − S_U) for a category
    that cannot cross; for a crossable one, kept out: f(min(S_U, p), 0)/m(U − S_U) with
    p = need − n_c − 1 (attained when the other selected unknowns fit where they stay out),
    and kept: min(1, f(S_U, e)/m(U − S_U − e)) with e = max(0, need − n_c − S_U)."""
    cats = len(n)
    u, su = unknown, unknown_selected
    out: list[Greatest | None] = []
    if sum(kept) < 2:
        return [None] * cats
    for c in range(cats):
        others = [Category(n[d], s[d], True) for d in range(cats) if d != c and kept[d]]
        units = u if su is None else u - su
        if not any(o.selected > 0 for o in others):
            # c always kept, the others with no selected applicant: IR_c ≤ 1, and every
            # selected unknown to c (every unknown, selected, when S_U is free) leaves
            # the others at 0 and c positive, so 1 is attained — if c can be positive
            to_c = u if su is None else su
            ok = kept[c] and s[c] + to_c > 0
            rest = 0 if su is None else units
            out.append(Greatest(Fraction(1), True, to_c, 0, rest) if ok else None)
            continue
        tops_s, tops_d = _greedy_tops(others, units)
        crossable = cross[c] and not kept[c]
        room = need - n[c] - 1  # the most unknowns c can take and stay out
        # candidates: (selected to c, unselected to c, greedy units, capped at 1, attained)
        cand: list[tuple[int, int, int, bool, bool]] = []
        floor = Fraction(0)  # a lower bound of the comparator of the first candidate
        if su is None:
            cand = [(b, 0, u - b, kept[c] or (crossable and b > room), True) for b in range(u + 1)]
        elif not crossable:
            cand = [(su, 0, units, kept[c], True)]
        else:
            never = any(not kept[d] and not cross[d] for d in range(cats) if d != c)
            dump = sum(need - n[d] - 1 for d in range(cats) if d != c and cross[d] and not kept[d])
            b = min(su, room)
            fits = never or su - b <= dump
            cand = [(b, 0, units, False, fits)]
            if not fits:  # the rest joins K ∖ {c}: its pooled rate bounds the comparator
                left = su - b - dump
                rows_k = sum(n[d] for d in range(cats) if d != c and (kept[d] or cross[d]))
                sel_k = sum(s[d] for d in range(cats) if d != c and kept[d])
                floor = Fraction(sel_k + left, rows_k + left + units)
            e = max(0, need - n[c] - su)
            if e <= units:
                cand.append((su, e, units - e, True, True))
        arr = np.array([x[:3] for x in cand], dtype=np.int64).reshape(-1, 3)
        capped = np.array([x[3] for x in cand], dtype=bool)
        num = (s[c] + arr[:, 0]) / (n[c] + arr[:, 0] + arr[:, 1])
        top = tops_s[arr[:, 2]] / tops_d[arr[:, 2]]
        val = num / top
        val = np.where(capped, np.minimum(val, 1.0), val)
        best = float(val.max())
        near = np.flatnonzero(val >= best - 1e-12 * max(best, 1e-300))[:64].tolist()
        if su is not None:
            near = list(range(len(cand)))

        scored = [
            (
                _candidate(s[c], n[c], cand[i], tops_s, tops_d, floor if i == 0 else None),
                cand[i][4],
                i,
            )
            for i in near
        ]
        top_v = max(v for v, _, _ in scored)
        hits = [i for v, ok, i in scored if v == top_v and ok]
        i = hits[0] if hits else next(i for v, _, i in scored if v == top_v)
        b, e, a, _, _ = cand[i]
        g = Greatest(top_v, bool(hits), b, e, a)
        if not hits:  # the selected unknowns that do not fit out of K join it: if the
            # allocation that places them (greatest_allocation) still reaches the bound,
            # it is attained
            add = greatest_allocation(n, s, kept, cross, need, u, su, c, g)
            got = _ratio_at(n, s, kept, cross, need, add, c)
            g = Greatest(top_v, got == top_v, b, e, a)
        out.append(g)
    return out


def _candidate(
    sel: int,
    rows: int,
    cand: tuple[int, int, int, bool, bool],
    tops_s: np.ndarray,
    tops_d: np.ndarray,
    floor: Fraction | None = None,
) -> Fraction:
    """f(b, e)/max(m(A), floor), capped at 1 where c is kept, in exact fractions."""
    b, e, a, cap, _ = cand
    top = Fraction(int(tops_s[a]), int(tops_d[a]))
    v = Fraction(sel + b, rows + b + e) / max(top, floor or Fraction(0))
    return min(v, Fraction(1)) if cap else v


def _ratio_at(
    n: Sequence[int],
    s: Sequence[int],
    kept: Sequence[bool],
    cross: Sequence[bool],
    need: int,
    add: tuple[list[int], list[int]],
    c: int,
) -> Fraction | None:
    """IR_c of one level after the allocation ``add``, the kept set re-derived."""
    nn = [a + b for a, b in zip(n, add[0], strict=True)]
    ss = [a + b for a, b in zip(s, add[1], strict=True)]
    keep = [k or (x and m >= need) for k, x, m in zip(kept, cross, nn, strict=True)]
    kr = [Fraction(a, b) for a, b, k in zip(ss, nn, keep, strict=True) if k]
    if len(kr) < 2 or max(kr) == 0:
        return None
    return Fraction(ss[c], nn[c]) / max(kr)


def _greedy_place(cats: Sequence[Category], units: int) -> list[int]:
    """The greedy's placement of ``units`` unselected applicants (per category), ordered
    in floats (for naming an allocation, which is then evaluated exactly;
    :func:`_greedy_tops` gives the greedy's rates)."""
    add = [0] * len(cats)
    heap = [(-c.selected / c.n, i) for i, c in enumerate(cats)]
    heapq.heapify(heap)
    for _ in range(units):
        _, i = heapq.heappop(heap)
        add[i] += 1
        heapq.heappush(heap, (-cats[i].selected / (cats[i].n + add[i]), i))
    return add


def _raise_least(
    idx: Sequence[int],
    n: Sequence[int],
    s: Sequence[int],
    add_n: list[int],
    add_s: list[int],
    left: int,
) -> None:
    """Place ``left`` selected unknowns among ``idx``, each where it raises a rate least
    (floats order them; the allocation is evaluated exactly afterwards)."""
    heap = [((s[d] + add_s[d] + 1) / (n[d] + add_n[d] + 1), d) for d in idx]
    heapq.heapify(heap)
    for _ in range(left):
        _, d = heapq.heappop(heap)
        add_n[d] += 1
        add_s[d] += 1
        heapq.heappush(heap, ((s[d] + add_s[d] + 1) / (n[d] + add_n[d] + 1), d))


def greatest_allocation(
    n: Sequence[int],
    s: Sequence[int],
    kept: Sequence[bool],
    cross: Sequence[bool],
    need: int,
    unknown: int,
    unknown_selected: int | None,
    c: int,
    g: Greatest,
) -> tuple[list[int], list[int]]:
    """The allocation (add_n, add_s per category) :class:`Greatest` names for category c:
    the selected unknowns c does not take go first to categories that can never cross,
    then to crossable ones up to one row below ``need``."""
    cats = len(n)
    add_n, add_s = [0] * cats, [0] * cats
    add_n[c], add_s[c] = g.to_c_selected + g.to_c_unselected, g.to_c_selected
    idx = [d for d in range(cats) if d != c and kept[d]]
    left = 0 if unknown_selected is None else unknown_selected - g.to_c_selected
    sinks = [d for d in range(cats) if d != c and not kept[d] and not cross[d]]
    spill = [d for d in range(cats) if d != c and not kept[d] and cross[d]]
    for d in sinks + spill:
        take = left if d in sinks else min(left, need - n[d] - 1)
        add_n[d] += take
        add_s[d] += take
        left -= take
    _raise_least(idx, n, s, add_n, add_s, left)
    now = [Category(n[d] + add_n[d], s[d] + add_s[d], True) for d in idx]
    for d, k in zip(idx, _greedy_place(now, g.greedy_units), strict=True):
        add_n[d] += k
    return add_n, add_s


def all_ratios(cats: Sequence[Category], alloc: Sequence[tuple[int, int]]) -> list[Fraction | None]:
    """IR_c of every category after the allocation ``alloc`` ((k_c, j_c) per category):
    the definition, used by the brute-force tests and the best-case witness."""
    rates = [_fr(c.selected + j, c.n + k) for c, (k, j) in zip(cats, alloc, strict=True)]
    top = max((r for r, c in zip(rates, cats, strict=True) if c.kept), default=Fraction(0))
    return [None if top == 0 else r / top for r in rates]


def _maps(levels: list[dict[str, Any]]) -> list[np.ndarray] | None:
    """For every level, the index of each finest cell's category there (None when a
    category name cannot be split back into its columns)."""
    from fairpolicy.stats import INTERSECTION_SEP

    names = [c["category"] for c in levels[-1]["categories"]]
    out = []
    for li, lv in enumerate(levels):
        index = {c["category"]: k for k, c in enumerate(lv["categories"])}
        if li == len(levels) - 1:
            out.append(np.arange(len(names)))
            continue
        parts = [name.split(INTERSECTION_SEP) for name in names]
        if any(len(p) != len(levels) - 1 or p[li] not in index for p in parts):
            return None
        out.append(np.array([index[p[li]] for p in parts]))
    return out


def layout_of(
    levels: list[dict[str, Any]], comparator: str, scope: str, min_share: Fraction, total: int
) -> Layout | None:
    """The :class:`Layout` of recorded levels (None when a name cannot be split)."""
    maps = _maps(levels)
    if maps is None:
        return None
    cells = levels[-1]["categories"]
    return Layout(
        tuple(int(c["n"]) for c in cells),
        tuple(int(c["selected"]) for c in cells),
        tuple(maps),
        tuple(len(lv["categories"]) for lv in levels),
        1 if len(levels) == 1 else len(levels) - 1,
        comparator,
        scope,
        Layout.need_for(min_share, total),
        total,
    )


@dataclass
class _LevelBounds:
    ratios: list[tuple[Fraction, Fraction] | None]
    low: Fraction | None  # the least value of the level (its lowest kept ratio), or a bound
    high: Fraction | None  # an upper bound of its greatest value
    sharp: bool  # every ratio bound attained
    lows_sharp: bool  # every ratio's low end attained
    low_sharp: bool  # ``low`` attained
    high_sharp: bool
    always: bool  # the level is compared under every allocation
    #: allocations (to the finest cells) attaining the least ratios of the level's
    #: categories: the control's value at each is one some allocation gives
    low_cells: list[tuple[list[int], list[int]]] = field(default_factory=list)
    #: allocations attaining the greatest ratios of always-kept categories: the control's
    #: value at each is a value some allocation gives (a witness near the maximum)
    high_cells: list[tuple[list[int], list[int]]] = field(default_factory=list)


def _fixed(cats: list[Category], u: int, su: int | None) -> list[tuple[Fraction, Fraction] | None]:
    return [ratio_bounds(cats, i, u, su) for i in range(len(cats))]


def _to_cells(
    lay: Layout, li: int, add: tuple[list[int], list[int]]
) -> tuple[list[int], list[int]]:
    """A level's allocation (per category) as one of the finest cells (each category's
    unknowns to its largest cell)."""
    cells = len(lay.cell_n)
    out_n, out_s = [0] * cells, [0] * cells
    m = lay.maps[li].tolist()
    for k in range(lay.sizes[li]):
        mine = [i for i in range(cells) if m[i] == k]
        big = max(mine, key=lambda i: lay.cell_n[i])
        out_n[big] += add[0][k]
        out_s[big] += add[1][k]
    return out_n, out_s


def _level_bounds(lay: Layout, li: int, u: int, su: int | None, cap: int) -> _LevelBounds:
    """One level's bounds when the joint allocations are too many to visit
    (docs/ll144.md, "Above the cap")."""
    n, s = lay.level_counts(li)
    kept = lay.kept_now(li)
    always = sum(kept) >= 2 and any(k and x > 0 for k, x in zip(kept, s, strict=True))
    moving = lay.moves(li, u)
    single = lay.is_column(li) or lay.scope == "cell"
    if moving and single:
        sub = enumerate_bounds(single_level(lay, li), u, su, cap)
        if sub is not None:  # this level's own allocations: few enough to visit
            lo, hi = sub.value if sub.value is not None else (None, None)
            at = [] if sub.low_at is None else [_to_cells(lay, li, sub.low_at)]
            return _LevelBounds(sub.ratios[0], lo, hi, True, True, True, True, always, at)
    if not moving and sum(kept) < 2:  # never compared
        return _LevelBounds([None] * len(n), None, None, True, True, True, True, False)
    # the kept set lies between the observed one (it only grows as categories gain
    # applicants) and the observed one plus every category that can cross min_share
    kmax = [k or i in moving for i, k in enumerate(kept)]
    if moving and not single and sum(kept) >= 2:  # the cells some allocation can keep
        kmax = possible_cells(lay, u)
    lows_c = _fixed([Category(a, b, k) for a, b, k in zip(n, s, kmax, strict=True)], u, su)
    fixed_k0 = [Category(a, b, k) for a, b, k in zip(n, s, kept, strict=True)]
    least = None
    greatest: list[Greatest | None] = [None] * len(n)
    work = len(n) ** 2 * (u + 1 if su is None else 1)
    cross = [i in moving for i in range(len(n))]
    if sum(kept) >= 2 and (single or not moving) and work <= LEAST_WORK:  # exact, attained
        least = least_ratios(n, s, kept, cross, lay.need, u, su)
    if moving and single and sum(kept) >= 2:  # exact where attained (docs/ll144.md)
        greatest = greatest_ratios(n, s, kept, cross, lay.need, u, su)
    # the intersection under the category reading, a column category moving: bounds
    # attained where a named allocation reaches them (ll144_cells, docs/ll144.md)
    cell_lows: list[End | None] = [None] * len(n)
    cell_highs: list[End | None] = [None] * len(n)
    if moving and not single and sum(kept) >= 2:
        cell_highs = greatest_cells(lay, u, su, _tops)
        cell_lows = least_cells(lay, u, su, [None if r is None else r[0] for r in lows_c])
    highs_exact = True
    lows_exact = least is not None or not moving
    if moving and not single:
        lows_exact = all(
            e is not None and e.attained for e, r in zip(cell_lows, lows_c, strict=True) if r
        )
    ratios: list[tuple[Fraction, Fraction] | None] = []
    for i in range(len(n)):
        lo_i = lows_c[i]
        exact_low = None if least is None else least[i]
        if lo_i is None or (least is not None and exact_low is None):
            ratios.append(None)  # no allocation compares this level
            continue
        low = lo_i[0] if exact_low is None else exact_low[0]
        cl = cell_lows[i]
        if cl is not None:  # the exact least, or the fixed-K₁ bound (attained or not)
            low = cl.bound
        ch = cell_highs[i]
        if ch is not None:
            ratios.append((low, ch.bound))
            highs_exact = highs_exact and ch.attained
            continue
        # the fixed-K high is exact when K cannot move; when it can, it bounds the ratio
        # wherever K₀ alone has a positive comparator (docs/ll144.md)
        ok = not moving or kept[i] or any(kept[d] and s[d] > 0 for d in range(len(n)) if d != i)
        g = greatest[i]
        hi_i = None if g is not None or not ok else ratio_bounds(fixed_k0, i, u, su)
        if g is not None:
            ratios.append((low, g.value))
            highs_exact = highs_exact and g.attained
        elif ok and hi_i is not None:
            ratios.append((low, hi_i[1]))
            highs_exact = highs_exact and not moving
        else:  # a kept comparator with a selected applicant has a rate ≥ 1/total
            top = rate_bounds(Category(n[i], s[i], False), u, su)[1] * lay.total
            ratios.append((low, max(Fraction(1), top)))
            highs_exact = False
    # every bound attained: the low ends exact (K fixed, or the least ratios) and the high
    # ends exact (K fixed, or the greatest ratios attained)
    sharp = not moving or (lows_exact and highs_exact)
    lows = [(r[0], i) for i, r in enumerate(ratios) if kmax[i] and r is not None]
    highs = [r[1] for r, k in zip(ratios, kept, strict=True) if k and r is not None]
    if not lows:
        return _LevelBounds(ratios, None, None, sharp, True, True, True, always)
    low, at_i = min(lows)
    # the level's least value is the least ratio of a category kept under every
    # allocation (exact, with its allocation) unless a category that can cross is lower
    attained = not moving or (least is not None and kept[at_i] and least[at_i] is not None)
    # the allocations attaining each category's least ratio: the control's value at each
    # is attained (add_bounds; a crossable category's own least may fall where it is out)
    low_cells = [e.at for e in cell_lows if e and e.attained and e.at is not None]
    firm_cells = [e for e, k in zip(cell_lows, kept, strict=True) if k and e and e.attained]
    if firm_cells:  # an always-kept cell's attained least is a value of the level
        attained = attained or min(e.bound for e in firm_cells) == low
    if least is not None:
        low_cells += [_to_cells(lay, li, (t[1], t[2])) for t in least if t is not None]
    high_cells = [e.at for e, k in zip(cell_highs, kept, strict=True) if k and e and e.at]
    cross_now = [i in moving for i in range(len(n))]
    for i, g in enumerate(greatest):
        if g is not None and kept[i] and g.attained:
            where = greatest_allocation(n, s, kept, cross_now, lay.need, u, su, i, g)
            high_cells.append(_to_cells(lay, li, where))
    return _LevelBounds(
        ratios,
        low,
        min(highs, default=None) if not moving else min([Fraction(1), *highs]),
        sharp,
        lows_exact,
        attained,
        not moving and len(highs) == 1,
        always,
        low_cells,
        high_cells,
    )


def add_bounds(
    levels: list[dict[str, Any]],
    unknown: float,
    unknown_selected: float | None,
    whole: bool,
    mode: str,
    comparator: str = "highest_above_min_share",
    scope: str = "category",
    min_share: Fraction = Fraction(1, 50),
    total: float | None = None,
) -> dict[str, object]:
    """Write each category's bounds into ``levels`` (``rate_low`` … ``ratio_high``) and
    return the summary (``details["bounds"]``).

    The kept set and the comparator are re-derived for every allocation. Up to
    :data:`~fairpolicy.metrics.ll144_enum.ENUMERATION_CAP` allocations every one is
    visited: every bound is exact and attained (``sharp``). Above it each level is bounded
    on its own: exactly when its kept set cannot change (no category can cross
    ``min_share``) or its own allocations are few enough to visit; otherwise the bounds
    are valid but not always attained, and ``sharp`` is false with the reason."""
    from fairpolicy.metrics import ll144_enum

    info: dict[str, object] = {
        "unknown": unknown,
        "unknown_selected": unknown_selected,
        "selection_of_unknowns": "observed" if unknown_selected is not None else "free",
    }
    if not whole:
        info["reason"] = (
            "the counts are not whole numbers, so allocations of applicants are undefined"
        )
        return info
    if unknown > MAX_UNKNOWN:
        info["reason"] = f"more than {MAX_UNKNOWN} unknown-category rows"
        return info
    u = int(unknown)
    su = None if unknown_selected is None else int(unknown_selected)
    rows = (
        int(total) if total is not None else int(sum(c["n"] for c in levels[0]["categories"]) + u)
    )
    lay = layout_of(levels, comparator, scope, min_share, rows)
    if lay is None:
        info["reason"] = "a category name cannot be split back into its columns"
        return info
    for lv in levels:
        for c in lv["categories"]:
            rl, rh = rate_bounds(Category(int(c["n"]), int(c["selected"]), True), u, su)
            c["rate_low"], c["rate_high"] = float(rl), float(rh)
    cap = ll144_enum.ENUMERATION_CAP
    every = enumerate_bounds(lay, u, su, cap)
    low_values: list[Fraction] = []  # the control's value under allocations found
    value: tuple[Fraction, Fraction] | None = None
    low_sharp = high_sharp = False
    if every is not None:
        info["method"] = f"every allocation visited ({every.allocations})"
        per = [_LevelBounds(r, None, None, True, True, True, True, False) for r in every.ratios]
        value = every.value
        low_sharp = high_sharp = True
    else:
        many = count_allocations(len(lay.cell_n), u, su)
        info["method"] = (
            f"each level on its own ({many:.3g} allocations exceed the enumeration cap of {cap}"
            " or its memory limit)"
        )
        per = [_level_bounds(lay, li, u, su, cap) for li in range(len(levels))]
        lows = [(b.low, b.low_sharp) for b in per if b.low is not None]
        for b in per:
            for at in b.low_cells:
                v = lay.exact(*at)[1]
                if v is not None:
                    low_values.append(v)
        if lows:
            lo = min(x for x, _ in lows)
            low_sharp = any(sh and x == lo for x, sh in lows) or lo in low_values
            always = [b.high for b in per if b.always and b.high is not None]
            highs = [b.high for b in per if b.high is not None]
            hi = min(always) if always else max(highs, default=Fraction(1))
            value = (lo, hi)
            high_sharp = len(per) == 1 and per[0].high_sharp
    notes = []
    for li, (lv, b) in enumerate(zip(levels, per, strict=True)):
        lv["bounds_sharp"] = b.sharp
        lv["bounds_low_sharp"] = b.lows_sharp
        for c, r in zip(lv["categories"], b.ratios, strict=True):
            c["ratio_low"] = None if r is None else float(r[0])
            c["ratio_high"] = None if r is None else float(r[1])
        if not b.sharp:
            cols = [li] if lay.is_column(li) or scope == "cell" else range(lay.columns)
            names = ", ".join(
                levels[cj]["categories"][k]["category"] for cj in cols for k in lay.moves(cj, u)
            )
            ends = "the low ends are exact, the high ends" if b.lows_sharp else "they"
            why = (
                f"the kept set can change with the allocation ({names} can cross "
                f"min_share) and the allocations exceed the enumeration cap of {cap}: "
                f"{ends} are valid bounds, not always attained"
            )
            lv["bounds_note"] = why
            notes.append(f"{lv['level']}: {why}")
    info["sharp"] = not notes
    if notes:
        info["sharp_reason"] = "; ".join(notes)
    if value is not None:
        lo, hi = value
        info["value_low"] = float(lo)
        info["value_high"] = float(hi)
        info["value_low_exact"] = str(lo)
        info["value_high_exact"] = str(hi)
        info["value_low_sharp"] = low_sharp
        info["value_high_sharp"] = high_sharp or u == 0
        if low_values and not low_sharp:
            least = min(low_values)
            info["low_witness_value"] = float(least)
            info["low_witness_value_exact"] = str(least)
        seen = witness(lay, u, su) if u and not high_sharp else None
        for b in per:  # the allocations attaining an always-kept category's greatest ratio
            for at in b.high_cells:
                v = lay.exact(*at)[1]
                if v is not None and (seen is None or v > seen):
                    seen = v
        if seen is not None:
            info["witness_value"] = float(seen)
            info["witness_value_exact"] = str(seen)
            info["value_high_sharp"] = seen == hi
    if mode == "scoring":
        info["note"] = "scoring rate: the unknowns' scores above the median are not counted"
    return info


#: batches of unknowns the best-case search places (each batch goes to the best cell)
WITNESS_STEPS = 200


def witness(lay: Layout, unknown: int, unknown_selected: int | None) -> Fraction | None:
    """The control's value under one allocation of the unknowns chosen to make it high (a
    greedy search: batches of unknowns, each to the cell — and, when their selection is
    free, as selected or not — that raises the value most; the kept sets are re-derived
    at every step). Any allocation's value is a value the data allow, so a witness that
    satisfies the threshold proves best_case; it need not be the highest."""
    cells = len(lay.cell_n)
    add_n = np.zeros(cells, dtype=np.int64)
    add_s = np.zeros(cells, dtype=np.int64)
    plan: list[tuple[int, bool | None]] = (
        [(unknown, None)]
        if unknown_selected is None
        else [(unknown_selected, True), (unknown - unknown_selected, False)]
    )
    # interleave the selected and unselected batches so neither side is placed blindly
    batches: list[list[tuple[int, bool | None]]] = []
    for amount, sel in plan:
        step = max(1, -(-amount // WITNESS_STEPS))
        batches.append([(min(step, amount - k), sel) for k in range(0, amount, step)])
    order = [g for group in itertools.zip_longest(*batches) for g in group if g is not None]
    eye = np.eye(cells, dtype=np.int64)
    for size, sel in order:
        choices = [
            (i, ch) for i in range(cells) for ch in ((True, False) if sel is None else (sel,))
        ]
        tn = add_n + size * eye[[i for i, _ in choices]]
        ts = add_s + size * eye[[i for i, _ in choices]] * np.array(
            [[1 if ch else 0] for _, ch in choices]
        )
        _, values = lay.batch(tn, ts)
        if not np.isfinite(values).any():
            return None
        k = int(np.nanargmax(values))
        add_n, add_s = tn[k], ts[k]
    return lay.exact(add_n.tolist(), add_s.tolist())[1]
