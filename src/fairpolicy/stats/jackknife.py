"""The jackknife behind BCa's acceleration, computed from cells, never from rows.

Leaving one row out of a cell changes one count, so every row of a cell has the same
leave-one-out value: each non-empty cell (count cell, or joint score cell) is one metric
evaluation weighted by its count, and the result equals the row jackknife exactly. Above
``JACKKNIFE_MAX`` cells, groups with too many cells use the grouped jackknife of Efron &
Narasimhan (2020): their rows are split at random (seeded) into equal blocks, one left out
at a time. :func:`acceleration` is the stratified (multi-sample) estimate scipy uses; see
:mod:`fairpolicy.stats.bootstrap` for how BCa uses it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.groups import GroupStats
from fairpolicy.stats.resample import (
    JACKKNIFE_STREAM,
    Cells,
    cells_of,
    needed,
    read_value,
    with_scores,
)
from fairpolicy.stats.values import Statistic

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: above this many cells the BCa jackknife leaves out random blocks of rows instead
JACKKNIFE_MAX = 2000
#: up to this many cells per group, jackknife blocks are dealt (hypergeometric), not shuffled
_BLOCKS_BY_DEAL = 10_000
#: numpy's multivariate hypergeometric draw takes fewer than this many units in total
_DEAL_LIMIT = 10**9
#: fewest blocks per group in the grouped jackknife
JACKKNIFE_MIN_BLOCKS = 20


@dataclass(frozen=True)
class Jackknife:
    """Leave-one-out values: one per unit (a cell, or a block of rows), with weights."""

    values: FloatArray  # (U,)
    groups: FloatArray  # (U, len(compared))
    weights: FloatArray  # (U,) rows the unit stands for (cell count), or 1 for a block
    sample: IntArray  # (U,) which kept group the unit belongs to
    sizes: FloatArray  # per kept group: n_g (cells) or M_g (blocks)
    grouped: bool  # True when some group used random blocks


def acceleration(jack: Jackknife, values: FloatArray | None = None) -> float:
    """The stratified jackknife acceleration (scipy's ``_bca_interval``), weighted by cell."""
    theta = jack.values if values is None else values
    num = den = 0.0
    for s, size in enumerate(jack.sizes.tolist()):
        m = jack.sample == s
        if not m.any():
            continue
        w, th = jack.weights[m], theta[m]
        mean = float(np.dot(w, th) / w.sum())
        u = (size - 1.0) * (mean - th)
        num += float(np.dot(w, u**3)) / size**3
        den += float(np.dot(w, u**2)) / size**2
    if den <= 0.0:
        return 0.0
    return float(num / (6.0 * math.pow(den, 1.5)))


def _units(
    counts: IntArray, cells: Cells | None, budget: int, rng: np.random.Generator
) -> tuple[list[tuple[IntArray, IntArray]], FloatArray, float]:
    """A group's jackknife deletions: (unit ids, how many rows of each) per deletion.

    Units are count cells (flattened (t, p)) or joint score cells. Exact: one
    deletion per non-empty unit, weighted by its count. Grouped: ``budget``
    random blocks of rows (weights 1).
    """
    w = counts.ravel() if cells is None else cells.counts
    nz = np.flatnonzero(w)
    if len(nz) <= budget:
        ones = np.ones(1, dtype=np.int64)
        return (
            [(np.array([u]), ones) for u in nz.tolist()],
            w[nz].astype(np.float64),
            float(w.sum()),
        )
    blocks = []
    if len(nz) <= _BLOCKS_BY_DEAL:
        # few cells (possibly many rows): deal the rows into blocks, O(blocks × cells)
        n = int(w.sum())
        sizes = np.full(budget, n // budget, dtype=np.int64)
        sizes[: n % budget] += 1
        remaining = w[nz].astype(np.int64)
        for size in sizes.tolist():
            x = rng.multivariate_hypergeometric(remaining, size).astype(np.int64)
            remaining -= x
            hit = x > 0
            blocks.append((nz[hit].astype(np.int64), x[hit]))
    else:
        # about one row per cell (continuous scores): shuffle the rows, O(rows)
        rows = rng.permutation(np.repeat(nz, w[nz]))
        for block in np.array_split(rows, budget):
            ids, many = np.unique(block, return_counts=True)
            blocks.append((ids.astype(np.int64), many.astype(np.int64)))
    return blocks, np.ones(budget, dtype=np.float64), float(budget)


def _take_rows(row: IntArray, k: int) -> IntArray:
    """Take ``k`` rows out of one class's (y_pred) counts, from the largest cells first."""
    out = row.copy()
    left = int(k)
    for p in np.argsort(-out, kind="stable").tolist():
        if left == 0:
            break
        d = min(left, int(out[p]))
        out[p] -= d
        left -= d
    return out


def jackknife(
    spec: Statistic,
    stats: GroupStats,
    keep: NDArray[np.bool_],
    params: Mapping[str, Any],
    compared: tuple[str, ...],
    seed: int,
) -> Jackknife | str:
    """Leave-one-row-out values computed per cell (or per random block), or why not."""
    if stats.regression is not None or stats.ranking is not None:
        return (
            "the jackknife for BCa's acceleration is computed from count and score cells; "
            "regression and ranking statistics do not have it"
        )
    if stats.survey is not None:
        return (
            "the cell jackknife leaves one row out of a count-table cell, and under "
            "fractional sample weights the rows of a cell weigh differently"
        )
    stats = needed(spec, stats)
    mask = np.asarray(keep, dtype=bool)
    base = stats.select(mask)
    k = base.num_classes
    cells: tuple[Cells, ...] | None = None
    if base.scores is not None:
        cells, why = cells_of(base)
        if cells is None:
            return why or "no score cells"
    n_groups = len(base.groups)
    n = base.counts.sum(axis=(1, 2))
    sizes_cells = [
        int(np.count_nonzero(base.counts[g])) if cells is None else len(cells[g].counts)
        for g in range(n_groups)
    ]
    total_cells = sum(sizes_cells)
    rng = np.random.default_rng((seed, JACKKNIFE_STREAM))
    values: list[float] = []
    per_group: list[FloatArray] = []
    weights: list[FloatArray] = []
    sample: list[int] = []
    sizes: list[float] = []
    grouped = False
    n_all = max(int(n.sum()), 1)
    if total_cells > JACKKNIFE_MAX and len(n) and int(n.max()) >= _DEAL_LIMIT:
        return (
            f"BCa's grouped jackknife deals a group's {int(n.max()):,} rows into blocks with "
            f"a multivariate hypergeometric draw, which takes fewer than {_DEAL_LIMIT:,} "
            "(numpy's limit)"
        )
    for g in range(n_groups):
        if total_cells <= JACKKNIFE_MAX:
            budget = sizes_cells[g]
        else:
            budget = max(JACKKNIFE_MIN_BLOCKS, int(JACKKNIFE_MAX * int(n[g]) / n_all))
        units, w, size = _units(base.counts[g], None if cells is None else cells[g], budget, rng)
        grouped = grouped or len(units) < sizes_cells[g]
        sizes.append(size)
        for ids, many in units:
            counts = base.counts.copy()
            scores = base.scores
            if cells is None:
                flat = counts[g].reshape(-1)
                np.subtract.at(flat, ids, many)
            else:
                assert base.scores is not None
                c = cells[g]
                wt = c.counts.copy()
                np.subtract.at(wt, ids, many)
                gone = np.bincount(c.classes[ids], weights=many.astype(np.float64), minlength=k)
                for t in np.flatnonzero(gone).tolist():
                    counts[g, t] = _take_rows(counts[g, t], int(np.rint(gone[t])))
                tables = [
                    c.tables(wt, k) if h == g else (base.scores.values[h], base.scores.counts[h])
                    for h in range(n_groups)
                ]
                scores = with_scores(base.scores.columns, tables, None)
            mv = spec.fn(
                dataclasses.replace(base, counts=counts, scores=scores, secondary=None), params
            )
            got = read_value(mv, compared)
            if isinstance(got, str):
                return (
                    "a leave-one-out value is undefined or compares other groups (a group "
                    "whose rate rests on a single row), so the jackknife acceleration is not "
                    "defined"
                )
            values.append(got[0])
            per_group.append(got[1])
        weights.append(w)
        sample.extend([g] * len(units))
    return Jackknife(
        values=np.array(values, dtype=np.float64),
        groups=np.array(per_group, dtype=np.float64).reshape(len(values), len(compared)),
        weights=np.concatenate(weights) if weights else np.zeros(0),
        sample=np.array(sample, dtype=np.int64),
        sizes=np.array(sizes, dtype=np.float64),
        grouped=grouped,
    )
