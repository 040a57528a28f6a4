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
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

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


def all_ratios(cats: Sequence[Category], alloc: Sequence[tuple[int, int]]) -> list[Fraction | None]:
    """IR_c of every category after the allocation ``alloc`` ((k_c, j_c) per category):
    the definition, used by the brute-force tests and the best-case witness."""
    rates = [_fr(c.selected + j, c.n + k) for c, (k, j) in zip(cats, alloc, strict=True)]
    top = max((r for r, c in zip(rates, cats, strict=True) if c.kept), default=Fraction(0))
    return [None if top == 0 else r / top for r in rates]


def add_bounds(
    levels: list[dict[str, Any]],
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
        seen = witness(levels, u, su) if u else None
        if seen is not None:
            info["witness_value"] = float(seen)
            info["witness_value_exact"] = str(seen)
            info["value_high_sharp"] = seen == min(highs)
    if mode == "scoring":
        info["note"] = "scoring rate: the unknowns' scores above the median are not counted"
    return info


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


def _value(
    levels: list[dict[str, Any]],
    maps: list[np.ndarray],
    n: np.ndarray,
    s: np.ndarray,
    exact: bool,
) -> float | Fraction | None:
    """The control's value (the lowest kept impact ratio over the levels) for cell counts
    ``n``, ``s`` (observed plus allocated)."""
    best: float | Fraction | None = None
    for lv, m in zip(levels, maps, strict=True):
        kept = np.array([not c["excluded"] for c in lv["categories"]])
        if kept.sum() < 2:
            continue
        k = len(kept)
        if exact:
            nn = [0] * k
            ss = [0] * k
            for i, j in enumerate(m.tolist()):
                nn[j] += int(n[i])
                ss[j] += int(s[i])
            rates = [Fraction(a, b) if b else None for a, b in zip(ss, nn, strict=True)]
            kr = [r for r, kp in zip(rates, kept, strict=True) if kp and r is not None]
            if not kr or max(kr) == 0:
                continue
            v: float | Fraction = min(kr) / max(kr)
        else:
            nn_f = np.bincount(m, weights=n, minlength=k)
            ss_f = np.bincount(m, weights=s, minlength=k)
            r = ss_f[kept] / np.where(nn_f[kept] > 0, nn_f[kept], np.nan)
            if not np.isfinite(r).any() or np.nanmax(r) == 0:
                continue
            v = float(np.nanmin(r) / np.nanmax(r))
        best = v if best is None or v < best else best
    return best


#: batches of unknowns the best-case search places (each batch goes to the best cell)
WITNESS_STEPS = 200


def witness(
    levels: list[dict[str, Any]], unknown: int, unknown_selected: int | None
) -> Fraction | None:
    """The control's value under one allocation of the unknowns chosen to make it high (a
    greedy search: batches of unknowns, each to the cell — and, when their selection is
    free, as selected or not — that raises the value most). Any allocation's value is a
    value the data allow, so a witness that satisfies the threshold proves best_case; it
    need not be the highest (the upper bound of add_bounds is not always attained)."""
    maps = _maps(levels)
    if maps is None:
        return None
    cells = levels[-1]["categories"]
    n = np.array([float(c["n"]) for c in cells])
    s = np.array([float(c["selected"]) for c in cells])
    add_n, add_s = np.zeros(len(cells)), np.zeros(len(cells))
    plan: list[tuple[int, bool | None]] = (
        [(unknown, None)]
        if unknown_selected is None
        else [(unknown_selected, True), (unknown - unknown_selected, False)]
    )
    # interleave the selected and unselected batches so neither side is placed blindly
    batches: list[list[tuple[int, bool | None]]] = []
    for total, sel in plan:
        step = max(1, -(-total // WITNESS_STEPS))
        batches.append([(min(step, total - k), sel) for k in range(0, total, step)])
    order = [g for group in itertools.zip_longest(*batches) for g in group if g is not None]
    for size, sel in order:
        best: tuple[float, int, bool] | None = None
        for i in range(len(cells)):
            for chosen in (True, False) if sel is None else (sel,):
                add_n[i] += size
                add_s[i] += size if chosen else 0
                v = _value(levels, maps, n + add_n, s + add_s, exact=False)
                add_n[i] -= size
                add_s[i] -= size if chosen else 0
                if v is not None and (best is None or float(v) > best[0]):
                    best = (float(v), i, chosen)
        if best is None:
            return None
        _, i, chosen = best
        add_n[i] += size
        add_s[i] += size if chosen else 0
    out = _value(levels, maps, n + add_n, s + add_s, exact=True)
    return out if isinstance(out, Fraction) else None
