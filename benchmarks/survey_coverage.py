"""Wrong passes of survey-weighted intervals under informative sampling (issue 15).

A finite population of 300,000 with selection rates 0.40 / 0.45 / 0.50 in three groups
(the true demographic-parity gap, about 0.10, is the threshold: any pass is wrong). Each
run draws a Poisson sample whose inclusion probability is doubled for selected units and
×1.5 for group ``c``, weights the rows by 1/π (Hájek estimates of the group rates), and
checks ``demographic_parity_diff < gap`` with a bootstrap interval. Printed: the share of
runs whose ``ci_upper`` is below the true gap (a wrong pass under ``decision: ci_upper``)
and the two-sided coverage.

    python benchmarks/survey_coverage.py --runs 150 --base 0.0015   # n ≈ 765
    python benchmarks/survey_coverage.py --runs 150 --base 0.0005   # n ≈ 255
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.runner import check


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=150)
    ap.add_argument("--base", type=float, default=0.0015, help="base inclusion probability")
    ap.add_argument("--resamples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    m = 300_000
    rates = {"a": 0.40, "b": 0.45, "c": 0.50}
    groups = rng.choice(list(rates), m)
    selected = (rng.random(m) < np.vectorize(rates.get)(groups)).astype(int)
    true = [selected[groups == k].mean() for k in rates]
    gap = float(max(true) - min(true))
    pi = a.base * np.where(selected == 1, 2.0, 1.0) * np.where(groups == "c", 1.5, 1.0)
    control = Control(
        control_id="dp",
        metric_key="demographic_parity_diff",
        metric_key_as_written="demographic_parity_diff",
        threshold=Threshold(value=round(gap, 12)),
        operator=Operator.LT,
        inputs={"target": "y", "prediction": "p", "dimension": "g", "weight": "w"},
        min_samples=1,
    )
    wrong = cover = runs = 0
    for r in range(a.runs):
        s = rng.random(m) < pi
        df = pd.DataFrame({"y": selected[s], "p": selected[s], "g": groups[s], "w": 1 / pi[s]})
        f = check(Policy(form="list", controls=(control,)), df, bootstrap=a.resamples, seed=r)
        ci = f.findings[0].ci
        if ci is None or ci.low is None or ci.high is None:
            continue
        runs += 1
        wrong += ci.high < gap
        cover += ci.low <= gap <= ci.high
    print(
        f"n ≈ {pi.sum():.0f}, {runs} runs, true gap {gap:.4f}: wrong pass (ci_upper < gap) "
        f"{wrong / runs:.3f}, coverage {cover / runs:.3f}"
    )


if __name__ == "__main__":
    main()
