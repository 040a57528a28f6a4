"""Pieces shared by the CI formatters (``junit``, ``sarif``, ``github``, ``markdown``).

They all answer the same questions about a finding the same way: does it fail the gate
(so JUnit's failure count, the GitHub annotation level and the exit code agree), where
is its control in the policy (a path relative to the working directory, which in CI is
the repository root), and how are its numbers written.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from fractions import Fraction
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

from fairpolicy.exact import ExactFloat, level_percent, shown, written_parts

if TYPE_CHECKING:
    from fairpolicy.results import Finding, Results

#: ``tool.driver.informationUri`` and the like: the project's home (its namespace host)
INFORMATION_URI = "https://fairpolicy.example.org/"

#: invisible characters that drive a terminal or CI log viewer (ANSI escapes), or reorder
#: what a reader sees (bidirectional overrides, "Trojan Source"); tab and line breaks are
#: left to each format, which has its own rule for them
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


def inert(text: object) -> str:
    """``text`` with invisible control characters shown as escapes (``\\x1b``,
    ``\\u202e``), for the formats a person reads (HTML, Markdown, GitHub, JUnit)."""
    return _INVISIBLE.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        str(text),
    )


#: One word per status, as the text table writes it.
STATUS_WORD = {
    "pass": "PASS",
    "fail": "FAIL",
    "warn": "WARN",
    "inconclusive": "INCONCLUSIVE",
    "error": "ERROR",
}


def fails_gate(results: Results, f: Finding) -> bool:
    """Whether this finding, on its own, makes the run exit non-zero: its
    :func:`fairpolicy.results.gate_effect` under the run's options."""
    return results.effect(f) in ("fail", "error")


def config_record(results: Results) -> dict[str, Any] | None:
    """The configuration file the CLI applied (``run.options.config``), or None."""
    cfg = results.run.options.get("config")
    return cfg if isinstance(cfg, dict) and isinstance(cfg.get("file"), str) else None


def config_loosening(results: Results) -> list[tuple[str, object]]:
    """(key, value) of each setting from the configuration file that loosens the gate."""
    cfg = config_record(results)
    if cfg is None:
        return []
    settings = cfg.get("settings") or {}
    return [(k, settings[k]) for k in cfg.get("loosens") or [] if k in settings]


def toml(value: object) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def config_note(results: Results) -> str | None:
    """One line naming the configuration file and each of its settings that loosens the
    gate (every report writes it), or None when no file was applied."""
    cfg = config_record(results)
    if cfg is None:
        return None
    head = f"configuration file {cfg['file']}"
    loose = config_loosening(results)
    if loose:
        listed = ", ".join(f"{k} = {toml(v)}" for k, v in loose)
        return f"{head} loosens the gate: {listed}"
    return f"{head} applied; no setting from it loosens the gate"


def option_origin(results: Results, key: str, value: object) -> str:
    """How an option was set, for a message: ``--fail-on never`` from the command line (or
    the API), ``fail-on = "never" in FILE`` from a configuration file."""
    cfg = config_record(results)
    sources = cfg.get("sources") if cfg is not None else None
    entry = sources.get(key) if isinstance(sources, dict) else None
    if isinstance(entry, dict) and entry.get("source") == "config" and cfg is not None:
        return f"{key} = {toml(value)} in the configuration file {cfg['file']}"
    return f"--{key} {value}"


def why_not_gating(results: Results, f: Finding) -> str:
    """Why a non-passing finding does not fail the gate (for a message's tail)."""
    if f.status == "pass" or fails_gate(results, f):
        return ""
    if results.run.fail_on == "never":
        return option_origin(results, "fail-on", "never")
    if f.enforcement_mode != "block":
        return f"enforcement_mode {f.enforcement_mode}"
    if f.status == "inconclusive":
        if f.decision == "ci_lower" and f.has_interval:
            return "decision ci_lower fails only on a proven violation"
        return option_origin(results, "inconclusive", results.run.inconclusive)
    return "not gating"


def gate_note(results: Results, f: Finding) -> str:
    """``does not fail the gate: <why>`` for a non-passing finding that does not gate, or
    ``""`` (also for ``warn``: its message already says so)."""
    why = why_not_gating(results, f)
    return f"does not fail the gate: {why}" if why and f.status != "warn" else ""


