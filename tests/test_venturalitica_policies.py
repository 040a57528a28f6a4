"""Venturalitica's quickstart credit policy runs unchanged (issue 16, part).

The policy (``tests/fixtures/venturalitica/``, vendored with its NOTICE) binds only a
target (its controls are data checks: ``class_imbalance`` of the labels, and
``disparate_impact`` of the labels' positive rates across ``gender`` and ``age``), on data
in its shape (the German-credit columns it names). The values equal Venturalitica's
definitions — ``calc_class_imbalance`` is the smallest over the largest class count,
``calc_disparate_impact`` is fairlearn's ``demographic_parity_ratio`` of the outcome (the
prediction when bound, else the target) — on every engine and input type.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from fairlearn.metrics import demographic_parity_ratio

import fairpolicy

POLICY = Path(__file__).parent / "fixtures" / "venturalitica" / "quickstart-loan-policy.yaml"


def german(seed: int, n: int = 1000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gender = rng.choice(["male", "female"], n, p=[0.6, 0.4])
    age = rng.choice(["young", "middle", "senior"], n)
    target = (rng.random(n) < np.where(gender == "male", 0.72, 0.64)).astype(int)
    return pd.DataFrame({"target": target, "gender": gender, "age": age})


def expected(df: pd.DataFrame) -> dict[str, float]:
    counts = df["target"].value_counts()
    return {
        "credit-data-imbalance": counts.min() / counts.max(),
        "credit-data-bias": demographic_parity_ratio(
            df["target"], df["target"], sensitive_features=df["gender"]
        ),
        "credit-age-disparate": demographic_parity_ratio(
            df["target"], df["target"], sensitive_features=df["age"]
        ),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("engine", ["embedded", "duckdb"])
def test_quickstart_policy_runs_unchanged_with_its_values(
    seed: int, engine: str, tmp_path: Path
) -> None:
    df = german(seed)
    csv = tmp_path / "german.csv"
    df.to_csv(csv, index=False)
    results = fairpolicy.check(str(POLICY), str(csv), engine=engine)
    got = {f.control_id: f.value for f in results.findings}
    for cid, value in expected(df).items():
        assert got[cid] == pytest.approx(value, abs=1e-12), cid
    assert results.exit_code in (0, 1)
    # the target-only reading is said, not silent
    assert any("data audit of the labels" in w for w in results.warnings)


def test_a_dataframe_and_a_parquet_file_agree(tmp_path: Path) -> None:
    df = german(5)
    pq = tmp_path / "g.parquet"
    df.to_parquet(pq)
    a = fairpolicy.check(str(POLICY), df)
    b = fairpolicy.check(str(POLICY), str(pq))
    assert [f.value for f in a.findings] == [f.value for f in b.findings]


TEMPLATES = sorted(POLICY.parent.glob("huderia-cobra-*.oscal.yaml"))


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_a_template_as_shipped_names_every_control_to_configure(path: Path) -> None:
    """Venturalitica's HUDERIA templates ship with empty thresholds: exit 2 saying
    "template not configured", naming every such control in one run (never a pass)."""
    import yaml

    from fairpolicy.errors import PolicyError
    from fairpolicy.policy.load import load_policy

    doc = yaml.safe_load(path.read_text())
    empty = set()
    for impl in doc["assessment-plan"]["control-implementations"]:
        for ir in impl["implemented-requirements"]:
            props = {p["name"]: p.get("value") for p in ir["props"]}
            if "threshold" in props and props["threshold"] in (None, ""):
                empty.add(ir["control-id"])
    assert empty
    with pytest.raises(PolicyError) as err:
        load_policy(str(path))
    named = {
        p.control for p in err.value.problems if p.message.startswith("template not configured")
    }
    assert named == empty


# ---------------------------------------------------------------------------
# the HUDERIA templates' data-quality keys, against Venturalitica's definitions
#
# Each oracle is the published formula re-implemented here by hand (Venturalitica is never
# imported): ``calc_data_completeness`` is the mean over every column of
# ``df[c].notna().sum() / len(df)``; ``calc_provenance_completeness`` is
# ``round(df[fields].notna().all(axis=1).mean(), 4)`` (fairpolicy does not round);
# ``calc_data_minimization_score`` is ``1 - len(sensitive) / len(df.columns)`` clamped
# to [0, 1].

HAVE_SPARK = importlib.util.find_spec("pyspark") is not None and shutil.which("java") is not None
needs_spark = pytest.mark.skipif(not HAVE_SPARK, reason="pyspark or java missing")


def venturalitica_completeness(df: pd.DataFrame, columns: list[str] | None = None) -> float:
    cols = list(df.columns) if columns is None else columns
    return float(sum(df[c].notna().sum() / len(df) for c in cols) / len(cols))


def venturalitica_provenance(df: pd.DataFrame, fields: list[str]) -> float:
    return float(df[fields].notna().all(axis=1).mean())  # Venturalitica rounds this to 4


def venturalitica_minimization(df: pd.DataFrame, sensitive: list[str]) -> float:
    return float(max(0.0, min(1.0, 1.0 - len(sensitive) / len(df.columns))))


def quality_frame(seed: int, n: int = 500) -> pd.DataFrame:
    """Columns of every kind, each with its own share of missing values (None, NaN, NA)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(18, 90, n).astype(float),
            "zip": rng.choice(["z08001", "z28001", "z41001"], n).astype(object),
            "income": rng.normal(30_000, 9_000, n),
            "note": rng.choice(["ok", "late", "n/d"], n).astype(object),
            "page_number": rng.integers(1, 40, n).astype(float),
            "chunk_number": pd.array(rng.integers(0, 9, n), dtype="Int64"),
            "target": rng.integers(0, 2, n),
        }
    )
    for col in ("age", "zip", "income", "note", "page_number", "chunk_number"):
        share = rng.uniform(0.02, 0.35)
        hit = rng.random(n) < share
        df.loc[hit, col] = pd.NA if col == "chunk_number" else None
    return df


