"""Exact decisions at the threshold (issue 19, item 6).

Count-based metrics are ratios of integers, so the verdict at the threshold is decided
exactly: 30/100 − 20/100 is 1/10, which is not ``< 0.1``, whatever the double
subtraction gives. The oracles below compute each value with :class:`fractions.Fraction`
straight from the count table, independently of the metric code, and compare verdicts
and printed values of real runs.
"""

from __future__ import annotations

import io
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from fairpolicy.decide import satisfies
from fairpolicy.exact import (
    ExactFloat,
    compare,
    decimal_fraction,
    shown,
    threshold_text,
    with_exact,
)
from fairpolicy.formatters import RenderOptions, get
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Operator, Threshold
from fairpolicy.runner import check
from fairpolicy.stats import GroupStats
from tests.data.test_engines import ENGINES
from tests.data.test_engines import spark_session as spark_session  # the fixture
from tests.helpers import control, write_csv, write_policy

OPS = ["<", "<=", ">", ">=", "==", "!="]

# ---------------------------------------------------------------------------
# the module itself


def test_decimal_fraction_is_the_written_decimal() -> None:
    assert decimal_fraction(0.1) == Fraction(1, 10)
    assert decimal_fraction(0.3) == Fraction(3, 10)
    assert decimal_fraction(1e-7) == Fraction(1, 10**7)
    assert Fraction(0.1) != Fraction(1, 10)  # the double is not the decimal


def test_issue_cases_in_the_abstract() -> None:
    v = ExactFloat(Fraction(30, 100) - Fraction(20, 100))
    assert 0.3 - 0.2 < 0.1  # the float bug the issue names
    assert not compare(v, "<", 0.1)
    assert compare(v, "<=", 0.1)
    assert compare(ExactFloat(Fraction(7, 10) - Fraction(4, 10)), "==", 0.3)
    assert compare(ExactFloat(Fraction(1, 10)), "between", 0.1, 0.1)
    # a plain float is compared as a float (scores, regression)
    assert compare(0.3 - 0.2, "<", 0.1)


def _written_agrees(text: str, value: float, op: str, low: float, high: float | None) -> bool:
    """Whether the written number satisfies the threshold exactly when the value does."""
    truth = compare(value, op, low, high)  # type: ignore[arg-type]
    if isinstance(value, ExactFloat):
        w = Fraction(text)
        lo, hi = decimal_fraction(low), decimal_fraction(low if high is None else high)
        written = {
            "<": w < lo,
            "<=": w <= lo,
            ">": w > lo,
            ">=": w >= lo,
            "==": w == lo,
            "!=": w != lo,
            "between": lo <= w <= hi,
        }[op]
    else:
        written = compare(float(text), op, low, high)  # type: ignore[arg-type]
    return written == truth


@st.composite
def near_thresholds(draw: st.DrawFn) -> tuple[Fraction, str]:
    """An exact rational and a decimal threshold at or within a hair of it."""
    den = draw(st.integers(1, 10 ** draw(st.sampled_from([2, 4, 9, 19]))))
    num = draw(st.integers(0, den))
    x = Fraction(num, den) - Fraction(draw(st.integers(0, den)), den) * draw(
        st.sampled_from([0, 1])
    )
    digits = draw(st.integers(1, 8))
    t = round(x, digits) + Fraction(draw(st.integers(-1, 1)), 10**digits)
    text = f"{float(t):.{digits}f}"
    return x, text


@settings(max_examples=400, deadline=None)
@given(near_thresholds(), st.sampled_from([*OPS, "between"]), st.sampled_from(["f", "g"]))
def test_shown_never_contradicts_the_verdict(
    case: tuple[Fraction, str], op: str, style: str
) -> None:
    x, t_text = case
    t = float(t_text)
    for value in (ExactFloat(x), float(x)):
        hi = t if op != "between" else t + 0.5
        text = shown(value, op, t, hi if op == "between" else None, style=style)  # type: ignore[arg-type]
        assert _written_agrees(text, value, op, t, hi if op == "between" else None), (
            value,
            op,
            t,
            text,
        )


