"""``fairpolicy diff OLD.json NEW.json``: the change table alone (for a PR comment).

``diff`` decides by its own options alone — ``--max-regression`` (δ, source ``flag``),
``--fail-on`` and ``--inconclusive`` (defaults as ``check``'s) — and the policy both runs
were checked against (a control's own ``max_regression``, applied where it is stricter
than the flag's). The gate options stored in either results file (a ``--fail-on never``
or ``--inconclusive pass`` run, the δ NEW was checked with) are never read: a loosened
run cannot loosen its comparison. Header, rows and exit code are rendered from one
:class:`fairpolicy.decide.ChangeDecision`.

Exit 0 when no change fails the gate, 1 when one does, 2 when the two results cannot be
compared (not results JSON, another policy without ``--allow-policy-change``, a changed
control, an edited direction).
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from fairpolicy.baseline import change_text, compare, delta_text, load_baseline, trend
from fairpolicy.decide import ChangeDecision, ChangeRow, decide_changes
from fairpolicy.results import FailOn, InconclusivePolicy

__all__ = ["diff", "render"]


def diff(
    old_path: str,
    new_path: str,
    stdout: TextIO,
    *,
    fmt: str = "text",
    max_regression: float | str | None = None,
    allow_policy_change: bool = False,
    fail_on: FailOn = "error",
    inconclusive: InconclusivePolicy = "fail",
) -> int:
    old, sha = load_baseline(old_path)
    new, _ = load_baseline(new_path)
    # the new results' own findings, without a change from another comparison; NEW's
    # stored gate options and δ are not read (see the module docstring)
    plain = [f.model_copy(update={"change": None}) for f in new.findings]
    compared = compare(
        new.model_copy(update={"findings": plain, "baseline": None}),
        old,
        path=old_path,
        sha256=sha,
        max_regression=max_regression,
        allow_policy_change=allow_policy_change,
        max_regression_source="flag",
        new_path=new_path,
    )
    decision = decide_changes(compared, fail_on, inconclusive)
    stdout.write(render(decision, fmt, compared.baseline, compared.policy.sha256))
    return decision.exit_code


def _row(r: ChangeRow) -> dict[str, Any]:
    f = r.finding
    c = f.change
    assert c is not None
    word, amount = trend(c)
    return {
        "control_id": f.control_id,
        "metric_key": f.metric_key,
        "state": c.state,
        "before": c.baseline_value,
        "now": c.value,
        "better": c.better,
        "ideal": c.ideal,
        # signed (positive: worse), with the word and the positive amount beside it
        "worsened_by": c.worsened_by,
        "trend": word,
        "by": amount,
        "interval": None if c.low is None else [c.low, c.high],
        "level": c.level,
        "max_regression": c.max_regression,
        "max_regression_written": c.max_regression_written,
        "max_regression_source": c.max_regression_source,
        "verdict": c.verdict,
        "effect": r.effect,
        "fails_gate": r.fails,
        "worst_group_before": c.worst_group_before,
        "worst_group_now": c.worst_group_now,
        "groups_appeared": c.groups_appeared,
        "groups_vanished": c.groups_vanished,
        "reason": c.reason,
    }


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:.6g}"


def render(decision: ChangeDecision, fmt: str, ref: Any, policy_sha256: str | None) -> str:
    """The change table as ``text``, ``markdown`` or ``json``: every part from
    ``decision`` (header, rows, the gate)."""
    assert ref is not None
    rows = [_row(r) for r in decision.rows]
    if fmt == "json":
        doc = {
            "baseline": ref.model_dump(mode="json"),
            "policy_sha256": policy_sha256,
            "gate": decision.gate,
            "exit_code": decision.exit_code,
            "fail_on": decision.fail_on,
            "inconclusive": decision.inconclusive,
            "headline": decision.headline,
            "regressed": decision.failing,
            "changes": rows,
        }
        return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    headline = decision.headline
    if fmt == "markdown":
        out = [
            f"### fairpolicy diff: {headline}",
            "",
            f"Baseline `{ref.path}` (SHA-256 `{ref.sha256[:12]}`).",
            "",
            "| control | metric | before | now | change | δ | verdict | detail |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in decision.rows:
            f = r.finding
            c = f.change
            assert c is not None
            delta = "—" if c.max_regression is None else _cell(delta_text(c))
            out.append(
                f"| {_cell(f.control_id)} | {_cell(f.metric_key)} | {_num(c.baseline_value)} | "
                f"{_num(c.value)} | {_trend_cell(c)} | {delta} | "
                f"{'**' + r.mark + '**' if r.fails else r.mark} | "
                f"{_cell(change_text(c))} |"
            )
        for cid in ref.vanished_controls:
            out.append(f"| {_cell(cid)} | — | — | — | — | — | removed | not in the new results |")
        return "\n".join(out) + "\n"
    out = [f"fairpolicy diff against {ref.path}: {headline}"]
    for r in decision.rows:
        f = r.finding
        assert f.change is not None
        out.append(f"  {f.control_id} [{r.mark}] {f.metric_key}: {change_text(f.change)}")
    out += [f"  {cid} [removed]: not in the new results" for cid in ref.vanished_controls]
    return "\n".join(out) + "\n"


def _trend_cell(c: Any) -> str:
    word, amount = trend(c)
    if word is None or amount is None:
        return "—"
    return word if word == "unchanged" else f"{word} {amount:.6g}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
