"""Property: whatever bytes the data file holds, ``check`` returns results or raises a
fairpolicy error; it never crashes, and it never silently passes a file it could not read
in full. A longer run: ``python benchmarks/fuzz_loader.py`` (target ``csv``)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import fairpolicy
from fairpolicy.errors import FairpolicyError
from tests.bad_inputs.cases import policy
from tests.strategies import csv_bytes


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("csvfuzz")
    (d / "p.yaml").write_text(policy(metric_key="auc_gap", input__score="y_score"))
    return d


def python_rows(data: bytes) -> int:
    """Records after the header as the csv module reads them (blank lines skipped)."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    return len(rows) - 1


def check_bytes(data: bytes, workdir: Path) -> None:
    path = workdir / "d.csv"
    path.write_bytes(data)
    try:
        res = fairpolicy.check(workdir / "p.yaml", path)
    except FairpolicyError as exc:
        assert exc.problems and "Traceback" not in exc.render()
        return
    assert res.data.rows == python_rows(data), "the reader and the csv module disagree"
    f = res.findings[0]
    assert f.status in ("pass", "fail", "inconclusive", "error")
    if f.status == "error":
        assert f.message and res.exit_code == 2
    else:  # read in full: every row is counted in a group or the excluded ones
        counted = sum(g.n for g in f.groups) + sum(e.n for e in f.excluded_groups)
        assert counted <= res.data.rows


@settings(
    max_examples=40,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=csv_bytes())
def test_any_bytes(data: bytes, workdir: Path) -> None:
    check_bytes(data, workdir)
