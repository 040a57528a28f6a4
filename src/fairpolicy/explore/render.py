"""Text, JSON, Markdown and HTML reports of an exploration, and the candidate policy."""

from __future__ import annotations

import html
import json
import math
from typing import Any

from fairpolicy.errors import printable
from fairpolicy.explore.search import Slice

FORMATS = ("text", "json", "markdown", "html")


def _num(x: float | None, digits: int = 4) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    return "—" if x is None else (f"{x:.2e}" if x < 1e-4 else f"{x:.4f}")


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else x


def to_dict(result: Any) -> dict[str, Any]:
    def one(s: Slice) -> dict[str, Any]:
        return {
            "slice": [{"attribute": a, "value": v} for a, v in s.conditions],
            "label": s.label,
            "n": s.n,
            "numerator": s.numerator,
            "denominator": s.denominator,
            "value": _finite(s.value),
            "interval": None if s.low is None else [_finite(s.low), _finite(s.high)],
            "rest_value": _finite(s.rest_value),
            "divergence": _finite(s.divergence),
            "p_value": _finite(s.p_value),
            "q_value": _finite(s.q_value),
            "test": s.test or None,
            "significant": s.significant,
        }

    return {
        "data": {"file": result.table.file, "sha256": result.table.sha256, "rows": result.rows},
        "metric": result.metric.key,
        "metric_title": result.metric.title,
        "overall_value": _finite(result.overall),
        "target": result.table.target,
        "prediction": result.table.prediction,
        "positive_label": result.table.positive_label,
        "attributes": [
            {
                "name": a.name,
                "values": len(a.values),
                "binned": a.binned,
                # JSON has no infinity: an open outer edge is the text "-inf" / "inf"
                "edges": [e if math.isfinite(e) else ("inf" if e > 0 else "-inf") for e in a.edges],
            }
            for a in result.table.attributes
        ],
        "depth": result.depth,
        "min_support": result.min_support,
        "min_rows": result.search.min_rows,
        "alpha": result.alpha,
        "interval_level": 1 - result.alpha,
        "multiple_testing": "Benjamini-Hochberg",
        "family_size": result.search.family_size,
        "untestable": result.search.untestable,
        "pruned_by_support": result.search.pruned,
        "significant": sum(s.significant for s in result.search.slices),
        "slices": [one(s) for s in result.top],
    }


