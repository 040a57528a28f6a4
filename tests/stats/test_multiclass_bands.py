"""The band for multi-class metrics that take a max or mean over classes (issue 19).

``macro_equal_opportunity_multiclass`` (mean over classes of each class's TPR gap
max − min) had no band form: its percentile interval lay entirely above the truth (coverage
0.000 at n = 50, 0.29 at n = 200). The max-over-classes siblings had a band over the
values of the class that was worst *on each replicate* — coordinates that changed meaning
from one replicate to the next. Now the band is joint over every (group, class) value and
projected onto the max (mean) over classes. ``benchmarks/ci_groups.py --metrics
meo,meq,mdp,mieo`` measures coverage at scale; these are fast pins: the form of each
metric, the projection against a brute force, coverage at a true gap of 0 and no wrong
PASS at a positive gap on a handful of seeds, the point always inside, and a CLI run.
"""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from fairpolicy.cli import main
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats, bands
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import resample as rs
from tests.helpers import control, write_policy

#: metric key, params → (reduce, combine, parts) of the band's form
FORMS: list[tuple[str, dict[str, str], tuple[str, str, tuple[str, ...]]]] = [
    ("macro_equal_opportunity_multiclass", {}, ("gap", "mean", (bands.CLASSES,))),
    ("multiclass_equal_opportunity", {}, ("gap", "max", (bands.CLASSES,))),
    ("multiclass_demographic_parity", {}, ("gap", "max", (bands.CLASSES,))),
    ("multiclass_demographic_parity", {"aggregation": "macro"}, ("gap", "mean", (bands.CLASSES,))),
    ("weighted_demographic_parity_multiclass", {}, ("gap", "max", (bands.CLASSES,))),
    ("predictive_parity_multiclass", {}, ("gap", "max", (bands.CLASSES,))),
    ("micro_equalized_odds_multiclass", {}, ("gap", "sum", ("groups", "groups"))),
]

#: per-class TPR/accuracy model of ``benchmarks/ci_groups.py``: priors, P(ŷ = y) = 0.7 + δ
PRIOR = np.array([0.5, 0.3, 0.2])


def _probabilities(delta: float) -> np.ndarray:
    acc = 0.7 + delta
    m = np.full((3, 3), (1.0 - acc) / 2.0)
    np.fill_diagonal(m, acc)
    return PRIOR[:, None] * m


def _stats(counts: Any) -> GroupStats:
    c = np.asarray(counts, dtype=np.int64).reshape(-1, 3, 3)
    return GroupStats(("g",), tuple(f"g{i}" for i in range(len(c))), ("0", "1", "2"), c)


def _sample(deltas: list[float], n: int, seed: int) -> GroupStats:
    rng = np.random.default_rng((19, seed))
    return _stats([rng.multinomial(n, _probabilities(d).ravel()) for d in deltas])


def _truth(key: str, deltas: list[float]) -> float:
    big = np.stack([np.rint(_probabilities(d) * 1e12) for d in deltas])
    value = REGISTRY[key].fn(_stats(big), {}).value
    assert value is not None
    return float(value)


@pytest.mark.parametrize(("key", "params", "form"), FORMS)
def test_each_multiclass_metric_gets_the_joint_band(
    key: str, params: dict[str, str], form: tuple[str, str, tuple[str, ...]]
) -> None:
    st = _sample([0.0, 0.05, 0.1], 300, 1)
    spec = REGISTRY[key]
    mv = spec.fn(st, params)
    assert mv.value is not None
    reps = rs.draw(st, 100, 0)
    rv = bs.replicate_values(spec, st, np.ones(3, bool), params, reps)
    ok = ~np.isnan(rv.values)
    chosen = [f for f, c in rv.forms.items() if bands.usable(f, c[ok]) is not None]
    assert chosen and (chosen[0].reduce, chosen[0].combine, chosen[0].parts) == form
    iv = bs.confidence(spec, st, np.ones(3, bool), params, mv.value, reps, 0.95, "bca")
    assert iv.method == "band" and iv.note and "sup-t band" in iv.note
    assert iv.low is not None and iv.high is not None and iv.low <= mv.value <= iv.high
    if form[2] == (bands.CLASSES,):
        # the band is over every (group, class) value, and the per-group intervals shown
        # are those of the class driving the value
        assert "of the 9 per-group values" in iv.note and "over the classes" in iv.note
        worst = mv.details["classes"].index(mv.details["worst_class"])
        assert iv.groups is not None
        for g, (lo, hi) in iv.groups.items():
            assert lo <= mv.details["per_group"][g][worst] <= hi


