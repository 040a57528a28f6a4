"""Weighted tuples ≡ rows: the pipeline counts an entry of weight w as w rows.

An in-memory :class:`~fairpolicy.data.sources.EngineSource` compresses the embedded
reader's columns into their distinct tuples with row counts (pyarrow ``group_by``),
with no score rounding, so every result must equal the embedded run exactly:
values, per-group sizes, excluded groups, details, confusion counts, messages and
warnings. This tests the weight plumbing on its own, without DuckDB or Spark.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import fairpolicy.runner as runner
from fairpolicy.data.bind.scores import SUM_TOLERANCE
from fairpolicy.data.sources import Request, Table, peek_columns, read_table
from fairpolicy.data.sources.base import RowPredicate
from fairpolicy.policy.schema import Policy
from fairpolicy.results import Results
from tests.helpers import control, write_csv, write_policy
from tests.metrics.test_registry_common import COMBOS, DATA, common_control


class ArrowSource:
    """Distinct tuples of the embedded reader's columns, weighted by their row counts."""

    name = "arrow"

    def __init__(self, path: Path) -> None:
        self.path: str | None = str(path)
        self.sha256: str | None = None
        self.available = peek_columns(path)
        self._full: dict[str, Table] = {}

    def _rows(self, columns: tuple[str, ...], strings: frozenset[str]) -> Table:
        key = (columns, strings)
        if key not in self._full:
            self._full[key] = read_table(self.path, columns, string_columns=strings)
        return self._full[(columns, strings)]

    def tuples(self, request: Request) -> Table:
        full = self._rows(request.columns, request.strings)
        self._locate = full
        arrays = {f"v{i}": full.columns[c] for i, c in enumerate(request.columns)}
        for j, cols in enumerate(request.score_sets):
            total = sum(
                full.columns[c].to_numpy(zero_copy_only=False).astype(np.float64) for c in cols
            )
            arrays[f"__sum{j}"] = pa.chunked_array([np.abs(total - 1.0) > SUM_TOLERANCE])
        if not arrays:
            weights = np.array([full.rows], dtype=np.int64)
            return Table({}, self.available, full.rows, self.path, weights=weights, source=self)
        grouped = pa.table(arrays).group_by(list(arrays), use_threads=False)
        result = grouped.aggregate([([], "count_all")])
        weights = np.asarray(result.column("count_all").to_numpy(), dtype=np.int64)
        return Table(
            columns={c: result.column(f"v{i}") for i, c in enumerate(request.columns)},
            available=self.available,
            rows=int(weights.sum()),
            path=self.path,
            weights=weights,
            source=self,
            sum_flags={
                cols: np.asarray(result.column(f"__sum{j}").to_numpy(), dtype=bool)
                for j, cols in enumerate(request.score_sets)
            },
        )

    def regression(self, dims: list[str], y: str, yhat: str) -> None:
        return None  # the tuples path

    def first_rows(
        self, column: str, arrow_type: Any, predicate: RowPredicate, limit: int
    ) -> list[tuple[int, Any]]:
        full = read_table(self.path, [column])
        return full.first_rows(column, predicate, limit)

    def close(self) -> None:
        pass


