"""What the DuckDB and Spark engines share: raw-text conversion with the embedded CSV
reader's semantics, turning an aggregated result into a weighted
:class:`~fairpolicy.data.sources.base.Table`, the Parquet footers' type check, and
:class:`Aggregated` (an engine as the run's source).

Both engines read a CSV's bound columns as raw text and group on that text; the few
distinct values that come back are converted here by pyarrow's own CSV reader with the
embedded path's options. Type inference of pyarrow's CSV reader depends only on the
set of values in a column (checked by the tests), so a column's type and every value
are exactly what the embedded reader would produce from the whole file. Typed sources
(Parquet, Spark DataFrames) keep their types.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.data.bind.groups import group_text
from fairpolicy.data.limits import check_rows
from fairpolicy.data.sources.base import (
    WEIGHT,
    Bound,
    EngineSource,
    RegressionAggregate,
    Request,
    Table,
)
from fairpolicy.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa


#: a decimal number with a fractional part or an exponent, as both pyarrow's and the
#: engines' parsers read it (no surrounding whitespace, no digit separators): only such
#: text is rounded on the engine; anything else is converted here, exactly
FLOAT_RE = r"[+-]?(([0-9]+\.[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+)"
#: any plain decimal number (integers included), for regression sums on raw text
NUMBER_RE = r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"


def null_tokens() -> list[str]:
    """The strings pyarrow's CSV reader reads as null (the embedded reader's default)."""
    import pyarrow.csv as pacsv

    return list(pacsv.ConvertOptions().null_values)


def convert_text(
    values: pa.Array | pa.ChunkedArray,
    *,
    as_string: bool = False,
    arrow_type: pa.DataType | None = None,
    samples: Sequence[str] = (),
) -> pa.Array:
    """Convert raw CSV field text as the embedded reader does.

    ``as_string`` reads the column as text (null tokens become null), like the
    dimension columns; otherwise ``arrow_type`` fixes the type, or pyarrow infers it
    from the values plus ``samples`` (extra values that take part in the inference
    only, e.g. a number standing for values the engine already rounded).
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    arr = values if isinstance(values, pa.Array) else values.combine_chunks()
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    n = len(arr)
    if samples:
        arr = pa.concat_arrays([arr, pa.array(list(samples), pa.string())])
    buf = io.BytesIO()
    pacsv.write_csv(
        pa.table({"v": arr}),
        buf,
        write_options=pacsv.WriteOptions(quoting_style="all_valid"),
    )
    if as_string:
        types: dict[str, pa.DataType] = {"v": pa.string()}
    else:
        types = {} if arrow_type is None else {"v": arrow_type}
    out = pacsv.read_csv(
        io.BytesIO(buf.getvalue()),
        parse_options=pacsv.ParseOptions(ignore_empty_lines=False, newlines_in_values=True),
        convert_options=pacsv.ConvertOptions(column_types=types, strings_can_be_null=True),
    ).column("v")
    result = out.combine_chunks() if out.num_chunks != 1 else out.chunk(0)
    return result.slice(0, n)


def snap(values: NDArray[np.float64], decimals: int) -> NDArray[np.float64]:
    """Rounded scores as the exact same doubles whichever engine rounded them."""
    scale = 10.0**decimals
    out: NDArray[np.float64] = np.rint(values * scale) / scale
    return out


def regression_aggregate(
    result: pa.Table,
    dims: list[str],
    y: str,
    yhat: str,
    odd_any: bool,
    *,
    text: bool,
    source: EngineSource,
    dataframe: bool = False,
) -> RegressionAggregate | None:
    """The :class:`RegressionAggregate` of an engine's per-tuple sums (columns ``v0..``,
    ``my``, ``mp``, the weight and ``s0..s6``), or None when the tuples must decide: a
    text or infinite value (``odd_any``), no rows, or a text column with every value missing
    (the embedded path's own message then names the problem)."""
    import pyarrow.compute as pc

    my = np.asarray(pc.fill_null(result.column("my"), False).to_numpy(), dtype=bool)
    mp = np.asarray(pc.fill_null(result.column("mp"), False).to_numpy(), dtype=bool)
    if odd_any or result.num_rows == 0 or (text and (my.all() or mp.all())):
        return None
    request = Request(columns=tuple(dims), strings=frozenset(dims))
    names = {c: f"v{i}" for i, c in enumerate(dims)}
    table = build_table(result, request, names, text=text, source=source, dataframe=dataframe)
    table.read = [*dims, y, yhat]
    sums = np.column_stack(
        [
            np.asarray(pc.fill_null(result.column(f"s{k}"), np.nan).to_numpy(), dtype=np.float64)
            for k in range(7)
        ]
    )
    return RegressionAggregate(table=table, missing={y: my, yhat: mp}, sums=sums)