def test_the_worst_class_alone_is_not_banded() -> None:
    """On the data the max-over-classes value is also max − min of the per-group values
    shown (the worst class's), and on every replicate too — but of another class on some
    replicates. That form must not be offered beside the per-class one."""
    st = _sample([0.0, 0.0, 0.0], 60, 3)
    mv = REGISTRY["multiclass_demographic_parity"].fn(st, {})
    forms = bands.candidates(mv)
    assert forms and all(f.per_class for f in forms)
    with_groups_only = type(mv)(mv.value, mv.groups)
    assert [f.parts for f in bands.candidates(with_groups_only)] == [("groups",)]


def _range_over_box(
    form: bands.Form, low: np.ndarray, high: np.ndarray, g: int, k: int, cut: set[int]
) -> tuple[float, float]:
    """Brute force over the (group × class) box: every coordinate at its ends and at the
    ends of the other groups of its class (where the extremes of a class's gap lie)."""
    grid = []
    for j in range(g * k):
        cls = j % k
        ends = np.r_[[low[i * k + cls] for i in range(g)], [high[i * k + cls] for i in range(g)]]
        grid.append(np.unique(np.r_[low[j], high[j], ends].clip(low[j], high[j])))
    vals = []
    for combo in itertools.product(*grid):
        parts: list[dict[str, float | None]] = [
            {str(i): (None if i * k + c in cut else float(combo[i * k + c])) for i in range(g)}
            for c in range(k)
        ]
        v = bands.evaluate(form, parts)
        if v is not None:
            vals.append(v)
    return min(vals), max(vals)


@settings(max_examples=60, deadline=None)
@given(
    shape=hst.sampled_from([(2, 2), (2, 3), (3, 2)]),
    data=hst.data(),
    combine=hst.sampled_from(["max", "mean"]),
)
def test_projection_over_classes_is_the_range_over_the_band(
    shape: tuple[int, int], data: hst.DataObject, combine: str
) -> None:
    g, k = shape
    low = np.array(data.draw(hst.lists(hst.floats(0, 1), min_size=g * k, max_size=g * k)))
    high = low + np.array(data.draw(hst.lists(hst.floats(0, 0.5), min_size=g * k, max_size=g * k)))
    # an undefined (group, class) cell: its class is compared over the other groups
    cut = set(data.draw(hst.lists(hst.integers(0, g * k - 1), max_size=1)))
    form = bands.Form("gap", combine, (bands.CLASSES,))  # type: ignore[arg-type]
    # the band's coordinates are laid out per class (part), groups inside
    keep = [(c, i) for c in range(k) for i in range(g) if i * k + c not in cut]
    order = [i * k + c for c, i in keep]
    sizes = [sum(1 for c2, _ in keep if c2 == c) for c in range(k)]
    if all(s < 2 for s in sizes):
        return
    band = bands.Band(low[order], high[order], 1.0, np.ones(len(order)))
    lo, hi = bands.project(form, band, sizes)
    ref_lo, ref_hi = _range_over_box(form, low, high, g, k, cut)
    assert lo == pytest.approx(ref_lo, abs=1e-12) and hi == pytest.approx(ref_hi, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    lows=hst.lists(hst.floats(0.0, 1.0), min_size=2, max_size=4),
    widths=hst.lists(hst.floats(0.0, 0.5), min_size=4, max_size=4),
)
def test_projection_of_twice_the_gap(lows: list[float], widths: list[float]) -> None:
    low = np.array(lows)
    high = low + np.array(widths[: len(lows)])
    form = bands.Form("gap", "sum", ("groups", "groups"))
    g = len(low)
    band = bands.Band(np.r_[low, low], np.r_[high, high], 1.0, np.ones(2 * g))
    lo, hi = bands.project(form, band, [g, g])
    one = bands.project(bands.Form("gap", "one", ("groups",)), bands.Band(low, high, 1.0, low), [g])
    assert (lo, hi) == pytest.approx((2 * one[0], 2 * one[1]), abs=1e-12)


