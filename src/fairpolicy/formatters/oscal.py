"""``-o oscal``: OSCAL assessment results (NIST OSCAL 1.2.3), JSON or YAML.

Built with compliance-trestle's ``AssessmentResults`` model and valid against the NIST
JSON schema. The shape, for a run of N controls:

- ``import-ap``: ``#uuid`` of a back-matter resource (FedRAMP's form) linking the
  assessment plan with its SHA-256 — the approved plan the run was verified against
  (``--plan``; "verified" only from :func:`fairpolicy.plan.verify`'s ``VerifiedPlan``) or
  the one written beside it (``-o oscal-ap=PATH``) — else the resource describing the
  policy (never dangling).
- ``local-definitions.activities``: one TEST activity per control, only when there is no
  plan: with one, the results refer to the plan's activities (same UUIDs) and, after
  ``--plan``, observe the plan's subject component instead of defining their own.
- the result's props: the policy, data (and how its sample weights were read:
  ``weight-column``, ``weight-kind``, ``weight-kind-declared``), engine, gate and exit code, one
  ``setting.NAME`` per setting that can change a verdict (:mod:`fairpolicy.gate_settings`;
  ``class``: where it came from) and one ``gate-loosened-by`` per loosening setting with
  the reason (also in the description and the assessment-log entry's statement); what
  ``fairpolicy verify`` re-runs with, as data: one ``rerun.bind``/``rerun.rename`` per
  bind/rename (a JSON pair ``["KEY", "COLUMN"]``) and one ``load-warning`` per warning of
  the run.
- one ``result`` (``start``/``end`` = the run's), whose props name the policy (title,
  version, SHA-256) and the data (path, rows, SHA-256), with
  ``reviewed-controls`` listing every evaluated control and ``local-definitions`` holding
  the assessed model (component ``software``), fairpolicy as the tool of the
  ``assessment-assets`` and the ``fairpolicy check`` task;
- N ``observations`` (``methods: [TEST]``): the measured value (``measured-value``, or
  ``value-undefined-reason`` when the metric is undefined — never NaN), threshold,
  operator, status, bound columns, one ``group-n``/``group-value`` prop per compared
  group (value ``GROUP=NUMBER``) and one ``excluded-group`` per excluded group, with a
  per-group table in ``remarks``; ``relevant-evidence`` points at the results JSON and the
  data file in the back-matter;
- N ``findings``, passes included: ``target`` is the control's objective (``objective-id``)
  or statement (``statement-id``, ``<control-id>_smt`` when the policy names none);
- one ``risk`` (status ``open``) per control whose status is ``fail`` or ``warn``;
- a monitoring run (``--window``): the result above is the window gate's decision (prop
  ``result-kind`` ``window-gate``), followed by one result per window with the window's
  start and end (:mod:`fairpolicy.formatters.oscal_windows`).

Status mapping (``target.status``):

======================  ==============  =============  ==========================
fairpolicy status       state           reason         note
======================  ==============  =============  ==========================
pass                    satisfied       pass
fail                    not-satisfied   fail           risk opened
warn                    not-satisfied   fail           risk opened; the control
                                                       failed in ``warn`` or
                                                       ``monitor`` mode (prop
                                                       ``enforcement_mode``), so
                                                       it does not fail the gate
inconclusive            not-satisfied   inconclusive   not shown to be satisfied
error                   not-satisfied   error          could not be evaluated
======================  ==============  =============  ==========================

Back-matter: the policy file and the data file (rlinks with SHA-256), the baseline results
(``--baseline``; ``document-kind`` ``baseline-results``, with SHA-256) and the results JSON
(its SHA-256, and the JSON itself base64-encoded with ``--embed-evidence``): the bytes
``-o json`` writes for the same run, so ``sha256sum results.json`` matches.

Links: relative paths recorded in the results (relative to where the check ran) are
rebased onto the output file's folder and percent-encoded; absolute paths become
``file:`` URIs. ``fairpolicy export`` assumes it runs from the folder the check ran in.
Group props read ``GROUP=NUMBER`` (split at the last ``=``).
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import TYPE_CHECKING

from fairpolicy import gate_settings
from fairpolicy.exact import level_percent
from fairpolicy.formatters import _ci
from fairpolicy.formatters._ci import value_text
from fairpolicy.formatters._oscal_common import (
    NO_PEOPLE,
    RISKY,
    Doc,
    Ids,
    activity,
    assessment_assets,
    assessor_uuids,
    check_ids,
    data_resource,
    document_resources,
    dump,
    line,
    metadata,
    num,
    plan_href,
    planned_props,
    policy_resource,
    prop,
    props_of,
    prune,
    results_bytes,
    reviewed_controls,
    short,
    statement_id,
    statement_uuid,
    subject_component,
    task,
    threshold_text,
    tool_origin,
    v5_uuid,
    with_people,
)
from fairpolicy.formatters.oscal_windows import gated_props, window_results
from fairpolicy.policy.schema import NS

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results

#: fairpolicy status → (objective state, reason)
STATE: dict[str, tuple[str, str]] = {
    "pass": ("satisfied", "pass"),
    "fail": ("not-satisfied", "fail"),
    "warn": ("not-satisfied", "fail"),
    "inconclusive": ("not-satisfied", "inconclusive"),
    "error": ("not-satisfied", "error"),
}


#: statuses that open a risk (and so does any finding that fails the gate: an
#: inconclusive control under ``--inconclusive fail``, a control that could not be evaluated)
def render(results: Results, opts: RenderOptions) -> str:
    from trestle.oscal.assessment_results import AssessmentResults

    check_ids(results, opts, "OSCAL assessment results")
    opts = with_people(opts, results)
    ids = Ids(results, opts)
    evidence = results_bytes(results)
    r = _Renderer(results, opts, ids)

    plan_res = plan_resource(ids, opts)
    if plan_res is not None:
        # FedRAMP's form: import-ap names a back-matter resource, which carries the hash
        import_ap: Doc = {"href": f"#{plan_res['uuid']}", "remarks": plan_res["description"]}
    else:
        import_ap = {
            "href": f"#{ids.policy_resource}",
            "remarks": "No separate assessment plan was written (`-o oscal-ap=PATH` writes "
            "one); the plan is the policy itself, described in the back-matter.",
        }
    title = results.policy.title or results.policy.path or "policy in memory"
    doc: Doc = {
        "uuid": ids.event("assessment-results"),
        "metadata": metadata(f"fairpolicy assessment results — {title}", results, opts),
        "import-ap": import_ap,
        # the plan defines the activities when there is one: referred to, never redefined
        "local-definitions": {
            "activities": None
            if plan_res is not None
            else [activity(f, i, ids) for i, f in enumerate(results.findings)]
        },
        # a monitoring run: the gated result, then one result per window (oscal_windows)
        "results": [r.result(), *window_results(r)],
        "back-matter": {
            "resources": [
                *([] if plan_res is None else [plan_res]),
                policy_resource(results, ids, opts),
                data_resource(results, ids, opts),
                _evidence_resource(results, ids, evidence, opts),
                *document_resources(results, opts),
                *baseline_resource(results, opts),
            ]
        },
    }
    model = AssessmentResults.model_validate(prune(doc))
    return dump(model, opts)


def _weight_pairs(res: Results) -> list[tuple[str, object]]:
    """How the run read its sample weights, as data (issue 29 item 2): the column, the
    reading (survey or frequency) and whether the policy declared it (false: the survey
    default for an undeclared ``weight_kind``); nothing without ``input.weight``."""
    w = res.data.weights
    if w is None:
        return []
    return [
        ("weight-column", w.column),
        ("weight-kind", w.kind),
        ("weight-kind-declared", "true" if w.declared else "false"),
    ]


def result_of(results: Results, opts: RenderOptions) -> Doc:
    """The AR's one ``result`` as :func:`render` writes it, unvalidated (``fairpolicy
    verify`` compares an AR's statements with it, re-derived from the hashed inputs)."""
    opts = with_people(opts, results)
    doc: Doc = prune(_Renderer(results, opts, Ids(results, opts)).result())
    return doc


