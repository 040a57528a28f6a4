"""Type-I error of fairpolicy's permutation test when the metric's null holds but the
groups' base rates differ.

Not a unit test: for each scenario it samples populations in which the metric's own null
hypothesis is true, runs ``stats.permutation.permutation_test`` (P permutations) and prints the
share of p-values ≤ α, with its Monte-Carlo standard error, for the stratum the registry
declares (``MetricSpec.stratum``) and, for comparison, for permuting all rows (the test
before the strata existed). A valid test rejects at most α + 2 MC errors,
2·sqrt(α(1 − α)/N) with N populations.

Scenarios (two groups of n1 and n2 rows unless stated):

``eo``   prevalence p1 vs p2, the same TPR (0.7) and FPR (0.2) in both groups:
         equal_opportunity_diff, fpr_diff, equalized_odds_diff (stratum: actual class).
``ppv``  selection rate s1 vs s2, the same PPV (0.7) and FOR (0.2) in both groups:
         predictive_parity_diff, for_diff (stratum: predicted class).
``auc``  prevalence p1 vs p2, binormal scores with the same class distributions in both
         groups (negatives N(0, 1), positives N(1, 1), rounded to 2 decimals): auc_gap
         (stratum: actual class).
``dp``   prevalence p1 vs p2, the same selection rate (0.3) in both groups, predictions
         depending on the class: demographic_parity_diff (stratum: all rows).
``eo3``  three groups, prevalences p1, (p1 + p2)/2, p2, the same TPR/FPR: the overall
         p-value of equal_opportunity_diff and the family-wise error of the Bonferroni-
         adjusted per-group ("group vs rest") p-values.

    python benchmarks/permutation_null.py                       # every scenario, N = 400
    python benchmarks/permutation_null.py --scenario eo --populations 1000 --permutations 199
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from typing import Any

import numpy as np

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats, build_score_stats, confusion_counts
from fairpolicy.stats import permutation as pm

SCENARIOS: dict[str, tuple[str, ...]] = {
    "eo": ("equal_opportunity_diff", "fpr_diff", "equalized_odds_diff"),
    "ppv": ("predictive_parity_diff", "for_diff"),
    "auc": ("auc_gap",),
    "dp": ("demographic_parity_diff",),
    "eo3": ("equal_opportunity_diff",),
}


def population(scenario: str, args: argparse.Namespace, seed: int) -> GroupStats:
    """One sample of the scenario, in which the metrics' null hypotheses hold."""
    rng = np.random.default_rng((20261123, seed))
    if scenario == "eo3":
        sizes = (args.n1, args.n2, args.n2)
        prev = np.array([args.p1, (args.p1 + args.p2) / 2, args.p2])
    else:
        sizes = (args.n1, args.n2)
        prev = np.array([args.p1, args.p2])
    groups = len(sizes)
    g = np.repeat(np.arange(groups), sizes)
    u = rng.random(len(g))
    if scenario == "ppv":
        # the prediction first (selection rate s_g), then the class given the prediction
        pred = (u < np.array([args.s1, args.s2])[g]).astype(np.int64)
        true = (rng.random(len(g)) < np.where(pred == 1, 0.7, 0.2)).astype(np.int64)
    else:
        true = (u < prev[g]).astype(np.int64)
        if scenario == "dp":
            # P(ŷ=1 | y, g) chosen so that every group selects 30 %: FPR_g = 0.3·(1 − π_g)
            # ... solved per group with TPR_g = 0.3 + 0.5·(1 − π_g)
            tpr = 0.3 + 0.5 * (1 - prev)
            fpr = (0.3 - prev * tpr) / (1 - prev)
            rate = np.where(true == 1, tpr[g], fpr[g])
        else:
            rate = np.where(true == 1, 0.7, 0.2)
        pred = (rng.random(len(g)) < rate).astype(np.int64)
    names = tuple("abc"[:groups])
    st = GroupStats(("grp",), names, ("0", "1"), confusion_counts(g, true, pred, groups, 2), 1)
    if scenario == "auc":
        score = np.round(rng.normal(0.0, 1.0, len(g)) + true, 2)
        st = st.with_extras(
            scores=build_score_stats(g, groups, true, score[:, None], ("y_score",), 2)
        )
    return st


def run(scenario: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    out = []
    for key in SCENARIOS[scenario]:
        declared = REGISTRY[key]
        variants = {"declared": declared}
        if declared.stratum({}) != "rows":
            variants["all rows"] = dataclasses.replace(declared, null_stratum="rows")
        for name, spec in variants.items():
            reject = fwer = defined = 0
            t0 = time.perf_counter()
            for i in range(args.populations):
                st = population(scenario, args, i)
                point = spec.fn(st, {}).value
                if point is None:
                    continue
                res = pm.permutation_test(
                    spec, st, {}, point, args.permutations, i, bonferroni=True
                )
                if res.p_value is None:
                    continue
                defined += 1
                reject += res.p_value <= args.alpha
                if scenario == "eo3" and res.groups:
                    fwer += min(res.groups.values()) <= args.alpha
            seconds = time.perf_counter() - t0
            rate = reject / max(defined, 1)
            row = {
                "scenario": scenario,
                "metric": key,
                "stratum": spec.stratum({}) if name == "declared" else "rows (old)",
                "populations": defined,
                "rejection": rate,
                "mc_error": math.sqrt(rate * (1 - rate) / max(defined, 1)),
                "bound": args.alpha
                + 2 * math.sqrt(args.alpha * (1 - args.alpha) / max(defined, 1)),
                "seconds": seconds,
            }
            if scenario == "eo3":
                row["fwer"] = fwer / max(defined, 1)
            out.append(row)
            print(
                f"{scenario:<4} {key:<24} {row['stratum']:<10} N={defined:<5} "
                f"reject {rate:.3f} ± {row['mc_error']:.3f} (valid ≤ {row['bound']:.3f})"
                + (f"  FWER(per-group, Bonferroni) {row['fwer']:.3f}" if "fwer" in row else "")
                + f"  {seconds:.1f} s",
                flush=True,
            )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    ap.add_argument("--populations", type=int, default=400)
    ap.add_argument("--permutations", type=int, default=199)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--n1", type=int, default=300)
    ap.add_argument("--n2", type=int, default=300)
    ap.add_argument("--p1", type=float, default=0.1, help="prevalence of group a")
    ap.add_argument("--p2", type=float, default=0.6, help="prevalence of group b")
    ap.add_argument("--s1", type=float, default=0.1, help="selection rate of group a (ppv)")
    ap.add_argument("--s2", type=float, default=0.5, help="selection rate of group b (ppv)")
    args = ap.parse_args(argv)
    scenarios = list(SCENARIOS) if args.scenario == "all" else [args.scenario]
    print(
        f"N = {args.populations} populations, P = {args.permutations} permutations, "
        f"α = {args.alpha}, n = {args.n1}/{args.n2}, prevalence {args.p1}/{args.p2}"
    )
    for s in scenarios:
        run(s, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
