"""``-o sarif``: SARIF 2.1.0, for GitHub code scanning (``upload-sarif``) and other SARIF
viewers, so that a failing control is annotated on its line of the policy in the PR.

- One run; ``tool.driver`` is fairpolicy (name, version, ``informationUri``) with **one
  rule per control**: ``id`` the control id, ``shortDescription`` the metric's summary,
  ``fullDescription`` its formula (from the metric registry's documentation), ``help``
  the control's own description, threshold and what to do, ``defaultConfiguration.level``
  the control's level (below), ``properties`` metric, dimension, operator, threshold,
  enforcement mode, severity, risk id and tags.
- **One result per non-passing control** (``fail``, ``warn``, ``inconclusive``,
  ``error``). Passing controls give no result: GitHub code scanning turns every result
  into an alert whatever its ``kind``, so ``kind: "pass"`` results would open alerts for
  controls that passed. The rules list every control, so the log still says what was
  checked; the run's ``properties.summary`` has the counts.
- **Level**: from the control's severity — ``critical``/``high`` → ``error``, ``medium`` →
  ``warning``, ``low``/``info`` → ``note`` (also ``blocker``/``major``/``error``,
  ``moderate``/``warning``, ``minor``/``informational``/``note``); without a recognised
  severity, from the status — ``fail`` → ``error``, ``warn`` → ``warning``,
  ``inconclusive`` → ``error`` when it fails the gate else ``warning``. A control that
  could not be evaluated (``error``) is always ``error``.
- **Location**: the control's line in the policy file (``finding.source``), as a URI
  relative to the working directory — the repository root in CI — with ``uriBaseId``
  ``%SRCROOT%``; a file outside it gets an absolute ``file://`` URI. Every result has a
  location (GitHub rejects the whole upload otherwise): the policy file when the line is
  unknown. ``partialFingerprints`` hash the policy path, control id, metric and dimension,
  so an alert survives the control moving to another line.
- ``properties`` of a result: value, operator, threshold, interval, decision, status,
  whether it fails the gate, worst group, per-group sizes and values, excluded groups.
- ``invocations[0]``: start/end (UTC), ``exitCode`` (0/1/2) and ``executionSuccessful``
  (true unless a control could not be evaluated — exit 1 is a successful run that found
  problems), the run's warnings as ``toolExecutionNotifications``.
- ``artifacts``: the policy (role ``policy``) and the data (``analysisTarget``) with their
  SHA-256. ``automationDetails.id`` is ``fairpolicy/<policy path>/``, so two policies
  checked in one repository are two analyses and do not close each other's alerts.

The log is validated in the tests against the OASIS SARIF 2.1.0 schema
(``schemas/sarif/sarif-schema-2.1.0.json``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fairpolicy.formatters import _ci
from fairpolicy.formatters._shown import for_humans

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
SRCROOT = "%SRCROOT%"

_SEVERITY_LEVEL = {
    "critical": "error",
    "blocker": "error",
    "high": "error",
    "major": "error",
    "error": "error",
    "medium": "warning",
    "moderate": "warning",
    "warning": "warning",
    "low": "note",
    "minor": "note",
    "info": "note",
    "informational": "note",
    "note": "note",
}

Doc = dict[str, Any]


def level(results: Results, f: Finding) -> str:
    """The SARIF level of a (non-passing) control's result; see the module docstring."""
    if f.status == "error":
        return "error"
    by_severity = _SEVERITY_LEVEL.get((f.severity or "").strip().lower())
    if by_severity:
        return by_severity
    if f.status == "warn":
        return "warning"
    if f.status == "inconclusive":
        return "error" if _ci.fails_gate(results, f) else "warning"
    return "error"


def _rule_level(f: Finding) -> str:
    by_severity = _SEVERITY_LEVEL.get((f.severity or "").strip().lower())
    if by_severity:
        return by_severity
    return {"block": "error", "warn": "warning"}.get(f.enforcement_mode, "note")


