"""Label encodings and class sets: a control's target and prediction columns as class codes.

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
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.data.bind.codes import distinct_values, label_codes
from fairpolicy.data.bind.label_types import (
    MAX_FLOAT_LABEL,
    OTHER_CLASS,
    LabelKey,
    Labels,
    LabelType,
)
from fairpolicy.data.bind.rows import (
    BindContext,
    as_float,
    fractional_rows,
    is_float,
    null_mask,
    require_complete,
    value_kind,
)
from fairpolicy.data.bind.scores import (
    declared_order,
    mapping_line,
    no_positive_problem,
    order_source,
    require_suffix_order,
    resolve_score_binding,
    unpaired_problem,
)
from fairpolicy.errors import MetricError, Problem, did_you_mean

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.sources.base import Table
    from fairpolicy.policy.schema import Control


def encode_labels(
    table: Table, control: Control, key: LabelKey, replacement: tuple[str, ...] = ()
) -> Labels:
    """Encode target and prediction into class codes for one :class:`LabelKey`.

    ``replacement`` names the multi-class metrics to suggest when a binary
    metric meets more than two classes.
    """
    import pyarrow as pa

    ctx = BindContext(table, control)
    t_arr, p_arr = table.columns[key.target], table.columns[key.prediction]
    warnings: list[str] = []

    # --- missing values (a column without nulls or NaN needs no mask)
    masks = {
        col: null_mask(arr)
        for col, arr in ((key.target, t_arr), (key.prediction, p_arr))
        if arr.null_count or is_float(arr)
    }
    keep, dropped_note = require_complete(table, control, masks, key.missing)
    warnings += dropped_note
    if keep is not None:
        t_arr = t_arr.filter(pa.array(keep))
        p_arr = p_arr.filter(pa.array(keep))
        if len(t_arr) == 0:
            raise ctx.error("no rows are left after dropping rows with missing labels.")

    # --- each column's own positive label (positive_label.target / .prediction)
    positive_label = key.positive_label
    if key.positive_target is not None or key.positive_prediction is not None:
        t_arr, p_arr = _per_role(ctx, table, key, control, t_arr, p_arr, warnings)
        positive_label = "1"

    # --- label kinds
    kt, kp = value_kind(t_arr), value_kind(p_arr)
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
    if mapped is not None and len(mapped) == 1:  # `input.score: melanoma=p`: P(melanoma)
        if positive_label is not None and label.value(positive_label) != label.value(mapped[0]):
            raise ctx.error(
                f"input.score '{key.score}' says column '{score_cols[0]}' holds P({mapped[0]}), "
                f"but positive_label is '{positive_label}'.",
                column=score_cols[0],
                hint="name the same class in both, or drop one of them.",
            )
        positive_label = mapped[0]
    declared = declared_order(ctx, key, score_cols, mapped, label)
    k_scores: int | None = None
    if score_cols:
        k_scores = 2 if len(score_cols) == 1 else len(score_cols)
    k = key.num_classes
    if declared is not None:
        if k is not None and k != len(declared):
            raise ctx.error(
                f"num_classes={k}, but {len(declared)} classes are declared "
                f"{[str(c) for c in declared]} ({order_source(key, mapped)}).",
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
                f"{order_source(key, mapped)}, so they have no score column.",
                column=key.target,
                hint="declare every class with its score column, e.g. input.score: "
                + mapping_line([*declared, *stray], score_cols)
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
                "column: input.score: " + mapping_line(observed, score_cols) + ".",
            )
        classes = list(range(k))
        unseen = [c for c in classes if c not in observed]
        if unseen and not key.binary:
            warnings.append(
                f"control '{control.control_id}': class(es) {unseen} of K={k} never occur in "
                f"'{key.target}' or '{key.prediction}'"
            )
        if len(score_cols) > 1:
            require_suffix_order(ctx, key, score_cols)
    elif k is not None and len(observed) > k:
        raise ctx.error(
            f"{len(observed)} distinct labels {observed[:8]} but K={k} classes declared.",
            column=key.target,
            hint="declare the right number of classes or fix the labels.",
        )
    else:
        classes = list(observed)
        if len(score_cols) > 1:  # text labels, positional score columns: no pairing
            score_problem = unpaired_problem(ctx, key, score_cols, classes)

    # --- positive class for binary metrics
    positive: int | None = None
    if key.binary:
        if len(classes) > 2:
            _different_vocabularies(ctx, key, control, t_arr, p_arr)
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
        score_problem = None if integer else no_positive_problem(ctx, key, score_cols, classes)

    t_codes = label_codes(t_arr, classes, integer)
    p_codes = t_codes if key.prediction == key.target else label_codes(p_arr, classes, integer)
    weights, sample = table.weights, table.sample_weights
    if keep is not None:
        weights = None if weights is None else weights[keep]
        sample = None if sample is None else sample[keep]
    return Labels(
        classes=tuple(str(c) for c in classes),
        true_codes=t_codes,
        pred_codes=p_codes,
        keep=keep,
        positive=positive,
        score_columns=score_cols,
        warnings=warnings,
        weights=weights,
        sample_weights=sample,
        score_problem=score_problem,
    )


def _as_text(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """A label column as text: integers as written, booleans ``true``/``false``."""
    import pyarrow as pa

    return arr.cast(pa.string())


def _text_values(arr: pa.ChunkedArray) -> list[str]:
    """The distinct labels of a column, as text, sorted."""
    import pyarrow.compute as pc

    return sorted(str(v) for v in pc.unique(_as_text(arr)).drop_null().to_pylist())


def _per_role(
    ctx: BindContext,
    table: Table,
    key: LabelKey,
    control: Control,
    t_arr: pa.ChunkedArray,
    p_arr: pa.ChunkedArray,
    warnings: list[str],
) -> tuple[pa.ChunkedArray, pa.ChunkedArray]:
    """Target and prediction as 1 (the column's own positive label) / 0, for columns whose
    label vocabularies differ (``outcome ∈ {repaid, default}``, ``decision ∈ {approve,
    deny}``). Each column holds at most two labels; its positive label must be one of
    them (a column showing one label only is accepted with a warning: every row negative
    or every row positive). Binary metrics only."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not key.binary:
        raise ctx.error(
            f"positive_label.target / positive_label.prediction apply to binary metrics, "
            f"but '{control.metric_key}' compares all classes.",
            key="positive_label.target"
            if key.positive_target is not None
            else "positive_label.prediction",
            hint="remove them, or map both columns to one vocabulary.",
        )
    out = []
    for arr, col, role, own in (
        (t_arr, key.target, "target", key.positive_target),
        (p_arr, key.prediction, "prediction", key.positive_prediction),
    ):
        if is_float(arr):  # whole-number floats (1.0) are the integers they stand for
            arr = _as_int(ctx, table, arr, col, role)
        named = own if own is not None else key.positive_label
        if named is not None and pa.types.is_integer(arr.type):
            try:  # a number names an integer label however it is written ("1.0" is 1)
                number = float(named)
            except ValueError:
                number = math.nan
            if math.isfinite(number) and number == int(number):
                named = str(int(number))
        values = _text_values(arr)
        prop = f"positive_label.{role}"
        if named is None:
            raise ctx.error(
                f"'{col}' ({role}) holds {values[:5]} and has no positive label: "
                f"positive_label.{'prediction' if role == 'target' else 'target'} is set, so "
                f"{prop} (or positive_label) must name this column's positive label too.",
                column=col,
                key=prop,
                hint=f"add {prop}: <one of {values[:5]}>.",
            )
        if len(values) > 2:
            raise ctx.error(
                f"'{col}' ({role}) holds {len(values)} labels {values[:8]}, but "
                f"'{control.metric_key}' is a binary metric.",
                column=col,
                key=prop,
                hint="bind a column with two labels, or use a multi-class metric.",
            )
        if named not in values:
            if len(values) == 2:
                raise ctx.error(
                    f"{prop if own is not None else 'positive_label'} '{named}' is not one of "
                    f"the labels {values} of '{col}' ({role}).",
                    column=col,
                    key=prop,
                    hint=f"set {prop} to the label of the positive outcome, one of {values}."
                    f"{did_you_mean(named, values)}",
                )
            warnings.append(
                f"control '{control.control_id}': '{col}' ({role}) holds only {values}; its "
                f"positive label '{named}' never occurs, so every row counts as negative"
            )
        hit = pc.fill_null(pc.equal(_as_text(arr), pa.scalar(named)), False)
        out.append(hit.cast(pa.int64()))
    return out[0], out[1]


def _different_vocabularies(
    ctx: BindContext,
    key: LabelKey,
    control: Control,
    t_arr: pa.ChunkedArray,
    p_arr: pa.ChunkedArray,
) -> None:
    """A binary metric whose target and prediction each hold two labels, but different
    ones (``repaid/default`` and ``approve/deny``): say exactly that, with both props."""
    if key.prediction == key.target:
        return
    t_vals, p_vals = _text_values(t_arr), _text_values(p_arr)
    if len(t_vals) > 2 or len(p_vals) > 2 or set(t_vals) == set(p_vals):
        return
    raise ctx.error(
        f"'{key.target}' (target) holds {t_vals} and '{key.prediction}' (prediction) holds "
        f"{p_vals}: the two columns use different labels, so fairpolicy cannot tell which "
        "prediction matches which outcome.",
        column=key.target,
        key="positive_label",
        hint=f"name each column's positive label (the favourable outcome): "
        f"positive_label.target: <{' or '.join(t_vals)}> and positive_label.prediction: "
        f"<{' or '.join(p_vals)}>, or recode one column to the other's labels.",
    )


def _as_int(
    ctx: BindContext, table: Table, arr: pa.ChunkedArray, column: str, role: str
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
    return _unlabelable(as_float(arr))


def _refuse_padded_twins(ctx: BindContext, key: LabelKey, observed: list[Any]) -> None:
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


def _require_label(
    ctx: BindContext, key: LabelKey, text: str, classes: list[Any], label: LabelType
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


def _positive(
    ctx: BindContext, key: LabelKey, label_text: str | None, classes: list[Any], label: LabelType
) -> tuple[list[Any], int]:
    """Resolve the positive class of a binary metric; returns (classes, index)."""
    if label_text is None:
        if not label.integer:
            found = ", ".join(repr(str(c)) for c in classes[:8]) + (
                f" … ({len(classes)} labels)" if len(classes) > 8 else ""
            )
            raise ctx.error(
                f"the labels are text ({found}): which one is the favourable or selected "
                "outcome (the positive label) is not something fairpolicy guesses, and a "
                "binary metric needs it.",
                column=key.target,
                hint="name that label with the prop positive_label: <"
                + " or ".join(str(c) for c in classes[:8])
                + "> on the control, once for every control in the policy's metadata.props, "
                "or with --positive-label LABEL (positive_label= in Python).",
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
