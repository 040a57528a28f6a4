"""Count tables: per-group (true class, predicted class) counts built in one pass, their
marginals over coarser dimensions, and the row → group index every builder shares."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.bincount import IntArray, weight_sum, weighted_bincount
from fairpolicy.stats.groups import GroupStats, group_name


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
    return tuple(group_name(key) for key in order), out, unknown, tuple(order)


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
        lost = np.array([any(v[cols.index(c)] is None for c in req) for v in cell_values])
        out[req] = GroupStats(
            unknown_counts=(
                np.asarray(cell_counts[lost].sum(axis=0), dtype=np.int64)
                if len(cell_values)
                else None
            ),
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
    names_out = tuple(group_name(keys[i]) for i in order)
    return names_out, row, weight_sum(missing, weights), tuple(keys[i] for i in order)
