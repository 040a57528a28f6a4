"""The window axis inside the count tables (fairpolicy.window_counts): every window's
count tables are cut from one bincount over (window, cell, classes), and each window's
findings and notes still equal a separate check on that window's rows, also where a
window cannot share (other label values, dropped rows, notes on its groups)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fairpolicy.evaluator as evaluator_module
import fairpolicy.window_counts as window_counts
from fairpolicy.results import Finding, Results
from fairpolicy.runner import check
from tests.helpers import control, write_policy


def dump(f: Finding) -> dict[str, Any]:
    """Everything a window's finding holds that a separate check's must hold too."""
    out = f.model_dump(mode="json")
    out.pop("gate_effect", None)
    return out


def whole(res: Results) -> dict[str, Any]:
    """A run's results without its timings."""
    out = res.model_dump(mode="json")
    out.pop("run", None)
    return out


def days_frame(
    rng: np.random.Generator,
    days: int,
    per_day: int,
    text: bool,
    classes: int,
    rare: float,
    missing_group: float,
    missing_label: float,
) -> pd.DataFrame:
    n = days * per_day
    day = np.repeat(np.arange(days), per_day)
    ts = pd.Timestamp("2024-05-01", tz="UTC") + pd.to_timedelta(
        day * 86400 + rng.integers(0, 86400, n), unit="s"
    )
    y_true = rng.integers(0, classes, n)
    # ``rare``: the prediction is class 0 only that often, so some days never predict it
    y_pred = np.where(rng.random(n) < rare, 0, rng.integers(1, classes, n))
    sex: list[Any] = list(rng.choice(["F", "M", "X"], n))
    race = rng.choice(["A", "B"], n)
    for i in np.flatnonzero(rng.random(n) < missing_group):
        sex[i] = None
    df = pd.DataFrame({"ts": ts, "sex": sex, "race": race, "y_true": y_true, "y_pred": y_pred})
    if text:
        names = np.array(["no", "yes", "maybe"])
        df["y_true"], df["y_pred"] = names[y_true], names[y_pred]
    if missing_label:
        df["y_pred"] = df["y_pred"].astype(object)
        df.loc[rng.random(n) < missing_label, "y_pred"] = None
    return df.sample(frac=1, random_state=int(rng.integers(0, 1000))).reset_index(drop=True)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    days=st.integers(2, 5),
    per_day=st.integers(8, 60),
    text=st.booleans(),
    multiclass=st.booleans(),
    rare=st.sampled_from([0.5, 0.05]),
    missing_group=st.sampled_from([0.0, 0.1]),
    missing_label=st.sampled_from([0.0, 0.05]),
    gate=st.sampled_from(["any", "sequential"]),
)
def test_each_window_cut_from_the_one_count_equals_a_separate_check(
    tmp_path: Path,
    seed: int,
    days: int,
    per_day: int,
    text: bool,
    multiclass: bool,
    rare: float,
    missing_group: float,
    missing_label: float,
    gate: str,
) -> None:
    rng = np.random.default_rng(seed)
    df = days_frame(
        rng, days, per_day, text, 3 if multiclass else 2, rare, missing_group, missing_label
    )
    extra: dict[str, Any] = {"missing": "drop"} if missing_label else {}
    if multiclass:
        controls = [
            control("meq", metric="multiclass_equal_opportunity", threshold="0.3", **extra),
            control("meq2", metric="multiclass_equal_opportunity", dimension="sex,race", **extra),
        ]
    else:
        positive = {"positive_label": "yes"} if text else {}
        controls = [
            control("dp", threshold="0.2", **positive, **extra),
            control("eo", metric="equal_opportunity_diff", dimension="sex,race", **positive,
                    **extra),
            control("di", metric="demographic_parity_ratio", threshold="0.8", operator=">=",
                    dimension="race", **positive, **extra),
        ]  # fmt: skip
    pol = write_policy(tmp_path, *controls)
    res = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate=gate)
    with pytest.MonkeyPatch.context() as mp:  # nothing shared: every window from its rows
        mp.setattr(window_counts, "MAX_BINS", 0)
        rows_only = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate=gate)
    assert whole(res) == whole(rows_only)
    assert res.windows is not None
    if gate == "sequential":
        return  # each window's level: tests/test_windows.py compares it with a separate check
    for w in res.windows.windows:
        rows = df[df["ts"].dt.strftime("%Y-%m-%d") == w.window].reset_index(drop=True)
        alone = check(str(pol), rows)
        assert [dump(f) for f in w.findings] == [dump(f) for f in alone.findings]
        notes = [x.partition(": ")[2] for x in res.warnings if x.startswith(f"window {w.window}:")]
        assert all(x in alone.warnings for x in notes)


