"""What the HTML report draws for one finding: display helpers (operator, threshold,
status badge) and the chart view (bars, bands, disparity plot) checked against the
numbers, so a chart never shows a rule the decision did not apply.  The encoding
is described in :mod:`fairpolicy.formatters.html`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from fairpolicy.exact import written_parts
from fairpolicy.formatters import _svg
from fairpolicy.formatters._ci import STATUS_WORD, threshold
from fairpolicy.formatters._svg import Axis, Band, Mark, Rule, esc, num

if TYPE_CHECKING:
    from fairpolicy.metrics.base import MetricSpec
    from fairpolicy.results import Finding

OPS = {
    "lt": "<",
    "le": "<=",
    "lte": "<=",
    "gt": ">",
    "ge": ">=",
    "gte": ">=",
    "eq": "==",
    "ne": "!=",
}

# ---------------------------------------------------------------------------
# small helpers


def spec_of(key: str) -> MetricSpec | None:
    from fairpolicy.metrics.registry import lookup

    try:
        return lookup(key)
    except KeyError:
        return None


def near(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def display_op(f: Finding) -> str:
    return OPS.get(f.operator, f.operator)


def satisfies(x: float, op: str, t: float | list[float] | None) -> bool | None:
    """Whether ``x <op> t`` (display only: which bars to flag). None: not comparable."""
    if isinstance(t, list):
        return t[0] <= x <= t[1] if op == "between" and len(t) == 2 else None
    if t is None:
        return None
    checks = {
        "<": x < t,
        "<=": x <= t,
        ">": x > t,
        ">=": x >= t,
        "==": x == t,
        "!=": x != t,
    }
    return checks.get(op)


def in_band(v: float, band: Band | None) -> bool:
    """``v`` in the band, counting a value on its edge (to rounding) as inside."""
    if band is None:
        return True
    return (band.lo <= v or near(v, band.lo)) and (v <= band.hi or near(v, band.hi))


def threshold_text(f: Finding) -> str:
    return threshold(f)


def num4(x: float | None) -> str:
    if x is None:
        return "—"
    if abs(x) >= 2 and float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.4f}"


def icon_svg(status: str) -> str:
    return (
        f'<svg class="icon" width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">'
        f'<use href="#icon-{esc(status)}"/></svg>'
    )


def badge(status: str, extra: str = "") -> str:
    word = STATUS_WORD.get(status, status.upper())
    return (
        f'<span class="badge s-{esc(status)}">{icon_svg(status)}'
        f'<span class="word">{esc(word)}</span>{esc(extra)}</span>'
    )


# ---------------------------------------------------------------------------
# what to draw for one finding


@dataclass
class ChartView:
    """Everything the charts and the group table of one finding need."""

    label: str
    marks: list[Mark] = field(default_factory=list)
    axis: Axis = field(default_factory=_svg.rate_axis)
    band: Band | None = None
    rules: list[Rule] = field(default_factory=list)
    show_bars: bool = True
    #: the disparity plot (ratio metrics)
    ratios: list[Mark] | None = None
    ratio_axis: Axis | None = None
    ratio_band: Band | None = None
    ratio_note: str = ""
    notes: list[str] = field(default_factory=list)
    #: what a flagged ("outside") group broke
    outside_text: str = "outside the allowed band"


def group_value_label(f: Finding, spec: MetricSpec | None) -> str:
    """What the group values are: the metric's ``rate`` (or the component that drives an
    equalized-odds value) from its details, else the quantity its summary takes max − min of."""
    rate = f.details.get("rate", f.details.get("driven_by"))
    if isinstance(rate, str):
        label = rate.replace("_", " ")
    elif spec is not None and spec.summary.startswith("max − min "):
        label = spec.summary.removeprefix("max − min ")
        for cut in (" across", " (", " P(", ","):
            label = label.split(cut)[0]
    else:
        label = "per-group value"
    cls = f.details.get("worst_class")
    if cls is not None and f.groups:
        label += f" of class {cls} (the class with the largest gap)"
    return label


def written(f: Finding) -> list[str]:
    """The threshold's bounds as the policy wrote them (``0.09999999999999999999``, not
    ``0.1``): the labels print these, the geometry uses the floats."""
    return written_parts(f.threshold, f.threshold_written)[0]


def operator_band(
    op: str,
    t: float | list[float] | None,
    axis: Axis,
    what: str,
    texts: Sequence[str] = (),
) -> Band | None:
    """The region of ``axis`` that ``<op> t`` allows (labelled with ``texts``, the
    threshold as written, when given)."""
    if isinstance(t, list):
        if op == "between" and len(t) == 2:
            lo, hi = texts if len(texts) == 2 else (f"{t[0]:g}", f"{t[1]:g}")
            return Band(t[0], t[1], f"allowed: {lo} ≤ {what} ≤ {hi}")
        return None
    if t is None:
        return None
    shown = texts[0] if len(texts) == 1 else f"{t:g}"
    if op in (">", ">="):
        return Band(t, axis.hi, f"allowed: {what} {op} {shown}")
    if op in ("<", "<="):
        return Band(axis.lo, t, f"allowed: {what} {op} {shown}")
    return None


def finding_view(f: Finding) -> ChartView:
    spec = spec_of(f.metric_key)
    op, t = display_op(f), f.threshold
    tw = written(f)  # the labels print the threshold as written
    label = group_value_label(f, spec)
    view = ChartView(label=label)
    compared = [g for g in f.groups if g.value is not None]
    vals = [g.value for g in compared if g.value is not None]
    base = [Mark(g.group, g.n, g.value, g.ci_low, g.ci_high) for g in f.groups]
    base += [Mark(e.group, e.n, None, excluded=e.reason) for e in f.excluded_groups]
    view.marks = base
    if not vals:
        view.show_bars = False
        if base:
            view.notes.append("No group has a value to compare; the table lists why.")
        return view
    value = f.value
    hi_g = max(compared, key=lambda g: g.value or 0.0) if compared else None
    top = max(vals) if vals else None
    # the direction of the quantity measured (recorded on the finding; a key's default
    # only for results written before it was): accuracy_gap is a gap whatever its key
    better, ideal = (
        (f.better, f.ideal)
        if f.better is not None
        else ((spec.better, spec.ideal) if spec is not None else (None, None))
    )
    is_ratio = better == "higher" and ideal == 1.0
    ratios: list[Mark] | None = None
    extra: list[float] = []
    if is_ratio and value is not None and vals and top is not None and hi_g is not None:
        if any(near(v, 1.0) for v in vals) and any(near(v, value) for v in vals):
            # the group values are the ratios (a reference group sits at 1)
            ratios = list(base)
            view.show_bars = False
            view.label = label = "ratio to the reference group" + (
                f" ({label})" if label != "per-group value" else ""
            )
            view.ratio_note = (
                "Each bar runs from parity (1) to the group's ratio to the reference group; "
                f"the control's value is {num(value)} (the ratio that decides)."
            )
        elif top > 0 and near(min(vals) / top, value):
            ratios = [
                Mark(m.group, m.n, None if m.value is None else m.value / top, excluded=m.excluded)
                for m in base
            ]
            view.ratio_note = (
                f"Each bar runs from parity (1) to the group's {label} divided by the highest, "
                f"{hi_g.group} ({num(top)}); the smallest ratio is the control's value, "
                f"{num(value)}. Whiskers are on the rate chart only."
            )
            view.rules.append(Rule(top, f"reference: the highest group, {hi_g.group} ({num(top)})"))
            if isinstance(t, list) and op == "between" and len(t) == 2:
                view.band = Band(
                    t[0] * top, t[1] * top, f"allowed: {tw[0]} to {tw[-1]} × the highest group"
                )
            elif isinstance(t, float | int) and op in (">", ">="):
                view.band = Band(t * top, top, f"allowed: {op} {tw[0]} × the highest group")
                extra.append(t * top)
            if view.band is not None:
                view.notes.append(
                    f"Rate chart: the shaded band is the range a group's {label} must reach — "
                    f"at least {tw[0]} × the highest group's."
                )
    if ratios is not None:
        rvals = [v for m in ratios for v in (m.value, m.ci_low, m.ci_high) if v is not None]
        rvals += t if isinstance(t, list) else ([t] if t is not None and t > 0 else [])
        raxis = _svg.log_axis(rvals)
        view.ratio_axis = raxis
        view.ratio_band = operator_band(op, t, raxis, "ratio", tw)
        view.ratios = [
            replace(m, outside=m.value is not None and satisfies(m.value, op, t) is False)
            for m in ratios
        ]
        if view.band is not None:
            view.marks = [
                replace(m, outside=m.value is not None and not in_band(m.value, view.band))
                for m in base
            ]
    elif (
        value is not None
        and len(vals) >= 2
        and top is not None
        and hi_g is not None
        and (better is None or better == "lower")
        and near(top - min(vals), value)
        and op in ("<", "<=")
        and isinstance(t, float | int)
    ):
        # anchor the band at the best-placed group: the extreme opposite the worst group
        low = min(vals)
        worst = next((g.value for g in compared if g.group == f.worst_group), None)
        anchor_low = worst is not None and near(worst, top) and not near(worst, low)
        ref_g = min(compared, key=lambda g: g.value or 0.0) if anchor_low else hi_g
        ref = low if anchor_low else top
        side = "lowest" if anchor_low else "highest"
        lo_b, hi_b = (ref, ref + t) if anchor_low else (ref - t, ref)
        view.band = Band(lo_b, hi_b, f"allowed band: within {tw[0]} of the reference group")
        view.rules.append(Rule(ref, f"reference: the {side} group, {ref_g.group} ({num(ref)})"))
        view.marks = [
            replace(
                m, outside=m.value is not None and satisfies(abs(ref - m.value), op, t) is False
            )
            for m in base
        ]
        away = "above" if anchor_low else "below"
        view.notes.append(
            f"The control's value is the gap between the highest and the lowest bar "
            f"({num(top)} − {num(low)} = {num(value)}, must be {op} {tw[0]}). The dashed line is "
            f"the reference group, {ref_g.group} — the {side} value, opposite the worst group "
            f"{f.worst_group or ''}; the shaded band is where every group must lie (within "
            f"{tw[0]} of it). A bar {away} the band is labelled “outside”."
        )
    elif value is not None and vals and any(near(value, v) for v in (min(vals), max(vals))):
        which = "lowest" if near(value, min(vals)) else "highest"
        view.outside_text = "fails the threshold"
        if isinstance(t, list) and op == "between":
            view.band = Band(t[0], t[1], f"allowed: {tw[0]} to {tw[-1]}")
        elif isinstance(t, float | int):
            view.rules.append(Rule(float(t), f"threshold: {op} {tw[0]}", kind="threshold"))
            extra.append(float(t))
        view.marks = [
            replace(m, outside=m.value is not None and satisfies(m.value, op, t) is False)
            for m in base
        ]
        view.notes.append(
            f"The control's value is the {which} group's value ({num(value)}); the line is the "
            f"threshold ({op} {threshold_text(f)}) it is compared with."
        )
    elif vals:
        why = (
            f"The threshold ({op} {threshold_text(f)}) applies to the control's value "
            f"({num(value)}), which aggregates more than these bars show; no bar is compared "
            "with it directly."
        )
        view.notes.append(why)
    # the axis
    if view.show_bars:
        pts = [v for m in view.marks for v in (m.value, m.ci_low, m.ci_high) if v is not None]
        in01 = spec is None or (spec.value_range[0] >= 0 and spec.value_range[1] <= 1)
        if in01 and all(0.0 <= v <= 1.0 for v in pts):
            view.axis = _svg.rate_axis()
            view.notes.append("Fixed 0–1 axis (these values are rates or proportions).")
        else:
            view.axis = _svg.data_axis(pts + extra)
            view.notes.append("The axis is scaled to the data (these values are not rates).")
        if view.band is not None:
            view.band = Band(
                max(view.band.lo, view.axis.lo), min(view.band.hi, view.axis.hi), view.band.label
            )
    driven = f.details.get("driven_by")
    if isinstance(driven, str) and view.show_bars:
        view.notes.append(
            f"The bars show {driven}, the component whose gap is the control's value."
        )
    if any(m.ci_low is not None for m in base):
        view.notes.append("Whiskers: the per-group bootstrap confidence interval.")
    if f.excluded_groups:
        view.notes.append(
            "Hollow dashed bars are groups excluded from the comparison (reason in the table)."
        )
    return view


def chart_desc(kind: str, what: str, marks: Sequence[Mark], band: Band | None) -> str:
    parts = []
    for m in marks:
        if m.value is None:
            parts.append(f"{m.group} (n={m.n}) excluded: {m.excluded or 'no value'}")
        else:
            ci = f" [{num(m.ci_low)}, {num(m.ci_high)}]" if m.ci_low is not None else ""
            flag = ", outside the allowed band" if m.outside else ""
            parts.append(f"{m.group} {num(m.value)}{ci} (n={m.n}){flag}")
    band_s = f" Shaded: {band.label} ({num(band.lo)} to {num(band.hi)})." if band else ""
    return f"{kind} of {what}, {len(marks)} groups: " + "; ".join(parts) + "." + band_s
