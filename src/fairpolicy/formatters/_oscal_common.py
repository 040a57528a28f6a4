"""Pieces shared by the OSCAL assessment-results (``oscal``) and assessment-plan
(``oscal-ap``) writers: identifiers, props, file references, the subject and tool
components, the per-control activities, and serialisation.

Identifiers. OSCAL asks that the UUID of a component, an activity or a platform be
"assigned per-subject": the same thing keeps its UUID across revisions. Those
*identity* UUIDs are therefore always version 5, derived from what they identify
(the subject's title and data SHA-256, the tool's name and version, the policy's
SHA-256 and the control id), which is also how an assessment plan and assessment
results rendered separately from one run agree on them. *Event* UUIDs (the
documents, the result, observations, findings, risks, the evidence resource) are
random (version 4), or version 5 over the SHA-256 of the results JSON under
``--deterministic`` so that two identical runs give byte-identical documents.

Props. fairpolicy's props carry its namespace :data:`~fairpolicy.policy.schema.NS`.
Names the policy format already defines keep their spelling (``metric_key``,
``threshold``, ``operator``, ``input.<role>``, ``enforcement_mode``, ``severity``,
``lifecycle_phase``, ``risk_id``, ``min_samples``); names only the output uses are
hyphenated (``measured-value``, ``policy-sha256``, ``group-n``). Every name is an
OSCAL token and every value a non-empty single line.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
import re
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fairpolicy.errors import OutputError, Problem
from fairpolicy.exact import written_parts
from fairpolicy.people import parse_person
from fairpolicy.policy.schema import NS

if TYPE_CHECKING:
    from trestle.core.base_model import OscalBaseModel

    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results

#: The OSCAL release the documents are written against (and validated with).
OSCAL_VERSION = "1.2.3"

#: Namespace of every version-5 UUID fairpolicy derives (itself a v5 UUID of NS).
UUID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, NS)

Doc = dict[str, Any]

_SPACE = re.compile(r"\s+")

_MEDIA_TYPES = {
    ".csv": "text/csv",
    ".tsv": "text/tab-separated-values",
    ".parquet": "application/vnd.apache.parquet",
    ".pq": "application/vnd.apache.parquet",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
}

#: statuses whose finding carries a risk (with a gate effect of fail or error)
RISKY = ("fail", "warn")


# ---------------------------------------------------------------- text


def line(text: object, default: str = "-") -> str:
    """``text`` on one line, trimmed (OSCAL titles and prop values): never empty."""
    out = _SPACE.sub(" ", str(text)).strip()
    return out or default


def num(x: float | int) -> str:
    """A number as a prop value: the shortest text that reads back to the same float."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if not math.isfinite(x):  # never reached: Results holds no NaN/inf, but never write one
        raise ValueError(f"non-finite number {x!r} in an OSCAL output")
    return repr(float(x))


def short(x: float | None) -> str:
    """A number for a human table cell."""
    return "—" if x is None else f"{x:.6g}"


def threshold_text(f: Finding) -> str | None:
    """The threshold as the policy spells it: ``0.8``, or ``0.8,1.25`` for ``between``
    (the written text: no digit rounded away)."""
    parts, _ = written_parts(f.threshold, f.threshold_written)
    return ",".join(parts) if parts else None


def param_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return line(",".join(str(v) for v in value))
    if isinstance(value, float):
        return num(value) if math.isfinite(value) else None
    if isinstance(value, bool | int):
        return num(value)
    if isinstance(value, dict):
        import json

        return line(json.dumps(value, sort_keys=True, allow_nan=False, default=str))
    return line(value)


def is_token(text: str) -> bool:
    """An OSCAL token (XML NCName): a letter or ``_``, then letters, digits, ``.-_``."""
    if not text or not (text[0].isalpha() or text[0] == "_"):
        return False
    return all(ch.isalnum() or ch in "._-" for ch in text[1:])


def prop(name: str, value: object, **extra: str) -> Doc:
    """One prop in fairpolicy's namespace (``value`` made a single non-empty line)."""
    return {"name": name, "ns": NS, "value": line(value), **extra}


