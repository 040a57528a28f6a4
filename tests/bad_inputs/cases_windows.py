"""Bad-input rows of monitoring runs (issue 30: ``--window``, ``--window-tz``,
``--window-gate``, ``--min-window-rows``, ``--pool-windows``, ``--reference``)."""

from __future__ import annotations

from tests.bad_inputs.cases import Case, policy, rows


def _timed(n: int = 60) -> str:
    """The default rows with a timestamp column over three days and a text column."""
    body = rows(n).strip().splitlines()
    out = ["y_true,y_pred,sex,ts,note"]
    out += [f"{r},2024-03-0{1 + i % 3}T12:00:00Z,x{i}" for i, r in enumerate(body)]
    return "\n".join(out) + "\n"


DATA = _timed()

CASES = [
    Case(
        "window-unknown-period",
        ("unknown period", "1d"),
        data=DATA,
        args=("--window", "ts=1fortnight"),
        key=None,
    ),
    Case(
        "window-multiple-periods",
        ("only single calendar periods",),
        data=DATA,
        args=("--window", "ts=2w"),
    ),
    Case(
        "window-no-column-before-the-period",
        ("no column before '='", "decided_at=1w"),
        data=DATA,
        args=("--window", "=1w"),
        note="was 'unknown period 1w', which is a valid period",
    ),
    Case(
        "window-empty",
        ("--window needs COLUMN=PERIOD",),
        data=DATA,
        args=("--window", " "),
    ),
    Case(
        "window-column-missing",
        ("no column 'tss'", "Did you mean"),
        data=DATA,
        args=("--window", "tss=1d"),
        column="tss",
    ),
    Case(
        "window-column-not-timestamp",
        ("not timestamps or dates", "--window note"),
        data=DATA,
        args=("--window", "note=1d"),
        column="note",
    ),
    Case(
        "window-timestamps-written-two-ways",
        ("not timestamps or dates", "'03/01/2024 12:00'"),
        data=DATA.replace("2024-03-02T12:00:00Z", "03/01/2024 12:00", 1),
        args=("--window", "ts=1d"),
        column="ts",
        note="named no value: a timestamp column with one row written otherwise read as text",
    ),
    Case(
        "window-column-numeric",
        ("not timestamps or dates",),
        data=DATA,
        args=("--window", "y_true=1w"),
        column="y_true",
    ),
    Case(
        "window-bad-tz",
        ("not a time zone name", "Europe/Berlin"),
        data=DATA,
        args=("--window", "ts=1d", "--window-tz", "Mars/Olympus"),
    ),
    Case(
        "window-tz-path",
        ("not a time zone name",),
        data=DATA,
        args=("--window", "ts=1d", "--window-tz", "../../etc/passwd"),
    ),
    Case(
        "window-tz-on-discrete",
        ("means nothing",),
        data=DATA,
        args=("--window", "ts", "--window-tz", "UTC"),
    ),
    Case(
        "window-tz-without-window",
        ("--window-tz needs --window",),
        data=DATA,
        args=("--window-tz", "UTC"),
    ),
    Case(
        "window-reference-outside-data",
        ("no window of the data lies in that range", "2024-03-01"),
        data=DATA,
        args=("--window", "ts=1d", "--reference", "2023-01-01..2023-12-31"),
        column="ts",
    ),
    Case(
        "window-reference-unreadable",
        ("write FROM..TO",),
        data=DATA,
        args=("--window", "ts=1d", "--reference", "2024-03-01"),
    ),
    Case(
        "window-reference-reversed",
        ("FROM is after TO",),
        data=DATA,
        args=("--window", "ts=1d", "--reference", "2024-03-02..2024-03-01"),
    ),
    Case(
        "window-with-baseline",
        ("pass --reference FROM..TO instead of --baseline",),
        data=DATA,
        args=("--window", "ts=1d", "--baseline", "{tmp}/none.json"),
    ),
    Case(
        "window-min-rows-zero",
        ("--min-window-rows must be a whole number",),
        data=DATA,
        args=("--window", "ts=1d", "--min-window-rows", "0"),
    ),
    Case(
        "window-pool-without-min",
        ("give --min-window-rows N too",),
        data=DATA,
        args=("--window", "ts=1d", "--pool-windows"),
    ),
    Case(
        "window-regression-metric",
        ("regression metric", "windows support classification"),
        policy=policy(metric_key="mae_parity", threshold='"1"'),
        data=DATA,
        args=("--window", "ts=1d"),
        control="c1",
    ),
    Case(
        "window-state-without-window",
        ("--state needs --window",),
        data=DATA,
        args=("--state", "{tmp}/s.state"),
    ),
    Case(
        "window-state-is-a-folder",
        ("not a regular file",),
        data=DATA,
        args=("--window", "ts=1d", "--state", "{tmp}"),
    ),
]
