"""Count tables as input (``input.count`` with ``input.selected`` or ``input.rate``).

An audit's aggregated table has one row per category or intersection: the dimension
columns, the number of applicants (``input.count``) and the number selected
(``input.selected``) — or the selection rate (``input.rate``), read as
``selected = rate × count``, a real number when the published rate was rounded. The
policy is read as the row-level data it summarizes: :func:`count_policy` binds each
control's target (the selection) to the selected (or rate) column and its sample weight
to the count column, and :func:`expand_counts` turns each table row into two entries —
selected (weight ``selected``) and not selected (weight ``count − selected``) — right
after the read, before the weights are applied (data/bind/weights.py). Every count-based
binary metric then equals the row-level run on the expanded rows: exactly with whole
counts (frequency weights), as ratios of float sums with fractional ones (survey
weights). A row whose dimension value is empty counts as applicants of unknown category.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from fairpolicy.errors import DataError, PolicyError

if TYPE_CHECKING:
    from fairpolicy.data.sources.base import Table
    from fairpolicy.policy.schema import Control, Policy

#: the count-table roles
COUNT_ROLES = ("count", "selected", "rate")


def _count_control(c: Control, file: str | None) -> Control:
    i = c.inputs
    if "count" not in i:
        stray = next((r for r in ("selected", "rate") if r in i), None)
        if stray is None:
            return c
        raise PolicyError(
            f"input.{stray} is bound but input.count is not: a count table needs the "
            "applicants' count of each row.",
            file=file,
            control=c.control_id,
            key=f"input.{stray}",
            hint="bind input.count to the column of applicants per row (or remove "
            f"input.{stray} for row-level data).",
        )
    sel, rate = i.get("selected"), i.get("rate")
    if (sel is None) == (rate is None):
        raise PolicyError(
            "a count table needs exactly one of input.selected (the number selected) and "
            "input.rate (the selection rate)"
            + ("; both are bound." if sel else "; neither is bound."),
            file=file,
            control=c.control_id,
            key="input.selected",
            hint="bind input.selected: COLUMN, or input.rate: COLUMN (read as rate × count).",
        )
    for role in ("weight", "prediction"):
        if role in i:
            raise PolicyError(
                f"input.{role} is bound on a count table: the rows are weighted by "
                "input.count and the selection is input.selected / input.rate.",
                file=file,
                control=c.control_id,
                key=f"input.{role}",
                hint=f"remove input.{role}; for a table with one row per (group, truth, "
                "prediction) bind input.weight to its count column instead of input.count.",
            )
    column = sel or rate
    assert column is not None
    inputs = {**i, "target": column, "weight": i["count"]}
    from fairpolicy.data.bind.roles import prediction_only
    from fairpolicy.metrics.registry import lookup

    try:
        spec = lookup(c.metric_key)
    except KeyError:
        return c
    if prediction_only(c):  # a selection-rate metric: the selection is the prediction
        inputs["prediction"] = column
    elif "prediction" in spec.inputs:
        raise PolicyError(
            f"metric '{c.metric_key}' compares predictions with true labels, and a count "
            "table of applicants and selected carries no true labels.",
            file=file,
            control=c.control_id,
            key="input.count",
            hint="give a table with one row per (group, truth, prediction) and bind "
            "input.weight to its count column, with input.target and input.prediction; "
            "or check selection-rate metrics (impact_ratio, demographic_parity_ratio).",
        )
    return dataclasses.replace(c, inputs=inputs)


def count_policy(pol: Policy) -> Policy:
    """The policy with every count-table control bound as weighted row data."""
    if not any(r in c.inputs for c in pol.controls for r in COUNT_ROLES):
        return pol
    controls = tuple(_count_control(c, pol.path) for c in pol.controls)
    return dataclasses.replace(pol, controls=controls)


def _bad(table: Table, control: Control, column: str, what: str, hint: str) -> DataError:
    return DataError(
        f"the count table's column '{column}' {what}.",
        file=table.path or "<DataFrame>",
        control=control.control_id,
        column=column,
        key="input.count",
        hint=hint,
    )


def _numbers(table: Table, control: Control, column: str) -> np.ndarray:
    import pyarrow as pa

    from fairpolicy.data.kernels import numpy_of

    arr = table.columns[column]
    kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
    if pa.types.is_decimal(kind):
        arr = arr.cast(pa.float64())
        kind = arr.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        sample = next((v for v in arr.to_pylist() if v is not None), None)
        raise _bad(
            table,
            control,
            column,
            f"holds values of type {kind} ({sample!r}), not numbers",
            "give counts (and rates) as plain numbers, e.g. 125 and 0.25, without % signs "
            "or thousands separators.",
        )
    values = np.asarray(numpy_of(arr), dtype=np.float64)
    bad = ~np.isfinite(values)
    if arr.null_count or bad.any():
        row = int(np.flatnonzero(bad)[0]) + 1 if bad.any() else None
        raise _bad(
            table,
            control,
            column,
            "has an empty or non-finite value" + (f" (table row {row})" if row else ""),
            "every row of a count table needs its count; drop the row or give 0.",
        )
    if (values < 0).any():
        row = int(np.flatnonzero(values < 0)[0]) + 1
        raise _bad(
            table,
            control,
            column,
            f"holds a negative value ({values[row - 1]:g}, table row {row})",
            "counts and rates are 0 or more.",
        )
    return values


def _whole_rows(selected: np.ndarray, rest: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Applicants each entry stands for when ``selected`` is fractional: the rounded
    selected count (at least 1 when positive, leaving at least 1 for a positive rest) and
    the rest of the row's rounded count."""
    total = np.maximum(np.rint(n), 0)
    sel = np.rint(selected)
    sel = np.where((selected > 0) & (sel < 1), 1, sel)
    sel = np.where((rest > 0) & (sel > total - 1), total - 1, sel)
    sel = np.maximum(sel, 0)
    other = np.maximum(total - sel, np.where(rest > 0, 1, 0))
    return np.concatenate([sel, other]).astype(np.int64)


