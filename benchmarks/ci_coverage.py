"""Coverage of fairpolicy's bootstrap intervals on populations with a known gap.

Not a unit test: it prints the share of 95 % intervals that contain the true
value, for the percentile and the BCa interval of ``stats/bootstrap.py``, and
the run time.

Scenario ``dp`` (default): two groups with known selection rates p1, p2, so the
true demographic parity gap is |p1 − p2|. Each population samples n1 and n2 rows,
builds the count table, draws B replicates and asks ``bootstrap.confidence``
for both intervals (each call re-evaluates the B replicates, as the runner
does for two controls).

Scenario ``auc``: two groups with binormal scores (negatives N(0, 1), positives
N(d_g, 1), scores rounded to 2 decimals), true AUC_g = Φ(d_g / √2) (ties from
rounding shift this by well under 1e-3); the true AUC gap is |AUC_1 − AUC_2|.

With 400 populations the Monte-Carlo standard error of a coverage near 0.95 is
sqrt(0.95 · 0.05 / 400) ≈ 0.011.

    python benchmarks/ci_coverage.py              # dp (1000 populations), auc (400); B = 1000
    python benchmarks/ci_coverage.py --scenario dp --p1 0.3 --p2 0.5 --populations 400
"""

from __future__ import annotations

import argparse
import math
import os
import time
from concurrent.futures import ProcessPoolExecutor
from statistics import NormalDist
from typing import Any

import numpy as np

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import GroupStats, build_score_stats, confusion_counts
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import resample as rs


def population(args: argparse.Namespace, seed: int) -> tuple[GroupStats, float, float, str]:
    """One sample of the scenario: (statistics, true value, true value of group a, key)."""
    rng = np.random.default_rng((20261122, seed))
    sizes = (args.n1, args.n2)
    g = np.repeat(np.arange(2), sizes)
    if args.scenario == "dp":
        rate = np.where(g == 0, args.p1, args.p2)
        pred = (rng.random(len(g)) < rate).astype(np.int64)
        true = rng.integers(0, 2, len(g))
        counts = confusion_counts(g, true, pred, 2, 2)
        st = GroupStats(("grp",), ("a", "b"), ("0", "1"), counts, positive=1)
        return st, abs(args.p1 - args.p2), args.p1, "demographic_parity_diff"
    shift = np.where(g == 0, args.d1, args.d2)
    true = (rng.random(len(g)) < 0.4).astype(np.int64)
    score = np.round(rng.normal(0.0, 1.0, len(g)) + true * shift, 2)
    pred = (score > shift / 2).astype(np.int64)
    counts = confusion_counts(g, true, pred, 2, 2)
    st = GroupStats(("grp",), ("a", "b"), ("0", "1"), counts, positive=1)
    st = st.with_extras(scores=build_score_stats(g, 2, true, score[:, None], ("y_score",), 2))
    auc = [NormalDist().cdf(d / math.sqrt(2)) for d in (args.d1, args.d2)]
    return st, abs(auc[0] - auc[1]), auc[0], "auc_gap"


def one(job: tuple[argparse.Namespace, int]) -> dict[str, Any]:
    args, seed = job
    st, truth, truth_a, key = population(args, seed)
    spec = REGISTRY[key]
    point = spec.fn(st, {}).value
    out: dict[str, Any] = {"point": point, "truth": truth, "truth_a": truth_a}
    if point is None:
        return out
    keep = np.ones(2, dtype=bool)
    t0 = time.perf_counter()
    reps = rs.draw(st, args.resamples, seed)
    out["draw_s"] = time.perf_counter() - t0
    for method in ("percentile", "bca"):
        t0 = time.perf_counter()
        iv = bs.confidence(spec, st, keep, {}, point, reps, args.level, method)
        out[f"{method}_s"] = time.perf_counter() - t0
        out[method] = (iv.low, iv.high, iv.method, iv.note, iv.reason)
        out[f"{method}_a"] = (iv.groups or {}).get("a")
    return out


def report(args: argparse.Namespace) -> None:
    t0 = time.perf_counter()
    jobs = [(args, s) for s in range(args.populations)]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(one, jobs, chunksize=8))
    else:
        results = [one(j) for j in jobs]
    wall = time.perf_counter() - t0

    truth, truth_a = results[0]["truth"], results[0]["truth_a"]
    print(
        f"scenario {args.scenario}: n = ({args.n1}, {args.n2}), true gap {truth:.4f}, "
        f"{args.populations} populations, B = {args.resamples}, level {args.level:g}"
    )
    defined = [r for r in results if r["point"] is not None]
    points = np.array([r["point"] for r in defined])
    print(
        f"  point estimate: mean {points.mean():.4f} (bias {points.mean() - truth:+.4f}), "
        f"sd {points.std(ddof=1):.4f}; undefined in {len(results) - len(defined)} population(s)"
    )
    se = math.sqrt(args.level * (1 - args.level) / max(len(defined), 1))
    for method in ("percentile", "bca"):
        rows = [r[method] for r in defined]
        ok = [(lo, hi) for lo, hi, *_ in rows if lo is not None and hi is not None]
        cover = sum(lo <= truth <= hi for lo, hi in ok)
        below = sum(hi < truth for lo, hi in ok)  # interval entirely below the truth
        above = sum(lo > truth for lo, hi in ok)
        width = np.mean([hi - lo for lo, hi in ok]) if ok else float("nan")
        fallbacks = sum(1 for r in rows if r[2] != method)
        none = len(rows) - len(ok)
        secs = np.mean([r[f"{method}_s"] for r in defined])
        per_a = [r[f"{method}_a"] for r in defined if r[f"{method}_a"] is not None]
        cover_a = sum(lo <= truth_a <= hi for lo, hi in per_a) / max(len(per_a), 1)
        print(
            f"  {method:>10}: gap coverage {cover / max(len(ok), 1):.3f} "
            f"({cover}/{len(ok)}; MC s.e. {se:.3f}), misses: interval below the truth {below}, "
            f"above {above}; mean width {width:.4f}; no interval {none}; fell back to "
            f"percentile {fallbacks}"
        )
        print(
            f"  {'':>10}  group-a value ({truth_a:.4f}) coverage {cover_a:.3f}; "
            f"{secs * 1e3:.0f} ms per interval = {secs / args.resamples * 1e6:.0f} µs per replicate"
        )
    print(f"  draw: {np.mean([r['draw_s'] for r in defined]) * 1e3:.2f} ms per population")
    print(f"  run time {wall:.1f} s with {args.workers} worker(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=("all", "dp", "auc"), default="all")
    ap.add_argument("--populations", type=int, default=None, help="default: dp 1000, auc 400")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--n1", type=int, default=150)
    ap.add_argument("--n2", type=int, default=250)
    ap.add_argument("--p1", type=float, default=0.30, help="dp: selection rate of group a")
    ap.add_argument("--p2", type=float, default=0.42, help="dp: selection rate of group b")
    ap.add_argument("--d1", type=float, default=1.0, help="auc: separation of group a")
    ap.add_argument("--d2", type=float, default=1.5, help="auc: separation of group b")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    for scenario in ("dp", "auc") if args.scenario == "all" else (args.scenario,):
        run = argparse.Namespace(**vars(args))
        run.scenario = scenario
        if run.populations is None:
            run.populations = 1000 if scenario == "dp" else 400
        report(run)
    print(f"total run time {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