def props_of(pairs: Iterable[tuple[str, object]]) -> list[Doc]:
    """Props for the pairs whose value is known (None is left out, never written)."""
    return [prop(name, value) for name, value in pairs if value is not None and value != ""]


# ---------------------------------------------------------------- checks


def check_ids(results: Results, opts: RenderOptions, fmt: str) -> None:
    """Control, statement and objective ids become OSCAL tokens; say which are not."""
    if not results.findings:
        raise OutputError(
            f"the results hold no findings, and an {fmt} document needs at least one "
            "reviewed control.",
            file=opts.path,
            hint="evaluate a policy with at least one control.",
        )
    problems = []
    for f in results.findings:
        for key, value in (
            ("control-id", f.control_id),
            ("statement_id", f.statement_id),
            ("objective_id", f.objective_id),
        ):
            if value is not None and not is_token(value):
                problems.append(
                    Problem(
                        f"the {key} '{value}' is not an OSCAL token, so the {fmt} output "
                        "cannot name it.",
                        file=opts.path,
                        control=f.control_id,
                        key=key,
                        hint=f"rename it in {results.policy.path or 'the policy'} to start "
                        "with a letter or '_' and use "
                        "only letters, digits, '.', '-' and '_' (e.g. "
                        f"'{_suggest_token(value)}').",
                    )
                )
    if problems:
        raise OutputError(problems)


def _suggest_token(text: str) -> str:
    out = "".join(ch if ch.isalnum() or ch in "._-" else "-" for ch in text).strip("-")
    if not out or not (out[0].isalpha() or out[0] == "_"):
        out = "c-" + out
    return re.sub("-{2,}", "-", out)


# ---------------------------------------------------------------- identifiers


def results_bytes(results: Results) -> bytes:
    """The results JSON exactly as ``-o json`` writes it (hashed and embedded as evidence)."""
    from fairpolicy.formatters import RenderOptions, json_

    return json_.render(results, RenderOptions()).encode("utf-8")


def v5_uuid(*parts: object) -> str:
    return str(uuid.uuid5(UUID_NAMESPACE, "|".join("" if p is None else str(p) for p in parts)))


class Ids:
    """The UUIDs of one rendering (see the module docstring for the two kinds)."""

    def __init__(self, results: Results, opts: RenderOptions) -> None:
        self.results = results
        self.deterministic = opts.deterministic
        self.results_sha256 = hashlib.sha256(results_bytes(results)).hexdigest()
        self.subject_title = subject_title(results, opts)
        #: a run verified against an approved plan observes the plan's subject (the
        #: component the plan defines), not a new one
        self.planned_subject: str | None = None
        vp = opts.plan
        if vp is not None and vp.subject_uuid:
            self.planned_subject = vp.subject_uuid
            self.subject_title = line(vp.subject_title or self.subject_title)
        self._activity: dict[int, str] = {}
        self._events: dict[tuple[object, ...], str] = {}

    def event(self, *parts: object) -> str:
        """A document/result/observation/finding/risk UUID: v4, or v5 when deterministic.

        The same ``parts`` give the same UUID within one rendering.
        """
        if parts not in self._events:
            self._events[parts] = (
                v5_uuid("event", self.results_sha256, self.subject_title, *parts)
                if self.deterministic
                else str(uuid.uuid4())
            )
        return self._events[parts]

    @property
    def subject(self) -> str:
        if self.planned_subject is not None:
            return self.planned_subject
        return v5_uuid("component", "subject", self.subject_title, self.results.data.sha256)

    @property
    def tool(self) -> str:
        t = self.results.tool
        return v5_uuid("component", "tool", t.name, t.version)

    @property
    def platform(self) -> str:
        t = self.results.tool
        return v5_uuid("assessment-platform", t.name, t.version, self.results.run.engine)

    @property
    def task(self) -> str:
        r = self.results
        return v5_uuid("task", r.policy.sha256, r.policy.path, r.data.sha256, self.subject_title)

    @property
    def policy_resource(self) -> str:
        p = self.results.policy
        return v5_uuid("resource", "policy", p.sha256, p.path, p.title)

    @property
    def data_resource(self) -> str:
        d = self.results.data
        return v5_uuid("resource", "data", d.sha256, d.path)

    @property
    def system_resource(self) -> str:
        return v5_uuid("resource", "system", self.subject_title, self.results.data.sha256)

    def activity(self, index: int) -> str:
        """The activity testing the ``index``-th control (unique even if ids repeat)."""
        if not self._activity:
            seen: dict[str, int] = {}
            for i, f in enumerate(self.results.findings):
                n = seen[f.control_id] = seen.get(f.control_id, 0) + 1
                key = f.control_id if n == 1 else f"{f.control_id}#{n}"
                self._activity[i] = v5_uuid("activity", self.results.policy.sha256, key)
        return self._activity[index]


