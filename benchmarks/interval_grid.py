"""The interval grid of issue 28: coverage, one-sided wrong PASS / FAIL and width of the
interval ``fairpolicy check`` reports, per cell, with Monte Carlo standard errors.

Cells: G groups ∈ {2, 3, 5, 8}; n rows per group ∈ {30, 100, 1000}; base rate (the
prevalence π, which also sets the selection rate) ∈ {0.1, 0.5}; true gap 0 or near the
threshold (``--gaps``, default 0 and 0.1); metrics (``--metrics``): ``dp``
(demographic_parity_diff), ``dpr`` (demographic_parity_ratio), ``eo``
(equal_opportunity_diff), ``fpr`` (fpr_diff), ``ppv`` (predictive_parity_diff), ``eqodds``
(equalized_odds_diff), ``f1`` (weighted_f1_gap, the bootstrap band; group 0's TPR moved
down by the gap), ``theil`` (theil_index, the widened percentile interval), ``ge``
(generalized_entropy_index, α = 2), ``btheil`` (between_group_theil_index, the percentile
interval floored at 0 when the groups are not shown to differ) — the gap does not move
these three; ``meq`` / ``meo`` (multiclass_equal_opportunity: max over classes;
macro_equal_opportunity_multiclass: mean; 3 classes, the band or the Šidák score box;
every weighting; under survey weights the weight-4 stratum's recall of class 0 is 0.1
lower), ``auc`` (auc_gap: binormal scores, negatives N(0, 1), positives N(d_g, 1), so
AUC_g = Φ(d_g/√2) exactly; AUC 0.856 (d = 1.5) in every group but group 0, whose AUC is
lower by the gap; unweighted only); weights
(``--weights``): ``none``, ``frequency`` (the rows aggregated into one record per
(group, y, ŷ) whose weight is its count: the frequency reading of such a table is the
table of the rows) and ``survey`` (two strata of sampling weight 2 and 4, informative:
the weight-4 stratum has a TPR 0.1 lower, so the population rate is the weighted one).

Model per group g: y ~ Bernoulli(π); ŷ | y = 1 ~ Bernoulli(TPR_g), ŷ | y = 0 ~
Bernoulli(FPR_g), TPR = 0.8 and FPR = 0.1 (0.4 when π = 0.5) for every group except group
0, whose rate of the metric is moved by the true gap: DP (both TPR and FPR moved down by
the gap, so the selection rate moves by it), EO (TPR down), FPR (FPR up), PPV (FPR set so
that the PPV moves down by the gap), equalized odds (TPR down). ``--gaps`` for
``dpr`` are ratios' distances from 1 (true ratio 1 − gap). The truth is computed from the
expected (weighted) confusion table, so it is exact.

Reported per cell: coverage (share of intervals containing the truth); wrong PASS (gap:
the interval entirely below the truth, so ``ci_upper`` passes a threshold at the truth;
ratio: entirely above); wrong FAIL (the other side); mean width; the width ratio to
Newcombe's interval of the two groups' difference (G = 2, rate metrics) or to the
Šidák–Wilson box (G ≥ 3: per-group Wilson intervals at level^(1/G), gap bounds [max L −
min U, max U − min L]); with ``--threshold t``: the share of samples that ``ci_upper``
passes (interval entirely below t) and the same share for Newcombe's interval (G = 2).
Monte Carlo s.e. of a share p over R samples: sqrt(p(1 − p)/R), in brackets.

Usage: ``python benchmarks/interval_grid.py --reps 200 --groups 2,3 --n 30,100
--bases 0.1 --metrics dp,eo,ppv --gaps 0,0.1 --weights none`` (every option takes a
comma-separated list; the defaults are the whole grid, which takes hours).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.stats import bootstrap as bs
from fairpolicy.stats import proportions as pr
from fairpolicy.stats import resample as rs
from fairpolicy.stats.counts import build_group_stats
from fairpolicy.stats.survey import build_survey_stats

_N = NormalDist()

KEYS = {
    "dp": "demographic_parity_diff",
    "dpr": "demographic_parity_ratio",
    "eo": "equal_opportunity_diff",
    "fpr": "fpr_diff",
    "ppv": "predictive_parity_diff",
    "eqodds": "equalized_odds_diff",
    "f1": "weighted_f1_gap",
    "theil": "theil_index",
    "btheil": "between_group_theil_index",
    "meq": "multiclass_equal_opportunity",
    "meo": "macro_equal_opportunity_multiclass",
    "ge": "generalized_entropy_index",
    "auc": "auc_gap",
}
#: multi-class metrics: 3 classes, priors MC_PRIOR, P(ŷ = y) = 0.7 (errors split evenly);
#: group 0's recall of class 0 moved down by the gap
MULTI = {"meq", "meo"}
MC_PRIOR = np.array([0.5, 0.3, 0.2])
#: AUC gap: binormal scores, negatives N(0, 1), positives N(d_g, 1), AUC_g = Φ(d_g/√2);
#: every group at AUC_D except group 0, lowered by the gap
AUC_D = 1.5
#: metrics whose interval is a bootstrap (B = --resamples)
BOOT = {"f1", "theil", "btheil", "meq", "meo", "ge", "auc"}
#: the rate a metric's score interval is about (width ratios), None: not a rate metric
RATE = {"dp": "selection_rate", "dpr": "selection_rate", "eo": "tpr", "fpr": "fpr", "ppv": "ppv"}
RATIO = {"dpr"}


@dataclass(frozen=True)
class Cell:
    metric: str
    groups: int
    n: int
    base: float
    gap: float
    weights: str


def _params(cell: Cell) -> list[tuple[float, float, float]]:
    """(π, TPR, FPR) per group."""
    pi = cell.base
    tpr, fpr = 0.8, (0.1 if pi < 0.3 else 0.4)
    out = [(pi, tpr, fpr)] * cell.groups
    g0 = (pi, tpr, fpr)
    gap = cell.gap
    if cell.metric == "dp":
        g0 = (pi, tpr - gap, max(0.0, fpr - gap))
    elif cell.metric == "dpr":
        sel = pi * tpr + (1 - pi) * fpr
        k = 1 - gap  # both rates scaled: selection rate × (1 − gap)
        g0 = (pi, tpr * k, fpr * k)
        assert abs((pi * g0[1] + (1 - pi) * g0[2]) - sel * k) < 1e-12
    elif cell.metric in ("eo", "eqodds", "f1"):
        g0 = (pi, tpr - gap, fpr)
    elif cell.metric == "fpr":
        g0 = (pi, tpr, fpr + gap)
    elif cell.metric == "ppv":
        ppv = pi * tpr / (pi * tpr + (1 - pi) * fpr)
        target = ppv - gap
        g0 = (pi, tpr, pi * tpr * (1 / target - 1) / (1 - pi))
    return [g0, *out[1:]]


def _expected(cell: Cell) -> np.ndarray:
    """(G, 2, 2) expected confusion shares [y, ŷ] of the population (weighted)."""
    tables = []
    for pi, tpr, fpr in _params(cell):
        strata = [(1.0, tpr)]
        if cell.weights == "survey":  # half the sample at weight 2, half at weight 4
            strata = [(0.5 * 2, tpr), (0.5 * 4, max(0.0, tpr - 0.1))]
        t = np.zeros((2, 2))
        for w, tp in strata:
            t += w * np.array([[(1 - pi) * (1 - fpr), (1 - pi) * fpr], [pi * (1 - tp), pi * tp]])
        tables.append(t / t.sum())
    return np.array(tables)


def _rate(t: np.ndarray, rate: str) -> float:
    (tn, fp), (fn, tp) = t
    return {
        "selection_rate": (tp + fp) / t.sum(),
        "tpr": tp / (tp + fn),
        "fpr": fp / (fp + tn),
        "ppv": tp / (tp + fp),
    }[rate]


def truth(cell: Cell) -> float:
    tables = _expected(cell)
    if cell.metric in RATE:
        r = [_rate(t, RATE[cell.metric]) for t in tables]
        return min(r) / max(r) if cell.metric in RATIO else max(r) - min(r)
    if cell.metric == "eqodds":
        tp = [_rate(t, "tpr") for t in tables]
        fp = [_rate(t, "fpr") for t in tables]
        return max(max(tp) - min(tp), max(fp) - min(fp))
    # f1 / theil / multi-class: the metric on a very large expected table (counts ∝ shares)
    if cell.metric == "auc":
        auc = [_N.cdf(_auc_d(cell, g) / math.sqrt(2.0)) for g in range(cell.groups)]
        return max(auc) - min(auc)
    if cell.metric in MULTI:
        st = _mc_stats(np.rint(_mc_expected(cell) * 10**9).astype(np.int64))
        v = REGISTRY[KEYS[cell.metric]].fn(st, {}).value
        assert v is not None
        return float(v)
    st = _stats_of(np.rint(tables * 10**7).astype(np.int64))
    v = REGISTRY[KEYS[cell.metric]].fn(st, {}).value
    assert v is not None
    return float(v)


def _stats_of(counts: np.ndarray):  # type: ignore[no-untyped-def]
    from fairpolicy.stats import GroupStats

    names = tuple(f"g{i}" for i in range(len(counts)))
    return GroupStats(("g",), names, ("0", "1"), counts, positive=1)


def _mc_strata(cell: Cell, g: int) -> list[tuple[float, np.ndarray]]:
    """(weight × share of the sample, P(ŷ | y)) per stratum of group g's multi-class model:
    one stratum, or under survey weights half at weight 2 and half at weight 4 whose
    recall of class 0 is 0.1 lower (informative sampling)."""
    m = np.full((3, 3), 0.15)
    np.fill_diagonal(m, 0.7)
    if g == 0:
        m[0] = [0.7 - cell.gap, 0.15 + cell.gap / 2, 0.15 + cell.gap / 2]
    if cell.weights != "survey":
        return [(1.0, m)]
    m4 = m.copy()
    m4[0] = [m[0, 0] - 0.1, m[0, 1] + 0.05, m[0, 2] + 0.05]
    return [(0.5 * 2, m), (0.5 * 4, m4)]


def _mc_expected(cell: Cell) -> np.ndarray:
    """(G, 3, 3) expected confusion shares of the multi-class model (weighted)."""
    out = []
    for g in range(cell.groups):
        t = sum(w * MC_PRIOR[:, None] * m for w, m in _mc_strata(cell, g))
        out.append(t / t.sum())
    return np.array(out)


def _auc_d(cell: Cell, g: int) -> float:
    """The positives' mean score d_g: AUC_g = Φ(d_g/√2) = Φ(AUC_D/√2) − gap for group 0."""
    if g:
        return AUC_D
    return math.sqrt(2.0) * _N.inv_cdf(_N.cdf(AUC_D / math.sqrt(2.0)) - cell.gap)