def results_of(results: Results, opts: RenderOptions) -> list[Doc]:
    """Every ``result`` as :func:`render` writes them (the run's, then one per window of a
    monitoring run), unvalidated: what ``fairpolicy verify`` re-derives."""
    opts = with_people(opts, results)
    r = _Renderer(results, opts, Ids(results, opts))
    return [prune(x) for x in (r.result(), *window_results(r))]


def plan_resource(ids: Ids, opts: RenderOptions) -> Doc | None:
    """The assessment plan the results import, as a back-matter resource: an rlink with
    its SHA-256. "Verified" is stated only for a plan :func:`fairpolicy.plan.verify`
    verified (``opts.plan``); a plan written by the same run says so."""
    if not opts.ap_href:
        return None
    vp = opts.plan
    sha = vp.sha256 if vp is not None else opts.ap_sha256
    rlink: Doc = {"href": plan_href(opts.ap_href), "media-type": "application/json"}
    if sha:
        rlink["hashes"] = [{"algorithm": "SHA-256", "value": sha}]
    if vp is not None:
        approved = (
            f"approved by {', '.join(vp.approvers)} on {vp.approved_at}"
            if vp.approvers
            else "no approver recorded in it"
        )
        allowed = "".join(
            f" The plan allows {name} to differ: {_val(then)} in the plan, {_val(now)} in this run."
            for name, then, now in vp.deviations
        )
        description = (
            f"The assessment plan approved before the run (`fairpolicy plan`; {approved}; "
            f"approved content SHA-256 {vp.digest}). The run was verified to match it: every "
            "pinned setting, every control's method, the policy and the documents it imports."
            + allowed
        )
        title = f"Approved assessment plan: {line(vp.title)}"
        extra: list[tuple[str, str | None]] = [
            ("plan-uuid", vp.uuid),
            ("plan-sha256", vp.sha256),
            ("approved-content-sha256", vp.digest),
            ("verified", "true"),
        ]
    else:
        description = (
            "The assessment plan written by the same `fairpolicy check` run (`-o oscal-ap`), "
            "from the same results: it was not approved before the run."
        )
        title = "Assessment plan written by this run"
        extra = [("plan-sha256", sha), ("verified", "false")]
    res: Doc = {
        "uuid": v5_uuid("resource", "assessment-plan", sha, opts.ap_href),
        "title": title,
        "description": description,
        "props": props_of([("document-kind", "assessment-plan"), *extra]),
        "rlinks": [rlink],
    }
    return res


