"""The documents around an assessment: the profile a written SSP imports, a user's SSP.

``-o oscal-ssp=PATH`` writes a system security plan whose ``import-profile`` must point at
a real OSCAL profile, so that AR → AP → SSP → profile → catalog resolves in any OSCAL
tool. Which profile depends on the policy's form:

- a **profile**: the policy itself;
- a **catalog**: a profile importing all of it, written beside the SSP
  (``<ssp>.profile.json``);
- a **component-definition** implementing a catalog or profile (its
  ``control-implementations[].source``): that profile, or a profile importing that catalog;
- a **simple policy** (a bare list, the assessment-plan form, a self-contained
  component-definition): converted with ``fairpolicy convert``'s rules into a catalog and
  a profile beside the SSP (``<ssp>.catalog.json``, ``<ssp>.profile.json``).

``--ssp FILE`` instead names the team's own SSP: it must be a valid OSCAL SSP (NIST
schema) with a component for the system under assessment (matched by ``--subject``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairpolicy.errors import OutputError, PolicyError, UsageError

if TYPE_CHECKING:
    from fairpolicy.results import Results


@dataclass
class Chain:
    """The profile an SSP imports (href relative to the SSP's folder) and the documents to
    write beside it, as ``(path, text)``."""

    profile_href: str
    documents: list[tuple[str, str]] = field(default_factory=list)

    @property
    def profile_sha256(self) -> str | None:
        """SHA-256 of the profile when it is generated here (the last document written),
        else None (the policy itself, hashed as the policy)."""
        import hashlib

        if not self.documents:
            return None
        return hashlib.sha256(self.documents[-1][1].encode("utf-8")).hexdigest()


def _rel(target: Path, base: Path) -> str:
    try:
        return Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return target.resolve().as_uri()


def _sibling(ssp: Path, suffix: str) -> Path:
    stem = ssp.name[: -len(ssp.suffix)] if ssp.suffix else ssp.name
    return ssp.with_name(f"{stem}.{suffix}.json")


def profile_chain(policy_path: str | None, form: str | None, ssp_path: str) -> Chain:
    """The profile an SSP written at ``ssp_path`` imports for the policy at
    ``policy_path`` (see the module docstring). Raises OutputError/PolicyError."""
    from fairpolicy.policy import oscal
    from fairpolicy.policy.convert import (
        convert_policy,
        dump_document,
        profile_for,
        source_last_modified,
    )

    ssp = Path(ssp_path)
    if policy_path is None or not Path(policy_path).is_file():
        raise OutputError(
            "an OSCAL system security plan imports the policy's profile, and the policy was "
            "not read from a file.",
            file=ssp_path,
            hint="check a policy file, or pass your own SSP with --ssp.",
        )
    source = Path(policy_path)
    if form == "profile":
        return Chain(_rel(source, ssp.parent))
    data, sha = oscal.read_document(source)
    if form == "catalog":
        return _importing(source, data, ssp)
    if form == "component-definition":
        target = _implemented_source(data, source)
        if target is not None:
            tdata, _ = oscal.read_document(target)
            if isinstance(tdata, Mapping) and "profile" in tdata:
                return Chain(_rel(target, ssp.parent))
            if isinstance(tdata, Mapping) and "catalog" in tdata:
                return _importing(target, tdata, ssp)
    from fairpolicy.policy.load import load_policy
    from fairpolicy.policy.schema import ROLES

    # roles the run bound with --bind are not the policy's: the catalog is the file as written
    policy = load_policy(source, bound=ROLES)
    catalog_path, profile_path = _sibling(ssp, "catalog"), _sibling(ssp, "profile")
    catalog = convert_policy(
        policy,
        last_modified=source_last_modified(data, source),
        source_href=_rel(source, catalog_path.parent),
        source_sha256=sha,
    )
    catalog_text = dump_document(catalog, "json")
    profile = _hashed(
        profile_for(catalog, _rel(catalog_path, profile_path.parent)),
        catalog_text,
        "Converted catalog",
    )
    return Chain(
        _rel(profile_path, ssp.parent),
        [
            (str(catalog_path), catalog_text),
            (str(profile_path), dump_document(profile, "json")),
        ],
    )


def _hashed(profile: dict[str, Any], catalog: str | bytes, title: str) -> dict[str, Any]:
    """``profile`` with a back-matter resource linking the catalog it imports (the same
    href) with the SHA-256 of its bytes, so the generated chain is hashed end to end."""
    import hashlib
    import uuid

    body = profile["profile"]
    href = body["imports"][0]["href"]
    raw = catalog.encode("utf-8") if isinstance(catalog, str) else catalog
    sha = hashlib.sha256(raw).hexdigest()
    rid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"fairpolicy:profile-catalog:{href}:{sha}"))
    body["back-matter"] = {
        "resources": [
            {
                "uuid": rid,
                "title": f"{title}: {Path(href).name}",
                "description": "The catalog this profile imports, with the SHA-256 of its bytes.",
                "rlinks": [
                    {
                        "href": href,
                        "media-type": "application/json",
                        "hashes": [{"algorithm": "SHA-256", "value": sha}],
                    }
                ],
            }
        ]
    }
    return profile


def _importing(catalog_path: Path, catalog: Any, ssp: Path) -> Chain:
    """A profile importing all of the catalog at ``catalog_path``, written beside the SSP."""
    from fairpolicy.policy.convert import dump_document, profile_for

    profile_path = _sibling(ssp, "profile")
    profile = _hashed(
        profile_for(catalog, _rel(catalog_path, profile_path.parent)),
        catalog_path.read_bytes(),
        "Catalog",
    )
    return Chain(
        _rel(profile_path, ssp.parent), [(str(profile_path), dump_document(profile, "json"))]
    )


def _implemented_source(data: Any, source: Path) -> Path | None:
    """The one catalog/profile file a component-definition implements, if it names one."""
    from fairpolicy.policy import oscal

    body = data.get("component-definition") if isinstance(data, Mapping) else None
    if not isinstance(body, Mapping):
        return None
    ctx = oscal.Ctx()
    found: set[Path] = set()
    for comp in oscal.items(body, "components", None, ctx):
        for impl in oscal.items(comp, "control-implementations", None, ctx):
            src = impl.get("source") if isinstance(impl, Mapping) else None
            path = oscal.resolve_href(src, source.parent, body, None, ctx)
            if path is not None:
                found.add(path.resolve())
    return next(iter(found)) if len(found) == 1 else None


def read_ssp(path: str, subject: str | None) -> tuple[str, str]:
    """Validate the team's SSP at ``path``; returns (its SHA-256, the UUID of the component
    for the system under assessment, found by ``subject``). Raises UsageError/PolicyError."""

    body, sha = read_model(
        path,
        "system-security-plan",
        "--ssp",
        "an OSCAL system security plan",
        "pass an SSP, or leave --ssp out and write one with -o oscal-ssp=PATH.",
    )
    comps = body.get("system-implementation", {}).get("components", [])
    titles = {str(c.get("title", "")).strip(): str(c.get("uuid")) for c in comps}
    if subject is None or subject.strip() not in titles:
        raise UsageError(
            f"--ssp {path}: no component of the SSP is the system under assessment"
            + (f" ('{subject}')" if subject else "")
            + f"; its components are: {', '.join(repr(t) for t in titles) or 'none'}.",
            file=path,
            hint="name the model's component with --subject '<its title>'.",
        )
    return sha, titles[subject.strip()]


def given_ssp(path: str | None, writes: str | None, subject: str | None) -> tuple[str, str] | None:
    """``--ssp``, validated before any work: (its SHA-256, the UUID of the model's component,
    found by ``subject``). ``writes`` names the option that would write another SSP."""
    if path is None:
        return None
    if writes is not None:
        raise UsageError(
            f"--ssp names the system security plan, and {writes} would write another one.",
            hint=f"give one of them: your own SSP (--ssp) or a written one ({writes}).",
        )
    return read_ssp(path, subject)


def with_ssp(results: Results, path: str, sha256: str) -> Results:
    """``results`` with the team's SSP (``--ssp``) among the documents that shaped the
    evidence (its path and SHA-256)."""
    from fairpolicy.results import DocumentRef

    ref = DocumentRef(path=path, sha256=sha256, kind="system-security-plan")
    policy = results.policy.model_copy(update={"documents": [*results.policy.documents, ref]})
    return results.model_copy(update={"policy": policy})


def read_model(path: str, root: str, flag: str, what: str, hint: str) -> tuple[Any, str]:
    """(the body under ``root``, the file's SHA-256) of an OSCAL document a flag names,
    checked against the NIST schema. Raises PolicyError naming the flag."""
    from fairpolicy.oscal_schema import check_document
    from fairpolicy.policy import oscal

    p = Path(path)
    if not p.is_file():
        raise PolicyError(f"{flag}: no such file.", file=path, hint=f"pass the path of {what}.")
    data, sha = oscal.read_document(p)
    if not isinstance(data, Mapping) or list(data) != [root]:
        raise PolicyError(
            f"{flag}: the file is not {what} (its root must be '{root}').", file=path, hint=hint
        )
    check_document(_jsonable(data), root, path, error=PolicyError)
    return data[root], sha


def _jsonable(obj: Any) -> Any:
    """YAML-parsed values as JSON would hold them (dates as their text)."""
    import datetime as _dt

    if isinstance(obj, Mapping):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, _dt.datetime | _dt.date):
        return obj.isoformat()
    return obj
