"""Bind a control's roles to columns: label encodings, class sets, group codes.

Class handling follows seed 000. Labels may be integers (classes are the
integers, or ``0..K-1`` once K is known) or strings (classes sorted as
text). K comes from, in order: the ``num_classes`` parameter or
``--num-classes``; the bound score columns (``y_score_0..y_score_{K-1}``);
the union of the label and prediction values. A prediction column holding
probabilities, text where the target holds numbers, NaN labels, or a string
label set without ``positive_label`` for a binary metric stop with an error
naming the fix — never a silent number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import BindingError, MetricError, Problem, did_you_mean

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.read import Table
    from fairpolicy.policy.schema import Control

#: placeholder for the unseen class of a one-class binary problem with text labels
OTHER_CLASS = "(other)"

#: rows of several score columns must sum to 1 within this, or a warning counts them
SUM_TOLERANCE = 1e-3


@dataclass(frozen=True)
class LabelKey:
    """Everything that determines a label encoding; controls sharing it share counts."""

    target: str
    prediction: str
    score: str | None
    positive_label: str | None
    num_classes: int | None
    missing: str
    binary: bool


@dataclass
class Labels:
    classes: tuple[str, ...]
    #: each row's class index (narrowest integer type; see :func:`label_codes`)
    true_codes: NDArray[np.signedinteger[Any]]
    pred_codes: NDArray[np.signedinteger[Any]]
    #: rows kept (None = all); rows are dropped only under ``missing: drop``
    keep: NDArray[np.bool_] | None
    positive: int | None
    score_columns: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)
    #: rows per kept entry (engines' weighted tuples); None = one row each
    weights: NDArray[np.int64] | None = None


class _Ctx:
    """Locates problems: the data file, the control, the column."""

    def __init__(self, table: Table, control: Control) -> None:
        self.file = table.path or "<DataFrame>"
        self.control = control.control_id

    def error(
        self, message: str, column: str | None = None, hint: str | None = None
    ) -> BindingError:
        return BindingError(
            Problem(message, file=self.file, control=self.control, column=column, hint=hint)
        )


def missing_column_problem(table: Table, control: Control, role: str, column: str) -> Problem:
    hint = f"rename the column, change the policy's input.{role}, or pass --bind {role}=COLUMN."
    only = table.available[0] if len(table.available) == 1 else ""
    delimiter = next((d for d in (";", "\t", "|") if d in only), None)
    if delimiter is not None:
        hint = (
            f"the file looks {delimiter!r}-separated (its header is one column, {only!r}); "
            "fairpolicy reads comma-separated CSV: re-export it with commas."
        )
    return Problem(
        f"role '{role}' is bound to column '{column}', which the data does not have."
        f"{did_you_mean(column, table.available)} Columns present: {', '.join(table.available)}.",
        file=table.path or "<DataFrame>",
        control=control.control_id,
        column=column,
        hint=hint,
    )


def _first_rows(
    table: Table,
    column: str,
    predicate: Callable[[Any], NDArray[np.bool_]],
    mask: NDArray[np.bool_] | None = None,
) -> str:
    """The 1-based data rows (at most 5) where ``predicate`` holds for ``column``."""
    rows = table.first_rows(column, predicate, mask=mask if table.weights is None else None)
    return ", ".join(str(i + 1) for i, _ in rows)


def _null_mask(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    import pyarrow.compute as pc

    if arr.null_count == 0 and not _is_float(arr):
        return np.zeros(len(arr), dtype=bool)
    return np.asarray(pc.is_null(arr, nan_is_null=True).to_numpy(zero_copy_only=False))


def _as_float(arr: pa.ChunkedArray) -> NDArray[np.float64]:
    import pyarrow as pa

    if pa.types.is_boolean(arr.type):
        arr = arr.cast(pa.int64())
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)


# row predicates: located in the data by :meth:`Table.first_rows` for messages


def missing_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """Null, or NaN in a float column."""
    return _null_mask(arr)


def fractional_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """A present value that is not a whole number."""
    v = _as_float(arr)
    with np.errstate(invalid="ignore"):
        out: NDArray[np.bool_] = (v != np.floor(v)) & ~np.isnan(v)
    return out


def infinite_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """+inf or −inf."""
    out: NDArray[np.bool_] = np.isinf(_as_float(arr))
    return out


def _is_float(arr: pa.ChunkedArray) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(arr.type))


def _kind(arr: pa.ChunkedArray) -> str:
    import pyarrow as pa

    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
        return "str"
    return "other"


def _as_int(
    ctx: _Ctx, table: Table, arr: pa.ChunkedArray, column: str, role: str
) -> pa.ChunkedArray:
    """Integer view of a label column; floats must be whole numbers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_boolean(arr.type) or pa.types.is_integer(arr.type):
        return arr.cast(pa.int64())
    values = arr.to_numpy(zero_copy_only=False).astype(np.float64)
    frac = values != np.floor(values)
    if frac.any():
        # the first such value in the data (rows dropped under `missing: drop` included)
        found = table.first_rows(column, fractional_rows, limit=1)
        value = found[0][1] if found else values[int(np.argmax(frac))]
        where = f" (data row {found[0][0] + 1})" if found else ""
        fix = (
            "bind the thresholded class labels (e.g. argmax or score >= 0.5) to "
            "input.prediction and the probabilities to input.score"
            if role == "prediction"
            else "the target must hold class labels (integers or text)"
        )
        raise ctx.error(
            f"column '{column}' ({role}) holds non-integer values such as {float(value)!r}"
            f"{where}; it looks like probabilities or scores, not class labels.",
            column=column,
            hint=fix + ".",
        )
    return pc.cast(arr, pa.int64(), safe=False)


