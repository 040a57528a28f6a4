"""Engines: where the sufficient statistics are aggregated.

- ``embedded`` (default for data that fits the memory budget): pyarrow reads the
  bound columns, NumPy counts (:mod:`fairpolicy.data.read`).
- ``duckdb``: one ``GROUP BY`` over CSV/Parquet file(s) (globs allowed) in an
  in-process DuckDB that spills to disk (:mod:`.duckdb`).
- ``spark``: the same aggregation as Spark DataFrame operations, on a DataFrame or
  on files (:mod:`.spark`).

Both engines push one aggregation down: the distinct tuples of the bound columns
with their row counts, scores in [0, 1] rounded to a grid of ``10**-decimals``
(default 4 decimals). Only that weighted table comes back; it becomes a
:class:`~fairpolicy.data.read.Table` with ``weights``, and every statistic is built
from it exactly as from rows. Regression bindings push their per-group sums down
instead; ranking bindings group on the rank column (positions do not compress).
``docs/engines.md`` states the score grid's error bound per metric family.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fairpolicy.data.engines._common import (
    DEFAULT_SCORE_DECIMALS,
    RegressionAggregate,
    Request,
)
from fairpolicy.errors import DataError, UsageError

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.read import RowPredicate, Table

__all__ = [
    "DEFAULT_SCORE_DECIMALS",
    "ENGINES",
    "RegressionAggregate",
    "Request",
    "Source",
    "default_memory_budget",
    "estimate_embedded_peak",
    "estimate_rows",
    "is_spark_dataframe",
    "open_source",
    "parse_size",
    "resolve_engine",
]

ENGINES = ("auto", "embedded", "duckdb", "spark")

#: the default memory budget: this share of physical memory
DEFAULT_BUDGET_SHARE = 0.5

#: auto picks DuckDB when the embedded engine's estimated peak memory — this many bytes
#: per row and bound column, plus a base — would exceed the memory budget
EMBEDDED_BYTES_PER_CELL = 56
EMBEDDED_BASE_BYTES = 300 << 20

_GLOB = re.compile(r"[*?\[]")


class Source(Protocol):
    """An engine's handle on one data source."""

    #: the engine's name, as recorded in the results
    name: str
    path: str | None
    sha256: str | None
    #: every column the source has
    available: list[str]

    def tuples(self, request: Request) -> Table:
        """The distinct tuples of ``request.columns`` with their row counts."""
        ...

    def regression(self, dims: list[str], y: str, yhat: str) -> RegressionAggregate | None:
        """Per-tuple regression sums, or None when only the tuples can reproduce the
        embedded path exactly (non-numeric or infinite values: its errors name them)."""
        ...

    def first_rows(
        self, column: str, arrow_type: pa.DataType | None, predicate: RowPredicate, limit: int
    ) -> list[tuple[int, Any]]:
        """The first ``limit`` data rows (0-based, source order) where ``predicate`` holds."""
        ...

    def close(self) -> None: ...


def is_spark_dataframe(obj: Any) -> bool:
    """A pyspark DataFrame (classic or Spark Connect), without importing pyspark."""
    return type(obj).__name__ == "DataFrame" and type(obj).__module__.startswith("pyspark.")


def is_glob(data: Any) -> bool:
    """A pattern of files (``*``, ``?`` or ``[`` in the name), unless a file has that name."""
    return (
        isinstance(data, str)
        and bool(_GLOB.search(os.path.basename(data)))
        and not os.path.exists(data)
    )