def _val(value: str | None) -> str:
    return "not given" if value is None else f"'{value}'"


def _evidence_resource(results: Results, ids: Ids, evidence: bytes, opts: RenderOptions) -> Doc:
    """The results JSON: an rlink to the file ``-o json`` wrote in the same run (with its
    SHA-256), and the JSON itself (base64) with ``--embed-evidence`` or when no file was
    written — a resource a reader cannot retrieve would be no evidence."""
    sha = hashlib.sha256(evidence).hexdigest()
    embed = opts.embed_evidence or not opts.results_href
    res: Doc = {
        "uuid": ids.event("resource", "results-json"),
        "title": "fairpolicy results JSON",
        "description": (
            "Every finding of the run with its per-group values and sizes, excluded groups and "
            f"provenance (results schema {results.schema_version}), exactly as "
            f"`fairpolicy check -o json` writes it: {len(evidence)} bytes, SHA-256 {sha}."
            + (" Embedded below (base64)." if embed else "")
        ),
        "props": props_of(
            [
                ("results-sha256", sha),
                ("results-schema-version", results.schema_version),
                ("media-type", "application/json"),
            ]
        ),
    }
    if opts.results_href:
        res["rlinks"] = [
            {
                "href": plan_href(opts.results_href),
                "media-type": "application/json",
                "hashes": [{"algorithm": "SHA-256", "value": sha}],
            }
        ]
    if embed:
        res["base64"] = {
            "filename": "results.json",
            "media-type": "application/json",
            "value": base64.b64encode(evidence).decode("ascii"),
        }
    return res


