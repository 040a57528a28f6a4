"""``fairpolicy check --explain CONTROL``: one control as the run would evaluate it.

The policy is loaded and resolved by the same code ``check`` uses (profiles, catalogs,
component-definitions, policy-wide ``metadata.props``), the command line's overrides are
applied by :func:`fairpolicy.planning.apply_overrides`, and each setting is printed with
where it came from: the document and place that wrote it (catalog, profile,
component-definition, the list/assessment-plan file), the command line, or the registry's
default. No data is read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import UsageError, did_you_mean
from fairpolicy.policy.schema import Control, Policy

if TYPE_CHECKING:
    from fairpolicy.policy.binds import Binds

__all__ = ["explain"]

#: command-line options that set a control parameter (``check``'s flags)
FLAGS = {
    "ci": "--bootstrap",
    "ci_level": "--ci-level",
    "ci_method": "--ci-method",
    "resample": "--resample",
    "decision": "--decision",
    "p_value": "--p-value",
    "bonferroni": "--bonferroni",
    "num_classes": "--num-classes",
    "positive_label": "--positive-label",
}


def _threshold(c: Control) -> str:
    t = c.threshold
    if c.operator.value == "between":
        low, high = t.render().strip("[]").split(", ")
        return f"between {low} and {high}"
    return f"{c.operator.value} {t.render()}"


def explain(
    written: Policy,
    resolved: Policy,
    control_id: str,
    bind: Any,
    params: Mapping[str, Any],
) -> str:
    """The text for ``--explain``: ``written`` is the policy as loaded, ``resolved`` with
    the command line's overrides (``bind``, the statistics ``params``) applied."""
    from fairpolicy.metrics.registry import COMMON_PARAMS, lookup

    ids = [c.control_id for c in resolved.controls]
    if control_id not in ids:
        raise UsageError(
            f"--explain {control_id}: the policy has no control '{control_id}'."
            f"{did_you_mean(control_id, ids)}",
            key="--explain",
            hint=f"its controls: {', '.join(ids)}",
        )
    c = next(x for x in resolved.controls if x.control_id == control_id)
    before = next(x for x in written.controls if x.control_id == control_id)
    where = written.prop_where.get(control_id, {})
    spec = lookup(c.metric_key)
    at = f"{c.source.file}:{c.source.line}" if c.source and c.source.line else None
    rows: list[tuple[str, str, str]] = []

    def origin(name: str, default: str = "default") -> str:
        return where.get(name, default)

    written_as = f"{c.metric_key} (written '{c.metric_key_as_written}')"
    rows.append(("metric_key", written_as, origin("metric_key")))
    how = {
        "prop": "threshold prop",
        "catalog": "catalog param",
        "profile": "profile set-parameters",
        "component-definition": "component-definition set-parameters",
    }.get(c.threshold_source or "prop", c.threshold_source or "threshold prop")
    rows.append(("threshold", _threshold(c), f"{how}: {origin('threshold', origin('operator'))}"))
    rows.append(("operator", c.operator.value, origin("operator")))
    mode_from = origin("enforcement_mode", origin("severity", "default (block)"))
    rows.append(("enforcement_mode", c.enforcement_mode.value, mode_from))
    if c.severity:
        rows.append(("severity", c.severity, origin("severity")))
    for role in sorted(c.inputs):
        value = c.inputs[role]
        by = next((h for r, _, _, h in c.bind_changes if r == role), None)
        if by is not None and before.inputs.get(role) != value:
            src = f"command line ({by})"
        elif (at_ := where.get(f"input.{role}")) is not None:
            src = at_
        else:
            src = "metadata.props (policy-wide)"
        read = role in (*spec.inputs, *spec.one_of, *spec.optional)
        rows.append((f"input.{role}", value + ("" if read else " (bound, not read)"), src))
    declared = {p.name: p for p in (*COMMON_PARAMS, *spec.params)}
    for name in sorted(set(c.params) | {p.name for p in spec.params}):
        if name in c.params:
            value = c.params[name]
            if name in params and before.params.get(name) != value:
                src = f"command line ({FLAGS.get(name, '--' + name)})"
            else:
                src = origin(name, "metadata.props (policy-wide)")
        else:
            value, src = declared[name].default, "default"
        rows.append((name, str(value), src))
    reads = ", ".join(spec.inputs)
    if spec.one_of:
        reads += f"{', ' if spec.inputs else ''}one of {'/'.join(spec.one_of)}"
    if spec.optional:
        reads += f" (optional: {'/'.join(spec.optional)})"
    w = max(len(r[0]) for r in rows)
    v = min(48, max(len(r[1]) for r in rows))
    head = [
        f"control {c.control_id}" + (f" — {c.title}" if c.title else ""),
        f"  policy: {resolved.path or '(in memory)'} ({resolved.form} form)"
        + (f", defined at {at}" if at else ""),
        f"  metric: {spec.key} — {spec.summary}",
        f"  reads: {reads}",
        "",
        f"  {'setting':<{w}}  {'value':<{v}}  from",
    ]
    body = [f"  {name:<{w}}  {value:<{v}}  {src}" for name, value, src in rows]
    return "\n".join([*head, *body]) + "\n"


def explain_args(args: Any, bind: Binds) -> str:
    """``--explain`` from the parsed ``check`` arguments (``bind`` already parsed)."""
    from fairpolicy.planning import apply_overrides, load

    written = load(args.policy, args.allow_path, args.strict, bind.bound_roles())
    params = {
        k: v
        for k, v in {
            "ci": args.bootstrap,
            "ci_level": args.ci_level,
            "ci_method": args.ci_method,
            "resample": args.resample,
            "decision": args.decision,
            "p_value": args.p_value,
            "bonferroni": args.bonferroni or None,
        }.items()
        if v is not None
    }
    label = getattr(args, "positive_label", None)
    resolved = apply_overrides(written, bind, args.num_classes, params, label)
    if args.num_classes is not None:
        params = {**params, "num_classes": args.num_classes}
    if label is not None:  # a default: shown as the command line's where it applied
        params = {**params, "positive_label": label}
    return explain(written, resolved, args.explain, bind, params)
