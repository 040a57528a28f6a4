"""Bind a control's roles to columns: label encodings, class sets, group codes.

Class handling follows fmm-fairness-eval (fmm_fairness v0.2). Labels may be integers
(classes are the integers, or ``0..K-1`` once K is known) or strings (classes sorted as
text). K comes from, in order: a declared class list (``input.score`` ``label=column``
pairs or the ``classes`` prop); the ``num_classes`` parameter or ``--num-classes``; the
bound score columns (``y_score_0..y_score_{K-1}``); the union of the label and
prediction values.

Score columns are paired with classes explicitly: integer labels pair the k-th column
with class k; text labels need a declared pairing (``input.score: nevus=p_0, …`` or
``classes: nevus,…`` in column order), else the metrics that read scores stop with the
line to write (:attr:`Labels.score_problem`) — sorted label order is never assumed. The
pairing only permutes the score columns: classes stay in sorted order everywhere.

A prediction column holding probabilities, text where the target holds numbers, NaN
labels, a float label no integer stands for (``inf``, beyond 2**53), a
``positive_label`` that names no label exactly, a score column listed twice, or a string
label set without ``positive_label`` for a binary metric stop with an error naming the
fix — never a silent number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import BindingError, MetricError, Problem, did_you_mean

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.sources.base import Table
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
    #: the ``classes`` prop as written: the label vocabulary, in score-column order
    classes: str | None = None


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
    #: why the score columns cannot be paired with the classes (text labels, positional
    #: columns, no declared order); raised only by the metrics that read scores
    score_problem: Problem | None = None


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
    huge = _unlabelable(values)
    if huge.any():
        found = table.first_rows(column, unlabelable_rows, limit=1)
        value = found[0][1] if found else values[int(np.argmax(huge))]
        where = f" (data row {found[0][0] + 1})" if found else ""
        raise ctx.error(
            f"column '{column}' ({role}) holds the value {float(value)!r}{where}, which is not a "
            f"class label: labels read as numbers must be whole numbers within "
            f"±{MAX_FLOAT_LABEL:.3g} (2**53); fairpolicy does not turn it into an integer.",
            column=column,
            hint="fix or remove that row (an overflow or a missing-value code in the export?), "
            "or export the labels as text or integers.",
        )
    return pc.cast(arr, pa.int64(), safe=False)


def _unlabelable(values: NDArray[np.float64]) -> NDArray[np.bool_]:
    with np.errstate(invalid="ignore"):
        out: NDArray[np.bool_] = np.isinf(values) | (np.abs(values) > MAX_FLOAT_LABEL)
    return out


def unlabelable_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """A float label that no integer label can stand for: ±inf, or beyond ±2**53."""
    return _unlabelable(_as_float(arr))


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
    boolean = pa.types.is_boolean(t_arr.type) and pa.types.is_boolean(p_arr.type)
    if integer:  # signed integers stay as read (CSV labels arrive as int8 when they fit)
        t_arr, p_arr = _signed(t_arr), _signed(p_arr)
    else:
        t_arr, p_arr = t_arr.cast(pa.string()), p_arr.cast(pa.string())

    observed = distinct_values([t_arr] if key.prediction == key.target else [t_arr, p_arr])
    if not integer:
        _refuse_padded_twins(ctx, key, observed)
    label = LabelType(integer, boolean)

    # --- score columns and the declared class order (input.score pairs, `classes` prop)
    score_cols: tuple[str, ...] = ()
    mapped: tuple[str, ...] | None = None
    if key.score:
        score_cols, mapped = resolve_score_binding(table, control, key.score)
    positive_label = key.positive_label
    if mapped is not None and len(mapped) == 1:  # `input.score: melanoma=p`: P(melanoma)
        if positive_label is not None and label.value(positive_label) != label.value(mapped[0]):
            raise ctx.error(
                f"input.score '{key.score}' says column '{score_cols[0]}' holds P({mapped[0]}), "
                f"but positive_label is '{positive_label}'.",
                column=score_cols[0],
                hint="name the same class in both, or drop one of them.",
            )
        positive_label = mapped[0]
    declared = _declared_order(ctx, key, score_cols, mapped, label)
    k_scores: int | None = None
    if score_cols:
        k_scores = 2 if len(score_cols) == 1 else len(score_cols)
    k = key.num_classes
    if declared is not None:
        if k is not None and k != len(declared):
            raise ctx.error(
                f"num_classes={k}, but {len(declared)} classes are declared "
                f"{[str(c) for c in declared]} ({_order_source(key, mapped)}).",
                column=key.target,
                hint="declare the number of classes once, or make them agree.",
            )
        k = len(declared)
    elif k is not None and k_scores is not None and k != k_scores:
        warnings.append(
            f"control '{control.control_id}': num_classes={k} overrides the {k_scores} "
            f"classes implied by score columns {list(score_cols)}"
        )
    if k is None:
        k = k_scores

    classes: list[Any]
    score_problem: Problem | None = None
    if declared is not None:
        known = set(declared)
        stray = [v for v in observed if v not in known]
        if stray:
            raise ctx.error(
                f"label(s) {[str(v) for v in stray[:5]]} of '{key.target}'/'{key.prediction}' "
                f"are not among the classes {[str(c) for c in declared]} declared by "
                f"{_order_source(key, mapped)}, so they have no score column.",
                column=key.target,
                hint="declare every class with its score column, e.g. input.score: "
                + _mapping_line([*declared, *stray], score_cols)
                + ", or fix the labels.",
            )
        classes = sorted(declared)
        if len(score_cols) > 1:  # column of classes[i] at position i
            column_of = dict(zip(declared, score_cols, strict=True))
            score_cols = tuple(column_of[c] for c in classes)
        unseen = [c for c in classes if c not in set(observed)]
        if unseen and not key.binary:
            warnings.append(
                f"control '{control.control_id}': declared class(es) {[str(c) for c in unseen]} "
                f"never occur in '{key.target}' or '{key.prediction}'"
            )
    elif integer and k is not None:
        bad = [v for v in observed if not 0 <= v < k]
        if bad:
            raise ctx.error(
                f"labels {bad[:5]} fall outside 0..{k - 1}, but K={k} classes are declared "
                f"({'num_classes' if key.num_classes else 'from the score columns'}).",
                column=key.target,
                hint="fix the labels, or declare the right number of classes "
                "(num_classes prop or --num-classes), or pair each class with its score "
                "column: input.score: " + _mapping_line(observed, score_cols) + ".",
            )
        classes = list(range(k))
        unseen = [c for c in classes if c not in observed]
        if unseen and not key.binary:
            warnings.append(
                f"control '{control.control_id}': class(es) {unseen} of K={k} never occur in "
                f"'{key.target}' or '{key.prediction}'"
            )
        if len(score_cols) > 1:
            _require_suffix_order(ctx, key, score_cols)
    elif k is not None and len(observed) > k:
        raise ctx.error(
            f"{len(observed)} distinct labels {observed[:8]} but K={k} classes declared.",
            column=key.target,
            hint="declare the right number of classes or fix the labels.",
        )
    else:
        classes = list(observed)
        if len(score_cols) > 1:  # text labels, positional score columns: no pairing
            score_problem = _unpaired_problem(ctx, key, score_cols, classes)

    # --- positive class for binary metrics
    positive: int | None = None
    if key.binary:
        if len(classes) > 2:
            raise MetricError(
                Problem(
                    f"metric '{control.metric_key}' is defined for two classes, but "
                    f"'{key.target}'/'{key.prediction}' hold K={len(classes)} classes "
                    f"{[str(c) for c in classes[:8]]}. fairpolicy does not binarise silently.",
                    file=ctx.file,
                    control=ctx.control,
                    column=key.target,
                    hint="use a multi-class metric instead: " + ", ".join(replacement) + ".",
                )
            )
        classes, positive = _positive(ctx, key, positive_label, classes, label)
    elif positive_label is not None and len(classes) == 2:  # K-aware metrics read it on K = 2
        positive = classes.index(_require_label(ctx, key, positive_label, classes, label))
    elif positive_label is not None:
        named = label.value(positive_label)
        what = "is one of the labels" if named in classes else "is not even one of the labels"
        warnings.append(
            f"control '{control.control_id}': positive_label '{positive_label}' is not used "
            f"(it {what}): metric '{control.metric_key}' compares all K={len(classes)} classes"
        )
    elif len(classes) == 2 and integer:
        positive = classes.index(1) if 1 in classes else None
    # two text classes: the score metrics read P(positive), so the positive class is named
    if score_problem is None and score_cols and positive is None and len(classes) == 2:
        score_problem = None if integer else _no_positive_problem(ctx, key, score_cols, classes)

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
        score_problem=score_problem,
    )


def _refuse_padded_twins(ctx: _Ctx, key: LabelKey, observed: list[Any]) -> None:
    """Text labels that differ only by surrounding whitespace (``yes`` and ``yes ``) would
    be two classes: an export artefact, refused with both spellings named."""
    seen: dict[str, str] = {}
    for v in observed:
        first = seen.setdefault(v.strip(), v)
        if first != v:
            raise ctx.error(
                f"labels {first!r} and {v!r} of '{key.target}'/'{key.prediction}' differ only "
                "by surrounding whitespace, so they would count as two classes.",
                column=key.target,
                hint="trim the labels in the export (one spelling per class).",
            )


#: the largest whole number a float label may hold: beyond it doubles skip integers
MAX_FLOAT_LABEL = 2**53


@dataclass(frozen=True)
class LabelType:
    """How text in a policy (positive_label, classes, input.score pairs) names a label."""

    integer: bool
    #: both label columns are booleans (read as 0/1): ``true``/``false`` name 1/0 too
    boolean: bool = False

    def value(self, text: str) -> Any:
        """The label ``text`` names, or None when it cannot name one of these labels:
        text labels are the text itself; integer labels need a whole number exactly
        (``1``, ``1.0``; never ``0.5``, ``inf`` or ``1e20``)."""
        if not self.integer:
            return text
        t = text.strip()
        if self.boolean and t.lower() in ("true", "false"):
            return int(t.lower() == "true")
        if re.fullmatch(r"[+-]?[0-9]+", t):
            return int(t)
        try:
            v = float(t)
        except ValueError:
            return None
        if math.isfinite(v) and v.is_integer() and abs(v) <= MAX_FLOAT_LABEL:
            return int(v)
        return None


def _require_label(
    ctx: _Ctx, key: LabelKey, text: str, classes: list[Any], label: LabelType
) -> Any:
    """The class ``positive_label`` names; an error when it names none of ``classes``."""
    want = label.value(text)
    if want is None:
        raise ctx.error(
            f"positive_label '{text}' is not a whole number, so it names none of the integer "
            f"labels {[str(c) for c in classes[:8]]} of '{key.target}'.",
            column=key.target,
            hint="set positive_label to one of the label values exactly (e.g. positive_label: "
            f"'{classes[-1] if classes else 1}').",
        )
    if want not in classes:
        raise ctx.error(
            f"positive_label {text!r} does not occur among the labels "
            f"{[str(c) for c in classes[:8]]} of '{key.target}'.",
            column=key.target,
            hint="set positive_label to the label value of the positive outcome"
            f"{did_you_mean(str(text), [str(c) for c in classes])}",
        )
    return want


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


def _positive(
    ctx: _Ctx, key: LabelKey, label_text: str | None, classes: list[Any], label: LabelType
) -> tuple[list[Any], int]:
    """Resolve the positive class of a binary metric; returns (classes, index)."""
    if label_text is None:
        if not label.integer:
            raise ctx.error(
                f"the labels are text {[str(c) for c in classes[:4]]}, and a binary metric "
                "needs to know which one is the positive outcome.",
                column=key.target,
                hint="add the prop `positive_label` (e.g. positive_label: "
                f"'{classes[-1] if classes else 'yes'}') to the control.",
            )
        label_text = "1"
    if len(classes) >= 2:
        want = _require_label(ctx, key, label_text, classes, label)
    else:
        want = label.value(label_text)
        if want is None:  # not a whole number: the same message as with two classes
            _require_label(ctx, key, label_text, classes, label)
        if want not in classes:
            classes = [*classes, want]  # the data shows one class; the positive one is absent
    if len(classes) == 1:  # only the positive class occurs: add its complement
        classes = [*classes, (0 if want != 0 else 1) if label.integer else OTHER_CLASS]
    classes = sorted(classes)
    return classes, classes.index(want)


# ---------------------------------------------------------------- score columns ↔ classes


def parse_score_spec(spec: str) -> tuple[list[str], list[str] | None]:
    """``input.score`` as written: (column entries, the class of each or None).

    ``p`` (a column or a prefix), ``p_0, p_1`` (columns in class order) or
    ``nevus=p_0, melanoma=p_1`` (each column with its class). ValueError says what is
    wrong with a half-written mapping.
    """
    entries = [e.strip() for e in spec.split(",")]
    if any(not e for e in entries) and len(entries) > 1:
        raise ValueError("has an empty entry (two commas in a row, or a trailing comma)")
    entries = [e for e in entries if e]
    pairs = [e.partition("=") for e in entries]
    with_label = [p for p in pairs if p[1]]
    if not with_label:
        return entries, None
    if len(with_label) != len(pairs):
        plain = next(p[0] for p in pairs if not p[1])
        raise ValueError(
            f"pairs some columns with a class (label=column) but not '{plain}'; "
            "write every entry as label=column, or none"
        )
    labels = [p[0].strip() for p in pairs]
    columns = [p[2].strip() for p in pairs]
    for lab, col in zip(labels, columns, strict=True):
        if not lab or not col:
            raise ValueError(f"entry '{lab}={col}' needs both a class label and a column")
    return columns, labels


def resolve_score_binding(
    table: Table, control: Control, spec: str
) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The score columns ``input.score`` binds, in the order written, and the class each
    one holds the probability of when the binding says (``label=column`` pairs).

    A column listed twice, or a class paired twice, is an error naming it.
    """
    ctx = _Ctx(table, control)
    try:
        columns, labels = parse_score_spec(spec)
    except ValueError as exc:
        raise _score_key_error(control, f"input.score '{spec}' {exc}.") from None
    if labels is not None:
        for what, items in (("class", labels), ("column", columns)):
            twice = sorted({x for x in items if items.count(x) > 1})
            if twice:
                raise _score_key_error(
                    control,
                    f"input.score '{spec}' pairs the {what} '{twice[0]}' more than once.",
                    column=twice[0] if what == "column" else None,
                    hint="pair each class with its own score column, once.",
                )
        missing = [c for c in columns if c not in table.available]
        if missing:
            raise ctx.error(
                f"score column(s) {missing} of input.score are not in the data."
                f"{did_you_mean(missing[0], table.available)}",
                column=missing[0],
            )
        return tuple(columns), tuple(labels)
    return resolve_score_columns(table, control, spec), None


