"""Parsing of the repeatable ``KEY=VALUE`` options of the command line (``--meta``,
``--bind``): a malformed item or a key given twice with two values is a usage error
naming the flag, never the last one silently winning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from fairpolicy.errors import UsageError

if TYPE_CHECKING:
    from fairpolicy.policy.binds import Binds

__all__ = ["parse_bind", "parse_meta", "parse_outputs"]


def parse_meta(items: Sequence[str]) -> dict[str, str]:
    """``--meta KEY=VALUE`` items; a key given twice with two values is an error."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise UsageError(
                f"--meta expects KEY=VALUE, got '{item}'.",
                key="--meta",
                hint="e.g. --meta git_sha=$GITHUB_SHA",
            )
        if key in out and out[key] != value.strip():
            raise UsageError(
                f"--meta gives '{key}' twice: '{out[key]}' and '{value.strip()}'.",
                key="--meta",
                hint="give each key once",
            )
        out[key] = value.strip()
    return out


def parse_bind(items: Sequence[str], renames: Sequence[str] = ()) -> Binds:
    """``--bind ROLE=COLUMN`` / ``--bind CONTROL:ROLE=COLUMN`` and ``--rename OLD=NEW``
    (:mod:`fairpolicy.policy.binds`); a malformed item or a key given twice with two
    values is a UsageError naming the flag."""
    from fairpolicy.policy.binds import Binds, parse_rename
    from fairpolicy.policy.binds import parse_bind as parse

    binds = parse(items)
    return Binds(roles=binds.roles, controls=binds.controls, renames=parse_rename(renames))


def parse_outputs(items: Sequence[str]) -> list[tuple[str, str | None]]:
    """(format, path) pairs; path None is standard output (``-o FORMAT`` or
    ``-o FORMAT=-``). At most one format may ask for standard output."""
    from fairpolicy.formatters import get
    from fairpolicy.outputs import is_stdout

    outputs: list[tuple[str, str | None]] = []
    for item in items or ["text"]:
        name, sep, path = item.partition("=")
        get(name.strip())  # validates the name now, before any work
        if sep and not path:
            raise UsageError(
                f"-o {item}: the path is empty.",
                hint=f"write -o {name.strip()}=PATH, or - for stdout.",
            )
        outputs.append((name.strip(), None if path == "" or is_stdout(path) else path))
    to_stdout = [n for n, p in outputs if p is None]
    if len(to_stdout) > 1:
        raise UsageError(
            f"{' and '.join(f'-o {n}' for n in to_stdout)} ask for standard output; "
            "only one format can go there.",
            hint="give the others a file: -o FORMAT=PATH.",
        )
    return outputs
