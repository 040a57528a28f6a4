"""Loading policies: every accepted form, and every error collected and located."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairpolicy.errors import PolicyError
from fairpolicy.policy import load_policy
from fairpolicy.policy.schema import NS, EnforcementMode, Operator, Policy, Threshold

FILES = Path(__file__).parent / "files"
ROOT = Path(__file__).resolve().parents[2]

VENTURALITICA_PLAN = """
- control-id: mc-demographic-parity
  description: "Multi-class demographic parity < 0.15"
  props:
    - name: metric_key
      value: multiclass_demographic_parity
    - name: threshold
      value: "0.15"
    - name: operator
      value: lt
    - name: "input:target"
      value: target
    - name: "input:prediction"
      value: prediction
    - name: "input:dimension"
      value: gender
"""

BINDINGS = {"input.target": "y", "input.prediction": "y_hat", "input.dimension": "sex"}


def control(**props: Any) -> dict[str, Any]:
    """A bare-list control with mapping props; defaults make a valid DP control."""
    base: dict[str, Any] = {"metric_key": "demographic_parity_diff", "threshold": "0.1"}
    base |= {"operator": "lt", **BINDINGS}
    base.update(props)
    return {"control-id": "c1", "props": {k: v for k, v in base.items() if v is not ...}}


def problems(source: Any, **kwargs: Any) -> list[str]:
    with pytest.raises(PolicyError) as info:
        load_policy(source, **kwargs)
    return [p.render() for p in info.value.problems]


def one_problem(source: Any, **kwargs: Any) -> str:
    found = problems(source, **kwargs)
    assert len(found) == 1, found
    return found[0]


def write(tmp_path: Path, text: str, name: str = "policy.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


# ---------------------------------------------------------------- forms


@pytest.mark.parametrize(
    "name", ["venturalitica-assessment-plan.yaml", "venturalitica-assessment-plan.json"]
)
def test_venturalitica_assessment_plan(name: str) -> None:
    path = FILES / name
    policy = load_policy(path)
    assert policy.form == "assessment-plan"
    assert policy.path == str(path)
    assert policy.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (policy.title, policy.version) == ("Multi-class fairness (Venturalitica)", "1.0")
    (c,) = policy.controls
    assert c.control_id == "mc-demographic-parity"
    assert c.metric_key == c.metric_key_as_written == "multiclass_demographic_parity"
    assert c.threshold == Threshold(value=0.15)
    assert c.operator is Operator.LT
    assert c.inputs == {"target": "target", "prediction": "prediction", "dimension": "gender"}
    assert c.title == c.description == "Multi-class demographic parity < 0.15"
    assert c.enforcement_mode is EnforcementMode.BLOCK and c.params == {}
    assert (c.min_samples, c.missing) == (30, "error")
    # three `input:` props, one warning for the file
    (warning,) = policy.warnings
    assert "cannot contain ':'" in warning and "input.target" in warning and name in warning


def test_venturalitica_control_unchanged_as_parsed_list() -> None:
    data = yaml.safe_load(VENTURALITICA_PLAN)
    policy = load_policy(data)
    assert (policy.form, policy.path, policy.sha256) == ("list", None, None)
    (c,) = policy.controls
    assert c.metric_key == "multiclass_demographic_parity"
    assert c.threshold.value == 0.15 and c.operator is Operator.LT
    assert c.dimension_columns == ("gender",)
    assert c.source is None
    assert len(policy.warnings) == 1
    assert data == yaml.safe_load(VENTURALITICA_PLAN)  # the caller's data is not modified


def test_venturalitica_control_under_assessment_plan_without_metadata() -> None:
    plan: dict[str, Any] = {
        "assessment-plan": {"control-implementations": [{"implemented-requirements": []}]}
    }
    plan["assessment-plan"]["control-implementations"][0]["implemented-requirements"] = (
        yaml.safe_load(VENTURALITICA_PLAN)
    )
    policy = load_policy(plan)
    assert policy.form == "assessment-plan" and policy.title is None
    assert policy.controls[0].control_id == "mc-demographic-parity"


def test_venturalitica_component_definition() -> None:
    policy = load_policy(FILES / "venturalitica-component-definition.yaml")
    assert policy.form == "component-definition"
    assert policy.version == "2.1.0" and policy.warnings == ()
    dp, di, eo = policy.controls
    assert dp.enforcement_mode is EnforcementMode.BLOCK and dp.gating
    assert (dp.severity, dp.lifecycle_phase, dp.risk_id) == (
        "high",
        "validation",
        "RISK-CREDIT-DP-001",
    )
    assert dp.inputs == {"target": "approved", "prediction": "prediction", "dimension": "gender"}
    assert dp.threshold.value == pytest.approx(0.1)
    # governance metadata (policy_id, threshold_justification, article...) is not a parameter
    assert dp.params == {}
    assert di.metric_key == "demographic_parity_ratio"
    assert di.metric_key_as_written == "disparate_impact"
    assert di.enforcement_mode is EnforcementMode.WARN and not di.gating
    assert di.operator is Operator.GT and di.min_samples == 50
    assert di.dimension_columns == ("age_group", "gender")
    assert eo.enforcement_mode is EnforcementMode.MONITOR
    assert eo.operator is Operator.LE
    assert eo.params == {"positive_label": "1"}


def test_venturalitica_lenient_component_definition() -> None:
    policy = load_policy(FILES / "venturalitica-lenient.json")
    (c,) = policy.controls
    assert c.metric_key == "multiclass_equal_opportunity"
    assert c.severity == "warning" and c.enforcement_mode is EnforcementMode.WARN
    assert c.lifecycle_phase == "validation,monitoring"


def test_severity_warning_does_not_override_explicit_mode() -> None:
    policy = load_policy([control(severity="warning", enforcement_mode="Block")])
    assert policy.controls[0].enforcement_mode is EnforcementMode.BLOCK


@pytest.mark.parametrize("name", ["list.yaml", "list.json"])
def test_bare_list(name: str) -> None:
    policy = load_policy(FILES / name)
    assert policy.form == "list" and policy.title is None and policy.warnings == ()
    by_id = {c.control_id: c for c in policy.controls}
    dp = by_id["dp-sex"]
    assert dp.threshold.value == 0.1 and dp.operator is Operator.LT  # YAML number coerced
    assert dp.title == "Demographic parity across sex" and dp.description is None
    band = by_id["ratio-band"]
    assert band.operator is Operator.BETWEEN
    assert (band.threshold.low, band.threshold.high) == (0.8, 1.25)


def test_bare_list_params_and_settings() -> None:
    c = {c.control_id: c for c in load_policy(FILES / "list.yaml").controls}["wdp-race"]
    assert c.params == {"strategy": "weighted"}
    assert (c.min_samples, c.missing) == (20, "drop")
    assert c.dimension_columns == ("race", "sex")


@pytest.mark.parametrize("name", ["catalog.json", "catalog.yaml"])
def test_shared_catalog_alone(name: str) -> None:
    policy = load_policy(FILES / name)
    assert (policy.form, policy.title, policy.version) == ("catalog", "fairness catalog", "1.0.0")
    (c,) = policy.controls
    assert c.metric_key == "demographic_parity_diff"
    assert c.metric_key_as_written == "demographic_parity_difference"
    assert c.threshold.value == 0.1 and c.operator is Operator.LE
    assert c.inputs == {"target": "approved", "prediction": "prediction", "dimension": "sex"}
    assert c.title == "Demographic parity across sex"
    # YAML: the `- id: fair-1` line; JSON: the `{` line above `"id": "fair-1"`
    first_key = line_of(FILES / name, "fair-1")
    assert c.source is not None
    assert c.source.line == (first_key if name.endswith(".yaml") else first_key - 1)


@pytest.mark.parametrize("name", ["profile.json", "profile.yaml"])
def test_shared_profile_overrides_catalog(name: str) -> None:
    policy = load_policy(FILES / name)
    assert (policy.form, policy.title) == ("profile", "fairness baseline")
    assert policy.sha256 == hashlib.sha256((FILES / name).read_bytes()).hexdigest()
    (c,) = policy.controls
    assert c.threshold.value == 0.05
    assert c.source is not None and c.source.file == str(FILES / "catalog.json")


@pytest.mark.parametrize("name", ["component-definition.json", "component-definition.yaml"])
def test_shared_component_definition_chain(name: str) -> None:
    path = FILES / name
    policy = load_policy(path)
    assert (policy.form, policy.title) == ("component-definition", "credit model")
    (c,) = policy.controls
    assert c.metric_key == "demographic_parity_diff"
    assert c.threshold.value == 0.05
    assert c.description == "Evaluated by fairpolicy on each release."
    assert c.title == "Demographic parity across sex"  # from the catalog
    assert c.inputs["target"] == "approved"
    assert c.source is not None and c.source.file == str(path)


def test_catalog_groups_nested_controls_and_param_selection() -> None:
    policy = load_policy(FILES / "chain" / "catalog.yaml")
    by_id = {c.control_id: c for c in policy.controls}
    assert list(by_id) == ["par-1", "par-1.1", "eo-1"]  # prose-only doc-1 is skipped
    assert by_id["par-1"].threshold.value == 0.1  # `<id>_prm_threshold` beats the prop 0.3
    assert any("'0.3' is overridden" in w for w in policy.warnings)
    band = by_id["par-1.1"]  # nested control; threshold_param picks one of two params
    assert (band.operator, band.threshold.low, band.threshold.high) == (Operator.BETWEEN, 0.8, 1.25)
    eo = by_id["eo-1"]  # nested group; param id ending in `threshold`
    assert eo.threshold.value == 0.2
    assert eo.metric_key == "equal_opportunity_diff"  # the foreign-ns metric_key is ignored


def test_threshold_precedence_through_the_chain() -> None:
    chain = FILES / "chain"
    assert load_policy(chain / "profile.yaml").controls[0].threshold.value == 0.08
    cdef = load_policy(chain / "component-definition.yaml")
    par, eo = cdef.controls
    assert par.threshold.value == 0.05  # component-definition set-parameters win
    assert par.inputs == {"target": "approved", "prediction": "prediction", "dimension": "gender"}
    assert par.enforcement_mode is EnforcementMode.WARN  # binding props complete the catalog's
    assert eo.threshold.value == 0.2


def test_component_definition_from_mapping_with_base_dir() -> None:
    data = yaml.safe_load((FILES / "chain" / "component-definition.yaml").read_text())
    ir = data["component-definition"]["components"][0]["control-implementations"][0]
    del ir["implemented-requirements"][0]["set-parameters"]
    policy = load_policy(data, base_dir=FILES / "chain")
    assert policy.path is None and policy.controls[0].threshold.value == 0.08  # the profile's


def test_component_definition_implementation_level_set_parameters() -> None:
    data = yaml.safe_load((FILES / "chain" / "component-definition.yaml").read_text())
    impl = data["component-definition"]["components"][0]["control-implementations"][0]
    impl["set-parameters"] = [{"param-id": "eo-1_max_gap_threshold", "values": ["0.25"]}]
    policy = load_policy(data, base_dir=FILES / "chain")
    assert [c.threshold.value for c in policy.controls] == [0.05, 0.25]


def test_line_numbers_are_recorded() -> None:
    seed = FILES / "venturalitica-assessment-plan.yaml"
    (c,) = load_policy(seed).controls
    assert c.source is not None
    assert (c.source.file, c.source.line) == (str(seed), line_of(seed, "mc-demographic-parity"))
    seed_json = FILES / "venturalitica-assessment-plan.json"
    (c,) = load_policy(seed_json).controls
    assert c.source is not None and c.source.line == line_of(seed_json, '"control-id"') - 1
    lines = [c.source.line for c in load_policy(FILES / "list.yaml").controls if c.source]
    assert lines == [
        line_of(FILES / "list.yaml", f"control-id: {cid}")
        for cid in ("dp-sex", "wdp-race", "ratio-band")
    ]


def test_json_with_tab_indentation(tmp_path: Path) -> None:
    text = json.dumps([control()], indent="\t")
    policy = load_policy(write(tmp_path, text, "policy.json"))
    assert policy.controls[0].threshold.value == 0.1


def test_unknown_extension_reads_yaml_and_json(tmp_path: Path) -> None:
    assert load_policy(write(tmp_path, json.dumps([control()]), "policy.oscal")).controls


def test_operator_spellings_are_case_insensitive() -> None:
    assert load_policy([control(operator="GTE")]).controls[0].operator is Operator.GE


def test_foreign_namespace_and_core_props_are_ignored() -> None:
    props = [{"name": k, "value": v} for k, v in control()["props"].items()]
    props += [
        {"name": "threshold", "value": "nonsense", "ns": "https://example.com/other"},
        {"name": "sort-id", "value": "001"},
        {"name": "label", "value": "DP-1"},
    ]
    policy = load_policy([{"control-id": "c1", "props": props}])
    assert policy.controls[0].threshold.value == 0.1


def test_trestle_and_numpy_are_not_imported_by_the_loader_module() -> None:
    code = (
        "import sys, fairpolicy.policy.load; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'trestle', 'numpy'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- errors


def test_all_problems_of_a_file_are_reported_at_once() -> None:
    path = FILES / "four-bad.yaml"
    found = problems(path)
    assert len(found) == 4
    for text, cid in zip(
        found, ("bad-metric", "bad-operator", "bad-threshold", "no-dimension"), strict=True
    ):
        assert text.startswith(f"{path}, control '{cid}', key '")


def test_unknown_metric_suggests_close_match() -> None:
    text = one_problem([control(metric_key="demographic_parity_dif")])
    assert "key 'metric_key'" in text and "'demographic_parity_dif'" in text
    assert "Did you mean 'demographic_parity_diff'?" in text


@pytest.mark.parametrize(("written", "meant"), [("=<", "<="), ("less_than", "lt"), ("lt;", "lt")])
def test_bad_operators_are_rejected(written: str, meant: str) -> None:
    text = one_problem([control(operator=written)])
    assert f"operator '{written}' is not allowed" in text
    assert "allowed: <, lt, <=, le, lte, >, gt, >=, ge, gte, ==, eq, !=, ne, between" in text
    assert f"Did you mean '{meant}'?" in text


@pytest.mark.parametrize(
    ("yaml_value", "expected"),
    [
        ("ten percent", "threshold 'ten percent' is not a number"),
        ("null", "threshold is empty"),
        ('""', "threshold is empty"),
        (".nan", "threshold 'nan' is not a finite number"),
        (".inf", "threshold 'inf' is not a finite number"),
        ("-.inf", "threshold '-inf' is not a finite number"),
        # Python's float()/int() and YAML 1.1 read these as numbers; a policy never means them
        ("0_10", "threshold '0_10' is not a number"),
        ('"0_10"', "threshold '0_10' is not a number"),
        ('"\u0661\u0660"', "threshold '\u0661\u0660' is not a number"),
        ("0x1A", "threshold '0x1A' is not a number"),
        ("1:30", "threshold '1:30' is not a number"),
        ('"nan"', "threshold 'nan' is not a finite number"),
        ('"Infinity"', "threshold 'Infinity' is not a finite number"),
        ('"1_0.5"', "threshold '1_0.5' is not a number"),
        ('"1e400"', "threshold '1e400' is not a finite number"),
        ("true", "threshold 'true' is not a number"),
        ('"0.1,0.2"', "operator '<' needs one number, got '0.1,0.2'"),
    ],
)
def test_bad_thresholds(tmp_path: Path, yaml_value: str, expected: str) -> None:
    text = yaml.safe_dump([control(threshold="PLACEHOLDER")]).replace("PLACEHOLDER", yaml_value)
    found = one_problem(write(tmp_path, text))
    assert "control 'c1', key 'threshold'" in found and expected in found


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        ("0.8", "needs two bounds 'low,high', got '0.8'"),
        ("1.25,0.8", "bounds '1.25,0.8' are reversed"),
        ("0.8,1,1.25", "needs two bounds 'low,high', got '0.8,1,1.25'"),
    ],
)
def test_bad_between_thresholds(threshold: str, expected: str) -> None:
    policy = [
        control(metric_key="demographic_parity_ratio", operator="between", threshold=threshold)
    ]
    assert expected in one_problem(policy)


def test_between_equal_bounds_are_accepted() -> None:
    policy = load_policy([control(operator="between", threshold="0.1, 0.1")])
    assert policy.controls[0].threshold == Threshold(low=0.1, high=0.1)


def test_unknown_param_is_rejected_with_close_match() -> None:
    text = one_problem(
        [control(metric_key="weighted_demographic_parity_multiclass", stratgy="micro")]
    )
    assert "key 'stratgy'" in text and "unknown prop 'stratgy'" in text
    assert "strategy, min_samples, missing, positive_label, positive_label.target" in text
    assert "Did you mean 'strategy'?" in text


def test_misspelt_control_prop_suggests_it() -> None:
    found = problems([control(threshold=..., treshold="0.1")])
    assert any("Did you mean 'threshold'?" in p for p in found)
    assert any("has no threshold" in p for p in found)


def test_bad_param_choice_is_rejected() -> None:
    text = one_problem([control(metric_key="multiclass_demographic_parity", aggregation="macr")])
    assert "aggregation 'macr' is not allowed; allowed: max, macro." in text
    assert "Did you mean 'macro'?" in text


@pytest.mark.parametrize(
    ("props", "expected"),
    [
        ({"min_samples": "0"}, "min_samples 0 is below 1"),
        ({"min_samples": "many"}, "min_samples 'many' is not a whole number"),
        ({"missing": "ignore"}, "missing 'ignore' is not allowed; allowed: error, drop"),
        ({"num_classes": "1"}, "num_classes 1 is below 2"),
        ({"enforcement_mode": "blocking"}, "'blocking' is not one of block, warn, monitor"),
        ({"input.dimensions": "sex"}, "unknown input role 'dimensions'"),
        ({"input.target": ""}, "input.target names no column"),
    ],
)
def test_bad_settings(props: dict[str, str], expected: str) -> None:
    assert expected in one_problem([control(**props)])


def test_params_are_coerced_to_their_kind() -> None:
    (c,) = load_policy([control(min_samples=5, num_classes="3", positive_label=1)]).controls
    assert c.min_samples == 5 and c.params == {"num_classes": 3, "positive_label": "1"}


def test_missing_binding_names_the_role() -> None:
    text = one_problem([control(**{"input.dimension": ...})])
    assert "control 'c1', key 'input.dimension'" in text
    assert "no column is bound to role 'dimension' (prop input.dimension)" in text


@pytest.mark.parametrize("prop", ["metric_key", "threshold", "operator"])
def test_missing_core_props(prop: str) -> None:
    assert f"has no {prop}" in one_problem([control(**{prop: ...})])


def test_duplicate_control_ids(tmp_path: Path) -> None:
    path = write(tmp_path, yaml.safe_dump([control(), control()], sort_keys=False))
    text = one_problem(path)
    assert "control 'c1', key 'control-id': control-id is used 2 times (lines 1, " in text


def test_duplicate_prop_is_rejected() -> None:
    props = [{"name": k, "value": v} for k, v in control()["props"].items()]
    props.append({"name": "operator", "value": "gt"})
    assert "prop 'operator' is given twice" in one_problem([{"control-id": "c1", "props": props}])


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ([], "the policy defines no controls (read as list)"),
        ([control(), "not a control"], "a control must be a mapping"),
        ([{"control-id": "c1", "props": "metric_key=x"}], "props must be a list"),
        ([{"control-id": "c1", "props": [{"value": "x"}]}], "a prop must be a mapping with 'name'"),
        ([{"props": control()["props"]}], "a control has no control-id"),
        (
            {"assessment-plan": {"control-implementations": {}}},
            "'control-implementations' must be a list",
        ),
    ],
)
def test_malformed_structures(source: Any, expected: str) -> None:
    assert expected in " | ".join(problems(source))


def test_valid_oscal_assessment_plan_without_controls() -> None:
    assert "defines no controls" in one_problem(FILES / "oscal-assessment-plan.yaml")


def test_duplicate_yaml_keys_are_rejected() -> None:
    text = one_problem(FILES / "duplicate-keys.yaml")
    assert "duplicate key 'threshold' on line 5" in text


def test_duplicate_json_keys_are_rejected(tmp_path: Path) -> None:
    path = write(tmp_path, '[{"control-id": "a",\n "control-id": "b"}]', "p.json")
    assert "duplicate key 'control-id' on line 2" in one_problem(path)


def test_python_tag_is_refused() -> None:
    text = one_problem(FILES / "python-tag.yaml")
    assert "python/object/apply:os.system" in text and "(line 2, column 10)" in text


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    text = one_problem(path)
    assert text.startswith(str(path)) and "not found" in text


def test_directory_is_not_a_policy(tmp_path: Path) -> None:
    assert "this is a directory, not a regular file" in one_problem(tmp_path)


def test_unreadable_yaml_gives_line_and_column() -> None:
    text = one_problem(FILES / "unreadable.yaml")
    assert "cannot parse YAML" in text and "(line 7, column 1)" in text


def test_unreadable_json_gives_line_and_column(tmp_path: Path) -> None:
    text = one_problem(write(tmp_path, '[\n\t{"control-id": }\n]', "p.json"))
    assert "cannot parse JSON" in text and "line 2" in text


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_bytes(b"- control-id: \xff\n")
    assert "not UTF-8" in one_problem(path)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ({"assessment-results": {}}, "assessment-results is an output of fairpolicy check"),
        ({"component_definition": {}}, "Did you mean 'component-definition'?"),
        (
            {"controls": []},
            "accepted roots: assessment-plan, component-definition, catalog, profile",
        ),
        ({"catalog": {}, "profile": {}}, "several roots (catalog, profile)"),
        ({"catalog": []}, "'catalog' must be a mapping"),
        ({}, "no root key"),
    ],
)
def test_wrong_root(source: Any, expected: str) -> None:
    assert expected in one_problem(source)


def test_scalar_document(tmp_path: Path) -> None:
    assert "the document is a str" in one_problem(write(tmp_path, "just text\n"))
    assert "the document is empty" in one_problem(write(tmp_path, ""))


def test_unsupported_source_type() -> None:
    assert "cannot load a policy from int" in one_problem(5)


def test_invalid_oscal_is_summarised_not_a_traceback() -> None:
    # --strict: what NIST's schema rejects is an error (by default one warning)
    found = problems(FILES / "invalid-oscal-catalog.json", strict=True)
    assert len(found) == 2
    assert "key 'catalog.metadata.last-modified': not valid OSCAL: Field required" in found[0]
    assert "catalog.controls[0].title" in found[1]
    assert not any("Traceback" in p or "pydantic" in p for p in found)


def test_colon_prop_names_skip_trestle_validation() -> None:
    data = json.loads((FILES / "catalog.json").read_text())
    del data["catalog"]["metadata"]["last-modified"]  # invalid OSCAL ...
    props = data["catalog"]["controls"][0]["props"]
    props[2]["name"] = "input:target"  # ... but not claiming to be OSCAL
    policy = load_policy(data)
    assert policy.controls[0].inputs["target"] == "approved" and len(policy.warnings) == 1


def test_profile_errors(tmp_path: Path) -> None:
    profile = {
        "profile": {
            "imports": [
                {"href": "catalog.json", "include-controls": [{"with-ids": ["fair-2"]}]},
                {"href": "missing.json"},
            ],
            "modify": {"set-parameters": [{"param-id": "fair-1_prm_treshold", "values": ["1"]}]},
        }
    }
    found = " | ".join(problems(profile, base_dir=FILES))
    assert "names control 'fair-2', which the imported document does not define" in found
    assert "Did you mean 'fair-1'?" in found
    assert "imported file not found" in found and "missing.json" in found
    assert "set-parameters names param 'fair-1_prm_treshold'" in found


def test_profile_import_cycle(tmp_path: Path) -> None:
    imp = {"href": "p.json", "include-all": {}}
    write(tmp_path, json.dumps({"profile": {"imports": [imp]}}), "p.json")
    assert "import cycle" in one_problem(tmp_path / "p.json")


def test_component_definition_errors(tmp_path: Path) -> None:
    def cdef(source: str, cid: str) -> dict[str, Any]:
        ir = {"control-id": cid, "set-parameters": [{"param-id": "x", "values": ["1"]}]}
        impl = {"source": source, "implemented-requirements": [ir]}
        return {"component-definition": {"components": [{"control-implementations": [impl]}]}}

    assert "source file not found" in one_problem(cdef("nowhere.json", "fair-1"), base_dir=FILES)
    text = one_problem(cdef("profile.json", "fair-2"), base_dir=FILES)
    assert "control-id 'fair-2' is not in profile.json. Did you mean 'fair-1'?" in text
    found = problems(cdef("#no-such-resource", "fair-1"), base_dir=FILES)
    assert "set-parameters needs a catalog or profile" in found[0]
    assert "has no metric_key" in found[1]


def test_back_matter_source_is_resolved() -> None:
    data = json.loads((FILES / "component-definition.json").read_text())
    body = data["component-definition"]
    body["components"][0]["control-implementations"][0]["source"] = "#res-1"
    body["back-matter"] = {"resources": [{"uuid": "res-1", "rlinks": [{"href": "profile.json"}]}]}
    del body["uuid"]  # back-matter uuids must be UUIDs in OSCAL; read it leniently
    assert load_policy(data, base_dir=FILES).controls[0].threshold.value == 0.05


def test_returns_a_policy_model() -> None:
    assert isinstance(load_policy(FILES / "list.json"), Policy)


def test_yaml_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    text = """
- control-id: c1
  props:
    <<: {input.target: y, input.prediction: y_hat, input.dimension: sex, operator: gt}
    operator: lt
    metric_key: demographic_parity_diff
    threshold: 0.1
