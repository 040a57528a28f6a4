"""Coverage of fairpolicy's intervals for gaps and ratios over 2–8 groups, with Monte Carlo errors.

Not a unit test: for each cell of a grid (metric × number of groups × rows per group ×
true value × where the groups sit) it draws many populations from a known model, asks
``bootstrap.confidence`` for the 95 % interval exactly as the runner does, and prints

- coverage: the share of intervals that contain the true value (MC s.e. in brackets);
- below / above: the share of intervals entirely below / above the truth. With the
  threshold set at the true value, an interval entirely on the favourable side is a
  wrong PASS of ``decision: ci_upper`` (gaps: above = 0 … "below" the truth; ratios:
  entirely above it), one entirely on the unfavourable side a wrong FAIL of
  ``decision: ci_lower`` (the type-I error of the one-sided test "value violates the
  threshold"). Each must be ≤ 2.5 % for a 95 % two-sided interval;
- the bias of the point estimate, the mean width, the share with no interval, and the
  method actually used.

The model (every metric reads the count table or the scores of a population whose
per-group truth is known exactly):

- binary metrics (``dp`` demographic_parity_diff, ``dpr`` demographic_parity_ratio,
  ``eo`` equalized_odds_diff, ``ppv`` predictive_parity_diff): per group, prevalence
  0.4, TPR 0.7 + δ_g, FPR 0.2 + δ_g; rows ~ Multinomial(n, P_g(y, ŷ));
- ``wf1`` weighted_f1_gap, 3 classes with priors (0.5, 0.3, 0.2), P(ŷ = y) = 0.7 + δ_g,
  errors split evenly;
- ``disp`` disparity_ratio (Aequitas; ``--params rate=ppr``: each group's share of all
  predicted positives, which depends on the group shares): the binary model at δ = 0 with
  unequal ``--shares``; with ``--random-sizes`` the group sizes of each population are
  Multinomial(N, shares), the setting where ``--resample rows`` is the right bootstrap;
- multi-class metrics on the 3-class model of ``wf1`` (P(ŷ = y) = 0.7 + δ_g for every
  class, so the offsets move every class's rates), all with the band over the (group ×
  class) values: ``meo`` macro_equal_opportunity_multiclass (the mean over classes of the
  per-class TPR gap max − min), ``meq`` multiclass_equal_opportunity (the max over
  classes), ``mdp`` multiclass_demographic_parity (max over classes of the prediction-rate
  gap), ``mieo`` micro_equalized_odds_multiclass (2 × the accuracy gap, range [0, 2]);
  holisticai's pairwise distances ``mtpd`` multiclass_true_positive_difference, ``meop``
  multiclass_equality_of_opportunity, ``mao`` multiclass_average_odds, ``msp``
  multiclass_statistical_parity (max over pairs of groups: the band over the (group ×
  cell) rates projected per pair, see docs/statistics.md);
- ``theil`` theil_index (a smooth statistic, not a gap: it keeps percentile/BCa; BCa on
  at most two groups): the binary model at δ = s · pattern with the target ignored — the
  truth is the population's own Theil index at δ = 0;
- ``auc`` auc_gap: binormal scores (negatives N(0, 1), positives N(d_g, 1), 2 decimals),
  d_g = 1.2 + δ_g, AUC_g = Φ(d_g / √2).

The true value is the metric of the population itself (``spec.fn`` on the expected
counts × 10¹², or Φ for AUC). The offsets are δ_g = s · pattern_g with s found by
bisection so that the true gap (ratio) hits the target. Patterns: ``spread`` (pattern
evenly spaced in [0, 1]) and ``ties`` (half the groups at 0, half at 1: two or more
groups tied at each extreme — the case where max − min is least smooth).

With P populations the MC standard error of a coverage c is sqrt(c (1 − c) / P) (0.011
at c = 0.95, P = 400); of a miss rate m, sqrt(m (1 − m) / P) (0.0078 at m = 0.025).

    python benchmarks/ci_groups.py                       # the full grid (hours on 2 cores)
    python benchmarks/ci_groups.py --metrics dp,eo --groups 3 --n 50,200 --populations 200
    python benchmarks/ci_groups.py --methods band,percentile,bca   # band=False: old methods
    python benchmarks/ci_groups.py --metrics disp --params rate=ppr --groups 3 \
        --shares 0.5,0.3,0.2 --random-sizes --resample rows --gaps 0 --patterns spread
"""