# ---------------------------------------------------------------- times


def last_modified(results: Results, opts: RenderOptions) -> str:
    """The run's end under ``--deterministic`` or ``--timestamp``, else now (UTC, seconds)."""
    if opts.deterministic or results.run.options.get("timestamp"):
        return results.run.finished
    return _dt.datetime.now(tz=_dt.UTC).isoformat(timespec="seconds")


def metadata(title: str, results: Results, opts: RenderOptions, approver_role: bool = False) -> Doc:
    doc: Doc = {
        "title": line(title),
        "last-modified": last_modified(results, opts),
        "version": results.tool.version,
        "oscal-version": OSCAL_VERSION,
    }
    doc.update(people(opts, approver_role))
    if not opts.assessors and not opts.organization and not opts.approvers:
        doc["remarks"] = NO_PEOPLE
    return doc


# ---------------------------------------------------------------- people

#: said wherever people would be named, when none was given (fairpolicy never invents them)
NO_PEOPLE = (
    "No assessor or organization was named (`--assessor`, `--organization`): this document "
    "records no people, and the only actor is the tool."
)


def party_uuid(name: str, email: str | None = None, kind: str = "person") -> str:
    return v5_uuid("party", kind, name, email)


def with_people(opts: RenderOptions, results: Results) -> RenderOptions:
    """``opts`` with the people named on the command line, else recorded in the results
    (``check --assessor``, kept for ``export``), else in the policy's metadata."""
    import dataclasses

    ran = results.run.options
    return dataclasses.replace(
        opts,
        assessors=opts.assessors
        or tuple(ran.get("assessors") or ())
        or tuple(results.policy.assessors),
        organization=opts.organization or ran.get("organization") or results.policy.organization,
    )


def people(opts: RenderOptions, approver_role: bool = False) -> Doc:
    """``roles``, ``parties`` and ``responsible-parties`` for metadata: each assessor a
    person with the ``assessor`` role (a member of the organization, when one is named),
    the organization a party of its own, each approver of a plan (``--approver``) a person
    with the ``approver`` role. The ``assessor`` role (and, for a plan, ``approver``) is
    defined even when no one holds it: the activities name it as responsible."""
    parties: dict[str, Doc] = {}
    org_uuid = None
    if opts.organization:
        org_uuid = party_uuid(line(opts.organization), kind="organization")
        parties[org_uuid] = {
            "uuid": org_uuid,
            "type": "organization",
            "name": line(opts.organization),
        }

    def person(text: str, member: bool) -> str:
        name, email = parse_person(text)
        doc: Doc = {"uuid": party_uuid(name, email), "type": "person", "name": line(name)}
        if email:
            doc["email-addresses"] = [email]
        if org_uuid and member:
            doc["member-of-organizations"] = [org_uuid]
        parties.setdefault(doc["uuid"], doc)
        return str(doc["uuid"])

    persons = list(dict.fromkeys(person(t, True) for t in opts.assessors))
    roles: list[Doc] = [ASSESSOR_ROLE]
    responsible: list[Doc] = []
    if persons or org_uuid:
        responsible.append({"role-id": "assessor", "party-uuids": persons or [org_uuid]})
    if org_uuid:
        roles.append({"id": "assessment-organization", "title": "Assessment organization"})
        responsible.append({"role-id": "assessment-organization", "party-uuids": [org_uuid]})
    approvers = list(dict.fromkeys(person(t, False) for t in opts.approvers))
    if approvers or approver_role:
        roles.append(APPROVER_ROLE)
    if approvers:
        responsible.append({"role-id": "approver", "party-uuids": approvers})
    return {"roles": roles, "parties": list(parties.values()), "responsible-parties": responsible}


