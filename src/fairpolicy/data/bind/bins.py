"""Binning a numeric group column (the ``bins`` grammar: :mod:`fairpolicy.policy.bins`).

Binning works on an encoded group column (:class:`~fairpolicy.data.bind.groups.GroupColumn`:
each row's code and the distinct values as text), so it is the same on every engine and
input type: the embedded engine's rows and an engine's distinct tuples (with their row
counts) give the same distinct values and counts, hence the same quantile edges and bins.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.data.bind.codes import smallest_code_dtype
from fairpolicy.data.bind.groups import GroupColumn
from fairpolicy.errors import DataError
from fairpolicy.policy.bins import Bins, edge_text, interval_label

#: a suggestion of bins is made when a numeric column has at least this many groups
SUGGEST_FROM_GROUPS = 10


def numbers_of(names: list[str]) -> NDArray[np.float64] | None:
    """The group names as finite numbers, or None when one of them is not one."""
    try:
        out = np.array([float(v) for v in names], dtype=np.float64)
    except ValueError:
        return None
    return out if np.all(np.isfinite(out)) else None


def quantile_edges(
    numbers: NDArray[np.float64], counts: NDArray[Any], n: int
) -> NDArray[np.float64]:
    """The quantiles ``k/n`` (k = 0..n) of the rows' values, from the distinct values and
    their row counts, under ``numpy.quantile``'s linear rule (its interpolation to the
    last bit, so the edges equal ``numpy.quantile`` of the rows); equal edges merged (one
    value: the edge twice, one bin [v, v])."""
    order = np.argsort(numbers, kind="stable")
    cum = np.cumsum(counts[order])
    total = int(cum[-1])
    found = []
    for q in np.linspace(0.0, 1.0, n + 1):
        pos = q * (total - 1)  # numpy.quantile's linear rule on the sorted rows
        lo_i, frac = math.floor(pos), pos - math.floor(pos)
        lo_v = numbers[order[np.searchsorted(cum, lo_i, side="right")]]
        hi_v = numbers[order[np.searchsorted(cum, min(lo_i + 1, total - 1), side="right")]]
        diff = hi_v - lo_v  # numpy's _lerp, to the last bit: from the nearer end
        found.append(hi_v - diff * (1 - frac) if frac >= 0.5 else lo_v + diff * frac)
    edges = np.unique(np.array(found))
    if len(edges) < 2:
        edges = np.array([edges[0], edges[0]])
    return edges


def assign(numbers: NDArray[np.float64], edges: NDArray[np.float64]) -> NDArray[np.intp]:
    """Each value's bin: k with edges[k] <= x < edges[k+1], the last bin closed
    (values outside the edges must have been refused before)."""
    return np.searchsorted(edges[1:-1], numbers, side="right").astype(np.intp)


def labels_of(edges: NDArray[np.float64]) -> list[str]:
    last = len(edges) - 2
    return [
        interval_label(float(edges[k]), float(edges[k + 1]), k == last) for k in range(last + 1)
    ]


def bin_column(
    col: GroupColumn,
    spec: Bins,
    weights: NDArray[Any] | None,
    *,
    column: str,
    file: str | None,
    control: str | None = None,
) -> GroupColumn:
    """``col`` with its values replaced by their bins (labels ``[lo, hi)``); the bins that
    hold no row are left out, as a value no row has is; missing rows stay missing. A value
    that is not a finite number, or lies outside explicit edges, is a DataError."""
    return binned_with_edges(col, spec, weights, column=column, file=file, control=control)[0]


def binned_with_edges(
    col: GroupColumn,
    spec: Bins,
    weights: NDArray[Any] | None,
    *,
    column: str,
    file: str | None,
    control: str | None = None,
) -> tuple[GroupColumn, NDArray[np.float64]]:
    """:func:`bin_column` and the edges it cut at."""
    names = col.names
    values = numbers_of(names)
    where = dict(file=file or "<DataFrame>", control=control, column=column, key="bins")
    if values is None:
        bad = next(v for v in names if numbers_of([v]) is None)
        shown = ", ".join(repr(v) for v in names[:5]) + ("…" if len(names) > 5 else "")
        raise DataError(
            f"the bins {spec.text} apply to '{column}', but the column holds {bad!r}, which "
            f"is not a finite number (values: {shown}).",
            hint="bin only a numeric column: drop its bins (the control's bins prop, or "
            "explore's --bins) for a column of categories, or clean the column so every "
            "present value is a number (an empty cell is missing).",
            **where,
        )
    codes = np.asarray(col.codes)
    present = codes >= 0
    counts = np.bincount(
        codes[present], weights=None if weights is None else weights[present], minlength=len(names)
    )
    if spec.quantiles:
        edges = quantile_edges(values, counts, spec.quantiles) if len(names) else np.zeros(2)
    else:
        edges = np.array(spec.edges, dtype=np.float64)
        lo, hi = edges[0], edges[-1]
        outside = (values < lo) | (values > hi)
        if outside.any():
            rows = int(counts[outside].sum())
            out_vals = values[outside]
            raise DataError(
                f"{rows:,} row(s) of '{column}' lie outside the bins {spec.text} "
                f"(values from {edge_text(float(out_vals.min()))} to "
                f"{edge_text(float(out_vals.max()))}); a value outside the edges is refused, "
                "not dropped.",
                hint=f"widen the edges to cover the column, e.g. bins: "
                f"{'-inf' if out_vals.min() < lo else edge_text(lo)},"
                f"{','.join(edge_text(float(e)) for e in edges[1:-1])}"
                f"{',' if len(edges) > 2 else ''}"
                f"{'inf' if out_vals.max() > hi else edge_text(hi)}.",
                **where,
            )
    index = assign(values, edges) if len(names) else np.zeros(0, dtype=np.intp)
    labels = labels_of(edges)
    used = np.flatnonzero(np.bincount(index, minlength=len(labels)))
    renumber = np.full(len(labels), -1, dtype=np.int64)
    renumber[used] = np.arange(len(used))
    dtype = smallest_code_dtype(len(used))
    lut = np.append(renumber[index], -1).astype(dtype)  # code −1 picks the last entry
    return GroupColumn(lut[codes], [labels[i] for i in used], {}), edges


def suggest_bins(groups: list[str], sizes: list[int], column: str) -> str | None:
    """A ``bins`` suggestion with concrete edges when ``groups`` (a dimension's groups with
    their rows) are many numbers, or None."""
    values = numbers_of(groups)
    if values is None or len(groups) < SUGGEST_FROM_GROUPS:
        return None
    counts = np.array(sizes, dtype=np.int64)
    if counts.sum() <= 0:
        return None
    inner = quantile_edges(values, counts, 4)[1:-1]
    edges = ",".join(["-inf", *(edge_text(float(e)) for e in inner), "inf"])
    return (
        f"'{column}' is numeric with {len(groups)} distinct values, one group each: declare "
        f"bins on the control, e.g. the prop bins: {edges} (its quartiles on these data) or "
        "bins: q4 (quartiles computed on each run)"
    )
