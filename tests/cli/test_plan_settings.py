"""The approved plan pins every setting that can change a verdict (issue 26 items 6 and 7,
issue 29 items 1 and 2): ``check --plan`` and ``export --plan`` verify through one function
(``fairpolicy.plan.verify``), a deviation is exit 2 naming the setting and both values
unless the plan allows it, and the assessment results record the settings, where each came
from, a loosened gate with its reason, the plan's hash, its approval, its subject and its
activities (referred to, never redefined)."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fairpolicy import gate_settings
from fairpolicy.cli import main
from tests.bad_inputs.cases import DEFAULT_DATA, policy
from tests.formatters.test_oscal import check_documents, prop, read

ROOT = Path(__file__).resolve().parents[2]

#: four controls, three of which fail on DEFAULT_DATA (a gap of 1/6; a ratio of 2/3)
FOUR = "".join(
    policy(cid, **props)
    for cid, props in (
        ("gap-tight", {"threshold": '"0.1"'}),
        ("gap-tighter", {"threshold": '"0.05"'}),
        (
            "ratio",
            {"metric_key": "demographic_parity_ratio", "threshold": '"0.8"', "operator": "'>='"},
        ),
        ("gap-loose", {"threshold": '"0.5"'}),
    )
)


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), stdout=out)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    (tmp_path / "policy.yaml").write_text(FOUR)
    (tmp_path / "data.csv").write_text(DEFAULT_DATA)
    return tmp_path


def plan_body(path: Path) -> dict[str, Any]:
    body: dict[str, Any] = read(path)["assessment-plan"]
    return body


# ---------------------------------------------------------------- item 6: check --plan


@pytest.mark.parametrize(
    "loosen",
    [["--fail-on", "never"], ["--inconclusive", "pass"], ["--subject", "another model"]],
)
def test_the_issue_case_a_loosening_option_is_refused_with_three_of_four_failing(
    pack: Path, loosen: list[str]
) -> None:
    assert run("plan", "policy.yaml", "-o", "ap.json")[0] == 0
    code, _, _ = run("check", "policy.yaml", "data.csv", "-o", "json=r.json")
    assert code == 1 and json.loads(Path("r.json").read_text())["summary"]["fail"] == 3
    Path("ar.json").write_text("previous")
    code, out, err = run(
        "check", "policy.yaml", "data.csv", "--plan", "ap.json", *loosen, "-o", "oscal=ar.json"
    )
    assert code == 2, out + err
    assert f"the setting {loosen[0]} is '{loosen[1]}' in this run" in err
    assert "in the approved plan" in err and "ap.json" in err
    assert "verified" not in out and "gate: pass" not in out.lower()
    assert Path("ar.json").read_text() == "previous"  # nothing written


#: for every pinned setting, the options of a run that changes it and nothing else
DEVIATIONS: dict[str, list[str]] = {
    "fail-on": ["--fail-on", "warning"],
    "inconclusive": ["--inconclusive", "warn"],
    "subject": ["--subject", "model v5"],
    "seed": ["--seed", "7"],
    "bind": ["--bind", "dimension=sex"],
    "rename": ["--rename", "sex=sex"],
    "positive-label": ["--positive-label", "1"],
    "num-classes": ["--num-classes", "2"],
    "bootstrap": ["--bootstrap", "20"],
    "ci-level": ["--ci-level", "0.9"],
    "ci-method": ["--ci-method", "bca"],
    "resample": ["--resample", "rows"],
    "decision": ["--decision", "ci_lower"],
    "p-value": ["--p-value", "20"],
    "bonferroni": ["--bonferroni"],
    "max-regression": ["--baseline", "base.json", "--max-regression", "0.5"],
    "score-decimals": ["--score-decimals", "3"],
    # a monitoring run (issue 30): each changed against the plan of WINDOWED
    "window": ["--window", "ts=1mo"],
    "window-tz": ["--window-tz", "Europe/Paris"],
    "window-gate": ["--window-gate", "any"],
    "min-window-rows": ["--min-window-rows", "6"],
    "pool-windows": ["--pool-windows"],
    "reference": ["--reference", "2024-01-01..2024-01-01"],
}
#: the window settings of the plan and run a window setting's deviation changes
WINDOWED = ["--window", "ts=1w", "--min-window-rows", "5", "--window-gate", "last"]


def with_ts(data: str) -> str:
    """``data`` with a timestamp column ``ts``: 20 days from Monday 2024-01-01, every day
    holding rows of both groups (three weekly windows)."""
    head, *rows = data.strip().split("\n")
    ts = [f"2024-01-{1 + i % 20:02d}T12:00:00Z" for i in range(len(rows))]
    return "\n".join([head + ",ts", *(r + "," + t for r, t in zip(rows, ts, strict=True))]) + "\n"


WINDOW_SETTINGS = frozenset(
    {"window", "window-tz", "window-gate", "min-window-rows", "pool-windows", "reference"}
)


def test_every_pinned_setting_has_a_deviation_test() -> None:
    assert set(DEVIATIONS) == set(gate_settings.SETTINGS)


@pytest.mark.parametrize("name", list(DEVIATIONS))
def test_every_pinned_setting_is_compared(pack: Path, name: str) -> None:
    """A registry-wide test: a run that changes exactly one pinned setting is exit 2
    naming it with both values, and the plan that allows it lets the same run through."""
    Path("policy.yaml").write_text(policy("c1", threshold='"0.5"'))
    windowed = WINDOWED if name in WINDOW_SETTINGS else []
    if windowed:
        Path("data.csv").write_text(with_ts(DEFAULT_DATA))
    assert run("check", "policy.yaml", "data.csv", "-o", "json=base.json")[0] == 0
    assert run("plan", "policy.yaml", "-o", "ap.json", *windowed)[0] == 0
    argv = ["check", "policy.yaml", "data.csv", "--plan", "ap.json", *windowed]
    # the planned run itself is verified
    code, _, err = run(*argv)
    assert code in (0, 1), err
    argv += DEVIATIONS[name]
    code, _, err = run(*argv)
    assert code == 2 and f"the setting --{name} is " in err, err
    assert "in the approved plan" in err
    # the approver can allow it, and the results say so
    allow = ["--allow-deviation", name]
    assert run("plan", "policy.yaml", "-o", "ok.json", *windowed, *allow)[0] == 0
    argv[argv.index("ap.json")] = "ok.json"
    code, _, err = run(*argv, "-o", "oscal=ar.json")
    assert code in (0, 1), err
    ar, _ = check_documents(Path("ar.json"), Path("ok.json"))
    res = ar["assessment-results"]["back-matter"]["resources"][0]
    assert f"allows {name} to differ" in res["description"]
    (setting,) = [
        p for p in ar["assessment-results"]["results"][0]["props"] if p["name"] == f"setting.{name}"
    ]
    assert "allows another value" in setting["remarks"]


def test_a_run_with_the_planned_settings_is_verified(pack: Path) -> None:
    opts = ["--fail-on", "warning", "--inconclusive", "warn", "--seed", "11"]
    opts += ["--bootstrap", "30", "--decision", "ci_upper", "--subject", "model v4"]
    code, _, _ = run("plan", "policy.yaml", "-o", "ap.json", *opts, "--approver", "Ada <a@x.org>")
    assert code == 0
    body = plan_body(Path("ap.json"))
    pinned, allowed = gate_settings.plan_settings(body) or ({}, [])
    assert pinned["fail-on"] == "warning" and pinned["seed"] == "11" and allowed == []
    assert pinned["bootstrap"] == "30" and pinned["subject"] == "model v4"
    code, _, err = run(
        "check", "policy.yaml", "data.csv", "--plan", "ap.json", *opts, "-o", "json=r.json"
    )
    assert code == 1, err
    results = json.loads(Path("r.json").read_text())
    assert results["run"]["fail_on"] == "warning" and results["run"]["seed"] == 11


def test_an_old_plan_is_refused_with_the_fix(pack: Path) -> None:
    """Decision: a plan that pins no settings is refused (not read as "the defaults"): its
    approver approved no settings, and the defaults (the seed) belong to the version
    reading it, not to the plan."""
    assert run("plan", "policy.yaml", "-o", "ap.json")[0] == 0
    doc = read(Path("ap.json"))
    for task in doc["assessment-plan"]["tasks"]:
        del task["props"]
    Path("ap.json").write_text(json.dumps(doc))
    code, _, err = run("check", "policy.yaml", "data.csv", "--plan", "ap.json")
    assert code == 2 and "pins none of the settings" in err and "fairpolicy plan" in err


def to_terms_and_conditions(body: dict[str, Any]) -> None:
    """A plan in the form fairpolicy wrote before NIST's constraint fix: the pinned
    settings and the approval as parts of ``terms-and-conditions``."""
    ns = gate_settings.NS
    (task,) = body["tasks"]
    settings = task.pop("props")
    meta = body["metadata"]
    approval = [p for p in meta.pop("props") if p["name"] != "marking"]
    body["terms-and-conditions"] = {
        "parts": [
            {"name": gate_settings.PART, "ns": ns, "props": settings, "prose": "pinned"},
            {"name": gate_settings.APPROVAL, "ns": ns, "props": approval, "prose": "ok"},
        ]
    }


def test_a_plan_in_the_earlier_form_still_reads_and_verifies(pack: Path) -> None:
    """Plans written with the settings and approval under terms-and-conditions (before
    they moved to the task and the metadata) are read as written: same settings, same
    approval, same digest; an edit is still seen."""
    argv = ["plan", "policy.yaml", "-o", "ap.json", "--fail-on", "warning", "--approver", "Ada"]
    assert run(*argv)[0] == 0
    doc = read(Path("ap.json"))
    body = doc["assessment-plan"]
    new = (gate_settings.plan_settings(body), gate_settings.approval(body))
    to_terms_and_conditions(body)
    assert (gate_settings.plan_settings(body), gate_settings.approval(body)) == new
    assert gate_settings.approvers(body) == ("Ada",)
    assert gate_settings.content_digest(body) == new[1][gate_settings.DIGEST]
    Path("ap.json").write_text(json.dumps(doc))
    code, _, err = run("check", "policy.yaml", "data.csv", "--plan", "ap.json")
    assert code == 2 and "--fail-on is 'error' in this run and 'warning'" in err
    argv = ["check", "policy.yaml", "data.csv", "--plan", "ap.json", "--fail-on", "warning"]
    assert run(*argv, "-o", "oscal=ar.json")[0] in (0, 1)
    res = [r for r in read(Path("ar.json"))["assessment-results"]["back-matter"]["resources"]]
    assert any(prop(r, "verified") == "true" for r in res)
    for p in body["terms-and-conditions"]["parts"][0]["props"]:
        if p["name"] == "setting.fail-on":
            p["value"] = "never"
    Path("ap.json").write_text(json.dumps(doc))
    code, _, err = run(*argv)
    assert code == 2 and "edited after it was written" in err


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (("setting.fail-on", "never"), "edited after it was written"),
        (("threshold", "0.9"), "edited after it was written"),
    ],
)
def test_a_plan_edited_after_approval_is_refused(
    pack: Path, edit: tuple[str, str], named: str
) -> None:
    assert run("plan", "policy.yaml", "-o", "ap.json", "--approver", "Ada")[0] == 0
    text = Path("ap.json").read_text()
    doc = json.loads(text)
    body = doc["assessment-plan"]
    nodes = [*body["tasks"], *body["local-definitions"]["activities"]]
    hits = [p for n in nodes for p in n.get("props", []) if p["name"] == edit[0]]
    assert hits
    hits[0]["value"] = edit[1]
    Path("ap.json").write_text(json.dumps(doc))
    code, _, err = run(
        "check", "policy.yaml", "data.csv", "--plan", "ap.json", "--fail-on", "never"
    )
    assert code == 2 and named in err, err


def test_a_setting_from_a_configuration_file_is_named(pack: Path) -> None:
    assert run("plan", "policy.yaml", "-o", "ap.json")[0] == 0
    Path("fairpolicy.toml").write_text('inconclusive = "pass"\n')
    code, _, err = run("check", "policy.yaml", "data.csv", "--plan", "ap.json")
    assert code == 2 and "set by the configuration file" in err and "fairpolicy.toml" in err


def test_allow_deviation_names_only_pinned_settings(pack: Path) -> None:
    code, _, _ = run("plan", "policy.yaml", "-o", "ap.json", "--allow-deviation", "engine")
    assert code == 2 and not Path("ap.json").exists()
    from fairpolicy.errors import UsageError
    from fairpolicy.plan import plan_results

    with pytest.raises(UsageError, match="not a pinned setting"):
        plan_results("policy.yaml", allow_deviation=["engine"])


def test_the_default_score_grid_is_the_engines() -> None:
    from fairpolicy.data.sources.base import DEFAULT_SCORE_DECIMALS

    assert gate_settings.DEFAULT_SCORE_DECIMALS == DEFAULT_SCORE_DECIMALS


# ---------------------------------------------------------------- item 7: export --plan


def test_export_verifies_exactly_as_check(pack: Path) -> None:
    assert run("plan", "policy.yaml", "-o", "ap.json", "--approver", "Ada <a@x.org>")[0] == 0
    assert run("check", "policy.yaml", "data.csv", "-o", "json=r.json")[0] == 1
    code, _, err = run("export", "oscal", "r.json", "-o", "ar.json", "--plan", "ap.json")
    assert code == 0, err
    ar, _ = check_documents(Path("ar.json"), Path("ap.json"))
    res = ar["assessment-results"]["back-matter"]["resources"][0]
    assert prop(res, "verified") == "true" and "verified to match it" in res["description"]
    # results of a loosened run: refused, whatever the plan says about the policy
    assert (
        run("check", "policy.yaml", "data.csv", "--fail-on", "never", "-o", "json=n.json")[0] == 0
    )
    code, _, err = run("export", "oscal", "n.json", "-o", "ar2.json", "--plan", "ap.json")
    assert code == 2 and "--fail-on is 'never'" in err and not Path("ar2.json").exists()
    # another pack's plan: refused, nothing written
    Path("other.yaml").write_text(policy("c9", threshold='"0.9"'))
    assert run("plan", "other.yaml", "-o", "other.json")[0] == 0
    code, _, err = run("export", "oscal", "r.json", "-o", "ar3.json", "--plan", "other.json")
    assert code == 2 and "control 'c9'" in err and not Path("ar3.json").exists()
    # without --plan, nothing says verified
    assert run("export", "oscal", "r.json", "-o", "ar4.json")[0] == 0
    assert "verified" not in Path("ar4.json").read_text().lower().replace("unverified", "")


def test_only_the_verification_writes_verified() -> None:
    """ "Verified" is written only from a VerifiedPlan, which only plan.verify builds."""
    src = ROOT / "src" / "fairpolicy"
    builders = [
        p.relative_to(src).as_posix()
        for p in src.rglob("*.py")
        if "VerifiedPlan(" in p.read_text(encoding="utf-8")
    ]
    assert builders == ["plan.py"]
    writers = [
        p.relative_to(src).as_posix()
        for p in src.rglob("*.py")
        if "verified to match" in p.read_text(encoding="utf-8")
    ]
    assert writers == ["formatters/oscal.py"]
    text = (src / "formatters" / "oscal.py").read_text(encoding="utf-8")
    assert "plan_given" not in text and "if vp is not None:" in text


def test_export_and_check_as_subprocesses(pack: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("SOURCE_DATE_EPOCH", None)

    def cli(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "fairpolicy", *argv],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    assert cli("plan", "policy.yaml", "-o", "ap.json").returncode == 0
    p = cli("check", "policy.yaml", "data.csv", "--plan", "ap.json", "--fail-on", "never")
    assert p.returncode == 2 and "--fail-on is 'never'" in p.stderr and "Traceback" not in p.stderr
    assert cli("check", "policy.yaml", "data.csv", "-o", "json=r.json").returncode == 1
    p = cli("export", "oscal", "r.json", "-o", "ar.json", "--plan", "ap.json")
    assert p.returncode == 0, p.stderr
    Path("other.yaml").write_text(policy("c9"))
    assert cli("plan", "other.yaml", "-o", "other.json").returncode == 0
    p = cli("export", "oscal", "r.json", "-o", "ar2.json", "--plan", "other.json")
    assert p.returncode == 2 and "does not match its assessment plan" in p.stderr


# ---------------------------------------------------------------- issue 29: the AR


def test_the_ar_pins_the_plan_its_approval_subject_and_activities(pack: Path) -> None:
    argv = ["plan", "policy.yaml", "-o", "ap.json", "--subject", "credit v4"]
    argv += [
        "--approver",
        "Grace Hopper <grace@example.org>",
        "--timestamp",
        "2026-02-01T09:00:00Z",
    ]
    assert run(*argv)[0] == 0
    body = plan_body(Path("ap.json"))
    meta = body["metadata"]
    (approver,) = [r for r in meta["responsible-parties"] if r["role-id"] == "approver"]
    (party,) = [p for p in meta["parties"] if p["uuid"] == approver["party-uuids"][0]]
    assert party["name"] == "Grace Hopper" and "approver" in {r["id"] for r in meta["roles"]}
    approval = gate_settings.approval(body)
    assert approval["approved-at"] == "2026-02-01T09:00:00+00:00"
    assert approval["approver"] == "Grace Hopper"
    assert approval[gate_settings.DIGEST] == gate_settings.content_digest(body)
    # the run without --subject assesses the planned subject
    code, _, err = run(
        "check",
        "policy.yaml",
        "data.csv",
        "--plan",
        "ap.json",
        "-o",
        "oscal=ar.json",
        "-o",
        "json=r.json",
    )
    assert code == 1, err
    assert json.loads(Path("r.json").read_text())["subject"] == "credit v4"
    ar, _ = check_documents(Path("ar.json"), Path("ap.json"))
    doc = ar["assessment-results"]
    res = doc["back-matter"]["resources"][0]
    assert doc["import-ap"]["href"] == f"#{res['uuid']}"
    assert res["rlinks"][0]["hashes"] == [
        {"algorithm": "SHA-256", "value": hashlib.sha256(Path("ap.json").read_bytes()).hexdigest()}
    ]
    assert prop(res, "approved-content-sha256") == approval[gate_settings.DIGEST]
    assert "approved by Grace Hopper on 2026-02-01" in res["description"]
    result = doc["results"][0]
    subject = body["local-definitions"]["components"][0]["uuid"]
    assert all(o["subjects"][0]["subject-uuid"] == subject for o in result["observations"])
    assert "components" not in result["local-definitions"]  # the plan's, not a new one
    (subject_prop,) = [p for p in result["props"] if p["name"] == "setting.subject"]
    assert subject_prop["value"] == "credit v4" and subject_prop["class"] == "plan"
    assert "Set by the approved plan ap.json" in subject_prop["remarks"]
    assert "local-definitions" not in doc  # activities referred to, not redefined
    planned = {a["uuid"] for a in body["local-definitions"]["activities"]}
    (task,) = result["local-definitions"]["tasks"]
    assert {a["activity-uuid"] for a in task["associated-activities"]} == planned


def test_a_loosened_gate_is_data_in_the_ar_with_its_reason_and_source(pack: Path) -> None:
    Path("fairpolicy.toml").write_text('fail-on = "never"\n')
    code, _, _ = run(
        "check", "policy.yaml", "data.csv", "--inconclusive", "pass", "-o", "oscal=ar.json"
    )
    assert code == 0  # three failing controls, and a gate that passes: never silently
    ar, _ = check_documents(Path("ar.json"), None)
    result = ar["assessment-results"]["results"][0]
    props = {p["name"]: p for p in result["props"] if p["name"].startswith("setting.")}
    assert set(props) == {f"setting.{n}" for n in gate_settings.SETTINGS}
    assert props["setting.fail-on"]["value"] == "never"
    assert props["setting.fail-on"]["class"] == "config-file"
    assert "fairpolicy.toml" in props["setting.fail-on"]["remarks"]
    assert props["setting.inconclusive"]["class"] == "option"
    assert props["setting.seed"]["class"] == "default"
    loosened = {p["value"]: p for p in result["props"] if p["name"] == "gate-loosened-by"}
    assert set(loosened) == {"fail-on", "inconclusive"}
    assert "3 control(s) failed" in loosened["fail-on"]["remarks"]
    assert "The gate was loosened: --fail-on never" in result["description"]
    assert "The gate was loosened" in result["assessment-log"]["entries"][0]["remarks"]


def test_people_are_kept_through_the_results_json(pack: Path) -> None:
    argv = ["check", "policy.yaml", "data.csv", "-o", "json=r.json"]
    argv += ["--assessor", "Ada Lovelace <ada@example.org>", "--organization", "Engines Ltd"]
    assert run(*argv)[0] == 1
    assert run("export", "oscal", "r.json", "-o", "ar.json")[0] == 0
    meta = read(Path("ar.json"))["assessment-results"]["metadata"]
    assert {p["name"] for p in meta["parties"]} == {"Ada Lovelace", "Engines Ltd"}
    # an export's own --assessor wins
    assert run("export", "oscal", "r.json", "-o", "ar2.json", "--assessor", "Alan Turing")[0] == 0
    meta = read(Path("ar2.json"))["assessment-results"]["metadata"]
    assert "Alan Turing" in {p["name"] for p in meta["parties"]}


def test_no_empty_import_ssp_placeholder(pack: Path) -> None:
    """Without an SSP, import-ssp names a back-matter resource that carries the system's
    description as content (issue 29: no placeholder with neither link nor content)."""
    import base64

    assert run("plan", "policy.yaml", "-o", "ap.json")[0] == 0
    body = plan_body(Path("ap.json"))
    href = body["import-ssp"]["href"]
    (res,) = [r for r in body["back-matter"]["resources"] if f"#{r['uuid']}" == href]
    text = base64.b64decode(res["base64"]["value"]).decode()
    assert res["base64"]["media-type"] == "text/markdown"
    assert res["description"] in text and "the model under assessment" in text
    for r in body["back-matter"]["resources"]:
        assert r.get("rlinks") or r.get("base64") or r.get("props"), r["title"]


def test_a_setting_this_version_does_not_know_is_never_ignored(pack: Path) -> None:
    """A plan written by a newer fairpolicy pins a setting this one does not know: refused
    (re-hashed here, so the approval digest matches and only the unknown setting is left)."""
    assert run("plan", "policy.yaml", "-o", "ap.json")[0] == 0
    doc = read(Path("ap.json"))
    body = doc["assessment-plan"]
    (task,) = body["tasks"]
    ns = task["props"][0]["ns"]
    task["props"].append({"name": "setting.drift-guard", "ns": ns, "value": "on"})
    for p in body["metadata"]["props"]:
        if p["name"] == gate_settings.DIGEST:
            p["value"] = gate_settings.content_digest(body)
    Path("ap.json").write_text(json.dumps(doc))
    code, _, err = run("check", "policy.yaml", "data.csv", "--plan", "ap.json")
    assert code == 2 and "'drift-guard', which this version of fairpolicy does not know" in err
    assert "edited after" not in err


# ---------------------------------------------------------------- property


def _settings_strategy() -> Any:
    from hypothesis import strategies as st

    return st.fixed_dictionaries(
        {},
        optional={
            "fail_on": st.sampled_from(["error", "warning", "never"]),
            "inconclusive": st.sampled_from(["fail", "warn", "pass"]),
            "seed": st.integers(0, 3),
            "subject": st.sampled_from(["m1", "m2"]),
            "max_regression": st.sampled_from(["0", "0.01", "0.5"]),
            "score_decimals": st.integers(2, 5),
            "bind": st.sampled_from([{"dimension": "sex"}, {"target": "y_true"}]),
            "params": st.fixed_dictionaries(
                {},
                optional={
                    "ci": st.sampled_from([20, 30]),
                    "decision": st.sampled_from(["point", "ci_upper"]),
                    "p_value": st.sampled_from([20]),
                    "ci_level": st.sampled_from([0.9, 0.95]),
                },
            ),
        },
    )


def test_property_verify_refuses_exactly_the_deviations_not_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """For any planned settings, any run settings and any allowed deviations: the settings
    ``plan.verify`` names are exactly those whose values differ and are not allowed, and a
    run that differs in nothing else is verified. (Run results stand in as the planned
    findings of the run's settings: the comparison reads the same record.)"""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from fairpolicy.errors import PolicyError
    from fairpolicy.formatters import RenderOptions, get
    from fairpolicy.plan import plan_results, verify

    monkeypatch.chdir(tmp_path)
    Path("policy.yaml").write_text(policy("c1", threshold='"0.5"'))

    @settings(
        max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(
        _settings_strategy(),
        _settings_strategy(),
        st.lists(st.sampled_from(list(gate_settings.SETTINGS)), unique=True, max_size=4),
    )
    def check(plan_opts: dict[str, Any], run_opts: dict[str, Any], allow: list[str]) -> None:
        planned = plan_results("policy.yaml", allow_deviation=allow, **plan_opts)
        ran = plan_results("policy.yaml", **run_opts)
        Path("ap.json").write_text(get("oscal-ap")(planned, RenderOptions(path="ap.json")))
        a, b = gate_settings.of_results(planned), gate_settings.of_results(ran)
        expected = {n for n in gate_settings.SETTINGS if a[n] != b[n] and n not in allow}
        free = {f"param.{gate_settings.SETTINGS[n]}" for n in allow}
        free |= {"input.dimension", "input.target"} if "bind" in allow else set()
        try:
            vp = verify("ap.json", ran)
        except PolicyError as exc:
            named = {p.key for p in exc.problems if p.key in gate_settings.SETTINGS}
            others = [p for p in exc.problems if p.key not in gate_settings.SETTINGS]
            assert named == expected, (named, expected)
            # the only other differences are the controls' parameters and bound columns
            assert all((p.key or "").startswith(("param.", "input.")) for p in others)
            assert not any(p.key in free for p in others)
            assert expected or others
        else:
            assert not expected
            assert {d[0] for d in vp.deviations} == {
                n for n in gate_settings.SETTINGS if a[n] != b[n]
            }

    check()


def test_a_sequential_monitor_is_verified_against_its_plan(pack: Path) -> None:
    """Under the ``sequential`` window gate each control's interval is at the newest
    window's level 1 − α_t with 1000 resamples: derived from the pinned settings, so the
    planned run verifies, and another level (--ci-level) is still named."""
    Path("data.csv").write_text(with_ts(DEFAULT_DATA))
    Path("policy.yaml").write_text(policy("c1", threshold='"0.5"'))
    window = ["--window", "ts=1w"]
    assert run("plan", "policy.yaml", "-o", "ap.json", *window)[0] == 0
    code, _, err = run("check", "policy.yaml", "data.csv", "--plan", "ap.json", *window,
                       "-o", "json=r.json")  # fmt: skip
    assert code in (0, 1), err
    (finding,) = json.loads(Path("r.json").read_text())["findings"]
    assert finding["details"]["window_gate"]["gate"] == "sequential"
    code, _, err = run(
        "check", "policy.yaml", "data.csv", "--plan", "ap.json", *window, "--ci-level", "0.9"
    )
    assert code == 2 and "the setting --ci-level is '0.9'" in err, err
    assert "param.ci_level is" in err  # the level derived from 0.9 is not the planned one


def test_a_monitoring_run_against_a_release_plan_names_the_window(pack: Path) -> None:
    Path("data.csv").write_text(with_ts(DEFAULT_DATA))
    assert run("plan", "policy.yaml", "-o", "ap.json")[0] == 0
    code, _, err = run("check", "policy.yaml", "data.csv", "--plan", "ap.json", "--window", "ts")
    assert code == 2 and "the setting --window is 'ts' in this run" in err, err
    assert "the setting --window-gate is 'sequential' in this run" in err
