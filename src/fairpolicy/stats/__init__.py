"""Sufficient statistics: per-group confusion count tables, built in one pass.

``GroupStats.counts[g, t, p]`` is the number of rows of group ``g`` whose true
class is ``t`` and predicted class is ``p``. Every classification metric is a
pure function of it. The table is built with one ``np.bincount`` over a
combined integer index; groups of a coarser dimension (``sex`` out of
``sex,race``) are sums over the intersectional cells (:func:`marginalize`).

Every builder takes optional row ``weights`` (int64, ≥ 1): a row of weight w
counts as w identical rows. The DuckDB and Spark engines return the distinct
tuples of the bound columns with their row counts, so one weighted tuple stands
for all its rows; the embedded path passes ``None`` (every row weighs 1) and
pays nothing for the option.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]

#: Name of the pseudo-group holding rows whose dimension value is missing.
UNKNOWN_GROUP = "unknown"

#: Separator between column values in the name of an intersectional group.
INTERSECTION_SEP = " & "


@dataclass(frozen=True, eq=False)
class JointCells:
    """One group's rows keyed by (true class, score in every column) — the joint cells.

    With several score columns the per-column tables of :class:`ScoreStats` lose
    which scores sit on the same row; the bootstrap needs it to resample rows
    (:mod:`fairpolicy.stats.bootstrap`). Cell ``i`` holds ``counts[i]`` rows of
    true class ``classes[i]`` whose score in column ``j`` is
    ``values[g][j][index[i, j]]``. Cells are sorted by class, so each class is a
    contiguous slice.
    """

    index: IntArray  # (m, J) positions into the group's per-column ``values``
    classes: IntArray  # (m,) true class of each cell
    counts: IntArray  # (m,) rows in each cell


@dataclass(frozen=True, eq=False)
class ScoreStats:
    """Exact per-group score distributions, the sufficient statistics of score metrics.

    For group ``g`` and score column ``j``: ``values[g][j]`` holds the sorted
    distinct scores and ``counts[g][j]`` a (len(values), K) int64 matrix of how
    many rows of each true class carry that score. AUC, ECE, Brier, KS and mean
    scores are exact functions of it (ties included). ``columns[j]`` names the
    score column; a single column (binary ``y_score``) holds P(positive class).
    With more than one column, ``joint[g]`` (:class:`JointCells`) keeps which
    scores share a row; with one column the per-column table already is the joint.
    """

    columns: tuple[str, ...]
    values: tuple[tuple[NDArray[np.float64], ...], ...]
    counts: tuple[tuple[IntArray, ...], ...]
    joint: tuple[JointCells, ...] | None = None

    def select(self, idx: NDArray[np.intp]) -> ScoreStats:
        return ScoreStats(
            self.columns,
            tuple(self.values[i] for i in idx),
            tuple(self.counts[i] for i in idx),
            None if self.joint is None else tuple(self.joint[i] for i in idx),
        )


@dataclass(frozen=True, eq=False)
class RegressionCells:
    """One group's distinct (y, ŷ) pairs with how many rows carry each: the group's
    empirical distribution, the resampling unit of the regression bootstrap."""

    values: NDArray[np.float64]  # (m, 2): y, ŷ
    counts: IntArray  # (m,)

    def features(self) -> NDArray[np.float64]:
        """(m, 7): the summands of :class:`RegressionStats` for each cell."""
        return regression_features(self.values[:, 0], self.values[:, 1])


@dataclass(frozen=True, eq=False)
class RegressionStats:
    """Per-group sums for regression metrics, with residual r = y − ŷ.

    ``sums[g]`` = (Σy, Σŷ, Σr, Σ|r|, Σr², Σy², Σŷ²) over the rows of group g.
    ``cells[g]`` (kept when a bootstrap is asked for) holds the group's distinct
    (y, ŷ) pairs with their counts, so replicates can resample rows exactly.
    """

    sums: NDArray[np.float64]  # (G, 7)
    cells: tuple[RegressionCells, ...] | None = None

    FIELDS = ("y", "yhat", "r", "abs_r", "r2", "y2", "yhat2")

    def select(self, idx: NDArray[np.intp]) -> RegressionStats:
        cells = None if self.cells is None else tuple(self.cells[i] for i in idx)
        return RegressionStats(self.sums[idx], cells)


@dataclass(frozen=True, eq=False)
class RankingStats:
    """The group of each ranked item, in rank order (position 0 is the top).

    Items whose group is not compared (missing dimension, excluded group) keep
    their position with group −1, so exposure and top-k shares stay positional.
    """

    order: IntArray  # (n,) group index per position, −1 = not compared

    def select(self, idx: NDArray[np.intp], n_groups: int) -> RankingStats:
        remap = np.full(n_groups + 1, -1, dtype=np.int64)
        remap[idx] = np.arange(len(idx))
        return RankingStats(remap[self.order])


@dataclass(frozen=True, eq=False)
class GroupStats:
    """Sufficient statistics per group for one (inputs, dimension) binding.

    Classification bindings fill ``counts`` (and ``scores`` when a metric reads
    scores); regression and ranking bindings leave ``classes`` empty and carry
    ``sizes`` with ``regression`` or ``ranking``.
    """

    #: the dimension columns, e.g. ``("sex", "race")``
    dimension: tuple[str, ...]
    #: group names, one per first axis of ``counts`` (intersections joined by `` & ``)
    groups: tuple[str, ...]
    #: class labels as strings, in index order
    classes: tuple[str, ...]
    #: int64 array of shape (G, K, K): [group, y_true, y_pred]
    counts: IntArray
    #: index of the positive class for binary metrics (``None`` when not binary-ready)
    positive: int | None = None
    #: rows whose dimension value is missing (not part of any group)
    unknown_n: int = 0
    #: rows per group when there is no confusion table (regression, ranking)
    sizes: IntArray | None = None
    scores: ScoreStats | None = None
    regression: RegressionStats | None = None
    ranking: RankingStats | None = None
    #: each group's value in every dimension column, e.g. ``("F", "Black")``
    group_keys: tuple[tuple[str, ...], ...] = ()
    #: the same binding grouped by a second column (e.g. ``site`` for composites)
    secondary: GroupStats | None = None

    def __post_init__(self) -> None:
        g, k = len(self.groups), len(self.classes)
        if self.counts.shape != (g, k, k):
            raise ValueError(f"counts shape {self.counts.shape} != {(g, k, k)}")

    @property
    def n(self) -> IntArray:
        """Rows per group."""
        if self.sizes is not None:
            return self.sizes
        n: IntArray = self.counts.sum(axis=(1, 2))
        return n

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def select(self, keep: NDArray[np.bool_]) -> GroupStats:
        """The same statistics restricted to the groups where ``keep`` is true."""
        idx = np.flatnonzero(keep)
        return GroupStats(
            dimension=self.dimension,
            groups=tuple(self.groups[i] for i in idx),
            classes=self.classes,
            counts=self.counts[idx],
            positive=self.positive,
            unknown_n=self.unknown_n,
            sizes=None if self.sizes is None else self.sizes[idx],
            scores=None if self.scores is None else self.scores.select(idx),
            regression=None if self.regression is None else self.regression.select(idx),
            ranking=None if self.ranking is None else self.ranking.select(idx, len(self.groups)),
            group_keys=tuple(self.group_keys[i] for i in idx) if self.group_keys else (),
            secondary=self.secondary,
        )

    def with_extras(self, **extras: object) -> GroupStats:
        """The same statistics with score/regression/ranking parts attached."""
        import dataclasses

        return dataclasses.replace(self, **extras)  # type: ignore[arg-type]

    def binary(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """(tp, fp, fn, tn) per group, with ``positive`` as the positive class.

        With K > 2 classes the "negative" side pools every other class, which is
        only meaningful for one-vs-rest use; binary metrics refuse K > 2 earlier.
        """
        if self.positive is None:
            raise ValueError("positive class not set")
        c = self.counts
        p = self.positive
        tp = c[:, p, p]
        fn = c[:, p, :].sum(axis=1) - tp
        fp = c[:, :, p].sum(axis=1) - tp
        tn = c.sum(axis=(1, 2)) - tp - fn - fp
        return tp, fp, fn, tn


def weighted_bincount(
    index: NDArray[np.integer], weights: IntArray | None, minlength: int = 0
) -> IntArray:
    """``np.bincount`` of integer ``weights`` (None = 1 each), as exact int64 counts.

    bincount sums weights in float64, exact for totals below 2**53 rows.
    """
    if weights is None:
        out: IntArray = np.bincount(index, minlength=minlength).astype(np.int64, copy=False)
        return out
    flat = np.bincount(index, weights=weights, minlength=minlength)
    return np.rint(flat).astype(np.int64)


def weight_sum(mask: NDArray[np.bool_], weights: IntArray | None) -> int:
    """Rows selected by ``mask``, counting each row's weight (None = 1 each)."""
    if weights is None:
        return int(np.count_nonzero(mask))
    return int(weights[mask].sum())