@pytest.mark.parametrize(
    "key", ["macro_equal_opportunity_multiclass", "multiclass_equal_opportunity"]
)
def test_a_true_gap_of_zero_is_covered(key: str) -> None:
    """Three groups of 50 with identical rates: the plug-in value is biased up (+0.16 for
    the macro mean), and the percentile interval lies above 0 nearly always (the issue
    measured coverage 0.000); the band reaches the truth in ≥ 18 of 20 samples."""
    spec = REGISTRY[key]
    band_hits = pct_hits = 0
    for seed in range(20):
        st = _sample([0.0, 0.0, 0.0], 50, seed)
        point = spec.fn(st, {}).value
        assert point is not None and point > 0
        reps = rs.draw(st, 200, seed)
        keep = np.ones(3, dtype=bool)
        iv = bs.confidence(spec, st, keep, {}, point, reps, 0.95, "percentile")
        old = bs.confidence(spec, st, keep, {}, point, reps, 0.95, "percentile", band=False)
        assert iv.method == "band" and iv.low is not None and old.low is not None
        band_hits += iv.low <= 0.0
        pct_hits += old.low <= 0.0
    assert band_hits >= 18, band_hits
    assert pct_hits <= 4, pct_hits


@pytest.mark.parametrize(
    "key",
    [
        "macro_equal_opportunity_multiclass",
        "multiclass_equal_opportunity",
        "micro_equalized_odds_multiclass",
    ],
)
def test_ci_upper_does_not_pass_at_a_positive_true_gap(key: str) -> None:
    """Threshold at the true value (offsets 0, 0.05, 0.1): ``ci_upper`` passes when the
    whole interval lies below it — a wrong PASS, allowed ≤ 2.5 %; none of 20 samples of
    two group sizes may do it, and the truth must be covered in ≥ 18."""
    spec = REGISTRY[key]
    deltas = [0.0, 0.05, 0.1]
    truth = _truth(key, deltas)
    assert truth > 0
    for n in (50, 400):
        below = covered = 0
        for seed in range(20):
            st = _sample(deltas, n, seed)
            point = spec.fn(st, {}).value
            assert point is not None
            reps = rs.draw(st, 200, seed)
            iv = bs.confidence(spec, st, np.ones(3, bool), {}, point, reps, 0.95, "percentile")
            assert iv.method == "band" and iv.low is not None and iv.high is not None
            below += iv.high < truth
            covered += iv.low <= truth <= iv.high
        assert below == 0, (n, below)
        assert covered >= 18, (n, covered)


MULTICLASS_KEYS = sorted(
    k
    for k, s in REGISTRY.items()
    if "multiclass" in s.tasks and not s.needs_scores and s.key == k and k != "samd_fairness_score"
)


@settings(max_examples=40, deadline=None)
@given(
    key=hst.sampled_from(MULTICLASS_KEYS),
    cells=hst.lists(hst.lists(hst.integers(0, 25), min_size=9, max_size=9), min_size=2, max_size=4),
    method=hst.sampled_from(bs.METHODS),
    seed=hst.integers(0, 3),
)
def test_every_multiclass_interval_contains_its_point_estimate(
    key: str, cells: list[list[int]], method: str, seed: int
) -> None:
    st = _stats(cells)
    spec = REGISTRY[key]
    mv = spec.fn(st, {})
    if mv.value is None:
        return
    keep = np.ones(len(cells), dtype=bool)
    iv = bs.confidence(spec, st, keep, {}, mv.value, rs.draw(st, 60, seed), 0.9, method)
    if iv.low is None or iv.high is None:
        assert iv.reason
        return
    assert iv.low <= mv.value <= iv.high
    assert np.isfinite([iv.low, iv.high]).all()
    lo, hi = spec.value_range
    assert lo - 1e-12 <= iv.low and iv.high <= hi + 1e-12