def test_threshold_text_keeps_every_digit() -> None:
    assert threshold_text(0.1) == "0.1"
    assert threshold_text(0.1234567) == "0.1234567"
    assert threshold_text(100000.0) == "100000"


# ---------------------------------------------------------------------------
# end to end: the issue's three cases on every input type and engine


def _table(groups: dict[str, tuple[int, int, int, int]]) -> pd.DataFrame:
    """Rows from per-group (tp, fp, fn, tn) counts."""
    rows: list[tuple[int, int, str]] = []
    for g, (tp, fp, fn, tn) in groups.items():
        rows += [(1, 1, g)] * tp + [(0, 1, g)] * fp + [(1, 0, g)] * fn + [(0, 0, g)] * tn
    return pd.DataFrame(rows, columns=["y_true", "y_pred", "sex"])


#: selection rates 30/100 and 20/100 (gap exactly 0.1), and 7/10 − 4/10 (exactly 0.3)
GAP_01 = _table({"F": (15, 15, 35, 35), "M": (10, 10, 40, 40)})
GAP_03 = _table({"F": (35, 35, 15, 15), "M": (20, 20, 30, 30)})

#: (data, operator, threshold, expected status)
ISSUE_CASES = [
    (GAP_01, "<", "0.1", "fail"),
    (GAP_01, "<=", "0.1", "pass"),
    (GAP_01, "between", "0.1,0.1", "pass"),
    (GAP_01, "==", "0.1", "pass"),
    (GAP_03, "==", "0.3", "pass"),
    (GAP_03, "<", "0.3", "fail"),
    (GAP_03, ">=", "0.3", "pass"),
]


def _policy(tmp: Path, op: str, threshold: str) -> Path:
    return write_policy(
        tmp,
        control(threshold=threshold, operator=op, min_samples=1),
    )


@pytest.mark.parametrize("kind", ["csv", "parquet", "dataframe"])
@pytest.mark.parametrize("case", range(len(ISSUE_CASES)))
def test_issue_cases_embedded(tmp_path: Path, kind: str, case: int) -> None:
    data, op, threshold, expected = ISSUE_CASES[case]
    pol = _policy(tmp_path, op, threshold)
    source: Any = data
    if kind == "csv":
        source = write_csv(tmp_path, data.to_csv(index=False))
    elif kind == "parquet":
        source = tmp_path / "data.parquet"
        data.to_parquet(source)
    res = check(pol, source, engine="embedded", deterministic=True)
    (f,) = res.findings
    assert f.status == expected, f.message
    _assert_outputs_agree(res)


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "spark":
        request.getfixturevalue("spark_session")
    return name


@pytest.mark.parametrize("case", range(len(ISSUE_CASES)))
def test_issue_cases_engines(tmp_path: Path, engine: str, case: int) -> None:
    data, op, threshold, expected = ISSUE_CASES[case]
    pol = _policy(tmp_path, op, threshold)
    path = tmp_path / "data.parquet"
    data.to_parquet(path)
    res = check(pol, path, engine=engine, deterministic=True)
    (f,) = res.findings
    assert f.status == expected, f.message
    _assert_outputs_agree(res)


def test_issue_case_cli_exit_code_and_table(tmp_path: Path) -> None:
    pol = _policy(tmp_path, "<", "0.1")
    data = write_csv(tmp_path, GAP_01.to_csv(index=False))
    out = io.StringIO()
    assert main(["check", str(pol), str(data)], stdout=out) == 1
    row = next(line for line in out.getvalue().splitlines() if line.startswith("c1"))
    assert "0.1000" in row and "FAIL" in row, row


