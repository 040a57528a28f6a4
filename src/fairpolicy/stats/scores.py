"""Score cells: exact per-group score distributions (:class:`ScoreStats`) and the joint
(class, all scores) cells the bootstrap resamples (:class:`JointCells`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.bincount import IntArray, weighted_bincount


@dataclass(frozen=True, eq=False)
class JointCells:
    """One group's rows keyed by (true class, score in every column) — the joint cells.

    With several score columns the per-column tables of :class:`ScoreStats` lose
    which scores sit on the same row; the bootstrap needs it to resample rows
    (:mod:`fairpolicy.stats.resample`). Cell ``i`` holds ``counts[i]`` rows of
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
