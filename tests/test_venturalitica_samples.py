"""Venturalitica's real published sample policies, run unchanged (issue 27 item 2).

``tests/fixtures/venturalitica/samples/`` holds every policy file of
Venturalitica/venturalitica-sdk-samples at commit d74d10e, byte for byte (NOTICE.md).
Each one either runs — its values equal Venturalitica 0.8.2's, recorded by
``record_samples.py`` with the real package, to 1e-12 — or is refused (exit 2) with the
reason and the fix: for a shape Venturalitica 0.8.2 itself does not evaluate (the
"hybrid" catalog), a meaning that differs (``age_bucket_method``), a YAML key written
twice, or a metric key 0.8.2 does not have either. The columns the samples leave to the
caller (Venturalitica's ``enforce(target=..., prediction=...)``) are bound with ``bind``.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import fairpolicy
from fairpolicy.errors import PolicyError
from fairpolicy.policy.load import load_policy

HERE = Path(__file__).parent / "fixtures" / "venturalitica" / "samples"
RECORDED = json.loads((HERE / "recorded.json").read_text())
ROOT = Path(__file__).resolve().parents[1]
BIND = {"target": "target", "prediction": "prediction"}

LOAN = "loan-credit-scoring/"
VISION = "vision-fairness/policies/vision/"
SAMPLES = sorted(str(p.relative_to(HERE)) for p in HERE.rglob("*.oscal.yaml"))


def _problems(name: str, bound: tuple[str, ...] = ("target", "prediction")) -> str:
    with pytest.raises(PolicyError) as info:
        load_policy(HERE / name, bound=bound)
    return str(info.value)


def test_the_samples_are_vendored_byte_for_byte() -> None:
    """Each file's git blob id is the one NOTICE.md records from the samples' commit."""
    notice = (HERE / "NOTICE.md").read_text()
    assert "d74d10ec941a2dd96b979d1e8a4cdb6ecfbbc8f8" in notice and "Apache" in notice
    rows = {
        line.split("|")[1].strip(" `"): line.split("|")[3].strip(" `")
        for line in notice.splitlines()
        if line.startswith("| `")
    }
    assert sorted(rows) == SAMPLES and len(SAMPLES) == 14
    for name, blob in rows.items():
        data = (HERE / name).read_bytes()
        got = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        assert got == blob, name


def test_the_recording_names_its_version() -> None:
    assert RECORDED["_meta"]["library"] == "venturalitica 0.8.2"


@pytest.mark.skipif(
    importlib.util.find_spec("venturalitica") is None,
    reason="venturalitica not installed (the recorded values are compared instead)",
)
def test_live_venturalitica_agrees_with_the_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # pragma: no cover
    spec = importlib.util.spec_from_file_location("record_samples", HERE / "record_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.chdir(tmp_path)
    live = json.loads(json.dumps(module.record()))
    assert live["_meta"] == RECORDED["_meta"] and live["_registry"] == RECORDED["_registry"]
    for name, values in RECORDED.items():
        if name.startswith("_"):
            continue
        assert set(live[name]) == set(values), name
        for cid, value in values.items():
            assert abs(live[name][cid] - value) <= 1e-12, (name, cid)


# ---------------------------------------------------------------- the pulled SSPs


def test_the_pulled_model_ssp_runs_with_venturalitica_values() -> None:
    """``system-security-plan`` (what `venturalitica pull` writes, what 0.8.2 reads): its
    requirements are the controls; 0.8.2's enforce gave these values on loan.csv."""
    name = LOAN + "model_policy.oscal.yaml"
    results = fairpolicy.check(str(HERE / name), str(HERE / "loan.csv"), bind=BIND)
    want = RECORDED[name]
    got = {f.control_id: f for f in results.findings}
    assert set(got) == set(want) == {"unfair-credit-exclusion", "performance-stability-accuracy"}
    for cid, value in want.items():
        assert got[cid].value == pytest.approx(value, abs=1e-12), cid
    # both fail, as in 0.8.2 (0.0794 < 0.01 is false; 0.7883 > 0.79 is false)
    assert {f.status for f in results.findings} == {"fail"}
    assert got["unfair-credit-exclusion"].description.startswith("Unfair Credit Exclusion")
    said = [w for w in results.warnings if "Not read" in w]
    assert len(said) == 1
    for key in ("risks", "system-characteristics", "legacy-id"):
        assert key in said[0]
    assert results.policy.form == "system-security-plan"


