"""Every engine gives the embedded engine's results (DESIGN §2).

Through DuckDB and Spark (local mode): the whole metric registry (every parameter
variant, on CSV and Parquet), every policy pack under ``policies/`` with the data its
tests use, and every applicable metric on the reference fixtures. Counts, per-group
sizes, confusion tables, excluded groups, warnings and messages are identical;
count-metric values agree to 1e-12; score-metric values lie within the bound the
engine reports for its score grid (``details["score_grid"]["max_error"]``, computed by
:mod:`fairpolicy.metrics.grid`), and that bound is checked to be attained-or-respected
on data whose scores really move on the grid. Bad inputs give the same exit code and
the same message under every engine.

The Spark tests share one local session; they are skipped, with the reason, only when
pyspark cannot be imported or no ``java`` is on the PATH.
"""

from __future__ import annotations

import importlib.util
import io
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.cli import main
from fairpolicy.errors import UsageError
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy.schema import Control, Operator, Policy, Threshold
from fairpolicy.results import Finding, Results
from fairpolicy.runner import check
from tests.helpers import FIXTURES, control, write_csv, write_policy
from tests.metrics.test_registry_common import COMBOS, DATA, common_control
from tests.test_policy_packs import DATA as PACK_DATA
from tests.test_policy_packs import PACKS

HAVE_DUCKDB = importlib.util.find_spec("duckdb") is not None
HAVE_PYSPARK = importlib.util.find_spec("pyspark") is not None
HAVE_JAVA = shutil.which("java") is not None

needs_duckdb = pytest.mark.skipif(not HAVE_DUCKDB, reason="duckdb is not installed")
needs_spark = pytest.mark.skipif(
    not (HAVE_PYSPARK and HAVE_JAVA),
    reason="pyspark cannot be imported" if not HAVE_PYSPARK else "no `java` on the PATH",
)

ENGINES = [
    pytest.param("duckdb", marks=needs_duckdb),
    pytest.param("spark", marks=needs_spark),
]


@pytest.fixture(scope="session")
def spark_session() -> Iterator[Any]:
    """One local Spark session for every Spark test (the engine reuses the active one)."""
    from fairpolicy.data.sources.spark import spark_session as start

    spark = start()
    yield spark
    spark.stop()


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "spark":
        request.getfixturevalue("spark_session")
    return name


def parametrize_engines(func: Any) -> Any:
    return pytest.mark.parametrize("engine", ENGINES, indirect=True)(func)


# ---------------------------------------------------------------------------
# comparing results


def _score_error(f: Finding) -> float:
    grid = f.details.get("score_grid")
    if grid is None:
        return 0.0
    err = grid["max_error"]
    return math.inf if err is None else float(err)


def _strip(details: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in details.items() if k != "score_grid"}


def _close(a: Any, b: Any, tol: float, path: str) -> None:
    """Recursive equality, floats within ``tol``."""
    if isinstance(a, float) or isinstance(b, float):
        assert a is not None and b is not None, (path, a, b)
        assert abs(float(a) - float(b)) <= tol, (path, a, b, tol)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), (path, a, b)
        for k in a:
            _close(a[k], b[k], tol, f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, tol, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)


def _regression_tol(exact: Finding) -> float:
    """Regression sums add the same terms in another order: relative float error only."""
    scale = max([abs(exact.value or 0.0), 1.0] + [abs(g.value or 0.0) for g in exact.groups])
    return 1e-12 * scale


def _threshold_within(f: Finding, err: float) -> bool:
    t = f.threshold
    if f.value is None:
        return False
    bounds = t if isinstance(t, list) else [t]
    return any(b is not None and abs(f.value - b) <= err for b in bounds)


