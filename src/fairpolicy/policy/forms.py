"""Venturalitica's document shapes beyond the forms fairpolicy writes.

- **A ``system-security-plan`` root**, as ``venturalitica pull`` writes it (and Venturalitica
  0.8.2's loader reads): its ``control-implementation.implemented-requirements`` are the
  controls, each with ``metric_key``/``threshold``/``operator`` props. Its descriptive
  sections (``system-characteristics``, ``system-implementation``, ``back-matter``) and
  Venturalitica's own keys (``risks``, a requirement's ``legacy-id``) change no decision:
  they are named once, in one warning, as not read. Any other key is refused. ``--strict``
  validates the document with trestle's SSP model (a pulled SSP is not valid NIST OSCAL:
  it has no ``import-profile`` and carries ``description``/``legacy-id`` on requirements).
- **A NIST SSP** (one with ``import-profile``, e.g. fairpolicy's own ``-o oscal-ssp``) is
  not a policy: its controls are the profile's. It is refused, naming the profile to pass
  and ``--ssp`` to give the SSP.
- **The "hybrid" catalog** (metrics as ``inventory-items`` linked from the
  ``implemented-requirements`` of a catalog-level ``control-implementations``) is refused:
  Venturalitica 0.8.2 reads neither a catalog's ``control-implementations`` nor, therefore,
  the links, so it evaluates none of these metrics and reports no violation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fairpolicy.policy.oscal import Ctx, RawControl, items, raw_control, validate_oscal

__all__ = ["hybrid_catalog", "system_security_plan"]

#: keys of each place in a pulled SSP: read, descriptive (not read), Venturalitica's (not read)
_READ = {
    "root": frozenset({"uuid", "metadata", "control-implementation"}),
    "control-implementation": frozenset({"description", "implemented-requirements"}),
    "requirement": frozenset({"uuid", "control-id", "description", "props"}),
}
_DESCRIPTIVE = {
    "root": frozenset({"system-characteristics", "system-implementation", "back-matter"}),
    "control-implementation": frozenset(),
    "requirement": frozenset({"remarks"}),
}
_VENTURALITICA = {
    "root": frozenset({"risks"}),
    "control-implementation": frozenset(),
    "requirement": frozenset({"legacy-id"}),
}


def _check(
    node: Mapping[str, Any],
    place: str,
    path: str,
    file: str | None,
    ctx: Ctx,
    not_read: dict[str, None],
    control: Any = None,
) -> None:
    known = _READ[place] | _DESCRIPTIVE[place] | _VENTURALITICA[place]
    for key in node:
        key = str(key)
        if key in _DESCRIPTIVE[place] or key in _VENTURALITICA[place]:
            generic = path.split("[", 1)[0] if place == "requirement" else path
            not_read[f"{generic}.{key}"] = None
        elif key not in known:
            ctx.add(
                f"'{path}' has the key '{key}', which fairpolicy does not read in a "
                "system-security-plan written by `venturalitica pull`; it is refused rather "
                "than ignored",
                file,
                control,
                f"{path}.{key}",
                hint=f"'{path}' may hold: {', '.join(sorted(known))}. A control's settings are "
                "props of its implemented-requirement (metric_key, threshold, operator, "
                "input.<role>); or remove the key",
            )


def system_security_plan(body: Mapping[str, Any], file: str | None, ctx: Ctx) -> list[RawControl]:
    """The raw controls of a system-security-plan as ``venturalitica pull`` writes it; a
    NIST SSP importing a profile is refused (see the module's docstring)."""
    root = "system-security-plan"
    imported = body.get("import-profile")
    if imported is not None:
        href = imported.get("href") if isinstance(imported, Mapping) else None
        if (
            isinstance(href, str)
            and file
            and href
            and not re.match(r"^([a-z][a-z0-9+.-]*:|#|/)", href)
        ):
            href = str(Path(file).parent / href)  # as the reader would type it
        ctx.add(
            "this is a NIST system-security-plan: it imports the profile "
            f"{href!r} and describes how the system implements that profile's controls; "
            "the controls to check (metric, threshold, operator) are the profile's, so the "
            "SSP is not the policy",
            file,
            key=f"{root}.import-profile",
            hint=f"pass the profile as the policy (`fairpolicy check {href or 'PROFILE'} "
            f"DATA`) and give this file with --ssp {file or 'SSP'} so the assessment plan "
            "imports it",
        )
        return []
    if not validate_oscal(root, body, file, ctx):
        return []
    not_read: dict[str, None] = {}
    _check(body, "root", root, file, ctx, not_read)
    impl = body.get("control-implementation")
    if impl is None:
        ctx.add(
            f"'{root}' has no control-implementation, so it defines no controls",
            file,
            key=f"{root}.control-implementation",
            hint="add control-implementation.implemented-requirements with metric_key, "
            "threshold and operator props (what `venturalitica pull` writes)",
        )
        return []
    if not isinstance(impl, Mapping):
        ctx.add(
            f"'{root}.control-implementation' must be a mapping", file, key="control-implementation"
        )
        return []
    path = f"{root}.control-implementation"
    _check(impl, "control-implementation", path, file, ctx, not_read)
    raws: list[RawControl] = []
    for i, req in enumerate(items(impl, "implemented-requirements", file, ctx)):
        if isinstance(req, Mapping):
            here = f"{path}.implemented-requirements[{i}]"
            _check(req, "requirement", here, file, ctx, not_read, req.get("control-id"))
        raw = raw_control(req, file, ctx)
        if raw is not None:
            raws.append(raw)
    risks = body.get("risks")
    if not raws and isinstance(risks, list) and risks and not ctx.problems:
        ctx.add(
            f"'{path}.implemented-requirements' is empty: this system-security-plan is a "
            f"risk register ({len(risks)} risk(s), which fairpolicy does not read) and "
            "defines no controls",
            file,
            key=f"{path}.implemented-requirements",
            hint="check the pulled SSP whose implemented-requirements carry the controls "
            "(metric_key, threshold and operator props) of these risks",
        )
    if not_read:
        ctx.warnings.append(
            f"{file or 'policy'}: a system-security-plan as `venturalitica pull` writes it; "
            f"its controls are the implemented-requirements. Not read (they change no "
            f"decision): {', '.join(not_read)}"
        )
    return raws


def hybrid_catalog(body: Mapping[str, Any], file: str | None, ctx: Ctx) -> bool:
    """Refuse Venturalitica's "hybrid" catalog; True when ``body`` is one."""
    present = [k for k in ("inventory-items", "control-implementations") if k in body]
    if not present:
        return False
    linked = sum(
        1
        for impl in items(body, "control-implementations", file, ctx)
        for req in _requirements(impl)
        if isinstance(req, Mapping) and req.get("links")
    )
    ctx.add(
        'this catalog is Venturalitica\'s "hybrid" form: its metrics are '
        f"inventory-items linked from {linked} implemented-requirement(s) of a catalog-level "
        f"control-implementations ({' and '.join(present)} beside the catalog's controls). "
        "Venturalitica 0.8.2 reads a catalog's controls only, so it evaluates none of these "
        "metrics and reports no violation; fairpolicy refuses it rather than pass it",
        file,
        key="catalog." + present[0],
        hint="move each inventory item's props (metric_key, threshold, operator, "
        "input.<role>) onto the catalog control that links to it (controls[].props), or "
        "write a component-definition whose implemented-requirements carry them; "
        "docs/migrating-from-venturalitica.md shows both",
    )
    return True


def _requirements(impl: Any) -> list[Any]:
    """Implemented-requirements of a control-implementation, nested ones included (the
    hybrid samples nest them)."""
    out: list[Any] = []
    reqs = impl.get("implemented-requirements") if isinstance(impl, Mapping) else None
    for req in reqs if isinstance(reqs, list) else ():
        out.append(req)
        out += _requirements(req)
    return out
