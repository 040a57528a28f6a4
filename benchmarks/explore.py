"""``fairpolicy explore`` against its anchors, DivExplorer and SliceLine, on the same data.

The anchors are installed only into a temporary virtual environment (never the shared
one)::

    python -m venv /tmp/explore-anchors
    /tmp/explore-anchors/bin/pip install divexplorer sliceline pandas pyarrow
    python benchmarks/explore.py [--rows 200000] [--venv /tmp/explore-anchors]

Data: ``rows`` rows, six independent categorical attributes (2–8 values) and two planted
slices (``a=a0 ∧ b=b1`` selected more often and with more errors, ``c=c2`` less often).

Comparisons, where the definitions agree:

* **DivExplorer** (``DivergenceExplorer.get_pattern_divergence``, boolean outcome
  ``y_pred``): its divergence is slice mean − overall mean, i.e. (1 − support) × ours
  (slice − rest); both rank the same itemsets of length ≤ depth with support ≥ min_support.
  Compared: the top-k itemsets by |divergence| under DivExplorer's own measure computed
  from our counts (value − overall), and the time.
* **SliceLine** (``sliceline.Slicefinder``, errors = ``y_pred ≠ y_true``, ``alpha=1``: the
  score is then the slice's mean error / the overall mean − 1, a ranking by error rate):
  its top-k against our top-k slices by error rate (``--metric error_rate``) with
  positive divergence, same ``min_sup`` and ``max_l``.

What the anchors' output lacks is printed too: neither adjusts for the number of slices
tested (DivExplorer gives an unadjusted Welch t per itemset, SliceLine no test at all) and
neither gives an interval.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from fairpolicy.explore import explore

SIZES = {"a": 2, "b": 4, "c": 3, "d": 5, "e": 6, "f": 8}

ANCHORS = textwrap.dedent(
    """
    import json, sys, time, warnings
    import pandas as pd
    warnings.filterwarnings("ignore")
    path, depth, support, k = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    df = pd.read_parquet(path)
    attrs = [c for c in df.columns if c not in ("y_true", "y_pred")]
    out = {}
    from divexplorer import DivergenceExplorer
    t = time.perf_counter()
    res = DivergenceExplorer(df[attrs + ["y_pred"]]).get_pattern_divergence(
        min_support=support, boolean_outcomes=["y_pred"])
    out["divexplorer_seconds"] = time.perf_counter() - t
    res = res[res["itemset"].map(len).between(1, depth)]
    res = res.reindex(res["y_pred_div"].abs().sort_values(ascending=False).index)
    out["divexplorer_columns"] = [str(c) for c in res.columns]
    out["divexplorer_count"] = int(len(res))
    out["divexplorer_top"] = [sorted(s) for s in res["itemset"].head(k)]
    from sliceline.slicefinder import Slicefinder
    t = time.perf_counter()
    errors = (df["y_pred"] != df["y_true"]).astype(float).to_numpy()
    sf = Slicefinder(alpha=1.0, k=k, max_l=depth, min_sup=support, verbose=False)
    sf.fit(df[attrs].astype(str), errors)
    out["sliceline_seconds"] = time.perf_counter() - t
    top = []
    for row in sf.top_slices_:
        top.append(sorted(f"{a}={v}" for a, v in zip(attrs, row) if v is not None))
    out["sliceline_top"] = top
    out["sliceline_stats_keys"] = sorted(sf.top_slices_statistics_[0]) if top else []
    print(json.dumps(out))
    """
)


def generate(rows: int, seed: int = 18) -> object:
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    cols = {k: rng.integers(0, n, rows) for k, n in SIZES.items()}
    planted = (cols["a"] == 0) & (cols["b"] == 1)
    low = cols["c"] == 2
    y_true = (rng.random(rows) < 0.4).astype(np.int8)
    p_sel = np.where(planted, 0.45, np.where(low, 0.22, 0.3))
    y_pred = (rng.random(rows) < p_sel).astype(np.int8)
    flip = planted & (rng.random(rows) < 0.15)  # more errors in the planted slice
    y_pred = np.where(flip, 1 - y_true, y_pred).astype(np.int8)
    table = {
        k: pa.array([f"{k}{v}" for v in range(SIZES[k])]).take(pa.array(c)) for k, c in cols.items()
    }
    return pa.table({**table, "y_true": y_true, "y_pred": y_pred})


def ours(table: object, metric: str, depth: int, support: float) -> tuple[object, float]:
    t = time.perf_counter()
    res = explore(
        table,
        target="y_true",
        prediction="y_pred",
        attributes=list(SIZES),
        metric=metric,
        depth=depth,
        min_support=support,
        top=10**6,
    )
    return res, time.perf_counter() - t


def items(s: object) -> list[str]:
    return sorted(f"{a}={v}" for a, v in s.conditions)  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--min-support", type=float, default=0.02)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--venv", default="/tmp/explore-anchors")
    a = ap.parse_args()
    import pyarrow.parquet as pq

    table = generate(a.rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.parquet"
        pq.write_table(table, path)  # type: ignore[arg-type]
        res, sec = ours(str(path), "selection_rate", a.depth, a.min_support)
        err, sec_err = ours(str(path), "error_rate", a.depth, a.min_support)
        py = Path(a.venv) / "bin" / "python"
        if not py.exists():
            sys.exit(f"no anchor environment at {a.venv}: see this script's docstring")
        proc = subprocess.run(
            [str(py), "-c", ANCHORS, str(path), str(a.depth), str(a.min_support), str(a.k)],
            capture_output=True,
            text=True,
            check=True,
        )
        anchors = json.loads(proc.stdout.strip().splitlines()[-1])
    overall = res.overall  # type: ignore[attr-defined]
    tested = [s for s in res.search.slices if s.value is not None]  # type: ignore[attr-defined]
    by_div = sorted(tested, key=lambda s: -abs(s.value - overall))
    our_top = [items(s) for s in by_div[: a.k]]
    dx_top = anchors["divexplorer_top"]
    agree_dx = len({tuple(x) for x in our_top} & {tuple(x) for x in dx_top})
    err_pos = sorted(
        (s for s in err.search.slices if s.value is not None),  # type: ignore[attr-defined]
        key=lambda s: -s.value,
    )
    err_top = [items(s) for s in err_pos[: a.k]]
    sl_top = anchors["sliceline_top"]
    agree_sl = len({tuple(x) for x in err_top} & {tuple(x) for x in sl_top})
    sig = sum(s.significant for s in res.search.slices)  # type: ignore[attr-defined]
    print(f"rows={a.rows} attributes={len(SIZES)} depth={a.depth} min_support={a.min_support}")
    print(
        f"fairpolicy explore (selection_rate): {sec:.2f} s, {res.search.family_size} slices "  # type: ignore[attr-defined]
        f"tested, {sig} significant at FDR 0.05; top: {' ∧ '.join(our_top[0])}"
    )
    print(
        f"DivExplorer: {anchors['divexplorer_seconds']:.2f} s "
        f"(ratio {anchors['divexplorer_seconds'] / sec:.1f}x), {anchors['divexplorer_count']} "
        f"itemsets; top-{a.k} agreement {agree_dx}/{a.k}; top: {' ∧ '.join(dx_top[0])}"
    )
    print(
        f"fairpolicy explore (error_rate): {sec_err:.2f} s; SliceLine (alpha=1): "
        f"{anchors['sliceline_seconds']:.2f} s (ratio "
        f"{anchors['sliceline_seconds'] / sec_err:.1f}x); top-{min(a.k, len(sl_top))} "
        f"agreement {agree_sl}/{min(a.k, len(sl_top))}; top: "
        f"{' ∧ '.join(sl_top[0]) if sl_top else '-'}"
    )
    print(
        "missing from the anchors: DivExplorer columns "
        f"{anchors['divexplorer_columns']} (an unadjusted t, no interval, no family size); "
        f"SliceLine statistics {anchors['sliceline_stats_keys']} (no test, no interval)."
    )


if __name__ == "__main__":
    main()
