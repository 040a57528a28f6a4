"""Inline SVG charts for ``-o html``: plain strings, no JavaScript, no external resources.

Three charts, each an ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` that
spell out every number it shows (the report also prints them in a table):

- :func:`bar_chart`: one vertical bar per group on a linear axis (fixed 0–1 for
  rates, or scaled to the data), the group's name and ``n`` under its bar,
  bootstrap whiskers, a shaded band and dashed reference/threshold lines.
- :func:`disparity_plot`: one horizontal bar per group from parity (1) to the
  group's ratio, on a log axis (so 0.5 and 2 are equally far from 1), with the
  allowed band shaded.
- :func:`heatmap`: an intersection (rows × columns of a two-column dimension),
  value and ``n`` written in each cell.

Marks carry classes and ``data-group`` attributes (``rect.bar``, ``rect.bar.excluded``,
``rect.cell``, ``path.whisker``) so a browser test can count them. Groups outside the
allowed band are drawn in a second colour *and* labelled "outside"; excluded groups
are hollow (dashed outline) or hatched and labelled "excluded", so nothing depends on
colour alone. Every user-supplied string is escaped here.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

#: colours (Tableau 10): bars, bars outside the band, the band, lines
BAR = "#4c78a8"
OUTSIDE = "#d62728"
BAND = "#59a14f"
INK = "#222"
GRID = "#ddd"
MUTED = "#666"
#: approximate advance of one character at the 11 px label font (DejaVu/Liberation Sans)
CHAR_W = 6.4
#: a white outline behind text that sits over bars and lines
HALO = ' paint-order="stroke" stroke="#fff" stroke-width="3" stroke-linejoin="round"'


def esc(text: object) -> str:
    """HTML-escaped, with invisible control characters shown as escapes."""
    from fairpolicy.formatters._ci import inert

    return escape(inert(text), quote=True)


def num(x: float | None) -> str:
    """A value label: 3 decimals for rates and ratios, fewer digits for big numbers."""
    if x is None or not math.isfinite(x):
        return "—"
    a = abs(x)
    if a >= 2 and float(x).is_integer():  # counts and sizes
        return f"{x:,.0f}"
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.1f}"
    if a != 0 and a < 0.001:
        return f"{x:.2e}"
    return f"{x:.3f}"


def _tick(x: float) -> str:
    return f"{x:.6g}" if abs(x) >= 0.01 or x == 0 else f"{x:.1e}"


def px(x: float) -> str:
    """A coordinate: one decimal, no trailing zeros (keeps the SVG small and stable)."""
    s = f"{x:.1f}"
    return s[:-2] if s.endswith(".0") else s


@dataclass(frozen=True)
class Mark:
    """One group on a chart. ``value`` None with ``excluded`` set: an excluded group."""

    group: str
    n: int
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    #: why the group is not compared (drawn hollow and labelled "excluded")
    excluded: str | None = None
    #: the group's value lies outside the allowed band (second colour + "outside")
    outside: bool = False


@dataclass(frozen=True)
class Band:
    lo: float
    hi: float
    label: str


@dataclass(frozen=True)
class Rule:
    """A horizontal (bar chart) line across the plot."""

    value: float
    label: str
    kind: str = "reference"  # css class: reference | threshold


@dataclass(frozen=True)
class Axis:
    lo: float
    hi: float
    ticks: tuple[float, ...]
    log: bool = False
    #: the fixed 0–1 axis of rates (False: scaled to the data)
    fixed: bool = False

    def frac(self, v: float) -> float:
        """Position of ``v`` along the axis in [0, 1] (clamped)."""
        if self.log:
            v = max(v, self.lo)
            t = (math.log(v) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        else:
            t = (v - self.lo) / (self.hi - self.lo)
        return min(1.0, max(0.0, t))


def rate_axis() -> Axis:
    return Axis(0.0, 1.0, (0.0, 0.25, 0.5, 0.75, 1.0), fixed=True)


def data_axis(values: Sequence[float]) -> Axis:
    """A linear axis from min(0, data) to max(0, data) with 'nice' ticks."""
    lo = min(0.0, *values) if values else 0.0
    hi = max(0.0, *values) if values else 1.0
    if hi == lo:
        hi = lo + 1.0
    raw = (hi - lo) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    lo = math.floor(lo / step) * step
    hi = math.ceil(hi / step) * step
    ticks = tuple(round(lo + i * step, 12) for i in range(round((hi - lo) / step) + 1))
    return Axis(lo, hi, ticks)


_LOG_TICKS = (0.001, 0.01, 0.1, 0.2, 0.25, 0.5, 0.8, 1.0, 1.25, 2.0, 4.0, 5.0, 10.0, 100.0, 1000.0)


def log_axis(values: Sequence[float]) -> Axis:
    """A log axis symmetric around 1 (so 0.5 and 2 are equally far), at least [0.5, 2]."""
    span = math.log(2.0)
    for v in values:
        if v > 0 and math.isfinite(v):
            span = max(span, abs(math.log(v)) + 0.12)
    span = min(span, math.log(1000.0))
    lo, hi = math.exp(-span), math.exp(span)
    ticks = tuple(t for t in _LOG_TICKS if lo <= t <= hi)
    return Axis(lo, hi, ticks, log=True)


def _wrap(name: str, width: int, max_lines: int = 3) -> list[str]:
    """Label lines: an intersection "F & Black" breaks at its " & ", long parts at spaces."""
    lines: list[str] = []
    for i, part in enumerate(name.split(" & ")):
        chunk = textwrap.wrap(("& " if i else "") + part, width, break_long_words=True) or [""]
        lines += chunk
    if len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], lines[max_lines - 1][: width - 1] + "…"]
    return lines


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def svg_open(uid: str, kind: str, width: float, height: float, title: str, desc: str) -> list[str]:
    return [
        f'<svg class="chart {kind}" id="{uid}" role="img" '
        f'aria-labelledby="{uid}-title {uid}-desc" width="{px(width)}" height="{px(height)}" '
        f'viewBox="0 0 {px(width)} {px(height)}" font-family="DejaVu Sans, Liberation Sans, '
        f'Arial, sans-serif" font-size="11">',
        f'<title id="{uid}-title">{esc(title)}</title>',
        f'<desc id="{uid}-desc">{esc(desc)}</desc>',
    ]


def _legend(items: Sequence[tuple[str, str]], x: float, y: float) -> list[str]:
    """One legend line per item: a small swatch (``band``/``reference``/``threshold``/
    ``outside``/``excluded``) and its text."""
    out = []
    for i, (kind, text) in enumerate(items):
        yy = y + i * 15
        if kind == "band":
            sw = f'<rect x="{px(x)}" y="{px(yy - 8)}" width="14" height="9" fill="{BAND}" '
            sw += 'fill-opacity="0.22"/>'
        elif kind == "outside":
            sw = f'<rect x="{px(x)}" y="{px(yy - 8)}" width="14" height="9" fill="{OUTSIDE}"/>'
        elif kind == "excluded":
            sw = (
                f'<rect x="{px(x + 0.5)}" y="{px(yy - 7.5)}" width="13" height="8" fill="none" '
                f'stroke="{MUTED}" stroke-dasharray="3 2"/>'
            )
        elif kind == "outside-border":
            sw = (
                f'<rect x="{px(x + 1)}" y="{px(yy - 7.5)}" width="12" height="8" fill="#fff" '
                f'stroke="{OUTSIDE}" stroke-width="2.5"/>'
            )
        elif kind.startswith("url("):
            sw = (
                f'<rect x="{px(x + 0.5)}" y="{px(yy - 8.5)}" width="13" height="10" '
                f'fill="{kind}" stroke="{MUTED}" stroke-dasharray="3 2"/>'
            )
        elif kind == "whisker":
            sw = (
                f'<path d="M{px(x + 7)} {px(yy - 9)}V{px(yy + 1)}M{px(x + 3)} {px(yy - 9)}'
                f'H{px(x + 11)}M{px(x + 3)} {px(yy + 1)}H{px(x + 11)}" stroke="{INK}"/>'
            )
        else:
            dash = ' stroke-dasharray="5 3"' if kind == "reference" else ""
            sw = (
                f'<line x1="{px(x)}" x2="{px(x + 14)}" y1="{px(yy - 4)}" y2="{px(yy - 4)}" '
                f'stroke="{INK}" stroke-width="1.5"{dash}/>'
            )
        out.append(
            f'<g class="legend-item">{sw}<text x="{px(x + 20)}" y="{px(yy)}">{esc(text)}</text></g>'
        )
    return out


def _whisker(x: float, y1: float, y2: float, group: str, horizontal: bool = False) -> str:
    if horizontal:
        d = f"M{px(y1)} {px(x)}H{px(y2)}M{px(y1)} {px(x - 4)}V{px(x + 4)}M{px(y2)} {px(x - 4)}"
        d += f"V{px(x + 4)}"
    else:
        d = f"M{px(x)} {px(y1)}V{px(y2)}M{px(x - 5)} {px(y1)}H{px(x + 5)}M{px(x - 5)} {px(y2)}"
        d += f"H{px(x + 5)}"
    return (
        f'<path class="whisker" data-group="{esc(group)}" d="{d}" stroke="{INK}" '
        f'stroke-width="1.2" fill="none"/>'
    )


def bar_chart(
    uid: str,
    title: str,
    desc: str,
    marks: Sequence[Mark],
    axis: Axis,
    *,
    band: Band | None = None,
    rules: Sequence[Rule] = (),
    axis_label: str = "value",
    outside_label: str = "outside the allowed band",
) -> str:
    """Vertical bars, one per group, name and ``n`` under each bar."""
    label_w = 14
    lines = {m.group: _wrap(m.group, label_w) for m in marks}
    longest = max((len(s) for ls in lines.values() for s in ls), default=4)
    slot = min(150.0, max(64.0, longest * CHAR_W + 14))
    n_lines = max((len(ls) for ls in lines.values()), default=1)
    legend: list[tuple[str, str]] = []
    if band is not None:
        legend.append(("band", band.label))
    legend += [(r.kind, r.label) for r in rules]
    if any(m.ci_low is not None and m.ci_high is not None for m in marks):
        legend.append(("whisker", "bootstrap confidence interval of the group's value"))
    if any(m.outside for m in marks):
        legend.append(("outside", f"{outside_label} (also labelled “outside”)"))
    if any(m.excluded for m in marks):
        legend.append(("excluded", "excluded from the comparison (hollow, labelled)"))
    left, right = 56.0, 16.0
    legend_w = max((len(t) for _, t in legend), default=0) * CHAR_W + 24
    plot_w = max(slot * len(marks), 420.0, legend_w - left + 20)
    slot = plot_w / max(1, len(marks))
    bar_w = min(56.0, slot * 0.6)
    top = 24.0 + 15 * len(legend) + 14
    plot_h = 220.0
    bottom = top + plot_h
    height = bottom + 10 + 13 * n_lines + 14 + (13 if any(m.outside for m in marks) else 0) + 6
    width = left + plot_w + right

    def y(v: float) -> float:
        return bottom - plot_h * axis.frac(v)

    out = svg_open(uid, "bar-chart", width, height, title, desc)
    out.append(f'<text x="4" y="14" font-weight="bold">{esc(axis_label)}</text>')
    out += _legend(legend, left, 32.0)
    out.append('<g class="grid">')
    for t in axis.ticks:
        yy = y(t)
        out.append(
            f'<line x1="{px(left)}" x2="{px(left + plot_w)}" y1="{px(yy)}" y2="{px(yy)}" '
            f'stroke="{GRID}"/><text x="{px(left - 6)}" y="{px(yy + 4)}" text-anchor="end">'
            f"{esc(_tick(t))}</text>"
        )
    out.append("</g>")
    if band is not None:
        y_hi, y_lo = y(band.hi), y(band.lo)
        out.append(
            f'<rect class="band" x="{px(left)}" y="{px(y_hi)}" width="{px(plot_w)}" '
            f'height="{px(max(0.0, y_lo - y_hi))}" fill="{BAND}" fill-opacity="0.22">'
            f"<title>{esc(band.label)}</title></rect>"
        )
    zero = y(max(axis.lo, min(axis.hi, 0.0)))
    labels: list[str] = []  # value labels go last, over the lines, with a white halo
    for i, m in enumerate(marks):
        cx = left + slot * (i + 0.5)
        x0 = cx - bar_w / 2
        g = esc(m.group)
        if m.value is None:
            why = m.excluded or "no value"
            cls = "bar excluded" if m.excluded else "bar undefined"
            out.append(
                f'<rect class="{cls}" data-group="{g}" x="{px(x0)}" y="{px(top)}" '
                f'width="{px(bar_w)}" height="{px(plot_h)}" fill="none" stroke="{MUTED}" '
                f'stroke-dasharray="4 3"><title>{g}: {esc(why)}</title></rect>'
            )
            word = "excluded" if m.excluded else "no value"
            labels.append(
                f'<text class="bar-note" x="{px(cx + 4)}" y="{px(top + plot_h / 2)}" '
                f'text-anchor="middle" transform="rotate(-90 {px(cx + 4)} {px(top + plot_h / 2)})" '
                f'fill="{MUTED}"{HALO}>{word}</text>'
            )
        else:
            yv = y(m.value)
            y0, h = min(yv, zero), abs(zero - yv)
            fill = OUTSIDE if m.outside else BAR
            cls = "bar outside" if m.outside else "bar"
            out.append(
                f'<rect class="{cls}" data-group="{g}" data-value="{m.value!r}" x="{px(x0)}" '
                f'y="{px(y0)}" width="{px(bar_w)}" height="{px(max(h, 0.5))}" fill="{fill}">'
                f"<title>{g}: {esc(num(m.value))} (n={m.n})</title></rect>"
            )
            lo_y = hi_y = yv  # the value label goes beyond the bar's end (and whisker)
            if m.ci_low is not None and m.ci_high is not None:
                y1, y2 = y(m.ci_high), y(m.ci_low)
                out.append(_whisker(cx, y1, y2, m.group))
                hi_y, lo_y = min(hi_y, y1), max(lo_y, y2)
            label_y = max(lo_y, zero) + 13 if m.value < 0 else min(hi_y, zero) - 4
            labels.append(
                f'<text class="bar-value" x="{px(cx)}" y="{px(label_y)}" text-anchor="middle"'
                f"{HALO}>{esc(num(m.value))}</text>"
            )
        ly = bottom + 14
        out.append(f'<text class="bar-label" data-group="{g}" text-anchor="middle">')
        for j, line in enumerate(lines[m.group]):
            out.append(f'<tspan x="{px(cx)}" y="{px(ly + 13 * j)}">{esc(line)}</tspan>')
        out.append("</text>")
        ny = ly + 13 * len(lines[m.group])
        out.append(
            f'<text class="bar-n" x="{px(cx)}" y="{px(ny)}" text-anchor="middle" '
            f'fill="{MUTED}">n={m.n:,}</text>'
        )
        if m.outside:
            out.append(
                f'<text class="bar-flag" x="{px(cx)}" y="{px(ny + 13)}" text-anchor="middle" '
                f'fill="{OUTSIDE}" font-weight="bold">outside</text>'
            )
    for r in rules:
        yy = y(r.value)
        dash = ' stroke-dasharray="5 3"' if r.kind == "reference" else ""
        out.append(
            f'<line class="{esc(r.kind)}" x1="{px(left)}" x2="{px(left + plot_w)}" '
            f'y1="{px(yy)}" y2="{px(yy)}" stroke="{INK}" stroke-width="1.5"{dash}>'
            f"<title>{esc(r.label)}</title></line>"
        )
    out.append(
        f'<line x1="{px(left)}" x2="{px(left)}" y1="{px(top)}" y2="{px(bottom)}" stroke="{INK}"/>'
        f'<line x1="{px(left)}" x2="{px(left + plot_w)}" y1="{px(zero)}" y2="{px(zero)}" '
        f'stroke="{INK}"/>'
    )
    out += labels
    out.append("</svg>")
    return "\n".join(out)


def disparity_plot(
    uid: str,
    title: str,
    desc: str,
    marks: Sequence[Mark],
    axis: Axis,
    *,
    band: Band | None = None,
    axis_label: str = "ratio to the reference (log scale; 1 = parity)",
) -> str:
    """Horizontal bars from parity (1) to each group's ratio on a log axis."""
    names = {m.group: _clip(m.group, 30) for m in marks}
    name_w = min(200.0, max(60.0, max((len(s) for s in names.values()), default=4) * CHAR_W))
    n_w = 70.0
    left = 8 + name_w + n_w
    plot_w = 520.0
    right = 70.0
    legend: list[tuple[str, str]] = [("threshold", "parity (ratio 1)")]
    if band is not None:
        legend.insert(0, ("band", band.label))
    if any(m.ci_low is not None and m.ci_high is not None for m in marks):
        legend.append(("whisker", "bootstrap confidence interval of the ratio"))
    if any(m.outside for m in marks):
        legend.append(("outside", "outside the allowed band (also labelled “outside”)"))
    if any(m.excluded for m in marks):
        legend.append(("excluded", "excluded from the comparison (hollow, labelled)"))
    top = 24.0 + 15 * len(legend) + 10
    row_h = 26.0
    plot_h = row_h * max(1, len(marks))
    bottom = top + plot_h
    width = left + plot_w + right
    height = bottom + 40

    def x(v: float) -> float:
        return left + plot_w * axis.frac(v)

    out = svg_open(uid, "disparity-plot", width, height, title, desc)
    out.append(f'<text x="4" y="14" font-weight="bold">{esc(axis_label)}</text>')
    out += _legend(legend, 8, 32.0)
    if band is not None:
        x_lo, x_hi = x(band.lo), x(band.hi)
        out.append(
            f'<rect class="band" x="{px(x_lo)}" y="{px(top)}" width="{px(max(0.0, x_hi - x_lo))}" '
            f'height="{px(plot_h)}" fill="{BAND}" fill-opacity="0.22">'
            f"<title>{esc(band.label)}</title></rect>"
        )
    out.append('<g class="grid">')
    for t in axis.ticks:
        xx = x(t)
        out.append(
            f'<line x1="{px(xx)}" x2="{px(xx)}" y1="{px(top)}" y2="{px(bottom)}" stroke="{GRID}"/>'
            f'<text x="{px(xx)}" y="{px(bottom + 16)}" text-anchor="middle">{esc(_tick(t))}</text>'
        )
    out.append("</g>")
    one = x(1.0)
    for i, m in enumerate(marks):
        yc = top + row_h * (i + 0.5)
        g = esc(m.group)
        out.append(
            f'<text class="bar-label" data-group="{g}" x="8" y="{px(yc + 4)}">'
            f"{esc(names[m.group])}</text>"
            f'<text class="bar-n" x="{px(8 + name_w + n_w - 8)}" y="{px(yc + 4)}" '
            f'text-anchor="end" fill="{MUTED}">n={m.n:,}</text>'
        )
        if m.value is None:
            why = m.excluded or "no value"
            cls = "bar excluded" if m.excluded else "bar undefined"
            out.append(
                f'<rect class="{cls}" data-group="{g}" x="{px(left)}" y="{px(yc - 8)}" '
                f'width="{px(plot_w)}" height="16" fill="none" stroke="{MUTED}" '
                f'stroke-dasharray="4 3"><title>{g}: {esc(why)}</title></rect>'
                f'<text class="bar-note" x="{px(left + 6)}" y="{px(yc + 4)}" fill="{MUTED}">'
                f"{esc(_clip(('excluded: ' if m.excluded else '') + why, 80))}</text>"
            )
            continue
        v = m.value
        xv = x(v) if v > 0 else left
        x0, w = min(one, xv), abs(xv - one)
        fill = OUTSIDE if m.outside else BAR
        cls = "bar outside" if m.outside else "bar"
        out.append(
            f'<rect class="{cls}" data-group="{g}" data-value="{v!r}" x="{px(x0)}" '
            f'y="{px(yc - 7)}" width="{px(max(w, 1.5))}" height="14" fill="{fill}">'
            f"<title>{g}: ratio {esc(num(v))} (n={m.n})</title></rect>"
        )
        end = xv
        if m.ci_low is not None and m.ci_high is not None:
            a, b = x(max(m.ci_low, axis.lo)), x(m.ci_high)
            out.append(_whisker(yc, a, b, m.group, horizontal=True))
            end = a if v < 1 else b
        label = num(v) + (" outside" if m.outside else "")
        if v < 1:
            anchor, lx = "end", end - 5
            if lx - len(label) * CHAR_W < left:  # no room on the left: write it past parity
                anchor, lx = "start", max(one, end) + 5
        else:
            anchor, lx = "start", end + 5
        color = OUTSIDE if m.outside else INK
        weight = ' font-weight="bold"' if m.outside else ""
        out.append(
            f'<text class="bar-value" x="{px(lx)}" y="{px(yc + 4)}" text-anchor="{anchor}" '
            f'fill="{color}"{weight}{HALO}>{esc(label)}</text>'
        )
    out.append(
        f'<line class="parity" x1="{px(one)}" x2="{px(one)}" y1="{px(top - 4)}" '
        f'y2="{px(bottom)}" stroke="{INK}" stroke-width="1.5"/>'
        f'<line x1="{px(left)}" x2="{px(left + plot_w)}" y1="{px(bottom)}" y2="{px(bottom)}" '
        f'stroke="{INK}"/>'
    )
    out.append(
        f'<text x="{px(left + plot_w / 2)}" y="{px(bottom + 32)}" text-anchor="middle" '
        f'fill="{MUTED}">ratio (log scale)</text>'
    )
    out.append("</svg>")
    return "\n".join(out)


