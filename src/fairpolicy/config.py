"""Configuration files for ``fairpolicy check``: ``fairpolicy.toml`` or ``[tool.fairpolicy]``.

Discovery follows what pytest, ruff and conftest users expect: from the working directory
upward, the first folder holding ``fairpolicy.toml`` (its top level, or its
``[tool.fairpolicy]`` table) or a ``pyproject.toml`` with a ``[tool.fairpolicy]`` table;
the search stops at a repository root (a folder with ``.git`` or ``.hg``) or the
filesystem root. ``--config FILE`` names the file, ``--no-config`` turns discovery off.

Keys are ``check``'s long option names (``fail-on``, ``bootstrap``, ``engine``, ``output``
…, underscores accepted for dashes) plus ``policy`` — the default policy, so that
``fairpolicy check DATA`` works. Repeatable options take a list (``output = ["json=r.json",
"html=r.html"]``); ``bind``, ``rename`` and ``meta`` also take a table (``bind = {target = "y"}``,
``rename = {sex = "gender"}``; a per-control bind is keyed ``"CONTROL:ROLE"``).
Paths (``policy``, ``output`` targets, ``ssp``, ``baseline``, ``plan``, ``allow-path``)
are relative to the file's folder. The command line wins: an option given there is not
taken from the file (for ``bind`` and ``meta`` per key; ``output`` as a whole). An unknown
key, or a value of the wrong type, is exit 2 naming the file and the key. What was applied
is recorded in the results (``run.options.config``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import Any

from fairpolicy.errors import UsageError, did_you_mean
from fairpolicy.records import lean

__all__ = ["Applied", "apply", "configure", "discover", "given_dests"]

#: options a configuration file may not set (they only make sense on a command line)
CLI_ONLY = frozenset({"help", "debug", "policy", "data", "paths", "config", "no_config", "explain"})
#: options whose value is a path (relative to the configuration file's folder)
PATHS = frozenset({"ssp", "baseline", "plan", "allow_path"})
#: repeatable KEY=VALUE options that also take a TOML table, merged per key
TABLES = frozenset({"bind", "rename", "meta"})

#: the ``check`` subparser, or a function building it (called only when a file is applied:
#: building every subparser costs a few milliseconds a run without a configuration file
#: would pay for nothing)
Parser = argparse.ArgumentParser | Callable[[], argparse.ArgumentParser]


@lean(frozen=False)
class Applied:
    """The configuration file used and the settings taken from it."""

    path: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any] | None:
        return None if self.path is None else {"file": self.path, "settings": self.settings}


def _table(path: Path) -> dict[str, Any] | None:
    """``[tool.fairpolicy]`` of ``path`` (or the top level of a fairpolicy.toml); None
    when a pyproject.toml has no such table."""
    import tomllib  # only when there is a file to read

    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(
            f"cannot read the configuration file {path}: {exc}.",
            hint="fix its TOML, or pass --no-config to ignore it",
        ) from None
    tool = doc.get("tool", {}).get("fairpolicy") if isinstance(doc.get("tool"), dict) else None
    if path.name == "fairpolicy.toml":
        if tool is not None:
            return dict(tool)
        return {k: v for k, v in doc.items() if k != "tool"}
    return None if tool is None else dict(tool)


def discover(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The configuration file governing ``start`` and its settings (see the module doc)."""
    here = start.resolve()
    for folder in (here, *here.parents):
        for name in ("fairpolicy.toml", "pyproject.toml"):
            candidate = folder / name
            if candidate.is_file():
                table = _table(candidate)
                if table is not None:
                    return candidate, table
        if (folder / ".git").exists() or (folder / ".hg").exists():
            return None
    return None


