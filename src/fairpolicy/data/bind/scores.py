"""Score bindings: the ``input.score`` spec and its columns, their pairing with the
classes (declared or by integer suffix, never by sorted text order), and the checks on
their values (numbers in [0, 1], rows of several columns summing to 1)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import numpy as np

from fairpolicy.data.bind.label_types import LabelKey, LabelType
from fairpolicy.data.bind.rows import (
    BindContext,
    missing_column_problem,
    missing_rows,
    row_numbers,
    value_kind,
)
from fairpolicy.errors import BindingError, Problem, did_you_mean

if TYPE_CHECKING:
    from fairpolicy.data.sources.base import Table
    from fairpolicy.policy.schema import Control


#: rows of several score columns must sum to 1 within this, or a warning counts them
SUM_TOLERANCE = 1e-3


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
    ctx = BindContext(table, control)
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


def declared_order(
    ctx: BindContext,
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
                f"class '{text}' ({order_source(key, mapped)}) is not a whole number, but the "
                f"labels of '{key.target}' are integers.",
                column=key.target,
                hint="name each class by its label value exactly as the data holds it.",
            )
        values.append(v)
    twice = sorted({str(v) for v in values if values.count(v) > 1})
    if twice:
        raise ctx.error(
            f"class '{twice[0]}' is declared more than once ({order_source(key, mapped)}).",
            column=key.target,
            hint="list each class once.",
        )
    if len(columns) > 1 and len(values) != len(columns):
        raise ctx.error(
            f"the classes prop lists {len(values)} classes {order}, but input.score binds "
            f"{len(columns)} score columns {list(columns)}.",
            column=columns[0],
            hint="list one class per score column, in the columns' order: input.score: "
            + mapping_line(values, columns),
        )
    return values


def order_source(key: LabelKey, mapped: tuple[str, ...] | None) -> str:
    if mapped is not None and len(mapped) > 1:
        return f"input.score '{key.score}'"
    return f"the classes prop '{key.classes}'"


def mapping_line(labels: list[Any], columns: tuple[str, ...]) -> str:
    """``a=p_0, b=p_1, …`` pairing ``labels`` with ``columns`` in the order given
    (``?`` where either side runs out)."""
    n = max(len(labels), len(columns))
    lab = [str(x) for x in labels] + ["?"] * (n - len(labels))
    col = list(columns) + ["?"] * (n - len(columns))
    return ", ".join(f"{a}={c}" for a, c in zip(lab, col, strict=True))


def require_suffix_order(ctx: BindContext, key: LabelKey, columns: tuple[str, ...]) -> None:
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


def unpaired_problem(
    ctx: BindContext, key: LabelKey, columns: tuple[str, ...], classes: list[Any]
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
        f"them, e.g. input.score: {mapping_line(classes, columns)} (this line pairs them in "
        "sorted-label order: check it against the model), or add the prop classes: "
        f"{','.join(str(c) for c in classes)} listing the classes in column order.",
    )


def no_positive_problem(
    ctx: BindContext, key: LabelKey, columns: tuple[str, ...], classes: list[Any]
) -> Problem:
    what = (
        f"score column '{columns[0]}' holds P(positive class)"
        if len(columns) == 1
        else "on two classes the score metrics read P(positive class)"
    )
    choice = "<" + " or ".join(str(c) for c in classes) + ">"
    pair = f"input.score: {choice}={columns[0]} or " if len(columns) == 1 else ""
    return Problem(
        f"{what}, but the labels of '{key.target}' are text {[str(c) for c in classes]} and "
        "no positive class is named (fairpolicy does not pick one by sorting the labels).",
        file=ctx.file,
        control=ctx.control,
        key="input.score",
        column=columns[0],
        hint=f"name the positive class: {pair}the prop positive_label: {choice} "
        "(whichever class the scores are about; --positive-label names it for every control).",
    )


def resolve_score_columns(table: Table, control: Control, spec: str) -> tuple[str, ...]:
    """Score columns from ``input.score``: a column, a comma list, or a prefix.

    A prefix ``y_score`` matches ``y_score_0, y_score_1, ...`` (contiguous from 0).
    """
    ctx = BindContext(table, control)
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
        if value_kind(arr) not in ("int", "float"):
            raise BindContext(table, control).error(
                f"score column '{c}' holds non-numeric values.",
                column=c,
                hint="scores must be probabilities in [0, 1].",
            )
        v = arr.to_numpy(zero_copy_only=False).astype(np.float64)
        nan = np.isnan(v)
        if nan.any():
            raise BindContext(table, control).error(
                f"score column '{c}' has {table.count(nan)} missing value(s) "
                f"(first at data rows {row_numbers(table, c, missing_rows, nan)}).",
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
