"""The gap's upper end (and a ratio's lower end) at the per-comparison level (issue 28).

max_ij U_ij ≥ U_{i*j*} for the true extreme pair (i*, j*), so the upper end is below the
true gap only when that one pair's interval misses: each pair's Newcombe interval at the
level itself suffices (one-sided ≤ α/2), where the Šidák level over all pairs was used.
Checked by simulation (wrong PASS at a true gap of 0.2, coverage at parity) and against
the Šidák–Wilson per-group box, which it must beat at three or more groups.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairpolicy.stats import proportions as pr
from fairpolicy.stats import rate_forms

Z95 = pr.z_of(0.95)


def _draw(rates: list[float], n: int, rng: np.random.Generator) -> list[pr.Proportion]:
    return [pr.Proportion(float(rng.binomial(n, p)), float(n)) for p in rates]


@pytest.mark.parametrize("groups", [3, 5, 8])
def test_upper_end_per_comparison_holds_and_beats_the_box(groups: int) -> None:
    rng = np.random.default_rng(groups)
    sims = 600
    se = math.sqrt(0.025 * 0.975 / sims)
    # a true gap of 0.2 with one extreme pair: the upper end below it is a wrong PASS
    rates = [0.5] * (groups - 2) + [0.3, 0.5]
    wrong = sum(
        rate_forms.bounds("gap", "one", [_draw(rates, 100, rng)], 0.95)[1] < 0.2
        for _ in range(sims)
    )
    assert wrong / sims <= 0.025 + 2 * se
    # parity: coverage, and the width against the Šidák–Wilson box
    cover, ours, box = 0, 0.0, 0.0
    zb = pr.z_of(pr.sidak(0.95, groups))
    for _ in range(sims):
        props = _draw([0.3] * groups, 100, rng)
        lo, hi = rate_forms.bounds("gap", "one", [props], 0.95)
        cover += lo <= 0.0
        # oracle: the largest folded upper end of the pairs' 95 % Newcombe intervals
        ref = max(
            pr.folded(*pr.newcombe(props[i].x, props[i].m, props[j].x, props[j].m, Z95))[1]
            for i, j in pr.pairs(groups)
        )
        assert hi == pytest.approx(ref, abs=1e-12)
        ivs = [pr.rate_interval(p.x, p.m, zb) for p in props]
        b_lo = max(0.0, max(a for a, _ in ivs) - min(b for _, b in ivs))
        b_hi = max(b for _, b in ivs) - min(a for a, _ in ivs)
        ours += hi - lo
        box += b_hi - b_lo
    assert cover / sims >= 0.95 - 2 * math.sqrt(0.05 * 0.95 / sims)
    assert ours / box < 0.9


def test_two_groups_unchanged_and_mean_of_parts_keeps_sidak_over_parts() -> None:
    a, b = pr.Proportion(30, 100), pr.Proportion(45, 100)
    _lo, hi = rate_forms.bounds("gap", "one", [[a, b]], 0.95)
    _nlo, nhi = pr.folded(*pr.newcombe(30, 100, 45, 100, pr.z_of(0.95)))
    assert hi == pytest.approx(nhi)
    # the mean of two parts: either part's miss moves it, so Šidák over the two parts
    _, hi_mean = rate_forms.bounds("gap", "mean", [[a, b], [a, b]], 0.95)
    _, hi_max = rate_forms.bounds("gap", "max", [[a, b], [a, b]], 0.95)
    z2 = pr.z_of(pr.sidak(0.95, 2))
    assert hi_mean == pytest.approx(pr.folded(*pr.newcombe(30, 100, 45, 100, z2))[1])
    assert hi_max == pytest.approx(nhi) and hi_mean > hi_max


def test_ratio_lower_end_per_comparison() -> None:
    rng = np.random.default_rng(9)
    sims = 600
    rates = [0.5, 0.5, 0.4]  # true min ÷ max 0.8: a lower end above it is a wrong PASS
    wrong = 0
    for _ in range(sims):
        lo, _ = rate_forms.bounds("ratio", "one", [_draw(rates, 200, rng)], 0.95)
        wrong += lo > 0.8
    assert wrong / sims <= 0.025 + 2 * math.sqrt(0.025 * 0.975 / sims)
