"""Weighted ``np.bincount``: the one counting primitive every sufficient statistic uses.

A row of weight w counts as w identical rows (``weights`` None: every row weighs 1).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]


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
