"""What every report shows of a monitoring run (``--window``): one line naming the window
axis (column, period, time zone, gate) and, per control, its newest windows. Rendering
only: every status was decided by :func:`fairpolicy.decide.window_gate`."""

from __future__ import annotations

from fairpolicy.results import Results

#: the newest windows each report lists per control (the JSON has every one)
NEWEST = 5


def heading(results: Results) -> str | None:
    """``12 windows: calendar weeks (from Monday) of column 'ts' in time zone UTC, from
    2024-01-01 to 2024-03-18; gate sequential`` (None: not a monitoring run)."""
    w = results.windows
    if w is None:
        return None
    blocks = w.windows
    span = f", from {blocks[0].window} to {blocks[-1].window}" if blocks else ""
    extra = ""
    if w.min_rows is not None:
        extra += f"; --min-window-rows {w.min_rows}" + (" (pooled)" if w.pool else "")
    if w.reference is not None:
        extra += f"; reference {w.reference}"
    return f"{len(blocks)} windows: {w.described}{span}; gate {w.gate}{extra}"


def newest(results: Results, n: int = NEWEST) -> list[tuple[str, list[tuple[str, ...]]]]:
    """Per control: its newest ``n`` windows as (window, rows, value, interval, status)."""
    w = results.windows
    if w is None:
        return []
    out = []
    for f in results.findings:
        cells: list[tuple[str, ...]] = []
        for b in w.windows[-n:]:
            g = next((x for x in b.findings if x.control_id == f.control_id), None)
            if g is None:
                continue
            value = "—" if g.value is None else f"{g.value:.4g}"
            ci = "" if not g.has_interval or g.ci is None else f"[{g.ci.low:.4g}, {g.ci.high:.4g}]"
            cells.append((b.window, str(b.rows), value, ci, g.status.upper()))
        out.append((f.control_id, cells))
    return out
