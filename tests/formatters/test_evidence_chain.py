"""The OSCAL evidence an auditor walks (issue: SSP → plan → results, every document hashed):
uncertainty as data, risks for every control that fails the gate, people and attestation,
the results JSON as linked evidence, dates."""

from __future__ import annotations

import hashlib
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from fairpolicy.cli import main
from tests.formatters.test_oscal import ap_link, check_documents, prop, props, read, walk

ROOT = Path(__file__).resolve().parents[2]
CREDIT = ("examples/credit/policy.yaml", "examples/credit/predictions.csv")


@pytest.fixture(autouse=True)
def _at_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        code = main(list(argv), stdout=out)
    return code, out.getvalue(), err.getvalue()


def _result(ar: dict[str, Any]) -> dict[str, Any]:
    res: dict[str, Any] = ar["assessment-results"]["results"][0]
    return res


def test_uncertainty_is_data_in_oscal_junit_and_sarif(tmp_path: Path) -> None:
    ext = {"json": "json", "oscal": "ar.json", "junit": "xml", "sarif": "sarif"}
    outs = {f: tmp_path / f"r.{ext[f]}" for f in ext}
    argv = ["check", *CREDIT, "--bootstrap", "200", "--p-value", "100", "--seed", "11"]
    for fmt, path in outs.items():
        argv += ["-o", f"{fmt}={path}"]
    code, _, _ = run(*argv)
    assert code in (0, 1)
    findings = json.loads(outs["json"].read_text())["findings"]
    with_ci = [f for f in findings if f["ci"] and f["ci"]["low"] is not None]
    with_p = [f for f in findings if f["p_value"] and f["p_value"]["p_value"] is not None]
    assert with_ci and with_p
    assert any(f["status"] != "pass" for f in with_ci)  # so SARIF is checked too
    ar, _ = check_documents(outs["oscal"], None)
    obs = {prop(o, "control-id"): o for o in _result(ar)["observations"]}
    junit = {
        p.get("name"): p.get("value") for p in ET.parse(outs["junit"]).getroot().iter("property")
    }
    sarif = {
        r["ruleId"]: r["properties"]["uncertainty"]
        for r in json.loads(outs["sarif"].read_text())["runs"][0]["results"]
    }
    for f in with_ci:
        cid, ci = f["control_id"], f["ci"]
        o = obs[cid]
        assert float(prop(o, "ci-low") or "nan") == ci["low"]
        assert float(prop(o, "ci-high") or "nan") == ci["high"]
        assert prop(o, "ci-level") == repr(ci["level"]) and prop(o, "ci-method") == ci["method"]
        assert prop(o, "ci-resamples") == "200" and prop(o, "ci-seed") == str(ci["seed"])
        assert float(junit[f"control.{cid}.ci-low"]) == ci["low"]
        assert junit[f"control.{cid}.ci-resamples"] == "200"
        if cid in sarif:  # SARIF has a result per non-passing control only
            assert sarif[cid]["ci-low"] == ci["low"] and sarif[cid]["ci-high"] == ci["high"]
    for f in with_p:
        cid, pv = f["control_id"], f["p_value"]
        assert float(prop(obs[cid], "p-value") or "nan") == pv["p_value"]
        assert prop(obs[cid], "p-permutations") == "100"
        if cid in sarif:
            assert sarif[cid]["p-value"] == pv["p_value"]
        assert junit[f"control.{cid}.p-permutations"] == "100"
        if pv["groups"]:
            per_group = dict(v.rsplit("=", 1) for v in props(obs[cid], "group-p-value"))
            assert {g: float(p) for g, p in per_group.items()} == pv["groups"]