#: the role every activity names as responsible (defined in every document's metadata,
#: whether or not a person holds it: fairpolicy never invents people)
ASSESSOR_ROLE: Doc = {
    "id": "assessor",
    "title": "Assessor",
    "description": "Runs the assessment's activities and answers for the results.",
}
#: the role of whoever approves an assessment plan (``fairpolicy plan --approver``)
APPROVER_ROLE: Doc = {
    "id": "approver",
    "title": "Plan approver",
    "description": "Approves the assessment plan (its settings, controls and methods) "
    "before any data is read.",
}


def assessor_uuids(opts: RenderOptions) -> list[str]:
    """The assessors' party UUIDs, else the organization's, else none."""
    out = [party_uuid(*parse_person(t)) for t in opts.assessors]
    if not out and opts.organization:
        out = [party_uuid(line(opts.organization), kind="organization")]
    return out


# ---------------------------------------------------------------- files


def file_href(path: str, out_path: str | None, ran_in: str | None = None) -> str:
    """A relative URI reference to ``path`` (as recorded in the results) from the output
    document: the documents and the files they name move together (an auditor's copy,
    an archive), so a link never holds the machine's absolute path.

    A relative path is relative to the directory the check ran in (``ran_in``, recorded in
    the results, else the current one); it and an absolute path are rebased onto the
    output file's directory, since a relative URI resolves against the document holding
    it (on stdout: onto the current directory). Only where no relative reference exists
    (another drive on Windows) is it a ``file:`` URI.
    """
    full = os.path.abspath(os.path.join(ran_in, path) if ran_in else path)
    if not PurePath(path).is_absolute() and out_path is None:
        rel = path
    else:
        base = os.path.dirname(os.path.abspath(out_path)) if out_path else os.getcwd()
        try:
            rel = os.path.relpath(full, base)
        except ValueError:  # another drive (Windows): no relative reference exists
            return Path(full).as_uri()
    return quote(rel.replace(os.sep, "/"), safe="/")


def plan_href(href: str) -> str:
    """``ap_href`` as a URI reference: a URL is kept, a path percent-encoded (relative:
    ``outputs.href`` writes every such path relative to the document)."""
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", href):
        return href
    if PurePath(href).is_absolute():
        try:
            href = os.path.relpath(href)
        except ValueError:  # another drive (Windows): no relative reference exists
            return Path(href).as_uri()
    return quote(href.replace(os.sep, "/"), safe="/")


def media_type(path: str) -> str | None:
    return _MEDIA_TYPES.get(PurePath(path).suffix.lower())


def file_resource(
    uid: str,
    title: str,
    description: str,
    path: str | None,
    sha256: str | None,
    opts: RenderOptions,
    props: Sequence[Doc] = (),
    ran_in: str | None = None,
) -> Doc:
    """A back-matter resource for a file: an rlink to it with its SHA-256, when known."""
    res: Doc = {"uuid": uid, "title": line(title), "description": description}
    if props:
        res["props"] = list(props)
    if path:
        rlink: Doc = {"href": file_href(path, opts.path, ran_in)}
        if media_type(path):
            rlink["media-type"] = media_type(path)
        if sha256:
            rlink["hashes"] = [{"algorithm": "SHA-256", "value": sha256}]
        res["rlinks"] = [rlink]
    else:
        embed_description(res)
    return res


def embed_description(res: Doc, filename: str = "description.md") -> Doc:
    """A resource that links no file (an in-memory input, the data a plan expects) carries
    what is known of it as its content (text/markdown, base64): NIST asks every
    back-matter resource for an rlink or base64 content, and a link that cannot be real
    is never written."""
    import base64

    text = f"# {res['title']}\n\n{res.get('description', '')}\n"
    res["base64"] = {
        "filename": filename,
        "media-type": "text/markdown",
        "value": base64.b64encode(text.encode("utf-8")).decode("ascii"),
    }
    return res