@dataclass(frozen=True)
class Cell:
    mark: Mark
    row: str
    col: str


def _blue(t: float) -> str:
    """Sequential light-to-dark blue (ColorBrewer Blues endpoints), t in [0, 1]."""
    a, b = (239, 243, 255), (33, 113, 181)
    r, g, bl = (round(a[i] + (b[i] - a[i]) * t) for i in range(3))
    return f"#{r:02x}{g:02x}{bl:02x}"


def heatmap(
    uid: str,
    title: str,
    desc: str,
    row_dim: str,
    col_dim: str,
    rows: Sequence[str],
    cols: Sequence[str],
    cells: Sequence[Cell],
    axis: Axis,
    *,
    value_label: str = "value",
) -> str:
    """Rows × columns of an intersection; value and ``n`` in each cell."""
    by = {(c.row, c.col): c.mark for c in cells}
    col_w = min(170.0, max(96.0, max((len(c) for c in cols), default=4) * CHAR_W + 16))
    row_w = min(200.0, max(70.0, max(len(r) for r in [row_dim, *rows]) * CHAR_W + 16))
    cell_h = 54.0
    legend: list[tuple[str, str]] = []
    if any(m.outside for m in by.values()):
        legend.append(("outside-border", "outside the allowed band: red border, “outside”"))
    if any(m.excluded for m in by.values()):
        legend.append((f"url(#{uid}-hatch)", "excluded from the comparison: hatched, labelled"))
    top = 24.0 + 15 * len(legend) + 30
    left = 8 + row_w
    width = max(left + col_w * len(cols) + 16, 420.0)
    height = top + cell_h * len(rows) + 30
    out = svg_open(uid, "heatmap", width, height, title, desc)
    out.append(
        f'<defs><pattern id="{uid}-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#999" '
        f'stroke-width="2"/></pattern></defs>'
    )
    out.append(
        f'<text x="4" y="14" font-weight="bold">{esc(value_label)}: {esc(row_dim)} (rows) × '
        f"{esc(col_dim)} (columns); darker = higher</text>"
    )
    out += _legend(legend, 8, 32.0)
    for j, c in enumerate(cols):
        out.append(
            f'<text class="col-label" x="{px(left + col_w * (j + 0.5))}" y="{px(top - 8)}" '
            f'text-anchor="middle" font-weight="bold">{esc(_clip(c, 24))}</text>'
        )
    for i, r in enumerate(rows):
        yy = top + cell_h * i
        out.append(
            f'<text class="row-label" x="{px(left - 8)}" y="{px(yy + cell_h / 2 + 4)}" '
            f'text-anchor="end" font-weight="bold">{esc(_clip(r, 28))}</text>'
        )
        for j, c in enumerate(cols):
            xx = left + col_w * j
            cx = xx + col_w / 2
            m = by.get((r, c))
            geo = f'x="{px(xx + 1)}" y="{px(yy + 1)}" width="{px(col_w - 2)}" '
            geo += f'height="{px(cell_h - 2)}"'
            data = f'data-row="{esc(r)}" data-col="{esc(c)}"'
            if m is None:
                out.append(
                    f'<rect class="cell missing" {data} {geo} fill="#f4f4f4" stroke="#ccc">'
                    f"<title>{esc(r)} &amp; {esc(c)}: no rows</title></rect>"
                    f'<text x="{px(cx)}" y="{px(yy + cell_h / 2 + 4)}" text-anchor="middle" '
                    f'fill="{MUTED}">no rows</text>'
                )
                continue
            g = esc(m.group)
            if m.value is None:
                why = m.excluded or "no value"
                out.append(
                    f'<rect class="cell excluded" data-group="{g}" {data} {geo} '
                    f'fill="url(#{uid}-hatch)" stroke="{MUTED}" stroke-dasharray="4 3">'
                    f"<title>{g}: excluded: {esc(why)}</title></rect>"
                    f'<text x="{px(cx)}" y="{px(yy + 22)}" text-anchor="middle" '
                    f'font-weight="bold" paint-order="stroke" stroke="#fff" stroke-width="3">'
                    f"{'excluded' if m.excluded else 'no value'}</text>"
                    f'<text x="{px(cx)}" y="{px(yy + 38)}" text-anchor="middle" '
                    f'paint-order="stroke" stroke="#fff" stroke-width="3">n={m.n:,}</text>'
                )
                continue
            t = axis.frac(m.value)
            ink = "#fff" if t > 0.6 else INK
            border = f'stroke="{OUTSIDE}" stroke-width="3"' if m.outside else 'stroke="#fff"'
            cls = "cell outside" if m.outside else "cell"
            out.append(
                f'<rect class="{cls}" data-group="{g}" data-value="{m.value!r}" {data} {geo} '
                f'fill="{_blue(t)}" {border}><title>{g}: {esc(num(m.value))} (n={m.n})'
                f"</title></rect>"
                f'<text x="{px(cx)}" y="{px(yy + 20)}" text-anchor="middle" font-weight="bold" '
                f'fill="{ink}">{esc(num(m.value))}</text>'
                f'<text x="{px(cx)}" y="{px(yy + 34)}" text-anchor="middle" fill="{ink}">'
                f"n={m.n:,}</text>"
            )
            if m.outside:
                out.append(
                    f'<text x="{px(cx)}" y="{px(yy + 47)}" text-anchor="middle" fill="{ink}" '
                    f'font-weight="bold">outside</text>'
                )
    out.append("</svg>")
    return "\n".join(out)
