"""Load a policy file in any accepted form into a validated :class:`Policy`.

One path: every form (Venturalitica assessment-plan, component-definition, bare list,
catalog, profile) becomes a list of :class:`~fairpolicy.policy.oscal.RawControl`;
:func:`_build` validates each into a :class:`Control`, collecting every problem of
the file before one :class:`~fairpolicy.errors.PolicyError` is raised.
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import PolicyError, close_match, did_you_mean
from fairpolicy.exact import (
    MAX_EXPONENT,
    exact_bound,
    exact_decimal,
    written_threshold,
)
from fairpolicy.policy import dialect as dialects
from fairpolicy.policy import keys, oscal
from fairpolicy.policy.modes import MODE_SPELLINGS, effective_mode
from fairpolicy.policy.numbers import NUMBER_HINT, parse_float
from fairpolicy.policy.oscal import ROOTS, Ctx, RawControl
from fairpolicy.policy.param_props import metric_params
from fairpolicy.policy.param_props import prop_text as _text
from fairpolicy.policy.schema import (
    CONTROL_PROPS,
    NS,
    OPERATOR_SPELLINGS,
    POLICY_WIDE_PROPS,
    ROLES,
    Control,
    Operator,
    Policy,
    SourceLocation,
    Threshold,
)

if TYPE_CHECKING:
    from fairpolicy.metrics.base import MetricSpec

__all__ = ["load_policy"]

#: Venturalitica's roles of its privacy metrics → fairpolicy's: the quasi-identifiers group
#: the rows (the dimension), the sensitive attribute is the labelled column (the target)
ROLE_ALIASES = {
    "quasi_identifiers": "dimension",
    "sensitive_attribute": "target",
    "sensitive": "target",
}
#: the metrics those spellings apply to
PRIVACY_KEYS = frozenset({"k_anonymity", "l_diversity", "t_closeness"})
#: how to bind a role a metric needs, where "name the column" is not the whole story
ROLE_HINTS = {
    "sensitive_columns": "add a prop input.sensitive_columns listing the sensitive columns "
    "(a comma list); fairpolicy does not guess them from the column names as Venturalitica "
    "does (it counts every name containing 'id', 'age', 'income' …)",
    "fields": "add a prop input.fields listing the provenance columns (a comma list) or pass "
    "--bind fields=COLUMN,COLUMN",
}
#: plain props Venturalitica's privacy metrics take as keywords naming columns: read as
#: the role they name (``quasi_identifiers: age, gender`` is input.dimension)
PLAIN_ROLES = {
    "quasi_identifiers": "dimension",
    "sensitive_attribute": "target",
    "sensitive_columns": "sensitive_columns",
}
#: Venturalitica's bucketing of a numeric dimension (group_min_positive_rate), refused
AGE_BUCKET_PROPS = frozenset({"age_bucket_method", "age_buckets"})
#: Venturalitica's names of the protected attribute(s), for any metric: the dimension
#: (a comma list is an intersection, as for input.dimension)
DIMENSION_ALIASES = {
    "protected_attributes": "dimension",
    "protected_attribute": "dimension",
}

#: Common misspellings of operators → the spelling meant.
_OPERATOR_GUESSES = {
    "=<": "<=",
    "=>": ">=",
    "=": "==",
    "<>": "!=",
    "less_than": "lt",
    "greater_than": "gt",
    "less_or_equal": "le",
    "greater_or_equal": "ge",
    "equal": "eq",
    "equals": "eq",
    "not_equal": "ne",
}


def load_policy(
    source: str | os.PathLike[str] | Mapping[str, Any] | list[Any],
    *,
    base_dir: str | os.PathLike[str] | None = None,
    allow_paths: Sequence[str | os.PathLike[str]] = (),
    strict: bool = False,
    bound: Collection[str] = (),
) -> Policy:
    """Load and validate a policy.

    ``bound``: roles the command line binds for every control (``--bind ROLE=…``), or for
    one (``CONTROL:ROLE``), so a control that does not name them itself is not missing them
    (a template that leaves its columns to the user: Venturalitica's HUDERIA templates).

    ``strict`` (``--strict``): every document must be valid OSCAL — a catalog, profile or
    component-definition NIST's schema accepts; otherwise what the schema would reject is
    one warning per document and the policy is evaluated (see
    :func:`fairpolicy.policy.oscal.validate_oscal`).

    ``source`` is a path to a YAML or JSON file, or an already-parsed mapping or list.
    ``base_dir`` is where relative hrefs (a component-definition's ``source``, a
    profile's imports) resolve; default the file's directory, or the working directory
    for a mapping. Files the policy names (imports, sources) must lie in that folder's
    tree or under one of ``allow_paths`` (``--allow-path``). Raises
    :class:`PolicyError` listing every problem found.
    """
    sha = file = None
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        data, sha = oscal.read_document(path)
        file, base = str(path), path.parent
    elif isinstance(source, Mapping | list):
        data, base = source, Path.cwd()
    else:
        raise PolicyError(
            f"cannot load a policy from {type(source).__name__}.",
            hint="pass a path, a mapping or a list",
        )
    if base_dir is not None:
        base = Path(base_dir)
    ctx = Ctx(roots=oscal.confinement(base, allow_paths), strict=strict)
    form, metadata, raws = _normalise(data, file, base, ctx)
    ctx.recognised = dialects.recognise(form, metadata, bool(ctx.colon_files))
    if strict and form in ("list", "assessment-plan"):
        ctx.add(
            f"--strict requires valid OSCAL input, but this policy is in the {form} form "
            "(fairpolicy's and Venturalitica's own form, not an OSCAL model)",
            file,
            key=form,
            hint="run `fairpolicy convert POLICY -o catalog.json --profile profile.json` and "
            "check the profile, or drop --strict",
        )
    raws = _policy_wide(metadata, raws, file, ctx)
    assessors, organization = _people(metadata, file, ctx)
    given = frozenset(bound)
    controls = [c for c in (_build(raw, ctx, given) for raw in raws) if c is not None]
    _check_ids(raws, form, file, ctx)
    if ctx.problems:
        raise PolicyError(ctx.problems)
    ctx.warnings += dialects.summary(controls, ctx)
    try:
        return Policy(
            path=file,
            sha256=sha,
            title=_text(metadata.get("title")),
            version=_text(metadata.get("version")),
            form=form,
            controls=tuple(controls),
            warnings=tuple(ctx.warnings),
            documents=tuple(ctx.documents),
            assessors=assessors,
            organization=organization,
            prop_where={
                str(r.control_id): _where(r) for r in raws if isinstance(r.control_id, str)
            },
        )
    except ValueError as exc:  # not expected: _build checks what the records check
        raise PolicyError(str(exc), file=file) from None


# ---------------------------------------------------------------- forms → raw controls


def _normalise(
    data: Any, file: str | None, base: Path, ctx: Ctx
) -> tuple[str, Mapping[str, Any], list[RawControl]]:
    """(form, metadata, raw controls) of a parsed document."""
    if isinstance(data, list):
        for item in data:
            keys.check_keys("list-control", item, file, ctx)
        return "list", {}, [r for i in data if (r := oscal.raw_control(i, file, ctx)) is not None]
    roots = [k for k in data if k in ROOTS] if isinstance(data, Mapping) else []
    if len(roots) != 1:
        ctx.add(*_root_problem(data, roots, file))
        return "unknown", {}, []
    root = roots[0]
    for key in data:
        if key not in (root, "$schema"):
            ctx.add(
                f"the document has the top-level key '{key}' beside '{root}'; fairpolicy does "
                "not read it, so it is refused rather than ignored",
                file,
                key=str(key),
                hint=f"move it into '{root}' where it belongs (a control's settings are its "
                "props), or remove it",
            )
    body = data[root]
    if not isinstance(body, Mapping):
        ctx.add(f"'{root}' must be a mapping", file, key=root)
        return root, {}, []
    metadata = oscal.mapping(body, "metadata")
    if root == "assessment-plan":
        keys.check_keys(root, body, file, ctx)
        impls = oscal.items(body, "control-implementations", file, ctx) + oscal.items(
            oscal.mapping(body, "reviewed-controls"), "control-implementations", file, ctx
        )
        reqs = [ir for i in impls for ir in oscal.items(i, "implemented-requirements", file, ctx)]
        raws = [r for ir in reqs if (r := oscal.raw_control(ir, file, ctx)) is not None]
    elif root == "system-security-plan":
        from fairpolicy.policy import forms

        raws = forms.system_security_plan(body, file, ctx)
    elif root == "component-definition":
        from fairpolicy.policy import component  # (with profile) not for a bare list

        raws = component.component_definition(body, file, base, ctx)
    else:
        from fairpolicy.policy import profile

        controls = profile.catalog_or_profile(root, body, file, base, ctx)
        raws = [profile.catalog_control(c, ctx) for c in controls.values() if c.fairness]
    return root, metadata, raws


def _where(raw: RawControl) -> dict[str, str]:
    """Where each prop of ``raw`` (and a param's threshold) was written."""
    here = (raw.file or "policy") + (f":{raw.line}" if raw.line else "")
    out = {n: raw.prop_where.get(n) or here for n, _ in raw.props}
    tp = raw.threshold_param
    if tp is not None:
        param = raw.threshold[0] if raw.threshold else "threshold param"
        out["threshold"] = f"{tp.file or 'policy'} ({tp.kind}: {param})"
    return out


#: metadata props (fairpolicy ns) naming the people of an assessment, as ``--assessor``
#: ("Name <email>", repeatable) and ``--organization`` do; the command line wins
PEOPLE_PROPS = ("assessor", "organization")


def _people(
    metadata: Mapping[str, Any], file: str | None, ctx: Ctx
) -> tuple[tuple[str, ...], str | None]:
    """(assessors, organization) from the policy's ``metadata.props`` (fairpolicy ns)."""
    raw_props = metadata.get("props") if isinstance(metadata, Mapping) else None
    assessors: list[str] = []
    organization: str | None = None
    for p in raw_props if isinstance(raw_props, list) else ():
        if not isinstance(p, Mapping) or str(p.get("ns", "")).rstrip("/") != NS:
            continue
        name, value = str(p.get("name", "")).strip(), str(p.get("value", "")).strip()
        if name == "assessor":
            from fairpolicy.people import parse_person  # only for a policy naming people

            try:
                parse_person(value)
            except ValueError as exc:
                ctx.add(
                    f"{exc}",
                    file,
                    key="metadata.props.assessor",
                    hint="write value: 'Ada Lovelace <ada@example.org>'",
                )
                continue
            assessors.append(value)
        elif name == "organization":
            if organization is not None or not value:
                ctx.add(
                    "metadata prop 'organization' is empty or given twice",
                    file,
                    key="metadata.props.organization",
                    hint="name one organization",
                )
            organization = value or organization
    return tuple(assessors), organization


def _policy_wide(
    metadata: Mapping[str, Any], raws: list[RawControl], file: str | None, ctx: Ctx
) -> list[RawControl]:
    """Apply the policy-wide settings of ``metadata.props`` to every control that does not
    set them itself. A prop in fairpolicy's ``ns`` that is not a policy-wide setting is an
    error; a prop without ``ns`` may belong to another tool, so it is ignored unless its
    name is close to a setting (then a warning says which)."""
    raw_props = metadata.get("props") if isinstance(metadata, Mapping) else None
    if not raw_props:
        return raws
    ours = {
        str(p.get("name")).strip()
        for p in raw_props
        if isinstance(p, Mapping) and str(p.get("ns", "")).rstrip("/") == NS
    }
    wide: list[tuple[str, Any]] = []
    for name, value in oscal.read_props(raw_props, file, None, ctx):
        if name in PEOPLE_PROPS and name in ours:
            continue  # who assesses (see _people), not a control setting
        if name in POLICY_WIDE_PROPS:
            wide.append((name, value))
        elif name in ours:
            ctx.add(
                f"metadata prop '{name}' is not a policy-wide setting; policy-wide settings: "
                f"{', '.join(POLICY_WIDE_PROPS)}.{did_you_mean(name, POLICY_WIDE_PROPS)}",
                file,
                key=f"metadata.props.{name}",
                hint="set it on each control instead, or use one of the settings listed",
            )
        elif close_match(name, POLICY_WIDE_PROPS):
            ctx.warnings.append(
                f"{file or 'policy'}: metadata prop '{name}' is ignored (it has no fairpolicy "
                f"ns and is not a policy-wide setting).{did_you_mean(name, POLICY_WIDE_PROPS)}"
            )
    if not wide:
        return raws
    at = f"{file or 'policy'} metadata.props (policy-wide)"
    out = []
    for r in raws:
        own = {n for n, _ in r.props}
        if own & {"positive_label.target", "positive_label.prediction"}:
            own.add("positive_label")  # the control names its labels column by column
        added = [p for p in wide if p[0] not in own]
        where = {**r.prop_where, **{n: at for n, _ in added}}
        out.append(dataclasses.replace(r, props=[*added, *r.props], prop_where=where))
    return out


def _root_problem(data: Any, roots: list[str], file: str | None) -> tuple[str, str | None]:
    accepted = ", ".join(ROOTS)
    if roots:
        return f"the document has several roots ({', '.join(roots)}); use one", file
    if not isinstance(data, Mapping):
        what = "empty" if data is None else f"a {type(data).__name__}"
        return f"the document is {what}; expected one of the roots {accepted}, or a list", file
    keys = [str(k) for k in data if not str(k).startswith("$")]
    if not keys:
        return f"the mapping has no root key; expected one of {accepted}", file
    message = f"unknown root {', '.join(map(repr, keys))}; accepted roots: {accepted}"
    if "assessment-results" in keys:
        message += " (assessment-results is an output of fairpolicy check, not a policy)"
    else:
        message += ", or a list of controls." + next(
            (did_you_mean(k, ROOTS) for k in keys if close_match(k, ROOTS)), ""
        )
    return message, file


def _check_ids(raws: list[RawControl], form: str, file: str | None, ctx: Ctx) -> None:
    counts = Counter(_text(r.control_id) for r in raws if _text(r.control_id))
    for cid, n in counts.items():
        if n > 1:
            dups = [r for r in raws if _text(r.control_id) == cid]
            lines = ", ".join(str(r.line) for r in dups if r.line)
            at = f" (lines {lines})" if lines else ""
            ctx.add(f"control-id is used {n} times{at}", dups[0].file, cid, "control-id")
    if not raws and not ctx.problems:
        ctx.add(
            f"the policy defines no controls (read as {form})",
            file,
            hint="add implemented-requirements with a metric_key, threshold and operator prop "
            "each (catalogs: controls with a metric_key prop)",
        )


# ---------------------------------------------------------------- raw control → Control


def _build(raw: RawControl, ctx: Ctx, bound: frozenset[str] = frozenset()) -> Control | None:
    """Validate one raw control; every problem goes to ``ctx``; None when any."""
    from fairpolicy.metrics.refused import REFUSED
    from fairpolicy.metrics.registry import REGISTRY, all_names, canonical

    before = len(ctx.problems)
    cid = _text(raw.control_id)

    def err(message: str, key: str | None, hint: str | None = None) -> None:
        ctx.add(message, raw.file, cid, key, hint)

    if not cid:
        at = f" (line {raw.line})" if raw.line else ""
        err(f"a control has no control-id{at}", "control-id", "give every control a unique id")
    fields: dict[str, Any] = {}
    inputs: dict[str, str] = {}
    named: set[str] = set()  # roles written, even with a bad value
    others: list[tuple[str, Any]] = []
    aliased: dict[str, str] = {}  # role → the privacy spelling it was written as
    as_param: list[tuple[str, Any]] = []  # input.<not a role>: a parameter? (see below)
    named_props: set[str] = set()
    for name, value in raw.props:
        if name in AGE_BUCKET_PROPS:
            if any(n in AGE_BUCKET_PROPS for n in named_props):
                continue  # said once per control
            named_props.add(name)
            err(
                f"prop '{name}' is Venturalitica's age bucketing (pandas.qcut, intervals "
                "closed on the right); fairpolicy's bins are closed on the left, so ages "
                "tied at a quantile would silently move to another group",
                name,
                "replace age_bucket_method and age_buckets with fairpolicy's bins prop, e.g. "
                "bins: q3 (tertiles, left-closed) or explicit edges bins: 0,30,45,inf; "
                "`fairpolicy explore DATA --bins q3` shows the groups",
            )
            continue
        if name in PLAIN_ROLES:  # Venturalitica passes it as a keyword; it names the role
            aliased[PLAIN_ROLES[name]] = name
            ctx.dialect_notes.append(f"role:{name}:{PLAIN_ROLES[name]}:{cid}")
            name = f"input.{name}"
        if name.startswith("input."):
            role, column = name[6:], _text(value)
            if role in DIMENSION_ALIASES:  # Venturalitica's protected attribute(s)
                role = DIMENSION_ALIASES[role]
            elif role in ROLE_ALIASES:  # Venturalitica's privacy roles (checked below)
                aliased[ROLE_ALIASES[role]] = aliased.get(ROLE_ALIASES[role], role)
                role = ROLE_ALIASES[role]
            if role not in ROLES:
                as_param.append((role, value))  # decided once the metric is known
            elif role in named:
                err(f"input.{role} is given twice", name)
            elif not column:
                err(f"input.{role} names no column", name)
            else:
                inputs[role] = column
            named.add(role)
        elif name in CONTROL_PROPS:
            if name == "lifecycle_phase" and name in fields:  # Venturalitica repeats it
                fields[name] = f"{_text(fields[name])},{_text(value)}"
            elif name in fields:
                err(
                    f"prop '{name}' is given twice ('{_text(fields[name])}', then "
                    f"'{_text(value)}')",
                    name,
                    "keep the one you mean; Venturalitica keeps the last one silently",
                )
            else:
                fields[name] = value
        else:
            others.append((name, value))

    spec: MetricSpec | None = None
    written = _text(fields.get("metric_key"))
    if not written:
        err(
            "has no metric_key",
            "metric_key",
            "add a metric_key prop (`fairpolicy metrics` lists them), or point "
            "control-implementations[].source at the catalog that defines the control",
        )
    elif written in REFUSED:  # known, and refused under that name: say what it is
        err(REFUSED[written][0], "metric_key", REFUSED[written][1])
    elif (key := canonical(written)) is None:
        err(
            f"unknown metric_key '{written}'.{did_you_mean(written, all_names())}",
            "metric_key",
            "`fairpolicy metrics` lists the registry keys",
        )
    else:
        spec = REGISTRY[key]
        for role, spelled in aliased.items():
            if key not in PRIVACY_KEYS and spelled in ROLE_ALIASES:
                err(
                    f"input.{spelled} applies to the privacy metrics "
                    f"({', '.join(sorted(PRIVACY_KEYS))}), not to '{key}'.",
                    f"input.{spelled}",
                    f"bind input.{role} instead",
                )

    operator = _operator(fields.get("operator"), err)
    dialect = None
    if spec is not None and written is not None:
        key, dialect = dialects.resolve(
            written,
            spec.key,
            _text(fields.get("dialect")),
            ctx.recognised,
            operator,
            spec.better,
            err,
            ctx.dialect_notes,
        )
        spec = REGISTRY[key]
    threshold = _threshold(raw, fields, operator, err, ctx)

    if spec is not None:
        # a count table (input.count with input.selected or input.rate) is the selection
        counted = "count" in named and ("selected" in named or "rate" in named)
        for role in spec.inputs:
            if counted and role in ("target", "prediction"):
                continue  # bound by data/bind/count_table.py (or refused there with the reason)
            if role not in named and role not in bound and f"{cid}:{role}" not in bound:
                err(
                    f"no column is bound to role '{role}' (prop input.{role}); "
                    f"metric '{spec.key}' needs {', '.join(spec.inputs)}",
                    f"input.{role}",
                    ROLE_HINTS.get(
                        role,
                        f"add a prop input.{role} naming the column, or pass --bind "
                        f"{role}=COLUMN (a policy that leaves it to the caller, as "
                        "Venturalitica's enforce(target=..., prediction=...) does)",
                    ),
                )
        if spec.one_of and not any(
            r in named or r in bound or f"{cid}:{r}" in bound for r in spec.one_of
        ):
            roles = " or ".join(f"input.{r}" for r in spec.one_of)
            err(
                f"metric '{spec.key}' needs one of {roles}",
                f"input.{spec.one_of[0]}",
                f"add a prop {roles} naming the column",
            )
    others += _input_params(spec, as_param, others, cid, err, ctx)
    params, settings = metric_params(spec, others, err)
    if "bins" in params:
        from fairpolicy.policy.bins import BINS_HINT, parse_bins

        dims = tuple(c.strip() for c in inputs.get("dimension", "").split(",") if c.strip())
        if not dims and "dimension" not in bound:
            err("bins is set, but the control binds no input.dimension to bin", "bins",
                "bind input.dimension to the numeric column, or drop the bins prop")  # fmt: skip
        else:  # a dimension bound on the command line: its columns are checked at the run
            try:
                parse_bins(params["bins"], dims)
            except ValueError as exc:
                err(f"bins: {exc}", "bins", BINS_HINT)
    if params.get("comparator") == "highest":
        unused = [k for k in ("min_share", "min_share_scope") if k in params]
        if unused:
            err(
                f"comparator highest compares every category with the highest of all, so "
                f"{' and '.join(unused)} would be ignored",
                "comparator",
                "remove " + " and ".join(unused) + " (also a policy-wide one), or use "
                "comparator: highest_above_min_share to keep small categories out",
            )
    if spec is not None and operator is not None and threshold is not None:
        vacuous = _vacuous(spec, operator, threshold)
        if vacuous:
            lo, hi = spec.value_range
            err(
                f"the threshold '{operator.value} {threshold.render()}' can {vacuous}: metric "
                f"'{spec.key}' takes values in [{lo:g}, {hi:g}]",
                "threshold",
                f"write a threshold inside [{lo:g}, {hi:g}] (`fairpolicy metrics show "
                f"{spec.key}` describes the metric)",
            )

    mode_text = _text(fields.get("enforcement_mode"))
    severity = _text(fields.get("severity"))
    mode = effective_mode(mode_text, severity)
    if mode is None:
        modes = list(MODE_SPELLINGS)
        err(
            f"enforcement_mode '{mode_text}' is not one of block, warn, monitor ('warning' "
            f"is read as warn).{did_you_mean(str(mode_text).lower(), modes)}",
            "enforcement_mode",
        )

    if len(ctx.problems) > before or spec is None or operator is None or threshold is None:
        return None
    assert cid is not None and written is not None and mode is not None
    return Control(
        control_id=cid,
        title=_text(raw.title) or _text(raw.description),
        description=_text(raw.description),
        metric_key=spec.key,
        metric_key_as_written=written,
        threshold=threshold,
        operator=operator,
        inputs=inputs,
        params=params,
        enforcement_mode=mode,
        severity=severity,
        lifecycle_phase=_text(fields.get("lifecycle_phase")),
        risk_id=_text(fields.get("risk_id")),
        source=SourceLocation(file=raw.file, line=raw.line) if raw.file else None,
        # _threshold reads the param's values when there are any, else the prop
        threshold_source=raw.threshold_source if raw.threshold is not None else "prop",
        objective_id=raw.objective_id,
        statement_id=raw.statement_id,
        dialect=dialect,
        **settings,
    )


Err = Callable[..., None]


def _input_params(
    spec: MetricSpec | None,
    written: list[tuple[str, Any]],
    others: list[tuple[str, Any]],
    cid: str | None,
    err: Err,
    ctx: Ctx,
) -> list[tuple[str, Any]]:
    """``input.<name>`` props whose name is no role: Venturalitica passes every ``input.``
    prop to its metric as a keyword, so one naming a parameter of the metric
    (``input.average``, ``input.aggregation``) is that parameter, said once in the results
    (:func:`fairpolicy.policy.dialect.summary`). Any other is an unknown role."""
    declared = {p.name for p in spec.params} if spec is not None else set()
    plain = {n for n, _ in others}
    out: list[tuple[str, Any]] = []
    for name, value in written:
        if name in declared and name in plain:
            err(
                f"parameter '{name}' is given twice: as input.{name} (Venturalitica's "
                f"spelling) and as {name}",
                f"input.{name}",
                "keep one of them",
            )
        elif name in declared:
            out.append((name, value))
            ctx.dialect_notes.append(f"param:{name}:{cid}")
        else:
            takes = (
                f"; metric '{spec.key}' takes the parameters {', '.join(sorted(declared))}"
                if spec is not None and declared
                else ""
            )
            err(
                f"unknown input role '{name}'; roles: {', '.join(ROLES)}{takes}."
                f"{did_you_mean(name, [*ROLES, *declared])}",
                f"input.{name}",
            )
    return out


def _operator(value: Any, err: Err) -> Operator | None:
    text = _text(value)
    if not text:
        err("has no operator", "operator", "add an operator prop, e.g. lt or <")
        return None
    operator = OPERATOR_SPELLINGS.get(text.lower())
    if operator is None:
        guess = _OPERATOR_GUESSES.get(text.lower()) or close_match(text.lower(), OPERATOR_SPELLINGS)
        err(
            f"operator '{text}' is not allowed; allowed: {', '.join(OPERATOR_SPELLINGS)}."
            + (f" Did you mean '{guess}'?" if guess else ""),
            "operator",
        )
    return operator


def _threshold(
    raw: RawControl, fields: Mapping[str, Any], operator: Operator | None, err: Err, ctx: Ctx
) -> Threshold | None:
    """Threshold from the OSCAL param if it has values, else the ``threshold`` prop;
    the values it takes precedence over are checked by :func:`_precedence`."""
    found = _threshold_of(raw, fields, operator, err)
    if found is not None and raw.threshold is not None and operator is not None:
        _precedence(raw, fields, operator, found, err, ctx)
    elif found is not None and raw.replaced_threshold is not None and operator is not None:
        _replaced_prop(raw, operator, found, err, ctx)
    return found


def _replaced_prop(raw: RawControl, op: Operator, winner: Threshold, err: Err, ctx: Ctx) -> None:
    """A component-definition's ``threshold`` prop replaced the catalog/profile control's
    ``threshold`` prop: loosening a profile's is an error, a catalog's a reported warning
    (as for params, :func:`_precedence`)."""
    assert raw.replaced_threshold is not None
    value, old_at, kind = raw.replaced_threshold
    old = _parse_threshold(value if isinstance(value, list) else [value], op)
    if old is None or not _loosens(op, winner, old):
        return
    here = raw.prop_where.get("threshold", raw.file or "policy")
    text = (
        f"threshold '{op.value} {winner.render()}' ({here}, component-definition) is looser "
        f"than '{op.value} {old.render()}' ({old_at}, {kind})"
    )
    if kind == "profile":
        err(
            f"{text}; a component-definition may not loosen its profile's threshold",
            "threshold",
            "remove the threshold prop, or write one at least as strict as the profile's",
        )
    else:
        ctx.warnings.append(
            f"control '{_text(raw.control_id)}': {text}; the component-definition's value applies"
        )


def _threshold_of(
    raw: RawControl, fields: Mapping[str, Any], operator: Operator | None, err: Err
) -> Threshold | None:
    if raw.threshold is not None:
        key, values = raw.threshold
    elif "threshold" in fields:
        key, value = "threshold", fields["threshold"]
        values = value if isinstance(value, list) else [value]
    else:
        err("has no threshold", "threshold", "add a threshold prop, e.g. 0.1")
        return None
    numbers: list[float] = []
    texts: list[str] = []  # as written: the exact decimals the decision compares with
    for value in values:
        text = _text(value)
        if not text:
            err(
                f"template not configured: {key} is empty (a template's placeholder, to be set "
                "to the value this system must meet)",
                key,
                "write the number, e.g. 0.8 for a ratio or 0.1 for a gap; every control still "
                "to configure is listed",
            )
            return None
        for part in text.split(","):
            try:
                number = parse_float(part.strip())
            except ValueError as exc:
                err(f"{key} {exc}", key, NUMBER_HINT)
                return None
            try:
                exact_decimal(part)  # the decision reads the decimal written, exactly
            except ValueError as exc:
                err(
                    f"{key} {exc}",
                    key,
                    f"write the threshold with an exponent within ±{MAX_EXPONENT} (no metric "
                    "value lies nearer to 0 than about 1e-650)",
                )
                return None
            numbers.append(number)
            texts.append(part.strip())
    written = ",".join(texts)
    if operator is Operator.BETWEEN:
        if len(numbers) != 2:
            err(f"operator 'between' needs two bounds 'low,high', got '{written}'", key)
            return None
        low, high = numbers
        if exact_decimal(texts[0]) > exact_decimal(texts[1]):
            err(
                f"between bounds '{written}' are reversed (low > high)",
                key,
                f"write '{texts[1]},{texts[0]}'",
            )
            return None
        return Threshold(low=low, high=high, text=written_threshold(texts, numbers))
    if len(numbers) != 1:
        if operator is not None:
            err(f"operator '{operator.value}' needs one number, got '{written}'", key)
        return None
    return Threshold(value=numbers[0], text=written_threshold(texts, numbers))


def _parse_threshold(values: list[Any], operator: Operator) -> Threshold | None:
    """``values`` (a param's values or a prop's value) as a threshold for ``operator``;
    None when they do not make one (the winning value's problems are reported elsewhere)."""
    texts = [part.strip() for v in values for part in str(_text(v) or "").split(",")]
    try:
        numbers = [parse_float(t) for t in texts]
        for t in texts:
            exact_decimal(t)
    except ValueError:
        return None
    written = written_threshold(texts, numbers)
    if operator is Operator.BETWEEN:
        ok = len(numbers) == 2 and exact_decimal(texts[0]) <= exact_decimal(texts[1])
        return Threshold(low=numbers[0], high=numbers[1], text=written) if ok else None
    return Threshold(value=numbers[0], text=written) if len(numbers) == 1 else None


def _loosens(op: Operator, new: Threshold, old: Threshold) -> bool:
    """Does ``value op new`` pass some value that ``value op old`` fails? (The set of
    passing values under ``new`` is not inside the one under ``old``.)"""
    (n_lo, n_hi), (o_lo, o_hi) = _exact(new), _exact(old)  # the decimals as written
    if op is Operator.BETWEEN:
        return n_lo < o_lo or n_hi > o_hi
    if op in (Operator.LT, Operator.LE):
        return n_lo > o_lo
    if op in (Operator.GT, Operator.GE):
        return n_lo < o_lo
    return n_lo != o_lo  # == and !=: any change passes something new


def _exact(t: Threshold) -> tuple[Fraction, Fraction]:
    low, high = t.bounds()
    return exact_bound(low), exact_bound(high)


def _precedence(
    raw: RawControl,
    fields: Mapping[str, Any],
    op: Operator,
    winner: Threshold,
    err: Err,
    ctx: Ctx,
) -> None:
    """Check the threshold chain (component-definition › profile › catalog param › prop)
    around the winning param value. A value that loses but is *stricter* than the winner:

    - a ``threshold`` prop that a param overrides: an error naming both (the author wrote
      the stricter number where it has no effect);
    - a profile's value that a component-definition loosens: an error naming both (the
      component must meet the baseline it implements);
    - a catalog's (or an imported profile's) value that a profile or component-definition
      loosens: a warning naming both, carried into every report (tailoring a catalog
      default is what profiles are for, but never silently).

    A looser value that loses is a warning only when it is a prop (it is overridden)."""
    cid = _text(raw.control_id)
    pv = raw.threshold_param
    assert raw.threshold is not None
    key = raw.threshold[0]
    win_at = pv.where if pv is not None else key
    if "threshold" in fields:
        prop = fields["threshold"]
        prop_t = _parse_threshold(prop if isinstance(prop, list) else [prop], op)
        prop_at = raw.prop_where.get("threshold") or (raw.file or "policy")
        written = _text(prop) if not isinstance(prop, list) else ",".join(map(str, prop))
        if prop_t is None or prop_t.same(winner):
            pass
        elif _loosens(op, winner, prop_t):
            err(
                f"the threshold prop '{op.value} {prop_t.render()}' ({prop_at}) is stricter than "
                f"{key}: '{op.value} {winner.render()}' ({win_at}), which takes precedence; the "
                "stricter value would be ignored",
                "threshold",
                "remove the threshold prop, or set the param's value (set-parameters) to the "
                "threshold you mean",
            )
        else:
            ctx.warnings.append(
                f"control '{cid}': threshold prop '{written}' is overridden by {key}: "
                f"'{winner.render()}'"
            )
    if pv is None:
        return
    for old in pv.earlier:
        old_t = _parse_threshold(old.values or [], op)
        if old_t is None or not _loosens(op, winner, old_t):
            continue
        text = (
            f"'{op.value} {winner.render()}' ({pv.where}, {pv.kind}) is looser than "
            f"'{op.value} {old_t.render()}' ({old.where}, {old.kind})"
        )
        if pv.kind == "component-definition" and old.kind == "profile":
            err(
                f"{key}: {text}; a component-definition may not loosen its profile's threshold",
                key,
                "remove the set-parameters entry, or set a value at least as strict as the "
                "profile's",
            )
        else:
            ctx.warnings.append(f"control '{cid}': threshold {text}; the {pv.kind}'s value applies")


def _vacuous(spec: MetricSpec, op: Operator, t: Threshold) -> str | None:
    """``never pass`` or ``never fail`` when no value in the metric's declared range
    ``[lo, hi]`` can make ``value op t`` false (or true); None otherwise."""
    lo, hi = spec.value_range
    t_lo, t_hi = _exact(t)  # the decimals as written: 1e-400 is not 0
    if op is Operator.BETWEEN:
        if t_hi < lo or t_lo > hi:
            return "never pass"
        return "never fail" if t_lo <= lo and t_hi >= hi else None
    v = t_lo
    always, never = {
        Operator.LT: (hi < v, v <= lo),
        Operator.LE: (hi <= v, v < lo),
        Operator.GT: (lo > v, v >= hi),
        Operator.GE: (lo >= v, v > hi),
        Operator.EQ: (lo == hi == v, v < lo or v > hi),
        Operator.NE: (v < lo or v > hi, lo == hi == v),
    }[op]
    return "never fail" if always else "never pass" if never else None
