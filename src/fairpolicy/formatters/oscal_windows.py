"""``-o oscal`` of a monitoring run (``--window``, issue 30 item 1): one ``result`` per window.

The assessment results of a monitoring run hold, after the run's own result (the
**gated** result: each control's decision across the windows by ``--window-gate``, prop
``result-kind`` ``window-gate``), one result per window, oldest first (prop
``result-kind`` ``window``). A window's result:

- ``start``/``end``: the window's first instant and the first instant after it (midnight
  in the window's time zone, ``2026-01-05T00:00:00+01:00``; the written document states
  the instant in UTC, as trestle serialises every date-time); a window that is a value of a period
  column has no calendar bounds, so its result spans the run (``start``/``end`` = the
  run's) and says so in its ``remarks``;
- props ``window-label`` (the label every output shows; ``FIRST..LAST`` for a pooled
  window, with one ``window-pooled`` per member), ``window-column``, ``window-period``,
  ``window-tz``, ``window-axis`` (the one-line description), ``window-rows``,
  ``window-level`` (the ``sequential`` gate's level 1 − α_t of its intervals),
  ``window-reason`` (too few rows: its findings cannot pass), and ``gated`` ``false``;
- one observation and one finding per control, and a risk for each that failed or
  warned, written by the same code as the gated result's (their UUIDs derived from the
  window's label).

The gated result names the axis, the gate, the number of windows and ``gated`` ``true``.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Protocol, cast

from fairpolicy.data.window import WindowSpec, window_end
from fairpolicy.formatters._oscal_common import RISKY, Doc, line, props_of, reviewed_controls

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.formatters._oscal_common import Ids
    from fairpolicy.results import Finding, Results, WindowResult, WindowsInfo


class _Renderer(Protocol):
    """What this module needs of :mod:`fairpolicy.formatters.oscal`'s renderer (passed in,
    so the two modules do not import each other); a window's renderer is one of the same
    class over the window's uuids."""

    results: Results
    opts: RenderOptions
    ids: Ids

    def observation(self, f: Finding, uid: str) -> Doc: ...

    def finding(self, f: Finding, index: int, obs_uuid: str, risk_uuid: str | None) -> Doc: ...

    def risk(self, f: Finding, uid: str, obs_uuid: str) -> Doc: ...


#: a gated result's and a window's ``result-kind`` prop
GATED, WINDOW = "window-gate", "window"


class _WindowIds:
    """The rendering's UUIDs, with every event of one window's result derived from its label
    (the back-matter resources stay the document's own)."""

    def __init__(self, ids: Ids, label: str) -> None:
        self._ids, self._label = ids, label

    def event(self, *parts: object) -> str:
        if parts and parts[0] == "resource":
            return self._ids.event(*parts)
        return self._ids.event("window", self._label, *parts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ids, name)


def gated_props(w: WindowsInfo) -> list[Doc]:
    """The props marking the run's own result as the window gate's decision."""
    return props_of(
        [
            ("result-kind", GATED),
            ("gated", "true"),
            ("window-gate", w.gate),
            ("window-axis", w.described),
            ("window-column", w.column),
            ("window-period", w.period),
            ("window-tz", w.tz),
            ("windows", len(w.windows)),
            ("window-newest", w.windows[-1].window if w.windows else None),
            ("window-reference", w.reference),
            ("rows-outside-windows", w.rows_outside or None),
        ]
    )


def bounds(w: WindowsInfo, b: WindowResult) -> tuple[str, str] | None:
    """A period window's first instant and the first instant after it, in its zone."""
    if w.period is None or w.tz is None:
        return None
    from zoneinfo import ZoneInfo

    spec = WindowSpec(w.column, w.period, w.tz)
    first = b.pooled[0] if b.pooled else b.window
    last = b.pooled[-1] if b.pooled else b.window
    end = b.end if b.end and not b.pooled else window_end(last, spec)
    if end is None:
        return None
    zone = ZoneInfo(w.tz)

    def at(day: str) -> str:
        return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(), zone).isoformat()

    return at(first), at(end)


def window_results(r: _Renderer) -> list[Doc]:
    """One result per window of ``r``'s run (none without ``--window``)."""
    w = r.results.windows
    if w is None:
        return []
    return [_one(r, w, b) for b in w.windows]


def _one(r: _Renderer, w: WindowsInfo, b: WindowResult) -> Doc:
    res = r.results
    ids = _WindowIds(r.ids, b.window)
    wr = cast(_Renderer, cast(Any, type(r))(res, r.opts, ids))
    observations, findings, risks = [], [], []
    for i, f in enumerate(b.findings):
        obs = ids.event("observation", i, f.control_id)
        risky = f.status in RISKY or f.gate_effect in ("fail", "error")
        risk = ids.event("risk", i, f.control_id) if risky else None
        observations.append(wr.observation(f, obs))
        findings.append(wr.finding(f, i, obs, risk))
        if risk is not None:
            risks.append(wr.risk(f, risk, obs))
    counts = {s: sum(f.status == s for f in b.findings) for s in ("pass", "fail", "warn")}
    other = len(b.findings) - sum(counts.values())
    span = bounds(w, b)
    doc: Doc = {
        "uuid": ids.event("result"),
        "title": line(f"window {b.window}: {w.described}"),
        "description": (
            f"Window {b.window} ({b.rows} rows) of the monitoring run over {w.described}: "
            f"{len(b.findings)} control(s) evaluated on the window's rows alone, "
            f"{counts['pass']} pass, {counts['fail']} fail, {counts['warn']} warn, {other} "
            f"inconclusive or error. Not gated here: the gated result decides each control "
            f"across the windows ({w.gate} window gate)." + (f" {b.reason}." if b.reason else "")
        ),
        "start": span[0] if span else res.run.started,
        "end": span[1] if span else res.run.finished,
        "props": props_of(
            [
                ("result-kind", WINDOW),
                ("gated", "false"),
                ("window-label", b.window),
                ("window-column", w.column),
                ("window-period", w.period),
                ("window-tz", w.tz),
                ("window-axis", w.described),
                ("window-rows", b.rows),
                ("window-level", b.level),
                ("window-reason", b.reason),
                *(("window-pooled", m) for m in b.pooled),
            ]
        ),
        "reviewed-controls": reviewed_controls(res, r.ids),
        "observations": observations or None,
        "risks": risks or None,
        "findings": findings or None,
    }
    if span is None:
        doc["remarks"] = (
            f"The window is the value '{b.window}' of column '{w.column}', not a calendar "
            "period: the result's start and end are the run's."
        )
    return doc
