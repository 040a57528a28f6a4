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
- back-matter: the system description, the policy file and the data file.

The component, activity, task and platform UUIDs equal those of the assessment results
written from the same results (see :mod:`fairpolicy.formatters._oscal_common`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
    prune,
    reviewed_controls,
    subject_component,
    subject_selection,
    task,
    with_people,
)

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
            "back-matter resource describes the system.",
        }
    doc: Doc = {
        "uuid": ids.event("assessment-plan"),
        "metadata": metadata(f"fairpolicy assessment plan — {title}", results, opts),
        "import-ssp": import_ssp,
        "local-definitions": {
            "components": [subject_component(results, ids)],
            "activities": [activity(f, i, ids) for i, f in enumerate(results.findings)],
        },
        "reviewed-controls": reviewed_controls(results, ids),
        "assessment-subjects": [subject_selection(ids)],
        "assessment-assets": assessment_assets(results, ids),
        "tasks": [task(results, ids)],
        "back-matter": {
            "resources": [
                system,
                policy_resource(results, ids, opts),
                data_resource(results, ids, opts),
                *document_resources(results, opts),
            ]
        },
    }
    model = AssessmentPlan.model_validate(prune(doc))
    return dump(model, opts)
