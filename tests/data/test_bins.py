"""Binning a numeric dimension column (issue 27 item 3): the ``bins`` prop.

The quickstart-like age control: unbinned it is INCONCLUSIVE with a suggestion that names
concrete edges; declared, it gives a verdict whose groups are interval labels. Values
equal an oracle (fairlearn's ratio over ``pandas.cut``-style bins) on every engine and
input type; quantile edges equal ``numpy.quantile`` and are identical on every engine.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_ratio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.data.bind.bins import assign, labels_of, quantile_edges
from fairpolicy.policy.bins import interval_label, parse_bins, parse_spec
from fairpolicy.runner import check
from fairpolicy.stats import MISSING_GROUP
from tests.data.test_engines import ENGINES

QUICKSTART = (
    Path(__file__).parents[1] / "fixtures" / "venturalitica" / "quickstart-loan-policy.yaml"
)


@pytest.fixture(scope="module")
def spark_session() -> Any:
    from fairpolicy.data.sources.spark import spark_session as start

    yield start()  # the session-wide one of test_engines stops it


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "spark":
        request.getfixturevalue("spark_session")
    return name


def german(seed: int = 0, n: int = 1000) -> pd.DataFrame:
    """The quickstart's shape with ``age`` in years (19..75): 57 groups, all small."""
    rng = np.random.default_rng(seed)
    age = rng.integers(19, 76, n)
    target = (rng.random(n) < np.where(age < 25, 0.55, 0.72)).astype(int)
    return pd.DataFrame({"target": target, "gender": rng.choice(["male", "female"], n), "age": age})


def binned_policy(tmp: Path, bins: str) -> Path:
    text = QUICKSTART.read_text(encoding="utf-8").replace(
        "          value: age\n",
        f"          value: age\n        - name: bins\n          value: '{bins}'\n",
    )
    out = tmp / "binned.yaml"
    out.write_text(text, encoding="utf-8")
    return out


def as_input(df: pd.DataFrame, kind: str, engine: str, tmp: Path) -> Any:
    if kind == "dataframe" and engine != "spark":
        return df
    if kind == "csv":
        path = tmp / "g.csv"
        df.to_csv(path, index=False)
        return str(path)
    path = tmp / "g.parquet"
    df.to_parquet(path)
    if kind == "dataframe":  # a Spark DataFrame
        from fairpolicy.data.sources.spark import spark_session

        return spark_session().read.parquet(str(path))
    return str(path)


def oracle_bins(values: np.ndarray, edges: list[float]) -> list[str]:
    k = assign(values.astype(np.float64), np.array(edges, dtype=np.float64))
    labels = labels_of(np.array(edges, dtype=np.float64))
    return [labels[i] for i in k]


# ---------------------------------------------------------------- the grammar


@pytest.mark.parametrize(
    ("text", "edges", "quantiles"),
    [
        ("q4", (), 4),
        ("Q10", (), 10),
        ("5", (), 5),
        ("0,25,60,inf", (0.0, 25.0, 60.0, math.inf), 0),
        ("-inf, 0.5 ,1e3", (-math.inf, 0.5, 1000.0), 0),
    ],
)
def test_the_grammar(text: str, edges: tuple[float, ...], quantiles: int) -> None:
    spec = parse_spec(text)
    assert spec.edges == edges and spec.quantiles == quantiles


def test_per_column_specs() -> None:
    rule = parse_bins("age=0,40,inf; income=q4", ("sex", "age", "income"))
    assert rule.for_column("sex") is None
    assert rule.for_column("age") is not None and rule.for_column("age").edges[1] == 40  # type: ignore[union-attr]
    assert rule.for_column("income").quantiles == 4  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "text",
    ["", "q", "q1", "q101", "0", "0,0", "1,0", "0,nan", "0,1_0", "inf,0", "0,-inf", "a=", "=q4"],
)
def test_bad_grammar_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_bins(text, ("a",))


def test_the_edge_convention() -> None:
    assert interval_label(0, 25, False) == "[0, 25)"
    assert interval_label(60, math.inf, True) == "[60, inf)"
    assert interval_label(60, 100, True) == "[60, 100]"  # the last finite bin is closed
    assert interval_label(-math.inf, 0, False) == "(-inf, 0)"
    assert interval_label(0.1, 0.25, False) == "[0.1, 0.25)"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(-50, 50), min_size=1, max_size=60),
    st.integers(2, 8),
)
def test_quantile_edges_equal_numpy(values: list[int], n: int) -> None:
    arr = np.array(values, dtype=np.float64)
    distinct, counts = np.unique(arr, return_counts=True)
    got = quantile_edges(distinct, counts, n)
    want = np.unique(np.quantile(arr, np.linspace(0, 1, n + 1)))
    if len(want) < 2:
        want = np.array([want[0], want[0]])
    assert got.tolist() == want.tolist()  # exactly, not approximately


