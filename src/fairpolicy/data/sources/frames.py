"""The source of an in-memory table: a pandas or polars DataFrame, a pyarrow Table, or
anything that exports the Arrow C stream; its bound columns become a :class:`Table`
without a copy where Arrow allows."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from fairpolicy.data.limits import check_rows
from fairpolicy.data.sources.base import Bound, Table, refuse_duplicates, refuse_nested
from fairpolicy.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa


class FrameSource:
    """An in-memory table read by the embedded engine: one entry per row."""

    name = "embedded"

    def __init__(self, frame: Any) -> None:
        self.path: str | None = None
        self.sha256: str | None = None
        self.available = frame_columns(frame)
        self._frame = frame

    def read(self, bound: Bound) -> Table:
        return read_frame(
            self._frame, list(dict.fromkeys(bound.columns)), set(bound.strings), bound.max_rows
        )

    def close(self) -> None:
        pass


def frame_columns(frame: Any) -> list[str]:
    """The column names of an in-memory table."""
    if is_dataframe(frame):
        return [str(c) for c in frame.columns]
    return [str(c) for c in as_arrow(frame).column_names]


def is_dataframe(obj: Any) -> bool:
    """A pandas DataFrame (a polars one is read through Arrow: :func:`is_arrow_like`)."""
    return (
        type(obj).__name__ == "DataFrame"
        and hasattr(obj, "columns")
        and not is_arrow_like(obj)
        and not type(obj).__module__.startswith("pyspark.")
    )


def is_spark_dataframe(obj: Any) -> bool:
    """A pyspark DataFrame (classic or Spark Connect), without importing pyspark."""
    return type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pyspark.")


def is_arrow_like(obj: Any) -> bool:
    """A pyarrow Table, a polars DataFrame, or any table that exports the Arrow C stream
    (``__arrow_c_stream__``: DuckDB relations, …); a pandas DataFrame is not."""
    import sys

    if isinstance(obj, str | bytes | os.PathLike):
        return False
    # only when pyarrow is already imported (by the caller who made the table); never
    # while another thread is still importing it (a partly initialised module)
    pa = sys.modules.get("pyarrow")
    kinds = tuple(k for k in (getattr(pa, "Table", None), getattr(pa, "RecordBatch", None)) if k)
    if kinds and isinstance(obj, kinds):
        return True
    top = type(obj).__module__.split(".")[0]
    if top in ("pandas", "pyspark"):
        return False
    return top == "polars" or hasattr(obj, "__arrow_c_stream__")


def in_memory_name(obj: Any) -> str:
    """How messages name an in-memory table: ``<pandas DataFrame>``, ``<pyarrow Table>``…"""
    if is_dataframe(obj):
        return "<DataFrame>"
    top = type(obj).__module__.split(".")[0]
    return f"<{top} {type(obj).__name__}>"


def as_arrow(obj: Any) -> pa.Table:
    """``obj`` as a pyarrow Table: as is, by ``to_arrow()`` (polars), or through the Arrow
    C stream interface."""
    import pyarrow as pa

    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    try:
        if hasattr(obj, "__arrow_c_stream__"):
            return pa.RecordBatchReader.from_stream(obj).read_all()
        out = obj.to_arrow()
        if isinstance(out, pa.RecordBatch):
            out = pa.Table.from_batches([out])
    except (pa.ArrowException, TypeError, ValueError, AttributeError) as exc:
        raise DataError(
            f"the {type(obj).__name__} could not be read as an Arrow table: "
            f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}.",
            file=in_memory_name(obj),
            hint="pass a pandas or polars DataFrame, a pyarrow Table, or a CSV/Parquet path.",
        ) from None
    if not isinstance(out, pa.Table):
        raise DataError(
            f"to_arrow() of the {type(obj).__name__} returned {type(out).__name__}, not a "
            "pyarrow Table.",
            file=in_memory_name(obj),
            hint="pass a pandas or polars DataFrame, a pyarrow Table, or a CSV/Parquet path.",
        )
    return out


def read_frame(
    source: Any, wanted: list[str], strings: set[str], max_rows: int | None = None
) -> Table:
    """The ``wanted`` columns (those that exist) of an in-memory table."""
    name = in_memory_name(source)
    if is_arrow_like(source):
        arrow = as_arrow(source)
        check_rows(arrow.num_rows, max_rows, name)
        return _from_arrow(arrow, wanted, strings, name)
    check_rows(len(source), max_rows, name)
    return _from_dataframe(source, wanted, strings)


def _from_arrow(table: pa.Table, wanted: list[str], strings: set[str], name: str) -> Table:
    import pyarrow as pa

    available = [str(c) for c in table.column_names]
    refuse_duplicates({c for c in available if available.count(c) > 1}, wanted, name)
    present = [c for c in wanted if c in available]
    cols = {}
    for c in present:
        arr = table.column(available.index(c))
        if pa.types.is_large_string(arr.type) or pa.types.is_string_view(arr.type):
            arr = arr.cast(pa.string())  # polars writes large/view strings
        refuse_nested({c: arr}, name)
        if c in strings and not (pa.types.is_string(arr.type) or pa.types.is_dictionary(arr.type)):
            arr = arr.cast(pa.string())
        cols[c] = arr
    if table.num_rows == 0:
        raise DataError(f"the {name[1:-1]} has no rows.", file=name)
    return Table(columns=cols, available=available, rows=table.num_rows, path=None)


def _from_dataframe(df: Any, wanted: list[str], strings: set[str]) -> Table:
    import pyarrow as pa

    available = [str(c) for c in df.columns]
    refuse_duplicates({c for c in available if available.count(c) > 1}, wanted, "<DataFrame>")
    present = [c for c in wanted if c in available]
    cols = {}
    for c in present:
        try:
            arr = pa.chunked_array([pa.array(df[c].to_numpy(), from_pandas=True)])
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise DataError(
                f"the column's values cannot be read as one type: {str(exc).splitlines()[0]}",
                file="<DataFrame>",
                column=c,
                hint="give the column one type (numbers or text) before the check.",
            ) from None
        refuse_nested({c: arr}, "<DataFrame>")
        if c in strings:  # a NaN group is missing, -0.0 is the group "0"
            from fairpolicy.data.bind.groups import group_text

            # no text form: the control binding it reports that
            with contextlib.suppress(TypeError):
                arr = group_text(arr)
        cols[c] = arr
    if len(df) == 0:
        raise DataError("the DataFrame has no rows.", file="<DataFrame>")
    return Table(columns=cols, available=available, rows=len(df), path=None)