def _score_key_error(
    control: Control, message: str, column: str | None = None, hint: str | None = None
) -> BindingError:
    file = control.source.file if control.source else None
    return BindingError(
        Problem(
            message,
            file=file,
            control=control.control_id,
            key="input.score",
            column=column,
            hint=hint
            or "write input.score as one column, a prefix (p → p_0, p_1, …), columns in "
            "class order (p_0, p_1), or label=column pairs (nevus=p_0, melanoma=p_1).",
        )
    )


def _declared_order(
    ctx: _Ctx,
    key: LabelKey,
    columns: tuple[str, ...],
    mapped: tuple[str, ...] | None,
    label: LabelType,
) -> list[Any] | None:
    """The declared classes in score-column order (label values), or None: the
    ``label=column`` pairs of input.score (two or more) or the ``classes`` prop."""
    listed: list[str] | None = None
    if key.classes is not None:
        listed = [c.strip() for c in key.classes.split(",")]
        if any(not c for c in listed):
            raise ctx.error(
                f"the classes prop '{key.classes}' has an empty entry.",
                hint="list every class label once, separated by commas, in the order of the "
                "score columns (e.g. classes: nevus,melanoma,bcc).",
            )
    pairs = list(mapped) if mapped is not None and len(mapped) > 1 else None
    if listed is not None and pairs is not None and listed != pairs:
        raise ctx.error(
            f"the classes prop lists {listed}, but input.score pairs the columns with "
            f"{pairs}; the two orders disagree.",
            column=columns[0],
            hint="declare the order once: keep the label=column pairs of input.score and "
            "drop the classes prop.",
        )
    order = pairs if pairs is not None else listed
    if order is None:
        return None
    values = []
    for text in order:
        v = label.value(text)
        if v is None:
            raise ctx.error(
                f"class '{text}' ({_order_source(key, mapped)}) is not a whole number, but the "
                f"labels of '{key.target}' are integers.",
                column=key.target,
                hint="name each class by its label value exactly as the data holds it.",
            )
        values.append(v)
    twice = sorted({str(v) for v in values if values.count(v) > 1})
    if twice:
        raise ctx.error(
            f"class '{twice[0]}' is declared more than once ({_order_source(key, mapped)}).",
            column=key.target,
            hint="list each class once.",
        )
    if len(columns) > 1 and len(values) != len(columns):
        raise ctx.error(
            f"the classes prop lists {len(values)} classes {order}, but input.score binds "
            f"{len(columns)} score columns {list(columns)}.",
            column=columns[0],
            hint="list one class per score column, in the columns' order: input.score: "
            + _mapping_line(values, columns),
        )
    return values


