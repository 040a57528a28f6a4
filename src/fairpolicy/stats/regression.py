"""Regression cells: per-group sums of (y, ŷ, r, |r|, r², y², ŷ²) and the distinct (y, ŷ)
cells a regression bootstrap resamples."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from fairpolicy.stats.bincount import IntArray


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
