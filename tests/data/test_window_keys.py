"""UTC day and week windows in integer arithmetic (data/window._utc_days) give the same
window of every row as Arrow's zone conversion and calendar floor (the path every other
zone takes): "Etc/UTC" is the same zone by another name, so it takes the calendar path."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.data import window as win
from fairpolicy.data.window import WindowSpec, window_keys


@settings(max_examples=60, deadline=None)
@given(
    unit=st.sampled_from(["s", "ms", "us", "ns"]),
    period=st.sampled_from(["d", "w"]),
    zone=st.sampled_from([None, "UTC", "Europe/Paris"]),
    seed=st.integers(0, 10_000),
    n=st.integers(0, 300),
    span=st.sampled_from([3, 40, 2000]),
    nulls=st.booleans(),
    chunks=st.integers(1, 3),
)
def test_utc_days_and_weeks_equal_the_calendar_path(
    unit: str, period: str, zone: str | None, seed: int, n: int, span: int, nulls: bool, chunks: int
) -> None:
    rng = np.random.default_rng(seed)
    per_second = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9}[unit]
    start = -400 * 86_400 if unit != "ns" else 0  # before 1970 too (ns: int64 range)
    seconds = start + rng.integers(0, span * 86_400, n)
    ticks = seconds * per_second + rng.integers(0, per_second, n)
    mask = rng.random(n) < 0.2 if nulls else None
    arr = pa.array(ticks, pa.timestamp(unit, tz=zone), mask=mask)
    cuts = sorted(rng.integers(0, n + 1, chunks - 1).tolist())
    parts = [arr.slice(a, b - a) for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    chunked = pa.chunked_array(parts, type=arr.type)
    assert win._utc_days(chunked, unit, period == "w") is not None or n == 0 or nulls
    fast = window_keys(chunked, WindowSpec("ts", period, "UTC"), None)
    slow = window_keys(chunked, WindowSpec("ts", period, "Etc/UTC"), None)
    assert fast[1] == slow[1]
    assert fast[0].tolist() == slow[0].tolist()
