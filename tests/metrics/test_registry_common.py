"""Common checks over the whole registry (scikit-learn's ``test_common.py`` style).

Every key in ``REGISTRY`` (and every allowed value of every parameter) is run
through the real pipeline on data of its kind: classification metrics on binary
data and, when they accept it, K = 3 data (with score columns for score metrics);
regression, ranking and data-check metrics on one frame that carries numeric,
rank and site columns too. Each must give a finite value inside its declared
range (or None with a reason), unchanged under row permutation, group
relabelling, duplicating every row (rate-based metrics), and — for the
multi-class metrics, which treat classes symmetrically — class relabelling.
Group sizes must account for every row.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from fairpolicy.metrics.base import MetricSpec
from fairpolicy.metrics.registry import ALIASES, COMMON_PARAMS, REGISTRY, canonical, lookup
from fairpolicy.policy.schema import ROLES, Control, Operator, Threshold
from fairpolicy.results import Finding
from fairpolicy.stats import UNKNOWN_GROUP

TOL = 1e-12
KEYS = sorted(REGISTRY)
BINARY_ONLY = [
    k
    for k in KEYS
    if REGISTRY[k].kind == "classification" and "multiclass" not in REGISTRY[k].tasks
]
GROUP_NAMES = {"A": "zz-last", "B": "mm-mid", "C": "aa-first", "tiny": "T"}


def _param_variants(spec: MetricSpec) -> list[dict[str, Any]]:
    """Defaults, plus each allowed value of each parameter."""
    out: list[dict[str, Any]] = [{}]
    for p in spec.params:
        out += [{p.name: choice} for choice in p.choices or () if choice != p.default]
    return out


def _kinds(spec: MetricSpec) -> list[str]:
    if spec.kind != "classification":
        return [spec.kind]
    return ["binary", "multiclass"] if "multiclass" in spec.tasks else ["binary"]


#: the column each role binds to in the common data
ROLE_COLUMNS = {
    "target": "y_true",
    "prediction": "y_pred",
    "dimension": "grp",
    "score": "y_score",  # binary: the y_score column; K = 3: the prefix of y_score_0..2
    "rank": "rank",
    "site": "site",
    # the data-quality metrics: a column with missing values, and names
    "columns": "grp",
    "fields": "grp",
    "sensitive_columns": "site",
}
REGRESSION_COLUMNS = {"target": "y_num", "prediction": "yhat_num"}

#: metrics whose value is a count or a position, so duplicating rows changes it
NOT_RATE_BASED_KINDS = {"ranking"}
NOT_RATE_BASED_KEYS = {"group_size", "k_anonymity"}


def common_control(key: str, params: dict[str, Any], control_id: str) -> Control:
    spec = REGISTRY[key]
    # the declared roles, and the dimension of pooled metrics (the invariances are about groups)
    roles = [*spec.inputs, *spec.one_of[:1], *(r for r in spec.optional if r == "dimension")]
    cols = dict(ROLE_COLUMNS, **(REGRESSION_COLUMNS if spec.kind == "regression" else {}))
    return Control(
        control_id=control_id,
        metric_key=key,
        metric_key_as_written=key,
        threshold=Threshold(value=0.1),
        operator=Operator.LT,
        inputs={r: cols[r] for r in roles},
        params=dict(params),
    )


#: (id, key, params, data kind)
COMBOS: list[tuple[str, str, dict[str, Any], str]] = [
    (
        f"{key}({','.join(f'{k}={v}' for k, v in params.items())})-{kind}",
        key,
        params,
        kind,
    )
    for key in KEYS
    for params in _param_variants(REGISTRY[key])
    for kind in _kinds(REGISTRY[key])
]


def make_data(k: int, seed: int) -> pd.DataFrame:
    """Three compared groups, one group under min_samples, rows with a missing group.

    Also: class scores (``y_score`` for K = 2, ``y_score_0..`` otherwise; rows sum
    to 1, y_pred is their argmax), numeric target/prediction for regression, a
    tie-free ``rank`` (1 = top) and a two-valued ``site``.
    """
    rng = np.random.default_rng(seed)
    frames = []
    for g, n, acc in (("A", 150, 0.8), ("B", 220, 0.6), ("C", 90, 0.7), ("tiny", 12, 0.5)):
        y_t = rng.integers(0, k, n)
        logits = rng.normal(size=(n, k)) + 2.5 * acc * np.eye(k)[y_t]
        prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        frame = pd.DataFrame({"y_true": y_t, "y_pred": prob.argmax(axis=1), "grp": [g] * n})
        if k == 2:
            frame["y_score"] = prob[:, 1].round(3)  # ties on purpose
        else:
            for j in range(k):
                frame[f"y_score_{j}"] = prob[:, j]
        frame["y_num"] = rng.normal(50, 10, n)
        frame["yhat_num"] = frame["y_num"] + rng.normal(acc, 5, n)
        frame["site"] = rng.choice(["S1", "S2"], n)
        frames.append(frame)
    df = pd.concat(frames, ignore_index=True)
    df["rank"] = rng.permutation(len(df)) + 1
    df["grp"] = df["grp"].astype(object)
    missing = rng.choice(len(df), size=9, replace=False)
    df.loc[missing, "grp"] = None
    return df


_BINARY = make_data(2, 1)
DATA = {
    "binary": _BINARY,
    "multiclass": make_data(3, 2),
    "regression": _BINARY,
    "ranking": _BINARY,
    "data": _BINARY,
}


def variants(df: pd.DataFrame, k: int) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(99)
    perm = rng.permutation(k)
    classes_permuted = df.assign(y_true=perm[df["y_true"]], y_pred=perm[df["y_pred"]])
    if k > 2:  # class j's score column becomes class perm[j]'s
        classes_permuted = classes_permuted.rename(
            columns={f"y_score_{j}": f"y_score_{perm[j]}" for j in range(k)}
        )
    return {
        "base": df,
        "permuted": df.iloc[rng.permutation(len(df))].reset_index(drop=True),
        "relabelled": df.assign(grp=df["grp"].map(GROUP_NAMES, na_action="ignore")),
        "duplicated": pd.concat([df, df], ignore_index=True),
        "classes_permuted": classes_permuted,
    }


@pytest.fixture(scope="module")
def results(evaluate_many: Callable[..., Any]) -> dict[tuple[str, str], dict[str, Finding]]:
    """(data kind, variant) -> {combo id: finding}: one ``check`` per data variant."""
    out = {}
    for kind, df in DATA.items():
        combos = [c for c in COMBOS if c[3] == kind]
        if not combos:
            continue
        controls = [common_control(key, params, cid) for cid, key, params, _ in combos]
        for name, data in variants(df, 3 if kind == "multiclass" else 2).items():
            res = evaluate_many(controls, data)
            out[(kind, name)] = {f.control_id: f for f in res.findings}
    return out


def _values(f: Finding) -> dict[str, float | None]:
    return {g.group: g.value for g in f.groups}


def _close(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= TOL


each_combo = pytest.mark.parametrize(
    ("cid", "key", "params", "kind"), COMBOS, ids=[c[0] for c in COMBOS]
)


@each_combo
def test_value_finite_and_in_range(
    cid: str, key: str, params: dict[str, Any], kind: str, results: dict
) -> None:
    f = results[(kind, "base")][cid]
    spec = REGISTRY[key]
    assert f.status in ("pass", "fail", "inconclusive"), f.message
    if f.value is None:
        assert f.status == "inconclusive" and f.reason
    else:
        assert math.isfinite(f.value)
        lo, hi = spec.value_range
        assert lo <= f.value <= hi
    for g in f.groups:
        assert g.value is None or math.isfinite(g.value)
    assert "NaN" not in json.dumps(f.details) and "Infinity" not in json.dumps(f.details)


@each_combo
def test_invariant_to_row_order(
    cid: str, key: str, params: dict[str, Any], kind: str, results: dict
) -> None:
    base, other = results[(kind, "base")][cid], results[(kind, "permuted")][cid]
    if kind == "regression":  # float sums: the summation order moves the last bits only
        assert other.value == pytest.approx(base.value, rel=1e-12, abs=1e-12)
        assert _values(other) == pytest.approx(_values(base), rel=1e-12, abs=1e-12)
        return
    assert other.value == base.value
    assert _values(other) == _values(base)
    assert other.details == base.details


@each_combo
def test_invariant_to_group_relabelling(
    cid: str, key: str, params: dict[str, Any], kind: str, results: dict
) -> None:
    base, other = results[(kind, "base")][cid], results[(kind, "relabelled")][cid]
    assert _close(other.value, base.value)
    # '' is the one group of every row of a metric that compares no groups (data quality)
    renamed = {GROUP_NAMES.get(g, g) if g else g: v for g, v in _values(base).items()}
    assert other_values_close(_values(other), renamed)
    assert {GROUP_NAMES.get(e.group, e.group): e.n for e in base.excluded_groups} == {
        e.group: e.n for e in other.excluded_groups
    }


def other_values_close(a: dict[str, float | None], b: dict[str, float | None]) -> bool:
    return set(a) == set(b) and all(_close(a[k], b[k]) for k in a)


@each_combo
def test_invariant_to_duplicating_rows(
    cid: str, key: str, params: dict[str, Any], kind: str, results: dict
) -> None:
    """Rate-based metrics: doubling every count changes no value."""
    if kind in NOT_RATE_BASED_KINDS or key in NOT_RATE_BASED_KEYS:
        pytest.skip(f"{key} depends on counts or positions, not only on rates")
    base, other = results[(kind, "base")][cid], results[(kind, "duplicated")][cid]
    assert _close(other.value, base.value)
    assert other_values_close(_values(other), _values(base))
    assert {g.group: g.n for g in other.groups} == {g.group: 2 * g.n for g in base.groups}


MULTICLASS_COMBOS = [c for c in COMBOS if c[3] == "multiclass"]


@pytest.mark.parametrize(
    ("cid", "key", "params", "kind"), MULTICLASS_COMBOS, ids=[c[0] for c in MULTICLASS_COMBOS]
)
def test_multiclass_metrics_invariant_to_class_relabelling(
    cid: str, key: str, params: dict[str, Any], kind: str, results: dict
) -> None:
    """Multi-class metrics treat classes symmetrically (binary ones single out the
    positive class, so they are not expected to be invariant)."""
    base, other = results[(kind, "base")][cid], results[(kind, "classes_permuted")][cid]
    assert _close(other.value, base.value)


@each_combo
def test_group_sizes_account_for_every_row(
    cid: str, key: str, params: dict[str, Any], kind: str, results: dict
) -> None:
    f = results[(kind, "base")][cid]
    sizes: dict[str, int] = {}
    for g in (*f.groups, *f.excluded_groups):
        assert sizes.setdefault(g.group, g.n) == g.n, f"{g.group}: inconsistent n"
    assert sum(sizes.values()) == len(DATA[kind])
    excluded = {e.group: e for e in f.excluded_groups}
    spec = REGISTRY[key]
    if spec.kind == "data" or not spec.min_samples_applies:  # they judge small groups
        assert "tiny" not in excluded or "min_samples" not in excluded["tiny"].reason
    else:
        assert excluded["tiny"].n == 12 and "min_samples" in excluded["tiny"].reason
    if spec.column_counts is not None:  # data quality: one group of every row, no dimension
        assert UNKNOWN_GROUP not in excluded
        return
    assert excluded[UNKNOWN_GROUP].n == 9


# ---------------------------------------------------------------------------
# the declarations themselves


@pytest.mark.parametrize("key", KEYS)
def test_spec_declarations(key: str) -> None:
    spec = REGISTRY[key]
    assert spec.key == key
    assert spec.summary.strip()
    assert spec.formula.strip(), f"{key}: no docstring formula"
    assert "value" in spec.formula, f"{key}: the formula does not say what `value` is"
    assert set(spec.inputs) <= set(ROLES) and set(spec.one_of) <= set(ROLES)
    if spec.column_counts is not None:
        # the data-quality metrics measure the data set's columns, not groups of rows
        assert spec.column_role in (*spec.inputs, *spec.optional) and spec.tasks == ("data",)
        assert "dimension" not in (*spec.inputs, *spec.optional) and spec.groups_needed == 1
    else:
        # a comparison of groups needs them; a pooled value (accuracy, Theil) may take them
        assert "dimension" in spec.inputs or "dimension" in spec.optional
    # the declared inputs match what the binding reads for the metric's kind
    assert spec.needs_scores == ("score" in spec.inputs) or spec.kind == "ranking"
    assert (spec.secondary_role is not None) == ("site" in spec.inputs)
    if spec.kind == "classification":
        # the truth, or (selection-rate metrics) the prediction or else the target
        assert "target" in spec.inputs or set(spec.one_of) == {"prediction", "target"}
        assert spec.tasks and set(spec.tasks) <= {"binary", "multiclass"}
    elif spec.kind == "regression":
        assert {"target", "prediction"} <= set(spec.inputs) and spec.tasks == ("regression",)
    elif spec.kind == "ranking":
        assert set(spec.one_of) == {"rank", "score"} and spec.tasks == ("ranking",)
    elif spec.column_counts is None:
        assert spec.inputs == ("dimension",) and spec.tasks == ("data",)
    assert spec.better in ("lower", "higher")
    lo, hi = spec.value_range
    assert lo < hi and lo <= spec.ideal <= hi
    names = [p.name for p in spec.params]
    assert len(names) == len(set(names))
    # a metric may redeclare a common parameter only to own it (LL144's min_share default)
    shared = set(names) & {p.name for p in COMMON_PARAMS}
    assert not shared or (shared == {"min_share"} and not spec.min_samples_applies), shared
    for p in spec.params:
        assert p.choices is None or p.default in p.choices, f"{key}.{p.name}"
        assert isinstance(p.default, p.kind)
        assert spec.param(p.name) is p
    assert spec.resolve_params({}) == {p.name: p.default for p in spec.params}
    assert lookup(key) is spec and canonical(key) == key


@pytest.mark.parametrize("key", BINARY_ONLY)
def test_binary_only_specs_name_a_multiclass_replacement(key: str) -> None:
    spec = REGISTRY[key]
    assert spec.multiclass_replacement
    for r in spec.multiclass_replacement:
        assert r in REGISTRY and "multiclass" in REGISTRY[r].tasks


def test_common_param_defaults_are_allowed() -> None:
    for p in COMMON_PARAMS:
        assert p.choices is None or p.default in p.choices, p.name


def test_aliases_do_not_collide() -> None:
    every = [a for spec in REGISTRY.values() for a in spec.aliases]
    assert len(every) == len(set(every)), "an alias is declared twice"
    assert not set(every) & set(REGISTRY), "an alias shadows a key"
    assert len(ALIASES) == len(every)
    for alias, key in ALIASES.items():
        assert alias in REGISTRY[key].aliases
        assert lookup(alias) is REGISTRY[key]


def test_lookup_miss_suggests_a_key() -> None:
    with pytest.raises(KeyError, match="demographic_parity_diff"):
        lookup("demographic_parity_dif")


# ---------------------------------------------------------------------------
# binary-only metrics on K = 3


@pytest.fixture(scope="module")
def three_class_findings(
    control: Callable[..., Control], evaluate_many: Callable[..., Any]
) -> dict[str, Finding]:
    controls = [common_control(key, {}, key) for key in BINARY_ONLY]
    res = evaluate_many(controls, DATA["multiclass"])
    return {f.control_id: f for f in res.findings}


@pytest.mark.parametrize("key", BINARY_ONLY)
def test_binary_only_metric_on_three_classes_is_an_error(
    key: str, three_class_findings: dict[str, Finding]
) -> None:
    f = three_class_findings[key]
    assert f.status == "error"
    assert f.value is None
    assert any(r in f.message for r in REGISTRY[key].multiclass_replacement), f.message
    assert "K=3" in f.message
