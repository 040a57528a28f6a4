"""Label vocabularies and the score column ↔ class pairing, end to end.

The oracle: the same predictions written once with integer labels 0..K-1 (score column k
↔ class k, the documented rule) and once with text labels whose sorted order is not the
model's column order, the pairing declared (``input.score: name=col, …`` or a
``classes`` prop). Every score metric must give the same value on both, on every input
type (CSV, Parquet, pandas DataFrame) and engine (embedded, DuckDB, Spark); without the
declaration the text-label run must stop (exit 2), never guess.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fairpolicy.cli import main
from fairpolicy.data.bind.label_types import LabelType
from fairpolicy.data.bind.roles import PREDICTION_ONLY
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.runner import check
from fairpolicy.stats import build_group_stats
from tests.data.test_engines import (
    needs_duckdb,
    needs_spark,
    parametrize_engines,
)
from tests.data.test_engines import spark_session as spark_session  # the fixture
from tests.helpers import control, write_policy

#: the model writes its columns in this order; sorted, the names are in another
MODEL_ORDER = ("nevus", "melanoma", "bcc", "akiec", "vasc")

#: score metrics and the K they take (binary-only metrics: K = 2)
SCORE_METRICS = {
    k: s for k, s in REGISTRY.items() if s.needs_scores and k not in ("scoring_impact_ratio",)
}


def frame(
    k: int, n: int = 600, seed: int = 0, names: tuple[str, ...] | None = None
) -> pd.DataFrame:
    """Predictions of a K-class model whose quality differs by group; columns p_0..p_{K-1}
    in the model's class order; labels are the integers, or ``names[label]``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    sex = rng.choice(["F", "M"], n)
    site = rng.choice(["s1", "s2"], n)
    logits = rng.normal(0, 1, (n, k))
    logits[np.arange(n), y] += np.where(sex == "F", 2.0, 0.7) * (1 + np.arange(k)[y] % 2)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    p = np.round(p, 6)
    pred = p.argmax(axis=1)
    label = (lambda v: v) if names is None else (lambda v: np.array(names, dtype=object)[v])
    df = pd.DataFrame({"y_true": label(y), "y_pred": label(pred), "sex": sex, "site": site})
    if k == 2:  # one column of P(class 1) too
        df["q"] = p[:, 1]
    for j in range(k):
        df[f"p_{j}"] = p[:, j]
    return df


def score_control(key: str, score: str, **props: Any) -> dict[str, Any]:
    extra = {"input.site": "site"} if REGISTRY[key].secondary_role == "site" else {}
    lo, hi = REGISTRY[key].value_range  # a threshold inside the range (never vacuous)
    return control("c", key, repr((lo + hi) / 2), "<", input__score=score, **extra, **props)


def values(policy: Path, data: Any, **kw: Any) -> tuple[list[float | None], list[str]]:
    res = check(str(policy), data, **kw)
    return [f.value for f in res.findings], [f.status for f in res.findings]


def pairing(names: tuple[str, ...], columns: list[str]) -> str:
    return ", ".join(f"{n}={c}" for n, c in zip(names, columns, strict=True))


def write(df: pd.DataFrame, tmp: Path, fmt: str) -> Any:
    if fmt == "dataframe":
        return df
    path = tmp / f"data.{fmt}"
    if fmt == "csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, index=False)
    return str(path)


# ---------------------------------------------------------------------------
# the oracle: declared pairing == integer labels, every score metric and input type


