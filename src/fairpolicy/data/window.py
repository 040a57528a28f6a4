"""The window axis of a monitoring run (issue 30): ``--window COLUMN=PERIOD`` or
``--window COLUMN``.

A *period* window (``1d``, ``1w``, ``1mo``, ``1q``, ``1y``) is calendar-aligned in one
named time zone (``--window-tz``, default UTC, stated in every output): a day runs from
local midnight to local midnight, a week from Monday (ISO), a month from its first day.
Its label is the window's first day, ``YYYY-MM-DD``. Timestamps with a zone or offset are
instants; timestamps without one are read as UTC; a date column is a calendar day, with
no zone. A *discrete* window (``--window COLUMN``) takes each distinct text of the
column (a week number, a batch name) as one window, ordered as numbers when every label
is one, else as text.

Every engine computes the same key: the embedded engine here (:func:`window_keys`), DuckDB
and Spark inside their ``GROUP BY`` (:func:`duckdb_key`, :func:`spark_key`). Rows whose
window column is empty belong to no window; the run says how many.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fairpolicy.errors import DataError, UsageError

if TYPE_CHECKING:
    import pyarrow as pa
    from numpy.typing import NDArray

#: the period units: name → (pyarrow floor unit, DuckDB/Spark date_trunc unit, words)
PERIODS = {
    "d": ("day", "day", "days"),
    "w": ("week", "week", "weeks (from Monday)"),
    "mo": ("month", "month", "months"),
    "q": ("quarter", "quarter", "quarters"),
    "y": ("year", "year", "years"),
}

#: the name of the window key among a table's columns (engines)
KEY = "__window"


@dataclass(frozen=True)
class WindowSpec:
    """One run's window axis."""

    column: str
    #: ``d``, ``w``, ``mo``, ``q``, ``y``; None: the column's own values are the windows
    period: str | None = None
    tz: str = "UTC"

    @property
    def text(self) -> str:
        """As written on the command line (``ts=1w``, ``week``)."""
        return self.column if self.period is None else f"{self.column}=1{self.period}"

    def describe(self) -> str:
        """One line every output states."""
        if self.period is None:
            return f"one window per value of column '{self.column}'"
        return (
            f"calendar {PERIODS[self.period][2]} of column '{self.column}' in time zone {self.tz}"
        )

    def as_options(self) -> dict[str, Any]:
        return {"window": self.text, "window_tz": self.tz if self.period else None}


def parse_window(text: str, tz: str | None = None) -> WindowSpec:
    """``COLUMN=PERIOD`` or ``COLUMN``, and ``--window-tz``; UsageError naming the fix."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError(
            f"--window needs COLUMN=PERIOD or COLUMN, got {text!r}.",
            hint="e.g. --window decided_at=1w (calendar weeks) or --window week (a column "
            "that already holds the period)",
        )
    column, sep, period = text.rpartition("=")
    if not sep:
        if tz is not None:
            raise UsageError(
                f"--window-tz {tz}: the window '{text}' is a column's own values, with no "
                "calendar, so a time zone means nothing.",
                hint=f"drop --window-tz, or give a period: --window {text}=1d",
            )
        return WindowSpec(column=text)
    if not column.strip():
        raise UsageError(
            f"--window {text}: no column before '=': name the timestamp column to cut into "
            "periods.",
            hint=f"e.g. --window decided_at={period.strip() or '1w'}",
        )
    m = re.fullmatch(r"(\d+)(d|w|mo|q|y)", period.strip().lower(), re.ASCII)
    if m is None:
        raise UsageError(
            f"--window {text}: unknown period '{period}'. Periods: 1d (day), 1w (week from "
            "Monday), 1mo (month), 1q (quarter), 1y (year), calendar-aligned.",
            hint="e.g. --window decided_at=1w",
        )
    if m.group(1) != "1":
        raise UsageError(
            f"--window {text}: only single calendar periods are supported (1d, 1w, 1mo, 1q, "
            f"1y), not {m.group(1)} of them: a {period} window has no calendar alignment.",
            hint=f"use --window {column}=1{m.group(2)} (and --min-window-rows N --pool-windows "
            "to pool small windows)",
        )
    return WindowSpec(column=column, period=m.group(2), tz=check_tz(tz or "UTC"))


def check_tz(tz: str) -> str:
    """The IANA zone name, or a UsageError."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        if not re.fullmatch(r"[A-Za-z0-9_+\-/]{1,64}", tz, re.ASCII) or ".." in tz:
            raise ValueError(tz)
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise UsageError(
            f"--window-tz {tz!r}: not a time zone name the IANA database knows.",
            hint="name a zone such as UTC, Europe/Berlin or America/New_York",
        ) from None
    return tz


def _not_a_timestamp(spec: WindowSpec, kind: str, file: str | None) -> DataError:
    return DataError(
        f"--window {spec.text}: the column holds {kind}, not timestamps or dates, so it "
        "cannot be cut into calendar periods.",
        file=file or "<DataFrame>",
        column=spec.column,
        hint=f"give a timestamp column (ISO 8601 text such as 2024-03-01T10:00:00Z in a "
        f"CSV), or use the column's own values as windows: --window {spec.column}",
    )