def policy_resource(results: Results, ids: Ids, opts: RenderOptions) -> Doc:
    p = results.policy
    name = p.title or (PurePath(p.path).name if p.path else "in-memory policy")
    where = f"`{p.path}`" if p.path else "a policy passed in memory (no file)"
    description = (
        f"The fairpolicy policy whose controls were assessed: {where}"
        + (f", form {p.form}" if p.form else "")
        + (f", version {p.version}" if p.version else "")
        + (f", SHA-256 {p.sha256}" if p.sha256 else "")
        + ". Each control names a metric, a threshold, an operator and the data columns "
        "it reads."
    )
    props = props_of(
        [
            ("policy-title", p.title),
            ("policy-version", p.version),
            ("policy-form", p.form),
            ("policy-sha256", p.sha256),
        ]
    )
    return file_resource(
        ids.policy_resource,
        f"Policy: {name}",
        description,
        p.path,
        p.sha256,
        opts,
        props,
        results.run.cwd,
    )


def document_resources(results: Results, opts: RenderOptions) -> list[Doc]:
    """One back-matter resource per other document that shaped the verdict (imported
    profiles and catalogs, the SSP given with ``--ssp``): an rlink with its SHA-256."""
    out = []
    for d in results.policy.documents:
        out.append(
            file_resource(
                v5_uuid("resource", "document", d.kind, d.path, d.sha256),
                f"{d.kind.replace('-', ' ').capitalize()}: {PurePath(d.path).name}",
                f"A {d.kind} read while resolving the policy (`{d.path}`, SHA-256 {d.sha256}); "
                "a change to it changes this hash.",
                d.path,
                d.sha256,
                opts,
                props_of([("document-kind", d.kind), ("document-sha256", d.sha256)]),
                results.run.cwd,
            )
        )
    return out


def planned(results: Results) -> bool:
    """Results written by ``fairpolicy plan``: controls resolved, no data read."""
    return bool(results.run.options.get("planned"))


def expected_data(results: Results) -> str:
    """The columns a planned run will read, with their roles."""
    roles: dict[str, set[str]] = {}
    for f in results.findings:
        for role, col in f.inputs.items():
            roles.setdefault(col, set()).add(role)
    return ", ".join(f"`{c}` ({'/'.join(sorted(r))})" for c, r in sorted(roles.items()))


def data_resource(results: Results, ids: Ids, opts: RenderOptions) -> Doc:
    d = results.data
    if planned(results):
        return embed_description(
            {
                "uuid": ids.data_resource,
                "title": "Data: the predictions to be assessed",
                "description": (
                    "No data was read when this plan was written. The run will read these "
                    f"columns (with their roles): {expected_data(results) or 'none'}."
                ),
                "props": props_of([("data-columns", ",".join(d.columns) or None)]),
            },
            "expected-data.md",
        )
    name = PurePath(d.path).name if d.path else "in-memory data"
    where = f"`{d.path}`" if d.path else "a data frame passed in memory (no file)"
    description = (
        f"The predictions the controls were evaluated on: {where}, {d.rows} rows"
        + (f"; columns read: {', '.join(d.columns)}" if d.columns else "")
        + (f"; SHA-256 {d.sha256}" if d.sha256 else "")
        + "."
    )
    props = props_of(
        [
            ("data-path", d.path),
            ("data-rows", d.rows),
            ("data-sha256", d.sha256),
            ("data-columns", ",".join(d.columns) or None),
        ]
    )
    return file_resource(
        ids.data_resource,
        f"Data: {name}",
        description,
        d.path,
        d.sha256,
        opts,
        props,
        results.run.cwd,
    )


# ---------------------------------------------------------------- components


def subject_title(results: Results, opts: RenderOptions) -> str:
    if opts.subject and opts.subject.strip():
        return line(opts.subject)
    if results.subject:  # --subject recorded in the results (check, export of a JSON)
        return line(results.subject)
    if results.data.path:
        return line(PurePath(results.data.path).name)
    if planned(results):
        return "the model under assessment"
    return "in-memory data"


def observed(results: Results) -> str:
    """How the model is seen: through the predictions read, or (a plan) to be read."""
    d = results.data
    if planned(results):
        return f"to be observed through its predictions (columns {expected_data(results)})"
    where = f"`{d.path}`" if d.path else "a data frame passed in memory"
    return f"observed through its predictions in {where} ({d.rows} rows)"


