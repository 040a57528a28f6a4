"""Cost of fractional (survey / importance) sample weights, printed as ratios from one run.

The point value of a survey-weighted check is one more weighted bincount; the bootstrap
resamples rows with their weights (``fairpolicy.stats.survey``), whose units are the
distinct (group, cell, weight) triples: few when weights repeat (post-stratification
weights take a handful of values), about one per row when they are continuous. This
prints, for N rows and B bootstrap replicates, the whole ``fairpolicy.check`` time of

- unweighted data,
- whole-number frequency weights (folded into the count table),
- survey weights with 8 distinct values,
- continuous survey weights (one unit per row: O(B × rows)),

each as a ratio to the unweighted run. (That the weighted bootstrap is a row bootstrap
is tested in ``tests/metrics/test_survey_weights.py``, not timed here.)

    python benchmarks/survey_weights.py                 # 1,000,000 rows, B = 200
    python benchmarks/survey_weights.py --rows 200000 --resamples 1000
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import fairpolicy
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold


def control(kind: str | None) -> Control:
    """The control; ``kind``: None (unweighted) or the declared ``weight_kind``."""
    inputs = {"target": "y", "prediction": "p", "dimension": "g"}
    if kind is not None:
        inputs["weight"] = "w"
    return Control(
        control_id="dp",
        metric_key="demographic_parity_diff",
        metric_key_as_written="demographic_parity_diff",
        threshold=Threshold(value=0.1),
        operator=Operator.LT,
        inputs=inputs,
        params={} if kind is None else {"weight_kind": kind},
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    n = a.rows
    base = pd.DataFrame(
        {
            "y": rng.integers(0, 2, n),
            "p": rng.integers(0, 2, n),
            "g": rng.choice(["a", "b", "c", "d"], n),
        }
    )
    cases = {
        "unweighted": (base, None),
        "frequency (whole numbers)": (base.assign(w=rng.integers(1, 5, n)), "frequency"),
        "survey, 8 distinct weights": (
            base.assign(w=rng.choice(np.linspace(0.5, 4.0, 8), n) + 0.01),
            "survey",
        ),
        "survey, continuous weights": (
            base.assign(w=rng.gamma(2.0, 0.8, n) + 1e-3),
            "survey",
        ),
    }
    best: dict[str, float] = {}
    for (
        df,
        weighted,
    ) in (
        cases.values()
    ):  # weighted: the weight_kind, or None  # warm-up: imports and first-call costs
        small = df.head(1000)
        fairpolicy.check(Policy(form="list", controls=(control(weighted),)), small, bootstrap=5)
    for _ in range(a.repeat):  # interleaved rounds: drift hits every case alike
        for name, (df, weighted) in cases.items():
            pol = Policy(form="list", controls=(control(weighted),))
            t0 = time.perf_counter()
            res = fairpolicy.check(pol, df, bootstrap=a.resamples, seed=1)
            dt = time.perf_counter() - t0
            assert res.findings[0].ci is not None, res.findings[0].message
            best[name] = min(best.get(name, float("inf")), dt)
    floor = best["unweighted"]
    print(f"{n:,} rows, B = {a.resamples}, best of {a.repeat} (seconds, ratio to unweighted)")
    for name, dt in best.items():
        print(f"  {name:32s} {dt:7.3f} s  {dt / floor:6.2f}x")


if __name__ == "__main__":
    main()
