"""``-o oscal-ssp``: a minimal OSCAL system security plan (NIST OSCAL 1.2.3) for the model.

The evidence chain an auditor's tools walk is AR → AP (``import-ap``) → SSP
(``import-ssp``) → profile (``import-profile``) → catalog. A team with its own SSP passes
it with ``--ssp``; otherwise this writes one describing only what fairpolicy knows:

- ``import-profile``: the profile the policy resolves through — the policy itself when it
  is a profile, else one written beside the SSP (see :mod:`fairpolicy.ssp`);
- ``system-characteristics``: the system named by ``--subject`` (else the data file), an
  identifier derived from it, the predictions as its one information type, status
  ``other`` (fairpolicy does not know whether the model is deployed) and an authorization
  boundary that says it was not established;
- ``system-implementation``: the system itself (``this-system``) and the model as a
  ``software`` component (the same UUID as the subject of the plan and the results);
- ``control-implementation``: one implemented requirement per evaluated control, by the
  model component, with the metric, operator, threshold and bound columns as props and
  status ``planned`` — an SSP states intent; the results say what was measured — and one
  implementation statement (the control's statement, ``<control-id>_smt`` unless the
  policy names one), which the findings of the same run name
  (``implementation-statement-uuid``);
- people only when named (``--assessor``, ``--organization``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairpolicy.errors import OutputError
from fairpolicy.exact import written_parts
from fairpolicy.formatters._oscal_common import (
    Doc,
    Ids,
    check_ids,
    data_resource,
    document_resources,
    dump,
    line,
    metadata,
    planned_props,
    policy_resource,
    props_of,
    prune,
    statement_id,
    statement_uuid,
    subject_component,
    v5_uuid,
    with_people,
)

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.results import Finding, Results


def render(results: Results, opts: RenderOptions) -> str:
    from trestle.oscal.ssp import SystemSecurityPlan

    check_ids(results, opts, "OSCAL system security plan")
    opts = with_people(opts, results)
    if not opts.profile_href:
        raise OutputError(
            "an OSCAL system security plan imports a profile, and none is known for this run.",
            file=opts.path,
            hint="write it with `fairpolicy check ... -o oscal-ssp=PATH` (which writes the "
            "profile beside it), or pass your own SSP with --ssp.",
        )
    ids = Ids(results, opts)
    this_system = v5_uuid("component", "this-system", ids.subject_title)
    d = results.data
    seen: dict[str, int] = {}
    requirements = []
    for i, f in enumerate(results.findings):
        if f.control_id in seen:
            continue
        seen[f.control_id] = i
        how = (
            f"The model's predictions are evaluated with `{f.metric_key}` against the "
            f"threshold ({f.operator} {_threshold(f)}) by fairpolicy on every release "
            "candidate."
        )
        requirements.append(
            {
                "uuid": v5_uuid("implemented-requirement", ids.subject_title, f.control_id),
                "control-id": f.control_id,
                "props": planned_props(f),
                "by-components": [
                    {
                        "component-uuid": ids.subject,
                        "uuid": v5_uuid("by-component", ids.subject_title, f.control_id),
                        "description": how,
                        "implementation-status": {"state": "planned"},
                    }
                ],
                # one implementation statement per control: the statement its findings
                # target (their implementation-statement-uuid)
                "statements": [
                    {
                        "statement-id": statement_id(f),
                        "uuid": statement_uuid(ids, f),
                        "by-components": [
                            {
                                "component-uuid": ids.subject,
                                "uuid": v5_uuid(
                                    "statement-by-component", ids.subject_title, f.control_id
                                ),
                                "description": how,
                                "implementation-status": {"state": "planned"},
                            }
                        ],
                    }
                ],
            }
        )
    doc: Doc = {
        "uuid": v5_uuid("system-security-plan", ids.subject_title, results.policy.sha256),
        "metadata": metadata(f"System security plan — {ids.subject_title}", results, opts),
        "import-profile": {"href": opts.profile_href},
        "system-characteristics": {
            "system-ids": [
                {
                    "identifier-type": "https://ietf.org/rfc/rfc4122",
                    "id": v5_uuid("system", ids.subject_title),
                }
            ],
            "system-name": ids.subject_title,
            "description": (
                f"The machine-learning system '{ids.subject_title}', assessed for fairness "
                "from its predictions. Written by fairpolicy, which knows only the model's "
                "predictions and the policy: extend this plan with the system's owners, "
                "users, environment and authorization."
            ),
            "props": props_of([("data-path", d.path), ("data-sha256", d.sha256)]),
            "system-information": {
                "information-types": [
                    {
                        "title": "Model predictions",
                        "description": (
                            "The model's predictions with the ground truth and the protected "
                            "attributes the controls read"
                            + (f" (columns: {', '.join(d.columns)})" if d.columns else "")
                            + "."
                        ),
                    }
                ]
            },
            "status": {
                "state": "other",
                "remarks": "fairpolicy does not know whether the model is deployed.",
            },
            "authorization-boundary": {
                "description": "Not established by fairpolicy: the boundary is the model "
                "under assessment and the data it was evaluated on."
            },
        },
        "system-implementation": {
            "components": [
                {
                    "uuid": this_system,
                    "type": "this-system",
                    "title": line(ids.subject_title),
                    "description": "The system as a whole.",
                    "status": {"state": "other"},
                },
                subject_component(results, ids),
            ]
        },
        "control-implementation": {
            "description": (
                "Each fairness control of the profile is implemented by evaluating the "
                "model's predictions with fairpolicy; the assessment results record each "
                "measured value."
            ),
            "implemented-requirements": requirements,
        },
        "back-matter": {
            "resources": [
                *_profile_resource(opts),
                policy_resource(results, ids, opts),
                *document_resources(results, opts),
                data_resource(results, ids, opts),
            ]
        },
    }
    model = SystemSecurityPlan.model_validate(prune(doc))
    return dump(model, opts)


def _threshold(f: Finding) -> str:
    """The threshold as the policy wrote it (``0.8``, ``0.8,1.25`` for between)."""
    parts, _ = written_parts(f.threshold, f.threshold_written)
    return ",".join(parts) if parts else "—"


def _profile_resource(opts: RenderOptions) -> list[Doc]:
    """The profile fairpolicy generated beside the SSP (``import-profile``), linked with
    the SHA-256 of its bytes; none when the profile is the policy (hashed as the policy)."""
    sha = opts.profile_sha256
    if not sha or not opts.profile_href:
        return []
    return [
        {
            "uuid": v5_uuid("resource", "generated-profile", opts.profile_href, sha),
            "title": "Profile generated beside this SSP",
            "description": "The profile this SSP imports, written by fairpolicy from the "
            "policy (with the catalog it imports), with the SHA-256 of its bytes.",
            "props": props_of(
                [("document-kind", "generated-profile"), ("profile-sha256", opts.profile_sha256)]
            ),
            "rlinks": [
                {
                    "href": opts.profile_href,
                    "media-type": "application/json",
                    "hashes": [{"algorithm": "SHA-256", "value": opts.profile_sha256}],
                }
            ],
        }
    ]