def artifact_location(path: str) -> Doc:
    rel, relative = _ci.rel_path(path)
    if relative:
        return {"uri": quote(rel, safe="/"), "uriBaseId": SRCROOT}
    return {"uri": Path(rel).as_uri()}


def _rule(f: Finding) -> Doc:
    known = _ci.metric_text(f.metric_key)
    summary, formula = known if known else (f.metric_key, f"metric {f.metric_key}")
    dim = _ci.dimension(f)
    across = f" across {dim}" if dim else ""
    short = f"{f.metric_key}{across}: {summary}"
    requirement = f"{f.metric_key} {f.operator} {_ci.threshold(f)}{across}"
    help_lines = [
        f.title or f.description or f.control_id,
        "",
        f"Requirement: {requirement}.",
        f"Enforcement: {f.enforcement_mode}" + ("." if f.gating else " (never fails the gate)."),
        "",
        "Inspect the per-group values in the result's properties (or run fairpolicy check "
        "-v); a violation is fixed in the model or the data, not by moving the threshold "
        "without review.",
    ]
    longest = max((len(m) for m in re.findall("`+", formula)), default=0)
    fence = "`" * max(3, longest + 1)
    markdown = "\n".join(
        [
            _md(f.title or f.description or f.control_id),
            "",
            f"**Requirement:** {_md(requirement)}",
            "",
            f"{fence}text",
            formula,
            fence,
        ]
    )
    tags = list(dict.fromkeys(t for t in ("fairness", f.metric_key, f.lifecycle_phase) if t))
    props: Doc = {
        "tags": tags,
        "precision": "very-high",
        "metric_key": f.metric_key,
        "dimension": f.inputs.get("dimension"),
        "operator": f.operator,
        "threshold": f.threshold,
        "enforcement_mode": f.enforcement_mode,
        "gating": f.gating,
    }
    for key in ("severity", "risk_id", "lifecycle_phase", "threshold_source", "threshold_written"):
        value = getattr(f, key)
        if value is not None:
            props[key] = value
    return {
        "id": f.control_id,
        "name": f.metric_key,
        "shortDescription": {"text": short},
        "fullDescription": {"text": formula},
        "help": {"text": "\n".join(help_lines), "markdown": markdown},
        "defaultConfiguration": {"level": _rule_level(f)},
        "properties": props,
    }


def _md(text: str) -> str:
    from fairpolicy.formatters.markdown import escape

    return escape(text)


def _fingerprint(results: Results, f: Finding) -> str:
    file, _ = _ci.location(results, f)
    rel = _ci.rel_path(file)[0] if file else ""
    key = "\x1f".join((rel, f.control_id, f.metric_key, f.inputs.get("dimension", "")))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _result(results: Results, f: Finding, index: int) -> Doc:
    text = f"{f.control_id}: {f.message}"  # the message already carries the interval
    if f.worst_group and f.status in ("fail", "warn"):
        text += f"; worst group {_ci.worst_group(f)}"
    if f.excluded_groups:
        text += f"; {len(f.excluded_groups)} group(s) excluded"
    note = _ci.gate_note(results, f)
    if note:
        text += f" ({note})"
    file, line = _ci.location(results, f)
    loc: Doc = {}
    if file:
        physical: Doc = {"artifactLocation": artifact_location(file)}
        if line:
            physical["region"] = {"startLine": line}
        loc["physicalLocation"] = physical
    loc["logicalLocations"] = [{"name": f.control_id, "kind": "object"}]
    props: Doc = {
        "status": f.status,
        "fails_gate": _ci.fails_gate(results, f),
        "value": f.value,
        "operator": f.operator,
        "threshold": f.threshold,
        "decision": f.decision,
    }
    if f.threshold_written is not None:  # the exact decimal(s) the status was decided on
        props["threshold_written"] = f.threshold_written
    if f.ci is not None:
        props["ci"] = f.ci.model_dump(mode="json")
    if f.reason:
        props["reason"] = f.reason
    if f.worst_group:
        props["worst_group"] = f.worst_group
    if f.groups:
        props["groups"] = [g.model_dump(mode="json") for g in f.groups]
    if f.excluded_groups:
        props["excluded_groups"] = [e.model_dump(mode="json") for e in f.excluded_groups]
    if f.p_value is not None:
        props["p_value"] = f.p_value.p_value
    props["uncertainty"] = dict(_ci.uncertainty(f))
    per_group = _ci.group_uncertainty(f)
    if per_group:
        props["group_uncertainty"] = [{"name": k, "group": g, "value": v} for k, g, v in per_group]
    return {
        "ruleId": f.control_id,
        "ruleIndex": index,
        "kind": "fail",
        "level": level(results, f),
        "message": {"text": text},
        "locations": [loc],
        "partialFingerprints": {"fairpolicyControl/v1": _fingerprint(results, f)},
        "properties": props,
    }


