"""Monitoring simulation for the ``sequential`` window gate (issue 30, "Done when").

A demographic-parity gap (selection rates of two groups, ``gap <= THRESHOLD``) is
monitored over 52 weekly windows of ``n`` rows per group, drawn afresh each week
(x_g ~ Binomial(n, p_g,t)). Every window's interval is the project's own score interval
(:func:`fairpolicy.stats.rate_forms.bounds`: Newcombe hybrid score interval of the
difference, folded through |·|, its lower end from the family at 1 − α/2), and the
alarm is :func:`fairpolicy.stats.sequential.sequential_alarm`. Gates compared:

- ``sequential`` (the gate): window t's score interval at ``window_level(t, α)`` =
  1 − α_t (two-sided), confirmed by the exact Clopper–Pearson box at the same level
  (``sequential.confirmed``, ``exact_box``);
- the score interval alone at the same level (what the gate would be without the box);
- fold-end level (not used by the gate): at ``fold_end_level`` = 1 − 2α_t, to measure
  what a one-sided level would gain;
- ``any`` + ``ci_lower`` 95 %: fail if some window's 95 % interval lies above the threshold;
- ``any`` + point: fail if some window's point gap (exact rational) exceeds the threshold.

Scenarios: no drift (true gap exactly at the threshold — compliant, the hardest case —
and true gap 0), where every alarm is false: the horizon false-alarm rate with its Monte
Carlo standard error (or, at 0 alarms, the one-sided 95 % bound 3/R); a step (gap 0 →
STEP at window k) and a ramp (gap rising by RAMP per window, first above the threshold at
window k), where the detection delay is the alarm window − k: the median over runs (runs
that never detect count as ∞, so the median exists only when more than half detect) with
its 95 % distribution-free Monte Carlo interval (order statistics), the share detected
by week 52 and the share that alarmed before k (false alarms).

Exact shortcuts skip intervals that cannot alarm (:func:`first_alarms_fast`); the
first runs of every cell are decided both ways and must agree.

``--exact``: for small n, each window's false-alarm probability at the threshold is
computed exactly by enumerating (x₁, x₂) (mass beyond ±9 s.d. ignored and reported),
and summed over the 52 windows — the union bound the gate rests on, without Monte Carlo.

Run: ``nice -n 10 python benchmarks/monitoring_sim.py --runs 4000`` (prints Markdown).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from fractions import Fraction

import numpy as np

from fairpolicy.stats import proportions as pr
from fairpolicy.stats import rate_forms as rf
from fairpolicy.stats import sequential as sq

WINDOWS = 52
THRESHOLD = Fraction(1, 10)
OP = "<="
BASE = 0.45  # the lower group's selection rate; the other's is BASE + gap
STEP = 0.15
RAMP = 0.005
K = 20
SCENARIOS = ("at threshold", "zero", "step", "ramp")
GATE, ALONE, FOLD = "sequential", "score interval alone", "fold-end level (not used)"
SEQUENTIAL = (GATE, ALONE, FOLD)
CI95, POINT = "any + ci_lower 95 %", "any + point"
RULES = (*SEQUENTIAL, CI95, POINT)
CHECKED = 25  # runs per cell decided both ways (no shortcut) and compared


def interval(x1: int, x2: int, n: int, level: float) -> tuple[float, float]:
    props = [[pr.Proportion(float(x1), float(n)), pr.Proportion(float(x2), float(n))]]
    return rf.bounds("gap", "one", props, level)


def box(x1: int, x2: int, n: int, level: float) -> tuple[float, float]:
    props = [pr.Proportion(float(x1), float(n)), pr.Proportion(float(x2), float(n))]
    lo, hi = sq.exact_box("gap", [props], level)
    return float(lo), float(hi)


def gate_interval(x1: int, x2: int, n: int, level: float) -> tuple[float | None, float | None]:
    """What the ``sequential`` gate reads: the score interval confirmed by the exact box."""
    lo, hi = sq.confirmed(interval(x1, x2, n, level), box(x1, x2, n, level))
    return lo, hi


def first_alarms(
    xs: np.ndarray, n: int, alpha: float, levels: dict[str, list[float]]
) -> dict[str, int | None]:
    """Per rule, the 1-based window of the first alarm (None: no alarm in 52 weeks), every
    interval computed and the sequential rules decided by ``sequential_alarm`` (slow)."""
    out: dict[str, int | None] = {}
    for rule in SEQUENTIAL:
        make = gate_interval if rule == GATE else interval
        ivs: list[tuple[float | None, float | None]] = [
            make(int(a), int(b), n, lv) for (a, b), lv in zip(xs, levels[rule], strict=True)
        ]
        i = sq.sequential_alarm(ivs, THRESHOLD, OP)
        out[rule] = None if i is None else i + 1
    out[CI95] = out[POINT] = None
    for t, (a, b) in enumerate(xs, start=1):
        if out[CI95] is None and sq.violates(*interval(int(a), int(b), n, 0.95), THRESHOLD, OP):
            out[CI95] = t
        if out[POINT] is None and Fraction(abs(int(a) - int(b)), n) > THRESHOLD:
            out[POINT] = t
    return out


def first_alarms_fast(
    xs: np.ndarray, n: int, alpha: float, levels: dict[str, list[float]]
) -> dict[str, int | None]:
    """:func:`first_alarms` with exact shortcuts (checked against it on the first runs of
    every cell): the folded lower end never exceeds the point gap |d| (Newcombe's interval
    holds d), so a window with |d| ≤ threshold alarms under no rule; the lower end falls as
    the level rises (Wilson intervals nest), so a window whose 95 % lower end is ≤
    threshold cannot alarm at the sequential levels (all above 0.95); and the gate's
    confirmed interval alarms only where the score interval alone does."""
    out: dict[str, int | None] = dict.fromkeys(RULES)
    for t, (a, b) in enumerate(xs, start=1):
        x1, x2 = int(a), int(b)
        if Fraction(abs(x1 - x2), n) <= THRESHOLD:
            continue
        if out[POINT] is None:
            out[POINT] = t
        if not sq.violates(*interval(x1, x2, n, 0.95), THRESHOLD, OP):
            continue
        if out[CI95] is None:
            out[CI95] = t
        if out[FOLD] is None and sq.violates(
            *interval(x1, x2, n, levels[FOLD][t - 1]), THRESHOLD, OP
        ):
            out[FOLD] = t
        level = levels[GATE][t - 1]
        if not sq.violates(*interval(x1, x2, n, level), THRESHOLD, OP):
            continue
        if out[ALONE] is None:
            out[ALONE] = t
        if out[GATE] is None and sq.violates(*box(x1, x2, n, level), THRESHOLD, OP):
            out[GATE] = t
    return out


def gaps(scenario: str) -> list[float]:
    t = np.arange(1, WINDOWS + 1)
    thr = float(THRESHOLD)
    if scenario == "at threshold":
        return [thr] * WINDOWS
    if scenario == "zero":
        return [0.0] * WINDOWS
    if scenario == "step":
        return [STEP if s >= K else 0.0 for s in t]
    if scenario == "ramp":  # first above the threshold at window K
        return [max(0.0, thr + RAMP * (s - K + 0.5)) for s in t]
    raise ValueError(scenario)


def simulate(
    scenario: str, n: int, runs: int, alpha: float, seed: int
) -> dict[str, list[int | None]]:
    rng = np.random.default_rng((seed, n, SCENARIOS.index(scenario)))
    g = np.asarray(gaps(scenario))
    p = np.stack([BASE + g, np.full(WINDOWS, BASE)], axis=1)
    levels = {
        GATE: [sq.window_level(t, alpha) for t in range(1, WINDOWS + 1)],
        ALONE: [sq.window_level(t, alpha) for t in range(1, WINDOWS + 1)],
        FOLD: [sq.fold_end_level(t, alpha) for t in range(1, WINDOWS + 1)],
    }
    got: dict[str, list[int | None]] = {r: [] for r in RULES}
    for r in range(runs):
        xs = rng.binomial(n, p)
        fast = first_alarms_fast(xs, n, alpha, levels)
        if r < CHECKED:
            slow = first_alarms(xs, n, alpha, levels)
            assert fast == slow, (scenario, n, r, fast, slow)
        for rule, w in fast.items():
            got[rule].append(w)
    return got


def rate_text(hits: int, runs: int) -> str:
    if hits == 0:
        return f"0 (≤ {3 / runs:.4f})"
    p = hits / runs
    return f"{p:.4f} ± {math.sqrt(p * (1 - p) / runs):.4f}"


def median_delay(first: list[int | None]) -> str:
    """Median of (alarm − K) over runs, no detection and pre-K alarms handled as ∞ and
    excluded respectively, with the 95 % order-statistic interval of the median."""
    d = sorted(math.inf if w is None else w - K for w in first if w is None or w >= K)
    r = len(d)
    if r == 0:
        return "—"
    med = d[(r - 1) // 2]
    half = 1.96 * math.sqrt(r) / 2
    lo = d[max(0, math.floor(r / 2 - half) - 1)]
    hi = d[min(r - 1, math.ceil(r / 2 + half) - 1)]

    def s(x: float) -> str:
        return f"> {WINDOWS - K}" if math.isinf(x) else f"{x:g}"

    return f"{s(med)} [{s(lo)}, {s(hi)}]"


def exact_union(
    n: int, p1: float, p2: float, alpha: float, rule: str
) -> tuple[float, float, float]:
    """(Σ_t P(window t alarms), max_t P(window t alarms)/α_t, mass ignored) at true gap
    p1 − p2, exactly (enumeration)."""
    from scipy.stats import binom

    def span(p: float) -> np.ndarray:
        sd = math.sqrt(n * p * (1 - p))
        return np.arange(max(0, math.floor(n * p - 9 * sd)), min(n, math.ceil(n * p + 9 * sd)) + 1)

    a, b = span(p1), span(p2)
    w = np.outer(binom.pmf(a, n, p1), binom.pmf(b, n, p2))
    ignored = max(0.0, 1.0 - float(w.sum()))
    total = worst = 0.0
    for t in range(1, WINDOWS + 1):
        lv = sq.window_level(t, alpha) if rule == ALONE else sq.fold_end_level(t, alpha)
        before = total
        for i, x1 in enumerate(a):
            for j, x2 in enumerate(b):
                if w[i, j] > 1e-300 and sq.violates(
                    *interval(int(x1), int(x2), n, lv), THRESHOLD, OP
                ):
                    total += float(w[i, j])
        worst = max(worst, (total - before) / float(sq.spending(t, alpha)))
    return total, worst, ignored


def ratio_corner(n: int, m2: int, horizon: int, alpha: float) -> tuple[float, float, float, float]:
    """``min ÷ max >= 0.8`` with group 2's true rate 1 (seen as m2/m2 every window) and group
    1's 0.8: (Σ_t P(alarm_t) with the score interval alone, with the exact-box
    confirmation, and the largest P(alarm_t)/α_t of each), over ``horizon`` windows,
    exactly (enumerating x1; an alarm needs x1 small, so the scan stops at the first x1
    that does not alarm)."""
    from scipy.stats import binom

    w = [float(v) for v in binom.pmf(np.arange(n + 1), n, 0.8)]
    thr = Fraction(4, 5)
    score = boxed = worst_s = worst_b = 0.0
    for t in range(1, horizon + 1):
        level, a_t = sq.window_level(t, alpha), float(sq.spending(t, alpha))
        s_t = b_t = 0.0
        for x1 in range(n + 1):
            props = [[pr.Proportion(float(x1), float(n)), pr.Proportion(float(m2), float(m2))]]
            iv = rf.bounds("ratio", "one", props, level)
            if not sq.violates(*iv, thr, ">="):
                break
            s_t += w[x1]
            both = sq.confirmed(iv, sq.exact_box("ratio", props, level))
            if both[0] is not None and both[1] is not None and sq.violates(*both, thr, ">="):
                b_t += w[x1]
        score, boxed = score + s_t, boxed + b_t
        worst_s, worst_b = max(worst_s, s_t / a_t), max(worst_b, b_t / a_t)
    return score, boxed, worst_s, worst_b


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=2000, help="runs per no-drift cell")
    ap.add_argument("--drift-runs", type=int, default=None, help="runs per drift cell")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--sizes", default="200,1000,5000", help="rows per group per window")
    ap.add_argument("--drift-sizes", default="1000,5000")
    ap.add_argument("--seed", type=int, default=20261128)
    ap.add_argument("--exact", default="", help="sizes for the exact union bound, e.g. 30,100")
    ap.add_argument(
        "--parts",
        default="null,drift",
        help="which tables: null, drift, ratio (and --exact's)",
    )
    args = ap.parse_args(argv)
    alpha, runs = args.alpha, args.runs
    drift_runs = args.drift_runs or runs
    start = time.time()
    print(
        f"52 weekly windows, DP gap {OP} {THRESHOLD} (selection rates {BASE} + gap and {BASE}), "
        f"α = {alpha}, H = {sq.HORIZON}: the gate spends {sq.spent(WINDOWS, alpha):.4g} by "
        f"week 52; R = {runs} (no drift), {drift_runs} (drift); seed {args.seed}\n"
    )
    parts = set(args.parts.split(","))
    if "null" in parts:
        no_drift(args.sizes, runs, alpha, args.seed)
        print(f"\n({time.time() - start:.0f} s)\n")
    if "drift" in parts:
        drift(args.drift_sizes, drift_runs, alpha, args.seed)
        print(f"\n({time.time() - start:.0f} s)\n")
    if args.exact:
        exact(args.exact, alpha)
        print(f"\n({time.time() - start:.0f} s)")
    if "ratio" in parts:
        print(
            "\nRatio at a boundary rate (min ÷ max >= 0.8, true rates 0.8 and 1), exactly: "
            "Σ_t P(alarm_t) and max_t P(alarm_t)/α_t, score interval alone vs confirmed by "
            "the exact box.\n"
        )
        print(
            "| rows (groups 1, 2) | windows | score alone | max / α_t | confirmed "
            "| max / α_t | α spent |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        for n, m2 in ((30, 60), (44, 88), (72, 144)):
            for horizon in (52, 1000):
                sc, bx, ws, wb = ratio_corner(n, m2, horizon, alpha)
                print(
                    f"| {n}, {m2} | {horizon} | {sc:.4f} | {ws:.2f} | {bx:.4f} | {wb:.2f} | "
                    f"{sq.spent(horizon, alpha):.4f} |",
                    flush=True,
                )
        print(f"\n({time.time() - start:.0f} s)")
    return 0


def no_drift(sizes: str, runs: int, alpha: float, seed: int) -> None:
    print("| true gap | n per group | " + " | ".join(RULES) + " |")
    print("|---|---:|" + "---:|" * len(RULES))
    for scenario in ("at threshold", "zero"):
        for n in (int(s) for s in sizes.split(",")):
            got = simulate(scenario, n, runs, alpha, seed)
            cells = [rate_text(sum(w is not None for w in got[r]), runs) for r in RULES]
            label = f"{float(THRESHOLD)} (at the threshold)" if scenario != "zero" else "0"
            print(f"| {label} | {n} | " + " | ".join(cells) + " |", flush=True)


def drift(sizes: str, drift_runs: int, alpha: float, seed: int) -> None:
    print(
        f"Detection (k = {K}; step: gap 0 → {STEP} at window {K}; ramp: +{RAMP} per window, "
        f"first above {THRESHOLD} at window {K}). Median delay (alarm window − k) "
        "[95 % MC interval]; detected by week 52; alarmed before k.\n"
    )
    print("| drift | n per group | rule | median delay | detected | alarm before k |")
    print("|---|---:|---|---|---:|---:|")
    for scenario in ("step", "ramp"):
        for n in (int(s) for s in sizes.split(",")):
            got = simulate(scenario, n, drift_runs, alpha, seed)
            for r in RULES:
                first = got[r]
                det = sum(w is not None and w >= K for w in first)
                early = sum(w is not None and w < K for w in first)
                print(
                    f"| {scenario} | {n} | {r} | {median_delay(first)} | "
                    f"{rate_text(det, drift_runs)} | {rate_text(early, drift_runs)} |",
                    flush=True,
                )


def exact(sizes: str, alpha: float) -> None:
    print(
        "Exact union bound at the threshold (no Monte Carlo): Σ over the 52 windows of "
        "P(window t alarms), against the α spent.\n"
    )
    print(
        "| n per group | rates | rule | Σ_t P(alarm_t) | spent | max_t P(alarm_t)/α_t "
        "| mass ignored |"
    )
    print("|---:|---|---|---:|---:|---:|---:|")
    for n in (int(s) for s in sizes.split(",")):
        for p1, p2 in ((0.55, 0.45), (0.15, 0.05)):
            for rule in (ALONE, FOLD):
                total, worst, ign = exact_union(n, p1, p2, alpha, rule)
                print(
                    f"| {n} | {p1}/{p2} | {rule} | {total:.3e} | "
                    f"{sq.spent(WINDOWS, alpha):.4g} | {worst:.3f} | {ign:.1e} |",
                    flush=True,
                )


if __name__ == "__main__":
    sys.exit(main())
