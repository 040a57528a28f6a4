"""The strict number grammar: exactly plain ASCII decimal/scientific notation is a number,
and a threshold no value of the metric's declared range can fail (or pass) is refused."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fairpolicy.errors import PolicyError
from fairpolicy.metrics.registry import REGISTRY
from fairpolicy.policy import load_policy
from fairpolicy.policy.numbers import parse_float, parse_int
from fairpolicy.policy.schema import Operator

# an independent statement of the grammar (the oracle): sign, digits with an optional
# fraction (or a bare fraction), an optional exponent; ASCII only
ORACLE = r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"

number_like = st.text(
    alphabet=st.sampled_from([*"0123456789+-.eE_ x", "\u0661", "\uff11", "\u00b2", ":"]),
    max_size=8,
)


@given(number_like)
@settings(max_examples=400)
def test_parse_float_accepts_exactly_the_grammar(text: str) -> None:
    plain = re.fullmatch(ORACLE, text) is not None and all(c.isascii() for c in text)
    try:
        value = parse_float(text)
    except ValueError:
        # refused: not in the grammar, or overflowing
        assert not plain or float(text) in (float("inf"), float("-inf"))
        return
    assert plain and value == float(text)


@given(number_like)
@settings(max_examples=300)
def test_parse_int_accepts_only_ascii_digits(text: str) -> None:
    try:
        value = parse_int(text)
    except ValueError:
        assert re.fullmatch(r"[+-]?[0-9]{1,18}", text) is None
        return
    assert re.fullmatch(r"[+-]?[0-9]+", text) and value == int(text)


@pytest.mark.parametrize("text", ["0_10", "1_000", "\u0661\u0660", "\uff11", "1e5", "10.0", "0x10"])
def test_whole_number_settings_refuse_loose_forms(text: str) -> None:
    props = _props(min_samples=text)
    with pytest.raises(PolicyError, match="is not a whole number"):
        load_policy([{"control-id": "c1", "props": props}])


def _props(**extra: Any) -> dict[str, Any]:
    base = {
        "metric_key": "demographic_parity_diff",
        "threshold": "0.1",
        "operator": "<",
        "input.target": "y",
        "input.prediction": "p",
        "input.dimension": "g",
    }
    return base | extra


SPECS = sorted(k for k, s in REGISTRY.items() if "score" not in s.inputs and "rank" not in s.inputs)
OPS = ["<", "<=", ">", ">=", "==", "!="]


@given(
    st.sampled_from(SPECS),
    st.sampled_from(OPS),
    st.floats(min_value=-3, max_value=3, allow_nan=False).map(lambda x: round(x, 2)),
)
@settings(max_examples=300, deadline=None)
def test_accepted_thresholds_can_both_pass_and_fail(key: str, op: str, t: float) -> None:
    """Invariant: a loaded control's threshold splits the metric's declared range: some
    value in it passes and some fails (probing the range's ends, the threshold, and
    points beside it). Refused controls name the range."""
    spec = REGISTRY[key]
    props = _props(metric_key=key, operator=op, threshold=repr(t))
    props |= {f"input.{r}": r for r in spec.inputs}
    try:
        policy = load_policy([{"control-id": "c1", "props": props}])
    except PolicyError as exc:
        text = str(exc)
        if "can never" not in text:
            return  # another problem of the generated control (e.g. a metric's own rule)
        assert f"takes values in [{spec.value_range[0]:g}, {spec.value_range[1]:g}]" in text
        assert not _splits(spec.value_range, op, t)
        return
    assert policy.controls[0].operator == Operator(op)
    assert _splits(spec.value_range, op, t)


def _splits(rng: tuple[float, float], op: str, t: float) -> bool:
    lo, hi = rng
    probes = [lo, hi, t, t - 1e-9, t + 1e-9, (lo + hi) / 2 if hi < float("inf") else lo + 1e9]
    inside = [v for v in probes if lo <= v <= hi]
    cmp = {
        "<": lambda v: v < t,
        "<=": lambda v: v <= t,
        ">": lambda v: v > t,
        ">=": lambda v: v >= t,
        "==": lambda v: v == t,
        "!=": lambda v: v != t,
    }[op]
    outcomes = {cmp(v) for v in inside}
    return outcomes == {True, False}


def _numeric_params() -> list[tuple[str, str, type]]:
    """(metric key, param name, kind) for every int/float parameter any metric declares,
    common ones under demographic_parity_diff."""
    from fairpolicy.metrics.registry import COMMON_PARAMS

    out = [("demographic_parity_diff", p.name, p.kind) for p in COMMON_PARAMS]
    out += [(k, p.name, p.kind) for k, s in REGISTRY.items() for p in s.params]
    return [(k, n, t) for k, n, t in out if t in (int, float)]


LOOSE = ["1_0", "\u0661\u0660", "\uff11\uff10", "0x10", "1,0", "10 000", "\u00b9\u2070"]


@pytest.mark.parametrize(("key", "name", "kind"), _numeric_params())
@given(loose=st.sampled_from(LOOSE))
@settings(max_examples=len(LOOSE), deadline=None)
def test_every_numeric_param_refuses_loose_numbers(
    key: str, name: str, kind: type, loose: str
) -> None:
    """The whole class: every int/float parameter of every metric (and the common ones)
    refuses what Python's int()/float() would read loosely, naming the prop."""
    spec = REGISTRY[key]
    props = _props(metric_key=key, **{name: loose})
    props |= {f"input.{r}": r for r in spec.inputs}
    with pytest.raises(PolicyError) as info:
        load_policy([{"control-id": "c1", "props": props}])
    text = str(info.value)
    assert f"key '{name}'" in text and f"'{loose}'" in text, text
