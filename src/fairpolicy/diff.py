"""``fairpolicy diff OLD.json NEW.json``: the change table alone (for a PR comment).

Exit 0 when no control regressed beyond its ``max_regression``, 1 when one did (decided
by :func:`fairpolicy.results.gate_effect`, the gate table, on the change alone), 2 when the
two results cannot be compared (not results JSON, another policy without
``--allow-policy-change``, a changed control).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from fairpolicy.baseline import change_text, compare, load_baseline
from fairpolicy.errors import EXIT_FAIL, EXIT_PASS
from fairpolicy.results import Finding, Results, gate_effect

__all__ = ["diff", "regressed", "render"]


def regressed(results: Results, f: Finding) -> bool:
    """Whether ``f``'s change alone fails the gate (its status left aside)."""
    if f.change is None or f.change.verdict in ("ok", "none"):
        return False
    alone = f.model_copy(update={"status": "pass"})
    return gate_effect(alone, results.run.inconclusive, results.run.fail_on) == "fail"


def diff(
    old_path: str,
    new_path: str,
    stdout: TextIO,
    *,
    fmt: str = "text",
    max_regression: float | None = None,
    allow_policy_change: bool = False,
) -> int:
    old, sha = load_baseline(old_path)
    new, _ = load_baseline(new_path)
    if max_regression is None and new.baseline is not None:
        # NEW was checked with --max-regression: the same δ, unless one is given here
        max_regression = new.baseline.max_regression
    # the new results' own findings, without a change from another comparison
    plain = [f.model_copy(update={"change": None}) for f in new.findings]
    compared = compare(
        new.model_copy(update={"findings": plain, "baseline": None}),
        old,
        path=old_path,
        sha256=sha,
        max_regression=max_regression,
        allow_policy_change=allow_policy_change,
    )
    stdout.write(render(compared, fmt))
    return EXIT_FAIL if any(regressed(compared, f) for f in compared.findings) else EXIT_PASS


def _row(results: Results, f: Finding) -> dict[str, Any]:
    c = f.change
    assert c is not None
    return {
        "control_id": f.control_id,
        "metric_key": f.metric_key,
        "state": c.state,
        "before": c.baseline_value,
        "now": c.value,
        "better": c.better,
        "worsened_by": c.worsened_by,
        "interval": None if c.low is None else [c.low, c.high],
        "level": c.level,
        "max_regression": c.max_regression,
        "verdict": c.verdict,
        "fails_gate": regressed(results, f),
        "worst_group_before": c.worst_group_before,
        "worst_group_now": c.worst_group_now,
        "groups_appeared": c.groups_appeared,
        "groups_vanished": c.groups_vanished,
        "reason": c.reason,
    }


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


def render(results: Results, fmt: str) -> str:
    """The change table as ``text``, ``markdown`` or ``json``."""
    ref = results.baseline
    assert ref is not None
    rows = [_row(results, f) for f in results.findings]
    if fmt == "json":
        doc = {
            "baseline": ref.model_dump(mode="json"),
            "policy_sha256": results.policy.sha256,
            "regressed": sum(r["fails_gate"] for r in rows),
            "changes": rows,
        }
        return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    n = sum(r["fails_gate"] for r in rows)
    verdict = f"{n} control(s) regressed beyond max_regression" if n else "no regression beyond δ"
    if fmt == "markdown":
        out = [
            f"### fairpolicy diff: {verdict}",
            "",
            f"Baseline `{ref.path}` (SHA-256 `{ref.sha256[:12]}`).",
            "",
            "| control | metric | before | now | worse by | δ | verdict | change |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for f, r in zip(results.findings, rows, strict=True):
            assert f.change is not None
            out.append(
                f"| {_cell(f.control_id)} | {_cell(f.metric_key)} | {_num(r['before'])} | "
                f"{_num(r['now'])} | {_num(r['worsened_by'])} | {_num(r['max_regression'])} | "
                f"{'**regressed**' if r['fails_gate'] else r['verdict']} | "
                f"{_cell(change_text(f.change))} |"
            )
        for cid in ref.vanished_controls:
            out.append(f"| {_cell(cid)} | — | — | — | — | — | removed | not in the new results |")
        return "\n".join(out) + "\n"
    out = [f"fairpolicy diff against {ref.path}: {verdict}"]
    for f, r in zip(results.findings, rows, strict=True):
        assert f.change is not None
        mark = "REGRESSED" if r["fails_gate"] else r["verdict"]
        out.append(f"  {f.control_id} [{mark}] {f.metric_key}: {change_text(f.change)}")
    out += [f"  {cid} [removed]: not in the new results" for cid in ref.vanished_controls]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
