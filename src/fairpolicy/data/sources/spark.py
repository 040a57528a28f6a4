"""The Spark engine: the sufficient-statistics aggregation as Spark DataFrame operations.

``fairpolicy.check(policy, spark_dataframe)`` evaluates a DataFrame (a table in a
cluster) where it lives: one ``select(...).groupBy(...).count()`` and only the
distinct tuples of the bound columns with their row counts reach the driver, as
Arrow. ``--engine spark`` on file paths reads them in a Spark session (the active
one, else a quiet ``local[*]`` session without UI, bound to 127.0.0.1). CSV files are
read as raw text and converted with the embedded reader's semantics, exactly as on
the DuckDB engine (:mod:`fairpolicy.data.sources.aggregate`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings
from collections.abc import Iterator
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
from fairpolicy.data.sources.csv_guard import csv_header, file_sha256
from fairpolicy.data.sources.frames import is_spark_dataframe
from fairpolicy.data.sources.paths import expand_paths, is_parquet
from fairpolicy.errors import DataError

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.window import WindowSpec


#: shuffle partitions of the local session (Spark's default of 200 is slow for one host)
LOCAL_SHUFFLE_PARTITIONS = 8

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
"""


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """pyspark's own FutureWarnings (e.g. about the pandas version) are not the user's."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark\b.*")
        warnings.filterwarnings("ignore", message=r".*PySpark.*", category=FutureWarning)
        yield


def spark_session() -> Any:
    """The active Spark session, or a new quiet local one (no UI, no network beyond
    127.0.0.1, log level ERROR)."""
    from pyspark.sql import SparkSession

    with _quiet():
        active = SparkSession.getActiveSession()
        if active is not None:
            return active
        import atexit
        import tempfile

        fd, name = tempfile.mkstemp(prefix="fairpolicy-log4j2-", suffix=".properties")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(_LOG4J)
        log4j = Path(name)
        atexit.register(log4j.unlink, missing_ok=True)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # the local session's Python workers run this interpreter (Spark's default is
        # `python3` from PATH: outside an activated venv, one without pyarrow or fairpolicy)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        cores = os.cpu_count() or 1
        spark = (
            SparkSession.builder.master(f"local[{cores}]")
            .appName("fairpolicy")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", "127.0.0.1")
            .config("spark.driver.bindAddress", "127.0.0.1")
            .config("spark.sql.shuffle.partitions", str(max(LOCAL_SHUFFLE_PARTITIONS, cores)))
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        return spark


def _remote(path: str) -> bool:
    return "://" in path or path.startswith("dbfs:")


def _ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SparkSource:
    """A Spark DataFrame, or CSV/Parquet paths read by Spark."""

    name = "spark"

    def __init__(self, data: Any) -> None:
        self.sha256: str | None = None
        self.text = False
        self.frame = is_spark_dataframe(data)
        self.duplicates: set[str] = set()
        self._schemas = ParquetSchemas([], None)
        if self.frame:
            self.df = data
            self.path: str | None = None
            self.available = [str(c) for c in data.columns]
            self.refs = {c: c for c in self.available}
            return
        self.path = os.fspath(data)
        spark = spark_session()
        if _remote(self.path):
            files: list[str] = [self.path]
            parquet = is_parquet(Path(self.path.rstrip("/")))
        else:
            local = expand_paths(data)
            files = [str(f) for f in local]
            parquet = is_parquet(local[0])
            self.sha256 = _digest(local)
            if parquet:
                self._schemas = ParquetSchemas(local, self.path)
        try:
            with _quiet():
                if parquet:
                    df = spark.read.parquet(*files)
                    self.available = [str(c) for c in df.columns]
                    self.refs = {c: c for c in self.available}
                else:
                    df, header = self._read_csv(spark, files)
                    self.available = header
                    self.refs = {}
                    for i, c in enumerate(header):
                        self.refs.setdefault(c, f"c{i}")
                    self.duplicates = {c for c in header if header.count(c) > 1}
                    self.text = True
        except Exception as exc:
            if isinstance(exc, DataError):
                raise
            raise DataError(
                f"Spark could not read the data: {_first_line(exc)}", file=self.path
            ) from None
        self.df = df

    def _read_csv(self, spark: Any, files: list[str]) -> tuple[Any, list[str]]:
        from pyspark.sql.types import StringType, StructField, StructType

        if _remote(files[0]):
            header = [str(c) for c in spark.read.option("header", True).csv(files[0]).columns]
        else:
            header = csv_header(Path(files[0]))
            for f in files[1:]:
                if csv_header(Path(f)) != header:
                    raise DataError(
                        f"the header differs from that of {files[0]}.",
                        file=f,
                        hint="every file a pattern matches needs the same columns in the "
                        "same order.",
                    )
        schema = StructType([StructField(f"c{i}", StringType()) for i in range(len(header))])
        df = spark.read.csv(
            files,
            schema=schema,
            header=True,
            sep=",",
            quote='"',
            escape='"',
            mode="FAILFAST",
            multiLine=False,
            ignoreLeadingWhiteSpace=False,
            ignoreTrailingWhiteSpace=False,
            encoding="UTF-8",
            enforceSchema=True,
        )
        return df, header

    # -- helpers

    def _col(self, column: str) -> Any:
        from pyspark.sql import functions as F

        return F.col(_ident(self.refs[column]))

    def _type(self, column: str) -> Any:
        return self.df.schema[self.refs[column]].dataType

    def _is_float(self, column: str) -> bool:
        from pyspark.sql.types import DoubleType, FloatType

        return not self.text and isinstance(self._type(column), FloatType | DoubleType)

    def _is_numeric(self, column: str) -> bool:
        from pyspark.sql.types import BooleanType, DecimalType, NumericType

        t = self._type(column)
        return isinstance(t, NumericType | BooleanType) and not isinstance(t, DecimalType)

    @staticmethod
    def _double(col: Any) -> Any:
        try_cast = getattr(col, "try_cast", None)  # pyspark >= 4.0 (ANSI mode is on there)
        return try_cast("double") if try_cast is not None else col.cast("double")

    def _score_value(self, column: str) -> Any:
        from pyspark.sql import functions as F

        if self.text or self._is_numeric(column):
            return self._double(self._col(column))
        return F.lit(None).cast("double")

    def _duplicate_check(self, columns: list[str]) -> None:
        refuse_duplicates(self.duplicates, columns, self.path)
        self._schemas.check(columns)

    def _collect(self, sdf: Any) -> pa.Table:
        import pyarrow as pa

        try:
            with _quiet():
                if hasattr(sdf, "toArrow"):
                    table: pa.Table = sdf.toArrow()
                else:  # pyspark 3.x
                    table = pa.Table.from_batches(sdf._collect_as_arrow())
        except Exception as exc:
            raise DataError(
                f"Spark could not aggregate the data: {_first_line(exc)}",
                file=self.path or "<DataFrame>",
                hint="check for ragged rows, an unclosed quote or a wrong delimiter (comma "
                "expected)."
                if self.text
                else None,
            ) from None
        return table

    # -- Source

    def tuples(self, request: Request) -> Table:
        window = request.window if request.window and request.window.period else None
        if window is None:
            return self._tuples(request, None)
        # the session time zone parses zone-less text and renders dates: UTC for the
        # aggregation (zone-less timestamps are UTC instants, fairpolicy.data.window), the
        # user's own restored after it, whatever it was (a test sets Pacific/Auckland)
        conf = self.df.sparkSession.conf
        before = conf.get("spark.sql.session.timeZone")
        conf.set("spark.sql.session.timeZone", "UTC")
        try:
            return self._tuples(request, window)
        finally:
            conf.set("spark.sql.session.timeZone", before)

    def _window_key(self, window: WindowSpec) -> Any:
        """Each row's window label (``YYYY-MM-DD``, the period's first day in the window's
        zone), computed under a UTC session; ``'!' || value`` for a value that is no
        timestamp (refused by the caller), null for an empty one."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import DateType, StringType, TimestampNTZType, TimestampType

        from fairpolicy.data.window import PERIODS

        assert window.period is not None
        unit = PERIODS[window.period][1]
        col = self._col(window.column)
        kind = StringType() if self.text else self._type(window.column)

        def of_date(d: Any) -> Any:
            return F.date_format(d if unit == "day" else F.trunc(d, unit), "yyyy-MM-dd")

        def of_instant(ts: Any) -> Any:
            local = F.from_utc_timestamp(ts, window.tz)
            return F.date_format(F.date_trunc(unit, local), "yyyy-MM-dd")

        if isinstance(kind, StringType):
            text = F.trim(col)
            parsed = F.try_to_timestamp(text)
            key = F.when(
                text.rlike(r"^\d{4}-\d{2}-\d{2}$"), of_date(parsed.cast("date"))
            ).otherwise(of_instant(parsed))
            empty = col.isNull() | (text == F.lit(""))
            return F.when(empty, F.lit(None)).otherwise(F.coalesce(key, F.concat(F.lit("!"), col)))
        if isinstance(kind, TimestampType):
            return of_instant(col)
        if isinstance(kind, TimestampNTZType):
            return of_instant(col.cast("timestamp"))
        if isinstance(kind, DateType):
            return of_date(col)
        return F.when(col.isNull(), F.lit(None)).otherwise(F.concat(F.lit("!"), col.cast("string")))

    def _tuples(self, request: Request, window: WindowSpec | None) -> Table:
        from pyspark.sql import functions as F

        cols = list(request.columns)
        self._duplicate_check(cols)
        exprs: list[Any] = []
        names: dict[str, str] = {}
        d = int(request.decimals)
        for i, c in enumerate(cols):
            col = self._col(c)
            names[c] = f"v{i}"
            if c in request.scores and self.text:
                x = self._double(col)
                ok = col.rlike(f"^{FLOAT_RE}$") & x.between(0, 1)
                exprs.append(F.when(ok, F.round(x, d)).alias(f"r{i}"))
                exprs.append(F.when(ok, F.lit(None)).otherwise(col).alias(f"v{i}"))
            elif c in request.scores and self._is_float(c):
                x = col.cast("double")
                exprs.append(F.when(x.between(0, 1), F.round(x, d)).otherwise(x).alias(f"v{i}"))
            else:
                exprs.append(col.alias(f"v{i}"))
        for j, score_set in enumerate(request.score_sets):
            total = self._score_value(score_set[0])
            for c in score_set[1:]:
                total = total + self._score_value(c)
            exprs.append((F.abs(total - 1.0) > SUM_TOLERANCE).alias(f"__sum{j}"))
        if window is not None:
            from fairpolicy.data.window import KEY

            self._duplicate_check([window.column])
            exprs.append(self._window_key(window).alias(KEY))
        with _quiet():
            if exprs:
                selected = self.df.select(*exprs)
                grouped = selected.groupBy(*selected.columns).agg(F.count(F.lit(1)).alias(WEIGHT))
            else:
                grouped = self.df.agg(F.count(F.lit(1)).alias(WEIGHT))
        result = self._collect(grouped)
        result = result.rename_columns(
            [
                f"v{n[1:]}#r" if n.startswith("r") and n[1:].isdigit() else n
                for n in result.column_names
            ]
        )
        if result.num_rows == 0 or int(np.asarray(result.column(WEIGHT)).sum()) == 0:
            if self.frame:
                raise DataError("the DataFrame has no rows.", file="<DataFrame>")
            raise DataError(
                "the file has a header but no data rows."
                if self.text
                else "the file has no data rows.",
                file=self.path,
                hint="export at least one prediction row." if self.text else None,
            )
        table = build_table(
            result, request, names, text=self.text, source=self, dataframe=self.frame
        )
        table.read = cols
        if window is not None:
            import pyarrow as pa

            table.columns[KEY] = pa.chunked_array([result.column(KEY).combine_chunks()])
            table.read = [*cols, window.column]
        return table

    def regression(self, dims: list[str], y: str, yhat: str) -> RegressionAggregate | None:
        import pyarrow.compute as pc
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        self._duplicate_check([*dims, y, yhat])
        if not self.text and not (self._is_numeric(y) and self._is_numeric(yhat)):
            return None
        value: dict[str, Any] = {}
        missing: dict[str, Any] = {}
        odd: Any = F.lit(False)
        for role, c in (("y", y), ("p", yhat)):
            col = self._col(c)
            if self.text:
                miss = col.isNull() | col.isin(null_tokens())
                number = col.rlike(f"^{NUMBER_RE}$")
                value[role] = F.when(number, self._double(col))
                missing[role] = miss
                odd = odd | (~miss & ~number)
            else:
                x = col.cast("double")
                value[role] = x
                missing[role] = x.isNull() | F.isnan(x)
        dim_cols = [self._col(c).alias(f"v{i}") for i, c in enumerate(dims)]
        inf = float("inf")
        with _quiet():
            rows = self.df.select(
                *dim_cols,
                value["y"].alias("y"),
                value["p"].alias("p"),
                missing["y"].alias("my"),
                missing["p"].alias("mp"),
                odd.alias("odd"),
            )
            yv, pv = F.col("y"), F.col("p")
            r = yv - pv
            keys = [*[f"v{i}" for i in range(len(dims))], "my", "mp"]
            terms = [yv, pv, r, F.abs(r), r * r, yv * yv, pv * pv]
            # Σt per tuple, shifted like fairpolicy.stats.group_sums: with m the tuple's
            # naive mean of t (a window average), Σt = count·m + Σ(t − m), so values near
            # 1e9 keep the precision of their spread (DuckDB uses fsum).
            shifted = rows.select(
                *keys,
                "odd",
                yv,
                pv,
                *[t.alias(f"t{k}") for k, t in enumerate(terms)],
            )
            window = Window.partitionBy(*keys)
            shifted = shifted.select(
                *keys,
                "odd",
                yv,
                pv,
                *[F.col(f"t{k}") for k in range(len(terms))],
                *[
                    F.coalesce(F.avg(F.col(f"t{k}")).over(window), F.lit(0.0)).alias(f"m{k}")
                    for k in range(len(terms))
                ],
            )
            grouped = shifted.groupBy(*keys).agg(
                F.count(F.lit(1)).alias(WEIGHT),
                F.max(
                    (F.col("odd") | F.abs(yv).eqNullSafe(inf) | F.abs(pv).eqNullSafe(inf)).cast(
                        "int"
                    )
                ).alias("odd"),
                *[
                    _shifted_sum(F, F.col(f"t{k}"), F.col(f"m{k}")).alias(f"s{k}")
                    for k in range(len(terms))
                ],
            )
        result = self._collect(grouped)
        odd_any = bool(pc.max(pc.fill_null(result.column("odd"), 0)).as_py() or 0)
        return regression_aggregate(
            result, dims, y, yhat, odd_any, text=self.text, source=self, dataframe=self.frame
        )

    def first_rows(
        self, column: str, arrow_type: pa.DataType | None, predicate: RowPredicate, limit: int
    ) -> list[tuple[int, Any]]:
        """Rows in the DataFrame's order: partitions in order, rows in order within each
        (for files, the order of the file). Runs the same Python predicate on each
        partition (``mapInArrow``); none found if the executors cannot run it."""
        text = self.text

        def scan(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa
            from pyspark import TaskContext

            ctx = TaskContext.get()
            pid = ctx.partitionId() if ctx is not None else 0
            seen = 0
            hits: list[int] = []
            values: list[Any] = []
            for batch in batches:
                arr = batch.column(0)
                if text:
                    arr = convert_text(
                        arr,
                        as_string=arrow_type is not None and pa.types.is_string(arrow_type),
                        arrow_type=arrow_type,
                    )
                if len(hits) < limit:
                    idx = np.flatnonzero(predicate(pa.chunked_array([arr])))[: limit - len(hits)]
                    hits += [seen + int(i) for i in idx]
                    values += arr.take(pa.array(idx, pa.int64())).to_pylist()
                seen += len(arr)
            yield pa.RecordBatch.from_pydict(
                {
                    "pid": pa.array([pid], pa.int32()),
                    "n": pa.array([seen], pa.int64()),
                    "hits": pa.array([hits], pa.list_(pa.int64())),
                    "vals": pa.array([json.dumps(values, default=str)], pa.string()),
                }
            )

        try:
            with _quiet():
                rows = (
                    self.df.select(self._col(column).alias("v"))
                    .mapInArrow(scan, "pid int, n long, hits array<long>, vals string")
                    .collect()
                )
        except Exception:
            return []
        found: list[tuple[int, Any]] = []
        offset = 0
        for row in sorted(rows, key=lambda r: r["pid"]):
            for i, v in zip(row["hits"], json.loads(row["vals"]), strict=True):
                found.append((offset + int(i), v))
            offset += int(row["n"])
        return found[:limit]

    def close(self) -> None:
        pass


def _shifted_sum(F: Any, t: Any, m: Any) -> Any:
    """Σt of a group as count·m + Σ(t − m), m a finite shift constant in the group (its
    naive mean); the naive Σt where either is not finite (overflow, NaN), as
    :func:`fairpolicy.stats.group_sums` does."""
    inf = float("inf")
    shift = F.when(F.abs(m) < inf, m).otherwise(F.lit(0.0))
    naive = F.sum(t)
    out = F.count(t) * F.max(shift) + F.sum(t - shift)
    return F.when((F.abs(naive) < inf) & (F.abs(out) < inf), out).otherwise(naive)


def _digest(files: list[Path]) -> str:
    import hashlib

    if len(files) == 1:
        return file_sha256(files[0])
    manifest = "".join(f"{file_sha256(f)}  {f}\n" for f in files)
    return hashlib.sha256(manifest.encode()).hexdigest()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
