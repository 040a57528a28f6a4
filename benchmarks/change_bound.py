"""How much power can *any* valid test of "the gap grew" have from a baseline gap of 0?
(issue 28, docs/statistics.md "Issue 28, third part").

Normal limit: X = δ̂_new/σ ~ N(a, 1) and Y = δ̂_old/σ ~ N(b, 1), independent (σ the s.e. of
one run's difference of two rates). The claim "the gap grew" is |a| > |b|; the null is
|a| ≤ |b|; the regression cell is (a, b) = (μ, 0), μ = 0.10/σ (≈ 4.5 at 1,000 rows per
group and rates near 0.5).

1. A linear programme over tests constant on cells of (X, |Y|) (WLOG: the problem is
   symmetric in b → −b), size ≤ α at a grid of null points, maximising the power at
   (μ, 0); its dual is a least-favourable mixture Λ of null points.
2. The Neyman–Pearson test of (μ, 0) against Λ, on a fine grid: its power bounds the power
   of every test of level α on the whole null (Lehmann & Romano, TSH, Theorem 3.8.1).

Beside it, on the same grid: the Wald interval of the change of |gap| (= the product's
intersection–union low end with Wald parts) and the signed Wald interval of δ_new − δ_old.

    python benchmarks/change_bound.py 3 4.5 6      # about a minute per μ
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import optimize, stats

ALPHA = 0.025  # one-sided: the low end of a 95 % interval above 0


def bound(mu: float, h: float = 0.1, fine: float = 0.01) -> dict[str, float]:
    top = mu + 7.0
    xe = np.arange(-top, top + 1e-9, h)
    ye = np.arange(0.0, top + 1e-9, h)

    def px(a: float) -> np.ndarray:
        c = stats.norm.cdf(xe - a)
        c[0], c[-1] = 0.0, 1.0
        return np.diff(c)

    def py(b: float) -> np.ndarray:  # |Y|
        c = stats.norm.cdf(ye - b) - stats.norm.cdf(-ye - b)
        c[-1] = 1.0
        return np.diff(c)

    pts = [(s * t, t) for t in np.arange(0.0, mu + 4.01, 0.1) for s in (1.0, -1.0)]
    pts += [(f * t, t) for t in np.arange(0.5, mu + 4.01, 0.5) for f in (0.0, 0.5, -0.5)]
    a_ub = np.array([np.outer(px(a), py(b)).ravel() for a, b in pts])
    alt = np.outer(px(mu), py(0.0)).ravel()
    res = optimize.linprog(
        -alt, A_ub=a_ub, b_ub=np.full(len(pts), ALPHA), bounds=(0, 1), method="highs"
    )
    lam = -res.ineqlin.marginals
    lam = lam / lam.sum()
    x = np.arange(-top, top, fine) + fine / 2
    y = np.arange(0.0, top, fine) + fine / 2
    gx, gy = np.meshgrid(x, y, indexing="ij")

    def dens(a: float, b: float) -> np.ndarray:
        fy = stats.norm.pdf(gy - b) + stats.norm.pdf(gy + b)
        out: np.ndarray = stats.norm.pdf(gx - a) * fy * fine * fine
        return out

    fa = dens(mu, 0.0)
    f0 = sum(w * dens(*pts[i]) for i, w in enumerate(lam) if w > 1e-6)
    order = np.argsort(-(np.log(fa) - np.log(f0)).ravel())
    k = int(np.searchsorted(np.cumsum(f0.ravel()[order]), ALPHA))
    c = stats.norm.ppf(1 - ALPHA) * np.sqrt(2.0)
    heavy = int(np.argmax(lam))
    return {
        "lp": -float(res.fun),
        "np_bound": float(fa.ravel()[order][:k].sum()),
        "abs_wald": float(fa[(np.abs(gx) - gy) > c].sum()),
        "signed_wald": float((fa[(gx - gy) > c].sum() + fa[(gx + gy) > c].sum()) / 2),
        "least_favourable_a": pts[heavy][0],
        "least_favourable_b": pts[heavy][1],
    }


def main() -> None:
    mus = [float(m) for m in sys.argv[1:]] or [4.5]
    print("| μ | LP (cell tests) | any valid test ≤ | Wald of the |gap| change | signed Wald |")
    print("|---|---|---|---|---|")
    for mu in mus:
        r = bound(mu)
        print(
            f"| {mu:g} | {r['lp']:.4f} | {r['np_bound']:.4f} | {r['abs_wald']:.4f} | "
            f"{r['signed_wald']:.4f} |  (Λ heaviest at a = {r['least_favourable_a']:.1f}, "
            f"|b| = {r['least_favourable_b']:.1f})"
        )


if __name__ == "__main__":
    main()
