"""Coverage of the interval of the change against a baseline (issue 18), by simulation.

Two releases are simulated as two independent samples (different data) from known
per-group selection rates; each is checked by ``fairpolicy.check`` with a bootstrap
interval (the simultaneous band for a gap or ratio over groups, fairpolicy's default),
the first run is the baseline of the second, and we count how often the change's
interval, built from the two stored intervals only, holds the true change of the metric
(``worsened_by`` is positive when the value got worse: the gap grew, the ratio fell).

Printed per metric: the coverage of the MOVER interval fairpolicy reports, of the
conservative interval [L_new − U_old, U_new − L_old] for comparison, of each run's own
interval, and the Monte Carlo standard error sqrt(p(1 − p)/N) of each coverage.

    python benchmarks/baseline_change.py               # 400 simulated pairs
    python benchmarks/baseline_change.py --sims 100 --n 300   # a quick run
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd

import fairpolicy

POLICY = [
    {
        "control-id": cid,
        "props": [
            {"name": "metric_key", "value": key},
            {"name": "threshold", "value": threshold},
            {"name": "operator", "value": op},
            {"name": "input.target", "value": "y_true"},
            {"name": "input.prediction", "value": "y_pred"},
            {"name": "input.dimension", "value": "g"},
            {"name": "min_samples", "value": "1"},
        ],
    }
    for cid, key, op, threshold in (
        ("gap", "demographic_parity_diff", "<", "0.5"),
        ("ratio", "demographic_parity_ratio", ">=", "0.2"),
    )
] + [
    {
        "control-id": "acc",
        "props": [
            {"name": "metric_key", "value": "accuracy_score"},
            {"name": "threshold", "value": "0.5"},
            {"name": "operator", "value": ">="},
            {"name": "input.target", "value": "t2"},
            {"name": "input.prediction", "value": "p2"},
            {"name": "input.dimension", "value": "g"},
        ],
    }
]

#: accuracy of the two releases on the second label pair (a pooled score, whose interval is
#: a plain percentile bootstrap rather than a simultaneous band): 0.80 → 0.76
OLD_ACC, NEW_ACC = 0.80, 0.76

#: per-group selection rates of the two releases (the gap grows 0.15 → 0.20)
OLD_RATES = {"A": 0.50, "B": 0.35}
NEW_RATES = {"A": 0.55, "B": 0.35}


def truth(rates: dict[str, float]) -> dict[str, float]:
    r = list(rates.values())
    return {"gap": max(r) - min(r), "ratio": min(r) / max(r)}


def sample(rates: dict[str, float], acc: float, n: int, rng: np.random.Generator) -> pd.DataFrame:
    parts = []
    for g, p in rates.items():
        t2 = rng.integers(0, 2, n)
        right = rng.random(n) < acc
        parts.append(
            pd.DataFrame(
                {
                    "y_true": rng.integers(0, 2, n),
                    "y_pred": (rng.random(n) < p).astype(int),
                    "t2": t2,
                    "p2": np.where(right, t2, 1 - t2),
                    "g": g,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=400)
    ap.add_argument("--n", type=int, default=500, help="rows per group")
    ap.add_argument("--bootstrap", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t_old, t_new = truth(OLD_RATES), truth(NEW_RATES)
    # worsened_by: the gap growing, the ratio falling
    true_change = {
        "gap": t_new["gap"] - t_old["gap"],
        "ratio": t_old["ratio"] - t_new["ratio"],
        "acc": OLD_ACC - NEW_ACC,
    }
    t_old["acc"], t_new["acc"] = OLD_ACC, NEW_ACC
    hits = {k: {"mover": 0, "conservative": 0, "old": 0, "new": 0, "n": 0} for k in true_change}
    widths: dict[str, list[float]] = {k: [] for k in true_change}
    started = time.perf_counter()
    for i in range(args.sims):
        runs = []
        for rates, acc in ((OLD_RATES, OLD_ACC), (NEW_RATES, NEW_ACC)):
            runs.append(
                fairpolicy.check(
                    POLICY,
                    sample(rates, acc, args.n, rng),
                    bootstrap=args.bootstrap,
                    seed=int(rng.integers(2**31)),
                )
            )
        old, new = runs
        old_by = {f.control_id: f for f in old.findings}
        from fairpolicy.baseline import compare

        both = compare(new, old, path="old", sha256=f"{i:064x}", allow_policy_change=True)
        for f in both.findings:
            c, o = f.change, old_by[f.control_id]
            h = hits[f.control_id]
            tc = true_change[f.control_id]
            if c is None or c.low is None or c.high is None:
                continue
            assert f.ci is not None and o.ci is not None
            assert f.ci.low is not None and f.ci.high is not None
            assert o.ci.low is not None and o.ci.high is not None
            h["n"] += 1
            h["mover"] += c.low <= tc <= c.high
            widths[f.control_id].append(c.high - c.low)
            k = f.control_id
            if k == "gap":  # lower is better
                lo, hi = f.ci.low - o.ci.high, f.ci.high - o.ci.low
            else:  # higher is better: worsened_by = old − new
                lo, hi = o.ci.low - f.ci.high, o.ci.high - f.ci.low
            h["old"] += o.ci.low <= t_old[k] <= o.ci.high
            h["new"] += f.ci.low <= t_new[k] <= f.ci.high
            h["conservative"] += lo <= tc <= hi
    secs = time.perf_counter() - started
    print(
        f"{args.sims} simulated release pairs, {args.n} rows per group, "
        f"{args.bootstrap} bootstrap resamples, 95 % intervals ({secs:.0f} s)"
    )
    print(f"{'metric':<8}{'interval':<14}{'coverage':>10}{'MC s.e.':>10}")
    for key, h in hits.items():
        n = h["n"]
        for name in ("mover", "conservative", "old", "new"):
            p = h[name] / n if n else float("nan")
            se = math.sqrt(p * (1 - p) / n) if n else float("nan")
            label = {"old": "baseline run", "new": "new run"}.get(name, name)
            print(f"{key:<8}{label:<14}{p:>10.3f}{se:>10.3f}")
        print(f"{key:<8}{'mean width':<14}{np.mean(widths[key]):>10.4f}")
    exact_inputs(rng)


def exact_inputs(rng: np.random.Generator, sims: int = 200_000) -> None:
    """The combination alone, fed intervals of exactly 95 % coverage (two normal estimates
    with unequal standard errors): MOVER keeps the level, the difference of ends inflates it."""
    from fairpolicy.baseline import mover

    z = 1.959963984540054
    se_old, se_new, true_old, true_new = 0.02, 0.035, 0.15, 0.20
    old = true_old + se_old * rng.standard_normal(sims)
    new = true_new + se_new * rng.standard_normal(sims)
    hit_m = hit_c = 0
    for o, n in zip(old[:20_000], new[:20_000], strict=True):  # mover() is scalar
        lo, hi = mover(n, n - z * se_new, n + z * se_new, o, o - z * se_old, o + z * se_old)
        hit_m += lo <= true_new - true_old <= hi
    cons_lo = (new - z * se_new) - (old + z * se_old)
    cons_hi = (new + z * se_new) - (old - z * se_old)
    hit_c = int(np.sum((cons_lo <= true_new - true_old) & (true_new - true_old <= cons_hi)))
    pm, pc = hit_m / 20_000, hit_c / sims
    se_m = math.sqrt(pm * (1 - pm) / 20_000)
    print(
        f"exact 95 % normal inputs: MOVER {pm:.4f} (MC s.e. {se_m:.4f}), "
        f"difference of ends {pc:.4f} (MC s.e. {math.sqrt(pc * (1 - pc) / sims):.4f})"
    )


if __name__ == "__main__":
    main()
