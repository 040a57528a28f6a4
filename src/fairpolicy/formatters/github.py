"""``-o github``: GitHub Actions workflow commands, so a failing control is annotated on
its line of the policy file in the run and in the pull request's diff.

::

    ::group::fairpolicy: POLICY TITLE (policy path)
    PASS four-fifths-sex: demographic_parity_ratio = 0.9154 (>= 0.8)
    ::error file=policy.yaml,line=12,title=fairpolicy%3A weighted-f1-gap-site::weighted_f1_gap = …
    ::endgroup::
    fairpolicy: FAIL: 6 control(s): 3 pass, 3 fail, 0 warn, 0 inconclusive, 0 error (exit 1)

One group per policy (a run checks one) holding a line per control and, for each control
that did not pass, an annotation at the control's line (``finding.source``; the policy
file without a line when it is unknown; the path relative to the working directory, the
workspace in CI): ``::error`` when the control fails the gate or could not be evaluated
— the same rule as the exit code — else ``::warning`` (warn and monitor controls,
``--inconclusive pass|warn``, ``--fail-on never``). The run's warnings become
``::warning`` lines. GitHub shows at most 10 error and 10 warning annotations per step;
the SARIF output (``-o sarif``) carries all of them. The Markdown report goes to the step
summary — the CLI appends it to ``$GITHUB_STEP_SUMMARY`` — so this module only writes
commands.

Escaping follows the runner's rules (``@actions/core``'s ``command.ts``): in a message
``%`` → ``%25``, ``\\r`` → ``%0D``, ``\\n`` → ``%0A``; in a property also ``:`` → ``%3A``
and ``,`` → ``%2C``. So user text can neither end a command early nor start another
(``::`` in a group name stays inside the message), and the runner decodes it back to
the original text. The plain lines collapse whitespace to single spaces and start with a
status word, so they are never read as commands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairpolicy.formatters import _ci
from fairpolicy.formatters._shown import for_humans

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results


def escape_data(text: object) -> str:
    text = _ci.inert(text)  # the log viewer renders ANSI escapes
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: object) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: object) -> str:
    """``::name k=v,…::message`` with every value escaped; None-valued props left out."""
    given = ",".join(f"{k}={escape_property(v)}" for k, v in props.items() if v is not None)
    return f"::{name}{' ' + given if given else ''}::{escape_data(message)}"


def _plain(text: str) -> str:
    return " ".join(_ci.inert(text).split())


def _annotation(results: Results, f: Finding) -> str:
    level = "error" if _ci.fails_gate(results, f) else "warning"
    file, line = _ci.location(results, f)
    parts = [f.message]  # the message already carries the interval, if any
    if f.worst_group and f.status in ("fail", "warn"):
        parts.append(f"worst group {_ci.worst_group(f)}")
    for e in f.excluded_groups:
        parts.append(f"excluded {e.group} (n={e.n}): {e.reason}")
    note = _ci.gate_note(results, f)
    if note:
        parts.append(note)
    if f.title:
        parts.append(f"control: {f.title}")
    title = f"fairpolicy: {f.control_id} {_ci.STATUS_WORD[f.status]}"
    return command(
        level,
        "\n".join(parts),
        file=_ci.shown_path(file) if file else None,
        line=line,
        title=title,
    )


def render(results: Results, opts: RenderOptions) -> str:
    results = for_humans(results)  # the worst groups; the JSON has every one
    policy = results.policy
    name = policy.title or (_ci.shown_path(policy.path) if policy.path else "policy")
    if policy.title and policy.path:
        name += f" ({_ci.shown_path(policy.path)})"
    out = [command("group", f"fairpolicy: {_plain(name)}")]
    if _ci.about(results):  # --subject / --meta
        out.append(_plain(_ci.about_line(results)))
    for f in results.findings:
        if not (opts.quiet and f.status == "pass"):
            summary = f"{f.metric_key} = {_ci.value_text(f)} ({f.operator} {_ci.threshold(f)})"
            if f.ci is not None:
                summary += f" CI {_ci.ci_text(f)}"
            if f.change is not None:  # --baseline
                from fairpolicy.baseline import change_cell

                summary += f" change {change_cell(f.change)}"
            out.append(_plain(f"{_ci.STATUS_WORD[f.status]} {f.control_id}: {summary}"))
        if f.status != "pass":
            out.append(_annotation(results, f))
    out.append("::endgroup::")
    out += [command("warning", w, title="fairpolicy") for w in results.warnings]
    if _ci.config_loosening(results):
        out.append(command("warning", _ci.config_note(results) or "", title="fairpolicy"))
    verdict = {"pass": "PASS", "fail": "FAIL", "error": "ERROR"}[results.summary.gate]
    out.append(f"fairpolicy: {verdict}: {_ci.verdict(results)} (exit {results.exit_code})")
    return "\n".join(out) + "\n"
