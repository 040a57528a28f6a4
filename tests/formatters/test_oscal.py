"""OSCAL assessment results (``-o oscal``) and assessment plan (``-o oscal-ap``).

Every document written here is re-read with compliance-trestle and validated against
the NIST OSCAL 1.2.3 JSON schema (``fairpolicy.oscal_schema``).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest
import yaml

from fairpolicy.cli import main
from fairpolicy.errors import OutputError
from fairpolicy.formatters import RenderOptions, get
from fairpolicy.formatters.oscal import STATE
from fairpolicy.oscal_schema import validate_document
from fairpolicy.policy.schema import NS
from fairpolicy.results import Finding, Results, load_results

ROOT = Path(__file__).resolve().parents[2]
CREDIT = "examples/credit/predictions.csv"
DERM = "examples/dermatology/predictions.csv"
LENDING_BIND = ["--bind", "target=approved", "--bind", "prediction=predicted"]

#: name → (policy, data, extra args, exit code); paths relative to the repository
CASES: dict[str, tuple[str, str, list[str], int]] = {
    "credit": ("examples/credit/policy.yaml", CREDIT, [], 0),
    "dermatology": ("examples/dermatology/policy.yaml", DERM, [], 1),
    "binary-lending": ("policies/binary-lending/profile.json", CREDIT, LENDING_BIND, 0),
    "medical": ("policies/multiclass-medical-multisite/profile.json", DERM, [], 1),
    "samd": ("policies/samd-multisite/profile.json", DERM, [], 1),
}
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[45][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


# ---------------------------------------------------------------- helpers


def run(*argv: str) -> int:
    return main(list(argv), stdout=io.StringIO())


def read(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    doc: dict[str, Any] = (
        yaml.safe_load(text)
        if path.suffix in (".yaml", ".yml")
        else (json.loads(text, parse_constant=_no_constant))
    )
    return doc


def _no_constant(name: str) -> Any:
    raise AssertionError(f"non-finite number {name} in an OSCAL document")


def trestle_read(path: Path, model: str) -> Any:
    from trestle.oscal.assessment_plan import AssessmentPlan
    from trestle.oscal.assessment_results import AssessmentResults

    cls = AssessmentResults if model == "assessment-results" else AssessmentPlan
    parsed = cls.oscal_read(path)
    assert parsed is not None, path
    return parsed


def walk(node: Any) -> Iterator[tuple[str, Any]]:
    """Every (key, value) pair of a JSON tree."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


def props(node: dict[str, Any], name: str) -> list[str]:
    return [p["value"] for p in node.get("props", []) if p["name"] == name and p.get("ns") == NS]


def prop(node: dict[str, Any], name: str) -> str | None:
    values = props(node, name)
    assert len(values) <= 1, (name, values)
    return values[0] if values else None


def check_references(doc: dict[str, Any], imported: dict[str, Any] | None = None) -> None:
    """Every ``#fragment`` href names a back-matter resource; every *-uuid ref resolves (in
    the document, or in the plan it imports: ``imported``), and the results never redefine
    an activity of the plan (they refer to it)."""
    body = next(iter(doc.values()))
    resources = {r["uuid"] for r in body.get("back-matter", {}).get("resources", [])}
    defined = {v for k, v in walk(body) if k == "uuid"}
    assert len(defined) == sum(1 for k, _ in walk(body) if k == "uuid"), "a UUID is repeated"
    if imported:
        from_plan = {v for k, v in walk(imported) if k == "uuid"}
        # the plan's activities are referred to, never redefined
        acts = {a["uuid"] for a in body.get("local-definitions", {}).get("activities", [])}
        redefined = acts & from_plan
        assert not redefined, f"the results redefine the plan's {sorted(redefined)}"
        defined |= from_plan
    for k, v in walk(body):
        if k == "href" and v.startswith("#"):
            assert v[1:] in resources, f"dangling fragment {v}"
        if k in (
            "actor-uuid",
            "subject-uuid",
            "observation-uuid",
            "risk-uuid",
            "task-uuid",
            "activity-uuid",
            "component-uuid",
        ):
            assert v in defined, f"{k} {v} is not defined in the document"


