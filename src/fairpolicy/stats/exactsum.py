"""Exact sums of float sample weights.

A double is a binary rational: every finite double is an integer multiple of 2**-1074.
So a sum of weights (each row's float weight times its row count) is an exact rational
too, though float64 addition rounds it: ten rows of weight 0.3 sum to 2.9999999999999996,
and a parity gap of exactly 1/10 comes out as 0.09999999999999998. The sums here are
exact: each cell's total weight as a Python integer, in units of 2**-:data:`EXACT_SCALE`
(the same unit for every table), so ratios of them are the exact ratios of the weighted
sums and a constant weight never changes a ratio.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

#: exact weighted sums are integers in units of 2**-EXACT_SCALE (the smallest subnormal)
EXACT_SCALE = 1074


def exact_bincount(
    index: NDArray[np.integer],
    weights: NDArray[np.floating],
    rows: NDArray[np.integer] | None,
    minlength: int,
) -> NDArray[Any]:
    """``np.bincount(index, weights * rows)`` computed exactly: an object array of Python
    ints, each bin's sum in units of 2**-:data:`EXACT_SCALE`.

    Each weight is split into its 53-bit integer mantissa and binary exponent
    (``w = m · 2**e``); a bin's sum is Σ m·r·2**(e − e_min), shifted once to the common
    unit at the end, so the work per entry is one small integer product.
    """
    idx = np.asarray(index, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    if idx.size and (not np.isfinite(w).all() or (w < 0).any()):
        raise ValueError("exact weight sums need finite, non-negative weights")
    out = np.empty(minlength, dtype=object)
    out[:] = [0] * minlength
    nz = w != 0
    if not nz.any():
        return out
    idx, w = idx[nz], w[nz]
    r = None if rows is None else np.asarray(rows, dtype=np.int64)[nz]
    mant, expo = np.frexp(w)  # w = mant · 2**expo, 0.5 <= mant < 1
    m = (mant * 2.0**53).astype(np.int64)  # exact: 53 significant bits
    e = expo.astype(np.int64) - 53  # w = m · 2**e
    base = int(e.min())
    shift = (e - base).tolist()
    acc = [0] * minlength
    if r is None:
        for b, mi, s in zip(idx.tolist(), m.tolist(), shift, strict=True):
            acc[b] += mi << s
    else:
        for b, mi, s, ri in zip(idx.tolist(), m.tolist(), shift, r.tolist(), strict=True):
            acc[b] += (mi * ri) << s
    up = base + EXACT_SCALE  # >= 0: base >= -1074 - 52... normalised below
    out[:] = [a << up if up >= 0 else _down(a, -up) for a in acc]
    return out


def _down(a: int, bits: int) -> int:
    """``a >> bits``, which is exact here: a subnormal weight's mantissa has at least
    ``bits`` trailing zero bits (its value is a multiple of 2**-1074)."""
    assert a & ((1 << bits) - 1) == 0, "a weight below the smallest subnormal"
    return a >> bits


def exact_total(weights: NDArray[np.floating], rows: NDArray[np.integer] | None = None) -> int:
    """Σ weights · rows exactly, in units of 2**-:data:`EXACT_SCALE`."""
    w = np.asarray(weights, dtype=np.float64)
    return int(exact_bincount(np.zeros(len(w), dtype=np.int64), w, rows, 1)[0])