def _sample_auc(cell: Cell, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    from fairpolicy.stats import GroupStats, build_score_stats, confusion_counts

    g = np.repeat(np.arange(cell.groups), cell.n)
    y = (rng.random(len(g)) < cell.base).astype(np.int64)
    d = np.array([_auc_d(cell, i) for i in range(cell.groups)])[g]
    score = rng.normal(d * y, 1.0)
    pred = (score > AUC_D / 2).astype(np.int64)
    counts = confusion_counts(g, y, pred, cell.groups, 2)
    names = tuple(f"g{i}" for i in range(cell.groups))
    st = GroupStats(("g",), names, ("0", "1"), counts, positive=1)
    scores = build_score_stats(g, cell.groups, y, score[:, None], ("y_score",), 2)
    return st.with_extras(scores=scores)


def _mc_stats(counts: np.ndarray):  # type: ignore[no-untyped-def]
    from fairpolicy.stats import GroupStats

    names = tuple(f"g{i}" for i in range(len(counts)))
    return GroupStats(("g",), names, ("0", "1", "2"), counts)


def sample(cell: Cell, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    """One data set of the cell as the product's GroupStats."""
    if cell.metric == "auc":  # unweighted only
        return _sample_auc(cell, rng)
    if cell.metric in MULTI and cell.weights == "none":
        shares = _mc_expected(cell).reshape(cell.groups, -1)
        return _mc_stats(np.stack([rng.multinomial(cell.n, p) for p in shares]).reshape(-1, 3, 3))
    classes = ("0", "1", "2") if cell.metric in MULTI else ("0", "1")
    k = len(classes)
    positive = None if cell.metric in MULTI else 1
    ys, ps, gs, ws = [], [], [], []
    for g in range(cell.groups):
        if cell.metric in MULTI:  # rows: y from the prior, ŷ from the stratum's P(ŷ | y)
            n = cell.n
            strata = _mc_strata(cell, g)
            y = rng.choice(3, n, p=MC_PRIOR)
            s4 = rng.random(n) < 0.5 if len(strata) == 2 else np.zeros(n, dtype=bool)
            cum = np.where(s4[:, None], strata[-1][1][y].cumsum(1), strata[0][1][y].cumsum(1))
            p = (rng.random(n)[:, None] > cum[:, :2]).sum(1)
            ys.append(y.astype(np.int64))
            ps.append(p.astype(np.int64))
            gs.append(np.full(n, g, dtype=np.int64))
            ws.append(np.where(s4, 4.0, 2.0) if cell.weights == "survey" else None)
            continue
        pi, tpr, fpr = _params(cell)[g]
        n = cell.n
        y = rng.random(n) < pi
        if cell.weights == "survey":
            w = np.where(rng.random(n) < 0.5, 2.0, 4.0)
            tp_rate = np.where(w == 4.0, max(0.0, tpr - 0.1), tpr)
        else:
            w = None
            tp_rate = np.full(n, tpr)
        p = np.where(y, rng.random(n) < tp_rate, rng.random(n) < fpr)
        ys.append(y.astype(np.int64))
        ps.append(p.astype(np.int64))
        gs.append(np.full(n, g, dtype=np.int64))
        ws.append(w)
    y, p, g = np.concatenate(ys), np.concatenate(ps), np.concatenate(gs)
    dims = {"g": (g, [f"g{i}" for i in range(cell.groups)])}
    if cell.weights == "survey":
        w = np.concatenate(ws)
        return build_survey_stats(y, p, classes, dims, [("g",)], positive, None, w)[("g",)]
    weights = None
    if cell.weights == "frequency":  # the same rows aggregated: one record per (g, y, ŷ)
        key = (g * k + y) * k + p
        cells, counts = np.unique(key, return_counts=True)
        g, y, p = cells // (k * k), (cells // k) % k, cells % k
        weights = counts.astype(np.int64)
        dims = {"g": (g, [f"g{i}" for i in range(cell.groups)])}
    return build_group_stats(y, p, classes, dims, [("g",)], positive, weights)[("g",)]


def _reference_width(cell: Cell, stats, level: float) -> float | None:  # type: ignore[no-untyped-def]
    """Width of Newcombe's interval (G = 2) or of the Šidák–Wilson box (G ≥ 3) of the gap."""
    rate = RATE.get(cell.metric)
    if rate is None or cell.metric in RATIO:
        return None
    props = pr.rate_counts(stats, rate)
    if props is None or any(p.m <= 0 for p in props):
        return None
    if cell.groups == 2:
        a, b = props
        lo, hi = pr.folded(*pr.newcombe(a.x, a.m, b.x, b.m, pr.z_of(level)))
        return hi - lo
    z = pr.z_of(pr.sidak(level, cell.groups))
    box = [
        pr.wilson(p.x, p.m, z) if 0 < p.x < p.m else pr.rate_interval(p.x, p.m, z) for p in props
    ]
    lo = max(0.0, max(a for a, _ in box) - min(b for _, b in box))
    hi = max(b for _, b in box) - min(a for a, _ in box)
    return hi - lo


def run_cell(
    cell: Cell,
    reps: int,
    resamples: int,
    level: float,
    threshold: float | None,
    method: str = "percentile",
) -> dict:  # type: ignore[type-arg]
    spec = REGISTRY[KEYS[cell.metric]]
    t = truth(cell)
    # a stable seed per cell (hash() of strings changes with PYTHONHASHSEED per process)
    rng = np.random.default_rng(zlib.crc32(repr(cell).encode()))
    keep = np.ones(cell.groups, dtype=bool)
    hits = below = above = none = passed = ref_passed = 0
    widths: list[float] = []
    ratios: list[float] = []
    methods: dict[str, int] = {}
    for r in range(reps):
        st = sample(cell, rng)
        mv = spec.fn(st, {})
        if mv.value is None:
            none += 1
            continue
        b = resamples if cell.metric in BOOT else 50
        iv = bs.confidence(spec, st, keep, {}, mv.value, rs.draw(st, b, r), level, method)
        if iv.low is None or iv.high is None:
            none += 1
            continue
        methods[iv.method] = methods.get(iv.method, 0) + 1
        hits += iv.low <= t <= iv.high
        below += iv.high < t
        above += iv.low > t
        widths.append(iv.high - iv.low)
        ref = _reference_width(cell, st, level)
        if ref is not None and ref > 0:
            ratios.append((iv.high - iv.low) / ref)
        if threshold is not None and cell.metric not in RATIO:
            passed += iv.high < threshold
            if cell.groups == 2 and RATE.get(cell.metric):
                props = pr.rate_counts(st, RATE[cell.metric])
                if props is not None and all(p.m > 0 for p in props):
                    a, c = props
                    ref_passed += (
                        pr.folded(*pr.newcombe(a.x, a.m, c.x, c.m, pr.z_of(level)))[1] < threshold
                    )
    done = reps - none
    ratio = cell.metric in RATIO
    return {
        "cell": cell,
        "truth": t,
        "R": done,
        "none": none,
        "coverage": hits / done if done else math.nan,
        "wrong_pass": (above if ratio else below) / done if done else math.nan,
        "wrong_fail": (below if ratio else above) / done if done else math.nan,
        "width": float(np.mean(widths)) if widths else math.nan,
        "ratio": float(np.mean(ratios)) if ratios else math.nan,
        "pass": passed / done if done and threshold is not None else math.nan,
        "ref_pass": ref_passed / done if done and threshold is not None else math.nan,
        "methods": methods,
    }


def _se(p: float, r: int) -> str:
    if not r or math.isnan(p):
        return ""
    return (
        f" ({math.sqrt(max(p * (1 - p), 1.0 / r) / r):.3f})"
        if p in (0.0, 1.0)
        else (f" ({math.sqrt(p * (1 - p) / r):.3f})")
    )


def baseline_change(reps: int, n: int, level: float, delta: float) -> None:
    """Issue 28 item 7: two groups of n rows per run, a demographic-parity gap moving from
    0 (0.5 / 0.5) to 0.10 (0.6 / 0.5) — and, for "no change", staying at 0 with the new
    run proven compliant at a threshold of 0.1. The product's change interval
    (``stats/change.py: gap_change``, what ``--baseline`` uses for a gap of binary rates)
    flags ``regressed`` when its lower end exceeds δ; beside it the MOVER of the two runs'
    score intervals (``baseline.mover``, the method before) and the Wald interval of the
    change of the signed differences, which flags when (Δ̂ − z·se) > δ. See
    ``benchmarks/change_power.py`` for more baselines (gap 0.05, 0.10, a sign flip)."""
    from fairpolicy.baseline import mover
    from fairpolicy.stats.change import gap_change
    from fairpolicy.stats.rate_forms import bounds

    rng = np.random.default_rng(28)
    z = pr.z_of(level)
    for label, new_rates in (("+0.10 regression", (0.6, 0.5)), ("no change", (0.5, 0.5))):
        ours = before = wald = ok = 0
        for _ in range(reps):
            runs = []
            for rates in ((0.5, 0.5), new_rates):
                x = rng.binomial(n, rates)
                props = [pr.Proportion(float(v), float(n)) for v in x]
                lo, hi = bounds("gap", "one", [props], level)
                runs.append((abs(x[0] - x[1]) / n, lo, hi, (x[0] - x[1]) / n, props))
            (b_old, l_old, u_old, s_old, p_old), (b_new, l_new, u_new, s_new, p_new) = runs
            ends = gap_change(p_new, p_old, level)
            assert ends is not None
            low, high = ends
            ours += low > delta
            before += mover(b_new, l_new, u_new, b_old, l_old, u_old)[0] > delta
            ok += high <= delta or (u_new < 0.1 and low <= delta)  # the "no change" rule
            se = math.sqrt(sum(q.p * (1 - q.p) / q.m for q in (*p_old, *p_new)))
            wald += (s_new - s_old) - z * se > delta

        def share(k: int) -> str:
            f = k / reps
            return f"{f:.3f} ({math.sqrt(f * (1 - f) / reps):.3f})"

        print(
            f"| {label} | {n} | {reps} | {share(ours)} | {share(before)} | {share(wald)} "
            f"| {share(ok)} |"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--resamples", type=int, default=400, help="bootstrap B (f1, theil)")
    ap.add_argument("--groups", default="2,3,5,8")
    ap.add_argument("--n", default="30,100,1000")
    ap.add_argument("--bases", default="0.1,0.5")
    ap.add_argument("--gaps", default="0,0.1")
    ap.add_argument("--metrics", default="dp,dpr,eo,fpr,ppv,eqodds,f1,theil")
    ap.add_argument("--weights", default="none,frequency,survey")
    ap.add_argument("--level", type=float, default=0.95)
    ap.add_argument("--threshold", type=float, default=None)
    ap.add_argument(
        "--method", default="percentile", choices=("percentile", "bca"), help="--ci-method"
    )
    ap.add_argument(
        "--baseline-change",
        action="store_true",
        help="the change against a baseline instead of the grid (--n, --reps)",
    )
    a = ap.parse_args(argv)
    if a.baseline_change:
        print(
            "| scenario | n per group | R | flagged `regressed` (counts: stats/change.py) "
            "| flagged (MOVER of score intervals, before) "
            "| flagged by the Wald interval of the change | ok under `ci_upper` |"
        )
        print("|---|---|---|---|---|---|---|")
        for n in map(int, a.n.split(",")):
            baseline_change(a.reps, n, a.level, 0.0)
        return 0
    print(
        "| metric | G | n | base | gap | weights | truth | R | coverage | wrong PASS | "
        "wrong FAIL | width | × Newcombe / × box | ci_upper pass (Newcombe) | method |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for metric in a.metrics.split(","):
        for g in map(int, a.groups.split(",")):
            for n in map(int, a.n.split(",")):
                for base in map(float, a.bases.split(",")):
                    for gap in map(float, a.gaps.split(",")):
                        for w in a.weights.split(","):
                            cell = Cell(metric, g, n, base, gap, w)
                            res = run_cell(
                                cell, a.reps, a.resamples, a.level, a.threshold, a.method
                            )
                            r = res["R"]
                            thr = (
                                f"{res['pass']:.3f} ({res['ref_pass']:.3f})"
                                if not math.isnan(res["pass"])
                                else ""
                            )
                            ratio = "" if math.isnan(res["ratio"]) else f"{res['ratio']:.2f}"
                            print(
                                f"| {metric} | {g} | {n} | {base:g} | {gap:g} | {w} | "
                                f"{res['truth']:.4f} | {r} | "
                                f"{res['coverage']:.3f}{_se(res['coverage'], r)} | "
                                f"{res['wrong_pass']:.3f}{_se(res['wrong_pass'], r)} | "
                                f"{res['wrong_fail']:.3f}{_se(res['wrong_fail'], r)} | "
                                f"{res['width']:.3f} | {ratio} | {thr} | "
                                f"{','.join(sorted(res['methods']))}"
                                + (f" (no interval: {res['none']})" if res["none"] else "")
                                + " |",
                                flush=True,
                            )
    print(f"\n{time.perf_counter() - start:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