def encode_labels(
    table: Table, control: Control, key: LabelKey, replacement: tuple[str, ...] = ()
) -> Labels:
    """Encode target and prediction into class codes for one :class:`LabelKey`.

    ``replacement`` names the multi-class metrics to suggest when a binary
    metric meets more than two classes.
    """
    import pyarrow as pa

    ctx = _Ctx(table, control)
    t_arr, p_arr = table.columns[key.target], table.columns[key.prediction]
    warnings: list[str] = []

    # --- missing values (a column without nulls or NaN needs no mask)
    masks = {
        col: _null_mask(arr)
        for col, arr in ((key.target, t_arr), (key.prediction, p_arr))
        if arr.null_count or _is_float(arr)
    }
    keep, dropped_note = require_complete(table, control, masks, key.missing)
    warnings += dropped_note
    if keep is not None:
        t_arr = t_arr.filter(pa.array(keep))
        p_arr = p_arr.filter(pa.array(keep))
        if len(t_arr) == 0:
            raise ctx.error("no rows are left after dropping rows with missing labels.")

    # --- label kinds
    kt, kp = _kind(t_arr), _kind(p_arr)
    for arr_kind, col, role in ((kt, key.target, "target"), (kp, key.prediction, "prediction")):
        if arr_kind == "other":
            raise ctx.error(
                f"column '{col}' ({role}) has type {t_arr.type if role == 'target' else p_arr.type}"
                ", which cannot hold class labels.",
                column=col,
            )
    if kp == "float":
        p_arr = _as_int(ctx, table, p_arr, key.prediction, "prediction")
        kp = "int"
    if kt == "float":
        t_arr = _as_int(ctx, table, t_arr, key.target, "target")
        kt = "int"
    if kt != kp:
        num, txt = (key.target, key.prediction) if kt == "int" else (key.prediction, key.target)
        raise ctx.error(
            f"column '{num}' holds numbers but '{txt}' holds text, so their classes "
            "cannot be matched.",
            column=txt,
            hint="export both columns with the same label type.",
        )
    integer = kt == "int"
    if integer:  # signed integers stay as read (CSV labels arrive as int8 when they fit)
        t_arr, p_arr = _signed(t_arr), _signed(p_arr)
    else:
        t_arr, p_arr = t_arr.cast(pa.string()), p_arr.cast(pa.string())

    observed = distinct_values([t_arr] if key.prediction == key.target else [t_arr, p_arr])

    # --- K from scores / declared
    score_cols: tuple[str, ...] = ()
    k_scores: int | None = None
    if key.score:
        score_cols = resolve_score_columns(table, control, key.score)
        k_scores = 2 if len(score_cols) == 1 else len(score_cols)
    k = key.num_classes
    if k is not None and k_scores is not None and k != k_scores:
        warnings.append(
            f"control '{control.control_id}': num_classes={k} overrides the {k_scores} "
            f"classes implied by score columns {list(score_cols)}"
        )
    if k is None:
        k = k_scores

    classes: list[Any]
    if integer and k is not None:
        bad = [v for v in observed if not 0 <= v < k]
        if bad:
            raise ctx.error(
                f"labels {bad[:5]} fall outside 0..{k - 1}, but K={k} classes are declared "
                f"({'num_classes' if key.num_classes else 'from the score columns'}).",
                column=key.target,
                hint="fix the labels, or declare the right number of classes "
                "(num_classes prop or --num-classes).",
            )
        classes = list(range(k))
        unseen = [c for c in classes if c not in observed]
        if unseen and not key.binary:
            warnings.append(
                f"control '{control.control_id}': class(es) {unseen} of K={k} never occur in "
                f"'{key.target}' or '{key.prediction}'"
            )
    elif k is not None and len(observed) > k:
        raise ctx.error(
            f"{len(observed)} distinct labels {observed[:8]} but K={k} classes declared.",
            column=key.target,
            hint="declare the right number of classes or fix the labels.",
        )
    else:
        classes = list(observed)

    # --- positive class for binary metrics
    positive: int | None = None
    if key.binary:
        if len(classes) > 2:
            raise MetricError(
                Problem(
                    f"metric '{control.metric_key}' is defined for two classes, but "
                    f"'{key.target}'/'{key.prediction}' hold K={len(classes)} classes "
                    f"{[str(c) for c in classes[:8]]}. fairpolicy does not binarise silently "
                    "(seed 000).",
                    file=ctx.file,
                    control=ctx.control,
                    column=key.target,
                    hint="use a multi-class metric instead: " + ", ".join(replacement) + ".",
                )
            )
        classes, positive = _positive(ctx, key, classes, integer)
    elif len(classes) == 2:  # K-aware metrics on two classes read the positive class too
        label = key.positive_label
        want: Any = label if label is not None else (1 if integer else None)
        if integer and label is not None:
            try:
                want = int(float(label))
            except ValueError:
                want = None
        positive = classes.index(want) if want in classes else None

    t_codes = label_codes(t_arr, classes, integer)
    p_codes = t_codes if key.prediction == key.target else label_codes(p_arr, classes, integer)
    weights = table.weights
    if weights is not None and keep is not None:
        weights = weights[keep]
    return Labels(
        classes=tuple(str(c) for c in classes),
        true_codes=t_codes,
        pred_codes=p_codes,
        keep=keep,
        positive=positive,
        score_columns=score_cols,
        warnings=warnings,
        weights=weights,
    )


