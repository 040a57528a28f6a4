"""Bootstrap intervals of regression and ranking metrics (issue 5).

Regression: each group's distinct (y, ŷ) cells are drawn Multinomial(n_g, cells / n_g),
which is resampling the group's rows; the replicate's sums are the drawn counts times the
cells' summands. Ranking: each group's items are resampled with replacement and every copy
keeps its item's position. Both are checked against a naive row bootstrap written here
from the rows (quantiles within Monte-Carlo error, KS), then end to end through ``check``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mean_absolute_error, root_mean_squared_error

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.runner import check
from fairpolicy.stats import GroupStats, RankingStats, build_regression_stats
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import resample as rs
from tests.stats.test_bootstrap import assert_same_distribution

B = 2000


def regression_rows(sizes: list[int], seed: int, decimals: int | None) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(2.0 + 0.3 * g, 1.0)
    yhat = y + rng.normal(0.1 * g, 0.5 + 0.2 * g)
    if decimals is not None:
        y, yhat = np.round(y, decimals), np.round(yhat, decimals)
    return {"g": g, "y": y, "yhat": yhat}


def regression_stats(rows: dict[str, np.ndarray]) -> GroupStats:
    n = int(rows["g"].max()) + 1
    reg = build_regression_stats(rows["g"], n, rows["y"], rows["yhat"], keep_cells=True)
    return GroupStats(
        dimension=("g",),
        groups=tuple(f"g{i}" for i in range(n)),
        classes=(),
        counts=np.zeros((n, 0, 0), dtype=np.int64),
        sizes=np.bincount(rows["g"]).astype(np.int64),
        regression=reg,
    )


def mae_gap(r: dict[str, np.ndarray]) -> float:
    v = [
        mean_absolute_error(r["y"][r["g"] == i], r["yhat"][r["g"] == i]) for i in np.unique(r["g"])
    ]
    return float(max(v) - min(v))


def rmse_gap(r: dict[str, np.ndarray]) -> float:
    v = [
        root_mean_squared_error(r["y"][r["g"] == i], r["yhat"][r["g"] == i])
        for i in np.unique(r["g"])
    ]
    return float(max(v) - min(v))


def naive_groups(
    groups: np.ndarray, stat: Callable[[np.ndarray], float], resamples: int, seed: int
) -> np.ndarray:
    """Resample the row indices within each group; ``stat`` of the resampled indices."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(groups == gi) for gi in range(int(groups.max()) + 1)]
    out = np.empty(resamples)
    for b in range(resamples):
        out[b] = stat(np.concatenate([rng.choice(m, len(m), replace=True) for m in members]))
    return out


def ours(key: str, st: GroupStats, resamples: int, seed: int) -> np.ndarray:
    reps = rs.draw(st, resamples, seed)
    rv = bs.replicate_values(REGISTRY[key], st, np.ones(len(st.groups), bool), {}, reps)
    assert rv.undefined == rv.differ == 0
    return rv.values


@pytest.mark.parametrize("decimals", [1, None], ids=["shared_cells", "continuous"])
@pytest.mark.parametrize(("key", "stat"), [("mae_parity", mae_gap), ("rmse_parity", rmse_gap)])
def test_regression_cell_bootstrap_is_the_row_bootstrap(
    key: str, stat: Callable[[dict[str, np.ndarray]], float], decimals: int | None
) -> None:
    rows = regression_rows([120, 200, 90], 3, decimals)
    st = regression_stats(rows)
    assert REGISTRY[key].fn(st, {}).value == pytest.approx(stat(rows), abs=1e-12)
    if decimals is not None:  # rows share cells: fewer cells than rows
        assert st.regression is not None and st.regression.cells is not None
        assert sum(len(c.counts) for c in st.regression.cells) < len(rows["g"])
    naive = naive_groups(rows["g"], lambda i: stat({k: v[i] for k, v in rows.items()}), B, 7)
    assert_same_distribution(ours(key, st, B, 11), naive)


def test_regression_cells_hold_the_rows() -> None:
    rows = regression_rows([50, 70], 5, 0)
    st = regression_stats(rows)
    assert st.regression is not None and st.regression.cells is not None
    for g, cells in enumerate(st.regression.cells):
        assert int(cells.counts.sum()) == int((rows["g"] == g).sum())
        np.testing.assert_allclose(cells.features().T @ cells.counts, st.regression.sums[g])


