"""The bootstrap and permutation test on the sufficient statistics (stats/bootstrap.py).

The central claim: a Multinomial(n_g, cells_g / n_g) draw per group is the same
thing as resampling the rows of each group. The distribution tests compare the
count-table bootstrap with a naive bootstrap that resamples rows and recomputes
the metric independently (numpy / scikit-learn), quantile by quantile within a
Monte-Carlo tolerance and with a two-sample KS test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps
from sklearn.metrics import f1_score, roc_auc_score

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import (
    GroupStats,
    RankingStats,
    RegressionStats,
    ScoreStats,
    build_score_stats,
    confusion_counts,
)
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import jackknife as jk
from fairpolicy.stats import permutation as pm
from fairpolicy.stats import resample as rs

Rows = dict[str, np.ndarray]


# ---------------------------------------------------------------------------
# builders


def to_stats(rows: Rows, k: int = 2, score_columns: int = 0) -> GroupStats:
    """GroupStats of rows {g, t, p[, s]} the way the runner builds them."""
    g, t, p = rows["g"], rows["t"], rows["p"]
    n_groups = int(g.max()) + 1
    st = GroupStats(
        dimension=("grp",),
        groups=tuple(f"g{i}" for i in range(n_groups)),
        classes=tuple(str(c) for c in range(k)),
        counts=confusion_counts(g, t, p, n_groups, k),
        positive=1 if k == 2 else None,
    )
    if score_columns:
        s = rows["s"].reshape(len(g), -1)
        cols = ("y_score",) if s.shape[1] == 1 else tuple(f"y_score_{j}" for j in range(k))
        st = st.with_extras(scores=build_score_stats(g, n_groups, t, s, cols, k))
    return st


def binary_rows(
    sizes: list[int], pred_rate: list[float], seed: int, prevalence: float = 0.4
) -> Rows:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(sizes)), sizes)
    t = (rng.random(len(g)) < prevalence).astype(np.int64)
    rate = np.asarray(pred_rate)[g]
    # predictions depend on the label, so TPR and FPR differ
    p = (rng.random(len(g)) < np.clip(rate + 0.25 * (t - prevalence), 0, 1)).astype(np.int64)
    score = np.clip(np.round(0.35 * t + 0.1 * g + rng.normal(0.3, 0.2, len(g)), 2), 0, 1)
    return {"g": g, "t": t, "p": p, "s": score}


def multiclass_rows(sizes: list[int], k: int, seed: int, decimals: int = 2) -> Rows:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(sizes)), sizes)
    t = rng.integers(0, k, len(g))
    logits = rng.normal(size=(len(g), k))
    logits[np.arange(len(g)), t] += 1.0 + 0.4 * g
    prob = np.exp(logits)
    prob /= prob.sum(axis=1, keepdims=True)
    prob = np.round(prob, decimals)
    prob /= prob.sum(axis=1, keepdims=True)  # probabilities again; identical rows stay tied
    noisy = rng.random(len(g)) < 0.2
    p = np.where(noisy, rng.integers(0, k, len(g)), prob.argmax(axis=1))
    return {"g": g, "t": t, "p": p, "s": prob}


def naive(rows: Rows, stat: Callable[[Rows], float], resamples: int, seed: int) -> np.ndarray:
    """Resample the rows within each group, recompute ``stat`` on each resampled frame."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(rows["g"] == gi) for gi in range(int(rows["g"].max()) + 1)]
    out = np.empty(resamples)
    for b in range(resamples):
        idx = np.concatenate([rng.choice(m, len(m), replace=True) for m in members])
        out[b] = stat({k: v[idx] for k, v in rows.items()})
    return out


def per_group(rows: Rows, fn: Callable[[Rows], float]) -> list[float]:
    return [fn({k: v[rows["g"] == gi] for k, v in rows.items()}) for gi in np.unique(rows["g"])]


def spread(values: list[float]) -> float:
    return max(values) - min(values)


def dp_gap(r: Rows) -> float:
    return spread(per_group(r, lambda x: float(x["p"].mean())))


def eo_gap(r: Rows) -> float:
    return spread(per_group(r, lambda x: float(x["p"][x["t"] == 1].mean())))


def weighted_f1(t: np.ndarray, p: np.ndarray, k: int = 3) -> float:
    """scikit-learn's f1_score(average="weighted"), from the rows' confusion matrix."""
    cm = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
    tp = np.diag(cm)
    den = cm.sum(axis=0) + cm.sum(axis=1)
    f1 = np.divide(2 * tp, den, out=np.zeros(k), where=den > 0)
    return float(np.dot(cm.sum(axis=1), f1) / len(t))


