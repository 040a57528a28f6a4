"""Exact decisions with sample weights and with thresholds as written (issue 26, items 1,
2 and 13).

A double is a binary rational, so a sum of float weights is an exact rational too: a
demographic-parity gap of exactly 1/10 is not ``< 0.1`` whatever the weights (a constant
weight cannot change a ratio of weighted sums), and a threshold is the decimal the policy
wrote (``0.09999999999999999999`` is below 1/10, ``1e-400`` above 0), printed as written.

The property test places thresholds exactly at, one ulp under and one ulp over each
value (and 10^-20 either side of it), across operators, weight kinds (none, frequency,
survey, constant 0.5 / 0.3, varying fractional), engines (embedded, DuckDB; Spark on a
small subset) and input forms (CSV, Parquet, DataFrame), and compares every verdict with
the exact rational decision computed here with :class:`fractions.Fraction` from the rows.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from fairpolicy.exact import written_text, written_threshold
from fairpolicy.formatters import RenderOptions, get
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Control, Policy
from fairpolicy.runner import check
from tests.data.test_engines import needs_duckdb, needs_spark
from tests.data.test_engines import spark_session as spark_session  # the fixture
from tests.helpers import control, write_policy

OPS = ("<", "<=", ">", ">=")

# ---------------------------------------------------------------------------
# the exact oracle: per-group weighted confusion cells as Fractions of the float weights


def _cells(df: pd.DataFrame, weight: str | None) -> dict[str, dict[str, Fraction]]:
    out: dict[str, dict[str, Fraction]] = {}
    for row in df.itertuples(index=False):
        w = Fraction(1) if weight is None else Fraction(float(getattr(row, weight)))
        t, p = int(row.y_true), int(row.y_pred)
        cell = {(1, 1): "tp", (0, 1): "fp", (1, 0): "fn", (0, 0): "tn"}[(t, p)]
        g = out.setdefault(
            str(row.sex),
            {"tp": Fraction(0), "fp": Fraction(0), "fn": Fraction(0), "tn": Fraction(0)},
        )
        g[cell] += w
    return out


def _gap(xs: list[Fraction]) -> Fraction:
    return max(xs) - min(xs)


#: metric key → its exact value from the groups' exact cells
ORACLES: dict[str, Callable[[list[dict[str, Fraction]]], Fraction]] = {
    "demographic_parity_diff": lambda gs: _gap([(g["tp"] + g["fp"]) / sum(g.values()) for g in gs]),
    "demographic_parity_ratio": lambda gs: (
        min(r := [(g["tp"] + g["fp"]) / sum(g.values()) for g in gs]) / max(r)
    ),
    "equal_opportunity_diff": lambda gs: _gap([g["tp"] / (g["tp"] + g["fn"]) for g in gs]),
    "accuracy_diff": lambda gs: _gap([(g["tp"] + g["tn"]) / sum(g.values()) for g in gs]),
    "min_group_share": lambda gs: (
        min(sum(g.values()) for g in gs) / sum(sum(g.values()) for g in gs)
    ),
}


def exact_value(key: str, df: pd.DataFrame, weight: str | None) -> Fraction:
    return ORACLES[key](list(_cells(df, weight).values()))


def holds(v: Fraction, op: str, t: Fraction) -> bool:
    return {"<": v < t, "<=": v <= t, ">": v > t, ">=": v >= t}[op]


def _decimal(x: Fraction, digits: int) -> str:
    """``x`` written with ``digits`` decimals (truncated towards zero)."""
    sign, x = ("-", -x) if x < 0 else ("", x)
    scaled = x.numerator * 10**digits // x.denominator
    text = str(scaled).rjust(digits + 1, "0")
    return f"{sign}{text[:-digits]}.{text[-digits:]}"


def thresholds(v: Fraction) -> dict[str, str]:
    """The thresholds placed around ``v``: the decimal it is (when it is one), the double
    nearest to it, one ulp under and over that double, and 10^-20 under and over it."""
    f = float(v)
    out = {
        "float": repr(f),
        "ulp-under": repr(math.nextafter(f, -math.inf)),
        "ulp-over": repr(math.nextafter(f, math.inf)),
        "long-under": _decimal(v - Fraction(1, 10**20), 30),
        "long-over": _decimal(v + Fraction(1, 10**20) + Fraction(1, 10**30), 30),
    }
    d = v.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:  # a terminating decimal: the threshold exactly at the value
        out["at"] = _decimal(v, 60).rstrip("0").rstrip(".") or "0"
    return out


# ---------------------------------------------------------------------------
# data: two groups whose parity gap is exactly 1/10, EO gap 1/5, accuracy gap 1/10


def base_frame() -> pd.DataFrame:
    rows = []
    for g, (tp, fn, fp, tn) in (("F", (3, 2, 2, 3)), ("M", (2, 3, 2, 3))):
        for t, p, n in ((1, 1, tp), (1, 0, fn), (0, 1, fp), (0, 0, tn)):
            rows += [{"y_true": t, "y_pred": p, "sex": g}] * n
    return pd.DataFrame(rows)


#: weight kind → (weight column values for the frame's rows, weight_kind prop)
def weighted(kind: str, df: pd.DataFrame) -> tuple[pd.DataFrame, str | None, str | None]:
    n = len(df)
    i = np.arange(n)
    if kind == "none":
        return df, None, None
    if kind == "frequency":
        return df.assign(w=(i % 3 + 1).astype(np.int64)), "w", None
    if kind == "survey-1":
        return df.assign(w=np.ones(n, dtype=np.int64)), "w", "survey"
    if kind == "const-0.5":
        return df.assign(w=np.full(n, 0.5)), "w", None
    if kind == "const-0.3":
        return df.assign(w=np.full(n, 0.3)), "w", None
    if kind == "varying":
        return df.assign(w=np.array([0.3, 0.7, 1.1, 0.1])[i % 4]), "w", None
    raise AssertionError(kind)


WEIGHT_KINDS = ("none", "frequency", "survey-1", "const-0.5", "const-0.3", "varying")


def boundary_policy(
    df: pd.DataFrame, weight: str | None, weight_kind: str | None
) -> tuple[list[dict[str, Any]], dict[str, tuple[Fraction, str, str]]]:
    """One control per (metric, operator, threshold position), and each control's
    (exact value, operator, threshold text)."""
    controls, expected = [], {}
    for key in ORACLES:
        v = exact_value(key, df, weight)
        assert 0 < v < 1, (key, v)  # every threshold around it is a real threshold
        for pos, text in thresholds(v).items():
            for op in OPS:
                cid = f"{key}.{pos}.{['lt', 'le', 'gt', 'ge'][OPS.index(op)]}"
                props: dict[str, Any] = {"min_samples": 1}
                if key == "min_group_share":
                    props.update(target=None, prediction=None)
                if weight is not None:
                    props["input__weight"] = weight
                if weight_kind is not None:
                    props["weight_kind"] = weight_kind
                controls.append(control(cid, key, text, op, **props))
                expected[cid] = (v, op, text)
    return controls, expected


def _source(df: pd.DataFrame, form: str, tmp: Path) -> Any:
    if form == "dataframe":
        return df
    if form == "csv":
        path = tmp / "data.csv"
        df.to_csv(path, index=False)
        return path
    path = tmp / "data.parquet"
    df.to_parquet(path)
    return path


def assert_exact_verdicts(res: Any, expected: dict[str, tuple[Fraction, str, str]]) -> None:
    assert len(res.findings) == len(expected)
    table = get("text")(res, RenderOptions())
    for f in res.findings:
        v, op, text = expected[f.control_id]
        truth = holds(v, op, Fraction(text))
        assert f.status == ("pass" if truth else "fail"), (f.control_id, f.message, str(v))
        assert f.details.get("exact_value") == str(v), (f.control_id, f.details)
        # the threshold as written (canonical), in the record and the table
        assert f.threshold_written == written_threshold([text], [float(text)])
        row = next(line for line in table.splitlines() if line.startswith(f.control_id + " "))
        assert f" {written_text(text)} " in row, row
        if f.threshold_written is not None:
            assert Fraction(f.threshold_written) == Fraction(text)
    assert res.exit_code == (0 if all(f.status == "pass" for f in res.findings) else 1)


@pytest.mark.parametrize("kind", WEIGHT_KINDS)
@pytest.mark.parametrize("form", ["csv", "parquet", "dataframe"])
def test_boundary_verdicts_are_exact_embedded(kind: str, form: str, tmp_path: Path) -> None:
    df, weight, weight_kind = weighted(kind, base_frame())
    controls, expected = boundary_policy(df, weight, weight_kind)
    res = check(controls, _source(df, form, tmp_path), engine="embedded", deterministic=True)
    assert_exact_verdicts(res, expected)


@needs_duckdb
@pytest.mark.parametrize("kind", WEIGHT_KINDS)
@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_boundary_verdicts_are_exact_on_duckdb(kind: str, form: str, tmp_path: Path) -> None:
    df, weight, weight_kind = weighted(kind, base_frame())
    controls, expected = boundary_policy(df, weight, weight_kind)
    res = check(controls, _source(df, form, tmp_path), engine="duckdb", deterministic=True)
    assert_exact_verdicts(res, expected)


@needs_spark
@pytest.mark.parametrize("kind", ["const-0.3", "varying"])
def test_boundary_verdicts_are_exact_on_spark(
    kind: str, tmp_path: Path, spark_session: Any
) -> None:
    df, weight, weight_kind = weighted(kind, base_frame())
    controls, expected = boundary_policy(df, weight, weight_kind)
    res = check(controls, _source(df, "parquet", tmp_path), engine="spark", deterministic=True)
    assert_exact_verdicts(res, expected)


# ---------------------------------------------------------------------------
# the same property on random tables and random fractional weights (embedded)

_WEIGHTS = (0.1, 0.3, 0.5, 0.7, 1.0, 1.1, 2.5, 3.0)


@st.composite
def weighted_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, str]:
    rows = []
    for g in ("F", "M", "X")[: draw(st.integers(2, 3))]:
        for t, p in ((1, 1), (1, 0), (0, 1), (0, 0)):
            rows += [{"y_true": t, "y_pred": p, "sex": g}] * draw(st.integers(1, 6))
    df = pd.DataFrame(rows)
    kind = draw(st.sampled_from(["survey", "frequency", "fractional"]))
    if kind == "frequency":
        w = draw(st.lists(st.integers(1, 4), min_size=len(df), max_size=len(df)))
        return df.assign(w=np.array(w, dtype=np.int64)), ""
    if kind == "survey":
        w = draw(st.lists(st.integers(1, 4), min_size=len(df), max_size=len(df)))
        return df.assign(w=np.array(w, dtype=np.int64)), "survey"
    w = draw(st.lists(st.sampled_from(_WEIGHTS), min_size=len(df), max_size=len(df)))
    return df.assign(w=np.array(w, dtype=np.float64) + 0.0), ""


@settings(max_examples=40, deadline=None)
@given(weighted_tables(), st.sampled_from(sorted(ORACLES)))
def test_random_weighted_tables_decide_exactly(case: tuple[pd.DataFrame, str], key: str) -> None:
    df, weight_kind = case
    v = exact_value(key, df, "w")
    controls, expected = [], {}
    for pos, text in thresholds(v).items():
        if not 0 < Fraction(text) < 1:
            continue  # outside the metric's range: the loader refuses a vacuous threshold
        for op in OPS:
            cid = f"c.{pos}.{OPS.index(op)}"
            props: dict[str, Any] = {"min_samples": 1, "input__weight": "w"}
            if key == "min_group_share":
                props.update(target=None, prediction=None)
            if weight_kind:
                props["weight_kind"] = weight_kind
            controls.append(control(cid, key, text, op, **props))
            expected[cid] = (v, op, text)
    if not controls:
        return
    res = check(controls, df, engine="embedded", deterministic=True)
    for f in res.findings:
        v, op, text = expected[f.control_id]
        assert f.status == ("pass" if holds(v, op, Fraction(text)) else "fail"), (
            f.message,
            str(v),
            df["w"].tolist(),
        )


# ---------------------------------------------------------------------------
# registry-wide: every count metric with an exact value keeps it under weights, and a
# constant weight (or a power-of-two scale) changes no exact value and no verdict


def _count_controls() -> list[Control]:
    from tests.metrics.test_survey_weights import _count_controls as counted

    return [c for c in counted("w", ("binary", "data"))]


def test_registry_constant_weights_change_no_exact_value() -> None:
    from tests.metrics.test_registry_common import DATA

    df = DATA["binary"].copy()
    controls = _count_controls()
    assert len({c.metric_key for c in controls}) > 10
    bare = [
        c.model_copy(update={"inputs": {k: v for k, v in c.inputs.items() if k != "weight"}})
        for c in controls
    ]
    plain = check(Policy(form="list", controls=tuple(bare)), df)
    rng = np.random.default_rng(3)
    c = rng.integers(1, 5, len(df))
    runs = {
        "const-0.3": (
            plain,
            check(Policy(form="list", controls=tuple(controls)), df.assign(w=0.3)),
        ),
        "survey-1": (
            plain,
            check(
                Policy(
                    form="list",
                    controls=tuple(
                        x.model_copy(update={"params": {**x.params, "weight_kind": "survey"}})
                        for x in controls
                    ),
                ),
                df.assign(w=1),
            ),
        ),
        "scaled-0.25": (
            check(Policy(form="list", controls=tuple(controls)), df.assign(w=c)),
            check(Policy(form="list", controls=tuple(controls)), df.assign(w=c * 0.25)),
        ),
    }
    exact_keys = set()
    for name, (a_res, b_res) in runs.items():
        for a, b in zip(a_res.findings, b_res.findings, strict=True):
            if a.metric_key in ("k_anonymity", "group_size"):
                continue  # they count records, not weight
            ea, eb = a.details.get("exact_value"), b.details.get("exact_value")
            assert ea == eb, (name, a.control_id, ea, eb)
            assert a.status == b.status, (name, a.control_id, a.message, b.message)
            if ea is not None:
                exact_keys.add(a.metric_key)
    assert len(exact_keys) > 10, exact_keys


@pytest.mark.parametrize("k", [2, 3])
def test_every_exact_key_is_exact_under_survey_weights(k: int) -> None:
    """Each count-table key whose value is exact on whole counts is exact under fractional
    weights too (no key falls back to a float decision), and constant weights give the
    unweighted exact value."""
    from fairpolicy.stats import build_group_stats
    from fairpolicy.stats.survey import build_survey_stats

    rng = np.random.default_rng(5 + k)
    n = 400
    t, p = rng.integers(0, k, n), rng.integers(0, k, n)
    g = rng.integers(0, 3, n)
    dims = {"sex": (g, ["A", "B", "C"])}
    classes = tuple(str(c) for c in range(k))
    positive = 1 if k == 2 else None
    req = [("sex",)]
    (plain,) = build_group_stats(t, p, classes, dims, req, positive).values()
    w = rng.choice([0.3, 0.7, 1.1], n)
    (varying,) = build_survey_stats(t, p, classes, dims, req, positive, None, w).values()
    (const,) = build_survey_stats(
        t, p, classes, dims, req, positive, None, np.full(n, 0.3)
    ).values()
    checked = 0
    for key, spec in REGISTRY.items():
        if spec.kind != "classification" or spec.needs_scores or spec.secondary_role:
            continue
        if ("binary" if k == 2 else "multiclass") not in spec.tasks:
            continue
        params = spec.resolve_params({})
        try:
            base = spec.fn(plain, params)
        except Exception:
            continue  # a key that needs other inputs is not this test's
        if base.exact is None:
            continue
        mv = spec.fn(varying, params)
        assert mv.exact is not None, key
        assert mv.value is not None and abs(mv.value - float(mv.exact)) <= 1e-12, key
        assert spec.fn(const, params).exact == base.exact, key
        checked += 1
    assert checked > (10 if k == 2 else 5), checked


# ---------------------------------------------------------------------------
# the cases end to end, every output format


GAP = base_frame()  # DP gap exactly 1/10


@pytest.mark.parametrize("w", [0.5, 0.3])
def test_constant_fractional_weight_fails_lt_one_tenth_cli(
    tmp_path: Path, w: float, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data.csv"
    GAP.assign(w=w).to_csv(data, index=False)
    pol = write_policy(
        tmp_path, control(threshold="0.1", operator="<", min_samples=1, input__weight="w")
    )
    assert main(["check", str(pol), str(data)]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out and "0.09999999999999998" not in out


def test_long_thresholds_are_written_in_every_output(tmp_path: Path) -> None:
    text = "0.09999999999999999999"
    pol = write_policy(tmp_path, control(threshold=text, operator="<=", min_samples=1))
    data = tmp_path / "data.csv"
    GAP.to_csv(data, index=False)
    res = check(pol, data, deterministic=True)
    (f,) = res.findings
    assert f.status == "fail", f.message  # 1/10 is not <= 0.09999999999999999999
    assert f.threshold_written == text and text in f.message
    for fmt in ("text", "json", "markdown", "html", "junit", "sarif", "github"):
        out = get(fmt)(res, RenderOptions(verbose=True))
        assert text in out, fmt
    for fmt in ("oscal", "oscal-ap"):
        assert text in get(fmt)(res, RenderOptions()), fmt
    doc = json.loads(get("json")(res, RenderOptions()))
    assert doc["findings"][0]["threshold_written"] == text


def test_tiny_threshold_is_positive_and_shown_as_written(tmp_path: Path) -> None:
    pol = write_policy(
        tmp_path,
        control("c1", threshold="1e-400", operator=">=", min_samples=1),
        control("c2", threshold="1e-400", operator="<", min_samples=1),
    )
    same = pd.concat([GAP, GAP.assign(sex="F"), GAP.assign(sex="M")], ignore_index=True)
    data = tmp_path / "data.csv"
    same.to_csv(data, index=False)
    res = check(pol, data, deterministic=True)
    c1, c2 = res.findings
    assert c1.threshold_written == "1e-400" and "1e-400" in c1.message
    v = Fraction(c1.details["exact_value"])
    assert c1.status == ("pass" if v >= Fraction("1e-400") else "fail")
    assert c2.status == ("pass" if v < Fraction("1e-400") else "fail")
    # a gap of exactly 0 fails >= 1e-400 (it is not ">= 0")
    zero = pd.concat([GAP.assign(sex="F"), GAP.assign(sex="M")], ignore_index=True)
    zero.to_csv(data, index=False)
    c1, c2 = check(pol, data, deterministic=True).findings
    assert c1.details["exact_value"] == "0"
    assert (c1.status, c2.status) == ("fail", "pass"), (c1.message, c2.message)


def test_policy_error_names_the_threshold_as_written(tmp_path: Path) -> None:
    from fairpolicy.errors import PolicyError

    pol = write_policy(tmp_path, control(threshold="-1e-400", operator=">=", min_samples=1))
    with pytest.raises(PolicyError, match=r"'>= -1e-400' can never fail"):
        check(pol, GAP, deterministic=True)


def test_threshold_equality_is_exact() -> None:
    from fairpolicy.policy.schema import Threshold

    assert written_threshold(["0.10"], [0.1]) is None  # the double says it: nothing kept
    long = written_threshold(["0.099999999999999999990"], [0.1])
    assert long == written_threshold(["0.09999999999999999999"], [0.1]) == "0.09999999999999999999"
    assert Threshold(value=0.1, text=long) != Threshold(value=0.1)
    assert Threshold(value=0.1, text=long).same(Threshold(value=0.1, text="0.09999999999999999999"))
    assert Threshold(value=0.0, text="1e-400").render() == "1e-400"
    assert written_threshold(["0.8", "1e-400"], [0.8, 0.0]) == "0.8,1e-400"


# ---------------------------------------------------------------------------
# issue item 13: engines agree on the total weight; p-values over numpy's limit


@needs_duckdb
def test_duckdb_total_weight_is_the_embedded_total(tmp_path: Path) -> None:
    """Many duplicate tuples and one large whole weight: the total is far below 2**53, but
    the old estimate (sum of distinct weights × the largest tuple count) was above it."""
    rows = GAP.assign(w=1)
    rows.loc[0, "w"] = 2**50
    df = pd.concat(
        [rows, pd.DataFrame([{"y_true": 0, "y_pred": 0, "sex": "M", "w": 1}] * 100)],
        ignore_index=True,
    )
    path = tmp_path / "data.parquet"
    df.to_parquet(path)
    pol = [
        control(
            threshold="0.5", operator="<", input__weight="w", weight_kind="frequency", min_samples=1
        )
    ]
    a = check(pol, path, engine="embedded", deterministic=True).findings[0]
    b = check(pol, path, engine="duckdb", deterministic=True).findings[0]
    assert a.status == b.status and a.value == b.value and a.status != "error", b.message
    # over the limit on both, with the same total in the message
    df.loc[1, "w"] = 2**53
    df.to_parquet(path)
    from fairpolicy.errors import DataError

    msgs = []
    for engine in ("embedded", "duckdb"):
        with pytest.raises(DataError, match="2\\*\\*53") as exc:
            check(pol, path, engine=engine, deterministic=True)
        msgs.append(str(exc.value).split("holds ")[1].split(";")[0])
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize(
    "engine",
    [
        "embedded",
        pytest.param("duckdb", marks=needs_duckdb),
        pytest.param("spark", marks=needs_spark),
    ],
)
def test_p_value_over_a_billion_rows_gives_the_reason(
    engine: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """2·10^9 rows as frequency weights: numpy's hypergeometric draw cannot deal them; the
    p-value is absent with the reason (a p-value never gates), never an internal error."""
    if engine == "spark":
        request.getfixturevalue("spark_session")
    path = tmp_path / "data.parquet"
    GAP.assign(w=10**8).to_parquet(path)
    pol = [
        control(
            threshold="0.2",
            operator="<",
            input__weight="w",
            weight_kind="frequency",
            min_samples=1,
            p_value=50,
        )
    ]
    (f,) = check(pol, path, engine=engine, deterministic=True).findings
    assert f.status == "pass", f.message
    assert f.p_value is not None and f.p_value.p_value is None
    assert f.p_value.reason is not None and "numpy's limit" in f.p_value.reason


def test_p_value_over_a_billion_rows_cli(tmp_path: Path) -> None:
    import subprocess
    import sys

    data = tmp_path / "data.csv"
    GAP.assign(w=10**8).to_csv(data, index=False)
    pol = write_policy(
        tmp_path,
        control(
            threshold="0.2",
            operator="<",
            min_samples=1,
            input__weight="w",
            weight_kind="frequency",
            p_value=50,
        ),
    )
    run = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(pol), str(data), "-v"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert "no p-value" in run.stdout and "numpy's limit" in run.stdout


# ---------------------------------------------------------------------------
# the exact sums themselves


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 3),
            st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False),
            st.integers(1, 2**40),
        ),
        min_size=0,
        max_size=30,
    )
)
def test_exact_bincount_is_the_fraction_sum(entries: list[tuple[int, float, int]]) -> None:
    from fairpolicy.stats.exactsum import EXACT_SCALE, exact_bincount, exact_total

    idx = np.array([e[0] for e in entries], dtype=np.int64)
    w = np.array([e[1] for e in entries], dtype=np.float64)
    r = np.array([e[2] for e in entries], dtype=np.int64)
    got = exact_bincount(idx, w, r, 4)
    for b in range(4):
        want = sum((Fraction(x) * n for i, x, n in entries if i == b), Fraction(0))
        assert Fraction(int(got[b]), 2**EXACT_SCALE) == want
    assert Fraction(exact_total(w, r), 2**EXACT_SCALE) == sum(
        (Fraction(x) * n for _, x, n in entries), Fraction(0)
    )


def test_ten_times_point_three_is_exactly_three_tenths_of_ten() -> None:
    from fairpolicy.stats.exactsum import EXACT_SCALE, exact_total

    w = np.full(10, 0.3)
    assert float(w.sum()) != 3 * 0.3 * 10 / 3  # the float sum rounds
    assert Fraction(exact_total(w), 2**EXACT_SCALE) == 10 * Fraction(0.3)


# ---------------------------------------------------------------------------
# data checks (column counts, group sizes) under fractional weights: exact too


def _data_control(cid: str, key: str, t: str, op: str, **props: str) -> dict[str, Any]:
    base = {"metric_key": key, "threshold": t, "operator": op, "input.weight": "w", **props}
    return {"control-id": cid, "props": [{"name": k, "value": v} for k, v in base.items()]}


@pytest.mark.parametrize("w", [0.1, 0.3, 0.7])
@pytest.mark.parametrize(
    "engine,form",
    [
        ("embedded", "dataframe"),
        ("embedded", "csv"),
        pytest.param("duckdb", "parquet", marks=needs_duckdb),
    ],
)
def test_data_checks_are_exact_under_weights(
    w: float, engine: str, form: str, tmp_path: Path
) -> None:
    df = pd.DataFrame(
        [{"a": None if i == 0 else 1.0, "b": 1.0, "w": w, "sex": "FM"[i % 2]} for i in range(10)]
    )
    fields = {"input.fields": "a,b"}
    columns = {"input.columns": "a,b"}
    dim = {"input.dimension": "sex"}
    pol = [
        _data_control("prov-ge", "provenance_completeness", "0.9", ">=", **fields),
        _data_control("prov-gt", "provenance_completeness", "0.9", ">", **fields),
        _data_control("comp-ge", "data_completeness", "0.95", ">=", **columns),
        _data_control("comp-gt", "data_completeness", "0.95", ">", **columns),
        _data_control("share-ge", "min_group_share", "0.5", ">=", **dim),
        _data_control("share-gt", "min_group_share", "0.5", ">", **dim),
    ]
    res = check(pol, _source(df, form, tmp_path), engine=engine, deterministic=True)
    got = {f.control_id: (f.status, f.details.get("exact_value")) for f in res.findings}
    assert got == {
        "prov-ge": ("pass", "9/10"),
        "prov-gt": ("fail", "9/10"),
        "comp-ge": ("pass", "19/20"),
        "comp-gt": ("fail", "19/20"),
        "share-ge": ("pass", "1/2"),
        "share-gt": ("fail", "1/2"),
    }


@pytest.mark.parametrize("rows", [None, 2**25])
@pytest.mark.parametrize("seed", range(3))
def test_exact_bincount_vectorised_path(rows: int | None, seed: int) -> None:
    """Many entries with row counts below 2**26 take the bincount path (halves of the
    mantissa summed in float64, exact below 2**53): still the Fraction sum."""
    from fairpolicy.stats.exactsum import EXACT_SCALE, exact_bincount

    rng = np.random.default_rng(seed)
    n = 3000
    idx = rng.integers(0, 5, n)
    w = rng.choice([0.1, 0.3, 1e-200, 3e150, 7.25, 1.0 / 3.0], n) * rng.uniform(0.5, 2.0, n)
    r = None if rows is None else rng.integers(1, rows, n)
    got = exact_bincount(idx, w, r, 5)
    for b in range(5):
        want = sum(
            (
                Fraction(float(w[i])) * (1 if r is None else int(r[i]))
                for i in range(n)
                if idx[i] == b
            ),
            Fraction(0),
        )
        assert Fraction(int(got[b]), 2**EXACT_SCALE) == want
