"""``fairpolicy validate POLICY...``: check policy files without data.

Each file is loaded by :func:`fairpolicy.policy.load.load_policy`, the loader
``fairpolicy check`` uses, so every problem ``check`` would stop on (metric keys,
operators, thresholds, parameters, bindings, imports) is reported here with the same
words. A file that claims to be full OSCAL (a catalog, profile or component-definition
with ``uuid`` and ``metadata`` and OSCAL prop names: the documents the loader also
checks with compliance-trestle) is then validated against NIST's OSCAL 1.2.3 JSON
schema, together with the local catalogs and profiles it imports.

Output, on ``stdout``: ``OK  path  (N controls, form)`` per valid file (its warnings
indented below it), and for an invalid file the error paragraph(s) exactly as
``fairpolicy check`` prints them. Every file is checked; exit 0 when all are valid, 2
otherwise. Usable as a pre-commit hook (``.pre-commit-hooks.yaml``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from fairpolicy.errors import EXIT_ERROR, EXIT_PASS, PolicyError

__all__ = ["schema_errors", "validate_files"]

#: Roots whose full-OSCAL documents are checked against the NIST schema (the ones the
#: loader validates with trestle; an assessment-plan policy is Venturalitica's form, not OSCAL).
SCHEMA_ROOTS = ("catalog", "profile", "component-definition")


def validate_files(
    paths: Sequence[str],
    stdout: TextIO,
    allow_paths: Sequence[str] = (),
    strict: bool = False,
    bound: Sequence[str] = (),
) -> int:
    """Validate every file of ``paths``; write one verdict each to ``stdout``; exit code.
    ``allow_paths``: folders outside each policy's own tree its hrefs may name. NIST
    schema problems are warnings (the file is evaluable, as ``check`` does), errors under
    ``strict``. ``bound``: roles ``check --bind`` would give every control."""
    from fairpolicy.policy.load import load_policy

    invalid = 0
    for path in paths:
        errors: list[PolicyError] = []
        schema_warnings: list[str] = []
        try:
            policy = load_policy(path, allow_paths=allow_paths, strict=strict, bound=bound)
        except PolicyError as exc:
            errors.append(exc)
        if strict:
            errors += schema_errors(Path(path))
        elif not errors and not any("not valid OSCAL" in w for w in policy.warnings):
            # one warning per document: the loader's, else the NIST schema's
            schema_warnings = [
                f"NIST OSCAL schema (--strict makes this an error): {e.render()}"
                for e in schema_errors(Path(path))
            ]
        if errors:
            invalid += 1
            for error in errors:
                stdout.write(f"error: {error.render()}\n")
            continue
        n = len(policy.controls)
        stdout.write(f"OK  {path}  ({n} control{'s' if n != 1 else ''}, {policy.form})\n")
        for warning in [*policy.warnings, *schema_warnings]:
            stdout.write(f"  warning: {warning}\n")
    return EXIT_ERROR if invalid else EXIT_PASS


def schema_errors(path: Path, seen: set[Path] | None = None) -> list[PolicyError]:
    """NIST OSCAL schema errors of ``path`` and of the local documents it imports.

    Only documents that claim to be OSCAL are checked (see the module docstring); a file
    that cannot be read or has no single root yields nothing here: the loader says why.
    YAML files get the loader's coercion of numbers, booleans and dates to strings.
    """
    from fairpolicy import cache, oscal_schema
    from fairpolicy.policy import oscal

    seen = set() if seen is None else seen
    try:
        resolved = path.resolve()
    except OSError:
        return []
    if resolved in seen:
        return []
    seen.add(resolved)
    data = _read(path)
    roots = [r for r in SCHEMA_ROOTS if isinstance(data, Mapping) and r in data]
    if len(roots) != 1 or not oscal.claims_oscal(data[roots[0]]):
        return []
    root, body, file = roots[0], data[roots[0]], str(path)
    out: list[PolicyError] = []
    lenient = path.suffix.lower() != ".json"
    # a document that passed before is not checked again (fairpolicy.cache); failures
    # are always checked afresh, so their messages are the validator's
    key = cache.key_for(
        f"nist-schema:{root}:{'lenient' if lenient else 'strict'}",
        data,
        ("jsonschema", "regex"),
        (Path(oscal_schema.__file__), oscal_schema.schema_path()),
    )
    if not cache.seen_valid(key):
        try:
            oscal_schema.check_document(data, root, file, lenient=lenient)
        except PolicyError as exc:
            out.append(exc)
        else:
            cache.remember(key)
    for href in _imports(root, body):
        target = oscal.resolve_href(href, path.parent, body, file, oscal.Ctx())
        if target is not None and target.is_file():
            out += schema_errors(target, seen)
    return out


def _read(path: Path) -> Any:
    """The document as its format's data model: JSON types for .json, else YAML's."""
    from fairpolicy.policy import oscal

    try:
        if path.suffix.lower() == ".json":
            from fairpolicy.files import open_regular

            with open_regular(path, PolicyError, "policy") as fh:  # a FIFO would block
                return json.loads(fh.read().decode("utf-8-sig"))
        return oscal.read_document(path)[0]
    except (OSError, UnicodeDecodeError, ValueError, PolicyError):
        return None  # unreadable: the loader reports it


def _imports(root: str, body: Mapping[str, Any]) -> list[Any]:
    """The hrefs a profile imports, or the sources a component-definition implements."""

    def each(obj: Any, key: str) -> list[Any]:
        value = obj.get(key) if isinstance(obj, Mapping) else None
        return value if isinstance(value, list) else []

    if root == "profile":
        return [i.get("href") for i in each(body, "imports") if isinstance(i, Mapping)]
    if root == "component-definition":
        return [
            impl.get("source")
            for comp in each(body, "components")
            for impl in each(comp, "control-implementations")
            if isinstance(impl, Mapping)
        ]
    return []