def _signed(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """A signed integer column as is; booleans and unsigned integers as int64."""
    import pyarrow as pa

    return arr if pa.types.is_signed_integer(arr.type) else arr.cast(pa.int64())


def distinct_values(arrays: list[pa.ChunkedArray]) -> list[Any]:
    """The sorted distinct values of signed-integer or string label columns (no nulls)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if all(pa.types.is_signed_integer(a.type) for a in arrays):
        bounds = [pc.min_max(a).as_py() for a in arrays]
        if all(b["min"] is not None for b in bounds):
            lo, hi = min(b["min"] for b in bounds), max(b["max"] for b in bounds)
            if hi - lo < 1 << 20:  # mark the values seen: no hashing, no large array
                seen = np.zeros(hi - lo + 1, dtype=bool)
                for arr in arrays:
                    for chunk in arr.chunks:
                        values = _values(chunk)
                        seen[np.subtract(values, lo, dtype=np.int64) if lo else values] = True
                found: list[Any] = (np.flatnonzero(seen) + lo).tolist()
                return found
    return sorted(set().union(*(pc.unique(a).to_pylist() for a in arrays)))


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
            values = _values(chunk)
            seg = out[at : at + len(values)]
            if identity:
                np.copyto(seg, values, casting="unsafe")
            else:
                index = np.subtract(values, lo, dtype=np.int64) if lo else values
                np.take(lut, index, out=seg, mode="clip")
            at += len(values)
        return out
    chunks = _dictionary_chunks(arr)
    position = {c: i for i, c in enumerate(classes)}
    luts = [
        np.array([position.get(v, -1) for v in values.to_pylist()], dtype=dtype)
        for values, _, _ in chunks
    ]
    return _lookup(chunks, luts, dtype)


def _positive(ctx: _Ctx, key: LabelKey, classes: list[Any], integer: bool) -> tuple[list[Any], int]:
    """Resolve the positive class of a binary metric; returns (classes, index)."""
    label = key.positive_label
    if label is None:
        if not integer:
            raise ctx.error(
                f"the labels are text {[str(c) for c in classes[:4]]}, and a binary metric "
                "needs to know which one is the positive outcome.",
                column=key.target,
                hint="add the prop `positive_label` (e.g. positive_label: "
                f"'{classes[-1] if classes else 'yes'}') to the control.",
            )
        label = "1"
    if integer:
        try:
            want: Any = int(float(label))
        except ValueError:
            raise ctx.error(
                f"positive_label '{label}' is not one of the integer labels {classes}.",
                column=key.target,
                hint="set positive_label to one of the label values.",
            ) from None
    else:
        want = label
    if want not in classes:
        if len(classes) >= 2:
            raise ctx.error(
                f"positive_label {want!r} does not occur among the labels "
                f"{[str(c) for c in classes[:8]]}.",
                column=key.target,
                hint="set positive_label to the label value of the positive outcome.",
            )
        classes = [*classes, want]  # the data shows one class; the positive one is absent
    if len(classes) == 1:  # only the positive class occurs: add its complement
        classes = [*classes, (0 if want != 0 else 1) if integer else OTHER_CLASS]
    classes = sorted(classes)
    return classes, classes.index(want)


def resolve_score_columns(table: Table, control: Control, spec: str) -> tuple[str, ...]:
    """Score columns from ``input.score``: a column, a comma list, or a prefix.

    A prefix ``y_score`` matches ``y_score_0, y_score_1, ...`` (contiguous from 0).
    """
    ctx = _Ctx(table, control)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) > 1:
        missing = [n for n in names if n not in table.available]
        if missing:
            raise ctx.error(f"score columns {missing} are not in the data.", column=missing[0])
        return tuple(names)
    name = names[0]
    if name in table.available:
        return (name,)
    found = []
    i = 0
    while f"{name}_{i}" in table.available:
        found.append(f"{name}_{i}")
        i += 1
    if not found:
        raise BindingError(missing_column_problem(table, control, "score", name))
    return tuple(found)


def score_column_names(table_available: list[str], spec: str) -> list[str]:
    """The columns ``input.score`` may refer to, for reading (before binding)."""
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) > 1 or names[0] in table_available:
        return names
    out, i = [], 0
    while f"{names[0]}_{i}" in table_available:
        out.append(f"{names[0]}_{i}")
        i += 1
    return out


def smallest_code_dtype(n: int) -> np.dtype[Any]:
    """The narrowest signed integer type holding the codes ``-1 .. n`` (``n`` = a spare slot)."""
    for dtype in (np.int8, np.int16, np.int32):
        if n <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def _values(arr: pa.Array) -> NDArray[Any]:
    """A fixed-width integer or float Arrow array's value buffer as a zero-copy NumPy view.

    Null slots hold arbitrary values; callers mask them with :func:`_validity`. (The
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


def _validity(arr: pa.Array) -> NDArray[np.bool_] | None:
    """Which slots of ``arr`` hold a value (None when none is null)."""
    if arr.null_count == 0:
        return None
    bits = np.frombuffer(arr.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, count=arr.offset + len(arr), bitorder="little")[arr.offset :].astype(
        bool
    )


def _dictionary_chunks(
    arr: pa.ChunkedArray,
) -> list[tuple[pa.Array, NDArray[Any], NDArray[np.bool_] | None]]:
    """Per chunk: (its dictionary, a NumPy view of its indices, their validity or None).

    A column that is not dictionary-encoded is encoded first (one hash pass), so the
    work per distinct value happens on the small dictionaries, never per row.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    out = []
    for chunk in arr.chunks:
        indices = chunk.indices
        out.append((chunk.dictionary, _values(indices), _validity(indices)))
    return out


def _lookup(
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


def group_text(arr: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    """A group column as text, the same on every engine and input type.

    Text (and dictionary-encoded text) is kept as is: only a true null is missing here
    (``NA``, ``null``, ``nan``, ``None`` are group names). Other types are cast to text;
    in a float column a NaN is missing (null) and ``-0.0`` is the group ``0``, so a float
    group column gives the same groups whichever engine grouped it.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.Array):
        arr = pa.chunked_array([arr], type=arr.type)
    t = arr.type
    if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return arr
    if pa.types.is_floating(t):
        arr = arr.cast(pa.float64())
        nan = pc.is_nan(arr)
        # -0.0 + 0.0 is +0.0: one group "0"; NaN is missing
        arr = pc.if_else(nan, pa.scalar(None, pa.float64()), pc.add(arr, 0.0))
    try:
        return arr.cast(pa.string())
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid) as exc:
        raise TypeError(f"a group column of type {t} cannot be read as text: {exc}") from None


