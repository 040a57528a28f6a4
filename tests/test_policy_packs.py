"""The OSCAL policy packs under ``policies/``: valid OSCAL, loadable, evaluable."""

from __future__ import annotations

import io
import json
import re
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.cli import main
from fairpolicy.metrics.registry import REGISTRY, canonical
from fairpolicy.policy.load import load_policy
from fairpolicy.policy.schema import NS, Operator

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "policies"
PACKS = sorted(p.parent for p in POLICIES.glob("*/catalog.json"))
CATALOGS = sorted(POLICIES.rglob("catalog.json"))
PROFILES = sorted(POLICIES.rglob("profile.json"))

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

#: pack → control id → (metric key, operator, profile threshold, dimension)
EXPECTED: dict[str, dict[str, tuple[str, str, float, str]]] = {
    "binary-lending": {
        "bl-1": ("demographic_parity_ratio", ">=", 0.8, "sex"),
        "bl-2": ("equal_opportunity_diff", "<", 0.1, "sex"),
        "bl-3": ("equalized_odds_diff", "<", 0.1, "sex"),
        "bl-4": ("predictive_parity_diff", "<", 0.1, "sex"),
    },
    "multiclass-medical-multisite": {
        "mm-1": ("weighted_f1_gap", "<", 0.05, "site"),
        "mm-2": ("per_class_f1_gap", "<", 0.2, "site"),
        "mm-3": ("multiclass_equal_opportunity", "<", 0.15, "sex"),
        "mm-4": ("macro_f1_gap", "<", 0.1, "site"),
    },
    "samd-multisite": {
        "sm-1": ("weighted_f1_gap", "<", 0.05, "site"),
        "sm-2": ("per_class_f1_gap", "<", 0.2, "site"),
        "sm-3": ("multi_class_auc_gap", "<", 0.05, "site"),
        "sm-4": ("inter_site_auc_variance", "<", 0.0025, "site"),
        "sm-5": ("samd_fairness_score", ">=", 0.85, "sex"),
    },
    "hiring-ll144": {
        "ll-1": ("impact_ratio", ">=", 0.85, "sex,race"),
        "ll-2": ("scoring_impact_ratio", ">=", 0.8, "sex,race"),
        "ll-3": ("demographic_parity_ratio", ">=", 0.8, "sex"),
    },
    "eu-ai-act-high-risk": {
        "eu-1": ("demographic_parity_ratio", ">=", 0.8, "sex"),
        "eu-2": ("equal_opportunity_diff", "<", 0.1, "sex"),
        "eu-3": ("intersectional_disparity", "<", 0.1, "sex,age_band"),
        "eu-4": ("min_group_share", ">=", 0.05, "sex,age_band"),
        "eu-5": ("accuracy_diff", "<", 0.05, "sex"),
        "eu-6": ("weighted_f1_gap", "<", 0.05, "age_band"),
    },
}

#: pack → (target column, prediction column) its controls bind (data checks bind neither)
LABELS = {
    "binary-lending": ("y_true", "y_pred"),
    "multiclass-medical-multisite": ("y_true", "y_pred"),
    "samd-multisite": ("y_true", "y_pred"),
    "hiring-ll144": ("selected", "selected"),
    "eu-ai-act-high-risk": ("y_true", "y_pred"),
}


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(POLICIES)) for p in paths]


def _json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_every_pack_is_listed() -> None:
    assert [p.name for p in PACKS] == sorted(EXPECTED)
    assert [p.parent for p in PROFILES] == PACKS
    readme = (POLICIES / "README.md").read_text(encoding="utf-8")
    for pack in PACKS:
        assert f"`{pack.name}/`" in readme
    assert "--bind target=" in readme


# ------------------------------------------------------------------ valid OSCAL


@pytest.mark.parametrize("path", CATALOGS, ids=_ids(CATALOGS))
def test_catalog_parses_with_trestle(path: Path) -> None:
    from trestle.oscal.catalog import Catalog

    catalog = Catalog.oscal_read(path)
    assert catalog is not None
    assert catalog.metadata.oscal_version.model_dump(mode="json") == "1.2.1"
    assert catalog.controls


@pytest.mark.parametrize("path", PROFILES, ids=_ids(PROFILES))
def test_profile_parses_with_trestle(path: Path) -> None:
    from trestle.oscal.profile import Profile

    profile = Profile.oscal_read(path)
    assert profile is not None
    assert profile.metadata.oscal_version.model_dump(mode="json") == "1.2.1"
    assert profile.modify is not None and profile.modify.set_parameters


