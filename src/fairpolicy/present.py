"""The public :class:`Results`: the results model with its views in Python and notebooks.

:class:`fairpolicy.results.Results` is the data (fields, gate, JSON); this subclass, what
``fairpolicy.check`` returns and ``fairpolicy.Results`` names, adds the views one layer
above it — so the model never imports the renderers. What ``Results.__repr__``,
``_repr_html_``, ``to_frame``, ``groups_frame``, ``render`` and ``write`` do: the formats
are the CLI's own
(:data:`fairpolicy.formatters.FORMATS`, rendered by :func:`fairpolicy.formatters.get`),
the notebook view is the HTML report's banner and control table
(:func:`fairpolicy.formatters.html.notebook_view`), and files are written with the CLI's
safe writer (:func:`fairpolicy.outputs.write_all`). Nothing here decides a status: every
status, the gate and the exit code are read from the results.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from fairpolicy import results as _model

if TYPE_CHECKING:
    import pandas as pd

    from fairpolicy.results import Finding

#: failing controls named in the short repr before "… and N more"
REPR_FAILING = 10


def _value(f: Finding) -> str:
    from fairpolicy.formatters._ci import value_text

    return value_text(f)


def _threshold(f: Finding) -> str:
    """The threshold as the policy wrote it."""
    from fairpolicy.exact import written_parts

    parts, _ = written_parts(f.threshold, f.threshold_written)
    if not parts:
        return "—"
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def short_repr(results: _model.Results) -> str:
    """``<fairpolicy Results: FAIL (exit 1) · 4 controls: 3 pass, 1 fail …>`` and one line
    per control that did not pass (its status, metric, value, rule and worst group)."""
    s = results.summary
    counts = ", ".join(
        f"{n} {name}"
        for name, n in (
            ("pass", s.pass_),
            ("fail", s.fail),
            ("warn", s.warn),
            ("inconclusive", s.inconclusive),
            ("error", s.error),
        )
        if n
    )
    head = (
        f"<fairpolicy Results: {s.gate.upper()} (exit {results.exit_code}) · "
        f"{s.total} control(s): {counts or 'none'} · policy {results.policy.path or '—'} · "
        f"data {results.data.path or '—'} ({results.data.rows:,} rows)"
    )
    bad = [f for f in results.findings if f.status != "pass"]
    lines = [head]
    for f in bad[:REPR_FAILING]:
        worst = f" · worst group {f.worst_group}" if f.worst_group else ""
        why = f" · {f.reason}" if f.value is None and f.reason else ""
        lines.append(
            f"  {f.status.upper():<12} {f.control_id}: {f.metric_key} = {_value(f)} "
            f"(rule {f.operator} {_threshold(f)}){worst}{why}"
        )
    if len(bad) > REPR_FAILING:
        lines.append(f"  … and {len(bad) - REPR_FAILING} more (results.to_frame() lists all)")
    return "\n".join(lines) + ">"


def repr_html(results: _model.Results) -> str:
    """The notebook view: the HTML report's verdict banner and control table."""
    from fairpolicy.formatters.html import notebook_view

    return notebook_view(results)


FRAME_COLUMNS = [
    "control_id",
    "metric",
    "value",
    "operator",
    "threshold",
    "status",
    "gate_effect",
    "worst_group",
    "n",
    "ci_low",
    "ci_high",
    "reason",
]

GROUP_COLUMNS = ["control_id", "metric", "group", "n", "value", "ci_low", "ci_high", "excluded"]


def to_frame(results: _model.Results) -> pd.DataFrame:
    """One row per control, in the policy's order: id, metric, value, operator, threshold,
    status, gate effect, worst group, n (rows of the compared groups), the interval, and
    why the value is undefined. Undefined numbers are ``None`` (shown as NaN/None by
    pandas), never a number."""
    import pandas as pd

    rows = []
    for f in results.findings:
        threshold: Any = list(f.threshold) if isinstance(f.threshold, list) else f.threshold
        rows.append(
            {
                "control_id": f.control_id,
                "metric": f.metric_key,
                "value": f.value,
                "operator": f.operator,
                "threshold": threshold,
                "status": f.status,
                "gate_effect": f.gate_effect,
                "worst_group": f.worst_group or None,  # one "no value": None
                "n": sum(g.n for g in f.groups),
                "ci_low": f.ci.low if f.ci is not None else None,
                "ci_high": f.ci.high if f.ci is not None else None,
                "reason": f.reason,
            }
        )
    from fairpolicy.formatters._frame import ResultsFrame

    frame = ResultsFrame(pd.DataFrame(rows, columns=FRAME_COLUMNS))
    frame["n"] = frame["n"].astype("int64")
    return frame


