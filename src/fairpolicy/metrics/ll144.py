"""NYC Local Law 144: sharp bounds of selection rates and impact ratios when some
applicants' category is unknown (docs/ll144.md has the proofs).

One level (a column, or the intersection) has categories c with n_c applicants, S_c of
them selected, and a fixed set K of categories kept for the comparator. U applicants have
no category; S_U of them were selected (``observed``) or S_U is unknown too (``free``:
any 0..U). An *allocation* gives each category c some k_c of the unknowns (Σ k_c = U),
j_c ≤ k_c of them selected (Σ j_c = S_U when S_U is observed). Then

    r_c = (S_c + j_c) / (n_c + k_c),    IR_c = r_c / max_{d ∈ K} r_d.

The functions below return, for every category, min and max of r_c and of IR_c over
every allocation (over the allocations where IR_c is defined), as exact fractions.
The kept set K is the observed one (the shares are of all rows, unknowns included, so an
allocation could move a category across ``min_share``; the audit's exclusion is read
from the data as published). Rates and ratios are those of whole applicants: the bounds
need whole counts.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

#: above this many unknown rows the bounds are not computed (the greedy allocation is
#: O(U log K) per category in Python)
MAX_UNKNOWN = 2_000_000


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


def _min_max_after(cats: Sequence[Category], units: int) -> list[Fraction]:
    """m(A) for A = 0..units: the least possible highest rate of ``cats`` after A unselected
    applicants are added to them (greedy: each goes to the currently highest rate; the
    optimal allocations are nested in A, so the greedy is optimal for every A)."""
    if not cats:
        return [Fraction(0)] * (units + 1)
    add = [0] * len(cats)
    heap = [(-c.selected / c.n, i) for i, c in enumerate(cats)]
    heapq.heapify(heap)

    def top() -> Fraction:
        return max(_fr(c.selected, c.n + a) for c, a in zip(cats, add, strict=True))

    out = [top()]
    for _ in range(units):
        _, i = heapq.heappop(heap)
        add[i] += 1
        heapq.heappush(heap, (-cats[i].selected / (cats[i].n + add[i]), i))
        out.append(_exact_top(cats, add, heap))
    return out


def _exact_top(cats: Sequence[Category], add: list[int], heap: list[tuple[float, int]]) -> Fraction:
    """The highest rate after the allocation ``add``: the heap's top, exactly (its float key
    is exact enough to find it; near ties are compared exactly)."""
    best = -heap[0][0]
    cand = [i for key, i in heap if -key >= best * (1 - 1e-12)]
    return max(_fr(cats[i].selected, cats[i].n + add[i]) for i in cand)


def _ratio(num: Fraction, den: Fraction) -> Fraction | None:
    return None if den == 0 else num / den


def ratio_bounds(
    cats: Sequence[Category], c: int, unknown: int, unknown_selected: int | None
) -> tuple[Fraction, Fraction] | None:
    """min and max of IR_c over every allocation where it is defined (None: nowhere).

    min: every unselected unknown goes to c and every selected one to the one kept
    category d ≠ c whose rate it raises most (free S_U: a of the unknowns to c unselected,
    U − a to d selected, every a tried). max: every selected unknown goes to c and the
    unselected ones lower the other kept categories' highest rate as far as they can (the
    greedy of :func:`_min_max_after`; free S_U: b to c selected, U − b to the others,
    every b tried). docs/ll144.md proves that no other allocation does better."""
    me = cats[c]
    others = [d for i, d in enumerate(cats) if i != c and d.kept]
    if not others and not me.kept:
        return None
    lows: list[Fraction] = []
    highs: list[Fraction] = []
    splits = (
        [(unknown - unknown_selected, unknown_selected)]
        if unknown_selected is not None
        else [(a, unknown - a) for a in range(unknown + 1)]
    )
    # the minimum: a unselected to c, the rest (selected) to the best kept d ≠ c
    for to_me, to_d in splits:
        num = _fr(me.selected, me.n + to_me)
        rest = [_fr(d.selected + to_d, d.n + to_d) for d in others]
        den = max([*rest, *([num] if me.kept else [])], default=Fraction(0))
        r = _ratio(num, den)
        if r is not None:
            lows.append(r)
    # the maximum: b selected to c, the rest (unselected) lowering the others
    if unknown_selected is not None:
        ms = _min_max_after(others, unknown - unknown_selected)
        pairs = [(unknown_selected, ms[-1])]
    else:
        ms = _min_max_after(others, unknown)
        pairs = [(b, ms[unknown - b]) for b in range(unknown + 1)]
    for b, m in pairs:
        num = _fr(me.selected + b, me.n + b)
        den = max(m, num) if me.kept else m
        if not others and me.kept:
            den = num
        r = _ratio(num, den)
        if r is not None:
            highs.append(r)
    if others and all(d.selected == 0 for d in others):
        # the others' rates are 0 unless a selected unknown joins one: the comparator is
        # then one selected applicant in the largest other category, with every unselected
        # unknown beside it (the smallest positive rate it can have)
        big = max(d.n for d in others)
        if unknown_selected is not None:
            tries = [(unknown_selected - 1, unknown - unknown_selected)] if unknown_selected else []
        else:
            tries = [(b, unknown - b - 1) for b in range(unknown)]
        for b, unsel in tries:
            num = _fr(me.selected + b, me.n + b)
            den = _fr(1, big + 1 + unsel)
            highs.append(num / (max(num, den) if me.kept else den))
    if not lows and not highs:
        return None
    lo = min(lows or highs)
    hi = max(highs or lows)
    return lo, hi


def all_ratios(cats: Sequence[Category], alloc: Sequence[tuple[int, int]]) -> list[Fraction | None]:
    """IR_c of every category after the allocation ``alloc`` ((k_c, j_c) per category):
    the definition, used by the brute-force tests and the best-case witness."""
    rates = [_fr(c.selected + j, c.n + k) for c, (k, j) in zip(cats, alloc, strict=True)]
    top = max((r for r, c in zip(rates, cats, strict=True) if c.kept), default=Fraction(0))
    return [None if top == 0 else r / top for r in rates]


def add_bounds(
    levels: list[dict[str, object]],
    unknown: float,
    unknown_selected: float | None,
    whole: bool,
    mode: str,
) -> dict[str, object]:
    """Write each category's bounds into ``levels`` (``rate_low`` … ``ratio_high``) and
    return the summary (``details["bounds"]``): the value's lowest possible impact ratio
    (sharp: min over levels and kept categories of their sharp lows) and an upper bound
    (the min of the kept categories' highs; not always attained by one allocation)."""
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
    lows: list[Fraction] = []
    highs: list[Fraction] = []
    for lv in levels:
        cats_d = lv["categories"]
        assert isinstance(cats_d, list)
        cats = [Category(int(c["n"]), int(c["selected"]), not c["excluded"]) for c in cats_d]
        compared = "min_impact_ratio" in lv or sum(c.kept for c in cats) >= 2
        for c, d in zip(cats_d, cats, strict=True):
            rl, rh = rate_bounds(d, u, su)
            c["rate_low"], c["rate_high"] = float(rl), float(rh)
        if not compared:
            continue
        for i, c in enumerate(cats_d):
            rb = ratio_bounds(cats, i, u, su)
            c["ratio_low"] = None if rb is None else float(rb[0])
            c["ratio_high"] = None if rb is None else float(rb[1])
            if rb is not None and cats[i].kept:
                lows.append(rb[0])
                highs.append(rb[1])
    if lows:
        info["value_low"] = float(min(lows))
        info["value_high"] = float(min(highs))
        info["value_low_exact"] = str(min(lows))
        info["value_high_exact"] = str(min(highs))
        info["value_high_sharp"] = u == 0
    if mode == "scoring":
        info["note"] = "scoring rate: the unknowns' scores above the median are not counted"
    return info
