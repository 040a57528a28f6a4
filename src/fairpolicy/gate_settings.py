"""The settings that can change a verdict, read from one record (issue 26 item 6, issue 29).

A run's verdict depends on its policy (hashed), its data (hashed) and these settings. The
approved assessment plan (``fairpolicy plan``) pins every one of them, the assessment
results record them with where each came from, and ``check --plan`` / ``export --plan``
compare the run's with the plan's (:func:`fairpolicy.plan.verify`, the only code that
may state that a run was verified).

Settings a plan does not pin, and why they cannot change a verdict: ``--engine`` (every
engine decides exactly on the same counts; the score grid of DuckDB and Spark is
``score-decimals``, pinned), ``--memory-budget``, ``--max-rows`` and the ``--max-*``
caps (they refuse, exit 2, never pass), ``--allow-path`` and ``--strict`` (they decide
whether a policy loads; the policy and every document it imports are pinned by SHA-256),
``--baseline`` (a comparison can only fail a control; its δ ``max-regression`` is
pinned), the outputs, ``--timestamp``, ``--deterministic``, ``--meta`` and the people.
Per-control settings (metric, operator, threshold, bound columns, ``weight_kind`` and
every other parameter) are pinned per activity of the plan.

This module is pure: it reads :class:`~fairpolicy.results.Results` and plan documents
(parsed JSON) and imports nothing above the results model.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fairpolicy.policy.schema import NS
from fairpolicy.records import lean

if TYPE_CHECKING:
    from fairpolicy.results import Results

#: the score grid of the DuckDB and Spark engines when ``--score-decimals`` is not given
#: (equal to ``fairpolicy.data.sources.base.DEFAULT_SCORE_DECIMALS``, tested)
DEFAULT_SCORE_DECIMALS = 4

#: the seed of every resampling draw when ``--seed`` is not given (recorded in the results)
DEFAULT_SEED = 20261122

#: the value of each setting when nothing sets it (text, as :func:`of_results` writes it)
DEFAULTS: dict[str, str | None] = {
    "fail-on": "error",
    "inconclusive": "fail",
    "seed": str(DEFAULT_SEED),
    "score-decimals": str(DEFAULT_SCORE_DECIMALS),
    # only a monitoring run records a window gate (None without --window: a default too)
    "window-gate": "sequential",
}

#: every pinned setting: name (the ``check`` option without its dashes) → the run option
#: key it is recorded under in ``results.run.options`` (None: a field of its own)
SETTINGS: dict[str, str | None] = {
    "fail-on": None,
    "inconclusive": None,
    "subject": None,
    "seed": None,
    "bind": "bind",
    "rename": "rename",
    "positive-label": "positive_label",
    "num-classes": "num_classes",
    "bootstrap": "ci",
    "ci-level": "ci_level",
    "ci-method": "ci_method",
    "resample": "resample",
    "decision": "decision",
    "p-value": "p_value",
    "bonferroni": "bonferroni",
    "max-regression": "max_regression",
    "score-decimals": "score_decimals",
    # a monitoring run (``--window``, issue 30): the windows, their zone, what gates across
    # them, small windows and the reference period all change a verdict. ``--state`` does
    # not (a run from the state equals the one-shot run, bit for bit): its SHA-256 is
    # evidence of the result (:func:`state_props`), not a setting a plan could pin
    "window": "window",
    "window-tz": "window_tz",
    "window-gate": "window_gate",
    "min-window-rows": "min_window_rows",
    "pool-windows": "pool_windows",
    "reference": "reference",
}

#: the pinned settings of a plan (props of its task; a terms-and-conditions part of that
#: name in plans written before, see :func:`_part`)
PART = "pinned-settings"
#: a plan's approval (props of its metadata; formerly a terms-and-conditions part)
APPROVAL = "approval"
#: the prop (beside the pinned settings) naming a setting the approver lets a run change
ALLOW = "allow-deviation"
#: the prop (of the approval) holding :func:`content_digest` of the approved plan
DIGEST = "approved-content-sha256"
#: planned props that are not part of a control's method (where it was written)
IGNORED = frozenset({"method", "control-source"})


def text(value: Any) -> str | None:
    """A setting's value as one canonical line (None: not given)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return ",".join(f"{k}={value[k]}" for k in sorted(value)) or None
    return " ".join(str(value).split()) or None


def of_results(results: Results) -> dict[str, str | None]:
    """Every pinned setting of ``results`` (a run's, or a plan's from ``fairpolicy plan``),
    as canonical text; None where a setting was not given."""
    run, opts = results.run, results.run.options
    max_regression = opts.get("max_regression")
    if max_regression is None and results.baseline is not None:
        b = results.baseline
        max_regression = b.max_regression_written or b.max_regression
    out: dict[str, str | None] = {
        "fail-on": run.fail_on,
        "inconclusive": run.inconclusive,
        "subject": text(results.subject),
        "seed": text(run.seed),
    }
    for name, key in SETTINGS.items():
        if key is not None:
            out[name] = text(opts.get(key))
    out["max-regression"] = text(max_regression)
    decimals = opts.get("score_decimals")
    out["score-decimals"] = text(DEFAULT_SCORE_DECIMALS if decimals is None else decimals)
    return out