def _first_unparsable(arr: pa.ChunkedArray) -> tuple[int, str] | None:
    """The first row (1-based, as a data row of the file) whose text is not an ISO 8601
    timestamp or date, and its text; None when every value reads as one (the column was
    still read as text, e.g. for offsets that differ from row to row)."""
    import datetime as dt

    row = 0
    for chunk in arr.chunks:
        for value in chunk.to_pylist():
            row += 1
            if value is None or not value.strip():
                continue
            try:
                dt.datetime.fromisoformat(value.strip())
            except ValueError:
                return row, value if len(value) <= 60 else value[:57] + "..."
    return None


def window_keys(
    arr: pa.ChunkedArray, spec: WindowSpec, file: str | None
) -> tuple[NDArray[np.int64], list[str]]:
    """Each row's window index (-1: no window) and the labels in window order, computed
    from the column as the embedded engine read it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if spec.period is None:
        text = arr.cast(pa.string()) if not pa.types.is_string(arr.type) else arr
        return _index(text)
    t = arr.type
    if pa.types.is_dictionary(t):
        arr, t = arr.cast(t.value_type), t.value_type
    if pa.types.is_timestamp(t) and spec.tz == "UTC" and spec.period in ("d", "w"):
        fast = _utc_days(arr, t.unit, spec.period == "w")
        if fast is not None:
            return fast
    if pa.types.is_timestamp(t):
        zoned = arr if t.tz is not None else pc.assume_timezone(arr, "UTC")
        local = pc.local_timestamp(zoned.cast(pa.timestamp(t.unit, tz=spec.tz)))
    elif pa.types.is_date(t):
        local = arr.cast(pa.timestamp("s"))
    else:
        kind = f"values of type {t}"
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            bad = _first_unparsable(arr)
            if bad is not None:
                kind += f" (data row {bad[0]} holds {bad[1]!r}, not an ISO 8601 timestamp)"
        raise _not_a_timestamp(spec, kind, file)
    unit = PERIODS[spec.period][0]
    floored = pc.floor_temporal(local, unit=unit, week_starts_monday=True)
    return _index(floored.cast(pa.timestamp("s")).cast(pa.date32()))


#: a timestamp unit's ticks per day
_PER_DAY = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}


def _utc_days(
    arr: pa.ChunkedArray, unit: str, weeks: bool
) -> tuple[NDArray[np.int64], list[str]] | None:
    """:func:`window_keys` of UTC days or weeks (from Monday) in integer arithmetic: the
    same indices and labels as the calendar path (a UTC day is a fixed number of ticks),
    without Arrow's zone conversion and calendar floor. None (use the calendar path) when
    the days span more than 2**20 or leave the years 1..9999."""
    import datetime as dt

    import pyarrow as pa

    n = len(arr)
    if n == 0:
        return np.zeros(0, np.int64), []
    # each row's day, written chunk by chunk into one array (one pass, no concatenation)
    days = np.empty(n, np.int64)
    valid: NDArray[np.bool_] | None = None  # None: no nulls (no masks, each a pass)
    at = 0
    for chunk in arr.chunks:
        m = len(chunk)
        ints = chunk.cast(pa.int64())
        if chunk.null_count:
            if valid is None:
                valid = np.ones(n, bool)
            valid[at : at + m] = chunk.is_valid().to_numpy(zero_copy_only=False)
            ints = ints.fill_null(0)
        ticks = np.asarray(ints.to_numpy(zero_copy_only=False), np.int64)
        np.floor_divide(ticks, _PER_DAY[unit], out=days[at : at + m])
        at += m
    if weeks:  # 1970-01-01 was a Thursday: day d is (d + 3) % 7 days after a Monday
        days -= (days + 3) % 7
    if valid is not None and not valid.any():
        return np.full(n, -1, np.int64), []
    seen = days if valid is None else days[valid]
    lo, hi = int(seen.min()), int(seen.max())
    epoch = dt.date(1970, 1, 1).toordinal()
    if hi - lo >= 1 << 20 or lo + epoch < 1 or hi + epoch > dt.date.max.toordinal():
        return None
    if valid is not None:
        days[~valid] = lo
    days -= lo  # each row's day from the first (in place: days is ours)
    present = np.bincount(days if valid is None else days[valid], minlength=hi - lo + 1) > 0
    rank = np.cumsum(present, dtype=np.int64) - 1
    codes: NDArray[np.int64] = rank[days]
    if valid is not None:
        codes[~valid] = -1
    labels = [dt.date.fromordinal(lo + epoch + int(i)).isoformat() for i in np.flatnonzero(present)]
    return codes, labels


def _index(labels: pa.ChunkedArray | pa.Array) -> tuple[NDArray[np.int64], list[str]]:
    """Row → window index in window order, and the window labels (text, or dates written
    as ISO days)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(labels)
    chunks = enc.chunks if isinstance(enc, pa.ChunkedArray) else [enc]
    if not chunks:
        return np.zeros(0, np.int64), []
    enc = pa.chunked_array(chunks).unify_dictionaries()
    values = enc.chunk(0).dictionary.to_pylist() if enc.num_chunks else []
    dictionary = [v if isinstance(v, str) else str(v) for v in values]  # dates: ISO
    codes = np.concatenate(
        [np.asarray(c.indices.fill_null(-1).to_numpy(zero_copy_only=False)) for c in enc.chunks]
    ).astype(np.int64)
    order = sorted(range(len(dictionary)), key=lambda i: window_order(dictionary[i]))
    rank = np.empty(len(dictionary) + 1, np.int64)
    rank[-1] = -1
    rank[np.asarray(order, np.int64)] = np.arange(len(order))
    return rank[codes], [dictionary[i] for i in order]


