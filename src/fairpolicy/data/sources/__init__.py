"""Sources: where the bound columns are read and the sufficient statistics aggregated.

- ``embedded`` (default for data that fits the memory budget): pyarrow reads the
  bound columns, NumPy counts (:mod:`.arrow_files`; DataFrames: :mod:`.frames`).
- ``duckdb``: one ``GROUP BY`` over CSV/Parquet file(s) (globs allowed) in an
  in-process DuckDB that spills to disk (:mod:`.duckdb`).
- ``spark``: the same aggregation as Spark DataFrame operations, on a DataFrame or
  on files (:mod:`.spark`).

Both engines push one aggregation down: the distinct tuples of the bound columns
with their row counts, scores in [0, 1] rounded to a grid of ``10**-decimals``
(default 4 decimals). Only that weighted table comes back; it becomes a
:class:`~fairpolicy.data.sources.base.Table` with ``weights``, and every statistic is built
from it exactly as from rows. Regression bindings push their per-group sums down
instead; ranking bindings group on the rank column (positions do not compress).
``docs/engines.md`` states the score grid's error bound per metric family.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from fairpolicy.data.limits import EMBEDDED_BASE_BYTES, EMBEDDED_BYTES_PER_CELL
from fairpolicy.data.sources.aggregate import Aggregated
from fairpolicy.data.sources.arrow_files import ArrowFileSource, file_columns, read_file
from fairpolicy.data.sources.base import (
    DEFAULT_SCORE_DECIMALS,
    Bound,
    EngineSource,
    Prefetched,
    RegressionAggregate,
    Request,
    Source,
    Table,
)
from fairpolicy.data.sources.frames import (
    FrameSource,
    frame_columns,
    is_arrow_like,
    is_dataframe,
    is_spark_dataframe,
    read_frame,
)
from fairpolicy.data.sources.paths import estimate_rows, is_glob
from fairpolicy.errors import UsageError

__all__ = [
    "DATA_KINDS",
    "DEFAULT_SCORE_DECIMALS",
    "ENGINES",
    "Bound",
    "EngineSource",
    "RegressionAggregate",
    "Request",
    "Source",
    "Table",
    "default_memory_budget",
    "estimate_embedded_peak",
    "open_source",
    "parse_size",
    "peek_columns",
    "read_table",
    "require_data_kind",
    "resolve_engine",
]


ENGINES = ("auto", "embedded", "duckdb", "spark")


#: the default memory budget: this share of physical memory
DEFAULT_BUDGET_SHARE = 0.5


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
    if isinstance(text, bool) or not isinstance(text, int | float | str):
        raise UsageError(f"--memory-budget: cannot read {text!r} as a size; write e.g. 4GB.")
    if isinstance(text, int | float):
        if text != text or text in (float("inf"), float("-inf")):
            raise UsageError(f"--memory-budget: {text!r} is not a size; write e.g. 4GB.")
        value = int(text)
    else:
        t = text.strip().lower().replace(" ", "")
        # ASCII digits only: "٤GB" is no size (int() and float() would read it)
        m = re.fullmatch(r"(\d+(?:\.\d+)?)(%|([kmgt]?)(?:i?b)?)", t, re.ASCII)
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


def open_source(
    engine: str,
    data: Any,
    memory_budget: int,
    prefetch: Prefetched | None = None,
    columns: Callable[[], list[str]] | None = None,
) -> Source:
    """The source of ``data`` for ``engine`` (as :func:`resolve_engine` chose it): the
    embedded reader of a file (taking ``prefetch``'s table when it fits; ``columns``: its
    column names as :func:`peek_columns` reads them, when the caller has them) or of an
    in-memory table, or an aggregating engine (its package is installed)."""
    if engine == "embedded":
        if is_dataframe(data) or is_arrow_like(data):
            return FrameSource(data)
        return ArrowFileSource(Path(os.fspath(data)), prefetch, columns)
    if prefetch is not None:
        prefetch.wait()
    return Aggregated(open_engine(engine, data, memory_budget), data)


def open_engine(engine: str, data: Any, memory_budget: int) -> EngineSource:
    """The aggregating engine's handle on ``data``."""
    if engine == "duckdb":
        from fairpolicy.data.sources.duckdb import DuckDBSource

        return DuckDBSource(data, memory_budget)
    from fairpolicy.data.sources.spark import SparkSource

    spark: EngineSource = SparkSource(data)
    return spark


def peek_columns(source: Any) -> list[str]:
    """The column names of a data source, without reading its rows."""
    if is_dataframe(source) or is_arrow_like(source):
        return frame_columns(source)
    return file_columns(Path(os.fspath(source)))


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
    if is_dataframe(source) or is_arrow_like(source):
        return read_frame(source, wanted, strings, max_rows)
    return read_file(
        Path(os.fspath(source)),
        wanted,
        strings,
        hash_file=hash_file,
        max_rows=max_rows,
        memory_budget=memory_budget,
    )


#: what ``check(policy, data)`` accepts as data, as messages list it
DATA_KINDS = (
    "a path (str or os.PathLike) to a CSV or Parquet file, a glob of such files, a pandas "
    "or polars DataFrame, a pyarrow Table, or a pyspark DataFrame"
)


def require_data_kind(data: Any) -> None:
    """UsageError naming the accepted kinds when ``data`` is none of them (None, a dict,
    a list, a NumPy array…), before anything is read."""
    if isinstance(data, str | os.PathLike) or is_dataframe(data) or is_arrow_like(data):
        return
    if type(data).__name__ == "DataFrame" and type(data).__module__.startswith("pyspark."):
        return
    raise UsageError(
        f"data must be {DATA_KINDS}; got {type(data).__name__}"
        + (" (None)." if data is None else ".")
        + " Fix: pass the predictions file's path, or load it into one of those first "
        "(e.g. pandas.read_csv(path))."
    )
