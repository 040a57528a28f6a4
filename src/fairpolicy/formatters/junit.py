"""``-o junit``: JUnit XML, for the test dashboards of GitLab, Jenkins, Azure DevOps & co.

Shape (the common Jenkins ``junit-10.xsd`` dialect, vendored in ``schemas/junit/``)::

    <testsuites name="fairpolicy" tests= failures= errors= time=>
      <testsuite name=POLICY tests= failures= errors= skipped= time= timestamp=>
        <properties> tool version, policy/data path + SHA-256, rows, seed, gate, exit </properties>
        <testcase classname=POLICY name="CONTROL-ID: metric_key by dimension" time="0.000">
          <failure|error|skipped type=STATUS message=…>details</…>
          <system-out>value, CI, threshold, per-group values, excluded groups</system-out>
        </testcase>
      </testsuite>
    </testsuites>

One suite per policy (a run checks one policy), one test case per control — a control
compares one grouping, so that is one case per control × dimension. ``classname`` is the
policy's title (its path when it has none); Jenkins splits a classname at its last ``.``
into package and class, so a title with dots shows as a package.

What a dashboard shows. The JUnit failures and errors add up to the exit code — the
dashboard is red exactly when the gate failed:

- ``pass`` → a passed test (no child element);
- ``fail`` → ``<failure type="fail">``;
- ``error`` (the control could not be evaluated; exit 2) → ``<error type="error">``;
- ``warn`` or ``inconclusive`` that fails the gate (``--fail-on warning`` on a warn-mode
  control, ``--inconclusive fail``) → ``<failure type="warn|inconclusive">``;
- any non-passing status that does not fail the gate (warn and monitor controls,
  ``--inconclusive pass|warn``, a ``ci_lower`` decision that proved nothing,
  ``--fail-on never``) → ``<skipped type=STATUS>`` whose message says why it does not
  gate. Like pytest's ``xfail``: it shows in the dashboard's skipped count and in the
  case's details, but never turns the dashboard red. (A passed test with a note would
  hide it; a failure would contradict a green gate.)

Every case carries a ``<system-out>`` with the value, interval, threshold, per-group
values, excluded groups, enforcement mode, severity, risk id and the control's line in
the policy (``-q``: only for the cases that did not pass). The run's warnings are the
suite's ``<system-err>``.

Times. Every control is computed from the same one pass over the rows, so there is no
per-control time: each case has ``time="0.000"`` and the suite carries the run's measured
duration (``run.seconds``, a monotonic clock, to the millisecond; 0 under
``--deterministic``/``SOURCE_DATE_EPOCH``; the difference of the whole-second timestamps
only for results JSON written before ``run.seconds`` existed). ``timestamp`` is the run's
start in UTC without a zone, as Ant writes it.

Escaping. The document is built with :mod:`xml.etree.ElementTree`, which escapes markup
in text and attributes (newlines in attributes become ``&#10;``); characters XML 1.0
cannot carry at all (C0 controls other than tab/newline/CR, lone surrogates, U+FFFE/FFFF)
are replaced by U+FFFD.
"""

from __future__ import annotations

import datetime as _dt
import re
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from fairpolicy.formatters import _ci
from fairpolicy.formatters._shown import for_humans

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _x(text: object) -> str:
    """Text XML 1.0 can hold, invisible controls it could hold shown as escapes."""
    return _ci.inert(_XML_INVALID.sub("\ufffd", str(text)))


def _line(text: str) -> str:
    """User text on one line of ``system-out``."""
    return " ".join(text.split())


def _secs(x: float) -> str:
    """Seconds in the xsd's SUREFIRE_TIME shape (digits, at most three decimals)."""
    return f"{x:.3f}"


def _timestamp(stamp: str) -> str | None:
    try:
        t = _dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    if t.tzinfo is not None:
        t = t.astimezone(_dt.UTC).replace(tzinfo=None)
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def _element(results: Results, f: Finding) -> tuple[str, str] | None:
    """(element, type) of a finding's outcome, or None for a passed test."""
    if f.status == "pass":
        return None
    if f.status == "error":
        return "error", "error"
    if _ci.fails_gate(results, f):
        return "failure", f.status
    return "skipped", f.status


def _message(results: Results, f: Finding) -> str:
    parts = [f.message]  # the message already carries the interval, if any
    note = _ci.gate_note(results, f)
    if note:
        parts.append(note)
    return "; ".join(parts)