def subject_component(results: Results, ids: Ids) -> Doc:
    d = results.data
    return {
        "uuid": ids.subject,
        "type": "software",
        "title": ids.subject_title,
        "description": f"The machine-learning model under assessment, {observed(results)}.",
        "props": props_of([("data-path", d.path), ("data-sha256", d.sha256)]),
        "status": {
            "state": "other",
            "remarks": "Assessed from its predictions; fairpolicy does not know whether the "
            "model is deployed.",
        },
    }


def subject_selection(ids: Ids) -> Doc:
    """An assessment-subject naming the subject component."""
    return {
        "type": "component",
        "include-subjects": [{"subject-uuid": ids.subject, "type": "component"}],
    }


def tool_component(results: Results, ids: Ids) -> Doc:
    t = results.tool
    return {
        "uuid": ids.tool,
        "type": "software",
        "title": f"{t.name} {t.version}",
        "description": (
            "fairpolicy, a policy-as-code fairness compliance engine: it evaluates each "
            "control's metric on per-group confusion counts built in one pass over the "
            "predictions and compares it with the control's threshold."
        ),
        "purpose": "Automated assessment of fairness controls",
        "props": props_of([("tool-name", t.name), ("tool-version", t.version)]),
        "status": {"state": "operational"},
    }


def assessment_assets(results: Results, ids: Ids) -> Doc:
    return {
        "components": [tool_component(results, ids)],
        "assessment-platforms": [
            {
                "uuid": ids.platform,
                "title": f"{results.tool.name} ({results.run.engine} engine)",
                "props": props_of([("engine", results.run.engine)]),
                "uses-components": [{"component-uuid": ids.tool}],
            }
        ],
    }


def tool_origin(ids: Ids, with_task: bool = True) -> list[Doc]:
    origin: Doc = {"actors": [{"type": "tool", "actor-uuid": ids.tool}]}
    if with_task:
        origin["related-tasks"] = [{"task-uuid": ids.task}]
    return [origin]


# ---------------------------------------------------------------- controls


def reviewed_controls(results: Results, ids: Ids) -> Doc:
    seen: dict[str, None] = {}
    for f in results.findings:
        seen.setdefault(f.control_id, None)
    p = results.policy
    objectives = list(dict.fromkeys(f.objective_id for f in results.findings if f.objective_id))
    return {
        "description": f"The controls of the policy {line(p.title or p.path or 'in memory')}.",
        "links": [{"href": f"#{ids.policy_resource}", "rel": "reference"}],
        "control-selections": [{"include-controls": [{"control-id": c} for c in seen]}],
        # the objectives assessed: those the policy names, else every objective of the
        # selected controls (a control's threshold statement is its one objective)
        "control-objective-selections": [
            {"include-objectives": [{"objective-id": o} for o in objectives]}
            if objectives
            else {"include-all": {}}
        ],
    }


def planned_props(f: Finding) -> list[Doc]:
    """What the control asks for: metric, operator, threshold, bound columns, params."""
    pairs: list[tuple[str, object]] = [
        ("metric_key", f.metric_key),
        ("operator", f.operator),
        ("threshold", threshold_text(f)),
        ("threshold-source", f.threshold_source),
    ]
    pairs += [(f"input.{role}", column) for role, column in f.inputs.items() if is_token(role)]
    pairs += [
        (f"param.{name}", param_text(value))
        for name, value in sorted(f.params.items())
        if is_token(name)
    ]
    pairs += [
        ("min_samples", f.min_samples),
        ("enforcement_mode", f.enforcement_mode),
        ("severity", f.severity),
        ("lifecycle_phase", f.lifecycle_phase),
        ("risk_id", f.risk_id),
    ]
    if f.source is not None:
        where = f.source.file + (f":{f.source.line}" if f.source.line is not None else "")
        pairs.append(("control-source", where))
    return props_of(pairs)


