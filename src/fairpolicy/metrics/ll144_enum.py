"""LL144 allocation bounds when the kept set moves with the allocation (docs/ll144.md).

The 2 % rule keeps a category out when it holds less than ``min_share`` of all rows,
unknowns included. Allocating the unknown-category applicants to categories raises a
category's share, so an allocation can bring a kept-out category back in — and change
the comparator. :class:`Layout` re-derives the kept set and the comparator of every level
for any allocation, exactly as ``fairpolicy.metrics.rates._level`` does on observed data;
:func:`enumerate_bounds` visits every allocation of the unknowns to the finest cells (up to
a cap) and returns the exact extremes; :func:`least_ratios` gives one level's exact least
ratios, with attaining allocations, when there are too many to visit
(``fairpolicy.metrics.ll144.add_bounds`` puts them together).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

#: above this many allocations the bounds are not found by enumeration
ENUMERATION_CAP = 400_000
#: the most numbers the table of free allocations (2 per cell each) may hold (64 MB)
MAX_ENTRIES = 8_000_000
#: allocations visited per numpy batch
_CHUNK = 32_768
#: candidates (within 1e-12 of a float extreme) decided with exact fractions, per extreme
_CANDIDATES = 64


@dataclass(frozen=True)
class Layout:
    """The levels of one impact-ratio control as the bounds see them.

    ``cell_n``/``cell_s``: applicants and selected of each finest cell (the intersection,
    or the one column's categories); ``maps[li][i]``: the category of cell i at level li
    (levels are the columns, then the intersection when there are two or more columns);
    ``need``: a category (or, under ``scope: cell``, an intersection cell) is kept iff it
    holds at least ``need`` rows (the least whole count whose share of ``total`` is at
    least ``min_share``)."""

    cell_n: tuple[int, ...]
    cell_s: tuple[int, ...]
    maps: tuple[np.ndarray, ...]
    sizes: tuple[int, ...]
    columns: int
    comparator: str
    scope: str
    need: int
    total: int
    _onehot: list[np.ndarray] = field(default_factory=list, compare=False, repr=False)

    @staticmethod
    def need_for(min_share: Fraction, total: int) -> int:
        return math.ceil(min_share * total)

    def is_column(self, li: int) -> bool:
        return self.columns == 1 or li < self.columns

    def level_counts(self, li: int) -> tuple[list[int], list[int]]:
        n, s = [0] * self.sizes[li], [0] * self.sizes[li]
        for i, k in enumerate(self.maps[li].tolist()):
            n[k] += self.cell_n[i]
            s[k] += self.cell_s[i]
        return n, s

    def moves(self, li: int, unknown: int) -> list[int]:
        """The categories of level li (for the category reading of the intersection: the
        cells of a column category) that some allocation can bring across ``need``."""
        if self.comparator == "highest" or unknown == 0:
            return []
        if self.is_column(li) or self.scope == "cell":
            n, _ = self.level_counts(li)
            return [k for k, x in enumerate(n) if x < self.need <= x + unknown]
        cols = {cj: set(self.moves(cj, unknown)) for cj in range(self.columns)}
        return [
            i
            for i in range(len(self.cell_n))
            if any(int(self.maps[cj][i]) in cols[cj] for cj in range(self.columns))
        ]

    def kept_now(self, li: int) -> list[bool]:
        """The observed kept set of level li."""
        return self.kept_exact([self.level_counts(k)[0] for k in range(len(self.maps))])[li]

    # --- the kept sets ---------------------------------------------------------------
    def kept_batch(self, ns: Sequence[np.ndarray]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for li, n in enumerate(ns):
            if self.comparator == "highest":
                out.append(np.ones(n.shape, dtype=bool))
            elif self.is_column(li) or self.scope == "cell":
                out.append(n >= self.need)
            else:  # the category reading: a cell is kept iff each of its categories is
                k = np.ones(n.shape, dtype=bool)
                for cj in range(self.columns):
                    k &= out[cj][:, self.maps[cj]]
                out.append(k)
        return out

    def kept_exact(self, ns: Sequence[Sequence[int]]) -> list[list[bool]]:
        batch = self.kept_batch([np.array([list(n)], dtype=np.int64) for n in ns])
        return [[bool(x) for x in k[0]] for k in batch]

    # --- values ----------------------------------------------------------------------
    def onehot(self, li: int) -> np.ndarray:
        if not self._onehot:
            for m, size in zip(self.maps, self.sizes, strict=True):
                p = np.zeros((len(self.cell_n), size), dtype=np.int64)
                p[np.arange(len(self.cell_n)), m] = 1
                self._onehot.append(p)
        return self._onehot[li]

    def batch(self, add_n: np.ndarray, add_s: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        """For allocations (rows of ``add_n``/``add_s``, per cell): every level's impact
        ratios (NaN where the level is not compared) and the control's value (NaN where no
        level is compared), as floats."""
        base_n = np.array(self.cell_n, dtype=np.int64)
        base_s = np.array(self.cell_s, dtype=np.int64)
        ns, ss = [], []
        for li in range(len(self.maps)):
            p = self.onehot(li)
            ns.append((base_n + add_n) @ p)
            ss.append((base_s + add_s) @ p)
        kept = self.kept_batch(ns)
        ratios = []
        value = np.full(add_n.shape[0], np.inf)
        for n, s, k in zip(ns, ss, kept, strict=True):
            rates = s / n
            top = np.where(k, rates, -1.0).max(axis=1)
            ok = (k.sum(axis=1) >= 2) & (top > 0)
            ir = np.where(ok[:, None], rates / np.where(ok, top, 1.0)[:, None], np.nan)
            lv = np.where(ok, np.where(k, ir, np.inf).min(axis=1), np.inf)
            value = np.minimum(value, lv)
            ratios.append(ir)
        return ratios, np.where(np.isfinite(value), value, np.nan)

    def exact(
        self, add_n: Sequence[int], add_s: Sequence[int]
    ) -> tuple[list[list[Fraction | None]], Fraction | None]:
        """:meth:`batch` for one allocation, in exact fractions."""
        cn = [a + b for a, b in zip(self.cell_n, add_n, strict=True)]
        cs = [a + b for a, b in zip(self.cell_s, add_s, strict=True)]
        ns, ss = [], []
        for li, size in enumerate(self.sizes):
            n, s = [0] * size, [0] * size
            for i, k in enumerate(self.maps[li].tolist()):
                n[k] += cn[i]
                s[k] += cs[i]
            ns.append(n)
            ss.append(s)
        kept = self.kept_exact(ns)
        out: list[list[Fraction | None]] = []
        value: Fraction | None = None
        for n, s, k in zip(ns, ss, kept, strict=True):
            rates = [Fraction(a, b) for a, b in zip(s, n, strict=True)]
            kr = [r for r, kk in zip(rates, k, strict=True) if kk]
            if len(kr) < 2 or max(kr) == 0:
                out.append([None] * len(rates))
                continue
            top = max(kr)
            irs: list[Fraction | None] = [r / top for r in rates]
            out.append(irs)
            low = min(r / top for r in kr)
            value = low if value is None or low < value else value
        return out, value


# --- every allocation -------------------------------------------------------------------
def count_allocations(parts: int, unknown: int, unknown_selected: int | None) -> int:
    if unknown_selected is None:
        return math.comb(unknown + 2 * parts - 1, 2 * parts - 1)
    su = unknown_selected
    return math.comb(su + parts - 1, parts - 1) * math.comb(unknown - su + parts - 1, parts - 1)


def compositions(total: int, parts: int) -> np.ndarray:
    """Every way to write ``total`` as an ordered sum of ``parts`` whole numbers ≥ 0."""
    if parts == 1:
        return np.array([[total]], dtype=np.int64)
    rows = math.comb(total + parts - 1, parts - 1)
    combos = itertools.combinations(range(total + parts - 1), parts - 1)
    bars = np.fromiter(
        itertools.chain.from_iterable(combos), dtype=np.int64, count=rows * (parts - 1)
    ).reshape(rows, parts - 1)
    edges = np.hstack(
        [
            np.full((len(bars), 1), -1, dtype=np.int64),
            bars,
            np.full((len(bars), 1), total + parts - 1, dtype=np.int64),
        ]
    )
    return np.diff(edges, axis=1) - 1


class _Allocations:
    """Every allocation of the unknowns to ``parts`` cells, addressable by index."""

    def __init__(self, parts: int, unknown: int, unknown_selected: int | None) -> None:
        self.parts = parts
        self.observed = unknown_selected is not None
        if unknown_selected is None:
            self.free = compositions(unknown, 2 * parts)
            self.size = len(self.free)
        else:
            self.sel = compositions(unknown_selected, parts)
            self.unsel = compositions(unknown - unknown_selected, parts)
            self.size = len(self.sel) * len(self.unsel)

    def rows(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        idx = np.arange(start, stop)
        if not self.observed:
            x = self.free[idx]
            return x[:, : self.parts] + x[:, self.parts :], x[:, : self.parts]
        sel = self.sel[idx // len(self.unsel)]
        return sel + self.unsel[idx % len(self.unsel)], sel

    def chunks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        for start in range(0, self.size, _CHUNK):
            stop = min(self.size, start + _CHUNK)
            yield (start, *self.rows(start, stop))


@dataclass
class Enumerated:
    """The exact extremes over every allocation: per level and category (low, high) of
    the impact ratio (None where no allocation defines it), and of the control's value."""

    ratios: list[list[tuple[Fraction, Fraction] | None]]
    value: tuple[Fraction, Fraction] | None
    allocations: int
    #: an allocation (add_n, add_s per cell) where the value is least
    low_at: tuple[list[int], list[int]] | None = None