def _details(results: Results, f: Finding) -> str:
    """The case's ``system-out``: everything a reader needs without the JSON."""
    word = _ci.STATUS_WORD[f.status]
    said = f.message.lower().startswith(f.status)
    out = [f.message if said else f"{word}: {f.message}"]
    if f.title:
        out.append(f"control: {_line(f.title)}")
    known = _ci.metric_text(f.metric_key)
    out.append(f"metric: {f.metric_key}" + (f" — {known[0]}" if known else ""))
    out.append(f"value: {_ci.value_text(f, 6)}")
    if f.ci is not None:
        out.append(f"interval: {_ci.ci_phrase(f)}; decision: {f.decision}")
    out.append(f"threshold: {f.operator} {_ci.threshold(f)}")
    if f.reason and f.reason not in f.message:
        out.append(f"reason: {f.reason}")
    if f.groups:
        dim = _ci.dimension(f)
        out.append(f"groups{' by ' + _line(dim) if dim else ''}{_ci.class_label(f)}:")
    for g in f.groups:
        ci = ""
        if g.ci_low is not None and g.ci_high is not None:
            ci = f" [{g.ci_low:.4f}, {g.ci_high:.4f}]"
        out.append(f"  {_line(g.group)}: n={g.n} value={_ci.num(g.value)}{ci}")
    if f.worst_group:
        out.append(f"worst group: {_line(_ci.worst_group(f))}")
    for e in f.excluded_groups:
        out.append(f"excluded: {_line(e.group)} (n={e.n}): {_line(e.reason)}")
    mode = f"enforcement: {f.enforcement_mode}" + ("" if f.gating else " (never gates)")
    out.append(mode)
    for label, value in (
        ("severity", f.severity),
        ("risk", f.risk_id),
        ("lifecycle phase", f.lifecycle_phase),
    ):
        if value:
            out.append(f"{label}: {value}")
    file, line = _ci.location(results, f)
    if file:
        out.append(f"defined at: {_ci.shown_path(file)}" + (f":{line}" if line else ""))
    return "\n".join(out) + "\n"


def _properties(results: Results) -> list[tuple[str, str]]:
    r = results
    props: list[tuple[str, str | int | None]] = [
        ("fairpolicy.version", r.tool.version),
        ("policy.path", r.policy.path),
        ("policy.sha256", r.policy.sha256),
        ("policy.title", r.policy.title),
        ("policy.version", r.policy.version),
        ("data.path", r.data.path),
        ("data.sha256", r.data.sha256),
        ("data.rows", r.data.rows),
        ("seed", r.run.seed),
        ("engine", r.run.engine),
        ("inconclusive", r.run.inconclusive),
        ("fail_on", r.run.fail_on),
        ("started", r.run.started),
        ("finished", r.run.finished),
        ("gate", r.summary.gate),
        ("exit_code", r.exit_code),
        ("subject", r.subject),
        *((f"meta.{k}", v) for k, v in r.meta.items()),
        *_config_props(r),
    ]
    # each control's uncertainty as data (JUnit test cases carry no properties of their own)
    for f in r.findings:
        props += [(f"control.{f.control_id}.{k}", _ci.datum(v)) for k, v in _ci.uncertainty(f)]
        props += [
            (f"control.{f.control_id}.{k}.{g}", _ci.datum(v))
            for k, g, v in _ci.group_uncertainty(f)
        ]
    return [(k, str(v)) for k, v in props if v is not None]


def render(results: Results, opts: RenderOptions) -> str:
    results = for_humans(results)  # the worst groups; the JSON has every one
    policy = results.policy
    suite_name = policy.title or (_ci.shown_path(policy.path) if policy.path else "fairpolicy")
    classname = _x(suite_name)
    outcomes = [_element(results, f) for f in results.findings]
    failures = sum(1 for o in outcomes if o is not None and o[0] == "failure")
    errors = sum(1 for o in outcomes if o is not None and o[0] == "error")
    skipped = sum(1 for o in outcomes if o is not None and o[0] == "skipped")
    total = str(len(results.findings))
    measured = results.run.seconds  # None: results written before it was recorded
    time = _secs(_ci.seconds(results) if measured is None else measured)

    root = ET.Element(
        "testsuites",
        name="fairpolicy",
        tests=total,
        failures=str(failures),
        errors=str(errors),
        time=time,
    )
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_x(suite_name),
        tests=total,
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=time,
    )
    stamp = _timestamp(results.run.started)
    if stamp:
        suite.set("timestamp", stamp)
    if results.policy.path:
        suite.set("file", _x(_ci.shown_path(results.policy.path)))
    props = ET.SubElement(suite, "properties")
    for name, value in _properties(results):
        ET.SubElement(props, "property", name=_x(name), value=_x(value))

    for f, outcome in zip(results.findings, outcomes, strict=True):
        case = ET.SubElement(
            suite, "testcase", classname=classname, name=_x(_ci.case_name(f)), time="0.000"
        )
        if outcome is not None:
            element, kind = outcome
            node = ET.SubElement(case, element, type=kind, message=_x(_message(results, f)))
            if element != "skipped":
                node.text = _x(f"{f.control_id}: {f.message}\n")
        if not (opts.quiet and f.status == "pass"):
            ET.SubElement(case, "system-out").text = _x(_details(results, f))

    if results.warnings:
        ET.SubElement(suite, "system-err").text = _x(
            "".join(f"warning: {w}\n" for w in results.warnings)
        )
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _config_props(results: Results) -> list[tuple[str, str | int | None]]:
    """The configuration file, its hash and each setting from it that loosens the gate."""
    cfg = _ci.config_record(results)
    if cfg is None:
        return []
    props: list[tuple[str, str | int | None]] = [
        ("config.file", str(cfg["file"])),
        ("config.sha256", str(cfg.get("sha256"))),
        ("config.note", _ci.config_note(results)),
    ]
    props += [(f"config.loosens.{k}", _ci.toml(v)) for k, v in _ci.config_loosening(results)]
    return props