def activity(f: Finding, index: int, ids: Ids) -> Doc:
    """The TEST activity evaluating one control (shared by the AP and the AR)."""
    what = f.title or f.description or f.metric_key
    op_thr = f"{f.operator} {threshold_text(f)}" if f.threshold is not None else f.operator
    cols = ", ".join(f"{role} = `{col}`" for role, col in f.inputs.items())
    act = ids.activity(index)
    decision = f.decision or "point"
    steps = [
        (
            "Read the predictions",
            f"Read the bound columns ({cols or 'none'}) and count the rows per group and "
            "outcome in one pass.",
        ),
        (
            f"Compute {f.metric_key}",
            f"Compute `{f.metric_key}` from the per-group statistics"
            + (
                f", leaving out groups of fewer than {f.min_samples} rows (each named with "
                "the reason)"
                if f.min_samples
                else ""
            )
            + ".",
        ),
        (
            "Decide",
            f"Compare the value with the threshold ({f.metric_key} {op_thr}) under the "
            f"decision rule `{decision}`: pass, fail, or inconclusive when the rule cannot "
            f"decide; enforcement mode `{f.enforcement_mode}` says whether a failure fails "
            "the release gate.",
        ),
    ]
    return {
        "uuid": act,
        "title": line(f"Test {f.control_id}: {what}"),
        "description": (
            f"Compute `{f.metric_key}` on the predictions ({cols}) and compare it with the "
            f"threshold ({f.metric_key} {op_thr}). "
            + (f"Control: {f.description}" if f.description else "")
        ).strip(),
        "props": [{"name": "method", "value": "TEST"}, *planned_props(f)],
        "steps": [
            {"uuid": v5_uuid("step", act, n), "title": title, "description": text}
            for n, (title, text) in enumerate(steps, 1)
        ],
        "related-controls": {
            "control-selections": [{"include-controls": [{"control-id": f.control_id}]}]
        },
        "responsible-roles": [{"role-id": "assessor"}],
    }


def task(results: Results, ids: Ids) -> Doc:
    subjects = [subject_selection(ids)]
    p, d = results.policy, results.data
    return {
        "uuid": ids.task,
        "type": "action",
        "title": "Run fairpolicy check",
        "description": (
            f"`fairpolicy check {p.path or '<policy>'} {d.path or '<data>'}` evaluates every "
            "control of the policy on the predictions, one activity per control."
        ),
        # when the run took place; a plan written before any data has no date to give
        "timing": None if planned(results) else {"on-date": {"date": results.run.started}},
        "associated-activities": [
            {"activity-uuid": ids.activity(i), "subjects": subjects}
            for i in range(len(results.findings))
        ],
        "subjects": subjects,
        "responsible-roles": [{"role-id": "assessor"}],
    }


def statement_id(f: Finding) -> str:
    """The id of the control statement a finding targets and an SSP implements."""
    return f.statement_id or f"{f.control_id}_smt"


def statement_uuid(ids: Ids, f: Finding) -> str:
    """The UUID of the SSP's implementation statement for ``f``'s control (the SSP written
    by ``-o oscal-ssp``; the findings of the same run point at it)."""
    return v5_uuid("implementation-statement", ids.subject_title, f.control_id, statement_id(f))


# ---------------------------------------------------------------- output


def prune(value: Any) -> Any:
    """Drop None values and empty lists/objects: OSCAL arrays hold at least one item
    (``include-all``, an empty object by definition, is kept)."""
    if isinstance(value, dict):
        out = {k: prune(v) for k, v in value.items()}
        return {
            k: v
            for k, v in out.items()
            if v is not None and v != [] and (v != {} or k == "include-all")
        }
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


def dump(model: OscalBaseModel, opts: RenderOptions) -> str:
    """The document wrapped in its root key, as YAML for ``.yaml``/``.yml``, else JSON.

    Fail closed: a document that breaks the NIST OSCAL schema, or one of the NIST
    constraints :mod:`fairpolicy.oscal_constraints` checks, is never written.
    """
    import json

    from fairpolicy import oscal_constraints
    from fairpolicy.errors import OutputError
    from fairpolicy.oscal_schema import check_document

    doc = model.oscal_dict()
    (root,) = doc
    check_document(doc, root, opts.path or "<stdout>", error=OutputError)
    oscal_constraints.check(doc, opts.path or "<stdout>")
    if opts.path and PurePath(opts.path).suffix.lower() in (".yaml", ".yml"):
        import yaml

        text: str = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
        return text
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