@pytest.mark.parametrize("path", CATALOGS + PROFILES, ids=_ids(CATALOGS + PROFILES))
def test_pack_is_valid_against_the_nist_schema(path: Path) -> None:
    from fairpolicy.oscal_schema import validate_document

    doc = _json(path)
    (model,) = doc
    assert validate_document(doc, model) == []


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
def test_every_pack_has_a_readme_naming_its_controls(pack: Path) -> None:
    """What it checks, why the thresholds, the columns, the command to run it."""
    readme = pack / "README.md"
    assert readme.is_file(), f"{pack.name} has no README.md"
    text = readme.read_text(encoding="utf-8")
    ids = [c["id"] for c in _json(pack / "catalog.json")["catalog"]["controls"]]
    missing = [cid for cid in ids if f"`{cid}`" not in text]
    assert not missing, f"{readme} does not mention {missing}"
    assert f"fairpolicy check policies/{pack.name}/profile.json" in text
    assert "--bind" in text
    assert re.search(r"\bexit [012]\b", text), "say what the example run exits with"
    columns = {
        c for ctl in load_policy(pack / "catalog.json").controls for c in ctl.inputs.values()
    }
    for binding in columns:
        for column in binding.split(","):
            assert f"`{column}`" in text, f"{readme} does not name the column {column}"


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
def test_readme_example_run_exits_as_stated(pack: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's command on a shipped example, and the exit code it promises."""
    text = (pack / "README.md").read_text(encoding="utf-8")
    commands = [
        " ".join(line.strip().rstrip("\\").strip() for line in block.splitlines())
        for block in re.findall(r"^\$ (fairpolicy check .*?)(?<!\\)$", text, re.M | re.S)
    ]
    runs = [c for c in commands if " examples/" in c]
    assert runs, "show the command on a shipped example"
    (stated,) = re.findall(r"Expected: \*\*exit (\d)\*\*", text)
    monkeypatch.chdir(ROOT)
    argv = shlex.split(runs[0])[1:]
    assert main(argv, stdout=io.StringIO()) == int(stated), runs[0]


@pytest.mark.parametrize("path", CATALOGS, ids=_ids(CATALOGS))
def test_catalog_conventions(path: Path) -> None:
    """Fixed v4 UUIDs, a threshold param per control quoted by the statement,
    namespaced fairpolicy props, an assessment objective."""
    catalog = _json(path)["catalog"]
    assert UUID4.match(catalog["uuid"])
    meta = catalog["metadata"]
    assert {"title", "last-modified", "version", "oscal-version"} <= set(meta)
    resources = {r["uuid"] for r in catalog.get("back-matter", {}).get("resources", [])}
    assert all(UUID4.match(u) for u in resources)
    for control in catalog["controls"]:
        cid = control["id"]
        param = f"{cid}_prm_threshold"
        assert [p["id"] for p in control["params"]] == [param]
        assert len(control["params"][0]["values"]) == 1
        float(control["params"][0]["values"][0])
        props = {p["name"]: p for p in control["props"]}
        spec = REGISTRY[canonical(props["metric_key"]["value"]) or ""]
        assert {"metric_key", "operator", *(f"input.{r}" for r in spec.inputs)} <= set(props)
        assert all(p["ns"] == NS for p in control["props"])
        assert all(":" not in name for name in props)
        parts = {p["name"]: p for p in control["parts"]}
        assert "{{ insert: param, " + param + " }}" in parts["statement"]["prose"]
        assert parts["assessment-objective"]["prose"]
        for link in control.get("links", []):
            assert link["href"].lstrip("#") in resources


@pytest.mark.parametrize("path", PROFILES, ids=_ids(PROFILES))
def test_profile_imports_its_catalog_by_relative_href(path: Path) -> None:
    profile = _json(path)["profile"]
    assert UUID4.match(profile["uuid"])
    hrefs = [imp["href"] for imp in profile["imports"]]
    assert hrefs == ["catalog.json"]
    assert (path.parent / hrefs[0]).is_file()


# ------------------------------------------------------------------ loading


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
def test_profile_loads_with_expected_controls(pack: Path) -> None:
    policy = load_policy(pack / "profile.json")
    assert policy.form == "profile"
    assert policy.warnings == ()
    got = {
        c.control_id: (
            c.metric_key,
            c.operator.value,
            c.threshold.value,
            c.inputs["dimension"],
        )
        for c in policy.controls
    }
    assert got == EXPECTED[pack.name]
    for c in policy.controls:
        labels = (c.inputs.get("target"), c.inputs.get("prediction"))
        spec = REGISTRY[c.metric_key]
        if "target" in spec.inputs or "target" in spec.one_of:
            assert labels == LABELS[pack.name]
        else:  # a data check reads no labels
            assert labels == (None, None)
        assert c.gating and c.title
        assert (c.statement_id, c.objective_id) == (f"{c.control_id}_smt", f"{c.control_id}_obj")


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
def test_profile_tightens_catalog_thresholds(pack: Path) -> None:
    catalog = {c.control_id: c for c in load_policy(pack / "catalog.json").controls}
    profile = {c.control_id: c for c in load_policy(pack / "profile.json").controls}
    assert catalog.keys() == profile.keys()
    tightened = 0
    for cid, c in profile.items():
        before, after = catalog[cid].threshold.value, c.threshold.value
        assert before is not None and after is not None
        if before == after:
            continue
        tightened += 1
        if c.operator in (Operator.LT, Operator.LE):
            assert after < before, cid
        else:
            assert c.operator in (Operator.GT, Operator.GE)
            assert after > before, cid
    set_params = _json(pack / "profile.json")["profile"]["modify"]["set-parameters"]
    assert tightened == len(set_params) >= 1


# ------------------------------------------------------------------ evaluating


def _binary_data(n: int = 2000, seed: int = 7) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], size=n)
    y_true = rng.integers(0, 2, size=n)
    flip = rng.uniform(size=n) < np.where(sex == "F", 0.25, 0.2)
    return pd.DataFrame(
        {"y_true": y_true, "y_pred": np.where(flip, 1 - y_true, y_true), "sex": sex}
    )


