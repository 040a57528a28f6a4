"""Sufficient statistics: per-group confusion count tables, built in one pass.

``GroupStats.counts[g, t, p]`` is the number of rows of group ``g`` whose true
class is ``t`` and predicted class is ``p``. Every classification metric is a
pure function of it. The table is built with one ``np.bincount`` over a
combined integer index; groups of a coarser dimension (``sex`` out of
``sex,race``) are sums over the intersectional cells (:func:`marginalize`).
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
class GroupStats:
    """Confusion counts per group for one (target, prediction, dimension) binding."""

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

    def __post_init__(self) -> None:
        g, k = len(self.groups), len(self.classes)
        if self.counts.shape != (g, k, k):
            raise ValueError(f"counts shape {self.counts.shape} != {(g, k, k)}")

    @property
    def n(self) -> IntArray:
        """Rows per group."""
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
        )

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


def confusion_counts(
    group_codes: NDArray[np.integer],
    true_codes: NDArray[np.integer],
    pred_codes: NDArray[np.integer],
    num_groups: int,
    num_classes: int,
) -> IntArray:
    """counts[g, t, p] from integer codes with one ``np.bincount``.

    Codes must be in range; rows with a negative group code are not counted
    (the caller counts them as the unknown group).
    """
    k = num_classes
    g = np.asarray(group_codes, dtype=np.int64)
    keep = g >= 0
    if not keep.all():
        g = g[keep]
        t = np.asarray(true_codes, dtype=np.int64)[keep]
        p = np.asarray(pred_codes, dtype=np.int64)[keep]
    else:
        t = np.asarray(true_codes, dtype=np.int64)
        p = np.asarray(pred_codes, dtype=np.int64)
    index = (g * k + t) * k + p
    flat = np.bincount(index, minlength=num_groups * k * k)
    return flat.astype(np.int64, copy=False).reshape(num_groups, k, k)


def marginalize(
    cell_values: Sequence[tuple[str | None, ...]],
    cell_counts: IntArray,
    columns: Sequence[str],
    keep_columns: Sequence[str],
) -> tuple[tuple[str, ...], IntArray, int]:
    """Sum intersectional cells into the groups of ``keep_columns``.

    ``cell_values[i]`` holds the value of each of ``columns`` for cell ``i``
    (``None`` = missing). Returns (group names, counts (G, K, K), unknown rows):
    cells missing any kept column go to the unknown pseudo-group.
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
    return tuple(INTERSECTION_SEP.join(key) for key in order), out, unknown


#: Above this many dense (cell, t, p) bins the builder compacts cells with np.unique.
_DENSE_LIMIT = 20_000_000


def build_group_stats(
    true_codes: NDArray[np.integer],
    pred_codes: NDArray[np.integer],
    classes: tuple[str, ...],
    dimensions: dict[str, tuple[NDArray[np.int64], list[str]]],
    requests: Sequence[tuple[str, ...]],
    positive: int | None = None,
) -> dict[tuple[str, ...], GroupStats]:
    """One pass over the rows for every requested dimension grouping.

    ``dimensions[col]`` holds each row's group code in ``col`` (−1 = missing)
    and the group names. The rows are counted once into the cells of the
    intersection of every requested column; each request is then a sum over
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
        cell_counts = confusion_counts(inverse.ravel(), true_codes, pred_codes, len(uniq), k)
        code_rows = uniq.tolist()
    else:
        cell = np.zeros(len(true_codes), dtype=np.int64)
        for c, card in zip(cols, radix, strict=True):
            codes, names = dimensions[c]
            cell *= card
            cell += np.where(codes < 0, len(names), codes)
        if total_cells * k * k <= _DENSE_LIMIT:
            counts = confusion_counts(cell, true_codes, pred_codes, total_cells, k)
            present = np.flatnonzero(counts.sum(axis=(1, 2)))
            cell_ids, cell_counts = present, counts[present]
        else:
            cell_ids, inverse = np.unique(cell, return_inverse=True)
            cell_counts = confusion_counts(inverse, true_codes, pred_codes, len(cell_ids), k)
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
        groups, counts, unknown = marginalize(cell_values, cell_counts, cols, req)
        out[req] = GroupStats(
            dimension=req,
            groups=groups,
            classes=classes,
            counts=counts,
            positive=positive,
            unknown_n=unknown,
        )
    return out
