"""A small, fast version of ``benchmarks/explore_fdr.py``: planted slices are recovered and
the false-discovery rate stays at the stated level over repeated simulations. Without the
Benjamini–Hochberg step (raw p ≤ 0.05 over ~85 slices) the all-null FDR would be near 1."""

from __future__ import annotations

from benchmarks.explore_fdr import simulate


def test_all_null_fdr_is_controlled() -> None:
    # all nulls: FDR = P(any discovery) ≤ q; 40 runs, binomial sd ≈ 0.035
    out = simulate(runs=40, rows=2000, effect=0.0, seed=7)
    assert out.fdr <= 0.15, out


def test_planted_slice_recovered_at_controlled_fdr() -> None:
    out = simulate(runs=25, rows=4000, effect=0.2, seed=11)
    assert out.planted_power >= 0.9, out
    assert out.fdr <= 0.15, out