@pytest.mark.parametrize("fmt", ["csv", "parquet", "dataframe"])
@pytest.mark.parametrize("key", sorted(SCORE_METRICS))
def test_declared_pairing_equals_integer_labels(key: str, fmt: str, tmp_path: Path) -> None:
    binary = "multiclass" not in REGISTRY[key].tasks
    k = 2 if binary else 5
    names = MODEL_ORDER[:k] if not binary else ("no", "abnormal")  # sorted: abnormal < no
    cols = [f"p_{j}" for j in range(k)]
    positive = {"positive_label": names[1]} if binary else {}
    base = write_policy(tmp_path, score_control(key, "p"), name="int.yaml")
    paired = write_policy(
        tmp_path,
        score_control(key, pairing(names, cols), **positive),
        score_control(key, "p", classes=",".join(names), **positive) | {"control-id": "c2"},
        name="text.yaml",
    )
    (tmp_path / "text").mkdir()
    want, status = values(base, write(frame(k), tmp_path, fmt))
    got, got_status = values(paired, write(frame(k, names=names), tmp_path / "text", fmt))
    assert want[0] is not None, status
    assert got == [want[0], want[0]] and got_status == [status[0], status[0]]


@pytest.mark.parametrize(
    "key", ["auc_gap", "brier_gap", "balance_positive_class", "calibration_gap"]
)
def test_single_score_column_named_by_its_class(key: str, tmp_path: Path) -> None:
    """One column of P(abnormal): `input.score: abnormal=q` is positive_label: abnormal."""
    names = ("no", "abnormal")
    want, _ = values(write_policy(tmp_path, score_control(key, "q"), name="a.yaml"), frame(2))
    by_pair = write_policy(tmp_path, score_control(key, "abnormal=q"), name="b.yaml")
    by_label = write_policy(
        tmp_path, score_control(key, "q", positive_label="abnormal"), name="c.yaml"
    )
    text = frame(2, names=names)
    assert values(by_pair, text)[0] == want == values(by_label, text)[0]
    wrong = write_policy(
        tmp_path, score_control(key, "abnormal=q", positive_label="no"), name="d.yaml"
    )
    res = check(str(wrong), text)
    assert res.findings[0].status == "error" and "P(abnormal)" in (res.findings[0].message or "")


@pytest.mark.parametrize("spec", ["1=p_1, 0=p_0, 2=p_2", "p_2,p_0,p_1|classes=2,0,1"])
def test_integer_labels_may_declare_the_pairing(spec: str, tmp_path: Path) -> None:
    """Integer labels: the declared pairing wins over position, whatever the listing order."""
    score, _, classes = spec.partition("|classes=")
    extra = {"classes": classes} if classes else {}
    base = write_policy(tmp_path, score_control("multi_class_auc_gap", "p"), name="a.yaml")
    declared = write_policy(
        tmp_path, score_control("multi_class_auc_gap", score, **extra), name="b.yaml"
    )
    df = frame(3)
    want, got = values(base, df)[0], values(declared, df)[0]
    assert want[0] is not None and got[0] is not None and abs(want[0] - got[0]) <= 1e-12


def test_the_issue_example_no_longer_passes(tmp_path: Path) -> None:
    """Issue 12, class 3: text labels + p_0..p_4 in the model's order. The sorted-label
    pairing reported a small gap (a wrong PASS); now the control stops until the pairing
    is declared, and the declared pairing gives the integer-label value."""
    names = MODEL_ORDER
    df = frame(5, names=names)
    plain = write_policy(tmp_path, score_control("multi_class_auc_gap", "p"), name="p.yaml")
    res = check(str(plain), df)
    f = res.findings[0]
    assert f.status == "error" and res.exit_code == 2
    assert "input.score: akiec=p_0, bcc=p_1, melanoma=p_2, nevus=p_3, vasc=p_4" in (f.message or "")
    columns = [f"p_{j}" for j in range(5)]
    declared = write_policy(
        tmp_path, score_control("multi_class_auc_gap", pairing(names, columns)), name="d.yaml"
    )
    # what the old rule computed: the columns paired with the labels in sorted order
    old = write_policy(
        tmp_path,
        score_control("multi_class_auc_gap", pairing(tuple(sorted(names)), columns)),
        name="o.yaml",
    )
    ints = write_policy(tmp_path, score_control("multi_class_auc_gap", "p"), name="i.yaml")
    truth = values(ints, frame(5))[0]
    assert values(declared, df)[0] == truth
    assert values(old, df)[0] != truth  # the bug class is real on this data