class _Renderer:
    def __init__(self, results: Results, opts: RenderOptions, ids: Ids) -> None:
        self.results = results
        self.opts = opts
        self.ids = ids

    def result(self) -> Doc:
        res, ids = self.results, self.ids
        s = res.summary
        observations, findings, risks = [], [], []
        for i, f in enumerate(res.findings):
            obs_uuid = ids.event("observation", i, f.control_id)
            risky = f.status in RISKY or res.effect(f) in ("fail", "error")
            risk_uuid = ids.event("risk", i, f.control_id) if risky else None
            observations.append(self.observation(f, obs_uuid))
            findings.append(self.finding(f, i, obs_uuid, risk_uuid))
            if risk_uuid is not None:
                risks.append(self.risk(f, risk_uuid, obs_uuid))
        exit_code = res.exit_code
        loosened = gate_settings.loosening(res)
        why = "".join(f" The gate was loosened: {reason}." for _, reason in loosened)
        doc: Doc = {
            "uuid": ids.event("result"),
            "title": line(f"fairpolicy check: {res.policy.title or res.policy.path or 'policy'}"),
            "description": (
                f"{s.total} control(s) evaluated on {res.data.rows} rows of "
                f"{res.data.path or 'in-memory data'}: {s.pass_} pass, {s.fail} fail, "
                f"{s.warn} warn, {s.inconclusive} inconclusive, {s.error} error. "
                f"Release gate: {s.gate} (exit {exit_code})." + why
            ),
            "start": res.run.started,
            "end": res.run.finished,
            "props": props_of(
                [
                    ("policy-title", res.policy.title),
                    ("policy-version", res.policy.version),
                    ("policy-sha256", res.policy.sha256),
                    ("policy-path", res.policy.path),
                    ("data-path", res.data.path),
                    ("data-rows", res.data.rows),
                    ("data-sha256", res.data.sha256),
                    *_weight_pairs(res),
                    ("engine", res.run.engine),
                    ("inconclusive-policy", res.run.inconclusive),
                    ("gate", s.gate),
                    ("exit-code", exit_code),
                    *config_props(res),
                    *gate_settings.rerun_pairs(res),  # what `fairpolicy verify` re-runs with
                    *gate_settings.state_props(res),  # --state: the state file's SHA-256
                ]
            )
            + self.setting_props(loosened)
            + ([] if res.windows is None else gated_props(res.windows)),
            "local-definitions": {
                # a run verified against a plan observes the plan's component
                "components": None
                if ids.planned_subject is not None
                else [subject_component(res, ids)],
                "assessment-assets": assessment_assets(res, ids),
                "tasks": [task(res, ids)],
            },
            "reviewed-controls": reviewed_controls(res, ids),
            "assessment-log": {"entries": [self.log_entry()]},
            "observations": observations or None,
            "risks": risks or None,
            "findings": findings or None,
        }
        remarks = [] if assessor_uuids(self.opts) else [NO_PEOPLE]
        if res.warnings:
            remarks.append("Warnings of the run:\n\n" + "\n".join(f"- {w}" for w in res.warnings))
        if remarks:
            doc["remarks"] = "\n\n".join(remarks)
        return doc

    def setting_props(self, loosened: list[tuple[str, str]]) -> list[Doc]:
        """Every setting that can change a verdict (:mod:`fairpolicy.gate_settings`): one
        ``setting.NAME`` prop each, its ``class`` where it came from (``option``,
        ``config-file``, ``default``), and one ``gate-loosened-by`` prop per loosening
        setting with the reason."""
        res, vp = self.results, self.opts.plan
        where = gate_settings.sources(res)
        out: list[Doc] = []
        for name, value in gate_settings.of_results(res).items():
            kind, file = where[name]
            notes = []
            if file:
                source = "the approved plan" if kind == "plan" else "the configuration file"
                notes.append(f"Set by {source} {file}.")
            if vp is not None:
                allowed = any(d[0] == name for d in vp.deviations)
                notes.append(
                    "The approved plan allows another value."
                    if allowed
                    else f"Pinned by the approved plan {vp.uuid}, and verified."
                )
            p = prop(f"setting.{name}", value or "not given", **{"class": kind})
            if notes:
                p["remarks"] = " ".join(notes)
            out.append(p)
        for name, reason in loosened:
            p = prop("gate-loosened-by", name, **{"class": where[name][0]})
            p["remarks"] = reason
            out.append(p)
        return out

    def statement(self) -> str:
        """What was assessed, how and by whom — stated by the tool, signed by nobody it
        did not name. Written as the assessment-log entry's remarks, not as an attestation:
        NIST's constraint ``oscal-assesment-part-objective-cardinality``
        (usnistgov/oscal-content#278) rejects an attestation part not named ``objective``,
        and this statement is no objective."""
        res, s = self.results, self.results.summary
        who = assessor_uuids(self.opts)
        p = res.policy
        prose = (
            f"{res.tool.name} {res.tool.version} evaluated {s.total} control(s) of the policy "
            f"{line(p.title or p.path or 'in memory')}"
            + (f" (SHA-256 {p.sha256})" if p.sha256 else "")
            + f" on {res.data.rows} rows of {res.data.path or 'in-memory data'}"
            + (f" (SHA-256 {res.data.sha256})" if res.data.sha256 else "")
            + f" with the {res.run.engine} engine, seed {res.run.seed}, between "
            f"{res.run.started} and {res.run.finished}: {s.pass_} pass, {s.fail} fail, "
            f"{s.warn} warn, {s.inconclusive} inconclusive, {s.error} error; release gate "
            f"{s.gate} (exit {res.exit_code})."
            + "".join(f" The gate was loosened: {r}." for _, r in gate_settings.loosening(res))
            + " Every number can be recomputed from the per-group counts in the results "
            "JSON referenced in the back-matter."
        )
        if not who:
            prose += " " + NO_PEOPLE
        return prose

    def log_entry(self) -> Doc:
        res = self.results
        entry: Doc = {
            "uuid": self.ids.event("log-entry"),
            "title": "fairpolicy check",
            "description": (
                f"`fairpolicy check {res.policy.path or '<policy>'} "
                f"{res.data.path or '<data>'}` ({res.run.engine} engine): release gate "
                f"{res.summary.gate}, exit {res.exit_code}."
            ),
            "start": res.run.started,
            "end": res.run.finished,
            "props": props_of(
                [
                    ("tool-version", res.tool.version),
                    ("engine", res.run.engine),
                    ("seed", res.run.seed),
                    ("gate", res.summary.gate),
                    ("exit-code", res.exit_code),
                    *((f"meta.{k}", v) for k, v in res.meta.items()),
                ]
            ),
        }
        entry["remarks"] = self.statement()
        who = assessor_uuids(self.opts)
        if who:
            entry["logged-by"] = [{"party-uuid": u, "role-id": "assessor"} for u in who]
        return entry

    # ------------------------------------------------------------ per control

    def observation(self, f: Finding, uid: str) -> Doc:
        ids = self.ids
        pairs: list[tuple[str, object]] = []
        if f.value is not None:
            pairs.append(("measured-value", num(f.value)))
        else:
            pairs.append(("value-undefined-reason", f.reason or "the metric is undefined"))
        pairs += [
            ("status", f.status),
            ("gating", "true" if f.gating else "false"),
            ("gate-effect", self.results.effect(f)),
        ]
        pairs.append(("worst-group", f.worst_group))
        pairs += _change_pairs(self.results, f)
        pairs.append(("dialect", f.dialect))
        pairs += [
            ("bind-changed", f"input.{b.role}: {b.written or '(none)'} -> {b.read} ({b.by})")
            for b in f.bind_changes
        ]
        props = [*props_of([("control-id", f.control_id)]), *planned_props(f), *props_of(pairs)]
        for g in f.groups:
            props += props_of([("group-n", f"{g.group}={g.n}")])
            if g.value is not None:
                props += props_of([("group-value", f"{g.group}={num(g.value)}")])
        props += props_of([(k, _ci.datum(v)) for k, v in _ci.uncertainty(f)])
        props += props_of([(k, f"{g}={_ci.datum(v)}") for k, g, v in _ci.group_uncertainty(f)])
        for x in f.excluded_groups:
            p = props_of([("excluded-group", f"{x.group}={x.n}")])
            p[0]["remarks"] = x.reason
            props += p
        description = f.message
        if f.value is None and f.reason and f.reason not in f.message:
            description += f" Reason: {f.reason}"
        doc: Doc = {
            "uuid": uid,
            "title": line(f"{f.control_id}: {f.metric_key}"),
            "description": description,
            "props": props,
            "methods": ["TEST"],
            "types": ["control-objective"],
            "origins": tool_origin(ids),
            "subjects": [
                {"subject-uuid": ids.subject, "type": "component", "title": ids.subject_title}
            ],
            "relevant-evidence": [
                {
                    "href": f"#{ids.event('resource', 'results-json')}",
                    "description": f"The results JSON: finding '{f.control_id}' with its "
                    "per-group values.",
                },
                {
                    "href": f"#{ids.data_resource}",
                    "description": "The predictions file the value was computed on.",
                },
            ],
            "collected": self.results.run.finished,
        }
        table = _group_table(f)
        if table:
            doc["remarks"] = table
        return doc

    def finding(self, f: Finding, index: int, obs_uuid: str, risk_uuid: str | None) -> Doc:
        state, reason = STATE[f.status]
        if f.objective_id:
            target_type, target_id = "objective-id", f.objective_id
        else:
            target_type, target_id = "statement-id", statement_id(f)
        status: Doc = {"state": state, "reason": reason}
        if f.status == "warn":
            status["remarks"] = (
                f"The control failed in {f.enforcement_mode} mode: reported, it does not fail "
                "the release gate."
            )
        elif f.status in ("inconclusive", "error"):
            status["remarks"] = f.reason or f.message
        target: Doc = {
            "type": target_type,
            "target-id": target_id,
            "title": line(f.title or f.control_id),
            "status": status,
        }
        doc: Doc = {
            "uuid": self.ids.event("finding", index, f.control_id),
            "title": line(f"{f.control_id}: {state} ({f.status})"),
            "description": (f"{f.description}\n\n" if f.description else "") + f.message,
            "props": props_of(
                [
                    ("control-id", f.control_id),
                    ("status", f.status),
                    ("enforcement_mode", f.enforcement_mode),
                    ("gating", "true" if f.gating else "false"),
                    ("gate-effect", self.results.effect(f)),
                    ("severity", f.severity),
                    ("lifecycle_phase", f.lifecycle_phase),
                    ("risk_id", f.risk_id),
                ]
            ),
            "origins": tool_origin(self.ids),
            "target": target,
            "related-observations": [{"observation-uuid": obs_uuid}],
        }
        if risk_uuid is not None:
            doc["related-risks"] = [{"risk-uuid": risk_uuid}]
        statement = None
        if self.opts.plan is not None:  # the statement of the SSP the approved plan imports
            statement = dict(self.opts.plan.statements).get(f.control_id)
        elif self.opts.ssp_href:  # the SSP written by the same run
            statement = statement_uuid(self.ids, f)
        if statement is not None:
            doc["implementation-statement-uuid"] = statement
        return doc

    def risk(self, f: Finding, uid: str, obs_uuid: str) -> Doc:
        dimension = f.inputs.get("dimension")
        across = f" across {dimension}" if dimension else ""
        value = "undefined" if f.value is None else value_text(f, 6, "g")
        required = f"{f.operator} {threshold_text(f)}"
        if f.status in RISKY:
            statement = (
                f"The model's {f.metric_key}{across} is {value}, outside the policy's "
                f"threshold ({required})."
            )
            title = f"{f.control_id}: {f.metric_key} outside its threshold"
        elif f.status == "inconclusive":
            statement = (
                f"The model's {f.metric_key}{across} ({value}) could not be shown to satisfy "
                f"the policy's threshold ({required}): {f.reason or 'undefined'}. The control "
                f"fails the release gate (--inconclusive {self.results.run.inconclusive})."
            )
            title = f"{f.control_id}: {f.metric_key} not shown to meet its threshold"
        else:
            statement = (
                f"The control could not be evaluated, so its threshold ({required}) is not "
                f"shown to be met: {f.reason or f.message}"
            )
            title = f"{f.control_id}: {f.metric_key} could not be evaluated"
        if f.ci is not None and f.ci.low is not None and f.ci.high is not None:
            statement += (
                f" {level_percent(f.ci.level)}% interval [{short(f.ci.low)}, {short(f.ci.high)}]."
            )
        if f.worst_group:
            n = next((g.n for g in f.groups if g.group == f.worst_group), None)
            statement += f" Worst group: {f.worst_group}" + (f" (n={n})." if n else ".")
        if f.severity:
            statement += f" Severity: {f.severity}."
        if f.status == "warn":
            statement += (
                f" Enforcement mode {f.enforcement_mode}: reported; it does not fail the "
                "release gate."
            )
        doc: Doc = {
            "uuid": uid,
            "title": line(title),
            "description": (f"{f.description}\n\n" if f.description else "") + f.message,
            "statement": statement,
            "props": props_of(
                [
                    ("control-id", f.control_id),
                    ("severity", f.severity),
                    ("risk_id", f.risk_id),
                    ("enforcement_mode", f.enforcement_mode),
                    ("lifecycle_phase", f.lifecycle_phase),
                    ("status", f.status),
                    ("gate-effect", self.results.effect(f)),
                    ("measured-value", None if f.value is None else num(f.value)),
                    ("threshold", threshold_text(f)),
                    ("operator", f.operator),
                ]
            ),
            "status": "open",
            "origins": tool_origin(self.ids),
            "characterizations": [
                {
                    "origin": tool_origin(self.ids)[0],
                    "facets": [
                        {"name": name, "system": NS, "value": line(v)}
                        for name, v in characterization(f)
                    ],
                }
            ],
            "related-observations": [{"observation-uuid": obs_uuid}],
            "remediations": [self.remediation(f, uid, required)],
        }
        return doc

    def remediation(self, f: Finding, risk_uuid: str, required: str) -> Doc:
        """The recommended response: what would close the risk, and how it is shown."""
        if f.status == "error":
            what = (
                f"Make the control evaluable ({f.reason or 'see the finding'}), then run "
                "`fairpolicy check` again."
            )
        elif f.status == "inconclusive" and f.value is not None:
            what = (
                f"Collect more rows for the small groups (or state why the control may "
                f"decide on less), so that {f.metric_key} can be shown to meet {required}; "
                "then run `fairpolicy check` again."
            )
        else:
            worst = f" starting with the worst group ({f.worst_group})" if f.worst_group else ""
            what = (
                f"Bring {f.metric_key} within its threshold ({required}){worst}: for example "
                "re-weight or re-sample the training data, change the decision threshold "
                "per group, or retrain; then run `fairpolicy check` on new predictions. "
                "Loosening the threshold is a policy change for the policy's owner to "
                "approve, not a remediation."
            )
        return {
            "uuid": self.ids.event("remediation", risk_uuid),
            "lifecycle": "recommendation",
            "title": line(f"{f.control_id}: bring {f.metric_key} within {required}"),
            "description": what,
            "origins": tool_origin(self.ids),
        }