def _assert_outputs_agree(res: Any) -> None:
    """JSON has no NaN and the exact value; the value printed in the message is on the
    verdict's side of the threshold."""
    (f,) = res.findings
    doc = json.loads(res.model_dump_json())
    assert doc["findings"][0]["details"].get("exact_value") is not None
    if f.status in ("pass", "fail"):
        word = "satisfies" if f.status == "pass" else "violates"
        assert word in f.message, f.message
        value_text = f.message.split(" = ", 1)[1].split(" ", 1)[0]
        exact = Fraction(f.details["exact_value"])
        _check_written(value_text, exact, f, f.status == "pass")


def _check_written(text: str, exact: Fraction, f: Any, passed: bool) -> None:
    t = f.threshold
    lo, hi = (t[0], t[1]) if isinstance(t, list) else (t, None)
    assert compare(ExactFloat(exact), f.operator, lo, hi) == passed
    assert _written_agrees(text, ExactFloat(exact), f.operator, lo, hi), (text, f.message)


# ---------------------------------------------------------------------------
# the property: random count tables near thresholds, every count metric


def _rates(c: tuple[int, int, int, int]) -> dict[str, Fraction | None]:
    tp, fp, fn, tn = c
    n = tp + fp + fn + tn

    def r(a: int, b: int) -> Fraction | None:
        return Fraction(a, b) if b else None

    return {
        "sr": r(tp + fp, n),
        "tpr": r(tp, tp + fn),
        "fpr": r(fp, fp + tn),
        "ppv": r(tp, tp + fp),
        "acc": r(tp + tn, n),
        "tnr": r(tn, fp + tn),
        "npv": r(tn, fn + tn),
    }


def _gap(values: list[Fraction | None]) -> Fraction | None:
    v = [x for x in values if x is not None]
    return max(v) - min(v) if len(v) >= 2 else None


def _ratio(values: list[Fraction | None]) -> Fraction | None:
    v = [x for x in values if x is not None]
    if len(v) < 2 or max(v) == 0:
        return None
    return min(v) / max(v)


def oracle(metric: str, counts: list[tuple[int, int, int, int]]) -> Fraction | None:
    """The exact value of ``metric`` computed from the counts with Fractions."""
    rates = [_rates(c) for c in counts]

    def col(k: str) -> list[Fraction | None]:
        return [r[k] for r in rates]

    simple = {
        "demographic_parity_diff": ("sr", _gap),
        "demographic_parity_ratio": ("sr", _ratio),
        "equal_opportunity_diff": ("tpr", _gap),
        "fpr_diff": ("fpr", _gap),
        "predictive_parity_diff": ("ppv", _gap),
        "accuracy_diff": ("acc", _gap),
        "tnr_diff": ("tnr", _gap),
        "npv_diff": ("npv", _gap),
    }
    if metric in simple:
        k, fn = simple[metric]
        return fn(col(k))
    a, b = _gap(col("tpr")), _gap(col("fpr"))
    if metric == "equalized_odds_diff":
        return None if a is None or b is None else max(a, b)
    if metric == "average_odds_diff":
        return None if a is None or b is None else (a + b) / 2
    if metric == "equalized_odds_sum":
        return None if a is None or b is None else a + b
    assert metric == "equalized_odds_ratio"
    parts = []
    for k in ("tpr", "fpr"):
        v = [x for x in col(k) if x is not None]
        if len(v) < 2:
            return None
        if max(v) != 0:  # a 0/0 ratio (every rate 0) is left out
            parts.append(min(v) / max(v))
    return min(parts) if parts else None


