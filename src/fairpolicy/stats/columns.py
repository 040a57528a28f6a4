"""Per-column counts of missing values: what the data-quality metrics read
(``data_completeness``, ``provenance_completeness``, ``data_minimization``).

They are not count tables over groups: each measured column contributes the number of
rows where it holds no value, and a joint binding the number of rows where every one of
its columns holds one. The data layer counts them (one pass per column, or the engine's
``GROUP BY`` of that column); the metrics divide.
"""

from __future__ import annotations

from fairpolicy.records import lean

__all__ = ["ColumnCounts"]


@lean
class ColumnCounts:
    """Missing-value counts of the measured columns of one data set."""

    #: data rows (under fractional sample weights: their total weight, as every count here)
    rows: float
    #: the measured columns, in the order they were named (or the data's order)
    columns: tuple[str, ...]
    #: rows with no value, per measured column (an empty cell, a null, a NaN, a token of
    #: ``missing_values``); empty when only the names were asked for
    missing: tuple[float, ...] = ()
    #: rows where every measured column holds a value (None: not counted)
    complete: float | None = None
    #: every column of the data, in its order
    available: tuple[str, ...] = ()
    #: the columns were named by the control (False: every column of the data)
    named: bool = True
    #: under fractional sample weights, ``rows``, ``missing`` and ``complete`` as exact
    #: weight sums (Python ints in units of 2**-1074, :mod:`fairpolicy.stats.exactsum`),
    #: so the metrics' ratios are decided exactly; None otherwise (the counts are whole)
    exact: tuple[int, tuple[int, ...], int | None] | None = None