def _order_source(key: LabelKey, mapped: tuple[str, ...] | None) -> str:
    if mapped is not None and len(mapped) > 1:
        return f"input.score '{key.score}'"
    return f"the classes prop '{key.classes}'"


def _mapping_line(labels: list[Any], columns: tuple[str, ...]) -> str:
    """``a=p_0, b=p_1, …`` pairing ``labels`` with ``columns`` in the order given
    (``?`` where either side runs out)."""
    n = max(len(labels), len(columns))
    lab = [str(x) for x in labels] + ["?"] * (n - len(labels))
    col = list(columns) + ["?"] * (n - len(columns))
    return ", ".join(f"{a}={c}" for a, c in zip(lab, col, strict=True))


def _require_suffix_order(ctx: _Ctx, key: LabelKey, columns: tuple[str, ...]) -> None:
    """Integer labels pair the i-th listed column with class i: a list such as
    ``s_2, s_0, s_1`` (a permutation of the suffixes 0..K-1) contradicts its names."""
    found = [re.search(r"_([0-9]+)$", c) for c in columns]
    if not all(found):
        return
    suffixes = [int(m.group(1)) for m in found if m]
    if sorted(suffixes) == list(range(len(columns))) and suffixes != sorted(suffixes):
        i = next(i for i, s in enumerate(suffixes) if s != i)
        raise ctx.error(
            f"input.score lists the score columns as {list(columns)}, so column "
            f"'{columns[i]}' is read as P(class {i}), against its name.",
            column=columns[i],
            hint="list the columns in class order (input.score: "
            + ", ".join(sorted(columns, key=lambda c: suffixes[columns.index(c)]))
            + "), or pair each with its class: input.score: "
            + ", ".join(f"{s}={c}" for s, c in sorted(zip(suffixes, columns, strict=True)))
            + ".",
        )