def sources(results: Results) -> dict[str, tuple[str, str | None]]:
    """Where each pinned setting of a run came from: (``plan``, its path) when the run took
    it from the approved plan (``--subject`` left out with ``--plan``), (``config-file``,
    its path) when the configuration file set it, (``option``, None) when it differs from
    the default (the command line or an argument of the Python API), else (``default``,
    None)."""
    config = results.run.options.get("config") or {}
    from_file = {str(k).replace("_", "-") for k in (config.get("settings") or {})}
    plan = results.run.options.get("settings_from_plan") or {}
    out: dict[str, tuple[str, str | None]] = {}
    for name, value in of_results(results).items():
        if name in (plan.get("settings") or ()):
            out[name] = ("plan", str(plan.get("file")))
        elif name in from_file:
            out[name] = ("config-file", str(config.get("file")))
        elif value is not None and value != DEFAULTS.get(name):
            out[name] = ("option", None)
        else:
            out[name] = ("default", None)
    return out


def loosening(results: Results) -> list[tuple[str, str]]:
    """(setting, reason) for each setting of the run that loosens the gate."""
    out = []
    s = results.summary
    if results.run.fail_on == "never":
        failed = s.fail + s.warn + s.inconclusive
        out.append(
            (
                "fail-on",
                f"--fail-on never: no control fails the gate ({failed} control(s) failed, "
                "warned or were inconclusive; only a control that could not be evaluated "
                "still does)",
            )
        )
    if results.run.inconclusive != "fail":
        out.append(
            (
                "inconclusive",
                f"--inconclusive {results.run.inconclusive}: an inconclusive gating control "
                + ("passes the gate" if results.run.inconclusive == "pass" else "only warns")
                + f" ({s.inconclusive} control(s) inconclusive)",
            )
        )
    return out


def rerun_pairs(results: Results) -> list[tuple[str, str]]:
    """What a re-run needs beside the settings, as data (issue 29, ``fairpolicy verify``):
    each ``--bind`` and ``--rename`` one ``rerun.bind``/``rerun.rename`` item (a JSON pair
    ``["KEY", "COLUMN"]``: the setting's one-line text cannot be split back when a column
    name holds ``,`` or ``=``), and each warning of the run (``load-warning``)."""
    opts = results.run.options
    out = [
        (f"rerun.{kind}", json.dumps([str(k), str(v)], ensure_ascii=False))
        for kind in ("bind", "rename")
        for k, v in sorted((opts.get(kind) or {}).items())
    ]
    # the note on how the run was dated says nothing about its verdict
    out += [("load-warning", w) for w in results.warnings if not w.startswith(_DATING_NOTE)]
    return out


def state_props(results: Results) -> list[tuple[str, str]]:
    """``--state FILE`` (issue 30): the state file as evidence of the result: its SHA-256
    before this run (``state-sha256-before``, absent for a new state), after it, the
    batches it holds and this run's batch digest. ``fairpolicy verify`` re-derives a run
    whose state held only this run's batch; a later run needs the state it started from."""
    w = results.windows
    st = None if w is None else w.state
    if not st:
        return []
    out = [
        ("state-path", str(st.get("path"))),
        ("state-sha256", str(st.get("sha256"))),
        ("state-batches", str(st.get("batches"))),
        ("state-batch-sha256", str(st.get("batch_sha256"))),
    ]
    if st.get("sha256_before"):
        out.append(("state-sha256-before", str(st["sha256_before"])))
    return out


#: how :func:`fairpolicy.planning.settle`'s note on an undated ``--deterministic`` run starts
_DATING_NOTE = "--deterministic without SOURCE_DATE_EPOCH"


# ---------------------------------------------------------------- plan documents


def ns_props(node: Mapping[str, Any]) -> dict[str, str]:
    """fairpolicy's props of an OSCAL node (the method's only: :data:`IGNORED` left out)."""
    return {
        p["name"]: p["value"]
        for p in node.get("props", [])
        if p.get("ns") == NS and p["name"] not in IGNORED
    }