def confusion_counts(
    group_codes: NDArray[np.integer],
    true_codes: NDArray[np.integer],
    pred_codes: NDArray[np.integer],
    num_groups: int,
    num_classes: int,
    weights: IntArray | None = None,
) -> IntArray:
    """counts[g, t, p] from integer codes with one ``np.bincount``.

    Codes must be in range; rows with a negative group code are not counted
    (the caller counts them as the unknown group). ``weights`` counts row i
    ``weights[i]`` times.
    """
    g = np.asarray(group_codes)
    t, p = np.asarray(true_codes), np.asarray(pred_codes)
    keep = g >= 0
    if not keep.all():
        g, t, p = g[keep], t[keep], p[keep]
        if weights is not None:
            weights = weights[keep]
    index = g.astype(np.int64)  # a copy: the index is built in place on it
    return _count_cells(index, t, p, num_groups, num_classes, weights)


def _count_cells(
    index: IntArray,
    t: NDArray[np.integer],
    p: NDArray[np.integer],
    num_groups: int,
    k: int,
    weights: IntArray | None = None,
) -> IntArray:
    """counts[g, t, p] from ``index`` (each row's group, consumed: updated in place)."""
    index *= k
    index += t
    index *= k
    index += p
    flat = weighted_bincount(index, weights, num_groups * k * k)
    return flat.reshape(num_groups, k, k)