def test_the_pulled_data_ssp_refuses_only_the_age_buckets() -> None:
    """Everything in the data SSP reads but ``age_bucket_method``/``age_buckets`` (qcut's
    right-closed tertiles); without that control the values are 0.8.2's."""
    name = LOAN + "data_policy.oscal.yaml"
    text = _problems(name, ("target", "prediction", "sensitive_columns"))
    assert "invalid policy:" in text and "problems" not in text  # exactly one problem
    assert "class-balance-by-age" in text and "pandas.qcut" in text and "bins: q3" in text

    doc = yaml.safe_load((HERE / name).read_text())
    reqs = doc["system-security-plan"]["control-implementation"]["implemented-requirements"]
    reqs[:] = [r for r in reqs if r["control-id"] != "class-balance-by-age"]
    bind = {**BIND, "sensitive_columns": "age,gender,income"}  # what 0.8.2 guesses here
    results = fairpolicy.check(doc, str(HERE / "loan.csv"), bind=bind)
    want = RECORDED[name]
    got = {f.control_id: f.value for f in results.findings}
    assert set(got) == set(want) - {"class-balance-by-age"}
    for cid, value in got.items():
        assert value == pytest.approx(want[cid], abs=1e-12), cid
    # 0.8.2 ignores input:dimension (colon) and uses enforce's dimension: its "age" value
    # is the gender one, which is why the age control is not compared
    assert want["class-balance-by-age"] == want["class-balance-by-gender"]
    # no empty-flag note for the comma list's spaces ('age, gender' is not renamed)
    assert not [w for w in results.warnings if w.startswith(" changed control")]
    said = " ".join(results.warnings)
    assert "the prop quasi_identifiers is read as the role input.dimension" in said
    assert "parameter quasi_identifiers" not in said


def test_the_risk_register_ssp_defines_no_controls() -> None:
    text = _problems(LOAN + "risks.oscal.yaml")
    assert "is empty: this system-security-plan is a risk register (3 risk(s)" in text
    assert "defines no controls" in text and "problems" not in text


def test_strict_validates_a_pulled_ssp_with_trestles_ssp_model() -> None:
    """A pulled SSP is not NIST OSCAL (no import-profile, Venturalitica's keys): --strict
    says so through trestle's SystemSecurityPlan model; lenient, it is read."""
    with pytest.raises(PolicyError) as info:
        load_policy(HERE / LOAN / "model_policy.oscal.yaml", strict=True)
    text = str(info.value)
    assert "not valid OSCAL" in text and "import-profile" in text


def test_a_nist_ssp_given_as_the_policy_names_the_profile(tmp_path: Path) -> None:
    """fairpolicy's own -o oscal-ssp output imports a profile: pass the profile, --ssp the SSP."""
    ssp = {
        "system-security-plan": {
            "uuid": "0b3a0c52-2d8b-4a5c-9a0e-1f6a2b3c4d5e",
            "metadata": {"title": "t"},
            "import-profile": {"href": "baseline/profile.json"},
            "control-implementation": {"description": "d", "implemented-requirements": []},
        }
    }
    path = tmp_path / "ssp.json"
    path.write_text(json.dumps(ssp))
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    text = str(info.value)
    profile = tmp_path / "baseline" / "profile.json"  # the href, from where the reader is
    assert f"imports the profile '{profile}'" in text
    assert f"fairpolicy check {profile} DATA" in text and f"--ssp {path}" in text


def test_fairpolicys_own_ssp_round_trip(tmp_path: Path) -> None:
    """-o oscal-ssp of a run on the pulled SSP writes a NIST SSP importing a profile (the
    policy converted); that SSP as the policy is refused naming the profile, and the
    profile gives 0.8.2's values again."""
    from fairpolicy.cli import main

    name = LOAN + "model_policy.oscal.yaml"
    out = tmp_path / "out" / "ssp.json"
    args = [str(HERE / name), str(HERE / "loan.csv"), "--bind", "target=target"]
    assert main(["check", *args, "-o", f"oscal-ssp={out}"]) == 1
    with pytest.raises(PolicyError) as info:
        load_policy(out)
    profile = out.parent / "ssp.profile.json"
    assert f"fairpolicy check {profile} DATA" in str(info.value)
    results = fairpolicy.check(str(profile), str(HERE / "loan.csv"), bind=BIND)
    for f in results.findings:
        assert f.value == pytest.approx(RECORDED[name][f.control_id], abs=1e-12)