from __future__ import annotations

import argparse
import itertools
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

KEYS = {
    "dp": "demographic_parity_diff",
    "dpr": "demographic_parity_ratio",
    "eo": "equalized_odds_diff",
    "ppv": "predictive_parity_diff",
    "wf1": "weighted_f1_gap",
    "auc": "auc_gap",
    "disp": "disparity_ratio",  # with --params rate=ppr: depends on the group shares
    "theil": "theil_index",  # not a gap over groups: percentile / BCa (two groups)
    "meo": "macro_equal_opportunity_multiclass",  # mean over classes of max − min
    "meq": "multiclass_equal_opportunity",  # max over classes of max − min
    "mdp": "multiclass_demographic_parity",  # max over classes of max − min
    "mieo": "micro_equalized_odds_multiclass",  # 2 × accuracy gap
    # holisticai's pairwise distances (max over pairs of groups)
    "mtpd": "multiclass_true_positive_difference",
    "meop": "multiclass_equality_of_opportunity",
    "mao": "multiclass_average_odds",
    "msp": "multiclass_statistical_parity",
}
#: metrics on the 3-class model
_MULTI = ("wf1", "meo", "meq", "mdp", "mieo", "mtpd", "meop", "mao", "msp")
#: metrics whose truth is taken at δ = 0 (their value is no gap that offsets could set)
_AT_ZERO = ("disp", "theil")
_SCALE = 1e12


def _probabilities(metric: str, delta: float) -> np.ndarray:
    """P(y, ŷ) of one group with offset ``delta``."""
    if metric in _MULTI:
        prior = np.array([0.5, 0.3, 0.2])
        acc = 0.7 + delta
        m = np.full((3, 3), (1.0 - acc) / 2.0)
        np.fill_diagonal(m, acc)
        return prior[:, None] * m
    pi, tpr, fpr = 0.4, 0.7 + delta, 0.2 + delta
    return np.array([[(1 - pi) * (1 - fpr), (1 - pi) * fpr], [pi * (1 - tpr), pi * tpr]])