def ranking_stats(order: np.ndarray, n_groups: int) -> GroupStats:
    return GroupStats(
        dimension=("g",),
        groups=tuple(f"g{i}" for i in range(n_groups)),
        classes=(),
        counts=np.zeros((n_groups, 0, 0), dtype=np.int64),
        sizes=np.bincount(order[order >= 0], minlength=n_groups).astype(np.int64),
        ranking=RankingStats(order),
    )


@pytest.mark.parametrize("key", ["exposure_ratio", "ndkl", "attention_parity"])
def test_ranking_bootstrap_is_the_item_bootstrap(key: str) -> None:
    rng = np.random.default_rng(9)
    n = 300
    # group 1 sits lower in the ranking; some items are not compared (group −1)
    score = rng.normal(0, 1, n)
    group = (rng.random(n) < 0.45).astype(np.int64)
    score -= 0.6 * group
    group[rng.random(n) < 0.05] = -1
    pos_order = np.argsort(-score, kind="stable")
    order = group[pos_order]
    st = ranking_stats(order, 2)
    spec = REGISTRY[key]
    positions = np.arange(n)

    def stat(idx: np.ndarray) -> float:
        # the drawn items plus the uncompared ones, re-ranked by their original positions
        pos = np.sort(np.concatenate([positions[idx], positions[order < 0]]), kind="stable")
        value = spec.fn(ranking_stats(order[pos], 2), {}).value
        assert value is not None
        return float(value)

    groups = np.where(order >= 0, order, 0)
    compared = np.flatnonzero(order >= 0)
    naive = naive_groups(groups[compared], lambda i: stat(compared[i]), B, 21)
    assert_same_distribution(ours(key, st, B, 22), naive)


def test_ranking_replicate_keeps_sizes_and_uncompared_items() -> None:
    order = np.array([0, -1, 1, 0, 1, 1, -1, 0], dtype=np.int64)
    st = ranking_stats(order, 2)
    reps = rs.draw(st, 5, 3)
    for b in range(5):
        rep = rs.replicate(st, reps, b)
        assert rep.ranking is not None
        got = rep.ranking.order
        assert len(got) == len(order)
        assert (got < 0).sum() == 2  # each uncompared item once, in its relative place
        # copies stay at their item's place: the replicate walks the ranking top-down
        j = 0
        for x in got.tolist():
            while j < len(order) and order[j] != x:
                j += 1
            assert j < len(order), (order, got)
        assert np.array_equal(np.bincount(got[got >= 0], minlength=2), [3, 3])


def test_resampling_cost_limit_gives_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    st = regression_stats(regression_rows([100, 100], 1, None))
    monkeypatch.setattr(rs, "ROW_RESAMPLE_LIMIT", 1000)
    reps = rs.draw(st, 50, 0)
    iv = bs.confidence(REGISTRY["mae_parity"], st, np.ones(2, bool), {}, 0.1, reps, 0.95, "bca")
    assert iv.low is None and iv.reason and "exceeds the limit" in iv.reason


def _control(key: str, inputs: dict[str, str], **params: object) -> Control:
    return Control(
        control_id=key,
        metric_key=key,
        metric_key_as_written=key,
        threshold=Threshold(value=5.0),
        operator=Operator.LT,
        inputs={**inputs, "dimension": "g"},
        params={"ci": 400, **params},
        min_samples=1,
    )


def test_check_reports_regression_and_ranking_intervals() -> None:
    rows = regression_rows([150, 180], 4, 2)
    df = pd.DataFrame({"y": rows["y"], "yhat": rows["yhat"], "g": rows["g"].astype(str)})
    df["score"] = df["yhat"] + np.random.default_rng(0).normal(0, 0.01, len(df))
    reg = {"target": "y", "prediction": "yhat"}
    controls = (
        _control("mae_parity", reg),
        _control("rmse_parity", reg, ci_method="bca"),
        _control("exposure_ratio", {"score": "score"}),
    )
    res = check(Policy(form="list", controls=controls), df, seed=5)
    for f in res.findings:
        assert f.ci is not None and f.ci.low is not None and f.ci.high is not None, f.ci
        assert f.value is not None and f.ci.low <= f.value <= f.ci.high
        assert f.ci.resamples == 400 and f.ci.seed is not None
    bca = res.findings[1].ci
    # a gap of per-group RMSEs: the simultaneous band, whatever was asked
    assert bca is not None and bca.method == "band" and bca.note and "BCa was asked" in bca.note
    again = check(Policy(form="list", controls=controls), df, seed=5)
    assert [f.ci for f in again.findings] == [f.ci for f in res.findings]
    other = check(Policy(form="list", controls=controls), df, seed=6)
    assert [f.ci for f in other.findings] != [f.ci for f in res.findings]
