"""Text for ``fairpolicy metrics`` and the README's metric table (both from the registry)."""

from __future__ import annotations

from fairpolicy.errors import UsageError, did_you_mean
from fairpolicy.metrics.base import NULL_HYPOTHESES, MetricSpec
from fairpolicy.metrics.direction import direction_text
from fairpolicy.metrics.registry import COMMON_PARAMS, REGISTRY, lookup

#: The fairness-metrics tutorial's "selection guide":
#: application context → (primary concern, recommended keys).
GUIDE: dict[str, tuple[str, tuple[str, ...]]] = {
    "hiring": (
        "equal opportunity for qualified candidates",
        ("equal_opportunity_diff", "impact_ratio", "demographic_parity_ratio"),
    ),
    "lending": (
        "equal access and equal errors",
        (
            "demographic_parity_ratio",
            "equalized_odds_diff",
            "calibration_parity",
            "calibration_diff",
        ),
    ),
    "criminal-justice": ("protect innocents equally", ("fpr_diff",)),
    "healthcare": (
        "equal diagnostic accuracy",
        ("equal_opportunity_diff", "predictive_parity_diff", "calibration_parity"),
    ),
    "search": ("fair exposure", ("exposure_ratio", "ndkl", "attention_parity")),
    "salary": ("no systematic bias", ("mean_prediction_parity", "residual_parity")),
    "advertising": (
        "equal opportunity to see ads",
        ("demographic_parity_diff", "exposure_ratio"),
    ),
}


#: keys fairpolicy adds to the tutorial's guide, with the reason shown beside them
GUIDE_ADDED: dict[tuple[str, str], str] = {
    (ctx, "demographic_parity_ratio"): (
        "the four-fifths rule (US EEOC Uniform Guidelines, 29 CFR 1607.4(D); adverse impact in "
        "fair-lending reviews): a selection-rate ratio below 0.8 is the first thing a reviewer "
        "asks for — demographic_parity_ratio >= 0.8"
    )
    for ctx in ("hiring", "lending")
}


#: how score columns are paired with classes; shown for every metric that reads scores
SCORE_COLUMNS_RULE = (
    "score columns: one column holds P(positive class); several hold one class each. "
    "Integer labels 0..K-1 pair y_score_k (or the k-th listed column) with class k. Text "
    "labels need the pairing written down: input.score: nevus=p_0, melanoma=p_1, … or a "
    "classes prop listing the labels in column order (classes: nevus,melanoma,…); without "
    "it the control stops with exit 2 and shows the line to write. A single column with "
    "text labels names its class the same way (input.score: melanoma=p) or by "
    "positive_label."
)

#: the common parameters that apply to every kind (the others shape class labels)
_GENERAL = ("min_samples", "missing")


def roles_text(s: MetricSpec, sep: str = ", ") -> str:
    """The roles a metric reads: required, one-of, optional."""
    text = sep.join(s.inputs)
    if s.one_of:
        text += f"{sep if s.inputs else ''}one of {'/'.join(s.one_of)}"
    if s.optional:
        text += f" (optional: {'/'.join(s.optional)})"
    return text.strip()


def list_metrics() -> str:
    rows = [("key", "inputs", "tasks", "what it measures")]
    for key in sorted(REGISTRY):
        s = REGISTRY[key]
        rows.append((key, roles_text(s, ","), ",".join(s.tasks), s.summary))
    w = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}" for r in rows]
    lines.append("")
    lines.append("`fairpolicy metrics show KEY` prints the formula, parameters and an example.")
    return "\n".join(lines) + "\n"


def recommend(context: str) -> str:
    """``fairpolicy metrics --for CONTEXT``: the fairness-metrics tutorial's recommended metrics."""
    if context not in GUIDE:
        raise UsageError(
            f"unknown context '{context}'.{did_you_mean(context, GUIDE)} "
            f"Contexts: {', '.join(GUIDE)}."
        )
    concern, keys = GUIDE[context]
    lines = [f"{context}: primary concern — {concern}", ""]
    w = max(len(k) for k in keys)
    lines += [f"  {k:<{w}}  {REGISTRY[k].summary}" for k in keys]
    added = [(k, GUIDE_ADDED[(context, k)]) for k in keys if (context, k) in GUIDE_ADDED]
    if added:
        lines.append("")
        lines += [f"  {k}: added by fairpolicy to the tutorial's list — {why}" for k, why in added]
    lines += ["", "`fairpolicy metrics show KEY` prints the formula and an example control."]
    return "\n".join(lines) + "\n"