def groups_frame(results: _model.Results) -> pd.DataFrame:
    """One row per control × group: the group's value (its rate or score) and interval, its
    row count, and the confusion counts as ``count[<true>→<pred>]`` columns when the control
    recorded them; the groups a control excluded (too small, missing) follow with
    ``excluded`` set to their reason."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for f in results.findings:
        for g in f.groups:
            row: dict[str, Any] = {
                "control_id": f.control_id,
                "metric": f.metric_key,
                "group": g.group,
                "n": g.n,
                "value": g.value,
                "ci_low": g.ci_low,
                "ci_high": g.ci_high,
                "excluded": None,
            }
            table = f.counts.get(g.group)
            if table is not None:
                for i, t in enumerate(f.classes):
                    for j, p in enumerate(f.classes):
                        row[f"count[{t}→{p}]"] = table[i][j]
            rows.append(row)
        for e in f.excluded_groups:
            rows.append(
                {
                    "control_id": f.control_id,
                    "metric": f.metric_key,
                    "group": e.group,
                    "n": e.n,
                    "value": None,
                    "ci_low": None,
                    "ci_high": None,
                    "excluded": e.reason,
                }
            )
    extra = sorted({k for r in rows for k in r} - set(GROUP_COLUMNS))
    from fairpolicy.formatters._frame import ResultsFrame

    frame = ResultsFrame(pd.DataFrame(rows, columns=[*GROUP_COLUMNS, *extra]))
    frame["n"] = frame["n"].astype("int64")
    for column in extra:  # counts stay integers; <NA> where a row has none
        frame[column] = frame[column].astype("Int64")
    return frame


def render(results: _model.Results, fmt: str, **options: Any) -> str:
    """The ``fmt`` output (any ``-o`` format of the CLI) as a string. ``options`` are
    :class:`fairpolicy.formatters.RenderOptions` fields (``verbose``, ``quiet``,
    ``subject``, ``deterministic``, …); an unknown format or option is a UsageError."""
    import dataclasses

    from fairpolicy.errors import UsageError, did_you_mean
    from fairpolicy.formatters import RenderOptions, get

    fields = {f.name for f in dataclasses.fields(RenderOptions)}
    unknown = sorted(set(options) - fields)
    if unknown:
        raise UsageError(
            f"Results.render/write: unknown option '{unknown[0]}'."
            f"{did_you_mean(unknown[0], fields)} Valid options: {', '.join(sorted(fields))}."
        )
    if "deterministic" not in options:  # a --deterministic run renders reproducibly, as the CLI
        from fairpolicy.env import source_date_epoch

        options["deterministic"] = source_date_epoch() is not None or (
            results.run.cwd is None and results.run.seconds == 0.0
        )
    return get(fmt)(results, RenderOptions(**options))


def write(results: _model.Results, fmt: str, path: str | os.PathLike[str], **options: Any) -> str:
    """Render ``fmt`` and write it to ``path`` with the CLI's safe writer (staged, then
    renamed; a folder, a FIFO or an unwritable path is an OutputError). Returns the path."""
    from fairpolicy.outputs import write_all

    target = os.fspath(path)
    files: list[tuple[str, str]] = []
    if fmt == "oscal-ssp" and "profile_href" not in options:
        # as the CLI's -o oscal-ssp=PATH: the profile (and catalog) it imports beside it
        from fairpolicy.ssp import profile_chain

        chain = profile_chain(results.policy.path, results.policy.form, target)
        files += chain.documents
        options = {
            **options,
            "profile_href": chain.profile_href,
            "profile_sha256": chain.profile_sha256,
        }
    text = render(results, fmt, **{"path": target, **options})
    write_all([*files, (target, text)])
    return target


class Results(_model.Results):
    """The results of a check: the model of :mod:`fairpolicy.results` (fields, gate, exit
    code, JSON) with the views of a notebook and a script."""

    def __repr__(self) -> str:
        return short_repr(self)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        return repr_html(self)

    def to_frame(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per control (see :func:`to_frame`)."""
        return to_frame(self)

    def groups_frame(self) -> pd.DataFrame:
        """A pandas DataFrame, one row per control × group (per-group values and counts)."""
        return groups_frame(self)

    def render(self, format: str, **options: Any) -> str:
        """The ``-o FORMAT`` output as a string (text, json, junit, sarif, github, markdown,
        html, oscal, oscal-ap, oscal-ssp); ``options``: RenderOptions fields."""
        return render(self, format, **options)

    def write(self, format: str, path: str | os.PathLike[str], **options: Any) -> str:
        """Render ``format`` and write it to ``path`` safely; returns the path."""
        return write(self, format, path, **options)


def load_results(path: str) -> Results:
    """A results JSON written by ``-o json``, read back as the public :class:`Results`
    (with its views); :func:`fairpolicy.results.load_results` gives the bare model."""
    model = _model.load_results(path)  # validated there: its fields are taken as they are
    return Results(**{name: getattr(model, name) for name in model.field_names()})