def given_dests(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """The options given on the command line (not merely at their defaults)."""
    saved = {a: a.default for a in parser._actions}
    try:
        for a in parser._actions:
            a.default = argparse.SUPPRESS
        ns, _ = parser.parse_known_args(list(argv))
    finally:
        for a, d in saved.items():
            a.default = d
    return set(vars(ns))


def _key_text(key: str) -> str:
    return key.replace("_", "-")


def apply(
    args: argparse.Namespace,
    parser: Parser,
    argv: Sequence[str],
    *,
    config: str | None,
    no_config: bool,
) -> Applied:
    """Fill ``args`` from the configuration file where the command line left an option
    unset; returns what was applied. Raises :class:`UsageError`."""
    if no_config:
        return Applied()
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise UsageError(f"--config {config}: no such file.", key="--config")
        table = _table(path)
        if table is None:
            raise UsageError(
                f"--config {config} has no [tool.fairpolicy] table.",
                key="--config",
                hint="add [tool.fairpolicy] with the check options, or name a fairpolicy.toml",
            )
    else:
        found = discover(Path.cwd())
        if found is None:
            return Applied()
        path, table = found
    base = path.parent
    if not isinstance(parser, argparse.ArgumentParser):
        parser = parser()
    actions = {a.dest: a for a in parser._actions if a.dest not in CLI_ONLY}
    allowed = sorted({"policy", *(_key_text(d) for d in actions)})
    given = given_dests(parser, argv)
    applied = Applied(str(path))

    def bad(key: str, why: str, hint: str | None = None) -> UsageError:
        return UsageError(f"configuration file {path}: '{key}' {why}", key=key, hint=hint)

    for raw_key, value in table.items():
        key = str(raw_key)
        dest = key.replace("-", "_")
        if key == "policy":
            if not isinstance(value, str) or not value.strip():
                raise bad(key, "must be the path of a policy file.")
            if getattr(args, "policy", None) is None:
                args.policy = os.fspath(base / value)
                applied.settings["policy"] = args.policy
            continue
        action = actions.get(dest)
        if action is None:
            raise bad(
                key,
                f"is not an option of fairpolicy check.{did_you_mean(key, allowed)}",
                hint=f"the keys are check's long options: {', '.join(allowed)}",
            )
        got = _value(action, key, value, base, bad)
        if isinstance(action, argparse._AppendAction):
            assert isinstance(got, list)
            if dest in TABLES:  # merged per key: the command line's keys win
                mine = {str(i).partition("=")[0].strip() for i in (getattr(args, dest) or [])}
                extra = [i for i in got if i.partition("=")[0].strip() not in mine]
                setattr(args, dest, [*extra, *(getattr(args, dest) or [])])
                if extra:
                    applied.settings[key] = extra
            elif dest not in given:
                setattr(args, dest, got)
                applied.settings[key] = got
        elif dest not in given:
            setattr(args, dest, got)
            applied.settings[key] = got
    return applied


def _value(action: argparse.Action, key: str, value: Any, base: Path, bad: Any) -> Any:
    """The config value as the parsed command line would hold it."""
    dest = action.dest
    if isinstance(action, argparse._StoreTrueAction):
        if not isinstance(value, bool):
            raise bad(key, f"must be true or false, got {value!r}")
        return value
    if isinstance(action, argparse._AppendAction):
        if dest in TABLES and isinstance(value, Mapping):
            items = [f"{k}={v}" for k, v in value.items()]
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            items = list(value)
        elif isinstance(value, str):
            items = [value]
        else:
            raise bad(key, f"must be a list of strings{' or a table' if dest in TABLES else ''}")
        if dest == "output":
            items = [_output_path(i, base) for i in items]
        elif dest in PATHS:
            items = [os.fspath(base / i) for i in items]
        return items
    if isinstance(value, (bool, list, dict)):
        raise bad(key, f"must be a single value, got {value!r}")
    text = str(value)
    try:
        got = action.type(text) if callable(action.type) else text
    except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
        raise bad(key, f"{exc}") from None
    if action.choices and got not in action.choices:
        raise bad(
            key,
            f"must be one of {', '.join(map(str, action.choices))}, got {value!r}."
            f"{did_you_mean(text, [str(c) for c in action.choices])}",
        )
    if dest in PATHS:
        got = os.fspath(base / text)
    return got


def _output_path(item: str, base: Path) -> str:
    name, sep, target = item.partition("=")
    if not sep or target in ("", "-"):
        return item
    return f"{name}={os.fspath(base / target)}"


def configure(args: argparse.Namespace, parser: Parser) -> Applied:
    """``check [POLICY] DATA`` read, then the configuration file's defaults applied;
    ``parser``: the ``check`` subparser (or a function building it). Raises
    :class:`UsageError`."""
    paths = list(args.paths)
    if len(paths) > 2:
        raise UsageError(
            f"check takes [POLICY] DATA, got {len(paths)} paths: {', '.join(paths)}.",
            hint="quote a glob ('preds/*.parquet') so the shell does not expand it",
        )
    args.policy, args.data = (paths[0], paths[1]) if len(paths) == 2 else (None, paths[0])
    if getattr(args, "explain", None) is not None and len(paths) == 1:
        args.policy, args.data = paths[0], None  # --explain reads no data: the path is the policy
    argv = list(getattr(args, "argv", []))
    argv = argv[argv.index("check") + 1 :] if "check" in argv else argv
    applied = apply(args, parser, argv, config=args.config, no_config=args.no_config)
    if args.policy is None:
        why = "--no-config was given" if args.no_config else "no configuration file sets it"
        raise UsageError(
            f"no policy: 'fairpolicy check {args.data}' takes the policy from the "
            f"configuration file's `policy`, and {why}.",
            hint='name it: fairpolicy check POLICY DATA, or add policy = "..." under '
            "[tool.fairpolicy] in pyproject.toml (or in fairpolicy.toml)",
        )
    return applied
