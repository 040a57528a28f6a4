"""The embedded engine's source: the bound columns of one CSV or Parquet file, read by
pyarrow (multi-threaded, with column selection).

Dimension columns are read as text (dictionary-encoded while parsing) so ``01`` and
``1`` stay distinct groups. Missing columns are not an error here: the runner reports
them per control, naming the close matches among the columns the file has. Every CSV
passes the guard (:mod:`fairpolicy.data.sources.csv_guard`) first.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairpolicy.data import limits
from fairpolicy.data.sources.base import Bound, Prefetched, Table, refuse_duplicates
from fairpolicy.data.sources.csv_guard import (
    count_csv_rows,
    csv_header,
    parquet_error,
    raw_header,
    require_file,
    scan_csv,
    unclosed_quote_line,
)
from fairpolicy.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa


class ArrowFileSource:
    """A CSV or Parquet file read by the embedded engine: one entry per data row."""

    name = "embedded"

    def __init__(
        self,
        path: Path,
        prefetch: Prefetched | None = None,
        columns: Callable[[], list[str]] | None = None,
    ) -> None:
        self.path: str | None = str(path)
        self.sha256: str | None = None
        # the header, read once a run (the engine choice may have read it already)
        self.available = file_columns(path) if columns is None else list(columns())
        self._file = path
        self._prefetch = prefetch

    def read(self, bound: Bound) -> Table:
        if self._prefetch is not None:
            got = self._prefetch.take(bound.columns, bound.strings, self.available)
            if got is not None:
                return got
        return read_file(
            self._file,
            list(dict.fromkeys(bound.columns)),
            set(bound.strings),
            max_rows=bound.max_rows,
            memory_budget=bound.memory_budget,
        )

    def close(self) -> None:
        pass


def file_columns(path: Path) -> list[str]:
    """The column names of a CSV or Parquet file, without reading its rows."""
    require_file(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise parquet_error(path, exc) from None
    return csv_header(path)


def read_file(
    path: Path,
    wanted: list[str],
    strings: set[str],
    *,
    hash_file: bool = True,
    max_rows: int | None = None,
    memory_budget: int | None = None,
) -> Table:
    """Read the ``wanted`` columns (those that exist) of a CSV or Parquet file."""
    require_file(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        # the hash runs in a thread while the file is parsed (hashlib releases the GIL)
        hasher = _Hasher(path) if hash_file else None
        try:
            table = _read_parquet(path, wanted, max_rows, memory_budget)
        except BaseException:
            if hasher is not None:
                hasher.cancel()
            raise
        if hasher is not None:
            table.sha256 = hasher.result()
    else:  # the CSV's pre-read scan (csv_guard.scan_csv) hashes it on the way
        table = _read_csv(path, wanted, strings, hash_file, max_rows, memory_budget)
    return table


class _Hasher:
    """:func:`~fairpolicy.data.sources.csv_guard.file_sha256` in a background thread."""

    def __init__(self, path: Path) -> None:
        import threading

        self._path = path
        self._stop = threading.Event()
        self._digest: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="fairpolicy-sha256", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            h = hashlib.sha256()
            with self._path.open("rb") as fh:
                while not self._stop.is_set() and (block := fh.read(1 << 20)):
                    h.update(block)
            self._digest = h.hexdigest()
        except BaseException as exc:  # re-raised in the caller's thread
            self._error = exc

    def cancel(self) -> None:
        self._stop.set()
        self._thread.join()

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._digest is not None
        return self._digest


def _read_csv(
    path: Path,
    wanted: list[str],
    strings: set[str],
    hash_file: bool = True,
    max_rows: int | None = None,
    memory_budget: int | None = None,
) -> Table:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    raw = raw_header(path)
    header = [c.strip() for c in raw]
    refuse_duplicates({c for c in header if header.count(c) > 1}, wanted, str(path))
    present = [c for c in wanted if c in header]
    as_written = {c: raw[header.index(c)] for c in present}
    scan = scan_csv(path, hash_file=hash_file, count_lines=max_rows is not None)
    if max_rows is not None and scan.rows > max_rows and present:
        # the line count is an upper bound; count exactly, stopping once past the limit
        rows = count_csv_rows(path, as_written[present[0]], max_rows)
        limits.check_rows(rows, max_rows, str(path), exact=False)
    share = scan.size * len(present) // max(len(header), 1)  # the bound columns' text
    limits.check_memory(scan.rows, len(present), memory_budget, str(path), share)
    # group columns arrive dictionary-encoded: no per-row strings
    text = {as_written[c]: pa.dictionary(pa.int32(), pa.string()) for c in present if c in strings}
    narrow = _small_int_columns(path, [as_written[c] for c in present if c not in strings])

    def read(column_types: dict[str, pa.DataType]) -> pa.Table:
        return pacsv.read_csv(
            path,
            # quoted values may hold line breaks: the reader must track quotes across its
            # blocks (slower, so only when the file has a quote at all)
            parse_options=pacsv.ParseOptions(newlines_in_values=scan.quotes > 0),
            convert_options=pacsv.ConvertOptions(
                include_columns=[as_written[c] for c in present],
                column_types=column_types,
                # group columns: only an empty cell is missing ("NA", "null", "nan" are
                # group names); other text columns get their null tokens back below
                strings_can_be_null=False,
            ),
        )

    try:
        try:
            arrow = read({**text, **{c: pa.int8() for c in narrow}})
        except pa.ArrowInvalid:
            if not narrow:
                raise
            arrow = read(text)  # a value past the first block is not a small integer
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError) as exc:
        raise _parse_error(path, exc, raw) from None
    for c in present:  # pyarrow reads a column with invalid UTF-8 as bytes
        if pa.types.is_binary(arrow.column(as_written[c]).type):
            raise DataError(
                "the file is not valid UTF-8 (a value of this column is not).",
                file=str(path),
                column=c,
                hint="re-export the CSV as UTF-8.",
            )
    if scan.quotes % 2 and (line := unclosed_quote_line(path)) is not None:
        raise DataError(
            f"the quote opened on line {line} is never closed, so the reader would take "
            "the rest of the file as one value.",
            file=str(path),
            hint='close the quote (a quote inside a quoted value is written twice: "").',
        )
    if arrow.num_rows == 0:
        raise DataError(
            "the file has a header but no data rows.",
            file=str(path),
            hint="export at least one prediction row.",
        )
    return Table(
        columns={
            c: arrow.column(as_written[c])
            if c in strings
            else _text_nulls(arrow.column(as_written[c]))
            for c in present
        },
        available=header,
        rows=arrow.num_rows,
        path=str(path),
        sha256=scan.sha256,
    )


def _text_nulls(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """A text column other than a group column, with pyarrow's null tokens (``NA``,
    ``null``, ``nan``, an empty cell, ...) as null: what the reader gives with
    ``strings_can_be_null=True``. Type inference does not depend on that option, so
    label columns keep the semantics they always had; group columns are read with the
    option off (only an empty cell is missing there)."""
    import pyarrow as pa

    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return arr
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    tokens = pa.array(list(pacsv.ConvertOptions().null_values), arr.type)
    hit = pc.is_in(arr, value_set=tokens)
    if not pc.any(hit).as_py():
        return arr
    out: pa.ChunkedArray = pc.if_else(hit, pa.scalar(None, arr.type), arr)
    return out


def _small_int_columns(path: Path, columns: list[str]) -> list[str]:
    """Columns whose first block holds only integers in −128..127 (class labels, ranks).

    They are read as int8 instead of int64: the same values in an eighth of the memory.
    A later value that does not fit makes that read fail, and the file is read again
    with inferred types, so the values (and any type a later value implies) never change.
    """
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from fairpolicy.data.kernels import call

    if not columns:
        return []
    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(block_size=1 << 16, use_threads=False),
            convert_options=pacsv.ConvertOptions(include_columns=columns),
        )
        batch = reader.read_next_batch()
    except (pa.ArrowException, OSError, StopIteration):
        return []  # the real read reports the problem
    out = []
    for c in columns:
        col = batch.column(c)
        if pa.types.is_integer(col.type):
            bounds = call("min_max", col).as_py()
            if bounds["min"] is not None and bounds["min"] >= -128 and bounds["max"] <= 127:
                out.append(c)
    return out


def _parse_error(path: Path, exc: Exception, raw: list[str]) -> DataError:
    """A parse failure of pyarrow's reader, said in the user's terms."""
    import re

    msg = str(exc).splitlines()[0]
    file = str(path)
    if "straddling" in msg or "straddles" in msg:
        return DataError(
            "a record is longer than the CSV reader's block (1 MiB): an unclosed quote "
            "runs on, or the file is not a CSV of predictions.",
            file=file,
            hint="check that every quote is closed and export one prediction per record.",
        )
    utf8 = re.search(r"CSV column #(\d+).*invalid UTF8", msg)
    if utf8:
        i = int(utf8.group(1))
        column = raw[i].strip() if i < len(raw) else None
        return DataError(
            "the file is not valid UTF-8 (a value of this column is not).",
            file=file,
            column=column,
            hint="re-export the CSV as UTF-8.",
        )
    if "Expected" in msg and "columns" in msg:
        line = _first_ragged_line(path)
        where = f"line {line}: " if line else ""
        return DataError(
            f"the CSV has ragged rows: {where}{msg.removeprefix('CSV parse error: ')}",
            file=file,
            hint="every row needs one value per header column; check for an unquoted comma, "
            "an unclosed quote or a wrong delimiter (comma expected).",
        )
    return DataError(
        f"the CSV could not be parsed: {msg}",
        file=file,
        hint="check for ragged rows, an unclosed quote or a wrong delimiter (comma expected).",
    )


def _first_ragged_line(path: Path) -> int | None:
    """The physical line of the first row with the wrong number of fields (a single-
    threaded streaming re-read, only on the error path)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    found: list[int] = []

    def handler(row: Any) -> str:
        if row.number is not None:
            found.append(int(row.number))
        return "error"

    try:
        reader = pacsv.open_csv(
            path,
            read_options=pacsv.ReadOptions(use_threads=False),
            parse_options=pacsv.ParseOptions(invalid_row_handler=handler, newlines_in_values=True),
        )
        for _ in reader:
            pass
    except (pa.ArrowInvalid, OSError):
        pass
    return found[0] if found else None


def _read_parquet(
    path: Path, wanted: list[str], max_rows: int | None = None, memory_budget: int | None = None
) -> Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
        schema = pq.read_schema(path)
        present = [c for c in wanted if c in schema.names]
        limits.check_rows(meta.num_rows, max_rows, str(path))
        text = sum(
            rg.column(i).total_uncompressed_size
            for rg in (meta.row_group(j) for j in range(meta.num_row_groups))
            for i in range(rg.num_columns)
            if rg.column(i).path_in_schema in present
        )
        limits.check_memory(meta.num_rows, len(present), memory_budget, str(path), text)
        arrow = pq.read_table(path, columns=present)
    except (pa.ArrowInvalid, OSError) as exc:
        raise parquet_error(path, exc) from None
    if arrow.num_rows == 0:
        raise DataError("the file has no data rows.", file=str(path))
    return Table(
        columns={c: arrow.column(c) for c in present},
        available=list(schema.names),
        rows=arrow.num_rows,
        path=str(path),
    )