def marginalize(
    cell_values: Sequence[tuple[str | None, ...]],
    cell_counts: IntArray,
    columns: Sequence[str],
    keep_columns: Sequence[str],
) -> tuple[tuple[str, ...], IntArray, int, tuple[tuple[str, ...], ...]]:
    """Sum intersectional cells into the groups of ``keep_columns``.

    ``cell_values[i]`` holds the value of each of ``columns`` for cell ``i``
    (``None`` = missing). Returns (group names, counts (G, K, K), unknown rows,
    group keys): cells missing any kept column go to the unknown pseudo-group.
    """
    pos = [list(columns).index(c) for c in keep_columns]
    names: dict[tuple[str, ...], int] = {}
    target = np.empty(len(cell_values), dtype=np.int64)
    unknown = 0
    for i, values in enumerate(cell_values):
        key = tuple(values[j] for j in pos)
        if any(v is None for v in key):
            target[i] = -1
            unknown += int(cell_counts[i].sum())
            continue
        target[i] = names.setdefault(key, len(names))  # type: ignore[arg-type]
    order = sorted(names, key=lambda k: k)  # deterministic, sorted group names
    remap = np.empty(len(names), dtype=np.int64)
    for new, key in enumerate(order):
        remap[names[key]] = new
    k = cell_counts.shape[1]
    out = np.zeros((len(order), k, k), dtype=np.int64)
    ok = target >= 0
    np.add.at(out, remap[target[ok]], cell_counts[ok])
    return tuple(INTERSECTION_SEP.join(key) for key in order), out, unknown, tuple(order)


