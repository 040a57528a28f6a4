"""Arrow columns as integer codes without a copy per row: the value and validity
buffers as NumPy views, dictionary chunks and their lookup tables, the narrowest code
type; the distinct values and codes of label columns."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import pyarrow as pa


def smallest_code_dtype(n: int) -> np.dtype[Any]:
    """The narrowest signed integer type holding the codes ``-1 .. n`` (``n`` = a spare slot)."""
    for dtype in (np.int8, np.int16, np.int32):
        if n <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def arrow_values(arr: pa.Array) -> NDArray[Any]:
    """A fixed-width integer or float Arrow array's value buffer as a zero-copy NumPy view.

    Null slots hold arbitrary values; callers mask them with :func:`validity`. (The
    reason not to call ``Array.to_numpy``: its first call imports pandas, 0.2 s.)
    """
    import pyarrow as pa

    t = arr.type
    if pa.types.is_floating(t):
        kind = "f"
    elif pa.types.is_signed_integer(t):
        kind = "i"
    elif pa.types.is_unsigned_integer(t):
        kind = "u"
    else:
        raise TypeError(f"not a fixed-width numeric array: {t}")
    dtype = np.dtype(f"{kind}{t.bit_width // 8}")
    if len(arr) == 0:
        return np.empty(0, dtype=dtype)
    return np.frombuffer(
        arr.buffers()[1], dtype=dtype, count=len(arr), offset=arr.offset * dtype.itemsize
    )


def validity(arr: pa.Array) -> NDArray[np.bool_] | None:
    """Which slots of ``arr`` hold a value (None when none is null)."""
    if arr.null_count == 0:
        return None
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")[arr.offset :].astype(
        bool
    )


def dictionary_chunks(
    arr: pa.ChunkedArray,
) -> list[tuple[pa.Array, NDArray[Any], NDArray[np.bool_] | None]]:
    """Per chunk: (its dictionary, a NumPy view of its indices, their validity or None).

    A column that is not dictionary-encoded is encoded first (one hash pass), so the
    work per distinct value happens on the small dictionaries, never per row.
    """
    import pyarrow as pa

    from fairpolicy.data.kernels import call

    if not pa.types.is_dictionary(arr.type):
        arr = call("dictionary_encode", arr)
    out = []
    for chunk in arr.chunks:
        indices = chunk.indices
        out.append((chunk.dictionary, arrow_values(indices), validity(indices)))
    return out


def lookup_codes(
    chunks: list[tuple[pa.Array, NDArray[Any], NDArray[np.bool_] | None]],
    luts: list[NDArray[Any]],
    dtype: np.dtype[Any],
) -> NDArray[Any]:
    """Row codes ``lut[index]`` chunk by chunk; null rows get −1."""
    total = sum(len(idx) for _, idx, _ in chunks)
    out = np.empty(total, dtype=dtype)
    at = 0
    for (_, idx, valid), lut in zip(chunks, luts, strict=True):
        seg = out[at : at + len(idx)]
        if len(lut):
            np.take(lut, idx, out=seg, mode="clip")  # null slots may hold any index
        else:
            seg[:] = -1
        if valid is not None:
            seg[~valid] = -1
        at += len(idx)
    return out


def distinct_values(arrays: list[pa.ChunkedArray]) -> list[Any]:
    """The sorted distinct values of signed-integer or string label columns (no nulls)."""
    import pyarrow as pa

    from fairpolicy.data.kernels import call

    if all(pa.types.is_signed_integer(a.type) for a in arrays):
        bounds = [call("min_max", a).as_py() for a in arrays]
        if all(b["min"] is not None for b in bounds):
            lo, hi = min(b["min"] for b in bounds), max(b["max"] for b in bounds)
            if hi - lo < 1 << 20:  # mark the values seen: no hashing, no large array
                seen = np.zeros(hi - lo + 1, dtype=bool)
                for arr in arrays:
                    for chunk in arr.chunks:
                        values = arrow_values(chunk)
                        seen[np.subtract(values, lo, dtype=np.int64) if lo else values] = True
                found: list[Any] = (np.flatnonzero(seen) + lo).tolist()
                return found
    return sorted(set().union(*(call("unique", a).to_pylist() for a in arrays)))


def label_codes(
    arr: pa.ChunkedArray, classes: list[Any], integer: bool
) -> NDArray[np.signedinteger[Any]]:
    """Each row's position in ``classes`` (signed-integer or string labels, no nulls,
    every value one of ``classes``), in the narrowest integer type that holds it."""
    dtype = smallest_code_dtype(len(classes))
    if integer and classes and max(classes) - min(classes) < 1 << 20:
        lo = min(classes)
        lut = np.full(max(classes) - lo + 1, -1, dtype=dtype)
        lut[np.asarray(classes, dtype=np.int64) - lo] = np.arange(len(classes))
        # classes 0..K-1 (the usual case): the code is the value itself
        identity = classes == list(range(len(classes)))
        out = np.empty(len(arr), dtype=dtype)
        at = 0
        for chunk in arr.chunks:
            values = arrow_values(chunk)
            seg = out[at : at + len(values)]
            if identity:
                np.copyto(seg, values, casting="unsafe")
            else:
                index = np.subtract(values, lo, dtype=np.int64) if lo else values
                np.take(lut, index, out=seg, mode="clip")
            at += len(values)
        return out
    chunks = dictionary_chunks(arr)
    position = {c: i for i, c in enumerate(classes)}
    luts = [
        np.array([position.get(v, -1) for v in values.to_pylist()], dtype=dtype)
        for values, _, _ in chunks
    ]
    return lookup_codes(chunks, luts, dtype)