def oracle_bounds(
    metric: str, counts: list[tuple[int, int, int, int]]
) -> tuple[Fraction, Fraction] | None:
    """The range an odds metric's value lies in when exactly one of its parts is undefined
    (the undefined gap anywhere in [0, 1], the undefined ratio anywhere in [0, 1])."""
    rates = [_rates(c) for c in counts]
    col = {k: [r[k] for r in rates] for k in ("tpr", "fpr")}
    if metric in ("equalized_odds_diff", "average_odds_diff", "equalized_odds_sum"):
        a, b = _gap(col["tpr"]), _gap(col["fpr"])
        if (a is None) == (b is None):
            return None
        known = a if a is not None else b
        assert known is not None
        if metric == "equalized_odds_diff":
            return known, Fraction(1)
        if metric == "equalized_odds_sum":
            return known, known + 1
        return known / 2, (known + 1) / 2
    if metric == "equalized_odds_ratio":
        defined = {k: [x for x in v if x is not None] for k, v in col.items()}
        short = [k for k, v in defined.items() if len(v) < 2]
        if len(short) != 1:
            return None
        (other,) = [v for k, v in defined.items() if k not in short]
        if max(other) == 0:  # 0/0: no known part
            return None
        return Fraction(0), min(other) / max(other)
    return None


def _range_witnesses(rng: tuple[Fraction, Fraction], op: str, lo: Any, hi: Any) -> list[Fraction]:
    """Points of ``rng`` such that some value of ``rng`` satisfies the control iff one of
    them does: the ends, and the threshold(s) themselves where they fall inside."""
    a, b = rng
    points = [a, b]
    for t in (lo, hi):
        if t is not None:
            x = Fraction(str(t))
            if a <= x <= b:
                points.append(x)
    # a point just inside each end (for strict operators at an end that equals the threshold)
    eps = Fraction(1, 10**12)
    if b > a:
        points += [a + eps, b - eps]
    return points


METRICS = [
    "demographic_parity_diff",
    "demographic_parity_ratio",
    "equal_opportunity_diff",
    "fpr_diff",
    "predictive_parity_diff",
    "accuracy_diff",
    "tnr_diff",
    "npv_diff",
    "equalized_odds_diff",
    "average_odds_diff",
    "equalized_odds_ratio",
    "equalized_odds_sum",
]

cell = st.integers(0, 12)
group_counts = st.tuples(cell, cell, cell, cell).filter(lambda c: sum(c) > 0)


@st.composite
def count_cases(draw: st.DrawFn) -> tuple[str, list[tuple[int, int, int, int]], str, str]:
    metric = draw(st.sampled_from(METRICS))
    counts = draw(st.lists(group_counts, min_size=2, max_size=3))
    exact = oracle(metric, counts)
    op = draw(st.sampled_from([*OPS, "between"]))
    if exact is None:
        return metric, counts, op, "0.1" if op != "between" else "0.1,0.2"
    digits = draw(st.integers(1, 6))
    nudge = Fraction(draw(st.integers(-1, 1)), 10**digits)
    t = round(exact, digits) + nudge
    if draw(st.booleans()):  # land exactly on the value when it is a short decimal
        t = round(exact, 12) if round(exact, 12) == exact else t
    text = format(float(t), f".{max(digits, 12)}f").rstrip("0").rstrip(".") or "0"
    if op == "between":
        other = draw(st.sampled_from(["-1", "0", "1", "2"]))
        lo, hi = sorted([text, other], key=float)
        text = f"{lo},{hi}"
    return metric, counts, op, text


def _checked(pol: Any, data: Any, engine: str) -> Any:
    """``check``, rejecting a generated threshold the metric's range can never fail or never
    pass (the loader refuses those: they are not thresholds at the edge)."""
    from fairpolicy.errors import PolicyError

    try:
        return check(pol, data, engine=engine, deterministic=True)
    except PolicyError as exc:
        assume("can never" not in str(exc))
        raise


