"""Bounded work from a policy, non-regular inputs and clear errors (issue 13), beyond the
rows of the bad-input matrix (``cases_bounds.py`` lists which row covers what): the caps as
properties, many-group reports, the environment, ``export``, the Python API's input types,
href confinement with symbolic links, and a clean stderr after DuckDB."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairpolicy
from fairpolicy.cli import main
from fairpolicy.data import limits
from fairpolicy.errors import DataError, FairpolicyError, PolicyError, UsageError
from fairpolicy.formatters import RenderOptions, get
from fairpolicy.formatters._shown import SHOWN_GROUPS, for_humans
from fairpolicy.policy.load import load_policy
from tests.bad_inputs.cases import DEFAULT_DATA, policy
from tests.bad_inputs.cases_bounds import CATALOG, _profile

ROOT = Path(__file__).resolve().parents[2]
HUMAN = ("text", "html", "markdown", "sarif", "junit", "github")


def files(tmp: Path, data: str = DEFAULT_DATA, pol: str | None = None) -> tuple[Path, Path]:
    p, d = tmp / "policy.yaml", tmp / "data.csv"
    p.write_text(policy() if pol is None else pol)
    d.write_text(data)
    return p, d


def grouped(groups: int, per_group: int = 4) -> str:
    """A CSV with ``groups`` groups of ``per_group`` rows each."""
    body = (f"{i % 2},{(i // 2) % 2},g{i % groups}\n" for i in range(per_group * groups))
    return "y_true,y_pred,sex\n" + "".join(body)


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    out = io.StringIO()
    code = main(argv, out)
    return code, out.getvalue(), capsys.readouterr().err


# ---------------------------------------------------------------- caps, as properties


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["ci", "p_value", "num_classes"]),
    value=st.integers(2, 10**12),
    cap=st.integers(1, 10**7),
)
def test_a_requested_count_is_refused_exactly_when_over_its_cap(
    name: str, value: int, cap: int
) -> None:
    caps = limits.Limits(max_classes=cap, max_resamples=cap)
    flag = "--max-classes" if name == "num_classes" else "--max-resamples"
    for from_flag, error in ((True, UsageError), (False, PolicyError)):
        if value <= cap:
            limits.check_requested(
                name, value, caps, file="p.yaml", control="c", from_flag=from_flag
            )
            continue
        with pytest.raises(error) as info:
            limits.check_requested(
                name, value, caps, file="p.yaml", control="c", from_flag=from_flag
            )
        text = str(info.value)
        assert f"{flag} {cap}" in text and f"{value:,}" in text
        assert "h" in text or "s" in text or "cells per group" in text  # a stated cost
        if not from_flag:
            assert "p.yaml" in text and "control 'c'" in text and f"key '{name}'" in text


@settings(max_examples=12, deadline=None)
@given(
    groups=st.integers(2, 40),
    cap=st.integers(2, 40),
    kind=st.sampled_from(["csv", "pandas", "arrow"]),
)
def test_the_group_cap_holds_on_every_input_type(groups: int, cap: int, kind: str) -> None:
    """Exit 2 (an error finding naming the column and --max-groups) iff the dimension has
    more groups than the cap; otherwise the cap changes nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        _group_cap(Path(tmp), groups, cap, kind)


def _group_cap(tmp_path: Path, groups: int, cap: int, kind: str) -> None:
    text = "y_true,y_pred,sex\n" + "".join(
        f"{i % 2},{(i // 2) % 2},g{i % groups}\n" for i in range(4 * groups)
    )
    pol, csv = files(tmp_path, text)
    data: Any = {"csv": csv, "pandas": pd.read_csv(csv), "arrow": pacsv.read_csv(csv)}[kind]
    res = fairpolicy.check(pol, data, max_groups=cap)
    f = res.findings[0]
    if groups > cap:
        assert res.exit_code == 2 and f.status == "error"
        assert f"{groups:,} distinct groups" in f.message and f"--max-groups {cap}" in f.message
        assert "column 'sex'" in f.message and "control 'c1'" in f.message
    else:
        assert f.status != "error" and len(f.groups) + len(f.excluded_groups) == groups


