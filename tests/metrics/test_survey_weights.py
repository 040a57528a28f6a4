"""Fractional (survey / importance) sample weights (``input.weight``, issue 15).

A weight column with any fractional value is read as survey weights: values are ratios of
weighted sums (scikit-learn's ``sample_weight``, fairlearn's ``sample_params``), the
sample size (``min_samples``, each group's n) counts rows, and the bootstrap resamples
rows, each keeping its weight (``fairpolicy.stats.survey``).

- oracles: per-group values and gaps equal fairlearn's ``MetricFrame(sample_params=...)``
  with continuous weights, on every input type and engine;
- registry-wide: every count-table control gives, on weights c·0.3, the value it gives on
  whole-number frequency weights c (ratios of weighted counts do not see the scale);
- the weighted bootstrap is a row bootstrap: its replicate cell sums have the mean and
  spread of a naive row resample, and constant fractional weights give the unweighted
  interval (within Monte Carlo error);
- what cannot be weighted this way is refused or reasoned, never silently unweighted.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.errors import DataError
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Control, Policy
from fairpolicy.runner import check
from fairpolicy.stats import GroupStats, SurveyCells
from fairpolicy.stats.survey import build_survey_stats, survey_counts
from tests.data.test_engines import ENGINES
from tests.data.test_engines import engine as engine  # the fixture
from tests.data.test_engines import spark_session as spark_session  # the fixture
from tests.metrics.test_registry_common import COMBOS, DATA, common_control
from tests.metrics.test_weights import SCORE_KEYS, _binary, _fl_metrics


def ctl(key: str, inputs: dict[str, str]) -> Control:
    """A control of ``key`` whose weights are not declared (read as survey weights)."""
    c = common_control(key, {}, "c")
    return c.model_copy(update={"inputs": inputs, "min_samples": 1})


INPUTS = {"target": "y_true", "prediction": "y_pred", "dimension": "grp", "weight": "w"}


def survey_frame(seed: int, n: int = 500) -> pd.DataFrame:
    df = _binary(seed, n)
    rng = np.random.default_rng(seed + 100)
    df["w"] = rng.gamma(2.0, 0.8, n).round(4) + 0.0001  # positive, continuous, fractional
    return df


def _fl() -> dict[str, Any]:
    """The count-table oracles of tests/metrics/test_weights.py (not its score metrics)."""
    return {k: v for k, v in _fl_metrics().items() if k not in SCORE_KEYS}


def _data(df: pd.DataFrame, kind: str, tmp: Path) -> Any:
    if kind == "pandas":
        return df
    if kind == "csv":
        df.to_csv(tmp / "d.csv", index=False)
        return tmp / "d.csv"
    df.to_parquet(tmp / "d.parquet", index=False)
    return tmp / "d.parquet"


@pytest.mark.parametrize("kind", ["pandas", "csv", "parquet"])
@pytest.mark.parametrize("key", sorted(_fl()))
def test_values_equal_fairlearn_sample_params(key: str, kind: str, tmp_path: Path) -> None:
    from fairlearn.metrics import MetricFrame

    df = survey_frame(1)
    res = check(Policy(form="list", controls=(ctl(key, INPUTS),)), _data(df, kind, tmp_path))
    f = res.findings[0]
    assert f.status in ("pass", "fail"), f.message
    mf = MetricFrame(
        metrics=_fl()[key],
        y_true=df["y_true"],
        y_pred=df["y_pred"],
        sensitive_features=df["grp"],
        sample_params={"sample_weight": df["w"].to_numpy()},
    )
    got = {g.group: g.value for g in f.groups}
    for g, v in mf.by_group.to_dict().items():
        assert got[g] == pytest.approx(v, abs=1e-12), (g, got[g], v)
    if key.endswith("_diff"):
        assert f.value == pytest.approx(mf.difference(), abs=1e-12)
    # n counts rows, never the (truncated) total weight
    assert {g.group: g.n for g in f.groups} == df.groupby("grp").size().to_dict()
    assert any("survey / importance weights" in w for w in res.warnings)


@pytest.mark.parametrize("engine", ENGINES, indirect=True)
def test_engines_equal_the_embedded_run(engine: str, tmp_path: Path) -> None:
    df = survey_frame(2, 400)
    df["w"] = df["w"].round(1) + 0.05  # repeated weights: engines' tuples share them
    df.to_parquet(tmp_path / "d.parquet", index=False)
    controls = tuple(ctl(k, INPUTS).model_copy(update={"control_id": k}) for k in sorted(_fl()))
    pol = Policy(form="list", controls=controls)
    kw = {"bootstrap": 200, "seed": 5}
    a = check(pol, tmp_path / "d.parquet", **kw)
    b = check(pol, tmp_path / "d.parquet", engine=engine, **kw)
    for fa, fb in zip(a.findings, b.findings, strict=True):
        assert fb.status == fa.status, (fa.control_id, fb.message)
        assert fb.value == pytest.approx(fa.value, abs=1e-12), fa.control_id
        assert [g.n for g in fb.groups] == [g.n for g in fa.groups]
        assert fb.ci is not None and fa.ci is not None
        # different tuples → different units; the intervals agree within MC error
        assert fb.ci.high == pytest.approx(fa.ci.high, abs=0.08), fa.control_id


def _count_controls(
    weight: str, kinds: tuple[str, ...] = ("binary", "data")
) -> tuple[Control, ...]:
    out = []
    for cid, key, params, kind in COMBOS:
        spec = REGISTRY[key]
        if (
            kind not in kinds
            or spec.needs_scores
            or spec.kind != ("data" if kind == "data" else "classification")
        ):
            continue
        c = common_control(key, params, cid).model_copy(update={"min_samples": 1})
        out.append(c.model_copy(update={"inputs": {**c.inputs, "weight": weight}}))
    return tuple(out)


#: values that count records, not weight: the smallest group's rows
COUNTS_RECORDS = {"k_anonymity", "group_size"}


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
def test_registry_scaled_fractional_weights_equal_frequency_weights(kind: str) -> None:
    df = DATA[kind].copy()
    rng = np.random.default_rng(7)
    c = rng.integers(1, 5, len(df))
    controls = _count_controls("w", ("binary", "data") if kind == "binary" else (kind,))
    assert len({x.metric_key for x in controls}) > 10
    declared = tuple(_kind(x, "frequency") for x in controls)
    freq = check(Policy(form="list", controls=declared), df.assign(w=c))
    frac = check(Policy(form="list", controls=controls), df.assign(w=c * 0.3))
    assert any("survey / importance weights" in w for w in frac.warnings)
    assert not any("survey / importance weights" in w for w in freq.warnings)
    checked = 0
    for a, b in zip(freq.findings, frac.findings, strict=True):
        if a.metric_key in COUNTS_RECORDS:
            sizes = df.groupby(a.inputs["dimension"]).size()
            assert b.value == sizes.min(), (a.control_id, b.value)
            continue
        if a.value is None:
            assert b.value is None, (a.control_id, b.value)
            continue
        assert b.value is not None, (a.control_id, b.message)
        assert math.isclose(a.value, b.value, rel_tol=1e-9, abs_tol=1e-12), (
            a.control_id,
            a.value,
            b.value,
        )
        checked += 1
    assert checked > 10


@pytest.mark.parametrize("continuous", [False, True], ids=["few-weights", "continuous"])
def test_survey_replicates_are_a_row_bootstrap(continuous: bool) -> None:
    """Replicate cell sums of survey_counts have the mean and spread of a naive
    resample of the rows (with replacement, each keeping its weight) — by the multinomial
    over (cell, weight) units, and by row indices when weights are continuous."""
    rng = np.random.default_rng(0)
    n, k = 60, 2
    t = rng.integers(0, k, n)
    p = rng.integers(0, k, n)
    w = rng.gamma(2.0, 0.8, n) if continuous else rng.choice([0.5, 1.25, 3.0], n)
    built = build_survey_stats(
        t, p, ("0", "1"), {"g": (np.zeros(n, np.int64), ["A"])}, [("g",)], 1, None, w
    )[("g",)]
    assert built.survey is not None and built.rows_n.tolist() == [n]
    cell = t * k + p
    want = np.bincount(cell, weights=w, minlength=k * k)
    assert np.allclose(built.counts.reshape(-1), want)
    b = 20_000
    got = survey_counts(built, b, seed=3)[:, 0, :]
    idx = rng.integers(0, n, (b, n))
    naive = np.stack([np.bincount(cell[r], weights=w[r], minlength=k * k) for r in idx])
    assert np.allclose(got.mean(axis=0), want, rtol=0.02)
    assert np.allclose(got.std(axis=0), naive.std(axis=0), rtol=0.05)
    assert np.allclose(got.sum(axis=1).mean(), w.sum(), rtol=0.01)


def test_constant_fractional_weights_give_the_unweighted_interval() -> None:
    df = _binary(0, 400)
    plain = {k: v for k, v in INPUTS.items() if k != "weight"}
    out = []
    for data, inputs in ((df, plain), (df.assign(w=0.37), INPUTS)):
        pol = Policy(form="list", controls=(ctl("demographic_parity_ratio", inputs),))
        f = check(pol, data, bootstrap=3000, seed=2).findings[0]
        assert f.ci is not None and f.ci.low is not None
        out.append((f.value, f.ci.low))
    assert out[1][0] == pytest.approx(out[0][0], abs=1e-12)
    assert out[1][1] == pytest.approx(out[0][1], abs=0.03)


def test_min_samples_counts_rows_not_weight() -> None:
    """Ten rows that stand for 1,005 people are still ten rows of evidence."""
    df = _binary(3, 300)
    df["w"] = np.where(df["grp"] == "C", 100.5, 0.5)
    c = ctl("demographic_parity_diff", INPUTS).model_copy(update={"min_samples": 70})
    f = check(Policy(form="list", controls=(c,)), df).findings[0]
    small = int((df["grp"] == "C").sum())
    assert small < 70
    assert [e.group for e in f.excluded_groups] == ["C"] and f.excluded_groups[0].n == small


def test_results_json_carries_weighted_counts(tmp_path: Path) -> None:
    from fairpolicy.cli import main

    df = survey_frame(4, 200)
    df.to_csv(tmp_path / "d.csv", index=False)
    pol = tmp_path / "p.yaml"
    pol.write_text(
        "- control-id: c\n  props:\n  - {name: metric_key, value: demographic_parity_diff}\n"
        "  - {name: threshold, value: '0.5'}\n  - {name: operator, value: '<'}\n"
        "  - {name: input.target, value: y_true}\n  - {name: input.prediction, value: y_pred}\n"
        "  - {name: input.dimension, value: grp}\n  - {name: input.weight, value: w}\n"
    )
    out = tmp_path / "r.json"
    code = main(["check", str(pol), str(tmp_path / "d.csv"), "-o", f"json={out}"])
    assert code == 0
    doc = json.loads(out.read_text())
    counts = doc["findings"][0]["counts"]
    a = df[df["grp"] == "A"]
    assert sum(map(sum, counts["A"])) == pytest.approx(a["w"].sum(), rel=1e-12)
    assert doc["findings"][0]["groups"][0]["n"] == len(a)


# --- what fractional weights cannot reach: refused or reasoned, never unweighted ----------


@pytest.mark.parametrize("key", ["auc_gap", "mae_parity"])
def test_score_and_regression_metrics_refuse_fractional_weights(key: str) -> None:
    df = survey_frame(5, 200)
    df["y_num"], df["yhat_num"] = df["y_score"] * 10, df["y_score"] * 9
    inputs = dict(INPUTS, score="y_score")
    if key == "mae_parity":
        inputs = {"target": "y_num", "prediction": "yhat_num", "dimension": "grp", "weight": "w"}
    other = ctl("accuracy_diff", INPUTS).model_copy(update={"control_id": "d"})
    res = check(Policy(form="list", controls=(ctl(key, inputs), other)), df)
    f, g = res.findings
    assert f.status == "error" and f.value is None and res.exit_code == 2
    assert "survey / importance weights" in f.message and key in f.message
    assert "column 'w'" in f.message and "weight_kind: frequency" in f.message
    assert g.status in ("pass", "fail") and g.value is not None  # the others still evaluate


@pytest.mark.parametrize("engine", ENGINES[:1], indirect=True)
def test_regression_on_an_engine_refuses_fractional_weights(engine: str, tmp_path: Path) -> None:
    df = survey_frame(6, 200)
    df["y_num"], df["yhat_num"] = df["y_score"] * 10, df["y_score"] * 9
    df.to_parquet(tmp_path / "d.parquet", index=False)
    inputs = {"target": "y_num", "prediction": "yhat_num", "dimension": "grp", "weight": "w"}
    pol = Policy(form="list", controls=(ctl("mae_parity", inputs),))
    f = check(pol, tmp_path / "d.parquet", engine=engine).findings[0]
    assert f.status == "error" and f.value is None
    assert "survey / importance weights" in f.message and "mae_parity" in f.message


def test_permutation_and_bca_say_why_not() -> None:
    df = survey_frame(7, 300)
    c = ctl("accuracy_diff", INPUTS)
    pol = Policy(form="list", controls=(c,))
    f = check(pol, df, p_value=200, seed=1).findings[0]
    assert f.p_value is not None and f.p_value.p_value is None
    assert "survey sample weights" in (f.p_value.reason or "")
    assert "weight_kind: frequency" in (f.p_value.reason or "")
    two = df[df["grp"] != "C"]
    f = check(pol, two, bootstrap=200, ci_method="bca", seed=1).findings[0]
    assert f.ci is not None and f.ci.low is not None
    assert "BCa not available" in (f.ci.note or "") or f.ci.method in ("band", "score")


def test_group_sizes_are_total_weights_and_k_anonymity_counts_records() -> None:
    df = _binary(8, 300)
    df["w"] = np.where(df["grp"] == "A", 0.25, 2.5)
    inputs = {"dimension": "grp", "weight": "w"}
    k = check(Policy(form="list", controls=(ctl("k_anonymity", inputs),)), df).findings[0]
    assert k.value == df.groupby("grp").size().min()
    df.loc[df.index[:7], "grp"] = None  # rows without a group weigh in the total too
    f = check(Policy(form="list", controls=(ctl("min_group_share", inputs),)), df).findings[0]
    totals = df.groupby("grp")["w"].sum()
    assert f.value == pytest.approx(totals.min() / df["w"].sum(), rel=1e-12)
    assert f.details["rows"] == len(df)


def test_survey_cells_select_keeps_groups_aligned() -> None:
    units = tuple(
        (np.array([i], np.int64), np.array([0.5 + i]), np.array([i + 1], np.int64))
        for i in range(3)
    )
    sc = SurveyCells(np.array([1, 2, 3], np.int64), units)
    st = GroupStats(
        dimension=("g",),
        groups=("A", "B", "C"),
        classes=("0",),
        counts=np.array([[[0.5]], [[3.0]], [[7.5]]]),
        survey=sc,
    )
    sel = st.select(np.array([True, False, True]))
    assert sel.rows_n.tolist() == [1, 3]
    assert sel.survey is not None and sel.survey.units[1][1].tolist() == [2.5]


# --- weight_kind: the reading declared, not guessed --------------------------------------


def _kind(c: Control, kind: str) -> Control:
    return c.model_copy(update={"params": {**c.params, "weight_kind": kind}})


def test_weight_kind_survey_reads_whole_numbers_as_survey_weights() -> None:
    """A respondent standing for 250 people is one row of evidence."""
    df = _binary(9, 300)
    df["w"] = np.where(df["grp"] == "C", 250, 3)
    sizes = df.groupby("grp").size()
    floor = int(sizes["C"]) + 1
    assert sizes.drop("C").min() >= floor and sizes["C"] * 250 >= floor
    base = ctl("demographic_parity_diff", INPUTS).model_copy(update={"min_samples": floor})
    freq = check(Policy(form="list", controls=(_kind(base, "frequency"),)), df).findings[0]
    assert freq.excluded_groups == []  # read as 250 rows each, C looks large enough
    res = check(Policy(form="list", controls=(_kind(base, "survey"),)), df)
    f = res.findings[0]
    assert [e.group for e in f.excluded_groups] == ["C"]
    assert f.excluded_groups[0].n == sizes["C"]
    assert any("weight_kind: survey" in w for w in res.warnings)
    assert res.data.weights is not None and res.data.weights.declared
    # undeclared (or auto): the survey reading too, whatever the values — never guessed
    for undeclared in (base, _kind(base, "auto")):
        got = check(Policy(form="list", controls=(undeclared,)), df)
        assert [e.group for e in got.findings[0].excluded_groups] == ["C"]
        assert any("weight_kind not declared" in w for w in got.warnings)
        assert got.data.weights is not None and got.data.weights.kind == "survey"
        assert not got.data.weights.declared


def test_weight_kind_frequency_refuses_fractional_weights() -> None:
    df = survey_frame(10, 200)
    c = _kind(ctl("accuracy_diff", INPUTS), "frequency")
    with pytest.raises(DataError, match="fractional value under weight_kind: frequency"):
        check(Policy(form="list", controls=(c,)), df)


def test_weight_kind_must_agree_and_needs_a_weight() -> None:
    from fairpolicy.errors import PolicyError

    df = survey_frame(11, 200)
    a = _kind(ctl("accuracy_diff", INPUTS), "survey")
    b = ctl("demographic_parity_diff", INPUTS).model_copy(update={"control_id": "d"})
    with pytest.raises(PolicyError, match="weight_kind"):
        check(Policy(form="list", controls=(a, b)), df)
    plain = {k: v for k, v in INPUTS.items() if k != "weight"}
    lone = _kind(ctl("accuracy_diff", plain), "survey")
    f = check(Policy(form="list", controls=(lone,)), df).findings[0]
    assert f.status == "error" and "binds no weight column" in f.message


def test_unstratified_resampling_draws_group_sizes_from_rows() -> None:
    """``resample: rows`` under survey weights: the group sizes of a replicate are drawn
    from the rows (Multinomial(N, n_g / N)), each drawn row keeping its weight."""
    rng = np.random.default_rng(1)
    n = 90
    g = rng.integers(0, 3, n)
    t, p = rng.integers(0, 2, n), rng.integers(0, 2, n)
    w = rng.choice([0.5, 2.5], n)
    built = build_survey_stats(
        t, p, ("0", "1"), {"g": (g.astype(np.int64), ["A", "B", "C"])}, [("g",)], 1, None, w
    )[("g",)]
    sizes = rng.multinomial(n, built.rows_n / n, size=500)
    got = survey_counts(built, 500, seed=4, sizes=sizes)
    per_group_weight = got.sum(axis=2)
    mean_w = np.array([w[g == i].mean() for i in range(3)])
    assert np.allclose(per_group_weight.mean(axis=0), sizes.mean(axis=0) * mean_w, rtol=0.05)
    df = survey_frame(12, 300)
    c = ctl("accuracy_diff", INPUTS)
    f = check(Policy(form="list", controls=(c,)), df, bootstrap=200, resample="rows").findings[0]
    assert f.ci is not None and f.ci.high is not None and f.ci.resample == "rows"


def test_policy_wide_weight_kind_reaches_every_control(tmp_path: Path) -> None:
    """``weight_kind`` in ``metadata.props`` (beside ``input.weight``) reads every
    control's weights that way; a control may not read them differently."""
    from fairpolicy.errors import PolicyError
    from fairpolicy.policy.schema import NS
    from tests.helpers import control
    from tests.policy.test_policy_wide import plan

    df = _binary(13, 300)
    df["w"] = np.where(df["grp"] == "C", 40, 2)
    props = [
        {"name": "input.weight", "value": "w", "ns": NS},
        {"name": "weight_kind", "value": "survey", "ns": NS},
    ]
    policy = plan(tmp_path, props, control("a", dimension="grp"), control("b", dimension="grp"))
    res = check(policy, df)
    rows = df.groupby("grp").size().to_dict()
    for f in res.findings:
        assert {g.group: g.n for g in f.groups} == rows  # rows, not the weights' sums
    assert any("weight_kind: survey" in w for w in res.warnings)
    mixed = plan(
        tmp_path,
        props,
        control("a", dimension="grp"),
        control("b", dimension="grp", weight_kind="frequency"),
    )
    with pytest.raises(PolicyError, match="weight_kind"):
        check(mixed, df)


