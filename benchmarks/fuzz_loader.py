"""Fuzz the policy loader (and ``validate``, ``check`` and the CSV reader) for a while.

The strategies are the property tests' (``tests/strategies.py``): random JSON-ish
structures, mutated valid policies from the repository, and their YAML/JSON text with
syntax characters inserted. Every input must load or raise a ``FairpolicyError``; a
mutated policy that loads is also checked against a sample of the credit example (a
finding may be ``error``, nothing may raise; every fifth also on the DuckDB engine).
Target ``csv``: predictions files with quotes, delimiters, NULs, BOMs and invalid
UTF-8 edited in; ``check`` must raise a ``FairpolicyError`` or count exactly the rows
Python's csv module reads (no silent row loss). Anything else is a bug: the script
collects distinct failures (exception type + innermost fairpolicy frame) instead of
stopping at the first, and prints one example input per failure.

    python benchmarks/fuzz_loader.py [SECONDS]      (default 300)
"""

from __future__ import annotations

import importlib.util
import io
import random
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

import pandas as pd  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from tests.bad_inputs.cases import policy  # noqa: E402
from tests.data.test_read_properties import check_bytes  # noqa: E402
from tests.strategies import (  # noqa: E402
    csv_bytes,
    json_values,
    mutated_policies,
    policy_texts,
    scratch_dirs,
)

from fairpolicy.errors import FairpolicyError  # noqa: E402
from fairpolicy.policy.load import load_policy  # noqa: E402
from fairpolicy.policy.validate import validate_files  # noqa: E402
from fairpolicy.runner import check  # noqa: E402

DATA = pd.read_csv(ROOT / "examples/credit/predictions.csv").sample(2000, random_state=0)
DATA_CSV = Path(tempfile.mkdtemp(prefix="fuzz-data-")) / "credit-sample.csv"
DATA.to_csv(DATA_CSV, index=False)
DUCKDB = importlib.util.find_spec("duckdb") is not None

failures: dict[tuple[str, str], tuple[str, str]] = {}
counts: Counter[str] = Counter()
outcomes: Counter[str] = Counter()


def signature(exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "fairpolicy" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


def guard(target: str, fn: Any, example: Any) -> Any:
    counts[target] += 1
    try:
        result = fn()
    except FairpolicyError:
        outcomes[f"{target}: FairpolicyError"] += 1
        return None
    except Exception as exc:  # a bug: record, keep going
        key = (target, signature(exc))
        if key not in failures:
            failures[key] = (f"{type(exc).__name__}: {exc}"[:300], repr(example)[:600])
        return None
    outcomes[f"{target}: ok"] += 1
    return result


def structures(doc: Any) -> None:
    guard("structure", lambda: load_policy(doc), doc)


def mutated(case: tuple[Any, Path]) -> None:
    doc, base = case
    policy = guard("mutated", lambda: load_policy(doc, base_dir=base), doc)
    if policy is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            guard("check", lambda: check(policy, DATA), doc)
            if counts["check"] % 5 == 0 and DUCKDB:  # the same on the DuckDB engine
                guard("duckdb", lambda: check(policy, str(DATA_CSV), engine="duckdb"), doc)


def texts(case: tuple[str, str, Path], scratch: Path) -> None:
    text, suffix, base = case
    path = copies(scratch)[base] / f"fuzzed{suffix}"  # beside (copies of) its imports
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    guard("text", lambda: load_policy(path), text)
    guard("validate", lambda: validate_files([str(path)], io.StringIO()), text)


_copies: dict[Path, dict[Path, Path]] = {}


def copies(scratch: Path) -> dict[Path, Path]:
    if scratch not in _copies:
        _copies[scratch] = scratch_dirs(scratch)
    return _copies[scratch]


def csv_file(data: bytes, scratch: Path) -> None:
    if not (scratch / "p.yaml").exists():
        (scratch / "p.yaml").write_text(policy(metric_key="auc_gap", input__score="y_score"))
    guard("csv", lambda: check_bytes(data, scratch), data)


def run_round(budget_end: float, round_seed: int, scratch: Path) -> None:
    opts = settings(
        max_examples=200,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )

    def alive() -> bool:
        return time.monotonic() < budget_end

    @seed(round_seed)
    @opts
    @given(json_values)
    def t1(doc: Any) -> None:
        if alive():
            structures(doc)

    @seed(round_seed)
    @opts
    @given(mutated_policies())
    def t2(case: tuple[Any, Path]) -> None:
        if alive():
            mutated(case)

    @seed(round_seed)
    @opts
    @given(policy_texts())
    def t3(case: tuple[str, str, Path]) -> None:
        if alive():
            texts(case, scratch)

    @seed(round_seed)
    @opts
    @given(csv_bytes())
    def t4(data: bytes) -> None:
        if alive():
            csv_file(data, scratch)

    for t in (t1, t2, t3, t4):
        if alive():
            t()


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 300.0
    start = time.monotonic()
    end = start + seconds
    rng = random.Random(20261122)
    rounds = 0
    with tempfile.TemporaryDirectory() as d:
        while time.monotonic() < end:
            run_round(end, rng.randrange(2**32), Path(d))
            rounds += 1
    elapsed = time.monotonic() - start
    total = sum(counts.values())
    print(f"fuzzed {total} inputs in {elapsed:.0f} s ({total / elapsed:.0f}/s, {rounds} rounds)")
    for target, n in sorted(counts.items()):
        ok = outcomes[f"{target}: ok"]
        err = outcomes[f"{target}: FairpolicyError"]
        print(f"  {target:<10} {n:>7} inputs: {ok} loaded/ran, {err} FairpolicyError")
    print(f"distinct failures (anything but a FairpolicyError): {len(failures)}")
    for (target, sig), (message, example) in sorted(failures.items()):
        print(f"\n[{target}] {sig}\n  {message}\n  example: {example}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