"""
    (c,) = load_policy(write(tmp_path, text)).controls
    assert c.operator is Operator.LT and c.inputs["dimension"] == "sex"


def test_unhashable_yaml_key(tmp_path: Path) -> None:
    assert "not a scalar" in one_problem(write(tmp_path, "- ? [a, b]\n  : 1\n"))


# ---------------------------------------------------------------- provenance


def _sources(path: Path) -> dict[str, str | None]:
    return {c.control_id: c.threshold_source for c in load_policy(path).controls}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # the `<id>_prm_threshold` param (0.1) wins over the threshold prop (0.3)
        ("chain/catalog.yaml", {"par-1": "catalog", "par-1.1": "catalog", "eo-1": "catalog"}),
        # the profile sets par-1 only
        ("chain/profile.yaml", {"par-1": "profile", "par-1.1": "catalog", "eo-1": "catalog"}),
        # the component-definition sets par-1 over the profile; eo-1 keeps the catalog's
        ("chain/component-definition.yaml", {"par-1": "component-definition", "eo-1": "catalog"}),
        ("catalog.json", {"fair-1": "catalog"}),
        ("catalog.yaml", {"fair-1": "catalog"}),
        ("profile.json", {"fair-1": "profile"}),
        ("profile.yaml", {"fair-1": "profile"}),
        ("component-definition.json", {"fair-1": "component-definition"}),
        ("component-definition.yaml", {"fair-1": "component-definition"}),
        ("list.yaml", {"dp-sex": "prop", "wdp-race": "prop", "ratio-band": "prop"}),
        ("venturalitica-assessment-plan.yaml", {"mc-demographic-parity": "prop"}),
        (
            "venturalitica-component-definition.yaml",
            dict.fromkeys(("credit-dp-gender", "credit-di-age", "credit-eo-gender"), "prop"),
        ),
    ],
)
def test_threshold_source(name: str, expected: dict[str, str]) -> None:
    assert _sources(FILES / name) == expected


def test_threshold_source_of_implementation_level_set_parameters() -> None:
    data = yaml.safe_load((FILES / "chain" / "component-definition.yaml").read_text())
    impl = data["component-definition"]["components"][0]["control-implementations"][0]
    del impl["implemented-requirements"][0]["set-parameters"]
    impl["set-parameters"] = [{"param-id": "eo-1_max_gap_threshold", "values": ["0.25"]}]
    policy = load_policy(data, base_dir=FILES / "chain")
    par, eo = policy.controls
    assert (par.threshold.value, par.threshold_source) == (0.08, "profile")
    assert (eo.threshold.value, eo.threshold_source) == (0.25, "component-definition")


def test_param_without_values_falls_back_to_the_prop(tmp_path: Path) -> None:
    data = json.loads((FILES / "catalog.json").read_text())
    ctl = data["catalog"]["controls"][0]
    del ctl["params"][0]["values"]
    ctl["props"].append({"name": "threshold", "ns": NS, "value": "0.2"})
    (c,) = load_policy(data).controls
    assert (c.threshold.value, c.threshold_source) == (0.2, "prop")
    # ... until a profile sets the param
    profile = json.loads((FILES / "profile.json").read_text())
    write(tmp_path, json.dumps(data), "catalog.json")
    (c,) = load_policy(profile, base_dir=tmp_path).controls
    assert (c.threshold.value, c.threshold_source) == (0.05, "profile")


def test_objective_and_statement_ids() -> None:
    pack = ROOT / "policies" / "binary-lending"
    for doc in ("catalog.json", "profile.json"):
        policy = load_policy(pack / doc)
        for c in policy.controls:
            assert (c.objective_id, c.statement_id) == (
                f"{c.control_id}_obj",
                f"{c.control_id}_smt",
            )
    (c,) = load_policy(FILES / "component-definition.json").controls  # through the chain
    assert (c.statement_id, c.objective_id) == ("fair-1_smt", None)
    for name in (
        "list.yaml",
        "venturalitica-assessment-plan.yaml",
        "venturalitica-component-definition.yaml",
    ):
        assert all(
            c.objective_id is None and c.statement_id is None
            for c in load_policy(FILES / name).controls
        )


def test_objective_id_is_found_in_nested_parts() -> None:
    data = json.loads((FILES / "catalog.json").read_text())
    ctl = data["catalog"]["controls"][0]
    ctl["parts"] = [
        {"id": "fair-1_gdn", "name": "guidance", "prose": "Why."},
        {
            "id": "fair-1_asm",
            "name": "assessment",
            "parts": [
                {"name": "assessment-objective", "prose": "No id: skipped."},
                {"id": "fair-1_obj", "name": "assessment-objective", "prose": "Determine."},
            ],
        },
        {"id": "fair-1_smt", "name": "statement", "prose": "The statement."},
    ]
    (c,) = load_policy(data).controls
    assert (c.objective_id, c.statement_id) == ("fair-1_obj", "fair-1_smt")
    del ctl["parts"]
    (c,) = load_policy(data).controls
    assert (c.objective_id, c.statement_id) == (None, None)
