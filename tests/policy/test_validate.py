"""`fairpolicy validate`: the loader's problems and the NIST OSCAL schema, without data."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairpolicy.cli import main
from fairpolicy.errors import PolicyError
from fairpolicy.policy.load import load_policy
from tests.helpers import control

ROOT = Path(__file__).resolve().parents[2]
FILES = ROOT / "tests" / "policy" / "files"
PACKS = sorted(
    p for p in (ROOT / "policies").rglob("*.*") if p.suffix in (".json", ".yaml", ".yml")
)
DATA = ROOT / "tests" / "reference" / "binary_2g.csv"


def validate(*paths: str | Path, strict: bool = False) -> tuple[int, str]:
    """``fairpolicy validate`` (``--strict``: NIST schema problems are errors)."""
    out = io.StringIO()
    code = main(["validate", *(["--strict"] if strict else []), *map(str, paths)], stdout=out)
    return code, out.getvalue()


def _raises(path: Path) -> bool:
    try:
        load_policy(path)
    except PolicyError:
        return True
    return False


#: Every policy file of the loader's tests that `fairpolicy check` refuses.
BAD_FILES = sorted(p for p in FILES.rglob("*.*") if p.is_file() and _raises(p))


def write_json(path: Path, doc: Any) -> Path:
    path.write_text(json.dumps(doc, indent=2))
    return path


def catalog_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FILES / "catalog.json").read_text())
    return doc


# ---------------------------------------------------------------- valid files


def test_a_valid_pack_passes() -> None:
    pack = ROOT / "policies" / "binary-lending"
    code, out = validate(pack / "catalog.json", pack / "profile.json")
    assert code == 0
    assert out == (
        f"OK  {pack / 'catalog.json'}  (4 controls, catalog)\n"
        f"OK  {pack / 'profile.json'}  (4 controls, profile)\n"
    )


def test_every_policy_pack_is_valid() -> None:
    assert len(PACKS) >= 8
    code, out = validate(*PACKS)
    assert code == 0, out
    assert out.count("OK  ") == len(PACKS)


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        ("list.yaml", "(3 controls, list)"),
        ("venturalitica-assessment-plan.yaml", "(1 control, assessment-plan)"),
        ("venturalitica-component-definition.yaml", "(3 controls, component-definition)"),
        ("chain/component-definition.yaml", "(2 controls, component-definition)"),
        ("profile.yaml", "(1 control, profile)"),
    ],
)
def test_every_form_is_summarised(name: str, summary: str) -> None:
    code, out = validate(FILES / name)
    assert code == 0, out
    assert out.splitlines()[0] == f"OK  {FILES / name}  {summary}"


def test_loader_warnings_are_shown_under_the_ok_line() -> None:
    plan = FILES / "venturalitica-assessment-plan.yaml"
    code, out = validate(plan)
    assert code == 0
    assert out.splitlines()[1] == (
        f"  warning: {plan}: OSCAL prop names cannot contain ':'; "
        "write 'input.target' instead of 'input:target'"
    )


def test_yaml_numbers_and_dates_are_coerced_as_the_loader_does(tmp_path: Path) -> None:
    text = (FILES / "catalog.yaml").read_text()
    text = text.replace("'0.1'", "0.1").replace(
        "'2026-01-15T12:00:00+00:00'", "2026-01-15T12:00:00Z"
    )
    assert "- 0.1" in text and "last-modified: 2026-01-15T12:00:00Z" in text
    path = tmp_path / "catalog.yaml"
    path.write_text(text)
    code, out = validate(path)
    assert (code, out) == (0, f"OK  {path}  (1 control, catalog)\n")


# ---------------------------------------------------------------- invalid files


def test_four_bad_reports_all_four_problems() -> None:
    code, out = validate(FILES / "four-bad.yaml")
    assert code == 2
    assert out.startswith("error: invalid policy: 4 problems\n")
    for cid, key in [
        ("bad-metric", "metric_key"),
        ("bad-operator", "operator"),
        ("bad-threshold", "threshold"),
        ("no-dimension", "input.dimension"),
    ]:
        assert f"four-bad.yaml, control '{cid}', key '{key}'" in out
    assert "Did you mean 'demographic_parity_diff'?" in out
    assert "Did you mean '<='?" in out
    assert "threshold 'ten percent' is not a number" in out
    assert "no column is bound to role 'dimension'" in out


def test_a_catalog_the_loader_accepts_but_the_nist_schema_rejects(tmp_path: Path) -> None:
    doc = catalog_doc()
    doc["catalog"]["controls"][0]["params"][0]["values"] = [0.1]  # JSON number
    doc["catalog"]["controls"][0]["links"] = [{"href": "model card.md"}]
    doc["catalog"]["metadata"]["last-modified"] = "1850-01-15T12:00:00Z"
    path = write_json(tmp_path / "catalog.json", doc)
    assert len(load_policy(path).controls) == 1  # the engine would run it
    lenient = validate(path)
    assert lenient[0] == 0 and lenient[1].count("warning:") == 1 and "last-modified" in lenient[1]
    code, out = validate(path, strict=True)
    assert code == 2
    assert out.startswith(
        "error: invalid policy (not valid against the NIST OSCAL 1.2.3 catalog JSON schema): "
        "3 problems\n"
    )
    assert f"  - {path}: at $.catalog.metadata.last-modified: '1850-01-15T12:00:00Z'" in out
    assert f"  - {path}: at $.catalog.controls[0].params[0].values[0]: 0.1 is not a string" in out
    assert (
        f"  - {path}: at $.catalog.controls[0].links[0].href: 'model card.md' is not a valid URI "
        "reference: the character ' ' must be percent-encoded." in out
    )
    assert "OK  " not in out


def test_a_profile_is_checked_with_the_catalog_it_imports(tmp_path: Path) -> None:
    doc = catalog_doc()
    doc["catalog"]["controls"][0]["links"] = [{"href": "model card.md"}]
    catalog = write_json(tmp_path / "catalog.json", doc)
    profile = write_json(
        tmp_path / "profile.json", json.loads((FILES / "profile.json").read_text())
    )
    code, out = validate(profile, strict=True)
    assert code == 2
    assert "error: invalid policy (not valid against the NIST OSCAL 1.2.3 catalog JSON" in out
    assert f"{catalog}: at $.catalog.controls[0].links[0].href" in out


def test_a_component_definition_is_checked_with_its_sources(tmp_path: Path) -> None:
    chain = FILES / "chain"
    for name in ("component-definition.yaml", "profile.yaml"):
        (tmp_path / name).write_text((chain / name).read_text())
    catalog = (chain / "catalog.yaml").read_text()
    bad = catalog.replace(
        "      title: Fairness reviews are documented\n",
        "      title: Fair\n      links: [{href: 'model card.md'}]\n",
    )
    assert bad != catalog
    (tmp_path / "catalog.yaml").write_text(bad)
    assert load_policy(tmp_path / "component-definition.yaml").controls  # the engine runs it
    code, out = validate(tmp_path / "component-definition.yaml", strict=True)
    assert code == 2
    assert out.startswith("error: invalid policy (not valid against the NIST OSCAL 1.2.3 catalog")
    assert f"{tmp_path / 'catalog.yaml'}: at $.catalog.controls[0].links[0].href:" in out


def test_the_loader_and_the_schema_both_speak(tmp_path: Path) -> None:
    code, out = validate(FILES / "invalid-oscal-catalog.json", strict=True)
    assert code == 2
    blocks = re.findall(r"^error: ", out, flags=re.M)
    assert len(blocks) == 2
    assert "not valid OSCAL: Field required" in out  # the loader (trestle)
    assert "at $.catalog.metadata: 'last-modified' is a required property." in out  # NIST


def test_every_file_is_checked_and_one_bad_file_fails_the_run(tmp_path: Path) -> None:
    good = FILES / "catalog.json"
    code, out = validate(FILES / "four-bad.yaml", tmp_path / "missing.yaml", good)
    assert code == 2
    lines = out.splitlines()
    assert lines[-1] == f"OK  {good}  (1 control, catalog)"
    assert f"error: invalid policy: {tmp_path / 'missing.yaml'}: policy file not found." in out


def test_lenient_forms_are_not_held_to_the_nist_schema() -> None:
    # no uuid/metadata, or `input:x` prop names: the loader reads them leniently (with a
    # warning), and so does validate
    code, out = validate(
        FILES / "venturalitica-lenient.json", FILES / "venturalitica-assessment-plan.json"
    )
    assert code == 0, out


@pytest.mark.parametrize("path", BAD_FILES, ids=[str(p.relative_to(FILES)) for p in BAD_FILES])
def test_validate_catches_what_check_catches_with_the_same_message(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(path), str(DATA)], stdout=io.StringIO()) == 2
    check_says = capsys.readouterr().err
    assert check_says.startswith("error: invalid policy")
    code, out = validate(path)
    assert code == 2
    assert check_says in out


#: More policies `check` refuses, one loader error each (written to a temporary file).
BAD_POLICIES: dict[str, Any] = {
    "unknown-metric": [control(metric="demographic_parity_dif")],
    "bad-operator": [control(operator="less_than")],
    "bad-threshold": [control(threshold="1e400")],
    "reversed-between": [
        control(metric="demographic_parity_ratio", operator="between", threshold="1.25,0.8")
    ],
    "unknown-param": [control(metric="weighted_demographic_parity_multiclass", stratgy="micro")],
    "bad-choice": [control(metric="multiclass_demographic_parity", aggregation="macr")],
    "bad-setting": [control(min_samples="many", enforcement_mode="blocking")],
    "missing-binding": [control(metric="equal_opportunity_diff", prediction=None)],
    "unknown-role": [control(input__dimensions="sex")],
    "duplicate-ids": [control(), control()],
    "no-controls": [],
    "not-a-control": [control(), "not a control"],
    "wrong-root": {"catalogue": {"controls": []}},
    "results-root": {"assessment-results": {}},
    "missing-import": {
        "profile": {
            "uuid": "3c0b7d52-7f1e-4b8a-9a43-1f2d6c8e4a70",
            "metadata": {
                "title": "p",
                "last-modified": "2026-01-15T12:00:00Z",
                "version": "1",
                "oscal-version": "1.2.3",
            },
            "imports": [{"href": "missing-catalog.json", "include-all": {}}],
        }
    },
}


@pytest.mark.parametrize("name", list(BAD_POLICIES))
def test_validate_repeats_check_for_each_loader_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(BAD_POLICIES[name], sort_keys=False))
    assert main(["check", str(path), str(DATA)], stdout=io.StringIO()) == 2
    check_says = capsys.readouterr().err
    assert check_says.startswith("error: invalid policy")
    code, out = validate(path)
    if name == "results-root":  # validate reads assessment results as such (issue 29)
        assert "assessment-results is an output of fairpolicy check" in check_says
        assert code == 2 and out.startswith("error: invalid assessment results (not valid ")
        assert "'import-ap' is a required property" in out
        return
    assert (code, out) == (2, check_says)


def test_the_bad_files_cover_the_loader_errors() -> None:
    names = {p.name for p in BAD_FILES}
    assert {"four-bad.yaml", "duplicate-keys.yaml", "unreadable.yaml", "python-tag.yaml"} <= names
    assert "invalid-oscal-catalog.json" in names


# ---------------------------------------------------------------- as a command and a hook


def test_validate_as_a_subprocess() -> None:
    good = ROOT / "policies" / "hiring-ll144" / "profile.json"
    run = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "validate", str(FILES / "four-bad.yaml"), str(good)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2
    assert run.stderr == ""
    assert run.stdout.startswith("error: invalid policy: 4 problems\n")
    assert run.stdout.endswith(f"OK  {good}  (3 controls, profile)\n")


def test_pre_commit_hook_definition() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "fairpolicy-validate"
    assert hook["entry"] == "fairpolicy validate"
    assert hook["language"] == "python"
    assert hook["pass_filenames"] is True
    files = re.compile(hook["files"])
    for name in [
        "policies/binary-lending/catalog.json",
        "policy/fairness.yaml",
        "ml/policies/credit/profile.yml",
        "governance/credit.policy.json",
    ]:
        assert files.search(name), name
    for name in [
        "policies/README.md",
        "oscal/assessment-results.json",
        "src/fairpolicy/policy/load.py",
        "data/policy_data.csv",
        "mypolicies/x.yaml",
    ]:
        assert not files.search(name), name
    for pack in PACKS:
        assert files.search(pack.relative_to(ROOT).as_posix())
