"""Plan first: the assessment plan written before any data is seen, and the check that a
run is the run that was planned.

``fairpolicy plan POLICY -o ap.json`` resolves the policy (with the same ``--bind``,
``--num-classes`` and statistics options a check would take) and writes the OSCAL
assessment plan an assessor approves: the controls, their objectives, the method (one TEST
activity per control with its metric, operator, threshold and bound columns) and the data
it expects (the columns and their roles). No data is read.

The plan also pins every setting that can change a verdict (:mod:`fairpolicy.gate_settings`:
``--fail-on``, ``--inconclusive``, ``--subject``, ``--seed``, ``--bind``, the statistics
options, ``--max-regression``, ``--score-decimals``), the deviations its approver allows
(``--allow-deviation``) and its approval (``--approver``, the time, the SHA-256 of the
approved content).

``fairpolicy check ... --plan ap.json`` and ``fairpolicy export oscal ... --plan ap.json``
then verify the run through :func:`verify`, the one verification: the plan's approved
content recomputed, every pinned setting, the same controls each with the same metric,
operator, threshold, bound columns and parameters, and the same policy and documents
(SHA-256). Any difference is exit 2 naming it and nothing is written; on a match the
assessment results import that plan and say it was verified (only from the
:class:`~fairpolicy.gate_settings.VerifiedPlan` :func:`verify` returns). A plan written
before settings were pinned is refused with the fix (:func:`read_plan`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fairpolicy import gate_settings, present
from fairpolicy.errors import PolicyError, Problem, UsageError
from fairpolicy.results import DataInfo, Results, RunInfo, Tool, summarize

if TYPE_CHECKING:
    from fairpolicy.formatters import RenderOptions
    from fairpolicy.gate_settings import VerifiedPlan
    from fairpolicy.outputs import Target


def plan_results(
    policy: Any,
    *,
    bind: Any = None,
    num_classes: int | None = None,
    params: Mapping[str, Any] | None = None,
    timestamp: str | None = None,
    deterministic: bool = False,
    positive_label: str | None = None,
    fail_on: str = "error",
    inconclusive: str = "fail",
    seed: Any = None,
    subject: str | None = None,
    max_regression: Any = None,
    score_decimals: int | None = None,
    allow_deviation: Sequence[str] = (),
    window: str | None = None,
    window_tz: str | None = None,
    window_gate: str | None = None,
    min_window_rows: int | None = None,
    pool_windows: bool = False,
    reference: str | None = None,
) -> Results:
    """The policy's controls as results that hold no measurement (every finding
    ``inconclusive``, "planned: not evaluated"), which the assessment-plan writer renders
    as a plan; the run settings it pins (:mod:`fairpolicy.gate_settings`) recorded as a
    check records them. Raises PolicyError/UsageError as a check would."""
    from fairpolicy.assemble import finding, fixed_timestamp, now, policy_info
    from fairpolicy.metrics.registry import REGISTRY
    from fairpolicy.planning import (
        DEFAULT_SEED,
        apply_overrides,
        check_stats_options,
        load,
        option_number_arg,
        score_decimals_arg,
    )
    from fairpolicy.policy.binds import binds_from_api
    from fairpolicy.results import run_metadata
    from fairpolicy.version import __version__

    if fail_on not in ("error", "warning", "never"):
        raise UsageError(f"fail_on must be error, warning or never, not {fail_on!r}.")
    if inconclusive not in ("pass", "warn", "fail"):
        raise UsageError(f"inconclusive must be pass, warn or fail, not {inconclusive!r}.")
    for name in allow_deviation:
        if name not in gate_settings.SETTINGS:
            from fairpolicy.errors import did_you_mean

            raise UsageError(
                f"--allow-deviation {name}: not a pinned setting."
                f"{did_you_mean(name, gate_settings.SETTINGS)} Settings: "
                f"{', '.join(gate_settings.SETTINGS)}."
            )
    seed = option_number_arg("seed", seed)
    from fairpolicy.monitor import monitoring

    # the window settings of a monitoring run (issue 30), validated as a check does
    mon = monitoring(window, window_tz, window_gate, min_window_rows, pool_windows, reference)
    stats = {k: v for k, v in (params or {}).items() if v is not None}
    check_stats_options(stats)
    if max_regression is not None:
        from fairpolicy.baseline import check_max_regression

        max_regression = check_max_regression(max_regression, "--max-regression")
    decimals = None if score_decimals is None else score_decimals_arg(score_decimals)
    subject = run_metadata(subject, None)[0]
    binds = binds_from_api(bind)
    pol = apply_overrides(
        load(policy, bound=binds.bound_roles()), binds, num_classes, stats, positive_label
    )
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
    options: dict[str, Any] = {
        "planned": True,
        "timestamp": fixed_timestamp(timestamp),
        **binds.as_options(),
        "num_classes": num_classes,
        "positive_label": positive_label,
        **stats,
    }
    # the same reading as a check's record (fairpolicy.assemble): unset options left out
    options = {k: v for k, v in options.items() if v or k in ("planned", "timestamp")}
    if decimals is not None:
        options["score_decimals"] = decimals
    if max_regression is not None:
        options["max_regression"] = max_regression
    if mon is not None:  # as a monitoring check records them (fairpolicy.runner)
        options.update({k: v for k, v in mon.as_options().items() if v})
    if allow_deviation:
        options["allow_deviation"] = sorted(set(allow_deviation))
    results = present.Results(
        tool=Tool(version=__version__),
        policy=policy_info(pol),
        data=DataInfo(path=None, sha256=None, rows=0, columns=columns),
        run=RunInfo(
            started=when,
            finished=when,
            options=options,
            cwd=None if deterministic else os.getcwd(),
            fail_on=fail_on,  # type: ignore[arg-type]
            inconclusive=inconclusive,  # type: ignore[arg-type]
            seed=DEFAULT_SEED if seed is None else int(seed),
        ),
        summary=summarize(findings, "fail"),  # every planned control is inconclusive
        findings=findings,
        warnings=list(pol.warnings),
    )
    return results if subject is None else results.model_copy(update={"subject": subject})


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
    from fairpolicy.outputs import href, refuse_written, write_all

    files: list[tuple[str | Target, str]] = []
    labels: list[tuple[str, str | Target]] = [(f"-o {output}", out)]
    ssp_path = ssp
    if write_ssp is not None:  # the SSP, with the profile (and catalog) it imports
        from fairpolicy.ssp import profile_chain

        ssp_path = write_ssp
        chain = profile_chain(results.policy.path, results.policy.form, ssp_path)
        ssp_text = get("oscal-ssp")(
            results,
            dataclasses.replace(
                base,
                path=ssp_path,
                profile_href=chain.profile_href,
                profile_sha256=chain.profile_sha256,
            ),
        )
        files += [*chain.documents, (ssp_path, ssp_text)]
        labels.append((f"--write-ssp {write_ssp}", write_ssp))
        labels += [(f"{p} (written beside --write-ssp {write_ssp})", p) for p, _ in chain.documents]
        ssp_sha256 = hashlib.sha256(ssp_text.encode()).hexdigest()
    opts = dataclasses.replace(
        base, path=output, ssp_href=href(ssp_path, output), ssp_sha256=ssp_sha256
    )
    inputs = [
        ("policy", results.policy.path),
        *((f"policy's {d.kind}", d.path) for d in results.policy.documents),
        ("SSP", ssp),
    ]
    refuse_written(labels, inputs, noun="plan")  # every file written, siblings too
    write_all([*files, (out, get("oscal-ap")(results, opts))])


def is_plan(results: Results) -> bool:
    return bool(results.run.options.get("planned"))


def read_plan(path: str) -> tuple[dict[str, Any], str]:
    """(the body, the file's SHA-256) of the assessment plan at ``path``, checked against
    the NIST schema; a plan that pins no settings (written before they were pinned) is
    refused with the fix. Raises PolicyError."""
    from fairpolicy.ssp import read_model

    data, sha = read_model(
        path,
        "assessment-plan",
        "--plan",
        "an OSCAL assessment plan",
        "pass the plan written by `fairpolicy plan POLICY -o ap.json`.",
    )
    body: dict[str, Any] = dict(data)
    if gate_settings.plan_settings(body) is None:
        # its approver approved no settings: reading it as "the defaults" would put words
        # in the approval, and the defaults (the seed) belong to the version reading it
        raise PolicyError(
            "the plan pins none of the settings that can change a verdict (--fail-on, "
            "--inconclusive, --seed, --subject, the statistics options…): it was written "
            "before fairpolicy pinned them, so it cannot show which settings were approved.",
            file=path,
            hint="write the plan again with `fairpolicy plan POLICY -o ap.json` and the "
            "options the run will use (--fail-on, --inconclusive, --bind, …), and have it "
            "approved (--approver 'NAME <EMAIL>').",
        )
    return body, sha


def planned_subject(body: Mapping[str, Any]) -> str | None:
    """The subject (``--subject``) the plan pins, or None."""
    pinned = gate_settings.plan_settings(body)
    return None if pinned is None else pinned[0].get("subject")


#: the option naming each setting in messages
def _flag(name: str) -> str:
    return f"--{name}"


def _settings_problems(
    plan: Mapping[str, Any], results: Results, path: str
) -> tuple[list[Problem], list[tuple[str, str | None, str | None]]]:
    """The settings the run changed (one problem each, naming the setting, where the
    run's value came from and both values) and the deviations the plan allows."""
    pinned, allowed = gate_settings.plan_settings(plan) or ({}, [])
    ran = gate_settings.of_results(results)
    where = gate_settings.sources(results)
    problems: list[Problem] = [
        Problem(
            f"the plan pins the setting '{name}', which this version of fairpolicy does not "
            "know: it cannot verify a run against it.",
            file=path,
            key=name,
            hint="verify with the fairpolicy version that wrote the plan, or a newer one.",
        )
        for name in gate_settings.unknown_settings(plan)
    ]
    deviations: list[tuple[str, str | None, str | None]] = []
    for name in gate_settings.SETTINGS:
        now, then = ran.get(name), pinned.get(name)
        if now == then:
            continue
        if name in allowed:
            deviations.append((name, then, now))
            continue
        kind, file = where[name]
        came = f" (set by the configuration file {file})" if kind == "config-file" else ""
        problems.append(
            Problem(
                f"the setting {_flag(name)} is {_given(now)} in this run{came} and "
                f"{_given(then)} in the approved plan.",
                file=path,
                key=name,
            )
        )
    return problems, deviations


def _given(value: str | None) -> str:
    return "not given" if value is None else f"'{value}'"


def _digest_problems(plan: Mapping[str, Any], path: str) -> list[Problem]:
    recorded = gate_settings.approval(plan).get(gate_settings.DIGEST)
    computed = gate_settings.content_digest(plan)
    if recorded == computed:
        return []
    if recorded is None:
        msg = "the plan records no SHA-256 of its approved content (the approval part)."
    else:
        msg = (
            f"the plan was edited after it was written: its approval records the content "
            f"SHA-256 {recorded}, and its content now hashes to {computed}."
        )
    return [Problem(msg, file=path)]


def _sequential(then: dict[str, str], now: dict[str, str], results: Results) -> dict[str, str]:
    """A control's planned props as a ``sequential`` window gate runs them (issue 30): the
    newest window t's interval at the level 1 − α_t derived from the planned ``ci_level``
    (:func:`fairpolicy.stats.sequential.window_level`), with
    :data:`~fairpolicy.monitor.SEQUENTIAL_RESAMPLES` resamples when the plan sets none.
    The window gate is pinned, so these follow from the plan; any other level differs."""
    w = results.windows
    if w is None or w.gate != "sequential" or not w.windows:
        return then
    from fairpolicy.monitor import SEQUENTIAL_RESAMPLES
    from fairpolicy.stats.sequential import window_level

    out = dict(then)
    if "param.ci" not in then and now.get("param.ci") == str(SEQUENTIAL_RESAMPLES):
        out["param.ci"] = now["param.ci"]
    try:
        level = window_level(len(w.windows), 1.0 - float(then.get("param.ci_level", "0.95")))
        if float(now.get("param.ci_level", "nan")) == level:
            out["param.ci_level"] = now["param.ci_level"]  # the derived level, as written
    except ValueError:
        pass  # a level that is no number: compared as written, and named
    return out


def compare(plan: Mapping[str, Any], results: Results, path: str) -> list[Problem]:
    """What the run did that the plan did not plan (one problem per difference)."""
    return _compare(plan, results, path)[0]


def _compare(
    plan: Mapping[str, Any], results: Results, path: str
) -> tuple[list[Problem], list[tuple[str, str | None, str | None]]]:
    from fairpolicy.formatters._oscal_common import planned_props

    problems = _digest_problems(plan, path)
    settings, deviations = _settings_problems(plan, results, path)
    problems += settings
    planned = gate_settings.planned_controls(plan)
    ran = {f.control_id: f for f in results.findings}
    for cid in sorted(set(planned) - set(ran)):
        problems.append(Problem(f"the plan tests control '{cid}', the run did not.", file=path))
    for cid in sorted(set(ran) - set(planned)):
        problems.append(
            Problem(f"the run tested control '{cid}', which the plan does not plan.", file=path)
        )
    # a setting the plan lets differ also lets the control props it sets differ: the
    # statistics options' parameters, the bound columns (bind)
    _, allowed = gate_settings.plan_settings(plan) or ({}, [])
    free = {f"param.{gate_settings.SETTINGS[a]}" for a in allowed if gate_settings.SETTINGS.get(a)}
    for cid in sorted(set(ran) & set(planned)):
        now = gate_settings.ns_props({"props": planned_props(ran[cid])})
        then = _sequential(planned[cid], now, results)
        for key in sorted(set(now) | set(then)):
            if key in free or ("bind" in allowed and key.startswith("input.")):
                continue
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
    _props = gate_settings.ns_props
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
    return problems, deviations


def _shown(value: str | None) -> str:
    return "absent" if value is None else f"'{value}'"


def verify(plan_path: str, results: Results) -> VerifiedPlan:
    """The one verification of a run against its approved plan (``check --plan`` and
    ``export --plan`` alike): the plan read and checked against the NIST schema, its
    approved content recomputed, every pinned setting, every control's method, the
    policy and every document it imports compared. Returns the :class:`VerifiedPlan`
    the writers need to state "verified"; raises PolicyError listing every difference."""
    body, sha = read_plan(plan_path)
    problems, deviations = _compare(body, results, plan_path)
    if problems:
        last = problems[-1]
        problems[-1] = Problem(
            last.message,
            file=last.file,
            control=last.control,
            key=last.key,
            hint="run with the settings the plan pins (or evaluate the policy it was written "
            "for), or write a new plan (`fairpolicy plan POLICY -o ap.json` with the same "
            "--bind and options; `--allow-deviation SETTING` lets a setting differ) and have "
            "it approved.",
        )
        raise PolicyError(
            problems,
            title="the run does not match its assessment plan (--plan)",
        )
    comps = body.get("local-definitions", {}).get("components", [])
    subject = comps[0] if comps else {}
    approval = gate_settings.approval(body)
    approvers = gate_settings.approvers(body)
    return gate_settings.VerifiedPlan(
        path=plan_path,
        sha256=sha,
        uuid=str(body.get("uuid")),
        title=str(body.get("metadata", {}).get("title", "")),
        subject_uuid=subject.get("uuid"),
        subject_title=subject.get("title"),
        digest=str(approval.get(gate_settings.DIGEST)),
        approvers=approvers,
        approved_at=approval.get("approved-at"),
        deviations=tuple(deviations),
        statements=ssp_statements(plan_path, body),
    )


def ssp_statements(plan_path: str, body: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(control id, statement UUID) of the implementation statements in the SSP the plan
    imports, when it is a local file that reads as an SSP; else none (the findings then
    name no statement: they never point at one that is not there)."""
    from pathlib import Path
    from urllib.parse import unquote

    from fairpolicy.policy.oscal import read_document

    href = str(body.get("import-ssp", {}).get("href", ""))
    if href.startswith("#"):
        resources = body.get("back-matter", {}).get("resources", [])
        res: Mapping[str, Any] = next((r for r in resources if r.get("uuid") == href[1:]), {})
        href = str((res.get("rlinks") or [{}])[0].get("href", ""))
    if not href or ":" in href.split("/")[0] or href.startswith("/"):
        return ()
    path = Path(plan_path).parent / unquote(href)
    try:
        data, _ = read_document(path)
        reqs = data["system-security-plan"]["control-implementation"]["implemented-requirements"]
        out: dict[str, str] = {}
        for req in reqs:
            for st in req.get("statements", []):
                out.setdefault(str(req["control-id"]), str(st["uuid"]))
    except Exception:  # an SSP that does not read (or not as ours) names no statement
        return ()
    return tuple(sorted(out.items()))