def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times labels are encoded from rows (the evaluator's encode_labels)."""
    calls: list[int] = []
    real = evaluator_module.encode_labels

    def spy(table: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(table.rows)
        return real(table, *args, **kwargs)

    monkeypatch.setattr(evaluator_module, "encode_labels", spy)
    return calls


def test_labels_are_encoded_once_for_every_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """30 daily windows holding both classes: labels encoded once for the whole data (not
    once per window); a day whose rows hold only the label 0 is encoded from its own rows
    (its classes could differ from the data's), and its values still equal a separate check."""
    rng = np.random.default_rng(3)
    df = days_frame(rng, 30, 40, False, 2, 0.5, 0.0, 0.0)
    one_class_day = df["ts"].dt.strftime("%Y-%m-%d") == "2024-05-07"
    df.loc[one_class_day, ["y_true", "y_pred"]] = 0
    pol = write_policy(
        tmp_path,
        control("dp", threshold="0.2"),
        control("eo", metric="equal_opportunity_diff", dimension="sex,race"),
    )
    calls = counted(monkeypatch)
    res = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate="any")
    assert res.windows is not None and len(res.windows.windows) == 30
    assert calls == [len(df), int(one_class_day.sum())]
    monkeypatch.undo()
    for w in res.windows.windows[::7]:
        rows = df[df["ts"].dt.strftime("%Y-%m-%d") == w.window].reset_index(drop=True)
        assert [dump(f) for f in w.findings] == [dump(f) for f in check(str(pol), rows).findings]


def test_nothing_is_shared_when_the_labels_drop_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``missing: drop`` with rows dropped: each window drops and notes its own rows."""
    rng = np.random.default_rng(4)
    df = days_frame(rng, 5, 40, False, 2, 0.5, 0.0, 0.1)
    pol = write_policy(tmp_path, control("dp", threshold="0.2", missing="drop"))
    calls = counted(monkeypatch)
    res = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate="any")
    assert res.windows is not None
    assert len(calls) == 1 + 5  # the whole data's try, then every window's own
    assert sum("dropped" in x or "missing" in x for x in res.warnings) >= 1


def test_too_many_bins_falls_back_to_each_window_s_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(5)
    df = days_frame(rng, 4, 30, False, 2, 0.5, 0.0, 0.0)
    pol = write_policy(tmp_path, control("dp", threshold="0.2"))
    shared = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate="any")
    monkeypatch.setattr(window_counts, "MAX_BINS", 1)
    calls = counted(monkeypatch)
    alone = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate="any")
    assert len(calls) == 1 + 4
    assert shared.windows is not None and alone.windows is not None
    for a, b in zip(shared.windows.windows, alone.windows.windows, strict=True):
        assert [dump(f) for f in a.findings] == [dump(f) for f in b.findings]


def test_duckdb_tuples_share_the_one_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB's weighted tuples (one per window, group and class pair) are counted with
    their weights; the values equal the embedded run's."""
    pytest.importorskip("duckdb")
    rng = np.random.default_rng(6)
    df = days_frame(rng, 6, 50, False, 2, 0.5, 0.1, 0.0)
    df.to_parquet(tmp_path / "d.parquet")
    pol = write_policy(
        tmp_path,
        control("dp", threshold="0.2"),
        control("eo", metric="equal_opportunity_diff", dimension="sex,race"),
    )
    runs = {}
    for engine in ("embedded", "duckdb"):
        calls = counted(monkeypatch)
        runs[engine] = check(
            str(pol), str(tmp_path / "d.parquet"), engine=engine, window="ts=1d",
            window_tz="UTC", window_gate="any",
        )  # fmt: skip
        assert len(calls) == 1, engine
        monkeypatch.undo()
    a, b = runs["embedded"].windows, runs["duckdb"].windows
    assert a is not None and b is not None
    for x, y in zip(a.windows, b.windows, strict=True):
        assert (x.window, x.rows) == (y.window, y.rows)
        assert [(f.value, f.counts, f.status) for f in x.findings] == [
            (f.value, f.counts, f.status) for f in y.findings
        ]


@pytest.mark.parametrize("window", ["ts=1d", "day"])
def test_the_prefetch_reads_the_window_column_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str
) -> None:
    """A monitoring run takes the speculative read (with its window column: a time column
    as it is, a discrete one as text) instead of reading the file a second time; the
    results equal a run without the prefetch."""
    from fairpolicy.data.prefetch import Prefetch
    from fairpolicy.data.sources import arrow_files

    rng = np.random.default_rng(8)
    df = days_frame(rng, 4, 30, False, 2, 0.5, 0.0, 0.0)
    df["day"] = df["ts"].dt.strftime("%Y-%m-%d")
    df.to_parquet(tmp_path / "d.parquet")
    pol = write_policy(tmp_path, control("dp", threshold="0.2"))
    reads: list[Any] = []
    real = arrow_files.read_file
    monkeypatch.setattr(arrow_files, "read_file", lambda *a, **k: reads.append(a) or real(*a, **k))
    kw: dict[str, Any] = {"window": window, "window_gate": "any", "deterministic": True}
    if window.startswith("ts"):
        kw["window_tz"] = "UTC"
    fast = check(str(pol), str(tmp_path / "d.parquet"), **kw)
    assert reads == []  # the table came from the prefetch
    monkeypatch.setattr(Prefetch, "start", classmethod(lambda cls, *args: None))
    slow = check(str(pol), str(tmp_path / "d.parquet"), **kw)
    assert len(reads) == 1
    assert whole(fast) == whole(slow)