#: Above this many dense (cell, t, p) bins the builder compacts cells with np.unique.
_DENSE_LIMIT = 20_000_000
#: Up to this many bins the rows are counted block by block (no full-length index).
_BLOCK_BINS = 1 << 15
#: Rows per block: the block's index stays in cache, and no large array is allocated
#: (on a fresh process every new page of a large array costs a page fault).
_BLOCK_ROWS = 1 << 16


def _blocked_counts(
    dimensions: Sequence[tuple[NDArray[np.integer], list[str]]],
    radix: Sequence[int],
    true_codes: NDArray[np.integer],
    pred_codes: NDArray[np.integer],
    total_cells: int,
    k: int,
    weights: IntArray | None = None,
) -> IntArray:
    """counts[cell, t, p] over the mixed-radix cells of ``dimensions``, block by block.

    The same numbers as building the full index and one ``np.bincount`` (integer sums
    are exact in any order), with memory bounded by the block size.
    """
    n_bins = total_cells * k * k
    parts = []
    for (codes, names), card in zip(dimensions, radix, strict=True):
        # missing (−1) goes to slot len(names); skip the remap when nothing is missing
        parts.append((codes, len(names), card, len(codes) > 0 and int(codes.min()) < 0))
    n = len(true_codes)
    counts = np.zeros(n_bins, dtype=np.int64)
    buf = np.empty(min(n, _BLOCK_ROWS), dtype=np.int64)
    for lo in range(0, n, _BLOCK_ROWS):
        hi = min(lo + _BLOCK_ROWS, n)
        index = buf[: hi - lo]
        index.fill(0)
        for codes, slot, card, missing in parts:
            c = codes[lo:hi]
            index *= card
            index += np.where(c < 0, slot, c) if missing else c
        index *= k
        index += true_codes[lo:hi]
        index *= k
        index += pred_codes[lo:hi]
        w = None if weights is None else weights[lo:hi]
        counts += weighted_bincount(index, w, n_bins)
    return counts.reshape(total_cells, k, k)


def build_group_stats(
    true_codes: NDArray[np.integer],
    pred_codes: NDArray[np.integer],
    classes: tuple[str, ...],
    dimensions: dict[str, tuple[NDArray[np.integer], list[str]]],
    requests: Sequence[tuple[str, ...]],
    positive: int | None = None,
    weights: IntArray | None = None,
) -> dict[tuple[str, ...], GroupStats]:
    """One pass over the rows for every requested dimension grouping.

    ``dimensions[col]`` holds each row's group code in ``col`` (−1 = missing)
    and the group names; ``weights`` (None = 1) counts each row that many times.
    The rows are counted once into the cells of the intersection of every
    requested column; each request is then a sum over
    those cells (:func:`marginalize`), so ``sex``, ``race`` and ``sex,race``
    cost one bincount together.
    """
    cols = list(dict.fromkeys(c for r in requests for c in r))
    k = len(classes)
    # slot `len(names)` of each column stands for "missing"
    radix = [len(dimensions[c][1]) + 1 for c in cols]
    total_cells = int(np.prod(radix, dtype=np.float64)) if radix else 1
    code_rows: list[list[int]]
    if total_cells >= 2**62:
        # a mixed-radix int64 code would overflow: key the cells by their rows of codes
        mat = np.stack(
            [np.where(dimensions[c][0] < 0, len(dimensions[c][1]), dimensions[c][0]) for c in cols],
            axis=1,
        )
        uniq, inverse = np.unique(mat, axis=0, return_inverse=True)
        cell_counts = confusion_counts(
            inverse.ravel(), true_codes, pred_codes, len(uniq), k, weights
        )
        code_rows = uniq.tolist()
    elif total_cells * k * k <= _BLOCK_BINS:
        counts = _blocked_counts(
            [dimensions[c] for c in cols], radix, true_codes, pred_codes, total_cells, k, weights
        )
        cell_ids = np.flatnonzero(counts.sum(axis=(1, 2)))
        cell_counts = counts[cell_ids]
    else:
        cell = np.zeros(len(true_codes), dtype=np.int64)
        for c, card in zip(cols, radix, strict=True):
            codes, names = dimensions[c]
            cell *= card
            cell += np.where(codes < 0, len(names), codes)
        if total_cells * k * k <= _DENSE_LIMIT:  # every cell code is >= 0: no filtering
            counts = _count_cells(cell, true_codes, pred_codes, total_cells, k, weights)
            present = np.flatnonzero(counts.sum(axis=(1, 2)))
            cell_ids, cell_counts = present, counts[present]
        else:
            cell_ids, inverse = np.unique(cell, return_inverse=True)
            cell_counts = confusion_counts(
                inverse, true_codes, pred_codes, len(cell_ids), k, weights
            )
    if total_cells < 2**62:
        code_rows = []
        for cid in cell_ids.tolist():
            row = []
            for card in reversed(radix):
                cid, code = divmod(cid, card)
                row.append(code)
            code_rows.append(row[::-1])
    # decode the cells into per-column values
    cell_values: list[tuple[str | None, ...]] = [
        tuple(
            None if code == len(dimensions[c][1]) else dimensions[c][1][code]
            for c, code in zip(cols, row, strict=True)
        )
        for row in code_rows
    ]
    out = {}
    for req in requests:
        groups, counts, unknown, keys = marginalize(cell_values, cell_counts, cols, req)
        out[req] = GroupStats(
            group_keys=keys,
            dimension=req,
            groups=groups,
            classes=classes,
            counts=counts,
            positive=positive,
            unknown_n=unknown,
        )
    return out