def enumerate_bounds(
    layout: Layout, unknown: int, unknown_selected: int | None, cap: int = ENUMERATION_CAP
) -> Enumerated | None:
    """Visit every allocation (None when there are more than ``cap``). Floats locate the
    extremes; the candidates within 1e-12 of each are decided in exact fractions."""
    parts = len(layout.cell_n)
    total = count_allocations(parts, unknown, unknown_selected)
    if total > cap or (unknown_selected is None and total * 2 * parts > MAX_ENTRIES):
        return None
    allocs = _Allocations(parts, unknown, unknown_selected)
    # pass 1: the float extremes (targets: (level, category) and the value, as level -1)
    lo: dict[tuple[int, int], float] = {}
    hi: dict[tuple[int, int], float] = {}

    def note(key: tuple[int, int], col: np.ndarray) -> None:
        ok = np.isfinite(col)
        if not ok.any():
            return
        a, b = float(col[ok].min()), float(col[ok].max())
        lo[key] = min(lo.get(key, a), a)
        hi[key] = max(hi.get(key, b), b)

    for _, add_n, add_s in allocs.chunks():
        ratios, value = layout.batch(add_n, add_s)
        for li, ir in enumerate(ratios):
            for k in range(ir.shape[1]):
                note((li, k), ir[:, k])
        note((-1, 0), value)
    # pass 2: the candidates near each extreme
    cands: dict[tuple[int, int, bool], list[int]] = {}

    def near(key: tuple[int, int], col: np.ndarray, start: int) -> None:
        for best, low in ((lo.get(key), True), (hi.get(key), False)):
            if best is None:
                continue
            got = cands.setdefault((*key, low), [])
            if len(got) >= _CANDIDATES:
                continue
            tol = 1e-12 * max(abs(best), 1e-300)
            hit = np.flatnonzero(np.isfinite(col) & (np.abs(col - best) <= tol))
            got.extend(int(i) + start for i in hit[: _CANDIDATES - len(got)])

    for start, add_n, add_s in allocs.chunks():
        ratios, value = layout.batch(add_n, add_s)
        for li, ir in enumerate(ratios):
            for k in range(ir.shape[1]):
                near((li, k), ir[:, k], start)
        near((-1, 0), value, start)
    memo: dict[int, tuple[list[list[Fraction | None]], Fraction | None]] = {}

    def exact_at(i: int) -> tuple[list[list[Fraction | None]], Fraction | None]:
        if i not in memo:
            add_n, add_s = allocs.rows(i, i + 1)
            memo[i] = layout.exact(add_n[0].tolist(), add_s[0].tolist())
        return memo[i]

    def extreme(li: int, k: int, low: bool) -> Fraction | None:
        return found(li, k, low)[0]

    def found(li: int, k: int, low: bool) -> tuple[Fraction | None, int]:
        vals = []
        for i in cands.get((li, k, low), []):
            irs, v = exact_at(i)
            x = v if li == -1 else irs[li][k]
            if x is not None:
                vals.append((x, i))
        if not vals:
            return None, -1
        return min(vals) if low else max(vals)

    out: list[list[tuple[Fraction, Fraction] | None]] = []
    for li, size in enumerate(layout.sizes):
        row: list[tuple[Fraction, Fraction] | None] = []
        for k in range(size):
            a, b = extreme(li, k, True), extreme(li, k, False)
            row.append(None if a is None or b is None else (a, b))
        out.append(row)
    (a, where), b = found(-1, 0, True), extreme(-1, 0, False)
    at = None
    if a is not None:
        add_n, add_s = allocs.rows(where, where + 1)
        at = (add_n[0].tolist(), add_s[0].tolist())
    return Enumerated(out, None if a is None or b is None else (a, b), total, at)