QUALITY_CONTROLS = [
    ("completeness-all", "data_completeness", {}),
    ("completeness-named", "data_completeness", {"input.columns": "age,note,chunk_number"}),
    ("provenance", "provenance_completeness", {"input.fields": "page_number,chunk_number"}),
    ("minimization", "data_minimization", {"input.sensitive_columns": "age,zip,income"}),
]


def quality_policy() -> list[dict[str, Any]]:
    out = []
    for cid, key, inputs in QUALITY_CONTROLS:
        props = {"metric_key": key, "threshold": "0.5", "operator": ">=", **inputs}
        out.append(
            {"control-id": cid, "props": [{"name": k, "value": v} for k, v in props.items()]}
        )
    return out


def quality_expected(df: pd.DataFrame) -> dict[str, float]:
    return {
        "completeness-all": venturalitica_completeness(df),
        "completeness-named": venturalitica_completeness(df, ["age", "note", "chunk_number"]),
        "provenance": venturalitica_provenance(df, ["page_number", "chunk_number"]),
        "minimization": venturalitica_minimization(df, ["age", "zip", "income"]),
    }


def _input(df: pd.DataFrame, where: str, tmp: Path) -> tuple[Any, str]:
    """The same rows as ``where`` reads them: (data, engine)."""
    if where in ("csv", "csv-duckdb", "csv-spark"):
        path = tmp / "q.csv"
        df.to_csv(path, index=False)
        return str(path), {"csv": "embedded", "csv-duckdb": "duckdb", "csv-spark": "spark"}[where]
    if where in ("parquet", "parquet-duckdb"):
        path = tmp / "q.parquet"
        df.to_parquet(path)
        return str(path), "embedded" if where == "parquet" else "duckdb"
    if where == "pandas":
        return df, "auto"
    if where == "polars":
        import polars as pl

        return pl.from_pandas(df), "auto"
    if where == "pyarrow":
        import pyarrow as pa

        return pa.Table.from_pandas(df, preserve_index=False), "auto"
    if where == "duckdb-relation":
        import duckdb
        import pyarrow as pa

        rows = pa.Table.from_pandas(df, preserve_index=False)  # noqa: F841 (DuckDB scans it)
        return duckdb.sql("SELECT * FROM rows"), "auto"
    assert where == "spark-frame"
    from fairpolicy.data.sources.spark import spark_session

    path = tmp / "spark.parquet"
    df.to_parquet(path)
    return spark_session().read.parquet(str(path)), "spark"


