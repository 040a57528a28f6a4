"""Monitoring runs (issue 30): every control in every window, from one read.

The oracle for every window is a separate ``check`` on that window's rows, with the
window of each row computed independently here (Python's ``zoneinfo``, calendar rules
written out), on the embedded engine and DuckDB.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from fairpolicy.decide import window_gate
from fairpolicy.policy.load import load_policy
from fairpolicy.results import ConfidenceInterval, Finding, Results
from fairpolicy.runner import check
from fairpolicy.stats.sequential import confirmed, sequential_alarm, window_level
from tests.helpers import control, write_policy

ZONES = ["UTC", "Pacific/Auckland", "America/New_York", "Asia/Kolkata"]
PERIODS = ["d", "w", "mo", "q", "y"]


def oracle_label(instant: dt.datetime, period: str, tz: str) -> str:
    """The window of an instant: its calendar period in ``tz``, written out by hand."""
    local = instant.astimezone(ZoneInfo(tz)).date()
    if period == "d":
        start = local
    elif period == "w":
        start = local - dt.timedelta(days=local.weekday())
    elif period == "mo":
        start = local.replace(day=1)
    elif period == "q":
        start = local.replace(month=(local.month - 1) // 3 * 3 + 1, day=1)
    else:
        start = local.replace(month=1, day=1)
    return start.isoformat()


def frame(seed: int, n: int, span_days: float, start: str = "2024-01-01") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp(start, tz="UTC")
    ts = t0 + pd.to_timedelta(rng.integers(0, int(span_days * 86400), n), unit="s")
    return pd.DataFrame(
        {
            "ts": ts,
            "sex": rng.choice(["F", "M"], n),
            "y_true": rng.integers(0, 2, n),
            "y_pred": rng.integers(0, 2, n),
        }
    )


def comparable(f: Finding) -> dict[str, Any]:
    """What a window's finding and a separate check's must share."""
    return {
        "control": f.control_id,
        "value": f.value,
        "status": f.status,
        "counts": f.counts,
        "groups": [(g.group, g.n, g.value) for g in f.groups],
        "ci": None if f.ci is None else (f.ci.low, f.ci.high, f.ci.level, f.ci.method),
    }


def two_controls(tmp: Path, **props: Any) -> Path:
    return write_policy(
        tmp,
        control("dp", threshold="0.2", **props),
        control("eo", metric="equal_opportunity_diff", threshold="0.15", **props),
    )


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    period=st.sampled_from(PERIODS),
    tz=st.sampled_from(ZONES),
    seed=st.integers(0, 10_000),
    n=st.integers(40, 400),
)
def test_every_window_equals_a_separate_check_on_its_rows(
    tmp_path: Path, period: str, tz: str, seed: int, n: int
) -> None:
    span = {"d": 4, "w": 20, "mo": 70, "q": 200, "y": 800}[period]
    df = frame(seed, n, span, start="2023-12-30")  # across a year's end and DST changes
    pol = two_controls(tmp_path)
    res = check(str(pol), df, window=f"ts=1{period}", window_tz=tz, window_gate="last")
    assert res.windows is not None
    labels = [oracle_label(t.to_pydatetime(), period, tz) for t in df["ts"]]
    expected = sorted(set(labels))
    assert [w.window for w in res.windows.windows] == expected
    for w in res.windows.windows:
        rows = df[[x == w.window for x in labels]].reset_index(drop=True)
        assert w.rows == len(rows)
        alone = check(str(pol), rows)
        assert [comparable(f) for f in w.findings] == [comparable(f) for f in alone.findings]
    # the gate "last" decides on the newest window
    assert [f.status for f in res.findings] == [f.status for f in res.windows.windows[-1].findings]


def test_engines_agree_window_by_window(tmp_path: Path) -> None:
    """Embedded (CSV, Parquet), DuckDB (CSV, Parquet): the same windows, rows and findings;
    the Parquet timestamps are instants, the CSV ones ISO text with and without offsets."""
    pytest.importorskip("duckdb")
    df = frame(7, 3000, 40)
    text = df.assign(
        ts=[
            t.strftime("%Y-%m-%dT%H:%M:%SZ")
            if i % 3
            else t.tz_convert("Asia/Kolkata").strftime("%Y-%m-%d %H:%M:%S+05:30")
            for i, t in enumerate(df["ts"])
        ]
    )
    text.to_csv(tmp_path / "d.csv", index=False)
    df.to_parquet(tmp_path / "d.parquet")
    pol = two_controls(tmp_path, ci="200")
    runs = {
        (engine, name): check(
            str(pol),
            str(tmp_path / name),
            engine=engine,
            window="ts=1w",
            window_tz="America/New_York",
            window_gate="any",
        )
        for engine in ("embedded", "duckdb")
        for name in ("d.csv", "d.parquet")
    }
    shown = {
        k: [(w.window, w.rows, [comparable(f) for f in w.findings]) for w in r.windows.windows]
        for k, r in runs.items()
        if r.windows is not None
    }
    first = shown[("embedded", "d.parquet")]
    assert len(first) == 7  # 2023-12-25 holds the first hours of 2024 in New York
    for k, v in shown.items():
        assert v == first, k
    assert {r.summary.gate for r in runs.values()} == {runs[("embedded", "d.csv")].summary.gate}


def test_duckdb_naive_timestamps_are_utc_and_dates_have_no_zone(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    df = frame(3, 800, 10).assign(ts=lambda d: d["ts"].dt.tz_localize(None))
    df.to_parquet(tmp_path / "naive.parquet")
    df.assign(ts=df["ts"].dt.date).to_parquet(tmp_path / "dates.parquet")
    pol = two_controls(tmp_path)
    for name in ("naive.parquet", "dates.parquet"):
        got = [
            [(w.window, w.rows) for w in check(
                str(pol), str(tmp_path / name), engine=e, window="ts=1d",
                window_tz="Pacific/Auckland", window_gate="last",
            ).windows.windows]  # type: ignore[union-attr]
            for e in ("embedded", "duckdb")
        ]  # fmt: skip
        assert got[0] == got[1], name
        zone = "Pacific/Auckland" if name == "naive.parquet" else "UTC"
        labels = [
            oracle_label(t.replace(tzinfo=dt.UTC), "d", zone) for t in df["ts"].dt.to_pydatetime()
        ]
        assert got[0] == sorted((x, labels.count(x)) for x in set(labels))


def test_discrete_window_column(tmp_path: Path) -> None:
    df = frame(5, 600, 30).assign(week=lambda d: d["ts"].dt.isocalendar().week.astype(int))
    pol = two_controls(tmp_path)
    res = check(str(pol), df.drop(columns="ts"), window="week", window_gate="any")
    assert res.windows is not None and res.windows.tz is None
    weeks = sorted(set(df["week"]))
    assert [w.window for w in res.windows.windows] == [str(x) for x in weeks]  # numeric order
    for w in res.windows.windows:
        alone = check(str(pol), df[df["week"] == int(w.window)].reset_index(drop=True))
        assert [comparable(f) for f in w.findings] == [comparable(f) for f in alone.findings]


def test_sequential_gate_computes_each_window_at_its_level(tmp_path: Path) -> None:
    """Window t's interval is the one a separate check at ci_level = 1 − α_t gives; the
    alarm is the first window whose interval lies wholly beyond the threshold."""
    df = frame(11, 4000, 35)
    # a planted drift: from day 21 group F is predicted positive far more often
    late = (df["ts"] >= pd.Timestamp("2024-01-22", tz="UTC")) & (df["sex"] == "F")
    df.loc[late, "y_pred"] = 1
    pol = write_policy(tmp_path, control("dp", threshold="0.1"))
    res = check(str(pol), df, window="ts=1w")
    assert res.windows is not None and res.windows.gate == "sequential"
    intervals = []
    for t, w in enumerate(res.windows.windows, start=1):
        level = window_level(t, 0.05)
        assert w.level == level
        f = w.findings[0]
        assert f.ci is not None and f.ci.level == pytest.approx(level)
        rows = df[
            (df["ts"] >= pd.Timestamp(w.window, tz="UTC"))
            & (df["ts"] < pd.Timestamp(w.end, tz="UTC"))
        ].reset_index(drop=True)
        alone = check(str(pol), rows, bootstrap=1000, ci_level=level).findings[0]
        assert comparable(f) == comparable(alone)
        # a score interval alarms with its exact box: the hull of the two
        assert f.ci.method == "score" and f.ci.exact_box is not None
        assert alone.ci is not None and alone.ci.exact_box is None  # not a sequential run
        hull = confirmed((f.ci.low, f.ci.high), (f.ci.exact_box[0], f.ci.exact_box[1]))
        assert f.details["alarm_interval"]["low"] == hull[0]
        assert f.details["alarm_interval"]["high"] == hull[1]
        intervals.append(hull)
    at = sequential_alarm(intervals, 0.1, "<")
    assert at is not None and res.windows.windows[at].window >= "2024-01-22"
    f = res.findings[0]
    assert (
        f.status == "fail" and f.details["window_gate"]["window"] == res.windows.windows[at].window
    )
    assert res.exit_code == 1


def _finding(
    status: str,
    low: float | None = None,
    high: float | None = None,
    box: tuple[float, float] | None = None,
) -> Finding:
    """A window's finding with a score interval [low, high] and (``box``) its exact box;
    without ``box`` the box is the interval itself."""
    ci = None
    if low is not None:
        assert high is not None
        ci = ConfidenceInterval(
            low=low,
            high=high,
            level=0.999,
            method="score",
            resamples=0,
            seed=0,
            valid=0,
            exact_box=list(box or (low, high)),
        )
    return Finding(
        control_id="c",
        title=None,
        metric_key="demographic_parity_diff",
        inputs={},
        params={},
        value=None if low is None else (low + (high or low)) / 2,
        operator="<",
        threshold=0.1,
        status=status,  # type: ignore[arg-type]
        message="m",
        ci=ci,
    )


def test_window_gate_table(tmp_path: Path) -> None:
    pol = load_policy(write_policy(tmp_path, control("c", threshold="0.1")))
    c = pol.controls[0]
    ok, bad, unsure = (
        _finding("pass", 0.0, 0.05),
        _finding("fail", 0.12, 0.2),
        _finding("inconclusive"),
    )
    straddle = _finding("fail", 0.05, 0.2)  # a point fail whose interval straddles
    win = [("w1", ok), ("w2", bad), ("w3", ok)]
    assert window_gate(c, win, "last")[0] == "pass"
    assert window_gate(c, win, "any")[:3:2] == ("fail", "w2")
    assert window_gate(c, win, "sequential")[:3:2] == ("fail", "w2")
    assert window_gate(c, [("w1", ok), ("w2", straddle)], "any")[0] == "fail"
    # no alarm with a newest window that violates by its own rule: a warning (it never
    # fails the gate, so the false-alarm bound stands), not a pass shown beside a violation
    status, reason, at = window_gate(c, [("w1", ok), ("w2", straddle)], "sequential")
    assert (status, at) == ("warn", "w2") and "not yet evidence" in reason
    assert window_gate(c, [("w1", straddle), ("w2", ok)], "sequential")[0] == "pass"
    assert window_gate(c, [("w1", ok), ("w2", unsure)], "any")[0] == "inconclusive"
    assert window_gate(c, [("w1", ok), ("w2", unsure)], "last")[0] == "inconclusive"
    assert window_gate(c, [("w1", unsure)], "sequential")[0] == "inconclusive"
    assert window_gate(c, [("w1", ok), ("w2", _finding("error"))], "sequential")[0] == "error"
    short = bad.model_copy(update={"status": "inconclusive", "details": {"window_short": True}})
    assert window_gate(c, [("w1", ok), ("w2", short)], "sequential")[0] == "pass"
    # a score interval beyond the threshold alarms only when its exact box is too
    unconfirmed = _finding("fail", 0.12, 0.2, box=(0.09, 0.24))
    assert window_gate(c, [("w1", ok), ("w2", unconfirmed)], "sequential")[0] == "warn"
    assert window_gate(c, [("w1", unconfirmed), ("w2", ok)], "sequential")[0] == "pass"
    assert window_gate(c, [("w1", ok), ("w2", unconfirmed)], "any")[0] == "fail"
    both = _finding("fail", 0.12, 0.2, box=(0.11, 0.24))
    status, reason, at = window_gate(c, [("w1", ok), ("w2", both)], "sequential")
    assert (status, at) == ("fail", "w2") and "exact Clopper–Pearson box" in reason
    assert "[0.11, 0.24]" in reason  # the hull the alarm read
    # a score interval without a box (survey weights) cannot alarm
    boxless = bad.model_copy(update={"ci": bad.ci.model_copy(update={"exact_box": None})})
    status, reason, _ = window_gate(c, [("w1", boxless)], "sequential")
    assert status == "inconclusive" and "no exact Clopper–Pearson box" in reason


def test_min_window_rows_is_never_a_pass_and_pooling_joins_windows(tmp_path: Path) -> None:
    df = frame(2, 700, 7)
    counts = df["ts"].dt.strftime("%Y-%m-%d").value_counts().sort_index()
    small = int(counts.min())
    pol = two_controls(tmp_path)
    res = check(str(pol), df, window="ts=1d", window_gate="any", min_window_rows=small + 1)
    assert res.windows is not None
    short = [w for w in res.windows.windows if w.rows <= small]
    assert short
    for w in short:
        assert w.reason is not None and "--min-window-rows" in w.reason
        assert all(f.status == "inconclusive" for f in w.findings)
        assert all(f.gate_effect == "fail" for f in w.findings)  # --inconclusive fail
    assert all(f.status != "pass" for f in res.findings)
    need = int(counts.max()) + 1
    pooled = check(
        str(pol), df, window="ts=1d", window_gate="any", min_window_rows=need, pool_windows=True
    )
    assert pooled.windows is not None
    blocks = pooled.windows.windows
    assert sum(w.rows for w in blocks) == len(df)
    assert all(w.rows >= need for w in blocks[:-1])
    assert all(len(w.pooled) >= 2 and ".." in w.window for w in blocks[:-1])
    # a pooled window equals a separate check on the pooled rows
    first = blocks[0]
    days = set(first.pooled)
    rows = df[df["ts"].dt.strftime("%Y-%m-%d").isin(days)].reset_index(drop=True)
    alone = check(str(pol), rows)
    assert [comparable(f) for f in first.findings] == [comparable(f) for f in alone.findings]


def test_reference_change_equals_a_baseline_comparison(tmp_path: Path) -> None:
    df = frame(9, 3000, 28)
    pol = two_controls(tmp_path)
    res = check(
        str(pol),
        df,
        window="ts=1w",
        window_gate="any",
        reference="2024-01-01..2024-01-08",
        max_regression="0.02",
    )
    assert res.windows is not None
    ref_rows = df[df["ts"] < pd.Timestamp("2024-01-15", tz="UTC")].reset_index(drop=True)
    reference = check(str(pol), ref_rows)
    for w in res.windows.windows:
        rows = df[
            (df["ts"] >= pd.Timestamp(w.window, tz="UTC"))
            & (df["ts"] < pd.Timestamp(w.end, tz="UTC"))
        ].reset_index(drop=True)
        alone = check(str(pol), rows, baseline=reference, max_regression="0.02")
        for got, want in zip(w.findings, alone.findings, strict=True):
            assert got.change is not None and want.change is not None
            assert got.change.worsened_by == want.change.worsened_by
            assert got.change.verdict == want.change.verdict
            assert got.status == want.status


def test_reference_works_under_the_default_sequential_gate(tmp_path: Path) -> None:
    """--reference with the default gate: the reference is evaluated at each window's own
    level (it was refused whole as "the parameters changed", the windows running at
    1 − α_t and the reference at the policy's level); each window's change of the point
    values equals the one under --window-gate any, and the change has an interval."""
    df = frame(9, 3000, 28)
    pol = two_controls(tmp_path)
    kw = {"window": "ts=1w", "reference": "2024-01-01..2024-01-08", "max_regression": "0.02"}
    seq = check(str(pol), df, **kw)
    anyg = check(str(pol), df, window_gate="any", **kw)
    assert seq.windows is not None and anyg.windows is not None
    for ws, wa in zip(seq.windows.windows, anyg.windows.windows, strict=True):
        for got, want in zip(ws.findings, wa.findings, strict=True):
            assert got.change is not None and want.change is not None
            assert got.change.worsened_by == want.change.worsened_by


def test_cli_outputs_name_the_windows(tmp_path: Path) -> None:
    df = frame(4, 900, 9)
    data = tmp_path / "d.parquet"
    df.to_parquet(data)
    pol = two_controls(tmp_path)
    out = io.StringIO()
    js = tmp_path / "r.json"
    code = main(
        [
            "check", str(pol), str(data), "--window", "ts=1d", "--window-tz", "Europe/Berlin",
            "--window-gate", "last", "-o", "text", "-o", f"json={js}",
        ],
        out,
    )  # fmt: skip
    assert code in (0, 1)
    doc = json.loads(js.read_text())
    assert doc["windows"]["tz"] == "Europe/Berlin"
    assert doc["windows"]["gate"] == "last"
    assert len(doc["windows"]["windows"]) == len(
        {oracle_label(t.to_pydatetime(), "d", "Europe/Berlin") for t in df["ts"]}
    )
    assert doc["run"]["options"]["window"] == "ts=1d"
    back = Results.model_validate(doc)
    assert back.windows is not None and back.summary == Results.model_validate(doc).summary


def test_every_report_names_the_windows_and_the_time_zone(tmp_path: Path) -> None:
    df = frame(6, 1500, 20)
    late = (df["ts"] >= pd.Timestamp("2024-01-15", tz="UTC")) & (df["sex"] == "F")
    df.loc[late, "y_pred"] = 1  # a violation from the third week on
    data = tmp_path / "d.parquet"
    df.to_parquet(data)
    pol = two_controls(tmp_path)
    outs = {fmt: tmp_path / f"r.{fmt}" for fmt in ("text", "markdown", "junit", "sarif", "json")}
    args = [f"{fmt}={path}" for fmt, path in outs.items()]
    code = main(
        ["check", str(pol), str(data), "--window", "ts=1w", "--window-tz", "Asia/Kolkata",
         "--window-gate", "any", *[x for a in args for x in ("-o", a)]],
        io.StringIO(),
    )  # fmt: skip
    assert code == 1
    first_bad = "2024-01-15"
    for fmt, path in outs.items():
        text = path.read_text()
        assert "Asia/Kolkata" in text, fmt
        assert first_bad in text, fmt
    md = outs["markdown"].read_text()
    assert "### Windows" in md and "| window | rows | value | interval | status |" in md
    assert "calendar weeks (from Monday) of column 'ts'" in outs["text"].read_text()


def test_spark_groups_on_the_window_whatever_its_session_time_zone(tmp_path: Path) -> None:
    """Spark pushes the window into its GROUP BY; a session set to Pacific/Auckland (13
    hours from UTC) changes nothing: the session's zone would move a naive
    ``to_date`` day, and it is restored after the run."""
    pytest.importorskip("pyspark")
    from fairpolicy.data.sources.spark import spark_session

    df = frame(8, 2000, 15)
    text = df.assign(ts=df["ts"].dt.strftime("%Y-%m-%dT%H:%M:%SZ"))
    text.to_csv(tmp_path / "d.csv", index=False)
    df.to_parquet(tmp_path / "d.parquet")
    df.assign(ts=df["ts"].dt.tz_localize(None)).to_parquet(tmp_path / "naive.parquet")
    pol = two_controls(tmp_path)
    spark = spark_session()
    original = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Pacific/Auckland")
    try:
        for name in ("d.csv", "d.parquet", "naive.parquet"):
            got = {
                engine: [
                    (w.window, w.rows, [comparable(f) for f in w.findings])
                    for w in check(
                        str(pol), str(tmp_path / name), engine=engine, window="ts=1d",
                        window_tz="America/New_York", window_gate="any",
                    ).windows.windows  # type: ignore[union-attr]
                ]
                for engine in ("embedded", "spark")
            }  # fmt: skip
            assert got["spark"] == got["embedded"], name
            labels = [oracle_label(t.to_pydatetime(), "d", "America/New_York") for t in df["ts"]]
            assert [(w, n) for w, n, _ in got["spark"]] == sorted(
                (x, labels.count(x)) for x in set(labels)
            )
        assert spark.conf.get("spark.sql.session.timeZone") == "Pacific/Auckland"
    finally:
        spark.conf.set("spark.sql.session.timeZone", original)


def test_html_draws_a_trend_per_control_with_failing_windows_marked(tmp_path: Path) -> None:
    import re
    import xml.dom.minidom

    df = frame(6, 1500, 20)
    late = (df["ts"] >= pd.Timestamp("2024-01-15", tz="UTC")) & (df["sex"] == "F")
    df.loc[late, "y_pred"] = 1
    pol = two_controls(tmp_path)
    res = check(str(pol), df, window="ts=1w", window_gate="any")
    assert res.windows is not None
    page = res.render("html")
    charts = re.findall(r'<svg class="chart trend".*?</svg>', page, flags=re.S)
    assert len(charts) == len(res.findings) == 2
    for chart, f in zip(charts, res.findings, strict=True):
        xml.dom.minidom.parseString(
            chart.replace("<svg ", '<svg xmlns="http://www.w3.org/2000/svg" ', 1)
        )
        marks = re.findall(r'<circle class="window (\w+)" data-window="([\d-]+)"', chart)
        want = [
            (next(g for g in b.findings if g.control_id == f.control_id).status, b.window)
            for b in res.windows.windows
        ]
        assert marks == want
        assert 'class="threshold"' in chart
    assert any(status == "fail" for chart in charts for status, _ in re.findall(
        r'<circle class="window (\w+)" data-window="([\d-]+)"', chart))  # fmt: skip


def _year(n: int = 20_000) -> pd.DataFrame:
    return frame(12, n, 365)


def test_state_runs_in_any_order_equal_one_run_over_a_year_of_daily_data(tmp_path: Path) -> None:
    df = _year()
    pol = two_controls(tmp_path)
    one = check(str(pol), df, window="ts=1d", state=tmp_path / "one.state", deterministic=True)
    rng = np.random.default_rng(0)
    parts = np.array_split(rng.permutation(len(df)), 4)  # rows of every window in every part
    for p in parts[::-1]:
        inc = check(
            str(pol),
            df.iloc[np.sort(p)].reset_index(drop=True),
            window="ts=1d",
            state=tmp_path / "inc.state",
            deterministic=True,
        )
    assert one.windows is not None and inc.windows is not None
    a, b = one.windows.model_dump(mode="json"), inc.windows.model_dump(mode="json")
    sa, sb = a.pop("state"), b.pop("state")
    assert (sa["batches"], sb["batches"], sa["rows"], sb["rows"]) == (1, 4, len(df), len(df))
    assert len(a["windows"]) == 365  # 2024-01-01 .. 2024-12-30
    assert a == b
    assert [f.model_dump() for f in one.findings] == [f.model_dump() for f in inc.findings]
    # and a state's windows hold the values of a run over the rows themselves
    rows = check(str(pol), df, window="ts=1d")
    assert rows.windows is not None
    for x, y in zip(one.windows.windows, rows.windows.windows, strict=True):
        assert (x.window, x.rows) == (y.window, y.rows)
        assert [comparable(f) for f in x.findings] == [comparable(f) for f in y.findings]
        # the sequential gate's exact box and alarm interval too (whole counts either way)
        assert [_alarm(f) for f in x.findings] == [_alarm(f) for f in y.findings]
    assert any(_alarm(f)[0] is not None for w in one.windows.windows for f in w.findings)


def _alarm(f: Finding) -> tuple[Any, Any]:
    return (None if f.ci is None else f.ci.exact_box, f.details.get("alarm_interval"))


def test_state_refuses_the_same_rows_added_twice(tmp_path: Path) -> None:
    df = frame(13, 500, 5)
    data = tmp_path / "d.parquet"
    df.to_parquet(data)
    pol = two_controls(tmp_path)
    state = tmp_path / "s.state"
    argv = ["check", str(pol), str(data), "--window", "ts=1d", "--state", str(state)]
    assert main(argv, io.StringIO()) in (0, 1)
    before = state.read_bytes()
    assert main(argv, io.StringIO()) == 2
    assert state.read_bytes() == before


def test_state_refuses_another_policy_or_binding(tmp_path: Path) -> None:
    df = frame(14, 500, 5)
    pol = two_controls(tmp_path)
    state = tmp_path / "s.state"
    check(str(pol), df, window="ts=1d", state=state)
    other = write_policy(tmp_path, control("dp", threshold="0.3"), name="other.yaml")
    from fairpolicy.errors import DataError

    with pytest.raises(DataError, match="another policy"):
        check(str(other), df.iloc[:10], window="ts=1d", state=state)
    with pytest.raises(DataError, match="another binding"):
        check(str(pol), df.iloc[:10], window="ts=1w", state=state)
    with pytest.raises(DataError, match="another binding"):
        check(str(pol), df.iloc[:10], window="ts=1d", window_tz="Europe/Paris", state=state)
    (tmp_path / "junk.state").write_bytes(b"not arrow")
    with pytest.raises(DataError, match="not a fairpolicy state"):
        check(str(pol), df, window="ts=1d", state=tmp_path / "junk.state")


def test_state_runs_wait_for_each_other(tmp_path: Path) -> None:
    """A run holds an exclusive lock from reading the state to writing it: a second run
    waits (without the lock both would read the same state and one batch would be lost)."""
    import fcntl
    import os
    import threading
    import time

    df = frame(15, 400, 3)
    pol = two_controls(tmp_path)
    state = tmp_path / "s.state"
    fd = os.open(tmp_path / "s.state.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    done: list[Results] = []
    thread = threading.Thread(
        target=lambda: done.append(check(str(pol), df, window="ts=1d", state=state))
    )
    thread.start()
    time.sleep(3)
    assert not done and not state.exists()
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    thread.join(60)
    assert done and state.exists()


def test_state_from_csv_text_columns(tmp_path: Path) -> None:
    """The embedded CSV reader gives dictionary-encoded text: the state keeps the values."""
    df = frame(16, 600, 6)
    df.assign(ts=df["ts"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")).to_csv(tmp_path / "d.csv", index=False)
    pol = two_controls(tmp_path)
    kept = check(str(pol), str(tmp_path / "d.csv"), window="ts=1d", state=tmp_path / "s.state")
    rows = check(str(pol), str(tmp_path / "d.csv"), window="ts=1d")
    assert kept.windows is not None and rows.windows is not None
    for x, y in zip(kept.windows.windows, rows.windows.windows, strict=True):
        assert [comparable(f) for f in x.findings] == [comparable(f) for f in y.findings]


@pytest.mark.parametrize("kind", ["int", "text"])
def test_discrete_windows_agree_on_every_engine(tmp_path: Path, kind: str) -> None:
    pytest.importorskip("duckdb")
    df = frame(17, 1200, 40).assign(week=lambda d: d["ts"].dt.isocalendar().week.astype(int))
    if kind == "text":
        df["week"] = "W" + df["week"].astype(str).str.zfill(2)
    df = df.drop(columns="ts")
    df.to_csv(tmp_path / "d.csv", index=False)
    df.to_parquet(tmp_path / "d.parquet")
    pol = two_controls(tmp_path)
    got = {
        (engine, name): [
            (w.window, w.rows, [comparable(f) for f in w.findings])
            for w in check(
                str(pol), str(tmp_path / name), engine=engine, window="week", window_gate="any"
            ).windows.windows  # type: ignore[union-attr]
        ]
        for engine in ("embedded", "duckdb")
        for name in ("d.csv", "d.parquet")
    }
    first = got[("embedded", "d.csv")]
    want = sorted(
        {str(x) for x in df["week"]},
        key=lambda x: (kind == "text", int(x) if kind == "int" else 0, x),
    )
    assert [w for w, _, _ in first] == want
    for k, v in got.items():
        assert v == first, k


@pytest.mark.parametrize("spaced", [False, True])
def test_group_columns_encoded_once_give_each_window_its_own_groups_and_notes(
    tmp_path: Path, spaced: bool
) -> None:
    """The text group columns are dictionary-encoded once for every window (monitor.as_codes):
    each window still has only the groups its rows hold, and the note on values that differ
    only by surrounding spaces names only the windows holding both forms (such a column is
    left as text)."""
    rng = np.random.default_rng(7)
    days = []
    second = ["F", " F" if spaced else "F", "M", "X"]
    for day, groups in enumerate([["F", "M"], second, ["M", "X"]]):
        n = 120
        days.append(
            pd.DataFrame(
                {
                    "ts": pd.Timestamp("2024-03-01", tz="UTC")
                    + pd.Timedelta(days=day)
                    + pd.to_timedelta(rng.integers(0, 86400, n), unit="s"),
                    "sex": rng.choice(groups, n),
                    "y_true": rng.integers(0, 2, n),
                    "y_pred": rng.integers(0, 2, n),
                }
            )
        )
    df = pd.concat(days, ignore_index=True).sample(frac=1, random_state=1).reset_index(drop=True)
    pol = two_controls(tmp_path)
    res = check(str(pol), df, window="ts=1d", window_tz="UTC", window_gate="any")
    assert res.windows is not None
    assert [w.window for w in res.windows.windows] == ["2024-03-01", "2024-03-02", "2024-03-03"]
    noted = [x for x in res.warnings if "surrounding spaces" in x]
    for w in res.windows.windows:
        rows = df[df["ts"].dt.strftime("%Y-%m-%d") == w.window].reset_index(drop=True)
        alone = check(str(pol), rows)
        assert [comparable(f) for f in w.findings] == [comparable(f) for f in alone.findings]
        mine = [x for x in noted if x.startswith(f"window {w.window}:")]
        theirs = [x for x in alone.warnings if "surrounding spaces" in x]
        assert [x.partition(": ")[2] for x in mine] == theirs
    assert bool(noted) == spaced
