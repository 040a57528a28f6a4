"""Read only the columns a policy binds, from CSV, Parquet or a DataFrame.

CSV goes through pyarrow's multi-threaded reader with column selection;
dimension columns are read as text (dictionary-encoded while parsing) so
``01`` and ``1`` stay distinct groups. Missing columns are not an error
here: the runner reports them per control, naming the close matches among
the columns the file has.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.engines import Source

#: a row predicate: one column's values (a pyarrow array) → a boolean mask of the rows
RowPredicate = Callable[[Any], NDArray[np.bool_]]


@dataclass
class Table:
    """The bound columns of a data set, as pyarrow arrays.

    Embedded reads hold one entry per data row (``weights`` is None). An engine
    (:mod:`fairpolicy.data.engines`) returns the distinct tuples of the bound
    columns instead, each with ``weights[i]`` rows; every count the pipeline
    makes weighs the tuples (:meth:`count`), and ``rows`` is the total weight.
    """

    columns: dict[str, pa.ChunkedArray]
    available: list[str]  # every column name the source has
    rows: int
    path: str | None = None
    sha256: str | None = None
    warnings: list[str] = field(default_factory=list)
    #: rows per entry (int64, ≥ 1); None: one row per entry (embedded reads)
    weights: NDArray[np.int64] | None = None
    #: the engine the tuples came from: locates data rows, runs further aggregations
    source: Source | None = None
    #: engines: for each multi-column score binding, whether the entry's unrounded
    #: scores fail to sum to 1 (±0.001), computed before the scores were rounded
    sum_flags: dict[tuple[str, ...], NDArray[np.bool_]] = field(default_factory=dict)
    #: the columns read from the source (default: ``columns``)
    read: list[str] | None = None

    def __post_init__(self) -> None:
        refuse_nested(self.columns, self.path)

    def count(self, mask: NDArray[np.bool_]) -> int:
        """Data rows among the entries selected by ``mask``."""
        if self.weights is None:
            return int(np.count_nonzero(mask))
        return int(self.weights[mask].sum())

    def first_rows(
        self,
        column: str,
        predicate: RowPredicate,
        limit: int = 5,
        mask: NDArray[np.bool_] | None = None,
    ) -> list[tuple[int, Any]]:
        """The first ``limit`` data rows (0-based, in source order) where ``predicate``
        holds for ``column``, with the value there.

        Embedded: from ``mask`` (the predicate's result, when the caller has it) or
        the predicate over the column. Engines scan the source in order.
        """
        if self.weights is None:
            arr = self.columns[column]
            hit = predicate(arr) if mask is None else mask
            idx = np.flatnonzero(hit)[:limit]
            values = arr.take(idx).to_pylist() if len(idx) else []
            return [(int(i), v) for i, v in zip(idx, values, strict=True)]
        if self.source is None:
            return []
        # a column aggregated away (regression sums) is numeric: read it as float64
        import pyarrow as pa

        arrow_type = self.columns[column].type if column in self.columns else pa.float64()
        return self.source.first_rows(column, arrow_type, predicate, limit)


def refuse_nested(columns: dict[str, Any], file: str | None) -> None:
    """DataError naming the first bound column of a nested type (list, struct, map,
    union): every role reads one scalar per row, and no engine can group or count by a
    list. Checked wherever a :class:`Table` is made, so for every engine and input type."""
    import pyarrow as pa

    for name, arr in columns.items():
        kind = arr.type.value_type if pa.types.is_dictionary(arr.type) else arr.type
        if pa.types.is_nested(kind):
            raise DataError(
                f"the column has the nested type {kind}; a bound column must hold one "
                "value per row (a number or a text), not a list or a record.",
                file=file or "<DataFrame>",
                column=name,
                hint="flatten it before the check (e.g. take the list's first element or "
                "a struct's field into a column of its own) and bind that column.",
            )


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


#: compressed CSV files read directly (pyarrow and DuckDB decompress by extension)
CSV_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd"}

#: the first bytes of file kinds that are not a CSV, and what to do about each
_MAGIC = (
    (b"\x1f\x8b", "gzip", "name it .csv.gz (read directly) or decompress it (gunzip)"),
    (b"BZh", "bz2", "name it .csv.bz2 (read directly) or decompress it (bunzip2)"),
    (b"\x28\xb5\x2f\xfd", "zstd", "name it .csv.zst (read directly) or decompress it (unzstd)"),
    (b"PK\x03\x04", "zip", "unzip it (an .xlsx workbook: export the sheet as CSV)"),
    (b"\xfd7zXZ\x00", "xz", "decompress it (unxz), or recompress it with gzip or zstd"),
    (b"\x04\x22\x4d\x18", "lz4", "decompress it (unlz4), or recompress it with gzip or zstd"),
    (b"PAR1", "Parquet", "name it .parquet"),
)


def csv_compression(path: Path) -> str | None:
    """The compression a CSV's name declares (``data.csv.gz`` → gzip), else None."""
    return CSV_COMPRESSION.get(path.suffix.lower())


def sniff(head: bytes) -> tuple[str, str] | None:
    """(what it is, fix) when the first bytes of a file say it is no plain CSV: a compressed
    file, a zip archive, a Parquet file, or UTF-16 text (with or without a byte-order
    mark); None for anything else (the CSV reader judges it)."""
    for magic, kind, fix in _MAGIC:
        if head.startswith(magic):
            return f"{'an' if kind[0] in 'aeiouxl' else 'a'} {kind} file", fix
    utf16 = "re-export it as UTF-8 (e.g. iconv -f UTF-16 -t UTF-8)"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "UTF-16 text (with a byte-order mark)", utf16
    sample = head[:4096]
    if len(sample) >= 4 and b"\x00" in sample:
        even, odd = sample[0::2], sample[1::2]
        # ASCII text in UTF-16: every other byte is NUL, and the others are not
        for zeros, chars, order in ((odd, even, "LE"), (even, odd, "BE")):
            if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.1 * len(chars):
                return (
                    f"UTF-16{order} text without a byte-order mark",
                    f"re-export it as UTF-8 (e.g. iconv -f UTF-16{order} -t UTF-8)",
                )
    return None


def open_csv_stream(path: Path) -> Any:
    """The CSV's bytes, decompressed when its name says so (a binary file object). A
    file whose first bytes contradict its name (a gzip file named .csv, a Parquet file,
    UTF-16 text, a .gz that is no gzip) is a DataError naming what it is."""
    from fairpolicy.files import open_regular

    raw = open_regular(path, DataError, "data")
    head = raw.read(8192)
    raw.seek(0)
    declared = csv_compression(path)
    found = sniff(head)
    if declared is not None:
        if found is None or not found[0].endswith(f" {declared} file"):
            raw.close()
            what = found[0] if found else "not compressed"
            raise DataError(
                f"the name says {declared}-compressed ({path.suffix}), but the file is {what}.",
                file=str(path),
                hint="give the file the name its content has (data.csv for plain text).",
            )
        if declared in ("gzip", "bz2"):  # the standard library's, on the open file
            import bz2
            import gzip

            raw.close()  # checked to be a regular file: opened again by the decompressor
            return gzip.open(path) if declared == "gzip" else bz2.open(path)
        import pyarrow as pa

        raw.close()
        return pa.input_stream(str(path), compression=declared)
    if found is not None:
        raw.close()
        what, fix = found
        raise DataError(
            f"this is {what}, not "
            + ("valid UTF-8 text." if what.startswith("UTF-16") else "a plain-text CSV."),
            file=str(path),
            hint=f"{fix}.",
        )
    return raw


def _csv_header(path: Path) -> list[str]:
    """The header's column names, trimmed (the policy's names are trimmed too)."""
    return [c.strip() for c in _raw_header(path)]


def _raw_header(path: Path) -> list[str]:
    """The first record of the file as written; reads at most one reader block."""
    from fairpolicy.data.limits import MAX_LINE_BYTES

    with open_csv_stream(path) as fh:
        head = fh.read(MAX_LINE_BYTES)
    if not head.strip():
        raise DataError(
            "the file is empty.",
            file=str(path),
            hint="export the predictions with a header row and at least one data row.",
        )
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        # not merely a multi-byte character cut at the end of a full block
        if len(head) < MAX_LINE_BYTES or exc.start < len(head) - 4:
            line = head[: exc.start].count(b"\n") + 1
            raise DataError(
                f"the file is not valid UTF-8 (line {line}, byte {exc.start}).",
                file=str(path),
                hint="re-export the CSV as UTF-8.",
            ) from None
        text = head[: exc.start].decode("utf-8-sig")
    try:
        first = next(csv.reader(io.StringIO(text, newline="")), [])
    except csv.Error as exc:
        raise DataError(
            f"the header cannot be read as CSV: {exc}.",
            file=str(path),
            hint="the first line must name the columns, separated by commas.",
        ) from None
    return first


def peek_columns(source: Any) -> list[str]:
    """The column names of a data source, without reading its rows."""
    if _is_dataframe(source):
        return [str(c) for c in source.columns]
    if is_arrow_like(source):
        return [str(c) for c in _as_arrow(source).column_names]
    path = Path(os.fspath(source))
    _require_file(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            return list(pq.read_schema(path).names)
        except (pa.ArrowInvalid, OSError) as exc:
            raise _parquet_error(path, exc) from None
    return _csv_header(path)


def _parquet_error(path: Path, exc: Exception) -> DataError:
    """A Parquet file that cannot be read, saying what it is when its first bytes tell
    (a CSV named .parquet, a gzip file…)."""
    head = b""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        pass
    found = sniff(head) if head else None
    hint = None
    if found is not None and not found[0].endswith("Parquet file"):
        hint = f"this is {found[0]}, not Parquet."
    elif head and not head.startswith(b"PAR1") and b"," in head and b"\n" in head:
        hint = "it looks like a CSV (comma-separated text): name it .csv."
    return DataError(
        f"the Parquet file could not be read: {str(exc).splitlines()[0]}",
        file=str(path),
        hint=hint,
    )


def _require_file(path: Path) -> None:
    if path.is_dir():
        raise DataError(
            "this is a directory, not a data file.",
            file=str(path),
            hint="name a CSV or Parquet file.",
        )
    if not path.exists():
        raise DataError("the data file does not exist.", file=str(path), hint="check the path.")
    from fairpolicy.files import require_regular

    require_regular(path, DataError, "data")  # a FIFO or a device would block the reader


def read_table(
    source: Any,
    columns: Iterable[str],
    *,
    string_columns: Iterable[str] = (),
    hash_file: bool = True,
    max_rows: int | None = None,
    memory_budget: int | None = None,
) -> Table:
    """Read ``columns`` (those that exist) from a path or a pandas DataFrame.

    ``max_rows`` and ``memory_budget`` (bytes; None: 80 % of the available memory) are
    checked before the rows are parsed (:mod:`fairpolicy.data.limits`).
    """
    wanted = list(dict.fromkeys(columns))
    strings = set(string_columns)
    if _is_dataframe(source) or is_arrow_like(source):
        from fairpolicy.data.limits import check_rows

        name = in_memory_name(source)
        if is_arrow_like(source):
            arrow = _as_arrow(source)
            check_rows(arrow.num_rows, max_rows, name)
            return _from_arrow(arrow, wanted, strings, name)
        check_rows(len(source), max_rows, name)
        return _from_dataframe(source, wanted, strings)
    path = Path(os.fspath(source))
    _require_file(path)
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
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
    else:  # the CSV's pre-read scan (data/limits.py) hashes it on the way
        table = _read_csv(path, wanted, strings, hash_file, max_rows, memory_budget)
    return table


class _Hasher:
    """:func:`file_sha256` in a background thread."""

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


def refuse_duplicates(duplicated: Iterable[str], bound: Iterable[str], file: str | None) -> None:
    """Exit 2 when a bound column name stands more than once in the header."""
    dupes = sorted(set(duplicated) & set(bound))
    if dupes:
        raise DataError(
            f"the header names column(s) {dupes} more than once, so a binding is ambiguous.",
            file=file,
            column=dupes[0],
            hint="give every column a unique name.",
        )


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

    from fairpolicy.data import limits

    raw = _raw_header(path)
    header = [c.strip() for c in raw]
    refuse_duplicates({c for c in header if header.count(c) > 1}, wanted, str(path))
    present = [c for c in wanted if c in header]
    as_written = {c: raw[header.index(c)] for c in present}
    scan = limits.scan_csv(path, hash_file=hash_file, count_lines=max_rows is not None)
    if max_rows is not None and scan.rows > max_rows and present:
        # the line count is an upper bound; count exactly, stopping once past the limit
        rows = limits.count_csv_rows(path, as_written[present[0]], max_rows)
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
                strings_can_be_null=True,
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
    if scan.quotes % 2 and (line := limits.unclosed_quote_line(path)) is not None:
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
        columns={c: arrow.column(as_written[c]) for c in present},
        available=header,
        rows=arrow.num_rows,
        path=str(path),
        sha256=scan.sha256,
    )


def _small_int_columns(path: Path, columns: list[str]) -> list[str]:
    """Columns whose first block holds only integers in −128..127 (class labels, ranks).

    They are read as int8 instead of int64: the same values in an eighth of the memory.
    A later value that does not fit makes that read fail, and the file is read again
    with inferred types, so the values (and any type a later value implies) never change.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

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
            bounds = pc.min_max(col).as_py()
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

    from fairpolicy.data import limits

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
        raise _parquet_error(path, exc) from None
    if arrow.num_rows == 0:
        raise DataError("the file has no data rows.", file=str(path))
    return Table(
        columns={c: arrow.column(c) for c in present},
        available=list(schema.names),
        rows=arrow.num_rows,
        path=str(path),
    )


def _is_dataframe(obj: Any) -> bool:
    """A pandas DataFrame (a polars one is read through Arrow: :func:`is_arrow_like`)."""
    return (
        type(obj).__name__ == "DataFrame"
        and hasattr(obj, "columns")
        and not is_arrow_like(obj)
        and not type(obj).__module__.startswith("pyspark.")
    )


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
    if _is_dataframe(obj):
        return "<DataFrame>"
    top = type(obj).__module__.split(".")[0]
    return f"<{top} {type(obj).__name__}>"


def _as_arrow(obj: Any) -> pa.Table:
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


#: what ``check(policy, data)`` accepts as data, as messages list it
DATA_KINDS = (
    "a path (str or os.PathLike) to a CSV or Parquet file, a glob of such files, a pandas "
    "or polars DataFrame, a pyarrow Table, or a pyspark DataFrame"
)


def require_data_kind(data: Any) -> None:
    """UsageError naming the accepted kinds when ``data`` is none of them (None, a dict,
    a list, a NumPy array…), before anything is read."""
    from fairpolicy.errors import UsageError

    if isinstance(data, str | os.PathLike) or _is_dataframe(data) or is_arrow_like(data):
        return
    if type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pyspark."):
        return
    raise UsageError(
        f"data must be {DATA_KINDS}; got {type(data).__name__}"
        + (" (None)." if data is None else ".")
        + " Fix: pass the predictions file's path, or load it into one of those first "
        "(e.g. pandas.read_csv(path))."
    )


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
        if c in strings and not pa.types.is_string(arr.type):
            arr = arr.cast(pa.string())
        cols[c] = arr
    if len(df) == 0:
        raise DataError("the DataFrame has no rows.", file="<DataFrame>")
    return Table(columns=cols, available=available, rows=len(df), path=None)