#: severity words → the impact facet (anything else is carried as written)
_IMPACT = {
    "critical": "very-high",
    "blocker": "very-high",
    "high": "high",
    "major": "high",
    "error": "high",
    "medium": "moderate",
    "moderate": "moderate",
    "warning": "moderate",
    "warn": "moderate",
    "low": "low",
    "minor": "low",
    "info": "very-low",
    "note": "very-low",
}


def exceedance(f: Finding) -> float | None:
    """How far the measured value lies beyond the threshold, in the metric's units (0 or
    less: not beyond it; None: no value or no single threshold to measure against)."""
    if f.value is None or f.threshold is None:
        return None
    v, t = f.value, f.threshold
    if isinstance(t, list):
        low, high = min(t), max(t)
        return max(low - v, v - high)
    if f.operator in ("<", "<=", "lt", "le", "lte"):
        return v - t
    if f.operator in (">", ">=", "gt", "ge", "gte"):
        return t - v
    if f.operator in ("==", "eq"):
        return abs(v - t)
    return None


def characterization(f: Finding) -> list[tuple[str, str]]:
    """The risk's facets (fairpolicy namespace): ``likelihood`` that the control is truly
    violated — ``demonstrated`` (the value violates it, and so does the whole interval when
    one decided), ``likely`` (the value violates it but the interval does not prove it, or
    the control is inconclusive with a violating value), ``possible`` (inconclusive with a
    satisfying value), ``unknown`` (no value); ``impact`` from the control's severity, else
    its enforcement mode (block → high, warn → moderate, monitor → low); the measured
    ``exceedance`` beyond the threshold, and ``relative-exceedance`` (÷ |threshold|)."""
    exceed = exceedance(f)
    if f.value is None:
        likelihood = "unknown"
    elif f.status in RISKY:
        exact = f.decision in ("point", "worst_case", "best_case")  # decided without sampling
        likelihood = "demonstrated" if exact or f.ci is not None else "likely"
    elif exceed is not None and exceed > 0:
        likelihood = "likely"
    else:
        likelihood = "possible"
    sev = (f.severity or "").strip().lower()
    impact = _IMPACT.get(sev) or (
        line(sev) if sev else {"block": "high", "warn": "moderate"}.get(f.enforcement_mode, "low")
    )
    facets = [("likelihood", likelihood), ("impact", impact)]
    if f.severity:
        facets.append(("severity", line(f.severity)))
    if exceed is not None:
        facets.append(("exceedance", num(exceed)))
        t = f.threshold
        if isinstance(t, float | int) and t != 0:
            facets.append(("relative-exceedance", num(exceed / abs(t))))
    return facets