def uncertainty(f: Finding) -> list[tuple[str, object]]:
    """The finding's uncertainty as data, named the same in every machine-read format
    (OSCAL observation props, JUnit properties, SARIF result properties): the decision
    rule; the interval's bounds, level, method, resamples, defined replicates, seed and why
    it is missing; the permutation p-value, its permutations, seed and Bonferroni family.
    Unknown values are left out, never written as NaN."""
    pairs: list[tuple[str, object]] = [("decision", f.decision)]
    ci = f.ci
    if ci is not None:
        pairs += [
            ("ci-low", ci.low),
            ("ci-high", ci.high),
            ("ci-level", ci.level),
            ("ci-method", ci.method),
            ("ci-resamples", ci.resamples),
            ("ci-valid-resamples", ci.valid),
            ("ci-seed", ci.seed),
            ("ci-missing-reason", ci.reason),
            ("ci-note", ci.note),
        ]
    pv = f.p_value
    if pv is not None:
        pairs += [
            ("p-value", pv.p_value),
            ("p-permutations", pv.permutations),
            ("p-seed", pv.seed),
            ("p-bonferroni", pv.bonferroni),
            ("p-family-size", pv.family_size),
            ("p-missing-reason", pv.reason),
        ]
    return [(k, v) for k, v in pairs if v is not None]


def datum(v: object) -> str:
    """An uncertainty value as text: ``true``/``false``, the shortest text that reads back
    to the same float, or the value as written."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v) if isinstance(v, float) else str(v)


def group_uncertainty(f: Finding) -> list[tuple[str, str, object]]:
    """Per compared group: ``(name, group, value)`` for the group's own interval bounds and
    its (group vs the rest) p-value."""
    out: list[tuple[str, str, object]] = []
    for g in f.groups:
        if g.ci_low is not None and g.ci_high is not None:
            out += [("group-ci-low", g.group, g.ci_low), ("group-ci-high", g.group, g.ci_high)]
    if f.p_value is not None and f.p_value.groups:
        out += [("group-p-value", g, p) for g, p in f.p_value.groups.items()]
    return out


def class_label(f: Finding) -> str:
    """`` (class K, the one with the largest gap)`` when the per-group values are those of
    one class, else ``""``."""
    cls = f.details.get("worst_class")
    return f" (class {cls}, the one with the largest gap)" if cls is not None else ""


def class_support(f: Finding) -> list[tuple[str, list[tuple[str, str]]]]:
    """A multi-class control's support, (group, [(class, rows of that true class)]), from
    the finding's ``class_support`` detail; [] for other controls."""
    table = f.details.get("class_support")
    classes = f.details.get("classes") or f.classes
    if not isinstance(table, dict) or not isinstance(classes, list):
        return []
    out = []
    for g, counts in table.items():
        if isinstance(counts, list) and len(counts) == len(classes):
            cells = [
                (str(c), f"{n:g}" if isinstance(n, float) else str(n))
                for c, n in zip(classes, counts, strict=True)
            ]
            out.append((str(g), cells))
    return out


# ---------------------------------------------------------------- paths


def rel_path(path: str, cwd: str | None = None) -> tuple[str, bool]:
    """``(path, relative)``: ``path`` relative to ``cwd`` (default: the working directory)
    with ``/`` separators when it lies under it, else the absolute path."""
    base = Path(cwd or os.getcwd()).resolve()
    p = Path(path)
    full = (p if p.is_absolute() else base / p).resolve()
    try:
        return PurePosixPath(*full.relative_to(base).parts).as_posix(), True
    except ValueError:
        return full.as_posix(), False


def shown_path(path: str) -> str:
    """A path as the outputs show it: relative to the working directory when under it."""
    return rel_path(path)[0]


def location(results: Results, f: Finding) -> tuple[str | None, int | None]:
    """``(file, line)`` of the control in the policy: its recorded source, else the
    policy file (no line), else nothing."""
    if f.source is not None:
        return f.source.file, f.source.line
    return results.policy.path, None


# ---------------------------------------------------------------- numbers


def num(x: float | None, digits: int = 4) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def threshold(f: Finding) -> str:
    """The threshold as the policy wrote it (``0.1234567``, not ``0.123457``;
    ``0.09999999999999999999``, not ``0.1``)."""
    parts, _ = written_parts(f.threshold, f.threshold_written)
    if not parts:
        return "—"
    return parts[0] if len(parts) == 1 else f"[{parts[0]}, {parts[-1]}]"