def as_json(result: Any) -> str:
    return json.dumps(to_dict(result), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _header(result: Any) -> list[str]:
    s = result.search
    sig = sum(x.significant for x in s.slices)
    return [
        f"fairpolicy explore: {result.metric.title} ({result.metric.key}) on "
        f"{printable(result.table.file)} ({result.rows} rows)",
        f"overall {result.metric.key}: {_num(result.overall)}; positive label "
        f"{printable(result.table.positive_label)!r}",
        f"slices tested: {s.family_size} (family size for Benjamini-Hochberg, FDR "
        f"{result.alpha:g}); significant: {sig}; untestable (no denominator): {s.untestable}; "
        f"under the support threshold ({s.min_rows} rows): {s.pruned}",
    ]


def as_text(result: Any) -> str:
    lines = _header(result)
    lines.append("")
    if not result.top:
        lines.append("no slice reaches the support threshold.")
    for i, s in enumerate(result.top, 1):
        flag = "*" if s.significant else " "
        lines.append(
            f"{i:>3}{flag} {printable(s.label)}\n"
            f"      n={s.n}  value={_num(s.value)} "
            f"[{_num(s.low)}, {_num(s.high)}]  rest={_num(s.rest_value)}  "
            f"divergence={'—' if s.divergence is None else f'{s.divergence:+.4f}'}  "
            f"p={_p(s.p_value)}  q={_p(s.q_value)}  {s.test}"
        )
    lines += [
        "",
        f"* significant at FDR {result.alpha:g} (BH-adjusted q ≤ {result.alpha:g}); intervals "
        f"are {1 - result.alpha:.0%} Wilson intervals of the slice's rate.",
    ]
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return printable(text).replace("|", "\\|")


def as_markdown(result: Any) -> str:
    lines = ["## fairpolicy explore", "", *(f"- {_md(x)}" for x in _header(result)), ""]
    lines += [
        "| # | slice | n | value | interval | rest | divergence | p | q | significant |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, s in enumerate(result.top, 1):
        lines.append(
            f"| {i} | {_md(s.label)} | {s.n} | {_num(s.value)} | [{_num(s.low)}, {_num(s.high)}]"
            f" | {_num(s.rest_value)} | {_num(s.divergence)} | {_p(s.p_value)} | "
            f"{_p(s.q_value)} | {'yes' if s.significant else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def chart(result: Any, top: int = 15) -> str:
    """An SVG bar chart of the top slices' divergence from the rest, with intervals, on a
    labelled axis (ticks at round numbers, 0 marked, the axis named), drawn with the check
    report's fonts and grid colours."""
    from fairpolicy.formatters._svg import GRID, data_axis

    shown = [s for s in result.top if s.divergence is not None][:top]
    span = max([abs(s.divergence or 0) for s in shown] + [0.01])
    for s in shown:
        if s.low is not None and s.high is not None and s.rest_value is not None:
            span = max(span, abs(s.low - s.rest_value), abs(s.high - s.rest_value))
    axis = data_axis([-span, span])
    width, row, left, right, top_y = 780, 22, 330, 24, 34
    plot_w = width - left - right
    bottom = top_y + row * max(1, len(shown))
    height = bottom + 44

    def x(v: float) -> float:
        return float(left + plot_w * axis.frac(v))

    name = f"{result.metric.title}: slice rate − rest of the data"
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" font-family="DejaVu Sans, Liberation '
        'Sans, Arial, sans-serif" font-size="12" aria-label="divergence of the top slices '
        'from the rest">',
        f'<text x="{left}" y="14" font-weight="bold">{html.escape(name)}</text>',
    ]
    for t in axis.ticks:  # the grid and the tick labels under the plot
        xx = x(t)
        out.append(
            f'<line x1="{xx:.1f}" y1="{top_y - 12}" x2="{xx:.1f}" y2="{bottom}" '
            f'stroke="{"#555" if t == 0 else GRID}"/>'
            f'<text x="{xx:.1f}" y="{bottom + 16}" text-anchor="middle">'
            f"{'0' if t == 0 else f'{t:+.3g}'}</text>"
        )
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 34}" text-anchor="middle" '
        'fill="#59636e">divergence from the rest (slice rate − rest rate)</text>'
    )
    for i, s in enumerate(shown):
        y = top_y + i * row
        d = s.divergence or 0.0
        colour = "#c62828" if s.significant else "#8c959f"
        x0, x1 = sorted((x(0.0), x(d)))
        label = html.escape(printable(s.label))
        if len(label) > 48:
            label = label[:47] + "…"
        out.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{label}</text>')
        out.append(
            f'<rect x="{x0:.1f}" y="{y - 7}" width="{max(x1 - x0, 1):.1f}" height="14" '
            f'fill="{colour}"><title>{label}: {d:+.4f}</title></rect>'
        )
        if s.low is not None and s.high is not None and s.rest_value is not None:
            lo, hi = x(s.low - s.rest_value), x(s.high - s.rest_value)
            out.append(
                f'<line x1="{lo:.1f}" y1="{y}" x2="{hi:.1f}" y2="{y}" stroke="#1f2328" '
                'stroke-width="1.5"/>'
            )
    out.append("</svg>")
    return "\n".join(out)


def as_html(result: Any) -> str:
    """The exploration as a page in the check report's look: its stylesheet, header,
    tables (numbers right-aligned) and chart style."""
    from fairpolicy.formatters._html_assets import CSS

    rows = []
    for i, s in enumerate(result.top, 1):
        cells = [
            f'<td class="num">{i}</td>',
            f"<td>{html.escape(printable(s.label))}</td>",
            *(
                f'<td class="num">{html.escape(c)}</td>'
                for c in (
                    f"{s.n:,}",
                    _num(s.value),
                    f"[{_num(s.low)}, {_num(s.high)}]",
                    _num(s.rest_value),
                    _num(s.divergence),
                    _p(s.p_value),
                    _p(s.q_value),
                )
            ),
            f"<td>{'<strong>yes</strong>' if s.significant else 'no'}</td>",
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    head = "".join(f"<li>{html.escape(x)}</li>" for x in _header(result))
    th = "".join(
        f"<th scope='col'>{h}</th>"
        for h in ("#", "Slice", "n", "Value", "Interval", "Rest", "Divergence", "p", "q (BH)",
                  "Significant")
    )  # fmt: skip
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>fairpolicy explore</title><style>{CSS}</style></head><body>"
        "<header><h1>Slice exploration</h1><p class='muted'>fairpolicy explore — where to "
        "look, not a gate: significant slices are candidates for controls</p></header><main>"
        f"<ul>{head}</ul>"
        f"<h2>Top slices: divergence from the rest</h2><figure>{chart(result)}<figcaption>"
        f"Bars: the slice's rate minus the rest's; lines: the slice rate's "
        f"{1 - result.alpha:.0%} interval minus the rest's rate; red: significant at FDR "
        f"{result.alpha:g}.</figcaption></figure>"
        f"<h2>Slices</h2><table class='summary'><thead><tr>{th}</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table></main></body></html>\n"
    )