def physical_memory() -> int:
    """Physical memory in bytes (8 GiB when the platform does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return 8 << 30


def default_memory_budget() -> int:
    return int(physical_memory() * DEFAULT_BUDGET_SHARE)


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str | int | float) -> int:
    """Bytes from ``4GB``, ``512M``, ``1.5GiB``, ``1000000`` or ``25%`` (of physical memory).

    Units are binary (1 GB = 2**30 bytes), case-insensitive.
    """
    if isinstance(text, int | float):
        value = int(text)
    else:
        t = text.strip().lower().replace(" ", "")
        m = re.fullmatch(r"(\d+(?:\.\d+)?)(%|([kmgt]?)(?:i?b)?)", t)
        if not m:
            raise UsageError(
                f"--memory-budget: cannot read '{text}' as a size; write e.g. 4GB, 512MB or 25%."
            )
        number = float(m.group(1))
        if m.group(2) == "%":
            if not 0 < number <= 100:
                raise UsageError(f"--memory-budget: {text} is not a share between 0 and 100%.")
            value = int(physical_memory() * number / 100)
        else:
            value = int(number * _UNITS[m.group(3) or ""])
    if value < 64 << 20:
        raise UsageError(f"--memory-budget: {text} is below the minimum of 64MB.")
    return value


def expand_paths(data: Any) -> list[Path]:
    """The files a path or glob names, sorted; an error naming the pattern when none."""
    text = os.fspath(data)
    if is_glob(text):
        found = sorted(Path(p) for p in glob.glob(text, recursive=True) if os.path.isfile(p))
        if not found:
            raise DataError(
                "the pattern matches no file.", file=text, hint="check the path and the pattern."
            )
        return found
    path = Path(text)
    if not path.exists():
        raise DataError("the data file does not exist.", file=text, hint="check the path.")
    if path.is_dir():
        raise DataError("this is a directory, not a data file.", file=text)
    from fairpolicy.files import require_regular

    require_regular(path, DataError, "data")  # a FIFO would block the engine's reader
    return [path]


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() in (".parquet", ".pq")


def estimate_rows(data: Any) -> int:
    """Data rows: from the Parquet footers, or a CSV's size over the mean length of the
    lines in its first MiB."""
    total = 0
    for path in expand_paths(data):
        if is_parquet(path):
            import pyarrow.parquet as pq

            try:
                total += int(pq.ParquetFile(path).metadata.num_rows)
            except Exception:  # unreadable: the reader reports it properly
                total += path.stat().st_size // 8
            continue
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(1 << 20)
        lines = max(head.count(b"\n"), 1)
        total += int(size / (len(head) / lines)) if head else 0
    return total


def estimate_embedded_peak(data: Any, columns: Callable[[], list[str]]) -> int:
    """Peak memory of the embedded engine on ``data``: a base plus, per row and bound
    column, ``EMBEDDED_BYTES_PER_CELL`` (measured by ``benchmarks/duckdb_scale.py``:
    10M rows × 6 bound columns peak at 2.5 GB from Parquet, 3.2 GB from CSV)."""
    cells = estimate_rows(data) * max(len(columns()), 1)
    return EMBEDDED_BASE_BYTES + EMBEDDED_BYTES_PER_CELL * cells


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def require(engine: str) -> None:
    """Exit 2 naming the install command when the engine's package is missing."""
    module = {"duckdb": "duckdb", "spark": "pyspark"}[engine]
    if not _installed(module):
        raise UsageError(
            f"--engine {engine} needs the '{module}' package, which is not installed. "
            f"Fix: pip install {module}  (or pip install 'fairpolicy[{engine}]')."
        )


def resolve_engine(
    engine: str, data: Any, columns: Callable[[], list[str]], memory_budget: int
) -> tuple[str, list[str]]:
    """The engine to run (``embedded``, ``duckdb`` or ``spark``) and notes for the results.

    ``auto``: a Spark DataFrame → spark; a pandas DataFrame → embedded; a glob →
    duckdb; a file on which the embedded engine would need more than the memory
    budget (:func:`estimate_embedded_peak`) → duckdb; else embedded. auto never
    starts Spark for files.
    """
    if engine not in ENGINES:
        from fairpolicy.errors import did_you_mean

        raise UsageError(
            f"--engine {engine}: unknown engine.{did_you_mean(engine, ENGINES)} "
            f"Engines: {', '.join(ENGINES)}."
        )
    spark_df = is_spark_dataframe(data)
    from fairpolicy.data.read import is_arrow_like

    frame = not spark_df and (
        (type(data).__name__ == "DataFrame" and hasattr(data, "columns")) or is_arrow_like(data)
    )
    if spark_df:
        if engine not in ("auto", "spark"):
            raise UsageError(
                f"a Spark DataFrame is evaluated by the spark engine, not --engine {engine}. "
                "Fix: leave engine='auto' (or pass engine='spark'), or pass a file path."
            )
        require("spark")
        return "spark", []
    if frame:
        if engine not in ("auto", "embedded"):
            raise UsageError(
                f"--engine {engine} reads files (CSV or Parquet, globs allowed) or, for "
                "spark, a Spark DataFrame; a pandas DataFrame (or polars, or an Arrow table) is "
                "evaluated in memory. "
                "Fix: pass engine='auto', or write the frame to Parquet and pass its path."
            )
        return "embedded", []
    if engine == "embedded":
        if is_glob(data):
            raise UsageError(
                f"'{data}' is a pattern of files; the embedded engine reads one file. "
                "Fix: pass --engine duckdb (or spark) to read every matching file, or "
                "name one file."
            )
        return "embedded", []
    if engine in ("duckdb", "spark"):
        require(engine)
        return engine, []
    # auto
    if is_glob(data):
        require("duckdb")
        return "duckdb", []
    if not isinstance(data, str | os.PathLike) or not os.path.isfile(os.fspath(data)):
        return "embedded", []  # the reader reports what is wrong with it
    need = estimate_embedded_peak(data, columns)
    if need <= memory_budget:
        return "embedded", []
    gb = 1 << 30
    if not _installed("duckdb"):
        return "embedded", [
            f"the embedded engine needs about {need / gb:.1f} GB for this data, over the memory "
            f"budget of {memory_budget / gb:.1f} GB, but DuckDB is not installed, so the "
            "embedded engine reads them (pip install duckdb to aggregate out of memory)"
        ]
    return "duckdb", []


def open_source(engine: str, data: Any, memory_budget: int) -> Source:
    """The engine's handle on ``data`` (the engine's package is installed)."""
    if engine == "duckdb":
        from fairpolicy.data.engines.duckdb import DuckDBSource

        return DuckDBSource(data, memory_budget)
    from fairpolicy.data.engines.spark import SparkSource

    spark: Source = SparkSource(data)
    return spark
