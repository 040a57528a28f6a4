"""The examples under ``examples/``: verdicts, documented numbers, reproducible data."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CREDIT = EXAMPLES / "credit"
DERMATOLOGY = EXAMPLES / "dermatology"
LL144 = EXAMPLES / "ll144"


def _generate_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("examples_generate", EXAMPLES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _check(example: Path, tmp_path: Path, *extra: str) -> tuple[int, str, dict[str, Any]]:
    """Run ``fairpolicy check`` in process; (exit code, text output, results JSON)."""
    out = io.StringIO()
    report = tmp_path / "results.json"
    code = main(
        [
            "check",
            str(example / "policy.yaml"),
            str(example / "predictions.csv"),
            "-o",
            f"json={report}",
            *extra,
        ],
        stdout=out,
    )
    return code, out.getvalue(), json.loads(report.read_text(encoding="utf-8"))


def _by_id(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["control_id"]: f for f in results["findings"]}


# ------------------------------------------------------------------ credit


CREDIT_EXPECTED = {
    # control id: (metric key, status, value documented in examples/credit/README.md)
    "four-fifths-sex": ("demographic_parity_ratio", "pass", 0.9154),
    "equal-opportunity-sex": ("equal_opportunity_diff", "pass", 0.0387),
    "equalized-odds-age": ("equalized_odds_diff", "pass", 0.0928),
    "predictive-parity-race": ("predictive_parity_diff", "pass", 0.0317),
    "demographic-parity-sex-race": ("demographic_parity_diff", "warn", 0.1815),
    "accuracy-age": ("accuracy_diff", "pass", 0.0360),
}


def test_credit_example_passes_the_gate_with_a_warning(tmp_path: Path) -> None:
    code, text, results = _check(CREDIT, tmp_path)
    assert code == 0
    assert results["policy"]["form"] == "component-definition"
    assert results["summary"]["gate"] == "pass"
    findings = _by_id(results)
    assert list(findings) == list(CREDIT_EXPECTED)
    for cid, (key, status, value) in CREDIT_EXPECTED.items():
        f = findings[cid]
        assert (f["metric_key"], f["status"]) == (key, status), cid
        assert f["value"] == pytest.approx(value, abs=5e-5), cid
    assert [f["enforcement_mode"] for f in findings.values()].count("block") == 4
    assert findings["demographic-parity-sex-race"]["enforcement_mode"] == "warn"
    assert findings["accuracy-age"]["enforcement_mode"] == "monitor"
    assert findings["four-fifths-sex"]["risk_id"] == "RISK-CR-01"
    assert results["warnings"] == []
    assert "PASS" in text and "WARN" in text


def test_credit_intersection_excludes_the_small_group(tmp_path: Path) -> None:
    _, _, results = _check(CREDIT, tmp_path)
    f = _by_id(results)["demographic-parity-sex-race"]
    assert f["inputs"]["dimension"] == "sex,race"
    assert f["min_samples"] == 100
    assert {e["group"] for e in f["excluded_groups"]} == {"F & Asian", "M & Asian"}
    assert all("min_samples=100" in e["reason"] for e in f["excluded_groups"])
    assert f["worst_group"] == "F & Black"
    assert len(f["groups"]) == 6


def test_credit_data_shape() -> None:
    df = pd.read_csv(CREDIT / "predictions.csv")
    assert list(df.columns) == [
        "applicant_id",
        "approved",
        "predicted",
        "score",
        "sex",
        "age_band",
        "race",
    ]
    assert len(df) == 3000 and df["applicant_id"].is_unique
    assert set(df["approved"]) == set(df["predicted"]) == {0, 1}
    assert df["score"].between(0, 1).all()
    assert ((df["score"] >= 0.5) == (df["predicted"] == 1)).all()
    assert set(df["sex"]) == {"F", "M"}
    assert set(df["age_band"]) == {"18-29", "30-49", "50+"}
    share = df["race"].value_counts(normalize=True)
    assert set(share.index) == {"White", "Black", "Hispanic", "Asian"}
    assert 0.03 < share["Asian"] < 0.05


# ------------------------------------------------------------------ dermatology


DERMATOLOGY_EXPECTED = {
    "weighted-f1-gap-site": ("weighted_f1_gap", "fail", 0.1890),
    "macro-f1-gap-site": ("macro_f1_gap", "fail", 0.2338),
    "per-class-f1-gap-site": ("per_class_f1_gap", "fail", 0.4260),
    "macro-equal-opportunity-sex": ("macro_equal_opportunity_multiclass", "pass", 0.0464),
    "predictive-parity-sex": ("predictive_parity_multiclass", "pass", 0.0453),
    "mc-demographic-parity": ("multiclass_demographic_parity", "pass", 0.0211),
}


def test_dermatology_example_fails_the_gate(tmp_path: Path) -> None:
    code, text, results = _check(DERMATOLOGY, tmp_path)
    assert code == 1
    assert results["policy"]["form"] == "assessment-plan"
    assert results["summary"]["gate"] == "fail"
    findings = _by_id(results)
    assert list(findings) == list(DERMATOLOGY_EXPECTED)
    for cid, (key, status, value) in DERMATOLOGY_EXPECTED.items():
        f = findings[cid]
        assert (f["metric_key"], f["status"]) == (key, status), cid
        assert f["value"] == pytest.approx(value, abs=5e-5), cid
    assert "FAIL" in text


def test_dermatology_reproduces_the_fmm_fairness_eval_headline(tmp_path: Path) -> None:
    """fmm-fairness-eval: a weighted-F1 inter-site gap of 0.19, HUSC the weaker site."""
    _, _, results = _check(DERMATOLOGY, tmp_path)
    findings = _by_id(results)
    wf1 = findings["weighted-f1-gap-site"]
    assert wf1["value"] == pytest.approx(0.19, abs=0.005)
    assert wf1["worst_group"] == "HUSC"
    assert wf1["inputs"]["score"] == "y_score"
    assert wf1["params"]["num_classes"] == 6
    assert wf1["classes"] == [str(k) for k in range(6)]
    # the rare classes drive the disparity
    per_class = findings["per-class-f1-gap-site"]["details"]
    gaps = per_class["per_class_gap"]
    assert per_class["worst_class"] == "5"
    assert min(gaps[4], gaps[5]) > 2 * max(gaps[:3])


def test_dermatology_binds_every_role_of_the_last_control(tmp_path: Path) -> None:
    _, _, results = _check(DERMATOLOGY, tmp_path)
    f = _by_id(results)["mc-demographic-parity"]
    assert f["inputs"] == {"target": "y_true", "prediction": "y_pred", "dimension": "sex"}
    assert f["params"]["aggregation"] == "max"


@pytest.mark.parametrize("example", [CREDIT, DERMATOLOGY], ids=lambda p: p.name)
def test_shipped_examples_produce_no_warnings(example: Path, tmp_path: Path) -> None:
    """What we ship is what we tell users to write: no warning on any example."""
    _, text, results = _check(example, tmp_path)
    assert results["warnings"] == []
    assert "warning" not in text.lower()


def test_dermatology_data_shape() -> None:
    df = pd.read_csv(DERMATOLOGY / "predictions.csv")
    scores = [f"y_score_{k}" for k in range(6)]
    assert list(df.columns) == ["case_id", "y_true", "y_pred", *scores, "site", "sex"]
    assert len(df) == 1500 and df["case_id"].is_unique
    assert set(df["site"]) == {"HCUV", "HUSC"}
    assert set(df["sex"]) == {"F", "M"}
    matrix = df[scores].to_numpy()
    assert np.abs(matrix.sum(axis=1) - 1.0).max() <= 1e-6
    assert (matrix.argmax(axis=1) == df["y_pred"].to_numpy()).all()
    prevalence = df["y_true"].value_counts(normalize=True).sort_index()
    assert list(prevalence.index) == list(range(6))
    assert prevalence[[0, 1, 2]].min() > 2 * prevalence[[3, 4, 5]].max()  # 3 common, 3 rare


# ------------------------------------------------------------------ both


@pytest.mark.parametrize("example", [CREDIT, DERMATOLOGY, LL144], ids=lambda p: p.name)
def test_readme_command_and_exit_code(
    example: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command in the example's README runs from the repository root with the
    exit code the README states."""
    readme = (example / "README.md").read_text(encoding="utf-8")
    command = re.search(r"^\$ (fairpolicy check .+)$", readme, re.M)
    stated = re.search(r"exit code (\d)", readme)
    assert command is not None and stated is not None
    argv = shlex.split(command.group(1))
    monkeypatch.chdir(ROOT)
    assert main(argv[1:], stdout=io.StringIO()) == int(stated.group(1))


@pytest.mark.parametrize(
    ("example", "expected"), [(CREDIT, 0), (DERMATOLOGY, 1)], ids=["credit", "dermatology"]
)
def test_python_dash_m_exit_code(example: Path, expected: int) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "fairpolicy",
            "check",
            str(example / "policy.yaml"),
            str(example / "predictions.csv"),
            "--no-color",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == expected, proc.stderr
    assert f"(exit {expected})" in proc.stdout


def test_generate_is_byte_identical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    generate = _generate_module()
    assert generate.main(["--out", str(tmp_path)]) == 0
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.csv"))
    assert written == [Path("credit/predictions.csv"), Path("dermatology/predictions.csv")]
    for rel in written:
        committed = (EXAMPLES / rel).read_bytes()
        assert (tmp_path / rel).read_bytes() == committed, f"{rel} differs: rerun generate.py"
        assert len(committed) < 300_000
    assert "wrote" in capsys.readouterr().out