def _artifacts(results: Results) -> list[Doc]:
    out = []
    for path, sha, role in (
        (results.policy.path, results.policy.sha256, "policy"),
        (results.data.path, results.data.sha256, "analysisTarget"),
    ):
        if not path:
            continue
        art: Doc = {"location": artifact_location(path), "roles": [role]}
        if sha:
            art["hashes"] = {"sha-256": sha}
        out.append(art)
    return out


def sarif_log(results: Results) -> Doc:
    """The SARIF log as a JSON-ready dict."""
    findings = results.findings
    rules = [_rule(f) for f in findings]
    sarif_results = [_result(results, f, i) for i, f in enumerate(findings) if f.status != "pass"]
    invocation: Doc = {
        "executionSuccessful": results.summary.gate != "error",
        "exitCode": results.exit_code,
        "exitCodeDescription": {0: "pass", 1: "fail", 2: "could not evaluate"}[results.exit_code],
    }
    for key, stamp in (("startTimeUtc", results.run.started), ("endTimeUtc", results.run.finished)):
        utc = _ci.utc(stamp)
        if utc:
            invocation[key] = utc
    if results.warnings:
        invocation["toolExecutionNotifications"] = [
            {"level": "warning", "message": {"text": w}} for w in results.warnings
        ]
    s = results.summary
    run: Doc = {
        "tool": {
            "driver": {
                "name": results.tool.name,
                "version": results.tool.version,
                "semanticVersion": results.tool.version,
                "informationUri": _ci.INFORMATION_URI,
                "rules": rules,
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {
            SRCROOT: {
                "description": {
                    "text": "the directory fairpolicy ran in (the repository root in CI)"
                }
            }
        },
        "artifacts": _artifacts(results),
        "results": sarif_results,
        "columnKind": "unicodeCodePoints",
        "properties": {
            **({"subject": results.subject} if results.subject else {}),
            **({"meta": dict(results.meta)} if results.meta else {}),
            "policy": results.policy.model_dump(mode="json"),
            "data": {
                "path": results.data.path,
                "sha256": results.data.sha256,
                "rows": results.data.rows,
            },
            "seed": results.run.seed,
            "inconclusive": results.run.inconclusive,
            "fail_on": results.run.fail_on,
            **(
                {"config": {**cfg, "note": _ci.config_note(results)}}
                if (cfg := _ci.config_record(results)) is not None
                else {}
            ),
            "summary": {
                "total": s.total,
                "pass": s.pass_,
                "fail": s.fail,
                "warn": s.warn,
                "inconclusive": s.inconclusive,
                "error": s.error,
                "gate": s.gate,
            },
        },
    }
    if results.policy.path:
        run["automationDetails"] = {"id": f"fairpolicy/{_ci.rel_path(results.policy.path)[0]}/"}
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render(results: Results, opts: RenderOptions) -> str:
    results = for_humans(results)  # the worst groups; the JSON has every one
    return json.dumps(sarif_log(results), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
