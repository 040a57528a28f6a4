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


def trend_chart(results: Results, control_id: str, uid: str) -> str:
    """An SVG trend of one control across every window: the value (line and dots), each
    window's interval (whiskers), the threshold line(s), and the windows whose own
    finding violates the control marked in the second colour (a ring), a short window
    hollow. Drawn from the results only."""
    from fairpolicy.formatters._svg import INK, MUTED, OUTSIDE, data_axis, esc, px, svg_open

    w = results.windows
    f = next((x for x in results.findings if x.control_id == control_id), None)
    if w is None or f is None:
        return ""
    points = []
    for b in w.windows:
        g = next((x for x in b.findings if x.control_id == control_id), None)
        if g is None:
            continue
        lo = g.ci.low if g.has_interval and g.ci is not None else None
        hi = g.ci.high if g.has_interval and g.ci is not None else None
        points.append((b.window, g.value, lo, hi, g.status, b.reason is not None))
    thresholds = (
        [float(t) for t in f.threshold] if isinstance(f.threshold, list)
        else [] if f.threshold is None else [float(f.threshold)]
    )  # fmt: skip
    values = [v for _, v, lo, hi, _, _ in points for v in (v, lo, hi) if v is not None]
    axis = data_axis([*values, *thresholds])
    width, height, left, right, top, bottom = 640.0, 220.0, 56.0, 16.0, 16.0, 42.0
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(len(points), 1)

    def x(i: int) -> float:
        return left + (i + 0.5) * plot_w / n

    def y(v: float) -> float:
        return top + (1 - axis.frac(v)) * plot_h

    title = f"{control_id}: {f.metric_key} per window"
    desc = (
        f"{len(points)} windows ({w.described}); threshold {f.operator} "
        f"{', '.join(f'{t:g}' for t in thresholds)}; violating windows ringed"
    )
    out = svg_open(uid, "trend", width, height, title, desc)
    for t in axis.ticks:
        out.append(
            f'<line x1="{px(left)}" x2="{px(width - right)}" y1="{px(y(t))}" y2="{px(y(t))}" '
            f'stroke="{MUTED}" stroke-opacity="0.25"/>'
            f'<text x="{px(left - 6)}" y="{px(y(t) + 4)}" text-anchor="end">{t:g}</text>'
        )
    for t in thresholds:
        out.append(
            f'<line class="threshold" x1="{px(left)}" x2="{px(width - right)}" y1="{px(y(t))}" '
            f'y2="{px(y(t))}" stroke="{OUTSIDE}" stroke-width="1.5" stroke-dasharray="6 3"/>'
        )
    line = [f"{px(x(i))},{px(y(v))}" for i, (_, v, *_r) in enumerate(points) if v is not None]
    if len(line) > 1:
        out.append(f'<polyline points="{" ".join(line)}" fill="none" stroke="{INK}"/>')
    step = max(1, len(points) // 8)
    for i, (label, v, lo, hi, status, short) in enumerate(points):
        if lo is not None and hi is not None:
            out.append(
                f'<path class="whisker" d="M{px(x(i))} {px(y(lo))}V{px(y(hi))}" '
                f'stroke="{INK}" stroke-opacity="0.5"/>'
            )
        if v is not None:
            bad = status in ("fail", "warn")
            fill = "#fff" if short else (OUTSIDE if bad else INK)
            ring = f' stroke="{OUTSIDE}" stroke-width="2"' if bad else f' stroke="{INK}"'
            out.append(
                f'<circle class="window {esc(status)}" data-window="{esc(label)}" '
                f'cx="{px(x(i))}" cy="{px(y(v))}" r="3.5" fill="{fill}"{ring}>'
                f"<title>{esc(label)}: {v:.6g} ({esc(status)})</title></circle>"
            )
        if i % step == 0:
            out.append(
                f'<text x="{px(x(i))}" y="{px(height - bottom + 14)}" text-anchor="middle">'
                f"{esc(label)}</text>"
            )
    out.append("</svg>")
    return "".join(out)
