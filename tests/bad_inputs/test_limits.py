"""Limits that keep a hostile or oversized input from hanging or exhausting the machine:
YAML size/depth/alias limits, ``--max-rows``, the memory budget, the CSV line limit, and
the quote handling that keeps a stray quote from silently dropping rows."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest

import fairpolicy
from fairpolicy.data import limits
from fairpolicy.data.sources import read_table
from fairpolicy.data.sources.csv_guard import MAX_LINE_BYTES, scan_csv
from fairpolicy.errors import DataError, PolicyError, UsageError
from fairpolicy.policy import oscal
from fairpolicy.policy.load import load_policy
from tests.bad_inputs.cases import BILLION_LAUGHS, DEFAULT_DATA, policy

# ---------------------------------------------------------------- YAML


def load_text(tmp: Path, text: str, name: str = "p.yaml") -> object:
    path = tmp / name
    path.write_text(text)
    return load_policy(path)


def test_billion_laughs_fails_fast(tmp_path: Path) -> None:
    start = time.perf_counter()
    with pytest.raises(PolicyError, match="alias bomb") as info:
        load_text(tmp_path, BILLION_LAUGHS)
    assert time.perf_counter() - start < 1.0
    assert "387,420,489" in str(info.value) or "nodes" in str(info.value)


def test_quadratic_alias_blowup_is_refused(tmp_path: Path) -> None:
    big = "[" + ", ".join(["x"] * 2000) + "]"
    text = f"big: &b {big}\nlist:\n" + "".join("  - *b\n" for _ in range(200))
    with pytest.raises(PolicyError, match="more than 100,000 extra"):
        load_text(tmp_path, text)


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="recursive alias"):
        load_text(tmp_path, "a: &a [1, *a]\n")


def test_ordinary_anchors_and_merge_keys_still_work(tmp_path: Path) -> None:
    text = (
        "- &base\n"
        "  control-id: c1\n"
        "  props: &props\n"
        + "".join(
            f"    - {{name: {k}, value: {v}}}\n"
            for k, v in {
                "metric_key": "demographic_parity_diff",
                "threshold": "'0.2'",
                "operator": "'<'",
                "input.target": "y_true",
                "input.prediction": "y_pred",
                "input.dimension": "sex",
            }.items()
        )
        + "- {<<: *base, control-id: c2}\n"
        + "- {control-id: c3, props: *props}\n"
    )
    pol = load_text(tmp_path, text)
    assert [c.control_id for c in pol.controls] == ["c1", "c2", "c3"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("depth", [oscal.MAX_DEPTH - 2, oscal.MAX_DEPTH + 1])
def test_nesting_depth_limit(tmp_path: Path, depth: int) -> None:
    text = "x: " + "[" * depth + "]" * depth + "\n"
    if depth <= oscal.MAX_DEPTH:
        with pytest.raises(PolicyError, match="unknown root"):  # parsed, then judged
            load_text(tmp_path, text)
    else:
        with pytest.raises(PolicyError, match="nested deeper than 100 levels"):
            load_text(tmp_path, text)


def test_deep_json_read_by_the_json_fallback(tmp_path: Path) -> None:
    """A tab makes YAML refuse a .json file, which is then read as JSON: the same limit."""
    text = "\t" + '{"a": ' * 300 + "1" + "}" * 300
    with pytest.raises(PolicyError, match="nested deeper than 100 levels"):
        load_text(tmp_path, text, "p.json")
    deeper = "\t" + '{"a": ' * 50_000 + "1" + "}" * 50_000
    with pytest.raises(PolicyError, match="nested deeper than 100 levels"):
        load_text(tmp_path, deeper, "q.json")


def test_json_number_too_long(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot parse JSON"):
        load_text(tmp_path, '[{\t"threshold": ' + "9" * 5000 + "}]", "p.json")


def test_policy_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    with path.open("w") as fh:
        fh.write(policy())
        fh.write("#" + "x" * oscal.MAX_POLICY_BYTES + "\n")
    with pytest.raises(PolicyError, match="larger than 10 MiB"):
        load_policy(path)


# ---------------------------------------------------------------- rows and memory


def test_max_rows_boundary(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text(DEFAULT_DATA)  # 120 rows
    pol = tmp_path / "p.yaml"
    pol.write_text(policy())
    assert fairpolicy.check(pol, data, max_rows=120).data.rows == 120
    with pytest.raises(DataError, match="more than 119 rows"):
        fairpolicy.check(pol, data, max_rows=119)
    with pytest.raises(UsageError, match="at least 1"):
        fairpolicy.check(pol, data, max_rows=0)


def test_max_rows_counts_records_not_lines(tmp_path: Path) -> None:
    """Quoted line breaks make more lines than rows: the exact count decides."""
    data = tmp_path / "d.csv"
    data.write_text('y_true,y_pred,sex\n"1",0,"F\nx"\n' * 1 + "0,1,M\n" * 9)
    table = read_table(data, ["y_true", "sex"], max_rows=10)
    assert table.rows == 10


def test_max_rows_parquet_and_dataframe(tmp_path: Path) -> None:
    df = pd.read_csv(pd.io.common.StringIO(DEFAULT_DATA))
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    with pytest.raises(DataError, match="120 rows, more than 100 rows"):
        read_table(path, ["y_true"], max_rows=100)
    with pytest.raises(DataError, match="120 rows, more than 100 rows"):
        read_table(df, ["y_true"], max_rows=100)


def test_max_rows_stops_reading_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over the limit, the file is never parsed in full."""
    import pyarrow.csv as pacsv

    data = tmp_path / "d.csv"
    data.write_text("y_true,y_pred,sex\n" + "1,0,F\n0,1,M\n" * 200_000)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("read_csv must not run")

    monkeypatch.setattr(pacsv, "read_csv", refuse)
    with pytest.raises(DataError, match="more than 1000 rows"):
        read_table(data, ["y_true"], max_rows=1000)