def _pattern(groups: int, kind: str) -> np.ndarray:
    if kind == "ties":
        return (np.arange(groups) >= groups // 2).astype(np.float64)
    return np.linspace(0.0, 1.0, groups)


def _shares(groups: int, text: str | None) -> np.ndarray:
    if not text:
        return np.full(groups, 1.0 / groups)
    w = np.array([float(x) for x in text.split(",")])
    if len(w) != groups:
        raise SystemExit(f"--shares needs {groups} values for {groups} groups")
    return w / w.sum()


def truth(
    metric: str, deltas: np.ndarray, shares: np.ndarray | None = None, params: Any = None
) -> float:
    if metric == "auc":
        auc = [NormalDist().cdf((1.2 + d) / math.sqrt(2)) for d in deltas]
        return max(auc) - min(auc)
    k = 3 if metric in _MULTI else 2
    w = np.full(len(deltas), 1.0) if shares is None else shares * len(deltas)
    counts = np.stack(
        [np.rint(_probabilities(metric, d) * _SCALE * wg) for d, wg in zip(deltas, w, strict=True)]
    )
    st = GroupStats(
        ("grp",),
        tuple(f"g{i}" for i in range(len(deltas))),
        tuple(str(c) for c in range(k)),
        counts.astype(np.int64),
        positive=1 if k == 2 else None,
    )
    value = REGISTRY[KEYS[metric]].fn(st, params or {}).value
    assert value is not None
    return float(value)


def offsets(
    metric: str, groups: int, kind: str, target: float, shares: np.ndarray, params: Any
) -> tuple[np.ndarray, float]:
    """δ_g = s · pattern_g with the true value at ``target`` (bisection on s ≥ 0)."""
    pat = _pattern(groups, kind)
    ratio = metric in ("dpr", "disp")
    if metric in _AT_ZERO:
        return pat * 0.0, truth(metric, pat * 0.0, shares, params)
    zero = 1.0 if ratio else 0.0
    if abs(target - zero) < 1e-12:
        return pat * 0.0, truth(metric, pat * 0.0, shares, params)
    lo, hi = 0.0, 0.25 if metric != "auc" else 1.5
    for _ in range(80):
        mid = (lo + hi) / 2
        v = truth(metric, pat * mid, shares, params)
        far = v < target if ratio else v > target
        lo, hi = (lo, mid) if far else (mid, hi)
    s = (lo + hi) / 2
    return pat * s, truth(metric, pat * s, shares, params)


def population(
    metric: str, n: int, deltas: np.ndarray, seed: int, shares: np.ndarray, random_sizes: bool
) -> GroupStats:
    rng = np.random.default_rng((20261123, seed))
    g = len(deltas)
    names = tuple(f"g{i}" for i in range(g))
    total = n * g
    if random_sizes:  # rows drawn from a population with these group shares
        sizes = rng.multinomial(total, shares)
    else:
        sizes = np.rint(total * shares).astype(np.int64)
    if metric == "auc":
        grp = np.repeat(np.arange(g), sizes)
        true = (rng.random(len(grp)) < 0.4).astype(np.int64)
        shift = 1.2 + deltas[grp]
        score = np.round(rng.normal(0.0, 1.0, len(grp)) + true * shift, 2)
        pred = (score > shift / 2).astype(np.int64)
        counts = confusion_counts(grp, true, pred, g, 2)
        st = GroupStats(("grp",), names, ("0", "1"), counts, positive=1)
        return st.with_extras(
            scores=build_score_stats(grp, g, true, score[:, None], ("y_score",), 2)
        )
    k = 3 if metric in _MULTI else 2
    counts = np.stack(
        [
            rng.multinomial(int(m), _probabilities(metric, d).ravel()).reshape(k, k)
            for d, m in zip(deltas, sizes, strict=True)
        ]
    )
    return GroupStats(
        ("grp",),
        names,
        tuple(str(c) for c in range(k)),
        counts.astype(np.int64),
        positive=1 if k == 2 else None,
    )


def one(job: tuple[Any, ...]) -> dict[str, Any]:
    metric, n, deltas, seed, resamples, level, methods, shares, random_sizes, rows, params = job
    st = population(metric, n, deltas, seed, shares, random_sizes)
    spec = REGISTRY[KEYS[metric]]
    point = spec.fn(st, params).value
    out: dict[str, Any] = {"point": point}
    if point is None:
        return out
    keep = np.ones(len(deltas), dtype=bool)
    reps = rs.draw(st, resamples, seed, rows=rows)
    for m in methods:
        t0 = time.perf_counter()
        if m in ("band", "ours-bca"):  # what the runner reports (percentile / BCa asked)
            asked = "bca" if m == "ours-bca" else "percentile"
            iv = bs.confidence(spec, st, keep, params, point, reps, level, asked)
        else:
            iv = bs.confidence(spec, st, keep, params, point, reps, level, m, band=False)
        out[m] = (iv.low, iv.high, iv.method, time.perf_counter() - t0)
    return out


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 1e-12) / max(n, 1))


