"""Unknown keys in a policy document are errors, never ignored.

A key fairpolicy does not read — ``threshold: 0.01`` written beside a control's props, an
``enforcement_mode`` at the wrong level, a typo such as ``control-implementation`` — would
otherwise be dropped silently, and the looser value the reader did find would gate the
release. Every mapping of a catalog, component-definition and assessment-plan document (and
every control of a bare list) is therefore checked against the keys NIST's OSCAL schema
allows at that place (the vendored schema's structure, :data:`KEYS_FILE`, walked through
its ``$ref``/``anyOf``/``allOf``; a key allowed by any branch is allowed), plus the few keys
fairpolicy's non-OSCAL forms add (:data:`EXTRA`). Profiles are checked by their own,
stricter tables in :mod:`fairpolicy.policy.profile` (only the constructs it resolves).

This is independent of whether the document claims to be OSCAL: it also runs on the
hand-written, Venturalitica-style documents that are not schema-validated.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from fairpolicy.errors import did_you_mean
from fairpolicy.policy.oscal import Ctx
from fairpolicy.policy.schema import CONTROL_PROPS, POLICY_WIDE_PROPS

__all__ = ["EXTRA", "check_keys", "unknown_keys"]

_DEF = "#/definitions/"
_IR = "oscal-complete-oscal-component-definition:implemented-requirement"
_CI = "oscal-complete-oscal-component-definition:control-implementation"
_ROOT = {
    "catalog": "oscal-complete-oscal-catalog:catalog",
    "component-definition": "oscal-complete-oscal-component-definition:component-definition",
    "assessment-plan": "oscal-complete-oscal-ap:assessment-plan",
    "list-control": _IR,
}
_CI_LIST = {"type": "array", "items": {"$ref": _DEF + _CI}}

#: Keys fairpolicy reads beyond OSCAL, per schema definition: Venturalitica's assessment-plan
#: form carries component-definition control-implementations (at the top or under
#: reviewed-controls), a control may have a ``title`` and an ``id`` (bare-list form), and a
#: catalog control a ``description`` (Venturalitica's catalogs; read as its description).
EXTRA: dict[str, dict[str, Any]] = {
    "oscal-complete-oscal-ap:assessment-plan": {"control-implementations": _CI_LIST},
    "oscal-complete-oscal-assessment-common:reviewed-controls": {
        "control-implementations": _CI_LIST
    },
    _IR: {"title": {"type": "string"}, "id": {"type": "string"}},
    # Venturalitica's catalogs describe each control in a description (read as it)
    "oscal-complete-oscal-catalog:control": {"description": {"type": "string"}},
}

#: Keys OSCAL allows that a form's reader does not read: only a component-definition
#: resolves ``source`` and ``set-parameters`` (against a catalog or profile).
NOT_READ: dict[str, dict[str, frozenset[str]]] = {
    "list-control": {_IR: frozenset({"set-parameters"})},
    "assessment-plan": {
        _IR: frozenset({"set-parameters"}),
        _CI: frozenset({"set-parameters", "source"}),
    },
}


#: Documentary definitions: hand-written policies (Venturalitica's templates among them) put
#: prose such as ``description`` into ``metadata``, which changes no decision, so other keys
#: are allowed there, except a name of a fairpolicy setting (policy-wide settings are
#: ``metadata.props``; a bare ``metadata.threshold`` would be ignored).
OPEN = frozenset({"oscal-complete-oscal-metadata:metadata"})
SETTING_NAMES = frozenset(
    {*CONTROL_PROPS, *POLICY_WIDE_PROPS, "input", "positive_label", "enforcement-mode"}
)


#: the schema keywords the walk below reads; :data:`KEYS_FILE` keeps only these
STRUCTURE = frozenset(
    {"$ref", "properties", "additionalProperties", "anyOf", "oneOf", "allOf", "items", "type"}
)
#: the vendored schema's definitions with only their :data:`STRUCTURE` (no descriptions,
#: patterns or formats): a third of the size, parsed in ~1 ms instead of ~3 ms, so that a
#: bare-list policy loads no NIST schema (issue 17). Derived by :func:`structure`;
#: ``tests/policy/test_key_tables.py`` checks it is the vendored schema's
#: (``python scripts/derive_oscal_keys.py`` writes it again).
KEYS_FILE = Path(__file__).resolve().parents[1] / "schemas_nist" / "oscal_keys.json"


def structure(schema: Any, names: bool = False) -> Any:
    """``schema`` with only the keywords in :data:`STRUCTURE` (``names``: a mapping of
    property names, all kept)."""
    if isinstance(schema, list):
        return [structure(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        k: structure(v, names=not names and k == "properties")
        for k, v in schema.items()
        if names or k in STRUCTURE
    }


@functools.cache
def _definitions() -> dict[str, Any]:
    with KEYS_FILE.open(encoding="utf-8") as fh:
        defs: dict[str, Any] = json.load(fh)
    return defs


@functools.cache
def _allowed(name: str, form: str) -> tuple[dict[str, Any], bool]:
    """(key → schema of its value, closed) of the definition ``name``: the union over its
    ``anyOf``/``allOf``/``oneOf`` branches; ``closed`` when no branch admits other keys."""
    props, closed = _union(_definitions()[name], form)
    if name in OPEN:
        closed = False
    drop = NOT_READ.get(form, {}).get(name, frozenset())
    return {k: v for k, v in {**props, **EXTRA.get(name, {})}.items() if k not in drop}, closed


def _union(schema: Mapping[str, Any], form: str) -> tuple[dict[str, Any], bool]:
    if "$ref" in schema:
        return _allowed(str(schema["$ref"]).removeprefix(_DEF), form)
    props: dict[str, Any] = dict(schema.get("properties", {}))
    closed = "properties" in schema and schema.get("additionalProperties") is False
    alternatives = [*schema.get("anyOf", ()), *schema.get("oneOf", ())]
    # every alternative must be closed for the union to be; one closed allOf part closes it
    alt_closed = bool(alternatives)
    for branch in alternatives:
        sub, sub_closed = _union(branch, form)
        for key, value in sub.items():
            props.setdefault(key, value)
        alt_closed = alt_closed and sub_closed
    for branch in schema.get("allOf", ()):
        sub, sub_closed = _union(branch, form)
        for key, value in sub.items():
            props.setdefault(key, value)
        closed = closed or sub_closed
    return props, closed or alt_closed


def _walk(
    node: Any, schema: Mapping[str, Any], path: str, form: str, control: Any = None
) -> Iterator[tuple[str, str, list[str], Any]]:
    if isinstance(node, list):
        items = schema.get("items")
        if "$ref" in schema:
            items = _definitions()[str(schema["$ref"]).removeprefix(_DEF)].get("items")
        if isinstance(items, Mapping):
            for i, value in enumerate(node):
                yield from _walk(value, items, f"{path}[{i}]", form, control)
        return
    if not isinstance(node, Mapping):
        return
    target = schema
    if "$ref" in schema:
        target = _definitions()[str(schema["$ref"]).removeprefix(_DEF)]
    if target.get("type") == "array":
        return  # a mapping where OSCAL has a list: props' {name: value} shorthand, read there
    if "control-id" in node:
        control = node["control-id"]
    elif "id" in node and (form == "list-control" or (".controls[" in path and path[-1] == "]")):
        control = node["id"]
    props, closed = _union(schema, form)
    for key, value in node.items():
        if str(key) in props:
            yield from _walk(
                value, props[str(key)], f"{path}.{key}" if path else str(key), form, control
            )
        elif closed or _setting(str(key)):
            yield path, str(key), sorted(props), control


def _setting(key: str) -> bool:
    return key in SETTING_NAMES or key.startswith(("input.", "input:"))


def unknown_keys(form: str, body: Any) -> list[tuple[str, str, list[str], Any]]:
    """``(path, key, allowed keys, control id or None)`` for every key of ``body`` (the
    document under its root key, or one bare-list control for ``form="list-control"``) that
    is not read."""
    start = {"$ref": _DEF + _ROOT[form]}
    return list(_walk(body, start, "" if form == "list-control" else form, form))


def check_keys(form: str, body: Any, file: str | None, ctx: Ctx) -> bool:
    """Add a problem for every unknown key (see :func:`unknown_keys`); True when none."""
    found = unknown_keys(form, body)
    for path, key, allowed, control in found:
        where = f"'{path}'" if path else "a control"
        if key in ("set-parameters", "source"):
            hint = (
                f"{key} takes effect only in a component-definition's "
                "control-implementations that point at a catalog or profile; here write the "
                "value as a prop, e.g. props: [{name: threshold, value: '0.1'}]"
            )
        else:
            hint = (
                f"{where} may hold: {', '.join(allowed)}. A control's settings are props, e.g. "
                f"props: [{{name: {key}, value: ...}}]; or remove the key."
                f"{did_you_mean(key, allowed)}"
            )
        ctx.add(
            f"{where} has the key '{key}', which fairpolicy does not read; it is refused "
            "rather than ignored",
            file,
            control,
            f"{path}.{key}" if path else key,
            hint=hint,
        )
    return not found
