"""Issue-level acceptance: a Venturalitica assessment-plan control and a Venturalitica
component-definition run unchanged; bad policies exit 2 with messages naming file and control."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairpolicy
from fairpolicy.cli import main

FILES = Path(__file__).parent / "policy" / "files"


def run(*argv: str) -> int:
    return main(list(argv), stdout=io.StringIO())


def test_venturalitica_control_runs_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = np.random.default_rng(3)
    n = 900
    gender = rng.choice(["female", "male", "nonbinary"], n, p=[0.45, 0.45, 0.10])
    target = rng.integers(0, 4, n)
    prediction = np.where(rng.random(n) < 0.7, target, rng.integers(0, 4, n))
    df = pd.DataFrame({"target": target, "prediction": prediction, "gender": gender})
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)

    res = fairpolicy.check(FILES / "venturalitica-assessment-plan.yaml", data)
    (f,) = res.findings
    rates = pd.crosstab(df.gender, df.prediction, normalize="index")
    expected = float((rates.max() - rates.min()).max())
    assert f.metric_key == "multiclass_demographic_parity"
    assert f.value == pytest.approx(expected, abs=1e-12)
    assert f.status == ("pass" if expected < 0.15 else "fail")
    assert any("cannot contain ':'" in w for w in res.warnings)

    out = tmp_path / "r.json"
    code = run(
        "check", str(FILES / "venturalitica-assessment-plan.yaml"), str(data), "-o", f"json={out}"
    )
    assert code == res.exit_code
    assert json.loads(out.read_text())["findings"][0]["inputs"] == {
        "target": "target",
        "prediction": "prediction",
        "dimension": "gender",
    }


def test_venturalitica_component_definition_runs_unchanged(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    n = 2000
    gender = rng.choice(["F", "M"], n)
    age = rng.choice(["<25", "25-60", ">60"], n, p=[0.2, 0.6, 0.2])
    approved = rng.integers(0, 2, n)
    prediction = np.where(rng.random(n) < 0.8, approved, 1 - approved)
    prediction[(gender == "F") & (rng.random(n) < 0.1)] = 0  # some disadvantage
    data = tmp_path / "credit.csv"
    pd.DataFrame(
        {"approved": approved, "prediction": prediction, "gender": gender, "age_group": age}
    ).to_csv(data, index=False)

    res = fairpolicy.check(FILES / "venturalitica-component-definition.yaml", data)
    by_id = {f.control_id: f for f in res.findings}
    dp = by_id["credit-dp-gender"]
    assert dp.metric_key == "demographic_parity_diff"
    assert (dp.severity, dp.risk_id, dp.lifecycle_phase) == (
        "high",
        "RISK-CREDIT-DP-001",
        "validation",
    )
    assert dp.enforcement_mode == "block" and dp.gating
    di = by_id["credit-di-age"]
    assert di.metric_key == "demographic_parity_ratio"  # alias disparate_impact
    assert di.enforcement_mode == "warn" and not di.gating
    assert all(" & " in g.group for g in di.groups)  # age_group,gender intersection
    assert by_id["credit-eo-gender"].enforcement_mode == "monitor"
    assert res.summary.error == 0
    assert res.exit_code in (0, 1)


def test_bad_policy_reports_every_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "d.csv"
    data.write_text("y,y_hat,sex\n1,0,F\n0,1,M\n")
    code = run("check", str(FILES / "four-bad.yaml"), str(data))
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    assert "four-bad.yaml" in err
    for frag in (
        "control 'bad-metric'",
        "Did you mean 'demographic_parity_diff'",
        "control 'bad-operator'",
        "control 'bad-threshold'",
        "ten percent",
        "control 'no-dimension'",
    ):
        assert frag in err, frag


def test_unreadable_yaml(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("y,y_hat,sex\n1,0,F\n0,1,M\n")
    code = run("check", str(FILES / "unreadable.yaml"), str(data))
    err = capsys.readouterr().err
    assert code == 2
    assert "unreadable.yaml" in err and "line" in err and "Traceback" not in err