def test_cli_reports_the_band_for_the_macro_metric(tmp_path: Path) -> None:
    """End to end: ``--bootstrap`` on a 3-class CSV; the JSON interval of
    ``macro_equal_opportunity_multiclass`` is the band, contains the value, and a
    ``ci_upper`` control at a threshold inside the interval does not pass."""
    st = _sample([0.0, 0.0, 0.0], 80, 7)
    rows = ["y_true,y_pred,sex"]
    for g, name in enumerate(("F", "M", "X")):
        for t, p in itertools.product(range(3), range(3)):
            rows += [f"{t},{p},{name}"] * int(st.counts[g, t, p])
    data = tmp_path / "d.csv"
    data.write_text("\n".join(rows) + "\n")
    key = "macro_equal_opportunity_multiclass"
    value = REGISTRY[key].fn(st, {}).value
    assert value is not None
    pol = write_policy(
        tmp_path,
        control(metric=key, threshold=f"{value + 0.01:.4f}", decision="ci_upper", min_samples=1),
    )
    out = tmp_path / "r.json"
    argv = ["check", str(pol), str(data), "--bootstrap", "300", "--seed", "2"]
    code = main([*argv, "-o", f"json={out}"], stdout=io.StringIO())
    f = json.loads(out.read_text())["findings"][0]
    assert f["ci"]["method"] == "band", f["ci"]
    assert f["value"] == pytest.approx(value)
    assert f["ci"]["low"] <= f["value"] <= f["ci"]["high"]
    assert f["ci"]["high"] > value + 0.01  # the band is wider than the distance to t
    assert f["status"] != "pass" and code != 0


def test_the_floor_of_a_class_rate_is_its_own_rows() -> None:
    """A recall of 1 seen on 5 rows of a class never varies in the replicates; its band
    must still have a half-width near the rule of three (c/5), not c/n_g of the group's
    100 rows: the floor reads the rate's denominator (``MetricValue.cell_rows``)."""
    counts = [
        [[40, 5, 5], [5, 30, 5], [0, 0, 5]],  # class 2: 5 rows, all recalled
        [[38, 6, 6], [6, 28, 6], [1, 1, 8]],
    ]
    st = _stats(counts)
    spec = REGISTRY["multiclass_equal_opportunity"]
    mv = spec.fn(st, {})
    form = bands.Form("gap", "max", (bands.CLASSES,))
    layout = bands.layout_of(form, mv)
    rows = bands.rows_behind(form, mv, layout)
    assert rows.tolist() == [50, 50, 40, 40, 5, 10]  # per class, per group: true rows
    assert mv.value is not None
    reps = rs.draw(st, 200, 0)
    iv = bs.confidence(spec, st, np.ones(2, bool), {}, mv.value, reps, 0.95, "percentile")
    assert iv.method == "band"
    rv = bs.replicate_values(spec, st, np.ones(2, bool), {}, reps)
    c = bands.usable(form, rv.forms[form][~np.isnan(rv.values)])
    assert c is not None
    pts = np.array([mv.details["per_group"][g][j] for j, lay in enumerate(layout) for g in lay])
    bd = bands.sup_t(c, pts, 0.95, 1.0 / rows, (0.0, 1.0))
    assert np.nanstd(c[:, 4]) == 0.0  # the replicates never move it
    assert 1.0 - bd.low[4] >= 2.0 / 5.0  # c ≥ 2: half-width ≥ 2/5


def test_a_cell_lost_in_a_few_replicates_keeps_the_band_and_its_floor() -> None:
    """A (group, class) recall resting on 4 rows is undefined in ≈ 2 % of the replicates
    (none of its rows drawn): the band still applies (the value counts where defined), and
    it stays clipped to [0, 1] with the floor of a rate."""
    counts = [
        [[40, 5, 5], [5, 30, 5], [0, 0, 4]],  # class 2: 4 rows in g0
        [[38, 6, 6], [6, 28, 6], [2, 2, 8]],
    ]
    st = _stats(counts)
    spec = REGISTRY["macro_equal_opportunity_multiclass"]
    mv = spec.fn(st, {})
    assert mv.value is not None
    reps = rs.draw(st, 400, 3)
    rv = bs.replicate_values(spec, st, np.ones(2, bool), {}, reps)
    form = bands.Form("gap", "mean", (bands.CLASSES,))
    coords = rv.forms[form][~np.isnan(rv.values)]
    lost = np.isnan(coords[:, 4]).mean()
    assert 0.0 < lost <= bands.MISSING_SHARE
    iv = bs.confidence(spec, st, np.ones(2, bool), {}, mv.value, reps, 0.95, "percentile")
    assert iv.method == "band" and iv.low is not None and iv.high is not None
    assert 0.0 <= iv.low <= mv.value <= iv.high <= 1.0
    assert iv.groups is not None
    for lo, hi in iv.groups.values():  # the worst class's band: clipped, floored
        assert 0.0 <= lo < hi <= 1.0