def rank_auc(t: np.ndarray, s: np.ndarray) -> float:
    """ROC AUC by the Mann–Whitney rank sum (average ranks for ties)."""
    ranks = sps.rankdata(s)
    pos = t == 1
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def wf1_gap(r: Rows) -> float:
    return spread(per_group(r, lambda x: weighted_f1(x["t"], x["p"])))


def auc_gap(r: Rows) -> float:
    return spread(per_group(r, lambda x: rank_auc(x["t"], x["s"])))


def test_row_statistics_match_scikit_learn() -> None:
    """The fast row-level oracles of the distribution tests are scikit-learn's numbers."""
    m = multiclass_rows([120, 90], 3, 0)
    for gi in (0, 1):
        t, p = m["t"][m["g"] == gi], m["p"][m["g"] == gi]
        assert weighted_f1(t, p) == pytest.approx(f1_score(t, p, average="weighted"), abs=1e-12)
    b = binary_rows([120, 90], [0.4, 0.4], 0)
    assert rank_auc(b["t"], b["s"]) == pytest.approx(roc_auc_score(b["t"], b["s"]), abs=1e-12)


def count_bootstrap(
    key: str, st: GroupStats, resamples: int, seed: int, params: dict[str, Any] | None = None
) -> np.ndarray:
    reps = rs.draw(st, resamples, seed)
    keep = np.ones(len(st.groups), dtype=bool)
    rv = bs.replicate_values(REGISTRY[key], st, keep, params or {}, reps)
    assert rv.undefined == rv.differ == 0
    return rv.values


def assert_same_distribution(a: np.ndarray, b: np.ndarray, z: float = 4.0) -> None:
    """a and b are draws of one distribution, up to Monte-Carlo error.

    Quantiles: at b's q-quantile, a's empirical CDF differs from q by at most
    z·sqrt(q(1 − q)(1/B_a + 1/B_b)) — the binomial standard error of the two
    empirical CDFs, distribution-free (the statistics here are discrete). So
    b's q-quantile must lie between a's (q − δ)- and (q + δ)-quantiles.
    KS: the two-sample test must not reject at alpha = 0.001.
    """
    for q in (0.025, 0.5, 0.975):
        d = z * math.sqrt(q * (1 - q) * (1 / len(a) + 1 / len(b)))
        lo, hi = np.quantile(a, [max(0.0, q - d), min(1.0, q + d)])
        assert lo - 1e-12 <= np.quantile(b, q) <= hi + 1e-12, (q, lo, np.quantile(b, q), hi)
    assert sps.ks_2samp(a, b).pvalue > 1e-3


# ---------------------------------------------------------------------------
# the count-table bootstrap is the row bootstrap


B_COUNTS, B_NAIVE = 2000, 2000


@pytest.mark.parametrize(
    ("key", "make", "k", "score_columns", "stat"),
    [
        (
            "demographic_parity_diff",
            lambda: binary_rows([150, 250], [0.3, 0.42], 1),
            2,
            0,
            dp_gap,
        ),
        (
            "equal_opportunity_diff",
            lambda: binary_rows([200, 150, 250], [0.35, 0.45, 0.5], 2),
            2,
            0,
            eo_gap,
        ),
        ("weighted_f1_gap", lambda: multiclass_rows([180, 140, 220], 3, 3), 3, 0, wf1_gap),
        ("auc_gap", lambda: binary_rows([160, 220], [0.4, 0.4], 4), 2, 1, auc_gap),
    ],
    ids=["dp", "eo", "weighted_f1_k3", "auc"],
)
def test_count_table_bootstrap_is_row_bootstrap(
    key: str, make: Callable[[], Rows], k: int, score_columns: int, stat: Callable[[Rows], float]
) -> None:
    rows = make()
    st = to_stats(rows, k, score_columns)
    point = REGISTRY[key].fn(st, {}).value
    assert point == pytest.approx(stat(rows), abs=1e-12)  # same statistic, two implementations
    table = count_bootstrap(key, st, B_COUNTS, 10)
    rows_b = naive(rows, stat, B_NAIVE, 20)
    assert_same_distribution(table, rows_b)


def test_distribution_check_has_power() -> None:
    """The comparison above rejects a bootstrap of the wrong sample size (n/2 per group)."""
    rows = binary_rows([150, 250], [0.3, 0.42], 1)
    half = {k: v[::2] for k, v in rows.items()}
    table = count_bootstrap("demographic_parity_diff", to_stats(rows), B_COUNTS, 10)
    with pytest.raises(AssertionError):
        assert_same_distribution(table, naive(half, dp_gap, B_NAIVE, 20))


