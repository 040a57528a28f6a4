"""``fairpolicy.check`` accepts a path, a pandas or polars DataFrame, a pyarrow Table, a
DuckDB relation and a Spark DataFrame (issue 15): the same rows give the same findings —
values, statuses, per-group counts and the missing-group bucket — whatever the input type.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

import fairpolicy
from fairpolicy.results import Results
from tests.helpers import control, write_policy

ROWS = [
    # y_true, y_pred, sex (None: no group value -> the (missing) bucket, never a group)
    *[(i % 2, 1 if i < 12 else 0, "F") for i in range(30)],
    *[(i % 2, 1 if i < 20 else 0, "M") for i in range(30)],
    *[(1, 1, "NA")] * 4,  # "NA" is a group name, not a missing value
    *[(0, 1, None)] * 3,
]


def _csv(tmp: Path) -> Path:
    path = tmp / "data.csv"
    lines = ["y_true,y_pred,sex"] + [f"{t},{p},{'' if g is None else g}" for t, p, g in ROWS]
    path.write_text("\n".join(lines) + "\n")
    return path


def _columns() -> dict[str, list[Any]]:
    return {
        "y_true": [r[0] for r in ROWS],
        "y_pred": [r[1] for r in ROWS],
        "sex": [r[2] for r in ROWS],
    }


def _policy(tmp: Path) -> Path:
    return write_policy(
        tmp,
        control("dp", threshold="0.3"),
        control("eo", "equal_opportunity_diff", threshold="0.1"),
        control("acc", "accuracy_diff", threshold="0.5", min_samples="5"),
    )


def _essence(results: Results) -> list[Any]:
    return [
        (
            f.control_id,
            f.status,
            f.value,
            sorted((g.group, g.n, g.value) for g in f.groups),
            sorted((e.group, e.missing, e.n) for e in f.excluded_groups),
            f.counts,
        )
        for f in results.findings
    ]


def _pandas() -> Any:
    import pandas as pd

    return pd.DataFrame(_columns())


def _polars() -> Any:
    import polars as pl

    return pl.DataFrame(_columns())


def _arrow() -> Any:
    import pyarrow as pa

    return pa.table(_columns())


def _duckdb() -> Any:
    import duckdb
    import pyarrow as pa

    arrow_rows = pa.table(_columns())  # noqa: F841 (read by DuckDB's replacement scan)
    return duckdb.sql("SELECT * FROM arrow_rows")


MAKERS = {"pandas": _pandas, "polars": _polars, "pyarrow": _arrow, "duckdb": _duckdb}


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Any]]:
    tmp = tmp_path_factory.mktemp("types")
    policy = _policy(tmp)
    results = fairpolicy.check(str(policy), str(_csv(tmp)))
    missing = [e for f in results.findings for e in f.excluded_groups if e.missing]
    assert missing and all(e.n == 3 for e in missing)  # the oracle itself sees the bucket
    na = [e for f in results.findings for e in [*f.groups, *f.excluded_groups] if e.group == "NA"]
    assert na and not any(e.missing for e in na)  # a group named NA, not the missing bucket
    return policy, _essence(results)


def test_a_path_as_str_and_pathlike(expected: tuple[Path, list[Any]], tmp_path: Path) -> None:
    policy, want = expected
    assert _essence(fairpolicy.check(policy, _csv(tmp_path))) == want


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_in_memory_tables(kind: str, expected: tuple[Path, list[Any]]) -> None:
    policy, want = expected
    results = fairpolicy.check(str(policy), MAKERS[kind]())
    assert _essence(results) == want
    assert results.data.rows == len(ROWS)


def test_a_frame_on_the_duckdb_engine_is_refused_with_the_fix(
    expected: tuple[Path, list[Any]],
) -> None:
    """--engine duckdb reads files; a DataFrame given to it is exit 2 naming the fix (no
    silent fallback to another engine)."""
    from fairpolicy.errors import UsageError

    policy, _ = expected
    with pytest.raises(UsageError, match="engine='auto'"):
        fairpolicy.check(str(policy), _pandas(), engine="duckdb")


@pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime for Spark")
def test_spark_dataframe(expected: tuple[Path, list[Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    # Spark's Python workers import fairpolicy; make them import this checkout's
    monkeypatch.setenv("PYTHONPATH", str(Path(fairpolicy.__file__).parents[1]))
    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    frame = spark.createDataFrame(ROWS, "y_true int, y_pred int, sex string")
    policy, want = expected
    assert _essence(fairpolicy.check(str(policy), frame, engine="spark")) == want


CREDIT = Path(__file__).resolve().parents[2] / "examples" / "credit"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("bootstrap", "1_000"),  # int() read it as 1000
        ("bootstrap", "5e2"),  # int() raised a bare ValueError
        ("bootstrap", "\u0663\u0660\u0660"),  # Arabic-Indic 300: int() read it
        ("bootstrap", 50.0),
        ("bootstrap", True),
        ("p_value", "1_0"),
        ("seed", "0x10"),
        ("num_classes", "3.0"),  # compared with 2 as a str: a TypeError
        ("max_rows", "1e3"),
        ("max_rows", [10]),
        ("ci_level", "nan"),
        ("ci_level", float("inf")),
        ("ci_level", "0,9"),
    ],
)
def test_numeric_options_follow_the_command_line_grammar(option: str, value: Any) -> None:
    """The Python API reads its numeric options as the command line does (an int, a float
    for ci_level, or their plain ASCII text): anything else is a UsageError naming the
    flag, never int()'s reading of it and never a bare ValueError or TypeError."""
    from fairpolicy.errors import UsageError

    flag = "--" + option.replace("_", "-")
    with pytest.raises(UsageError, match=f"{flag} must be a"):
        fairpolicy.check(CREDIT / "policy.yaml", CREDIT / "predictions.csv", **{option: value})


@pytest.mark.parametrize(
    ("option", "value", "read"),
    [
        ("bootstrap", " 50 ", 50),
        ("bootstrap", 50, 50),
        ("seed", "7", 7),
        ("ci_level", "0.9", 0.9),
        ("ci_level", 0.9, 0.9),
    ],
)
def test_numeric_options_as_text_read_as_on_the_command_line(
    option: str, value: Any, read: Any
) -> None:
    kwargs: dict[str, Any] = {option: value}
    if option == "ci_level":
        kwargs["bootstrap"] = 20
    r = fairpolicy.check(CREDIT / "policy.yaml", CREDIT / "predictions.csv", **kwargs)
    recorded = (
        r.run.options[{"bootstrap": "ci"}.get(option, option)] if option != "seed" else r.run.seed
    )
    assert recorded == read and type(recorded) is type(read)


@pytest.mark.parametrize("value", ["\u0664GB", float("nan"), True, [1], "1_0GB"])
def test_memory_budget_is_a_size_or_a_usage_error(value: Any) -> None:
    """Other scripts' digits, NaN, a bool or a list: a UsageError naming --memory-budget
    (``\\d`` read Arabic-Indic 4 as 4 GB; NaN raised a bare ValueError, a list an
    AttributeError)."""
    from fairpolicy.errors import UsageError

    with pytest.raises(UsageError, match="--memory-budget"):
        fairpolicy.check(CREDIT / "policy.yaml", CREDIT / "predictions.csv", memory_budget=value)