def import_ap_target(ar_path: Path, ar: dict[str, Any]) -> Path | None:
    """The file the AR's ``import-ap`` names through its back-matter resource, or None
    (no separate plan: the resource is the policy's)."""
    body = ar["assessment-results"]
    href = body["import-ap"]["href"]
    assert href.startswith("#"), "import-ap names a back-matter resource (FedRAMP's form)"
    (res,) = [r for r in body["back-matter"]["resources"] if r["uuid"] == href[1:]]
    if prop(res, "document-kind") != "assessment-plan":
        return None
    (rlink,) = res["rlinks"]
    assert rlink["hashes"][0]["algorithm"] == "SHA-256"
    return href_target(ar_path, rlink["href"])


def ap_link(ar: dict[str, Any]) -> str:
    """The href of the plan the AR imports (the rlink of import-ap's resource)."""
    body = ar["assessment-results"]
    href = body["import-ap"]["href"]
    (res,) = [r for r in body["back-matter"]["resources"] if f"#{r['uuid']}" == href]
    link: str = res["rlinks"][0]["href"]
    return link


def href_target(doc_path: Path, href: str) -> Path:
    if href.startswith("file:"):
        return Path(unquote(urlparse(href).path))
    return (doc_path.parent / unquote(href)).resolve()


def check_documents(ar_path: Path, ap_path: Path | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Schema + trestle + references for an AR (and its AP); returns both parsed."""
    ar = read(ar_path)
    assert list(ar) == ["assessment-results"]
    assert validate_document(ar, "assessment-results") == []
    trestle_read(ar_path, "assessment-results")
    target = import_ap_target(ar_path, ar)
    ap: dict[str, Any] = {}
    if ap_path is not None:
        assert target == ap_path.resolve()
    ap_path = target
    if ap_path is not None:
        ap = read(ap_path)
        assert list(ap) == ["assessment-plan"]
        assert validate_document(ap, "assessment-plan") == []
        trestle_read(ap_path, "assessment-plan")
        check_references(ap)
    check_references(ar, ap)
    # every file the documents link exists and has the SHA-256 they state
    for path, doc in ((ar_path, ar), (ap_path, ap)):
        for k, v in walk(doc):
            if k == "rlinks":
                for rlink in v:
                    target = href_target(path, rlink["href"])  # type: ignore[arg-type]
                    digest = hashlib.sha256(target.read_bytes()).hexdigest()
                    assert [h["value"] for h in rlink["hashes"]] == [digest]
    return ar, ap


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Each case checked once, writing JSON results, an AR and an AP."""
    out: dict[str, dict[str, Any]] = {}
    base = tmp_path_factory.mktemp("oscal")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        mp.delenv("SOURCE_DATE_EPOCH", raising=False)
        for name, (policy, data, extra, code) in CASES.items():
            d = base / name / "out dir"  # a space: hrefs must be percent-encoded
            d.mkdir(parents=True)
            if name == "binary-lending":  # absolute paths: file: URIs
                policy, data = str(ROOT / policy), str(ROOT / data)
            ar, ap, res = d / "ar.json", d / "plan" / "ap.json", d / "results.json"
            ap.parent.mkdir()
            argv = ["check", policy, data, *extra, "-o", f"json={res}"]
            argv += ["-o", f"oscal={ar}", "-o", f"oscal-ap={ap}"]
            assert run(*argv) == code, name
            out[name] = {"ar": ar, "ap": ap, "results": load_results(str(res)), "json": res}
    return out


# ---------------------------------------------------------------- every case


@pytest.mark.parametrize("name", list(CASES))
def test_documents_are_valid_and_linked(name: str, runs: dict[str, dict[str, Any]]) -> None:
    r = runs[name]
    ar, ap = check_documents(r["ar"], r["ap"])
    meta = ar["assessment-results"]["metadata"]
    assert meta["oscal-version"] == "1.2.3"
    assert meta["title"].startswith("fairpolicy assessment results — ")
    assert ap["assessment-plan"]["import-ssp"]["href"].startswith("#")
    text = r["ar"].read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    hrefs = [v for k, v in walk(ar) if k == "href" and not v.startswith("#")]
    assert hrefs and not any(h.startswith("file:") for h in hrefs)  # never absolute
    if name != "binary-lending":  # relative paths in the results are rebased onto the AR's folder
        rlinks = [x["href"] for k, v in walk(ar) if k == "rlinks" for x in v]
        inputs = [h for h in rlinks if h not in ("results.json", "plan/ap.json")]
        assert inputs and all(h.startswith("../") for h in inputs)
        # every rlink (the results JSON written beside it too) resolves from the AR's folder
        assert all((r["ar"].parent / h).exists() for h in rlinks), rlinks


@pytest.mark.parametrize("name", list(CASES))
def test_one_observation_and_finding_per_control(
    name: str, runs: dict[str, dict[str, Any]]
) -> None:
    results: Results = runs[name]["results"]
    body = read(runs[name]["ar"])["assessment-results"]
    (result,) = body["results"]
    by_id = {f.control_id: f for f in results.findings}
    assert result["start"] == results.run.started and result["end"] == results.run.finished
    assert prop(result, "policy-sha256") == results.policy.sha256
    assert prop(result, "data-sha256") == results.data.sha256
    assert prop(result, "data-rows") == str(results.data.rows)
    assert prop(result, "policy-title") == results.policy.title
    (selection,) = result["reviewed-controls"]["control-selections"]
    assert [c["control-id"] for c in selection["include-controls"]] == list(by_id)

    local = result["local-definitions"]
    (subject,) = local["components"]
    (tool,) = local["assessment-assets"]["components"]
    assert tool["title"] == f"fairpolicy {results.tool.version}"

    observations = {prop(o, "control-id"): o for o in result["observations"]}
    assert list(observations) == list(by_id)
    for cid, o in observations.items():
        f = by_id[cid]
        assert o["methods"] == ["TEST"]
        assert o["collected"] == results.run.finished
        assert o["subjects"] == [
            {"subject-uuid": subject["uuid"], "type": "component", "title": subject["title"]}
        ]
        assert o["origins"][0]["actors"] == [{"type": "tool", "actor-uuid": tool["uuid"]}]
        assert prop(o, "metric_key") == f.metric_key
        assert prop(o, "status") == f.status
        assert prop(o, "operator") == f.operator
        if f.value is None:
            assert prop(o, "measured-value") is None and prop(o, "value-undefined-reason")
        else:
            assert float(prop(o, "measured-value") or "nan") == f.value
        for role, column in f.inputs.items():
            assert prop(o, f"input.{role}") == column
        assert props(o, "group-n") == [f"{g.group}={g.n}" for g in f.groups]
        assert len(props(o, "excluded-group")) == len(f.excluded_groups)
        assert [e["href"][0] for e in o["relevant-evidence"]] == ["#", "#"]

    risks = {prop(k, "control-id"): k for k in result.get("risks", [])}
    assert set(risks) == {f.control_id for f in results.findings if f.status in ("fail", "warn")}
    findings = result["findings"]
    assert [prop(x, "control-id") for x in findings] == list(by_id)
    obs_uuid = {cid: o["uuid"] for cid, o in observations.items()}
    for x in findings:
        f = by_id[prop(x, "control-id") or ""]
        state, reason = STATE[f.status]
        assert x["target"]["status"]["state"] == state
        assert x["target"]["status"]["reason"] == reason
        if f.objective_id:
            assert x["target"]["type"] == "objective-id"
            assert x["target"]["target-id"] == f.objective_id
        else:
            assert x["target"]["type"] == "statement-id"
            assert x["target"]["target-id"] == (f.statement_id or f"{f.control_id}_smt")
        assert x["related-observations"] == [{"observation-uuid": obs_uuid[f.control_id]}]
        assert x["origins"][0]["actors"][0]["type"] == "tool"
        if f.control_id in risks:
            risk = risks[f.control_id]
            assert x["related-risks"] == [{"risk-uuid": risk["uuid"]}]
            assert risk["status"] == "open"
            assert risk["origins"][0]["actors"] == [{"type": "tool", "actor-uuid": tool["uuid"]}]
            assert prop(risk, "severity") == f.severity
            assert prop(risk, "risk_id") == f.risk_id
            assert f.message in risk["description"]
        else:
            assert "related-risks" not in x

    # back-matter: the plan (import-ap), then policy, data, results JSON with their SHA-256
    plan, *resources = body["back-matter"]["resources"]
    assert body["import-ap"]["href"] == f"#{plan['uuid']}"
    assert prop(plan, "verified") == "false"  # written by the same run, not approved
    assert (
        plan["rlinks"][0]["hashes"][0]["value"]
        == hashlib.sha256(runs[name]["ap"].read_bytes()).hexdigest()
    )
    sha = hashlib.sha256(runs[name]["json"].read_bytes()).hexdigest()
    assert prop(resources[2], "results-sha256") == sha
    assert resources[0]["rlinks"][0]["hashes"][0]["value"] == results.policy.sha256
    assert resources[1]["rlinks"][0]["hashes"][0] == {
        "algorithm": "SHA-256",
        "value": results.data.sha256,
    }


@pytest.mark.parametrize("name", list(CASES))
def test_plan_and_results_share_uuids(name: str, runs: dict[str, dict[str, Any]]) -> None:
    ar = read(runs[name]["ar"])["assessment-results"]
    ap = read(runs[name]["ap"])["assessment-plan"]
    local = ar["results"][0]["local-definitions"]
    assert local["components"] == ap["local-definitions"]["components"]
    assert local["assessment-assets"] == ap["assessment-assets"]
    # the plan's task also pins the settings (props, remarks); the same task otherwise
    assert local["tasks"] == [
        {k: v for k, v in t.items() if k not in ("props", "remarks")} for t in ap["tasks"]
    ]
    # the plan defines the activities; the results refer to them and never redefine them
    assert "local-definitions" not in ar
    assert {a["uuid"] for a in ap["local-definitions"]["activities"]} == {
        x["activity-uuid"] for t in local["tasks"] for x in t["associated-activities"]
    }
    assert ap["reviewed-controls"] == ar["results"][0]["reviewed-controls"]
    n = len(runs[name]["results"].findings)
    activities = ap["local-definitions"]["activities"]
    assert len(activities) == n
    for a in activities:
        assert {"name": "method", "value": "TEST"} in a["props"]
    (task,) = ap["tasks"]
    assert [x["activity-uuid"] for x in task["associated-activities"]] == [
        a["uuid"] for a in activities
    ]
    subject = ap["local-definitions"]["components"][0]["uuid"]
    assert ap["assessment-subjects"][0]["include-subjects"] == [
        {"subject-uuid": subject, "type": "component"}
    ]


def test_pass_and_fail_are_both_covered(runs: dict[str, dict[str, Any]]) -> None:
    statuses = {f.status for r in runs.values() for f in r["results"].findings}
    assert {"pass", "fail", "warn"} <= statuses


# ---------------------------------------------------------------- options


def _check(
    tmp: Path, name: str, *extra: str, ar: str = "ar.json", ap: str | None = "ap.json"
) -> int:
    policy, data, bind, _ = CASES[name]
    argv = ["check", policy, data, *bind, *extra, "-o", f"oscal={tmp / ar}"]
    if ap:
        argv += ["-o", f"oscal-ap={tmp / ap}"]
    return run(*argv)


@pytest.fixture
def in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


@pytest.mark.usefixtures("in_root")
def test_yaml_by_extension(tmp_path: Path) -> None:
    assert _check(tmp_path, "credit", "--deterministic", ar="ar.yaml", ap="ap.yml") == 0
    assert (tmp_path / "ar.yaml").read_text(encoding="utf-8").startswith("assessment-results:\n")
    assert (tmp_path / "ap.yml").read_text(encoding="utf-8").startswith("assessment-plan:\n")
    yaml_ar, yaml_ap = check_documents(tmp_path / "ar.yaml", tmp_path / "ap.yml")
    assert _check(tmp_path, "credit", "--deterministic") == 0
    json_ar, json_ap = check_documents(tmp_path / "ar.json", tmp_path / "ap.json")
    assert yaml_ap == json_ap
    assert ap_link(yaml_ar) == "ap.yml" and ap_link(json_ar) == "ap.json"
    for doc in (yaml_ar, json_ar):  # the plan resource: its link and the plan's hash differ
        body = doc["assessment-results"]
        body.pop("import-ap")
        body["back-matter"]["resources"].pop(0)
    assert yaml_ar == json_ar


@pytest.mark.usefixtures("in_root")
def test_without_plan_import_ap_names_the_policy(tmp_path: Path) -> None:
    assert _check(tmp_path, "dermatology", ap=None) == 1
    ar, _ = check_documents(tmp_path / "ar.json", None)
    body = ar["assessment-results"]
    href = body["import-ap"]["href"]
    (policy,) = [r for r in body["back-matter"]["resources"] if f"#{r['uuid']}" == href]
    assert policy["title"].startswith("Policy: ")
    digest = hashlib.sha256((ROOT / CASES["dermatology"][0]).read_bytes()).hexdigest()
    assert policy["rlinks"][0]["hashes"] == [{"algorithm": "SHA-256", "value": digest}]


@pytest.mark.usefixtures("in_root")
def test_embed_evidence_is_the_results_json(tmp_path: Path) -> None:
    policy, data, _, _ = CASES["credit"]
    argv = ["check", policy, data, "--embed-evidence", "-o", f"json={tmp_path / 'r.json'}"]
    assert run(*argv, "-o", f"oscal={tmp_path / 'ar.json'}") == 0
    ar, _ = check_documents(tmp_path / "ar.json", None)
    (evidence,) = [r for r in ar["assessment-results"]["back-matter"]["resources"] if "base64" in r]
    raw = base64.b64decode(evidence["base64"]["value"], validate=True)
    assert raw == (tmp_path / "r.json").read_bytes()
    assert prop(evidence, "results-sha256") == hashlib.sha256(raw).hexdigest()
    assert evidence["base64"]["media-type"] == "application/json"
    # without the flag, beside -o json: an rlink to the file with its hash, not the content
    assert _check(tmp_path, "credit", "-o", f"json={tmp_path / 'r.json'}", ap=None) == 0
    plain = read(tmp_path / "ar.json")["assessment-results"]["back-matter"]["resources"]
    assert not any("base64" in r for r in plain)
    (linked,) = [r for r in plain if prop(r, "results-sha256")]
    digest = hashlib.sha256((tmp_path / "r.json").read_bytes()).hexdigest()
    assert linked["rlinks"] == [
        {
            "href": "r.json",
            "media-type": "application/json",
            "hashes": [{"algorithm": "SHA-256", "value": digest}],
        }
    ]
    # no results file written: the evidence is embedded (a link to nothing proves nothing)
    assert _check(tmp_path, "credit", ap=None) == 0
    alone = read(tmp_path / "ar.json")["assessment-results"]["back-matter"]["resources"]
    (embedded,) = [r for r in alone if prop(r, "results-sha256")]
    assert "base64" in embedded and "rlinks" not in embedded


@pytest.mark.usefixtures("in_root")
def test_deterministic_runs_are_byte_identical(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for d in (a, b):
        assert _check(d, "credit", "--deterministic") == 0
    for doc in ("ar.json", "ap.json"):
        assert (a / doc).read_bytes() == (b / doc).read_bytes()
    ar = read(a / "ar.json")["assessment-results"]
    assert uuid.UUID(ar["uuid"]).version == 5
    assert ar["metadata"]["last-modified"] == ar["results"][0]["end"]
    check_documents(a / "ar.json", a / "ap.json")


@pytest.mark.usefixtures("in_root")
def test_without_deterministic_event_uuids_differ(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    for d in (a, b):
        assert _check(d, "dermatology") == 1
    ar_a, ap_a = check_documents(a / "ar.json", a / "ap.json")
    ar_b, ap_b = check_documents(b / "ar.json", b / "ap.json")
    x, y = ar_a["assessment-results"], ar_b["assessment-results"]
    assert uuid.UUID(x["uuid"]).version == 4
    assert x["uuid"] != y["uuid"]
    assert x["results"][0]["uuid"] != y["results"][0]["uuid"]
    for key in ("observations", "findings", "risks"):
        ua = {o["uuid"] for o in x["results"][0][key]}
        ub = {o["uuid"] for o in y["results"][0][key]}
        assert not ua & ub, key
    assert ap_a["assessment-plan"]["uuid"] != ap_b["assessment-plan"]["uuid"]
    # identities (components, activities) are per subject and stay stable (OSCAL's advice)
    assert x.get("local-definitions") == y.get("local-definitions")
    lx, ly = (dict(d["results"][0]["local-definitions"]) for d in (x, y))
    for t in (*lx.pop("tasks"), *ly.pop("tasks")):
        t.pop("timing")  # when each run took place
    assert lx == ly


@pytest.mark.usefixtures("in_root")
@pytest.mark.parametrize("embed", [False, True])
def test_export_equals_check(tmp_path: Path, embed: bool) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    flags = ["--deterministic", *(["--embed-evidence"] if embed else [])]
    policy, data, _, _ = CASES["dermatology"]
    argv = ["check", policy, data, *flags, "-o", f"json={tmp_path / 'r.json'}"]
    assert run(*argv, "-o", f"oscal={a / 'ar.json'}") == 1
    assert run("export", "oscal", str(tmp_path / "r.json"), "-o", str(b / "ar.json"), *flags) == 0
    assert (a / "ar.json").read_bytes() == (b / "ar.json").read_bytes()
    check_documents(b / "ar.json", None)


@pytest.mark.usefixtures("in_root")
def test_subject_names_the_component(tmp_path: Path) -> None:
    assert _check(tmp_path, "credit", "--subject", "credit-scoring-model v3") == 0
    ar, ap = check_documents(tmp_path / "ar.json", tmp_path / "ap.json")
    (component,) = ar["assessment-results"]["results"][0]["local-definitions"]["components"]
    assert component["title"] == "credit-scoring-model v3"
    assert component["type"] == "software"
    assert ap["assessment-plan"]["local-definitions"]["components"] == [component]


@pytest.mark.usefixtures("in_root")
def test_stdout_is_json(tmp_path: Path) -> None:
    policy, data, _, _ = CASES["credit"]
    out = io.StringIO()
    assert main(["check", policy, data, "-o", "oscal"], stdout=out) == 0
    doc = json.loads(out.getvalue())
    assert validate_document(doc, "assessment-results") == []
    check_references(doc)


# ---------------------------------------------------------------- edge cases (in process)


@pytest.fixture(scope="module")
def credit(runs: dict[str, dict[str, Any]]) -> Results:
    results: Results = runs["credit"]["results"]
    return results


def _render(results: Results, fmt: str = "oscal", **opts: Any) -> dict[str, Any]:
    text = get(fmt)(results, RenderOptions(**opts))
    doc: dict[str, Any] = json.loads(text, parse_constant=_no_constant)
    model = "assessment-results" if fmt == "oscal" else "assessment-plan"
    assert validate_document(doc, model) == []
    # with a plan, the results refer to its activities: resolved in the plan rendered from
    # the same results
    plan = json.loads(get("oscal-ap")(results, RenderOptions())) if opts.get("ap_href") else None
    check_references(doc, plan)
    return doc


def _with(results: Results, index: int, **update: Any) -> Results:
    findings = list(results.findings)
    findings[index] = findings[index].model_copy(update=update)
    return results.model_copy(update={"findings": findings})


def test_inconclusive_and_error_are_not_satisfied_without_value(credit: Results) -> None:
    r = _with(
        credit,
        0,
        status="inconclusive",
        value=None,
        reason="fewer than two groups left after exclusions",
        message="demographic_parity_ratio is undefined: fewer than two groups",
        groups=[],
    )
    r = _with(r, 1, status="error", value=None, reason="column 'approved' missing")
    r = _with(r, 2, status="fail", operator="between", threshold=[0.8, 1.25], params={"value": 1.5})
    doc = _render(r, deterministic=True)
    result = doc["assessment-results"]["results"][0]
    obs = {prop(o, "control-id"): o for o in result["observations"]}
    fnd = {prop(f, "control-id"): f for f in result["findings"]}
    inc, err, btw = (credit.findings[i].control_id for i in range(3))
    assert fnd[inc]["target"]["status"]["state"] == "not-satisfied"
    assert fnd[inc]["target"]["status"]["reason"] == "inconclusive"
    assert fnd[err]["target"]["status"]["reason"] == "error"
    assert prop(obs[inc], "measured-value") is None
    assert prop(obs[inc], "value-undefined-reason") == "fewer than two groups left after exclusions"
    assert "Reason: fewer than two groups" in obs[inc]["description"]
    assert prop(obs[err], "value-undefined-reason") == "column 'approved' missing"
    assert prop(obs[btw], "threshold") == "0.8,1.25"
    assert prop(obs[btw], "param.value") == "1.5"
    # both fail the gate (--inconclusive fail by default; an error always): each opens a
    # risk that says it was not shown to be met, never that the value is outside
    risks = {prop(k, "control-id"): k for k in result["risks"]}
    assert {inc, err, btw} <= set(risks)
    assert "not shown to meet" in risks[inc]["title"]
    assert "could not be evaluated" in risks[err]["title"]
    assert "outside the policy's threshold" in risks[btw]["statement"]
    facets = {x["name"]: x["value"] for x in risks[inc]["characterizations"][0]["facets"]}
    assert facets["likelihood"] == "unknown" and facets["impact"]


def test_warn_is_a_failed_objective_with_its_enforcement_mode(credit: Results) -> None:
    doc = _render(credit)
    result = doc["assessment-results"]["results"][0]
    (warn,) = [f for f in credit.findings if f.status == "warn"]
    (x,) = [f for f in result["findings"] if prop(f, "control-id") == warn.control_id]
    assert x["target"]["status"]["state"] == "not-satisfied"
    assert x["target"]["status"]["reason"] == "fail"
    assert prop(x, "enforcement_mode") == "warn"
    assert prop(x, "gating") == "false"
    (risk,) = result["risks"]
    assert "does not fail the release gate" in risk["statement"]


def test_in_memory_policy_and_data(credit: Results) -> None:
    r = credit.model_copy(
        update={
            "policy": credit.policy.model_copy(
                update={"path": None, "sha256": None, "title": None}
            ),
            "data": credit.data.model_copy(update={"path": None, "sha256": None}),
        }
    )
    ar = _render(r)["assessment-results"]
    assert ar["import-ap"]["href"].startswith("#")
    assert not any(k == "rlinks" for k, _ in walk(ar))
    (component,) = ar["results"][0]["local-definitions"]["components"]
    assert component["title"] == "in-memory data"
    ap = _render(r, "oscal-ap")["assessment-plan"]
    assert ap["import-ssp"]["href"][1:] in {x["uuid"] for x in ap["back-matter"]["resources"]}


def test_non_token_control_id_is_an_output_error(credit: Results) -> None:
    r = _with(credit, 0, control_id="dp sex@v1")
    for fmt in ("oscal", "oscal-ap"):
        with pytest.raises(OutputError) as info:
            get(fmt)(r, RenderOptions(path="ar.json"))
        text = str(info.value)
        assert "control 'dp sex@v1'" in text and "not an OSCAL token" in text
        assert "'dp-sex-v1'" in text


def test_no_findings_is_an_output_error(credit: Results) -> None:
    empty = credit.model_copy(update={"findings": []})
    for fmt in ("oscal", "oscal-ap"):
        with pytest.raises(OutputError, match="no findings"):
            get(fmt)(empty, RenderOptions())


def test_text_is_single_line_where_oscal_requires(credit: Results) -> None:
    r = _with(credit, 0, title="a title\nover two lines", groups=[])
    r = _with(r, 1, worst_group="  spaced  group ", message="m\nultiline")
    doc = _render(r, "oscal")
    titles = [v for k, v in walk(doc) if k == "title"]
    assert all("\n" not in t for t in titles)


def test_finding_types_follow_the_policy_ids(credit: Results) -> None:
    r = _with(credit, 0, objective_id="fs_obj")
    r = _with(r, 1, statement_id="eo_smt")
    result = _render(r)["assessment-results"]["results"][0]
    targets = [f["target"] for f in result["findings"]]
    assert targets[0]["type"] == "objective-id" and targets[0]["target-id"] == "fs_obj"
    assert targets[1]["type"] == "statement-id" and targets[1]["target-id"] == "eo_smt"
    assert targets[2]["target-id"] == f"{credit.findings[2].control_id}_smt"


def test_ap_href_is_percent_encoded(credit: Results) -> None:
    for href, written in [
        ("plans/ap v1.json", "plans/ap%20v1.json"),
        ("a:b#1.json", "a%3Ab%231.json"),
        ("https://example.org/ap.json", "https://example.org/ap.json"),
    ]:
        doc = _render(credit, ap_href=href)
        assert ap_link(doc) == written


def test_finding_model_has_the_fields_the_writer_reads() -> None:
    # The writer reads these Finding fields; a rename must fail here, not in an audit.
    for name in ("objective_id", "statement_id", "threshold_source", "risk_id", "severity"):
        assert name in Finding.field_names()


def test_uuids_are_valid(runs: dict[str, dict[str, Any]]) -> None:
    for r in runs.values():
        for path in (r["ar"], r["ap"]):
            for k, v in walk(read(path)):
                if k == "uuid" or k.endswith("-uuid"):
                    assert UUID_RE.match(v), (path.name, k, v)


def test_hrefs_are_percent_encoded_and_relative_to_the_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "in put"
    src.mkdir()
    shutil.copy(ROOT / CASES["credit"][0], src / "policy.yaml")
    shutil.copy(ROOT / CREDIT, src / "pred ictions.csv")
    (tmp_path / "out").mkdir()
    monkeypatch.chdir(tmp_path)
    argv = ["check", "in put/policy.yaml", "in put/pred ictions.csv", "-o", "oscal=out/ar.json"]
    assert run(*argv, "-o", "oscal-ap=ap.json") == 0
    ar, ap = check_documents(tmp_path / "out" / "ar.json", tmp_path / "ap.json")
    hrefs = {x["href"] for k, v in walk(ar) if k == "rlinks" for x in v}
    assert hrefs == {"../in%20put/policy.yaml", "../in%20put/pred%20ictions.csv", "../ap.json"}
    assert ap_link(ar) == "../ap.json"
    hrefs = {x["href"] for k, v in walk(ap) if k == "rlinks" for x in v}
    assert hrefs == {"in%20put/policy.yaml", "in%20put/pred%20ictions.csv"}