def _assert_undefined_verdict(
    f: Any, metric: str, counts: list[tuple[int, int, int, int]], op: str
) -> None:
    """No exact value: one part of an odds metric undefined, so the value lies in a known
    range, and a control that range violates throughout is a certain fail (on every
    engine); otherwise inconclusive."""
    rng = oracle_bounds(metric, counts)
    lo, hi = (f.threshold[0], f.threshold[1]) if op == "between" else (f.threshold, None)
    certain = rng is not None and not any(
        compare(ExactFloat(x), op, lo, hi)  # type: ignore[arg-type]
        for x in _range_witnesses(rng, op, lo, hi)
    )
    assert f.status == ("fail" if certain else "inconclusive"), (f.message, counts, rng)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(count_cases())
def test_verdict_is_the_exact_rational_verdict(
    case: tuple[str, list[tuple[int, int, int, int]], str, str],
) -> None:
    metric, counts, op, threshold = case
    data = _table({f"g{i}": c for i, c in enumerate(counts)})
    pol = [control(metric=metric, threshold=threshold, operator=op, min_samples=1)]
    res = _checked(pol, data, engine="embedded")
    (f,) = res.findings
    exact = oracle(metric, counts)
    if exact is None:
        _assert_undefined_verdict(f, metric, counts, op)
        return
    assert f.details["exact_value"] == str(exact)
    assert f.value == float(exact)
    lo, hi = (f.threshold[0], f.threshold[1]) if op == "between" else (f.threshold, None)
    truth = compare(ExactFloat(exact), op, lo, hi)  # type: ignore[arg-type]
    assert f.status == ("pass" if truth else "fail"), (f.message, counts, threshold)
    # the value the table, the message and the markdown/html print is on the right side
    value_text = f.message.split(" = ", 1)[1].split(" ", 1)[0]
    assert _written_agrees(value_text, ExactFloat(exact), op, lo, hi), f.message
    table = get("text")(res, RenderOptions())
    row = next(line for line in table.splitlines() if line.startswith("c1")).split()
    assert _written_agrees(row[2], ExactFloat(exact), op, lo, hi), row
    md = get("markdown")(res, RenderOptions())
    cells = next(line for line in md.splitlines() if line.startswith("| c1")).split("|")
    assert _written_agrees(cells[3].strip(), ExactFloat(exact), op, lo, hi), cells


def test_engines_listed() -> None:
    assert {p.values[0] for p in ENGINES} == {"duckdb", "spark"}


# ---------------------------------------------------------------------------
# the same property with counts too large for a data file: the metric and the decision


def _stats(counts: list[tuple[int, int, int, int]]) -> GroupStats:
    arr = np.zeros((len(counts), 2, 2), dtype=np.int64)
    for i, (tp, fp, fn, tn) in enumerate(counts):
        arr[i] = [[tn, fp], [fn, tp]]
    names = tuple(f"g{i}" for i in range(len(counts)))
    return GroupStats(("sex",), names, ("0", "1"), arr, positive=1)


big_cell = st.integers(0, 2**40)
big_counts = st.tuples(big_cell, big_cell, big_cell, big_cell).filter(lambda c: sum(c) > 0)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(METRICS),
    st.lists(big_counts, min_size=2, max_size=3),
    st.sampled_from(OPS),
    st.booleans(),
)
def test_decision_exact_where_floats_cannot_tell(
    metric: str, counts: list[tuple[int, int, int, int]], op: str, on_float: bool
) -> None:
    """The threshold is the shortest decimal of the value's double: a float comparison
    sees equality, the exact one does not (unless the value is that decimal)."""
    exact = oracle(metric, counts)
    mv = REGISTRY[metric].fn(_stats(counts), {})
    if exact is None:
        assert mv.value is None
        return
    assert mv.exact == exact and mv.value is not None
    # the metric's float is the float computation (the bootstrap's); it rounds the exact
    assert abs(mv.value - float(exact)) <= 4 * math.ulp(1.0)  # rates are in [0, 1]
    t = float(exact) if on_float else float(round(exact, 3))
    truth = compare(ExactFloat(exact), op, t)  # type: ignore[arg-type]
    threshold = Threshold(value=t)
    value = with_exact(mv.value, mv.exact)
    assert value is not None
    assert satisfies(value, Operator(op), threshold) == truth
    oracle_truth = {
        "<": exact < decimal_fraction(t),
        "<=": exact <= decimal_fraction(t),
        ">": exact > decimal_fraction(t),
        ">=": exact >= decimal_fraction(t),
        "==": exact == decimal_fraction(t),
        "!=": exact != decimal_fraction(t),
    }[op]
    assert truth == oracle_truth
    for style in ("f", "g"):
        text = shown(value, op, t, style=style)  # type: ignore[arg-type]
        assert _written_agrees(text, value, op, t, None), (text, exact, t)