def test_non_score_metrics_keep_working_with_positional_score_binding(tmp_path: Path) -> None:
    """A policy that binds input.score on every control (the SaMD pack does) keeps its
    count metrics on text labels: only metrics that read the scores need the pairing."""
    df = frame(3, names=MODEL_ORDER[:3])
    pol = write_policy(
        tmp_path,
        score_control("weighted_f1_gap", "p"),
        score_control("multi_class_auc_gap", "p") | {"control-id": "c2"},
    )
    res = check(str(pol), df)
    assert [f.status for f in res.findings][1] == "error"
    assert res.findings[0].value is not None and res.findings[0].status in ("pass", "fail")


# ---------------------------------------------------------------------------
# property: renaming the labels (pairing declared accordingly) never changes a score metric


@st.composite
def relabelling(draw: st.DrawFn) -> tuple[int, tuple[str, ...], list[int], int]:
    k = draw(st.integers(2, 4))
    names = draw(
        st.lists(
            st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC_-. 0123456789", min_size=1, max_size=6)
            .map(str.strip)
            .filter(lambda s: s and s[0].isalpha()),
            min_size=k,
            max_size=k,
            unique=True,
        )
    )
    listing = draw(st.permutations(list(range(k))))  # the order the pairs are written in
    seed = draw(st.integers(0, 2**16))
    return k, tuple(names), listing, seed


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=relabelling(), use_prop=st.booleans())
def test_relabelling_never_changes_a_score_metric(
    case: tuple[int, tuple[str, ...], list[int], int], use_prop: bool, tmp_path: Path
) -> None:
    k, names, listing, seed = case
    keys = [key for key, s in SCORE_METRICS.items() if k == 2 or "multiclass" in s.tasks]
    positive = {"positive_label": names[1]}

    def props(key: str) -> dict[str, str]:  # two text classes: the positive one is named
        return positive if k == 2 else {}

    base = write_policy(
        tmp_path,
        *[score_control(key, "p") | {"control-id": key} for key in keys],
        name="base.yaml",
    )
    if use_prop:  # a classes prop, the columns bound as a list in the written order
        cols = ",".join(f"p_{j}" for j in listing)
        spec = {"classes": ",".join(names[j] for j in listing)}
        controls = [
            score_control(key, cols, **spec, **props(key)) | {"control-id": key} for key in keys
        ]
    else:
        pairs = ", ".join(f"{names[j]}=p_{j}" for j in listing)
        controls = [score_control(key, pairs, **props(key)) | {"control-id": key} for key in keys]
    renamed = write_policy(tmp_path, *controls, name="renamed.yaml")
    df = frame(k, n=240, seed=seed)
    want = check(str(base), df)
    got = check(str(renamed), frame(k, n=240, seed=seed, names=names))
    for a, b in zip(want.findings, got.findings, strict=True):
        # equal up to the order of a float sum over classes (macro means)
        assert a.status == b.status, (a.control_id, a.message, b.message)
        if a.value is None or b.value is None:
            assert a.value == b.value and a.reason == b.reason, a.control_id
        else:
            assert abs(a.value - b.value) <= 1e-12, (a.control_id, a.value, b.value)


# ---------------------------------------------------------------------------
# engines: the same decisions and values as the embedded engine