def value_text(f: Finding, digits: int = 4, style: Literal["f", "g"] = "f") -> str:
    """The control's value with ``digits`` decimals (``style="g"``: significant digits),
    or more where fewer would contradict the verdict: ``0.09996 < 0.1`` is written
    ``0.09996``, never ``0.1000``. A count-based value is written from its exact
    rational (``details.exact_value``), so even a value within 1e-20 of the threshold
    shows on the right side of it."""
    if f.value is None:
        return "—"
    value: float = f.value
    exact = f.details.get("exact_value") if isinstance(f.details, dict) else None
    if isinstance(exact, str):
        try:
            value = ExactFloat(Fraction(exact))
        except (ValueError, ZeroDivisionError):
            value = f.value
    _, bounds = written_parts(f.threshold, f.threshold_written)  # as decided: exact
    if len(bounds) == 2:
        return shown(value, f.operator, bounds[0], bounds[1], digits=digits, style=style)
    if bounds:
        return shown(value, f.operator, bounds[0], digits=digits, style=style)
    return shown(value, digits=digits, style=style)


def ci_text(f: Finding) -> str:
    """``[low, high]`` of the control's interval, ``—`` if it is undefined, ``""`` if none
    was asked for."""
    if f.ci is None:
        return ""
    if f.ci.low is None or f.ci.high is None:
        return "—"
    return f"[{f.ci.low:.4f}, {f.ci.high:.4f}]"


def ci_phrase(f: Finding) -> str:
    """``95% CI [0.1400, 0.2200] (percentile, 1000 resamples)``, or ``""``."""
    if f.ci is None:
        return ""
    level = f"{level_percent(f.ci.level)}% CI"
    if f.ci.low is None or f.ci.high is None:
        return f"{level} undefined" + (f" ({f.ci.reason})" if f.ci.reason else "")
    return f"{level} {ci_text(f)} ({f.ci.method}, {f.ci.resamples} resamples)"


def dimension(f: Finding) -> str:
    """The grouping the control compares (``sex``, or ``sex × race`` for an intersection)."""
    dim = f.inputs.get("dimension", "")
    return " × ".join(d.strip() for d in dim.split(",")) if dim else ""


def worst_group(f: Finding) -> str:
    """``HUSC (n=713)``, or ``""``."""
    if not f.worst_group:
        return ""
    n = next((g.n for g in f.groups if g.group == f.worst_group), None)
    return f.worst_group if n is None else f"{f.worst_group} (n={n})"


def case_name(f: Finding) -> str:
    """``control-id: metric_key by dimension`` — one test case per control × dimension."""
    dim = dimension(f)
    return f"{f.control_id}: {f.metric_key}" + (f" by {dim}" if dim else "")


def metric_text(key: str) -> tuple[str, str] | None:
    """``(summary, formula)`` of a metric from the registry's documentation, or None."""
    from fairpolicy.metrics.registry import lookup

    try:
        spec = lookup(key)
    except KeyError:
        return None
    return spec.summary, spec.formula


def seconds(results: Results) -> float:
    """The run's wall time in seconds (0 when the timestamps are pinned or unreadable)."""
    try:
        start = _dt.datetime.fromisoformat(results.run.started)
        end = _dt.datetime.fromisoformat(results.run.finished)
    except ValueError:
        return 0.0
    return max((end - start).total_seconds(), 0.0)


def utc(stamp: str) -> str | None:
    """An ISO timestamp as UTC ``YYYY-MM-DDTHH:MM:SS[.fff]Z``, or None if unreadable."""
    try:
        t = _dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    t = t.astimezone(_dt.UTC)
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    if t.microsecond:
        text += f".{t.microsecond // 1000:03d}"
    return text + "Z"


def verdict(results: Results) -> str:
    """``6 control(s): 3 pass, 3 fail, 0 warn, 0 inconclusive, 0 error``."""
    s = results.summary
    return (
        f"{s.total} control(s): {s.pass_} pass, {s.fail} fail, {s.warn} warn, "
        f"{s.inconclusive} inconclusive, {s.error} error"
    )


def about(results: Results) -> list[tuple[str, str]]:
    """The run's ``--subject`` and ``--meta`` as (label, value) pairs, as given."""
    out = [("subject", results.subject)] if results.subject else []
    return out + list(results.meta.items())


def about_line(results: Results) -> str:
    """``subject: model v4.2 · git_sha: 1a2b`` (empty without --subject/--meta)."""
    return " · ".join(f"{k}: {v}" for k, v in about(results))