@pytest.fixture
def weighted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route ``check(..., engine="duckdb")`` to the in-memory weighted source."""
    import fairpolicy.data.sources as sources

    monkeypatch.setattr(runner, "resolve_engine", lambda engine, *a: (engine, []))
    real = sources.open_engine

    def fake(engine: str, data: Any, budget: int) -> Any:
        return ArrowSource(data) if engine == "arrow" else real(engine, data, budget)

    monkeypatch.setattr(sources, "open_engine", fake)


def _comparable(res: Results) -> dict[str, Any]:
    dump = res.model_dump(mode="json")
    for key in ("started", "finished", "engine", "options"):
        dump["run"].pop(key)
    dump["data"].pop("sha256")
    return dump


def _without_tie_warnings(warnings: list[str]) -> list[str]:
    return [w for w in warnings if "tie(s) in" not in w]


def assert_same(a: Any, b: Any, path: str = "") -> None:
    """Equal, floats to 1e-12 (regression sums add the same terms in another order)."""
    if isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12), (path, a, b)
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), (path, a.keys() ^ b.keys())
        for k in a:
            assert_same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)


@pytest.mark.parametrize("kind", sorted(DATA))
def test_registry_on_weighted_tuples_equals_rows(kind: str, tmp_path: Path, weighted: None) -> None:
    combos = [c for c in COMBOS if c[3] == kind]
    pol = Policy(
        form="list",
        controls=tuple(common_control(key, params, cid) for cid, key, params, _ in combos),
    )
    df = DATA[kind]
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    rows = runner.check(pol, path, engine="embedded", deterministic=True)
    tuples = runner.check(pol, path, engine="arrow", deterministic=True)
    assert tuples.run.engine == "arrow"
    a, b = _comparable(rows), _comparable(tuples)
    a["warnings"], b["warnings"] = (_without_tie_warnings(x["warnings"]) for x in (a, b))
    if kind == "regression":  # messages print values rounded to 6 digits: equal too
        assert_same(a, b)
    else:
        assert a == b
    # the data compress: fewer tuples than rows unless the columns are continuous
    assert tuples.data.rows == len(df)


def test_duplicated_rows_compress_to_weights(tmp_path: Path, weighted: None) -> None:
    rows = "".join(f"{i % 2},{(i // 3) % 2},{'FM'[i % 5 == 0]}\n" for i in range(600))
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + rows)
    pol = write_policy(tmp_path, control(threshold="0.9"))
    source = ArrowSource(data)
    table = source.tuples(Request(columns=("y_true", "y_pred", "sex"), strings=frozenset({"sex"})))
    assert len(table.weights) <= 8 and table.rows == 600  # type: ignore[arg-type]
    a = runner.check(pol, data, engine="embedded", deterministic=True)
    b = runner.check(pol, data, engine="arrow", deterministic=True)
    assert _comparable(a) == _comparable(b)


@pytest.mark.parametrize(
    ("rows", "props"),
    [
        ("1,0,F\n,1,M\n" * 40, {}),  # missing labels: count and first data rows
        ("1,0,F\n,1,M\n1,1,M\n0,0,F\n" * 40, {"missing": "drop", "threshold": "1"}),
        ("1,0.73,F\n0,0.2,M\n" * 40, {}),  # probabilities in the prediction column
        ("1,0,F\n0,1,F\n" * 40, {}),  # one group
        ("1,yes,F\n0,no,M\n" * 40, {}),  # numbers vs text
        ("0,1,F\n1,2,M\n2,2,F\n" * 20, {}),  # K = 3 for a binary metric
    ],
)
def test_bad_inputs_give_the_same_message(
    rows: str, props: dict[str, str], tmp_path: Path, weighted: None
) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + rows)
    pol = write_policy(tmp_path, control(**props))
    a = runner.check(pol, data, engine="embedded", deterministic=True)
    b = runner.check(pol, data, engine="arrow", deterministic=True)
    assert _comparable(a) == _comparable(b)
    assert a.exit_code == b.exit_code


def test_message_names_the_first_fractional_data_row(tmp_path: Path, weighted: None) -> None:
    """The example value is the first in the data, not the first of the kept rows."""
    data = write_csv(tmp_path, "y_true,y_pred,sex\n1,1,F\n,0.25,M\n0,0.5,F\n" + "1,0,M\n" * 40)
    pol = write_policy(tmp_path, control(missing="drop"))
    for engine in ("embedded", "arrow"):
        f = runner.check(pol, data, engine=engine).findings[0]
        assert "such as 0.25 (data row 2)" in f.message, f.message


def test_weight_sums_are_exact_beyond_float32(tmp_path: Path) -> None:
    from fairpolicy.stats import confusion_counts, weighted_bincount

    w = np.array([2**40 + 1, 3, 2**40], dtype=np.int64)
    assert weighted_bincount(np.array([0, 1, 0]), w, 2).tolist() == [2**41 + 1, 3]
    c = confusion_counts(np.array([0, 0, -1]), np.array([1, 1, 0]), np.array([0, 0, 0]), 1, 2, w)
    assert c[0, 1, 0] == 2**40 + 4 and c.sum() == 2**40 + 4
    assert pc.sum(pa.array(w)).as_py() == int(w.sum())