def test_caps_stop_the_issue_13_runs_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The runs of the issue (1e8 permutations ~3.5 h, 1e9 bootstrap resamples a
    MemoryError, 1e9 classes an OOM kill) are refused in well under a second."""
    pol, data = files(tmp_path)
    for args, words in (
        (["--p-value", "100000000"], "~3.9 h"),
        (["--bootstrap", "1000000000"], "GiB of memory"),
        (["--num-classes", "1000000000"], "cells per group"),
    ):
        start = time.perf_counter()
        code, _, err = run(["check", str(pol), str(data), *args], capsys)
        assert code == 2 and words in err, err
        assert time.perf_counter() - start < 1.0


def test_raising_a_cap_lets_the_run_through(tmp_path: Path) -> None:
    pol, data = files(tmp_path)
    with pytest.raises(UsageError, match="--max-resamples 100"):
        fairpolicy.check(pol, data, p_value=200, max_resamples=100)
    res = fairpolicy.check(pol, data, p_value=200, max_resamples=200)
    assert res.findings[0].p_value is not None and res.findings[0].p_value.permutations == 200


def test_resampling_work_counts_every_cell(tmp_path: Path) -> None:
    """resamples × cells: the same 1,000 resamples pass on two groups and are refused on
    forty (the bootstrap keeps every replicate of the table in memory)."""
    pol, data = files(tmp_path)
    assert fairpolicy.check(pol, data, bootstrap=1000, max_cells=8000).findings[0].ci is not None
    wide = "y_true,y_pred,sex\n" + "".join(
        f"{i % 2},{(i // 2) % 2},g{i % 40}\n" for i in range(4000)
    )
    (tmp_path / "wide.csv").write_text(wide)
    f = fairpolicy.check(pol, tmp_path / "wide.csv", bootstrap=1000, max_cells=8000).findings[0]
    assert f.status == "error" and "× 160 cells" in f.message and "--max-cells 8000" in f.message


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["ci", "p_value"]),
    resamples=st.integers(2, 10**6),
    groups=st.integers(2, 10**5),
    classes=st.integers(2, 5),
    cap=st.integers(1, 10**4),
)
def test_resampling_is_refused_exactly_when_its_estimated_time_is_over_the_cap(
    kind: str, resamples: int, groups: int, classes: int, cap: int
) -> None:
    cells = groups * classes * classes
    caps = limits.Limits(max_cells=10**18, max_resample_seconds=cap)
    seconds = limits.resample_seconds(kind, resamples, cells, groups)
    # more resamples or more groups never cost less
    assert limits.resample_seconds(kind, resamples + 1, cells, groups) >= seconds
    assert limits.resample_seconds(kind, resamples, cells + 1, groups + 1) >= seconds
    if seconds <= cap:
        limits.check_resampling(kind, resamples, cells, groups, caps, "d.csv", "c")
        return
    with pytest.raises(DataError) as info:
        limits.check_resampling(kind, resamples, cells, groups, caps, "d.csv", "c")
    text = str(info.value)
    assert f"--max-resample-seconds {cap}" in text and "estimated ~" in text
    assert f"key '{kind}'" in text and "control 'c'" in text


def test_the_permutation_estimate_grows_with_the_square_of_the_groups(tmp_path: Path) -> None:
    """Issue 13: 200 permutations over many groups ran for minutes. The per-group p-values
    make a permutation quadratic in the groups: 10,000 groups are refused by default."""
    assert limits.resample_seconds("p_value", 200, 40_000, 10_000) > 600
    assert limits.resample_seconds("p_value", 200, 400, 100) < 60
    pol, _ = files(tmp_path)
    (tmp_path / "wide.csv").write_text(grouped(400, 30))
    f = fairpolicy.check(pol, tmp_path / "wide.csv", p_value=200, max_resample_seconds=1)
    finding = f.findings[0]
    assert finding.status == "error" and "--max-resample-seconds 1" in finding.message
    assert "over 400 groups" in finding.message


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_caps_must_be_positive_whole_numbers(tmp_path: Path, bad: Any) -> None:
    pol, data = files(tmp_path)
    with pytest.raises(UsageError, match="--max-cells must be a whole number"):
        fairpolicy.check(pol, data, max_cells=bad)


# ---------------------------------------------------------------- many groups


def many_groups(tmp: Path, groups: int, per_group: int = 40) -> fairpolicy.Results:
    text = "y_true,y_pred,sex\n" + "".join(
        f"{i % 2},{1 if (i * 7919) % 13 < (i % groups) % 11 else 0},g{i % groups:05d}\n"
        for i in range(per_group * groups)
    )
    pol, data = files(tmp, text, policy(min_samples="'5'"))
    return fairpolicy.check(pol, data)


@pytest.mark.parametrize("fmt", HUMAN)
def test_human_reports_show_the_worst_groups_and_count_the_rest(tmp_path: Path, fmt: str) -> None:
    groups = 400
    res = many_groups(tmp_path, groups, 100)  # no group under 100 rows: no small-group warning
    f = res.findings[0]
    assert len(f.groups) == groups  # the results (and the JSON) keep every group
    shown = for_humans(res).findings[0]
    assert len(shown.groups) == SHOWN_GROUPS
    values = [g.value for g in f.groups if g.value is not None]
    kept = {g.group for g in shown.groups}
    # the named worst, highest and lowest groups are always shown
    assert {f.worst_group, f.details["max_group"], f.details["min_group"]} <= kept
    # every shown group is at least as far from the median as every hidden one
    mid = sorted(values)[len(values) // 2]
    hidden = [abs(g.value - mid) for g in f.groups if g.group not in kept and g.value is not None]
    assert min(abs(g.value - mid) for g in shown.groups if g.value is not None) >= max(hidden)
    text = get(fmt)(res, RenderOptions())
    assert f"and {groups - SHOWN_GROUPS:,} more groups in the JSON report" in text
    missing = sorted({g.group for g in f.groups} - kept)
    assert not any(name in text for name in missing[:20])
    assert len(text) < 200_000


def test_json_and_oscal_stay_complete(tmp_path: Path) -> None:
    res = many_groups(tmp_path, 120)
    doc = json.loads(get("json")(res, RenderOptions()))
    assert len(doc["findings"][0]["groups"]) == 120
    assert "more groups in the JSON report" not in json.dumps(doc)
    oscal = get("oscal")(res, RenderOptions(deterministic=True))
    assert all(f"g{i:05d}" in oscal for i in range(120))


def test_small_reports_are_unchanged(tmp_path: Path) -> None:
    pol, data = files(tmp_path)
    res = fairpolicy.check(pol, data)
    assert for_humans(res) is res


def test_the_small_group_warning_names_twenty_groups(tmp_path: Path) -> None:
    res = many_groups(tmp_path, 300)
    (warning,) = [w for w in res.warnings if "fewer than 100 rows" in w]
    assert "… and 280 more (listed in the JSON report)" in warning and len(warning) < 600


# ---------------------------------------------------------------- non-regular files


@pytest.mark.parametrize("role", ["policy", "data", "results", "validate"])
def test_a_fifo_is_refused_at_once(tmp_path: Path, role: str) -> None:
    """A real process: if the FIFO were opened for reading it would block until killed."""
    pol, data = files(tmp_path)
    pipe = tmp_path / "pipe.json"  # .json: validate reads JSON itself
    os.mkfifo(pipe)
    argv = {
        "policy": ["check", str(pipe), str(data)],
        "data": ["check", str(pol), str(pipe)],
        "results": ["export", "oscal", str(pipe), "-o", str(tmp_path / "out.json")],
        "validate": ["validate", str(pipe)],
    }[role]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=False,
    )
    said = proc.stderr + proc.stdout  # validate reports on stdout
    assert proc.returncode == 2 and "named pipe (FIFO), not a regular file" in said
    assert str(pipe) in said


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_an_unreadable_policy_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pol, data = files(tmp_path)
    pol.chmod(0)
    code, _, err = run(["check", str(pol), str(data)], capsys)
    assert code == 2 and "cannot read the file" in err


# ---------------------------------------------------------------- hrefs


def layout(tmp: Path, href: str) -> tuple[Path, Path]:
    (tmp / "pol").mkdir()
    (tmp / "shared").mkdir()
    (tmp / "shared" / "catalog.yaml").write_text(CATALOG)
    profile = tmp / "pol" / "profile.yaml"
    profile.write_text(_profile(href))
    data = tmp / "data.csv"
    data.write_text(DEFAULT_DATA)
    return profile, data


def test_a_symbolic_link_cannot_lead_out_of_the_policy_folder(tmp_path: Path) -> None:
    profile, _ = layout(tmp_path, "link/catalog.yaml")
    (tmp_path / "pol" / "link").symlink_to(tmp_path / "shared")
    with pytest.raises(PolicyError, match="outside the policy's folder") as info:
        load_policy(profile)
    assert f"--allow-path {tmp_path / 'shared'}" in str(info.value)
    assert [
        c.control_id for c in load_policy(profile, allow_paths=[tmp_path / "shared"]).controls
    ] == ["c1"]


def test_allow_path_is_not_a_prefix_match(tmp_path: Path) -> None:
    """--allow-path /x/sha does not allow /x/shared."""
    profile, _ = layout(tmp_path, "../shared/catalog.yaml")
    with pytest.raises(PolicyError, match="outside"):
        load_policy(profile, allow_paths=[str(tmp_path / "sha")])


def test_subfolders_of_the_policy_folder_are_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile, data = layout(tmp_path, "sub/catalog.yaml")
    (tmp_path / "pol" / "sub").mkdir()
    (tmp_path / "pol" / "sub" / "catalog.yaml").write_text(CATALOG)
    code, _, err = run(["check", str(profile), str(data)], capsys)
    assert code == 0, err


def test_allow_path_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile, data = layout(tmp_path, "../shared/catalog.yaml")
    code, _, err = run(["check", str(profile), str(data)], capsys)
    assert code == 2 and "--allow-path" in err
    code, _, err = run(
        ["check", str(profile), str(data), "--allow-path", str(tmp_path / "shared")], capsys
    )
    assert code == 0, err


# ---------------------------------------------------------------- SOURCE_DATE_EPOCH


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("yesterday", "not a whole number of seconds"),
        ("-5", "not a whole number of seconds"),
        ("1.5e9", "not a whole number of seconds"),
        ("99999999999999", "out of range"),
        ("1700000000000", "out of range"),  # milliseconds
    ],
)
@pytest.mark.parametrize("command", ["check", "export", "convert"])
def test_a_bad_source_date_epoch_is_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    value: str,
    words: str,
    command: str,
) -> None:
    pol, data = files(tmp_path)
    results = tmp_path / "r.json"
    assert main(["check", str(pol), str(data), "-o", f"json={results}"], io.StringIO()) == 0
    capsys.readouterr()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", value)
    argv = {
        "check": ["check", str(pol), str(data)],
        "export": ["export", "oscal", str(results), "-o", str(tmp_path / "ar.json")],
        "convert": ["convert", str(pol), "-o", str(tmp_path / "catalog.json")],
    }[command]
    code, _, err = run(argv, capsys)
    assert code == 2 and "SOURCE_DATE_EPOCH" in err and words in err, err
    assert "internal error" not in err


def test_a_good_source_date_epoch_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pol, data = files(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", " 1700000000 ")
    assert fairpolicy.check(pol, data).run.started == "2023-11-14T22:13:20+00:00"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "")
    assert (
        fairpolicy.check(pol, data, deterministic=False).run.started != "2023-11-14T22:13:20+00:00"
    )


# ---------------------------------------------------------------- export


@pytest.mark.parametrize("token", ['"NaN"', "NaN", "Infinity", '"-Infinity"'])
def test_export_refuses_non_finite_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], token: str
) -> None:
    pol, data = files(tmp_path)
    good = tmp_path / "r.json"
    assert main(["check", str(pol), str(data), "-o", f"json={good}"], io.StringIO()) == 0
    doc = good.read_text()
    value = json.loads(doc)["findings"][0]["value"]
    bad = tmp_path / "bad.json"
    bad.write_text(doc.replace(f'"value": {value}', f'"value": {token}', 1))
    capsys.readouterr()
    code, _, err = run(["export", "oscal", str(bad), "-o", str(tmp_path / "ar.json")], capsys)
    assert code == 2 and "control 'c1'" in err and "'value'" in err and "NaN or Infinity" in err
    assert not (tmp_path / "ar.json").exists()


# ---------------------------------------------------------------- the Python API


@pytest.mark.parametrize("data", [None, 3, {"y_true": [0, 1]}, [[0, 1]], b"data.csv"])
def test_unsupported_data_types_raise_a_fairpolicy_error(tmp_path: Path, data: Any) -> None:
    pol, _ = files(tmp_path)
    with pytest.raises(UsageError, match="data must be a path") as info:
        fairpolicy.check(pol, data)
    assert "pandas" in str(info.value) and "pyarrow Table" in str(info.value)


def test_duplicate_dataframe_columns_raise_a_fairpolicy_error(tmp_path: Path) -> None:
    pol, data = files(tmp_path)
    df = pd.read_csv(data)
    dup = pd.concat([df, df[["y_true"]]], axis=1)
    with pytest.raises(DataError, match="more than once") as info:
        fairpolicy.check(pol, dup)
    assert "column 'y_true'" in str(info.value)
    fairpolicy.check(pol, pd.concat([df, df[["y_true"]].rename(columns={"y_true": "x"})], axis=1))


class FakePolars:
    """What fairpolicy needs of a polars DataFrame: ``to_arrow()`` (polars is optional)."""

    __module__ = "polars.dataframe.frame"

    def __init__(self, table: pa.Table) -> None:
        self._table = table
        self.columns = table.column_names

    def to_arrow(self) -> pa.Table:
        # polars exports text as large strings (or string views)
        return self._table.cast(
            pa.schema(
                [
                    pa.field(f.name, pa.large_string() if pa.types.is_string(f.type) else f.type)
                    for f in self._table.schema
                ]
            )
        )

    def __len__(self) -> int:
        return self._table.num_rows


FakePolars.__name__ = "DataFrame"


class ArrowStream:
    """Any table that exports the Arrow C stream interface (DuckDB relations, …)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._table.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize("kind", ["arrow", "batch", "polars", "real-polars", "c-stream", "pandas"])