def expand_counts(table: Table, pol: Policy) -> Table:
    """Each count-table row as a selected and a not-selected entry (the module docstring)."""
    counted = [c for c in pol.controls if "count" in c.inputs]
    if not counted:
        return table
    c = counted[0]
    count, sel, rate = c.inputs["count"], c.inputs.get("selected"), c.inputs.get("rate")
    for other in counted[1:]:
        o = other.inputs
        if (o["count"], o.get("selected"), o.get("rate")) != (count, sel, rate):
            raise PolicyError(
                f"controls '{c.control_id}' and '{other.control_id}' read different count "
                "columns; one run reads one count table.",
                file=pol.path,
                control=other.control_id,
                key="input.count",
                hint="set input.count and input.selected (or input.rate) once for the whole "
                "policy (metadata props), or run the tables separately.",
            )
    uncounted = [x for x in pol.controls if "count" not in x.inputs]
    if uncounted:
        raise PolicyError(
            f"control '{uncounted[0].control_id}' does not read the count table that "
            f"control '{c.control_id}' reads; a count table has no row-level columns.",
            file=pol.path,
            control=uncounted[0].control_id,
            key="input.count",
            hint="set input.count once for the whole policy (a policy-wide prop).",
        )
    column = sel or rate
    assert column is not None
    for col in (count, column):
        if col not in table.columns:
            return table  # a missing column is reported per control
    n = _numbers(table, c, count)
    part = _numbers(table, c, column)
    if rate is not None:
        if (part > 1).any():
            row = int(np.flatnonzero(part > 1)[0]) + 1
            raise _bad(
                table,
                c,
                column,
                f"holds a rate above 1 ({part[row - 1]:g}, table row {row})",
                "give the selection rate as a fraction (0.25, not 25 or 25%).",
            )
        selected = part * n
    else:
        selected = part
        over = selected > n
        if over.any():
            row = int(np.flatnonzero(over)[0]) + 1
            raise _bad(
                table,
                c,
                column,
                f"holds more selected ({selected[row - 1]:g}) than applicants "
                f"({n[row - 1]:g}) in table row {row}",
                f"the selected count is at most the applicants' count ('{count}'); check "
                "that the columns are not swapped.",
            )
    rest = np.maximum(n - selected, 0.0)
    whole = bool(np.all(selected == np.floor(selected)) and np.all(n == np.floor(n)))
    import pyarrow as pa

    m = len(n)
    idx = pa.array(np.concatenate([np.arange(m), np.arange(m)]))
    columns = {k: v.take(idx) for k, v in table.columns.items()}
    flag = np.concatenate([np.ones(m, dtype=np.int64), np.zeros(m, dtype=np.int64)])
    weight = np.concatenate([selected, rest])
    columns[column] = pa.chunked_array([pa.array(flag)])
    rows = None
    if not whole:
        # fractional counts stay exact sums of weights, but each entry stands for a whole
        # number of applicants (its rounded count), so group sizes, min_samples and the
        # bootstrap count applicants, not table rows: weight per applicant = count / rows
        rows = _whole_rows(selected, rest, n)
        weight = np.where(rows > 0, weight / np.maximum(rows, 1), weight)
    columns[count] = pa.chunked_array([pa.array(weight.astype(np.int64) if whole else weight)])
    note = (
        f"count table: each row stands for '{count}' applicants, "
        + (f"'{sel}'" if sel else f"'{rate}' × '{count}'")
        + " of them selected (read as whole-number frequency weights)"
        if whole
        else f"count table: each row stands for '{count}' applicants, "
        + (f"'{sel}'" if sel else f"'{rate}' × '{count}'")
        + " of them selected — a real number where the published rate was rounded, so the "
        "counts are fractional: read as survey weights over the rows' applicants (values are "
        "ratios of the exact sums; group sizes, min_samples and the bootstrap count "
        "applicants), and the allocation bounds of LL144 impact ratios are not computed"
    )
    weights = None if table.weights is None else np.concatenate([table.weights, table.weights])
    if rows is not None:
        rows = np.maximum(rows, 1)  # a zero-weight entry is dropped by the weights anyway
        weights = rows if weights is None else weights * rows
    return dataclasses.replace(
        table,
        columns=columns,
        weights=weights,
        warnings=[*table.warnings, note],
        sum_flags={k: np.concatenate([v, v]) for k, v in table.sum_flags.items()},
    )
