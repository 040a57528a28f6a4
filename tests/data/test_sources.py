"""The one seam every input type goes through: ``open_source()`` (issue 17).

For every input type the embedded engine reads (CSV, Parquet, a pandas DataFrame, a
pyarrow Table), the source ``open_source`` picks names the columns :func:`peek_columns`
names and reads, through :meth:`Source.read`, exactly the table :func:`read_table`
reads; and the same rows aggregated by DuckDB weigh to the same counts.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.data.sources import (
    Bound,
    Request,
    open_source,
    peek_columns,
    read_table,
)
from fairpolicy.data.sources.arrow_files import ArrowFileSource
from fairpolicy.data.sources.frames import FrameSource

FIXTURE = HealthCheck.function_scoped_fixture
GROUPS = st.sampled_from(["a", "b", "01", "1", "NA", ""])


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(min_value=1, max_value=30))
    return pd.DataFrame(
        {
            "y_true": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "y_pred": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "score": draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n)),
            "sex": draw(st.lists(GROUPS, min_size=n, max_size=n)),
        }
    )


def _inputs(df: pd.DataFrame, tmp: Path) -> dict[str, Any]:
    csv, parquet = tmp / "d.csv", tmp / "d.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet)
    return {
        "csv": str(csv),
        "parquet": str(parquet),
        "pandas": df,
        "arrow": pa.Table.from_pandas(df, preserve_index=False),
    }


def _keys(table: Any, columns: list[str]) -> list[tuple[Any, ...]]:
    """The rows' values; an empty group cell and a null group are both missing (the
    group encoder reads them alike; an engine returns the empty cell as null)."""
    values = [table.columns[c].to_pylist() for c in columns]
    return [tuple(None if v == "" else v for v in row) for row in zip(*values, strict=True)]


def _bound(columns: list[str], strings: list[str]) -> Bound:
    return Bound(
        columns,
        strings,
        Request(columns=tuple(columns), strings=frozenset(strings)),
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(df=frames(), pick=st.permutations(["y_true", "y_pred", "score", "sex", "absent"]))
def test_embedded_source_reads_what_read_table_reads(
    df: pd.DataFrame, pick: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    columns = pick[:3]
    strings = [c for c in columns if c == "sex"]
    for kind, data in _inputs(df, tmp_path_factory.mktemp("src")).items():
        source = open_source("embedded", data, 1 << 30)
        assert isinstance(source, FrameSource if kind in ("pandas", "arrow") else ArrowFileSource)
        assert source.name == "embedded"
        assert source.available == peek_columns(data), kind
        got = source.read(_bound(columns, strings))
        want = read_table(data, columns, string_columns=strings)
        source.close()
        assert list(got.columns) == list(want.columns) == [c for c in columns if c != "absent"]
        for c in got.columns:
            assert got.columns[c].equals(want.columns[c]), (kind, c)
        assert (got.rows, got.path, got.sha256, got.weights) == (
            want.rows,
            want.path,
            want.sha256,
            None,
        )
        assert got.source is None  # one entry per row: no engine behind the table


@pytest.mark.skipif(importlib.util.find_spec("duckdb") is None, reason="duckdb not installed")
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(df=frames())
def test_duckdb_source_weighs_to_the_embedded_counts(
    df: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("duck") / "d.csv"
    df.to_csv(path, index=False)
    columns = ["y_true", "y_pred", "sex"]
    source = open_source("duckdb", str(path), 1 << 30)
    try:
        assert source.name == "duckdb" and source.available == peek_columns(str(path))
        table = source.read(_bound(columns, ["sex"]))
    finally:
        source.close()
    assert table.weights is not None and table.source is not None
    rows = read_table(str(path), columns, string_columns=["sex"])
    assert table.rows == rows.rows == len(df)
    counted: dict[tuple[Any, ...], int] = {}
    for key, w in zip(_keys(table, columns), table.weights.tolist(), strict=True):
        counted[key] = counted.get(key, 0) + int(w)
    expected: dict[tuple[Any, ...], int] = {}
    for key in _keys(rows, columns):
        expected[key] = expected.get(key, 0) + 1
    assert counted == expected