@parametrize_engines
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_engines_pair_and_refuse_like_embedded(engine: str, fmt: str, tmp_path: Path) -> None:
    names = MODEL_ORDER
    data = write(frame(5, names=names), tmp_path, fmt)
    pol = write_policy(
        tmp_path,
        score_control("multi_class_auc_gap", "p") | {"control-id": "plain"},
        score_control("multi_class_auc_gap", pairing(names, [f"p_{j}" for j in range(5)]))
        | {"control-id": "paired"},
        score_control("multi_class_auc_gap", "p", classes=",".join(names)) | {"control-id": "prop"},
        score_control("multi_class_auc_gap", "p_0,p_0,p_2,p_3,p_4") | {"control-id": "twice"},
    )
    exact = check(str(pol), data, engine="embedded")
    other = check(str(pol), data, engine=engine)
    statuses = [f.status for f in exact.findings]
    assert [f.status for f in other.findings] == statuses
    assert statuses[0] == statuses[3] == "error" and statuses[1] == statuses[2] != "error"
    for a, b in ((exact.findings[0], other.findings[0]), (exact.findings[3], other.findings[3])):
        assert a.message == b.message
    for a, b in zip(exact.findings[1:3], other.findings[1:3], strict=True):
        assert a.value is not None and b.value is not None
        assert abs(a.value - b.value) <= b.details["score_grid"]["max_error"] + 1e-12


@parametrize_engines
def test_engines_refuse_unlabelable_values(engine: str, tmp_path: Path) -> None:
    rows = ["y_true,y_pred,sex"] + [f"{i % 2},{(i // 2) % 2},{'FM'[i % 2]}" for i in range(80)]
    good = tmp_path / "good.csv"
    good.write_text("\n".join(rows) + "\n")
    rows[5] = "inf,1,F"
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(rows) + "\n")
    half = write_policy(tmp_path, control("c1", "equal_opportunity_diff", positive_label="0.5"))
    plain = write_policy(tmp_path, control("c1"), name="p2.yaml")
    for pol, path, words in (
        (half, good, "positive_label '0.5' is not a whole number"),
        (plain, bad, "holds the value inf (data row 5)"),
    ):
        ex, en = check(str(pol), str(path)), check(str(pol), str(path), engine=engine)
        assert ex.findings[0].status == en.findings[0].status == "error"
        # Spark names the data row only when fairpolicy runs on its executors
        assert (en.findings[0].message or "").replace(" (data row 5)", "") == (
            ex.findings[0].message or ""
        ).replace(" (data row 5)", "")
        assert words in (ex.findings[0].message or "")