def test_in_memory_tables_give_the_file_s_findings(tmp_path: Path, kind: str) -> None:
    pol, data = files(tmp_path, pol=policy(input__dimension="sex"))
    table = pacsv.read_csv(
        data, convert_options=pacsv.ConvertOptions(column_types={"sex": pa.string()})
    )
    if kind == "real-polars":  # a test dependency: the real thing beside the stand-in
        pl = pytest.importorskip("polars")
        given_data: Any = pl.from_arrow(table)
    else:
        given_data = {
            "arrow": table,
            "batch": table.combine_chunks().to_batches()[0],
            "polars": FakePolars(table),
            "c-stream": ArrowStream(table),
            "pandas": table.to_pandas(),
        }[kind]
    want = fairpolicy.check(pol, data).findings[0]
    got = fairpolicy.check(pol, given_data).findings[0]
    assert (got.value, got.status, got.groups) == (want.value, want.status, want.groups)
    with pytest.raises(UsageError, match="evaluated in memory"):
        fairpolicy.check(pol, given_data, engine="duckdb")


def test_nested_columns_in_memory_are_refused(tmp_path: Path) -> None:
    pol, _ = files(tmp_path)
    table = pa.table({"y_true": [0, 1] * 60, "y_pred": [1, 0] * 60, "sex": [["F"], ["M"]] * 60})
    for data in (table, table.to_pandas(), FakePolars(table)):
        with pytest.raises(DataError, match="nested type list<") as info:
            fairpolicy.check(pol, data)
        assert "column 'sex'" in str(info.value)