def test_every_control_that_fails_the_gate_opens_a_characterised_risk(tmp_path: Path) -> None:
    """60 rows: every control is inconclusive (min_samples) and fails the gate; each is a
    risk (there were none), characterised without claiming a violation."""
    rows = ["applicant_id,approved,predicted,score,sex,age_band,race"]
    rows += [
        f"A{i},{i % 2},{(i // 2) % 2},0.{i % 10}5,{'FM'[i % 2]},{['18-29', '30-49'][i % 3 == 0]},"
        f"{['White', 'Black'][i % 4 == 0]}"
        for i in range(60)
    ]
    data = tmp_path / "small.csv"
    data.write_text("\n".join(rows) + "\n")
    ar_path, res_path = tmp_path / "ar.json", tmp_path / "r.json"
    code, _, _ = run(
        "check", CREDIT[0], str(data), "-o", f"oscal={ar_path}", "-o", f"json={res_path}"
    )
    res = json.loads(res_path.read_text())
    gating = [f for f in res["findings"] if f["gate_effect"] in ("fail", "error")]
    assert code == 1 and gating
    ar, _ = check_documents(ar_path, None)
    risks = {prop(r, "control-id"): r for r in _result(ar).get("risks", [])}
    assert {f["control_id"] for f in gating} <= set(risks)
    for f in gating:
        r = risks[f["control_id"]]
        facets = {x["name"]: x["value"] for x in r["characterizations"][0]["facets"]}
        assert facets["likelihood"] in ("unknown", "possible", "likely")
        assert facets["impact"] in ("very-high", "high", "moderate", "low", "very-low")
        assert "outside the policy's threshold" not in r["statement"]
        assert prop(r, "gate-effect") == "fail"


def test_a_violation_has_demonstrated_likelihood_and_exceedance(tmp_path: Path) -> None:
    ar_path = tmp_path / "ar.json"
    code, _, _ = run(
        "check",
        "examples/dermatology/policy.yaml",
        "examples/dermatology/predictions.csv",
        "-o",
        f"oscal={ar_path}",
    )
    assert code == 1
    ar, _ = check_documents(ar_path, None)
    risks = _result(ar)["risks"]
    violated = [r for r in risks if prop(r, "status") in ("fail", "warn")]
    assert violated
    for r in violated:
        facets = {x["name"]: x["value"] for x in r["characterizations"][0]["facets"]}
        assert facets["likelihood"] == "demonstrated"
        assert float(facets["exceedance"]) > 0


def test_people_attestation_and_log(tmp_path: Path) -> None:
    ar_path, ap_path = tmp_path / "ar.json", tmp_path / "ap.json"
    argv = ["check", *CREDIT, "-o", f"oscal={ar_path}", "-o", f"oscal-ap={ap_path}"]
    argv += ["--assessor", "Ada Lovelace <ada@example.org>", "--assessor", "Alan Turing"]
    argv += ["--organization", "Analytical Engines Ltd"]
    assert run(*argv)[0] == 0
    ar, ap = check_documents(ar_path, ap_path)
    for doc in (ar["assessment-results"], ap["assessment-plan"]):
        meta = doc["metadata"]
        parties = {p["name"]: p for p in meta["parties"]}
        assert set(parties) == {"Ada Lovelace", "Alan Turing", "Analytical Engines Ltd"}
        assert parties["Ada Lovelace"]["email-addresses"] == ["ada@example.org"]
        org = parties["Analytical Engines Ltd"]["uuid"]
        assert parties["Alan Turing"]["member-of-organizations"] == [org]
        (assessor,) = [r for r in meta["responsible-parties"] if r["role-id"] == "assessor"]
        assert set(assessor["party-uuids"]) == {
            parties["Ada Lovelace"]["uuid"],
            parties["Alan Turing"]["uuid"],
        }
        assert {r["id"] for r in meta["roles"]} >= {"assessor"}
    assert "remarks" not in ar["assessment-results"]["metadata"]
    assert "No approver was named" in ap["assessment-plan"]["metadata"]["remarks"]
    result = _result(ar)
    # the statement is the log entry's (an attestation part would break NIST's constraint
    # oscal-assesment-part-objective-cardinality)
    assert "attestations" not in result
    (entry,) = result["assessment-log"]["entries"]
    assert "evaluated 6 control(s)" in entry["remarks"]
    assert {x["role-id"] for x in entry["logged-by"]} == {"assessor"}
    defined = {v for k, v in walk(ar) if k == "uuid"}
    assert all(x["party-uuid"] in defined for x in entry["logged-by"])
    assert entry["start"] == result["start"] and entry["end"] == result["end"]


