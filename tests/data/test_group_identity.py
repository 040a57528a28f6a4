"""Group identity (issue 12 class 2, issue 19 items 8 and 10; DESIGN §8).

In a dimension or site column only an empty cell or a true null (a NaN in a float
column) is missing; ``NA``, ``null``, ``nan``, ``None``, ``#N/A``, ``unknown`` and
``(missing)`` are group names. The same on every engine (embedded, DuckDB, Spark) and
every input type (CSV, Parquet, pandas DataFrame, Spark DataFrame). The missing bucket is
``(missing)`` with ``missing: true`` and never merges with a real group; group names are
unambiguous (a key is a tuple, rendered injectively).

The property: renaming groups to any of those tokens never changes a verdict — the
status, the value, and every group's size and value (mapped back through the renaming)
are those of the same data with plain names.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from fairpolicy.results import Finding, Results
from fairpolicy.runner import check
from fairpolicy.stats import MISSING_GROUP, group_name
from tests.data.test_engines import ENGINES, needs_duckdb
from tests.helpers import control, write_policy

#: group names a CSV reader (pandas, pyarrow, DuckDB, Spark) may take for a null
TOKENS = [
    "NA",
    "N/A",
    "n/a",
    "null",
    "NULL",
    "nan",
    "NaN",
    "-nan",
    "None",
    "#N/A",
    "#NA",
    "-1.#IND",
    "1.#QNAN",
    "unknown",
    MISSING_GROUP,
    '"(missing)"',
    "A & B",
    "A &",
    "& B",
    "e\u0301",  # NFD é
    "\u00e9",  # NFC é
    "0",
    "-0",
]

SEXES = ("F", "M")


@pytest.fixture(scope="module")
def spark_session() -> Iterator[Any]:
    from fairpolicy.data.sources.spark import spark_session as start

    yield start()  # the session-wide one of test_engines stops it


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "spark":
        request.getfixturevalue("spark_session")
    return name


# ---------------------------------------------------------------------------
# data: plain group names, and the same rows with groups renamed


def make_rows(seed: int, sizes: list[int], missing: int) -> list[tuple[int, int, str | None, str]]:
    """(y_true, y_pred, region, sex) rows: region ``g0..``, a selection rate per group."""
    rng = np.random.default_rng(seed)
    out: list[tuple[int, int, str | None, str]] = []
    for g, n in enumerate(sizes):
        rate = rng.uniform(0.1, 0.9)
        for _ in range(n):
            out.append(
                (int(rng.random() < 0.5), int(rng.random() < rate), f"g{g}", SEXES[rng.integers(2)])
            )
    for _ in range(missing):
        out.append((int(rng.random() < 0.5), int(rng.random() < 0.5), None, "F"))
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def rename(rows: list[tuple[int, int, str | None, str]], names: dict[str, str]) -> list[Any]:
    return [(t, p, None if r is None else names.get(r, r), s) for t, p, r, s in rows]


def frame(rows: list[Any]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["y_true", "y_pred", "region", "sex"])


def write(rows: list[Any], fmt: str, tmp: Path, name: str) -> Any:
    """The rows as a CSV (a missing region is an empty cell), Parquet or a DataFrame."""
    if fmt == "dataframe":
        return frame(rows)
    path = tmp / f"{name}.{fmt}"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["y_true", "y_pred", "region", "sex"])
        w.writerows([(t, p, "" if r is None else r, s) for t, p, r, s in rows])
        path.write_text(buf.getvalue(), encoding="utf-8")
    else:
        frame(rows).to_parquet(path)
    return path


def policy(tmp: Path, *, every_kind: bool = False, **extra: str) -> Path:
    """Two classification controls and an intersection; ``every_kind`` adds a regression
    control (sums pushed down on an engine), a data check and a regression control with a
    bootstrap (per-tuple cells on an engine)."""
    more = (
        [
            control("mae", "mae_parity", threshold="0.5", dimension="region", **extra),
            control("mae-ci", "mae_parity", threshold="0.5", dimension="region", ci="20", **extra),
            control("size", "group_size", threshold="10", operator=">=", dimension="region"),
        ]
        if every_kind
        else []
    )
    return write_policy(
        tmp,
        *more,
        control("dp", dimension="region", threshold="0.25", min_samples="20", **extra),
        control(
            "eo",
            "equal_opportunity_diff",
            dimension="region",
            threshold="0.3",
            min_samples="20",
            **extra,
        ),
        control(
            "x", dimension="region,sex", threshold="0.5", min_samples="5", p_value="50", **extra
        ),
    )


# ---------------------------------------------------------------------------
# comparing a run on renamed groups with the run on plain names


def _r12(x: float | None) -> float | None:
    return None if x is None else round(x, 12)


def canon(f: Finding, back: dict[str, str]) -> dict[str, Any]:
    """The finding in the plain names: status, value, per-group (n, value), p-valued groups,
    excluded groups (name, n, missing), worst group."""

    def plain(key: list[str] | None) -> str | None:
        return None if key is None else group_name(tuple(back.get(v, v) for v in key))

    names = {g.group: plain(g.key) for g in f.groups}
    names.update({e.group: plain(e.key) for e in f.excluded_groups if not e.missing})
    assert all(n is not None for n in names.values()), f  # every group carries its key
    for g in f.groups:  # the displayed name reads back as the key
        assert list(parse_group_name(g.group, len(g.key or ()))) == g.key
    assert len(set(names.values())) == len(names)  # distinct groups stay distinct
    width = len([c for c in f.inputs.get("dimension", "").split(",") if c.strip()])
    for g in f.counts:  # compared groups without a per-group value (inconclusive)
        names.setdefault(g, plain(list(parse_group_name(g, width))))
    pv = f.p_value.groups if f.p_value and f.p_value.groups else {}
    assert set(pv) <= set(names)
    worst = next((g for g in f.groups if g.group == f.worst_group), None)
    return {
        "status": f.status,
        "value": None if f.value is None else round(f.value, 12),
        # per-group values to 12 digits: engines sum regression values in different orders
        "groups": sorted((names[g.group], g.n, _r12(g.value)) for g in f.groups),
        # which groups have a p-value (their values depend on the order groups are dealt)
        "p": sorted(names[g] for g in pv),
        "excluded": sorted(
            (MISSING_GROUP if e.missing else names[e.group], e.n, e.missing)
            for e in f.excluded_groups
        ),
        # the worst group's value (between tied groups the pick follows the name order)
        "worst": f.worst_group if worst is None else _r12(worst.value),
        "counts": sorted((names[g], c) for g, c in f.counts.items()),
    }


def assert_same_verdict(plain: Results, renamed: Results, back: dict[str, str]) -> None:
    assert renamed.exit_code == plain.exit_code
    assert renamed.data.rows == plain.data.rows
    for a, b in zip(plain.findings, renamed.findings, strict=True):
        assert canon(b, back) == canon(a, {}), (a.control_id, b.message, a.message)
    # the missing bucket is counted the same, and it is never a real group
    for f in renamed.findings:
        missing = [e for e in f.excluded_groups if e.missing]
        assert all(e.group == MISSING_GROUP and e.key is None for e in missing)
        assert all(not g.missing and g.group != MISSING_GROUP for g in f.groups)


def spark_frame(df: pd.DataFrame, tmp: Path) -> Any:
    """A Spark DataFrame holding ``df`` (through Parquet: no pandas conversion in Spark)."""
    from fairpolicy.data.sources.spark import spark_session

    path = tmp / "spark-frame.parquet"
    df.to_parquet(path)
    return spark_session().read.parquet(str(path))


def _run(pol: Path, data: Any, engine: str, tmp: Path) -> Results:
    if engine == "spark" and isinstance(data, pd.DataFrame):
        data = spark_frame(data, tmp)
    return check(pol, data, engine=engine, deterministic=True)


# ---------------------------------------------------------------------------
# the property, on the embedded engine (every input type) and DuckDB (files)

renamings = st.lists(st.sampled_from(TOKENS), min_size=2, max_size=5, unique=True)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**31),
    sizes=st.lists(st.integers(15, 70), min_size=2, max_size=5),
    missing=st.integers(0, 8),
    tokens=renamings,
    fmt=st.sampled_from(["csv", "parquet", "dataframe"]),
)
def test_renaming_groups_to_null_like_tokens_never_changes_a_verdict(
    tmp_path: Path, seed: int, sizes: list[int], missing: int, tokens: list[str], fmt: str
) -> None:
    rows = make_rows(seed, sizes, missing)
    names = {f"g{i}": t for i, t in enumerate(tokens[: len(sizes)])}
    back = {v: k for k, v in names.items()}
    pol = policy(tmp_path)
    plain = check(pol, write(rows, fmt, tmp_path, "plain"), deterministic=True)
    renamed = check(pol, write(rename(rows, names), fmt, tmp_path, "renamed"), deterministic=True)
    assert_same_verdict(plain, renamed, back)


@needs_duckdb
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**31),
    sizes=st.lists(st.integers(15, 70), min_size=2, max_size=4),
    missing=st.integers(0, 8),
    tokens=renamings,
    fmt=st.sampled_from(["csv", "parquet"]),
)
def test_renaming_never_changes_a_verdict_on_duckdb(
    tmp_path: Path, seed: int, sizes: list[int], missing: int, tokens: list[str], fmt: str
) -> None:
    rows = make_rows(seed, sizes, missing)
    names = {f"g{i}": t for i, t in enumerate(tokens[: len(sizes)])}
    back = {v: k for k, v in names.items()}
    pol = policy(tmp_path)
    plain = check(pol, write(rows, fmt, tmp_path, "plain"), deterministic=True)
    renamed = check(
        pol,
        write(rename(rows, names), fmt, tmp_path, "renamed"),
        engine="duckdb",
        deterministic=True,
    )
    assert_same_verdict(plain, renamed, back)


# ---------------------------------------------------------------------------
# every token at once, on every engine and input type (Spark included)


@pytest.mark.parametrize("engine", ["embedded", *ENGINES], indirect=True)
@pytest.mark.parametrize("fmt", ["csv", "parquet", "dataframe"])
def test_every_token_is_a_group_on_every_engine(engine: str, fmt: str, tmp_path: Path) -> None:
    if engine == "duckdb" and fmt == "dataframe":
        pytest.skip("a pandas DataFrame is evaluated by the embedded engine")
    sizes = [25 + 3 * i for i in range(len(TOKENS))]
    rows = make_rows(7, sizes, 9)
    names = {f"g{i}": t for i, t in enumerate(TOKENS)}
    back = {v: k for k, v in names.items()}
    pol = policy(tmp_path, every_kind=True)
    plain = check(pol, write(rows, "csv", tmp_path, "plain"), deterministic=True)
    renamed = _run(pol, write(rename(rows, names), fmt, tmp_path, "renamed"), engine, tmp_path)
    assert_same_verdict(plain, renamed, back)
    dp = next(f for f in renamed.findings if f.control_id == "dp")
    assert {tuple(g.key or ()) for g in dp.groups} == {(t,) for t in TOKENS}
    # NFC and NFD forms stay apart and look different in every output
    shown = {g.group for g in dp.groups}
    assert len(shown) == len(TOKENS) and '"e\\u0301"' in shown and "\u00e9" in shown
    alike = [w for w in renamed.warnings if "Unicode normalization" in w]
    assert alike and "'region'" in alike[0]


# ---------------------------------------------------------------------------
# float group columns: NaN is missing, -0.0 is the group "0", on every engine


FLOATS = [0.0, -0.0, 1.5, float("nan"), 2.0, None]


def float_rows() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 240
    site = [FLOATS[i % len(FLOATS)] for i in range(n)]
    return pd.DataFrame(
        {
            "y_true": rng.integers(0, 2, n),
            "y_pred": rng.integers(0, 2, n),
            "region": pd.array(site, dtype="float64"),
        }
    )


def expected_float_groups() -> dict[str, int]:
    counts: dict[str, int] = {}
    for i in range(240):
        v = FLOATS[i % len(FLOATS)]
        if v is None or v != v:
            continue
        name = {0.0: "0", 1.5: "1.5", 2.0: "2"}[v + 0.0]
        counts[name] = counts.get(name, 0) + 1
    return counts


@pytest.mark.parametrize("engine", ["embedded", *ENGINES], indirect=True)
@pytest.mark.parametrize("fmt", ["parquet", "dataframe"])
def test_float_group_column_nan_is_missing_and_negative_zero_is_zero(
    engine: str, fmt: str, tmp_path: Path
) -> None:
    if engine == "duckdb" and fmt == "dataframe":
        pytest.skip("a pandas DataFrame is evaluated by the embedded engine")
    df = float_rows()
    pol = write_policy(tmp_path, control(dimension="region", threshold="0.9", min_samples="1"))
    data: Any = df
    if fmt == "parquet":
        data = tmp_path / "d.parquet"
        df.to_parquet(data)
    elif engine == "spark":
        data = spark_frame(df, tmp_path)
    f = check(pol, data, engine=engine, deterministic=True).findings[0]
    assert {g.group: g.n for g in f.groups} == expected_float_groups()
    assert [(e.group, e.n, e.missing) for e in f.excluded_groups] == [(MISSING_GROUP, 80, True)]


# ---------------------------------------------------------------------------
# the missing bucket and a real group called "unknown" / "(missing)"


def test_a_real_group_named_unknown_or_missing_is_never_the_missing_bucket(
    tmp_path: Path,
) -> None:
    rows = make_rows(11, [40, 40, 40], 12)
    names = {"g0": "unknown", "g1": MISSING_GROUP}
    data = write(rename(rows, names), "csv", tmp_path, "d")
    out = tmp_path / "r.json"
    pol = policy(tmp_path)
    code = main(["check", str(pol), str(data), "-o", f"json={out}", "-o", "text"])
    doc = json.loads(out.read_text(encoding="utf-8"))
    f = doc["findings"][0]
    assert code == {"pass": 0, "fail": 1}[doc["summary"]["gate"]]
    groups = {g["group"]: g for g in f["groups"]}
    assert groups["unknown"]["key"] == ["unknown"] and not groups["unknown"]["missing"]
    assert groups['"(missing)"']["key"] == ["(missing)"]
    assert [e for e in f["excluded_groups"] if e["missing"]] == [
        {
            "group": "(missing)",
            "key": None,
            "missing": True,
            "n": 12,
            "reason": "dimension value missing in 'region' (an empty cell or a null)",
        }
    ]


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "junit", "sarif", "github", "oscal"])
def test_every_format_shows_the_missing_bucket_apart_from_a_real_group(
    fmt: str, tmp_path: Path
) -> None:
    rows = make_rows(5, [40, 40, 3], 7)
    data = write(rename(rows, {"g2": MISSING_GROUP}), "csv", tmp_path, "d")
    # a failing control: every format details it
    pol = write_policy(tmp_path, control(dimension="region", threshold="0.0001"))
    out = tmp_path / f"r.{fmt}"
    main(["check", str(pol), str(data), "-o", f"{fmt}={out}"])
    text = out.read_text(encoding="utf-8")
    # the real group "(missing)" (3 rows, under min_samples) is quoted; the bucket is not
    assert "(missing)" in text
    for quoted in ('"(missing)"', "&quot;(missing)&quot;", '\\"(missing)\\"'):
        if quoted in text:
            break
    else:
        raise AssertionError(f"the real group '(missing)' is not quoted in {fmt}:\n{text}")


# ---------------------------------------------------------------------------
# the missing_values prop; the > 5 % warning


@pytest.mark.parametrize("engine", ["embedded", *ENGINES], indirect=True)
def test_missing_values_prop_makes_tokens_missing_on_every_engine(
    engine: str, tmp_path: Path
) -> None:
    rows = make_rows(13, [50, 50, 50], 5)
    data = write(rename(rows, {"g2": "NA"}), "csv", tmp_path, "d")
    pol = policy(tmp_path, missing_values="NA, n/a")
    res = check(pol, data, engine=engine, deterministic=True)
    f = res.findings[0]
    assert {tuple(g.key or ()) for g in f.groups} == {("g0",), ("g1",)}
    missing = [e for e in f.excluded_groups if e.missing]
    assert [(e.n, e.group) for e in missing] == [(55, MISSING_GROUP)]
    assert "missing_values 'NA', 'n/a'" in missing[0].reason
    warned = [w for w in res.warnings if "no value in 'region'" in w]
    assert warned and "55 of 155 rows" in warned[0] and "(missing)" in warned[0]
    # without the prop, "NA" is a group and 5 of 155 rows (3.2 %) warn of nothing
    plain = check(policy(tmp_path), data, engine=engine, deterministic=True)
    assert ("NA",) in {tuple(g.key or ()) for g in plain.findings[0].groups}
    assert not [w for w in plain.warnings if "no value in" in w]


def test_missing_values_is_a_policy_wide_setting(tmp_path: Path) -> None:
    from fairpolicy.policy.schema import NS
    from tests.policy.test_policy_wide import plan

    rows = make_rows(17, [50, 50, 50], 0)
    data = write(rename(rows, {"g2": "N/A"}), "csv", tmp_path, "d")
    props = [{"name": "missing_values", "value": "N/A", "ns": NS}]
    f = check(plan(tmp_path, props, control(dimension="region", threshold="0.9")), data).findings[0]
    assert ("N/A",) not in {tuple(g.key or ()) for g in f.groups}
    assert [e.n for e in f.excluded_groups if e.missing] == [50]


# ---------------------------------------------------------------------------
# look-alike groups; intersections whose values hold " & "


def test_groups_differing_by_spaces_or_normalization_warn(tmp_path: Path) -> None:
    text = "y_true,y_pred,region\n" + "".join(
        f"{i % 2},{i % 3 == 0},{g}\n"
        for i in range(240)
        for g in [("F", " F", "e\u0301", "\u00e9")[i % 4]]
    )
    data = tmp_path / "d.csv"
    data.write_text(text.replace("True", "1").replace("False", "0"), encoding="utf-8")
    pol = write_policy(tmp_path, control(dimension="region", threshold="0.9"))
    res = check(pol, data, deterministic=True)
    f = res.findings[0]
    assert sorted(g.n for g in f.groups) == [60, 60, 120]  # " F" is "F"; é forms apart
    spaces = [w for w in res.warnings if "surrounding spaces" in w]
    assert spaces and "' F', 'F'" in spaces[0] and "'region'" in spaces[0]
    assert [w for w in res.warnings if "Unicode normalization" in w]


def test_ampersand_values_keep_intersections_apart(tmp_path: Path) -> None:
    """("A & B", "C") and ("A", "B & C") used to render to one name, losing p-values."""
    lines = ["y_true,y_pred,a,b"]
    rng = np.random.default_rng(1)
    cells = [("A & B", "C"), ("A", "B & C"), ("A", "C"), ("A & B", "B & C")]
    for i in range(400):
        a, b = cells[i % 4]
        lines.append(f"{rng.integers(2)},{rng.integers(2)},{a},{b}")
    data = tmp_path / "d.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pol = write_policy(tmp_path, control(dimension="a,b", threshold="0.9", p_value="30"))
    f = check(pol, data, deterministic=True).findings[0]
    assert len(f.groups) == 4 and len({g.group for g in f.groups}) == 4
    assert {tuple(g.key or ()) for g in f.groups} == set(cells)
    assert f.p_value is not None and f.p_value.groups is not None
    assert len(f.p_value.groups) == 4
    assert len(f.counts) == 4


def parse_group_name(name: str, width: int) -> tuple[str, ...]:
    """The inverse of :func:`group_name` for keys of ``width`` values: a quoted value is a
    JSON string; an unquoted one runs to the next " & " (it holds no "&" in an
    intersection)."""
    if width == 1:
        return (json.loads(name) if name.startswith('"') else name,)
    out: list[str] = []
    rest = name
    decoder = json.JSONDecoder()
    while True:
        if rest.startswith('"'):
            value, end = decoder.raw_decode(rest)
            out.append(value)
            rest = rest[end:]
        else:
            value, sep, tail = rest.partition(" & ")
            out.append(value)
            rest = sep + tail
        if not rest:
            break
        assert rest.startswith(" & "), (name, rest)
        rest = rest[3:]
    assert len(out) == width, (name, out)
    return tuple(out)


@given(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=3))
def test_group_names_read_back_as_their_keys(key: list[str]) -> None:
    """Rendering is injective: the name parses back to the key, whatever the values hold
    (" & ", quotes, "(missing)", NFD forms)."""
    name = group_name(tuple(key))
    assert parse_group_name(name, len(key)) == tuple(key)
    assert name != MISSING_GROUP
    assert "(missing)" not in {name} or key != ["(missing)"]
