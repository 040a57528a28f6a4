"""``-o oscal-ap``: the OSCAL assessment plan (NIST OSCAL 1.2.3) the results import.

Built with compliance-trestle's ``AssessmentPlan`` model. It plans what the run did:

- ``import-ssp``: the system security plan — the team's (``--ssp``) or the one written by
  ``-o oscal-ssp`` — else ``#uuid`` of a back-matter resource describing the assessed
  system in prose (it links no file: tools that follow ``import-ssp`` must never be sent to
  the predictions CSV; the data has its own resource);
- ``local-definitions``: the assessed model as a ``software`` component and one TEST
  ``activity`` per control (props: metric, operator, threshold, bound columns);
- ``reviewed-controls``: every control of the policy;
- ``assessment-subjects``: the model component;
- ``assessment-assets``: fairpolicy as a tool component and the platform using it;
- ``tasks``: one ``action`` task, ``fairpolicy check``, associating every activity with
  the subject;
- the task's props pin every setting that can change a verdict (``setting.NAME``,
  :mod:`fairpolicy.gate_settings`) and the deviations the approver allows
  (``allow-deviation``): the settings govern the run the task plans;
- the metadata records the approval: the approvers (``--approver``, parties with the
  ``approver`` role), props ``approver``, ``approved-at`` and ``approved-content-sha256``
  (the SHA-256 of the approved content, recomputed by ``check --plan``);
- back-matter: the system description, the policy file and the data the run will read
  (each linked with its SHA-256, or carrying its description as content).

No ``terms-and-conditions``: NIST's constraint ``oscal-assesment-part-objective-cardinality``
(usnistgov/oscal-content#278) rejects every part there not named ``objective``, and naming
the settings or the approval an objective would be false. Plans written with those parts
still read (:func:`fairpolicy.gate_settings._part`).

The component, activity, task and platform UUIDs equal those of the assessment results
written from the same results (see :mod:`fairpolicy.formatters._oscal_common`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairpolicy import gate_settings
from fairpolicy.formatters._oscal_common import (
    Doc,
    Ids,
    activity,
    assessment_assets,
    check_ids,
    data_resource,
    document_resources,
    dump,
    file_resource,
    metadata,
    observed,
    plan_href,
    policy_resource,
    props_of,
    prune,
    reviewed_controls,
    subject_component,
    subject_selection,
    task,
    with_people,
)
from fairpolicy.people import parse_person
from fairpolicy.policy.schema import NS

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Results


def render(results: Results, opts: RenderOptions) -> str:
    from trestle.oscal.assessment_plan import AssessmentPlan

    check_ids(results, opts, "OSCAL assessment plan")
    opts = with_people(opts, results)
    ids = Ids(results, opts)
    title = results.policy.title or results.policy.path or "policy in memory"
    system = file_resource(
        ids.system_resource,
        f"System under assessment: {ids.subject_title} (no OSCAL SSP)",
        (
            "No OSCAL system security plan is imported. The system under assessment is the "
            f"machine-learning model '{ids.subject_title}', {observed(results)}; it is the "
            "component in this plan's local definitions."
        ),
        None,  # the data has its own resource: a link here would be read as the SSP
        None,
        opts,
    )
    if opts.ssp_href:
        import_ssp: Doc = {"href": plan_href(opts.ssp_href)}
        system["rlinks"] = [
            {
                "href": plan_href(opts.ssp_href),
                "media-type": "application/json",
                **(
                    {"hashes": [{"algorithm": "SHA-256", "value": opts.ssp_sha256}]}
                    if opts.ssp_sha256
                    else {}
                ),
            }
        ]
        system["title"] = f"System security plan: {ids.subject_title}"
        system["description"] = (
            f"The OSCAL system security plan of '{ids.subject_title}' this plan imports."
        )
    else:
        import_ssp = {
            "href": f"#{ids.system_resource}",
            "remarks": "No OSCAL SSP was given (--ssp) or written (-o oscal-ssp=PATH); the "
            "back-matter resource describes the system, and carries that description as "
            "its content (never an empty placeholder).",
        }
        import base64

        text = f"# {system['title']}\n\n{system['description']}\n"
        system["base64"] = {
            "filename": "system.md",
            "media-type": "text/markdown",
            "value": base64.b64encode(text.encode()).decode("ascii"),
        }
    the_task = task(results, ids)
    the_task["props"] = pinned_props(results)
    the_task["remarks"] = pinned_remarks(results)
    doc: Doc = {
        "uuid": ids.event("assessment-plan"),
        "metadata": metadata(
            f"fairpolicy assessment plan — {title}", results, opts, approver_role=True
        ),
        "import-ssp": import_ssp,
        "local-definitions": {
            "components": [subject_component(results, ids)],
            "activities": [activity(f, i, ids) for i, f in enumerate(results.findings)],
        },
        "reviewed-controls": reviewed_controls(results, ids),
        "assessment-subjects": [subject_selection(ids)],
        "assessment-assets": assessment_assets(results, ids),
        "tasks": [the_task],
        "back-matter": {
            "resources": [
                system,
                policy_resource(results, ids, opts),
                data_resource(results, ids, opts),
                *document_resources(results, opts),
            ]
        },
    }
    digest = gate_settings.content_digest(prune(doc))
    approval, said = approval_props(results, opts, digest)
    meta = doc["metadata"]
    meta["props"] = approval
    meta["remarks"] = "\n\n".join(r for r in (meta.get("remarks"), said) if r)
    model = AssessmentPlan.model_validate(prune(doc))
    return dump(model, opts)


def pinned_props(results: Results) -> list[Doc]:
    """Every setting that can change a verdict, as this plan pins it (one prop each; a
    setting not given has the class ``not-given``), and the deviations allowed."""
    props: list[Doc] = []
    for name, value in gate_settings.of_results(results).items():
        p: Doc = {"name": f"setting.{name}", "ns": NS, "value": value or "not given"}
        if value is None:
            p["class"] = "not-given"
        props.append(p)
    allowed = results.run.options.get("allow_deviation") or []
    props += [{"name": gate_settings.ALLOW, "ns": NS, "value": a} for a in allowed]
    return props


def pinned_remarks(results: Results) -> str:
    """What the task's ``setting.NAME`` props mean."""
    allowed = results.run.options.get("allow_deviation") or []
    return (
        "The props `setting.NAME` pin every setting that can change a verdict. A run "
        "verified against this plan (`fairpolicy check --plan`, `fairpolicy "
        "export --plan`) uses exactly these settings; any other value is exit 2 naming the "
        "setting and both values"
        + (
            f", except for {', '.join(allowed)}, which the approver allows to differ"
            if allowed
            else ""
        )
        + ". Every control's own method (metric, operator, threshold, bound columns, "
        "parameters) is pinned by its activity."
    )


def approval_props(results: Results, opts: RenderOptions, digest: str) -> tuple[list[Doc], str]:
    """Who approved the plan, when, and the SHA-256 of the content approved: the
    metadata's props, and the sentence saying so (for its remarks)."""
    names = [parse_person(a)[0] for a in opts.approvers]
    when = results.run.started if names else None
    if names:
        prose = (
            f"Approved by {', '.join(names)} (role: approver) on {when}. The approved "
            f"content (pinned settings, controls and their methods, the policy and its "
            f"documents by SHA-256) has the SHA-256 {digest}."
        )
    else:
        prose = (
            "No approver was named (`fairpolicy plan --approver 'NAME <EMAIL>'`): this plan "
            f"records what is to be approved. Its content has the SHA-256 {digest}."
        )
    props = props_of(
        [
            (gate_settings.DIGEST, digest),
            ("approved-at", when),
            *(("approver", n) for n in names),
        ]
    )
    return props, prose