def test_min_share_is_decided_exactly() -> None:
    """1/(10^17 + 1) is below 1e-17, though both are the same double."""
    from fairpolicy.evaluation import measure
    from fairpolicy.policy.schema import Control

    n = [1, 10**17]
    counts = np.zeros((2, 2, 2), dtype=np.int64)
    counts[0, 1, 1] = n[0]
    counts[1, 0, 0] = n[1]
    stats = GroupStats(("sex",), ("F", "M"), ("0", "1"), counts, positive=1)
    c = Control(
        control_id="c1",
        metric_key="demographic_parity_diff",
        metric_key_as_written="demographic_parity_diff",
        threshold=Threshold(value=0.1),
        operator=Operator.LT,
        inputs={"target": "y", "prediction": "p", "dimension": "sex"},
        params={"min_share": 1e-17},
        min_samples=1,
    )
    share = np.array(n) / (10**17 + 1)  # what the float code computed
    assert not share[0] < 1e-17  # so it kept F
    mv, keep = measure(stats, c, REGISTRY["demographic_parity_diff"])
    assert not keep[0] and keep[1]
    assert any(e.group == "F" and "min_share" in e.reason for e in mv.excluded)


COUNT_SPECS = sorted(
    k
    for k, s in REGISTRY.items()
    if s.kind == "classification" and not s.needs_scores and s.secondary_role is None
)


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(COUNT_SPECS),
    st.integers(2, 3),
    st.integers(2, 4),
    st.data(),
)
def test_every_exact_value_is_the_metric_value(
    key: str, k: int, g: int, data: st.DataObject
) -> None:
    """Wherever a count metric offers an exact rational, it is the value the float code
    computes (to rounding): the exact path and the float path are the same formula."""
    spec = REGISTRY[key]
    if k > 2 and "multiclass" not in spec.tasks:
        k = 2
    if k == 2 and "binary" not in spec.tasks:
        k = 3
    cells = data.draw(
        st.lists(st.integers(0, 30), min_size=g * k * k, max_size=g * k * k), label="counts"
    )
    counts = np.array(cells, dtype=np.int64).reshape(g, k, k)
    counts[:, 0, 0] += 1  # every group of real data has a row
    names = tuple(f"g{i}" for i in range(g))
    stats = GroupStats(
        ("sex",),
        names,
        tuple(str(c) for c in range(k)),
        counts,
        positive=1 if k == 2 else None,
        group_keys=tuple((n,) for n in names),
    )
    params = spec.resolve_params({})
    try:
        mv = spec.fn(stats, params)
    except Exception as exc:  # a metric that refuses this table says so with our errors
        from fairpolicy.errors import FairpolicyError

        assert isinstance(exc, FairpolicyError | ValueError), exc
        return
    if mv.exact is None:
        return
    assert mv.value is not None
    assert abs(mv.value - float(mv.exact)) <= 1e-12, (key, mv.value, mv.exact)


# ---------------------------------------------------------------------------
# sub-rates of a combined metric (issue 12, class 6)


