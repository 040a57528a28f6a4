"""Cost of confidence intervals: `check` on a 10M-row file, without and with 1000 bootstrap
resamples on every control (target: the intervals add ≤ 25 %).

Both runs happen in this process, one after the other, on the same generated file, so the
ratio is measured in one run (these machines are noisy). The file is generated, never
committed.

    python benchmarks/bootstrap_overhead.py [--rows 10000000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

CONTROLS = [
    ("dp-sex", "demographic_parity_diff", "sex"),
    ("dpr-sex", "demographic_parity_ratio", "sex"),
    ("eo-sex", "equal_opportunity_diff", "sex"),
    ("eod-race", "equalized_odds_diff", "race"),
    ("ppv-race", "predictive_parity_diff", "race"),
    ("fpr-age", "fpr_diff", "age"),
    ("acc-age", "accuracy_diff", "age"),
    ("aod-sex-race", "average_odds_diff", "sex,race"),
    ("f1-race", "weighted_f1_gap", "race"),
    ("mdp-age", "multiclass_demographic_parity", "age"),
]


def write_data(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, rows, dtype=np.int8)
    table = pa.table(
        {
            "y_true": y,
            "y_pred": np.where(rng.random(rows) < 0.85, y, 1 - y).astype(np.int8),
            "sex": pa.array(rng.choice(["F", "M"], rows)).dictionary_encode(),
            "race": pa.array(rng.choice(["a", "b", "c", "d", "e"], rows)).dictionary_encode(),
            "age": pa.array(rng.choice(["<30", "30-50", ">50"], rows)).dictionary_encode(),
        }
    )
    pacsv.write_csv(table, path)


def write_policy(path: Path) -> None:
    lines = []
    for cid, key, dim in CONTROLS:
        lines += [
            f"- control-id: {cid}",
            "  props:",
            f"    - {{name: metric_key, value: {key}}}",
            "    - {name: threshold, value: '0.5'}",
            f"    - {{name: operator, value: '{'>=' if key.endswith('ratio') else '<'}'}}",
            "    - {name: input.target, value: y_true}",
            "    - {name: input.prediction, value: y_pred}",
            f"    - {{name: input.dimension, value: '{dim}'}}",
        ]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--resamples", type=int, default=1000)
    args = ap.parse_args()
    import fairpolicy

    with tempfile.TemporaryDirectory() as d:
        data, policy = Path(d) / "data.csv", Path(d) / "policy.yaml"
        t0 = time.perf_counter()
        write_data(data, args.rows)
        print(
            f"generated {args.rows:,} rows ({data.stat().st_size / 1e6:.0f} MB) in "
            f"{time.perf_counter() - t0:.1f} s"
        )
        write_policy(policy)
        fairpolicy.check(policy, data)  # warm-up: imports, page cache
        t0 = time.perf_counter()
        plain = fairpolicy.check(policy, data)
        base = time.perf_counter() - t0
        t0 = time.perf_counter()
        boot = fairpolicy.check(policy, data, bootstrap=args.resamples)
        with_ci = time.perf_counter() - t0
    assert all(f.ci is not None and f.ci.low is not None for f in boot.findings)
    assert [f.value for f in plain.findings] == [f.value for f in boot.findings]
    print(f"check, {len(CONTROLS)} controls:             {base:.2f} s")
    print(f"check + {args.resamples} resamples per control:  {with_ci:.2f} s")
    print(f"overhead ratio: {with_ci / base:.3f} (target ≤ 1.25)")


if __name__ == "__main__":
    main()
