"""Every policy pack × passing and failing data: the OSCAL assessment results and plan
fairpolicy writes validate against the vendored NIST schema and re-read with trestle."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairpolicy.cli import main
from fairpolicy.oscal_schema import validate_document

ROOT = Path(__file__).resolve().parents[2]
PACKS = sorted(p.parent.name for p in (ROOT / "policies").glob("*/profile.json"))
MULTICLASS = {"multiclass-medical-multisite", "samd-multisite"}


def _block_binary() -> pd.DataFrame:
    """40 rows with every confusion cell present and spread-out scores."""
    y_true = np.array([1] * 20 + [0] * 20)
    y_pred = np.array([1] * 16 + [0] * 4 + [1] * 4 + [0] * 16)
    score = np.linspace(0.02, 0.98, 40)[np.argsort(np.argsort(-(y_pred + 0.01 * y_true)))]
    return pd.DataFrame({"y_true": y_true, "y_pred": y_pred, "score": score})


def _block_multiclass(k: int = 4) -> pd.DataFrame:
    """Per class 10 rows: 8 right, 2 wrong; class scores peaked on the prediction."""
    y_true = np.repeat(np.arange(k), 10)
    y_pred = y_true.copy()
    y_pred[8::10] = (y_true[8::10] + 1) % k
    y_pred[9::10] = (y_true[9::10] + 2) % k
    frame = pd.DataFrame({"y_true": y_true, "y_pred": y_pred})
    prob = np.full((len(y_true), k), 0.1 / (k - 1))
    prob[np.arange(len(y_true)), y_pred] = 0.9
    prob[np.arange(len(y_true)), y_true] += 0.05  # the true class ranks second at worst
    prob /= prob.sum(axis=1, keepdims=True)
    for j in range(k):
        frame[f"y_score_{j}"] = prob[:, j]
    return frame


def fair_data(pack: str) -> pd.DataFrame:
    """The same block of rows for every group combination: every gap 0, every ratio 1."""
    if pack in MULTICLASS:
        block, axes = _block_multiclass(), {"site": ["HCUV", "HUSC"], "sex": ["F", "M"]}
    else:
        block = _block_binary()
        axes = {
            "sex": ["F", "M"],
            "race": ["Asian", "Black", "Hispanic", "White"],
            "age_band": ["18-29", "30-49", "50+"],
        }
    frames = []
    for combo in itertools.product(*axes.values()):
        frames.append(block.assign(**dict(zip(axes, combo, strict=True))))
    df = pd.concat(frames, ignore_index=True)
    if pack not in MULTICLASS:
        df["selected"] = df["y_pred"]
    return df


def biased_data(pack: str) -> pd.DataFrame:
    """The fair data with women's and HUSC's positive/correct predictions mostly removed."""
    df = fair_data(pack)
    rng = np.random.default_rng(0)
    if pack in MULTICLASS:
        hit = (df["site"] == "HUSC") & (rng.random(len(df)) < 0.6)
        df.loc[hit, "y_pred"] = (df.loc[hit, "y_true"] + 1) % 4
    else:
        hit = (df["sex"] == "F") & (df["y_pred"] == 1) & (rng.random(len(df)) < 0.7)
        df.loc[hit, ["y_pred", "selected"]] = 0
        df.loc[hit, "score"] = df.loc[hit, "score"] * 0.2
    return df


@pytest.mark.parametrize("pack", PACKS)
@pytest.mark.parametrize(("kind", "expected_exit"), [("fair", 0), ("biased", 1)])
def test_pack_oscal_outputs_are_valid(
    pack: str, kind: str, expected_exit: int, tmp_path: Path
) -> None:
    from trestle.oscal.assessment_plan import AssessmentPlan
    from trestle.oscal.assessment_results import AssessmentResults

    df = fair_data(pack) if kind == "fair" else biased_data(pack)
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    ar, ap, res = tmp_path / "ar.json", tmp_path / "ap.json", tmp_path / "r.json"
    argv = ["check", str(ROOT / "policies" / pack / "profile.json"), str(data)]
    argv += ["-o", f"json={res}", "-o", f"oscal={ar}", "-o", f"oscal-ap={ap}"]
    code = main(argv, stdout=io.StringIO())
    results = json.loads(res.read_text())
    statuses = {f["control_id"]: (f["status"], f["value"]) for f in results["findings"]}
    assert code == expected_exit, statuses
    if kind == "fair":
        assert all(s == "pass" for s, _ in statuses.values()), statuses
    for path, model, cls in (
        (ar, "assessment-results", AssessmentResults),
        (ap, "assessment-plan", AssessmentPlan),
    ):
        doc = json.loads(path.read_text())
        assert validate_document(doc, model) == []
        assert cls.oscal_read(path) is not None
    result = json.loads(ar.read_text())["assessment-results"]["results"][0]
    failing = [c for c, (s, _) in statuses.items() if s in ("fail", "warn")]
    assert len(result["findings"]) == len(statuses)
    assert len(result.get("risks", [])) == len(failing)
    assert (kind == "biased") == bool(failing)
