"""The Šidák score box of multi-class gaps over classes (issue 28, item 6).

When a (group, class) cell rests on so few rows that the band cannot be built (it is lost
in more than 5 % of the replicates), the interval was the percentile interval, which lay
above a true value of 0 in every such case, or none at all. Now it is the Šidák box of
the cells' Wilson intervals. Oracles: statsmodels' Wilson interval at the Šidák level and
a brute-force projection; coverage at parity on small groups; the bias at parity against
the metric itself on simulated parity samples.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats, bands, rate_forms
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import resample as rs

#: class priors with a rare class: at 30 rows per group it has about 2 rows per group
PRIOR = np.array([0.62, 0.3, 0.08])
KEYS = ["macro_equal_opportunity_multiclass", "multiclass_equal_opportunity"]


def _stats(counts: np.ndarray) -> GroupStats:
    c = np.asarray(counts, dtype=np.int64).reshape(-1, 3, 3)
    return GroupStats(("g",), tuple(f"g{i}" for i in range(len(c))), ("0", "1", "2"), c)


def _sample(groups: int, n: int, seed: int) -> GroupStats:
    m = np.full((3, 3), 0.15)
    np.fill_diagonal(m, 0.7)
    p = (PRIOR[:, None] * m).ravel()
    rng = np.random.default_rng((28, seed))
    return _stats(np.stack([rng.multinomial(n, p) for _ in range(groups)]))


@pytest.mark.parametrize("key", KEYS)
def test_every_run_gets_an_interval_that_covers_parity(key: str) -> None:
    """5 groups of 30 at parity: every sample gets an interval (the band where it can be
    built, else the box, never the percentile fallback), and it reaches the truth 0."""
    spec = REGISTRY[key]
    keep = np.ones(5, dtype=bool)
    runs = hits = boxes = 0
    for seed in range(40):
        st = _sample(5, 30, seed)
        mv = spec.fn(st, {})
        if mv.value is None:
            continue
        iv = bs.confidence(spec, st, keep, {}, mv.value, rs.draw(st, 100, seed), 0.95, "percentile")
        runs += 1
        assert iv.low is not None and iv.high is not None, iv.reason
        assert iv.method in ("band", "score"), iv.method
        assert iv.low <= mv.value <= iv.high
        boxes += iv.method == "score"
        hits += iv.low <= 0.0
    assert runs >= 35 and boxes >= 5  # the box path is exercised
    assert hits / runs >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / runs)


def test_box_matches_statsmodels_wilson_and_the_projection() -> None:
    from statsmodels.stats.proportion import proportion_confint

    st = _sample(3, 40, 7)
    spec = REGISTRY["multiclass_equal_opportunity"]
    mv = spec.fn(st, {})
    form = next(f for f in bands.candidates(mv) if f.per_class)
    got = rate_forms.class_box(form, mv, st, 0.95)
    assert got is not None
    layout = bands.layout_of(form, mv)
    cells = sum(len(x) for x in layout)
    each = 0.95 ** (1 / cells)
    lows, highs = [], []
    for j, names in enumerate(layout):
        for g in names:
            i = st.groups.index(g)
            m = int(st.counts[i, j].sum())
            x = int(st.counts[i, j, j])
            if 0 < x < m:
                lo, hi = proportion_confint(x, m, alpha=1 - each, method="wilson")
            else:
                lo, hi = proportion_confint(x, m, alpha=1 - each, method="beta")
            lows.append(float(lo))
            highs.append(float(hi))
    # the max over classes of each class's gap over the box (brute: ends of the box)
    start, ref_lo, ref_hi = 0, [], []
    for names in layout:
        lo_c = np.array(lows[start : start + len(names)])
        hi_c = np.array(highs[start : start + len(names)])
        start += len(names)
        ref_lo.append(max(0.0, lo_c.max() - hi_c.min()))
        ref_hi.append(
            max(hi_c[a] - lo_c[b] for a in range(len(names)) for b in range(len(names)) if a != b)
        )
    assert mv.value is not None
    assert got[0] == pytest.approx(min(max(ref_lo), mv.value), abs=1e-6)
    assert got[1] == pytest.approx(max(max(ref_hi), mv.value), abs=1e-6)


def test_no_box_under_survey_weights_or_for_other_forms() -> None:
    st = _sample(3, 40, 2)
    mv = REGISTRY["multiclass_equal_opportunity"].fn(st, {})
    one = bands.Form("gap", "one", ("groups",))
    assert rate_forms.class_box(one, mv, st, 0.95) is None
    no_rows = type(mv)(mv.value, mv.groups, (), mv.details)
    form = next(f for f in bands.candidates(mv) if f.per_class)
    assert rate_forms.class_box(form, no_rows, st, 0.95) is None


@pytest.mark.parametrize("key", KEYS)
def test_bias_at_parity_matches_the_metric_on_parity_samples(key: str) -> None:
    """parity_bias simulates the per-class recalls; the oracle draws whole confusion
    tables at the pooled recall of each class and evaluates the metric itself."""
    st = _sample(5, 30, 3)
    spec = REGISTRY[key]
    mv = spec.fn(st, {})
    form = next(f for f in bands.candidates(mv) if f.per_class)
    bias = rate_forms.parity_bias(form, mv)
    assert bias is not None and bias > 0.1  # upward, large at 30 rows per group
    rows = st.counts.sum(axis=2)  # (groups, classes): the recalls' denominators
    pooled = st.counts.diagonal(axis1=1, axis2=2).sum(axis=0) / rows.sum(axis=0)
    rng = np.random.default_rng(1)
    sims, total = 1500, 0.0
    for _ in range(sims):
        tables = np.zeros_like(st.counts)
        for i in range(len(st.groups)):
            for c in range(3):
                x = rng.binomial(rows[i, c], pooled[c])
                tables[i, c, c] = x
                tables[i, c, (c + 1) % 3] = rows[i, c] - x
        v = spec.fn(_stats(tables), {}).value
        assert v is not None
        total += v
    assert bias == pytest.approx(total / sims, abs=0.01)


def test_details_report_the_bias_with_an_interval(tmp_path: object) -> None:
    import pandas as pd

    import fairpolicy

    rng = np.random.default_rng(4)
    n = 150
    y = rng.choice(3, size=n, p=PRIOR)
    right = rng.random(n) < 0.7
    pred = np.where(right, y, (y + 1) % 3)
    df = pd.DataFrame(
        {"y": y.astype(str), "p": pred.astype(str), "g": np.repeat(list("abcde"), 30)}
    )
    policy = [
        {
            "control-id": "meq",
            "props": [
                {"name": "metric_key", "value": "multiclass_equal_opportunity"},
                {"name": "threshold", "value": "0.5"},
                {"name": "operator", "value": "<"},
                {"name": "input.target", "value": "y"},
                {"name": "input.prediction", "value": "p"},
                {"name": "input.dimension", "value": "g"},
                {"name": "min_samples", "value": "1"},
            ],
        }
    ]
    with_ci = fairpolicy.check(policy, df, bootstrap=100, seed=1).findings[0]
    assert with_ci.ci is not None and with_ci.ci.low is not None
    bias = with_ci.details["bias"]
    assert 0.0 < bias["at_parity"] < 1.0 and "where the truth is 0" in bias["note"]
    without = fairpolicy.check(policy, df).findings[0]
    assert "bias" not in without.details