def _unpaired_problem(
    ctx: _Ctx, key: LabelKey, columns: tuple[str, ...], classes: list[Any]
) -> Problem:
    return Problem(
        f"the labels of '{key.target}' are text {[str(c) for c in classes[:8]]}, and "
        f"input.score '{key.score}' binds the score columns {list(columns)} by position "
        "only, so which column holds which class's probability is not known (fairpolicy "
        "does not guess it from the sorted labels).",
        file=ctx.file,
        control=ctx.control,
        key="input.score",
        column=columns[0],
        hint="name the class of each column in the policy, in the order your model writes "
        f"them, e.g. input.score: {_mapping_line(classes, columns)} (this line pairs them in "
        "sorted-label order: check it against the model), or add the prop classes: "
        f"{','.join(str(c) for c in classes)} listing the classes in column order.",
    )


def _no_positive_problem(
    ctx: _Ctx, key: LabelKey, columns: tuple[str, ...], classes: list[Any]
) -> Problem:
    what = (
        f"score column '{columns[0]}' holds P(positive class)"
        if len(columns) == 1
        else "on two classes the score metrics read P(positive class)"
    )
    pair = f"input.score: {classes[-1]}={columns[0]} or " if len(columns) == 1 else ""
    return Problem(
        f"{what}, but the labels of '{key.target}' are text {[str(c) for c in classes]} and "
        "no positive class is named (fairpolicy does not pick one by sorting the labels).",
        file=ctx.file,
        control=ctx.control,
        key="input.score",
        column=columns[0],
        hint=f"name the positive class: {pair}the prop positive_label: {classes[-1]} "
        "(whichever class the scores are about).",
    )


