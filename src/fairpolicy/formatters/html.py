"""``-o html``: one self-contained report an auditor can archive.

Inline CSS and inline SVG only: no script, no CDN, no web font, no external
link needed to read it (it prints, too). Sections: a verdict banner with the
status counts and the run's provenance (policy and data SHA-256, tool version,
seed, timestamps); a summary table; one section per control (status as an icon
*and* a word, the metric's formula, threshold, value with its confidence
interval, charts, the numbers again in a table); an appendix with every
confusion-count table (so anyone can recompute every number) and method notes.
Every user-supplied string (group names, descriptions, control ids, paths) is
HTML-escaped; chart element ids are generated (``c3-bars``), never taken from
user text.

How the charts encode the threshold (chosen for what a reader grasps fastest,
and checked against the numbers so a chart never shows a rule the decision did
not apply):

- **Gap metrics** (``better == "lower"``, the value is the spread max − min of the
  plotted group values, operator ``<``/``<=``): bars of the per-group values on a
  fixed 0–1 axis (rates), a dashed reference line at the highest group, and the
  band ``[highest − threshold, highest]`` shaded — the range every group must fall
  in. A bar below the band is a group that makes the gap too large; it is drawn
  red *and* labelled "outside". This reads faster than a gap annotation because
  the reader sees *which* groups break the rule, not only that one does.
- **Ratio metrics** (``better == "higher"`` with ideal 1, and the group values are
  either the ratios themselves — impact_ratio, disparity_ratio, with a reference
  group at 1 — or rates whose min/max is the value — demographic_parity_ratio,
  equalized_odds_ratio, exposure_ratio): a disparity plot on a log axis (0.5 and 2
  equally far from parity), one bar per group from 1 to its ratio, the region the
  operator allows shaded (``between`` → ``[low, high]``; ``>= t`` → ``[t, …]``). When
  the group values are rates, the rate bar chart is shown as well, with the
  reference (highest) group and the equivalent band ``[t × highest, highest]``.
  Bootstrap whiskers appear on the disparity plot only when the group values are
  the ratios (the interval of a rate divided by the highest rate is not the
  interval of the ratio).
- **Level metrics** (the value is the lowest or highest group value, e.g.
  ``group_size``): bars with the threshold itself as a line.
- Otherwise (the value aggregates more than these bars, e.g. a mean over classes,
  a pooled score, a variance): bars without a threshold mark and a caption saying
  that the threshold applies to the control's value, not to each bar.
- The 0–1 axis is fixed whenever the metric's range and every plotted value lie in
  [0, 1]; otherwise (regression errors, sizes) the axis is scaled to the data and
  the caption says so. Whiskers are the per-group bootstrap intervals.
- A control whose dimension binds two columns (``sex,race``) also gets an
  intersection heatmap (rows × columns from the ``" & "`` group names), value and
  ``n`` in each cell, excluded cells hatched and labelled.
- Excluded groups are hollow (dashed) bars labelled "excluded" with their ``n``.

Each chart is ``<svg role="img">`` with a ``<title>`` and a ``<desc>`` listing every
number; bars are ``<rect class="bar" data-group="…">`` (``bar excluded`` when hollow).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from fairpolicy.exact import level_percent
from fairpolicy.formatters import _ci, _svg
from fairpolicy.formatters._ci import about, ci_text, value_text
from fairpolicy.formatters._html_assets import CSS, ICONS
from fairpolicy.formatters._html_view import (
    ChartView,
    badge,
    chart_desc,
    display_op,
    finding_view,
    icon_svg,
    num4,
    spec_of,
    threshold_text,
    written,
)
from fairpolicy.formatters._shown import for_humans
from fairpolicy.formatters._svg import Axis, Cell, esc

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.metrics.base import MetricSpec
    from fairpolicy.results import Finding, Results


# ---------------------------------------------------------------------------
# sections


def _meta_rows(results: Results) -> str:
    p, d, r = results.policy, results.data, results.run
    rows: list[tuple[str, str]] = [
        (
            "Policy",
            f"{esc(p.title or '')} <span class='muted'>{esc(p.path or '—')}"
            + (f" · version {esc(p.version)}" if p.version else "")
            + (f" · {esc(p.form)}" if p.form else "")
            + "</span>",
        ),
        ("Policy SHA-256", f"<span class='hash'>{esc(p.sha256 or '—')}</span>"),
        (
            "Data",
            f"{esc(d.path or '—')} <span class='muted'>· {d.rows:,} rows · columns "
            f"{esc(', '.join(d.columns))}</span>",
        ),
        ("Data SHA-256", f"<span class='hash'>{esc(d.sha256 or '—')}</span>"),
        (
            "Tool",
            f"{esc(results.tool.name)} {esc(results.tool.version)} · results schema "
            f"{esc(results.schema_version)} · engine {esc(r.engine)}",
        ),
        ("Seed", esc(r.seed if r.seed is not None else "—")),
        ("Started", esc(r.started)),
        ("Finished", esc(r.finished)),
        ("Gate rules", f"inconclusive counts as {esc(r.inconclusive)}; fails on {esc(r.fail_on)}"),
    ]
    config = _ci.config_note(results)
    if config is not None:  # the file that set options, and each setting that loosens
        rows.append(("Configuration", esc(config)))
    if r.options:
        rows.append(("Options", esc(json.dumps(r.options, sort_keys=True, ensure_ascii=False))))
    # --subject / --meta first: what was assessed, and the team's references
    rows[0:0] = [(esc(k.capitalize() if k == "subject" else k), esc(v)) for k, v in about(results)]
    body = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="meta" aria-label="Run provenance">{body}</table>'


def _banner(results: Results) -> str:
    s = results.summary
    text = {
        "pass": "PASS — every gating control passed",
        "fail": "FAIL — at least one gating control failed",
        "error": "ERROR — at least one control could not be evaluated",
    }[s.gate]
    counts = (
        f"{s.total} control(s): {s.pass_} pass · {s.fail} fail · {s.warn} warn · "
        f"{s.inconclusive} inconclusive · {s.error} error · exit code {results.exit_code}"
    )
    icon = {"pass": "pass", "fail": "fail", "error": "error"}[s.gate]
    return (
        f'<section class="verdict gate-{s.gate}" role="status" aria-label="Verdict">'
        f'<div class="big">{icon_svg(icon)}<span>{esc(text)}</span></div>'
        f"<div>{esc(counts)}</div></section>"
    )


def _summary_table(findings: Sequence[Finding], anchors: dict[int, str]) -> str:
    has_ci = any(f.ci is not None for f in findings)
    head = ["Control", "Metric", "Value"] + (["CI"] if has_ci else [])
    head += ["Rule", "Status", "Worst group"]
    rows = []
    for i, f in enumerate(findings):
        worst = f.worst_group or ""
        if worst:
            n = next((g.n for g in f.groups if g.group == worst), None)
            worst = f"{worst} (n={n:,})" if n is not None else worst
        ci = ""
        if has_ci:  # one marker for "no value": none asked for, or undefined
            ci = f'<td class="num">{esc(ci_text(f) or "—")}</td>'
        mode = f" ({f.enforcement_mode})" if f.enforcement_mode != "block" else ""
        cid = esc(f.control_id)
        name = f'<a href="#{anchors[i]}">{cid}</a>' if i in anchors else cid
        rows.append(
            f"<tr><td>{name}</td><td><code>{esc(f.metric_key)}</code></td>"
            f'<td class="num">{value_text(f)}</td>{ci}'
            f"<td>{esc(display_op(f))} {esc(threshold_text(f))}</td>"
            f"<td>{badge(f.status, mode)}</td><td>{esc(worst or '—')}</td></tr>"
        )
    th = "".join(f"<th scope='col'>{h}</th>" for h in head)
    return (
        f'<table class="summary"><thead><tr>{th}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _value_text(f: Finding) -> str:
    if f.value is None:
        return f"undefined — {esc(f.reason or f.message)}"
    out = f"<strong>{value_text(f, 6, 'g')}</strong>"
    ci = f.ci
    if ci is not None:
        if ci.low is not None and ci.high is not None:
            out += (
                f" · {level_percent(ci.level)} % CI [{ci.low:.4g}, {ci.high:.4g}] "
                f"<span class='muted'>({esc(ci.method)} bootstrap, {ci.resamples:,} resamples, "
                f"{ci.valid:,} valid, seed {ci.seed})</span>"
            )
        else:
            out += f" · CI undefined <span class='muted'>({esc(ci.reason or '')})</span>"
    if f.decision in ("ci_upper", "ci_lower"):
        bound = "upper" if f.decision == "ci_upper" else "lower"
        out += f" · <em>decided on the {bound} bound of the interval</em>"
    elif f.decision in ("worst_case", "best_case"):
        which = "every" if f.decision == "worst_case" else "some"
        out += (
            f" · <em>decided over the allocations of the unknown-category applicants "
            f"({esc(f.decision)}: the rule must hold for {which} allocation)</em>"
        )
    return out


def _rule_text(f: Finding) -> str:
    op, t = display_op(f), f.threshold
    if op == "between" and isinstance(t, list):
        low, high = written(f)
        rule = f"value must lie between {esc(low)} and {esc(high)} (inclusive)"
    else:
        rule = f"value must be {esc(op)} {esc(threshold_text(f))}"
    src = (
        f" <span class='muted'>(threshold from {esc(f.threshold_source)})</span>"
        if (f.threshold_source)
        else ""
    )
    return rule + src


def _formula(spec: MetricSpec | None) -> str:
    if spec is None:
        return "<span class='muted'>unknown metric</span>"
    paras = [p for p in spec.formula.split("\n\n") if p.strip()]
    head = "\n\n".join(paras[:2])
    out = f"{esc(spec.summary)}<pre class='formula'>{esc(head)}</pre>"
    if len(paras) > 2:
        rest = "\n\n".join(paras[2:])
        out += f"<details><summary>More on this metric</summary><pre>{esc(rest)}</pre></details>"
    return out


def _facts(f: Finding, spec: MetricSpec | None) -> str:
    mode = {
        "block": "block (a failure fails the gate)",
        "warn": "warn (reported, never fails the gate unless --fail-on warning)",
        "monitor": "monitor (reported only)",
    }[f.enforcement_mode]
    rows: list[tuple[str, str]] = [
        ("Metric", f"<code>{esc(f.metric_key)}</code>"),
        ("Formula", _formula(spec)),
        ("Threshold", _rule_text(f)),
        ("Value", _value_text(f)),
        ("Outcome", esc(f.message)),
    ]
    if f.reason and f.value is not None:
        rows.append(("Reason", esc(f.reason)))
    if f.change is not None:  # --baseline
        from fairpolicy.baseline import change_text

        rows.append(("Change vs baseline", esc(change_text(f.change))))
    if f.worst_group:
        n = next((g.n for g in f.groups if g.group == f.worst_group), None)
        rows.append(("Worst group", esc(f.worst_group) + (f" (n={n:,})" if n is not None else "")))
    if f.p_value is not None:
        pv = f.p_value
        txt = "undefined" if pv.p_value is None else f"{pv.p_value:.4g}"
        txt += f" (permutation test, {pv.permutations:,} permutations {pv.where}, seed {pv.seed}"
        if pv.bonferroni and pv.family_size:
            txt += f", Bonferroni family of {pv.family_size}"
        txt += ")"
        if pv.reason:
            txt += f" — {pv.reason}"
        elif pv.null_hypothesis:
            txt += f" — H0: {pv.null_hypothesis}"
        rows.append(("p-value", esc(txt)))
    rows.append(("Enforcement", esc(mode) + ("" if f.gating else " · does not gate")))
    inputs = ", ".join(f"{k} = {v}" for k, v in f.inputs.items())
    rows.append(("Inputs", f"<code>{esc(inputs)}</code>"))
    if f.params:
        ps = ", ".join(f"{k} = {v}" for k, v in f.params.items())
        rows.append(("Parameters", f"<code>{esc(ps)}</code>"))
    if f.min_samples is not None:
        rows.append(("min_samples", esc(f.min_samples)))
    if f.classes:
        rows.append(("Classes", esc(", ".join(f.classes))))
    tags = [
        f"{k} {v}"
        for k, v in (
            ("severity", f.severity),
            ("risk", f.risk_id),
            ("phase", f.lifecycle_phase),
            ("objective", f.objective_id),
            ("statement", f.statement_id),
        )
        if v
    ]
    if tags:
        rows.append(("Tags", esc(" · ".join(tags))))
    if f.source is not None:
        line = f":{f.source.line}" if f.source.line else ""
        rows.append(("Source", f"<code>{esc(f.source.file)}{line}</code>"))
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


def _per_group_details(f: Finding) -> dict[str, dict[str, float | None]]:
    """Metric details keyed by group with a number per group (e.g. tpr, fpr, rates)."""
    names = {g.group for g in f.groups} | {e.group for e in f.excluded_groups}
    values = {g.group: g.value for g in f.groups}
    out: dict[str, dict[str, float | None]] = {}
    for k, v in f.details.items():
        if not isinstance(v, dict) or not v or not set(v) <= names:
            continue
        if not all(
            x is None or (isinstance(x, int | float) and not isinstance(x, bool))
            for x in v.values()
        ):
            continue
        if all(x == values.get(g) for g, x in v.items()):
            continue  # the group values themselves
        out[k] = {g: None if x is None else float(x) for g, x in v.items()}
    return out


def _group_table(f: Finding, view: ChartView) -> str:
    has_ci = any(g.ci_low is not None for g in f.groups)
    ratio = {m.group: m for m in view.ratios or []}
    extra = _per_group_details(f)
    pvals = f.p_value.groups if f.p_value is not None and f.p_value.groups else {}
    outside = {m.group for m in [*view.marks, *(view.ratios or [])] if m.outside}
    head = ["Group", "n", esc(view.label)]
    if has_ci:
        head.append("CI")
    if view.ratios is not None and view.show_bars:
        head.append("ratio to highest")
    head += [esc(k) for k in extra]
    if pvals:
        head.append("p-value (vs rest)")
    head.append("Compared?")
    rows = []
    for g in f.groups:
        cells = [
            esc(g.group),
            f'<td class="num">{g.n:,}</td>',
            f'<td class="num">{num4(g.value)}</td>',
        ]
        cells[0] = f"<th scope='row'>{cells[0]}</th>"
        if has_ci:
            ci = "—" if g.ci_low is None else f"[{g.ci_low:.4f}, {g.ci_high or 0.0:.4f}]"
            cells.append(f'<td class="num">{ci}</td>')
        if view.ratios is not None and view.show_bars:
            r = ratio.get(g.group)
            cells.append(f'<td class="num">{num4(r.value if r else None)}</td>')
        cells += [f'<td class="num">{num4(extra[k].get(g.group))}</td>' for k in extra]
        if pvals:
            p = pvals.get(g.group)
            cells.append(f'<td class="num">{"—" if p is None else f"{p:.4g}"}</td>')
        status = (
            f"<span class='outside'>✗ {esc(view.outside_text)}</span>"
            if g.group in outside
            else "yes"
        )
        cells.append(f"<td>{status}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    for e in f.excluded_groups:
        span = len(head) - 3
        rows.append(
            f"<tr><th scope='row'>{esc(e.group)}</th><td class='num'>{e.n:,}</td>"
            f"<td class='num'>—</td>"
            + "<td></td>" * (span - 1 if span > 1 else 0)
            + f"<td>excluded: {esc(e.reason)}</td></tr>"
        )
    th = "".join(f"<th scope='col'>{h}</th>" for h in head)
    return (
        f'<table class="groups"><caption class="muted">Per-group numbers ({esc(view.label)})'
        f"</caption><thead><tr>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _per_class_table(f: Finding) -> str:
    classes = f.details.get("classes") or f.classes
    if not isinstance(classes, list) or not classes:
        return ""
    k = len(classes)
    rows: list[str] = []
    for key, v in f.details.items():
        if (
            isinstance(v, dict)
            and v
            and all(isinstance(x, list) and len(x) == k for x in v.values())
        ):
            name = "support (rows per true class)" if key == "class_support" else key
            for g, xs in v.items():
                cells = "".join(f'<td class="num">{_cell_num(x)}</td>' for x in xs)
                rows.append(f"<tr><th scope='row'>{esc(name)}: {esc(g)}</th>{cells}</tr>")
        elif (
            isinstance(v, list)
            and len(v) == k
            and key != "classes"
            and all(x is None or isinstance(x, int | float) for x in v)
        ):
            cells = "".join(f'<td class="num">{_cell_num(x)}</td>' for x in v)
            rows.append(f"<tr><th scope='row'>{esc(key)}</th>{cells}</tr>")
    if not rows:
        return ""
    th = "".join(f"<th scope='col'>class {esc(c)}</th>" for c in classes)
    return (
        '<table class="per-class"><caption class="muted">Per class (from the metric details)'
        f"</caption><thead><tr><th></th>{th}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _cell_num(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float) and not math.isfinite(x):
        return "—"
    return f"{x:.4f}" if isinstance(x, float) else esc(x)


def _heatmap(uid: str, f: Finding, view: ChartView) -> str:
    dims = [d.strip() for d in f.inputs.get("dimension", "").split(",") if d.strip()]
    marks = view.ratios if view.ratios is not None else view.marks
    if len(dims) != 2 or not marks:
        return ""
    # a group's values per column (its key); a name alone may hold " & " inside a value
    keys = {g.group: g.key for g in f.groups if g.key}
    keys.update({e.group: e.key for e in f.excluded_groups if e.key and not e.missing})
    split = [keys.get(m.group) or m.group.split(" & ") for m in marks]
    if any(len(p) != 2 for p in split):
        return ""
    rows = list(dict.fromkeys(p[0] for p in split))
    cols = list(dict.fromkeys(p[1] for p in split))
    cells = [Cell(m, p[0], p[1]) for m, p in zip(marks, split, strict=True)]
    vals = [m.value for m in marks if m.value is not None]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    log = view.ratios is not None and lo > 0
    if hi <= lo:
        hi = lo * 1.5 + 1e-9 if log else lo + 1.0
    axis = Axis(lo, hi, (), log=log)
    what = "ratio to the reference" if view.ratios is not None else view.label
    desc = chart_desc("Intersection heatmap", what, marks, None)
    svg = _svg.heatmap(
        uid,
        f"{f.control_id}: {what} by {dims[0]} × {dims[1]}",
        desc,
        dims[0],
        dims[1],
        rows,
        cols,
        cells,
        axis,
        value_label=what,
    )
    missing = len(rows) * len(cols) - len(cells)
    cap = (
        f"Intersection heatmap: one cell per {esc(dims[0])} × {esc(dims[1])} combination with its "
        f"{esc(what)} and n. Colour shows the value (darker = higher); the number is written in "
        "each cell. Cells outside the allowed band have a red border and say “outside”; excluded "
        "cells are hatched."
    )
    if missing:
        cap += f" {missing} combination(s) have no rows (grey)."
    return f"<figure>{svg}<figcaption>{cap}</figcaption></figure>"


def _control(i: int, f: Finding) -> str:
    spec = spec_of(f.metric_key)
    uid = f"c{i + 1}"
    view = finding_view(f)
    mode = f" ({f.enforcement_mode})" if f.enforcement_mode != "block" else ""
    out = [
        f'<section class="control st-{esc(f.status)}" id="{uid}" aria-labelledby="{uid}-h">',
        f'<h3 id="{uid}-h">{badge(f.status, mode)} <code>{esc(f.control_id)}</code></h3>',
    ]
    if f.title and f.title != f.description:
        out.append(f"<p><strong>{esc(f.title)}</strong></p>")
    if f.description:
        out.append(f"<p>{esc(f.description)}</p>")
    out.append(_facts(f, spec))
    charts = []
    if view.show_bars and view.marks:
        title = f"{f.control_id}: {view.label} per group"
        desc = chart_desc("Bar chart", view.label, view.marks, view.band)
        svg = _svg.bar_chart(
            f"{uid}-bars",
            title,
            desc,
            view.marks,
            view.axis,
            band=view.band,
            rules=view.rules,
            axis_label=view.label,
            outside_label=view.outside_text,
        )
        charts.append(f"<figure>{svg}<figcaption>{esc(' '.join(view.notes))}</figcaption></figure>")
    if view.ratios is not None and view.ratio_axis is not None:
        title = f"{f.control_id}: disparity (ratio to the reference) per group, log scale"
        desc = chart_desc("Disparity plot on a log axis", "the ratio", view.ratios, view.ratio_band)
        svg = _svg.disparity_plot(
            f"{uid}-ratios",
            title,
            desc,
            view.ratios,
            view.ratio_axis,
            band=view.ratio_band,
        )
        cap = view.ratio_note + " Log axis: 0.5 and 2 are equally far from parity."
        if view.ratio_band is not None:
            cap += f" Shaded: {view.ratio_band.label}; a group outside it is labelled “outside”."
        if not view.show_bars:
            cap += " " + " ".join(n for n in view.notes if n.startswith(("Whiskers", "Hollow")))
        charts.append(f"<figure>{svg}<figcaption>{esc(cap)}</figcaption></figure>")
    heat = _heatmap(f"{uid}-heat", f, view)
    if heat:
        charts.append(heat)
    out += charts
    if not charts and view.notes:
        out.append(f"<p class='muted'>{esc(' '.join(view.notes))}</p>")
    if f.groups or f.excluded_groups:
        out.append(_group_table(f, view))
    out.append(_per_class_table(f))
    if f.details:
        js = json.dumps(f.details, indent=1, ensure_ascii=False, allow_nan=False, default=str)
        out.append(
            f"<details><summary>Metric details (JSON)</summary><pre>{esc(js)}</pre></details>"
        )
    out.append("</section>")
    return "\n".join(o for o in out if o)


def _counts_appendix(findings: Sequence[Finding]) -> str:
    """Every distinct set of confusion tables once, with the controls that read it."""
    seen: dict[str, tuple[Finding, list[str]]] = {}
    for f in findings:
        if not f.counts:
            continue
        key = json.dumps(
            [
                f.inputs.get("dimension"),
                f.inputs.get("target"),
                f.inputs.get("prediction"),
                f.classes,
                f.counts,
            ],
            sort_keys=True,
        )
        seen.setdefault(key, (f, []))[1].append(f.control_id)
    if not seen:
        return "<p>No control recorded confusion counts.</p>"
    out = []
    for f, ids in seen.values():
        classes = f.classes or [str(i) for i in range(len(next(iter(f.counts.values()))))]
        ins = ", ".join(
            f"{k} = {v}" for k, v in f.inputs.items() if k in ("dimension", "target", "prediction")
        )
        out.append(
            f"<h3>{esc(ins)}</h3><p class='muted'>Used by: "
            + ", ".join(f"<code>{esc(c)}</code>" for c in ids)
            + "</p><div class='counts'>"
        )
        for g, table in f.counts.items():
            # fractional sample weights: the cells are sums of weights, not row counts
            weighted = any(isinstance(x, float) for r in table for x in r)

            def num(x: float, weighted: bool = weighted) -> str:
                return f"{x:,.6g}" if weighted else f"{x:,}"

            th = "".join(f"<th scope='col'>{esc(c)}</th>" for c in classes)
            body = ""
            for c, row in zip(classes, table, strict=False):
                cells = "".join(f'<td class="num">{num(x)}</td>' for x in row)
                total = f"<td class='num'>{num(sum(row))}</td>"
                body += f"<tr><th scope='row'>{esc(c)}</th>{cells}{total}</tr>"
            n = sum(sum(r) for r in table)
            size = f"total weight {num(n)}" if weighted else f"n={n:,}"
            out.append(
                f"<table><caption>{esc(g)} ({size})</caption><thead><tr>"
                f"<th scope='col'>true ↓ / predicted →</th>{th}<th scope='col'>total</th></tr>"
                f"</thead><tbody>{body}</tbody></table>"
            )
        out.append("</div>")
    return "\n".join(out)


def _method_notes(results: Results) -> str:
    fs = results.findings
    counted = "Every per-group value, gap and ratio of a control with a count table is a "
    counted += "function of that table (rows: true class, columns: predicted class); rates are "
    counted += "ratios of its cells."
    if not any(f.counts for f in fs):
        counted = (
            "No control of this run records a confusion-count table (score, regression and "
            "ranking metrics work on per-group sums and scores); each control's per-group "
            "values and sizes are in its table."
        )
    notes = [
        counted,
        "A group is excluded from a comparison when it has fewer rows than the control's "
        "min_samples (default 30) or when the rate is undefined for it (e.g. no actual "
        "positives for a true positive rate); it is listed with the reason and never "
        "silently counted. Fewer than two compared groups make a control inconclusive.",
    ]
    excl = [(f.control_id, e) for f in fs for e in f.excluded_groups]
    cis = [f for f in fs if f.ci is not None]
    if cis:
        c0 = cis[0].ci
        assert c0 is not None
        notes.append(
            "Confidence intervals: a stratified per-group bootstrap done on the count tables — "
            "each replicate draws every group's table from Multinomial(n_g, cells_g / n_g), "
            "which is exactly resampling rows within each group. "
            f"{c0.method} intervals at level {c0.level:g}, {c0.resamples:,} resamples, seed "
            f"{c0.seed}; replicates where the value is undefined are dropped (the number kept "
            "is shown as 'valid')."
        )
    else:
        notes.append("No bootstrap was requested: values are point estimates (no intervals).")
    if any(f.decision in ("worst_case", "best_case") for f in fs):
        notes.append(
            "Decision over the unknown-category applicants (LL144): worst_case fails when any "
            "allocation of them to categories violates the rule; best_case passes when some "
            "allocation satisfies it (docs/ll144.md)."
        )
    if any(f.decision in ("ci_upper", "ci_lower") for f in fs):
        notes.append(
            "Decision on the interval: ci_upper passes only when the upper bound satisfies the "
            "rule (conservative); ci_lower fails only on a proven violation (the lower bound)."
        )
    if any(f.p_value is not None for f in fs):
        notes.append(
            "p-values: permutation test of the group labels, done on the counts; per-group "
            "p-values compare a group with the rest, Bonferroni-adjusted when asked."
        )
    notes.append(
        f"Gate: inconclusive controls count as '{results.run.inconclusive}'; the gate fails on "
        f"'{results.run.fail_on}'. Controls in warn or monitor mode never fail the gate "
        "(unless --fail-on warning)."
    )
    notes.append(
        "Charts: gap metrics show each group's value with a dashed line at the reference "
        "group (the extreme opposite the worst group) and the band within the threshold of it "
        "where every group must lie; ratio metrics show each group's ratio to the reference on "
        "a log axis with the region the operator allows shaded. Rates use a fixed 0–1 axis; "
        "other values are scaled to the data. Groups outside the band are red and labelled "
        "“outside”; excluded groups are hollow or hatched and labelled."
    )
    out = "<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>"
    if excl:
        rows = "".join(
            f"<tr><td><code>{esc(c)}</code></td><td>{esc(e.group)}</td>"
            f"<td class='num'>{e.n:,}</td><td>{esc(e.reason)}</td></tr>"
            for c, e in excl
        )
        out += (
            "<table><caption class='muted'>Excluded groups</caption><thead><tr>"
            "<th>Control</th><th>Group</th><th>n</th><th>Reason</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    if cis:
        rows = ""
        for f in cis:
            ci = f.ci
            assert ci is not None
            rows += (
                f"<tr><td><code>{esc(f.control_id)}</code></td><td>{esc(ci.method)}</td>"
                f"<td class='num'>{ci.level:g}</td><td class='num'>{ci.resamples:,}</td>"
                f"<td class='num'>{ci.valid:,}</td><td class='num'>{ci.seed}</td>"
                f"<td>{esc(f.decision)}</td><td>{esc(ci.reason or '')}</td></tr>"
            )
        out += (
            "<table><caption class='muted'>Bootstrap settings per control</caption><thead><tr>"
            "<th>Control</th><th>Method</th><th>Level</th><th>Resamples</th><th>Valid</th>"
            "<th>Seed</th><th>Decision</th><th>Note</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    return out


def render(results: Results, opts: RenderOptions) -> str:
    results = for_humans(results)  # the worst groups; the JSON has every one
    findings = results.findings
    detailed = [(i, f) for i, f in enumerate(findings) if not (opts.quiet and f.status == "pass")]
    anchors = {i: f"c{i + 1}" for i, _ in detailed}
    title = results.policy.title or results.policy.path or "policy"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta name="generator" content="{esc(results.tool.name)} {esc(results.tool.version)}">',
        f"<title>fairpolicy report — {esc(title)}</title>",
        f"<style>{CSS}</style></head><body>",
        ICONS,
        f"<header><h1>Fairness compliance report — {esc(title)}</h1>"
        f"<p class='muted'>fairpolicy {esc(results.tool.version)} · run finished "
        f"{esc(results.run.finished)}</p></header>",
        "<main>",
        _banner(results),
        _meta_rows(results),
        "<h2>Controls</h2>",
        _summary_table(findings, anchors),
    ]
    if results.warnings:
        parts.append(
            "<h2>Warnings</h2><ul>"
            + "".join(f"<li>{esc(w)}</li>" for w in results.warnings)
            + "</ul>"
        )
    if opts.quiet and len(detailed) < len(findings):
        parts.append("<p class='muted'>Passing controls are listed above only (--quiet).</p>")
    parts += [_control(i, f) for i, f in detailed]
    parts += _ll144_section(results)
    parts += _windows_section(results)
    parts += [
        '<h2 id="appendix">Appendix A — count tables</h2>',
        "<p>The confusion counts of the compared groups, <code>counts[group][true][predicted]"
        "</code> in the order of the classes, as recorded in the results. Each distinct table set "
        "appears once, with the controls that read it.</p>",
        _counts_appendix(findings),
        "<h2>Appendix B — method notes</h2>",
        _method_notes(results),
        "</main>",
        f"<footer class='muted'><p>Generated by fairpolicy {esc(results.tool.version)} from "
        f"results schema {esc(results.schema_version)}; policy SHA-256 "
        f"<span class='hash'>{esc(results.policy.sha256 or '—')}</span>.</p></footer>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _ll144_section(results: Results) -> list[str]:
    """The LL144 summary of results (formatters/_ll144.py) of each impact-ratio control."""
    from fairpolicy.formatters import _ll144

    out: list[str] = []
    for s in _ll144.summaries(results):
        facts = [f"{k}: {v}" for k, v in _ll144.about(results)] + _ll144.lines(s)
        head = "".join(f"<th>{esc(h)}</th>" for h in _ll144.headers(s))
        body = "".join(
            "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in _ll144.cells(s, r)) + "</tr>"
            for r in s.rows
        )
        out += [
            f"<h2>LL144 summary of results — {esc(s.control_id)}</h2>",
            "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in facts) + "</ul>",
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>",
        ]
    return out


def _windows_section(results: Results) -> list[str]:
    """``--window``: the window axis and a trend chart per control (formatters/_windows.py)."""
    from fairpolicy.formatters import _windows

    head = _windows.heading(results)
    if head is None:
        return []
    out = ['<h2 id="windows">Windows</h2>', f"<p>{esc(head)}</p>"]
    for i, f in enumerate(results.findings):
        out += [
            f"<h3>{esc(f.control_id)} — {esc(f.status.upper())}</h3>",
            f"<p>{esc(f.message)}</p>",
            _windows.trend_chart(results, f.control_id, f"trend-{i + 1}"),
        ]
    return out


def _scoped_css(scope: str) -> str:
    """The report's stylesheet confined to ``scope`` (a notebook page is not ours to restyle):
    ``:root``/``body`` rules apply to the scope element, every other selector inside it."""
    import re

    out = []
    for selectors, body in re.findall(r"([^{}@]+)\{([^{}]*)\}", CSS.split("@media")[0]):
        sels = [s.strip() for s in selectors.split(",")]
        out.append(
            ",".join(scope if s in (":root", "body") else f"{scope} {s}" for s in sels)
            + "{"
            + body.replace("max-width:1180px;", "")
            + "}"
        )
    return "\n".join(out)


def notebook_view(results: Results) -> str:
    """The report's verdict banner and control table as one HTML fragment (for
    ``Results._repr_html_``): the same renderers and stylesheet as :func:`render`, scoped to
    a ``div.fairpolicy-report`` so the notebook's own page is left alone."""
    results = for_humans(results)
    title = results.policy.title or results.policy.path or "policy"
    return (
        f'<div class="fairpolicy-report"><style>{_scoped_css(".fairpolicy-report")}</style>'
        f"{ICONS}<h3>fairpolicy — {esc(title)}</h3>{_banner(results)}"
        f"{_summary_table(results.findings, {})}</div>"
    )
