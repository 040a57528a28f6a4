"""The DuckDB engine: the sufficient-statistics ``GROUP BY`` inside an in-process DuckDB.

DuckDB reads the CSV/Parquet file(s) (globs allowed), spills to a temporary directory
when the aggregation outgrows ``memory_limit`` (the memory budget), and returns only
the distinct tuples of the bound columns with their row counts. CSV columns are read
as raw text (the header names come from the file, every field typed VARCHAR) and
converted back in Python with the embedded reader's semantics
(:func:`~fairpolicy.data.sources.aggregate.convert_text`).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fairpolicy.data.bind.scores import SUM_TOLERANCE
from fairpolicy.data.sources.aggregate import (
    FLOAT_RE,
    NUMBER_RE,
    ParquetSchemas,
    build_table,
    convert_text,
    null_tokens,
    regression_aggregate,
)
from fairpolicy.data.sources.base import (
    WEIGHT,
    RegressionAggregate,
    Request,
    RowPredicate,
    Table,
    refuse_duplicates,
)
from fairpolicy.data.sources.csv_guard import (
    csv_compression,
    csv_header,
    file_sha256,
    open_csv_stream,
    parquet_error,
    scan_csv,
)
from fairpolicy.data.sources.paths import expand_paths, is_parquet
from fairpolicy.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa


#: DuckDB types whose values are rounded to the score grid (others pass through as read)
_FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL")
_NUMERIC_TYPES = (
    *_FLOAT_TYPES,
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "BOOLEAN",
)
#: DuckDB connections this process has opened (a CLI run that opened one skips
#: ``gc.freeze``: DuckDB's nanobind bindings report every object alive at shutdown as leaked)
CONNECTIONS = 0

#: rows fetched per batch when scanning the source in order
_BATCH = 1 << 20


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBSource:
    """One DuckDB connection over the file(s) of one ``check`` run."""

    name = "duckdb"

    def __init__(self, data: Any, memory_budget: int) -> None:
        self.path = os.fspath(data)
        files = expand_paths(data)
        self.files = files
        self.parquet = is_parquet(files[0])
        self._schemas = ParquetSchemas(files if self.parquet else [], self.path)
        if any(is_parquet(f) != self.parquet for f in files):
            raise DataError(
                "the pattern matches both CSV and Parquet files.",
                file=self.path,
                hint="match files of one format.",
            )
        header: list[str] = []
        if not self.parquet:
            header = csv_header(files[0])
            for f in files[1:]:
                if csv_header(f) != header:
                    raise DataError(
                        f"the header differs from that of {files[0]}.",
                        file=str(f),
                        hint="every file a pattern matches needs the same columns in the "
                        "same order.",
                    )
        # one streaming pass per CSV: the hash, and an over-long line (a 2 GB line, a
        # runaway quote) refused after one block instead of after DuckDB reads it all
        self._digests = {f: scan_csv(f).sha256 for f in files} if not self.parquet else {}
        self._tmp = tempfile.mkdtemp(prefix="fairpolicy-duckdb-")
        try:
            self._connect(files, header, memory_budget)
        except BaseException:
            self.close()
            raise

    def _connect(self, files: list[Path], header: list[str], memory_budget: int) -> None:
        import duckdb

        global CONNECTIONS
        CONNECTIONS += 1
        self.con = duckdb.connect(
            config={
                "memory_limit": f"{max(memory_budget >> 20, 64)}MiB",
                "temp_directory": self._tmp,
                "threads": max(os.cpu_count() or 1, 1),
                # no network: never download or load extensions behind the user's back
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            }
        )
        file_list = "[" + ", ".join(quote_str(str(self._readable(f))) for f in files) + "]"
        self.types: dict[str, str] = {}
        if self.parquet:
            self.from_sql = f"read_parquet({file_list})"
            try:
                described = self.con.execute(f"DESCRIBE SELECT * FROM {self.from_sql}").fetchall()
            except duckdb.Error as exc:
                error = parquet_error(files[0], exc)  # says what the file is, if it can
                error.problems[0] = dataclasses.replace(
                    error.problems[0],
                    message=f"the Parquet file could not be read: {_first_line(exc)}",
                    file=self.path,
                )
                raise DataError(error.problems) from None
            self.available = [str(r[0]) for r in described]
            self.types = {str(r[0]): str(r[1]) for r in described}
            self.refs = {c: quote_ident(c) for c in self.available}
        else:
            self.available = header
            # positional names: any header text is safe, duplicates included
            cols = ", ".join(f"{quote_str(f'c{i}')}: 'VARCHAR'" for i in range(len(header)))
            self.from_sql = (
                f"read_csv({file_list}, header=true, delim=',', quote='\"', escape='\"', "
                f"auto_detect=false, strict_mode=true, null_padding=false, columns={{{cols}}})"
            )
            self.refs = {}
            for i, c in enumerate(header):
                self.refs.setdefault(c, f'"c{i}"')
            self._check_duplicates(header)

        def digest(f: Path) -> str:
            return self._digests.get(f) or file_sha256(f)

        if len(files) == 1:
            self.sha256: str | None = digest(files[0])
        else:
            import hashlib

            manifest = "".join(f"{digest(f)}  {f}\n" for f in files)
            self.sha256 = hashlib.sha256(manifest.encode()).hexdigest()
        self.text = not self.parquet

    def _readable(self, path: Path) -> Path:
        """A file DuckDB can read: a ``.csv.bz2`` (DuckDB reads gzip and zstd itself, not
        bz2) is decompressed into the run's temporary directory, beside DuckDB's spill
        files; the results hash the file as given."""
        if csv_compression(path) != "bz2":
            return path
        plain = Path(self._tmp) / f"{len(os.listdir(self._tmp))}-{path.stem}"
        with open_csv_stream(path) as src, plain.open("wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        return plain

    def _check_duplicates(self, header: list[str]) -> None:
        self.duplicates = {c for c in header if header.count(c) > 1}

    # -- helpers

    def _run(self, sql: str) -> pa.Table:
        import duckdb

        try:
            rel = self.con.sql(sql)
            fetch = getattr(rel, "to_arrow_table", None) or rel.arrow  # duckdb 2.x / 1.x
            table: pa.Table = fetch()
            return table
        except (
            duckdb.IOException,
            duckdb.InvalidInputException,
            duckdb.ConversionException,
            duckdb.NotImplementedException,  # "the parallel CSV reader cannot read this file"
        ) as exc:
            kind = "Parquet file" if self.parquet else "CSV"
            raise DataError(
                f"the {kind} could not be read: {_first_line(exc)}",
                file=self.path,
                hint=None
                if self.parquet
                else "check for ragged rows, an unclosed quote or a wrong delimiter (comma "
                "expected).",
            ) from None

    def _duplicate_check(self, columns: list[str]) -> None:
        refuse_duplicates(getattr(self, "duplicates", set()), columns, self.path)
        if self.parquet:
            self._schemas.check(columns)

    def _is_float(self, column: str) -> bool:
        return self.types.get(column, "").upper() in _FLOAT_TYPES

    def _is_numeric(self, column: str) -> bool:
        t = self.types.get(column, "").upper()
        return t in _NUMERIC_TYPES

    def _score_value(self, column: str) -> str:
        """SQL for a score column's unrounded value as DOUBLE (NULL when not a number)."""
        ref = self.refs[column]
        if self.text:
            return f"TRY_CAST({ref} AS DOUBLE)"
        return f"TRY_CAST({ref} AS DOUBLE)" if self._is_numeric(column) else "NULL::DOUBLE"

    # -- Source

    def tuples(self, request: Request) -> Table:
        cols = list(request.columns)
        self._duplicate_check(cols)
        select: list[str] = []
        names: dict[str, str] = {}
        d = int(request.decimals)
        for i, c in enumerate(cols):
            ref = self.refs[c]
            names[c] = f"v{i}"
            if c in request.scores and self.text:
                ok = (
                    f"(regexp_full_match({ref}, {quote_str(FLOAT_RE)}) "
                    f"AND TRY_CAST({ref} AS DOUBLE) BETWEEN 0 AND 1)"
                )
                select.append(
                    f"CASE WHEN {ok} THEN round(TRY_CAST({ref} AS DOUBLE), {d}) END AS r{i}"
                )
                select.append(f"CASE WHEN {ok} THEN NULL ELSE {ref} END AS v{i}")
            elif c in request.scores and self._is_float(c):
                x = f"CAST({ref} AS DOUBLE)"
                select.append(
                    f"CASE WHEN {x} BETWEEN 0 AND 1 THEN round({x}, {d}) ELSE {x} END AS v{i}"
                )
            else:
                select.append(f"{ref} AS v{i}")
        for j, score_set in enumerate(request.score_sets):
            total = " + ".join(self._score_value(c) for c in score_set)
            select.append(f"abs({total} - 1) > {SUM_TOLERANCE!r} AS __sum{j}")
        window = request.window if request.window and request.window.period else None
        if window is not None:
            from fairpolicy.data.window import KEY, duckdb_day_key, duckdb_key

            self._duplicate_check([window.column])
            ref, kind = self.refs[window.column], self.types.get(window.column, "")
            day = None if self.text else duckdb_day_key(kind, window, ref)
            select.append(f"{day or duckdb_key(ref, kind, window, self.text)} AS {KEY}")
        fields = ", ".join([*select, f"count(*) AS {WEIGHT}"])
        sql = f"SELECT {fields} FROM {self.from_sql}" + (" GROUP BY ALL" if select else "")
        if window is not None and day is not None:  # grouped on day numbers: label the groups
            from fairpolicy.data.window import duckdb_day_label

            sql = f"SELECT * REPLACE ({duckdb_day_label(KEY)} AS {KEY}) FROM ({sql})"
        self.con.execute("SET preserve_insertion_order = false")
        result = self._run(sql)
        # the result's "#r" names for rounded text scores
        renamed = [
            (f"v{n[1:]}#r" if n.startswith("r") and n[1:].isdigit() else n)
            for n in result.column_names
        ]
        result = result.rename_columns(renamed)
        if result.num_rows == 0:
            raise DataError(
                "the file has a header but no data rows."
                if self.text
                else "the file has no data rows.",
                file=self.path,
                hint="export at least one prediction row." if self.text else None,
            )
        table = build_table(result, request, names, text=self.text, source=self)
        table.read = cols
        if window is not None:
            import pyarrow as pa

            table.columns[KEY] = pa.chunked_array([result.column(KEY).combine_chunks()])
            table.read = [*cols, window.column]
        return table

    def regression(self, dims: list[str], y: str, yhat: str) -> RegressionAggregate | None:
        import pyarrow.compute as pc

        self._duplicate_check([*dims, y, yhat])
        if not self.text and not (self._is_numeric(y) and self._is_numeric(yhat)):
            return None  # the tuples reproduce the embedded error on the column type
        value, missing, odd = {}, {}, []
        for role, c in (("y", y), ("p", yhat)):
            ref = self.refs[c]
            if self.text:
                tokens = ", ".join(quote_str(t) for t in null_tokens())
                miss = f"({ref} IS NULL OR {ref} IN ({tokens}))"
                number = f"regexp_full_match({ref}, {quote_str(NUMBER_RE)})"
                value[role] = f"CASE WHEN {number} THEN TRY_CAST({ref} AS DOUBLE) END"
                missing[role] = miss
                odd.append(f"(NOT {miss} AND NOT {number})")
            else:
                x = f"CAST({ref} AS DOUBLE)"
                value[role] = x
                missing[role] = f"({x} IS NULL OR isnan({x}))"
                odd.append(f"isinf({x})")
        select = [f"{self.refs[c]} AS v{i}" for i, c in enumerate(dims)]
        inner = ", ".join(
            [
                *select,
                f"{value['y']} AS y",
                f"{value['p']} AS p",
                f"{missing['y']} AS my",
                f"{missing['p']} AS mp",
                f"({' OR '.join(odd)}) AS odd",
            ]
        )
        dim_names = [f"v{i}" for i in range(len(dims))]
        r = "(y - p)"
        sums = [
            "fsum(y)",
            "fsum(p)",
            f"fsum({r})",
            f"fsum(abs({r}))",
            f"fsum({r} * {r})",
            "fsum(y * y)",
            "fsum(p * p)",
        ]
        sql = (
            f"SELECT {', '.join([*dim_names, 'my', 'mp'])}, count(*) AS {WEIGHT}, "
            f"bool_or(odd OR isinf(y) OR isinf(p)) AS odd, "
            + ", ".join(f"{s} AS s{k}" for k, s in enumerate(sums))
            + f" FROM (SELECT {inner} FROM {self.from_sql}) GROUP BY ALL"
        )
        self.con.execute("SET preserve_insertion_order = false")
        result = self._run(sql)
        odd_any = bool(pc.any(pc.fill_null(result.column("odd"), False)).as_py())
        return regression_aggregate(result, dims, y, yhat, odd_any, text=self.text, source=self)

    def first_rows(
        self, column: str, arrow_type: pa.DataType | None, predicate: RowPredicate, limit: int
    ) -> list[tuple[int, Any]]:
        import pyarrow as pa

        self.con.execute("SET preserve_insertion_order = true")
        rel = self.con.sql(f"SELECT {self.refs[column]} AS v FROM {self.from_sql}")
        to_reader = getattr(rel, "to_arrow_reader", None) or rel.fetch_arrow_reader
        reader = to_reader(_BATCH)
        found: list[tuple[int, Any]] = []
        offset = 0
        for batch in reader:
            arr = batch.column(0)
            if self.text:
                arr = convert_text(
                    arr,
                    as_string=arrow_type is not None and pa.types.is_string(arrow_type),
                    arrow_type=arrow_type,
                )
            hit = np.flatnonzero(predicate(pa.chunked_array([arr])))[: limit - len(found)]
            if len(hit):
                values = arr.take(pa.array(hit)).to_pylist()
                found += [(offset + int(i), v) for i, v in zip(hit, values, strict=True)]
                if len(found) >= limit:
                    break
            offset += len(arr)
        return found

    def close(self) -> None:
        try:
            con = getattr(self, "con", None)
            if con is not None:
                con.close()
        finally:
            shutil.rmtree(self._tmp, ignore_errors=True)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
