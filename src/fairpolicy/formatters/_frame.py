"""The frames of the Python API (``Results.to_frame``, ``groups_frame``) as a notebook
shows them: text columns left-aligned, numbers right-aligned, and one marker, ``—``, for
every "no value" (``None``, ``NaN`` and ``<NA>`` alike, where pandas would show three).

:class:`ResultsFrame` is a plain ``pandas.DataFrame`` in every other way (its data, dtypes
and methods are pandas'; an operation on it returns a plain ``DataFrame``). Imported only
when a frame is built, so a check never imports pandas for it.
"""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

#: what a cell with no value shows
NO_VALUE = "—"

__all__ = ["NO_VALUE", "ResultsFrame", "frame_html"]


def _missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):  # a list (a between threshold): a value
        return False


def _cell(value: Any) -> str:
    if _missing(value):
        return NO_VALUE
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    return str(value)


#: the frames' columns of numbers (right-aligned even when every value is missing)
NUMERIC_COLUMNS = frozenset({"value", "threshold", "n", "ci_low", "ci_high"})


def _numeric(series: pd.Series) -> bool:
    """A column of numbers (its name, its dtype, or every present value of an object
    column)."""
    if series.name in NUMERIC_COLUMNS or str(series.name).startswith("count["):
        return True
    if pd.api.types.is_bool_dtype(series.dtype):
        return False
    if pd.api.types.is_numeric_dtype(series.dtype):
        return True
    present = [v for v in series if not _missing(v)]
    return bool(present) and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in present
    )


def frame_html(frame: pd.DataFrame, max_rows: int | None = None) -> str:
    """``frame`` as an HTML table: alignment and the no-value marker inline on each cell
    (so a notebook's own table style cannot right-align text)."""
    limit = max_rows if max_rows is not None else pd.get_option("display.max_rows") or 60
    rows = len(frame)
    shown = (
        list(range(rows))
        if rows <= limit
        else [*range(limit // 2), -1, *range(rows - limit // 2, rows)]
    )
    align = {c: "right" if _numeric(frame[c]) else "left" for c in frame.columns}
    head = "".join(
        f'<th style="text-align:{align[c]}">{escape(str(c))}</th>' for c in frame.columns
    )
    body = []
    for i in shown:
        if i < 0:
            body.append(
                f'<tr><td colspan="{len(frame.columns)}">… {rows - limit} more rows</td></tr>'
            )
            continue
        cells = []
        for j, c in enumerate(frame.columns):
            value = frame.iat[i, j]
            muted = ";color:#888" if _missing(value) else ""
            cells.append(f'<td style="text-align:{align[c]}{muted}">{escape(_cell(value))}</td>')
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (
        '<table class="fairpolicy-frame" style="border-collapse:collapse">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        f"<p style='font-size:smaller;color:#888'>{rows} rows × {len(frame.columns)} columns"
        f" ({NO_VALUE}: no value)</p>"
    )


class ResultsFrame(pd.DataFrame):  # type: ignore[misc]  # pandas ships no stubs here
    """A ``pandas.DataFrame`` whose notebook view aligns text left and marks no value once."""

    @property
    def _constructor(self) -> Any:
        return pd.DataFrame

    def _repr_html_(self) -> str:
        return frame_html(self)