def _group_table(f: Finding) -> str | None:
    if not f.groups and not f.excluded_groups:
        return None
    rows = ["| group | n | value | compared |", "|---|---|---|---|"]
    rows += [f"| {_cell(g.group)} | {g.n} | {short(g.value)} | yes |" for g in f.groups]
    rows += [f"| {_cell(x.group)} | {x.n} | — | no: {_cell(x.reason)} |" for x in f.excluded_groups]
    return "Per-group values:\n\n" + "\n".join(rows)


def _cell(text: str) -> str:
    return line(text).replace("|", "\\|")


def _change_pairs(results: Results, f: Finding) -> list[tuple[str, object]]:
    """The change against the baseline (``--baseline``): the baseline results' UUID and
    SHA-256, the values then and now, how much worse and the decision."""
    ref, c = results.baseline, f.change
    if ref is None or c is None:
        return []
    pairs: list[tuple[str, object]] = [
        ("baseline-results-uuid", ref.uuid),
        ("baseline-results-sha256", ref.sha256),
        ("change-state", c.state),
    ]
    if c.baseline_value is not None:
        pairs.append(("baseline-value", num(c.baseline_value)))
    if c.worsened_by is not None:  # signed (positive: worse), labelled beside it
        from fairpolicy.baseline import trend

        pairs += [("worsened-by", num(c.worsened_by)), ("change-trend", trend(c)[0])]
        pairs.append(("better-when", c.better))
    if c.low is not None and c.high is not None:
        pairs += [("worsened-by-low", num(c.low)), ("worsened-by-high", num(c.high))]
    if c.max_regression is not None:
        pairs += [("max-regression", num(c.max_regression)), ("change-verdict", c.verdict)]
        if c.max_regression_source is not None:
            pairs.append(("max-regression-source", c.max_regression_source))
    return pairs