# ---------------------------------------------------------------- DuckDB


def test_a_clean_duckdb_run_writes_nothing_on_stderr(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    pol, data = files(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "fairpolicy", "check", str(pol), str(data), "--engine", "duckdb"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and "PASS" in proc.stdout
    assert proc.stderr == "", proc.stderr


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.bz2", ".csv.zst"])
def test_compressed_csv_gives_the_plain_file_s_findings_on_every_engine(
    tmp_path: Path, suffix: str
) -> None:
    pytest.importorskip("duckdb")
    pol, data = files(tmp_path)
    packed = tmp_path / f"packed{suffix}"
    codec = {".csv.gz": "gzip", ".csv.bz2": "bz2", ".csv.zst": "zstd"}[suffix]
    with pa.output_stream(str(packed), compression=codec) as out:
        out.write(data.read_bytes())
    want = fairpolicy.check(pol, data).findings[0]
    for engine in ("embedded", "duckdb"):
        res = fairpolicy.check(pol, packed, engine=engine)
        got = res.findings[0]
        assert (got.value, got.groups) == (want.value, want.groups), engine
        assert res.data.sha256 == hashlib.sha256(packed.read_bytes()).hexdigest()
        assert res.data.rows == 120
    with pytest.raises(DataError, match="more than 100 rows"):
        fairpolicy.check(pol, packed, max_rows=100)


def test_a_fairpolicy_error_is_what_the_api_raises(tmp_path: Path) -> None:
    """Every error above is a FairpolicyError (exit 2 from the command line)."""
    pol, _ = files(tmp_path)
    with pytest.raises(FairpolicyError):
        fairpolicy.check(pol, None)


def test_validate_confines_hrefs_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile, _ = layout(tmp_path, "../shared/catalog.yaml")
    code, out, _ = run(["validate", str(profile)], capsys)
    assert code == 2 and "outside the policy's folder" in out and "--allow-path" in out
    code, out, _ = run(["validate", str(profile), "--allow-path", str(tmp_path / "shared")], capsys)
    assert code == 0 and out.startswith("OK"), out
