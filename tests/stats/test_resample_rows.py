"""``resample: rows`` (unstratified bootstrap) beside the default stratified one.

The stratified bootstrap conditions on the group sizes; ``rows`` resamples all N rows
together, so the group sizes of a replicate are Multinomial(N, n_g / N). Checked: the
draw is that distribution (against a naive row resample), every engine path reaches it
through the policy prop and the command-line flag, and the results say which was used.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats, confusion_counts
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import resample as rs
from tests.helpers import control, write_policy


def _stats(sizes: list[int], seed: int = 0) -> tuple[GroupStats, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(len(sizes)), sizes)
    t = rng.integers(0, 2, len(g))
    p = (rng.random(len(g)) < 0.3 + 0.1 * g).astype(np.int64)
    counts = confusion_counts(g, t, p, len(sizes), 2)
    names = tuple(f"g{i}" for i in range(len(sizes)))
    return GroupStats(("g",), names, ("0", "1"), counts, positive=1), {"g": g, "t": t, "p": p}


def test_rows_draw_is_a_row_resample_of_all_groups_together() -> None:
    st, rows = _stats([60, 240, 100], 1)
    b = 4000
    reps = rs.draw(st, b, 3, rows=True)
    sizes = reps.counts.sum(axis=(2, 3))  # (B, G)
    assert (sizes.sum(axis=1) == 400).all() and reps.rows
    assert not (sizes == [60, 240, 100]).all(axis=1).all()  # the sizes vary
    strat = rs.draw(st, 50, 3).counts.sum(axis=(2, 3))
    assert (strat == [60, 240, 100]).all()
    # naive row resample of the same rows: group sizes and selection rates agree in law
    rng = np.random.default_rng(9)
    idx = rng.integers(0, 400, (b, 400))
    naive_sizes = np.stack([np.bincount(rows["g"][i], minlength=3) for i in idx[:1000]])
    for j, n in enumerate([60, 240, 100]):
        sd = np.sqrt(400 * (n / 400) * (1 - n / 400))
        assert abs(sizes[:, j].mean() - n) < 4 * sd / np.sqrt(b)
        assert sizes[:, j].std() == pytest.approx(sd, rel=0.08)
        assert naive_sizes[:, j].std() == pytest.approx(sd, rel=0.15)
    sel = reps.counts[:, :, :, 1].sum(axis=2) / np.maximum(sizes, 1)
    naive_sel = np.stack(
        [[rows["p"][i][rows["g"][i] == j].mean() for j in range(3)] for i in idx[:1000]]
    )
    assert np.abs(sel.std(axis=0) - naive_sel.std(axis=0)).max() < 0.15 * sel.std(axis=0).max()


def test_rows_interval_is_recorded_and_reaches_every_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    n = 900
    sex = rng.choice(["F", "M", "X"], n, p=[0.45, 0.45, 0.1])
    df = pd.DataFrame(
        {
            "y_true": rng.integers(0, 2, n),
            "y_pred": (rng.random(n) < np.where(sex == "F", 0.4, 0.5)).astype(int),
            "sex": sex,
        }
    )
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    prop = write_policy(
        tmp_path, control(threshold="0.5", ci="300", resample="rows"), name="a.yaml"
    )
    plain = write_policy(tmp_path, control(threshold="0.5", ci="300"), name="b.yaml")
    by_prop = fairpolicy.check(prop, df).findings[0].ci
    by_arg = fairpolicy.check(plain, df, resample="rows").findings[0].ci
    strat = fairpolicy.check(plain, df).findings[0].ci
    assert by_prop is not None and by_arg is not None and strat is not None
    assert by_prop.resample == by_arg.resample == "rows" and strat.resample == "stratified"
    assert (by_prop.low, by_prop.high) == (by_arg.low, by_arg.high)
    # a gap of selection rates gets the score interval, conditional on each rate's own
    # denominator (valid whether the group sizes are fixed or random): the same interval
    # under either resampling, which is still recorded
    assert by_prop.method == strat.method == "score"
    assert (by_prop.low, by_prop.high) == (strat.low, strat.high)
    out = io.StringIO()
    code = main(
        ["check", str(plain), str(data), "--bootstrap", "300", "--resample", "rows",
         "-o", f"json={tmp_path / 'r.json'}"],
        stdout=out,
    )  # fmt: skip
    assert code == 0
    ci = json.loads((tmp_path / "r.json").read_text())["findings"][0]["ci"]
    assert ci["resample"] == "rows" and ci["low"] <= ci["high"]
    bad = write_policy(tmp_path, control(ci="300", resample="bootstrap"), name="c.yaml")
    assert main(["check", str(bad), str(data)], stdout=io.StringIO()) == 2


def test_rows_for_ranking_metrics_gives_a_reason_not_an_interval() -> None:
    from fairpolicy.stats import RankingStats

    order = np.array([0, 1, 0, 1, 1, 0, 0, 1], dtype=np.int64)
    st = GroupStats(
        ("g",), ("a", "b"), (), np.zeros((2, 0, 0), np.int64), sizes=np.array([4, 4]),
        ranking=RankingStats(order),
    )  # fmt: skip
    reps = rs.draw(st, 20, 0, rows=True)
    assert reps.reason is not None and "resample: rows" in reps.reason
    spec = REGISTRY["exposure_ratio"]
    iv = bs.confidence(spec, st, np.ones(2, bool), {}, 0.9, reps, 0.95, "percentile")
    assert iv.low is None and iv.reason == reps.reason
