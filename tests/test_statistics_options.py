"""Statistics options end to end: min_share, bootstrap intervals, decision rules, p-values,
seeds recorded in the results."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.errors import UsageError
from tests.helpers import control, write_policy


def frame(n: int = 600, seed: int = 0, gap: float = 0.15) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M", "X"], n, p=[0.49, 0.49, 0.02])
    rate = np.where(sex == "F", 0.4, 0.4 + gap)
    y_true = rng.integers(0, 2, n)
    return pd.DataFrame(
        {"y_true": y_true, "y_pred": (rng.random(n) < rate).astype(int), "sex": sex}
    )


def test_min_share_excludes_and_reports(tmp_path: Path) -> None:
    df = frame()
    pol = write_policy(tmp_path, control(threshold="0.5", min_share="0.05", min_samples="1"))
    f = fairpolicy.check(pol, df).findings[0]
    excluded = {e.group: e.reason for e in f.excluded_groups}
    assert "X" in excluded and "below min_share=0.05" in excluded["X"]
    assert {g.group for g in f.groups} == {"F", "M"}


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"bootstrap": 1}, "--bootstrap"),
        ({"bootstrap": -5}, "--bootstrap"),
        ({"ci_level": 1.5}, "--ci-level"),
        ({"decision": "maybe"}, "--decision"),
        ({"ci_method": "bootstrap-t"}, "--ci-method"),
    ],
)
def test_bad_statistics_options(tmp_path: Path, kwargs: dict, fragment: str) -> None:
    pol = write_policy(tmp_path, control())
    with pytest.raises(UsageError, match=fragment):
        fairpolicy.check(pol, frame(), **kwargs)


def test_bootstrap_interval_seed_and_decision(tmp_path: Path) -> None:
    df = frame(n=2000)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    pol = write_policy(tmp_path, control(threshold="0.5", min_samples="30"))
    a = fairpolicy.check(pol, data, bootstrap=400, seed=7)
    b = fairpolicy.check(pol, data, bootstrap=400, seed=7)
    c = fairpolicy.check(pol, data, bootstrap=400, seed=8)
    fa, fb, fc = a.findings[0], b.findings[0], c.findings[0]
    assert fa.ci is not None and fa.ci.low is not None and fa.ci.high is not None
    assert fa.ci.low <= fa.value <= fa.ci.high
    assert (fa.ci.resamples, fa.ci.level, fa.ci.method) == (400, 0.95, "score")
    assert a.run.seed == 7 and fa.ci.seed == fb.ci.seed != fc.ci.seed  # type: ignore[union-attr]
    assert (fa.ci.low, fa.ci.high) == (fb.ci.low, fb.ci.high)  # type: ignore[union-attr]
    # a gap of binary rates gets the score interval of the counts: no resampling noise
    assert (fa.ci.low, fa.ci.high) == (fc.ci.low, fc.ci.high)  # type: ignore[union-attr]
    assert all(g.ci_low is not None and g.ci_low <= g.value <= g.ci_high for g in fa.groups)  # type: ignore[operator]
    # a threshold inside the interval: the point rule passes, ci_upper cannot prove it
    mid = (fa.ci.low + fa.ci.high) / 2  # type: ignore[operator]
    pol2 = write_policy(tmp_path, control(threshold=f"{mid:.6f}"), name="p2.yaml")
    point = fairpolicy.check(pol2, data, bootstrap=400, seed=7).findings[0]
    upper = fairpolicy.check(pol2, data, bootstrap=400, seed=7, decision="ci_upper")
    lower = fairpolicy.check(pol2, data, bootstrap=400, seed=7, decision="ci_lower")
    assert upper.findings[0].status == lower.findings[0].status == "inconclusive"
    assert upper.findings[0].decision == "ci_upper" and "straddles" in (
        upper.findings[0].reason or ""
    )
    assert upper.exit_code == 1 and lower.exit_code == 0
    assert point.decision == "point"


def test_cli_bootstrap_shows_interval_and_records_seed(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    frame(n=1500).to_csv(data, index=False)
    pol = write_policy(tmp_path, control(threshold="0.5"))
    out = io.StringIO()
    code = main(
        ["check", str(pol), str(data), "--bootstrap", "300", "--ci-method", "bca", "-v",
         "--p-value", "200", "--bonferroni", "-o", f"json={tmp_path / 'r.json'}"],
        stdout=out,
    )  # fmt: skip
    assert code == 0
    text = out.getvalue()
    assert " ci " in text.splitlines()[0] and "p-value" in text
    res = json.loads((tmp_path / "r.json").read_text())
    f = res["findings"][0]
    assert f["ci"]["method"] == "score" and f["ci"]["resamples"] == 300
    assert "BCa was asked" in f["ci"]["note"]
    assert res["run"]["seed"] == 20261122 and res["run"]["options"]["ci"] == 300
    assert f["p_value"]["permutations"] == 200
    assert f["p_value"]["family_size"] == len(f["groups"])
    assert 0 < f["p_value"]["p_value"] <= 1