def build_table(
    result: pa.Table,
    request: Request,
    names: dict[str, str],
    *,
    text: bool,
    source: EngineSource,
    dataframe: bool = False,
) -> Table:
    """A weighted :class:`Table` from an aggregated result.

    ``names[column]`` is the result's name for a request column; a text-mode score
    column ``c`` comes as two result columns: ``names[c]`` (raw text where the value
    was not rounded) and ``names[c] + "#r"`` (the rounded value, else null).
    Group (dimension, site) columns come back as text: raw CSV text as written (only a
    true null is missing), typed values as :func:`~fairpolicy.data.bind.groups.group_text`
    renders them (a float NaN is missing, -0.0 is ``0``), the same on every engine.
    ``dataframe`` is kept for callers; typed sources are all treated alike.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    weights = np.asarray(result.column(WEIGHT).to_numpy(), dtype=np.int64)
    columns: dict[str, pa.ChunkedArray] = {}
    for c in request.columns:
        raw = result.column(names[c])
        if text and c in request.scores:
            rounded = result.column(names[c] + "#r").combine_chunks()
            any_rounded = rounded.null_count < len(rounded)
            arr = convert_text(raw, samples=("0.5",) if any_rounded else ())
            if any_rounded and pa.types.is_floating(arr.type):
                snapped = snap(rounded.to_numpy(zero_copy_only=False), request.decimals)
                arr = pc.if_else(pc.is_null(rounded), arr, pa.array(snapped, pa.float64()))
            elif any_rounded:  # text elsewhere in the column: it is not numeric at all
                arr = pc.if_else(
                    pc.is_null(rounded), arr.cast(pa.string()), rounded.cast(pa.string())
                )
        elif text and c in request.strings:
            # a group column is the text as written: only a true null is missing
            arr = raw.combine_chunks().cast(pa.string())
        elif text:
            arr = convert_text(raw)
        else:
            arr = raw.combine_chunks()
            if c in request.scores and pa.types.is_floating(arr.type):
                v = arr.to_numpy(zero_copy_only=False).astype(np.float64)
                with np.errstate(invalid="ignore"):
                    inside = (v >= 0.0) & (v <= 1.0)
                v[inside] = snap(v[inside], request.decimals)
                arr = pa.array(v, pa.float64(), mask=np.asarray(arr.is_null()))
            if pa.types.is_large_string(arr.type):
                arr = arr.cast(pa.string())
            if c in request.strings:  # NaN is missing, -0.0 is "0", as on every engine
                # no text form: the control binding it reports that, as embedded
                with contextlib.suppress(TypeError):
                    arr = group_text(arr).combine_chunks()
        columns[c] = pa.chunked_array([arr])
    flags = {
        cols: np.asarray(pc.fill_null(result.column(f"__sum{i}"), False).to_numpy(), dtype=bool)
        for i, cols in enumerate(request.score_sets)
    }
    return Table(
        columns=columns,
        available=list(source.available),
        rows=int(weights.sum()),
        path=source.path,
        sha256=source.sha256,
        weights=weights,
        source=source,
        sum_flags=flags,
    )


def _type_kind(t: pa.DataType) -> str:
    """A Parquet column type as the pipeline sees it: integer widths and string
    encodings read alike; integers, floats, text and booleans do not."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t):
        return "floating point"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    return str(t)


class ParquetSchemas:
    """The footers of the Parquet files a pattern matches, to refuse a bound column whose
    type differs between them (an engine would merge ``1`` and ``1.0``, or text and
    numbers, into different groups or classes without a word)."""

    def __init__(self, files: Sequence[Path | str], pattern: str | None) -> None:
        import pyarrow.parquet as pq

        self.pattern = pattern
        self.schemas: list[tuple[str, pa.Schema]] = []
        if len(files) > 1:
            for f in files:
                try:
                    self.schemas.append((str(f), pq.read_schema(f)))
                except Exception:  # unreadable: the engine's own read reports it
                    continue

    def check(self, columns: Sequence[str]) -> None:
        for column in dict.fromkeys(columns):
            kinds: dict[str, str] = {}
            for name, schema in self.schemas:
                i = schema.get_field_index(column)
                kind = "absent" if i < 0 else _type_kind(schema.field(i).type)
                kinds.setdefault(kind, name)
            if len(kinds) > 1:
                (k1, f1), (k2, f2) = list(kinds.items())[:2]
                raise DataError(
                    f"the files this pattern matches disagree on column '{column}': "
                    f"{f1} has it as {k1}, {f2} as {k2}. Read together, such values would "
                    "become different groups or classes (1 and 1.0, or a number and text).",
                    file=self.pattern,
                    column=column,
                    hint=f"write '{column}' with one type in every file (e.g. cast it before "
                    "writing), or check the files one at a time.",
                )


class Aggregated:
    """An aggregating engine as a :class:`~fairpolicy.data.sources.base.Source`: the run
    reads its distinct tuples, weighted by their row counts."""

    def __init__(self, engine: EngineSource, data: Any) -> None:
        self.engine = engine
        self.data = data
        self.name = engine.name
        self.path = engine.path
        self.sha256 = engine.sha256
        self.available = engine.available

    def read(self, bound: Bound) -> Table:
        table = self.engine.tuples(bound.request)
        check_rows(table.rows, bound.max_rows, table.path or str(self.data))
        return table

    def close(self) -> None:
        self.engine.close()