def least_ratios(
    n: Sequence[int],
    s: Sequence[int],
    always: Sequence[bool],
    crossable: Sequence[bool],
    need: int,
    unknown: int,
    unknown_selected: int | None,
) -> list[tuple[Fraction, list[int], list[int]] | None]:
    """The exact least impact ratio of every category of one level over every allocation,
    with an allocation (add_n, add_s per category) attaining it, when the kept set moves:
    a category is kept iff it is ``always`` kept, or ``crossable`` and holds at least
    ``need`` rows after the allocation. Needs two or more ``always`` categories (so every
    allocation compares the level). docs/ll144.md proves the candidates below suffice:
    for each comparator e ≠ c and each number x of selected unknowns given to e (S_U when
    observed, every 0…U when free), e also takes the fewest unselected ones that keep it
    (need − n_e − x), and c takes every other unselected one; plus "every unknown to c".
    O(C²·U) candidates; floats locate the least, exact fractions decide."""
    cats = len(n)
    big_n = np.array(n, dtype=np.int64)
    big_s = np.array(s, dtype=np.int64)
    alw = np.array(always, dtype=bool)
    crs = np.array(crossable, dtype=bool) & ~alw
    xs = np.arange(unknown + 1) if unknown_selected is None else np.array([unknown_selected])
    pool = None if unknown_selected is None else unknown - unknown_selected

    def ratios_of(add_n: np.ndarray, add_s: np.ndarray, c: int) -> np.ndarray:
        nn, ss = big_n + add_n, big_s + add_s
        kept = alw | (crs & (nn >= need))
        rates = ss / nn
        top = np.where(kept, rates, -1.0).max(axis=1)
        ok = (kept.sum(axis=1) >= 2) & (top > 0)
        return np.where(ok, rates[:, c] / np.where(ok, top, 1.0), np.nan)

    def exact(add_n: list[int], add_s: list[int], c: int) -> Fraction | None:
        nn = [a + b for a, b in zip(n, add_n, strict=True)]
        ss = [a + b for a, b in zip(s, add_s, strict=True)]
        kept = [al or (cr and x >= need) for al, cr, x in zip(alw, crs, nn, strict=True)]
        rates = [Fraction(a, b) for a, b in zip(ss, nn, strict=True)]
        kr = [r for r, k in zip(rates, kept, strict=True) if k]
        if len(kr) < 2 or max(kr) == 0:
            return None
        return rates[c] / max(kr)

    out: list[tuple[Fraction, list[int], list[int]] | None] = []
    for c in range(cats):
        blocks: list[tuple[np.ndarray, np.ndarray]] = []
        for e in range(cats):
            if e == c or not (alw[e] or crs[e]):
                continue
            extra = np.zeros_like(xs) if alw[e] else np.maximum(0, need - big_n[e] - xs)
            left = (pool - extra) if pool is not None else (unknown - xs - extra)
            ok = left >= 0
            if not ok.any():
                continue
            add_n = np.zeros((int(ok.sum()), cats), dtype=np.int64)
            add_s = np.zeros_like(add_n)
            add_n[:, e] = (xs + extra)[ok]
            add_s[:, e] = xs[ok]
            add_n[:, c] += left[ok]
            blocks.append((add_n, add_s))
        whole_n = np.zeros((1, cats), dtype=np.int64)
        whole_n[0, c] = unknown
        whole_s = np.zeros_like(whole_n)
        whole_s[0, c] = unknown if unknown_selected is None else unknown_selected
        blocks.append((whole_n, whole_s))
        scored = [(ratios_of(a, b, c), a, b) for a, b in blocks]
        finite = [float(np.nanmin(r)) for r, _, _ in scored if np.isfinite(r).any()]
        if not finite:
            out.append(None)
            continue
        best = min(finite)
        tol = 1e-12 * max(abs(best), 1e-300)
        found: list[tuple[Fraction, list[int], list[int]]] = []
        for r, a, b in scored:
            for i in np.flatnonzero(np.isfinite(r) & (r <= best + tol))[:_CANDIDATES]:
                x = exact(a[i].tolist(), b[i].tolist(), c)
                if x is not None:
                    found.append((x, a[i].tolist(), b[i].tolist()))
        out.append(min(found, key=lambda t: t[0]) if found else None)
    return out


def single_level(layout: Layout, li: int) -> Layout:
    """Level li of ``layout`` as a layout of its own (its categories are the cells)."""
    n, s = layout.level_counts(li)
    return Layout(
        tuple(n),
        tuple(s),
        (np.arange(len(n)),),
        (len(n),),
        1,
        layout.comparator,
        layout.scope,
        layout.need,
        layout.total,
    )