def test_an_ssp_key_not_read_is_refused() -> None:
    doc = yaml.safe_load((HERE / LOAN / "model_policy.oscal.yaml").read_text())
    doc["system-security-plan"]["control-implementation"]["set-parameters"] = []
    with pytest.raises(PolicyError, match=r"'set-parameters'.*refused rather than ignored"):
        load_policy(doc, bound=("target",))


# ---------------------------------------------------------------- the other loan samples


def test_the_assessment_plan_sample_runs_with_venturalitica_values() -> None:
    """0.8.2's loader no longer reads an assessment-plan root; its metric functions give
    these values for the two controls on categorical columns (the raw-age one is
    INCONCLUSIVE until binned: issue 27 item 3)."""
    name = LOAN + "policies/loan/data_policy.oscal.yaml"
    results = fairpolicy.check(str(HERE / name), str(HERE / "loan.csv"))
    got = {f.control_id: f for f in results.findings}
    for cid, value in RECORDED[name].items():
        assert got[cid].value == pytest.approx(value, abs=1e-12), cid
        assert got[cid].status == "pass"
    assert got["credit-age-disparate"].status == "inconclusive"


@pytest.mark.parametrize(
    ("name", "links"),
    [
        (LOAN + "policies/loan/model_policy.oscal.yaml", 2),
        (LOAN + "policies/loan/governance-enhanced.oscal.yaml", 11),
        ("medical-spine-segmentation/policies/medical/fairness.oscal.yaml", 4),
    ],
)
def test_hybrid_catalogs_are_refused_as_venturalitica_evaluates_none(name: str, links: int) -> None:
    text = _problems(name)
    assert '"hybrid" form' in text and f"linked from {links} implemented-requirement" in text
    assert "evaluates none of these metrics" in text and "problems" not in text


def test_a_hybrid_catalog_really_evaluates_nothing_in_venturalitica_082() -> None:
    """The claim above, as 0.8.2's loader reads it: ``_parse_generic_oscal`` collects
    control-implementations from ``components`` and a singular ``control-implementation``
    only, then catalog controls with a ``metric_key`` prop. The hybrid samples have none of
    these (their metrics hang off a catalog-level ``control-implementations``)."""
    for name in (
        LOAN + "policies/loan/model_policy.oscal.yaml",
        LOAN + "policies/loan/governance-enhanced.oscal.yaml",
        "medical-spine-segmentation/policies/medical/fairness.oscal.yaml",
    ):
        cat = yaml.safe_load((HERE / name).read_text())["catalog"]
        assert "components" not in cat and "control-implementation" not in cat
        assert cat["control-implementations"] and cat["inventory-items"]

        def metric_controls(controls: list[Any]) -> int:
            return sum(
                any(p.get("name") == "metric_key" for p in c.get("props", []))
                + metric_controls(c.get("controls", []))
                for c in controls
            )

        assert metric_controls(cat["controls"]) == 0, name


def test_the_medical_register_names_keys_neither_tool_has() -> None:
    text = _problems("medical-spine-segmentation/risks.oscal.yaml")
    keys = ["minority_sex_prop", "min_scanner_dice", "small_vol_dice", "global_dice"]
    for key in keys:
        assert f"unknown metric_key '{key}'" in text
        assert RECORDED["_registry"][key] is False  # 0.8.2 skips them: "[Skip] No metric"


# ---------------------------------------------------------------- the vision catalogs


def test_a_yaml_key_written_twice_is_refused() -> None:
    """data_bias.oscal.yaml writes ``value:`` twice in one prop (k_anonymity, then
    class_imbalance); PyYAML, and so Venturalitica, keeps the last one silently."""
    text = _problems(VISION + "data_bias.oscal.yaml")
    assert "duplicate key 'value' on line 49" in text and "once per mapping" in text


