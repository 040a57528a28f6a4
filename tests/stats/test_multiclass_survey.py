"""Multi-class gaps under survey (fractional) sample weights (issue 28, the grid's weighted
multi-class cells).

``MetricValue.cell_rows`` (the rows behind each (group, class) rate, the band's
standard-error floor) was read from the metric's *exact* denominators. Under fractional
weights those are the weights' exact sums in units of 2**-1074 (``stats/exactsum.py``),
integers of some 330 digits: the band then stopped with ``OverflowError: int too large to
convert to float`` — every survey-weighted multi-class control with an interval was an
internal error. (Main meanwhile dropped ``cell_rows`` to None under survey weights, which
also ends the crash but floors the band at the groups' total *weight*.) The rows behind a
rate are now counted from the survey units.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Policy
from fairpolicy.runner import check
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import resample as rs
from fairpolicy.stats.survey import build_survey_stats
from tests.metrics.test_registry_common import common_control

KEYS = (
    "multiclass_equal_opportunity",
    "macro_equal_opportunity_multiclass",
    "multiclass_demographic_parity",
    "predictive_parity_multiclass",
)


def _rows(seed: int, n: int = 300, groups: int = 3) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    g = np.repeat(np.arange(groups), n)
    y = rng.choice(3, len(g), p=[0.5, 0.3, 0.2])
    hit = rng.random(len(g)) < 0.7
    p = np.where(hit, y, (y + rng.integers(1, 3, len(g))) % 3)
    w = np.where(rng.random(len(g)) < 0.5, 2.0, 4.0) * 1.1  # fractional survey weights
    return g, y, p, w


def _survey_stats(seed: int):  # type: ignore[no-untyped-def]
    g, y, p, w = _rows(seed)
    dims = {"g": (g, ["g0", "g1", "g2"])}
    return build_survey_stats(y, p, ("0", "1", "2"), dims, [("g",)], None, None, w)[("g",)], (
        g,
        y,
        p,
    )


@pytest.mark.parametrize("key", KEYS)
def test_cell_rows_are_the_rows_not_the_exact_weight_sums(key: str) -> None:
    st, (g, y, p) = _survey_stats(1)
    mv = REGISTRY[key].fn(st, {})
    assert mv.value is not None and mv.cell_rows is not None
    for i, name in enumerate(st.groups):
        rows = mv.cell_rows[name]
        if key in ("multiclass_equal_opportunity", "macro_equal_opportunity_multiclass"):
            want = [int(((g == i) & (y == c)).sum()) for c in range(3)]  # true rows of c
        elif key == "predictive_parity_multiclass":
            want = [int(((g == i) & (p == c)).sum()) for c in range(3)]  # predicted c
        else:
            want = [int((g == i).sum())] * 3  # the group's rows
        assert rows == want


@pytest.mark.parametrize("key", KEYS[:2])
def test_the_band_is_built_under_survey_weights(key: str) -> None:
    """Before the fix: OverflowError in ``bands.rows_behind``."""
    st, _ = _survey_stats(2)
    spec = REGISTRY[key]
    mv = spec.fn(st, {})
    assert mv.value is not None
    keep = np.ones(len(st.groups), dtype=bool)
    iv = bs.confidence(spec, st, keep, {}, mv.value, rs.draw(st, 100, 0), 0.95, "percentile")
    assert iv.method == "band", iv
    assert iv.low is not None and iv.high is not None
    assert iv.low <= mv.value <= iv.high


def test_check_decides_a_survey_weighted_multiclass_control() -> None:
    """End to end: no internal error, an interval, and the rows (not the weight) behind
    the groups."""
    g, y, p, w = _rows(3, n=150)
    df = pd.DataFrame(
        {"y_true": y, "y_pred": p, "grp": np.array(["A", "B", "C"])[g], "w": w.round(3)}
    )
    c = common_control("multiclass_equal_opportunity", {}, "c")
    c = c.model_copy(
        update={
            "inputs": {
                "target": "y_true",
                "prediction": "y_pred",
                "dimension": "grp",
                "weight": "w",
            },
            "min_samples": 1,
            "params": {**c.params, "weight_kind": "survey"},
        }
    )
    f = check(Policy(form="list", controls=(c,)), df, bootstrap=200, seed=1).findings[0]
    assert f.value is not None
    assert f.ci is not None and f.ci.low is not None and f.ci.high is not None
    assert f.ci.low <= f.value <= f.ci.high
