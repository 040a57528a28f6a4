"""The permutation test's null is the metric's null (issue 19, item 3).

Every classification metric declares where group labels are permuted
(``MetricSpec.null_stratum``): over all rows, within each actual class (conditional rates
such as TPR/FPR, AUC) or within each predicted class (PPV/FDR/FOR/NPV), or not at all (a
value pooled over the compared rows). The registry-wide tests below check each
declaration against the metric function itself, so a metric declared with the wrong
stratum (or a new one that forgets to declare it) fails here:

- a metric declared ``actual`` depends on a group's rows of class t only through their
  conditional distribution: repeating every row of (group g, actual class t) leaves its
  value unchanged; likewise ``predicted`` for (group g, predicted class p);
- a metric declared ``rows`` is not invariant that way (else it should declare the
  narrower stratum, whose null is its own);
- a metric declared None gives the same value whatever the group labels (pooled), and
  every other metric changes when the labels are shuffled.

Then the stratified permutation is checked to keep what it must keep, and its type-I
error is pinned under unequal base rates (``benchmarks/permutation_null.py`` runs the
larger grid).
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from fairpolicy.metrics.base import NULL_HYPOTHESES, MetricSpec
from fairpolicy.metrics.docs import show_metric
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats, build_score_stats, confusion_counts
from fairpolicy.stats import permutation as pm
from fairpolicy.stats import resample as rs
from tests.helpers import control, write_policy
from tests.stats.test_bootstrap import Rows, to_stats

CLASSIFICATION = sorted(
    k
    for k, s in REGISTRY.items()
    if s.kind == "classification" and s.secondary_role is None  # samd: no p-value at all
)


def _param_sets(spec: MetricSpec) -> list[dict[str, Any]]:
    """Every combination of the metric's choice parameters (the stratum may depend on one)."""
    combos: list[dict[str, Any]] = [{}]
    for p in spec.params:
        if p.choices:
            combos = [{**c, p.name: ch} for c in combos for ch in p.choices]
    if spec.key == "disparity_ratio":  # "majority" depends on group sizes; min does not
        combos = [{**c, "reference_group": "min"} for c in combos]
    return combos


CASES = [(k, p) for k in CLASSIFICATION for p in _param_sets(REGISTRY[k])]


