"""Venturalitica's quickstart credit policy runs unchanged (issue 16, part).

The policy (``tests/fixtures/venturalitica/``, vendored with its NOTICE) binds only a
target (its controls are data checks: ``class_imbalance`` of the labels, and
``disparate_impact`` of the labels' positive rates across ``gender`` and ``age``), on data
in its shape (the German-credit columns it names). The values equal Venturalitica's
definitions — ``calc_class_imbalance`` is the smallest over the largest class count,
``calc_disparate_impact`` is fairlearn's ``demographic_parity_ratio`` of the outcome (the
prediction when bound, else the target) — on every engine and input type.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_ratio

import fairpolicy

POLICY = Path(__file__).parent / "fixtures" / "venturalitica" / "quickstart-loan-policy.yaml"


def german(seed: int, n: int = 1000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gender = rng.choice(["male", "female"], n, p=[0.6, 0.4])
    age = rng.choice(["young", "middle", "senior"], n)
    target = (rng.random(n) < np.where(gender == "male", 0.72, 0.64)).astype(int)
    return pd.DataFrame({"target": target, "gender": gender, "age": age})


def expected(df: pd.DataFrame) -> dict[str, float]:
    counts = df["target"].value_counts()
    return {
        "credit-data-imbalance": counts.min() / counts.max(),
        "credit-data-bias": demographic_parity_ratio(
            df["target"], df["target"], sensitive_features=df["gender"]
        ),
        "credit-age-disparate": demographic_parity_ratio(
            df["target"], df["target"], sensitive_features=df["age"]
        ),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("engine", ["embedded", "duckdb"])
def test_quickstart_policy_runs_unchanged_with_its_values(
    seed: int, engine: str, tmp_path: Path
) -> None:
    df = german(seed)
    csv = tmp_path / "german.csv"
    df.to_csv(csv, index=False)
    results = fairpolicy.check(str(POLICY), str(csv), engine=engine)
    got = {f.control_id: f.value for f in results.findings}
    for cid, value in expected(df).items():
        assert got[cid] == pytest.approx(value, abs=1e-12), cid
    assert results.exit_code in (0, 1)
    # the target-only reading is said, not silent
    assert any("data audit of the labels" in w for w in results.warnings)


def test_a_dataframe_and_a_parquet_file_agree(tmp_path: Path) -> None:
    df = german(5)
    pq = tmp_path / "g.parquet"
    df.to_parquet(pq)
    a = fairpolicy.check(str(POLICY), df)
    b = fairpolicy.check(str(POLICY), str(pq))
    assert [f.value for f in a.findings] == [f.value for f in b.findings]


TEMPLATES = sorted(POLICY.parent.glob("huderia-cobra-*.oscal.yaml"))


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_a_template_as_shipped_names_every_control_to_configure(path: Path) -> None:
    """Venturalitica's HUDERIA templates ship with empty thresholds: exit 2 saying
    "template not configured", naming every such control in one run (never a pass)."""
    import yaml

    from fairpolicy.errors import PolicyError
    from fairpolicy.policy.load import load_policy

    doc = yaml.safe_load(path.read_text())
    empty = set()
    for impl in doc["assessment-plan"]["control-implementations"]:
        for ir in impl["implemented-requirements"]:
            props = {p["name"]: p.get("value") for p in ir["props"]}
            if "threshold" in props and props["threshold"] in (None, ""):
                empty.add(ir["control-id"])
    assert empty
    with pytest.raises(PolicyError) as err:
        load_policy(str(path))
    named = {
        p.control for p in err.value.problems if p.message.startswith("template not configured")
    }
    assert named == empty