def _part(body: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """A plan's node holding :data:`PART` (the pinned settings) or :data:`APPROVAL`.

    Where a plan writes them: the pinned settings are props of its task (the run they
    govern), the approval props of its metadata. Plans written before (fairpolicy
    0.1 up to issue 29's constraint fix) held both as parts of ``terms-and-conditions``,
    which NIST's constraint ``oscal-assesment-part-objective-cardinality`` rejects unless
    a part is named ``objective``: those plans still read here."""
    if name == PART:
        for task in body.get("tasks", []):
            if any(_is_setting(p) for p in task.get("props", [])):
                found: Mapping[str, Any] = task
                return found
    elif name == APPROVAL:
        meta = body.get("metadata", {})
        if any(p.get("ns") == NS and p.get("name") == DIGEST for p in meta.get("props", [])):
            return {"props": [p for p in meta.get("props", []) if p.get("name") in _APPROVAL]}
    for part in body.get("terms-and-conditions", {}).get("parts", []):
        if part.get("name") == name and part.get("ns") == NS:
            old: Mapping[str, Any] = part
            return old
    return None


#: the props of a plan's approval (in its metadata)
_APPROVAL = frozenset({DIGEST, "approved-at", "approver"})


def _is_setting(p: Mapping[str, Any]) -> bool:
    name = str(p.get("name", ""))
    return p.get("ns") == NS and (name.startswith("setting.") or name == ALLOW)


def approvers(body: Mapping[str, Any]) -> tuple[str, ...]:
    """The names of the approvers an assessment plan's approval records."""
    part = _part(body, APPROVAL)
    return tuple(
        str(p["value"])
        for p in ([] if part is None else part.get("props", []))
        if p.get("ns") == NS and p.get("name") == "approver"
    )


def plan_settings(body: Mapping[str, Any]) -> tuple[dict[str, str | None], list[str]] | None:
    """(the pinned settings, the settings the plan lets a run change) of an assessment
    plan's body; None when the plan pins none (written before settings were pinned)."""
    part = _part(body, PART)
    if part is None:
        return None
    pinned: dict[str, str | None] = dict.fromkeys(SETTINGS)
    allowed: list[str] = []
    for p in part.get("props", []):
        if not _is_setting(p):
            continue
        name = p["name"]
        if name == ALLOW:
            allowed.append(p["value"])
        elif name.startswith("setting."):
            # a setting that was not given is written with the class "not-given"
            pinned[name[len("setting.") :]] = None if p.get("class") == "not-given" else p["value"]
    return pinned, allowed


def unknown_settings(body: Mapping[str, Any]) -> list[str]:
    """Settings a plan pins or allows that this version does not know (a plan written by a
    newer fairpolicy): never ignored."""
    part = _part(body, PART)
    out = []
    for p in [] if part is None else part.get("props", []):
        if p.get("ns") != NS or not _is_setting(p):
            continue
        name = p["name"]
        key = name[len("setting.") :] if name.startswith("setting.") else None
        if name == ALLOW:
            key = p["value"]
        elif key is None:
            key = name
        if key not in SETTINGS:
            out.append(key)
    return out


def approval(body: Mapping[str, Any]) -> dict[str, str]:
    """The approval part's props (approved-at, the content digest, approver names)."""
    part = _part(body, APPROVAL)
    return {} if part is None else ns_props(part)


def planned_controls(body: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """control id → the planned props of the activity testing it."""
    planned: dict[str, dict[str, str]] = {}
    for act in body.get("local-definitions", {}).get("activities", []):
        for s in act.get("related-controls", {}).get("control-selections", []):
            for inc in s.get("include-controls", []):
                planned[inc["control-id"]] = ns_props(act)
    return planned


def content_digest(body: Mapping[str, Any]) -> str:
    """SHA-256 of what an approver approves in a plan: every pinned setting and allowed
    deviation, every control's planned method, the policy's SHA-256 and every document's
    (canonical JSON). Written into the plan's approval part and recomputed by the check
    against it: an edit of any of these after approval is seen."""
    settings = plan_settings(body)
    docs = sorted(
        (ns_props(r).get("document-kind", ""), ns_props(r).get("document-sha256", ""))
        for r in body.get("back-matter", {}).get("resources", [])
        if ns_props(r).get("document-sha256")
    )
    policy = sorted(
        {
            ns_props(r)["policy-sha256"]
            for r in body.get("back-matter", {}).get("resources", [])
            if ns_props(r).get("policy-sha256")
        }
    )
    content = {
        "settings": None if settings is None else [settings[0], sorted(settings[1])],
        "controls": planned_controls(body),
        "policy-sha256": policy,
        "documents": docs,
    }
    canonical = json.dumps(content, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@lean
class VerifiedPlan:
    """An approved assessment plan a run was verified against — built only by
    :func:`fairpolicy.plan.verify`, after every comparison matched; the writers state
    "verified" only when they are given one."""

    #: where the plan was read (as given) and the SHA-256 of its bytes
    path: str
    sha256: str
    #: the plan document's UUID and title
    uuid: str
    title: str
    #: the planned subject (the component the plan's local definitions hold)
    subject_uuid: str | None
    subject_title: str | None
    #: :func:`content_digest`, as recorded in the plan and recomputed
    digest: str
    #: the approvers' names and the approval time, when the plan records them
    approvers: tuple[str, ...] = ()
    approved_at: str | None = None
    #: (setting, the plan's value, the run's value) of each deviation the plan allows
    deviations: tuple[tuple[str, str | None, str | None], ...] = ()
    #: (control id, UUID) of each implementation statement of the SSP the plan imports
    #: (the findings' ``implementation-statement-uuid``)
    statements: tuple[tuple[str, str], ...] = ()