def _rows(seed: int, k: int = 2, n: int = 600) -> Rows:
    """Three groups whose base rates, predictions and scores all differ."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    if k == 2:
        t = (rng.random(n) < 0.3 + 0.15 * g).astype(np.int64)
        p = (rng.random(n) < 0.2 + 0.4 * t + 0.05 * g).astype(np.int64)
        s = np.clip(np.round(0.3 * t + 0.05 * g + rng.normal(0.35, 0.2, n), 2), 0, 1)
        return {"g": g, "t": t, "p": p, "s": s}
    t = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), t] += 1.0 + 0.4 * g
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    p = np.where(rng.random(n) < 0.2, rng.integers(0, k, n), prob.argmax(axis=1))
    return {"g": g, "t": t, "p": p, "s": prob}


def _stats(spec: MetricSpec, rows: Rows, k: int) -> GroupStats:
    return to_stats(rows, k, (1 if k == 2 else k) if spec.needs_scores else 0)


def _repeat(rows: Rows, g: int, role: str, c: int, times: int = 3) -> Rows:
    """The rows with every row of (group g, ``role`` class c) present ``times`` times."""
    hit = np.flatnonzero((rows["g"] == g) & (rows[role] == c))
    idx = np.concatenate([np.arange(len(rows["g"])), *([hit] * (times - 1))])
    return {key: v[idx] for key, v in rows.items()}


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _k(spec: MetricSpec) -> int:
    return 2 if "binary" in spec.tasks else 3


def _invariant(spec: MetricSpec, params: dict[str, Any], role: str, seeds: range) -> bool:
    for seed in seeds:
        rows = _rows(seed, _k(spec))
        base = spec.fn(_stats(spec, rows, _k(spec)), params).value
        assert base is not None, f"{spec.key}: undefined on the test data"
        for g, c in itertools.product(range(3), range(_k(spec))):
            scaled = spec.fn(_stats(spec, _repeat(rows, g, role, c), _k(spec)), params).value
            if not _same(base, scaled):
                return False
    return True


@pytest.mark.parametrize(("key", "params"), CASES, ids=[f"{k}{p or ''}" for k, p in CASES])
def test_declared_stratum_matches_the_metric(key: str, params: dict[str, Any]) -> None:
    spec = REGISTRY[key]
    stratum = spec.stratum(params)
    actual = _invariant(spec, params, "t", range(2))
    predicted = _invariant(spec, params, "p", range(2))
    if stratum == "actual":
        assert actual, f"{key}{params}: declared 'actual' but depends on the class mix"
    elif stratum == "predicted":
        assert predicted, f"{key}{params}: declared 'predicted' but depends on the prediction mix"
    elif stratum == "rows":
        assert not actual, f"{key}{params}: a conditional rate given the actual class: 'actual'"
        assert not predicted, f"{key}{params}: a rate given the predicted class: 'predicted'"
    # pooled ⇔ no test: a permutation of the group labels changes every other value
    rng = np.random.default_rng(3)
    rows = _rows(0, _k(spec))
    base = spec.fn(_stats(spec, rows, _k(spec)), params).value
    moved = False
    for _ in range(5):
        shuffled = {**rows, "g": rng.permutation(rows["g"])}
        moved |= not _same(base, spec.fn(_stats(spec, shuffled, _k(spec)), params).value)
    assert moved == (stratum is not None), f"{key}{params}: pooled={not moved}, {stratum=}"


def test_every_stratum_has_a_null_hypothesis_shown_by_metrics_show() -> None:
    for key in CLASSIFICATION:
        spec = REGISTRY[key]
        text = show_metric(key)
        for params in _param_sets(spec):
            assert spec.null_hypothesis(params) in NULL_HYPOTHESES.values()
        assert "permutation null" in text, key
        if not isinstance(spec.null_stratum, tuple):
            assert spec.null_hypothesis({}) in text.replace("\n  ", " "), key


# ---------------------------------------------------------------------------
# what a stratified permutation keeps


@st.composite
def _count_tables(draw: st.DrawFn) -> GroupStats:
    groups = draw(st.integers(2, 4))
    k = draw(st.integers(2, 3))
    flat = draw(st.lists(st.integers(0, 12), min_size=groups * k * k, max_size=groups * k * k))
    counts = np.array(flat, dtype=np.int64).reshape(groups, k, k)
    names = tuple(f"g{i}" for i in range(groups))
    return GroupStats(("grp",), names, tuple(map(str, range(k))), counts, 1 if k == 2 else None)


@settings(max_examples=60, deadline=None)
@given(stats=_count_tables(), seed=st.integers(0, 2**32 - 1))
def test_a_stratified_permutation_keeps_its_strata(stats: GroupStats, seed: int) -> None:
    rng = np.random.default_rng(seed)
    c = stats.counts
    for stratum, axis in (("rows", (1, 2)), ("actual", 2), ("predicted", 1)):
        perm = pm._permuted(stats, rng, None, stratum).counts  # type: ignore[arg-type]
        assert perm.min() >= 0
        np.testing.assert_array_equal(perm.sum(axis=axis), c.sum(axis=axis))  # group sizes
        np.testing.assert_array_equal(perm.sum(axis=0), c.sum(axis=0))  # pooled cells
        if stratum == "actual":  # nothing moves between actual classes
            np.testing.assert_array_equal(perm.sum(axis=2), c.sum(axis=2))


def test_score_cells_are_permuted_within_the_actual_class() -> None:
    rows = _rows(5)
    stats = to_stats(rows, 2, 1)
    cells, _ = rs.cells_of(stats)
    assert cells is not None
    pooled, _ = pm._pool(cells, 2)
    rng = np.random.default_rng(0)
    before = stats.counts.sum(axis=2)
    assert stats.scores is not None
    for _ in range(20):
        perm = pm._permuted(stats, rng, pooled, "actual")
        assert perm.scores is not None
        np.testing.assert_array_equal(perm.counts.sum(axis=2), before)
        for g in range(3):  # each group's score table holds its own class totals
            np.testing.assert_array_equal(perm.scores.counts[g][0].sum(axis=0), before[g])
        for t in range(2):  # and the pooled scores of each class are the data's
            got = np.concatenate(
                [
                    np.repeat(perm.scores.values[g][0], perm.scores.counts[g][0][:, t])
                    for g in range(3)
                ]
            )
            want = np.concatenate(
                [
                    np.repeat(stats.scores.values[g][0], stats.scores.counts[g][0][:, t])
                    for g in range(3)
                ]
            )
            np.testing.assert_array_equal(np.sort(got), np.sort(want))


# ---------------------------------------------------------------------------
# type-I error under unequal base rates


def _null_population(kind: str, seed: int) -> GroupStats:
    """Two groups of 300 rows, prevalence 0.1 vs 0.6 (``eo``, ``auc``) or selection rate 0.1
    vs 0.5 (``ppv``), where the metric's own null holds (same TPR/FPR; same PPV/FOR; the
    same score distribution given the class)."""
    rng = np.random.default_rng((7, seed))
    g = np.repeat([0, 1], 300)
    if kind in ("eo", "auc"):
        t = (rng.random(600) < np.where(g == 0, 0.1, 0.6)).astype(np.int64)
        p = (rng.random(600) < np.where(t == 1, 0.7, 0.2)).astype(np.int64)
    else:
        p = (rng.random(600) < np.where(g == 0, 0.1, 0.5)).astype(np.int64)
        t = (rng.random(600) < np.where(p == 1, 0.7, 0.2)).astype(np.int64)
    st = GroupStats(("grp",), ("a", "b"), ("0", "1"), confusion_counts(g, t, p, 2, 2), 1)
    if kind == "auc":  # the same binormal scores given the class in both groups
        score = np.round(rng.normal(0.0, 1.0, 600) + t, 2)
        st = st.with_extras(scores=build_score_stats(g, 2, t, score[:, None], ("y_score",), 2))
    return st


def _rejection(spec: MetricSpec, kind: str, populations: int) -> float:
    hits = 0
    for i in range(populations):
        stats = _null_population(kind, i)
        point = spec.fn(stats, {}).value
        assert point is not None
        res = pm.permutation_test(spec, stats, {}, point, 99 if kind != "auc" else 39, i, False)
        assert res.p_value is not None
        hits += res.p_value <= 0.05
    return hits / populations


@pytest.mark.parametrize(
    ("key", "kind", "n"),
    [
        ("equal_opportunity_diff", "eo", 300),
        ("predictive_parity_diff", "ppv", 300),
        ("auc_gap", "auc", 150),
    ],
)
def test_type_one_error_under_unequal_base_rates(key: str, kind: str, n: int) -> None:
    """Equal TPR (PPV, class score distributions) with very different base (selection)
    rates: the stratified test
    rejects at most α + 2 MC errors; permuting all rows (the old null) rejects far more."""
    spec = REGISTRY[key]
    bound = 0.05 + 2 * math.sqrt(0.05 * 0.95 / n)
    assert _rejection(spec, kind, n) <= bound
    old = dataclasses.replace(spec, null_stratum="rows")
    assert _rejection(old, kind, n) > bound  # the test can fail: the old null is wrong here


def test_results_state_the_null_and_name_the_comparisons() -> None:
    stats = to_stats(_rows(2), 2, 0)
    spec = REGISTRY["fpr_diff"]
    point = spec.fn(stats, {}).value
    assert point is not None
    res = pm.permutation_test(spec, stats, {}, point, 49, 0, True)
    assert res.stratum == "actual" and res.null_hypothesis == NULL_HYPOTHESES["actual"]
    assert res.family_size == 3 and res.comparisons == {
        "g0": "g0 vs rest (g1, g2)",
        "g1": "g1 vs rest (g0, g2)",
        "g2": "g2 vs rest (g0, g1)",
    }
    pooled = pm.permutation_test(REGISTRY["accuracy_score"], stats, {}, 0.5, 49, 0, False)
    assert (
        pooled.p_value is None and pooled.reason and "not a comparison of groups" in pooled.reason
    )


def test_end_to_end_the_report_states_the_null_and_the_comparisons(tmp_path: Path) -> None:
    """A real CLI run: JSON carries the stratum, the null and the named comparisons; the text
    report (-v) says where labels were permuted and lists each "group vs rest" p-value."""
    rows = _rows(4)
    frame = pd.DataFrame(
        {"y_true": rows["t"], "y_pred": rows["p"], "grp": np.array(["F", "M", "X"])[rows["g"]]}
    )
    data = tmp_path / "d.csv"
    frame.to_csv(data, index=False)
    pol = write_policy(tmp_path, control("eo", "equal_opportunity_diff", "0.5", dimension="grp"))
    out = io.StringIO()
    report = tmp_path / "r.json"
    argv = ["check", str(pol), str(data), "--p-value", "40", "--bonferroni", "-v"]
    assert main([*argv, "-o", f"json={report}"], stdout=out) == 0
    pv = json.loads(report.read_text())["findings"][0]["p_value"]
    assert pv["stratum"] == "actual" and pv["null_hypothesis"] == NULL_HYPOTHESES["actual"]
    assert pv["family_size"] == 3 and pv["comparisons"]["X"] == "X vs rest (F, M)"
    text = out.getvalue()
    assert "40 permutations within each actual class, family of 3" in text
    assert "X vs rest (F, M): p = " in text