WHERE = [
    "csv",
    "parquet",
    "pandas",
    "polars",
    "pyarrow",
    "duckdb-relation",
    "csv-duckdb",
    "parquet-duckdb",
    pytest.param("csv-spark", marks=needs_spark),
    pytest.param("spark-frame", marks=needs_spark),
]


@pytest.mark.parametrize("seed", [11, 12])
@pytest.mark.parametrize("where", WHERE)
def test_quality_keys_equal_venturalitica_definitions_everywhere(
    seed: int, where: str, tmp_path: Path
) -> None:
    df = quality_frame(seed)
    data, engine = _input(df, where, tmp_path)
    results = fairpolicy.check(quality_policy(), data, engine=engine)
    got = {f.control_id: f for f in results.findings}
    for cid, value in quality_expected(df).items():
        f = got[cid]
        assert f.status in ("pass", "fail"), (cid, f.reason)
        assert f.value == pytest.approx(value, abs=1e-12), (cid, where)
    # Venturalitica rounds provenance to 4 places; fairpolicy reports it unrounded
    assert round(got["provenance"].value or 0, 4) == round(quality_expected(df)["provenance"], 4)
    # the unbound completeness says which columns it measured
    assert any(
        "measured over all 7 columns: age, zip, income, note, page_number, chunk_number, target"
        in w
        for w in results.warnings
    ), results.warnings


@pytest.mark.parametrize("where", ["pandas", "csv", "csv-duckdb"])
def test_missing_values_tokens_count_as_missing(where: str, tmp_path: Path) -> None:
    """``missing_values`` names extra tokens (as for group columns): ``?`` is then missing."""
    df = pd.DataFrame({"a": ["x", "?", "y", " ? ", None, "z"], "b": [1, 2, 3, 4, 5, 6]})
    data, engine = _input(df, where, tmp_path)
    policy = quality_policy()[:1]
    policy[0]["props"].append({"name": "missing_values", "value": "?"})
    f = fairpolicy.check(policy, data, engine=engine).findings[0]
    assert f.value == pytest.approx(((6 - 3) / 6 + 1) / 2)  # '?' twice and a null
    plain = fairpolicy.check(quality_policy()[:1], data, engine=engine).findings[0]
    assert plain.value == pytest.approx(((6 - 1) / 6 + 1) / 2)


# ---------------------------------------------------------------------------
# the two HUDERIA templates, configured, on data in their shape

CAUSAL = {"counterfactual_fairness", "causal_fairness_diagnostic"}

#: a threshold per key (the templates' own examples in their comments)
THRESHOLDS = {
    "data_completeness": 0.8,
    "class_imbalance": 0.7,
    "k_anonymity": 2,
    "provenance_completeness": 0.7,
    "causal_fairness_diagnostic": 0.7,
    "disparate_impact": 0.8,
    "counterfactual_fairness": 0.75,
    "demographic_parity_diff": 0.1,
    "equal_opportunity_diff": 0.1,
    "equalized_odds_ratio": 0.8,
    "predictive_parity": 0.85,
    "f1_score": 0.6,
    "accuracy_score": 0.6,
    "l_diversity": 3,
    "t_closeness": 0.1,
    "data_minimization": 0.5,
}

#: the columns each template leaves to the command line
BIND = {
    "huderia-cobra-design.oscal.yaml": {
        "target": "target",
        "prediction": "prediction",
        "fields": "page_number,chunk_number",
    },
    "huderia-cobra-prerelease.oscal.yaml": {"prediction": "prediction"},
}