# ---------------------------------------------------------------- the quickstart age control


def test_quickstart_age_unbinned_stays_inconclusive_and_suggests_bins() -> None:
    df = german()
    res = check(str(QUICKSTART), df)
    f = {x.control_id: x for x in res.findings}["credit-age-disparate"]
    assert f.status == "inconclusive"
    assert "'age' is numeric with 57 distinct values" in f.message
    q = np.quantile(df["age"], [0.25, 0.5, 0.75])
    edges = ",".join(str(int(v)) if v == int(v) else repr(float(v)) for v in q)
    assert f"bins: -inf,{edges},inf" in f.message and "bins: q4" in f.message


@pytest.mark.parametrize("engine", ["embedded", *ENGINES], indirect=True)
@pytest.mark.parametrize("kind", ["csv", "parquet", "dataframe"])
def test_quickstart_age_binned_gives_a_verdict_equal_to_the_oracle(
    engine: str, kind: str, tmp_path: Path
) -> None:
    if kind == "dataframe" and engine == "duckdb":
        pytest.skip("DuckDB reads files; a pandas DataFrame is evaluated in memory")
    df = german(3)
    pol = binned_policy(tmp_path, "0,25,60,inf")
    res = check(str(pol), as_input(df, kind, engine, tmp_path), engine=engine)
    f = {x.control_id: x for x in res.findings}["credit-age-disparate"]
    assert f.status in ("pass", "fail")
    groups = oracle_bins(df["age"].to_numpy(), [0, 25, 60, math.inf])
    want = demographic_parity_ratio(df["target"], df["target"], sensitive_features=groups)
    assert f.value == pytest.approx(want, abs=1e-12)
    assert sorted(g.group for g in f.groups) == ["[0, 25)", "[25, 60)", "[60, inf)"]
    assert {g.group: g.n for g in f.groups} == pd.Series(groups).value_counts().to_dict()


@pytest.mark.parametrize("engine", ["embedded", *ENGINES], indirect=True)
def test_quantile_bins_are_identical_on_every_engine(engine: str, tmp_path: Path) -> None:
    df = german(4)
    df["age"] = df["age"] + np.round(np.random.default_rng(1).random(len(df)), 1)  # decimals
    df.loc[::17, "age"] = np.nan  # missing stays (missing)
    pol = binned_policy(tmp_path, "q4")
    res = check(str(pol), as_input(df, "parquet", engine, tmp_path), engine=engine)
    f = {x.control_id: x for x in res.findings}["credit-age-disparate"]
    present = df["age"].dropna().to_numpy()
    edges = np.unique(np.quantile(present, np.linspace(0, 1, 5))).tolist()
    groups = oracle_bins(present, edges)
    assert {g.group: g.n for g in f.groups} == pd.Series(groups).value_counts().to_dict()
    missing = [e for e in f.excluded_groups if e.missing]
    assert [(e.group, e.n) for e in missing] == [(MISSING_GROUP, int(df["age"].isna().sum()))]
    mask = df["age"].notna()
    want = demographic_parity_ratio(
        df["target"][mask], df["target"][mask], sensitive_features=groups
    )
    assert f.value == pytest.approx(want, abs=1e-12)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 6))
def test_embedded_and_duckdb_bin_alike(seed: int, n: int, tmp_path_factory: Any) -> None:
    pytest.importorskip("duckdb")
    tmp = tmp_path_factory.mktemp("b")
    rng = np.random.default_rng(seed)
    df = german(seed, 400)
    df["age"] = np.round(rng.normal(40, 12, len(df)), rng.integers(0, 3))
    pol = binned_policy(tmp, f"q{n}")
    path = as_input(df, "csv", "embedded", tmp)
    a = check(str(pol), path).findings[2]
    b = check(str(pol), path, engine="duckdb").findings[2]
    assert [(g.group, g.n) for g in a.groups] == [(g.group, g.n) for g in b.groups]
    assert a.value == b.value and a.status == b.status


def test_an_intersection_bins_the_named_column(tmp_path: Path) -> None:
    df = german(6)
    pol = binned_policy(tmp_path, "age=0,40,inf").read_text(encoding="utf-8")
    pol = pol.replace("          value: age\n", "          value: gender,age\n")
    path = tmp_path / "p.yaml"
    path.write_text(pol, encoding="utf-8")
    f = check(str(path), df).findings[2]
    assert sorted(g.group for g in f.groups) == [
        "female & [0, 40)",
        "female & [40, inf)",
        "male & [0, 40)",
        "male & [40, inf)",
    ]