@dataclass
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
    import pyarrow.compute as pc

    arr = group_text(arr)
    chunks = _dictionary_chunks(arr)
    if not chunks:
        return GroupColumn(np.empty(0, dtype=np.int8), [])
    # every chunk's dictionary, trimmed in one call
    values = [v if pa.types.is_string(v.type) else v.cast(pa.string()) for v, _, _ in chunks]
    raw = pa.chunked_array(values, type=pa.string())
    text = pc.utf8_trim_whitespace(raw).to_pylist()
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
    codes = _lookup(chunks, luts, dtype)
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


def validate_scores(table: Table, control: Control, columns: tuple[str, ...]) -> list[str]:
    """Warnings for scores outside [0, 1] or rows not summing to ~1 (never renormalised).

    On an engine the scores are rounded to a grid, but values outside [0, 1] are
    kept as they are and the row sums were checked before rounding
    (``Table.sum_flags``), so both counts are those of the unrounded data.
    """
    warnings = []
    mats = []
    for c in columns:
        arr = table.columns[c]
        if _kind(arr) not in ("int", "float"):
            raise _Ctx(table, control).error(
                f"score column '{c}' holds non-numeric values.",
                column=c,
                hint="scores must be probabilities in [0, 1].",
            )
        v = arr.to_numpy(zero_copy_only=False).astype(np.float64)
        nan = np.isnan(v)
        if nan.any():
            raise _Ctx(table, control).error(
                f"score column '{c}' has {table.count(nan)} missing value(s) "
                f"(first at data rows {_first_rows(table, c, missing_rows, nan)}).",
                column=c,
                hint="fill or remove those rows.",
            )
        out = (v < 0) | (v > 1)
        if out.any():
            warnings.append(
                f"control '{control.control_id}': {table.count(out)} value(s) of score column "
                f"'{c}' fall outside [0, 1]"
            )
        mats.append(v)
    if len(mats) > 1:
        flags = table.sum_flags.get(tuple(columns))
        if flags is not None:
            off = flags
        else:
            sums = np.sum(mats, axis=0)
            off = np.abs(sums - 1.0) > SUM_TOLERANCE
        if off.any():
            warnings.append(
                f"control '{control.control_id}': {table.count(off)} row(s) of score columns "
                f"{list(columns)} do not sum to 1 (±0.001); scores are not renormalised"
            )
    return warnings


