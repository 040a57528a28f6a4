"""Power and errors of the interval of a baseline change of a gap of binary rates (issue 28).

Two releases are two independent binomial samples of n rows per group. For each cell the
script counts how often the change is *flagged* (the low end of its 95 % interval above
δ, the ``regressed`` verdict) by

- ``counts``: fairpolicy's interval from both runs' counts (``stats/change.py``: signed
  Newcombe intervals, MOVER, intersection–union low end), what ``--baseline`` uses for a
  gap of binary rates with score intervals;
- ``stored``: the MOVER of the two runs' stored score intervals (``baseline.mover`` of
  ``rate_forms.bounds``), the method before;
- ``wald``: the signed Wald interval of (p̂₁ − p̂₂)ₙₑ𝓌 − (p̂₁ − p̂₂)ₒₗ𝒹 (two groups only):
  not an interval of the change of |gap| (it flags a gap that merely changed sign);
- ``abs Wald``: the Wald interval of the change of the metric itself (two groups only),
  |δ̂ₙₑ𝓌| − |δ̂ₒₗ𝒹| ± z·√(vₙₑ𝓌 + vₒₗ𝒹), v the Wald variance of each run's difference.
  It is the intersection–union test of ``counts`` with Wald parts in place of the MOVER
  of Newcombe intervals: min(s₁, s₂) = δₙ − |δₒ| for δₙ > 0, so low > c exactly when both
  Wald bounds of s₁ = δₙ − δₒ and s₂ = δₙ + δₒ exceed c (docs/statistics.md, "Issue 28,
  third part").

The cells include the null's least-favourable points for a claim "the gap grew": an
unchanged gap of 0, 0.05 and 0.20 (same sign) and a gap that only changed sign (0.05,
0.10), where a valid rule flags at most 2.5 %,
and the coverage of the true change of max − min by ``counts``. MC s.e. in brackets.

    python benchmarks/change_power.py --reps 1000
"""

from __future__ import annotations

import argparse
import math
import time
from statistics import NormalDist

import numpy as np

from fairpolicy.baseline import mover
from fairpolicy.stats import proportions as pr
from fairpolicy.stats import rate_forms
from fairpolicy.stats.change import gap_change

Z = NormalDist().inv_cdf(0.975)

#: (label, old rates, new rates)
CELLS: list[tuple[str, list[float], list[float]]] = [
    ("+0.10 from gap 0", [0.5, 0.5], [0.5, 0.4]),
    ("+0.10 from gap 0.05", [0.5, 0.45], [0.5, 0.35]),
    ("+0.10 from gap 0.10", [0.5, 0.4], [0.5, 0.3]),
    ("unchanged gap 0", [0.5, 0.5], [0.5, 0.5]),
    ("unchanged gap 0.05", [0.5, 0.45], [0.5, 0.45]),
    ("sign flip 0.05 → 0.05", [0.45, 0.5], [0.5, 0.45]),
    ("unchanged gap 0.20", [0.5, 0.3], [0.5, 0.3]),
    ("sign flip 0.10 → 0.10", [0.4, 0.5], [0.5, 0.4]),
    ("3 groups +0.10 from 0.05", [0.5, 0.45, 0.48], [0.5, 0.35, 0.48]),
    ("3 groups unchanged 0.05", [0.5, 0.45, 0.48], [0.5, 0.45, 0.48]),
]


def _stored(props: list[pr.Proportion]) -> tuple[float, float, float]:
    ps = [p.p for p in props]
    lo, hi = rate_forms.bounds("gap", "one", [props], 0.95)
    v = max(ps) - min(ps)
    return v, min(lo, v), max(hi, v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--n", type=int, default=1000, help="rows per group")
    ap.add_argument("--delta", type=float, default=0.0, help="max_regression")
    ap.add_argument("--seed", type=int, default=28)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    print(f"{args.reps} release pairs per cell, {args.n} rows per group, δ = {args.delta:g}")
    print(
        "| cell | true change | flagged: counts | stored | Wald (signed) | Wald of |gap| change "
        "| coverage (counts) |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, old_r, new_r in CELLS:
        truth = (max(new_r) - min(new_r)) - (max(old_r) - min(old_r))
        hits = {"counts": 0, "stored": 0, "wald": 0, "abs": 0, "cover": 0}
        for _ in range(args.reps):
            old = [pr.Proportion(float(rng.binomial(args.n, p)), args.n) for p in old_r]
            new = [pr.Proportion(float(rng.binomial(args.n, p)), args.n) for p in new_r]
            ends = gap_change(new, old, 0.95)
            assert ends is not None
            hits["counts"] += ends[0] > args.delta
            hits["cover"] += ends[0] <= truth <= ends[1]
            low, _ = mover(*_stored(new), *_stored(old))
            hits["stored"] += low > args.delta
            if len(old_r) == 2:
                d = (new[0].p - new[1].p) - (old[0].p - old[1].p)
                var = sum(p.p * (1 - p.p) / p.m for p in (*new, *old))
                hits["wald"] += d - Z * math.sqrt(var) > args.delta
                c = abs(new[0].p - new[1].p) - abs(old[0].p - old[1].p)
                hits["abs"] += c - Z * math.sqrt(var) > args.delta
        r = args.reps

        def cell(k: str, hits: dict[str, int] = hits, r: int = r) -> str:
            p = hits[k] / r
            return f"{p:.3f} ({math.sqrt(p * (1 - p) / r):.3f})"

        wald = cell("wald") if len(old_r) == 2 else "—"
        absw = cell("abs") if len(old_r) == 2 else "—"
        print(
            f"| {label} | {truth:+.2f} | {cell('counts')} | {cell('stored')} | {wald} | "
            f"{absw} | {cell('cover')} |"
        )
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
