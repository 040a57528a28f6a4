"""What binding asks of one column's values: where a problem is (:class:`BindContext`),
which rows are missing, fractional or infinite, and the checks that stop a control on
them (a numeric column, no missing values)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import BindingError, Problem, did_you_mean

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.sources.base import Table
    from fairpolicy.policy.schema import Control


class BindContext:
    """Locates problems: the data file, the control, the column."""

    def __init__(self, table: Table, control: Control) -> None:
        self.file = table.path or "<DataFrame>"
        self.control = control.control_id

    def error(
        self,
        message: str,
        column: str | None = None,
        hint: str | None = None,
        key: str | None = None,
    ) -> BindingError:
        return BindingError(
            Problem(
                message, file=self.file, control=self.control, column=column, key=key, hint=hint
            )
        )


def missing_column_problem(table: Table, control: Control, role: str, column: str) -> Problem:
    hint = (
        f"pass --rename {column}=COLUMN (every control that reads '{column}' then reads "
        f"COLUMN; the others are untouched), change the policy's input.{role}, or bind this "
        f"control alone with --bind {control.control_id}:{role}=COLUMN."
    )
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


def row_numbers(
    table: Table,
    column: str,
    predicate: Callable[[Any], NDArray[np.bool_]],
    mask: NDArray[np.bool_] | None = None,
) -> str:
    """The 1-based data rows (at most 5) where ``predicate`` holds for ``column``."""
    rows = table.first_rows(column, predicate, mask=mask if table.weights is None else None)
    return ", ".join(str(i + 1) for i, _ in rows)


def is_float(arr: pa.ChunkedArray) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(arr.type))


def null_mask(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    import pyarrow.compute as pc

    if arr.null_count == 0 and not is_float(arr):
        return np.zeros(len(arr), dtype=bool)
    return np.asarray(pc.is_null(arr, nan_is_null=True).to_numpy(zero_copy_only=False))


def as_float(arr: pa.ChunkedArray) -> NDArray[np.float64]:
    import pyarrow as pa

    if pa.types.is_boolean(arr.type):
        arr = arr.cast(pa.int64())
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)


def missing_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """Null, or NaN in a float column."""
    return null_mask(arr)


def fractional_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """A present value that is not a whole number."""
    v = as_float(arr)
    with np.errstate(invalid="ignore"):
        out: NDArray[np.bool_] = (v != np.floor(v)) & ~np.isnan(v)
    return out


def infinite_rows(arr: pa.ChunkedArray) -> NDArray[np.bool_]:
    """+inf or −inf."""
    out: NDArray[np.bool_] = np.isinf(as_float(arr))
    return out


def value_kind(arr: pa.ChunkedArray) -> str:
    import pyarrow as pa

    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
        return "str"
    return "other"


def require_numeric(
    table: Table, control: Control, column: str, role: str, arrow_type: pa.DataType
) -> None:
    """Text or other non-numeric column types are an error naming the column."""
    import pyarrow as pa

    t = arrow_type
    if not (pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_floating(t)):
        raise BindContext(table, control).error(
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
    values = as_float(arr)
    infinite = np.isinf(values)
    if infinite.any():
        raise BindContext(table, control).error(
            f"column '{column}' ({role}) has {table.count(infinite)} infinite value(s) "
            f"(first at data rows {row_numbers(table, column, infinite_rows, infinite)}).",
            column=column,
            hint="replace or remove them; fairpolicy does not clip values.",
        )
    return values, np.isnan(values) | null_mask(arr)


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
        raise BindContext(table, control).error(
            f"column '{col}' has {table.count(mask)} missing value(s) "
            f"(first at data rows {row_numbers(table, col, missing_rows, mask)}).",
            column=col,
            hint="fill or remove those rows, or set the control prop `missing: drop` "
            "to drop them (the count is reported).",
        )
    drop = np.logical_or.reduce(list(bad.values()))
    return ~drop, [
        f"control '{control.control_id}': dropped {table.count(drop)} row(s) with a missing "
        f"{' or '.join(repr(c) for c in bad)} (missing: drop)"
    ]