@pytest.mark.parametrize("period", ["d", "w"])
@pytest.mark.parametrize("kind", ["TIMESTAMPTZ", "TIMESTAMP"])
def test_duckdb_utc_day_numbers_give_the_calendar_labels(period: str, kind: str) -> None:
    """DuckDB groups UTC days and weeks on whole day numbers (data/window.duckdb_day_key)
    and labels the groups afterwards: the same labels as the calendar SQL
    (duckdb_key: zone conversion, date_trunc, strftime) on every instant, including
    microseconds either side of midnight, dates before 1970 and nulls."""
    duckdb = pytest.importorskip("duckdb")
    import pyarrow as pa

    from fairpolicy.data.window import (
        duckdb_day_key,
        duckdb_day_label,
        duckdb_key,
        parse_window,
    )

    rng = np.random.default_rng(9)
    us = 86_400_000_000
    days = rng.integers(-30_000, 30_000, 3000)
    ticks = np.concatenate(
        [days * us + rng.integers(0, us, 3000), days * us, days * us - 1, [0, -1, 1]]
    )
    values = pa.array(
        [*ticks.tolist(), None], pa.timestamp("us", tz="UTC" if kind == "TIMESTAMPTZ" else None)
    )
    con = duckdb.connect()
    con.execute("SET TimeZone = 'Pacific/Auckland'")  # the session's zone plays no part
    con.register("t", pa.table({"ts": values}))
    spec = parse_window(f"ts=1{period}", "UTC")
    ref = '"ts"'
    day = duckdb_day_key(kind, spec, ref)
    assert day is not None
    fast = con.sql(f"SELECT {duckdb_day_label(day)} FROM t").fetchall()
    slow = con.sql(f"SELECT {duckdb_key(ref, kind, spec, False)} FROM t").fetchall()
    assert fast == slow
    assert fast[-1] == (None,)
    assert duckdb_day_key(kind, parse_window("ts=1d", "Europe/Paris"), '"ts"') is None
    assert duckdb_day_key("DATE", spec, '"ts"') is None


def test_counting_block_by_block_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one count runs over blocks of rows (window_counts._BLOCK_ROWS); blocks that
    cut windows apart give the same results as one block."""
    rng = np.random.default_rng(10)
    df = days_frame(rng, 5, 40, True, 2, 0.5, 0.1, 0.0)
    pol = write_policy(
        tmp_path,
        control("dp", threshold="0.2", positive_label="yes"),
        control("eo", metric="equal_opportunity_diff", positive_label="yes"),
    )
    kw: dict[str, Any] = {"window": "ts=1d", "window_tz": "UTC", "window_gate": "any"}
    one = check(str(pol), df, **kw)
    monkeypatch.setattr(window_counts, "_BLOCK_ROWS", 7)
    calls = counted(monkeypatch)
    blocks = check(str(pol), df, **kw)
    assert len(calls) == 1  # shared, in blocks of 80 rows (5 windows × 4 cells × 2²)
    assert whole(one) == whole(blocks)