def cell(args: argparse.Namespace, metric: str, groups: int, n: int, kind: str, target: float,
         pool: ProcessPoolExecutor | None) -> None:  # fmt: skip
    shares = _shares(groups, args.shares)
    params = dict(kv.split("=", 1) for kv in args.params.split(",")) if args.params else {}
    deltas, true = offsets(metric, groups, kind, target, shares, params)
    methods = tuple(args.methods.split(","))
    rows = args.resample == "rows"
    jobs = [(metric, n, deltas, s, args.resamples, args.level, methods, shares,
             args.random_sizes, rows, params) for s in range(args.populations)]  # fmt: skip
    res = list(pool.map(one, jobs, chunksize=4)) if pool else [one(j) for j in jobs]
    spec = REGISTRY[KEYS[metric]]
    pts = np.array([r["point"] for r in res if r["point"] is not None])
    head = (
        f"{metric:>4} G={groups} n={n:<5} {kind:<6} truth {true:.4f} bias {pts.mean() - true:+.4f}"
    )
    for m in methods:
        rows = [r[m] for r in res if m in r]
        ok = [(lo, hi) for lo, hi, *_ in rows if lo is not None and hi is not None]
        p = max(len(ok), 1)
        cover = sum(lo - 1e-12 <= true <= hi + 1e-12 for lo, hi in ok) / p
        below = sum(hi < true - 1e-12 for lo, hi in ok) / p
        above = sum(lo > true + 1e-12 for lo, hi in ok) / p
        wrong_pass, wrong_fail = (below, above) if spec.better == "lower" else (above, below)
        width = float(np.mean([hi - lo for lo, hi in ok])) if ok else float("nan")
        used = sorted({r[2] for r in rows})
        secs = float(np.mean([r[3] for r in rows])) if rows else 0.0
        print(
            f"{head} | {m:>10}: cover {cover:.3f} ({_se(cover, p):.3f}) "
            f"wrong-pass {wrong_pass:.3f} ({_se(wrong_pass, p):.3f}) "
            f"wrong-fail {wrong_fail:.3f} ({_se(wrong_fail, p):.3f}) width {width:.3f} "
            f"none {len(rows) - len(ok)}/{len(rows)} used {'/'.join(used)} "
            f"{secs * 1e3:.0f} ms",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--metrics", default=",".join(KEYS))
    ap.add_argument("--groups", default="2,3,5,8")
    ap.add_argument("--n", default="50,200,2000", help="rows per group")
    ap.add_argument("--patterns", default="spread,ties")
    ap.add_argument("--gaps", default="0,0.02,0.1", help="true gaps (ratios: 1 − gap)")
    ap.add_argument("--populations", type=int, default=400)
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument(
        "--methods",
        default="band",
        help="band (the runner's interval, percentile asked), ours-bca (the runner's, BCa "
        "asked), percentile, bca (band=False: the raw methods); comma list",
    )
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--shares", default=None, help="group shares, e.g. 0.5,0.3,0.2 (default equal)")
    ap.add_argument(
        "--random-sizes",
        action="store_true",
        help="group sizes ~ Multinomial(n × G, shares) per population instead of fixed",
    )
    ap.add_argument("--resample", choices=("stratified", "rows"), default="stratified")
    ap.add_argument("--params", default="", help="metric parameters, e.g. rate=ppr")
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(
        f"{args.populations} populations per cell, B = {args.resamples}, level {args.level:g}; "
        "MC s.e. in brackets"
    )
    pool = ProcessPoolExecutor(args.workers) if args.workers > 1 else None
    try:
        for metric, groups, n, kind, gap in itertools.product(
            args.metrics.split(","),
            [int(x) for x in args.groups.split(",")],
            [int(x) for x in args.n.split(",")],
            args.patterns.split(","),
            [float(x) for x in args.gaps.split(",")],
        ):
            if kind == "ties" and groups < 2:
                continue
            target = 1.0 - gap if metric in ("dpr", "disp") else gap
            cell(args, metric, groups, n, kind, target, pool)
    finally:
        if pool:
            pool.shutdown()
    print(f"run time {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
