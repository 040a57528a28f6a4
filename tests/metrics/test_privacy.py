"""k-anonymity, l-diversity, t-closeness (issue 16: Venturalitica's HUDERIA template keys).

Oracle: the published definitions as Venturalitica's ``calc_k_anonymity``,
``calc_l_diversity`` and ``calc_t_closeness`` implement them with pandas
(``groupby(qi).size().min()``, ``groupby(qi)[s].nunique().min()``, the largest halved L1
distance of a group's value distribution from the table's), written out here, on random
tables with small and singleton groups; the same values on the DuckDB engine and from a
DataFrame. Venturalitica's role names ``input.quasi_identifiers`` /
``input.sensitive_attribute`` are read for these keys and refused elsewhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairpolicy
from fairpolicy.errors import PolicyError

QI = ["age", "zip"]


def oracle(df: pd.DataFrame) -> dict[str, float]:
    groups = df.groupby(QI)
    overall = df["income"].value_counts(normalize=True)
    t = 0.0
    for _, g in groups:
        dist = g["income"].value_counts(normalize=True)
        values = set(overall.index) | set(dist.index)
        t = max(t, sum(abs(overall.get(v, 0.0) - dist.get(v, 0.0)) for v in values) / 2)
    return {
        "k": float(groups.size().min()),
        "l": float(groups["income"].nunique().min()),
        "t": t,
    }


def control(cid: str, key: str, op: str, threshold: str, sensitive: bool = True) -> dict[str, Any]:
    props = [
        {"name": "metric_key", "value": key},
        {"name": "threshold", "value": threshold},
        {"name": "operator", "value": op},
        {"name": "input.quasi_identifiers", "value": ",".join(QI)},
    ]
    if sensitive:
        props.append({"name": "input.sensitive_attribute", "value": "income"})
    return {"control-id": cid, "props": props}


POLICY = [
    control("k", "k_anonymity", ">=", "3", sensitive=False),
    control("l", "l_diversity", ">=", "2"),
    control("t", "t_closeness", "<", "0.3"),
]


def table(seed: int, n: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.choice(["20-30", "30-40", "40-50"], n),
            "zip": rng.choice(["10001", "10002", "10003"], n),
            "income": rng.choice(["low", "mid", "high"], n, p=[0.5, 0.3, 0.2]),
        }
    )
    df.loc[: seed % 3, "zip"] = "99999"  # one to three rows in their own groups
    return df


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 300))
def test_values_equal_the_published_definitions(seed: int, n: int) -> None:
    df = table(seed, n)
    got = {f.control_id: f.value for f in fairpolicy.check(POLICY, df).findings}
    want = oracle(df)
    assert got["k"] == want["k"] and got["l"] == want["l"]
    assert got["t"] == pytest.approx(want["t"], abs=1e-12)


def test_every_engine_and_the_groups_behind_the_value(tmp_path: Path) -> None:
    df = table(1, 400)
    csv = tmp_path / "p.csv"
    df.to_csv(csv, index=False)
    runs = [fairpolicy.check(POLICY, str(csv), engine=e) for e in ("embedded", "duckdb")]
    for r in runs:
        by = {f.control_id: f for f in r.findings}
        assert by["k"].value == oracle(df)["k"] and by["k"].excluded_groups == []
        assert "99999" in (by["k"].worst_group or "")  # the smallest group is named
        assert by["k"].status == "fail" and r.exit_code == 1
    assert [f.value for f in runs[0].findings] == [f.value for f in runs[1].findings]


def test_one_quasi_identifier_group_is_enough() -> None:
    df = pd.DataFrame({"age": ["30"] * 6, "zip": ["1"] * 6, "income": ["a", "b"] * 3})
    got = {f.control_id: f.value for f in fairpolicy.check(POLICY, df).findings}
    assert got == {"k": 6.0, "l": 2.0, "t": 0.0}


def test_privacy_role_names_are_refused_on_other_metrics() -> None:
    bad = {
        "control-id": "c",
        "props": [
            {"name": "metric_key", "value": "demographic_parity_diff"},
            {"name": "threshold", "value": "0.1"},
            {"name": "operator", "value": "<"},
            {"name": "input.prediction", "value": "p"},
            {"name": "input.quasi_identifiers", "value": "sex"},
        ],
    }
    with pytest.raises(PolicyError, match="applies to the privacy metrics"):
        fairpolicy.check([bad], pd.DataFrame({"p": [0, 1], "sex": ["a", "b"]}))