def window_order(label: str) -> tuple[int, float, str]:
    """Numbers first in numeric order, then text (ISO dates sort as text)."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def window_end(label: str, spec: WindowSpec) -> str | None:
    """The first day after a period window (its exclusive end), None for discrete ones."""
    if spec.period is None:
        return None
    import datetime as dt

    d = dt.date.fromisoformat(label)
    if spec.period == "d":
        return (d + dt.timedelta(days=1)).isoformat()
    if spec.period == "w":
        return (d + dt.timedelta(days=7)).isoformat()
    months = {"mo": 1, "q": 3, "y": 12}[spec.period]
    m = d.month - 1 + months
    return dt.date(d.year + m // 12, m % 12 + 1, 1).isoformat()


def duckdb_key(ref: str, column_type: str, spec: WindowSpec, text: bool) -> str:
    """SQL for a period window's label (``YYYY-MM-DD``) of one row; a value that is no
    timestamp becomes ``'!' || value`` (the caller refuses it). ``ref``: the quoted
    column; ``column_type``: DuckDB's type of it (ignored for CSV text)."""
    assert spec.period is not None
    unit = PERIODS[spec.period][1]
    tz = "'" + spec.tz.replace("'", "''") + "'"  # an IANA name (check_tz): no quote in it

    def floor(local: str) -> str:
        return f"strftime(CAST(date_trunc('{unit}', {local}) AS DATE), '%Y-%m-%d')"

    if text:
        date_only = f"regexp_full_match(trim({ref}), '\\d{{4}}-\\d{{2}}-\\d{{2}}')"
        instant = f"TRY_CAST(trim({ref}) AS TIMESTAMPTZ)"
        key = (
            f"CASE WHEN {date_only} THEN {floor(f'TRY_CAST(trim({ref}) AS DATE)')} "
            f"ELSE {floor(f'timezone({tz}, {instant})')} END"
        )
        empty = f"{ref} IS NULL OR trim({ref}) = ''"
        return f"CASE WHEN {empty} THEN NULL ELSE coalesce({key}, '!' || {ref}) END"
    t = column_type.upper()
    if t == "DATE":
        return floor(ref)
    if t.startswith("TIMESTAMP WITH TIME ZONE") or t == "TIMESTAMPTZ":
        return floor(f"timezone({tz}, {ref})")
    if t.startswith("TIMESTAMP"):
        return floor(f"timezone({tz}, timezone('UTC', {ref}))")
    return f"CASE WHEN {ref} IS NULL THEN NULL ELSE '!' || CAST({ref} AS VARCHAR) END"


#: microseconds per day
_US_PER_DAY = 86_400_000_000


def duckdb_day_key(column_type: str, spec: WindowSpec, ref: str) -> str | None:
    """SQL for a UTC day or week (from Monday) of a timestamp as a whole number of days
    since 1970-01-01 (the first day of the week for weeks), or None when the window
    needs the calendar path (another zone or period, text or dates). An integer is
    cheaper to compute and to group on than a label; :func:`duckdb_day_label` turns the
    grouped numbers into the labels :func:`duckdb_key` writes. A UTC day is a fixed number
    of ticks, and a naive timestamp is read as UTC."""
    if spec.period not in ("d", "w") or spec.tz != "UTC":
        return None
    if not column_type.upper().startswith("TIMESTAMP"):
        return None
    us, d = f"epoch_us({ref})", _US_PER_DAY
    floor_mod = f"((({us}) % {d}) + {d}) % {d}"  # a floor whatever the sign
    day = f"((({us}) - {floor_mod}) // {d})"
    if spec.period == "w":  # 1970-01-01 was a Thursday: day d is (d + 3) mod 7 after Monday
        day = f"({day} - ((({day} + 3) % 7) + 7) % 7)"
    return day


def duckdb_day_label(day: str) -> str:
    """SQL for the label ``YYYY-MM-DD`` of a :func:`duckdb_day_key` number (NULL: NULL)."""
    return f"strftime(DATE '1970-01-01' + CAST({day} AS INTEGER), '%Y-%m-%d')"


def refuse_bad_keys(labels: list[str], spec: WindowSpec, file: str | None) -> None:
    """DataError naming the first engine label that is no timestamp (``'!' || value``)."""
    bad = [x for x in labels if x.startswith("!")]
    if bad:
        raise _not_a_timestamp(spec, f"text such as {bad[0][1:][:40]!r}", file)