def resolve_score_columns(table: Table, control: Control, spec: str) -> tuple[str, ...]:
    """Score columns from ``input.score``: a column, a comma list, or a prefix.

    A prefix ``y_score`` matches ``y_score_0, y_score_1, ...`` (contiguous from 0).
    """
    ctx = _Ctx(table, control)
    names = [s.strip() for s in spec.split(",") if s.strip()]
    if len(names) > 1:
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise _score_key_error(
                control,
                f"input.score '{spec}' lists the score column '{twice[0]}' more than once, "
                "so one class would be scored by another class's column.",
                column=twice[0],
                hint="bind each class's own score column once, in class order, or pair them "
                "explicitly (input.score: label=column, label=column, …).",
            )
        missing = [n for n in names if n not in table.available]
        if missing:
            raise ctx.error(
                f"score columns {missing} are not in the data."
                f"{did_you_mean(missing[0], table.available)}",
                column=missing[0],
            )
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
    try:
        names, labels = parse_score_spec(spec)
    except ValueError:  # binding reports it; read what the entries name
        names = [e.partition("=")[2] or e for e in (x.strip() for x in spec.split(",")) if e]
        labels = None
    if not names:
        return []
    if len(names) > 1 or labels is not None or names[0] in table_available:
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
        # the engine flagged the columns in the order written; a pairing may reorder them
        flags = next(
            (f for cols, f in table.sum_flags.items() if sorted(cols) == sorted(columns)), None
        )
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


