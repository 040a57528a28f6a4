"""What the human-read formats show of a run with very many groups.

The JSON (and OSCAL) reports stay complete. Text, HTML, Markdown, SARIF, JUnit and the
GitHub annotations are read by people (or shown in a CI log or a code-scanning page): a
control over 100,000 groups would write a 100 MB HTML file, or a warning naming every
group. :func:`for_humans` keeps, per finding, the worst :data:`SHOWN_GROUPS` groups (the
ones furthest from the middle of the compared values, always including the worst, highest
and lowest groups), the first :data:`SHOWN_GROUPS` excluded groups, and their counts and
p-values, and adds a warning per cut finding: "… and M more groups in the JSON report".
A run with fewer groups is returned unchanged, so small reports do not change at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fairpolicy.results import Finding, GroupResult, Results

#: groups (and excluded groups) a human-read format shows per control
SHOWN_GROUPS = 50


def _worst(f: Finding, limit: int) -> list[GroupResult]:
    """The ``limit`` groups furthest from the median value, in their original order; the
    named worst, highest and lowest groups first among equals."""
    named = {
        g
        for g in (f.worst_group, f.details.get("max_group"), f.details.get("min_group"))
        if isinstance(g, str)
    }
    values = sorted(g.value for g in f.groups if g.value is not None)
    middle = values[len(values) // 2] if values else 0.0

    def badness(i: int) -> tuple[bool, float, int]:
        g = f.groups[i]
        spread = abs(g.value - middle) if g.value is not None else -1.0
        return (g.group in named, spread, g.n)

    keep = sorted(range(len(f.groups)), key=badness, reverse=True)[:limit]
    return [f.groups[i] for i in sorted(keep)]


def _cut(f: Finding, limit: int) -> tuple[Finding, str | None]:
    more = len(f.groups) - limit
    more_excluded = len(f.excluded_groups) - limit
    if more <= 0 and more_excluded <= 0:
        return f, None
    groups = _worst(f, limit) if more > 0 else list(f.groups)
    excluded = list(f.excluded_groups[:limit])
    shown = {g.group for g in groups} | {e.group for e in excluded}
    update: dict[str, Any] = {
        "groups": groups,
        "excluded_groups": excluded,
        "counts": {g: c for g, c in f.counts.items() if g in shown},
    }
    if f.p_value is not None and f.p_value.groups:
        pv = {g: p for g, p in f.p_value.groups.items() if g in shown}
        update["p_value"] = f.p_value.model_copy(update={"groups": pv})
    parts = []
    if more > 0:
        parts.append(f"the worst {limit} of {len(f.groups):,} compared groups")
    if more_excluded > 0:
        parts.append(f"the first {limit} of {len(f.excluded_groups):,} excluded groups")
    hidden = max(more, 0) + max(more_excluded, 0)
    note = (
        f"control '{f.control_id}': this report shows {' and '.join(parts)}; … and "
        f"{hidden:,} more groups in the JSON report (-o json=PATH)"
    )
    return f.model_copy(update=update), note


def for_humans(results: Results, limit: int = SHOWN_GROUPS) -> Results:
    """``results`` with each finding cut to ``limit`` groups, and a note per cut finding
    (unchanged when no finding has more)."""
    findings, notes = [], []
    for f in results.findings:
        cut, note = _cut(f, limit)
        findings.append(cut)
        if note:
            notes.append(note)
    if not notes:
        return results
    return results.model_copy(
        update={"findings": findings, "warnings": [*results.warnings, *notes]}
    )