def _multiclass_data(n: int = 2000, k: int = 4, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    site = rng.choice(["north", "south", "east"], size=n)
    sex = rng.choice(["F", "M"], size=n)
    y_true = rng.integers(0, k, size=n)
    wrong = rng.uniform(size=n) < np.where(site == "south", 0.35, 0.2)
    y_pred = np.where(wrong, (y_true + rng.integers(1, k, size=n)) % k, y_true)
    return pd.DataFrame({"y_true": y_true, "y_pred": y_pred, "site": site, "sex": sex})


def _samd_data(n: int = 2400, k: int = 4, seed: int = 13) -> pd.DataFrame:
    """Multi-class with class scores (y_score_0..k-1), two sites, two sexes."""
    df = _multiclass_data(n, k, seed)
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n, k)) + 3.0 * np.eye(k)[df["y_pred"]]
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    for j in range(k):
        df[f"y_score_{j}"] = prob[:, j]
    return df


def _hiring_data(n: int = 3000, seed: int = 17) -> pd.DataFrame:
    """An AEDT's selections and scores; one race category under 2 %."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], size=n)
    race = rng.choice(
        ["White", "Black", "Hispanic", "Asian", "Native American"],
        size=n,
        p=[0.45, 0.22, 0.2, 0.118, 0.012],
    )
    score = rng.uniform(size=n) - np.where(race == "Black", 0.03, 0.0)
    return pd.DataFrame(
        {
            "selected": (score > 0.55).astype(int),
            "score": score.clip(0, 1),
            "sex": sex,
            "race": race,
        }
    )


def _eu_data(n: int = 3000, seed: int = 19) -> pd.DataFrame:
    """Binary decisions with sex and age bands; the youngest band gets more errors."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], size=n)
    age = rng.choice(["18-29", "30-49", "50+"], size=n, p=[0.25, 0.45, 0.3])
    y_true = rng.integers(0, 2, size=n)
    flip = rng.uniform(size=n) < np.where(age == "18-29", 0.24, 0.18)
    return pd.DataFrame(
        {
            "y_true": y_true,
            "y_pred": np.where(flip, 1 - y_true, y_true),
            "sex": sex,
            "age_band": age,
        }
    )


DATA = {
    "binary-lending": _binary_data,
    "multiclass-medical-multisite": _multiclass_data,
    "samd-multisite": _samd_data,
    "hiring-ll144": _hiring_data,
    "eu-ai-act-high-risk": _eu_data,
}