@pytest.mark.parametrize("up_front", [True, False], ids=["drawn_up_front", "drawn_on_demand"])
def test_joint_score_cells_resample_rows_for_one_vs_rest_auc(
    up_front: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """K = 3 score columns share rows: the joint-cell bootstrap matches row resampling.

    (Resampling each column's cells on its own instead narrows the spread of the
    per-group one-vs-rest AUC by about a fifth on data like this.)
    """
    if not up_front:
        monkeypatch.setattr(rs, "SCORE_DRAW_LIMIT", 0)
    rows = multiclass_rows([150, 200], 3, 5)
    st = to_stats(rows, 3, score_columns=3)
    assert st.scores is not None and st.scores.joint is not None
    spec = REGISTRY["multi_class_auc_gap"]

    def rebuilt(r: Rows) -> float:
        value = spec.fn(to_stats(r, 3, score_columns=3), {}).value
        assert value is not None
        return value

    def ovr(r: Rows) -> float:
        return spread(
            per_group(r, lambda x: float(roc_auc_score(x["t"], x["s"], multi_class="ovr")))
        )

    assert rebuilt(rows) == pytest.approx(ovr(rows), abs=1e-12)
    assert_same_distribution(
        count_bootstrap("multi_class_auc_gap", st, 1500, 1), naive(rows, rebuilt, 500, 2)
    )


# ---------------------------------------------------------------------------
# draws and replicates


def test_draw_shape_totals_and_seed() -> None:
    st = to_stats(multiclass_rows([50, 80, 30], 3, 0), 3)
    reps = rs.draw(st, 300, 5)
    assert reps.counts.shape == (300, 3, 3, 3) and reps.counts.dtype == np.int64
    assert (reps.counts.sum(axis=(2, 3)) == st.n[None, :]).all()  # every replicate keeps n_g
    assert (reps.counts[:, st.counts == 0] == 0).all()  # an empty cell stays empty
    mean = reps.counts.mean(axis=0)
    assert np.abs(mean - st.counts).max() < 4 * math.sqrt(80 / 4) / math.sqrt(300) + 1
    again = rs.draw(st, 300, 5)
    other = rs.draw(st, 300, 6)
    np.testing.assert_array_equal(reps.counts, again.counts)
    assert not np.array_equal(reps.counts, other.counts)
    assert (reps.seed, reps.resamples) == (5, 300)


@pytest.mark.parametrize("up_front", [True, False])
def test_score_replicates_share_rows_with_counts(
    up_front: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not up_front:  # score cells drawn per replicate on demand (large tables)
        monkeypatch.setattr(rs, "SCORE_DRAW_LIMIT", 0)
    rows = multiclass_rows([60, 90], 3, 1)
    st = to_stats(rows, 3, score_columns=3)
    reps = rs.draw(st, 20, 3)
    assert isinstance(reps.scores, rs.ScoreDraws)
    assert (reps.scores.weights is not None) == up_front
    for b in range(20):
        rep = rs.replicate(st, reps, b)
        assert rep.scores is not None
        np.testing.assert_array_equal(rep.counts, reps.counts[b])
        for g in range(2):
            totals = rep.counts[g].sum(axis=1)  # class totals of the count replicate
            for j in range(3):
                np.testing.assert_array_equal(rep.scores.counts[g][j].sum(axis=0), totals)
                assert (np.diff(rep.scores.values[g][j]) > 0).all()
                assert (rep.scores.counts[g][j].sum(axis=1) > 0).all()
    # the same seed gives the same score draws; another seed other draws
    same = rs.replicate(st, rs.draw(st, 20, 3), 4).scores
    other = rs.replicate(st, rs.draw(st, 20, 4), 4).scores
    mine = rs.replicate(st, reps, 4).scores
    assert same is not None and other is not None and mine is not None
    for j in range(3):
        np.testing.assert_array_equal(same.counts[0][j], mine.counts[0][j])
    assert any(
        not np.array_equal(x, y) for x, y in zip(other.counts[0], mine.counts[0], strict=True)
    )


@pytest.mark.parametrize(("scores", "limit"), [(0, None), (1, None), (1, 0)])
def test_selection_commutes_with_the_draw(
    scores: int, limit: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if limit is not None:
        monkeypatch.setattr(rs, "SCORE_DRAW_LIMIT", limit)
    rows = binary_rows([60, 20, 90], [0.3, 0.5, 0.4], 7)
    st = to_stats(rows, 2, scores)
    key = "auc_gap" if scores else "demographic_parity_diff"
    spec = REGISTRY[key]
    keep = np.array([True, False, True])
    reps = rs.draw(st, 50, 9)
    rv = bs.replicate_values(spec, st, keep, {}, reps)
    for b in range(50):
        full = rs.replicate(st, reps, b).select(keep)
        assert spec.fn(full, {}).value == rv.values[b]


def test_same_seed_same_interval_other_seed_other_interval() -> None:
    rows = binary_rows([200, 300], [0.3, 0.45], 11)
    st = to_stats(rows, 2, 1)
    keep = np.ones(2, dtype=bool)
    for key in ("demographic_parity_diff", "auc_gap"):
        spec = REGISTRY[key]
        point = spec.fn(st, {}).value
        assert point is not None
        for method in ("percentile", "bca"):

            def ci(seed: int, spec: Any = spec, point: float = point, m: str = method) -> Any:
                return bs.confidence(
                    spec, st, keep, {}, point, rs.draw(st, 400, seed), 0.9, m, band=False
                )

            a, b, c = ci(1), ci(1), ci(2)
            assert a == b
            assert (a.low, a.high) != (c.low, c.high)
            assert a.low is not None and a.high is not None and a.low <= point <= a.high
            assert (a.method, a.level, a.resamples, a.seed, a.valid) == (method, 0.9, 400, 1, 400)
            assert a.groups is not None and set(a.groups) == {"g0", "g1"}


def test_bad_arguments() -> None:
    st = to_stats(binary_rows([40, 40], [0.3, 0.4], 0))
    spec = REGISTRY["demographic_parity_diff"]
    reps = rs.draw(st, 10, 0)
    keep = np.ones(2, dtype=bool)
    with pytest.raises(ValueError, match="method"):
        bs.confidence(spec, st, keep, {}, 0.1, reps, 0.95, "studentized")
    with pytest.raises(ValueError, match="level"):
        bs.confidence(spec, st, keep, {}, 0.1, reps, 1.5, "bca")
    with pytest.raises(ValueError, match="resamples"):
        rs.draw(st, 0, 0)


# ---------------------------------------------------------------------------
# BCa and percentile against scipy


class _Previous:
    """Stands in for a scipy BootstrapResult: scipy then uses exactly these replicates."""

    def __init__(self, values: np.ndarray) -> None:
        self.bootstrap_distribution = values


def _scipy_ci(data: tuple[np.ndarray, ...], stat: Any, values: np.ndarray, method: str) -> Any:
    return sps.bootstrap(
        data,
        stat,
        n_resamples=0,
        bootstrap_result=_Previous(values),
        method=method,
        confidence_level=0.95,
    ).confidence_interval


def test_bca_and_percentile_equal_scipy_on_the_same_replicates() -> None:
    """DP gap of two groups = |mean(x0) − mean(x1)| of 0/1 predictions: scipy's row
    jackknife and the cell jackknife must give the same acceleration, hence the same BCa
    interval on the same replicates; the per-group interval is scipy's one-sample BCa."""
    rows = binary_rows([70, 110], [0.3, 0.5], 3)
    st = to_stats(rows)
    x0, x1 = rows["p"][rows["g"] == 0], rows["p"][rows["g"] == 1]
    spec = REGISTRY["demographic_parity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    reps = rs.draw(st, 3000, 8)
    keep = np.ones(2, dtype=bool)
    values = bs.replicate_values(spec, st, keep, {}, reps)

    def gap(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.abs(a.mean(axis=axis) - b.mean(axis=axis))

    def mean(a: np.ndarray, axis: int = -1) -> np.ndarray:
        return a.mean(axis=axis)

    for method, ours in (("BCa", "bca"), ("percentile", "percentile")):
        iv = bs.confidence(spec, st, keep, {}, point, reps, 0.95, ours, band=False)
        ref = _scipy_ci((x0, x1), gap, values.values, method)
        assert iv.method == ours
        assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
        ref0 = _scipy_ci((x0,), mean, values.groups[:, 0], method)
        assert iv.groups is not None
        assert iv.groups["g0"] == pytest.approx((ref0.low, ref0.high), abs=1e-12)


def test_bca_of_a_two_group_gap_is_scipy_bca_of_the_signed_difference_folded() -> None:
    """Near zero the replicates of |θ_a − θ_b| fold above the point and BCa under-covers;
    fairpolicy computes BCa on the signed difference (sign of the data's) and folds it:
    exactly scipy's BCa of the signed statistic on the same replicates, then |·|."""
    rows = binary_rows([90, 120], [0.40, 0.40], 5)
    st = to_stats(rows)
    x0, x1 = rows["p"][rows["g"] == 0], rows["p"][rows["g"] == 1]
    spec = REGISTRY["demographic_parity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    reps = rs.draw(st, 3000, 4)
    keep = np.ones(2, dtype=bool)
    rv = bs.replicate_values(spec, st, keep, {}, reps)
    sign = 1.0 if x0.mean() >= x1.mean() else -1.0
    signed = sign * (rv.groups[:, 0] - rv.groups[:, 1])
    assert (signed < 0).mean() > 0.05  # the replicates do cross zero here

    def diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return sign * (a.mean(axis=axis) - b.mean(axis=axis))

    ref = _scipy_ci((x0, x1), diff, signed, "BCa")
    lo, hi = ref.low, ref.high
    folded = (lo, hi) if lo >= 0 else (0.0, max(-lo, hi))
    iv = bs.confidence(spec, st, keep, {}, point, reps, 0.95, "bca", band=False)
    assert iv.method == "bca" and iv.note and "signed difference" in iv.note
    assert (iv.low, iv.high) == pytest.approx(folded, abs=1e-12)

    def gap(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.abs(a.mean(axis=axis) - b.mean(axis=axis))

    plain = _scipy_ci((x0, x1), gap, rv.values, "BCa")  # what BCa of |·| would give
    assert abs(plain.low - iv.low) > 1e-3 or abs(plain.high - iv.high) > 1e-3


def _row_acceleration(groups: list[Rows], stat: Callable[[list[Rows]], float]) -> float:
    """scipy's multi-sample jackknife acceleration, one left-out row at a time."""
    num = den = 0.0
    for j, sample in enumerate(groups):
        n = len(sample["t"])
        theta = np.empty(n)
        for i in range(n):
            keep = np.arange(n) != i
            left = [
                s if h != j else {k: v[keep] for k, v in s.items()} for h, s in enumerate(groups)
            ]
            theta[i] = stat(left)
        u = (n - 1) * (theta.mean() - theta)
        num += (u**3).sum() / n**3
        den += (u**2).sum() / n**2
    return num / (6 * den**1.5)


@pytest.mark.parametrize("k", [2, 3])
def test_score_cell_jackknife_is_the_row_jackknife(k: int) -> None:
    """Tied scores: cells hold several rows, each weighted by its count."""
    if k == 2:
        rows = binary_rows([45, 55], [0.4, 0.4], 6)
        rows["s"] = np.round(rows["s"], 1)
        key = "auc_gap"

        def auc(x: Rows) -> float:
            return float(roc_auc_score(x["t"], x["s"]))
    else:
        rows = multiclass_rows([40, 50], 3, 6, decimals=1)
        key = "multi_class_auc_gap"

        def auc(x: Rows) -> float:
            return float(roc_auc_score(x["t"], x["s"], multi_class="ovr"))

    st = to_stats(rows, k, score_columns=1 if k == 2 else 3)
    spec = REGISTRY[key]
    keep = np.ones(2, dtype=bool)
    compared = rs.compared_groups(spec.fn(st, {}))
    jack = jk.jackknife(spec, st, keep, {}, compared, 0)
    assert not isinstance(jack, str) and not jack.grouped
    assert len(jack.values) < len(rows["t"])  # fewer evaluations than rows (ties)
    split = [{kk: v[rows["g"] == gi] for kk, v in rows.items()} for gi in (0, 1)]
    expected = _row_acceleration(split, lambda gs: spread([auc(x) for x in gs]))
    assert jk.acceleration(jack) == pytest.approx(expected, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("blocks", ["dealt", "shuffled"])
def test_grouped_jackknife_above_the_cap(blocks: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = binary_rows([600, 700], [0.4, 0.4], 9)
    rows["s"] = rows["s"] + np.random.default_rng(0).normal(0, 1e-6, len(rows["s"]))  # distinct
    st = to_stats(rows, 2, 1)
    spec = REGISTRY["auc_gap"]
    keep = np.ones(2, dtype=bool)
    compared = rs.compared_groups(spec.fn(st, {}))
    exact = jk.jackknife(spec, st, keep, {}, compared, 0)
    assert not isinstance(exact, str) and not exact.grouped
    monkeypatch.setattr(jk, "JACKKNIFE_MAX", 400)
    if blocks == "shuffled":
        monkeypatch.setattr(jk, "_BLOCKS_BY_DEAL", 0)
    grouped = jk.jackknife(spec, st, keep, {}, compared, 0)
    assert not isinstance(grouped, str) and grouped.grouped and len(grouped.values) <= 402
    a, g = jk.acceleration(exact), jk.acceleration(grouped)
    assert abs(g - a) < 0.5 * abs(a) + 2e-3  # same sums, estimated from blocks
    point = spec.fn(st, {}).value
    assert point is not None
    iv = bs.confidence(spec, st, keep, {}, point, rs.draw(st, 200, 1), 0.95, "bca", band=False)
    assert iv.method == "bca" and iv.note is not None and "grouped jackknife" in iv.note


def test_grouped_jackknife_of_a_count_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many rows in few cells: blocks are dealt from the cells, never expanded to rows."""
    st = to_stats(multiclass_rows([3000, 4000, 2500], 6, 2), 6)
    spec = REGISTRY["weighted_f1_gap"]
    keep = np.ones(3, dtype=bool)
    compared = rs.compared_groups(spec.fn(st, {}))
    exact = jk.jackknife(spec, st, keep, {}, compared, 0)
    assert not isinstance(exact, str) and not exact.grouped
    monkeypatch.setattr(jk, "JACKKNIFE_MAX", 60)
    grouped = jk.jackknife(spec, st, keep, {}, compared, 0)
    assert not isinstance(grouped, str) and grouped.grouped
    # max(20, 60 · n_g / N) blocks per group: 20, 25, 20 (instead of 108 cells)
    assert grouped.sizes.tolist() == [20.0, 25.0, 20.0] and len(grouped.values) == 65
    a, g = jk.acceleration(exact), jk.acceleration(grouped)
    assert abs(g - a) < 0.01  # 65 blocks estimate a skewness: only its order of magnitude


def test_bca_falls_back_to_percentile_when_the_jackknife_is_undefined() -> None:
    # group g1 has exactly one actual positive: leaving it out leaves its TPR undefined
    rows = binary_rows([300, 300], [0.3, 0.4], 2)
    pos = np.flatnonzero((rows["g"] == 1) & (rows["t"] == 1))
    rows["t"][pos[1:]] = 0
    st = to_stats(rows)
    spec = REGISTRY["equal_opportunity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    iv = bs.confidence(spec, st, np.ones(2, bool), {}, point, rs.draw(st, 100, 0), 0.95, "bca")
    # ~37 % of the replicates lose that positive: no interval at all, with the reason (per
    # group, with the count behind it: e^-1 ≈ 37 % of resamples miss a single row)
    assert iv.low is None and iv.reason is not None and "'g1' has no value in" in iv.reason
    assert "about 1 of its rows" in iv.reason


# ---------------------------------------------------------------------------
# undefined replicates


def test_too_many_undefined_replicates_give_no_interval() -> None:
    rows = binary_rows([300, 60, 300], [0.3, 0.4, 0.5], 4)
    pos = np.flatnonzero((rows["g"] == 1) & (rows["t"] == 1))
    rows["t"][pos[1:]] = 0  # one positive in g1: P(none drawn) = (59/60)^60 ≈ 37 %
    st = to_stats(rows)
    spec = REGISTRY["equal_opportunity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    iv = bs.confidence(spec, st, np.ones(3, bool), {}, point, rs.draw(st, 500, 0), 0.95, "bca")
    assert iv.low is None and iv.high is None
    assert iv.reason is not None and "'g1' has no value in" in iv.reason
    assert "'g0'" not in iv.reason and "'g2'" not in iv.reason
    assert 0.25 * 500 < 500 - iv.valid < 0.5 * 500


def test_a_few_undefined_replicates_are_dropped() -> None:
    rows = binary_rows([300, 300], [0.3, 0.4], 5)
    pos = np.flatnonzero((rows["g"] == 1) & (rows["t"] == 1))
    rows["t"][pos[4:]] = 0  # four positives in 300 rows: P(none drawn) ≈ e^-4 ≈ 1.8 %
    st = to_stats(rows)
    spec = REGISTRY["equal_opportunity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    reps = rs.draw(st, 1000, 0)
    iv = bs.confidence(spec, st, np.ones(2, bool), {}, point, reps, 0.95, "percentile", band=False)
    assert iv.low is not None and iv.reason is None
    assert 950 <= iv.valid < 1000
    rv = bs.replicate_values(spec, st, np.ones(2, bool), {}, reps)
    assert rv.undefined == 1000 - iv.valid
    expected = np.quantile(rv.values[~np.isnan(rv.values)], [0.025, 0.975])
    assert (iv.low, iv.high) == pytest.approx(tuple(expected), abs=1e-12)


# ---------------------------------------------------------------------------
# what is not resampled


def _plain(n_groups: int = 2) -> GroupStats:
    return GroupStats(
        dimension=("grp",),
        groups=tuple(f"g{i}" for i in range(n_groups)),
        classes=(),
        counts=np.zeros((n_groups, 0, 0), dtype=np.int64),
        sizes=np.array([50] * n_groups, dtype=np.int64),
    )


@pytest.mark.parametrize(
    ("key", "stats", "interval", "p_value"),
    [
        (
            "mae_parity",
            _plain().with_extras(regression=RegressionStats(np.ones((2, 7)))),
            "not the (y, ŷ) cells",
            "not available for regression/ranking metrics",
        ),
        (
            "exposure_ratio",
            _plain().with_extras(ranking=RankingStats(np.array([0, 1] * 50, dtype=np.int64))),
            None,  # ranking statistics are resampled (tests/stats/test_row_bootstrap.py)
            "not available for regression/ranking metrics",
        ),
        ("group_size", _plain(), "group sizes", "group sizes"),
    ],
)
def test_no_interval_or_p_value_where_they_cannot_be_resampled(
    key: str, stats: GroupStats, interval: str | None, p_value: str
) -> None:
    spec = REGISTRY[key]
    reps = rs.draw(stats, 50, 0)
    iv = bs.confidence(spec, stats, np.ones(2, bool), {}, 1.0, reps, 0.95, "percentile")
    if interval is None:
        assert iv.low is not None and iv.reason is None
    else:
        assert iv.low is None and iv.high is None and iv.reason and interval in iv.reason
    pv = pm.permutation_test(spec, stats, {}, 1.0, 50, 0, False)
    assert pv.p_value is None and pv.reason and p_value in pv.reason


def test_no_interval_for_the_composite_with_a_site_grouping() -> None:
    rows = binary_rows([100, 120], [0.3, 0.4], 1)
    st = to_stats(rows, 2, 1)
    site_rows = dict(rows, g=(np.arange(len(rows["g"])) % 2))
    st = st.with_extras(secondary=to_stats(site_rows, 2, 1))
    spec = REGISTRY["samd_fairness_score"]
    point = spec.fn(st, {}).value
    assert point is not None
    iv = bs.confidence(spec, st, np.ones(2, bool), {}, point, rs.draw(st, 50, 0), 0.95, "bca")
    assert iv.low is None and iv.reason and "second grouping" in iv.reason


def test_several_score_columns_without_joint_cells_are_refused() -> None:
    st = to_stats(multiclass_rows([60, 60], 3, 0), 3, score_columns=3)
    assert st.scores is not None
    bare = st.with_extras(scores=ScoreStats(st.scores.columns, st.scores.values, st.scores.counts))
    spec = REGISTRY["multi_class_auc_gap"]
    point = spec.fn(bare, {}).value
    assert point is not None
    iv = bs.confidence(spec, bare, np.ones(2, bool), {}, point, rs.draw(bare, 20, 0), 0.95, "bca")
    assert iv.low is None and iv.reason and "joint cells" in iv.reason


# ---------------------------------------------------------------------------
# permutation test


def test_permutation_deal_keeps_sizes_and_pooled_cells() -> None:
    rows = binary_rows([40, 70, 55], [0.3, 0.4, 0.5], 3)
    for scores in (0, 1):
        st = to_stats(rows, 2, scores)
        rng = np.random.default_rng(0)
        pooled = None
        if scores:
            cells, _ = rs.cells_of(st)
            assert cells is not None
            pooled, _ = pm._pool(cells, 2)
        seen = set()
        for _ in range(30):
            perm = pm._permuted(st, rng, pooled)
            np.testing.assert_array_equal(perm.n, st.n)
            np.testing.assert_array_equal(perm.counts.sum(axis=0), st.counts.sum(axis=0))
            seen.add(perm.counts.tobytes())
            if scores:
                assert perm.scores is not None and st.scores is not None
                for g in range(3):  # score cells agree with the dealt class totals
                    np.testing.assert_array_equal(
                        perm.scores.counts[g][0].sum(axis=0), perm.counts[g].sum(axis=1)
                    )
                merged = np.zeros(2)
                for g in range(3):
                    v = perm.scores.values[g][0]
                    merged = merged + perm.scores.counts[g][0][v == 0.5].sum(axis=0)
                whole = sum(
                    st.scores.counts[g][0][st.scores.values[g][0] == 0.5].sum(axis=0)
                    for g in range(3)
                )
                np.testing.assert_array_equal(merged, whole)  # pooled score cells kept
        assert len(seen) > 20


def test_permutation_p_values_under_h0_and_under_an_effect() -> None:
    spec = REGISTRY["demographic_parity_diff"]
    ps = []
    for seed in range(40):
        st = to_stats(binary_rows([80, 120], [0.4, 0.4], 100 + seed))
        point = spec.fn(st, {}).value
        assert point is not None
        ps.append(pm.permutation_test(spec, st, {}, point, 199, seed, False).p_value)
    p = np.array(ps, dtype=float)
    assert 0.35 < p.mean() < 0.65  # uniform on (0, 1] has mean 1/2
    assert (p < 0.05).mean() <= 0.15
    assert sps.kstest(p, "uniform").pvalue > 1e-3
    st = to_stats(binary_rows([200, 200], [0.2, 0.6], 1))
    point = spec.fn(st, {}).value
    assert point is not None
    res = pm.permutation_test(spec, st, {}, point, 199, 0, False)
    assert res.p_value == pytest.approx(1 / 200) and res.valid == 199
    # a ratio ("higher is better") counts the permutations at or below the observed ratio
    ratio = REGISTRY["demographic_parity_ratio"]
    rv = ratio.fn(st, {}).value
    assert rv is not None
    assert pm.permutation_test(ratio, st, {}, rv, 199, 0, False).p_value == pytest.approx(1 / 200)


def test_per_group_p_values_and_bonferroni() -> None:
    st = to_stats(binary_rows([150, 150, 150, 150], [0.3, 0.32, 0.31, 0.45], 4))
    spec = REGISTRY["demographic_parity_diff"]
    point = spec.fn(st, {}).value
    assert point is not None
    raw = pm.permutation_test(spec, st, {}, point, 199, 3, False)
    adj = pm.permutation_test(spec, st, {}, point, 199, 3, True)
    assert raw.family_size == adj.family_size == 4
    assert raw.groups is not None and adj.groups is not None
    assert raw.p_value == adj.p_value  # the overall test is not adjusted
    for g, p in raw.groups.items():
        assert adj.groups[g] == pytest.approx(min(1.0, 4 * p))
    assert raw.groups["g3"] < 0.05  # the odd group out
    assert max(adj.groups.values()) == 1.0  # capped
    two = pm.permutation_test(spec, st.select(np.array([1, 0, 0, 1], bool)), {}, 0.1, 99, 0, True)
    # two groups: "g0 vs rest" and "g3 vs rest" are the one test itself, so Bonferroni over
    # a family of 1 leaves it alone (it used to double it)
    assert two.family_size == 1 and two.groups is not None
    assert set(two.groups.values()) == {two.p_value}
    assert two.comparisons == {"g0": "g0 vs g3", "g3": "g3 vs g0"}
    assert raw.comparisons is not None and raw.comparisons["g3"] == "g3 vs rest (g0, g1, g2)"


def test_permutation_with_scores_and_versus_rest() -> None:
    rows = multiclass_rows([90, 80, 100], 3, 2)
    st = to_stats(rows, 3, score_columns=3)
    spec = REGISTRY["multi_class_auc_gap"]
    two = pm.versus_rest(st, 1)
    assert two.groups == ("g1", "not g1")
    mask = rows["g"] != 1
    rest = to_stats({k: v[mask] for k, v in rows.items()} | {"g": np.zeros(mask.sum(), int)}, 3, 3)
    own = spec.fn(st, {}).groups[1].value
    assert spec.fn(two, {}).groups[0].value == own
    assert spec.fn(two, {}).groups[1].value == pytest.approx(spec.fn(rest, {}).groups[0].value)
    point = spec.fn(st, {}).value
    assert point is not None
    res = pm.permutation_test(spec, st, {}, point, 60, 1, True)
    assert res.p_value is not None and 0 < res.p_value <= 1
    assert res.groups is not None and set(res.groups) <= {"g0", "g1", "g2"}
    assert res.family_size == 3


def test_a_count_metric_ignores_score_statistics_it_does_not_read() -> None:
    rows = binary_rows([120, 150], [0.3, 0.45], 8)
    with_scores, without = to_stats(rows, 2, 1), to_stats(rows, 2, 0)
    spec = REGISTRY["demographic_parity_diff"]
    point = spec.fn(without, {}).value
    assert point is not None
    keep = np.ones(2, dtype=bool)
    for band in (False, True):
        a = bs.confidence(
            spec, with_scores, keep, {}, point, rs.draw(with_scores, 300, 1), 0.95, "bca", band
        )
        b = bs.confidence(
            spec, without, keep, {}, point, rs.draw(without, 300, 1), 0.95, "bca", band
        )
        assert a == b and a.method == ("score" if band else "bca")
    pa = pm.permutation_test(spec, with_scores, {}, point, 99, 0, False)
    pb = pm.permutation_test(spec, without, {}, point, 99, 0, False)
    assert pa == pb


@pytest.mark.parametrize(
    "key",
    [
        "demographic_parity_diff",
        "demographic_parity_ratio",
        "equal_opportunity_diff",
        "fpr_diff",
        "fnr_diff",
        "predictive_parity_diff",
        "accuracy_diff",
    ],
)
def test_vectorised_twin_equals_the_per_replicate_loop(key: str) -> None:
    """spec.batch gives exactly the numbers of calling the metric on each replicate,
    including the replicates that do not count (a group's rate turning undefined)."""
    import dataclasses as dc

    from fairpolicy.metrics.registry import REGISTRY
    from fairpolicy.stats import GroupStats
    from fairpolicy.stats import bootstrap as bs

    rng = np.random.default_rng(3)
    counts = rng.integers(0, 40, size=(4, 2, 2)).astype(np.int64)
    counts[3] = [[30, 2], [1, 0]]  # few positives: TPR/PPV often undefined in replicates
    stats = GroupStats(("g",), ("a", "b", "c", "d"), ("0", "1"), counts, positive=1)
    spec = REGISTRY[key]
    assert spec.batch is not None
    reps = rs.draw(stats, 500, seed=11)
    keep = np.array([True, True, True, True])
    fast = bs.replicate_values(spec, stats, keep, {}, reps)
    slow = bs.replicate_values(dc.replace(spec, batch=None), stats, keep, {}, reps)
    np.testing.assert_array_equal(fast.values, slow.values)
    np.testing.assert_array_equal(fast.groups, slow.groups)
    assert (fast.undefined, fast.differ) == (slow.undefined, slow.differ)