def test_memory_budget_csv_and_parquet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "resident_bytes", lambda: 100 << 20)
    data = tmp_path / "d.csv"
    data.write_text(DEFAULT_DATA)
    need = limits.estimate_bytes(120, 2, data.stat().st_size * 2 // 3) + (100 << 20)
    assert read_table(data, ["y_true", "sex"], memory_budget=need).rows == 120
    with pytest.raises(DataError, match="--engine duckdb") as info:
        read_table(data, ["y_true", "sex"], memory_budget=need - 1)
    assert "about 120 rows" in str(info.value) and "--memory-budget 100.0 MiB" in str(info.value)
    path = tmp_path / "d.parquet"
    pd.read_csv(data).to_parquet(path)
    with pytest.raises(DataError, match="more than"):
        read_table(
            path, ["y_true", "sex"], memory_budget=limits.estimate_bytes(120, 2) + (100 << 20)
        )
    assert read_table(path, ["y_true", "sex"], memory_budget=1 << 30).rows == 120


def test_long_group_names_count_in_the_estimate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(limits, "resident_bytes", lambda: 0)
    data = tmp_path / "d.csv"
    data.write_text("y,g\n" + "".join(f"{i % 2},{'x' * 5000}{i % 2}\n" for i in range(100)))
    per_cell = limits.estimate_bytes(100, 2)
    with pytest.raises(DataError, match="more than"):
        read_table(data, ["y", "g"], memory_budget=per_cell + 100_000)


def test_resident_bytes_is_plausible() -> None:
    assert 10 << 20 < limits.resident_bytes() < 1 << 40


def test_without_a_budget_the_limit_is_the_available_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d.csv"
    data.write_text(DEFAULT_DATA)
    monkeypatch.setattr(limits, "available_memory", lambda: 1000)
    with pytest.raises(DataError, match="the memory available"):
        read_table(data, ["y_true", "sex"])
    monkeypatch.setattr(limits, "available_memory", lambda: None)  # unknown: no guard
    assert read_table(data, ["y_true", "sex"]).rows == 120


def test_the_cli_guard_names_the_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--engine embedded with a budget below the estimate: exit 2 before reading rows (auto
    would pick DuckDB instead, when it is installed)."""
    import io

    from fairpolicy.cli import main

    data = tmp_path / "d.csv"
    data.write_text(DEFAULT_DATA)
    pol = tmp_path / "p.yaml"
    pol.write_text(policy())
    # the process alone (pytest, pyarrow, pandas...) holds more than the minimum budget
    argv = ["check", str(pol), str(data), "--engine", "embedded", "--memory-budget", "64MB"]
    assert main(argv, io.StringIO()) == 2
    assert "--engine duckdb" in capsys.readouterr().err


def test_available_memory_is_plausible() -> None:
    avail = limits.available_memory()
    assert avail is None or 0 <= avail < 1 << 50


# ---------------------------------------------------------------- lines and quotes


def test_line_limit_stops_the_scan_at_the_long_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"y_true,y_pred,sex\n1,0,F\n0,1," + b"M" * (MAX_LINE_BYTES + 5))
    with pytest.raises(DataError, match="line 3 is longer than 1 MiB"):
        scan_csv(path)
    ok = tmp_path / "ok.csv"
    ok.write_bytes(b"a\n" + b"x" * (MAX_LINE_BYTES - 10) + b"\n")
    assert scan_csv(ok).rows == 1


def test_scan_counts(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('a,b\n1,"x\ny"\n2,3')
    scan = scan_csv(path)
    assert (scan.rows, scan.counted, scan.quotes) == (3, True, 2)
    import hashlib

    assert scan.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_scan_estimates_rows_past_the_first_block(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("y,sex\n" + "1,F\n0,M\n" * 200_000)  # 1.6 MB
    estimate = scan_csv(path)
    counted = scan_csv(path, count_lines=True)
    assert (counted.rows, counted.counted, estimate.counted) == (400_000, True, False)
    assert abs(estimate.rows - 400_000) < 400
    assert counted.sha256 == estimate.sha256


def big_file(tmp: Path, note: str, at: int, rows: int = 150_000) -> Path:
    """More than one reader block (1 MiB) of rows; row ``at`` carries ``note``."""
    lines = ["y_true,y_pred,sex,note"]
    lines += [f"{i % 2},{(i // 2) % 2},{'FM'[i % 3 == 0]},{note if i == at else 'ok'}"
              for i in range(rows)]  # fmt: skip
    path = tmp / "big.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_unclosed_quote_in_an_unbound_column_is_not_a_silent_row_drop(tmp_path: Path) -> None:
    """Before: the reader took the rest of the block as one value and returned ~70 % of
    the rows without a word."""
    path = big_file(tmp_path, '"unclosed', at=1000)
    with pytest.raises(DataError, match=r"quote|longer than"):
        read_table(path, ["y_true", "y_pred", "sex"])
    near_end = big_file(tmp_path, '"unclosed', at=149_990)
    with pytest.raises(DataError, match="the quote opened on line 149992 is never closed"):
        read_table(near_end, ["y_true", "y_pred", "sex"])


def test_quoted_line_breaks_across_reader_blocks(tmp_path: Path) -> None:
    """Before: a quoted line break that straddled a block boundary was a parse error (or
    shifted fields)."""
    lines = ["y_true,y_pred,sex"]
    lines += [f'{i % 2},{(i // 2) % 2},"{"FM"[i % 3 == 0]}\nx"' for i in range(150_000)]
    path = tmp_path / "q.csv"
    path.write_text("\n".join(lines) + "\n")
    table = read_table(path, ["y_true", "sex"], string_columns=["sex"])
    assert table.rows == 150_000
    assert set(table.columns["sex"].to_pylist()) == {"F\nx", "M\nx"}


def test_literal_quote_inside_a_field_is_not_an_unclosed_quote(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("y_true,y_pred,sex,note\n" + '1,0,F,5" screen\n0,1,M,ok\n' * 40)
    assert read_table(path, ["y_true", "sex"]).rows == 80