def _known(name: str) -> tuple[str, dict[str, Any]]:
    """The problems of a vision catalog, and the catalog without the controls whose metric
    key neither tool has (0.8.2 skips them; fairpolicy refuses them)."""
    text = _problems(VISION + name)
    doc = yaml.safe_load((HERE / VISION / name).read_text())
    pruned = copy.deepcopy(doc)
    for group in pruned["catalog"]["controls"]:
        group["controls"] = [
            c
            for c in group["controls"]
            if not any(
                p["name"] == "metric_key" and RECORDED["_registry"].get(p["value"]) is False
                for p in c["props"]
            )
        ]
    return text, pruned


@pytest.mark.parametrize(
    "name", ["fairness_gender.oscal.yaml", "fairness_race.oscal.yaml", "fairness_age.oscal.yaml"]
)
def test_vision_catalogs_refuse_only_what_neither_tool_has(name: str) -> None:
    text, pruned = _known(name)
    assert "unknown metric_key 'predictive_equality_diff'" in text
    assert RECORDED["_registry"]["predictive_equality_diff"] is False
    assert "prop 'operator' is given twice ('<', then '>')" in text
    assert "Venturalitica keeps the last one silently" in text
    for line in text.splitlines()[1:]:
        assert "fairface-gender-predictive-equality" in line, line

    results = fairpolicy.check(pruned, str(HERE / "vision.csv"), bind=BIND)
    want = RECORDED[VISION + name]
    got = {f.control_id: f for f in results.findings}
    compared = [cid for cid in want if cid in got]
    assert len(compared) == len(want)
    for cid in compared:
        assert got[cid].value == pytest.approx(want[cid], abs=1e-12), cid
    for f in results.findings:  # a catalog control's description is read as it
        assert f.description and f.description != f.control_id


def test_input_parameters_are_read_as_parameters_and_said_once() -> None:
    """``input:average`` and ``input:aggregation`` name parameters of the metric, not
    roles (Venturalitica passes every input. prop to the metric as a keyword)."""
    _, pruned = _known("fairness_age.oscal.yaml")
    results = fairpolicy.check(pruned, str(HERE / "vision.csv"), bind=BIND)
    got = {f.control_id: f for f in results.findings}
    assert got["fairface-age-parity"].params["aggregation"] == "max"
    assert got["perf-age-f1"].params["average"] == "macro"
    said = [w for w in results.warnings if "is read as the parameter" in w]
    assert len(said) == 2
    assert any(
        "input.average" in w and "perf-age-precision, perf-age-recall, perf-age-f1" in w
        for w in said
    )
    assert any("input.aggregation" in w and "fairface-age-parity" in w for w in said)


def test_the_full_vision_catalog_refuses_the_per_task_keys() -> None:
    text, _ = _known("fairness.oscal.yaml")
    for key in ("accuracy_score_gender", "precision_score_race", "f1_score_age"):
        assert f"unknown metric_key '{key}'" in text
        assert RECORDED["_registry"][key] is False


def test_strategy_is_no_parameter_of_either_tools_metric() -> None:
    """``input:strategy`` on multiclass_demographic_parity and predictive_parity: neither
    fairpolicy's metrics nor 0.8.2's functions (they read ``aggregation`` and nothing) take
    it, so it is refused by name rather than dropped."""
    text = _problems(VISION + "fairness_intersectional.oscal.yaml")
    assert text.count("unknown input role 'strategy'") == 2
    assert "takes the parameters aggregation" in text