def example_control(key: str) -> str:
    s = lookup(key)
    binding = {
        "target": "y_true",
        "prediction": "y_pred",
        "dimension": "sex",
        "score": "y_score",
        "rank": "rank",
        "site": "site",
        "fields": "source_file,source_version",
        "sensitive_columns": "age,sex,race",
    }
    lines = [
        f"- control-id: {s.key.replace('_', '-')}",
        f'  description: "{s.summary}"',
        "  props:",
        f"    - {{name: metric_key, value: {s.key}}}",
        f'    - {{name: threshold, value: "{s.example_threshold}"}}',
        f'    - {{name: operator, value: "{s.example_operator}"}}',
    ]
    lines += [f"    - {{name: input.{r}, value: {binding[r]}}}" for r in (*s.inputs, *s.one_of[:1])]
    return "\n".join(lines)


def null_lines(s: MetricSpec) -> list[str]:
    """What the permutation test (``p_value``) of this metric tests, one line per case."""
    if s.kind in ("regression", "ranking"):
        return ["permutation null: no permutation test (use a bootstrap interval, ci)"]
    if s.column_counts is not None:
        return ["permutation null: no permutation test (it measures columns, not groups)"]
    if s.kind == "data":
        return ["permutation null: no permutation test (it reads the group sizes, which it keeps)"]
    if s.secondary_role is not None:
        return [f"permutation null: no permutation test (it also reads input.{s.secondary_role})"]
    if not isinstance(s.null_stratum, tuple):
        return [f"permutation null: {NULL_HYPOTHESES[s.null_stratum]}"]
    name, by_value = s.null_stratum
    out = [f"permutation null, by {name}:"]
    for stratum in dict.fromkeys(by_value.values()):
        values = ", ".join(v for v, st in by_value.items() if st == stratum)
        out.append(f"  {name} = {values}: {NULL_HYPOTHESES[stratum]}")
    return out


def show_metric(key: str) -> str:
    from fairpolicy.metrics.refused import REFUSED

    if key.strip() in REFUSED:  # known, and refused under that name: say why
        what, fix = REFUSED[key.strip()]
        raise UsageError(what, hint=fix)
    try:
        s = lookup(key)
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    out = [s.key, "=" * len(s.key), "", s.formula, ""]
    out.append(f"inputs (the roles it reads): {roles_text(s)}")
    out.append(f"tasks: {', '.join(s.tasks)}")
    out.append(f"ideal: {s.ideal:g} ({s.better} is better); range {list(s.value_range)}")
    out.append(direction_text(s))
    if s.aliases:
        out.append(f"aliases: {', '.join(s.aliases)}")
    if s.multiclass_replacement:
        out.append(f"on K > 2 classes use: {', '.join(s.multiclass_replacement)}")
    out += null_lines(s)
    if s.needs_scores:
        out += ["", SCORE_COLUMNS_RULE]
    out += ["", "parameters:"]
    common = [p for p in COMMON_PARAMS if s.kind == "classification" or p.name in _GENERAL]
    for p in (*s.params, *common):
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
        summary = s.summary.replace("|", "\\|")
        lines.append(
            f"| `{key}` | {roles_text(s)} | {', '.join(s.tasks)} | {summary} | {aliases} |"
        )
    return "\n".join(lines)


def metrics_markdown() -> str:
    """``docs/metrics.md``: every registry entry, generated (a test checks it is current)."""
    out = [
        "# Metric reference",
        "",
        "Generated from the registry by `python -m fairpolicy.metrics.docs > docs/metrics.md`;",
        "do not edit by hand. `fairpolicy metrics show KEY` prints the same text. The sources",
        "each entry names (fmm-fairness-eval, holisticai, eval-toolkit, Venturalitica, the",
        "fairness-metrics tutorial, fairlearn, aif360, Aequitas, the papers) are cited in",
        "[`references.md`](references.md).",
        "",
        markdown_table(),
        "",
    ]
    for key in sorted(REGISTRY):
        s = REGISTRY[key]
        out += [f"## `{key}`", "", s.summary, "", "```text", s.formula, "```", ""]
        out.append(f"- inputs: {roles_text(s)}")
        out.append(f"- tasks: {', '.join(s.tasks)}")
        out.append(f"- ideal: {s.ideal:g} ({s.better} is better); range {list(s.value_range)}")
        if s.aliases:
            out.append(f"- aliases: {', '.join(f'`{a}`' for a in s.aliases)}")
        if s.multiclass_replacement:
            out.append(f"- on K > 2 classes use: {', '.join(s.multiclass_replacement)}")
        out += [f"- {line.strip()}" for line in null_lines(s)]
        if s.needs_scores:
            out.append(f"- {SCORE_COLUMNS_RULE}")
        for p in s.params:
            choices = f" (one of {', '.join(map(str, p.choices))})" if p.choices else ""
            out.append(f"- parameter `{p.name}` = `{p.default}`{choices}: {p.help}")
        out += ["", "```yaml", example_control(key), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":  # python -m fairpolicy.metrics.docs > docs/metrics.md
    print(metrics_markdown(), end="")
