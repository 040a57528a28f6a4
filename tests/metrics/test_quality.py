"""The data-quality metrics (metrics/quality.py) on their statistics, by hand.

``ColumnCounts`` holds what the data layer counted: rows, the measured columns, missing
values per column, the rows complete on all of them, every column of the data. The
values below are worked out on paper; the oracles against Venturalitica's definitions on
real data, every engine and input type, are in tests/test_venturalitica_policies.py.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fairpolicy.metrics.quality import (
    data_completeness,
    data_minimization,
    provenance_completeness,
)
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import ColumnCounts, GroupStats


def stats(counts: ColumnCounts) -> GroupStats:
    return GroupStats(
        dimension=(),
        groups=("",),
        classes=(),
        counts=np.zeros((1, 0, 0), dtype=np.int64),
        sizes=np.array([counts.rows], dtype=np.int64),
        columns=counts,
    )


def test_completeness_is_the_mean_of_the_columns_shares() -> None:
    cc = ColumnCounts(8, ("a", "b", "c"), (0, 2, 8), None, ("a", "b", "c"), named=False)
    mv = data_completeness(stats(cc), {})
    assert mv.exact == Fraction(8 + 6 + 0, 24)
    assert mv.value == pytest.approx((1 + 0.75 + 0) / 3, abs=1e-15)
    assert mv.details["least_complete"] == "c"
    assert mv.details["missing"] == {"b": 2, "c": 8}
    assert mv.details["over"] == "all 3 columns of the data"
    assert [(g.group, g.n) for g in mv.groups] == [("", 8)]


def test_completeness_of_complete_columns_is_one() -> None:
    cc = ColumnCounts(5, ("a",), (0,), None, ("a", "b"))
    mv = data_completeness(stats(cc), {})
    assert mv.value == 1.0 and mv.exact == 1
    assert mv.details["over"] == "the columns named by input.columns"


def test_no_rows_is_undefined_with_a_reason() -> None:
    cc = ColumnCounts(0, ("a",), (0,), 0, ("a",))
    for fn in (data_completeness, provenance_completeness):
        mv = fn(stats(cc), {})
        assert mv.value is None and mv.reason == "no rows"


def test_provenance_is_the_share_of_complete_rows_unrounded() -> None:
    cc = ColumnCounts(3, ("page", "chunk"), (1, 1), 1, ("page", "chunk", "x"))
    mv = provenance_completeness(stats(cc), {})
    assert mv.exact == Fraction(1, 3)
    assert mv.value == 1 / 3  # Venturalitica would report 0.3333
    assert mv.details["complete_rows"] == 1


def test_minimization_counts_names_once_against_every_column() -> None:
    cc = ColumnCounts(10, ("age", "sex", "age"), (), None, ("age", "sex", "x", "y", "z"))
    mv = data_minimization(stats(cc), {})
    assert mv.exact == Fraction(3, 5)
    assert mv.details["sensitive_columns"] == ["age", "sex"]


def test_every_sensitive_column_gives_zero() -> None:
    cc = ColumnCounts(10, ("a", "b"), (), None, ("a", "b"))
    assert data_minimization(stats(cc), {}).value == 0.0


@pytest.mark.parametrize(
    "key", ["data_completeness", "provenance_completeness", "data_minimization"]
)
def test_specs_declare_their_column_role(key: str) -> None:
    spec = REGISTRY[key]
    assert spec.kind == "data" and spec.groups_needed == 1 and spec.null_stratum is None
    assert spec.column_role in (*spec.inputs, *spec.optional)
    assert spec.value_range == (0.0, 1.0) and spec.better == "higher"