#: score metrics that never read which class a score column is about (a ranking score,
#: as LL144's scoring rate): an unpaired text-label binding does not stop them
CLASS_FREE_SCORES = frozenset({"scoring_impact_ratio"})

#: metrics of the predictions alone (selection rates): their value does not depend on the
#: true labels, so binding target and prediction to one column is meaningful (an audit of
#: selections, as NYC LL144's impact ratios). A test checks this set against the registry.
PREDICTION_ONLY = frozenset(
    {
        "demographic_parity_diff",
        "demographic_parity_ratio",
        "disparity_ratio",
        "mean_prediction_parity",
        "multiclass_demographic_parity",
        "multiclass_statistical_parity",
        "weighted_demographic_parity_multiclass",
    }
)


def same_column_problems(
    control: Control, reads: tuple[str, ...], file: str | None
) -> list[Problem]:
    """A metric reading target and prediction (or scores) from one column compares the
    truth with itself: every prediction right, every AUC 1. An error, never a pass.

    ``reads``: the roles the metric reads (its declared inputs, plus ``score`` for
    metrics that read scores).
    """
    i = control.inputs
    target = i.get("target")
    out: list[Problem] = []
    if target is None:
        return out
    if (
        "prediction" in reads
        and i.get("prediction") == target
        and control.metric_key not in PREDICTION_ONLY
    ):
        out.append(
            Problem(
                f"target and prediction are both bound to column '{target}', so every "
                "prediction would be counted as correct.",
                file=file,
                control=control.control_id,
                column=target,
                hint="bind input.prediction (or --bind prediction=COLUMN) to the model's "
                "predictions, not to the true labels.",
            )
        )
    if "score" in reads and "score" in i:
        try:
            columns = parse_score_spec(i["score"])[0]
        except ValueError:
            columns = []
        if target in columns:
            out.append(
                Problem(
                    f"input.score binds the target column '{target}' as a score, so the "
                    "scores would rank every row by its true label.",
                    file=file,
                    control=control.control_id,
                    column=target,
                    hint="bind input.score to the model's probability column(s).",
                )
            )
    return out


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