def row_groups(
    dimensions: dict[str, tuple[NDArray[np.integer], list[str]]],
    columns: Sequence[str],
    groups: Sequence[str],
) -> IntArray:
    """Each row's index into ``groups`` (a count table's groups) for ``columns``; −1 = none."""
    names, row, _, _ = group_index(dimensions, columns)
    position = {name: i for i, name in enumerate(groups)}
    remap = np.array([position.get(nm, -1) for nm in names] + [-1], dtype=np.int64)
    result: IntArray = remap[row]  # row −1 picks the trailing −1
    return result


def build_score_stats(
    group_of_row: IntArray,
    n_groups: int,
    true_codes: NDArray[np.integer],
    scores: NDArray[np.float64],
    columns: tuple[str, ...],
    num_classes: int,
    weights: IntArray | None = None,
) -> ScoreStats:
    """Per group and score column: sorted distinct scores × true-class counts.

    One stable sort per score column by (group, score); rows with group −1 are
    left out. ``scores`` is (n, J). With J > 1 columns the joint cells
    (:class:`JointCells`) are counted too: one more integer sort of the rows.
    ``weights`` (None = 1) counts each row that many times.
    """
    keep = group_of_row >= 0
    g = group_of_row[keep]
    t = np.asarray(true_codes, dtype=np.int64)[keep]
    s = np.asarray(scores, dtype=np.float64)[keep]
    w = None if weights is None else weights[keep]
    k = num_classes
    n_cols = s.shape[1]
    values: list[list[NDArray[np.float64]]] = [[] for _ in range(n_groups)]
    counts: list[list[IntArray]] = [[] for _ in range(n_groups)]
    bounds = np.searchsorted(np.sort(g), np.arange(n_groups + 1))
    #: each row's position in its group's distinct values, per column (J > 1 only)
    position = np.empty((len(g), n_cols), dtype=np.int64) if n_cols > 1 else None
    for j in range(n_cols):
        order = np.lexsort((s[:, j], g))
        sj, tj = s[order, j], t[order]
        wj = None if w is None else w[order]
        for gi in range(n_groups):
            lo, hi = bounds[gi], bounds[gi + 1]
            u, inv = np.unique(sj[lo:hi], return_inverse=True)
            c = weighted_bincount(
                inv.ravel() * k + tj[lo:hi], None if wj is None else wj[lo:hi], len(u) * k
            )
            values[gi].append(u)
            counts[gi].append(c.astype(np.int64).reshape(len(u), k))
            if position is not None:
                position[order[lo:hi], j] = inv.ravel()
    joint = None
    if position is not None:
        sizes = [
            max((len(values[gi][j]) for gi in range(n_groups)), default=1) for j in range(n_cols)
        ]
        joint = _joint_cells(g, t, position, n_groups, k, sizes, w)
    return ScoreStats(
        columns,
        tuple(tuple(v) for v in values),
        tuple(tuple(c) for c in counts),
        joint,
    )


