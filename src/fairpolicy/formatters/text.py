"""``-o text`` (default): a terminal table, then one verdict line.

User text (control ids, group names, messages) is shown with control characters
escaped (:func:`fairpolicy.errors.printable`): a group name cannot add a line to the
report, forge the verdict line or drive the terminal.

Colour only when asked (the CLI asks on a TTY without ``NO_COLOR``); the
status is always written as a word, so colour never carries meaning alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairpolicy.errors import printable
from fairpolicy.formatters import _ci
from fairpolicy.formatters._ci import (
    about,
    about_line,
    ci_text,
    class_support,
    num,
    threshold,
    value_text,
)
from fairpolicy.formatters._shown import for_humans

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results

_COLORS = {
    "pass": "\033[32m",
    "fail": "\033[31m",
    "error": "\033[31;1m",
    "warn": "\033[33m",
    "inconclusive": "\033[35m",
}
_RESET = "\033[0m"
HEADERS = ("control", "metric", "value", "op", "threshold", "status", "worst group")
CI_HEADERS = (*HEADERS[:3], "ci", *HEADERS[3:])


def _row(f: Finding) -> tuple[str, ...]:
    status = f.status.upper()
    if f.enforcement_mode != "block" and f.status != f.enforcement_mode:
        status += f" ({f.enforcement_mode})"
    worst = f.worst_group or ""
    if worst:
        n = next((g.n for g in f.groups if g.group == worst), None)
        worst = f"{worst} (n={n})" if n is not None else worst
    cells = (f.control_id, f.metric_key, value_text(f), f.operator, threshold(f), status, worst)
    return tuple(printable(c) for c in cells)


def render(results: Results, opts: RenderOptions) -> str:
    results = for_humans(results)  # the worst groups; the JSON has every one
    shown = [f for f in results.findings if not (opts.quiet and f.status == "pass")]
    rows: list[tuple[str, ...]] = [_row(f) for f in shown]
    headers: tuple[str, ...] = HEADERS
    if any(f.ci is not None for f in shown):
        headers = CI_HEADERS
        rows = [(*r[:3], ci_text(f), *r[3:]) for r, f in zip(rows, shown, strict=True)]
    if results.baseline is not None:  # --baseline: the change column
        from fairpolicy.baseline import change_cell

        at = headers.index("status") + 1
        headers = (*headers[:at], "change", *headers[at:])
        rows = [(*r[:at], change_cell(f.change), *r[at:]) for r, f in zip(rows, shown, strict=True)]
    status_col = headers.index("status")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: tuple[str, ...], status: str | None = None) -> str:
        parts = [c.ljust(w) for c, w in zip(cells, widths, strict=True)]
        if opts.color and status:
            parts[status_col] = f"{_COLORS[status]}{parts[status_col]}{_RESET}"
        return "  ".join(parts).rstrip()

    out = [line(headers), line(tuple("-" * w for w in widths))]
    if about(results):  # --subject / --meta, above the table
        out.insert(0, about_line(results))
    out += [line(r, f.status) for r, f in zip(rows, shown, strict=True)]
    notes = [f for f in results.findings if f.status in ("error", "inconclusive", "fail", "warn")]
    excluded = [f for f in results.findings if f.excluded_groups and not opts.verbose]
    if notes or excluded:
        out.append("")
    out += [printable(f"{f.control_id}: {f.message}") for f in notes]
    for f in excluded:
        listed = "; ".join(f"{e.group} (n={e.n}): {e.reason}" for e in f.excluded_groups[:3])
        more = len(f.excluded_groups) - 3
        out.append(
            printable(
                f"{f.control_id}: excluded {listed}"
                + (f"; and {more} more (-v)" if more > 0 else "")
            )
        )
    if opts.verbose:
        for f in results.findings:
            if f.groups or f.excluded_groups:
                cls = f.details.get("worst_class")
                label = f" (class {cls}, the one with the largest gap)" if cls is not None else ""
                out += ["", printable(f"{f.control_id} per group{label}:")]
                out += [
                    f"  {printable(g.group):<24} n={g.n:<8} {num(g.value)}"
                    + (f"  [{g.ci_low:.4f}, {g.ci_high:.4f}]" if g.ci_low is not None else "")
                    for g in f.groups
                ]
                support = class_support(f)
                if support:
                    out.append("  support (rows per true class):")
                    out += [
                        printable(f"    {g:<22} " + ", ".join(f"{c}: {n}" for c, n in cells))
                        for g, cells in support
                    ]
                if f.p_value is not None and f.p_value.p_value is not None:
                    fam = f", family of {f.p_value.family_size}" if f.p_value.bonferroni else ""
                    out.append(
                        f"  p-value {f.p_value.p_value:.4g} ({f.p_value.permutations} "
                        f"permutations {f.p_value.where}{fam})"
                    )
                    pv = f.p_value
                    if pv.groups and pv.comparisons and len(pv.groups) > 2:
                        adj = ", Bonferroni" if pv.bonferroni else ""
                        out += [
                            printable(f"    {pv.comparisons.get(g, g)}: p = {p:.4g}{adj}")
                            for g, p in pv.groups.items()
                        ]
                elif f.p_value is not None and f.p_value.reason:
                    out.append(printable(f"  no p-value: {f.p_value.reason}"))
                out += [
                    printable(f"  {e.group:<24} n={e.n:<8} excluded: {e.reason}")
                    for e in f.excluded_groups
                ]
    out += _ll144_lines(results, opts.verbose)
    out += _window_lines(results)
    if results.warnings:
        out.append("")
        out += [f"warning: {printable(w)}" for w in results.warnings]
    config = _ci.config_note(results)
    if config is not None:  # the file that set options, and each setting that loosens
        out += ["", printable(f"note: {config}")]
    s = results.summary
    verdict = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[s.gate]
    counts = (
        f"{s.total} control(s): {s.pass_} pass, {s.fail} fail, {s.warn} warn, "
        f"{s.inconclusive} inconclusive, {s.error} error"
    )
    if opts.color:
        verdict = f"{_COLORS['pass' if s.gate == 'pass' else 'fail']}{verdict}{_RESET}"
    out += ["", f"{verdict}: {counts} (exit {results.exit_code})"]
    return "\n".join(out) + "\n"


def _window_lines(results: Results) -> list[str]:
    """``--window``: the window axis and each control's newest windows."""
    from fairpolicy.formatters import _windows

    head = _windows.heading(results)
    if head is None:
        return []
    out = ["", printable(head)]
    for cid, cells in _windows.newest(results):
        out.append(printable(f"{cid} (newest {len(cells)}):"))
        widths = [max(len(c[i]) for c in cells) for i in range(5)] if cells else []
        out += [
            printable(
                "  " + "  ".join(c.ljust(w) for c, w in zip(cell, widths, strict=True))
            ).rstrip()
            for cell in cells
        ]
    return out


def _ll144_lines(results: Results, verbose: bool) -> list[str]:
    """Each LL144 control's comparator reading (always: it says how the ratio was read);
    with -v the summary of results (formatters/_ll144.py)."""
    from fairpolicy.formatters import _ll144

    out: list[str] = []
    for sm in _ll144.summaries(results):
        out += ["", printable(f"{sm.control_id}: LL144 {'; '.join(_ll144.lines(sm))}")]
        if verbose:
            rows = [_ll144.headers(sm)] + [_ll144.cells(sm, r) for r in sm.rows]
            widths = [max(len(printable(r[i])) for r in rows) for i in range(len(rows[0]))]
            out += [
                (
                    "  " + "  ".join(printable(c).ljust(w) for c, w in zip(r, widths, strict=True))
                ).rstrip()
                for r in rows
            ]
            out += [printable(f"  {k}: {v}") for k, v in _ll144.about(results)]
    return out