def huderia_frame(seed: int, n: int = 2000) -> pd.DataFrame:
    """Every column the templates name, in their shape (binary race and gender, a
    categorical income, provenance fields with a few gaps)."""
    rng = np.random.default_rng(seed)
    gender = rng.choice(["female", "male"], n)
    race = rng.choice(["a", "b"], n, p=[0.7, 0.3])
    target = (rng.random(n) < 0.55).astype(int)
    flip = rng.random(n) < np.where(gender == "male", 0.15, 0.25)
    df = pd.DataFrame(
        {
            "age": rng.choice(["18-30", "31-50", "51+"], n),
            "zip": rng.choice(["080", "280", "410"], n),
            "gender": gender,
            "race": race,
            "income": rng.choice(["low", "mid", "high"], n),
            "health": rng.choice(["good", "fair", "poor"], n),
            "protected_group": rng.choice(["p", "q"], n),
            "target": target,
            "prediction": np.where(flip, 1 - target, target),
            "page_number": rng.integers(1, 60, n).astype(float),
            "chunk_number": rng.integers(0, 12, n).astype(float),
        }
    )
    df.loc[rng.random(n) < 0.04, "page_number"] = None
    df.loc[rng.random(n) < 0.02, "chunk_number"] = None
    return df


def configured(path: Path, tmp: Path, *, causal: str = "keep") -> Path:
    """A copy of the template with every threshold filled in; the causal controls kept
    (``keep``), removed (``remove``) or replaced as the refusal says (``fix``:
    ``demographic_parity_diff`` with ``<``)."""
    import yaml

    doc = yaml.safe_load(path.read_text())
    for impl in doc["assessment-plan"]["control-implementations"]:
        kept = []
        for ir in impl["implemented-requirements"]:
            props = {p["name"]: p for p in ir["props"]}
            key = props["metric_key"]["value"]
            props["threshold"]["value"] = THRESHOLDS[key]
            if key in CAUSAL and causal == "remove":
                continue
            if key in CAUSAL and causal == "fix":
                props["metric_key"]["value"] = "demographic_parity_diff"
                props["operator"]["value"] = "<"
                props["threshold"]["value"] = 0.1
            kept.append(ir)
        impl["implemented-requirements"] = kept
    out = tmp / path.name
    out.write_text(yaml.safe_dump(doc, sort_keys=False))
    return out


