"""Text for ``fairpolicy metrics`` and the README's metric table (both from the registry)."""

from __future__ import annotations

from fairpolicy.errors import UsageError
from fairpolicy.metrics.registry import COMMON_PARAMS, REGISTRY, lookup


def list_metrics() -> str:
    rows = [("key", "inputs", "tasks", "what it measures")]
    for key in sorted(REGISTRY):
        s = REGISTRY[key]
        rows.append((key, ",".join(s.inputs), ",".join(s.tasks), s.summary))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}" for r in rows]
    lines.append("")
    lines.append("`fairpolicy metrics show KEY` prints the formula, parameters and an example.")
    return "\n".join(lines) + "\n"


def example_control(key: str) -> str:
    s = lookup(key)
    binding = {"target": "y_true", "prediction": "y_pred", "dimension": "sex", "score": "y_score"}
    lines = [
        f"- control-id: {s.key.replace('_', '-')}",
        f'  description: "{s.summary}"',
        "  props:",
        f"    - {{name: metric_key, value: {s.key}}}",
        f'    - {{name: threshold, value: "{s.example_threshold}"}}',
        f'    - {{name: operator, value: "{s.example_operator}"}}',
    ]
    lines += [f"    - {{name: input.{r}, value: {binding[r]}}}" for r in s.inputs]
    return "\n".join(lines)


def show_metric(key: str) -> str:
    try:
        s = lookup(key)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    out = [s.key, "=" * len(s.key), "", s.formula, ""]
    out.append(f"inputs: {', '.join(s.inputs)}")
    out.append(f"tasks: {', '.join(s.tasks)}")
    out.append(f"ideal: {s.ideal:g} ({s.better} is better); range {list(s.value_range)}")
    if s.aliases:
        out.append(f"aliases: {', '.join(s.aliases)}")
    if s.multiclass_replacement:
        out.append(f"on K > 2 classes use: {', '.join(s.multiclass_replacement)}")
    out += ["", "parameters:"]
    for p in (*s.params, *COMMON_PARAMS):
        choices = f" one of {list(p.choices)}" if p.choices else ""
        out.append(f"  {p.name} (default {p.default!r}){choices}: {p.help}")
    out += ["", "example control:", example_control(s.key), ""]
    return "\n".join(out)


def markdown_table() -> str:
    """The README's list of metric keys (checked against the registry by a test)."""
    lines = ["| key | inputs | tasks | measures | aliases |", "|---|---|---|---|---|"]
    for key in sorted(REGISTRY):
        s = REGISTRY[key]
        aliases = ", ".join(f"`{a}`" for a in s.aliases)
        lines.append(
            f"| `{key}` | {', '.join(s.inputs)} | {', '.join(s.tasks)} | {s.summary} | {aliases} |"
        )
    return "\n".join(lines)