def assert_equivalent(exact: Results, engine: Results) -> dict[str, float]:
    """The engine's results equal the embedded ones (see the module docstring).

    Returns, per score finding, |engine value − exact value| (to check that the grid
    really moved something).
    """
    assert engine.data.rows == exact.data.rows
    assert engine.data.columns == exact.data.columns
    assert engine.data.path == exact.data.path
    assert engine.data.sha256 == exact.data.sha256
    assert [w for w in engine.warnings if "tie(s) in" not in w] == [
        w for w in exact.warnings if "tie(s) in" not in w
    ]
    assert engine.run.engine in ("duckdb", "spark") and exact.run.engine == "embedded"
    moved: dict[str, float] = {}
    for a, b in zip(exact.findings, engine.findings, strict=True):
        assert a.control_id == b.control_id
        spec = REGISTRY[a.metric_key]
        if spec.needs_scores and b.value is not None:
            err = _score_error(b)
            assert "score_grid" in b.details and math.isfinite(err), b.details
            assert a.value is not None and abs(a.value - b.value) <= err, (
                a.control_id,
                a.value,
                b.value,
                err,
            )
            moved[a.control_id] = abs(a.value - b.value)
            if _threshold_within(a, err):  # the engine may not pass what it cannot tell
                assert b.status == a.status or b.status == "inconclusive", (a, b)
            else:
                assert b.status == a.status, (a.control_id, a.status, b.status, b.reason)
            assert [(g.group, g.n) for g in a.groups] == [(g.group, g.n) for g in b.groups]
            assert a.excluded_groups == b.excluded_groups
            assert a.counts == b.counts and a.classes == b.classes
            assert _strip(b.details).keys() == a.details.keys()
            continue
        tol = _regression_tol(a) if spec.kind == "regression" else 1e-12
        da = a.model_dump(mode="json", exclude={"message", "value", "groups", "details"})
        db = b.model_dump(mode="json", exclude={"message", "value", "groups", "details"})
        assert da == db, a.control_id
        _close(a.value, b.value, tol, f"{a.control_id}.value")
        _close(
            [g.model_dump() for g in a.groups], [g.model_dump() for g in b.groups], tol, "groups"
        )
        _close(a.details, b.details, tol, f"{a.control_id}.details")
        if spec.kind != "regression":
            assert a.message == b.message
    return moved


def run_both(policy: Any, data: Any, engine: str, **kw: Any) -> tuple[Results, Results]:
    exact = check(policy, data, engine="embedded", deterministic=True, **kw)
    other = check(policy, data, engine=engine, deterministic=True, **kw)
    return exact, other


# ---------------------------------------------------------------------------
# equivalence: registry, policy packs, reference fixtures


@parametrize_engines
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("kind", sorted(DATA))
def test_registry_equivalence(kind: str, fmt: str, engine: str, tmp_path: Path) -> None:
    combos = [c for c in COMBOS if c[3] == kind]
    pol = Policy(
        form="list",
        controls=tuple(common_control(key, params, cid) for cid, key, params, _ in combos),
    )
    path = tmp_path / f"data.{fmt}"
    df = DATA[kind]
    if fmt == "csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path)
    exact, other = run_both(pol, path, engine)
    moved = assert_equivalent(exact, other)
    if kind == "multiclass":  # full-precision scores: the grid must move some values
        assert max(moved.values()) > 0
    assert other.run.options["score_decimals"] == 4


