"""The cost of windows (issue 30): one run over every daily window of a year vs one
check without windows, on the same rows.

Generates a deterministic Parquet file (chunked) in a temporary directory: a timestamp
spread over 365 days, three groupings, binary labels. Runs ``fairpolicy check`` as a child
process (so each run's wall time includes its own read) with three count controls, first
without ``--window``, then with ``--window ts=1d --window-gate any`` (the cost of the
windows themselves) and ``--window-gate sequential`` (adds a score interval per window
and control), and prints the wall and CPU times and their ratios (CPU time, user +
system of every thread, is less sensitive to other jobs on a shared machine). The extra
output is measured apart: the CPU time to rebuild and write the JSON of the windowed
run's results (365 × 3 findings) less that of the run without windows, each read back
from the file the run wrote; the last column is the windowed run's CPU time without that
difference, over the plain run's. The generated file is deleted afterwards (not one
given with --data).

    python benchmarks/windows.py                              # 10M rows, embedded and DuckDB
    python benchmarks/windows.py --rows 1000000 --engines embedded
    python benchmarks/windows.py --rows 100000000 --engines duckdb   # ~0.8 GB in /tmp
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CHUNK = 2_000_000
POLICY = """\
- control-id: dp-sex
  props:
    - {name: metric_key, value: demographic_parity_diff}
    - {name: threshold, value: "0.1"}
    - {name: operator, value: "<"}
    - {name: input.target, value: y_true}
    - {name: input.prediction, value: y_pred}
    - {name: input.dimension, value: sex}
- control-id: eo-race
  props:
    - {name: metric_key, value: equal_opportunity_diff}
    - {name: threshold, value: "0.1"}
    - {name: operator, value: "<"}
    - {name: input.target, value: y_true}
    - {name: input.prediction, value: y_pred}
    - {name: input.dimension, value: race}
- control-id: di-age
  props:
    - {name: metric_key, value: demographic_parity_ratio}
    - {name: threshold, value: "0.8"}
    - {name: operator, value: ">="}
    - {name: input.target, value: y_true}
    - {name: input.prediction, value: y_pred}
    - {name: input.dimension, value: age_band}
"""


def generate(path: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(30)
    t0 = np.datetime64("2024-01-01T00:00:00", "s").astype(np.int64)
    writer = None
    try:
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            ts = t0 + rng.integers(0, 365 * 86400, n)
            table = pa.table(
                {
                    "ts": pa.array(ts, pa.timestamp("s", tz="UTC")),
                    "sex": rng.choice(np.array(["F", "M"]), n),
                    "race": rng.choice(np.array(["A", "B", "C", "D"]), n),
                    "age_band": rng.choice(np.array(["18-29", "30-49", "50+"]), n),
                    "y_true": rng.integers(0, 2, n).astype(np.int8),
                    "y_pred": rng.integers(0, 2, n).astype(np.int8),
                }
            )
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()


def run(
    policy: Path, data: Path, engine: str, extra: list[str], out: str = "out"
) -> tuple[float, float]:
    """One child run's wall time and CPU time (user + system, every thread: less
    sensitive than the wall time to other jobs on a shared machine); its JSON goes to
    ``out``.json beside the policy."""
    cmd = [sys.executable, "-m", "fairpolicy", "check", str(policy), str(data)]
    cmd += ["--engine", engine, "-o", f"json={policy.parent / (out + '.json')}", *extra]
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    return wall, cpu


def best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The fastest wall time and the lowest CPU time of repeated runs."""
    return min(w for w, _ in runs), min(c for _, c in runs)


def json_seconds(path: Path, repeat: int = 3) -> float:
    """The output's own cost: rebuilding and writing the JSON of a run's results (the
    lowest CPU time of ``repeat``), read back from the file the run wrote."""
    from fairpolicy.results import load_results

    res = load_results(str(path))
    fastest = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        path.with_suffix(".again.json").write_text(res.to_json(indent=2) + "\n")
        fastest = min(fastest, time.process_time() - start)
    return fastest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--engines", default="embedded,duckdb")
    ap.add_argument("--gates", default="any,sequential", help="the window gates to time")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--data",
        type=Path,
        help="use this Parquet file (generated there first if missing; never deleted), "
        "e.g. to time two versions of the code on one file",
    )
    args = ap.parse_args()
    gates = args.gates.split(",")
    with tempfile.TemporaryDirectory(prefix="fairpolicy-windows-") as tmp:
        data = args.data or Path(tmp) / "year.parquet"
        if not data.exists():
            t = time.perf_counter()
            generate(data, args.rows)
            print(f"generated {args.rows:,} rows over 365 days in {time.perf_counter() - t:.1f} s")
        policy = Path(tmp) / "policy.yaml"
        policy.write_text(POLICY)
        print(f"load average {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')} UTC")
        print("wall time (CPU time, all threads); ratios to the run without windows")
        print(
            "| engine | rows | no windows | "
            + " | ".join(f"365 daily, gate {g} | ratio" for g in gates)
            + " | extra JSON (CPU) | gate any less the extra JSON: CPU ratio |"
        )
        print("|---" * (4 + 2 * len(gates)) + "|")
        for engine in args.engines.split(","):
            plain = best([run(policy, data, engine, [], "plain") for _ in range(args.repeat)])
            window = ["--window", "ts=1d", "--window-tz", "UTC"]
            cells = [f"{plain[0]:.2f} s ({plain[1]:.2f} s)"]
            timed = {}
            for g in gates:
                got = best(
                    [
                        run(policy, data, engine, [*window, "--window-gate", g], g)
                        for _ in range(args.repeat)
                    ]
                )
                timed[g] = got
                cells.append(f"{got[0]:.2f} s ({got[1]:.2f} s)")
                cells.append(f"x{got[0] / plain[0]:.2f} (x{got[1] / plain[1]:.2f})")
            # the extra output: the JSON of 365 × 3 findings against one table's
            extra = ""
            if "any" in timed:
                j0 = json_seconds(Path(tmp) / "plain.json")
                j1 = json_seconds(Path(tmp) / "any.json")
                net = timed["any"][1] - (j1 - j0)
                extra = f"{j1 - j0:.2f} s | x{net / plain[1]:.2f} |"
            print(f"| {engine} | {args.rows:,} | " + " | ".join(cells) + " | " + extra, flush=True)
        print(f"load average {os.getloadavg()[0]:.1f} at {time.strftime('%H:%M:%S')} UTC")


if __name__ == "__main__":
    main()