def _joint_cells(
    g: IntArray,
    t: IntArray,
    position: IntArray,
    n_groups: int,
    k: int,
    sizes: Sequence[int],
    weights: IntArray | None = None,
) -> tuple[JointCells, ...]:
    """Distinct (group, class, position per column) rows with their (weighted) counts.

    A mixed-radix int64 code, re-ranked densely (order-preserving) whenever the
    next column could overflow it, then one ``np.unique``.
    """
    code = g * k + t
    card = max(n_groups * k, 1)
    for j, size in enumerate(sizes):
        size = max(int(size), 1)
        if card * size >= 2**62:
            ranks, code = np.unique(code, return_inverse=True)
            code = code.ravel().astype(np.int64)
            card = max(len(ranks), 1)
        code = code * size + position[:, j]
        card *= size
    if weights is None:
        _, first, cell_n = np.unique(code, return_index=True, return_counts=True)
    else:
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
        cell_n = weighted_bincount(inverse.ravel(), weights, len(first))
    cell_g, cell_t, cell_pos = g[first], t[first], position[first]
    edges = np.searchsorted(cell_g, np.arange(n_groups + 1))
    return tuple(
        JointCells(
            index=cell_pos[edges[i] : edges[i + 1]],
            classes=cell_t[edges[i] : edges[i + 1]],
            counts=cell_n[edges[i] : edges[i + 1]].astype(np.int64),
        )
        for i in range(n_groups)
    )


def regression_features(y: NDArray[np.float64], yhat: NDArray[np.float64]) -> NDArray[np.float64]:
    """(n, 7): y, ŷ, r, |r|, r², y², ŷ² per row (r = y − ŷ), the summands of the sums."""
    return np.stack(_summands(y, yhat), axis=1)


def _summands(y: NDArray[np.float64], yhat: NDArray[np.float64]) -> tuple[NDArray[np.float64], ...]:
    # beyond ~1e154 a square (beyond ~1e308 a residual) is +inf: the metrics that need
    # that sum report the overflow; the others never read it
    with np.errstate(over="ignore", invalid="ignore"):
        r = y - yhat
        return (y, yhat, r, np.abs(r), r * r, y * y, yhat * yhat)


