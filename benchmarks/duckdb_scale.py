"""Larger-than-memory check with the DuckDB engine: 100M rows, peak RSS under 4 GB.

Generates a deterministic Parquet file in chunks (pyarrow ``ParquetWriter``, so the
generation itself stays small in memory) in a temporary directory, runs
``fairpolicy check --engine duckdb`` on it as a child process with ten controls
(count metrics over four groupings, an AUC and a calibration gap on full-precision
scores, a data check), and prints rows, bytes, wall time and the child's peak RSS
(``os.wait4``) with its ratio to the 4 GB target. The file is deleted afterwards
unless ``--keep`` is given.

    python benchmarks/duckdb_scale.py                   # 100M rows (~1.3 GB of Parquet)
    python benchmarks/duckdb_scale.py --rows 5000000    # a quicker run
    python benchmarks/duckdb_scale.py --rows 5000000 --engines duckdb,embedded
    python benchmarks/duckdb_scale.py --rows 10000000 --format csv --engines duckdb,embedded
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

TARGET_RSS_GB = 4.0
CHUNK_ROWS = 5_000_000

#: (control id, metric, operator, threshold, dimension, reads the score column)
CONTROLS = [
    ("dp-sex", "demographic_parity_diff", "<", "0.1", "sex", False),
    ("di-race", "demographic_parity_ratio", ">=", "0.8", "race", False),
    ("eo-sex", "equal_opportunity_diff", "<", "0.1", "sex", False),
    ("eodds-age", "equalized_odds_diff", "<", "0.1", "age_band", False),
    ("pp-race", "predictive_parity_diff", "<", "0.1", "race", False),
    ("acc-sex-race", "accuracy_diff", "<", "0.1", "sex,race", False),
    ("inter", "intersectional_disparity", "<", "0.2", "sex,age_band", False),
    ("auc-race", "auc_gap", "<", "0.05", "race", True),
    ("cal-sex", "calibration_gap", "<", "0.05", "sex", True),
    ("share", "min_group_share", ">=", "0.01", "race,age_band", False),
]


def policy_yaml() -> str:
    out = []
    for cid, metric, op, threshold, dim, score in CONTROLS:
        props = {
            "metric_key": metric,
            "threshold": threshold,
            "operator": op,
            "input.dimension": dim,
        }
        if metric != "min_group_share":
            props.update({"input.target": "y_true", "input.prediction": "y_pred"})
        if score:
            props["input.score"] = "y_score"
        out.append(f"- control-id: {cid}\n  props:\n")
        out += [f"  - {{name: {k}, value: '{v}'}}\n" for k, v in props.items()]
    return "".join(out)


def generate(path: Path, rows: int, seed: int = 20261122) -> float:
    """Write ``rows`` rows in chunks of ``CHUNK_ROWS``; returns the seconds it took."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    races = pa.array(["White", "Black", "Hispanic", "Asian", "Other"])
    ages = pa.array(["18-29", "30-49", "50+"])
    sexes = pa.array(["F", "M"])
    import pyarrow.csv as pacsv

    csv = path.suffix == ".csv"
    t0 = time.perf_counter()
    writer: Any = None
    try:
        for start in range(0, rows, CHUNK_ROWS):
            n = min(CHUNK_ROWS, rows - start)
            rng = np.random.default_rng([seed, start])
            sex = rng.integers(0, 2, n, dtype=np.int8)
            race = rng.choice(5, n, p=[0.5, 0.2, 0.15, 0.1, 0.05]).astype(np.int8)
            age = rng.integers(0, 3, n, dtype=np.int8)
            y = (rng.uniform(size=n) < 0.4 + 0.03 * sex).astype(np.int8)
            score = np.clip(0.35 * y + rng.beta(2, 3, n) - 0.02 * (race == 1), 0.0, 1.0)
            pred = (score > 0.5).astype(np.int8)
            table = pa.table(
                {
                    "y_true": y,
                    "y_pred": pred,
                    "y_score": score,
                    "sex": pa.DictionaryArray.from_arrays(pa.array(sex), sexes),
                    "race": pa.DictionaryArray.from_arrays(pa.array(race), races),
                    "age_band": pa.DictionaryArray.from_arrays(pa.array(age), ages),
                }
            )
            if csv:
                table = table.cast(
                    pa.schema(
                        [
                            pa.field(f.name, pa.string()) if pa.types.is_dictionary(f.type) else f
                            for f in table.schema
                        ]
                    )
                )
                if writer is None:
                    writer = pacsv.CSVWriter(path, table.schema)
                writer.write_table(table)
            else:
                if writer is None:
                    writer = pq.ParquetWriter(path, table.schema, compression="snappy")
                writer.write_table(table, row_group_size=1_000_000)
    finally:
        if writer is not None:
            writer.close()
    return time.perf_counter() - t0


def run_check(policy: Path, data: Path, engine: str, out: Path) -> tuple[int, float, float]:
    """(exit code, wall seconds, peak RSS in GB) of one ``fairpolicy check`` child."""
    cmd = [
        sys.executable,
        "-m",
        "fairpolicy",
        "check",
        str(policy),
        str(data),
        "--engine",
        engine,
        "-o",
        f"json={out}",
    ]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        print(stderr, file=sys.stderr)
    rss_gb = usage.ru_maxrss * 1024 / 1e9  # ru_maxrss is in KiB on Linux
    return proc.returncode, wall, rss_gb


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=100_000_000)
    ap.add_argument("--engines", default="duckdb", help="comma list: duckdb, embedded, spark")
    ap.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    ap.add_argument("--dir", help="where to write the data (default: a new temp directory)")
    ap.add_argument("--keep", action="store_true", help="keep the generated file")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="fairpolicy-scale-", dir=args.dir))
    try:
        data = work / f"predictions.{args.format}"
        policy = work / "policy.yaml"
        policy.write_text(policy_yaml(), encoding="utf-8")
        gen = generate(data, args.rows)
        size = data.stat().st_size
        print(f"generated {args.rows:,} rows, {size / 1e9:.2f} GB of {args.format} in {gen:.1f} s")
        print()
        header = (
            f"{'engine':<9} {'rows':>13} {'file GB':>8} {'seconds':>8} {'rows/s':>12} "
            f"{'peak RSS GB':>11} {'target GB':>9} {'RSS/target':>10} {'exit':>4}"
        )
        print(header)
        print("-" * len(header))
        for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
            out = work / f"results-{engine}.json"
            code, wall, rss = run_check(policy, data, engine, out)
            print(
                f"{engine:<9} {args.rows:>13,} {size / 1e9:>8.2f} {wall:>8.1f} "
                f"{args.rows / wall:>12,.0f} {rss:>11.2f} {TARGET_RSS_GB:>9.1f} "
                f"{rss / TARGET_RSS_GB:>10.2f} {code:>4}"
            )
            if out.exists():
                res = json.loads(out.read_text(encoding="utf-8"))
                assert res["data"]["rows"] == args.rows, res["data"]
                statuses = ", ".join(f"{f['control_id']}={f['status']}" for f in res["findings"])
                print(f"          {statuses}")
        if args.keep:
            print(f"\nkept {data}")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