def _controls(path: Path) -> dict[str, str]:
    import yaml

    doc = yaml.safe_load(path.read_text())
    return {
        ir["control-id"]: next(p["value"] for p in ir["props"] if p["name"] == "metric_key")
        for impl in doc["assessment-plan"]["control-implementations"]
        for ir in impl["implemented-requirements"]
    }


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_a_configured_template_refuses_only_its_causal_controls(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As shipped (thresholds filled), the causal controls are exit 2, one paragraph each
    naming the file and the control, with what Venturalitica computes and the fix. They are
    refused where unknown keys are (loading the policy), so no other control is evaluated
    in that run: the run stops before any data is read, as for any unknown key."""
    from fairpolicy.cli import main
    from fairpolicy.errors import PolicyError

    policy = configured(path, tmp_path)
    causal = {cid for cid, key in _controls(path).items() if key in CAUSAL}
    assert causal
    data = tmp_path / "data.csv"
    huderia_frame(0).to_csv(data, index=False)
    with pytest.raises(PolicyError) as err:
        fairpolicy.check(str(policy), str(data), bind=BIND[path.name])
    assert {p.control for p in err.value.problems} == causal
    for p in err.value.problems:
        assert p.file == str(policy) and p.key == "metric_key"
        assert "is not computed" in p.message and "Venturalitica's" in p.message
        assert "demographic_parity_diff" in (p.hint or "")
        assert "remove the control" in (p.hint or "")
        if "'counterfactual_fairness'" in p.message:
            assert "a demographic parity difference" in p.message and "Kusner" in p.message
        else:
            assert "a report" in p.message and "not one number" in p.message
    binds = [a for role, col in BIND[path.name].items() for a in ("--bind", f"{role}={col}")]
    for command in (["check", str(policy), str(data), *binds], ["validate", str(policy)]):
        capsys.readouterr()
        assert main(command) == 2
        said = capsys.readouterr()
        err_text = said.err + said.out  # validate reports on standard output
        assert "Traceback" not in err_text
        for cid in causal:
            line = next(x for x in err_text.splitlines() if f"control '{cid}'" in x)
            assert str(policy) in line and "Fix:" in line  # one paragraph: where, what, fix


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("engine", ["embedded", "duckdb"])
@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_a_configured_template_without_its_causal_controls_evaluates_every_control(
    path: Path, engine: str, seed: int, tmp_path: Path
) -> None:
    """The refusal's fix (remove the causal controls): every other control of the template
    gets a value, exit 0 or 1, with --bind supplying the columns it leaves open; the
    data-quality and privacy values equal Venturalitica's definitions."""
    df = huderia_frame(seed)
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    policy = configured(path, tmp_path, causal="remove")
    results = fairpolicy.check(str(policy), str(data), bind=BIND[path.name], engine=engine)
    assert results.exit_code in (0, 1)
    got = {f.control_id: f for f in results.findings}
    expected = {cid for cid, key in _controls(path).items() if key not in CAUSAL}
    assert set(got) == expected
    for f in got.values():
        assert f.status in ("pass", "fail"), (f.control_id, f.reason)
        assert f.value is not None, f.control_id
    keys = {f.control_id: f.metric_key for f in got.values()}
    for cid, key in keys.items():
        value = got[cid].value
        if key == "data_completeness":
            assert value == pytest.approx(venturalitica_completeness(df), abs=1e-12)
        elif key == "provenance_completeness":
            want = venturalitica_provenance(df, ["page_number", "chunk_number"])
            assert value == pytest.approx(want, abs=1e-12)
        elif key == "data_minimization":
            want = venturalitica_minimization(df, ["age", "gender", "race", "health"])
            assert value == pytest.approx(want, abs=1e-12)
        elif key == "k_anonymity":
            assert value == df.groupby(["age", "zip"]).size().min()
        elif key == "l_diversity":
            assert value == df.groupby(["age", "zip"])["income"].nunique().min()
        elif key == "demographic_parity_ratio":  # the templates' disparate_impact
            want = demographic_parity_ratio(
                df["prediction"], df["prediction"], sensitive_features=df["gender"]
            )
            assert value == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_the_fix_for_counterfactual_fairness_gives_venturalitica_number(
    path: Path, tmp_path: Path
) -> None:
    """demographic_parity_diff on the causal controls' protected attribute (binary race) is
    the number Venturalitica's calc_counterfactual_fairness returns: |mean outcome of
    group a − mean outcome of group b| (here of the predictions)."""
    df = huderia_frame(3)
    policy = configured(path, tmp_path, causal="fix")
    results = fairpolicy.check(str(policy), df, bind=BIND[path.name])
    causal = [cid for cid, key in _controls(path).items() if key == "counterfactual_fairness"]
    rates = df.groupby("race")["prediction"].mean()
    for cid in causal:
        f = next(f for f in results.findings if f.control_id == cid)
        assert f.status in ("pass", "fail"), f.reason
        assert f.value == pytest.approx(abs(rates["a"] - rates["b"]), abs=1e-12)


@pytest.mark.parametrize("key", sorted(CAUSAL))
def test_metrics_show_explains_a_refused_key(key: str, capsys: pytest.CaptureFixture[str]) -> None:
    from fairpolicy.cli import main

    assert main(["metrics", "show", key]) == 2
    err = capsys.readouterr().err
    assert f"'{key}' is not computed" in err and "Fix:" in err and "Traceback" not in err


@pytest.mark.parametrize("path", TEMPLATES, ids=[p.name for p in TEMPLATES])
def test_validate_takes_the_same_bind_as_check(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate --bind``: the roles a template leaves open are not reported missing when
    they are bound as check would bind them; without it they are."""
    from fairpolicy.cli import main

    policy = configured(path, tmp_path, causal="remove")
    binds = [a for role, col in BIND[path.name].items() for a in ("--bind", f"{role}={col}")]
    capsys.readouterr()
    assert main(["validate", str(policy), *binds]) == 0, capsys.readouterr()
    capsys.readouterr()
    assert main(["validate", str(policy)]) == 2
    said = capsys.readouterr().out
    assert "binds no column" in said or "needs one of input." in said, said