def group_sums(
    group_of_row: IntArray,
    values: NDArray[np.float64],
    n_groups: int,
    weights: NDArray[np.float64] | None = None,
    total_weight: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """Σ weights·values per group, accurate when the values share a large offset.

    A plain ``np.bincount`` sum of values near 1e9 loses ~1e-6 of their mean (each
    addition rounds to the running total's ulp). Here each group's sum is shifted: with
    m_g the group's naive mean, Σ w·x = W_g·m_g + Σ w·(x − m_g), and the deviations are
    summed without the offset, so the error is that of the spread, not of the offset
    (the result is within a few ulps of the correctly rounded sum DuckDB's ``fsum``
    returns). A non-finite naive sum (overflow) is returned as is. ``total_weight``:
    W_g when the caller has it (the rows per group, for ``weights=None``).
    """
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        wx = values if weights is None else weights * values
        naive = np.bincount(group_of_row, weights=wx, minlength=n_groups)
        tw: NDArray[np.float64] = (
            total_weight
            if total_weight is not None
            else np.bincount(group_of_row, weights=weights, minlength=n_groups).astype(np.float64)
        )
        has = tw > 0
        shift = np.where(has, naive / np.where(has, tw, 1.0), 0.0)
        shift = np.where(np.isfinite(shift), shift, 0.0)
        dev_terms = values - np.take(shift, group_of_row)
        if weights is not None:
            dev_terms *= weights
        dev = np.bincount(group_of_row, weights=dev_terms, minlength=n_groups)
        out = tw * shift + dev
    result: NDArray[np.float64] = np.where(np.isfinite(naive) & np.isfinite(out), out, naive)
    return result


def build_regression_stats(
    group_of_row: IntArray,
    n_groups: int,
    y: NDArray[np.float64],
    yhat: NDArray[np.float64],
    weights: IntArray | None = None,
    *,
    keep_cells: bool = False,
) -> RegressionStats:
    """Σy, Σŷ, Σr, Σ|r|, Σr², Σy², Σŷ² per group (:func:`group_sums`: accurate under a
    large common offset); with ``keep_cells`` also each group's distinct (y, ŷ) pairs
    and their counts (one sort).

    ``weights`` (None = 1) counts each row that many times.
    """
    keep = group_of_row >= 0
    g, y, yhat = group_of_row[keep], y[keep], yhat[keep]
    parts = _summands(y, yhat)
    w = None if weights is None else weights[keep]
    wf = None if w is None else w.astype(np.float64)
    total_w = np.bincount(g, weights=wf, minlength=n_groups).astype(np.float64)
    sums = np.stack([group_sums(g, p, n_groups, wf, total_w) for p in parts], axis=1).reshape(
        n_groups, len(parts)
    )
    cells = None
    if keep_cells:
        order = np.lexsort((yhat, y, g))
        gs, ys, ps = g[order], y[order], yhat[order]
        new = np.ones(len(gs), dtype=bool)
        new[1:] = (gs[1:] != gs[:-1]) | (ys[1:] != ys[:-1]) | (ps[1:] != ps[:-1])
        starts = np.flatnonzero(new)
        if w is None:
            counts = np.diff(np.append(starts, len(gs))).astype(np.int64)
        else:
            counts = (
                np.add.reduceat(w[order].astype(np.int64), starts)
                if len(gs)
                else np.zeros(0, dtype=np.int64)
            )
        cell_group = gs[starts]
        values = np.column_stack((ys[starts], ps[starts]))
        bounds = np.searchsorted(cell_group, np.arange(n_groups + 1))
        cells = tuple(
            RegressionCells(values[bounds[i] : bounds[i + 1]], counts[bounds[i] : bounds[i + 1]])
            for i in range(n_groups)
        )
    return RegressionStats(sums.astype(np.float64), cells)


def group_index(
    dimensions: dict[str, tuple[NDArray[np.integer], list[str]]],
    columns: Sequence[str],
    weights: IntArray | None = None,
) -> tuple[tuple[str, ...], IntArray, int, tuple[tuple[str, ...], ...]]:
    """(group names, each row's group index (−1 = missing), missing rows) for ``columns``.

    Names and order are those :func:`marginalize` gives, so every kind of
    binding sees the same groups. ``weights`` (None = 1) weighs the missing rows.
    """
    n = len(dimensions[columns[0]][0])
    code = np.zeros(n, dtype=np.int64)
    missing = np.zeros(n, dtype=bool)
    for c in columns:
        codes, names = dimensions[c]
        missing |= codes < 0
        code = code * (len(names) + 1) + np.where(codes < 0, len(names), codes)
    present = np.unique(code[~missing])
    keys = []
    for cid in present.tolist():
        parts = []
        for c in reversed(columns):
            names = dimensions[c][1]
            cid, v = divmod(cid, len(names) + 1)
            parts.append(names[v])
        keys.append(tuple(reversed(parts)))
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    row = np.full(n, -1, dtype=np.int64)
    row[~missing] = rank[np.searchsorted(present, code[~missing])]
    names_out = tuple(INTERSECTION_SEP.join(keys[i]) for i in order)
    return names_out, row, weight_sum(missing, weights), tuple(keys[i] for i in order)
