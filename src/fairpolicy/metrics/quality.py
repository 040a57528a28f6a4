"""Data quality of the data set itself (Venturalitica's HUDERIA templates): how complete
its columns are, and how few of them are sensitive.

They read :class:`~fairpolicy.stats.columns.ColumnCounts` (missing values per column),
not a count table over groups, and compare no groups: the value is one number for the
whole data set. A value is missing as everywhere in fairpolicy: an empty cell, a true
null, a NaN in a float column, or one of the control's ``missing_values`` tokens (text
such as ``NA`` is a value unless the policy declares it missing).

- ``data_completeness``: the mean over columns of the share of rows that hold a value
  (Venturalitica's ``calc_data_completeness``, over every column unless
  ``input.columns`` names some);
- ``provenance_completeness``: the share of rows whose ``input.fields`` columns all hold a
  value (Venturalitica's ``calc_provenance_completeness``, which rounds to 4 places;
  fairpolicy does not round);
- ``data_minimization``: 1 − |sensitive columns| / |columns| (Venturalitica's
  ``calc_data_minimization_score``) with the sensitive columns named by
  ``input.sensitive_columns`` (Venturalitica guesses them from substrings of the column
  names, such as ``id``; fairpolicy never guesses).

Each carries its exact rational, so a value at the threshold is decided exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from fairpolicy.metrics.base import GroupValue, MetricValue
from fairpolicy.stats import ColumnCounts, GroupStats

__all__ = ["data_completeness", "data_minimization", "provenance_completeness"]

#: columns a finding's details list by name before it says how many more there are
NAMED = 50


def _counts(stats: GroupStats) -> ColumnCounts:
    if stats.columns is None:  # the evaluator attaches them for these keys
        raise ValueError("no column counts")
    return stats.columns


def _pooled(stats: GroupStats, value: float) -> tuple[GroupValue, ...]:
    """The one group of every row (the value is the data set's, not a comparison)."""
    return tuple(GroupValue(g, int(n), value) for g, n in zip(stats.groups, stats.n, strict=True))


def _exact(num: float, den: float) -> Fraction | None:
    """num/den exactly when both are counts; None for float sums of weights (their exact
    sums are in ``ColumnCounts.exact``)."""
    if isinstance(num, int) and isinstance(den, int):
        return Fraction(num, den)
    return None


def _listed(names: tuple[str, ...]) -> list[str]:
    return list(names[:NAMED]) + ([f"… {len(names) - NAMED} more"] if len(names) > NAMED else [])


def data_completeness(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Data completeness: the mean over the measured columns of the share of rows that
    hold a value.

    value = (1/C) Σ_c (N − m_c) / N   (in [0, 1]; 1: no value missing)

    N data rows, C measured columns (``input.columns``, else every column of the data),
    m_c the rows of column c with no value (an empty cell, a null, a NaN, a
    ``missing_values`` token). Equals Venturalitica's ``calc_data_completeness`` (the
    mean of ``df[c].notna().sum() / len(df)``), not rounded. Undefined with no rows or no
    columns. ``details``: the columns, their missing counts and completeness.
    """
    cc = _counts(stats)
    if cc.rows == 0 or not cc.columns:
        return MetricValue(None, reason="no rows" if cc.columns else "no columns to measure")
    n, k = cc.rows, len(cc.columns)
    per = {c: (n - m) / n for c, m in zip(cc.columns, cc.missing, strict=True)}
    present = sum(n - m for m in cc.missing)
    exact = _exact(present, n * k)
    if cc.exact is not None:  # fractional sample weights: the exact weight sums
        rows_e, missing_e, _ = cc.exact
        exact = Fraction(sum(rows_e - m for m in missing_e), rows_e * k) if rows_e else None
    value = sum(per.values()) / k
    worst = min(per, key=lambda c: per[c])
    return MetricValue(
        value,
        _pooled(stats, value),
        details={
            "rows": n,
            "columns": _listed(cc.columns),
            "over": "the columns named by input.columns"
            if cc.named
            else f"all {len(cc.columns)} columns of the data",
            "missing": {c: m for c, m in zip(cc.columns, cc.missing, strict=True) if m},
            "completeness": {c: v for c, v in per.items() if v < 1},
            "least_complete": worst,
        },
        exact=exact,
    )


def provenance_completeness(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Provenance completeness: the share of rows whose ``input.fields`` columns all hold
    a value (lineage, source, version … recorded for every row).

    value = #{rows with every field present} / N   (in [0, 1])

    A field is missing as for ``data_completeness``. Venturalitica's
    ``calc_provenance_completeness`` computes the same share
    (``df[fields].notna().all(axis=1).mean()``) and rounds it to 4 places; fairpolicy
    does not round (the exact value is decided). Undefined with no rows.
    """
    cc = _counts(stats)
    if cc.rows == 0 or cc.complete is None:
        return MetricValue(None, reason="no rows")
    exact = _exact(cc.complete, cc.rows)
    if cc.exact is not None and cc.exact[2] is not None and cc.exact[0]:
        exact = Fraction(cc.exact[2], cc.exact[0])  # fractional weights: exact weight sums
    return MetricValue(
        cc.complete / cc.rows,
        _pooled(stats, cc.complete / cc.rows),
        details={
            "rows": cc.rows,
            "complete_rows": cc.complete,
            "fields": list(cc.columns),
            "missing": {c: m for c, m in zip(cc.columns, cc.missing, strict=True) if m},
        },
        exact=exact,
    )


def data_minimization(stats: GroupStats, params: Mapping[str, Any]) -> MetricValue:
    """Data minimization (GDPR Art. 5(1)(c)): the share of the data's columns that are not
    sensitive.

    value = 1 − S / C   (in [0, 1]; 1: no sensitive column)

    S the distinct columns named by ``input.sensitive_columns`` (each must exist), C every
    column of the data. Equals Venturalitica's ``calc_data_minimization_score`` given its
    ``sensitive_columns``; fairpolicy never guesses them from the column names (without
    the role the control is exit 2). Reads no rows.
    """
    cc = _counts(stats)
    total = len(cc.available)
    if not total:
        return MetricValue(None, reason="the data has no columns")
    sensitive = len(dict.fromkeys(cc.columns))
    exact = 1 - Fraction(sensitive, total)
    return MetricValue(
        float(exact),
        _pooled(stats, float(exact)),
        details={
            "sensitive_columns": list(dict.fromkeys(cc.columns)),
            "columns": total,
            "sensitive": sensitive,
        },
        exact=exact,
    )