def test_no_people_are_invented(tmp_path: Path) -> None:
    ar_path = tmp_path / "ar.json"
    assert run("check", *CREDIT, "-o", f"oscal={ar_path}")[0] == 0
    ar, _ = check_documents(ar_path, None)
    meta = ar["assessment-results"]["metadata"]
    assert "parties" not in meta and "records no people" in meta["remarks"]
    result = _result(ar)
    assert "records no people" in result["remarks"]
    assert "attestations" not in result
    assert "logged-by" not in result["assessment-log"]["entries"][0]
    assert "records no people" in result["assessment-log"]["entries"][0]["remarks"]


@pytest.mark.parametrize("bad", ["<ada@example.org>", "Ada <not an email>", "   "])
def test_a_malformed_assessor_is_a_usage_error(tmp_path: Path, bad: str) -> None:
    code, _, err = run("check", *CREDIT, "--assessor", bad)
    assert code == 2 and "--assessor" in err and "Traceback" not in err


def test_timestamp_dates_the_run_and_deterministic_without_a_date_warns(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    stamp = "2026-03-01T10:30:00+02:00"
    assert run("check", *CREDIT, "--timestamp", stamp, "-o", f"json={out}")[0] == 0
    r = json.loads(out.read_text())
    assert r["run"]["started"] == r["run"]["finished"] == "2026-03-01T08:30:00+00:00"
    code, _, err = run("check", *CREDIT, "--timestamp", "2026-03-01")  # no offset
    assert code == 2 and "--timestamp" in err
    code, text, _ = run("check", *CREDIT, "--deterministic", "-o", f"json={out}")
    assert code == 0 and "dated 1970-01-01" in text
    assert run("check", *CREDIT, "--deterministic", "--timestamp", stamp)[1].count("1970") == 0


def test_export_from_another_folder_links_the_results_and_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res, ap = tmp_path / "out" / "r.json", tmp_path / "out" / "ap.json"
    res.parent.mkdir()
    assert run("check", *CREDIT, "-o", f"json={res}", "-o", f"oscal-ap={ap}")[0] == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ar = tmp_path / "reports" / "ar.json"
    ar.parent.mkdir()
    assert run("export", "oscal", str(res), "-o", str(ar), "--plan", str(ap))[0] == 0
    doc, _ = check_documents(ar, ap)  # every rlink resolves and matches its hash
    evidence = [
        r
        for r in doc["assessment-results"]["back-matter"]["resources"]
        if prop(r, "results-sha256")
    ]
    assert evidence[0]["rlinks"][0]["href"] == "../out/r.json"
    assert prop(evidence[0], "results-sha256") == hashlib.sha256(res.read_bytes()).hexdigest()
    assert ap_link(read(ar)) == "../out/ap.json"


# ---------------------------------------------------------------- SSP → profile → catalog

LIST_POLICY = """\
- control-id: dp-sex
  title: Demographic parity across sex
  props:
    - {name: metric_key, value: demographic_parity_diff}
    - {name: threshold, value: "0.2"}
    - {name: operator, value: "<"}
    - {name: input.target, value: approved}
    - {name: input.prediction, value: predicted}
    - {name: input.dimension, value: sex}
"""

CHAIN_CASES = {
    "component-definition": (CREDIT[0], []),
    "profile": (
        "policies/binary-lending/profile.json",
        ["--bind", "target=approved", "--bind", "prediction=predicted"],
    ),
    "list": (None, []),
}


def _walk_with_trestle(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[set[str], set[str], Any]:
    """Follow AR → AP → SSP → profile → catalog with compliance-trestle's own loaders and
    its profile resolver. Each href is resolved as OSCAL says (relative to the document
    holding it); trestle resolves a profile's relative imports against its working
    directory, so the resolver runs in the profile's folder."""
    from urllib.parse import unquote

    from trestle.core.profile_resolver import ProfileResolver
    from trestle.oscal.assessment_plan import AssessmentPlan
    from trestle.oscal.assessment_results import AssessmentResults
    from trestle.oscal.ssp import SystemSecurityPlan

    def follow(doc: Path, href: str) -> Path:
        assert not href.startswith("#"), f"{doc.name} links a fragment, not a document"
        return (doc.parent / unquote(href)).resolve()

    ar_path = folder / "ar.json"
    ar = AssessmentResults.oscal_read(ar_path)
    assert ar is not None
    # import-ap names the back-matter resource holding the plan's link and SHA-256
    ap_path = follow(ar_path, ap_link(json.loads(ar_path.read_text())))
    ap = AssessmentPlan.oscal_read(ap_path)
    assert ap is not None
    ssp_path = follow(ap_path, ap.import_ssp.href)
    ssp = SystemSecurityPlan.oscal_read(ssp_path)
    assert ssp is not None
    profile = follow(ssp_path, ssp.import_profile.href)
    (folder / ".trestle").mkdir(exist_ok=True)  # the resolver's cache lives in a workspace
    with monkeypatch.context() as mp:
        mp.chdir(profile.parent)
        catalog = ProfileResolver.get_resolved_profile_catalog(folder, str(profile))
    ids: set[str] = set()

    def collect(controls: Any) -> None:
        for c in controls or []:
            ids.add(c.id)
            collect(c.controls)

    collect(catalog.controls)
    for g in catalog.groups or []:
        collect(g.controls)
    reviewed = {
        c.control_id
        for sel in ar.results[0].reviewed_controls.control_selections
        for c in sel.include_controls or []
    }
    return ids, reviewed, ssp


@pytest.mark.parametrize("form", list(CHAIN_CASES))
def test_trestle_walks_results_to_plan_to_ssp_to_profile_to_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    import subprocess
    import sys

    policy, extra = CHAIN_CASES[form]
    if policy is None:
        (tmp_path / "policy.yaml").write_text(LIST_POLICY)
        policy = str(tmp_path / "policy.yaml")
    else:
        policy = str(ROOT / policy)
    data = str(ROOT / CREDIT[1])
    monkeypatch.chdir(tmp_path)
    argv = ["check", policy, data, *extra, "--subject", "credit-model v4"]
    argv += ["-o", "oscal-ssp=ssp.json", "-o", "oscal-ap=ap.json", "-o", "oscal=ar.json"]
    argv += ["-o", "json=r.json"]
    assert run(*argv)[0] in (0, 1)
    for name, root in (("ssp.json", "system-security-plan"), ("ap.json", "assessment-plan")):
        from fairpolicy.oscal_schema import validate_document

        assert validate_document(read(tmp_path / name), root) == [], name
    check_documents(tmp_path / "ar.json", tmp_path / "ap.json")
    catalog_ids, reviewed, ssp = _walk_with_trestle(tmp_path, monkeypatch)
    assert reviewed and reviewed <= catalog_ids  # every assessed control is in the catalog
    implemented = {r.control_id for r in ssp.control_implementation.implemented_requirements}
    assert implemented == reviewed
    ap = read(tmp_path / "ap.json")["assessment-plan"]
    digest = hashlib.sha256((tmp_path / "ssp.json").read_bytes()).hexdigest()
    ssp_links = [
        link
        for r in ap["back-matter"]["resources"]
        for link in r.get("rlinks", [])
        if link["href"] == "ssp.json"
    ]
    assert ssp_links and ssp_links[0]["hashes"][0]["value"] == digest
    if form == "profile":
        assert not (tmp_path / "ssp.profile.json").exists()  # the policy is the profile
    else:
        assert (tmp_path / "ssp.profile.json").exists()
    # trestle's own command line imports and validates every document of the chain (from
    # the documents' folder, against which trestle resolves the SSP's import-profile; the
    # pack's profile imports its catalog relative to its own folder, which trestle's
    # import does not follow from here, so its SSP is checked by the walk above)
    trestle = [sys.executable, "-m", "trestle"]
    ws = tmp_path.parent / f"{tmp_path.name}-ws"
    ws.mkdir()
    subprocess.run([*trestle, "init"], cwd=ws, check=True, capture_output=True)
    names = ("ap.json", "ar.json") if form == "profile" else ("ssp.json", "ap.json", "ar.json")
    for name in names:
        out = subprocess.run(
            [*trestle, "import", "-tr", str(ws), "-f", name, "-o", name.split(".")[0]],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stdout + out.stderr
    out = subprocess.run(
        [*trestle, "validate", "-a", "-tr", str(ws)], cwd=tmp_path, capture_output=True, text=True
    )
    assert out.returncode == 0 and "INVALID" not in out.stdout, out.stdout + out.stderr


def test_the_teams_own_ssp_is_imported_and_hashed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    data = str(ROOT / CREDIT[1])
    policy = str(ROOT / CREDIT[0])
    base = ["check", policy, data, "--subject", "credit-model v4"]
    assert run(*base, "-o", "oscal-ssp=team-ssp.json")[0] == 0
    team = tmp_path / "team-ssp.json"
    argv = [*base, "--ssp", str(team), "-o", "oscal-ap=plans/ap.json", "-o", "oscal=ar.json"]
    (tmp_path / "plans").mkdir()
    assert run(*argv, "-o", "json=r.json")[0] == 0
    docs = json.loads((tmp_path / "r.json").read_text())["policy"]["documents"]
    assert {
        "path": str(team),
        "kind": "system-security-plan",
        "sha256": hashlib.sha256(team.read_bytes()).hexdigest(),
    } in docs
    ap = read(tmp_path / "plans" / "ap.json")["assessment-plan"]
    assert ap["import-ssp"]["href"] == "../team-ssp.json"
    digest = hashlib.sha256(team.read_bytes()).hexdigest()
    hashes = [
        h["value"]
        for r in ap["back-matter"]["resources"]
        for link in r.get("rlinks", [])
        if link["href"] == "../team-ssp.json"
        for h in link["hashes"]
    ]
    # the SSP as the system the plan imports and as a document of the evidence
    assert hashes and set(hashes) == {digest}
    # a subject the SSP does not know, a file that is no SSP, both SSP flags: exit 2
    code, _, err = run(check := "check", policy, data, "--ssp", str(team))
    assert code == 2 and "credit-model v4" in err and "--subject" in err, check
    code, _, err = run("check", policy, data, "--ssp", policy)
    assert code == 2 and "system security plan" in err
    code, _, err = run(*base, "--ssp", str(team), "-o", "oscal-ssp=again.json")
    assert code == 2 and "--ssp" in err


# ---------------------------------------------------------------- plan first


def test_plan_is_written_without_data_and_the_run_must_match_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy, data = str(ROOT / CREDIT[0]), str(ROOT / CREDIT[1])
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(
        "plan",
        policy,
        "-o",
        "ap.json",
        "--subject",
        "credit v4",
        "--assessor",
        "Ada Lovelace <ada@example.org>",
        "--timestamp",
        "2026-02-01T09:00:00Z",
    )
    assert code == 0 and "6 control(s)" in out
    ap = read(tmp_path / "ap.json")
    from fairpolicy.oscal_schema import validate_document

    assert validate_document(ap, "assessment-plan") == []
    body = ap["assessment-plan"]
    assert body["metadata"]["last-modified"].startswith("2026-02-01")  # dated before the run
    acts = body["local-definitions"]["activities"]
    assert len(acts) == 6 and all(prop(a, "threshold") for a in acts)
    text = json.dumps(body)
    assert "approved" in text and "predicted" in text  # the columns it will read
    assert "rows" not in body["local-definitions"]["components"][0]["description"]
    # a run of the same policy matches: its results import the plan
    code, _, _ = run(
        "check", policy, data, "--plan", "ap.json", "-o", "oscal=ar.json", "--subject", "credit v4"
    )
    assert code == 0
    ar, _ = check_documents(tmp_path / "ar.json", tmp_path / "ap.json")
    assert "approved before the run" in ar["assessment-results"]["import-ap"]["remarks"]
    plan_acts = {a["uuid"] for a in acts}
    (task,) = ar["assessment-results"]["results"][0]["local-definitions"]["tasks"]
    ar_acts = {a["activity-uuid"] for a in task["associated-activities"]}
    assert ar_acts == plan_acts  # the plan's activities, referred to by identity
    assert "local-definitions" not in ar["assessment-results"]  # never redefined


@pytest.mark.parametrize(
    ("extra", "edit", "named"),
    [
        (["--bind", "four-fifths-sex:dimension=race"], None, "input.dimension"),
        (["--bootstrap", "50"], None, "param.ci"),
        ([], ('threshold, value: "0.8"', 'threshold, value: "0.7"'), "SHA-256"),
    ],
)
def test_a_run_that_differs_from_its_plan_is_exit_2_naming_the_difference(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    edit: tuple[str, str] | None,
    named: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text((ROOT / CREDIT[0]).read_text())
    assert run("plan", str(policy), "-o", "ap.json")[0] == 0
    if edit is not None:
        text = policy.read_text()
        assert edit[0] in text
        policy.write_text(text.replace(edit[0], edit[1], 1))
    (tmp_path / "ar.json").write_text("previous")
    argv = ["check", str(policy), str(ROOT / CREDIT[1]), "--plan", "ap.json", *extra]
    code, _, err = run(*argv, "-o", "oscal=ar.json")
    assert code == 2 and named in err and "ap.json" in err, err
    assert "fairpolicy plan" in err  # the fix
    assert (tmp_path / "ar.json").read_text() == "previous"  # nothing written


def test_plan_refusals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    policy, data = str(ROOT / CREDIT[0]), str(ROOT / CREDIT[1])
    assert run("plan", policy, "-o", "ap.json")[0] == 0
    code, _, err = run("check", policy, data, "--plan", "ap.json", "-o", "oscal-ap=x.json")
    assert code == 2 and "--plan" in err
    code, _, err = run("check", policy, data, "--plan", policy)
    assert code == 2 and "assessment plan" in err
    code, _, err = run("check", policy, data, "--plan", "missing.json")
    assert code == 2 and "no such file" in err
    code, _, err = run("plan", policy, "-o", policy)
    assert code == 2 and "policy file" in err
    code, _, err = run("plan", policy, "-o", "p2.json", "--ssp", "x.json", "--write-ssp", "s.json")
    assert code == 2 and "--write-ssp" in err
    code, _, err = run("plan", policy, "-o", "same.json", "--write-ssp", "same.json")
    assert code == 2 and not (tmp_path / "same.json").exists()


# ---------------------------------------------------------------- every document hashed


def test_the_catalog_behind_a_profile_is_hashed_and_a_change_is_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    pack = tmp_path / "pack"
    shutil.copytree(ROOT / "policies" / "binary-lending", pack)
    monkeypatch.chdir(tmp_path)
    bind = ["--bind", "target=approved", "--bind", "prediction=predicted"]
    data = str(ROOT / CREDIT[1])

    def recorded(tag: str) -> tuple[dict[str, str], dict[str, Any]]:
        out = tmp_path / tag
        out.mkdir()
        argv = ["check", "pack/profile.json", data, *bind]
        argv += ["-o", f"json={out}/r.json", "-o", f"oscal={out}/ar.json"]
        assert run(*argv)[0] in (0, 1)
        docs = json.loads((out / "r.json").read_text())["policy"]["documents"]
        ar, _ = check_documents(out / "ar.json", None)  # rlinks resolve, hashes match
        return {d["kind"]: d["sha256"] for d in docs}, ar

    before, ar = recorded("before")
    catalog = pack / "catalog.json"
    assert before == {"catalog": hashlib.sha256(catalog.read_bytes()).hexdigest()}
    backed = [
        r
        for r in ar["assessment-results"]["back-matter"]["resources"]
        if prop(r, "document-kind") == "catalog"
    ]
    assert backed and prop(backed[0], "document-sha256") == before["catalog"]
    assert run("plan", "pack/profile.json", *bind, "-o", "ap.json")[0] == 0
    # loosen a threshold in the catalog only: the profile's own hash stays the same
    text = catalog.read_text()
    assert '"0.8"' in text
    catalog.write_text(text.replace('"0.8"', '"0.5"', 1))
    after, _ = recorded("after")
    assert after["catalog"] != before["catalog"]
    # and the approved plan no longer matches the run
    code, _, err = run("check", "pack/profile.json", data, *bind, "--plan", "ap.json")
    assert code == 2 and "catalog" in err and "changed since the plan" in err


def test_the_readme_auditor_example_walks_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two commands of README's "OSCAL for auditors", run as written (from a copy of
    the repository's policies/ and examples/), give a chain trestle walks and resolves."""
    import re
    import shlex
    import shutil

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### OSCAL for auditors") :]
    block = section[
        section.index("```bash") + 7 : section.index("```", section.index("```bash") + 7)
    ]
    commands = [
        shlex.split(re.sub(r"#.*", "", c).replace("\\\n", " "))
        for c in re.split(r"\n(?=fairpolicy )", block.strip())
        if c.startswith("fairpolicy")
    ]
    assert [c[1] for c in commands] == ["plan", "check"]
    for folder in ("policies", "examples"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "audit").mkdir()
    for argv in commands:
        code, _, err = run(*argv[1:])
        assert code == 0, (argv, err)
    audit = tmp_path / "audit"
    ar, _ = check_documents(audit / "ar.json", audit / "ap.json")
    catalog_ids, reviewed, _ = _walk_with_trestle(audit, monkeypatch)
    assert reviewed and reviewed <= catalog_ids
    meta = ar["assessment-results"]["metadata"]
    assert {p["name"] for p in meta["parties"]} == {"Ada Lovelace"}
    docs = json.loads((audit / "results.json").read_text())["policy"]["documents"]
    assert [d["kind"] for d in docs] == ["catalog"]


def test_people_named_in_the_policy_metadata_and_the_command_line_wins(tmp_path: Path) -> None:
    from fairpolicy.policy.schema import NS

    text = (ROOT / CREDIT[0]).read_text()
    anchor = "    version: 1.2.0\n"
    assert anchor in text
    props = (
        "    props:\n"
        f"      - {{name: assessor, ns: '{NS}', value: 'Grace Hopper <grace@example.org>'}}\n"
        f"      - {{name: organization, ns: '{NS}', value: 'Fair Lending Office'}}\n"
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(text.replace(anchor, anchor + props, 1))
    ar = tmp_path / "ar.json"
    assert run("check", str(policy), CREDIT[1], "-o", f"oscal={ar}")[0] == 0
    meta = check_documents(ar, None)[0]["assessment-results"]["metadata"]
    assert {p["name"] for p in meta["parties"]} == {"Grace Hopper", "Fair Lending Office"}
    argv = ["check", str(policy), CREDIT[1], "-o", f"oscal={ar}", "--assessor", "Alan Turing"]
    assert run(*argv)[0] == 0
    meta = read(ar)["assessment-results"]["metadata"]
    assert "Alan Turing" in {p["name"] for p in meta["parties"]}
    assert "Grace Hopper" not in {p["name"] for p in meta["parties"]}
    bad = text.replace(
        anchor,
        anchor + f"    props:\n      - {{name: assessor, ns: '{NS}', value: '<x@y.z>'}}\n",
        1,
    )
    policy.write_text(bad)
    code, _, err = run("check", str(policy), CREDIT[1])
    assert code == 2 and "metadata.props.assessor" in err
