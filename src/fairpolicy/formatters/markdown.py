"""``-o markdown``: a report to read in a pull-request comment or a GitHub step summary
(the CLI appends it to ``$GITHUB_STEP_SUMMARY`` when ``-o github`` is used).

A verdict heading (icon and word, so the colour of an emoji never carries the meaning
alone) with the counts and the exit code; one line of provenance (policy, data, their
SHA-256, tool version, seed); the control table (control, metric, value, interval when
one was computed, operator, threshold, status icon and word, worst group); then why each
non-passing control did not pass, the excluded groups, and the run's warnings.
``-q`` keeps only the non-passing rows; ``-v`` adds a table of per-group values per
control.

Escaping. Every piece of user text (control ids and titles, group names, paths,
messages, warnings) goes through :func:`escape`: line breaks become spaces (a table row
is one line); ``&``, ``<``, ``>`` become HTML entities (no raw HTML, no autolinks);
``\\``, backticks, ``*``, ``[``, ``]``, ``|``, ``~`` and a ``_`` that could open or
close emphasis are backslash-escaped (no code spans, links, emphasis or broken table
cells); a cell that would start with ``=``, ``+``, ``-`` or ``@`` — a formula once the
table is pasted into a spreadsheet — is prefixed with ``'`` (OWASP's advice for CSV
injection).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from fairpolicy.formatters import _ci
from fairpolicy.formatters._shown import for_humans

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results

ICON = {
    "pass": "✅",
    "fail": "❌",
    "warn": "⚠️",
    "inconclusive": "❔",
    "error": "⛔",
}

_SPECIAL = re.compile(r"([\\`*\[\]|~])")
#: an underscore not between two word characters (one that could start/end emphasis)
_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")
_FORMULA_START = ("=", "+", "-", "@")


def escape(text: object) -> str:
    """User text as inert Markdown inline text, on one line (see the module docstring)."""
    s = " ".join(_ci.inert(text).split())
    if s.startswith(_FORMULA_START):
        s = "'" + s
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _SPECIAL.sub(r"\\\1", s)
    return _UNDERSCORE.sub(r"\\_", s)


def _status(f: Finding) -> str:
    word = _ci.STATUS_WORD[f.status]
    if f.enforcement_mode != "block" and f.status != f.enforcement_mode:
        word += f" ({f.enforcement_mode})"
    return f"{ICON[f.status]} {word}"


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _table(results: Results, shown: list[Finding]) -> list[str]:
    with_ci = any(f.ci is not None for f in shown)
    headers = ["control", "metric", "value"]
    align = ["---", "---", "---:"]
    if with_ci:
        headers.append("CI")
        align.append("---")
    headers += ["op", "threshold", "status", "worst group"]
    align += [":---:", "---:", "---", "---"]
    if results.baseline is not None:  # --baseline: the change column
        headers.append("change")
        align.append("---")
    out = [_row(headers), _row(align)]
    for f in shown:
        cells = [escape(f.control_id), escape(f.metric_key), _ci.value_text(f)]
        if with_ci:
            cells.append(_ci.ci_text(f))
        cells += [
            escape(f.operator),
            escape(_ci.threshold(f)),
            _status(f),
            escape(_ci.worst_group(f)),
        ]
        if results.baseline is not None:
            from fairpolicy.baseline import change_text

            cells.append(escape(change_text(f.change)) if f.change is not None else "")
        out.append(_row(cells))
    return out


def _provenance(results: Results) -> str:
    r = results
    parts = []
    if r.policy.path:
        policy = f"policy {escape(_ci.shown_path(r.policy.path))}"
        if r.policy.version:
            policy += f" v{escape(r.policy.version)}"
        if r.policy.sha256:
            policy += f" (sha256 {r.policy.sha256[:12]}…)"
        parts.append(policy)
    data = f"data {escape(_ci.shown_path(r.data.path))}" if r.data.path else "data"
    data += f", {r.data.rows} rows"
    if r.data.sha256:
        data += f" (sha256 {r.data.sha256[:12]}…)"
    parts.append(data)
    parts.append(f"{escape(r.tool.name)} {escape(r.tool.version)}")
    if r.run.seed is not None:
        parts.append(f"seed {r.run.seed}")
    return " · ".join(parts)


def _per_group(f: Finding) -> list[str]:
    label = escape(_ci.class_label(f))
    dim = _ci.dimension(f)
    out = [
        "",
        f"#### {escape(f.control_id)} — per group" + (f" of {escape(dim)}" if dim else "") + label,
        "",
    ]
    with_ci = any(g.ci_low is not None for g in f.groups)
    out.append(_row(["group", "n", "value", *(["CI"] if with_ci else [])]))
    out.append(_row(["---", "---:", "---:", *(["---"] if with_ci else [])]))
    for g in f.groups:
        ci = [f"[{g.ci_low:.4f}, {g.ci_high:.4f}]"] if g.ci_low is not None else []
        if with_ci and not ci:
            ci = [""]
        out.append(_row([escape(g.group), str(g.n), _ci.num(g.value), *ci]))
    for e in f.excluded_groups:
        out.append(
            _row(
                [
                    escape(e.group),
                    str(e.n),
                    f"excluded: {escape(e.reason)}",
                    *([""] if with_ci else []),
                ]
            )
        )
    support = _ci.class_support(f)
    if support:
        classes = [c for c, _ in support[0][1]]
        out += ["", "Support (rows per true class):", ""]
        out.append(_row(["group", *(f"class {escape(c)}" for c in classes)]))
        out.append(_row(["---", *("---:" for _ in classes)]))
        out += [_row([escape(g), *(str(n) for _, n in cells)]) for g, cells in support]
    if f.p_value is not None and f.p_value.p_value is not None:
        fam = f", family of {f.p_value.family_size}" if f.p_value.bonferroni else ""
        out += [
            "",
            f"p-value {f.p_value.p_value:.4g} ({f.p_value.permutations} permutations "
            f"{f.p_value.where}{fam})",
        ]
    return out


def render(results: Results, opts: RenderOptions) -> str:
    results = for_humans(results)  # the worst groups; the JSON has every one
    s = results.summary
    gate = {"pass": "✅ PASS", "fail": "❌ FAIL", "error": "⛔ ERROR"}[s.gate]
    policy = results.policy
    title = policy.title or (_ci.shown_path(policy.path) if policy.path else "fairness policy")
    out = [
        f"## {gate} — fairpolicy: {escape(title)}",
        "",
        f"**{gate.split()[1]}**: {_ci.verdict(results)} (exit {results.exit_code})",
        "",
        _provenance(results),
        "",
    ]
    config = _ci.config_note(results)
    if config is not None:  # the file that set options, and each setting that loosens
        out += [f"**Configuration**: {escape(config)}", ""]
    if _ci.about(results):  # --subject / --meta
        out[-1:-1] = [
            "",
            " · ".join(f"**{escape(k)}**: {escape(v)}" for k, v in _ci.about(results)),
        ]
    shown = [f for f in results.findings if not (opts.quiet and f.status == "pass")]
    if shown:
        out += _table(results, shown)
    elif results.findings:
        out.append("Every control passed.")
    else:
        out.append("No controls were evaluated.")

    notes = [f for f in results.findings if f.status != "pass"]
    if notes:
        out += ["", "### Not passed", ""]
        for f in notes:
            file, line = _ci.location(results, f)
            where = (
                f" ({escape(_ci.shown_path(file))}" + (f":{line})" if line else ")") if file else ""
            )
            text = escape(f.message)  # the message already carries the interval, if any
            note = _ci.gate_note(results, f)
            if note:
                text += f" ({escape(note)})"
            out.append(f"- {ICON[f.status]} **{escape(f.control_id)}**{where}: {text}")
            if f.description:  # the requirement, its parameters inserted (catalog statement)
                out.append(f"  Requirement: _{escape(' '.join(f.description.split()))}_")

    excluded = [f for f in results.findings if f.excluded_groups]
    if excluded and not opts.verbose:
        out += ["", "### Excluded groups", ""]
        for f in excluded:
            listed = "; ".join(
                f"{escape(e.group)} (n={e.n}): {escape(e.reason)}" for e in f.excluded_groups
            )
            out.append(f"- **{escape(f.control_id)}**: {listed}")

    if opts.verbose:
        grouped = [f for f in results.findings if f.groups or f.excluded_groups]
        if grouped:
            out += ["", "### Per-group values"]
            for f in grouped:
                out += _per_group(f)

    out += _ll144_section(results)
    out += _windows_section(results)
    if results.warnings:
        out += ["", "### Warnings", ""]
        out += [f"- {escape(w)}" for w in results.warnings]
    return "\n".join(out) + "\n"


def _windows_section(results: Results) -> list[str]:
    """``--window``: the window axis and each control's newest windows."""
    from fairpolicy.formatters import _windows

    head = _windows.heading(results)
    if head is None:
        return []
    out = ["", "### Windows", "", escape(head)]
    for cid, cells in _windows.newest(results):
        out += ["", f"**{escape(cid)}** (newest {len(cells)})", ""]
        out += [_row(["window", "rows", "value", "interval", "status"]), _row(["---"] * 5)]
        out += [_row([escape(c) for c in cell]) for cell in cells]
    return out


def _ll144_section(results: Results) -> list[str]:
    """The LL144 summary of results (formatters/_ll144.py) of each impact-ratio control."""
    from fairpolicy.formatters import _ll144

    out: list[str] = []
    for s in _ll144.summaries(results):
        out += ["", f"### LL144 summary of results — {escape(s.control_id)}", ""]
        out += [f"- **{escape(k)}**: {escape(v)}" for k, v in _ll144.about(results)]
        out += [f"- {escape(line)}" for line in _ll144.lines(s)]
        head = _ll144.headers(s)
        out += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(escape(c) for c in _ll144.cells(s, r)) + " |" for r in s.rows]
    return out