def require_numeric(
    table: Table, control: Control, column: str, role: str, arrow_type: pa.DataType
) -> None:
    """Text or other non-numeric column types are an error naming the column."""
    import pyarrow as pa

    t = arrow_type
    if not (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)):
        raise _Ctx(table, control).error(
            f"column '{column}' ({role}) holds {t} values, but metric "
            f"'{control.metric_key}' needs numbers.",
            column=column,
            hint=f"bind input.{role} to a numeric column.",
        )


def numeric_column(
    table: Table, control: Control, column: str, role: str
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """A numeric column as float64 plus its missing-value mask (NaN/null).

    Text or other non-numeric types are an error naming the column.
    """
    arr = table.columns[column]
    require_numeric(table, control, column, role, arr.type)
    values = _as_float(arr)
    infinite = np.isinf(values)
    if infinite.any():
        raise _Ctx(table, control).error(
            f"column '{column}' ({role}) has {table.count(infinite)} infinite value(s) "
            f"(first at data rows {_first_rows(table, column, infinite_rows, infinite)}).",
            column=column,
            hint="replace or remove them; fairpolicy does not clip values.",
        )
    return values, np.isnan(values) | _null_mask(arr)


def require_complete(
    table: Table, control: Control, columns: dict[str, NDArray[np.bool_]], missing: str
) -> tuple[NDArray[np.bool_] | None, list[str]]:
    """Apply the control's ``missing`` policy to the masks of missing values per column.

    Returns (rows to keep or None, warnings); raises when ``missing`` is ``error``.
    """
    bad = {c: m for c, m in columns.items() if m.any()}
    if not bad:
        return None, []
    if missing != "drop":
        col, mask = next(iter(bad.items()))
        raise _Ctx(table, control).error(
            f"column '{col}' has {table.count(mask)} missing value(s) "
            f"(first at data rows {_first_rows(table, col, missing_rows, mask)}).",
            column=col,
            hint="fill or remove those rows, or set the control prop `missing: drop` "
            "to drop them (the count is reported).",
        )
    drop = np.logical_or.reduce(list(bad.values()))
    return ~drop, [
        f"control '{control.control_id}': dropped {table.count(drop)} row(s) with a missing "
        f"{' or '.join(repr(c) for c in bad)} (missing: drop)"
    ]