def _run(
    policy: Path, data: pd.DataFrame, tmp_path: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    csv = tmp_path / "data.csv"
    data.to_csv(csv, index=False)
    report = tmp_path / "results.json"
    argv = ["check", str(policy), str(csv), "-o", f"json={report}", *extra]
    code = main(argv, stdout=io.StringIO())
    return code, json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
@pytest.mark.parametrize("document", ["profile.json", "catalog.json"])
def test_pack_evaluates_on_matching_data(pack: Path, document: str, tmp_path: Path) -> None:
    code, results = _run(pack / document, DATA[pack.name](), tmp_path)
    assert code in (0, 1)
    assert results["summary"]["error"] == 0
    for f in results["findings"]:
        assert f["status"] in ("pass", "fail"), f["message"]
        assert f["value"] is not None
    assert {f["control_id"] for f in results["findings"]} == set(EXPECTED[pack.name])


def test_multisite_pack_fails_a_site_gap(tmp_path: Path) -> None:
    """The synthetic data's south site makes 35 % errors, the others 20 %."""
    code, results = _run(
        POLICIES / "multiclass-medical-multisite" / "profile.json", _multiclass_data(), tmp_path
    )
    assert code == 1
    findings = {f["control_id"]: f for f in results["findings"]}
    assert findings["mm-1"]["status"] == "fail"
    assert findings["mm-1"]["worst_group"] == "south"
    assert findings["mm-3"]["status"] == "pass"


def test_binary_pack_rebinds_columns_with_bind(tmp_path: Path) -> None:
    data = _binary_data()
    code, expected = _run(POLICIES / "binary-lending" / "profile.json", data, tmp_path)
    renamed = data.rename(columns={"y_true": "repaid", "y_pred": "decision", "sex": "gender"})
    binds = ["--bind", "target=repaid", "--bind", "prediction=decision"]
    binds += ["--bind", "dimension=gender"]
    code2, got = _run(POLICIES / "binary-lending" / "profile.json", renamed, tmp_path, *binds)
    assert code2 == code
    assert [f["value"] for f in got["findings"]] == [f["value"] for f in expected["findings"]]
    assert all(f["inputs"]["dimension"] == "gender" for f in got["findings"])


def test_binary_pack_takes_the_renames_its_readme_shows(tmp_path: Path) -> None:
    data = _binary_data()
    code, expected = _run(POLICIES / "binary-lending" / "profile.json", data, tmp_path)
    renamed = data.rename(columns={"y_true": "repaid", "y_pred": "decision", "sex": "gender"})
    args = ["--rename", "y_true=repaid", "--rename", "y_pred=decision", "--rename", "sex=gender"]
    code2, got = _run(POLICIES / "binary-lending" / "profile.json", renamed, tmp_path, *args)
    assert code2 == code
    assert [f["value"] for f in got["findings"]] == [f["value"] for f in expected["findings"]]
    assert all(len(f["bind_changes"]) == 3 for f in got["findings"])


def test_binary_pack_without_bind_names_the_fix(tmp_path: Path) -> None:
    renamed = _binary_data().rename(columns={"y_true": "repaid"})
    code, results = _run(POLICIES / "binary-lending" / "profile.json", renamed, tmp_path)
    assert code == 2
    assert all(f["status"] == "error" for f in results["findings"])
    assert "--rename y_true=COLUMN" in results["findings"][0]["message"]


def test_component_definition_rebinds_one_control(tmp_path: Path) -> None:
    """policies/README.md: rebind a single control through a component-definition
    whose source is the pack's profile."""
    profile = POLICIES / "multiclass-medical-multisite" / "profile.json"

    def requirement(i: int, cid: str, **extra: Any) -> dict[str, Any]:
        return {
            "uuid": f"6a5b4c3d-2e1f-4a9b-8c7d-6e5f4a3b2c{i:02d}",
            "control-id": cid,
            "description": "bound for this system",
            **extra,
        }

    doc = {
        "component-definition": {
            "uuid": "2b7e9f40-5c1d-4a8e-9f3b-6d2c8e1a4f70",
            "metadata": {
                "title": "test system",
                "last-modified": "2026-05-21T09:00:00+00:00",
                "version": "1.0",
                "oscal-version": "1.2.1",
            },
            "components": [
                {
                    "uuid": "8d4f1c2a-7e3b-4b9d-a6c5-0f1e2d3c4b5a",
                    "type": "software",
                    "title": "model",
                    "description": "model under test",
                    "control-implementations": [
                        {
                            "uuid": "1c9e7a5b-3d2f-4e8a-b7c6-5a4b3c2d1e0f",
                            "source": str(profile),
                            "description": "bindings",
                            "set-parameters": [
                                {"param-id": "mm-2_prm_threshold", "values": ["0.3"]}
                            ],
                            "implemented-requirements": [
                                requirement(1, "mm-1"),
                                requirement(2, "mm-2"),
                                requirement(
                                    3,
                                    "mm-3",
                                    props=[
                                        {"name": "input.dimension", "ns": NS, "value": "gender"}
                                    ],
                                ),
                            ],
                        }
                    ],
                }
            ],
        }
    }
    path = tmp_path / "system.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    # the source lies outside the component-definition's folder: allowed explicitly
    controls = {c.control_id: c for c in load_policy(path, allow_paths=[POLICIES]).controls}
    assert set(controls) == {"mm-1", "mm-2", "mm-3"}
    assert controls["mm-3"].inputs["dimension"] == "gender"
    assert controls["mm-1"].inputs["dimension"] == "site"
    assert controls["mm-1"].threshold.value == 0.05  # the profile's
    assert controls["mm-2"].threshold.value == 0.3  # the component-definition's
    data = _multiclass_data().rename(columns={"sex": "gender"})
    code, results = _run(path, data, tmp_path, "--allow-path", str(POLICIES))
    assert code in (0, 1) and results["summary"]["error"] == 0
