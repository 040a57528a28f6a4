"""Configuration files for ``fairpolicy check``: ``fairpolicy.toml`` or ``[tool.fairpolicy]``.

Discovery: from the working directory upward, the first folder holding
``fairpolicy.toml`` (its top level, or its ``[tool.fairpolicy]`` table) or a
``pyproject.toml`` with a ``[tool.fairpolicy]`` table. The search stops at the repository
root (the nearest folder with ``.git`` — a folder or, in a worktree or submodule, a file —
or ``.hg``); outside a repository only the working directory itself is searched, never its
parents (a ``pyproject.toml`` in ``/tmp`` or a home folder must not loosen a gate unseen).
``--config FILE`` names the file, ``--no-config`` turns discovery off.

Keys are ``check``'s long option names (``fail-on``, ``bootstrap``, ``engine``, ``output``
…, underscores accepted for dashes) plus ``policy`` — the default policy, so that
``fairpolicy check DATA`` works. Repeatable options take a list (``output = ["json=r.json",
"html=r.html"]``); ``bind``, ``rename`` and ``meta`` also take a table (``bind = {target = "y"}``,
``rename = {sex = "gender"}``; a per-control bind is keyed ``"CONTROL:ROLE"``).
Paths (``policy``, ``output`` targets, ``ssp``, ``baseline``, ``plan``, ``allow-path``)
are relative to the file's folder. The command line wins: an option given there is not
taken from the file (for ``bind`` and ``meta`` per key; ``output`` as a whole). An unknown
key, or a value of the wrong type, is exit 2 naming the file and the key.

What was applied is recorded in the results: ``run.options.config`` holds the file, its
SHA-256, the settings taken from it, ``loosens`` — the settings from the file that loosen
the gate (:func:`loosening`) — and ``sources``: every option that can change a verdict
with its value and its source (``flag``, ``config`` or ``default``).
Every report names the file and each loosening setting (``formatters._ci.config_note``).
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

__all__ = [
    "GATE_OPTIONS",
    "Applied",
    "apply",
    "configure",
    "discover",
    "given_dests",
    "loosening",
    "repository_root",
]

#: options a configuration file may not set (they only make sense on a command line)
CLI_ONLY = frozenset({"help", "debug", "policy", "data", "paths", "config", "no_config", "explain"})
#: options whose value is a path (relative to the configuration file's folder)
PATHS = frozenset({"ssp", "baseline", "plan", "allow_path"})
#: repeatable KEY=VALUE options that also take a TOML table, merged per key
TABLES = frozenset({"bind", "rename", "meta"})

#: the ``check`` options that can change a verdict, with their parser defaults: each is
#: recorded with its value and source (flag, config, default) in ``run.options.config``
GATE_OPTIONS: dict[str, Any] = {
    "fail_on": "error",
    "inconclusive": "fail",
    "decision": None,
    "bootstrap": None,
    "ci_level": None,
    "ci_method": None,
    "resample": None,
    "p_value": None,
    "bonferroni": None,
    "seed": None,
    "bind": [],
    "rename": [],
    "positive_label": None,
    "num_classes": None,
    "score_decimals": None,
    "subject": None,
    "baseline": None,
    "max_regression": None,
    "allow_policy_change": False,
    "plan": None,
    "engine": None,
}


def loosening(dest: str, value: Any, decision: Any = None) -> bool:
    """Whether ``dest = value`` from a configuration file loosens the gate: lets a run
    pass (or exit 0) that the defaults would fail — ``fail-on = never``, ``inconclusive =
    pass|warn``, an interval decision (``ci_lower`` passes what the point value fails, and
    the interval settings shape it), ``bonferroni``, a lower ``ci-level``, a
    ``max-regression`` tolerance, ``allow-policy-change``, ``bind`` and ``rename`` (which
    columns the controls read), ``positive-label`` (which outcome counts as favourable) and
    ``score-decimals`` (rounded scores)."""
    if dest == "fail_on":
        return bool(value == "never")
    if dest == "inconclusive":
        return value in ("pass", "warn")
    if dest == "decision":
        return value not in (None, "point")
    if dest in ("bonferroni", "allow_policy_change"):
        return value is True
    if dest in ("bind", "rename", "score_decimals"):
        return bool(value) or value == 0
    if dest == "positive_label":  # which outcome counts as favourable: what is measured
        return value is not None
    if dest == "max_regression":
        try:
            return value is not None and float(value) > 0
        except (TypeError, ValueError):
            return True
    if dest in ("ci_level", "ci_method", "bootstrap", "resample", "seed"):
        return decision not in (None, "point") and value is not None
    return False


#: the ``check`` subparser, or a function building it (called only when a file is applied:
#: building every subparser costs a few milliseconds a run without a configuration file
#: would pay for nothing)
Parser = argparse.ArgumentParser | Callable[[], argparse.ArgumentParser]


@lean(frozen=False)
class Applied:
    """The configuration file used and the settings taken from it."""

    path: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    #: the file's SHA-256
    sha256: str | None = None
    #: the options given on the command line (None: not known exactly — no file applied,
    #: so the parser was not built; a value other than the default then counts as a flag)
    given: set[str] | None = None

    def record(self, args: argparse.Namespace | None = None) -> dict[str, Any] | None:
        """``run.options.config``: the file, its SHA-256, the settings taken from it, those
        that loosen the gate, and (given the parsed ``args``) every option that can change
        a verdict with its value and source."""
        if self.path is None:
            return None
        out = {
            "file": self.path,
            "sha256": self.sha256,
            "settings": self.settings,
            "loosens": self.loosens(),
        }
        if args is not None:
            out["sources"] = self.sources(args)
        return out

    def loosens(self) -> list[str]:
        """The settings taken from the file that loosen the gate (:func:`loosening`)."""
        decision = self.settings.get("decision")
        return [
            key
            for key, value in self.settings.items()
            if loosening(key.replace("-", "_"), value, decision)
        ]

    def sources(self, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
        """Every option that can change a verdict: ``{"value": …, "source": flag | config |
        default}``, keyed by its long option name."""
        from_file = {k.replace("-", "_") for k in self.settings}
        out: dict[str, dict[str, Any]] = {}
        for dest, default in GATE_OPTIONS.items():
            if not hasattr(args, dest):
                continue
            value = getattr(args, dest)
            if dest in from_file and dest not in TABLES:
                source = "config"
            elif self.given is not None:
                source = "flag" if dest in self.given else "default"
            else:
                source = "default" if value == default else "flag"
            if dest in TABLES and dest in from_file:
                source = "config" if source == "default" else "flag+config"
            out[_key_text(dest)] = {"value": value, "source": source}
        return out


def _table(path: Path) -> dict[str, Any] | None:
    """``[tool.fairpolicy]`` of ``path`` (or the top level of a fairpolicy.toml); None
    when a pyproject.toml has no such table."""
    import tomllib  # only when there is a file to read

    try:
        with path.open("rb") as fh:
            # a float keeps the decimal written when its double says another
            # (max-regression = 0.09999999999999999999), as in policies
            from fairpolicy.exact import written_number

            doc = tomllib.load(fh, parse_float=lambda t: written_number(t, float(t)))
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


def repository_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder, or a file in a
    worktree or submodule) or ``.hg``; None outside a repository."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / ".hg").exists():
            return folder
    return None


def discover(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The configuration file governing ``start`` and its settings (see the module doc):
    searched from ``start`` up to the repository root, or in ``start`` alone outside a
    repository."""
    here = start.resolve()
    root = repository_root(here)
    up = [] if root is None else list(here.parents[: len(here.parents) - len(root.parents)])
    folders = [here, *up]
    for folder in folders:
        for name in ("fairpolicy.toml", "pyproject.toml"):
            candidate = folder / name
            if candidate.is_file():
                table = _table(candidate)
                if table is not None:
                    return candidate, table
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
    import hashlib

    applied = Applied(str(path), sha256=hashlib.sha256(path.read_bytes()).hexdigest(), given=given)

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
    explain = getattr(args, "explain", None) is not None
    args.policy = args.data = None
    if not paths and not explain:
        raise UsageError(
            "check needs the data to evaluate: fairpolicy check [POLICY] DATA.",
            hint="name the predictions file (CSV or Parquet); the policy may come from the "
            "configuration file's `policy`",
        )
    if explain and len(paths) < 2:  # --explain reads no data: a path is the policy
        args.policy, args.data = (paths[0] if paths else None), None
    else:
        args.policy, args.data = (paths[0], paths[1]) if len(paths) == 2 else (None, paths[0])
    argv = list(getattr(args, "argv", []))
    argv = argv[argv.index("check") + 1 :] if "check" in argv else argv
    applied = apply(args, parser, argv, config=args.config, no_config=args.no_config)
    if args.policy is None and explain:
        why = "--no-config was given" if args.no_config else "no configuration file sets it"
        raise UsageError(
            f"no policy to explain '{args.explain}' from: check --explain takes the policy "
            f"from the command line or from the configuration file's `policy`, and {why}.",
            hint=f"name it: fairpolicy check POLICY --explain {args.explain}, or add "
            'policy = "..." under [tool.fairpolicy] in pyproject.toml (or in fairpolicy.toml)',
        )
    if args.policy is None:
        why = "--no-config was given" if args.no_config else "no configuration file sets it"
        raise UsageError(
            f"no policy: 'fairpolicy check {args.data}' takes the policy from the "
            f"configuration file's `policy`, and {why}.",
            hint='name it: fairpolicy check POLICY DATA, or add policy = "..." under '
            "[tool.fairpolicy] in pyproject.toml (or in fairpolicy.toml)",
        )
    return applied
