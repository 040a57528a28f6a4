"""A count table (input.count + input.selected) gives exactly the row-level results of
the rows it summarizes, for every count-based binary key."""

from __future__ import annotations

import importlib.util
import shutil

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy import check
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold

KEYS = (
    ("impact_ratio", Operator.GE, 0.8, {}),
    ("impact_ratio", Operator.GE, 0.8, {"comparator": "highest"}),
    ("demographic_parity_ratio", Operator.GE, 0.8, {}),
    ("demographic_parity_diff", Operator.LT, 0.1, {}),
    ("disparity_ratio", Operator.GE, 0.8, {"rate": "selection_rate"}),
)


def _controls(counted: bool, dimension: str) -> tuple[Control, ...]:
    out = []
    for i, (key, op, t, params) in enumerate(KEYS):
        inputs = (
            {"count": "applicants", "selected": "selected", "dimension": dimension}
            if counted
            else {"target": "selected", "prediction": "selected", "dimension": dimension}
        )
        if key == "impact_ratio" and not counted:
            inputs.pop("prediction")
        out.append(
            Control(
                control_id=f"c{i}",
                metric_key=key,
                metric_key_as_written=key,
                threshold=Threshold(value=t),
                operator=op,
                inputs=inputs,
                params=dict(params),
                min_samples=1,
            )
        )
    return tuple(out)


@st.composite
def count_tables(draw):
    sexes = ["F", "M"]
    races = draw(
        st.lists(st.sampled_from(["A", "B", "H", "W"]), min_size=1, max_size=3, unique=True)
    )
    rows = []
    for s in sexes:
        for r in races:
            n = draw(st.integers(1, 40))
            rows.append((s, r, n, draw(st.integers(0, n))))
    if draw(st.booleans()):  # applicants of unknown sex
        n = draw(st.integers(1, 10))
        rows.append((None, races[0], n, draw(st.integers(0, n))))
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count_tables())
def test_count_table_equals_the_expanded_rows(cells) -> None:
    table = pd.DataFrame(cells, columns=["sex", "race", "applicants", "selected"])
    table["sex"] = table["sex"].astype(object)
    rows = pd.DataFrame(
        [{"sex": s, "race": r, "selected": int(i < k)} for s, r, n, k in cells for i in range(n)]
    )
    rows["sex"] = rows["sex"].astype(object)
    a = check(Policy(form="list", controls=_controls(True, "sex,race")), table)
    b = check(Policy(form="list", controls=_controls(False, "sex,race")), rows)
    for fa, fb in zip(a.findings, b.findings, strict=True):
        assert (fa.status, fa.value) == (fb.status, fb.value), fa.control_id
        assert fa.details.get("exact_value") == fb.details.get("exact_value")
        assert [(g.group, g.n, g.value) for g in fa.groups] == [
            (g.group, g.n, g.value) for g in fb.groups
        ]
        if fa.metric_key == "impact_ratio":
            assert fa.details["levels"] == fb.details["levels"]
            assert fa.details["bounds"] == fb.details["bounds"]


def test_rates_rounded_to_three_decimals_are_read_as_real_counts() -> None:
    table = pd.DataFrame({"sex": ["F", "M"], "applicants": [300, 700], "rate": [0.333, 0.5]})
    c = Control(
        control_id="ir",
        metric_key="impact_ratio",
        metric_key_as_written="impact_ratio",
        threshold=Threshold(value=0.8),
        operator=Operator.GE,
        inputs={"count": "applicants", "rate": "rate", "dimension": "sex"},
        min_samples=1,
    )
    res = check(Policy(form="list", controls=(c,)), table)
    f = res.findings[0]
    assert f.value == pytest.approx(0.666, abs=1e-12)
    assert any("published rate was rounded" in w for w in res.warnings)
    assert (
        "not whole numbers" in f.details["bounds"].get("reason", "")
        or f.details["bounds"]["unknown"] == 0
    )


HAVE_SPARK = importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None


@pytest.mark.parametrize(
    "engine",
    [
        "embedded",
        "duckdb",
        pytest.param("spark", marks=pytest.mark.skipif(not HAVE_SPARK, reason="no spark")),
    ],
)
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_count_table_on_every_engine_and_file_type(tmp_path, engine: str, kind: str) -> None:
    cells = [("F", "A", 30, 9), ("F", "B", 25, 10), ("M", "A", 40, 16), ("M", "B", 22, 5)]
    cells += [(None, "A", 6, 2)]
    table = pd.DataFrame(cells, columns=["sex", "race", "applicants", "selected"])
    path = tmp_path / f"t.{kind}"
    if kind == "csv":
        table.to_csv(path, index=False)
    else:
        table.to_parquet(path, index=False)
    rows = pd.DataFrame(
        [{"sex": s, "race": r, "selected": int(i < k)} for s, r, n, k in cells for i in range(n)]
    )
    a = check(Policy(form="list", controls=_controls(True, "sex,race")), str(path), engine=engine)
    b = check(Policy(form="list", controls=_controls(False, "sex,race")), rows)
    for fa, fb in zip(a.findings, b.findings, strict=True):
        assert (fa.status, fa.value) == (fb.status, fb.value), (engine, kind, fa.control_id)
        if fa.metric_key == "impact_ratio":
            assert fa.details["levels"] == fb.details["levels"]
            assert fa.details["bounds"] == fb.details["bounds"]


def test_rounded_rates_keep_the_applicants_as_the_sample_size() -> None:
    table = pd.DataFrame({"sex": ["F", "M"], "applicants": [300, 700], "rate": [0.333, 0.5]})
    c = Control(
        control_id="dp",
        metric_key="demographic_parity_ratio",
        metric_key_as_written="demographic_parity_ratio",
        threshold=Threshold(value=0.8),
        operator=Operator.GE,
        inputs={"count": "applicants", "rate": "rate", "dimension": "sex"},
        min_samples=30,
    )
    f = check(Policy(form="list", controls=(c,)), table).findings[0]
    assert {g.group: g.n for g in f.groups} == {"F": 300, "M": 700}
    assert f.value == pytest.approx((0.333 * 300 / 300) / 0.5, abs=1e-12)
    assert f.counts["F"] == [[pytest.approx(200.1), 0.0], [0.0, pytest.approx(99.9)]]
    assert f.inputs["prediction"] == f.inputs["target"] == "rate"