def render(result: Any, fmt: str) -> str:
    return {"text": as_text, "json": as_json, "markdown": as_markdown, "html": as_html}[fmt](result)


def candidate_policy(result: Any, form: str = "list") -> str:
    """The significant slices as candidate controls, thresholds left unset.

    ``list``: the simple bare-list YAML form; ``oscal``: a namespaced OSCAL catalog (JSON).
    Each control compares the metric across the slice's attribute columns (their
    intersection for a conjunction). The threshold is left as the text ``SET-ME``, which
    ``fairpolicy validate``/``check`` refuse until a number is written there: a candidate
    can never pass by default.
    """
    seen: dict[tuple[str, ...], list[Slice]] = {}
    for s in result.search.slices:
        if s.significant:
            seen.setdefault(tuple(a for a, _ in s.conditions), []).append(s)
    t = result.table
    controls: list[dict[str, Any]] = []
    edges = {a.name: a.edges for a in t.attributes if a.binned}
    for i, (attrs, slices) in enumerate(seen.items(), 1):
        names = ", ".join(x.label for x in slices[:3]) + (" …" if len(slices) > 3 else "")
        bins = _bins_prop([a for a in attrs if a in edges], edges, len(attrs))
        controls.append(
            {
                "id": f"explore-{i}",
                "title": f"{result.metric.title} parity across {' × '.join(attrs)}",
                "why": f"explore found {len(slices)} significant slice(s): {names}",
                "props": {
                    "metric_key": result.metric.policy_metric,
                    "threshold": "SET-ME",
                    "operator": "<",
                    "input.target": t.target,
                    "input.prediction": t.prediction,
                    "input.dimension": ",".join(attrs),
                    **({"bins": bins} if bins else {}),
                },
                "binned": [a.name for a in t.attributes if a.binned and a.name in attrs],
            }
        )
    if form == "oscal":
        return _oscal(controls)
    lines = [
        "# Candidate controls from `fairpolicy explore` (significant slices at FDR "
        f"{result.alpha:g}, {result.search.family_size} slices tested).",
        "# Each threshold is SET-ME: write the number you accept before using this policy.",
    ]
    for c in controls:
        lines.append(f"- control-id: {c['id']}")
        lines.append(f"  title: {json.dumps(c['title'], ensure_ascii=False)}")
        lines.append(f"  # {printable(c['why'])}")
        if c["binned"]:
            lines.append(
                f"  # {', '.join(c['binned'])}: the bins prop holds explore's edges (the outer "
                "ones opened to -inf/inf so every value has a bin)"
            )
        lines.append("  props:")
        for k, v in c["props"].items():
            lines.append(f"    - {{name: {k}, value: {json.dumps(v, ensure_ascii=False)}}}")
    if not controls:
        lines.append("[]  # no significant slice")
    return "\n".join(lines) + "\n"


def _bins_prop(binned: list[str], edges: dict[str, list[float]], n_attrs: int) -> str:
    """The ``bins`` prop that makes ``check`` group a binned attribute as explore did: its
    inner edges, the outer ones opened to -inf/inf (the same rows in each bin)."""
    from fairpolicy.policy.bins import edge_text

    def spec(e: list[float]) -> str:
        return ",".join(["-inf", *(edge_text(x) for x in e[1:-1]), "inf"])

    if not binned:
        return ""
    if n_attrs == 1:
        return spec(edges[binned[0]])
    return ";".join(f"{a}={spec(edges[a])}" for a in binned)


def _oscal(controls: list[dict[str, Any]]) -> str:
    import uuid
    from datetime import UTC, datetime

    from fairpolicy.oscal_schema import OSCAL_VERSION
    from fairpolicy.policy.schema import NS as ns

    catalog = {
        "catalog": {
            "uuid": str(uuid.uuid4()),
            "metadata": {
                "title": "Candidate controls from fairpolicy explore",
                "last-modified": datetime.now(UTC).isoformat(timespec="seconds"),
                "version": "0.1",
                "oscal-version": OSCAL_VERSION,
                "remarks": "Each threshold is SET-ME: write the accepted number first.",
            },
            "controls": [
                {
                    "id": c["id"],
                    "title": c["title"],
                    "props": [
                        {"name": k, "ns": ns, "value": str(v)} for k, v in c["props"].items()
                    ],
                    "parts": [{"id": f"{c['id']}_gdn", "name": "guidance", "prose": c["why"]}],
                }
                for c in controls
            ],
        }
    }
    return json.dumps(catalog, indent=2, ensure_ascii=False) + "\n"
