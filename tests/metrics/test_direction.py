"""Every metric key × every parameter × every allowed value has a declared direction
(issue 26 item 3: ``multiclass_confusion_metrics`` with ``value: accuracy_gap`` is a gap —
lower is better — though the key's default value, the worst group's accuracy, is higher is
better; a baseline comparison read the key and called a grown gap "better").

The declarations live in :mod:`fairpolicy.metrics.direction`; this test fails when a key or
a parameter is added without one, when a selecting parameter gains a value, or when a
declaration names a key, parameter or value the registry does not have.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fairpolicy.metrics.base import MetricSpec
from fairpolicy.metrics.direction import (
    SAME_DIRECTION,
    SELECTS,
    UnknownDirection,
    regression_direction,
    resolve,
)
from fairpolicy.metrics.registry import COMMON_PARAMS, REGISTRY


def _params(spec: MetricSpec) -> list[str]:
    return [p.name for p in (*spec.params, *COMMON_PARAMS)]


def _choices(spec: MetricSpec, name: str) -> tuple[object, ...] | None:
    p = spec.param(name) or next(c for c in COMMON_PARAMS if c.name == name)
    if p.kind is bool:
        return (True, False)
    return p.choices


def test_every_key_and_parameter_is_declared() -> None:
    missing = []
    for key, spec in REGISTRY.items():
        for name in _params(spec):
            if (key, name) in SELECTS:
                continue
            if name not in SAME_DIRECTION:
                missing.append(f"{key}: {name}")
    assert not missing, (
        "parameters with no declared direction (add them to metrics.direction.SELECTS with "
        f"every value's direction, or to SAME_DIRECTION with the reason): {missing}"
    )


def test_every_selecting_parameter_declares_exactly_its_allowed_values() -> None:
    for (key, name), table in SELECTS.items():
        spec = REGISTRY[key]  # a declaration of a key the registry has
        declared = spec.param(name)
        assert declared is not None, f"{key} has no parameter {name}"
        assert declared.choices is not None, f"{key}: {name} selects but has no allowed values"
        assert set(table) == {str(c) for c in declared.choices}, (key, name)
        for better, ideal in table.values():
            assert better in ("lower", "higher", "ideal")
            lo, hi = spec.value_range
            assert ideal is None or lo <= ideal <= hi, (key, name, ideal)
            if better == "ideal":
                assert ideal is not None and lo < ideal < hi


def test_no_declaration_is_stale() -> None:
    names = {n for spec in REGISTRY.values() for n in _params(spec)}
    assert set(SAME_DIRECTION) <= names, set(SAME_DIRECTION) - names


def _enumerate() -> list[tuple[str, dict[str, object]]]:
    """Every key × every combination of allowed values of its enumerable parameters."""
    out = []
    for key, spec in REGISTRY.items():
        enumerable = [(p.name, _choices(spec, p.name)) for p in spec.params]
        axes = [[(n, v) for v in ch] for n, ch in enumerable if ch]
        for combo in itertools.product(*axes) if axes else [()]:
            out.append((key, dict(combo)))
    return out


CASES = _enumerate()


@pytest.mark.parametrize(("key", "params"), CASES, ids=[f"{k}-{p}" for k, p in CASES])
def test_every_allowed_value_resolves(key: str, params: dict[str, object]) -> None:
    spec = REGISTRY[key]
    better, ideal = resolve(spec, spec.resolve_params(params))
    selected = [SELECTS[(key, n)][str(v)] for n, v in params.items() if (key, n) in SELECTS]
    assert (better, ideal) == (selected[0] if selected else regression_direction(spec))


def test_the_enumeration_covers_every_key_and_value() -> None:
    assert {k for k, _ in CASES} == set(REGISTRY)
    values = {p["value"] for k, p in CASES if k == "multiclass_confusion_metrics"}
    assert values == set(SELECTS[("multiclass_confusion_metrics", "value")])


def test_accuracy_gap_is_a_gap() -> None:
    spec = REGISTRY["multiclass_confusion_metrics"]
    assert resolve(spec, {"value": "accuracy_gap"}) == ("lower", 0.0)
    assert resolve(spec, {}) == ("higher", 1.0)  # the default: worst_group_accuracy
    with pytest.raises(UnknownDirection):
        resolve(spec, {"value": "accuracy_gapp"})


def test_declared_directions_match_what_the_metric_computes() -> None:
    """An oracle on real counts: making one group's predictions worse (a correct
    prediction turned wrong) must move every selected value the declared bad way."""
    from fairpolicy.stats import GroupStats

    spec = REGISTRY["multiclass_confusion_metrics"]
    k, n = 3, 60
    good = np.zeros((2, k, k), dtype=np.int64)
    for g in range(2):
        for t in range(k):
            good[g, t, t] = n - 5 - 3 * g
            good[g, t, (t + 1) % k] = 5 + 3 * g
    bad = good.copy()
    bad[1, 0, 0] -= 10  # group B: ten correct class-0 predictions become class 1
    bad[1, 0, 1] += 10

    def value(counts: np.ndarray, which: str) -> float:
        stats = GroupStats(
            dimension=("grp",),
            groups=("A", "B"),
            classes=tuple(str(c) for c in range(k)),
            counts=counts,
        )
        got = spec.fn(stats, {"value": which}).value
        assert got is not None
        return got

    for which, (better, _) in SELECTS[("multiclass_confusion_metrics", "value")].items():
        before, after = value(good, which), value(bad, which)
        assert before != after, which
        assert (after > before) == (better == "lower"), (which, before, after)


def test_the_permutation_test_reads_the_values_direction(tmp_path: object) -> None:
    """A large accuracy gap is significant: the test counts permuted gaps at least as large
    (it counted accuracies at most as small, the key's direction, and gave p ≈ 1)."""
    from pathlib import Path

    import fairpolicy
    from tests.test_verdict_paths import ITEM3, data, policy

    tmp = Path(str(tmp_path))
    (tmp / "p.yaml").write_text(policy(ITEM3) + '    - {name: p_value, value: "199"}\n')
    (tmp / "d.csv").write_text(data((98, 70)))  # a gap of 0.28
    res = fairpolicy.check(str(tmp / "p.yaml"), str(tmp / "d.csv"))
    pv = res.findings[0].p_value
    assert pv is not None and pv.p_value is not None
    assert pv.p_value < 0.05, pv
