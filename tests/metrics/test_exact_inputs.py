"""Every registry key declares the roles it reads (issue 16, "exact inputs per metric").

For every key, on data of its kind:

- binding exactly its declared roles (required ``inputs``, the first of ``one_of``, its
  secondary role) evaluates: no binding error;
- leaving out any required role is exit 2 naming ``input.<role>``;
- a role it does not declare (required, one-of or optional) is not read: replacing that
  column by values of another distribution leaves the value unchanged;
- a required role is read: replacing it changes the value — except the pairs in
  :data:`TABLE_ONLY`, each with the reason it is still required. The test fails when one
  of those starts being read or stops being required, and when a new over-declaration
  appears, so the list below is the whole remaining gap, in one place.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import fairpolicy
from fairpolicy.errors import FairpolicyError
from fairpolicy.metrics.base import MetricSpec
from fairpolicy.metrics.registry import REGISTRY

#: (key, role) required but whose values do not enter the value on these data, and why
TABLE_ONLY: dict[tuple[str, str], str] = {
    **{
        (k, "target"): "the score alone is read; the label column builds the count table "
        "(and names the classes of multi-class scores)"
        for k in ("score_ks_statistic", "score_parity", "scoring_impact_ratio")
    },
    ("impact_ratio", "target"): "LL144's selection column: read when no prediction is bound "
    "(here one is, and the selection rate is the prediction's)",
    ("mean_prediction_parity", "target"): "regression sums pair target and prediction rows",
    ("disparity_ratio", "target"): "read by the rates that compare with the truth (tpr, ppv, "
    "accuracy …; `rate` decides), not by the default selection_rate",
    ("data_minimization", "sensitive_columns"): "the sensitive columns are counted by name "
    "against every column of the data; their values never enter",
}

ROLES = ("target", "prediction", "dimension")
N = 600


def _k(spec: MetricSpec) -> int:
    return 3 if "multiclass" in spec.tasks and "binary" not in spec.tasks else 2


def _data(spec: MetricSpec, rng: np.random.Generator) -> pd.DataFrame:
    k = _k(spec)
    y = rng.integers(0, k, N)
    p = np.where(rng.random(N) < 0.7, y, rng.integers(0, k, N))
    d = pd.DataFrame(
        {
            "y": y,
            "p": p,
            "g": rng.choice(list("AB"), N),
            "site": rng.choice(list("XYZ"), N),
            "rank": rng.permutation(N) + 1,
            # a column with missing values: what the data-quality metrics measure
            "opt": np.where(rng.random(N) < 0.2, np.nan, 1.0),
        }
    )
    if spec.kind == "regression":
        d["y"] = rng.normal(size=N)
        d["p"] = d["y"] + rng.normal(size=N) * 0.3
    if k == 2:
        d["s"] = np.clip(0.3 + 0.4 * y + rng.normal(0, 0.2, N), 0, 1).round(3)
    else:
        raw = rng.random((N, k)) + np.eye(k)[y]
        raw /= raw.sum(axis=1, keepdims=True)
        for j in range(k):
            d[f"s_{j}"] = raw[:, j]
    return d


def _columns(spec: MetricSpec) -> dict[str, str]:
    score = "s" if _k(spec) == 2 else ",".join(f"s_{j}" for j in range(_k(spec)))
    return {
        "target": "y",
        "prediction": "p",
        "dimension": "g",
        "score": score,
        "rank": "rank",
        "site": "site",
        "columns": "opt",
        "fields": "opt",
        "sensitive_columns": "y",
    }


def _run(spec: MetricSpec, data: pd.DataFrame, roles: list[str]) -> Any:
    hi = spec.value_range[1]
    threshold = str(hi / 2) if np.isfinite(hi) else "0.5"
    props = {
        "metric_key": spec.key,
        "threshold": threshold,
        "operator": "<" if spec.better == "lower" else ">=",
        "min_samples": "1",
    }
    if spec.better == "higher" and np.isfinite(hi):
        props["threshold"] = str(hi / 2)
    cols = _columns(spec)
    props.update({f"input.{r}": cols[r] for r in roles})
    control = {"control-id": "c", "props": [{"name": k, "value": v} for k, v in props.items()]}
    return fairpolicy.check([control], data)


def _declared(spec: MetricSpec) -> list[str]:
    roles = [*spec.inputs, *spec.one_of[:1]]
    if spec.secondary_role and spec.secondary_role not in roles:
        roles.append(spec.secondary_role)
    return roles


def _replace(data: pd.DataFrame, role: str, spec: MetricSpec, rng: np.random.Generator) -> None:
    col = _columns(spec)[role]
    if role == "dimension":
        data[col] = rng.choice(list("AB"), N, p=[0.9, 0.1])
    elif spec.kind == "regression":
        data[col] = rng.normal(size=N) * 3 + 1
    else:
        data[col] = np.where(rng.random(N) < 0.85, 0, rng.integers(0, _k(spec), N))


KEYS = sorted(k for k, s in REGISTRY.items() if k == s.key)


@pytest.mark.parametrize("key", KEYS)
def test_declared_roles_are_exactly_the_roles_read(key: str) -> None:
    spec = REGISTRY[key]
    rng = np.random.default_rng(7)
    data = _data(spec, rng)
    roles = _declared(spec)
    got = _run(spec, data, roles)
    f = got.findings[0]
    assert f.status != "error", (key, roles, f.reason)
    for role in spec.inputs:
        with pytest.raises(FairpolicyError) as err:  # refused before any data is read
            _run(spec, data, [r for r in roles if r != role])
        assert f"input.{role}" in err.value.render(), (key, role)
    # every classification role bound: undeclared ones must not be read
    full = sorted({*roles, *(r for r in ROLES if spec.kind != "ranking" or r == "dimension")})
    base = _run(spec, data, full).findings[0].value
    read_roles = {*spec.inputs, *spec.one_of, *spec.optional}
    for role in ROLES:
        if role not in full:
            continue
        changed = data.copy()
        _replace(changed, role, spec, np.random.default_rng(11))
        same = _run(spec, changed, full).findings[0].value == base
        if same and spec.kind == "classification" and role != "dimension":
            changed[_columns(spec)[role]] = 0  # one label: counts of distinct values move
            same = _run(spec, changed, full).findings[0].value == base
        if same and role == "dimension":  # a group of one row: minima over groups move
            changed.loc[0, _columns(spec)[role]] = "Z"
            same = _run(spec, changed, full).findings[0].value == base
        if role not in read_roles:
            assert same, f"{key} reads the undeclared role '{role}'"
        elif role in spec.inputs:
            assert same == ((key, role) in TABLE_ONLY), f"{key}: required role '{role}' " + (
                "is not read (declare it precisely)" if same else "is read: drop it from TABLE_ONLY"
            )


@pytest.mark.parametrize("key", KEYS)
def test_one_group_is_enough_only_for_what_compares_no_groups(key: str) -> None:
    """A dimension with one group: a value of the compared rows (or of the groups
    themselves, as k-anonymity) is computed; a comparison of groups is exit 2."""
    spec = REGISTRY[key]
    rng = np.random.default_rng(3)
    data = _data(spec, rng)
    data["g"] = "A"
    roles = sorted({*_declared(spec), "dimension"})
    results = _run(spec, data, roles)
    f = results.findings[0]
    if spec.groups_needed == 1:
        assert f.status != "error", (key, f.reason)
    else:
        assert f.status == "error" and "at least two groups" in (f.reason or ""), key
