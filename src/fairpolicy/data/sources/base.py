"""What every data source gives: the bound columns as a :class:`Table` (one entry per
row, or an engine's distinct tuples with their row counts), and the :class:`Source`
protocols of what reads them (:class:`Source`) and of the engines that aggregate them
(:class:`EngineSource`: DuckDB, Spark)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from numpy.typing import NDArray

from fairpolicy.errors import DataError
from fairpolicy.records import lean

if TYPE_CHECKING:
    import pyarrow as pa

    from fairpolicy.data.window import WindowSpec


#: a row predicate: one column's values (a pyarrow array) → a boolean mask of the rows
RowPredicate = Callable[[Any], NDArray[np.bool_]]


#: the default score grid: scores in [0, 1] are rounded to 10**-4 on an engine
DEFAULT_SCORE_DECIMALS = 4


#: the name of the row-count column of an aggregated result
WEIGHT = "__w"


@lean(frozen=False)
class Table:
    """The bound columns of a data set, as pyarrow arrays.

    Embedded reads hold one entry per data row (``weights`` is None). An engine
    (:mod:`fairpolicy.data.sources`) returns the distinct tuples of the bound
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
    #: fractional (survey, importance) sample weight of each entry's rows
    #: (data/bind/weights.py); None: unweighted, or whole-number weights folded into
    #: ``weights`` as row counts
    sample_weights: NDArray[np.float64] | None = None
    #: the engine the tuples came from: locates data rows, runs further aggregations
    source: EngineSource | None = None
    #: engines: for each multi-column score binding, whether the entry's unrounded
    #: scores fail to sum to 1 (±0.001), computed before the scores were rounded
    sum_flags: dict[tuple[str, ...], NDArray[np.bool_]] = field(default_factory=dict)
    #: the columns read from the source (default: ``columns``)
    read: list[str] | None = None
    #: embedded reads weighted by a weight column (data/bind/weights.py): the 0-based data
    #: row of each entry, so messages still name data rows
    row_ids: NDArray[np.int64] | None = None

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
        if self.weights is None or self.row_ids is not None:
            arr = self.columns[column]
            hit = predicate(arr) if mask is None else mask
            idx = np.flatnonzero(hit)[:limit]
            values = arr.take(idx).to_pylist() if len(idx) else []
            rows = idx if self.row_ids is None else self.row_ids[idx]
            return [(int(i), v) for i, v in zip(rows, values, strict=True)]
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


@lean
class Request:
    """The bound columns to aggregate into distinct tuples with their row counts."""

    #: columns to group on, in order
    columns: tuple[str, ...]
    #: columns read as text (dimension and site columns), as the embedded reader does
    strings: frozenset[str] = frozenset()
    #: score columns: values in [0, 1] are rounded to ``decimals`` places
    scores: frozenset[str] = frozenset()
    #: multi-column score bindings: a flag per tuple whether its unrounded scores
    #: fail to sum to 1 (checked before rounding; ``Table.sum_flags``)
    score_sets: tuple[tuple[str, ...], ...] = ()
    decimals: int = DEFAULT_SCORE_DECIMALS
    #: a calendar window axis (``--window COLUMN=PERIOD``): the engine groups on each row's
    #: window label too, returned as the column ``fairpolicy.data.window.KEY``
    window: WindowSpec | None = None


@lean(frozen=False)
class RegressionAggregate:
    """Per-tuple sums for a regression binding: Σy, Σŷ, Σr, Σ|r|, Σr², Σy², Σŷ²."""

    #: dimension columns (+ weights) of the distinct (groups, missing y, missing ŷ) tuples
    table: Table
    #: per target/prediction column, which tuples hold its missing values
    missing: dict[str, NDArray[np.bool_]] = field(default_factory=dict)
    sums: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 7)))


class EngineSource(Protocol):
    """An aggregating engine's handle on one data source (DuckDB, Spark): the distinct
    tuples of the bound columns with their row counts, and the further aggregations the
    pipeline asks of them."""

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


@lean
class Bound:
    """What a run reads from its source: the columns the policy binds, and what an
    aggregating engine groups on."""

    #: every column the policy binds, in the policy's order (the embedded reads)
    columns: list[str]
    #: those read as text (dimension and site columns)
    strings: list[str]
    #: the main aggregation of an engine (classification and data-check columns)
    request: Request
    max_rows: int | None = None
    #: embedded reads: bytes the read may take (None: of the memory available)
    memory_budget: int | None = None


class Source(Protocol):
    """One data source as the run sees it, whatever reads it (:func:`open_source`)."""

    #: the engine's name, as recorded in the results
    name: str
    path: str | None
    sha256: str | None
    #: every column the source has
    available: list[str]

    def read(self, bound: Bound) -> Table:
        """The bound columns: one entry per data row (embedded), or an engine's distinct
        tuples with their row counts (``Table.weights``)."""
        ...

    def close(self) -> None: ...


class Prefetched(Protocol):
    """A read started before the policy was loaded (:mod:`fairpolicy.data.prefetch`)."""

    def take(self, wanted: list[str], strings: list[str], available: list[str]) -> Table | None:
        """The table, if it was read the way the run reads it; else None."""
        ...

    def wait(self) -> None: ...