def test_equalized_odds_ratio_uses_the_defined_ratio_when_every_fpr_is_zero() -> None:
    """No group has a false positive: FPR ratio 0/0; the TPR ratio (0 here) decides."""
    stats = _stats([(0, 0, 10, 10), (5, 0, 5, 10)])  # TPR 0 and 1/2, FPR 0 and 0
    mv = REGISTRY["equalized_odds_ratio"].fn(stats, {})
    assert mv.value == 0.0 and mv.exact == 0 and mv.reason is None
    assert mv.details["driven_by"] == "tpr" and "fpr_ratio_note" in mv.details
    stats = _stats([(2, 0, 8, 10), (5, 0, 5, 10)])  # TPR 1/5 and 1/2
    mv = REGISTRY["equalized_odds_ratio"].fn(stats, {})
    assert mv.exact == Fraction(2, 5)
    # both parts 0/0: undefined
    stats = _stats([(0, 0, 10, 10), (0, 0, 5, 10)])
    assert REGISTRY["equalized_odds_ratio"].fn(stats, {}).value is None


def test_equalized_odds_ratio_zero_fpr_fails_end_to_end(tmp_path: Path) -> None:
    data = _table({"F": (0, 0, 30, 30), "M": (15, 0, 15, 30)})
    pol = [control(metric="equalized_odds_ratio", threshold="0.8", operator=">=")]
    res = check(pol, data, engine="embedded", deterministic=True, inconclusive="pass")
    (f,) = res.findings
    assert f.status == "fail" and f.value == 0.0, f.message


def test_undefined_odds_part_names_the_known_part() -> None:
    """One group has no actual negatives: the FPR gap is undefined, the TPR gap known."""
    stats = _stats([(5, 0, 5, 0), (9, 1, 1, 9)])
    mv = REGISTRY["equalized_odds_diff"].fn(stats, {})
    assert mv.value is None
    assert mv.reason is not None and "the TPR part alone is 0.4" in mv.reason


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(count_cases())
def test_verdict_is_the_exact_rational_verdict_on_duckdb(
    tmp_path: Path, case: tuple[str, list[tuple[int, int, int, int]], str, str]
) -> None:
    """The same property on DuckDB (weighted integer counts from a GROUP BY)."""
    pytest.importorskip("duckdb")
    metric, counts, op, threshold = case
    data = _table({f"g{i}": c for i, c in enumerate(counts)})
    path = tmp_path / "data.parquet"
    data.to_parquet(path)
    pol = [control(metric=metric, threshold=threshold, operator=op, min_samples=1)]
    (f,) = _checked(pol, path, engine="duckdb").findings
    exact = oracle(metric, counts)
    if exact is None:
        _assert_undefined_verdict(f, metric, counts, op)
        return
    assert f.details["exact_value"] == str(exact)
    lo, hi = (f.threshold[0], f.threshold[1]) if op == "between" else (f.threshold, None)
    truth = compare(ExactFloat(exact), op, lo, hi)  # type: ignore[arg-type]
    assert f.status == ("pass" if truth else "fail"), (f.message, counts, threshold)


def test_odds_metric_with_one_part_undefined_fails_when_its_range_violates() -> None:
    """Found by hypothesis: no group has actual positives (the TPR gap is undefined), but the
    FPR gap is 1, so equalized odds is at least 1 whatever the TPR gap: a certain fail."""
    counts = [(0, 0, 0, 1), (0, 1, 0, 0)]
    assert oracle("equalized_odds_diff", counts) is None
    assert oracle_bounds("equalized_odds_diff", counts) == (1, 1)
    data = _table({f"g{i}": c for i, c in enumerate(counts)})
    pol = [control(metric="equalized_odds_diff", threshold="0.1", operator="<", min_samples=1)]
    (f,) = _checked(pol, data, engine="embedded").findings
    assert f.status == "fail", f.message
    pol = [control(metric="average_odds_diff", threshold="0.9", operator="<", min_samples=1)]
    (f,) = _checked(pol, data, engine="embedded").findings
    assert f.status == "inconclusive", f.message  # [0.5, 1] straddles 0.9
