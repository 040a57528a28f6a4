"""Plan first: the assessment plan written before any data is seen, and the check that a
run is the run that was planned.

``fairpolicy plan POLICY -o ap.json`` resolves the policy (with the same ``--bind``,
``--num-classes`` and statistics options a check would take) and writes the OSCAL
assessment plan an assessor approves: the controls, their objectives, the method (one TEST
activity per control with its metric, operator, threshold and bound columns) and the data
it expects (the columns and their roles). No data is read.

``fairpolicy check ... --plan ap.json`` then evaluates, and before writing anything
compares what it evaluated with the plan: the same controls, each with the same metric,
operator, threshold, bound columns and parameters, and the same policy (SHA-256). Any
difference is exit 2 naming it; on a match the assessment results import that plan.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from fairpolicy import present
from fairpolicy.errors import PolicyError, Problem
from fairpolicy.results import DataInfo, Results, RunInfo, Tool, summarize

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.outputs import Target

#: the planned props compared between a plan and a run (``control-source`` is where the
#: control was written, which may be spelled from another folder: not part of the method)
IGNORED = frozenset({"method", "control-source"})


def plan_results(
    policy: Any,
    *,
    bind: Any = None,
    num_classes: int | None = None,
    params: Mapping[str, Any] | None = None,
    timestamp: str | None = None,
    deterministic: bool = False,
) -> Results:
    """The policy's controls as results that hold no measurement (every finding
    ``inconclusive``, "planned: not evaluated"), which the assessment-plan writer renders
    as a plan. Raises PolicyError/UsageError as a check would."""
    from fairpolicy.assemble import finding, fixed_timestamp, now, policy_info
    from fairpolicy.metrics.registry import REGISTRY
    from fairpolicy.planning import apply_overrides, load
    from fairpolicy.policy.binds import binds_from_api
    from fairpolicy.version import __version__

    binds = binds_from_api(bind)
    pol = apply_overrides(load(policy, bound=binds.bound_roles()), binds, num_classes, params)
    when = fixed_timestamp(timestamp) or now(deterministic)
    findings = [
        finding(
            c,
            REGISTRY[c.metric_key],
            value=None,
            status="inconclusive",
            message="planned: not evaluated (no data was read)",
            reason="planned: not evaluated",
        )
        for c in pol.controls
    ]
    columns = sorted({col for c in pol.controls for col in c.inputs.values()})
    return present.Results(
        tool=Tool(version=__version__),
        policy=policy_info(pol),
        data=DataInfo(path=None, sha256=None, rows=0, columns=columns),
        run=RunInfo(
            started=when,
            finished=when,
            options={"planned": True, "timestamp": fixed_timestamp(timestamp)},
            cwd=None if deterministic else os.getcwd(),
        ),
        summary=summarize(findings, "fail"),  # every planned control is inconclusive
        findings=findings,
        warnings=list(pol.warnings),
    )


def write_plan(
    results: Results,
    output: str,
    out: Target,
    base: RenderOptions,
    *,
    ssp: str | None = None,
    ssp_sha256: str | None = None,
    write_ssp: str | None = None,
) -> None:
    """Write the assessment plan of ``results`` (:func:`plan_results`) to ``output``
    (classified as ``out``): it imports the team's SSP (``ssp``, with its SHA-256), or with
    ``write_ssp`` a minimal SSP written there with the profile (and catalog) it imports,
    all files staged together (``outputs.write_all``). ``base``: the options every written
    document shares (subject, assessors, deterministic)."""
    import dataclasses
    import hashlib

    from fairpolicy.formatters import get
    from fairpolicy.outputs import href, write_all

    files: list[tuple[str | Target, str]] = []
    ssp_path = ssp
    if write_ssp is not None:  # the SSP, with the profile (and catalog) it imports
        from fairpolicy.ssp import profile_chain

        ssp_path = write_ssp
        chain = profile_chain(results.policy.path, results.policy.form, ssp_path)
        ssp_text = get("oscal-ssp")(
            results,
            dataclasses.replace(base, path=ssp_path, profile_href=chain.profile_href),
        )
        files += [*chain.documents, (ssp_path, ssp_text)]
        ssp_sha256 = hashlib.sha256(ssp_text.encode()).hexdigest()
    opts = dataclasses.replace(
        base, path=output, ssp_href=href(ssp_path, output), ssp_sha256=ssp_sha256
    )
    write_all([*files, (out, get("oscal-ap")(results, opts))])


def is_plan(results: Results) -> bool:
    return bool(results.run.options.get("planned"))


def _props(node: Mapping[str, Any]) -> dict[str, str]:
    from fairpolicy.policy.schema import NS

    return {
        p["name"]: p["value"]
        for p in node.get("props", [])
        if p.get("ns") == NS and p["name"] not in IGNORED
    }


def read_plan(path: str) -> dict[str, Any]:
    """The assessment plan at ``path``, checked against the NIST schema. Raises
    PolicyError."""
    from fairpolicy.ssp import read_model

    data, _ = read_model(
        path,
        "assessment-plan",
        "--plan",
        "an OSCAL assessment plan",
        "pass the plan written by `fairpolicy plan POLICY -o ap.json`.",
    )
    body: dict[str, Any] = dict(data)
    return body


def compare(plan: Mapping[str, Any], results: Results, path: str) -> list[Problem]:
    """What the run did that the plan did not plan (one problem per difference)."""
    from fairpolicy.formatters._oscal_common import planned_props

    problems: list[Problem] = []
    planned: dict[str, dict[str, str]] = {}
    for act in plan.get("local-definitions", {}).get("activities", []):
        sel = act.get("related-controls", {}).get("control-selections", [])
        for s in sel:
            for inc in s.get("include-controls", []):
                planned[inc["control-id"]] = _props(act)
    ran = {f.control_id: f for f in results.findings}
    for cid in sorted(set(planned) - set(ran)):
        problems.append(Problem(f"the plan tests control '{cid}', the run did not.", file=path))
    for cid in sorted(set(ran) - set(planned)):
        problems.append(
            Problem(f"the run tested control '{cid}', which the plan does not plan.", file=path)
        )
    for cid in sorted(set(ran) & set(planned)):
        now = _props({"props": planned_props(ran[cid])})
        then = planned[cid]
        for key in sorted(set(now) | set(then)):
            if now.get(key) != then.get(key):
                problems.append(
                    Problem(
                        f"{key} is {_shown(now.get(key))} in this run and "
                        f"{_shown(then.get(key))} in the plan.",
                        file=path,
                        control=cid,
                        key=key,
                    )
                )
    sha = None
    for r in plan.get("back-matter", {}).get("resources", []):
        sha = sha or _props(r).get("policy-sha256")
    planned_docs: dict[str, str] = {
        str(_props(r).get("document-sha256")): str(r.get("title", ""))
        for r in plan.get("back-matter", {}).get("resources", [])
        if _props(r).get("document-sha256")
        and _props(r).get("document-kind") != "system-security-plan"
    }
    ran_docs = {
        d.sha256: d.path for d in results.policy.documents if d.kind != "system-security-plan"
    }
    for digest, where in sorted(ran_docs.items()):
        if digest not in planned_docs:
            problems.append(
                Problem(
                    f"'{where}' (SHA-256 {digest}) shaped this run's controls but is not the "
                    "document the plan recorded: an imported profile or catalog changed since "
                    "the plan was written.",
                    file=path,
                )
            )
    for digest, doc_title in sorted(planned_docs.items()):
        if digest not in ran_docs:
            problems.append(
                Problem(
                    f"the plan recorded {doc_title} (SHA-256 {digest}), which this run did "
                    "not read.",
                    file=path,
                )
            )
    if sha != results.policy.sha256:
        problems.append(
            Problem(
                f"the policy's SHA-256 is {results.policy.sha256} in this run and {sha} in the "
                "plan: the policy changed since the plan was written.",
                file=path,
            )
        )
    return problems


def _shown(value: str | None) -> str:
    return "absent" if value is None else f"'{value}'"


def verify(plan_path: str, results: Results) -> None:
    """Raise PolicyError listing every difference between the run and the plan."""
    problems = compare(read_plan(plan_path), results, plan_path)
    if problems:
        last = problems[-1]
        problems[-1] = Problem(
            last.message,
            file=last.file,
            control=last.control,
            key=last.key,
            hint="evaluate the policy the plan was written for, or write a new plan "
            "(`fairpolicy plan POLICY -o ap.json` with the same --bind and options) and have "
            "it approved.",
        )
        raise PolicyError(
            problems,
            title="the run does not match its assessment plan (--plan)",
        )