def config_props(res: Results) -> list[tuple[str, object]]:
    """The configuration file that set options, its hash, and each setting from it that
    loosens the gate (``config-loosens``, one prop per setting: ``fail-on = "never"``)."""
    cfg = _ci.config_record(res)
    if cfg is None:
        return []
    props: list[tuple[str, object]] = [
        ("config-file", cfg["file"]),
        ("config-sha256", cfg.get("sha256")),
    ]
    props += [
        ("config-loosens", f"{k} = {json.dumps(v, ensure_ascii=False)}")
        for k, v in _ci.config_loosening(res)
    ]
    return props


def baseline_resource(results: Results, opts: RenderOptions) -> list[Doc]:
    """The baseline results (``--baseline``) the run compared with: an rlink with its
    SHA-256, so ``fairpolicy verify`` re-runs the comparison on the same file."""
    from fairpolicy.formatters._oscal_common import file_resource

    b = results.baseline
    if b is None or b.path == "(Results)":
        return []
    return [
        file_resource(
            v5_uuid("resource", "baseline-results", b.sha256, b.path),
            f"Baseline results: {b.path}",
            f"The results of the earlier run this run was compared with (`--baseline`), "
            f"SHA-256 {b.sha256}.",
            b.path,
            b.sha256,
            opts,
            props_of(
                [
                    ("document-kind", "baseline-results"),
                    ("baseline-results-uuid", b.uuid),
                    ("baseline-results-sha256", b.sha256),
                ]
            ),
            results.run.cwd,
        )
    ]