def test_html_count_tables_say_total_weight(tmp_path: Path) -> None:
    """Under survey weights the HTML confusion tables hold sums of weights: their caption
    says "total weight", never "n=" (n counts rows), and cells are not 17-digit floats."""
    import fairpolicy

    df = survey_frame(14, 200)
    props = {
        "metric_key": "accuracy_diff",
        "threshold": "0.5",
        "operator": "<",
        **{f"input.{role}": column for role, column in INPUTS.items()},
    }
    pol = [{"control-id": "c", "props": [{"name": k, "value": v} for k, v in props.items()]}]
    html = fairpolicy.check(pol, df).render("html")
    tables = html[html.index("(total weight ") :]
    assert "(n=" not in tables
    assert not re.search(r"<td class=.num.>[\d,]*\.\d{7,}</td>", tables)


@pytest.mark.parametrize("weights", [("0", "2"), ("0", "0.5")], ids=["frequency", "survey"])
def test_zero_weight_groups_are_the_pipelines_groups(weights: tuple[str, str]) -> None:
    """The zero-weight check sees the groups the metrics see: ' F' and 'F' are one group
    (values are trimmed), and a ``missing_values`` token is no group at all — so rows of
    weight 0 spelled ' F', or holding the token, never stop the run."""
    zero, some = weights
    rows = ["y_true,y_pred,grp,w"]
    rows += [f"{i % 2},{(i // 2) % 2},F,{some}" for i in range(40)]
    rows += [f"{i % 2},{i % 3 % 2},M,{some}" for i in range(40)]
    rows += [f"1,0, F,{zero}", f"0,1,n/a,{zero}"]
    import io

    df = pd.read_csv(io.StringIO("\n".join(rows)), dtype={"grp": str}, keep_default_na=False)
    c = ctl("demographic_parity_diff", INPUTS).model_copy(
        update={"params": {"missing_values": "n/a"}}
    )
    f = check(Policy(form="list", controls=(c,)), df).findings[0]
    assert f.status in ("pass", "fail"), f.message
    assert {g.group for g in f.groups} == {"F", "M"}