def test_the_cli_as_a_subprocess(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    base = [sys.executable, "-m", "fairpolicy", "check"]
    run = subprocess.run(
        [
            *base,
            str(HERE / LOAN / "model_policy.oscal.yaml"),
            str(HERE / "loan.csv"),
            "--bind",
            "target=target",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 1, run.stderr  # both controls fail, as in 0.8.2
    assert "Traceback" not in run.stderr
    run = subprocess.run(
        [*base, str(HERE / LOAN / "policies/loan/model_policy.oscal.yaml"), str(HERE / "loan.csv")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 2 and '"hybrid" form' in run.stderr
    assert "Traceback" not in run.stderr
    # the column the pulled SSP leaves to the caller: the fix names --bind
    run = subprocess.run(
        [*base, str(HERE / LOAN / "model_policy.oscal.yaml"), str(HERE / "loan.csv")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 2 and "--bind target=COLUMN" in run.stderr
    assert "performance-stability-accuracy" in run.stderr and "Traceback" not in run.stderr


def _one(key: str, props: dict[str, str]) -> Any:
    from fairpolicy.metrics.registry import REGISTRY

    spec = REGISTRY[key]
    lo, hi = spec.value_range
    mid = (max(lo, -1.0) + min(hi, 1.0)) / 2
    control = {
        "control-id": "c",
        "props": [
            {"name": "metric_key", "value": key},
            {"name": "operator", "value": "<" if spec.better == "lower" else ">"},
            {"name": "threshold", "value": repr(mid)},
            *({"name": n, "value": v} for n, v in props.items()),
        ],
    }
    roles = ("target", "prediction", "dimension", "score", "sensitive_columns", "fields")
    return load_policy([control], bound=roles).controls[0]


def test_every_parameter_of_every_metric_reads_as_input_dot_its_name() -> None:
    """Brute force over the registry: ``input.<p>`` gives the control the parameters the
    plain prop ``<p>`` gives, for every parameter with a fixed set of values — except a
    parameter named as a role (``rate``), which ``input.`` binds as the role, as
    Venturalitica would (it looks every ``input.`` value up as a column but ``average``)."""
    from fairpolicy.metrics.registry import REGISTRY
    from fairpolicy.policy.schema import ROLES

    checked = 0
    for key, spec in REGISTRY.items():
        for ps in spec.params:
            if not ps.choices:
                continue
            value = str(ps.choices[-1])
            if ps.name in ROLES:
                assert _one(key, {f"input.{ps.name}": "col"}).inputs[ps.name] == "col"
                continue
            try:
                plain = _one(key, {ps.name: value})
            except PolicyError:
                continue  # needs more than one prop to load; not this test's subject
            spelled = _one(key, {f"input.{ps.name}": value})
            assert spelled.params == plain.params, (key, ps.name)
            checked += 1
    assert checked >= 10


def _unhybrid(cat: dict[str, Any]) -> dict[str, Any]:
    """The fix the hybrid refusal gives: each inventory item's props on the catalog control
    that links to it; inventory-items and control-implementations removed."""
    cat = copy.deepcopy(cat)
    items = {i["uuid"]: i["props"] for i in cat.pop("inventory-items")}
    by_control: dict[str, list[Any]] = {}

    def walk(reqs: list[Any]) -> None:
        for req in reqs:
            for link in req.get("links", []):
                by_control.setdefault(req["control-id"], []).extend(items[link["href"][1:]])
            walk(req.get("implemented-requirements", []))

    for impl in cat.pop("control-implementations"):
        walk(impl["implemented-requirements"])
    for control in cat["controls"]:
        control["props"] = by_control[control["id"]]
    return {"catalog": cat}


def test_the_hybrid_fix_runs_with_venturalitica_values() -> None:
    """Moved as the message says, the loan hybrid catalog evaluates its two metrics — the
    same demographic parity and accuracy as the pulled model SSP, so 0.8.2's values."""
    doc = yaml.safe_load((HERE / LOAN / "policies/loan/model_policy.oscal.yaml").read_text())
    results = fairpolicy.check(_unhybrid(doc["catalog"]), str(HERE / "loan.csv"))
    got = {f.control_id: f.value for f in results.findings}
    want = RECORDED[LOAN + "model_policy.oscal.yaml"]
    assert got["A.1"] == pytest.approx(want["unfair-credit-exclusion"], abs=1e-12)
    assert got["A.2"] == pytest.approx(want["performance-stability-accuracy"], abs=1e-12)


def test_the_age_bucket_fix_gives_a_verdict() -> None:
    """The data SSP's age control with the fix the refusal names (bins: q3) is evaluated
    on three left-closed age bands, and the report shows them."""
    doc = yaml.safe_load((HERE / LOAN / "data_policy.oscal.yaml").read_text())
    reqs = doc["system-security-plan"]["control-implementation"]["implemented-requirements"]
    (age,) = [r for r in reqs if r["control-id"] == "class-balance-by-age"]
    age["props"] = [p for p in age["props"] if not p["name"].startswith("age_bucket")]
    age["props"].append({"name": "bins", "value": "q3"})
    reqs[:] = [age]
    results = fairpolicy.check(doc, str(HERE / "loan.csv"), bind=BIND)
    (finding,) = results.findings
    assert finding.status in ("pass", "fail") and finding.value is not None
    assert len(finding.groups) == 3
