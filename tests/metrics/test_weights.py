"""Sample weights (``input.weight`` / ``--bind weight=COL``) declared ``weight_kind:
frequency``: a row of weight w counts as w identical rows. (Undeclared weights are read as
survey weights whatever their values: the last tests here, and
tests/metrics/test_survey_weights.py.)

- registry-wide (hypothesis): every count-based control (binary, multi-class, data,
  regression sums) gives
  on weighted data exactly what it gives on the rows repeated by their weights — value,
  status, reason, per-group values and sizes; ranking metrics refuse weights;
- oracles: per-group values equal scikit-learn's ``sample_weight`` and fairlearn's
  ``MetricFrame(..., sample_params=...)``;
- the bootstrap of weighted data is the bootstrap of the repeated rows (same seed, same
  interval: the count tables are equal, and tests/stats prove the count-table bootstrap
  equals a naive row bootstrap);
- every engine and input type (CSV, Parquet, pandas; embedded, DuckDB, Spark) agrees.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.errors import PolicyError
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import NS, Control, Policy
from fairpolicy.results import Finding
from fairpolicy.runner import check
from tests.data.test_engines import ENGINES
from tests.data.test_engines import engine as engine  # the fixture
from tests.data.test_engines import spark_session as spark_session  # the fixture
from tests.helpers import control
from tests.metrics.test_registry_common import COMBOS, common_control
from tests.policy.test_policy_wide import plan
from tests.strategies import frames

PROPS = settings(
    max_examples=10,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TOL = 1e-9


def controls(kinds: tuple[str, ...], weight: str | None = None) -> tuple[Control, ...]:
    out = []
    for cid, key, params, kind in COMBOS:
        if kind not in kinds:
            continue
        c = common_control(key, params, cid).model_copy(update={"min_samples": 1})
        if weight is not None:
            c = c.model_copy(
                update={
                    "inputs": {**c.inputs, "weight": weight},
                    "params": {**c.params, "weight_kind": "frequency"},
                }
            )
        out.append(c)
    return tuple(out)


COUNTED = {2: ("binary", "data", "regression"), 3: ("multiclass",)}


def run(df: Any, k: int, weight: str | None = None, **kw: Any) -> dict[str, Finding]:
    res = check(Policy(form="list", controls=controls(COUNTED[k], weight)), df, **kw)
    return {f.control_id: f for f in res.findings}


def expand(df: pd.DataFrame, w: np.ndarray) -> pd.DataFrame:
    return df.loc[df.index.repeat(w)].reset_index(drop=True)


def close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)


def assert_same(weighted: dict[str, Finding], repeated: dict[str, Finding]) -> None:
    assert set(weighted) == set(repeated)
    for cid, f in weighted.items():
        r = repeated[cid]
        assert f.inputs.get("weight") == "w", cid  # the results record the weight column
        assert f.status == r.status, (cid, f.status, r.status, f.message, r.message)
        assert close(f.value, r.value), (cid, f.value, r.value)
        assert (f.reason is None) == (r.reason is None), (cid, f.reason, r.reason)
        assert {g.group: g.n for g in f.groups} == {g.group: g.n for g in r.groups}, cid
        assert all(close(g.value, h.value) for g, h in zip(f.groups, r.groups, strict=True)), cid
        assert f.counts == r.counts, cid


@st.composite
def weights_for(draw: st.DrawFn, df: pd.DataFrame) -> np.ndarray:
    """Whole weights 0..4; every named group (and site) keeps a row of positive weight
    (a group whose rows all weigh 0 is an error: tests/bad_inputs/cases_weights.py)."""
    w = np.array(draw(st.lists(st.integers(0, 4), min_size=len(df), max_size=len(df))))
    for col in ("grp", "site"):
        for g in df[col].dropna().unique():
            first = df.index[df[col] == g][0]
            w[first] = max(w[first], 1)
    return w


@PROPS
@given(df=frames(2), data=st.data())
def test_binary_and_data_metrics_weighted_equal_repeated_rows(
    df: pd.DataFrame, data: st.DataObject
) -> None:
    w = data.draw(weights_for(df))
    assert_same(run(df.assign(w=w), 2, "w"), run(expand(df, w), 2))


@PROPS
@given(df=frames(3), data=st.data())
def test_multiclass_metrics_weighted_equal_repeated_rows(
    df: pd.DataFrame, data: st.DataObject
) -> None:
    w = data.draw(weights_for(df))
    assert_same(run(df.assign(w=w), 3, "w"), run(expand(df, w), 3))


def test_the_property_covers_every_count_based_key() -> None:
    keys = {c.metric_key for k in COUNTED for c in controls(COUNTED[k])}
    counted = {k for k, s in REGISTRY.items() if s.kind in ("classification", "data", "regression")}
    assert counted <= keys, counted - keys


@pytest.mark.parametrize("key", sorted(k for k, s in REGISTRY.items() if s.kind == "ranking"))
def test_ranking_metrics_refuse_weights(key: str) -> None:
    rng = np.random.default_rng(3)
    n = 80
    data = pd.DataFrame(
        {
            "y_true": rng.integers(0, 2, n),
            "y_pred": rng.integers(0, 2, n),
            "grp": rng.choice(["A", "B"], n).astype(object),
            "y_score": rng.random(n).round(2),
            "y_num": rng.normal(size=n),
            "yhat_num": rng.normal(size=n),
            "rank": rng.permutation(n) + 1,
            "site": rng.choice(["S1", "S2"], n),
            "w": rng.integers(1, 4, n),
        }
    )
    cid, _, params, _ = next(c for c in COMBOS if c[1] == key)
    c = common_control(key, params, cid)
    c = c.model_copy(update={"inputs": {**c.inputs, "weight": "w"}})
    f = check(Policy(form="list", controls=(c,)), data).findings[0]
    assert f.status == "error" and f.value is None
    assert "cannot be weighted" in f.message and key in f.message


# --- oracles: scikit-learn sample_weight, fairlearn sample_params -------------------------


def ctl(key: str, inputs: dict[str, str]) -> Control:
    """A control of ``key``; weighted ones declare ``weight_kind: frequency``."""
    c = common_control(key, {}, "c")
    params = {**c.params, "weight_kind": "frequency"} if "weight" in inputs else c.params
    return c.model_copy(update={"inputs": inputs, "min_samples": 1, "params": params})


def _binary(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    score = np.clip(0.35 * y + rng.random(n) * 0.65, 0, 1).round(2)
    return pd.DataFrame(
        {
            "y_true": y,
            "y_pred": (score > 0.5).astype(int),
            "grp": rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2]).astype(object),
            "y_score": score,
            "w": rng.integers(0, 7, n),
        }
    )


def _fl_metrics() -> dict[str, Any]:
    from fairlearn.metrics import selection_rate
    from sklearn.metrics import (
        accuracy_score,
        brier_score_loss,
        f1_score,
        precision_score,
        recall_score,
        roc_auc_score,
    )

    return {
        "demographic_parity_diff": selection_rate,
        "equal_opportunity_diff": recall_score,
        "predictive_parity_diff": precision_score,
        "accuracy_diff": accuracy_score,
        "f1_score": f1_score,
        "auc_gap": roc_auc_score,
        "brier_gap": brier_score_loss,
    }


SCORE_KEYS = {"auc_gap", "brier_gap"}


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("key", sorted(_fl_metrics()))
def test_group_values_equal_fairlearn_sample_params(key: str, seed: int) -> None:
    from fairlearn.metrics import MetricFrame

    df = _binary(seed)
    fn = _fl_metrics()[key]
    inputs = {"target": "y_true", "prediction": "y_pred", "dimension": "grp", "weight": "w"}
    if key in SCORE_KEYS:
        inputs["score"] = "y_score"
    f = check(Policy(form="list", controls=(ctl(key, inputs),)), df).findings[0]
    assert f.status in ("pass", "fail"), f.message
    mf = MetricFrame(
        metrics=fn,
        y_true=df["y_true"],
        y_pred=df["y_score"] if key in SCORE_KEYS else df["y_pred"],
        sensitive_features=df["grp"],
        sample_params={"sample_weight": df["w"].to_numpy()},
    )
    expected = mf.by_group.to_dict()
    got = {g.group: g.value for g in f.groups}
    assert set(got) == set(expected)
    for g, v in expected.items():
        assert got[g] == pytest.approx(v, abs=1e-12), (g, got[g], v)
    if key.endswith("_diff") or key.endswith("_gap"):
        assert f.value == pytest.approx(mf.difference(), abs=1e-12)
    # and it is not the unweighted value: the oracle would catch weights being ignored
    plain = MetricFrame(
        metrics=fn,
        y_true=df["y_true"],
        y_pred=df["y_score"] if key in SCORE_KEYS else df["y_pred"],
        sensitive_features=df["grp"],
    ).by_group.to_dict()
    assert any(abs(plain[g] - got[g]) > 1e-9 for g in plain)


@pytest.mark.parametrize("engine", ["embedded", pytest.param("duckdb", marks=ENGINES[0].marks)])
@pytest.mark.parametrize("key", ["mae_parity", "rmse_parity"])
def test_regression_groups_equal_sklearn_sample_weight(
    key: str, engine: str, tmp_path: Path
) -> None:
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    rng = np.random.default_rng(10)
    n = 300
    df = pd.DataFrame(
        {
            "y": rng.normal(50, 10, n).round(3),
            "grp": rng.choice(["A", "B", "C"], n).astype(object),
            "w": rng.integers(0, 6, n),
        }
    )
    df["p"] = (df["y"] + rng.normal(0, 5, n) * (1 + (df["grp"] == "B"))).round(3)
    df.to_csv(tmp_path / "d.csv", index=False)
    inputs = {"target": "y", "prediction": "p", "dimension": "grp", "weight": "w"}
    c = ctl(key, inputs)
    f = check(Policy(form="list", controls=(c,)), tmp_path / "d.csv", engine=engine).findings[0]
    assert f.status in ("pass", "fail"), f.message
    for g in f.groups:
        part = df[df["grp"] == g.group]
        kw = {"sample_weight": part["w"]}
        want = (
            mean_absolute_error(part["y"], part["p"], **kw)
            if key == "mae_parity"
            else math.sqrt(mean_squared_error(part["y"], part["p"], **kw))
        )
        assert g.value == pytest.approx(want, rel=1e-9), (g.group, g.value, want)
        assert g.n == part["w"].sum()


def test_sizes_and_min_samples_count_weight() -> None:
    df = _binary(4)
    inputs = {"target": "y_true", "prediction": "y_pred", "dimension": "grp", "weight": "w"}
    c = ctl("demographic_parity_diff", inputs).model_copy(update={"min_samples": 2000})
    f = check(Policy(form="list", controls=(c,)), df).findings[0]
    assert f.status == "inconclusive"  # every group weighs less than 2000
    c = c.model_copy(update={"min_samples": min(df.groupby("grp")["w"].sum())})
    f = check(Policy(form="list", controls=(c,)), df).findings[0]
    assert f.status in ("pass", "fail"), f.message  # the lightest group weighs exactly that
    sums = df.groupby("grp")["w"].sum().to_dict()
    assert {g.group: g.n for g in f.groups} == sums


# --- the bootstrap ------------------------------------------------------------------------


def test_weighted_bootstrap_and_permutations_are_those_of_the_repeated_rows() -> None:
    df = _binary(5, 300)
    w = df["w"].to_numpy()
    kw = {"bootstrap": 40, "p_value": 20, "seed": 11}
    weighted = run(df, 2, "w", **kw)
    # weight 1 on every repeated row: the same inputs, so the same per-control seeds
    repeated = run(expand(df, w).assign(w=1), 2, "w", **kw)
    some = tested = 0
    for cid, f in weighted.items():
        r = repeated[cid]
        assert (f.ci is None) == (r.ci is None), cid
        if f.ci is not None and r.ci is not None:
            some += 1
            assert close(f.ci.low, r.ci.low) and close(f.ci.high, r.ci.high), cid
        assert (f.p_value is None) == (r.p_value is None), cid
        if f.p_value is not None and r.p_value is not None:
            tested += f.p_value.p_value is not None
            assert close(f.p_value.p_value, r.p_value.p_value), cid
    assert some >= 10 and tested >= 5, (some, tested)
    # the unweighted bootstrap of the same rows is a different interval (weights are used)
    plain = run(df.drop(columns="w"), 2, **kw)
    dp = next(c for c in weighted if c.startswith("demographic_parity_diff("))
    assert weighted[dp].ci is not None and plain[dp].ci is not None
    assert not close(weighted[dp].ci.high, plain[dp].ci.high)


# --- every engine and input type ---------------------------------------------------------

SIMPLE = (
    "demographic_parity_diff",
    "equalized_odds_diff",
    "auc_gap",
    "group_size",
    "f1_score",
    "mae_parity",
    "residual_parity",
)
REGRESSION_KEYS = {"mae_parity", "residual_parity"}


def _simple_policy(tmp: Path, frequency: bool = False) -> Path:
    """``frequency``: every control declares ``weight_kind: frequency`` (with --bind weight)."""
    lines = []
    for i, key in enumerate(SIMPLE):
        lines += [
            f"- control-id: c{i}",
            "  title: t",
            "  props:",
            f"    - {{name: metric_key, value: {key}}}",
            '    - {name: threshold, value: "0.9"}',
            "    - {name: operator, value: '<'}",
            "    - {name: input.target, value: y_true}",
            "    - {name: input.prediction, value: "
            + ("y_score}" if key in REGRESSION_KEYS else "y_pred}"),
            "    - {name: input.dimension, value: grp}",
            "    - {name: min_samples, value: '1'}",
        ]
        if key == "auc_gap":
            lines.append("    - {name: input.score, value: y_score}")
        if frequency:
            lines.append("    - {name: weight_kind, value: frequency}")
    path = tmp / ("policy-frequency.yaml" if frequency else "policy.yaml")
    path.write_text("\n".join(lines) + "\n")
    return path


def _values(findings: list[Finding], approx: bool = False) -> list[tuple[Any, ...]]:
    """Each finding's id, status, value and groups; ``approx``: the values as
    ``pytest.approx`` (float sums of weighted and of repeated rows may differ in the last
    bit)."""

    def v(x: float | None) -> Any:
        return pytest.approx(x, rel=1e-12, abs=1e-15) if approx and x is not None else x

    return [
        (f.control_id, f.status, v(f.value), tuple((g.group, g.n, v(g.value)) for g in f.groups))
        for f in findings
    ]


@pytest.fixture(scope="module")
def weighted_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    tmp = tmp_path_factory.mktemp("weights")
    df = _binary(6, 500)
    df.to_csv(tmp / "d.csv", index=False)
    df.to_parquet(tmp / "d.parquet", index=False)
    return tmp, df


def _expected(tmp: Path, df: pd.DataFrame) -> list[tuple[Any, ...]]:
    res = check(_simple_policy(tmp), expand(df.drop(columns="w"), df["w"].to_numpy()))
    return _values(res.findings)


@pytest.mark.parametrize("kind", ["csv", "parquet", "pandas"])
def test_embedded_inputs_agree(kind: str, weighted_files: tuple[Path, pd.DataFrame]) -> None:
    tmp, df = weighted_files
    data: Any = df if kind == "pandas" else tmp / f"d.{kind}"
    res = check(_simple_policy(tmp, True), data, bind={"weight": "w"}, engine="embedded")
    assert any("weighted by column 'w'" in x for x in res.warnings)
    assert _values(res.findings, approx=True) == _expected(tmp, df)


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_engines_agree(engine: str, kind: str, weighted_files: tuple[Path, pd.DataFrame]) -> None:
    tmp, df = weighted_files
    pol = _simple_policy(tmp, True)
    res = check(pol, tmp / f"d.{kind}", bind={"weight": "w"}, engine=engine)
    assert _values(res.findings, approx=True) == _expected(tmp, df)


def test_policy_wide_weight_prop(tmp_path: Path) -> None:
    """``input.weight`` in ``metadata.props`` weighs every control; a control's own
    ``input.weight`` naming another column is a conflict (exit 2), never a silent choice."""
    df = _binary(7)
    props = [
        {"name": "input.weight", "value": "w", "ns": NS},
        {"name": "weight_kind", "value": "frequency", "ns": NS},
    ]
    policy = plan(tmp_path, props, control("a", dimension="grp"), control("b", dimension="grp"))
    res = check(policy, df)
    sums = df.groupby("grp")["w"].sum().to_dict()
    for f in res.findings:
        assert f.inputs.get("weight") == "w"
        assert {g.group: g.n for g in f.groups} == sums
    other = plan(
        tmp_path,
        props,
        control("a", dimension="grp"),
        control("b", dimension="grp", input__weight="y_true"),
    )
    with pytest.raises(PolicyError, match="same sample weights"):
        check(other, df)


# --- the command line and the reports ---------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "sarif", "markdown", "html", "junit", "text"])
def test_reports_say_weighted_by_the_column(fmt: str, tmp_path: Path) -> None:
    """A real CLI run: exit code, every report names the weight column and says that the
    undeclared whole-number weights are read as survey weights; the JSON records it."""
    import io
    import json

    from fairpolicy.cli import main

    df = _binary(8)
    df.to_csv(tmp_path / "d.csv", index=False)
    policy = plan(tmp_path, [], control("a", dimension="grp", threshold="0.9"))
    out = tmp_path / f"report.{fmt}"
    args = ["check", str(policy), str(tmp_path / "d.csv"), "--bind", "weight=w"]
    code = main([*args, "-o", f"{fmt}={out}"], io.StringIO())
    assert code == 0
    text = out.read_text()
    assert "weighted by column" in text and "'w'" in text.replace("&#x27;", "'").replace(
        "&#39;", "'"
    )
    assert "weight_kind not declared" in text and "survey weights" in text
    if fmt == "json":
        doc = json.loads(text)
        assert doc["findings"][0]["inputs"]["weight"] == "w"
        assert doc["data"]["weights"] == {"column": "w", "kind": "survey", "declared": False}
        rows = df[df["w"] > 0].groupby("grp").size().to_dict()  # n counts rows
        assert {g["group"]: g["n"] for g in doc["findings"][0]["groups"]} == rows


# --- bad weights, anywhere, on any input type: never a value ------------------------------

BAD_WEIGHTS = st.one_of(
    st.floats(max_value=-1e-300, allow_infinity=True, allow_nan=False),  # negative
    st.sampled_from([math.inf, math.nan]),
)  # fractional weights are survey weights: tests/metrics/test_survey_weights.py


@settings(max_examples=25, deadline=None, database=None)
@given(
    bad=BAD_WEIGHTS,
    where=st.integers(0, 399),
    kind=st.sampled_from(["pandas", "csv", "parquet-duckdb"]),
)
def test_any_bad_weight_is_an_error_naming_the_column(bad: float, where: int, kind: str) -> None:
    import tempfile

    from fairpolicy.errors import DataError

    df = _binary(9)
    df["w"] = df["w"].astype(np.float64)
    df.loc[where, "w"] = bad
    inputs = {"target": "y_true", "prediction": "y_pred", "dimension": "grp", "weight": "w"}
    pol = Policy(form="list", controls=(ctl("demographic_parity_diff", inputs),))
    with tempfile.TemporaryDirectory() as tmp:
        data: Any = df
        engine = "embedded"
        if kind == "csv":
            data = Path(tmp) / "d.csv"
            df.to_csv(data, index=False)
        elif kind == "parquet-duckdb":
            data, engine = Path(tmp) / "d.parquet", "duckdb"
            df.to_parquet(data, index=False)
        with pytest.raises(DataError) as exc:
            check(pol, data, engine=engine)
    text = str(exc.value)
    assert "column 'w'" in text and "input.weight" in text, text