@parametrize_engines
@pytest.mark.parametrize("pack", PACKS, ids=lambda p: p.name)
def test_policy_pack_equivalence(pack: Path, engine: str, tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    PACK_DATA[pack.name]().to_csv(path, index=False)
    exact, other = run_both(pack / "profile.json", path, engine)
    assert_equivalent(exact, other)
    assert exact.exit_code == other.exit_code


def _reference_controls(fixture: str) -> list[Control]:
    """Every classification/data metric the fixture's columns can feed, per dimension."""
    columns = pd.read_csv(FIXTURES / f"{fixture}.csv", nrows=0).columns
    dims = [d for d in ("sex", "site", "grp", "sex,site") if set(d.split(",")) <= set(columns)]
    k = len([c for c in columns if c.startswith("y_score_")]) or 2
    out = []
    for key, spec in sorted(REGISTRY.items()):
        if spec.kind not in ("classification", "data"):
            continue
        if k > 2 and spec.kind == "classification" and "multiclass" not in spec.tasks:
            continue
        roles = {
            "target": "y_true",
            "prediction": "y_pred",
            "score": "y_score",
            "site": "site",
            "fields": "y_true,y_pred",
            "sensitive_columns": "y_true",
        }
        if spec.secondary_role and "site" not in columns:
            continue
        for dim in dims:
            inputs = {r: roles[r] for r in spec.inputs if r != "dimension"}
            inputs["dimension"] = dim
            out.append(
                Control(
                    control_id=f"{key}@{dim}",
                    metric_key=key,
                    metric_key_as_written=key,
                    threshold=Threshold(value=0.1),
                    operator=Operator.LT,
                    inputs=inputs,
                )
            )
    return out


@parametrize_engines
@pytest.mark.parametrize("fixture", ["binary_2g", "multiclass_3", "multiclass_6_2site"])
def test_reference_fixture_equivalence(fixture: str, engine: str) -> None:
    pol = Policy(form="list", controls=tuple(_reference_controls(fixture)))
    exact, other = run_both(pol, FIXTURES / f"{fixture}.csv", engine)
    moved = assert_equivalent(exact, other)
    assert moved and max(moved.values()) > 0  # 6-decimal scores: the 4-decimal grid moved them


# ---------------------------------------------------------------------------
# text semantics of CSV columns: types and values as the embedded reader has them

TRICKY = (
    'y_true,y_pred,grp,"odd, ""name""",flag,y_score\n'
    + (
        "1.0,1.0,01,a,true,0.123456\n"
        "0.0,1.0,1,b,false,0.5\n"
        '1.0,0.0,"NA",c,true,0.98765\n'
        "0.0,0.0,,d,false,0\n"
        "1.0,1.0, 1,e,true,1\n"
        "0.0,0.0,1 ,é,false,0.25\n"
        '1.0,0.0,"1",N/A,true,.75\n'
        "0.0,1.0,01,null,false,1e-1\n"
    )
    * 12
)


@parametrize_engines
def test_csv_text_semantics_match_the_embedded_reader(engine: str, tmp_path: Path) -> None:
    data = write_csv(tmp_path, TRICKY)
    controls = [
        control("dp", threshold="0.9", dimension="grp", min_samples="1"),
        control("by-odd", threshold="0.9", dimension='odd, "name"', min_samples="1"),
        control("flags", threshold="0.9", target="flag", prediction="flag", dimension="grp"),
        control("auc", "auc_gap", "0.9", dimension="grp", min_samples="1", input__score="y_score"),
        control("share", "min_group_share", "0.01", ">=", dimension="grp,flag"),
    ]
    exact, other = run_both(write_policy(tmp_path, *controls), data, engine)
    assert_equivalent(exact, other)
    groups = {g.group for g in exact.findings[0].groups}
    # text, not numbers (" 1" is trimmed); "NA" is a group name, only "" is missing
    assert groups == {"01", "1", "NA"}
    assert [(e.group, e.missing) for e in exact.findings[0].excluded_groups] == [
        ("(missing)", True)
    ]


@parametrize_engines
def test_parquet_types_match(engine: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    n = 400
    df = pd.DataFrame(
        {
            "y_true": rng.integers(0, 2, n).astype(np.int8),
            "y_pred": rng.integers(0, 2, n).astype(bool),
            "grp": rng.choice([1, 2, 3], n).astype(np.int32),
            "y_score": rng.uniform(size=n).astype(np.float32),
            "y": rng.normal(size=n),
            "yhat": rng.normal(size=n).astype(np.float32),
        }
    )
    path = tmp_path / "typed.parquet"
    df.to_parquet(path)
    controls = [
        control("dp", threshold="0.9", dimension="grp"),
        control("bal", "balance_positive_class", "0.9", dimension="grp", input__score="y_score"),
        control("mae", "mae_parity", "9", target="y", prediction="yhat", dimension="grp"),
    ]
    exact, other = run_both(write_policy(tmp_path, *controls), path, engine)
    assert_equivalent(exact, other)
    assert [f.status for f in other.findings] == ["pass", "pass", "pass"]


# ---------------------------------------------------------------------------
# bad inputs: the same exit code and message under every engine

BAD: list[tuple[str, str, dict[str, str], str]] = [
    ("missing column", "y_true,y_pred,gender\n" + "1,0,F\n0,1,M\n" * 40, {}, "column 'sex'"),
    ("NaN label", "y_true,y_pred,sex\n" + "1,0,F\n,1,M\n" * 40, {}, "data rows 2, 4, 6"),
    (
        "probabilities in prediction",
        "y_true,y_pred,sex\n" + "1,1,F\n0,0,M\n" * 5 + "1,0.73,F\n0,0.2,M\n" * 40,
        {},
        "such as 0.73 (data row 11)",
    ),
    ("single group", "y_true,y_pred,sex\n" + "1,0,F\n0,1,F\n" * 40, {}, "only one group"),
    ("text vs numbers", "y_true,y_pred,sex\n" + "1,yes,F\n0,no,M\n" * 40, {}, "holds text"),
    (
        "text labels without positive_label",
        "y_true,y_pred,sex\n" + "yes,no,F\nno,yes,M\n" * 40,
        {},
        "positive_label",
    ),
    ("K=3 for a binary metric", "y_true,y_pred,sex\n" + "0,1,F\n1,2,M\n2,2,F\n" * 20, {}, "K=3"),
    (
        "labels beyond the declared K",
        "y_true,y_pred,sex\n" + "0,1,F\n1,2,M\n3,0,F\n" * 20,
        {"metric": "multiclass_demographic_parity", "num_classes": "3"},
        "outside 0..2",
    ),
    (
        "NaN score",
        "y_true,y_pred,sex,s\n" + "1,1,F,0.9\n0,0,M,NA\n" * 40,
        {"metric": "auc_gap", "input__score": "s"},
        "score column 's' has 40 missing value(s) (first at data rows 2, 4, 6, 8, 10)",
    ),
    (
        "infinite regression value",
        "y,yhat,sex\n"
        + "".join(f"{i * 1.5},{'inf' if i == 7 else i},{'FM'[i % 2]}\n" for i in range(80)),
        {"metric": "mae_parity", "target": "y", "prediction": "yhat"},
        "has 1 infinite value(s) (first at data rows 8)",
    ),
    (
        "text regression target",
        "y,yhat,sex\n" + "".join(f"v{i},{i},{'FM'[i % 2]}\n" for i in range(80)),
        {"metric": "mae_parity", "target": "y", "prediction": "yhat"},
        "holds string values",
    ),
    (
        "missing regression values",
        "y,yhat,sex\n"
        + "".join(f"{'' if i % 9 == 4 else i},{i},{'FM'[i % 2]}\n" for i in range(80)),
        {"metric": "mae_parity", "target": "y", "prediction": "yhat"},
        "9 missing value(s) (first at data rows 5, 14, 23, 32, 41)",
    ),
]


@parametrize_engines
@pytest.mark.parametrize(("name", "text", "props", "fragment"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_parity(
    name: str, text: str, props: dict[str, str], fragment: str, engine: str, tmp_path: Path
) -> None:
    data = write_csv(tmp_path, text)
    pol = write_policy(tmp_path, control(**props))
    exact, other = run_both(pol, data, engine)
    assert exact.findings[0].status == "error"
    assert fragment in exact.findings[0].message, exact.findings[0].message
    assert other.findings[0].message == exact.findings[0].message
    assert other.exit_code == exact.exit_code == 2
    out = io.StringIO()
    assert main(["check", str(pol), str(data), "--engine", engine], stdout=out) == 2


@parametrize_engines
def test_missing_drop_reports_the_same_counts(engine: str, tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n,1,M\n1,1,M\n0,0,F\n" * 40)
    pol = write_policy(tmp_path, control(missing="drop", threshold="0.5", operator=">="))
    exact, other = run_both(pol, data, engine)
    assert_equivalent(exact, other)
    assert any("dropped 40 row(s)" in w for w in other.warnings)


@parametrize_engines
@pytest.mark.parametrize(
    ("text", "fragment"),
    [("", "empty"), ("y_true,y_pred,sex\n", "no data rows"), ("y_true,y_pred,sex\n1,0\n", "")],
)
def test_unreadable_data_exits_2(engine: str, text: str, fragment: str, tmp_path: Path) -> None:
    data = write_csv(tmp_path, text)
    pol = write_policy(tmp_path, control())
    err = io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        code = main(["check", str(pol), str(data), "--engine", engine], stdout=io.StringIO())
    assert code == 2
    assert fragment in err.getvalue() and "Traceback" not in err.getvalue()


# ---------------------------------------------------------------------------
# the score grid


def _binary_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.clip(0.5 * y + rng.uniform(0, 0.5, n), 0, 1)
    return pd.DataFrame(
        {"y_true": y, "y_pred": (s > 0.5).astype(int), "sex": rng.choice(["F", "M"], n), "s": s}
    )


@parametrize_engines
def test_out_of_range_scores_are_not_rounded_into_range(engine: str, tmp_path: Path) -> None:
    df = _binary_frame(200, 1)
    df.loc[[3, 50], "s"] = [1.00004, -0.00004]  # would round to 1.0 and -0.0
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    pol = write_policy(tmp_path, control("sp", "score_parity", "0.9", input__score="s"))
    exact, other = run_both(pol, data, engine)
    assert any("2 value(s) of score column 's' fall outside [0, 1]" in w for w in other.warnings)
    assert_equivalent(exact, other)
    assert other.findings[0].value is None  # groups with out-of-range scores are excluded


@parametrize_engines
def test_row_sums_are_checked_before_rounding(engine: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    n = 300
    a = rng.uniform(0.2, 0.4, n)
    b = rng.uniform(0.2, 0.4, n)
    off = rng.choice([0.00095, 0.00099, 0.00101, 0.00105, 0.0], n)  # around the ±0.001 tolerance
    df = pd.DataFrame(
        {
            "y_true": rng.integers(0, 3, n),
            "y_pred": rng.integers(0, 3, n),
            "g": rng.choice(["x", "y"], n),
            "p_0": a,
            "p_1": b,
            "p_2": 1.0 - a - b + off,
        }
    )
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    pol = write_policy(
        tmp_path, control("auc", "multi_class_auc_gap", "0.9", dimension="g", input__score="p")
    )
    exact, other = run_both(pol, data, engine)
    assert any("do not sum to 1" in w for w in exact.warnings)
    assert_equivalent(exact, other)


@parametrize_engines
def test_fail_closed_when_the_grid_straddles_the_threshold(engine: str, tmp_path: Path) -> None:
    df = _binary_frame(400, 2)
    data = tmp_path / "d.csv"
    df.to_csv(data, index=False)
    probe = check(
        write_policy(tmp_path, control("sp", "score_parity", "0.9", input__score="s")),
        data,
        engine=engine,
    ).findings[0]
    err = probe.details["score_grid"]["max_error"]
    assert err == pytest.approx(1e-4, rel=1e-6)  # mean-score gap: 2 × half the grid step
    assert probe.value is not None
    threshold = f"{probe.value + err / 2:.12f}"  # the grid value passes; the exact may not
    pol = write_policy(tmp_path, control("sp", "score_parity", threshold, input__score="s"))
    f = check(pol, data, engine=engine).findings[0]
    assert f.status == "inconclusive" and "--score-decimals" in (f.reason or "")
    # a finer grid decides
    fine = check(pol, data, engine=engine, score_decimals=8).findings[0]
    assert fine.details["score_grid"]["max_error"] < 1e-7
    exact = check(pol, data, engine="embedded").findings[0]
    assert fine.status == exact.status


@parametrize_engines
def test_score_decimals_is_recorded_and_validated(engine: str, tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    _binary_frame(200, 3).to_csv(data, index=False)
    pol = write_policy(tmp_path, control("auc", "auc_gap", "0.9", input__score="s"))
    coarse = check(pol, data, engine=engine, score_decimals=1)
    fine = check(pol, data, engine=engine, score_decimals=6)
    assert coarse.run.options["score_decimals"] == 1
    assert _score_error(coarse.findings[0]) > _score_error(fine.findings[0])
    exact = check(pol, data, engine="embedded")
    assert (
        "score_decimals" not in exact.run.options and "score_grid" not in exact.findings[0].details
    )
    assert (
        main(
            ["check", str(pol), str(data), "--engine", engine, "--score-decimals", "-1"],
            stdout=io.StringIO(),
        )
        == 2
    )


# ---------------------------------------------------------------------------
# DuckDB: globs, the memory budget, selection


def _split_parquet(df: pd.DataFrame, folder: Path, parts: int) -> None:
    folder.mkdir()
    for i, chunk in enumerate(np.array_split(np.arange(len(df)), parts)):
        df.iloc[chunk].to_parquet(folder / f"part-{i}.parquet")


@needs_duckdb
def test_duckdb_reads_a_glob_of_parquet_files(tmp_path: Path) -> None:
    df = DATA["binary"]
    whole = tmp_path / "whole.parquet"
    df.to_parquet(whole)
    _split_parquet(df, tmp_path / "parts", 3)
    combos = [c for c in COMBOS if c[3] == "binary"]
    pol = Policy(
        form="list",
        controls=tuple(common_control(key, params, cid) for cid, key, params, _ in combos),
    )
    one = check(pol, whole, engine="duckdb", deterministic=True)
    many = check(pol, str(tmp_path / "parts" / "*.parquet"), deterministic=True)  # auto → duckdb
    assert many.run.engine == "duckdb" and many.data.rows == len(df)
    assert [f.model_dump(exclude={"message"}) for f in one.findings] == [
        f.model_dump(exclude={"message"}) for f in many.findings
    ]
    assert many.data.sha256 and many.data.sha256 != one.data.sha256


@needs_duckdb
def test_globs_need_an_engine_and_matching_files(tmp_path: Path) -> None:
    pol = write_policy(tmp_path, control())
    (tmp_path / "a.csv").write_text("y_true,y_pred,sex\n1,0,F\n")
    (tmp_path / "b.csv").write_text("y_true,sex,y_pred\n1,F,0\n")
    pattern = str(tmp_path / "*.csv")
    err = io.StringIO()
    import contextlib

    with contextlib.redirect_stderr(err):
        assert main(["check", str(pol), pattern, "--engine", "embedded"], stdout=io.StringIO()) == 2
        assert main(["check", str(pol), pattern], stdout=io.StringIO()) == 2
        assert main(["check", str(pol), str(tmp_path / "none*.csv")], stdout=io.StringIO()) == 2
    text = err.getvalue()
    assert "--engine duckdb" in text and "header differs" in text and "matches no file" in text


@needs_duckdb
def test_duckdb_uses_the_memory_budget_and_spills_to_a_temp_directory(tmp_path: Path) -> None:
    from fairpolicy.data.sources.duckdb import DuckDBSource

    data = tmp_path / "d.csv"
    _binary_frame(50, 4).to_csv(data, index=False)
    src = DuckDBSource(data, 512 << 20)
    try:
        limit = src.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        temp = src.con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
        assert limit.replace(" ", "") in ("512.0MiB", "512MiB", "536.8MB")
        assert Path(temp).is_dir()
    finally:
        src.close()
    assert not Path(temp).exists()


def test_engine_selection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from fairpolicy.data.sources import parse_size, resolve_engine

    data = tmp_path / "d.csv"
    _binary_frame(50, 4).to_csv(data, index=False)
    cols = lambda: ["y_true"]  # noqa: E731
    assert resolve_engine("auto", str(data), cols, 1 << 30) == ("embedded", [])
    if HAVE_DUCKDB:
        assert resolve_engine("auto", str(data), cols, 100) == ("duckdb", [])
        assert resolve_engine("auto", str(tmp_path / "*.csv"), cols, 1 << 30) == ("duckdb", [])
    assert resolve_engine("auto", pd.read_csv(data), cols, 100) == ("embedded", [])
    with pytest.raises(UsageError, match="pandas DataFrame"):
        resolve_engine("duckdb", pd.read_csv(data), cols, 100)
    with pytest.raises(UsageError, match="Did you mean 'duckdb'"):
        resolve_engine("duckbd", str(data), cols, 100)
    # auto never starts Spark, and a missing package is an exit-2 message naming the fix
    import fairpolicy.data.sources as engines

    monkeypatch.setattr(engines, "_installed", lambda module: False)
    name, notes = resolve_engine("auto", str(data), cols, 100)
    assert name == "embedded" and "pip install duckdb" in notes[0]
    for engine, package in (("duckdb", "duckdb"), ("spark", "pyspark")):
        with pytest.raises(UsageError, match=f"pip install {package}"):
            resolve_engine(engine, str(data), cols, 100)
    pol = write_policy(tmp_path, control())
    assert main(["check", str(pol), str(data), "--engine", "spark"], stdout=io.StringIO()) == 2
    from fairpolicy.data.sources import estimate_embedded_peak
    from fairpolicy.data.sources.paths import estimate_rows

    big = _binary_frame(20_000, 5)
    big.to_csv(tmp_path / "big.csv", index=False)
    big.to_parquet(tmp_path / "big.parquet")
    assert estimate_rows(str(tmp_path / "big.parquet")) == 20_000
    assert 19_000 <= estimate_rows(str(tmp_path / "big.csv")) <= 21_000
    four = estimate_embedded_peak(str(tmp_path / "big.csv"), lambda: ["a", "b", "c", "d"])
    assert four > estimate_embedded_peak(str(tmp_path / "big.csv"), lambda: ["a"])
    assert parse_size("4GB") == 4 << 30 and parse_size("512mib") == 512 << 20
    assert parse_size("1.5G") == 3 << 29 and parse_size(str(1 << 30)) == 1 << 30
    for bad in ("lots", "0%", "1KB", "150%"):
        with pytest.raises(UsageError, match="memory-budget"):
            parse_size(bad)


# ---------------------------------------------------------------------------
# Spark: DataFrames where they live


@needs_spark
def test_check_a_spark_dataframe(spark_session: Any, tmp_path: Path) -> None:
    df = DATA["multiclass"]
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    combos = [c for c in COMBOS if c[3] == "multiclass"]
    pol = Policy(
        form="list",
        controls=tuple(common_control(key, params, cid) for cid, key, params, _ in combos),
    )
    exact = check(pol, df, deterministic=True)  # pandas: embedded
    other = check(pol, spark_session.read.parquet(str(path)), deterministic=True)  # auto → spark
    assert other.run.engine == "spark" and other.data.path is None
    assert exact.data.path is None and other.data.rows == exact.data.rows
    for a, b in zip(exact.findings, other.findings, strict=True):
        err = _score_error(b)
        assert a.status == b.status or _threshold_within(a, err)
        if a.value is not None:
            assert b.value is not None and abs(a.value - b.value) <= max(err, 1e-12)
    with pytest.raises(UsageError, match="spark engine"):
        check(pol, spark_session.read.parquet(str(path)), engine="duckdb")


@needs_spark
def test_spark_dataframe_errors_name_the_dataframe(spark_session: Any, tmp_path: Path) -> None:
    data = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n,1,M\n" * 40)
    pd.read_csv(data).to_parquet(tmp_path / "d.parquet")
    pol = write_policy(tmp_path, control())
    f = check(pol, spark_session.read.parquet(str(tmp_path / "d.parquet"))).findings[0]
    assert f.status == "error"
    assert f.message.startswith("<DataFrame>, control 'c1', column 'y_true'")
    assert "40 missing value(s) (first at data rows 2, 4, 6, 8, 10)" in f.message


# ---------------------------------------------------------------------------
# the raw-text converter: pyarrow's CSV inference depends only on the set of values

TOKENS = [
    "0",
    "1",
    "2",
    "01",
    "1.0",
    "0.5",
    ".5",
    "1e3",
    "true",
    "False",
    "NA",
    "",
    "nan",
    "inf",
    "-inf",
    "x",
    "a,b",
    'q"q',
    " 1",
    "2020-01-01",
    "null",
    "N/A",
    "-0",
    "+1",
]


def test_convert_text_matches_the_embedded_reader() -> None:
    import pyarrow as pa
    import pyarrow.csv as pacsv
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from fairpolicy.data.sources.aggregate import convert_text

    @settings(max_examples=150, deadline=None)
    @given(st.lists(st.sampled_from(TOKENS), min_size=1, max_size=12), st.booleans())
    def prop(values: list[str], as_string: bool) -> None:
        body = "v\n" + "".join('"' + v.replace('"', '""') + '"\n' for v in values)
        opts = pacsv.ConvertOptions(
            column_types={"v": pa.string()} if as_string else {}, strings_can_be_null=True
        )
        try:
            full = pacsv.read_csv(io.BytesIO(body.encode()), convert_options=opts).column("v")
        except pa.ArrowInvalid:
            return
        distinct = list(dict.fromkeys(values))
        conv = convert_text(pa.array(distinct, pa.string()), as_string=as_string)
        assert conv.type == full.type
        mapping = dict(zip(distinct, conv.to_pylist(), strict=True))
        expected = full.to_pylist()
        got = [mapping[v] for v in values]
        assert [str(x) for x in got] == [str(x) for x in expected]

    prop()


# ---------------------------------------------------------------------------
# the bounds themselves, on scores piled where rounding hurts most


def _adversarial(seed: int, k: int) -> pd.DataFrame:
    """Scores on grid half-steps, just around bin edges, in a narrow band around the
    median, and uniform; three groups, three sites."""
    rng = np.random.default_rng(seed)
    n = 2000
    kind = rng.integers(0, 4, n)
    half = rng.integers(0, 10001, n) * 1e-4 + rng.choice([0.49e-4, -0.49e-4, 0.5e-4], n)
    edge = rng.integers(1, 10, n) / 10 + rng.uniform(-0.6e-4, 0.6e-4, n)
    mid = 0.5 + rng.uniform(-3e-4, 3e-4, n)
    s = np.clip(
        np.select([kind == 0, kind == 1, kind == 2], [half, edge, mid], rng.uniform(size=n)), 0, 1
    )
    g = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    site = rng.choice(["s1", "s2", "s3"], n)
    if k == 2:
        y = (rng.uniform(size=n) < s).astype(int)
        return pd.DataFrame(
            {"y_true": y, "y_pred": (s > 0.5).astype(int), "g": g, "site": site, "y_score": s}
        )
    p = np.stack([s, (1 - s) * 0.5, (1 - s) * 0.5], axis=1)
    cols = {f"y_score_{j}": p[:, j] for j in range(3)}
    return pd.DataFrame(
        {"y_true": rng.integers(0, 3, n), "y_pred": p.argmax(1), "g": g, "site": site, **cols}
    )


@needs_duckdb
@pytest.mark.parametrize(("seed", "k"), [(0, 2), (1, 3), (2, 2), (3, 3)])
def test_score_grid_bounds_hold_on_adversarial_scores(seed: int, k: int, tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    _adversarial(seed, k).to_csv(path, index=False)
    controls = []
    for key, spec in sorted(REGISTRY.items()):
        if not spec.needs_scores or (k > 2 and "multiclass" not in spec.tasks):
            continue
        variants: list[dict[str, Any]] = [{}]
        if key.startswith("calibration"):
            variants += [{"n_bins": 7}, {"n_bins": 15}]
        for params in variants:
            inputs = {
                "target": "y_true",
                "prediction": "y_pred",
                "dimension": "g",
                "score": "y_score",
            }
            if spec.secondary_role:
                inputs["site"] = "site"
            controls.append(
                Control(
                    control_id=f"{key}{params}",
                    metric_key=key,
                    metric_key_as_written=key,
                    threshold=Threshold(value=0.1),
                    operator=Operator.LT,
                    inputs=inputs,
                    params=params,
                    min_samples=1,
                )
            )
    pol = Policy(form="list", controls=tuple(controls))
    exact = check(pol, path, engine="embedded")
    for decimals in (2, 4):
        grid = check(pol, path, engine="duckdb", score_decimals=decimals)
        moved = 0
        for a, b in zip(exact.findings, grid.findings, strict=True):
            assert (a.value is None) == (b.value is None), (a.control_id, a.reason, b.reason)
            if a.value is None or b.value is None:
                continue
            err = _score_error(b)
            assert abs(a.value - b.value) <= err, (decimals, a.control_id, a.value, b.value, err)
            moved += abs(a.value - b.value) > 0
        assert moved  # the grid changed values, so the bounds were really put to the test


@parametrize_engines
def test_bootstrap_intervals_of_count_metrics_are_identical(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    DATA["binary"].to_csv(path, index=False)
    controls = [
        control("dp", threshold="0.9", dimension="grp"),
        control("eo", "equalized_odds_diff", "0.9", dimension="grp"),
        control("auc", "auc_gap", "0.9", dimension="grp", input__score="y_score"),
    ]
    exact, other = run_both(write_policy(tmp_path, *controls), path, engine, bootstrap=200)
    assert exact.findings[0].ci is not None
    for a, b in zip(exact.findings[:2], other.findings[:2], strict=True):
        assert a.ci == b.ci and a.groups == b.groups
    assert other.findings[2].ci is not None  # resampled from the grid's joint score cells


@parametrize_engines
def test_ranking_ties_are_ordered_by_group_and_said_so(engine: str, tmp_path: Path) -> None:
    rows = "".join(f"{i // 2},{'FM'[i % 3 == 0]}\n" for i in range(90))
    data = write_csv(tmp_path, "score,sex\n" + rows)
    pol = write_policy(
        tmp_path,
        {
            "control-id": "exp",
            "props": [
                {"name": "metric_key", "value": "exposure_ratio"},
                {"name": "threshold", "value": "0.5"},
                {"name": "operator", "value": ">="},
                {"name": "input.score", "value": "score"},
                {"name": "input.dimension", "value": "sex"},
            ],
        },
    )
    res = check(pol, data, engine=engine)
    assert res.findings[0].status in ("pass", "fail")
    assert any(f"the {engine} engine does not keep row order" in w for w in res.warnings)
    assert [(g.group, g.n) for g in res.findings[0].groups] == [("F", 60), ("M", 30)]


@needs_duckdb
def test_duckdb_leaves_no_temp_directory_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    spill = tmp_path / "spill"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    pol = write_policy(tmp_path, control())
    good = write_csv(tmp_path, "y_true,y_pred,sex\n" + "1,0,F\n0,1,M\n" * 40, "good.csv")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    (tmp_path / "x1.csv").write_text("y_true,y_pred,sex\n1,0,F\n")
    (tmp_path / "x2.csv").write_text("y_true,sex,y_pred\n1,F,0\n")
    ragged = write_csv(tmp_path, "y_true,y_pred,sex\n1,0,F\n1,0\n", "ragged.csv")
    for data in (good, tmp_path / "bad.parquet", str(tmp_path / "x*.csv"), ragged):
        main(["check", str(pol), str(data), "--engine", "duckdb"], stdout=io.StringIO())
    assert list(spill.iterdir()) == []


@parametrize_engines
def test_bootstrap_intervals_of_regression_and_ranking_are_the_embedded_ones(
    engine: str, tmp_path: Path
) -> None:
    """With a CI asked for, regression sums come from the distinct (y, ŷ) cells (not pushed
    down), so every engine resamples the same cells with the same seed."""
    rng = np.random.default_rng(17)
    n = 400
    df = pd.DataFrame(
        {
            "y": np.round(rng.normal(3, 1, n), 1),
            "yhat": np.round(rng.normal(3, 1, n), 1),
            "score": rng.permutation(n) / n,  # no ties: the same ranking on every engine
            "grp": rng.choice(["a", "b", "c"], n),
        }
    )
    path = tmp_path / "r.csv"
    df.to_csv(path, index=False)
    reg = {"input__target": "y", "input__prediction": "yhat"}
    controls = [
        control("mae", "mae_parity", "9", dimension="grp", target=None, prediction=None, **reg),
        control("rmse", "rmse_parity", "9", dimension="grp", target=None, prediction=None, **reg),
        control(
            "exp",
            "exposure_ratio",
            "0.1",
            ">",
            dimension="grp",
            target=None,
            prediction=None,
            input__score="score",
        ),
    ]
    exact, other = run_both(write_policy(tmp_path, *controls), path, engine, bootstrap=300)
    for a, b in zip(exact.findings, other.findings, strict=True):
        assert a.ci is not None and b.ci is not None and a.ci.low is not None, a.ci
        assert b.ci.low == pytest.approx(a.ci.low, abs=1e-12)
        assert b.ci.high == pytest.approx(a.ci.high, abs=1e-12)
        assert (a.ci.seed, a.ci.resamples) == (b.ci.seed, b.ci.resamples)
