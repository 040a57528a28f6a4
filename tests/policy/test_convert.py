"""`fairpolicy convert`: simple-form policies → a namespaced OSCAL catalog + profile."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from fairpolicy.cli import main
from fairpolicy.errors import PolicyError, UsageError
from fairpolicy.oscal_schema import validate_document
from fairpolicy.policy import load_policy
from fairpolicy.policy.convert import convert_file
from fairpolicy.policy.schema import NS, Control

FILES = Path(__file__).parent / "files"
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

SOURCES = [
    FILES / "venturalitica-assessment-plan.yaml",
    FILES / "venturalitica-assessment-plan.json",
    FILES / "list.yaml",
    FILES / "list.json",
    FILES / "venturalitica-component-definition.yaml",
    FILES / "venturalitica-lenient.json",
    EXAMPLES / "credit" / "policy.yaml",
    EXAMPLES / "dermatology" / "policy.yaml",
]


def _id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _key(c: Control) -> tuple[Any, ...]:
    """Everything a converted control must keep."""
    return (
        c.metric_key,
        c.operator,
        c.threshold,
        c.inputs,
        c.params,
        c.enforcement_mode,
        c.severity,
        c.risk_id,
        c.lifecycle_phase,
        c.min_samples,
        c.missing,
    )


def _convert(source: Path, tmp_path: Path, ext: str = "json") -> tuple[Path, Path, list[str]]:
    """Catalog in tmp/out/, profile in tmp/out/baseline/ (so the href is `../catalog.x`)."""
    out = tmp_path / "out"
    (out / "baseline").mkdir(parents=True, exist_ok=True)
    catalog, profile = out / f"catalog.{ext}", out / "baseline" / f"profile.{ext}"
    notes: list[str] = []
    got = convert_file(source, catalog, profile, report=notes.append)
    assert got == notes
    return catalog, profile, notes


def _read(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))  # JSON is YAML


@pytest.mark.parametrize("source", SOURCES, ids=_id)
@pytest.mark.parametrize("ext", ["json", "yaml"])
def test_round_trip_keeps_every_control(source: Path, ext: str, tmp_path: Path) -> None:
    original = load_policy(source)
    catalog, profile, _ = _convert(source, tmp_path, ext)
    want = {c.control_id: _key(c) for c in original.controls}
    for path, form in ((catalog, "catalog"), (profile, "profile")):
        # the profile imports `../catalog.x`, outside its own folder: allowed explicitly
        policy = load_policy(path, allow_paths=[tmp_path / "out"])
        assert policy.form == form
        assert policy.warnings == ()  # input:x spellings and overrides are gone
        assert {c.control_id: _key(c) for c in policy.controls} == want
        assert [c.control_id for c in policy.controls] == list(want)
        assert (policy.title or "").startswith(original.title or "fairness controls")
        assert policy.version == (original.version or "1.0.0")
        for c in policy.controls:
            assert c.threshold_source == "catalog"
            assert (c.statement_id, c.objective_id) == (
                f"{c.control_id}_smt",
                f"{c.control_id}_obj",
            )
    assert _read(profile)["profile"]["imports"] == [
        {"href": f"../catalog.{ext}", "include-all": {}}
    ]


@pytest.mark.parametrize("source", SOURCES, ids=_id)
def test_output_is_valid_oscal(source: Path, tmp_path: Path) -> None:
    from trestle.oscal.catalog import Catalog
    from trestle.oscal.profile import Profile

    catalog, profile, _ = _convert(source, tmp_path)
    parsed = Catalog.oscal_read(catalog)
    assert parsed is not None and parsed.controls
    assert parsed.metadata.oscal_version.model_dump(mode="json") == "1.2.1"
    assert Profile.oscal_read(profile) is not None
    yaml_catalog, yaml_profile, _ = _convert(source, tmp_path / "y", "yaml")
    assert Catalog.oscal_read(yaml_catalog) is not None
    assert Profile.oscal_read(yaml_profile) is not None
    # the NIST OSCAL JSON schema
    assert validate_document(_read(catalog), "catalog") == []
    assert validate_document(_read(profile), "profile") == []
    assert validate_document(_read(yaml_catalog), "catalog") == []
    assert validate_document(_read(yaml_profile), "profile") == []


def test_catalog_shape(tmp_path: Path) -> None:
    catalog, _, _ = _convert(FILES / "list.yaml", tmp_path)
    doc = _read(catalog)["catalog"]
    assert doc["metadata"]["oscal-version"] == "1.2.1"
    by_id = {c["id"]: c for c in doc["controls"]}
    band = by_id["ratio-band"]
    assert band["params"] == [
        {
            "id": "ratio-band_prm_threshold",
            "label": "inclusive bounds (low, high)",
            "values": ["0.8", "1.25"],
        }
    ]
    assert all(p["ns"] == NS for p in band["props"])
    props = {p["name"]: p["value"] for p in by_id["wdp-race"]["props"]}
    assert props == {
        "metric_key": "weighted_demographic_parity_multiclass",
        "operator": "<=",  # `le` in the source: the canonical spelling
        "input.target": "label",
        "input.prediction": "pred",
        "input.dimension": "race,sex",
        "strategy": "weighted",
        "min_samples": "20",
        "missing": "drop",
        "enforcement_mode": "block",
    }
    for c in doc["controls"]:
        parts = {p["name"]: p for p in c["parts"]}
        insert = "{{ insert: param, " + c["id"] + "_prm_threshold }}"
        assert insert in parts["statement"]["prose"]
        assert insert in parts["assessment-objective"]["prose"]
        assert (parts["statement"]["id"], parts["assessment-objective"]["id"]) == (
            f"{c['id']}_smt",
            f"{c['id']}_obj",
        )
    (resource,) = doc["back-matter"]["resources"]
    (link,) = resource["rlinks"]
    assert (catalog.parent / link["href"]).resolve() == (FILES / "list.yaml").resolve()
    assert link["hashes"][0]["algorithm"] == "SHA-256"


def test_governance_props_and_aliases(tmp_path: Path) -> None:
    catalog, _, notes = _convert(FILES / "venturalitica-component-definition.yaml", tmp_path)
    doc = _read(catalog)["catalog"]
    props = {p["name"]: p["value"] for p in doc["controls"][0]["props"]}
    assert props["severity"] == "high" and props["risk_id"] == "RISK-CREDIT-DP-001"
    assert props["lifecycle_phase"] == "validation"
    assert "policy_id" not in props and "threshold_justification" not in props
    di = {p["name"]: p["value"] for p in doc["controls"][1]["props"]}
    assert di["metric_key"] == "demographic_parity_ratio"  # written `disparate_impact`
    assert (di["enforcement_mode"], di["min_samples"]) == ("warn", "50")
    assert notes == [
        "control 'credit-di-age': metric_key 'disparate_impact' is written as its "
        "registry key 'demographic_parity_ratio'"
    ]
    assert doc["metadata"]["title"] == "EU AI Act Art. 10/15 — Credit scoring fairness"
    assert doc["metadata"]["version"] == "2.1.0"


def test_converting_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    source = EXAMPLES / "credit" / "policy.yaml"
    first = [p.read_bytes() for p in _convert(source, tmp_path / "a")[:2]]
    second = [p.read_bytes() for p in _convert(source, tmp_path / "b")[:2]]
    assert first == second
    # a different source gives different UUIDs
    other = _read(_convert(FILES / "list.yaml", tmp_path / "c")[0])["catalog"]["uuid"]
    assert other != json.loads(first[0])["catalog"]["uuid"]


def test_last_modified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)

    def stamp(source: Path) -> str:
        value: str = _read(_convert(source, tmp_path)[0])["catalog"]["metadata"]["last-modified"]
        return value

    # the source's own metadata.last-modified
    assert stamp(EXAMPLES / "credit" / "policy.yaml") == "2026-05-21T09:00:00+00:00"
    # none there (Venturalitica's plan has no last-modified): the file's modification time
    copy = tmp_path / "venturalitica-assessment-plan.yaml"
    copy.write_bytes((FILES / "venturalitica-assessment-plan.yaml").read_bytes())
    os.utime(copy, (1767225600, 1767225600))
    assert stamp(copy) == "2026-01-01T00:00:00+00:00"
    # SOURCE_DATE_EPOCH wins over both
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    assert stamp(EXAMPLES / "credit" / "policy.yaml") == "2023-11-14T22:13:20+00:00"
    assert stamp(copy) == "2023-11-14T22:13:20+00:00"


def test_ids_that_are_not_tokens_are_renamed(tmp_path: Path) -> None:
    props = {
        "metric_key": "demographic_parity_diff",
        "threshold": "0.1",
        "operator": "<",
        "input.target": "y",
        "input.prediction": "p",
        "input.dimension": "sex",
    }
    ids = ["dp sex", "dp-sex", "1st", "eo:1", "ok_id", "équité"]
    source = tmp_path / "policy.json"
    source.write_text(json.dumps([{"control-id": i, "props": props} for i in ids]))
    catalog, profile, notes = _convert(source, tmp_path)
    doc = _read(catalog)["catalog"]
    got = [c["id"] for c in doc["controls"]]
    assert got == ["dp-sex-2", "dp-sex", "c-1st", "eo-1", "ok_id", "equite"]
    assert len(notes) == 4 and "control 'dp sex': renamed 'dp-sex-2'" in notes[0]
    alt = {
        c["id"]: p["value"]
        for c in doc["controls"]
        for p in c["props"]
        if p["name"] == "alt-identifier"
    }
    assert alt == {"dp-sex-2": "dp sex", "c-1st": "1st", "eo-1": "eo:1", "equite": "équité"}
    assert "'eo:1' → 'eo-1'" in doc["metadata"]["remarks"]
    allowed = load_policy(profile, allow_paths=[profile.parent.parent])
    assert [c.control_id for c in allowed.controls] == got
    from trestle.oscal.catalog import Catalog

    assert Catalog.oscal_read(catalog) is not None


# ---------------------------------------------------------------- same verdicts


def _findings(policy: Path, data: Path, tmp_path: Path, name: str) -> tuple[int, list[Any]]:
    report = tmp_path / f"{name}.json"
    argv = ["check", str(policy), str(data), "-o", f"json={report}"]
    argv += ["--allow-path", str(tmp_path)]  # the profile imports `../catalog.json`
    code = main(argv, stdout=io.StringIO())
    results = json.loads(report.read_text(encoding="utf-8"))
    return code, [
        (
            f["control_id"],
            f["metric_key"],
            f["value"],
            f["status"],
            f["threshold"],
            f["operator"],
            f["groups"],
            f["enforcement_mode"],
        )
        for f in results["findings"]
    ]


@pytest.mark.parametrize("example", ["credit", "dermatology"])
def test_converted_policy_gives_the_same_findings(example: str, tmp_path: Path) -> None:
    source = EXAMPLES / example / "policy.yaml"
    data = EXAMPLES / example / "predictions.csv"
    catalog, profile, _ = _convert(source, tmp_path)
    code, want = _findings(source, data, tmp_path, "original")
    assert want
    for path in (catalog, profile):
        assert _findings(path, data, tmp_path, path.stem) == (code, want)


# ---------------------------------------------------------------- the command


def test_cli_convert(tmp_path: Path) -> None:
    out = io.StringIO()
    catalog, profile = tmp_path / "c.yaml", tmp_path / "p.json"
    argv = ["convert", str(FILES / "list.yaml"), "-o", str(catalog), "--profile", str(profile)]
    assert main(argv, stdout=out) == 0
    assert out.getvalue() == f"wrote {catalog} and {profile}\n"
    assert _read(catalog)["catalog"]["controls"]
    assert _read(profile)["profile"]["imports"][0]["href"] == "c.yaml"
    assert main(["convert", str(FILES / "list.yaml"), "-o", str(catalog)], io.StringIO()) == 0


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("catalog.json", "a catalog"),
        ("profile.yaml", "a profile"),
        ("component-definition.json", "a component-definition (implementing profile.json)"),
        ("chain/component-definition.yaml", "implementing profile.yaml"),
    ],
)
def test_already_oscal_is_refused(
    name: str, what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError) as info:
        convert_file(FILES / name, tmp_path / "out.json")
    message = info.value.render()
    assert "already OSCAL" in message and "nothing to convert" in message and what in message
    assert str(FILES / name) in message
    argv = ["convert", str(FILES / name), "-o", str(tmp_path / "out.json")]
    assert main(argv, stdout=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "nothing to convert" in err and "Traceback" not in err
    assert not (tmp_path / "out.json").exists()


def test_invalid_source_is_a_policy_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(PolicyError) as info:
        convert_file(FILES / "four-bad.yaml", tmp_path / "out.json")
    assert len(info.value.problems) >= 2
    argv = ["convert", str(FILES / "four-bad.yaml"), "-o", str(tmp_path / "out.json")]
    assert main(argv, stdout=io.StringIO()) == 2
    assert "invalid policy" in capsys.readouterr().err
    assert not (tmp_path / "out.json").exists()
    argv = ["convert", str(tmp_path / "missing.yaml"), "-o", str(tmp_path / "out.json")]
    assert main(argv, stdout=io.StringIO()) == 2


@pytest.mark.parametrize(
    ("output", "profile", "expected"),
    [
        ("out.xml", None, "cannot tell the format of 'out.xml'"),
        ("out.json", "prof.txt", "cannot tell the format of 'prof.txt'"),
        ("out.json", "out.json", "the catalog and the profile would be the same file"),
        ("policy.yaml", None, "would overwrite the policy"),
        ("policy.yaml/out.json", None, "is not a directory"),  # missing folders are created
        ("out.json", "policy.yaml/profile.json", "is not a directory"),
    ],
)
def test_bad_outputs(output: str, profile: str | None, expected: str, tmp_path: Path) -> None:
    source = tmp_path / "policy.yaml"
    source.write_bytes((FILES / "list.yaml").read_bytes())
    argv = ["convert", str(source), "-o", str(tmp_path / output)]
    if profile:
        argv += ["--profile", str(tmp_path / profile)]
    err = io.StringIO()
    from contextlib import redirect_stderr

    with redirect_stderr(err):
        assert main(argv, stdout=io.StringIO()) == 2
    assert expected in err.getvalue()
    assert not (tmp_path / "out.json").exists()  # nothing half-written
    assert source.read_bytes() == (FILES / "list.yaml").read_bytes()


def test_loader_warnings_and_multiline_values_are_reported(tmp_path: Path) -> None:
    _, _, notes = _convert(FILES / "venturalitica-assessment-plan.yaml", tmp_path)
    assert len(notes) == 1 and "write 'input.target' instead of 'input:target'" in notes[0]
    source = tmp_path / "policy.yaml"
    source.write_text(
        yaml.safe_dump(
            [
                {
                    "control-id": "c1",
                    "description": "Line one\nline two",
                    "props": {
                        "metric_key": "demographic_parity_diff",
                        "threshold": "0.1",
                        "operator": "<",
                        "input.target": "y",
                        "input.prediction": "p",
                        "input.dimension": "sex",
                        "risk_id": "R-1\nsee register",
                    },
                }
            ]
        )
    )
    catalog, _, notes = _convert(source, tmp_path / "m")
    assert notes == ["control 'c1': prop 'risk_id' is written on one line"]
    (c,) = load_policy(catalog).controls
    assert c.risk_id == "R-1 see register" and c.title == "Line one line two"
    assert validate_document(_read(catalog), "catalog") == []
