"""Planted-slice recovery of ``fairpolicy explore``: observed FDR and power.

Each simulation draws ``rows`` rows with independent uniform attributes
(``a`` 2 values, ``b`` 4 values, ``c`` 3 values, ``d`` 5 values; ``c`` and ``d`` are pure
noise), a base selection probability ``base`` and a planted slice ``a=a0 ∧ b=b1`` selected
with probability ``base + effect``. In the population a slice's selection rate differs from
the rest's exactly when the slice's conditions involve ``a`` or ``b`` (the attributes are
independent), so those are the true discoveries and every slice on ``c``/``d`` only is a
true null. The false-discovery proportion of a run is false discoveries / max(1,
discoveries); the FDR is its mean over the runs. Power: the share of runs recovering the
planted slice itself, and the mean share of non-null slices found.

Benjamini–Hochberg controls the FDR at ``q·m0/m`` under independence or positive
dependence of the tests; slices overlap, so that is checked here, not assumed.

    python benchmarks/explore_fdr.py [--runs 200] [--rows 5000] [--effect 0.08]
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fairpolicy.explore import explore

SIZES = {"a": 2, "b": 4, "c": 3, "d": 5}
SIGNAL = {"a", "b"}


@dataclass
class Outcome:
    runs: int
    fdr: float
    planted_power: float
    power: float
    mean_family: float
    seconds: float


def draw(rng: np.random.Generator, rows: int, base: float, effect: float) -> object:
    import pyarrow as pa

    cols = {k: rng.integers(0, n, rows) for k, n in SIZES.items()}
    planted = (cols["a"] == 0) & (cols["b"] == 1)
    prob = np.where(planted, base + effect, base)
    y_true = (rng.random(rows) < 0.5).astype(np.int8)
    y_pred = (rng.random(rows) < prob).astype(np.int8)
    return pa.table(
        {
            **{
                k: pa.array([f"{k}{v}" for v in range(SIZES[k])]).take(pa.array(c))
                for k, c in cols.items()
            },
            "y_true": y_true,
            "y_pred": y_pred,
        }
    )


def simulate(
    runs: int = 200,
    rows: int = 5000,
    base: float = 0.3,
    effect: float = 0.08,
    alpha: float = 0.05,
    depth: int = 2,
    seed: int = 20260,
) -> Outcome:
    rng = np.random.default_rng(seed)
    signal = SIGNAL if effect != 0 else set()  # no effect: every slice is a true null
    fdp, planted_hits, power, family = [], 0, [], []
    start = time.perf_counter()
    for _ in range(runs):
        table = draw(rng, rows, base, effect)
        res = explore(
            table,
            target="y_true",
            prediction="y_pred",
            attributes=list(SIZES),
            depth=depth,
            min_support=0.01,
            alpha=alpha,
        )
        tested = [s for s in res.search.slices if s.p_value is not None]
        nonnull = [s for s in tested if {a for a, _ in s.conditions} & signal]
        found = [s for s in tested if s.significant]
        false = [s for s in found if not ({a for a, _ in s.conditions} & signal)]
        fdp.append(len(false) / max(1, len(found)))
        planted_hits += any(
            s.significant and set(s.conditions) == {("a", "a0"), ("b", "b1")} for s in tested
        )
        power.append(sum(s.significant for s in nonnull) / max(1, len(nonnull)))
        family.append(res.search.family_size)
    return Outcome(
        runs,
        float(np.mean(fdp)),
        planted_hits / runs,
        float(np.mean(power)),
        float(np.mean(family)),
        time.perf_counter() - start,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--effect", type=float, default=0.08)
    ap.add_argument("--fdr", type=float, default=0.05)
    a = ap.parse_args()
    for effect in sorted({0.0, a.effect}):
        o = simulate(a.runs, a.rows, effect=effect, alpha=a.fdr)
        print(
            f"effect={effect:.2f} rows={a.rows} runs={o.runs} FDR target={a.fdr}: "
            f"observed FDR={o.fdr:.4f}  planted-slice power={o.planted_power:.3f}  "
            f"non-null power={o.power:.3f}  family size≈{o.mean_family:.0f}  "
            f"({o.seconds:.1f} s)"
        )


if __name__ == "__main__":
    main()