@parametrize_engines
def test_engines_list_a_group_emptied_by_missing_drop(engine: str, tmp_path: Path) -> None:
    rows = ["y_true,y_pred,sex"]
    rows += [f"{i % 2},{int(i < 20)},F" for i in range(60)]
    rows += [f"{i % 2},{int(i < 40)},M" for i in range(60)]
    rows += [f",{i % 2},X" for i in range(40)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    pol = write_policy(tmp_path, control("c1", missing="drop"))
    for res in (check(str(pol), str(path)), check(str(pol), str(path), engine=engine)):
        f = res.findings[0]
        assert [(e.group, e.n) for e in f.excluded_groups] == [("X", 40)]
        assert any("removed every row of group(s) X (40 rows)" in w for w in res.warnings)


@parametrize_engines
def test_parquet_glob_with_disagreeing_types(engine: str, tmp_path: Path) -> None:
    import tests.bad_inputs.cases  # noqa: F401  (collects cases_labels first)
    from fairpolicy.errors import DataError
    from tests.bad_inputs.cases_labels import parquet_glob

    pattern = parquet_glob(tmp_path)
    pol = write_policy(tmp_path, control("c1"))
    with pytest.raises(DataError, match="disagree on column 'sex'"):
        check(str(pol), str(pattern), engine=engine)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    if name == "spark":
        request.getfixturevalue("spark_session")
    return name


@needs_spark
@pytest.mark.usefixtures("spark_session")
def test_spark_dataframe_text_labels(tmp_path: Path) -> None:
    """A Spark DataFrame (typed, evaluated where it lives) follows the same rule."""
    from fairpolicy.data.sources.spark import spark_session as active

    spark = active()
    names = MODEL_ORDER[:3]
    pdf = frame(3, names=names)
    with warnings.catch_warnings():  # pyspark's own warning about the pandas version
        warnings.simplefilter("ignore", FutureWarning)
        sdf = spark.createDataFrame(pdf)
    pol = write_policy(
        tmp_path,
        score_control("multi_class_auc_gap", "p") | {"control-id": "plain"},
        score_control("multi_class_auc_gap", pairing(names, ["p_0", "p_1", "p_2"]))
        | {"control-id": "paired"},
    )
    res, exact = check(str(pol), sdf), check(str(pol), pdf)
    assert [f.status for f in res.findings] == [f.status for f in exact.findings]
    assert res.findings[0].status == "error"
    assert exact.findings[1].value is not None and res.findings[1].value is not None
    assert abs(exact.findings[1].value - res.findings[1].value) <= 1e-3


# ---------------------------------------------------------------------------
# units


@pytest.mark.parametrize(
    ("text", "integer", "boolean", "want"),
    [
        ("1", True, False, 1),
        ("-3", True, False, -3),
        ("1.0", True, False, 1),
        ("0.5", True, False, None),
        ("inf", True, False, None),
        ("1e20", True, False, None),
        ("nan", True, False, None),
        ("yes", True, False, None),
        ("true", True, True, 1),
        ("False", True, True, 0),
        ("true", True, False, None),
        ("0.5", False, False, "0.5"),
    ],
)
def test_label_value(text: str, integer: bool, boolean: bool, want: Any) -> None:
    assert LabelType(integer, boolean).value(text) == want


def test_prediction_only_metrics_are_those_that_ignore_the_truth() -> None:
    """PREDICTION_ONLY (target may equal prediction) is exactly the set of classification
    metrics whose value does not change when the true labels are shuffled."""
    rng = np.random.default_rng(1)
    found: dict[str, bool] = {}
    for k in (2, 3):
        n = 4000
        g = rng.integers(0, 3, n).astype(np.int8)
        t = rng.integers(0, k, n).astype(np.int8)
        p = np.where(rng.random(n) < 0.6, t, rng.integers(0, k, n)).astype(np.int8)
        p = np.where((g == 1) & (rng.random(n) < 0.3), 0, p).astype(np.int8)
        classes = tuple(str(i) for i in range(k))
        dims = {"d": (g, ["a", "b", "c"])}
        pos = 1 if k == 2 else None
        a = build_group_stats(t, p, classes, dims, [("d",)], pos, None)[("d",)]
        b = build_group_stats(rng.permutation(t), p, classes, dims, [("d",)], pos, None)[("d",)]
        for key, spec in REGISTRY.items():
            if spec.kind != "classification" or spec.needs_scores or spec.secondary_role:
                continue
            reads = (*spec.inputs, *spec.one_of)
            if "prediction" not in reads or (k == 3 and "multiclass" not in spec.tasks):
                continue
            params = spec.resolve_params({})
            same = spec.fn(a, params).value == spec.fn(b, params).value
            found[key] = found.get(key, True) and same
    regression = {k for k, s in REGISTRY.items() if s.kind == "regression"}
    assert {k for k, v in found.items() if v} == PREDICTION_ONLY - regression
    assert PREDICTION_ONLY & regression == {"mean_prediction_parity"}


@needs_duckdb
def test_cli_bind_accepts_a_pairing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = MODEL_ORDER[:3]
    data = write(frame(3, names=names), tmp_path, "csv")
    pol = write_policy(tmp_path, score_control("multi_class_auc_gap", "p"))
    assert main(["check", str(pol), data]) == 2
    spec = "score=" + pairing(names, ["p_0", "p_1", "p_2"])
    code = main(["check", str(pol), data, "--bind", spec])
    assert code in (0, 1), capsys.readouterr()
    assert main(["check", str(pol), data, "--bind", spec, "--engine", "duckdb"]) == code


@pytest.mark.parametrize(
    "fmt", ["text", "json", "junit", "sarif", "github", "markdown", "html", "oscal"]
)
def test_a_group_emptied_by_missing_drop_is_in_every_report(fmt: str, tmp_path: Path) -> None:
    """Not silently absent: the emptied group and the drop are named in every format."""
    from fairpolicy.formatters import RenderOptions, get

    rows = ["y_true,y_pred,sex"]
    rows += [f"{i % 2},{int(i < 20)},F" for i in range(60)]
    rows += [f"{i % 2},{int(i < 40)},M" for i in range(60)]
    rows += [f",{i % 2},Xgroup" for i in range(40)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(rows) + "\n")
    res = check(str(write_policy(tmp_path, control("c1", missing="drop"))), str(path))
    out = get(fmt)(res, RenderOptions(deterministic=True))
    assert "Xgroup" in out
    assert "missing: drop" in out


@pytest.mark.parametrize("fmt", ["csv", "parquet", "dataframe"])
@pytest.mark.parametrize(("bad", "words"), [(np.inf, "inf"), (-np.inf, "-inf"), (1e20, "1e+20")])
def test_unlabelable_floats_on_every_input_type(
    fmt: str, bad: float, words: str, tmp_path: Path
) -> None:
    """A float label no integer stands for is exit 2 naming the column, value and row —
    never int64's −9223372036854775808."""
    y = [float(i % 2) for i in range(80)]
    y[6] = bad
    df = pd.DataFrame(
        {"y_true": y, "y_pred": [i // 2 % 2 for i in range(80)], "sex": ["F", "M"] * 40}
    )
    res = check(str(write_policy(tmp_path, control("c1"))), write(df, tmp_path, fmt))
    f = res.findings[0]
    assert f.status == "error" and res.exit_code == 2
    message = f.message or ""
    assert f"holds the value {words} (data row 7)" in message and "column 'y_true'" in message


def test_metrics_show_states_the_pairing_rule_for_every_score_metric() -> None:
    from fairpolicy.metrics.docs import SCORE_COLUMNS_RULE, show_metric

    for key, spec in REGISTRY.items():
        text = show_metric(key)
        assert (SCORE_COLUMNS_RULE in text) == spec.needs_scores, key
        if spec.needs_scores:
            assert "input.score: nevus=p_0, melanoma=p_1" in text


def test_disparity_ratio_rates_that_read_the_truth_refuse_one_column() -> None:
    """``disparity_ratio`` ignores the truth only for some ``rate`` values: those are
    exactly ONE_COLUMN_RATES (checked by changing the true labels), and with any other
    rate target = prediction (every ratio 1, a wrong PASS) is refused."""
    from fairpolicy.data.bind.roles import ONE_COLUMN_RATES, prediction_only
    from fairpolicy.policy.schema import Control, Operator, Threshold

    rng = np.random.default_rng(4)
    n = 4000
    g = rng.integers(0, 3, n).astype(np.int8)
    t = rng.integers(0, 2, n).astype(np.int8)
    p = np.where(rng.random(n) < 0.6, t, rng.integers(0, 2, n)).astype(np.int8)
    t2 = np.where(rng.random(n) < 0.8, 0, t).astype(np.int8)
    dims = {"d": (g, ["a", "b", "c"])}
    a = build_group_stats(t, p, ("0", "1"), dims, [("d",)], 1, None)[("d",)]
    b = build_group_stats(t2, p, ("0", "1"), dims, [("d",)], 1, None)[("d",)]
    spec = REGISTRY["disparity_ratio"]
    (rate,) = [q for q in spec.params if q.name == "rate"]
    assert rate.choices
    for r in rate.choices:
        params = spec.resolve_params({"rate": r})
        ignores_truth = spec.fn(a, params).value == spec.fn(b, params).value
        reads_one_column = r in ONE_COLUMN_RATES
        control = Control(
            control_id="c",
            metric_key="disparity_ratio",
            metric_key_as_written="disparity_ratio",
            threshold=Threshold(low=0.8, high=1.25),
            operator=Operator("between"),
            inputs={"target": "y", "prediction": "y", "dimension": "d"},
            params={"rate": r},
        )
        assert prediction_only(control) == reads_one_column
        if r != "prev":  # prev reads the truth alone: one column is that column's rate
            assert ignores_truth == reads_one_column, r
