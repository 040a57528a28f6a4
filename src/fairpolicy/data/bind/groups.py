"""Group (dimension and site) columns: their text form, the same on every engine and
input type, and their encoding as codes and sorted group names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.data.bind.codes import dictionary_chunks, lookup_codes, smallest_code_dtype
from fairpolicy.records import lean

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.sources.base import Table


def group_text(arr: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    """A group column as text, the same on every engine and input type.

    Text (and dictionary-encoded text) is kept as is: only a true null is missing here
    (``NA``, ``null``, ``nan``, ``None`` are group names). Other types are cast to text;
    in a float column a NaN is missing (null) and ``-0.0`` is the group ``0``, so a float
    group column gives the same groups whichever engine grouped it.
    """
    import pyarrow as pa

    if isinstance(arr, pa.Array):
        arr = pa.chunked_array([arr], type=arr.type)
    t = arr.type
    if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr
    if pa.types.is_floating(t):
        import pyarrow.compute as pc

        arr = arr.cast(pa.float64())
        nan = pc.is_nan(arr)
        # -0.0 + 0.0 is +0.0: one group "0"; NaN is missing
        arr = pc.if_else(nan, pa.scalar(None, pa.float64()), pc.add(arr, 0.0))
    try:
        return arr.cast(pa.string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
        raise TypeError(f"a group column of type {t} cannot be read as text: {exc}") from None


@lean(frozen=False)
class GroupColumn:
    """One group (dimension or site) column, encoded: each row's code (−1 = missing) and
    the sorted group names; ``spaced`` lists, per group, the values as written that
    differ from it only by surrounding spaces (they were counted as that group)."""

    codes: NDArray[np.signedinteger[Any]]
    names: list[str]
    spaced: dict[str, list[str]] = field(default_factory=dict)


def parse_missing_values(text: Any) -> frozenset[str]:
    """The ``missing_values`` prop: comma-separated tokens (trimmed) that count as missing
    in group columns, besides an empty cell or a true null."""
    if text is None:
        return frozenset()
    return frozenset(t.strip() for t in str(text).split(",") if t.strip())


def encode_dimension(arr: pa.ChunkedArray) -> tuple[NDArray[np.signedinteger[Any]], list[str]]:
    """Dictionary-encode a group column: codes (−1 = missing) and sorted group names
    (:func:`encode_group_column` without extra missing tokens)."""
    col = encode_group_column(arr)
    return col.codes, col.names


def encode_group_column(
    arr: pa.ChunkedArray, missing_values: frozenset[str] = frozenset()
) -> GroupColumn:
    """Dictionary-encode a group column: codes (−1 = missing) and sorted group names.

    Values are compared as text with surrounding whitespace trimmed; an empty value,
    a true null (a NaN in a float column: :func:`group_text`) and any of
    ``missing_values`` (compared trimmed) are missing; every other text, ``NA`` and
    ``unknown`` included, is a group. The codes use the narrowest integer type that
    also holds ``len(names)`` (the spare slot callers use for "missing"). Only the
    distinct values of each chunk are handled in Python; rows are mapped with one
    ``np.take``.
    """
    import pyarrow as pa

    from fairpolicy.data.kernels import call

    arr = group_text(arr)
    chunks = dictionary_chunks(arr)
    if not chunks:
        return GroupColumn(np.empty(0, dtype=np.int8), [])
    # every chunk's dictionary, trimmed in one call
    values = [v if pa.types.is_string(v.type) else v.cast(pa.string()) for v, _, _ in chunks]
    raw = pa.chunked_array(values, type=pa.string())
    text = call("utf8_trim_whitespace", raw).to_pylist()
    if missing_values:
        text = [None if v in missing_values else v for v in text]
    trimmed, at = [], 0
    for v in values:
        trimmed.append(text[at : at + len(v)])
        at += len(v)
    order = sorted({v for v in text if v})
    dtype = smallest_code_dtype(len(order))
    position = {v: i for i, v in enumerate(order)}
    luts = [np.array([position.get(v, -1) if v else -1 for v in t], dtype=dtype) for t in trimmed]
    codes = lookup_codes(chunks, luts, dtype)
    # keep only the names some row has: a dictionary may hold values no row uses
    seen = np.zeros(len(order) + 1, dtype=bool)  # the last slot catches −1
    seen[codes] = True
    if not seen[:-1].all():
        kept = np.flatnonzero(seen[:-1])
        order = [order[i] for i in kept]
        dtype = smallest_code_dtype(len(order))
        remap = np.full(len(seen), -1, dtype=dtype)
        remap[kept] = np.arange(len(kept))
        codes = remap[codes]
    # values as written that became one group only by trimming
    forms: dict[str, set[str]] = {}
    live = set(order)
    for written, name in zip(raw.to_pylist(), text, strict=True):
        if name and name in live:
            forms.setdefault(name, set()).add(written)
    spaced = {k: sorted(v) for k, v in forms.items() if len(v) > 1}
    return GroupColumn(codes, order, spaced)


def emptied_groups(
    table: Table,
    columns: tuple[str, ...],
    keep: NDArray[np.bool_],
    cache: Mapping[str, tuple[NDArray[Any], list[str]]] | None = None,
) -> list[tuple[str, int]]:
    """(group, data rows) of the groups of ``columns`` that have rows in ``table`` but
    none among the ``keep`` rows (``missing: drop`` removed them all)."""
    from fairpolicy.stats import group_index

    dims = {}
    for col in columns:
        if cache is not None and col in cache:
            dims[col] = cache[col]
        else:
            dims[col] = encode_dimension(table.columns[col])
    names, rows, _, _ = group_index(dims, columns, None)
    w = np.ones(len(rows), dtype=np.int64) if table.weights is None else table.weights
    ok = rows >= 0
    total = np.bincount(rows[ok], weights=w[ok], minlength=len(names))
    kept = np.bincount(rows[ok & keep], weights=w[ok & keep], minlength=len(names))
    return [(names[i], int(total[i])) for i in np.flatnonzero((total > 0) & (kept == 0))]


def missing_mask(
    arr: pa.ChunkedArray, missing_values: frozenset[str] = frozenset()
) -> NDArray[np.bool_]:
    """Which rows of a column hold no value, as fairpolicy reads a missing value
    everywhere: a true null (on CSV an empty cell, and for a column not read as text the
    reader's null tokens), a NaN in a float column, text that is empty once trimmed, or one
    of ``missing_values`` (compared with the value's text, trimmed, as group columns are).
    The data-quality metrics count these (``metrics/quality.py``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = arr.type
    textual = pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
    if missing_values or textual:
        return np.asarray(encode_group_column(arr, missing_values).codes < 0)
    if arr.null_count == 0 and not pa.types.is_floating(t):
        return np.zeros(len(arr), dtype=bool)
    nan = pa.types.is_floating(t)
    return np.asarray(pc.is_null(arr, nan_is_null=nan).to_numpy(zero_copy_only=False), dtype=bool)
