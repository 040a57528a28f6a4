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
    shift = e - base
    acc = [0] * minlength
    if r is None or int(r.max()) < 1 << 26:  # products m·r below 2**53 per half
        _grouped(acc, idx, m, shift, r)
    else:  # products or sums that could overflow int64: Python integers throughout
        rows_ = [1] * len(m) if r is None else r.tolist()
        for b, mi, s, ri in zip(idx.tolist(), m.tolist(), shift.tolist(), rows_, strict=True):
            acc[b] += (mi * ri) << s
    up = base + EXACT_SCALE  # >= 0: base >= -1074 - 52... normalised below
    out[:] = [a << up if up >= 0 else _down(a, -up) for a in acc]
    return out


#: entries × largest row count per chunk: sums of 27-bit halves stay below 2**53, so
#: float64 bincounts of them are exact
_CHUNK = 1 << 26
#: at most this many (bin, exponent) slots per bincount; more: sort instead
_SLOTS = 1 << 22


def _grouped(
    acc: list[int],
    idx: NDArray[np.int64],
    m: NDArray[np.int64],
    shift: NDArray[np.int64],
    r: NDArray[np.int64] | None,
) -> None:
    """Add Σ m·r·2**shift per bin into ``acc``, vectorised: the entries of one (bin,
    shift) slot are summed as two halves of the mantissa (27 and 26 bits) with float64
    bincounts, exact because every partial sum is an integer below 2**53 (chunks of at
    most :data:`_CHUNK` / max(r) entries); each slot's sum is then shifted in Python."""
    span = int(shift.max()) + 1
    key = idx * span + shift
    slots = len(acc) * span
    if slots > _SLOTS:  # many bins and exponents: number the slots that occur
        uniq, key = np.unique(key, return_inverse=True)
        key = key.ravel()
    else:
        uniq = None
    n_slots = slots if uniq is None else len(uniq)
    hi, lo = (m >> 26).astype(np.float64), (m & ((1 << 26) - 1)).astype(np.float64)
    if r is not None:
        hi, lo = hi * r, lo * r  # exact: below 2**53 (r <= _CHUNK / 2**27 · … checked)
    most = 1 if r is None else int(r.max())
    step = max(1, _CHUNK // most)
    sums = [0] * n_slots
    for a in range(0, len(m), step):
        part = slice(a, a + step)
        h = np.bincount(key[part], weights=hi[part], minlength=n_slots)
        low = np.bincount(key[part], weights=lo[part], minlength=n_slots)
        for k in np.flatnonzero((h != 0) | (low != 0)).tolist():
            sums[k] += (int(h[k]) << 26) + int(low[k])
    for k, total in enumerate(sums):
        if total:
            slot = k if uniq is None else int(uniq[k])
            b, sh = divmod(slot, span)
            acc[b] += total << sh


def _down(a: int, bits: int) -> int:
    """``a >> bits``, which is exact here: a subnormal weight's mantissa has at least
    ``bits`` trailing zero bits (its value is a multiple of 2**-1074)."""
    assert a & ((1 << bits) - 1) == 0, "a weight below the smallest subnormal"
    return a >> bits


def exact_total(weights: NDArray[np.floating], rows: NDArray[np.integer] | None = None) -> int:
    """Σ weights · rows exactly, in units of 2**-:data:`EXACT_SCALE`."""
    w = np.asarray(weights, dtype=np.float64)
    return int(exact_bincount(np.zeros(len(w), dtype=np.int64), w, rows, 1)[0])
